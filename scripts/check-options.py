#!/usr/bin/python3
"""Every option newsd's --help output names is documented in the man page
(docs/newsd.1) and in docs/api.md's "Command line" section, and every option
those two name exists; every `newsd COMMAND --option` the operator's guides
(README, docs/operations.md, configuration, feeds, scaling, archives,
security) show in code is a command that has that option: `make check`
runs this (make docs-check).

    scripts/check-options.py [NEWSD]      (default build/newsd)

Options are --long-names. The commands are the ones `newsd --help` lists;
each command's options are what `newsd COMMAND --help` prints. A mismatch is
printed per option and document, and the exit status is 1."""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
# Options newsd understands everywhere, not per command.
GLOBAL = {"help", "version"}


def run(binary, *args):
    p = subprocess.run([binary] + list(args), capture_output=True, text=True, timeout=30)
    return p.stdout + p.stderr


def help_options(binary):
    top = run(binary, "--help")
    commands = re.findall(r"^  ([a-z]+)\s", top, re.M)
    if not commands:
        sys.exit("check-options: no commands in `%s --help`" % binary)
    found = {}
    for cmd in commands:
        for opt in OPTION.findall(run(binary, cmd, "--help")):
            found.setdefault(opt, set()).add(cmd)
    for opt in OPTION.findall(top):
        found.setdefault(opt, set()).add("newsd")
    return found


def man_options():
    text = open(os.path.join(ROOT, "docs", "newsd.1")).read()
    # roff writes a dash as \- and a font change may sit between the two.
    text = text.replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")
    return set(OPTION.findall(text))


def api_options():
    text = open(os.path.join(ROOT, "docs", "api.md")).read()
    m = re.search(r"^## 7\. Command line\n(.*?)^## ", text, re.M | re.S)
    if not m:
        sys.exit("check-options: docs/api.md has no '## 7. Command line' section")
    return set(OPTION.findall(m.group(1)))


# The operator's documents: every `newsd COMMAND ... --option` they show
# (in code blocks or inline code) names a command and options that exist.
GUIDES = ["README.md", "docs/operations.md", "docs/configuration.md", "docs/feeds.md",
          "docs/scaling.md", "docs/archives.md", "docs/security.md"]
COMMAND_LINE = re.compile(r"\bnewsd ([a-z]+)((?:[ \t]+(?:\\\n)?[^\s`|;&#)]+)*)")


def code_of(text):
    """The code in a Markdown text: fenced blocks and inline spans."""
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    rest = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    return fenced + re.findall(r"`([^`\n]+)`", rest)


def command_lines(have):
    problems = []
    commands = {c for cmds in have.values() for c in cmds} - {"newsd"}
    for rel in GUIDES:
        text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
        for code in code_of(text):
            code = re.sub(r"(^|\s)(#|//).*", "", code, flags=re.M)  # comments are prose
            for m in COMMAND_LINE.finditer(code):
                cmd, rest = m.group(1), m.group(2)
                if cmd not in commands:
                    if cmd not in NOT_COMMANDS:
                        problems.append("%s: `newsd %s` is no command" % (rel, cmd))
                    continue
                for opt in OPTION.findall(rest):
                    if opt not in GLOBAL and cmd not in have.get(opt, set()):
                        problems.append("%s: `newsd %s` has no --%s" % (rel, cmd, opt))
    return problems


# What follows "newsd " in code that is not a command line: log lines.
NOT_COMMANDS = {"serving", "crawling", "newsd"}


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "newsd")
    have = help_options(binary)
    problems = []
    for name, documented in (("docs/newsd.1", man_options()), ("docs/api.md §7", api_options())):
        for opt in sorted(set(have) - documented - GLOBAL):
            problems.append("--%s (%s) is not in %s" % (opt, ", ".join(sorted(have[opt])), name))
        for opt in sorted(documented - set(have) - GLOBAL):
            problems.append("--%s is in %s but no command's --help has it" % (opt, name))
    problems += command_lines(have)
    for p in problems:
        print("check-options: " + p)
    if problems:
        return 1
    print("check-options: %d options, each in --help, docs/newsd.1 and docs/api.md" % len(have))
    return 0


if __name__ == "__main__":
    sys.exit(main())
