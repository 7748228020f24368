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
    if (counter) { counter.textContent = String(shown); }
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
  var details = null; // parsed when a host is first opened
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
  var FACTS = ["o", "k", "t", "ro"].concat(grouped ? ["g"] : []);
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
      var result = RESULTS[host.r.charAt(c)] || "unknown";
      var worse = host.w.indexOf(c) >= 0;
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

  function badge(text) { return el("span", text, "badge b-" + text); }
  function facts(section, host, data) {
    var list = add(section, el("dl", null, "facts"));
    [["System", data.os], ["Kernel", data.kernel],
     ["Role", data.role ? data.role + (data.reasons.length ? " (" + data.reasons.join("; ") + ")" : "") : ""],
     ["CPUs", data.cpus], ["Memory", data.mem ? (data.mem / 1048576).toFixed(1) + " GiB" : ""],
     ["Root scanned", data.root && data.root !== "/" ? data.root : ""], ["Scanned", data.at],
     ["Results from", data.path]].forEach(function (pair) {
      if (pair[1] === "" || pair[1] === null || pair[1] === undefined) { return; }
      add(list, el("dt", pair[0]));
      add(list, el("dd", pair[1]));
    });
  }
  function table(parent, headings, rows, cls) {
    var grid = add(parent, el("table", null, cls));
    var head = add(grid, el("tr"));
    headings.forEach(function (text) { add(head, el("th", text)); });
    rows.forEach(function (cells) {
      var tr = add(grid, el("tr"));
      cells.forEach(function (text) { add(tr, el("td", text)); });
    });
    return grid;
  }
  function card(parent, label, value, cls, note) {
    var box = add(parent, el("div", null, "card"));
    add(box, el("div", label, "muted"));
    add(box, el("div", value, "big " + (cls || "")));
    if (note) { add(box, el("div", note, "muted")); }
  }
  function image(parent, number, caption) {
    var address = details.images[number];
    if (typeof address !== "string" || address.indexOf("data:image/svg+xml;base64,") !== 0) { return; }
    var figure = add(parent, el("figure"));
    var picture = add(figure, el("img"));
    picture.src = address;
    picture.alt = caption;
    add(figure, el("figcaption", caption, "muted"));
  }
  function ruleArticle(anchor, id, result, fix) {
    var text = details.rules[id] || {rationale: "", refs: [], bash: "", ansible: ""};
    var article = el("article", null, "rule r-" + result[0]);
    article.dataset.result = result[0];
    article.dataset.severity = result[1];
    article.id = anchor + "-" + id;
    var title = add(article, el("h3"));
    add(title, badge(result[0]));
    title.appendChild(document.createTextNode(" "));
    add(title, badge(result[1]));
    title.appendChild(document.createTextNode(" " + result[2] + " "));
    add(title, el("span", id, "muted mono"));
    if (result[3]) {
      var values = add(article, el("p"));
      add(values, el("b", "Expected:"));
      values.appendChild(document.createTextNode(" " + result[3]));
      add(values, el("br"));
      add(values, el("b", "Actual:"));
      values.appendChild(document.createTextNode(" " + result[4]));
    }
    if (result.length > 7) {  // failing, from sascheck's results: as the host page says it
      var measured = add(article, el("p", null, "impact"));
      add(measured, el("b", "Measured:"));
      measured.appendChild(document.createTextNode(" "));
      add(measured, el("span", result[9] || "nothing: the papers give no figure for this setting",
                       result[9] ? "" : "muted"));
      if (result[7]) {
        var place = add(article, el("p", null, "muted"));
        add(place, el("b", "Fix step:"));
        place.appendChild(document.createTextNode(" " + result[7] + " (" + result[8] + ")"));
      }
    }
    if (result[5]) { add(article, el("p", result[5], "muted")); }
    if (result[6].length) {
      table(article, ["What", "Value", "Result", "Source"], result[6].map(function (e) {
        return [e[0], e[1] + (e[2] ? " (" + e[2] + ")" : ""), e[3], e[4]];
      }));
    }
    var more = add(article, el("details"));
    add(more, el("summary", "Why, sources and remediation"));
    add(more, el("p", text.rationale));
    var refs = add(more, el("ul"));
    text.refs.forEach(function (ref) { add(refs, el("li", ref)); });
    function copyable(label, target, text) {
      var line = add(more, el("p"));
      add(line, el("b", label));
      line.appendChild(document.createTextNode(" "));
      var copy = add(line, el("button", "copy", "copy"));
      copy.type = "button";
      copy.dataset.target = anchor + "-" + id + "-" + target;
      add(more, el("pre", text)).id = copy.dataset.target;
    }
    if (text.manual) {  // work for a person: text, and nothing to copy
      var todo = add(more, el("p"));
      add(todo, el("b", "What to do"));
      todo.appendChild(document.createTextNode(" (by hand; no command does it): " + text.manual));
      return article;
    }
    // As the host page: the copied bash is the one command that writes the rule's whole fix
    // (library included) and dry-runs it; the rule's block is shown, not copied.
    var runnable = text.bash && Array.isArray(fix) && fix.every(function (part) { return typeof part === "string"; });
    if (runnable) {
      copyable("bash: this writes the rule's whole fix and dry-runs it", "run", fix.join(id));
      add(more, el("p", "what it does for this rule:", "muted"));
      add(more, el("pre", text.bash)).id = anchor + "-" + id + "-bash";
    } else if (text.bash) {
      copyable("bash", "bash", text.bash);
    }
    if (text.ansible) { copyable("Ansible", "ansible", text.ansible); }
    return article;
  }
  function hostSection(i) {
    if (details === null) { details = JSON.parse(document.getElementById("fleet-details").textContent); }
    var host = index.hosts[i], data = details.hosts[host.d], anchor = "h" + i;
    var section = el("section", null, "host");
    section.id = anchor;
    var heading = add(section, el("h2", host.n + " "));
    add(heading, el("span", "(" + host.s + (data.profile ? ", profile " + data.profile : "") + ")", "muted"));
    facts(section, host, data);
    if (data.problems.length) {  // what the scan could not read, place or collect
      var banner = add(section, el("div", null, "banner"));
      banner.setAttribute("role", "note");
      data.problems.forEach(function (pair) {
        var line = add(banner, el("p"));
        add(line, el("b", pair[0] + ":"));
        line.appendChild(document.createTextNode(" " + pair[1]));
      });
    }
    if (data.dirs.length) { table(section, ["SAS role", "Directory", "From"], data.dirs, "sasdirs"); }
    var results = data.rules.map(function (pair) { return details.results[pair[1]]; });
    var summary = add(section, el("div", null, "summary"));
    card(summary, "Score", host.sc === null ? "-" : host.sc + "%",
         host.sc === null ? "" : host.sc >= 90 ? "score-good" : host.sc >= 60 ? "score-mid" : "score-bad",
         scoreNote(host));
    if (host.x) {  // not scanned: why, not failures by severity
      card(summary, "Not scanned", "unreachable", "score-bad", host.x);
    } else {
      ["high", "medium", "low"].forEach(function (severity, n) {
        card(summary, "Failed, " + severity, host.f[n], host.f[n] ? "score-bad" : "score-good");
      });
    }
    // One meaning everywhere: not judged is notchecked and unknown (what the score leaves
    // out); not applicable is its own count.
    card(summary, "Not judged", results.filter(function (r) {
      return r[0] === "notchecked" || r[0] === "unknown"; }).length, "", "notchecked / unknown");
    card(summary, "Not applicable", results.filter(function (r) {
      return r[0] === "notapplicable"; }).length, "", "role or hardware");
    if (data.storage.length) { add(section, el("h3", "Storage under the SAS file systems")); }
    data.storage.forEach(function (pair) { image(section, pair[1], pair[0]); });
    if (data.measured.length) {
      add(section, el("h3", "Measured throughput (sascheck iotest)"));
      if (data.chart !== null) { image(section, data.chart, "MB/s per core, divided by " + data.cores); }
      table(section, ["File system", "On", "Roles", "Write MB/s", "Read MB/s", "IOPS (w/r)",
                      "p99 latency \u00b5s (w/r)", "fio job"], data.measured, "measurements");
    }
    // The window's steps as headings, each with the command fixing it alone (as the host
    // page and the terminal give them; a project is planned work, with none).
    var stepRules = {};
    data.rules.forEach(function (pair, n) {
      var step = results[n][7];
      if (step && step !== "project") { (stepRules[step] = stepRules[step] || []).push(pair[0]); }
    });
    var runnable = Array.isArray(data.fix) && data.fix.every(function (part) { return typeof part === "string"; });
    var step = "", number = 0;
    data.rules.forEach(function (pair, n) {
      var now = results[n][7];
      if (results[n][0] === "fail" && now && now !== step && index.steps[now]) {
        step = now;
        number += 1;
        var heading = add(section, el("h3", "Step " + number + ": " + step + " ", "fix-step"));
        heading.id = anchor + "-step-" + step;
        add(heading, el("span", "(" + index.steps[step] + ")", "muted"));
        if (runnable && stepRules[step]) {
          add(section, el("p", "Fix this step alone:", "muted"));
          add(section, el("pre", data.fix[0] + stepRules[step].join(" --rule ") + data.fix.slice(1).join(step),
                          "step-command"));
        }
      }
      section.appendChild(ruleArticle(anchor, pair[0], results[n], data.fix));
    });
    return section;
  }
  function openFromAddress() {
    var match = /^#h(\d+)/.exec(location.hash);
    var i = match ? Number(match[1]) : -1;
    if (i < 0 || i >= index.hosts.length) { return; }
    var place = document.getElementById("host-view");
    if (!document.getElementById("h" + i)) {
      place.textContent = "";
      place.appendChild(hostSection(i));
      applyAll();
    }
    document.getElementById("h" + i).scrollIntoView();
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
