"""slmgraph picture: one self-contained HTML page (checked in headless Chromium) and a PNG."""

import json
import re
import shutil
import subprocess

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.cli.main import main
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index

pytest.importorskip("plotly", reason="the [picture] extra (plotly, matplotlib) is not installed")
pytest.importorskip("matplotlib", reason="the [picture] extra (plotly, matplotlib) is not installed")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run",
         # Chromium's own background fetches (updater, clock, accounts, spelling) still start despite the
         # flags above: resolve no host, so nothing leaves the machine; the netlog still records attempts.
         "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-sync", "--disable-extensions", "--no-pings"]

#: Injected before the page's own scripts: records script errors, console.error and CSP violations,
#: then selects a community the way a click does, and writes what it saw into <body> attributes.
PROBE = """<script>
window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push("error: " + e.message); });
document.addEventListener("securitypolicyviolation", function (e) { window.__errors.push("csp: " + e.blockedURI); });
var __ce = console.error;
console.error = function () { window.__errors.push("console: " + Array.from(arguments).join(" ")); __ce.apply(console, arguments); };
window.addEventListener("load", function () { setTimeout(function () {
  var first = JSON.parse(document.getElementById("slmgraph-data").textContent)[0];
  window.slmgraphShow(first.id);
  document.body.setAttribute("data-errors", JSON.stringify(window.__errors));
  var res = performance.getEntriesByType("resource").map(function (e) { return e.name; });
  document.body.setAttribute("data-resources", JSON.stringify(res));
  document.body.setAttribute("data-sectors", String(document.querySelectorAll("#slmgraph-sunburst path.surface").length));
}, 1000); });
</script>"""


@pytest.fixture
def db(tmp_path, corpus):
    db = tmp_path / "i.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    return db


def _communities(db):
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM communities").fetchone()[0]
    finally:
        con.close()


def test_picture_writes_a_self_contained_page_and_a_png(db, tmp_path, capsys):
    from PIL import Image

    out = tmp_path / "index.html"
    assert main(["picture", "--db", str(db), "--out", str(out)]) == 0
    assert capsys.readouterr().out.split() == [str(out), str(tmp_path / "index.png")]
    page = out.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\bsrc=|<link\b|<iframe\b|<img[^>]*src=\"http", page)  # everything inlined
    assert "default-src 'none'" in page  # the page itself forbids network requests
    data = json.loads(re.search(r'<script id="slmgraph-data" type="application/json">(.+?)</script>', page,
                                re.S).group(1))
    assert len(data) == _communities(db) and all(c["entities"] for c in data)
    img = Image.open(tmp_path / "index.png")
    assert img.size[0] >= 800 and len(img.convert("RGB").getcolors(1 << 16) or []) > 5


def test_picture_mistakes_are_one_line(db, tmp_path, capsys):
    assert main(["picture", "--db", str(db), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("slmgraph: error: ") and "is a folder" in err and "\n" not in err
    (tmp_path / "file").write_text("x")
    assert main(["picture", "--db", str(db), "--out", str(tmp_path / "file" / "x.html")]) == 2
    err = capsys.readouterr().err.strip()  # a missing folder is created (tests/test_outputs.py), a file is no folder
    assert err.startswith("slmgraph: error: ") and str(tmp_path / "file") in err and "\n" not in err


def _chromium(tmp_path, *args):
    profile = tmp_path / f"profile{len(list(tmp_path.glob('profile*')))}"
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium; .ci/run does)")
def test_page_loads_in_headless_chromium_offline_without_errors(db, tmp_path):
    from PIL import Image

    out = tmp_path / "index.html"
    assert main(["picture", "--db", str(db), "--out", str(out)]) == 0
    probed = tmp_path / "probed.html"
    probed.write_text(out.read_text(encoding="utf-8").replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    netlog = tmp_path / "net.json"
    r = _chromium(tmp_path, f"--log-net-log={netlog}", "--virtual-time-budget=15000", "--dump-dom",
                  probed.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    errors = re.search(r'data-errors="([^"]*)"', r.stdout)
    assert errors, r.stdout[-2000:]
    assert json.loads(errors.group(1).replace("&quot;", '"')) == []
    assert int(re.search(r'data-sectors="(\d+)"', r.stdout).group(1)) == _communities(db)
    assert "<h3>Entities</h3>" in r.stdout  # selecting a community lists its entities
    resources = json.loads(re.search(r'data-resources="([^"]*)"', r.stdout).group(1).replace("&quot;", '"'))
    assert not [u for u in resources if not u.startswith(("data:", "blob:", "file:"))], resources
    # No network request from the page: every request in the netlog was started by the browser itself
    # ("not an origin"), none by the page (whose origin is file://, "null").
    initiators = set(re.findall(r'"initiator":"([^"]*)"', netlog.read_text(errors="replace")))
    assert initiators <= {"not an origin"}, initiators
    shot = tmp_path / "shot.png"
    r = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,800", "--virtual-time-budget=15000",
                  out.as_uri())
    assert r.returncode == 0 and shot.is_file(), r.stderr[-2000:]
    img = Image.open(shot).convert("RGB")
    colours = img.getcolors(1 << 20) or []
    assert len(colours) > 20  # not blank: the sunburst's sectors and labels
    assert max(n for n, _ in colours) < 0.97 * img.size[0] * img.size[1]
