// Mozilla's Readability.js (npm @mozilla/readability with jsdom, installed
// by make bench-pages into build/readability-js, never by make check) over a
// list of pages, for bench/pages_table.py: reads lines "name<TAB>url<TAB>path"
// on stdin, writes one JSON line per page on stdout: {"file", "text",
// "seconds"}. Run without isProbablyReaderable's gate, as the issue's
// figures are. "seconds": CPU time of parsing and extraction. Figures only.
const fs = require("fs");
const path = require("path");
const mods = process.env.READABILITY_JS_DIR || path.join("build", "readability-js", "node_modules");
const { JSDOM, VirtualConsole } = require(path.resolve(mods, "jsdom"));
const { Readability } = require(path.resolve(mods, "@mozilla/readability"));

const quiet = new VirtualConsole();
const lines = fs.readFileSync(0, "utf8").split("\n").filter((l) => l.includes("\t"));
for (const line of lines) {
  const [name, url, file] = line.split("\t");
  const raw = fs.readFileSync(file);
  const t0 = process.cpuUsage();
  let text = null;
  try {
    const dom = new JSDOM(raw, { url: url === "-" ? "http://fakehost/test/page.html" : url, virtualConsole: quiet });
    const art = new Readability(dom.window.document).parse();
    text = art && art.textContent ? art.textContent : null;
    dom.window.close();
  } catch (e) {
    process.stderr.write(`${name}: Readability.js failed: ${e.message}\n`);
  }
  const u = process.cpuUsage(t0);
  process.stdout.write(JSON.stringify({ file: name, text, seconds: (u.user + u.system) / 1e6 }) + "\n");
}
