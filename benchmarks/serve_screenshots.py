"""Screenshots of ``slmgraph serve`` for the README: the Ask page (an answer, a citation opened) and an entity page.

Starts ``slmgraph serve --db INDEX --port 0``, drives headless Chromium over its DevTools protocol
(``tests/cdp.py``), asks ``--question``, opens the first citation, then opens the most connected entity
(or ``--entity``), and writes ``docs/serve_ask.png`` and ``docs/serve_entity.png``.

Usage::

    python benchmarks/serve_screenshots.py --db podcast.duckdb [--question Q] [--entity NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from cdp import Browser  # noqa: E402  (tests/cdp.py)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--question", default="What personal anecdotes or stories do tech leaders often share?")
    ap.add_argument("--method", default="global")
    ap.add_argument("--entity", default=None, help="entity name (default: the most connected)")
    ap.add_argument("--out", default=str(ROOT / "docs"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.Popen([sys.executable, "-m", "slmgraph.cli.main", "serve", "--db", args.db, "--port", "0"],
                            stdout=subprocess.PIPE, text=True, env=env)
    browser = None
    try:
        line = proc.stdout.readline()
        if "http://" not in line:
            raise SystemExit(f"serve_screenshots: the server did not start: {line.strip()}")
        url = "http://" + line.split("http://", 1)[1].split("/", 1)[0]
        browser = Browser(Path(tempfile.mkdtemp(prefix="slmgraph-shots-")), size=(1360, 900))
        browser.go(url + "/#/ask")
        browser.wait_for("document.body.dataset.ready === '1'")
        browser.evaluate(f"document.getElementById('question').value = {json.dumps(args.question)}; "
                         f"document.getElementById('method').value = {json.dumps(args.method)}; "
                         "document.getElementById('ask-button').click(); true")
        browser.wait_for("document.getElementById('points').dataset.done", timeout=600)
        browser.evaluate("document.getElementById('why').open = false; "
                         "var c = document.querySelector('#points .cite'); if (c) c.click(); true")
        browser.wait_for("document.getElementById('passage').dataset.loaded || "
                         "!document.querySelector('#points .cite')")
        browser.screenshot(out / "serve_ask.png")
        q = urllib.parse.urlencode({"q": args.entity or "", "limit": 1})
        with urllib.request.urlopen(f"{url}/api/entities?{q}", timeout=60) as r:
            ent = json.load(r)[0]
        browser.evaluate(f"location.hash = '#/entity/{ent['id']}'; true")
        browser.wait_for("document.getElementById('graph').dataset.nodes")
        browser.evaluate("new Promise(function (r) { setTimeout(r, 500); })")
        browser.screenshot(out / "serve_entity.png")
        if browser.errors:
            raise SystemExit(f"serve_screenshots: page errors: {browser.errors}")
        print(out / "serve_ask.png", out / "serve_entity.png")
    finally:
        if browser is not None:
            browser.close()
        proc.terminate()
        proc.wait(timeout=60)


if __name__ == "__main__":
    main()
