"""A default (LLM-free) index build with and without the text units embedded ahead, on the core LLM-free
extraction and the single-threaded graph, communities and reports stages leave idle (:class:`slmgraph.indexing.stages.embed_ahead.EmbedAhead`): per-stage wall seconds, the whole build's wall
and CPU seconds, and the load average, each arm a fresh build in its own process, arms alternated.

Usage:
    PYTHONPATH=. python benchmarks/embed_ahead.py [INPUT] [--rounds 1] [--name embed_ahead]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402

CHILD = """
import sys, json, time
import slmgraph.indexing.pipeline as p
if sys.argv[1] == "off":
    p.start_embed_ahead = lambda *a, **k: None
from slmgraph.cli.main import main
t = time.perf_counter()
try:
    code = main(["index", sys.argv[2], "--db", sys.argv[3], "--quiet"])
except SystemExit as e:
    code = e.code
if code:
    sys.exit(code)
print(json.dumps({"wall": time.perf_counter() - t}))
"""


def arm(which: str, input_path: str, db: Path) -> dict:
    """One fresh build in a child process: wall, CPU seconds (user + system) and per-stage seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = benchkit.loadavg()
    w0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, which, input_path, str(db)], capture_output=True, text=True)
    wall = time.perf_counter() - w0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise SystemExit(f"embed_ahead: the {which} build failed: {out.stderr[-2000:]}")
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    stages = {s: round(x, 2) for s, x in con.execute("SELECT stage, seconds FROM stage_runs ORDER BY created_at").fetchall()}
    counts = dict(con.execute("SELECT kind, count(*) FROM embeddings GROUP BY kind").fetchall())
    con.close()
    return {"arm": which, "wall_s": round(wall, 1),
            "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "stages": stages, "vectors": counts, "loadavg_start": load0, "loadavg_end": benchkit.loadavg()}


def vector_diff(a: Path, b: Path) -> dict | None:
    """Per kind, the largest absolute difference between the two indexes' vectors of the same item, and
    whether both hold the same items; None when either file is missing."""
    if not (a.is_file() and b.is_file()):
        return None
    import duckdb
    import numpy as np

    def rows(p):
        con = duckdb.connect(str(p), read_only=True)
        out = {(k, i): np.array(v, dtype=np.float32) for k, i, v in
               con.execute("SELECT kind, item_id, vector FROM embeddings").fetchall()}
        con.close()
        return out

    ra, rb = rows(a), rows(b)
    out: dict = {"same_items": ra.keys() == rb.keys()}
    for key in ra.keys() & rb.keys():
        out[key[0]] = max(out.get(key[0], 0.0), float(np.abs(ra[key] - rb[key]).max()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input", nargs="?", default=str(benchkit.DATA / "corpora" / "podcast_large" / "input"))
    ap.add_argument("--arms", default="off,on", help="which arms to run (comma-separated: off, on)")
    ap.add_argument("--keep", type=Path, default=None, help="a folder to keep the built indexes in")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--name", default="embed_ahead")
    args = ap.parse_args()
    cond = benchkit.start()
    runs = []
    with tempfile.TemporaryDirectory(prefix="slmgraph-ahead-") as tmp:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            tmp = str(args.keep)
        for r in range(args.rounds):
            arms = [a for a in args.arms.split(",") if a in ("off", "on")]
            for which in (arms if r % 2 == 0 else arms[::-1]):
                res = arm(which, args.input, Path(tmp) / f"{which}{r}.duckdb")
                print(json.dumps(res), file=sys.stderr, flush=True)
                runs.append(res)
    cond = benchkit.finish(cond)
    stages = list(dict.fromkeys(s for r in runs for s in r["stages"]))
    md = [f"# Embedding ahead during LLM-free extraction: `{args.input}`", "", benchkit.sentence(cond), "",
          "Each arm is a fresh default build (`slmgraph index INPUT --db NEW --quiet`) in its own process; `off` "
          "runs the stages one after another, `on` encodes the text units and their further windows on a thread "
          "(committing them as they are made) while extraction (spaCy, one core) and then the graph, communities "
          "and reports stages run. CPU s = user + system of the build's process.", "",
          "| arm | wall s | CPU s | " + " | ".join(stages) + " | load at start | load at end |",
          "|---" * (len(stages) + 5) + "|"]
    md += [f"| {r['arm']} | {r['wall_s']} | {r['cpu_s']} | " + " | ".join(str(r["stages"].get(s, "")) for s in stages)
           + f" | {r['loadavg_start']} | {r['loadavg_end']} |" for r in runs]
    diff = vector_diff(Path(tmp) / "off0.duckdb", Path(tmp) / "on0.duckdb") if args.keep else None
    if diff is not None:
        md += ["", "Largest absolute difference of the `on` arm's vectors from the `off` arm's, per kind (same item ids "
               f"in both: {diff.pop('same_items')}): " + ", ".join(f"{k} {v:.2g}" for k, v in diff.items())]
    benchkit.write_results(args.name, md, {**cond, "input": args.input, "runs": runs, "vector_diff": diff})
    print("\n".join(md))


if __name__ == "__main__":
    main()
