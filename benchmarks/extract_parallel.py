"""The LLM-free extraction stage with one worker and with the thread plan's workers, against spaCy's raw limit.

On a slice of ``podcast_large`` (the first N text files, default 120), ingested once:

1. **The extraction stage** (:func:`slmgraph.indexing.stages.extract.run_extraction`, default route, concepts
   in) run on a fresh copy of the ingested index with ``--workers 1`` (in this process) and with the thread
   plan's workers (worker processes, this process the one writer): wall seconds, CPU seconds of this
   process and of its finished children, units/s, and the workers' start.
2. **spaCy's raw limit** with the same plan: ``nlp.pipe`` (batches of 32) over the same masked text units in
   one process and split over the plan's processes at once (each loaded before the clock starts): units/s.

Usage::

    SLMGRAPH_DATA=/work/shared python benchmarks/extract_parallel.py [--units N] [--name NAME]

Writes ``benchmarks/results/NAME.md`` and ``.json`` (NAME defaults to ``extract_parallel``). Wall-clock
figures taken while other jobs share the cores are marked as taken under contention; the CPU seconds
hold either way.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import shutil
import tempfile
import time
from pathlib import Path

import benchkit

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.indexing.executors.batch import plan_threads
from slmgraph.indexing.stages.extract import run_extraction
from slmgraph.indexing.stages.ingest import ingest
from slmgraph.indexing.stages.ingest_read import read_documents
from slmgraph.model.backend import load_model
from slmgraph.model.client import ModelClient
from slmgraph.store.db import Store, new_run_id

LARGE = benchkit.DATA / "corpora" / "podcast_large" / "input"


def cpu_seconds() -> tuple[float, float]:
    """``(this process, its finished children)`` user + system CPU seconds."""
    me, ch = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, ch.ru_utime + ch.ru_stime


def stage_run(base: Path, tmp: Path, model, workers: int) -> dict:
    """The extraction stage on a copy of ``base`` with ``workers`` workers: seconds, CPU seconds, units/s."""
    db = tmp / f"w{workers}.duckdb"
    shutil.copy(base, db)
    store = Store(db)
    s = Settings(workers=workers)
    client = ModelClient(model, store, new_run_id())
    notes: list[str] = []
    c0, k0 = cpu_seconds()
    t0 = time.perf_counter()
    res = run_extraction(store, client, Prompts(), s, progress=False, say=notes.append)
    wall = time.perf_counter() - t0
    c1, k1 = cpu_seconds()
    store.close()
    n = res.extracted
    print(f"extract, {res.workers} worker(s): {n} units in {wall:.1f} s wall, CPU {c1 - c0:.1f} s here + "
          f"{k1 - k0:.1f} s in workers", flush=True)
    return {"workers": res.workers, "units": n, "seconds": round(wall, 2), "startup_seconds": res.startup_seconds,
            "cpu_main_s": round(c1 - c0, 2), "cpu_workers_s": round(k1 - k0, 2),
            "cpu_s": round(c1 - c0 + k1 - k0, 2), "units_per_s": round(n / wall, 2),
            "units_per_cpu_s": round(n / max(1e-9, c1 - c0 + k1 - k0), 2),
            "entities": res.entities, "relationships": res.relationships, "notes": notes}


def _pipe_worker(texts: list[str], model_name: str, barrier, out) -> None:
    from slmgraph.indexing.stages.ner import pipeline_for

    nlp, _ = pipeline_for(model_name)
    for _ in nlp.pipe(texts[:4]):
        pass  # warm-up
    barrier.wait()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in nlp.pipe(texts, batch_size=32):
        pass
    out.put((time.perf_counter() - t0, time.process_time() - c0))


def raw_pipe(masked: list[str], processes: int, model_name: str) -> dict:
    """spaCy ``nlp.pipe`` over ``masked`` split over ``processes`` spawned processes measuring at once."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(processes), ctx.Queue()
    parts = [masked[i::processes] for i in range(processes)]
    procs = [ctx.Process(target=_pipe_worker, args=(p, model_name, barrier, out)) for p in parts]
    for p in procs:
        p.start()
    got = [out.get() for _ in procs]
    for p in procs:
        p.join()
    wall = max(w for w, _ in got)
    cpu = sum(c for _, c in got)
    print(f"raw nlp.pipe, {processes} process(es): {len(masked)} units in {wall:.1f} s wall, CPU {cpu:.1f} s",
          flush=True)
    return {"processes": processes, "units": len(masked), "seconds": round(wall, 2), "cpu_s": round(cpu, 2),
            "units_per_s": round(len(masked) / wall, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--units", type=int, default=120, help="podcast_large files (one text unit each)")
    ap.add_argument("--name", default="extract_parallel")
    args = ap.parse_args()
    cond = benchkit.start()
    settings = Settings()
    model = load_model(None, settings.n_ctx, settings.n_threads, settings.seed)
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        inp = tmp / "input"
        inp.mkdir()
        for f in sorted(LARGE.glob("*.txt"))[:args.units]:
            shutil.copy(f, inp / f.name)
        docs, _ = read_documents(inp)
        base = tmp / "base.duckdb"
        store = Store(base, create=True)
        ingest(store, docs, model.tokenize, model.detokenize, settings.chunk_size, settings.chunk_overlap)
        texts = [t for (t,) in store.con.execute("SELECT text FROM text_units ORDER BY doc_id, ord").fetchall()]
        store.close()
        plan = plan_threads(settings.n_threads, len(texts))
        runs = [stage_run(base, tmp, model, 1), stage_run(base, tmp, model, plan.workers)]
    from slmgraph.text.markdown import mask_markup

    masked = [mask_markup(t) for t in texts]
    raw = [raw_pipe(masked, 1, settings.ner_model), raw_pipe(masked, plan.workers, settings.ner_model)]
    cond = benchkit.finish(cond)
    one, many = runs
    data = {"conditions": cond, "units": len(texts), "characters": sum(map(len, texts)), "plan_workers": plan.workers,
            "stage": runs, "raw_pipe": raw,
            "speedup": round(one["seconds"] / many["seconds"], 2),
            "ratio_to_raw": round(raw[-1]["units_per_s"] / many["units_per_s"], 2),
            "cpu_ratio_to_raw": round(many["cpu_s"] / raw[-1]["cpu_s"], 2)}
    md = [f"# The LLM-free extraction in worker processes ({len(texts)} podcast_large text units)", "",
          benchkit.sentence(cond), "",
          "| run | workers / processes | wall s | CPU s (main + workers) | units/s | units per CPU s |",
          "|---|---|---|---|---|---|"]
    for r in runs:
        md.append(f"| extraction stage | {r['workers']} | {r['seconds']} (start {r['startup_seconds']}) | "
                  f"{r['cpu_s']} ({r['cpu_main_s']} + {r['cpu_workers_s']}) | {r['units_per_s']} | "
                  f"{r['units_per_cpu_s']} |")
    for r in raw:
        md.append(f"| raw spaCy nlp.pipe | {r['processes']} | {r['seconds']} | {r['cpu_s']} | {r['units_per_s']} | "
                  f"{round(r['units'] / max(1e-9, r['cpu_s']), 2)} |")
    md += ["", f"Stage speed-up with {plan.workers} workers: {data['speedup']}x (wall); the stage runs at 1/"
           f"{data['ratio_to_raw']} of spaCy's raw throughput with the same plan, and spends "
           f"{data['cpu_ratio_to_raw']}x its CPU seconds (the stage also starts the workers and loads spaCy in each, "
           "finds candidates, concepts and sentences, and writes every unit)."]
    if cond.get("contended"):
        md.append("Wall-clock figures were taken under contention (other jobs on the cores); compare CPU seconds.")
    benchkit.write_results(args.name, md, data)


if __name__ == "__main__":
    main()
