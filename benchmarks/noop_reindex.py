"""What a no-op re-index writes: the index file's size and the tables whose rows change.

A re-run of ``slmgraph index`` on an unchanged input with the same settings finds nothing to do
(ARCHITECTURE.md "Incremental runs"). This script builds the demo index (the bundled sample
``dulce.txt``, default settings) with each given ``slmgraph`` executable, then re-runs the same
command ``--runs`` times and records after each run: the ``.duckdb`` file's size (bytes), whether a
``.wal`` file is left, and which tables' rows differ from the run before (each table's rows hashed).

Usage::

    python benchmarks/noop_reindex.py [--exe NAME=PATH ...] [--runs 3]

``--exe`` defaults to this environment's ``slmgraph``. Writes ``benchmarks/results/noop_reindex.md``
and ``.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

SAMPLE = Path(__file__).resolve().parents[1] / "slmgraph" / "samples" / "dulce.txt"


def table_hashes(db: Path) -> dict[str, str]:
    """``{table: sha256 of its sorted rows}`` of the index ``db`` (opened read-only)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
        return {n: hashlib.sha256("\n".join(sorted(map(repr, con.execute(f"SELECT * FROM {n}").fetchall())))
                                  .encode()).hexdigest()[:16] for n in names}
    finally:
        con.close()


def measure(exe: str, runs: int) -> dict:
    """Build the demo index with ``exe`` in a temporary folder, re-run it ``runs`` times; the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "demo.duckdb"
        cmd = [exe, "index", str(SAMPLE), "--db", str(db), "--quiet"]
        steps = []
        before = None
        for i in range(runs + 1):
            t0 = time.perf_counter()
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr.strip()[-500:]}")
            seconds = time.perf_counter() - t0
            hashes = table_hashes(db)
            changed = sorted(n for n in hashes if before is not None and hashes[n] != before.get(n))
            steps.append({"run": "build" if i == 0 else f"no-op {i}", "bytes": db.stat().st_size,
                          "wal": db.with_name(db.name + ".wal").exists(), "seconds": round(seconds, 1),
                          "tables_changed": changed if i else None})
            before = hashes
        return {"exe": exe, "steps": steps}


def main(argv: list[str] | None = None) -> int:
    """Measure every ``--exe`` and write the results files."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", action="append", default=None,
                    help="NAME=PATH of a slmgraph executable (repeatable; default: this environment's)")
    ap.add_argument("--runs", type=int, default=3, help="no-op re-runs after the build (default 3)")
    a = ap.parse_args(argv)
    exes = a.exe or ["this=" + str(Path(sys.executable).with_name("slmgraph"))]
    cond = benchkit.start()
    results = {}
    for spec in exes:
        name, _, path = spec.partition("=")
        results[name] = measure(path, a.runs)
        print(name, results[name]["steps"], flush=True)
    cond = benchkit.finish(cond)
    md = ["# No-op re-index: what it writes", "",
          f"`python benchmarks/noop_reindex.py` on the bundled sample `dulce.txt` (default settings: no model "
          f"call under 1B), one build then {a.runs} re-runs of the same `slmgraph index` command. "
          "Bytes are the `.duckdb` file's size after each run; 'tables changed' lists the tables whose rows "
          "differ from the run before.", "",
          "| slmgraph | run | bytes | growth | .wal left | tables changed | seconds |", "|---|---|---|---|---|---|---|"]
    for name, res in results.items():
        prev = None
        for st in res["steps"]:
            growth = "" if prev is None else f"{st['bytes'] - prev:+,}"
            changed = "" if st["tables_changed"] is None else (", ".join(st["tables_changed"]) or "none")
            md.append(f"| {name} | {st['run']} | {st['bytes']:,} | {growth} | {'yes' if st['wal'] else 'no'} | "
                      f"{changed} | {st['seconds']} |")
            prev = st["bytes"]
    md += ["", benchkit.sentence(cond) + " The seconds include loading the model, spaCy and the embedder; "
           "only the bytes and the tables are the point here."]
    benchkit.write_results("noop_reindex", md, {"conditions": cond, "results": results})
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
