"""CPU seconds of the graph, communities and reports stages rebuilt on a copy of a finished index, and a
digest of every table they write (rows sorted, so two runs compare order-independently).

Run it once per code tree (``PYTHONPATH`` picks the tree) on the same index, then compare::

    PYTHONPATH=/work/main python benchmarks/derived_stages.py INDEX.duckdb --out /tmp/before.json
    PYTHONPATH=$PWD python benchmarks/derived_stages.py INDEX.duckdb --out /tmp/after.json
    python benchmarks/derived_stages.py --compare /tmp/before.json /tmp/after.json --name derived_stages

The embedder is loaded and warmed up before the graph stage (in a build the embed-ahead thread has loaded
it), so the graph's figure holds the name embeddings of the resolution rule but not torch's start.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import tempfile
import time
from pathlib import Path

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

TABLES = ("entities", "relationships", "entity_text_units", "relationship_text_units", "merge_log", "concepts",
          "communities", "community_members", "community_reports")


def measure(index: Path) -> dict:
    """CPU and wall seconds of each stage rebuilt on a copy of ``index``; the digest and row count of each table."""
    from slmgraph.config.prompting import Prompts
    from slmgraph.config.settings import Settings
    from slmgraph.indexing import pipeline
    from slmgraph.indexing.pipeline import IndexContext
    from slmgraph.indexing.stages.embed import Embedder
    from slmgraph.model.backend import load_model
    from slmgraph.model.client import ModelClient
    from slmgraph.store.db import Store, new_run_id

    s = Settings()
    model = load_model(None, s.n_ctx, s.n_threads, s.seed)
    emb = Embedder(batch_size=s.embed_batch_size, threads=s.n_threads)
    emb.encode(["warm-up", "a warm-up sentence of a few words"])
    out: dict = {"stages": {}, "tables": {}}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "copy.duckdb"
        shutil.copy(index, db)
        store = Store(db)
        ctx = IndexContext(store=store, settings=s, model=model, prompts=Prompts(None),
                           client=ModelClient(model, store, new_run_id()), embed=emb.encode)
        for name in ("graph", "communities", "reports"):
            st, = pipeline.stages(name)
            c0, t0 = time.process_time(), time.perf_counter()
            st.run(ctx)
            out["stages"][name] = {"cpu_s": round(time.process_time() - c0, 2),
                                   "wall_s": round(time.perf_counter() - t0, 2)}
        for t in TABLES:
            rows = sorted(map(repr, store.con.execute(f"SELECT * FROM {t}").fetchall()))
            out["tables"][t] = {"rows": len(rows), "sha1": hashlib.sha1("\n".join(rows).encode()).hexdigest()}
        store.close()
    return out


def compare(before: dict, after: dict, name: str) -> None:
    """Write ``benchmarks/results/NAME.md`` / ``.json``: CPU seconds per stage and whether each table is identical."""
    lines = ["# Graph, communities and reports rebuilt on one index: before and after", "",
             f"Index: `{after['index']}`. {after['conditions']}", "",
             "| stage | before CPU s | after CPU s | before wall s | after wall s |", "|---|---|---|---|---|"]
    for k, a in after["stages"].items():
        b = before["stages"][k]
        lines.append(f"| {k} | {b['cpu_s']} | {a['cpu_s']} | {b['wall_s']} | {a['wall_s']} |")
    same = [f"{t} ({after['tables'][t]['rows']:,} rows) "
            f"{'identical' if after['tables'][t] == before['tables'][t] else 'DIFFERENT'}" for t in TABLES]
    lines += ["", "Tables (rows sorted): " + ", ".join(same) + ".",
              f"Code: before `{before['code']}`, after `{after['code']}`."]
    print("\n".join(lines))
    benchkit.write_results(name, lines, {"before": before, "after": after})


def main() -> None:
    """Parse the arguments; measure or compare."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("index", nargs="?", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--name", default="derived_stages")
    args = ap.parse_args()
    if args.compare:
        a, b = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        compare(a, b, args.name)
        return
    import slmgraph

    cond = benchkit.start()
    res = measure(args.index)
    res.update(index=str(args.index), code=str(Path(slmgraph.__file__).parent),
               conditions=benchkit.sentence(benchkit.finish(cond)))
    args.out.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(res["stages"]))


if __name__ == "__main__":
    main()
