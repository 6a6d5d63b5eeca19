"""Skips that cannot hide (issue 29 item 3), shared by every tests/*/conftest.py.

A test is skipped for one of two reasons:

  by design     it belongs to another configuration of the suite: it runs
                only under ASan, only with the engine index, only in the
                release run... Mark it
                    @pytest.mark.by_design(condition, reason="...")
                (a module's pytestmark works too); when `condition` is true
                the test is skipped with "by design: <reason>". Never an error.

  precondition  anything else: a pytest.skip() or skipif because a tool,
                a user, root, a mount or a module is missing. On a developer's
                machine that is a skip; with CI=true (.ci/run, as root, with
                every package installed) it is a FAILURE, since CI is the
                one place where every precondition must hold.

Every skip is listed with its reason in the short summary (as -rs would),
and a last line counts them by kind, so `make check` says what did not run.

conftest.py files install it with skip_policy.install(config) from their
pytest_configure; installing twice is a no-op (pytest tests/ loads several).

With pytest-xdist (make check runs tests/api with -n), a test's report is
made in a worker and shown by the controller: the kind of a skip travels
with the report (its user_properties), and the controller counts and lists
them, so the summary is the same with or without -n."""
import os

import pytest

NAME = "newsd-skip-policy"
# user_properties of a skipped test's report: the kind of skip, and the reason
KIND = "newsd_skip"
REASON = "newsd_skip_reason"
CI = os.environ.get("CI", "").lower() == "true"


def install(config):
    if not config.pluginmanager.has_plugin(NAME):
        config.pluginmanager.register(_Policy(config), NAME)


def _by_design_reason(item):
    """The reason of the first by_design marker whose condition holds."""
    for mark in item.iter_markers(name="by_design"):
        cond = mark.args[0] if mark.args else True
        if cond:
            return mark.kwargs.get("reason") or (mark.args[1] if len(mark.args) > 1 else "")
    return None


class _Policy:
    def __init__(self, config):
        self.by_design = []
        self.precondition = []
        config.addinivalue_line(
            "markers", "by_design(condition, reason): skipped when condition holds because the "
            "test belongs to another configuration (never a failure in CI)")
        # -rs: every skip and its reason in the short summary, whatever the
        # command line said ('a'/'A' already include skips).
        chars = config.option.reportchars or ""
        if not any(c in chars for c in "sSaA"):
            config.option.reportchars = chars + "s"

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        why = _by_design_reason(item)
        if why is not None:
            item.newsd_by_design = True
            pytest.skip("by design: %s" % why)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        if not rep.skipped or getattr(rep, "wasxfail", None) is not None:
            return
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        reason = reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason
        # A copy: the report's list is the item's own, shared with its
        # other phases' reports.
        rep.user_properties = list(rep.user_properties)
        if getattr(item, "newsd_by_design", False):
            rep.user_properties.append((KIND, "by design"))
            # listed at the test, not at this file's pytest.skip()
            path, line, _ = item.location
            rep.longrepr = (path, (line or 0) + 1, "Skipped: " + reason)
            return
        rep.user_properties.append((KIND, "precondition"))
        rep.user_properties.append((REASON, reason))
        if CI:
            rep.outcome = "failed"
            rep.longrepr = ("CI=true: a missing precondition is a failure here, the test must "
                            "run (%s)" % reason)

    def pytest_runtest_logreport(self, report):
        """Counted where the reports are shown: in the one process, or in
        xdist's controller (the workers' copies of this plugin show nothing)."""
        props = dict(p for p in report.user_properties
                     if isinstance(p, (tuple, list)) and len(p) == 2)
        kind = props.get(KIND)
        if kind == "by design":
            self.by_design.append(report.nodeid)
        elif kind == "precondition":
            self.precondition.append((report.nodeid, props.get(REASON, "")))

    def pytest_terminal_summary(self, terminalreporter):
        if not self.by_design and not self.precondition:
            return
        tr = terminalreporter
        tr.write_sep("-", "skips: %d by design (another configuration runs them), %d for a "
                     "missing precondition%s" % (len(self.by_design), len(self.precondition),
                                                 " (failures: CI=true)" if CI else ""))
        for nodeid, reason in self.precondition:
            tr.write_line("PRECONDITION %s: %s" % (nodeid, reason))
