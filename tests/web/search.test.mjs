// End-to-end test of the search page (web/) in headless Chromium.
//
// Builds its own store: the sources catalogue of tests/data/api/ and a small
// generated set of articles whose images are served by a local image server
// (some load, some are 404s, some are missing), so the expected answers are
// computed here from what was imported, never from newsd's output. Then it
// drives Debian's /usr/bin/chromium through playwright-core like a person:
// paste a key, pick an endpoint, fill the controls, search, read the cards,
// see an error. Screenshots go to build/web-screenshots/.
//
//   NEWSD_BIN=build/newsd node --test tests/web/search.test.mjs   (make web-test)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..");
const BIN = process.env.NEWSD_BIN || path.join(REPO, "build", "newsd");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = path.join(REPO, "build", "web-screenshots");
const SOURCES = path.join(REPO, "tests", "data", "api", "sources.jsonl");
const WORD = "aurora";
const STORY_WORD = "geyser";
const TIMEOUT = 15000;

let tmp, imageServer, imageBase, newsd, base, key, browser, context, page;
const fixture = { articles: [], headlines: [] };
const cspViolations = [];
const foreignRequests = [];

function cli(...args) {
  return execFileSync(BIN, args, { encoding: "utf8", env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
}

function cleanEnv() {
  const env = { ...process.env };
  for (const k of ["NEWSD_STORE", "NEWSD_LISTEN", "NEWSD_NOW"])
    delete env[k];
  return env;
}

// A picture per article: an SVG with a gradient and a number, so the cards
// show real images where the fixture has them.
function svg(n) {
  const hue = (n * 47) % 360;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="180" viewBox="0 0 320 180">
<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
<stop offset="0" stop-color="hsl(${hue},70%,45%)"/><stop offset="1" stop-color="hsl(${(hue + 60) % 360},70%,25%)"/>
</linearGradient></defs><rect width="320" height="180" fill="url(#g)"/>
<circle cx="250" cy="50" r="28" fill="rgba(255,255,255,0.35)"/>
<text x="20" y="160" font-family="sans-serif" font-size="28" fill="white">photo ${n}</text></svg>`;
}

function startImageServer() {
  return new Promise((resolve) => {
    const srv = http.createServer((req, res) => {
      const m = /^\/img\/(\d+)\.svg$/.exec(req.url);
      if (!m) {
        res.writeHead(404, { "Content-Type": "text/plain" });
        res.end("no such image");
        return;
      }
      res.writeHead(200, { "Content-Type": "image/svg+xml" });
      res.end(svg(Number(m[1])));
    });
    srv.listen(0, "127.0.0.1", () => resolve(srv));
  });
}

const TOPICS = [
  ["Aurora lights up the skies over northern Scotland", "A strong solar storm brought the aurora far south on Tuesday night.", "bbc-news"],
  ["Photographers chase a rare red aurora across Iceland", "Long exposures caught colours rarely seen with the naked eye.", "reuters"],
  ["Why this winter's aurora season is the best in a decade", "The Sun is at the peak of its eleven-year cycle, scientists say.", "the-verge"],
  ["Airlines reroute polar flights as aurora storm hits radio links", "High-frequency radio blackouts forced changes on several routes.", "bloomberg"],
  ["Aurora forecast: where to look this weekend", "Clear skies are expected over Scandinavia and Canada.", "abc-news"],
  ["Schoolchildren film the aurora from a village in Norway", "The class project went viral after a local broadcaster shared it.", "bbc-news"],
  ["Satellite operators brace for another aurora-producing storm", "Operators raised orbits to limit drag from the swollen atmosphere.", "techcrunch"],
  ["Central bank holds rates steady", "Policy makers said inflation is easing but remains above target.", "reuters"],
  ["New phone promises a two-day battery", "The handset goes on sale next month in twelve countries.", "the-verge"],
  ["League leaders drop points at home", "A late equaliser kept the title race open.", "bbc-sport"],
  ["Study links sleep to memory in older adults", "Researchers followed 4,000 people for ten years.", "medical-news-today"],
  ["Open-source browser engine reaches a milestone", "The project now passes most of the web platform tests.", "techradar"],
  // markup in stored text must stay text on the page
  ['<img src=x onerror="window.__xss=1"> Tags stay text', '<script>window.__xss=2</script> and <b>bold</b>', "wired"],
];

function writeFixture(dir) {
  const now = Date.now();
  const lines = [];
  TOPICS.forEach(([title, description, source], i) => {
    const published = new Date(now - (i * 97 + 30) * 60 * 1000);
    published.setUTCMilliseconds(0);
    // every third article has no image, every third one a broken image
    const image = i % 3 === 0 ? null
      : i % 3 === 1 ? `${imageBase}/img/${i}.svg` : `${imageBase}/missing/${i}.jpg`;
    const a = {
      source: { id: source, name: null },
      author: i % 2 ? "Staff reporter" : null,
      title,
      description,
      url: `https://news.example.org/story/${i}`,
      urlToImage: image,
      publishedAt: published.toISOString().replace(/\.\d{3}Z$/, "Z"),
      content: description + " " + "More details follow in the full story. ".repeat(8),
    };
    lines.push(a);
  });
  fixture.articles = lines;
  fs.writeFileSync(path.join(dir, "articles.jsonl"), lines.map((a) => JSON.stringify(a)).join("\n") + "\n");
  // three live headlines for the United States, technology
  const heads = [0, 1, 2].map((i) => ({
    source: { id: "techcrunch", name: "TechCrunch" },
    author: null,
    title: `Headline ${i + 1}: chip makers report record quarter`,
    description: "Demand for accelerators keeps growing.",
    url: `https://news.example.org/headline/${i}`,
    urlToImage: `${imageBase}/img/${20 + i}.svg`,
    publishedAt: new Date(now - (i + 1) * 3600 * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    content: "Demand for accelerators keeps growing.",
  }));
  fixture.headlines = heads;
  // one story carried by three sources (the same title and text: newsd's
  // stories join them) and a lone article, all about STORY_WORD
  const story = ["reuters", "bbc-news", "abc-news"].map((source, i) => ({
    source: { id: source, name: null },
    author: null,
    title: `Iceland ${STORY_WORD} erupts near the fishing town of Grindavik`,
    description: `The ${STORY_WORD} sent steam a kilometre high.`,
    url: `https://copy${i}.example.net/${STORY_WORD}`,
    urlToImage: null,
    publishedAt: new Date(now - (i + 2) * 3600 * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    content: `The ${STORY_WORD} sent steam a kilometre high. Residents watched from the harbour.`,
  }));
  story.push({
    source: { id: "the-verge", name: null }, author: null,
    title: `How a ${STORY_WORD} works, explained with a kettle`,
    description: "Pressure, heat and a narrow pipe.", url: `https://explain.example.net/${STORY_WORD}`,
    urlToImage: null,
    publishedAt: new Date(now - 30 * 3600 * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    content: "Pressure, heat and a narrow pipe.",
  });
  fixture.story = story;
  fs.writeFileSync(path.join(dir, "story.jsonl"), story.map((a) => JSON.stringify(a)).join("\n") + "\n");
  fs.writeFileSync(path.join(dir, "headlines.jsonl"), heads.map((a) => JSON.stringify(a)).join("\n") + "\n");
}

function startNewsd(store) {
  return new Promise((resolve, reject) => {
    const p = spawn(BIN, ["serve", "--store", store, "--listen", "127.0.0.1:0", "--no-crawl", "--quiet"],
                    { env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "";
    const timer = setTimeout(() => reject(new Error("newsd did not start: " + out + err)), 30000);
    p.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc: p, base: m[1], stderr: () => err });
      }
    });
    p.stderr.on("data", (d) => { err += d; });
    p.on("exit", (code) => reject(new Error(`newsd exited ${code}: ${err}`)));
  });
}

async function shot(name, opts = {}) {
  fs.mkdirSync(SHOTS, { recursive: true });
  const file = path.join(SHOTS, name + ".png");
  await page.screenshot({ path: file, fullPage: true, ...opts });
  return file;
}

async function cardTitles() {
  return page.$$eval("#results article.card h3", (hs) => hs.map((h) => h.textContent.trim()));
}

// Endpoints are a segmented control: a person clicks the label.
async function pickEndpoint(name) {
  await page.click(`label:has(> input[name=endpoint][value=${name}])`);
  assert.equal(await page.isChecked(`input[name=endpoint][value=${name}]`), true);
}

// Submit the form and wait for the answer to be rendered (cards or error).
async function submit() {
  await page.click("#submit");
  await page.waitForFunction(() => {
    const r = document.getElementById("results");
    return !r.hasAttribute("aria-busy") && !document.getElementById("submit").disabled;
  }, null, { timeout: TIMEOUT });
}

before(async () => {
  assert.ok(fs.existsSync(BIN), `newsd binary not found: ${BIN} (set NEWSD_BIN)`);
  assert.ok(fs.existsSync(CHROMIUM), `Chromium not found: ${CHROMIUM} (apt-get install chromium)`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "newsd-web-"));
  imageServer = await startImageServer();
  imageBase = `http://127.0.0.1:${imageServer.address().port}`;
  writeFixture(tmp);
  const store = path.join(tmp, "store");
  cli("sources", "import", "--create", "--store", store, SOURCES);
  cli("import", "--create", "--store", store, path.join(tmp, "articles.jsonl"));
  cli("import", "--create", "--store", store, "--headlines", "--country", "us", "--category", "technology",
      path.join(tmp, "headlines.jsonl"));
  cli("import", "--create", "--store", store, path.join(tmp, "story.jsonl"));
  key = cli("keys", "create", "--create", "--store", store, "--name", "web").trim();
  newsd = await startNewsd(store);
  base = newsd.base;

  context = await chromium.launchPersistentContext(path.join(tmp, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 900 },
    locale: "en-GB",
    timezoneId: "UTC",
  });
  page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.protocol !== "data:" && u.hostname !== "127.0.0.1")
      foreignRequests.push(r.url());
  });
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      (window.__csp = window.__csp || []).push(e.violatedDirective + " " + e.blockedURI);
    });
  });
});

after(async () => {
  if (context)
    await context.close();
  if (newsd) {
    newsd.proc.removeAllListeners("exit");
    newsd.proc.kill("SIGTERM");
    await new Promise((r) => newsd.proc.once("exit", r));
  }
  if (imageServer)
    imageServer.close();
  if (tmp)
    fs.rmSync(tmp, { recursive: true, force: true });
});

test("the page loads with its controls and no outside resources", async () => {
  const res = await page.goto(base + "/");
  assert.equal(res.status(), 200);
  assert.match(res.headers()["content-security-policy"], /default-src 'self'; img-src \* data:/);
  assert.equal(await page.title(), "newsd — news search");
  // every control has a label a screen reader can read
  for (const id of ["key", "q", "qInTitle", "sources", "domains", "excludeDomains", "from", "to",
                    "country", "category", "language", "sortBy", "pageSize", "page"]) {
    const label = await page.$(`label[for=${id}]`);
    assert.ok(label, `no label for #${id}`);
  }
  assert.equal(await page.getAttribute("#from", "type"), "date");
  assert.equal(await page.getAttribute("#to", "type"), "date");
  const categories = await page.$$eval("#category option", (os) => os.map((o) => o.value).filter(Boolean));
  assert.deepEqual(categories.sort(), ["business", "entertainment", "general", "health", "science",
                                       "sports", "technology"]);
  assert.ok((await page.$$("#country option")).length > 50);
  await shot("start");
});

test("a search on everything renders one card per article, newest first", async () => {
  await page.fill("#key", key);
  await pickEndpoint("everything");
  await page.fill("#q", WORD);
  await submit();
  const want = fixture.articles
    .filter((a) => new RegExp(`\\b${WORD}\\b`, "i").test(a.title + " " + a.description + " " + a.content))
    .sort((a, b) => b.publishedAt.localeCompare(a.publishedAt))
    .map((a) => a.title);
  assert.equal(want.length, 7);
  assert.equal(await page.isHidden("#error"), true);
  assert.deepEqual(await cardTitles(), want);
  const status = await page.textContent("#status");
  assert.match(status, new RegExp(`of ${want.length}\\.`));
  // the exact request, and the same query as a curl line
  const url = await page.textContent("#request-url");
  assert.equal(url, `${base}/v2/everything?q=${WORD}`);
  const curl = await page.textContent("#request-curl");
  assert.equal(curl, `curl -s -H "X-Api-Key: $NEWSD_KEY" '${base}/v2/everything?q=${WORD}'`);
  // cards name their source (the catalogue's name, filled in at import) and time
  const first = await page.$("#results article.card");
  const src = await first.$eval(".source", (e) => e.textContent);
  const newest = fixture.articles.find((a) => a.title === want[0]);
  const catalogue = fs.readFileSync(SOURCES, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(src, catalogue.find((s) => s.id === newest.source.id).name);
  assert.equal(await first.$eval("time", (t) => t.getAttribute("datetime")), newest.publishedAt);
  assert.equal(await first.$eval("h3 a", (a) => a.href), newest.url);
  // images: the ones served load, broken and missing ones leave the placeholder
  await page.waitForFunction(() => {
    const imgs = Array.from(document.querySelectorAll("#results .thumb img"));
    return imgs.every((i) => i.complete && i.closest(".thumb").classList.contains("loaded"));
  }, null, { timeout: TIMEOUT });
  const thumbs = await page.$$eval("#results article.card", (cards) => cards.map((c) => ({
    title: c.querySelector("h3").textContent.trim(),
    img: !!c.querySelector(".thumb img"),
    letter: c.querySelector(".thumb-letter").textContent,
  })));
  for (const t of thumbs) {
    const a = fixture.articles.find((x) => x.title === t.title);
    const served = a.urlToImage !== null && a.urlToImage.includes("/img/");
    assert.equal(t.img, served, `image of "${t.title}"`);
    assert.match(t.letter, /^[A-Z]$/);
  }
  // the page's own URL keeps the search (without the key)
  assert.ok(!page.url().includes(key));
  assert.match(page.url(), /endpoint=everything/);
  await shot("everything");
});

test("the search is offered as a feed to subscribe to, and the feed is the search", async () => {
  // the previous test's search (everything, q=WORD) is on the page
  assert.equal(await page.isHidden("#subscribe"), false);
  const atom = await page.getAttribute("#feed-atom", "href");
  assert.equal(await page.textContent("#subscribe-url"), atom);
  const u = new URL(atom);
  assert.equal(u.searchParams.get("format"), "atom");
  assert.equal(u.searchParams.get("apiKey"), key); // a reader sends no headers
  assert.equal(u.searchParams.get("q"), WORD);
  for (const [id, type] of [["#feed-rss", "application/rss+xml"], ["#feed-atom", "application/atom+xml"],
                            ["#feed-json", "application/feed+json"]]) {
    const r = await fetch(await page.getAttribute(id, "href"));
    assert.equal(r.status, 200, id);
    assert.equal(r.headers.get("content-type"), type + "; charset=utf-8");
    const body = await r.text();
    assert.ok(!body.includes(key), "the key stays out of the feed");
    const titles = fixture.articles
      .filter((a) => new RegExp(`\\b${WORD}\\b`, "i").test(a.title + " " + a.description + " " + a.content))
      .map((a) => a.title);
    for (const t of titles)
      assert.ok(body.includes(t.replace(/&/g, "&amp;").replace(/</g, "&lt;")) || body.includes(JSON.stringify(t).slice(1, -1)),
                `${id} holds "${t}"`);
  }
  await shot("subscribe");
});

test("the search is offered as an export, and the files hold every match", async () => {
  // the previous tests' search (everything, q=WORD) is on the page
  assert.equal(await page.isHidden("#export"), false);
  const want = fixture.articles
    .filter((a) => new RegExp(`\\b${WORD}\\b`, "i").test(a.title + " " + a.description + " " + a.content))
    .sort((a, b) => (a.publishedAt < b.publishedAt ? 1 : a.publishedAt > b.publishedAt ? -1 : 0))
    .map((a) => a.url);
  assert.ok(want.length > 0);
  const files = {};
  for (const [id, format, type] of [["#export-csv", "csv", "text/csv"],
                                    ["#export-ndjson", "ndjson", "application/x-ndjson"]]) {
    const u = new URL(await page.getAttribute(id, "href"));
    assert.equal(u.pathname, "/v2/everything/export");
    assert.equal(u.searchParams.get("format"), format);
    assert.equal(u.searchParams.get("apiKey"), key); // a download sends no headers
    assert.equal(u.searchParams.get("q"), WORD);
    assert.equal(u.searchParams.get("page"), null);
    assert.equal(u.searchParams.get("pageSize"), null);
    const r = await fetch(u);
    assert.equal(r.status, 200, id);
    assert.ok(r.headers.get("content-type").startsWith(type), r.headers.get("content-type"));
    files[format] = await r.text();
  }
  const lines = files.ndjson.split("\n").filter((l) => l).map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((a) => a.url), want);
  assert.ok(files.csv.startsWith("sourceId,sourceName,author,title,"));
  for (const u of want)
    assert.ok(files.csv.includes(u), `the CSV holds ${u}`);
  // a click downloads the file
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-csv")]);
  assert.equal(download.suggestedFilename(), "newsd-export.csv");
  await shot("export");
});

test("the key survives a reload and the search is restored from the URL", async () => {
  await page.reload();
  assert.equal(await page.inputValue("#key"), key);
  assert.equal(await page.inputValue("#q"), WORD);
  await page.waitForSelector("#results article.card");
  assert.equal((await cardTitles()).length, 7);
  // the catalogue was fetched with the key: every catalogue source is offered
  await page.waitForFunction(() => document.querySelectorAll("#sources option").length > 0);
  const offered = await page.$$eval("#sources option", (os) => os.map((o) => o.value));
  const headlineSources = fs.readFileSync(SOURCES, "utf8").trim().split("\n").map((l) => JSON.parse(l))
    .filter((s) => s.headlines !== false).map((s) => s.id);
  assert.deepEqual(offered.slice().sort(), headlineSources.slice().sort());
});

test("sources, page size and searchIn reach the request", async () => {
  await page.selectOption("#sources", ["bbc-news"]);
  await page.fill("#pageSize", "1");
  await page.uncheck("input[name=searchIn][value=content]");
  await submit();
  const want = fixture.articles
    .filter((a) => a.source.id === "bbc-news" && /aurora/i.test(a.title + " " + a.description))
    .sort((a, b) => b.publishedAt.localeCompare(a.publishedAt));
  assert.deepEqual(await cardTitles(), [want[0].title]);
  const url = new URL(await page.textContent("#request-url"));
  assert.equal(url.searchParams.get("sources"), "bbc-news");
  assert.equal(url.searchParams.get("pageSize"), "1");
  assert.equal(url.searchParams.get("searchIn"), "title,description");
  assert.equal(await page.isVisible("#pager"), true);
  await page.click("#next");
  await page.waitForFunction(() => !document.getElementById("results").hasAttribute("aria-busy"));
  await page.waitForSelector("#results article.card");
  assert.deepEqual(await cardTitles(), [want[1].title]);
  assert.equal(new URL(await page.textContent("#request-url")).searchParams.get("page"), "2");
  await page.click("button[type=reset]");
  assert.equal(await page.inputValue("#key"), key);
});

test("top headlines by country and category", async () => {
  await pickEndpoint("top-headlines");
  assert.equal(await page.isHidden("#from"), true);
  await page.selectOption("#country", "us");
  await page.selectOption("#category", "technology");
  await page.selectOption("#sortBy", "publishedAt");
  await submit();
  const want = fixture.headlines.slice().sort((a, b) => b.publishedAt.localeCompare(a.publishedAt))
    .map((a) => a.title);
  assert.deepEqual(await cardTitles(), want);
  const url = new URL(await page.textContent("#request-url"));
  assert.equal(url.pathname, "/v2/top-headlines");
  assert.equal(url.searchParams.get("country"), "us");
  assert.equal(url.searchParams.get("category"), "technology");
  await shot("top-headlines");
});

test("the sources endpoint lists the catalogue by category", async () => {
  await pickEndpoint("sources");
  await page.selectOption("#country", "");
  await page.selectOption("#category", "technology");
  await submit();
  const want = fs.readFileSync(SOURCES, "utf8").trim().split("\n").map((l) => JSON.parse(l))
    .filter((s) => s.headlines !== false && s.category === "technology").map((s) => s.name);
  assert.ok(want.length > 3);
  assert.deepEqual((await cardTitles()).sort(), want.sort());
  await shot("sources");
});

test("an error is shown as NewsAPI reports it: code and message", async () => {
  await pickEndpoint("everything");
  await page.fill("#key", "not-a-valid-key");
  await page.fill("#q", WORD);
  await submit();
  assert.equal(await page.isVisible("#error"), true);
  assert.equal(await page.textContent("#error-code"), "apiKeyInvalid");
  assert.equal(await page.textContent("#error-http"), "HTTP 401");
  assert.match(await page.textContent("#error-message"), /^Your API key is invalid or incorrect\./);
  assert.equal((await cardTitles()).length, 0);
  await shot("error-bad-key");

  await page.fill("#key", key);
  await page.fill("#q", "");
  await submit();
  assert.equal(await page.textContent("#error-code"), "parametersMissing");
  assert.match(await page.textContent("#error-message"), /scope of your search is too broad/);
});

test("markup in articles is shown as text, never run", async () => {
  await pickEndpoint("everything");
  await page.fill("#q", "tags");
  await submit();
  const a = fixture.articles.find((x) => x.title.includes("Tags stay text"));
  assert.deepEqual(await cardTitles(), [a.title]);
  assert.equal(await page.textContent("#results .snippet"), a.description);
  assert.equal(await page.$$eval("#results .card-body img, #results script, #results b",
                                 (es) => es.length), 0);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
});

test("narrow screens get one column", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.fill("#q", WORD);
  await submit();
  assert.equal((await cardTitles()).length, 7);
  const widths = await page.$$eval("#results article.card", (cs) => cs.map((c) => c.getBoundingClientRect().width));
  assert.ok(widths.every((w) => w > 300), `cards are ${widths}`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  assert.equal(overflow, false, "the page scrolls sideways");
  await shot("mobile");
  await page.evaluate(() => document.getElementById("status").scrollIntoView());
  await shot("mobile-results", { fullPage: false });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test("the Live view puts new articles on top as they are stored", async () => {
  await page.goto(base + "/");
  await page.fill("#key", key);
  await pickEndpoint("everything");
  await page.fill("#q", "livewire");
  // The stream's request held back a second on its way (as on a loaded
  // machine): the page may say it is waiting only once the server has
  // answered, since an article stored before that is not the stream's.
  const slowStream = async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await route.continue();
  };
  await page.route("**/v2/everything/stream?*", slowStream);
  await page.click("#live");
  assert.match(await page.textContent("#status"), /Live: connecting/);
  await page.waitForFunction(() => /waiting for new articles/.test(
    document.getElementById("status").textContent), null, { timeout: TIMEOUT });
  assert.equal(await page.getAttribute("#live", "aria-pressed"), "true");
  const url = await page.textContent("#request-url");
  assert.equal(url, `${base}/v2/everything/stream?q=livewire`);
  const now = new Date();
  now.setUTCMilliseconds(0);
  const story = (n, word) => ({
    source: { id: "reuters", name: null }, author: null,
    title: `Story ${n}: ${word} update`, description: `Item ${n}.`,
    url: `https://news.example.org/live/${n}`, urlToImage: null,
    publishedAt: now.toISOString().replace(/\.\d{3}Z$/, "Z"), content: `Item ${n}.`,
  });
  // Three commits: two that match, one between them that does not.
  for (const [n, word] of [[1, "livewire"], [2, "unrelated"], [3, "livewire"]]) {
    const f = path.join(tmp, `live-${n}.jsonl`);
    fs.writeFileSync(f, JSON.stringify(story(n, word)) + "\n");
    cli("import", "--create", "--store", path.join(tmp, "store"), f);
  }
  await page.waitForFunction(() => document.querySelectorAll("#results article.card").length >= 2,
                             null, { timeout: TIMEOUT });
  await page.waitForTimeout(500);
  assert.deepEqual(await cardTitles(), ["Story 3: livewire update", "Story 1: livewire update"]);
  assert.match(await page.textContent("#status"), /Live: 2 new articles/);
  await shot("live");
  await page.unroute("**/v2/everything/stream?*", slowStream);
  await page.click("#live");
  assert.equal(await page.getAttribute("#live", "aria-pressed"), "false");
  assert.match(await page.textContent("#status"), /stopped/);
});

// Issue 26: the chart of /v2/everything/counts and the facet bars beside
// the results, checked against the fixture (not newsd's output).
async function insightsDrawn() {
  await page.waitForFunction(() => {
    const i = document.getElementById("insights");
    return !i.hidden && !i.hasAttribute("aria-busy") && i.querySelector("svg .bucket");
  }, null, { timeout: TIMEOUT });
}

test("the timeline counts the matches per bucket and its bars narrow the search", async () => {
  await page.goto(base + "/");
  await page.fill("#key", key);
  await pickEndpoint("everything");
  await page.fill("#q", WORD);
  await submit();
  await insightsDrawn();
  const matches = fixture.articles.filter((a) => new RegExp(`\\b${WORD}\\b`, "i").test(
    a.title + " " + a.description + " " + a.content));
  // hourly: every bucket's count is the fixture's count in that hour
  await page.click(".intervals button[data-interval=hour]");
  await page.waitForFunction(() => document.querySelector(".intervals button[aria-pressed=true]")
    .dataset.interval === "hour" && !document.getElementById("insights").hasAttribute("aria-busy"));
  await insightsDrawn();
  const buckets = await page.$$eval("#timeline .bucket", (gs) => gs.map((g) => ({
    from: g.dataset.from, count: Number(g.dataset.count) })));
  assert.ok(buckets.length >= 48 && buckets.length <= 49, `${buckets.length} hourly buckets`);
  for (let i = 0; i < buckets.length; i++) {
    const lo = Date.parse(buckets[i].from);
    const hi = i + 1 < buckets.length ? Date.parse(buckets[i + 1].from) : lo + 3600e3;
    const want = matches.filter((a) => Date.parse(a.publishedAt) >= lo &&
                                       Date.parse(a.publishedAt) < hi).length;
    assert.equal(buckets[i].count, want, `bucket ${buckets[i].from}`);
  }
  assert.equal(buckets.reduce((n, b) => n + b.count, 0), matches.length);
  // facet bars: the sources of the matches, most first, ties by id
  const bySource = {};
  for (const a of matches)
    bySource[a.source.id] = (bySource[a.source.id] || 0) + 1;
  const want = Object.entries(bySource).sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
    .slice(0, 6);
  const shown = await page.$$eval("#facets [data-facet=source] button.facet", (bs) => bs.map((b) =>
    [b.dataset.value, Number(b.querySelector(".n").textContent)]));
  assert.deepEqual(shown, want);
  // the screenshot check: the chart is drawn, and pointing at a bar
  // changes what is drawn (the bar lights up) and says its count
  const chart = await page.$("#timeline");
  const before = await chart.screenshot();
  const busiest = buckets.reduce((b, x, i) => (x.count > buckets[b].count ? i : b), 0);
  await page.hover(`#timeline .bucket:nth-of-type(${busiest + 1})`);
  await page.waitForFunction(() => document.querySelector("#timeline .bucket.on"));
  const after = await chart.screenshot();
  assert.ok(before.length > 1000, "the chart is not blank");
  assert.notDeepEqual(before, after, "hovering a bar changes the chart");
  assert.match(await page.textContent("#timeline-tip"),
               new RegExp(`: ${buckets[busiest].count} match`));
  await shot("timeline");
  // clicking a facet bar filters by it
  await page.click(`#facets [data-facet=source] button.facet[data-value="${want[0][0]}"]`);
  await page.waitForFunction(() => !document.getElementById("submit").disabled &&
    !document.getElementById("results").hasAttribute("aria-busy"));
  assert.equal(await page.textContent("#request-url"),
               `${base}/v2/everything?q=${WORD}&sources=${want[0][0]}`);
  assert.equal((await cardTitles()).length, want[0][1]);
  await insightsDrawn();
  // clicking a bar narrows from and to to its day
  await page.click(`#timeline .bucket:nth-of-type(${busiest + 1})`);
  const day = buckets[busiest].from.slice(0, 10);
  await page.waitForFunction((d) => document.getElementById("request-url").textContent
    .includes("from=" + d), day);
  assert.equal(await page.inputValue("#from"), day);
  assert.equal(await page.inputValue("#to"), day);
  await insightsDrawn();
  await shot("timeline-narrowed");
});

test("one card per story, whose \"+N more\" opens the story's other articles", async () => {
  await page.goto(base + "/");
  await page.fill("#key", key);
  await pickEndpoint("everything");
  await page.fill("#q", STORY_WORD);
  await submit();
  assert.equal((await cardTitles()).length, fixture.story.length); // one card per article
  await page.check("#dedupe");
  await submit();
  assert.equal(await page.textContent("#request-url"),
               `${base}/v2/everything?q=${STORY_WORD}&dedupe=true`);
  const copies = fixture.story.slice(0, 3);
  const newest = copies.slice().sort((a, b) => b.publishedAt.localeCompare(a.publishedAt))[0];
  assert.deepEqual(await cardTitles(), [newest.title, fixture.story[3].title]);
  const cards = await page.$$("#results article.card");
  assert.equal(await cards[1].$(".story-toggle"), null); // a story of one: no button
  const toggle = await cards[0].$(".story-toggle");
  assert.equal((await toggle.textContent()).trim(), "+2 more");
  await toggle.click();
  await page.waitForFunction(() => document.querySelectorAll(
    "#results article.card .story-members li a").length === 2, null, { timeout: TIMEOUT });
  const catalogue = fs.readFileSync(SOURCES, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const others = copies.filter((a) => a.url !== newest.url)
    .sort((a, b) => b.publishedAt.localeCompare(a.publishedAt));
  const names = others.map((a) => catalogue.find((s) => s.id === a.source.id).name);
  const items = await cards[0].$$eval(".story-members li", (lis) => lis.map((li) => ({
    source: li.querySelector(".source").textContent, href: li.querySelector("a").href })));
  assert.deepEqual(items, others.map((a, i) => ({ source: names[i], href: a.url })));
  assert.equal((await toggle.textContent()).trim(), "+2 more from " + names.join(", "));
  assert.equal(await toggle.getAttribute("aria-expanded"), "true");
  await shot("stories");
  await toggle.click(); // closes again
  assert.equal(await cards[0].$eval(".story-members", (u) => u.hidden), true);
  // the choice is kept in the page's URL, as every other field
  assert.match(page.url(), /dedupe=true/);
  await page.uncheck("#dedupe");
});

test("nothing was blocked by the CSP and nothing was fetched from elsewhere", async () => {
  const violations = await page.evaluate(() => window.__csp || []);
  assert.deepEqual(violations.concat(cspViolations), []);
  assert.deepEqual(foreignRequests, []);
});
