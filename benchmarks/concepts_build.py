"""Build time and graph with and without noun-phrase concepts (``--no-concepts``), in one run.

Each configuration is a fresh default ``slmgraph index`` of the corpus (a subprocess, as a user runs
it), the runs alternating off / on ``--repeats`` times so that both see the same machine load.
Recorded per run: wall seconds, CPU seconds of the build process and its children (user + system:
what the build itself costs, less sensitive than wall time to other jobs on the machine), the
seconds of each stage (``stage_runs``), entities, concepts, relationships, communities per level and
reports; for the last run with concepts, the level-0 topic labels and coverage of the largest
communities.

Usage::

    python benchmarks/concepts_build.py                         # podcast_sample, 1 repeat
    python benchmarks/concepts_build.py --corpus PATH --name concepts_build_large --repeats 1

Writes ``benchmarks/results/<name>.md`` and ``.json``.
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

import duckdb

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)


def build(corpus: Path, db: Path, concepts: bool, extra: list[str]) -> dict:
    """One default index build; returns its wall seconds and the index's figures."""
    cmd = [sys.executable, "-m", "slmgraph.cli.main", "index", str(corpus), "--db", str(db), "--replace", "--quiet"]
    cmd += ([] if concepts else ["--no-concepts"]) + extra
    t0 = time.perf_counter()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter() - t0
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    con = duckdb.connect(str(db), read_only=True)
    try:
        stages = {s: round(v, 2) for s, v in con.execute(
            "SELECT stage, sum(seconds) FROM stage_runs GROUP BY stage ORDER BY min(created_at)").fetchall()}
        one = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        figs = {"concepts": concepts, "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), "stages": stages,
                "text_units": one("SELECT count(*) FROM text_units"),
                "documents": one("SELECT count(*) FROM documents"),
                "entities": one("SELECT count(*) FROM entities"),
                "concept_nodes": one("SELECT count(*) FROM concepts"),
                "relationships": one("SELECT count(*) FROM relationships"),
                "communities": dict(con.execute("SELECT level, count(*) FROM communities GROUP BY 1 ORDER BY 1")
                                    .fetchall()),
                "reports": one("SELECT count(*) FROM community_reports")}
        if concepts:
            figs["level0"] = [
                {"community": cid, "size": size, "title": title, "topic": topic,
                 "documents": len(json.loads(d or "[]"))}
                for cid, size, title, topic, d in con.execute(
                    "SELECT c.community_id, c.size, r.title, r.topic, r.doc_ids FROM communities c "
                    "JOIN community_reports r USING (community_id) WHERE c.level = 0 ORDER BY c.size DESC LIMIT 12"
                ).fetchall()]
    finally:
        con.close()
    return figs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=benchkit.PODCAST)
    ap.add_argument("--name", default="concepts_build")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--extra", default="", help="further index options, space-separated")
    args = ap.parse_args(argv)
    cond = benchkit.start()
    runs = []
    with tempfile.TemporaryDirectory(prefix="slmgraph-concepts-") as tmp:
        for i in range(args.repeats):
            for on in (False, True):
                db = Path(tmp) / f"{'on' if on else 'off'}{i}.duckdb"
                r = build(args.corpus, db, on, args.extra.split())
                print(f"concepts {'on ' if on else 'off'}: {r['wall_seconds']} s ({r['cpu_seconds']} CPU s), "
                      f"{r['entities']} entities "
                      f"({r['concept_nodes']} concepts), {r['relationships']} relationships, stages {r['stages']}",
                      flush=True)
                runs.append(r)
    cond = benchkit.finish(cond)
    off = [r["wall_seconds"] for r in runs if not r["concepts"]]
    on = [r["wall_seconds"] for r in runs if r["concepts"]]
    ratio = round(sum(on) / sum(off), 3) if off and sum(off) else None
    cpu_off = [r["cpu_seconds"] for r in runs if not r["concepts"]]
    cpu_on = [r["cpu_seconds"] for r in runs if r["concepts"]]
    cpu_ratio = round(sum(cpu_on) / sum(cpu_off), 3) if cpu_off and sum(cpu_off) else None
    md = [f"# Build time with and without noun-phrase concepts: {args.corpus.name}", "",
          f"Command: `python benchmarks/concepts_build.py --corpus {args.corpus} --repeats {args.repeats}"
          + (f" --extra '{args.extra}'" if args.extra else "") + "` (default `slmgraph index`, bundled model; "
          "runs alternate off / on).", "", benchkit.sentence(cond), "",
          "Stage columns: wall seconds of each stage (`stage_runs`).", "",
          "| concepts | wall s | CPU s | ingest | extract | graph | communities | reports | embed | "
          "entities (concepts) | relationships | communities per level | reports |", "|---" * 13 + "|"]
    for r in runs:
        st = r["stages"]
        md.append(f"| {'on' if r['concepts'] else 'off'} | {r['wall_seconds']} | {r.get('cpu_seconds', '-')} | "
                  + " | ".join(str(st.get(s, "-")) for s in ("ingest", "extract", "graph", "communities", "reports",
                                                             "embed"))
                  + f" | {r['entities']} ({r['concept_nodes']}) | {r['relationships']} | "
                  + ", ".join(f"{k}: {v}" for k, v in r["communities"].items()) + f" | {r['reports']} |")
    md += ["", f"With concepts / without (sums over repeats): wall time **{ratio}**, CPU time **{cpu_ratio}**."]
    last = next((r for r in reversed(runs) if r["concepts"]), None)
    if last and last.get("level0"):
        md += ["", "Largest level-0 communities with concepts (title, topic label, documents):", "",
               "| size | title | topic | documents |", "|---|---|---|---|"]
        md += [f"| {c['size']} | {c['title']} | {c['topic']} | {c['documents']} |" for c in last["level0"]]
    benchkit.write_results(args.name, md, {"conditions": cond, "corpus": str(args.corpus), "runs": runs,
                                           "ratio_on_off": ratio, "cpu_ratio_on_off": cpu_ratio})
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
