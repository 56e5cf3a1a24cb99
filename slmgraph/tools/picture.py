"""``slmgraph picture``: the community hierarchy as one self-contained HTML file and a PNG.

* HTML: a plotly sunburst (plotly.py's ``Figure.to_html`` with ``include_plotlyjs=True``, so
  plotly.js is inlined and the page makes no network request). Rings are levels (root level
  inside), a sector's angle is its community's size in entities, its label the community
  report's title. Clicking a community lists its report summary, entities and relationships
  in the side panel (data embedded in the page as JSON). Opens offline in any browser.
* PNG: the same hierarchy as an icicle chart drawn by matplotlib (Agg backend), for reports and
  READMEs: one row per level, one box per community, width proportional to its size.

Both libraries are in the optional ``picture`` extra (``pip install -e '.[picture]'``).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from slmgraph.errors import UserError
from slmgraph.outputs import output_file
from slmgraph.store.db import Store

#: Relationships listed per community in the page (the heaviest first), to bound the file size.
MAX_RELATIONSHIPS = 200
#: Characters of a report title shown on a sector.
LABEL_CHARS = 40


def _need(module: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(f"'slmgraph picture' needs {module.split('.')[0]}: pip install -e '.[picture]' "
                        "(adds plotly and matplotlib)") from None


def hierarchy(store: Store) -> list[dict]:
    """Communities with what the picture shows, root level first.

    Returns:
        ``[{id, level, parent (None at level 0), size (entities), title, summary, rating,
        entities: [[name, type], ...], relationships: [[source, target, weight, description], ...]}]``.

    Raises:
        UserError: the index is incomplete or has no communities.
    """
    if store.get_meta("complete") != "1":
        raise UserError(f"index {store.path} is not complete: re-run 'slmgraph index' on its input to finish it")
    con = store.con
    rows = con.execute("""
        SELECT c.community_id, c.level, c.parent_id, c.size, r.title, r.summary, r.rating
        FROM communities c LEFT JOIN community_reports r USING (community_id)
        ORDER BY c.level, c.community_id""").fetchall()
    if not rows:
        raise UserError(f"index {store.path} has no communities (an empty graph): nothing to draw")
    members: dict[int, list] = {}
    for cid, name, typ in con.execute("""
            SELECT m.community_id, e.name, e.type FROM community_members m JOIN entities e USING (entity_id)
            ORDER BY m.community_id, e.degree DESC, e.name""").fetchall():
        members.setdefault(cid, []).append([name, typ])
    rels: dict[int, list] = {}
    for cid, s, t, w, d in con.execute(f"""
            SELECT cid, s, t, w, d FROM (
                SELECT m1.community_id AS cid, es.name AS s, et.name AS t, r.weight AS w, r.description AS d,
                       row_number() OVER (PARTITION BY m1.community_id ORDER BY r.weight DESC, r.rel_id) AS k
                FROM relationships r
                JOIN community_members m1 ON m1.entity_id = r.source_id
                JOIN community_members m2 ON m2.entity_id = r.target_id AND m2.community_id = m1.community_id
                JOIN entities es ON es.entity_id = r.source_id JOIN entities et ON et.entity_id = r.target_id)
            WHERE k <= {MAX_RELATIONSHIPS} ORDER BY cid, k""").fetchall():
        rels.setdefault(cid, []).append([s, t, w, d])
    return [{"id": cid, "level": level, "parent": parent, "size": int(size or 0),
             "title": title or f"Community {cid}", "summary": summary or "", "rating": rating,
             "entities": members.get(cid, []), "relationships": rels.get(cid, [])}
            for cid, level, parent, size, title, summary, rating in rows]


def _label(title: str) -> str:
    return title if len(title) <= LABEL_CHARS else title[:LABEL_CHARS - 1] + "…"


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:">
<title>slmgraph: $TITLE</title>
<style>
body { font-family: sans-serif; margin: 0; display: flex; height: 100vh; }
#chart { flex: 3; min-width: 0; height: 100vh; overflow: hidden; order: 1; }
#panel { flex: 2; min-width: 0; overflow: auto; padding: 1em; border-left: 1px solid #ccc; font-size: 14px;
         background: white; z-index: 1; order: 2; }
table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #eee; padding: 2px 4px;
text-align: left; vertical-align: top; }
</style></head>
<body><div id="panel"><h2>$TITLE</h2><p>$INTRO</p><p>Click a community to list its entities and relationships.</p></div>
<div id="chart">$CHART</div>
<script id="slmgraph-data" type="application/json">$DATA</script>
<script>
(function () {
  var data = JSON.parse(document.getElementById("slmgraph-data").textContent);
  var byId = {};
  data.forEach(function (c) { byId["c" + c.id] = c; });
  function esc(s) { var d = document.createElement("div"); d.textContent = s == null ? "" : String(s); return d.innerHTML; }
  function show(c) {
    var h = "<h2>" + esc(c.title) + "</h2><p>community " + c.id + ", level " + c.level + ", " + c.size +
            " entities" + (c.rating == null ? "" : ", rating " + c.rating) + "</p><p>" + esc(c.summary) + "</p>";
    h += "<h3>Entities</h3><table><tr><th>name</th><th>type</th></tr>";
    c.entities.forEach(function (e) { h += "<tr><td>" + esc(e[0]) + "</td><td>" + esc(e[1]) + "</td></tr>"; });
    h += "</table><h3>Relationships</h3><table><tr><th>source</th><th>target</th><th>weight</th><th>description</th></tr>";
    c.relationships.forEach(function (r) {
      h += "<tr><td>" + esc(r[0]) + "</td><td>" + esc(r[1]) + "</td><td>" + esc(r[2]) + "</td><td>" + esc(r[3]) + "</td></tr>";
    });
    document.getElementById("panel").innerHTML = h + "</table>";
  }
  var chart = document.getElementById("$DIV");
  chart.on("plotly_sunburstclick", function (ev) {
    var p = ev.points && ev.points[0];
    if (p && byId[p.id]) { show(byId[p.id]); }
  });
  window.slmgraphShow = function (id) { show(byId["c" + id]); };
})();
</script></body></html>
"""


def write_html(comms: list[dict], out: str | Path, title: str) -> Path:
    """Write the sunburst page of :func:`hierarchy`'s ``comms`` to ``out``; returns ``out``.

    Raises:
        UserError: plotly is not installed.
    """
    go = _need("plotly.graph_objects")
    fig = go.Figure(go.Sunburst(
        ids=[f"c{c['id']}" for c in comms],
        labels=[_label(c["title"]) for c in comms],
        parents=["" if c["parent"] is None else f"c{c['parent']}" for c in comms],
        values=[c["size"] for c in comms],
        branchvalues="total",
        hovertext=[f"level {c['level']}, {c['size']} entities" for c in comms],
        hoverinfo="label+text",
        maxdepth=3,
    ))
    fig.update_layout(margin=dict(t=10, l=10, r=10, b=10))
    div_id = "slmgraph-sunburst"
    chart = fig.to_html(include_plotlyjs=True, full_html=False, div_id=div_id,
                        config={"displaylogo": False, "responsive": True})
    levels = sorted({c["level"] for c in comms})
    intro = (f"{len(comms)} communities on {len(levels)} level{'s' if len(levels) != 1 else ''} "
             f"(the root level inside); a sector's size is its number of entities.")
    data = json.dumps(comms, ensure_ascii=False).replace("</", "<\\/")
    values = {"TITLE": html.escape(title), "INTRO": html.escape(intro), "DIV": div_id, "CHART": chart, "DATA": data}
    page = re.sub(r"\$(TITLE|INTRO|DIV|CHART|DATA)", lambda m: values[m.group(1)], _PAGE)  # one pass
    out = Path(out)
    out.write_text(page, encoding="utf-8")
    return out


def _fitted(text, label: str, fits, max_lines: int, tail: str = "") -> None:
    """Set ``text`` to ``label`` wrapped at word boundaries into at most ``max_lines`` lines (the last ending
    in "…" when words are left out), plus ``tail`` as a line of its own, at the widest wrap ``fits(text)``
    accepts; words longer than a line are cut with "…"; when not even "…" fits, only ``tail``."""
    import textwrap

    for width in range(max(len(label), 1), 0, -1):
        lines = textwrap.wrap(label, width, max_lines=max_lines, placeholder="…", break_long_words=True)
        if width < len(label):
            lines = [ln if len(ln) <= width else ln[:width - 1] + "…" for ln in lines]
        text.set_text("\n".join(lines + ([tail] if tail else [])))
        if fits(text):
            return
    text.set_text(tail)


def icicle(comms: list[dict], title: str):
    """The icicle chart of :func:`hierarchy`'s ``comms`` as a matplotlib figure (Agg): one row per level,
    one box per community, width proportional to its size; every label is wrapped to fit its box and the
    title to the figure, so no text is cut at an edge.

    Raises:
        UserError: matplotlib is not installed.
    """
    mpl = _need("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    kids: dict = {}
    for c in comms:
        kids.setdefault(c["parent"], []).append(c)
    total = sum(c["size"] for c in kids.get(None, [])) or 1
    depth = max(c["level"] for c in comms) + 1
    fig, ax = plt.subplots(figsize=(12, 1.2 + 1.1 * depth), dpi=100)
    cmap = plt.get_cmap("tab20")
    ax.set_xlim(0, 1)
    ax.set_ylim(depth, 0)
    ax.set_yticks([lv + 0.47 for lv in range(depth)], [f"level {lv}" for lv in range(depth)])
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    renderer = fig.canvas.get_renderer()
    head = ax.set_title("x")
    fig.tight_layout()
    room = ax.get_window_extent(renderer).width  # the title is centred over the axes
    _fitted(head, f"{title}: communities per level (width = entities)",
            lambda t: t.get_window_extent(renderer).width <= room, max_lines=2)
    fig.tight_layout()  # room for a title of two lines
    boxes = []

    def draw(c, x0: float, colour: int) -> None:
        w = c["size"] / total
        ax.add_patch(plt.Rectangle((x0, c["level"]), w, 0.95, facecolor=cmap(colour % 20),
                                   edgecolor="white", linewidth=0.8))
        if w > 0.06:
            boxes.append((c, x0, w))
        x = x0
        for k in kids.get(c["id"], []):
            draw(k, x, colour)
            x += k["size"] / total

    x = 0.0
    for i, c in enumerate(kids.get(None, [])):
        draw(c, x, i)
        x += c["size"] / total
    for c, x0, w in boxes:
        corners = ax.transData.transform([(x0, c["level"] + 0.95), (x0 + w, c["level"])])
        box_w, box_h = corners[1][0] - corners[0][0] - 6, corners[1][1] - corners[0][1] - 4
        t = ax.text(x0 + w / 2, c["level"] + 0.47, "", ha="center", va="center", fontsize=7)

        def fits(t, box_w=box_w, box_h=box_h) -> bool:
            bb = t.get_window_extent(renderer)
            return bb.width <= box_w and bb.height <= box_h

        _fitted(t, c["title"] or "", fits, max_lines=3, tail=f"({c['size']})")
    return fig


def write_png(comms: list[dict], out: str | Path, title: str) -> Path:
    """Draw the hierarchy as an icicle chart (:func:`icicle`) to the PNG ``out``; returns ``out``.

    Raises:
        UserError: matplotlib is not installed.
    """
    fig = icicle(comms, title)
    import matplotlib.pyplot as plt

    out = Path(out)
    fig.savefig(out)
    plt.close(fig)
    return out


def picture(store: Store, out: str | Path, png: str | Path | None = None) -> list[Path]:
    """Write the HTML page to ``out`` and the PNG to ``png`` (default: ``out`` with ``.png``).

    Returns:
        ``[html_path, png_path]``.

    Raises:
        UserError: incomplete index or no communities, ``out`` or ``png`` a folder or in a folder that
            cannot be created (missing folders are created; existing files are overwritten:
            :mod:`slmgraph.outputs`), plotly or matplotlib missing.
    """
    _need("plotly.graph_objects")
    _need("matplotlib")
    comms = hierarchy(store)
    out = output_file(out, "--out", "index.html")  # folders created, existing files overwritten (slmgraph.outputs)
    png = output_file(png, "--png", "index.png") if png else out.with_suffix(".png")
    title = Path(store.get_meta("input_root") or str(store.path)).name or str(store.path)
    return [write_html(comms, out, title), write_png(comms, png, title)]
