"""Cold start of ``slmgraph query``: the seconds a new process spends before the search method's own work.

Each run starts a new Python process that runs ``slmgraph query`` exactly as the command line does, with
probes wrapped around the slow steps: opening the index (``Store``), loading the GGUF (``load_model``), the
embedder (``Embedder``), spaCy (``ner.load_pipeline``) and the search engine (e.g. ``global_search``). The
parent takes the wall-clock from launch to exit. Start-up = wall-clock minus the engine's own work (the
engine's time less the loads that happen inside it), i.e. interpreter start, imports, index, model,
embedder and spaCy loads, and exit.

Usage::

    python benchmarks/cold_start.py --db podcast.duckdb [--runs 3] [--method global] [--question Q] [--code DIR]

Writes ``benchmarks/results/cold_start.md`` and ``.json`` (``--name`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent

#: Runs in the child: wraps the slow steps with timers (time.time(), comparable with the parent's launch
#: time), then runs the CLI's main with the given arguments.
PROBE = r"""
import json, os, sys, time
T = {"python_ready": time.time(), "python_ready_cpu": time.process_time()}
import functools
def wrap(mod, name, label):
    import importlib
    try:
        m = importlib.import_module(mod)
    except ModuleNotFoundError:  # a checkout without that module (e.g. before it was added)
        return
    obj = getattr(m, name)
    if isinstance(obj, type):
        init = obj.__init__
        @functools.wraps(init)
        def __init__(self, *a, **k):
            t, c = time.time(), time.process_time()
            init(self, *a, **k)
            T.setdefault(label, []).append([t, time.time(), c, time.process_time()])
        obj.__init__ = __init__
        return
    @functools.wraps(obj)
    def f(*a, **k):
        t, c = time.time(), time.process_time()
        try:
            return obj(*a, **k)
        finally:
            T.setdefault(label, []).append([t, time.time(), c, time.process_time()])
    if hasattr(obj, "cache_clear"):
        f.cache_clear = obj.cache_clear
    setattr(m, name, f)
import slmgraph.cli.main
T["cli_imported"] = time.time()
wrap("slmgraph.store.db", "Store", "store")
wrap("slmgraph.model.backend", "load_model", "model")
wrap("slmgraph.indexing.stages.embed", "Embedder", "embedder")
wrap("slmgraph.query.question_embed", "question_embedder", "embedder")
wrap("slmgraph.indexing.stages.ner", "load_pipeline", "spacy")
for mod, fn in (("global_search", "global_search"), ("global_search", "text_unit_search"),
                ("local_search", "local_search"), ("basic_search", "basic_search"),
                ("drift_search", "drift_search"), ("lazy_search", "lazy_search")):
    wrap("slmgraph.query.answer." + mod, fn, "engine")
try:
    rc = slmgraph.cli.main.main(sys.argv[2:])
finally:
    T["done"], T["done_cpu"] = time.time(), time.process_time()
    with open(sys.argv[1], "w") as fh:
        json.dump({"rc": rc if "rc" in dir() else None, "t": T, "modules": sorted(sys.modules),
                   "slmgraph": slmgraph.cli.main.__file__}, fh)
"""


def inside(spans: list, outer: list) -> float:
    """Seconds of ``spans`` that lie inside the ``outer`` span."""
    return sum(max(0.0, min(b, outer[1]) - max(a, outer[0])) for a, b in spans)


def one_run(db: str, question: str, method: str, env: dict, code: str) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        out = fh.name
    argv = ["query", "--db", db, question, "--method", method, "--json", "--quiet"]
    t0 = time.time()
    # cwd = the checkout: `python -c` puts the working folder first on sys.path.
    r = subprocess.run([sys.executable, "-c", PROBE, out, *argv], capture_output=True, text=True, env=env, cwd=code)
    wall = time.time() - t0
    if r.returncode != 0:
        raise SystemExit(f"cold_start: the query failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    probe = json.loads(Path(out).read_text())
    os.unlink(out)
    t = probe["t"]
    engine = t.get("engine", [[t["done"], t["done"], t["done_cpu"], t["done_cpu"]]])[0]
    kinds = ("store", "model", "embedder", "spacy")
    loads = {k: round(sum(s[1] - s[0] for s in t.get(k, [])), 3) for k in kinds}
    loads_cpu = {k: round(sum(s[3] - s[2] for s in t.get(k, [])), 3) for k in kinds}
    loads_in_engine = sum(inside([s[:2] for s in t.get(k, [])], engine[:2]) for k in kinds)
    cpu_in_engine = sum(s[3] - s[2] for k in kinds for s in t.get(k, []) if engine[0] <= s[0] <= engine[1])
    own = (engine[1] - engine[0]) - loads_in_engine
    own_cpu = (engine[3] - engine[2]) - cpu_in_engine
    answer = json.loads(r.stdout)
    heavy = [m for m in ("torch", "sentence_transformers", "transformers", "sklearn", "spacy", "llama_cpp")
             if m in probe["modules"]]
    return {"wall_s": round(wall, 3), "startup_s": round(wall - own, 3), "engine_own_s": round(own, 3),
            "startup_cpu_s": round(t["done_cpu"] - own_cpu, 3), "engine_own_cpu_s": round(own_cpu, 3),
            "loads_cpu_s": loads_cpu,
            "python_ready_s": round(t["python_ready"] - t0, 3), "cli_imported_s": round(t["cli_imported"] - t0, 3),
            "engine_entered_s": round(engine[0] - t0, 3), "loads_s": loads,
            "loads_inside_engine_s": round(loads_in_engine, 3), "exit_s": round(t0 + wall - t["done"], 3),
            "model_calls": answer["model_calls"], "heavy_modules": heavy, "slmgraph": probe["slmgraph"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--question", default="What are the main themes across these conversations?")
    ap.add_argument("--method", default="global")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--name", default="cold_start")
    ap.add_argument("--note", default="", help="a line saying what was measured (the code, the index)")
    ap.add_argument("--code", default=str(ROOT), help="the slmgraph checkout to run (default: this one)")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=f"{args.code}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    cond = benchkit.start()
    db = str(Path(args.db).resolve())
    runs = [one_run(db, args.question, args.method, env, args.code) for _ in range(args.runs)]
    cond = benchkit.finish(cond)
    med = {k: round(statistics.median(r[k] for r in runs), 3) for k in ("wall_s", "startup_s", "engine_own_s",
                                                                         "engine_entered_s", "startup_cpu_s")}
    data = {"conditions": cond, "code": args.code, "db": args.db, "method": args.method, "question": args.question, "note": args.note,
            "median": med, "runs": runs}
    lines = [f"# Cold start of `slmgraph query --method {args.method}` ({args.runs} new processes)", "",
             benchkit.sentence(cond), "", args.note, "",
             f"Code: `{runs[0]['slmgraph']}`. Index `{args.db}`; question {args.question!r}; model calls per run: "
             f"{', '.join(str(r['model_calls']) for r in runs)}.", "",
             "| run | wall s | start-up s | start-up CPU s | engine's own work s | engine entered at s | "
             "store s (CPU) | model s (CPU) | embedder s (CPU) | spaCy s (CPU) | heavy modules imported |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(runs, 1):
        ld, lc = r["loads_s"], r["loads_cpu_s"]
        lines.append(f"| {i} | {r['wall_s']:.2f} | {r['startup_s']:.2f} | {r['startup_cpu_s']:.2f} | "
                     f"{r['engine_own_s']:.2f} | {r['engine_entered_s']:.2f} | "
                     + " | ".join(f"{ld[k]:.2f} ({lc[k]:.2f})" for k in ("store", "model", "embedder", "spacy"))
                     + f" | {', '.join(r['heavy_modules']) or 'none'} |")
    lines += ["", f"Median start-up: **{med['startup_s']:.2f} s** wall-clock, {med['startup_cpu_s']:.2f} s of CPU "
              f"(wall {med['wall_s']:.2f} s in all, of which the engine's own work {med['engine_own_s']:.2f} s). "
              "Start-up = wall-clock from launch to exit minus the engine's own work (its time less the loads made "
              "inside it); its CPU time is the process's CPU time (user + system, all threads) minus the engine's "
              "own: an estimate of the start-up on idle cores, as these steps run on one thread and read files "
              "from the page cache."]
    md, _ = benchkit.write_results(args.name, lines, data)
    print(md.read_text())


if __name__ == "__main__":
    main()
