"""``slmgraph estimate`` against the build it predicts, in CPU seconds per stage (the default LLM-free route).

Wall-clock on a shared machine moves with the other jobs; CPU seconds (this process and its finished
children, user + system) move much less. So the estimate is run with its calibration timed in CPU
seconds (:data:`slmgraph.tools.estimate.clock`) and the build with each stage's CPU seconds taken around
it, each in a fresh process (so each pays the spaCy, torch and embedder loads as a user's run does).

The embed-ahead thread's work runs during extraction, so the build counts its CPU in the extract stage
while the estimate moves it off the embed stage: they are compared as the sum ``extract + embed`` too.

Usage::

    python benchmarks/estimate_check.py [CORPUS ...] [--units N] [--name NAME]

Each CORPUS (default: the podcast sample) is indexed as given, or only its first N files (sorted by
path) with ``--units N``, written as ``CORPUS[:N]``. Writes ``benchmarks/results/NAME.md`` / ``.json``
(default ``estimate_check``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

STAGES = ("ingest", "extract", "graph", "communities", "reports", "embed")


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its waited-for children."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def part_estimate(corpus: Path) -> dict:
    """The estimate of ``corpus`` with its calibration timed in CPU seconds."""
    from slmgraph.config.settings import Settings
    from slmgraph.model.backend import load_model
    import slmgraph.tools.estimate as est

    est.clock = cpu_seconds
    c0 = cpu_seconds()
    s = Settings()
    model = load_model(s.model_path, s.n_ctx, s.n_threads, s.seed, s.threads_explicit)
    load = cpu_seconds() - c0
    out = est.estimate(corpus, s, model, progress=False, say=lambda m: print(m, file=sys.stderr), follow_links=True)
    return {"stages": {k: v["seconds"] for k, v in out["stages"].items()}, "model_load": round(load, 2),
            "calibration": out["calibration"], "estimate_cpu_seconds": round(cpu_seconds() - c0, 1)}


def part_build(corpus: Path, db: Path) -> dict:
    """``slmgraph index corpus --db db`` (default settings) with each registered stage's CPU and wall seconds."""
    import dataclasses

    from slmgraph.config.settings import Settings
    from slmgraph.indexing import pipeline

    cpu: dict[str, float] = {}

    def timed(st):
        def run(ctx):
            c0 = cpu_seconds()
            try:
                return st.run(ctx)
            finally:
                cpu[st.name] = cpu.get(st.name, 0.0) + cpu_seconds() - c0
        return dataclasses.replace(st, run=run)

    pipeline.STAGES[:] = [timed(st) for st in pipeline.STAGES]
    c0, t0 = cpu_seconds(), time.perf_counter()
    out = pipeline.run_index(corpus, db, Settings(), progress=False, say=lambda m: print(m, file=sys.stderr),
                             follow_links=True)  # a sliced corpus is a folder of links (sliced)
    figures = {k: out[k] for k in ("graph", "communities", "reports") if isinstance(out.get(k), dict)}
    return {"cpu": {k: round(v, 2) for k, v in cpu.items()},
            "wall": {k: out[k]["seconds"] for k in STAGES if isinstance(out.get(k), dict)},
            "total_cpu": round(cpu_seconds() - c0, 1), "total_wall": round(time.perf_counter() - t0, 1),
            "embed_ahead": out.get("embed_ahead"), "units": out["ingest"]["text_units"],
            "tokens": out["ingest"]["tokens"],
            "entities": figures.get("graph", {}).get("entities"),
            "relationships": figures.get("graph", {}).get("relationships"),
            "concepts": figures.get("graph", {}).get("concepts"),
            "reports": figures.get("reports", {}).get("reports")}


def sliced(corpus: Path, n: int | None, work: Path) -> Path:
    """``corpus`` itself, or a folder of links to its first ``n`` files (sorted by path)."""
    if not n:
        return corpus
    folder = work / "input"
    folder.mkdir(parents=True, exist_ok=True)
    for f in sorted(p for p in corpus.rglob("*") if p.is_file())[:n]:
        dest = folder / f.relative_to(corpus)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.symlink_to(f)
    return folder


def in_child(*args: str) -> dict:
    """This script's ``--part`` run in a fresh process; its JSON answer."""
    res = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(res.stderr[-3000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def check(corpus: Path, n: int | None) -> dict:
    """Estimate, then build, ``corpus`` (or its first ``n`` files); predicted and real CPU seconds per stage."""
    with tempfile.TemporaryDirectory(prefix="estimate-check-") as tmp:
        folder = sliced(corpus, n, Path(tmp))
        cond = benchkit.start()
        print(f"estimate of {folder} ...", flush=True)
        est = in_child("--part", "estimate", str(folder))
        print(f"index of {folder} ...", flush=True)
        build = in_child("--part", "build", str(folder), "--db", str(Path(tmp) / "check.duckdb"))
        cond = benchkit.finish(cond)
    cal = est["calibration"].get("llm_free", {})
    # The work the estimate moved off the embed stage onto the embed-ahead thread (the build's extract stage).
    ahead = cal.get("embed_ahead_hidden_seconds", 0.0) * cal.get("embed_ahead_slowdown", 1.0)
    rows = {}
    for k in STAGES:
        p, r = est["stages"].get(k), build["cpu"].get(k)
        rows[k] = {"predicted": p, "real": r, "error": round(p / r - 1, 3) if p is not None and r else None}
    p = est["stages"].get("extract", 0) + est["stages"].get("embed", 0) + ahead
    r = build["cpu"].get("extract", 0) + build["cpu"].get("embed", 0)
    rows["extract + embed"] = {"predicted": round(p, 1), "real": round(r, 1), "error": round(p / r - 1, 3) if r else None}
    p = sum(v for v in est["stages"].values()) + ahead + est["model_load"]
    r = build["total_cpu"]
    rows["whole build"] = {"predicted": round(p, 1), "real": r, "error": round(p / r - 1, 3) if r else None}
    return {"corpus": str(corpus) + (f"[:{n}]" if n else ""), "conditions": cond, "rows": rows,
            "estimate": est, "build": build}


def render(results: list[dict]) -> list[str]:
    """The checks as markdown lines."""
    lines = ["# `slmgraph estimate` against the build, CPU seconds per stage", "",
             "Default flags (LLM-free route). Predicted: the estimate's calibration timed in CPU seconds and scaled to "
             "the corpus; real: the build's CPU seconds per stage (process and children, user + system). "
             "The whole build's predicted figure adds the model load; the ahead thread's work (done during "
             "extraction) is counted in `extract + embed`." + (
                 f" Both runs with OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}: torch's waiting threads sleep "
                 "instead of spinning, so CPU seconds count work, not the spinning that contention inflates."
                 if os.environ.get("OMP_WAIT_POLICY") else ""), ""]
    for r in results:
        b, cal = r["build"], r["estimate"]["calibration"].get("llm_free", {})
        lines += [f"## {r['corpus']}", "", benchkit.sentence(r["conditions"]), "",
                  f"{b['units']} text units, {b['tokens']:,} tokens; wall-clock {b['total_wall']} s (under contention, "
                  f"load {r['conditions']['loadavg_start']}); the estimate itself took "
                  f"{r['estimate']['estimate_cpu_seconds']} CPU s.", "",
                  "| stage | predicted CPU s | real CPU s | error |", "|---|---|---|---|"]
        for k, v in r["rows"].items():
            err = f"{v['error']:+.0%}" if v["error"] is not None else ""
            lines.append(f"| {k} | {v['predicted']} | {v['real']} | {err} |")
        if cal:
            gp = cal.get("graph_predicted", {})
            lines += ["", f"Calibration: {cal['units']} text units (1/{cal['scale_tokens']} of the tokens); predicted "
                          f"{cal['entities_predicted']:,} entities ({gp.get('concepts', '?')} concepts), "
                          f"{cal['relationships_predicted']:,} relationships, {cal['reports_predicted']:,} reports (carried "
                          f"copies included); the build made {b['entities']:,} entities ({b['concepts']} concepts), "
                          f"{b['relationships']:,} relationships, {b['reports']:,} reports written (carried copies "
                          "left out)."]
        lines.append("")
    return lines


def main() -> None:
    """Parse the arguments; run the parts or the whole check and write the results."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="*", type=Path, default=[benchkit.PODCAST])
    ap.add_argument("--units", type=int, default=None, help="only the first N files of each corpus")
    ap.add_argument("--name", default="estimate_check")
    ap.add_argument("--part", choices=("estimate", "build"), default=None, help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.part == "estimate":
        print(json.dumps(part_estimate(args.corpus[0])))
        return
    if args.part == "build":
        print(json.dumps(part_build(args.corpus[0], args.db)))
        return
    results = [check(c.resolve(), args.units) for c in args.corpus]
    lines = render(results)
    print("\n".join(lines))
    benchkit.write_results(args.name, lines, {"checks": results})


if __name__ == "__main__":
    main()
