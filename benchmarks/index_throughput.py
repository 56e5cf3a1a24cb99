"""Indexing throughput of slmgraph on a corpus, against the model's raw llama.cpp speed.

One run measures, on this machine:

1. **Raw speed** of the model as llama.cpp runs it, prompt evaluation tok/s and
   generation tok/s (no grammar): with the thread plan's W worker processes x
   T threads all measuring at once (summed), and with one process on every
   core (the stages that run in the main process).
2. **Thread plans** (``--plan-units K``, default 0 = skipped): the same K text
   units extracted with one process using every core and with one 1-thread
   worker per core (what ``batch.DEFAULT_THREADS_PER_WORKER`` was chosen from).
3. **Estimate**: ``slmgraph estimate --json`` on the corpus in a fresh process, before indexing (its
   error closes the report); ``--estimate-only`` reruns just this against a finished results file.
4. **The index run** (``slmgraph index`` into a fresh ``--db``; ``--executor ray``
   for Ray actors), per stage: wall-clock, model calls, prompt tokens with and
   without prefix reuse, completion tokens, peak memory (PSS of the process
   tree, so the memory-mapped model shared by workers counts once) and the
   DuckDB file size at the stage's end; per model stage the **bound ratio**
   wall-clock / (evaluated prompt tokens / raw prompt tok/s + completion
   tokens / raw generation tok/s), with the raw speed of the stage's process
   plan; prompt tokens evaluated per corpus token for the whole build, and
   completion tokens per corpus token (whole build, and the extraction stages:
   ``extract``, ``glean``; the ``choose_*`` decisions generate none).
5. **Incremental** (``--add DIR``): the files of DIR added to the indexed
   folder and the same command run again: what adding documents costs.
6. **Executors** (``--compare-executors``): the same corpus indexed with the
   local executor and with Ray (same workers and threads), the overhead, and
   whether entities, relationships, communities and reports are identical.

Usage::

    python benchmarks/index_throughput.py [CORPUS] [--db PATH] [--model PATH.gguf] [--executor local|ray]
        [--add DIR] [--compare-executors] [--plan-units K] [--no-estimate] [--name NAME]
        [--descriptions model] [--reports model] [--workers W] [--threads T]
    python benchmarks/index_throughput.py --estimate-only --name NAME
    python benchmarks/index_throughput.py --shape-bounds-only --name NAME

CORPUS defaults to the podcast sample. Writes ``benchmarks/results/NAME.md``
and ``.json`` (NAME defaults to ``index_throughput``). Run it on an idle
machine: other processes on the cores distort every figure (the results file
records the load average at the start and the end).
"""

from __future__ import annotations

import argparse
import json
import dataclasses
import multiprocessing as mp
import tempfile
import time
from pathlib import Path

from slmgraph.indexing.executors.batch import plan_threads
from slmgraph.eval.bench import ledger, raw_rates, raw_rates_at
from slmgraph.config.settings import Settings, physical_cores
from slmgraph.indexing.stages.extract import run_extraction
from slmgraph.indexing.stages.ingest import ingest
from slmgraph.indexing.stages.ingest_read import read_documents
from slmgraph.model.backend import LlamaModel, load_model
from slmgraph.model.gguf import default_model_path
from slmgraph.model.client import ModelClient
from slmgraph.names.forms import candidate_names
from slmgraph.indexing.pipeline import run_index, stages as pipeline_stages
from slmgraph.config.prompting import Prompts
from slmgraph.tools.stats import content_snapshot
from slmgraph.store.db import Store, new_run_id

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

PODCAST = benchkit.PODCAST
RESULTS = benchkit.RESULTS


def _raw_worker(path: str, threads: int, barrier, out) -> None:
    """One process: load the model, wait for the others, time a prompt and a generation
    (:func:`slmgraph.eval.bench.raw_rates`, the same measurement ``slmgraph bench`` makes)."""
    m = LlamaModel(path, n_ctx=4096, n_threads=threads)
    barrier.wait()
    out.put(raw_rates(m))


def _collect(out, procs) -> list:
    """One result per process from ``out``, then join them.

    Raises:
        RuntimeError: a process died before putting its result (its traceback is on stderr).
    """
    import queue

    rates = []
    while len(rates) < len(procs):
        try:
            rates.append(out.get(timeout=5))
        except queue.Empty:
            if any(p.exitcode not in (None, 0) for p in procs):
                for p in procs:
                    p.kill()
                raise RuntimeError("a raw-speed process failed (its traceback is above)") from None
    for p in procs:
        p.join()
    return rates


def raw_speed(path: str, workers: int, threads: int) -> tuple[float, float]:
    """Aggregate (prompt tok/s, generation tok/s) of ``workers`` processes x ``threads`` running at once."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_raw_worker, args=(path, threads, barrier, out)) for _ in range(workers)]
    for p in procs:
        p.start()
    rates = _collect(out, procs)
    return sum(r[0] for r in rates), sum(r[1] for r in rates)


def _raw_spacy_worker(ner_model: str, texts: list[str], batch: int, barrier, out) -> None:
    """One process of the raw extract limit, set up as an extraction worker (no torch, the stage's pipeline):
    ``nlp.pipe`` over the masked ``texts`` in batches of ``batch``, once all processes are ready; puts its
    CPU seconds."""
    import sys

    sys.modules.setdefault("torch", None)  # as slmgraph.indexing.stages.extract.nlp_worker_job does
    from slmgraph.indexing.stages.ner import pipeline_for

    nlp, _ = pipeline_for(ner_model)
    for _ in nlp.pipe(texts[:batch], batch_size=batch):  # the first call's one-time setup, as a worker's first task
        pass
    barrier.wait()
    c0 = time.process_time()
    for _ in nlp.pipe(texts, batch_size=batch):
        pass
    out.put(time.process_time() - c0)


def raw_spacy_cpu(ner_model: str, texts: list[str], workers: int, batch: int) -> list[float]:
    """CPU seconds of each of ``workers`` processes parsing ``texts`` with spaCy at the same time
    (:func:`_raw_spacy_worker`): two parsers on the machine at once, as the extract stage runs them."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_raw_spacy_worker, args=(ner_model, texts, batch, barrier, out))
             for _ in range(workers)]
    for p in procs:
        p.start()
    return _collect(out, procs)


def _shape_worker(path: str, threads: int, shape: tuple[int, int, int], barrier, out) -> None:
    """One process: load the model, wait for the others, time calls of ``shape``
    (:func:`slmgraph.eval.bench.raw_rates_at`)."""
    m = LlamaModel(path, n_ctx=max(4096, sum(shape) + 64), n_threads=threads)
    barrier.wait()
    out.put(raw_rates_at(m, *shape))


def raw_speed_at(path: str, workers: int, threads: int, shape: tuple[int, int, int]) -> tuple[float, float]:
    """Aggregate (prompt tok/s, generation tok/s) of ``workers`` processes x ``threads`` at once, each
    timing calls of ``shape`` = (cached prefix, evaluated prompt, completion) tokens."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_shape_worker, args=(path, threads, shape, barrier, out)) for _ in range(workers)]
    for p in procs:
        p.start()
    rates = _collect(out, procs)
    return sum(r[0] for r in rates), sum(r[1] for r in rates)


def stage_shapes(led: dict) -> dict[str, tuple[int, int, int]]:
    """Per pipeline stage with model calls, its mean call shape from the ledger:
    ``(cached prefix, evaluated prompt, completion)`` tokens per call (choices generate none)."""
    tot: dict[str, list[int]] = {}
    for lstage, l in led.items():
        t = tot.setdefault(STAGE_OF.get(lstage, lstage), [0, 0, 0, 0])
        t[0] += l["calls"]
        t[1] += l["reused_tokens"]
        t[2] += l["evaluated_tokens"]
        t[3] += l["completion_tokens"]
    return {k: (round(c / n), max(1, round(p / n)), round(g / n)) for k, (n, c, p, g) in tot.items() if n}


def add_shape_bounds(ix: dict, led: dict, path: str, plan, one: int) -> dict:
    """Measure the raw speed at each model stage's mean call shape (:func:`raw_speed_at`, with the stage's
    process plan) and add ``shape_bound_seconds`` and ``wall_over_shape_bound`` to ``ix["stages"]``.

    The bound of issue 12 is evaluated prompt tokens / prompt speed + completion tokens / generation
    speed; a speed taken at a 600-token context (:func:`raw_speed`) understates the cost of a call that
    evaluates and generates at positions 1,000-2,000 (attention grows with the position), so the ratio
    against it counts llama.cpp's own cost at long contexts as our overhead. This one does not: what is
    left is ours (grammar sampling, Python per token, the writer, idle workers at the end of a level).

    Returns:
        ``{stage: {"shape": [cached, prompt, completion], "prompt_tok_s", "gen_tok_s"}}``.
    """
    out = {}
    for stage, shape in stage_shapes(led).items():
        st = ix["stages"].get(stage)
        if st is None or not st["calls"]:
            continue
        workers, threads = (plan.workers, plan.threads) if st["workers"] > 1 else (1, one)
        print(f"raw llama.cpp speed at the {stage} stage's call shape {shape} with {workers} x {threads} ...",
              flush=True)
        p_rate, g_rate = raw_speed_at(path, workers, threads, shape)
        bound = st["evaluated_tokens"] / p_rate + (st["completion_tokens"] / g_rate if g_rate else 0.0)
        st["shape_bound_seconds"] = round(bound, 1)
        st["wall_over_shape_bound"] = round(st["seconds"] / bound, 2) if bound else None
        out[stage] = {"shape": list(shape), "prompt_tok_s": round(p_rate, 1), "gen_tok_s": round(g_rate, 1)}
    return out


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
                    "startup_seconds": st.startup_seconds,
                    "units_per_s": round(len(picked) / wall, 3),
                    "units_per_s_after_startup": round(len(picked) / max(1e-9, wall - st.startup_seconds), 3),
                    "evaluated_tokens": int(tok[0] or 0), "completion_tokens": int(tok[1] or 0)})
        print(f"plan {workers} x {threads}: {len(picked)} units in {wall:.1f} s "
              f"({st['startup_seconds']} s startup)", flush=True)
    return out


#: Ledger stages of the extraction stage (JSON records, gleaning, choices by token probability).
EXTRACT_STAGES = ("extract", "glean", "choose_keep", "choose_type", "choose_relate")
#: Ledger stages -> the pipeline stage whose wall-clock they belong to.
STAGE_OF = {"claims": "claims", "summarize": "graph", "report": "reports", **dict.fromkeys(EXTRACT_STAGES, "extract")}


class Probe:
    """Samples the memory of this process tree every ``period`` seconds and
    attributes it to the pipeline stage in progress.

    Memory is PSS (proportional set size, /proc/PID/smaps_rollup, kernel docs
    "proc"): pages shared by several processes -- the memory-mapped GGUF of
    every worker -- are divided among them, so the sum is the tree's real
    footprint. Falls back to RSS where smaps_rollup is missing.
    """

    def __init__(self, period: float = 0.5):
        import threading

        self.period, self.stage = period, "setup"
        self.peak: dict[str, int] = {}
        self.db_bytes: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def tree_bytes() -> int:
        """PSS (else RSS) of this process and all its descendants, in bytes."""
        import os

        me = os.getpid()
        parent: dict[int, int] = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    parent[int(d)] = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    pass

        def mine(pid: int) -> bool:
            for _ in range(30):
                if pid == me:
                    return True
                pid = parent.get(pid, 0)
                if pid <= 1:
                    return False
            return False

        total = 0
        for pid in parent:
            if not mine(pid):
                continue
            try:
                text = Path(f"/proc/{pid}/smaps_rollup").read_text()
                key = "Pss:"
            except OSError:
                try:
                    text, key = Path(f"/proc/{pid}/status").read_text(), "VmRSS:"
                except OSError:
                    continue
            for line in text.splitlines():
                if line.startswith(key):
                    total += int(line.split()[1]) * 1024
                    break
        return total

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            b = self.tree_bytes()
            self.peak[self.stage] = max(self.peak.get(self.stage, 0), b)

    def __enter__(self) -> "Probe":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def wrap(self, name: str, fn, db: Path):
        """``fn`` marked as stage ``name`` while it runs; the DuckDB file size recorded at its end."""

        def wrapped(*a, **k):
            self.stage = name
            try:
                return fn(*a, **k)
            finally:
                self.peak[name] = max(self.peak.get(name, 0), self.tree_bytes())
                self.db_bytes[name] = sum(p.stat().st_size for p in (db, Path(str(db) + ".wal")) if p.exists())
                self.stage = "between stages"

        return wrapped


def indexed_run(corpus: Path, db: Path, settings: Settings, progress: bool = True) -> dict:
    """``slmgraph index CORPUS --db DB`` in this process under a :class:`Probe`.

    Returns ``{out, wall_seconds, peak_bytes, db_bytes}`` (``out``: :func:`run_index`'s figures)."""
    import slmgraph.indexing.stages.embed as embed_mod
    import slmgraph.indexing.pipeline as pl

    names = {"ingest": "ingest", "run_extraction": "extract", "run_claims": "claims", "build_graph": "graph",
             "run_communities": "communities", "run_reports": "reports"}
    saved = {k: getattr(pl, k) for k in names}
    saved_embed = embed_mod.run_embeddings
    probe = Probe()
    try:
        for k, stage in names.items():
            setattr(pl, k, probe.wrap(stage, saved[k], db))
        embed_mod.run_embeddings = probe.wrap("embed", saved_embed, db)
        with probe:
            t0 = time.perf_counter()
            # The indexed folder holds links to the corpus files (see main), so they are followed.
            out = run_index(corpus, db, settings, progress=progress, say=lambda m: print(m, flush=True),
                            follow_links=True)
            wall = time.perf_counter() - t0
    finally:
        for k, fn in saved.items():
            setattr(pl, k, fn)
        embed_mod.run_embeddings = saved_embed
    return {"out": out, "wall_seconds": round(wall, 1), "peak_bytes": probe.peak, "db_bytes": probe.db_bytes}


def stage_figures(out: dict) -> dict[str, dict]:
    """The figures of the registered index stages in :func:`run_index`'s output, in the pipeline's order; the
    runner's other entries (``run_id``, ``embed_ahead``: a thread beside the stages, ``compact``) left out."""
    return {st.name: out[st.name] for st in pipeline_stages() if isinstance(out.get(st.name), dict)
            and "seconds" in out[st.name]}


def stage_table(run: dict, led: dict, rates: dict, corpus_tokens: int) -> dict:
    """Per pipeline stage: wall-clock, tokens, bound ratio, peak memory, file size; and the build's
    prompt tokens evaluated per corpus token.

    Args:
        rates: ``{"plan": (prompt tok/s, gen tok/s) of W x T processes, "one": (...) of one process}``.
    """
    stages: dict[str, dict] = {}
    for name, fig in stage_figures(run["out"]).items():
        stages[name] = {"seconds": fig["seconds"], "calls": 0, "evaluated_tokens": 0, "reused_tokens": 0,
                        "completion_tokens": 0, "workers": fig.get("workers", 1),
                        "peak_mb": round(run["peak_bytes"].get(name, 0) / 2 ** 20),
                        "db_mb": round(run["db_bytes"].get(name, 0) / 2 ** 20, 1)}
    for lstage, l in led.items():
        st = stages.get(STAGE_OF.get(lstage, lstage))
        if st is None:
            continue
        st["calls"] += l["calls"]
        st["evaluated_tokens"] += l["evaluated_tokens"]
        st["reused_tokens"] += l["reused_tokens"]
        st["completion_tokens"] += l["completion_tokens"]
    for st in stages.values():
        if not st["calls"]:
            continue
        p_rate, g_rate = rates["plan"] if st["workers"] > 1 else rates["one"]
        bound = st["evaluated_tokens"] / p_rate + st["completion_tokens"] / g_rate
        st["bound_seconds"] = round(bound, 1)
        st["wall_over_bound"] = round(st["seconds"] / bound, 2) if bound else None
    evaluated = sum(l["evaluated_tokens"] for l in led.values())
    completion = sum(l["completion_tokens"] for l in led.values())
    ex_completion = sum(led.get(k, {}).get("completion_tokens", 0) for k in EXTRACT_STAGES)
    return {"stages": stages, "evaluated_tokens": evaluated, "corpus_tokens": corpus_tokens,
            "evaluated_per_corpus_token": round(evaluated / max(1, corpus_tokens), 2),
            "completion_per_corpus_token": round(completion / max(1, corpus_tokens), 4),
            "extract_completion_per_corpus_token": round(ex_completion / max(1, corpus_tokens), 4),
            "ms_per_corpus_token": round(1000 * run["wall_seconds"] / max(1, corpus_tokens), 2)}


def index_snapshot(db: Path) -> dict:
    """Entities, relationships (by names), communities (member names per level) and reports of an index
    (:func:`slmgraph.tools.stats.content_snapshot`)."""
    snap = content_snapshot(db)
    return {k: snap[k] for k in ("entities", "relationships", "communities", "reports")}


def last_run_stages(db: Path) -> dict[str, float]:
    """Per-stage wall-clock seconds of the last index run recorded in ``stage_runs``."""
    st = Store(db, read_only=True)
    rows = st.con.execute("SELECT stage, seconds FROM stage_runs WHERE run_id = (SELECT run_id FROM stage_runs "
                          "WHERE stage = 'ingest' ORDER BY created_at DESC LIMIT 1) ORDER BY created_at").fetchall()
    workers = st.con.execute("SELECT stage, count(DISTINCT worker) FROM llm_calls GROUP BY 1 ORDER BY 1").fetchall()
    st.close()
    return {"stages": {k: round(v, 1) for k, v in rows}, "workers": dict(workers)}


def compare_dbs(local_db: Path, ray_db: Path, name: str, note: str = "") -> None:
    """Ray overhead and identity from two indexes of one corpus built with the same workers x threads
    (e.g. by tests/test_integration_ray.py); prints and writes ``benchmarks/results/NAME.md`` / ``.json``."""
    a, b = last_run_stages(local_db), last_run_stages(ray_db)
    sa, sb = index_snapshot(local_db), index_snapshot(ray_db)
    ta, tb = sum(a["stages"].values()), sum(b["stages"].values())
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "local_db": str(local_db),
           "ray_db": str(ray_db), "local": a, "ray": b, "stage_total": {"local": round(ta, 1), "ray": round(tb, 1)},
           "ray_overhead": round(tb / ta - 1, 3), "identical": {k: sa[k] == sb[k] for k in sa},
           "counts": {k: len(sa[k]) for k in sa}, "loadavg_now": benchkit.loadavg(), "note": note}
    lines = [f"# Local executor vs Ray on one corpus ({res['date']})", "",
             f"Indexes: `{local_db}` (local) and `{ray_db}` (Ray), same workers x threads. Load average when "
             f"compared: {res['loadavg_now']} on {physical_cores()} physical cores." + (f" {note}" if note else ""), "",
             "| stage | local s | Ray s |", "|---|---|---|"]
    for k in a["stages"]:
        lines.append(f"| {k} | {a['stages'][k]} | {b['stages'].get(k, '')} |")
    lines.append(f"| **all stages** | **{ta:.1f}** | **{tb:.1f}** |")
    same = ", ".join(f"{k} ({res['counts'][k]}) {'identical' if v else 'DIFFERENT'}"
                     for k, v in res["identical"].items())
    lines += ["", f"Ray overhead: **{res['ray_overhead']:+.1%}**. {same}.",
              f"Model processes per stage (distinct ledger workers): local {a['workers']}, Ray {b['workers']}."]
    print("\n".join(lines))
    benchkit.write_results(name, lines, res)


def _estimate_figures(est: dict) -> dict:
    """The figures kept of ``slmgraph estimate --json`` output."""
    return {"total_seconds": est["total_seconds"], "stages": {k: v["seconds"] for k, v in est["stages"].items()},
            "estimate_seconds": est["estimate_seconds"], "calibration": est["calibration"]}


def run_estimate(corpus: Path, index_flags: list[str]) -> dict:
    """``slmgraph estimate CORPUS --json`` in a fresh process (as a user runs it: nothing loaded yet,
    so the spaCy, torch and embedder loads it measures are the index run's too).

    Returns ``{total_seconds, stages: {stage: seconds}, estimate_seconds, calibration, loadavg}``.

    Raises:
        RuntimeError: the estimate failed (its stderr's last lines).
    """
    import subprocess
    import sys

    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "slmgraph.cli.main", "estimate", str(corpus), "--json", *index_flags],
                         capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"slmgraph estimate failed: {res.stderr[-2000:]}")
    return dict(_estimate_figures(json.loads(res.stdout)), estimate_seconds=round(time.perf_counter() - t0, 1),
                loadavg=benchkit.loadavg())


def estimate_against(name: str, from_file: Path | None = None, note: str = "") -> None:
    """Run the estimate on the corpus of the finished run ``benchmarks/results/NAME.json`` (or take the
    ``slmgraph estimate --json`` output saved in ``from_file``) and record its prediction and error
    against that run's wall-clock there (``.json`` and ``.md``)."""
    path = RESULTS / f"{name}.json"
    result = json.loads(path.read_text(encoding="utf-8"))
    if from_file is not None:
        est = dict(_estimate_figures(json.loads(from_file.read_text(encoding="utf-8"))), loadavg=note or "?")
    else:
        print(f"estimate of {result['input']} ...", flush=True)
        est = run_estimate(Path(result["input"]), result.get("index_flags", []))
    est["error"] = round(est["total_seconds"] / result["index"]["wall_seconds"] - 1, 3)
    est["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result["estimate"] = est
    lines = render(result)
    print("\n".join(lines))
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def shape_bounds_against(name: str, model: str | None) -> None:
    """Measure the raw speed at each model stage's call shape for the finished run
    ``benchmarks/results/NAME.json`` (its ledger and process plan, :func:`add_shape_bounds`) and record the
    bound ratios there (``.json`` and ``.md``). Run it on the machine and load of the run."""
    from types import SimpleNamespace

    path = RESULTS / f"{name}.json"
    result = json.loads(path.read_text(encoding="utf-8"))
    plan = SimpleNamespace(**result["plan"])
    result["raw_at_shape"] = add_shape_bounds(result["index"], result["ledger"], str(model or default_model_path()),
                                              plan, result.get("one_process_threads", result["cores"]))
    result["raw_at_shape_loadavg"] = benchkit.loadavg()
    lines = render(result)
    print("\n".join(lines))
    benchkit.write_results(name, lines, result)


def main() -> None:
    """Parse the arguments, measure, print the tables and write the results files."""
    import os
    import shutil

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", type=Path, default=PODCAST, help="folder to index (default: podcast sample)")
    ap.add_argument("--input", type=Path, default=None, help=argparse.SUPPRESS)  # older spelling of CORPUS
    ap.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "slmgraph-throughput.duckdb")
    ap.add_argument("--model", default=None)
    ap.add_argument("--executor", choices=("local", "ray"), default="local")
    ap.add_argument("--add", type=Path, default=None, help="a folder added on top afterwards (incremental run)")
    ap.add_argument("--compare-executors", action="store_true",
                    help="index CORPUS again with the other executor; overhead and identity of the indexes")
    ap.add_argument("--plan-units", type=int, default=0, help="text units per thread plan (0: skip)")
    ap.add_argument("--no-estimate", action="store_true")
    ap.add_argument("--name", default="index_throughput", help="results file name (benchmarks/results/NAME.md)")
    ap.add_argument("--compare-dbs", nargs=2, type=Path, metavar=("LOCAL_DB", "RAY_DB"),
                    help="only compare two finished indexes of the same corpus (local and Ray executor): "
                         "per-stage wall-clock of their last runs and identity; writes NAME.md/.json")
    ap.add_argument("--note", default="", help="a sentence on the corpus or run conditions, written into the results")
    ap.add_argument("--descriptions", choices=("auto", "model", "text"), default="auto",
                    help="as 'slmgraph index --descriptions' (model: the model writes JSON records)")
    ap.add_argument("--reports", choices=("auto", "model", "data"), default="auto",
                    help="as 'slmgraph index --reports' (model: the model writes the community reports)")
    ap.add_argument("--report-budget", type=float, default=Settings.report_budget,
                    help="as 'slmgraph index --report-budget' (model-written reports' prompt tokens per corpus token)")
    ap.add_argument("--workers", type=int, default=None, help="as 'slmgraph index --workers'")
    ap.add_argument("--threads", type=int, default=None, help="as 'slmgraph index --threads'")
    ap.add_argument("--shape-bounds-only", action="store_true",
                    help="only measure the raw speed at each model stage's call shape for the finished run "
                         "benchmarks/results/NAME.json and add the bound ratios at call shape")
    ap.add_argument("--estimate-only", action="store_true",
                    help="only run 'slmgraph estimate' on the corpus of benchmarks/results/NAME.json (a finished "
                         "run) and record its prediction and error there")
    ap.add_argument("--estimate-from", type=Path, default=None,
                    help="with --estimate-only: the saved output of 'slmgraph estimate CORPUS --json' instead of a "
                         "new run (--note: its load average)")
    args = ap.parse_args()
    if args.compare_dbs:
        compare_dbs(*args.compare_dbs, args.name, args.note)
        return
    if args.estimate_only:
        estimate_against(args.name, args.estimate_from, args.note)
        return
    if args.shape_bounds_only:
        shape_bounds_against(args.name, args.model)
        return
    corpus = (args.input or args.corpus).resolve()
    cores = physical_cores()
    settings = Settings(model_path=args.model, executor=args.executor, descriptions=args.descriptions,
                        reports=args.reports, workers=args.workers, report_budget=args.report_budget,
                        **({"n_threads": args.threads, "threads_explicit": True} if args.threads else {}))
    index_flags = [f"--descriptions={args.descriptions}", f"--reports={args.reports}",
                   f"--report-budget={args.report_budget:g}"] + \
        ([f"--workers={args.workers}"] if args.workers else []) + ([f"--threads={args.threads}"] if args.threads else [])
    if args.model:
        index_flags.append(f"--model={args.model}")
    path = str(args.model or default_model_path())
    result: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "input": str(corpus),
                    "cores": cores, "machine": benchkit.machine(),
                    "executor": args.executor, "loadavg_start": benchkit.loadavg(), "index_flags": index_flags,
                    "note": args.note}
    plan = plan_threads(cores, 10 ** 6, settings.workers, args.threads)
    result["plan"] = {"workers": plan.workers, "threads": plan.threads}
    # With --threads T the stages in the main process run with T threads too: their speed is measured so
    # (1 x cores under CPU contention oversubscribes and took 13 minutes to measure).
    one = args.threads or cores
    print(f"raw llama.cpp speed with {plan.workers} x {plan.threads} and 1 x {one} ...", flush=True)
    rates = {"plan": raw_speed(path, plan.workers, plan.threads), "one": raw_speed(path, 1, one)}
    result["one_process_threads"] = one
    result["raw"] = {k: {"prompt_tok_s": round(v[0], 1), "gen_tok_s": round(v[1], 1)} for k, v in rates.items()}

    model = load_model(args.model, settings.n_ctx, settings.n_threads, settings.seed)
    result["model"] = model.name
    if args.plan_units:
        result["plans"] = compare_plans(corpus, model, args.plan_units, cores)
    del model  # the index run loads its own, as 'slmgraph index' does
    if not args.no_estimate:
        print("estimate ...", flush=True)
        result["estimate"] = run_estimate(corpus, index_flags)

    # The indexed folder holds links to the corpus files, so that --add can put more beside them
    # and the same command indexes incrementally (same input root).
    work = Path(tempfile.mkdtemp(prefix="slmgraph-throughput-"))
    folder = work / "input"
    folder.mkdir()
    files = [corpus] if corpus.is_file() else sorted(p for p in corpus.rglob("*") if p.is_file())
    for f in files:
        dest = folder / "corpus" / (f.name if corpus.is_file() else f.relative_to(corpus))
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.symlink_to(f)
    for p in (args.db, Path(str(args.db) + ".wal")):
        if p.exists():
            p.unlink()
    print(f"indexing {corpus} into {args.db} ({args.executor} executor) ...", flush=True)
    run = indexed_run(folder, args.db, settings)
    led = ledger(args.db, run["out"]["run_id"])
    corpus_tokens = run["out"]["ingest"]["tokens"]
    result["index"] = {"wall_seconds": run["wall_seconds"], **stage_table(run, led, rates, corpus_tokens),
                       "db_mb": round(args.db.stat().st_size / 2 ** 20, 1),
                       "extract": {k: run["out"]["extract"][k] for k in ("extracted", "workers", "threads",
                                                                          "startup_seconds")},
                       "reports": {k: run["out"]["reports"].get(k) for k in (
                           "reports", "model_calls", "workers", "budget_tokens", "planned_tokens",
                           "description_tokens", "budget_scale")}}
    result["index"]["load_and_setup_seconds"] = round(
        run["wall_seconds"] - sum(s["seconds"] for s in result["index"]["stages"].values()), 1)
    result["ledger"] = led
    result["raw_at_shape"] = add_shape_bounds(result["index"], led, path, plan, one)
    if "estimate" in result:
        result["estimate"]["error"] = round(result["estimate"]["total_seconds"] / run["wall_seconds"] - 1, 3)
    result["index"]["loadavg_end"] = benchkit.loadavg()
    if not any(st["calls"] for st in result["index"]["stages"].values()):
        result["llm_free_limits"] = llm_free_limits(args.db, run["out"], settings, run["wall_seconds"])

    if args.compare_executors:
        other = "ray" if args.executor == "local" else "local"
        db2 = work / f"{other}.duckdb"
        print(f"indexing {corpus} again with the {other} executor ...", flush=True)
        run2 = indexed_run(folder, db2, dataclasses.replace(settings, executor=other))
        a, b = index_snapshot(args.db), index_snapshot(db2)
        walls = {args.executor: run["wall_seconds"], other: run2["wall_seconds"]}
        result["executors"] = {
            "wall_seconds": walls,
            "stage_seconds": {args.executor: {k: v["seconds"] for k, v in result["index"]["stages"].items()},
                              other: {k: v["seconds"] for k, v in stage_figures(run2["out"]).items()}},
            "ray_overhead": round(walls["ray"] / walls["local"] - 1, 3),
            "identical": {k: a[k] == b[k] for k in a}, "counts": {k: len(a[k]) for k in a}}

    if args.add is not None:
        for f in sorted(p for p in args.add.resolve().rglob("*") if p.is_file()):
            dest = folder / "added" / f.relative_to(args.add.resolve())
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.symlink_to(f)
        print(f"adding {args.add} on top (incremental) ...", flush=True)
        run3 = indexed_run(folder, args.db, settings)
        led3 = ledger(args.db, run3["out"]["run_id"])
        result["incremental"] = {"added": str(args.add), "wall_seconds": run3["wall_seconds"],
                                 **stage_table(run3, led3, rates, run3["out"]["ingest"]["tokens"]),
                                 "added_units": run3["out"]["ingest"]["added_units"],
                                 "extracted": run3["out"]["extract"]["extracted"],
                                 "reused": run3["out"]["extract"]["reused"],
                                 "db_mb": round(args.db.stat().st_size / 2 ** 20, 1)}
    shutil.rmtree(work, ignore_errors=True)
    result["loadavg_end"] = benchkit.loadavg()
    result["cpu_contention"] = f"load average {result['loadavg_start']} at the start, {result['loadavg_end']} at " \
                               f"the end, on {os.cpu_count()} CPUs"
    lines = render(result)
    print("\n".join(lines))
    benchkit.write_results(args.name, lines, result)


#: Items of each LLM-free stage for its items/s: ``(figure of run_index's stage output, unit)``.
STAGE_ITEMS = {"ingest": ("text_units", "text units"), "extract": ("extracted", "text units"),
               "graph": ("entities", "entities"), "communities": ("per_level", "communities"),
               "reports": ("reports", "reports"), "embed": ("word_pieces", "word pieces")}


def llm_free_limits(db: Path, out: dict, settings: Settings, wall: float, sample: int = 96) -> dict:
    """Each stage's seconds, items/s and share of the build, and for extraction and embedding their raw
    limit on this machine, measured now on the built index's own text units: spaCy's ``nlp.pipe`` over
    ``sample`` text units in as many processes at once as the extract stage's workers (their characters per CPU
    second added, :func:`raw_spacy_cpu`; the extract stage's limit is the corpus characters at that rate) and
    the embedder encoding ``sample`` text units longest first with every core (word pieces/s; the embed
    stage's limit is its word pieces at that rate). Ratio = stage seconds / limit."""
    import duckdb

    from slmgraph.indexing.stages.embed import Embedder, embed_items, window_keys
    from slmgraph.indexing.stages.extract import NLP_BATCH
    from slmgraph.indexing.stages.ner import pipeline_for
    from slmgraph.text.markdown import mask_markup

    con = duckdb.connect(str(db), read_only=True)
    texts = [t for (t,) in con.execute("SELECT text FROM text_units ORDER BY chunk_id").fetchall()]
    con.close()
    picked = texts[::max(1, len(texts) // sample)][:sample]
    raw: dict[str, dict] = {}
    nlp, _ = pipeline_for(settings.ner_model)
    if nlp is not None:
        masked = [mask_markup(t) for t in picked]
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in nlp.pipe(masked, batch_size=NLP_BATCH):
            pass
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        # spaCy runs on one core per process: the stage's worker processes each parse the sample at the same
        # time, in the stage's batches, and their rates per CPU second add up (two parsers at once share the
        # caches and the memory bus, which one alone does not).
        workers = max(1, int(out.get("extract", {}).get("workers") or 1))
        chars = sum(map(len, masked))
        cpus = raw_spacy_cpu(settings.ner_model, masked, workers, NLP_BATCH) if workers > 1 else [cpu]
        rate = sum(chars / max(c, 1e-9) for c in cpus)
        raw["extract"] = {"what": f"spaCy nlp.pipe in {workers} process(es) at once, batches of {NLP_BATCH}, "
                                  "characters/s (the processes' rates per CPU second added)",
                          "rate": round(rate), "cpu_s": round(sum(cpus) / len(cpus), 2),
                          "cpu_s_each": [round(c, 2) for c in cpus], "wall_s": round(dt, 2), "workers": workers,
                          "one_process_cpu_s": round(cpu, 2), "one_process_rate_x_workers": round(chars / cpu * workers),
                          "limit_seconds": round(sum(map(len, texts)) / rate, 1)}
    emb = Embedder(batch_size=settings.embed_batch_size, threads=settings.n_threads,
                   precision=settings.embed_precision)
    _, lengths = window_keys(emb, picked)
    embed_items(emb, picked[:8], lengths[:8])  # warm-up
    t0, c0 = time.perf_counter(), time.process_time()
    embed_items(emb, picked, lengths)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    rate = sum(lengths) / dt
    raw["embed"] = {"what": f"embedder, {settings.n_threads} threads, word pieces/s", "rate": round(rate),
                    "cpu_s": round(cpu, 2), "wall_s": round(dt, 2),
                    "limit_seconds": round(out.get("embed", {}).get("word_pieces", 0) / rate, 1)}
    rows = {}
    figs = stage_figures(out)
    for name, (key, unit) in STAGE_ITEMS.items():
        fig = figs.get(name)
        if fig is None:
            continue
        items = fig.get(key) or 0
        items = sum(items.values()) if isinstance(items, dict) else items  # communities: per level
        row = {"seconds": fig["seconds"], "items": items, "unit": unit,
               "items_per_s": round(items / fig["seconds"], 1) if fig["seconds"] else None,
               "share": round(fig["seconds"] / wall, 3) if wall else None}
        if name in raw:
            row["limit_seconds"] = raw[name]["limit_seconds"]
            row["ratio"] = round(fig["seconds"] / raw[name]["limit_seconds"], 2) if raw[name]["limit_seconds"] else None
        rows[name] = row
    return {"raw": raw, "stages": rows, "embed_ahead": out.get("embed_ahead")}


def _limit_rows(lim: dict) -> list[str]:
    lines = ["## LLM-free stages against their raw limit (measured in the same run)", "",
             "| stage | seconds | items | items/s | share of build | raw limit s | stage / limit |", "|---|---|---|---|---|---|---|"]
    for name, r in lim["stages"].items():
        lines.append(f"| {name} | {r['seconds']} | {r['items']:,} {r['unit']} | {r['items_per_s']} | "
                     f"{r['share']:.0%} | {r.get('limit_seconds', '')} | {r.get('ratio', '') or ''} |")
    lines.append("")
    lines += [f"Raw {k}: {v['what']} {v['rate']:,} ({v['cpu_s']} CPU s for the sample"
              + (f" per process; one process alone {v['one_process_cpu_s']} CPU s, whose rate x {v['workers']} is "
                 f"{v['one_process_rate_x_workers']:,}" if "one_process_cpu_s" in v else "") + ")."
              for k, v in lim["raw"].items()]
    if lim.get("embed_ahead"):
        lines.append(f"Not a stage: the embed-ahead thread encoded {lim['embed_ahead']['texts']} texts and committed "
                     f"{lim['embed_ahead']['rows']} rows in {lim['embed_ahead']['thread_seconds']} s on its thread, "
                     "beside the stages that leave a core idle (after extraction when its workers take every core; "
                     "the embed stage's word pieces include its texts, so its ratio can fall below 1).")
    return lines + [""]


def _stage_rows(ix: dict) -> list[str]:
    lines = ["| stage | wall s | model calls | evaluated prompt tok | per corpus tok | reused | completion tok | "
             "bound s | wall / bound | bound at call shape s | wall / shape bound | peak PSS MB | DuckDB MB at end |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in ix["stages"].items():
        reuse = s["reused_tokens"] / max(1, s["reused_tokens"] + s["evaluated_tokens"])
        lines.append(f"| {name} | {s['seconds']} | {s['calls']} | {s['evaluated_tokens']:,} | "
                     f"{s['evaluated_tokens'] / max(1, ix['corpus_tokens']):.2f} | "
                     f"{reuse:.0%} | {s['completion_tokens']:,} | {s.get('bound_seconds', '')} | "
                     f"{s.get('wall_over_bound', '') or ''} | {s.get('shape_bound_seconds', '')} | "
                     f"{s.get('wall_over_shape_bound', '') or ''} | {s['peak_mb']} | {s['db_mb']} |")
    lines += ["", f"Whole build: {ix['wall_seconds']} s for {ix['corpus_tokens']:,} corpus tokens = "
                  f"**{ix['ms_per_corpus_token']} ms per corpus token**; prompt tokens evaluated per corpus "
                  f"token **{ix['evaluated_per_corpus_token']}** ({ix['evaluated_tokens']:,} evaluated); completion "
                  f"tokens per corpus token {ix['completion_per_corpus_token']} (extraction stages: "
                  f"{ix['extract_completion_per_corpus_token']})."]
    return lines


def render(r: dict) -> list[str]:
    """The results as markdown lines."""
    raw = r["raw"]
    lines = [f"# Index throughput: {r['model']} on {r['input']}", "",
             f"{r['date']}, {r['machine']}, {r['executor']} executor. Run conditions: {r['cpu_contention']}"
             + (" -- **timings taken under CPU contention**" if float(r['loadavg_start'].split()[0]) > r['cores']
                else "") + ".", "",
             *([r["note"], ""] if r.get("note") else []),
             f"Index flags: `{' '.join(r.get('index_flags', [])) or '(defaults)'}`. "
             f"Thread plan: {r['plan']['workers']} worker(s) x {r['plan']['threads']} thread(s). Raw llama.cpp "
             f"speed (no grammar): with that plan prompt {raw['plan']['prompt_tok_s']} tok/s, generation "
             f"{raw['plan']['gen_tok_s']} tok/s; one process with {r.get('one_process_threads', r['cores'])} thread(s) prompt "
             f"{raw['one']['prompt_tok_s']}, "
             f"generation {raw['one']['gen_tok_s']} tok/s. Bound = evaluated prompt tokens / prompt speed + "
             "completion tokens / generation speed, with the speed of the stage's process plan.", ""]
    if r.get("plans"):
        lines += ["## Thread plans (same text units)", "",
                  "| workers x threads | units | seconds | startup s | units/s | units/s after startup |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {p['workers']} x {p['threads']} | {p['units']} | {p['seconds']} | {p['startup_seconds']} | "
                  f"{p['units_per_s']} | {p['units_per_s_after_startup']} |" for p in r["plans"]]
        lines.append("")
    ix = r["index"]
    lines += ["## The index run", ""] + _stage_rows(ix)
    if r.get("llm_free_limits"):
        lines += [""] + _limit_rows(r["llm_free_limits"])
    if r.get("raw_at_shape"):
        la = f" (load average {r['raw_at_shape_loadavg']})" if r.get("raw_at_shape_loadavg") else ""
        lines += ["", f"Bound at call shape: the raw speed measured again after the run{la}, with the stage's process "
                  "plan, at the stage's mean call shape (cached prefix, evaluated prompt, completion tokens; "
                  "arg-max, no grammar): " + "; ".join(
                      f"{k} {tuple(v['shape'])}: prompt {v['prompt_tok_s']} tok/s, generation {v['gen_tok_s']} tok/s"
                      for k, v in r["raw_at_shape"].items()) + ".", ""]
    lines += [f"Model load and setup outside the stages: {ix['load_and_setup_seconds']} s; DuckDB file "
              f"{ix['db_mb']} MB.", ""]
    if "estimate" in r:
        e = r["estimate"]
        when = f" (run {e['date']}, after the index run)" if e.get("date") else " (run before the index run)"
        lines += [f"`slmgraph estimate` predicted {e['total_seconds']} s (took {e['estimate_seconds']} s, load "
                  f"average {e.get('loadavg', '?')}){when}; real {ix['wall_seconds']} s: error "
                  f"**{e['error']:+.0%}**.", "", "| stage | predicted s | real s |", "|---|---|---|"]
        real = dict(ix["stages"], **{"load model": {"seconds": ix["load_and_setup_seconds"]}})
        for k, v in e["stages"].items():
            lines.append(f"| {k} | {v} | {real.get(k, {}).get('seconds', '')} |")
        cal = e.get("calibration", {}).get("llm_free")
        if cal:
            lines += ["", f"Calibration: {cal['units']} text units ({cal['tokens']:,} tokens, 1/{cal['scale_tokens']} "
                          f"of the corpus) through every stage; Heaps exponents: entities {cal['heaps_beta_entities']}, "
                          f"relationships {cal['heaps_beta_relationships']}; predicted {cal['entities_predicted']:,} "
                          f"entities, {cal['relationships_predicted']:,} relationships, {cal['reports_predicted']:,} "
                          f"reports."]
        lines.append("")
    if "executors" in r:
        x = r["executors"]
        lines += ["## Local executor vs Ray (same workers x threads)", "",
                  "| executor | wall s | " + " | ".join(x["stage_seconds"]["local"]) + " |",
                  "|---|---|" + "---|" * len(x["stage_seconds"]["local"])]
        for ex in ("local", "ray"):
            lines.append(f"| {ex} | {x['wall_seconds'][ex]} | "
                         + " | ".join(str(x["stage_seconds"][ex].get(k, "")) for k in x["stage_seconds"]["local"])
                         + " |")
        same = ", ".join(f"{k} ({x['counts'][k]}) {'identical' if v else 'DIFFERENT'}"
                         for k, v in x["identical"].items())
        lines += ["", f"Ray overhead: **{x['ray_overhead']:+.1%}** of the local wall-clock. {same}.", ""]
    if "incremental" in r:
        inc = r["incremental"]
        lines += [f"## Incremental: {inc['added']} added on top", "",
                  f"{inc['added_units']} new text units ({inc['extracted']} extracted, {inc['reused']} reused): "
                  f"{inc['wall_seconds']} s in all, {inc['wall_seconds'] / max(1, inc['added_units']):.1f} s per added "
                  f"text unit (graph, communities, reports and embeddings are rebuilt; unchanged model calls come "
                  f"from the cache); DuckDB file {inc['db_mb']} MB after. The per-corpus-token figures below are over "
                  f"the whole corpus after the addition.", ""] + _stage_rows(inc)
    return lines


if __name__ == "__main__":
    main()
