"""What a rewrite costs on disk: the index file's size after a build and after edits of one document.

Rebuilding the graph, communities, reports and embeddings after an edit rewrites those tables; DuckDB
keeps the blocks the old rows held for reuse and never shrinks the file. This script copies the bundled
sample story to a temporary folder, indexes it with the bundled model (``slmgraph index``, defaults),
then edits one sentence and re-indexes, ``--edits`` times, for each ``--code`` checkout (``PYTHONPATH``),
and records the file's size and its free blocks (``PRAGMA database_size``) after every run.

Usage::

    python benchmarks/index_growth.py [--edits 2] [--code before=/work/main] [--code after=.] [--name index_growth]

Writes ``benchmarks/results/<name>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "slmgraph" / "samples" / "dulce.txt"


def blocks(db: Path) -> tuple[int, int]:
    """``(total, free)`` blocks of the index file."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT total_blocks, free_blocks FROM pragma_database_size()").fetchone()
    finally:
        con.close()


def main() -> None:
    """Build, edit and re-index per checkout; write the results files."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edits", type=int, default=2)
    ap.add_argument("--code", action="append", default=None, metavar="LABEL=PATH",
                    help="a checkout to measure (repeatable; default: after=this checkout)")
    ap.add_argument("--name", default="index_growth")
    a = ap.parse_args()
    codes = [c.split("=", 1) for c in (a.code or [f"after={Path(__file__).resolve().parents[1]}"])]
    cond = benchkit.start()
    runs: dict[str, list[dict]] = {}
    for label, code in codes:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "corpus"
            corpus.mkdir()
            text = SAMPLE.read_text(encoding="utf-8")
            doc = corpus / "dulce.txt"
            doc.write_text(text, encoding="utf-8")
            db = Path(tmp) / "demo.duckdb"
            env = dict(os.environ, PYTHONPATH=str(Path(code).resolve()))
            runs[label] = []
            where = subprocess.run([sys.executable, "-c", "import slmgraph; print(slmgraph.__file__)"], env=env,
                                   capture_output=True, text=True, cwd=tmp).stdout.strip()
            print(label, "imports", where, flush=True)
            for k in range(a.edits + 1):
                if k:  # one sentence changed, at a different place each time
                    cut = len(text) * k // (a.edits + 1)
                    cut = text.index(". ", cut) + 2
                    text = text[:cut] + f"Edit {k} was made here by the analyst. " + text[cut:]
                    doc.write_text(text, encoding="utf-8")
                t0 = time.perf_counter()
                # cwd: the temporary folder, so that -m imports the checkout on PYTHONPATH, not this one
                out = subprocess.run([sys.executable, "-m", "slmgraph.cli.main", "index", str(corpus), "--db", str(db)],
                                     env=env, capture_output=True, text=True, cwd=tmp)
                dt = time.perf_counter() - t0
                if out.returncode:
                    raise SystemExit(f"{label}: index failed: {out.stderr[-2000:]}")
                total, free = blocks(db)
                row = {"run": "build" if not k else f"edit {k}", "seconds": round(dt, 1),
                       "file_mb": round(db.stat().st_size / 1e6, 2), "blocks": total, "free_blocks": free,
                       "compacted": [x for x in out.stderr.splitlines() if "compacted" in x]}
                runs[label].append(row)
                print(label, row, flush=True)
    cond = benchkit.finish(cond)
    md = ["# Index file size after edits of one document", "",
          "`python benchmarks/index_growth.py " + " ".join(f"--code {label}={code}" for label, code in codes)
          + f" --edits {a.edits}`: the bundled sample story indexed with the bundled model and default "
          "settings, then one sentence added and the folder re-indexed, per edit. Blocks are DuckDB's "
          "(256 KB); free blocks are space the file holds but no table uses.", "",
          "| checkout | run | file (MB) | blocks | free blocks | seconds | compaction |",
          "|---|---|---:|---:|---:|---:|---|"]
    for label, rows in runs.items():
        for r in rows:
            md.append(f"| {label} | {r['run']} | {r['file_mb']} | {r['blocks']} | {r['free_blocks']} | "
                      f"{r['seconds']} | {'; '.join(r['compacted']) or '-'} |")
    md += ["", benchkit.sentence(cond)]
    benchkit.write_results(a.name, md, {"conditions": cond, "runs": runs})


if __name__ == "__main__":
    main()
