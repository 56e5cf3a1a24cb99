"""The embedder's CPU and wall seconds with torch's OpenMP threads spinning (the default) or sleeping while they
wait (``OMP_WAIT_POLICY=PASSIVE``), on a machine that other jobs share.

Each round runs one fresh process per policy (the policy is read when OpenMP starts, at torch's import), in
alternating order: it loads the bundled embedder (2 intra-op threads, the build's precision) and encodes,
longest first as the embed stage does (:func:`slmgraph.indexing.stages.embed.embed_items`), ``--units`` text units
of ``--db`` (full windows: the embed stage's work) and ``--names`` entity names (short texts: the graph stage's name
embeddings). CPU: ``time.process_time`` of that process (every thread). The vectors are the same either way
(the policy changes how idle threads wait, not what they compute): the script checks it.

Usage:
    PYTHONPATH=. python benchmarks/omp_wait.py --db INDEX.duckdb [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402

POLICIES = ("default", "PASSIVE")


def child(db: str, n_units: int, n_names: int, out: str) -> None:
    """One process's measurement, printed as JSON; its vectors saved to ``out`` (.npy)."""
    import time

    import duckdb

    from slmgraph.indexing.stages.embed import Embedder, embed_items, window_keys

    con = duckdb.connect(db, read_only=True)
    units = [t for (t,) in con.execute("SELECT text FROM text_units ORDER BY chunk_id LIMIT ?", [n_units]).fetchall()]
    names = [n for (n,) in con.execute("SELECT name FROM entities ORDER BY norm LIMIT ?", [n_names]).fetchall()]
    con.close()
    emb = Embedder(threads=2, precision="auto")
    emb.encode(["warm up"])
    row = {"policy": os.environ.get("OMP_WAIT_POLICY", "default"), "precision": emb.precision,
           "loadavg_start": benchkit.loadavg()}
    vecs = []
    for label, texts in (("units", units), ("names", names)):
        _, lens = window_keys(emb, texts)
        c0, w0 = time.process_time(), time.perf_counter()
        vecs.append(embed_items(emb, texts, lens))
        row[label] = {"texts": len(texts), "word_pieces": sum(lens), "cpu_s": round(time.process_time() - c0, 2),
                      "wall_s": round(time.perf_counter() - w0, 2)}
    row["loadavg_end"] = benchkit.loadavg()
    np.save(out, np.concatenate(vecs))
    print(json.dumps(row))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True, help="an index whose text units and entity names are encoded")
    ap.add_argument("--units", type=int, default=120)
    ap.add_argument("--names", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--name", default="omp_wait_s8")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.db, args.units, args.names, args.child)
        return
    import tempfile

    cond = benchkit.start()
    rows, vec = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for pol in (POLICIES if r % 2 == 0 else POLICIES[::-1]):
                env = dict(os.environ)
                env.pop("OMP_WAIT_POLICY", None)
                if pol != "default":
                    env["OMP_WAIT_POLICY"] = pol
                out = str(Path(tmp) / f"{pol}_{r}.npy")
                res = subprocess.run([sys.executable, __file__, "--db", args.db, "--units", str(args.units),
                                      "--names", str(args.names), "--child", out],
                                     env=env, capture_output=True, text=True, check=True)
                row = json.loads(res.stdout.strip().splitlines()[-1])
                row["round"] = r
                print(json.dumps(row), file=sys.stderr, flush=True)
                rows.append(row)
                vec.setdefault(pol, np.load(out))
    cond = benchkit.finish(cond)
    same = bool(np.array_equal(vec["default"], vec["PASSIVE"]))
    summary = {p: {f"{k}_{m}": float(np.median([x[k][m] for x in rows if x["policy"] == p]))
                   for k in ("units", "names") for m in ("cpu_s", "wall_s")} for p in POLICIES}
    data = {**cond, "db": args.db, "rows": rows, "median": summary, "identical_vectors": same}
    u, n = rows[0]["units"], rows[0]["names"]
    md = ["# The embedder with spinning or sleeping OpenMP threads, on a shared machine", "",
          benchkit.sentence(cond), "",
          f"One fresh process per policy and round ({args.rounds} rounds, alternating order), 2 torch threads, "
          f"{rows[0]['precision']}: {u['texts']} text units of `{args.db}` ({u['word_pieces']:,} word pieces, the embed "
          f"stage's work) and {n['texts']} entity names ({n['word_pieces']:,} word pieces, the graph stage's name "
          f"embeddings). CPU: the process's CPU seconds (every thread). Vectors identical across policies: {same}.", "",
          "| round | policy | load at start | units CPU s | units wall s | names CPU s | names wall s |",
          "|---|---|---|---|---|---|---|"]
    md += [f"| {x['round']} | {x['policy']} | {x['loadavg_start']} | {x['units']['cpu_s']} | {x['units']['wall_s']} | "
           f"{x['names']['cpu_s']} | {x['names']['wall_s']} |" for x in rows]
    md += ["", "Medians: " + "; ".join(f"{p}: units {s['units_cpu_s']} CPU s / {s['units_wall_s']} wall s, names "
                                       f"{s['names_cpu_s']} CPU s / {s['names_wall_s']} wall s"
                                       for p, s in summary.items()) + "."]
    benchkit.write_results(args.name, md, data)


if __name__ == "__main__":
    main()
