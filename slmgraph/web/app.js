// slmgraph serve: one page, hash routes (#/ask, #/entities, #/entity/ID, #/communities/LEVEL, #/documents,
// #/document/ID, #/unit/N). Talks only to this server's /api; draws graphs with the vendored cytoscape.js.
"use strict";

var KIND_LETTER = {sources: "S", reports: "R", entities: "E", relationships: "L"};
var KIND_NAME = {sources: "text unit", reports: "report", entities: "entity", relationships: "relationship"};
var state = {info: null, answer: null, cy: null, source: null};

function $(id) { return document.getElementById(id); }

function el(tag, attrs, children) {
  var e = document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (k) {
    if (k === "text") e.textContent = attrs[k];
    else if (k === "class") e.className = attrs[k];
    else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), attrs[k]);
    else e.setAttribute(k, attrs[k]);
  });
  (children || []).forEach(function (c) { if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
  return e;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

function api(path) {
  return fetch(path, {headers: {"Accept": "application/json"}}).then(function (r) {
    return r.json().then(function (body) {
      if (!r.ok) throw new Error(body.error || ("HTTP " + r.status));
      return body;
    });
  });
}

function fail(node, err) { clear(node).appendChild(el("p", {"class": "error", text: String(err.message || err)})); }

// Text with the [start, end] spans (Python code-point offsets) marked.
function marked(text, spans) {
  var chars = Array.from(text), out = el("div", {"class": "passage-text"}), pos = 0;
  (spans || []).slice().sort(function (a, b) { return a[0] - b[0]; }).forEach(function (s) {
    if (s[0] < pos) return;
    out.appendChild(document.createTextNode(chars.slice(pos, s[0]).join("")));
    out.appendChild(el("mark", {text: chars.slice(s[0], s[1]).join("")}));
    pos = s[1];
  });
  out.appendChild(document.createTextNode(chars.slice(pos).join("")));
  return out;
}

// Scrolls each passage inside node so that its first marked sentence is in view (the page itself stays put).
function showMarks(node) {
  Array.prototype.forEach.call(node.querySelectorAll(".passage-text"), function (box) {
    var m = box.querySelector("mark");
    if (m) box.scrollTop = Math.max(0, m.offsetTop - 60);
  });
}

function unitBlock(p, title) {
  var doc = p.document;
  return el("div", {"class": "unit-block"}, [
    title ? el("h3", {text: title}) : null,
    el("p", {"class": "meta"}, [
      el("a", {href: "#/document/" + encodeURIComponent(doc.doc_id), text: doc.title}),
      " \u00b7 text unit " + p.unit + " \u00b7 part " + p.position + " of " + p.of + " \u00b7 " + doc.path]),
    marked(p.text, p.highlight)]);
}

// ---- Ask -------------------------------------------------------------------------------------------
function ask(ev) {
  ev.preventDefault();
  var q = $("question").value.trim();
  if (!q) { $("ask-status").textContent = "Type a question first."; return; }
  if (state.source) state.source.close();
  clear($("stream")); clear($("points")); clear($("why-body")); clear($("passage"));
  $("points").removeAttribute("data-done");
  $("ask-status").textContent = "Asking\u2026";
  var t0 = performance.now();
  var url = "/api/ask?" + new URLSearchParams({q: q, method: $("method").value, level: $("level").value});
  var es = new EventSource(url);
  state.source = es;
  es.addEventListener("route", function (e) {
    var r = JSON.parse(e.data);
    $("ask-status").textContent = "auto: " + r.method + " search, because " + r.because;
  });
  es.addEventListener("text", function (e) { $("stream").textContent += JSON.parse(e.data); });
  es.addEventListener("answer", function (e) {
    es.close();
    showAnswer(JSON.parse(e.data), (performance.now() - t0) / 1000);
  });
  es.addEventListener("failure", function (e) {
    es.close();
    $("ask-status").textContent = "";
    fail($("points"), JSON.parse(e.data).error);
    $("points").setAttribute("data-done", "error");
  });
  es.onerror = function () {
    if (es.readyState === EventSource.CLOSED) return;
    es.close();
    $("ask-status").textContent = "The connection to the server was lost.";
  };
}

function showAnswer(a, wall) {
  state.answer = a;
  var route = a.details && a.details.route;
  $("ask-status").textContent = (route ? "auto: " + route.chose + " search, because " + route.because + ". " : "") +
    a.method + " search" + (a.level != null ? ", level " + a.level : "") + ": " + a.seconds.toFixed(1) + " s";
  clear($("stream"));
  var list = clear($("points"));
  if (!a.points.length) list.appendChild(el("li", {text: a.text}));
  a.points.forEach(function (p, i) {
    var li = el("li", {"class": "point", "data-point": String(i)});
    if (p.head) li.appendChild(el("strong", {text: p.head + ": "}));
    li.appendChild(document.createTextNode(p.text));
    Object.keys(p.citations).forEach(function (kind) {
      p.citations[kind].forEach(function (id) {
        li.appendChild(el("button", {"class": "cite", type: "button", "data-kind": kind, "data-id": String(id),
          title: citeTitle(a, kind, id), text: (KIND_LETTER[kind] || kind) + id,
          onclick: function (ev) { openCitation(ev.target, kind, id, p.text); }}));
      });
    });
    list.appendChild(li);
  });
  list.setAttribute("data-done", "1");
  showWhy(a, wall);
}

function citeTitle(a, kind, id) {
  if (kind === "sources" && a.units[id]) {
    var u = a.units[id];
    return u.title + ", part " + u.position + " of " + u.of;
  }
  if (kind === "reports" && a.report_titles[id]) return a.report_titles[id];
  return KIND_NAME[kind] + " " + id;
}

function openCitation(button, kind, id, support) {
  Array.prototype.forEach.call(document.querySelectorAll(".cite.open"), function (b) { b.classList.remove("open"); });
  button.classList.add("open");
  var box = clear($("passage"));
  box.appendChild(el("p", {"class": "meta", text: "Loading " + KIND_NAME[kind] + " " + id + "\u2026"}));
  api("/api/citation?" + new URLSearchParams({kind: kind, id: id, support: support})).then(function (c) {
    clear(box);
    box.appendChild(el("h3", {text: c.label}));
    if (c.report) {
      box.appendChild(el("p", {}, [c.report.summary || ""]));
      box.appendChild(el("p", {}, [el("a", {href: "#/communities/" + c.report.level + "/" + c.id,
                                              text: "the report and its findings"})]));
    }
    if (c.entity) box.appendChild(el("p", {}, [el("a", {href: "#/entity/" + c.entity.id, text: "open " + c.entity.name})]));
    if (c.passage) {
      box.appendChild(el("p", {"class": "meta", text: c.kind === "sources" ? "The passage, with the supporting sentence marked:" :
        "The passage that supports the point:"}));
      box.appendChild(unitBlock(c.passage));
    } else {
      box.appendChild(el("p", {"class": "meta", text: "No passage of the index holds this point's words."}));
    }
    showMarks(box);
    box.setAttribute("data-loaded", kind + ":" + id);
  }).catch(function (e) { fail(box, e); });
}

function showWhy(a, wall) {
  var body = clear($("why-body"));
  body.appendChild(el("p", {}, [
    a.model_calls + " model calls \u00b7 " + a.prompt_tokens + " prompt + " + a.completion_tokens +
    " completion tokens \u00b7 " + a.seconds.toFixed(2) + " s in the engine, " + wall.toFixed(2) + " s here"]));
  var scores = {}, selected = {};
  ((a.details && a.details.scores) || []).forEach(function (s) { if (s && s.id != null) scores[s.id] = s.score; });
  ((a.details && a.details.selected) || []).forEach(function (id) { selected[id] = true; });
  if (a.context && a.context.length) {
    var rows = a.context.map(function (c) {
      var score = c.score != null ? c.score : scores[c.id];
      return el("tr", {}, [el("td", {text: c.kind || ""}), el("td", {text: String(c.id != null ? c.id : "")}),
        el("td", {text: c.title || c.name || ""}), el("td", {text: c.tokens != null ? String(c.tokens) : ""}),
        el("td", {text: score != null ? String(Math.round(score * 10) / 10) : ""}),
        el("td", {text: c.selected != null ? String(c.selected) : (selected[c.id] ? "selected" : "")})]);
    });
    body.appendChild(el("h4", {text: "Read (" + a.context.length + " items)"}));
    body.appendChild(el("table", {"class": "context"}, [el("tr", {}, ["kind", "id", "title", "tokens", "helpfulness", "used"].map(
      function (h) { return el("th", {text: h}); }))].concat(rows)));
  }
  body.appendChild(el("h4", {text: "Details"}));
  body.appendChild(el("pre", {text: JSON.stringify(a.details, null, 1)}));
}

// ---- Browse ----------------------------------------------------------------------------------------
function searchEntities(q) {
  var list = clear($("entity-list"));
  api("/api/entities?" + new URLSearchParams({q: q || "", limit: 100})).then(function (rows) {
    if (!rows.length) list.appendChild(el("li", {text: "No entity's name contains \u201c" + q + "\u201d."}));
    rows.forEach(function (e) {
      list.appendChild(el("li", {}, [el("a", {href: "#/entity/" + e.id, "class": "entity-link", text: e.name}),
        el("span", {"class": "meta", text: "  " + (e.type || "") + " \u00b7 " + e.degree + " relationships \u00b7 " +
          e.mentions + " mentions"})]));
    });
  }).catch(function (e) { fail(list, e); });
}

function showEntity(key) {
  clear($("entity-mentions")); clear($("entity-communities"));
  $("entity-name").textContent = "\u2026";
  $("graph").removeAttribute("data-nodes");
  api("/api/entities/" + encodeURIComponent(key)).then(function (e) {
    $("entity-name").textContent = e.name;
    $("entity-meta").textContent = (e.type || "no type") + " \u00b7 " + e.degree + " relationships \u00b7 " + e.mentions + " mentions";
    $("entity-desc").textContent = e.description || "";
    e.communities.forEach(function (c) {
      $("entity-communities").appendChild(el("li", {}, [el("a", {href: "#/communities/" + c.level + "/" + c.community_id,
        text: "level " + c.level + ": " + (c.title || "community " + c.community_id)})]));
    });
    var m = $("entity-mentions");
    m.appendChild(el("p", {"class": "meta", text: e.passages.length + " of " + e.passages_total + " passages"}));
    e.passages.forEach(function (p) { m.appendChild(el("div", {"class": "card"}, [unitBlock(p)])); });
    showMarks(m);
    drawGraph(e.neighbourhood);
  }).catch(function (err) { fail($("entity-mentions"), err); $("entity-name").textContent = ""; });
}

function drawGraph(g) {
  var box = $("graph");
  if (state.cy) { state.cy.destroy(); state.cy = null; }
  if (typeof cytoscape === "undefined") { fail(box, "the graph library did not load"); return; }
  var elements = g.nodes.map(function (n) {
    return {data: {id: "n" + n.id, eid: n.id, label: n.name, center: n.center ? 1 : 0, size: 14 + 3 * Math.sqrt(n.degree || 1)}};
  }).concat(g.edges.map(function (e) {
    return {data: {id: "e" + e.id, source: "n" + e.source, target: "n" + e.target, w: Math.min(6, 1 + Math.log(1 + e.weight)),
                   label: e.description || ""}};
  }));
  state.cy = cytoscape({
    container: box, elements: elements, wheelSensitivity: 0.3,
    style: [
      {selector: "node", style: {"label": "data(label)", "width": "data(size)", "height": "data(size)",
        "background-color": "#5b8def", "font-size": 11, "text-valign": "bottom", "text-margin-y": 3, "color": "#1d232b",
        "text-background-color": "#ffffff", "text-background-opacity": 0.75, "text-background-padding": 1}},
      {selector: "node[center = 1]", style: {"background-color": "#e8590c", "font-weight": "bold", "font-size": 13}},
      {selector: "edge", style: {"width": "data(w)", "line-color": "#b8c4d6", "curve-style": "haystack"}}
    ],
    layout: {name: "cose", animate: false, randomize: false, padding: 20, nodeOverlap: 40, componentSpacing: 80,
             nodeRepulsion: function () { return 600000; }, idealEdgeLength: function () { return 110; }}
  });
  state.cy.on("tap", "node", function (ev) { location.hash = "#/entity/" + ev.target.data("eid"); });
  state.cy.ready(function () {
    box.setAttribute("data-nodes", String(state.cy.nodes().length));
    box.setAttribute("data-edges", String(state.cy.edges().length));
  });
}

function showCommunities(level, focus) {
  var sel = $("community-level"), list = clear($("community-list"));
  sel.value = String(level);
  api("/api/reports?level=" + level).then(function (rows) {
    $("community-count").textContent = rows.length + " communities";
    rows.forEach(function (r) {
      var card = el("div", {"class": "card", id: "community-" + r.community_id}, [
        el("h3", {text: (r.title || "community " + r.community_id)}),
        r.topic ? el("p", {"class": "meta", text: "topic: " + r.topic}) : null,
        el("p", {"class": "meta", text: "community " + r.community_id + " \u00b7 " + r.coverage.entities + " entities \u00b7 " +
          r.coverage.text_units + " text units \u00b7 " + r.coverage.documents + " documents" +
          (r.rating != null ? " \u00b7 rating " + r.rating : "")}),
        el("p", {text: r.summary || "(no report)"}),
        el("ul", {}, r.findings.map(function (f) {
          return el("li", {}, [el("strong", {text: f.summary || ""}), f.explanation ? " " + f.explanation : ""]);
        }))]);
      list.appendChild(card);
    });
    if (focus) { var c = $("community-" + focus); if (c) { c.scrollIntoView(); c.style.borderColor = "#e8590c"; } }
  }).catch(function (e) { fail(list, e); });
}

function showDocuments() {
  var list = clear($("document-list"));
  api("/api/documents").then(function (rows) {
    rows.forEach(function (d) {
      list.appendChild(el("li", {}, [el("a", {href: "#/document/" + encodeURIComponent(d.doc_id), text: d.title}),
        el("span", {"class": "meta", text: "  " + d.path + " \u00b7 " + d.units + " text units \u00b7 " + d.n_tokens + " tokens"})]));
    });
  }).catch(function (e) { fail(list, e); });
}

function showDocument(docId, unit) {
  var box = clear($("document-units"));
  api("/api/documents/" + encodeURIComponent(docId)).then(function (d) {
    $("document-title").textContent = d.title;
    $("document-meta").textContent = d.path + " \u00b7 " + d.units.length + " text units";
    d.units.forEach(function (u) {
      box.appendChild(el("div", {"class": "unit", id: "unit-" + u.unit}, [
        el("div", {"class": "meta", text: "text unit " + u.unit + " \u00b7 part " + u.position + " \u00b7 " + u.n_tokens + " tokens"}),
        u.text]));
    });
    if (unit && $("unit-" + unit)) $("unit-" + unit).scrollIntoView();
  }).catch(function (e) { fail(box, e); });
}

// ---- Routing ---------------------------------------------------------------------------------------
function show(view) {
  Array.prototype.forEach.call(document.querySelectorAll(".view"), function (v) { v.classList.toggle("active", v.id === "view-" + view); });
  Array.prototype.forEach.call(document.querySelectorAll("header nav a"), function (a) {
    a.classList.toggle("active", a.id === "nav-" + view || (a.id === "nav-entities" && view === "entity") ||
      (a.id === "nav-documents" && view === "document"));
  });
}

function route() {
  var parts = (location.hash || "#/ask").slice(2).split("/").map(decodeURIComponent);
  var name = parts[0] || "ask";
  if (name === "entities") { show("entities"); searchEntities($("entity-q").value); }
  else if (name === "entity") { show("entity"); showEntity(parts[1]); }
  else if (name === "communities") { show("communities"); showCommunities(parseInt(parts[1] || "0", 10), parts[2]); }
  else if (name === "documents") { show("documents"); showDocuments(); }
  else if (name === "document") { show("document"); showDocument(parts[1], parts[2]); }
  else if (name === "unit") {
    api("/api/units/" + parts[1]).then(function (u) { location.hash = "#/document/" + encodeURIComponent(u.document.doc_id) + "/" + u.unit; });
  } else { show("ask"); $("question").focus(); }
}

function init() {
  api("/api/info").then(function (info) {
    state.info = info;
    $("index-info").textContent = info.db + " \u00b7 " + info.counts.documents + " documents \u00b7 " +
      info.counts.entities + " entities \u00b7 " + (info.model || "");
    info.levels.forEach(function (l) {
      $("level").appendChild(el("option", {value: String(l), text: String(l)}));
      $("community-level").appendChild(el("option", {value: String(l), text: String(l)}));
    });
    document.body.setAttribute("data-ready", "1");
  }).catch(function (e) { $("index-info").textContent = String(e.message || e); document.body.setAttribute("data-ready", "error"); });
  $("ask-form").addEventListener("submit", ask);
  $("entity-form").addEventListener("submit", function (ev) { ev.preventDefault(); searchEntities($("entity-q").value); });
  $("community-level").addEventListener("change", function () { location.hash = "#/communities/" + this.value; });
  window.addEventListener("hashchange", route);
  route();
}

document.addEventListener("DOMContentLoaded", init);
