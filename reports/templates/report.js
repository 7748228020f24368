(function () {
  "use strict";
  function apply(scope) {
    var results = {}, severities = {};
    scope.querySelectorAll("input[data-filter]").forEach(function (box) {
      (box.dataset.filter === "result" ? results : severities)[box.value] = box.checked;
    });
    // Rule articles only: the fleet matrix's header cells are class "rule" too.
    document.querySelectorAll("article.rule").forEach(function (rule) {
      var show = results[rule.dataset.result] !== false && severities[rule.dataset.severity] !== false;
      rule.classList.toggle("hidden", !show);
    });
    var shown = document.querySelectorAll("article.rule:not(.hidden)").length;
    var counter = document.getElementById("shown-count");
    if (counter) {
      counter.textContent = String(shown);
      // a fleet page before any host is opened has no rules to count: no "(0 shown)"
      counter.parentNode.hidden = !document.querySelector("article.rule");
    }
  }
  function applyAll() { document.querySelectorAll(".filters").forEach(apply); }
  document.querySelectorAll(".filters").forEach(function (scope) {
    scope.addEventListener("change", function () { apply(scope); });
    apply(scope);
  });
  // Delegated, so that the buttons of a fleet host built later work too.
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button.copy") : null;
    if (!button) { return; }
    var source = document.getElementById(button.dataset.target);
    if (source && navigator.clipboard) { navigator.clipboard.writeText(source.textContent); }
    button.textContent = "copied";
  });

  // Paper and PDF show every rationale, source and fix: each closed <details> is opened for
  // printing and closed again after (Chromium prints a closed one's summary only).
  var openedForPrint = [];
  window.addEventListener("beforeprint", function () {
    openedForPrint = Array.prototype.slice.call(document.querySelectorAll("details:not([open])"));
    openedForPrint.forEach(function (item) { item.open = true; });
  });
  window.addEventListener("afterprint", function () {
    openedForPrint.forEach(function (item) { item.open = false; });
    openedForPrint = [];
  });

  // ---- the fleet page: everything below is built from inert JSON with textContent ----
  var indexNode = document.getElementById("fleet-index");
  if (!indexNode) { return; }
  var index = JSON.parse(indexNode.textContent);
  var rules = null; // the rule texts, parsed when a host is first opened
  var RESULTS = {p: "pass", f: "fail", e: "error", n: "notapplicable", c: "notchecked",
                 u: "unknown", i: "informational", s: "notselected", x: "fixed", "-": ""};
  var SYMBOLS = {pass: "\u2714", fail: "\u2718", error: "!", notapplicable: "\u2013",
                 notchecked: "\u25cb"};
  var PAGE = 200;
  var body = document.getElementById("matrix-rows");
  var more = document.getElementById("more-hosts");
  var search = document.getElementById("host-search");
  var onlyFailing = document.getElementById("only-failing");
  var onlyRegressed = document.getElementById("only-regressed");
  var sort = document.getElementById("host-sort");
  var ruleFilter = document.getElementById("rule-filter");
  var measured = body.dataset.measured === "1";
  var grouped = body.dataset.grouped === "1";
  var FACTS = ["o", "k", "t", "ro", "pr"].concat(grouped ? ["g"] : []);
  var column = {};
  index.rules.forEach(function (rule, c) { column[rule.id] = c; });
  var names = index.hosts.map(function (host) { return host.n.toLowerCase(); });
  var view = [], limit = PAGE;

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function shownClass(result) {
    return result === "fail" || result === "error" || result === "pass" ? "c-" + result : "c-other";
  }
  function byScore(sign) {
    return function (a, b) {
      var x = index.hosts[a].sc, y = index.hosts[b].sc;
      if (x === y) { return a - b; }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      return sign * (x - y);
    };
  }
  function byText(key) {  // a fact column: hosts without it last, then worst first
    return function (a, b) {
      var x = index.hosts[a][key] || "", y = index.hosts[b][key] || "";
      if (x === y) { return a - b; }
      if (!x) { return 1; }
      if (!y) { return -1; }
      return x.localeCompare(y, undefined, {numeric: true});
    };
  }
  function select() {
    var query = search.value.trim().toLowerCase();
    var failing = ruleFilter.value in column ? column[ruleFilter.value] : -1;
    view = [];
    for (var i = 0; i < index.hosts.length; i++) {
      var host = index.hosts[i];
      if (query && names[i].indexOf(query) < 0) { continue; }
      if (onlyFailing.checked && !/[fe]/.test(host.r)) { continue; }
      if (onlyRegressed && onlyRegressed.checked && !host.w.length) { continue; }
      if (failing >= 0 && host.r.charAt(failing) !== "f") { continue; }
      view.push(i);
    }
    ruleView(failing);
    if (sort.value === "name") {
      view.sort(function (a, b) { return names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : a - b; });
    } else if (FACTS.indexOf(sort.value) >= 0) {
      view.sort(byText(sort.value));
    } else if (sort.value === "score-asc") {
      view.sort(byScore(1));
    } else if (sort.value === "score-desc") {
      view.sort(byScore(-1));
    }
    limit = PAGE;
    draw();
  }
  // A score is never shown without what it is of: the judged rules (and those not judged).
  function scoreText(host) {
    return host.sc === null ? "-" : host.sc + "% of " + host.j;
  }
  function scoreNote(host) {
    return "of " + host.j + " judged rules pass" + (host.nj ? "; " + host.nj + " not judged" : "");
  }
  function row(i) {
    var host = index.hosts[i];
    var tr = el("tr");
    var name = add(tr, el("td"));
    var link = add(name, el("a", host.n));
    link.href = "#h" + i;
    name.appendChild(document.createTextNode(" "));
    add(name, el("span", host.s, "muted"));
    add(tr, el("td", scoreText(host), "score")).title = scoreNote(host);
    FACTS.forEach(function (key) { add(tr, el("td", host[key] || "-", "fact")); });
    if (measured) { add(tr, el("td", host.m === null ? "-" : host.m.toFixed(1), "mbcore")); }
    for (var c = 0; c < index.rules.length; c++) {
      var code = host.r.charAt(c);
      var result = RESULTS[code] || "unknown";
      var worse = host.w.indexOf(c) >= 0;
      if (code === "-" || code === "") {  // no verdict: a rule of another profile, or not scanned
        add(tr, el("td", "", "cell c-none")).title = index.rules[c].id + ": " + (host.x ?
          "not scanned" : "not in this host's profile" + (host.pr ? " (" + host.pr + ")" : ""));
        continue;
      }
      var cell = add(tr, el("td", SYMBOLS[result] || "?", "cell " + shownClass(result) + (worse ? " regressed" : "")));
      cell.title = index.rules[c].id + ": " + result + (worse ? " (worse than the baseline)" : "");
    }
    return tr;
  }
  // A rule's view: the hosts failing it (the matrix filtered), how many, and their names
  // one a line, as `sascheck report --failing RULE` prints them for --limit @FILE.
  // The rule table: as a window fixes the rules (the page's order), or by rule id.
  var ruleOrder = document.getElementById("rule-order");
  var ruleRows = document.getElementById("rule-counts");
  if (ruleOrder && ruleRows) {
    var fixOrder = Array.prototype.slice.call(ruleRows.rows);
    ruleOrder.addEventListener("change", function () {
      var rows = fixOrder.slice();
      if (ruleOrder.value === "id") {
        rows.sort(function (a, b) { return a.dataset.ruleId < b.dataset.ruleId ? -1 : 1; });
      }
      rows.forEach(function (tr) { ruleRows.appendChild(tr); });
    });
  }
  var ruleBox = document.getElementById("rule-view");
  function ruleView(failing) {
    ruleBox.hidden = failing < 0;
    if (failing < 0) { return; }
    var id = index.rules[failing].id;
    var hosts = index.hosts.filter(function (host) { return host.r.charAt(failing) === "f"; });
    document.getElementById("rule-view-title").textContent =
      hosts.length + (hosts.length === 1 ? " host fails " : " hosts fail ") + id;
    // a name --limit would not read as that one host alone is left out, and said
    var named = hosts.filter(function (host) { return !host.nl; });
    var left = hosts.length - named.length;
    document.getElementById("rule-view-names").textContent =
      named.map(function (host) { return host.n; }).sort().join("\n");
    document.getElementById("rule-view-left").textContent = left ? left +
      (left === 1 ? " failing host is" : " failing hosts are") + " left out of the names: " +
      "each is a name --limit would not read as that one host (sascheck report --failing " +
      "says why)" : "";
  }
  function showRule(id) {
    ruleFilter.value = id;
    select();
    document.getElementById("rule-view").scrollIntoView();
  }
  Array.prototype.forEach.call(document.querySelectorAll("button.rule-hosts"), function (button) {
    button.addEventListener("click", function () { showRule(button.dataset.rule); });
  });
  document.getElementById("rule-view-clear").addEventListener("click", function () { showRule(""); });
  Array.prototype.forEach.call(document.querySelectorAll("th.fact button"), function (button) {
    button.addEventListener("click", function () { sort.value = button.dataset.sort; select(); });
  });
  function draw() {
    var rows = document.createDocumentFragment();
    view.slice(0, limit).forEach(function (i) { rows.appendChild(row(i)); });
    body.textContent = "";
    body.appendChild(rows);
    document.getElementById("hosts-shown").textContent = String(Math.min(limit, view.length));
    document.getElementById("hosts-matching").textContent = String(view.length);
    more.hidden = view.length <= limit;
    more.textContent = "show " + Math.min(PAGE, view.length - limit) + " more (" + (view.length - limit) + " not shown)";
  }

  // A node of a host's section (reports/section.py, the host page's too) as DOM: elements
  // and attributes from a fixed list, every text by textContent; never markup.
  var TAGS = /^(section|article|details|summary|div|dl|dt|dd|table|tr|th|td|figure|figcaption|h2|h3|p|b|br|span|ul|li|pre|button)$/;
  var ATTRIBUTES = /^(class|id|role|type|data-(target|result|severity))$/;
  function build(item, context) {
    if (typeof item === "string") { return document.createTextNode(item); }
    if (!Array.isArray(item) || typeof item[0] !== "string") { return document.createTextNode(""); }
    var tag = item[0], attributes = item[1] || {};
    if (tag === "#image") { return picture(context.images[attributes.n], attributes.alt); }  // an address
    if (tag === "#fill") { return document.createTextNode(context.fill[attributes.name] || ""); }
    if (tag === "#details") { return build(context.details, context); }
    if (!TAGS.test(tag)) { return document.createTextNode(""); }
    var node = document.createElement(tag);
    Object.keys(attributes).forEach(function (name) {
      if (!ATTRIBUTES.test(name) || attributes[name] === null) { return; }
      var value = String(attributes[name]);
      // pooled articles say "host-RULE"; on this page a host's ids are "h<row>-RULE"
      if ((name === "id" || name === "data-target") && value.indexOf("host-") === 0) {
        value = context.anchor + value.slice(4);
      }
      node.setAttribute(name, value);
    });
    for (var c = 2; c < item.length; c++) { node.appendChild(build(item[c], context)); }
    return node;
  }
  function picture(address, caption) {  // a diagram, shown by <img>: no script in it runs
    if (typeof address !== "string" || address.indexOf("data:image/svg+xml;base64,") !== 0) {
      return document.createTextNode("");
    }
    var image = el("img");
    image.src = address;
    image.alt = String(caption || "");
    return image;
  }
  // The hosts' sections, their pooled nodes and diagrams: JSON lists in chunks, gzip and
  // base64 (reports/fleet.py), each decoded the first time a host needs one of its items.
  var chunks = {hosts: [], results: [], images: []};
  Array.prototype.forEach.call(document.querySelectorAll("script.fleet-chunk"), function (node) {
    var list = chunks[node.dataset.part];
    if (list) {
      list.push({first: Number(node.dataset.first), count: Number(node.dataset.count), node: node,
                 items: null});
    }
  });
  function decoded(chunk) {  // a promise of the chunk's items
    if (!chunk.items) {
      chunk.node.dataset.read = "1";  // what a test reads: which chunks a host needed
      var text = atob(chunk.node.textContent.trim());
      var bytes = new Uint8Array(text.length);
      for (var b = 0; b < text.length; b++) { bytes[b] = text.charCodeAt(b); }
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      chunk.items = new Response(stream).text().then(JSON.parse);
    }
    return chunk.items;
  }
  function item(part, number) {  // a promise of one item; undefined where there is none
    var list = chunks[part], low = 0, high = list.length - 1;
    while (low <= high) {  // chunks are in order of their first item
      var middle = (low + high) >> 1, chunk = list[middle];
      if (number < chunk.first) { high = middle - 1; }
      else if (number >= chunk.first + chunk.count) { low = middle + 1; }
      else { return decoded(chunk).then(function (items) { return items[number - chunk.first]; }); }
    }
    return Promise.resolve(undefined);
  }
  function hostSection(i) {  // a promise of the host's section
    if (rules === null) { rules = JSON.parse(document.getElementById("fleet-rules").textContent); }
    var host = index.hosts[i];
    return item("hosts", host.d).then(function (data) {
      var results = {}, addresses = [], waiting = [];
      function need(number) {
        waiting.push(item("results", number).then(function (node) { results[number] = node; }));
      }
      data.head.forEach(function (part) { if (typeof part === "number") { need(part); } });
      data.items.forEach(function (part) { need(part[1]); if (part.length > 2) { need(part[2]); } });
      data.images.forEach(function (number, k) {
        waiting.push(item("images", number).then(function (address) { addresses[k] = address; }));
      });
      return Promise.all(waiting).then(function () { return built(i, data, results, addresses); });
    });
  }
  function built(i, data, results, addresses) {
    var section = el("section", null, "host");
    section.id = "h" + i;
    // the copy button's command: the host's parts around each rule's id
    var runnable = Array.isArray(data.fix) && data.fix.every(function (part) { return typeof part === "string"; });
    var context = {images: addresses, fill: {}, details: null, anchor: section.id};
    // a number is a node pooled in the results (hosts alike share it)
    function pooledNode(part) { return typeof part === "number" ? results[part] : part; }
    data.head.forEach(function (part) { section.appendChild(build(pooledNode(part), context)); });
    data.items.forEach(function (part) {
      var steps = part.length > 2 ? pooledNode(part[2]) : [];
      (Array.isArray(steps) ? steps : []).forEach(function (step) { section.appendChild(build(step, context)); });
      var texts = rules[part[0]] || {trees: []};
      context.details = runnable ? texts.trees[0] : texts.trees[1];
      context.fill = {run: runnable ? data.fix.join(part[0]) : "", bash: texts.bash,
                      ansible: texts.ansible};
      section.appendChild(build(results[part[1]], context));
    });
    return section;
  }
  var asked = 0;  // the latest host asked for: an earlier one decoded later is not shown
  function openFromAddress() {
    var match = /^#h(\d+)/.exec(location.hash);
    var i = match ? Number(match[1]) : -1;
    if (i < 0 || i >= index.hosts.length) { return; }
    var place = document.getElementById("host-view");
    function land() {  // a link to one rule or step of the host ("#h3-thp_disabled") lands there
      (document.getElementById(location.hash.slice(1)) || document.getElementById("h" + i)).scrollIntoView();
    }
    if (document.getElementById("h" + i)) { land(); return; }
    var ticket = ++asked;
    hostSection(i).then(function (section) {
      if (ticket !== asked) { return; }
      place.textContent = "";
      place.appendChild(section);
      applyAll();
      land();
    }).catch(function (error) {
      place.textContent = "This host's section could not be read: " + error;
    });
  }

  search.addEventListener("input", select);
  onlyFailing.addEventListener("change", select);
  if (onlyRegressed) { onlyRegressed.addEventListener("change", select); }
  sort.addEventListener("change", select);
  ruleFilter.addEventListener("change", select);
  more.addEventListener("click", function () { limit += PAGE; draw(); });
  window.addEventListener("hashchange", openFromAddress);
  select();
  openFromAddress();
  // When the first frame with the matrix is painted (scripts/bench-fleet reads this).
  requestAnimationFrame(function () {
    setTimeout(function () { document.documentElement.dataset.ready = String(Math.round(performance.now())); }, 0);
  });
})();
