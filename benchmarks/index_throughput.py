"""Indexing throughput of slmgraph on a corpus, against the model's raw llama.cpp speed.

One run measures, on this machine:

1. **Raw speed** of the model as llama.cpp runs it with the extraction thread
   plan (W worker processes x T threads, all measuring at once): prompt
   evaluation tok/s and generation tok/s (no grammar), summed over workers.
2. **Thread plans** (``--plan-units K``): the same K text units extracted with
   one process using every core and with one 1-thread worker per core;
   text units per second of each (what ``batch.DEFAULT_THREADS_PER_WORKER``
   was chosen from).
3. **Estimate**: ``slmgraph estimate`` on the corpus, before indexing.
4. **The index run** itself (``slmgraph index`` into a fresh ``--db``), from
   which the ledger gives, per stage: model calls, prompt tokens with and
   without prefix reuse (all prompt tokens vs. the tokens actually evaluated),
   completion tokens, and wall-clock; and the ratio of the extraction stage's
   wall-clock to the raw llama.cpp time for the same tokens (evaluated prompt
   tokens / raw prompt tok/s + completion tokens / raw generation tok/s).
   The estimate's error against the real wall-clock closes the table.

Usage::

    python benchmarks/index_throughput.py [--input DIR] [--db PATH] [--model PATH.gguf]
        [--plan-units 12] [--no-estimate]

Writes ``benchmarks/results/index_throughput.md`` and ``.json``. Run it on an
idle machine: other processes on the cores distort every figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing as mp
import platform
import tempfile
import time
from pathlib import Path

from slmgraph.batch import plan_threads
from slmgraph.bench import ledger, raw_rates
from slmgraph.config import Settings, physical_cores
from slmgraph.estimate import estimate
from slmgraph.extract import run_extraction
from slmgraph.ingest import ingest, read_documents
from slmgraph.backend import LlamaModel, default_model_path, load_model
from slmgraph.client import ModelClient
from slmgraph.names import candidate_names
from slmgraph.pipeline import run_index
from slmgraph.prompting import Prompts
from slmgraph.store import Store, new_run_id

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PODCAST = ROOT.parent / "shared" / "corpora" / "podcast_sample" / "input"


def _raw_worker(path: str, threads: int, barrier, out) -> None:
    """One process: load the model, wait for the others, time a prompt and a generation
    (:func:`slmgraph.bench.raw_rates`, the same measurement ``slmgraph bench`` makes)."""
    m = LlamaModel(path, n_ctx=4096, n_threads=threads)
    barrier.wait()
    out.put(raw_rates(m))


def raw_speed(path: str, workers: int, threads: int) -> tuple[float, float]:
    """Aggregate (prompt tok/s, generation tok/s) of ``workers`` processes x ``threads`` running at once."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_raw_worker, args=(path, threads, barrier, out)) for _ in range(workers)]
    for p in procs:
        p.start()
    rates = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return sum(r[0] for r in rates), sum(r[1] for r in rates)


def compare_plans(input_dir: Path, model, k: int, cores: int) -> list[dict]:
    """Extract the same ``k`` text units under each thread plan; units/s of each."""
    docs, _ = read_documents(input_dir)
    out = []
    for workers, threads in ((1, cores), (cores, 1)):
        if workers == 1 and threads == 1 and out:
            continue
        s = Settings(workers=workers, n_threads=threads, threads_explicit=True)
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "plan.duckdb", create=True)
            ingest(store, docs, model.tokenize, model.detokenize, s.chunk_size, s.chunk_overlap)
            units = [c for c, t in store.con.execute(
                "SELECT chunk_id, text FROM text_units ORDER BY doc_id, ord").fetchall() if candidate_names(t, 20)]
            picked = set(units[:k])
            client = ModelClient(model, store, new_run_id())
            t0 = time.perf_counter()
            st = run_extraction(store, client, Prompts(), s, progress=False, only=picked)
            wall = time.perf_counter() - t0
            tok = store.con.execute("SELECT sum(prompt_tokens - cached_tokens), sum(completion_tokens) "
                                    "FROM llm_calls").fetchone()
            store.close()
        out.append({"workers": workers, "threads": threads, "units": len(picked), "seconds": round(wall, 1),
                    "startup_seconds": st["startup_seconds"],
                    "units_per_s": round(len(picked) / wall, 3),
                    "units_per_s_after_startup": round(len(picked) / max(1e-9, wall - st["startup_seconds"]), 3),
                    "evaluated_tokens": int(tok[0] or 0), "completion_tokens": int(tok[1] or 0)})
        print(f"plan {workers} x {threads}: {len(picked)} units in {wall:.1f} s "
              f"({st['startup_seconds']} s startup)", flush=True)
    return out


def main() -> None:
    """Parse the arguments, measure, print the table and write the results files."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", type=Path, default=PODCAST)
    ap.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "slmgraph-throughput.duckdb")
    ap.add_argument("--model", default=None)
    ap.add_argument("--plan-units", type=int, default=12, help="text units per thread plan (0: skip)")
    ap.add_argument("--no-estimate", action="store_true")
    args = ap.parse_args()
    if args.db.exists():
        args.db.unlink()
    cores = physical_cores()
    settings = Settings()
    path = str(args.model or default_model_path())
    result: dict = {"date": time.strftime("%Y-%m-%d"), "input": str(args.input), "cores": cores,
                    "machine": f"{platform.machine()}, {cores} physical cores"}
    n_units_guess = 10 ** 6
    plan = plan_threads(cores, n_units_guess, settings.workers, None)
    result["plan"] = {"workers": plan.workers, "threads": plan.threads}

    print(f"raw llama.cpp speed with {plan.workers} x {plan.threads} ...", flush=True)
    p_rate, g_rate = raw_speed(path, plan.workers, plan.threads)
    result["raw"] = {"prompt_tok_s": round(p_rate, 1), "gen_tok_s": round(g_rate, 1)}

    t0 = time.perf_counter()
    model = load_model(args.model, settings.n_ctx, settings.n_threads, settings.seed)
    load_s = time.perf_counter() - t0
    result["model"] = model.name
    if args.plan_units:
        result["plans"] = compare_plans(args.input, model, args.plan_units, cores)
    if not args.no_estimate:
        print("estimate ...", flush=True)
        est = estimate(args.input, dataclasses.replace(settings), model, progress=False, say=lambda m: None)
        result["estimate"] = {"total_seconds": round(est["total_seconds"] + load_s, 1),
                              "stages": {k: v["seconds"] for k, v in est["stages"].items()},
                              "estimate_seconds": est["estimate_seconds"], "calibration": est["calibration"]}
    del model  # the index run loads its own, as 'slmgraph index' does

    print(f"indexing {args.input} into {args.db} ...", flush=True)
    t0 = time.perf_counter()
    out = run_index(args.input, args.db, settings, progress=True, say=lambda m: print(m, flush=True))
    wall = time.perf_counter() - t0
    stages = {k: v["seconds"] for k, v in out.items() if isinstance(v, dict) and "seconds" in v}
    result["index"] = {"wall_seconds": round(wall, 1), "stage_seconds": stages,
                       "load_and_setup_seconds": round(wall - sum(stages.values()), 1),
                       "extract": {k: out["extract"][k] for k in ("extracted", "workers", "threads",
                                                                  "startup_seconds")}}
    led = ledger(args.db, out["run_id"])
    result["ledger"] = led
    # The extraction stage's model work: extraction calls and gleaning follow-ups.
    ex_eval = sum(led.get(k, {}).get("evaluated_tokens", 0) for k in ("extract", "glean"))
    ex_comp = sum(led.get(k, {}).get("completion_tokens", 0) for k in ("extract", "glean"))
    raw_s = ex_eval / p_rate + ex_comp / g_rate
    result["extract_raw_seconds"] = round(raw_s, 1)
    result["extract_wall_over_raw"] = round(stages.get("extract", 0) / raw_s, 2) if raw_s else None
    if "estimate" in result:
        result["estimate"]["error"] = round(result["estimate"]["total_seconds"] / wall - 1, 3)

    lines = render(result)
    print("\n".join(lines))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "index_throughput.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (RESULTS / "index_throughput.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def render(r: dict) -> list[str]:
    """The results as markdown lines."""
    lines = [f"# Index throughput: {r['model']} on {r['input']} ({r['date']}, {r['machine']})", "",
             f"Extraction thread plan: {r['plan']['workers']} worker(s) x {r['plan']['threads']} thread(s). "
             f"Raw llama.cpp speed with that plan: prompt {r['raw']['prompt_tok_s']} tok/s, "
             f"generation {r['raw']['gen_tok_s']} tok/s (no grammar).", ""]
    if r.get("plans"):
        lines += ["## Thread plans (same text units)", "",
                  "| workers x threads | units | seconds | startup s | units/s | units/s after startup |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {p['workers']} x {p['threads']} | {p['units']} | {p['seconds']} | {p['startup_seconds']} | "
                  f"{p['units_per_s']} | {p['units_per_s_after_startup']} |" for p in r["plans"]]
        lines.append("")
    lines += ["## The index run (from the ledger)", "",
              "| stage | calls | prompt tokens (no reuse) | evaluated (with reuse) | reused | completion | "
              "model s | stage wall s |", "|---|---|---|---|---|---|---|---|"]
    names = {"extract": "extract", "glean": "extract", "report": "reports", "summarize": "graph", "claims": "claims"}
    for stage, l in r["ledger"].items():
        lines.append(f"| {stage} | {l['calls']} | {l['prompt_tokens']:,} | {l['evaluated_tokens']:,} | "
                     f"{l['reused_tokens'] / max(1, l['prompt_tokens']):.0%} | {l['completion_tokens']:,} | "
                     f"{l['model_seconds']} | {r['index']['stage_seconds'].get(names.get(stage, stage), '')} |")
    lines += ["", "| stage | wall-clock s |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in r["index"]["stage_seconds"].items()]
    lines += [f"| model load + setup | {r['index']['load_and_setup_seconds']} |",
              f"| **total** | **{r['index']['wall_seconds']}** |", ""]
    lines.append(f"Extraction wall-clock / raw llama.cpp time for the same tokens (extract + glean calls): "
                 f"{r['index']['stage_seconds'].get('extract')} s / {r['extract_raw_seconds']} s = "
                 f"**{r['extract_wall_over_raw']}**")
    if "estimate" in r:
        e = r["estimate"]
        lines += ["", f"`slmgraph estimate` predicted {e['total_seconds']} s (took {e['estimate_seconds']} s); "
                      f"real {r['index']['wall_seconds']} s: error **{e['error']:+.0%}**.",
                  "", "| stage | predicted s | real s |", "|---|---|---|"]
        for k, v in e["stages"].items():
            lines.append(f"| {k} | {v} | {r['index']['stage_seconds'].get(k, '')} |")
    return lines


if __name__ == "__main__":
    main()
