/* newsd search page: builds a NewsAPI v2 request from the form, sends it
 * with the key in the X-Api-Key header, and renders the answer — articles
 * or sources as cards, or the error as NewsAPI reports it (code + message).
 * "Live" opens an EventSource on /v2/everything/stream for the current
 * query (the key as apiKey: an EventSource sends no headers of ours) and
 * puts each article on top as it arrives.
 * No framework and nothing loaded from elsewhere: the page's
 * Content-Security-Policy allows scripts, styles and requests to this
 * server only. Every value from the server is inserted as text, never as
 * HTML; links and images are kept only when they are http(s) URLs. */
"use strict";

(function () {
  const KEY_STORE = "newsd.apiKey";
  const PATHS = {
    "everything": "v2/everything",
    "top-headlines": "v2/top-headlines",
    "sources": "v2/top-headlines/sources",
  };
  const CATEGORIES = ["business", "entertainment", "general", "health", "science", "sports",
                      "technology"];
  const LANGUAGES = ["ar", "de", "en", "es", "fr", "he", "it", "nl", "no", "pt", "ru", "sv",
                     "ud", "zh"];
  const COUNTRIES = ["ae", "ar", "at", "au", "be", "bg", "br", "ca", "ch", "cn", "co", "cu", "cz",
                     "de", "eg", "fr", "gb", "gr", "hk", "hu", "id", "ie", "il", "in", "it", "jp",
                     "kr", "lt", "lv", "ma", "mx", "my", "ng", "nl", "no", "nz", "ph", "pl", "pt",
                     "ro", "rs", "ru", "sa", "se", "sg", "si", "sk", "th", "tr", "tw", "ua", "us",
                     "ve", "za"];
  /* Fields kept in the page's own URL (so a search can be bookmarked); the
   * key never is. */
  const STATE_FIELDS = ["q", "qInTitle", "searchIn", "sources", "domains", "excludeDomains",
                        "from", "to", "country", "category", "language", "sortBy", "pageSize",
                        "page", "dedupe"];

  const $ = (id) => document.getElementById(id);
  const form = $("search");
  const keyInput = $("key");
  let requestSeq = 0;      /* answers to older requests are dropped */
  let live = null;         /* the open EventSource of the Live view */
  const LIVE_MAX_CARDS = 200; /* older cards go as new ones come */
  /* /v2/everything parameters a stream refuses (it sends what comes). */
  const NOT_LIVE = ["from", "to", "sortBy", "page", "pageSize", "dedupe"];
  let catalogueFor = null; /* the key the sources list was loaded with */

  /* ---- small DOM helpers ------------------------------------------------ */
  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className)
      e.className = className;
    if (text !== undefined && text !== null)
      e.textContent = String(text);
    return e;
  }

  function httpUrl(s) {
    if (typeof s !== "string" || !s)
      return null;
    try {
      const u = new URL(s);
      return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
    } catch (e) {
      return null;
    }
  }

  function displayName(type, code) {
    if (code === "ud")
      return "Urdu";
    try {
      const n = new Intl.DisplayNames(undefined, { type: type }).of(type === "region" ?
                                                                    code.toUpperCase() : code);
      if (n && n.toLowerCase() !== code)
        return n;
    } catch (e) { /* an old browser: the code alone */ }
    return code;
  }

  function fillSelect(select, codes, type) {
    const items = codes.map((c) => ({ code: c, name: type ? displayName(type, c) : c }));
    if (type)
      items.sort((a, b) => a.name.localeCompare(b.name));
    for (const it of items) {
      const o = el("option", null, it.name);
      if (type)
        o.title = it.code;
      o.value = it.code;
      select.append(o);
    }
  }

  /* ---- the form ----------------------------------------------------------- */
  function endpoint() {
    return form.querySelector("input[name=endpoint]:checked").value;
  }

  function setEndpoint(ep) {
    const radio = form.querySelector("input[name=endpoint][value='" + ep + "']");
    if (radio)
      radio.checked = true;
  }

  /* Show the controls of the chosen endpoint; hidden ones are disabled so
   * they are neither focusable nor sent. */
  function applyEndpoint() {
    const ep = endpoint();
    for (const block of form.querySelectorAll("[data-endpoints]")) {
      const on = block.dataset.endpoints.split(" ").includes(ep);
      block.hidden = !on;
      for (const c of block.querySelectorAll("input, select, textarea"))
        c.disabled = !on;
    }
  }

  function usable(control) {
    return control && !control.disabled;
  }

  function listValue(s) {
    return s.split(/[\s,]+/).filter(Boolean).join(",");
  }

  /* The request's parameters, in a stable order, empty ones left out. */
  function requestParams() {
    const p = new URLSearchParams();
    const text = (name) => {
      const c = form.elements[name];
      if (usable(c) && c.value.trim())
        p.set(name, c.value.trim());
    };
    text("q");
    text("qInTitle");
    const boxes = Array.from(form.querySelectorAll("input[name=searchIn]"));
    if (boxes.length && usable(boxes[0])) {
      const on = boxes.filter((b) => b.checked).map((b) => b.value);
      if (on.length && on.length < boxes.length)
        p.set("searchIn", on.join(","));
    }
    const sources = form.elements.sources;
    if (usable(sources)) {
      const ids = Array.from(sources.selectedOptions).map((o) => o.value);
      if (ids.length)
        p.set("sources", ids.join(","));
    }
    for (const name of ["domains", "excludeDomains"]) {
      const c = form.elements[name];
      if (usable(c) && listValue(c.value))
        p.set(name, listValue(c.value));
    }
    for (const name of ["from", "to", "country", "category", "language", "sortBy", "pageSize"])
      text(name);
    const page = form.elements.page;
    if (usable(page) && page.value.trim() && page.value.trim() !== "1")
      p.set("page", page.value.trim());
    const dedupe = form.elements.dedupe;
    if (usable(dedupe) && dedupe.checked)
      p.set("dedupe", "true"); /* one card per story (docs/api.md §9 "Stories") */
    return p;
  }

  function requestUrl(ep, params) {
    const qs = params.toString();
    return new URL(PATHS[ep] + (qs ? "?" + qs : ""), document.baseURI).href;
  }

  function shellQuote(s) {
    return "'" + s.replace(/'/g, "'\\''") + "'";
  }

  /* Keep the search in the page's URL (without the key). */
  function saveState(ep, params) {
    const s = new URLSearchParams(params);
    s.set("endpoint", ep);
    history.replaceState(null, "", "?" + s.toString());
  }

  function restoreState() {
    const s = new URLSearchParams(location.search);
    if (Object.prototype.hasOwnProperty.call(PATHS, s.get("endpoint")))
      setEndpoint(s.get("endpoint"));
    for (const name of STATE_FIELDS) {
      const v = s.get(name);
      if (v === null)
        continue;
      if (name === "searchIn") {
        const on = v.split(",");
        for (const b of form.querySelectorAll("input[name=searchIn]"))
          b.checked = on.includes(b.value);
      } else if (name === "dedupe") {
        form.elements.dedupe.checked = v === "true";
      } else if (name === "sources") {
        form.elements.sources.dataset.pending = v; /* chosen once the catalogue is in */
      } else if (form.elements[name]) {
        form.elements[name].value = v;
      }
    }
    return s.has("endpoint");
  }

  /* ---- talking to the server ------------------------------------------------ */
  function currentKey() {
    return keyInput.value.trim();
  }

  async function getJson(url, key) {
    const headers = { "Accept": "application/json" };
    if (key)
      headers["X-Api-Key"] = key;
    const res = await fetch(url, { headers: headers, cache: "no-store" });
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      body = null;
    }
    return { status: res.status, body: body };
  }

  async function loadCatalogue() {
    const key = currentKey();
    const select = form.elements.sources;
    if (key === catalogueFor)
      return;
    catalogueFor = key;
    const chosen = new Set(Array.from(select.selectedOptions).map((o) => o.value));
    if (select.dataset.pending) {
      select.dataset.pending.split(",").forEach((id) => chosen.add(id));
      delete select.dataset.pending;
    }
    select.replaceChildren();
    if (!key) {
      $("sources-hint").textContent = "Loaded from the catalogue once a key is set.";
      return;
    }
    try {
      const r = await getJson(requestUrl("sources", new URLSearchParams()), key);
      if (key !== catalogueFor)
        return; /* the key changed meanwhile */
      if (!r.body || r.body.status !== "ok" || !Array.isArray(r.body.sources)) {
        $("sources-hint").textContent = "The catalogue could not be loaded" +
          (r.body && r.body.code ? " (" + r.body.code + ")." : ".");
        catalogueFor = null;
        return;
      }
      const list = r.body.sources.slice().sort((a, b) =>
        String(a.name || a.id).localeCompare(String(b.name || b.id)));
      for (const s of list) {
        const o = el("option", null, (s.name || s.id) + " — " + s.id);
        o.value = s.id;
        o.selected = chosen.has(s.id);
        select.append(o);
      }
      $("sources-hint").textContent = list.length + " sources in the catalogue. " +
        "Ctrl- or ⌘-click picks several.";
    } catch (e) {
      catalogueFor = null;
      $("sources-hint").textContent = "The catalogue could not be loaded: " + e.message;
    }
  }

  /* ---- rendering ---------------------------------------------------------------- */
  const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium",
                                                          timeStyle: "short" });

  function relativeTime(then) {
    const s = Math.round((then - Date.now()) / 1000);
    const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
    const a = Math.abs(s);
    if (a < 60)
      return rtf.format(s, "second");
    if (a < 3600)
      return rtf.format(Math.round(s / 60), "minute");
    if (a < 86400)
      return rtf.format(Math.round(s / 3600), "hour");
    if (a < 30 * 86400)
      return rtf.format(Math.round(s / 86400), "day");
    return null;
  }

  function thumb(imageUrl, label) {
    const box = el("div", "thumb");
    box.setAttribute("aria-hidden", "true");
    box.append(el("span", "thumb-letter", (label || "?").trim().charAt(0).toUpperCase() || "?"));
    const src = httpUrl(imageUrl);
    if (src) {
      const img = el("img");
      img.alt = "";
      img.loading = "lazy";
      img.decoding = "async";
      img.referrerPolicy = "no-referrer";
      img.addEventListener("error", () => img.remove(), { once: true });
      img.addEventListener("load", () => box.classList.add("loaded"), { once: true });
      img.src = src;
      box.append(img);
    }
    return box;
  }

  function snippet(a) {
    let s = a.description || a.content || "";
    s = s.replace(/\s*…?\s*\[\+\d+ chars\]\s*$/, "…");
    return s.length > 320 ? s.slice(0, 317).trimEnd() + "…" : s;
  }

  function articleCard(a) {
    const card = el("article", "card");
    const sourceName = (a.source && (a.source.name || a.source.id)) || "Unknown source";
    card.append(thumb(a.urlToImage, sourceName));
    const body = el("div", "card-body");
    const meta = el("p", "meta");
    meta.append(el("span", "source", sourceName));
    if (a.publishedAt) {
      const when = new Date(a.publishedAt);
      if (!isNaN(when)) {
        const t = el("time", null, dateFormat.format(when));
        t.dateTime = a.publishedAt;
        const rel = relativeTime(when.getTime());
        if (rel)
          t.title = rel;
        meta.append(el("span", "sep", "·"), t);
      }
    }
    body.append(meta);
    const h = el("h3", "title");
    const href = httpUrl(a.url);
    if (href) {
      const link = el("a", null, a.title || href);
      link.href = href;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      h.append(link);
    } else {
      h.textContent = a.title || "(untitled)";
    }
    body.append(h);
    const text = snippet(a);
    if (text)
      body.append(el("p", "snippet", text));
    if (a.author)
      body.append(el("p", "author", a.author));
    if (typeof a.storyId === "string" && /^[0-9]{1,19}$/.test(a.storyId) &&
        Number.isInteger(a.storySize) && a.storySize > 1)
      body.append(storyMore(a));
    card.append(body);
    return card;
  }

  /* dedupe=true: "+N more" under a story's card; opening it reads the
   * story's articles (GET /v2/stories/{id}) and lists the others, and the
   * button then says which sources carried them. */
  function storyMore(a) {
    const box = el("div", "story-more");
    const more = a.storySize - 1;
    const button = el("button", "secondary story-toggle", "+" + more + " more");
    button.type = "button";
    button.setAttribute("aria-expanded", "false");
    button.title = "Other articles of the same story";
    const list = el("ul", "story-members");
    list.hidden = true;
    let loaded = false;
    button.addEventListener("click", async () => {
      const open = button.getAttribute("aria-expanded") === "true";
      button.setAttribute("aria-expanded", String(!open));
      list.hidden = open;
      if (open || loaded)
        return;
      loaded = true;
      list.replaceChildren(el("li", "story-loading", "Loading…"));
      try {
        const url = new URL("v2/stories/" + a.storyId + "?pageSize=100", document.baseURI).href;
        const r = await getJson(url, currentKey());
        const b = r.body;
        if (!b || b.status !== "ok" || !Array.isArray(b.articles)) {
          list.replaceChildren(el("li", "story-loading", "The story could not be loaded" +
            (b && b.code ? " (" + b.code + ")." : ".")));
          loaded = false;
          return;
        }
        const others = b.articles.filter((x) => x.url !== a.url);
        const names = [];
        const frag = document.createDocumentFragment();
        for (const x of others) {
          const name = (x.source && (x.source.name || x.source.id)) || "Unknown source";
          if (!names.includes(name))
            names.push(name);
          const li = el("li");
          li.append(el("span", "source", name), el("span", "sep", "·"));
          const href = httpUrl(x.url);
          if (href) {
            const link = el("a", null, x.title || href);
            link.href = href;
            link.target = "_blank";
            link.rel = "noopener noreferrer";
            li.append(link);
          } else {
            li.append(el("span", null, x.title || "(untitled)"));
          }
          frag.append(li);
        }
        list.replaceChildren(frag);
        if (names.length)
          button.textContent = "+" + more + " more from " + names.slice(0, 3).join(", ") +
            (names.length > 3 ? " and " + (names.length - 3) + " more" : "");
      } catch (e) {
        list.replaceChildren(el("li", "story-loading", "The story could not be loaded: " +
                                (e.message || String(e))));
        loaded = false;
      }
    });
    box.append(button, list);
    return box;
  }

  function sourceCard(s) {
    const card = el("article", "card source-card");
    card.append(thumb(null, s.name || s.id));
    const body = el("div", "card-body");
    const meta = el("p", "meta");
    for (const v of [s.category, s.language, s.country])
      if (v)
        meta.append(el("span", "badge", v));
    body.append(meta);
    const h = el("h3", "title");
    const href = httpUrl(s.url);
    if (href) {
      const link = el("a", null, s.name || s.id);
      link.href = href;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      h.append(link);
    } else {
      h.textContent = s.name || s.id;
    }
    body.append(h);
    body.append(el("p", "id", "id: " + s.id));
    if (s.description)
      body.append(el("p", "snippet", s.description));
    card.append(body);
    return card;
  }

  function showError(httpStatus, code, message) {
    $("error-http").textContent = httpStatus ? "HTTP " + httpStatus : "No answer";
    $("error-code").textContent = code;
    $("error-message").textContent = message;
    $("error").hidden = false;
    $("status").textContent = "The request failed: " + code + ".";
  }

  function clearOutput() {
    $("error").hidden = true;
    $("results").replaceChildren();
    $("pager").hidden = true;
  }

  function showRequest(url) {
    $("request").hidden = false;
    $("request-url").textContent = url;
    $("request-curl").textContent = "curl -s -H \"X-Api-Key: $NEWSD_KEY\" " + shellQuote(url);
    showSubscribe(url);
    showExport(url);
  }

  /* Every match of the search as a file (docs/api.md, "Export"): the
   * filters of the search, without its page, order and form (an export is
   * every match, newest first); a download link sends no headers, so the
   * key goes in the URL. */
  function exportUrl(url, format) {
    const u = new URL(url);
    u.pathname = u.pathname.replace(/\/v2\/everything$/, "/v2/everything/export");
    for (const p of ["page", "pageSize", "sortBy", "format", "cursor"])
      u.searchParams.delete(p);
    u.searchParams.set("format", format);
    const key = currentKey();
    if (key)
      u.searchParams.set("apiKey", key);
    return u.href;
  }

  function showExport(url) {
    $("export").hidden = endpoint() !== "everything";
    if ($("export").hidden)
      return;
    $("export-csv").href = exportUrl(url, "csv");
    $("export-ndjson").href = exportUrl(url, "ndjson");
  }

  /* The search as a feed for a reader to follow (docs/api.md, "Search as a
   * feed"): a reader sends no headers, so the key goes in the URL. */
  function feedUrl(url, format) {
    const u = new URL(url);
    u.searchParams.set("format", format);
    const key = currentKey();
    if (key)
      u.searchParams.set("apiKey", key);
    return u.href;
  }

  function showSubscribe(url) {
    const ep = endpoint();
    $("subscribe").hidden = ep !== "everything" && ep !== "top-headlines";
    if ($("subscribe").hidden)
      return;
    $("subscribe-url").textContent = feedUrl(url, "atom");
    $("feed-rss").href = feedUrl(url, "rss");
    $("feed-atom").href = feedUrl(url, "atom");
    $("feed-json").href = feedUrl(url, "jsonfeed");
  }

  function renderArticles(body, params) {
    const n = body.articles.length;
    const size = Number(params.get("pageSize")) ||
      (endpoint() === "everything" ? 100 : 20);
    const page = Number(params.get("page")) || 1;
    const first = (page - 1) * size + 1;
    const total = body.totalResults;
    $("status").textContent = n ?
      "Results " + first.toLocaleString() + "–" + (first + n - 1).toLocaleString() + " of " +
        total.toLocaleString() + "." :
      (total ? "No results on this page (" + total.toLocaleString() + " in all)." :
               "No results.");
    const frag = document.createDocumentFragment();
    for (const a of body.articles)
      frag.append(articleCard(a));
    $("results").replaceChildren(frag);
    const pages = Math.max(1, Math.ceil(total / size));
    $("pager").hidden = total <= size && page === 1;
    $("page-info").textContent = "Page " + page + " of " + pages.toLocaleString();
    $("prev").disabled = page <= 1;
    $("next").disabled = page * size >= total;
  }

  function renderSources(body) {
    const n = body.sources.length;
    $("status").textContent = n ? n + (n === 1 ? " source." : " sources.") : "No sources.";
    const frag = document.createDocumentFragment();
    for (const s of body.sources)
      frag.append(sourceCard(s));
    $("results").replaceChildren(frag);
  }

  /* ---- the Live view ---------------------------------------------------------------- */
  function setLiveButton(on) {
    $("live").textContent = on ? "Stop live" : "Live";
    $("live").setAttribute("aria-pressed", String(on));
  }

  function stopLive() {
    if (live) {
      live.close();
      live = null;
    }
    setLiveButton(false);
  }

  function liveStatus(count) {
    if (count === 0)
      return "Live: waiting for new articles…";
    return "Live: " + count.toLocaleString() + (count === 1 ? " new article." : " new articles.");
  }

  function startLive() {
    stopLive();
    hideInsights();
    ++requestSeq; /* a search still running is no longer shown */
    const params = requestParams();
    for (const name of NOT_LIVE)
      params.delete(name);
    const shown = requestUrl("everything", params).replace("/v2/everything?", "/v2/everything/stream?");
    const withKey = new URLSearchParams(params);
    if (currentKey())
      withKey.set("apiKey", currentKey());
    const url = new URL("v2/everything/stream?" + withKey.toString(), document.baseURI).href;
    showRequest(shown);
    /* -N: curl shows each event as it comes instead of buffering. */
    $("request-curl").textContent = "curl -sN -H \"X-Api-Key: $NEWSD_KEY\" " + shellQuote(shown);
    clearOutput();
    $("status").textContent = "Live: connecting…";
    setLiveButton(true);
    let count = 0;
    const es = new EventSource(url);
    live = es;
    /* "Waiting" only once the server has answered: it fixes the stream's
     * position before its headers, so from here every stored article that
     * matches comes. Said before that, an article stored while the request
     * was still on its way was (rightly) never sent. */
    es.addEventListener("open", () => {
      if (live !== es)
        return;
      $("status").textContent = liveStatus(count);
    });
    es.addEventListener("article", (ev) => {
      let a;
      try {
        a = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      const box = $("results");
      box.prepend(articleCard(a));
      while (box.childElementCount > LIVE_MAX_CARDS)
        box.lastElementChild.remove();
      count++;
      $("status").textContent = liveStatus(count);
    });
    es.addEventListener("error", async (ev) => {
      if (live !== es)
        return;
      if (ev.data) { /* the server's error event (streamPositionExpired) */
        stopLive();
        try {
          const b = JSON.parse(ev.data);
          showError(200, String(b.code || "streamError"), String(b.message || ""));
        } catch (e) {
          showError(200, "streamError", String(ev.data));
        }
        return;
      }
      if (es.readyState !== EventSource.CLOSED) {
        $("status").textContent = "Live: reconnecting…"; /* it resumes where it was */
        return;
      }
      /* Refused when opening: ask again as JSON for NewsAPI's error. */
      stopLive();
      try {
        const r = await getJson(url, null);
        const b = r.body;
        if (b && b.status === "error")
          showError(r.status, String(b.code || "unknownError"), String(b.message || ""));
        else
          showError(r.status, "streamClosed", "The live stream closed.");
      } catch (e) {
        showError(0, "networkError", e.message || String(e));
      }
    });
  }

  async function search() {
    stopLive();
    hideInsights();
    const ep = endpoint();
    const params = requestParams();
    const url = requestUrl(ep, params);
    const key = currentKey();
    const seq = ++requestSeq;
    saveState(ep, params);
    showRequest(url);
    clearOutput();
    $("status").textContent = "Searching…";
    $("results").setAttribute("aria-busy", "true");
    $("submit").disabled = true;
    try {
      const r = await getJson(url, key);
      if (seq !== requestSeq)
        return;
      const b = r.body;
      if (!b || typeof b !== "object") {
        showError(r.status, "invalidResponse", "The server's answer is not JSON.");
      } else if (b.status === "error") {
        showError(r.status, String(b.code || "unknownError"), String(b.message || ""));
      } else if (ep === "sources" && Array.isArray(b.sources)) {
        renderSources(b);
      } else if (Array.isArray(b.articles)) {
        renderArticles(b, params);
        if (ep === "everything")
          loadInsights(params);
      } else {
        showError(r.status, "invalidResponse", "The server's answer has an unexpected shape.");
      }
    } catch (e) {
      if (seq === requestSeq)
        showError(0, "networkError", e.message || String(e));
    } finally {
      if (seq === requestSeq) {
        $("results").removeAttribute("aria-busy");
        $("submit").disabled = false;
      }
    }
  }

  /* ---- coverage over time and facets (docs/api.md, "Coverage over time and
   * facets") -------------------------------------------------------------------------- */
  /* the SVG namespace, from the page's own <svg> (no address in this file) */
  const SVG_NS = document.getElementById("chart").namespaceURI;
  const FACETS_SHOWN = ["source", "domain", "language", "author"];
  const FACETS_FILTER = { source: true, domain: true, language: true }; /* click filters */
  let interval = "day";
  let insightSeq = 0;
  let insightParams = null; /* the search the chart is of */

  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const k in attrs)
      e.setAttribute(k, String(attrs[k]));
    return e;
  }

  function bucketLabel(from) {
    const d = from.slice(0, 10);
    if (interval === "hour")
      return d + " " + from.slice(11, 16) + " UTC";
    if (interval === "week")
      return "week of " + d;
    if (interval === "month")
      return from.slice(0, 7);
    return d;
  }

  function isoDate(ms) {
    return new Date(ms).toISOString().slice(0, 10);
  }

  /* Clicking bucket i searches its period (the date fields hold whole
   * days) with the next finer bucket. */
  function narrow(counts, i) {
    const start = Date.parse(counts[i].from);
    const end = i + 1 < counts.length ? Date.parse(counts[i + 1].from) :
      start + { hour: 3600e3, day: 86400e3, week: 7 * 86400e3, month: 31 * 86400e3 }[interval];
    form.elements.from.value = isoDate(start);
    form.elements.to.value = isoDate(end - 1000);
    form.elements.page.value = "1";
    setInterval_({ month: "day", week: "day", day: "hour", hour: "hour" }[interval]);
    search();
  }

  function drawTimeline(body) {
    const counts = body.counts;
    const W = 640, H = 150, TOP = 14, BOTTOM = 18;
    const n = Math.max(1, counts.length);
    const max = Math.max(1, ...counts.map((c) => c.count));
    const w = W / n;
    const svg = $("chart");
    svg.replaceChildren();
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("aria-label", body.totalResults.toLocaleString() + " matches in " +
                     counts.length + " buckets of one " + interval);
    svg.append(svgEl("line", { x1: 0, y1: H - BOTTOM + 0.5, x2: W, y2: H - BOTTOM + 0.5,
                               class: "base" }));
    const top = svgEl("text", { x: 2, y: 10, class: "axis" });
    top.textContent = max.toLocaleString();
    svg.append(top);
    counts.forEach((c, i) => {
      const g = svgEl("g", { class: "bucket", tabindex: 0, "data-from": c.from,
                             "data-count": c.count });
      const h = (H - TOP - BOTTOM) * c.count / max;
      g.append(svgEl("rect", { class: "hit", x: i * w, y: 0, width: w, height: H - BOTTOM }));
      g.append(svgEl("rect", { class: "bar", x: i * w + Math.min(1, w * 0.15), y: H - BOTTOM - h,
                               width: Math.max(0.5, w - 2 * Math.min(1, w * 0.15)), height: h }));
      const tip = bucketLabel(c.from) + ": " + c.count.toLocaleString() +
        (c.count === 1 ? " match" : " matches") +
        (c.total !== c.count ? " of " + c.total.toLocaleString() + " articles in scope" : "");
      const title = svgEl("title", {});
      title.textContent = tip;
      g.append(title);
      const show = () => {
        $("timeline-tip").textContent = tip;
        for (const o of svg.querySelectorAll(".bucket.on"))
          o.classList.remove("on");
        g.classList.add("on");
      };
      g.addEventListener("mouseenter", show);
      g.addEventListener("focus", show);
      g.addEventListener("click", () => narrow(counts, i));
      g.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" || ev.key === " ") {
          ev.preventDefault();
          narrow(counts, i);
        }
      });
      svg.append(g);
    });
    if (counts.length) {
      const first = svgEl("text", { x: 2, y: H - 4, class: "axis" });
      first.textContent = bucketLabel(counts[0].from);
      const last = svgEl("text", { x: W - 2, y: H - 4, class: "axis", "text-anchor": "end" });
      last.textContent = bucketLabel(counts[counts.length - 1].from);
      svg.append(first, last);
    }
    $("timeline-tip").textContent = body.totalResults.toLocaleString() +
      " matches. Point at a bar to see its count; click it to search that period.";
  }

  function filterBy(facet, value) {
    if (facet === "source") {
      const select = form.elements.sources;
      let found = false;
      for (const o of select.options) {
        o.selected = o.value === value;
        found = found || o.selected;
      }
      if (!found) {
        const o = el("option", null, value);
        o.value = value;
        o.selected = true;
        select.append(o);
      }
    } else if (facet === "domain") {
      form.elements.domains.value = value;
    } else if (facet === "language") {
      form.elements.language.value = value;
    }
    form.elements.page.value = "1";
    search();
  }

  function drawFacets(facets) {
    const frag = document.createDocumentFragment();
    for (const name of FACETS_SHOWN) {
      const values = facets[name] || [];
      if (!values.length)
        continue;
      const box = el("div", "facet-list");
      box.dataset.facet = name;
      box.append(el("h4", null, name));
      const ul = el("ul");
      const max = values[0].count;
      for (const v of values) {
        const li = el("li");
        const b = el("button", "facet");
        b.type = "button";
        const label = name === "language" ? displayName("language", v.value) :
          (v.name || v.value);
        const fill = el("span", "fill");
        fill.style.width = (100 * v.count / max).toFixed(1) + "%";
        b.append(fill, el("span", "label", label), el("span", "n", v.count.toLocaleString()));
        b.dataset.value = v.value;
        if (FACETS_FILTER[name]) {
          b.title = "Search only " + name + " " + v.value;
          b.addEventListener("click", () => filterBy(name, v.value));
        } else {
          b.disabled = true;
        }
        li.append(b);
        ul.append(li);
      }
      box.append(ul);
      frag.append(box);
    }
    $("facets").replaceChildren(frag);
  }

  async function loadInsights(params) {
    const seq = ++insightSeq;
    insightParams = params;
    const p = new URLSearchParams(params);
    for (const name of ["sortBy", "page", "pageSize"])
      p.delete(name);
    p.set("interval", interval);
    p.set("facets", FACETS_SHOWN.join(","));
    p.set("facetSize", "6");
    const url = new URL("v2/everything/counts?" + p.toString(), document.baseURI).href;
    $("insights").hidden = false;
    $("insights").setAttribute("aria-busy", "true");
    try {
      const r = await getJson(url, currentKey());
      if (seq !== insightSeq)
        return;
      if (r.body && r.body.status === "error") {
        /* e.g. too many hours for the window: say so, keep the picker */
        $("chart").replaceChildren();
        $("facets").replaceChildren();
        $("timeline-tip").textContent = String(r.body.message || r.body.code || "");
        return;
      }
      if (!r.body || r.body.status !== "ok" || !Array.isArray(r.body.counts)) {
        $("insights").hidden = true;
        return;
      }
      drawTimeline(r.body);
      drawFacets(r.body.facets || {});
    } catch (e) {
      if (seq === insightSeq)
        $("insights").hidden = true;
    } finally {
      if (seq === insightSeq)
        $("insights").removeAttribute("aria-busy");
    }
  }

  function hideInsights() {
    ++insightSeq;
    insightParams = null;
    $("insights").hidden = true;
  }

  function setInterval_(iv) {
    interval = iv;
    for (const b of document.querySelectorAll(".intervals button"))
      b.setAttribute("aria-pressed", String(b.dataset.interval === iv));
  }

  /* ---- copying the request ------------------------------------------------------ */
  async function copyText(button) {
    const text = $(button.dataset.copy).textContent;
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch (e) {
      const range = document.createRange();
      range.selectNodeContents($(button.dataset.copy));
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      ok = document.execCommand && document.execCommand("copy");
    }
    const label = button.textContent;
    button.textContent = ok ? "Copied" : "Select and copy";
    setTimeout(() => { button.textContent = label; }, 1500);
  }

  /* ---- wiring ----------------------------------------------------------------------- */
  function init() {
    fillSelect(form.elements.category, CATEGORIES, null);
    fillSelect(form.elements.country, COUNTRIES, "region");
    fillSelect(form.elements.language, LANGUAGES, "language");

    let stored = null;
    try {
      stored = localStorage.getItem(KEY_STORE);
    } catch (e) { /* storage disabled: the key lasts for the page */ }
    if (stored)
      keyInput.value = stored;

    const restored = restoreState();
    applyEndpoint();

    keyInput.addEventListener("change", () => {
      try {
        if (currentKey())
          localStorage.setItem(KEY_STORE, currentKey());
        else
          localStorage.removeItem(KEY_STORE);
      } catch (e) { /* see above */ }
      loadCatalogue();
    });
    $("key-toggle").addEventListener("click", (ev) => {
      const show = keyInput.type === "password";
      keyInput.type = show ? "text" : "password";
      ev.currentTarget.textContent = show ? "Hide" : "Show";
      ev.currentTarget.setAttribute("aria-pressed", String(show));
    });
    $("key-forget").addEventListener("click", () => {
      try {
        localStorage.removeItem(KEY_STORE);
      } catch (e) { /* see above */ }
      keyInput.value = "";
      loadCatalogue();
      keyInput.focus();
    });
    for (const r of form.querySelectorAll("input[name=endpoint]"))
      r.addEventListener("change", applyEndpoint);
    /* A changed query starts again at page 1. */
    form.addEventListener("input", (ev) => {
      if (ev.target.name !== "page")
        form.elements.page.value = "1";
    });
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      keyInput.dispatchEvent(new Event("change"));
      search();
    });
    /* The key is outside the form: a reset keeps it. */
    form.addEventListener("reset", () => {
      setTimeout(() => {
        applyEndpoint();
        history.replaceState(null, "", location.pathname);
      }, 0);
    });
    $("prev").addEventListener("click", () => {
      const p = Math.max(1, (Number(form.elements.page.value) || 1) - 1);
      form.elements.page.value = String(p);
      search();
    });
    $("next").addEventListener("click", () => {
      form.elements.page.value = String((Number(form.elements.page.value) || 1) + 1);
      search();
    });
    for (const b of document.querySelectorAll("button.copy"))
      b.addEventListener("click", () => copyText(b));
    $("live").addEventListener("click", () => {
      if (live) {
        stopLive();
        $("status").textContent = "Live view stopped.";
        return;
      }
      keyInput.dispatchEvent(new Event("change"));
      startLive();
    });
    for (const r of form.querySelectorAll("input[name=endpoint]"))
      r.addEventListener("change", () => {
        if (endpoint() !== "everything")
          stopLive();
      });

    for (const b of document.querySelectorAll(".intervals button"))
      b.addEventListener("click", () => {
        setInterval_(b.dataset.interval);
        if (insightParams)
          loadInsights(insightParams);
      });

    loadCatalogue();
    if (restored && currentKey())
      search();
  }

  init();
})();
