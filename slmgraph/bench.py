"""``slmgraph bench``: small GGUF models compared on the same corpus, in tokens and wall-clock.

For each model (like llama.cpp's ``llama-bench``, but on slmgraph's own workload):

1. **Raw speed** as llama.cpp runs it here: prompt evaluation and generation tokens/s
   (:func:`raw_rates`: a 600-token slice of the sample after a cached fixed prefix, then 96
   generated tokens, three times; no grammar). ``benchmarks/index_throughput.py`` measures
   the same with its worker processes through :func:`raw_rates`.
2. **The index run** of the corpus (default: the bundled sample ``dulce.txt``) into a fresh
   index, with default settings: per stage, from the ``llm_calls`` ledger (:func:`ledger`),
   model calls, evaluated prompt tokens, completion tokens, model seconds, and the ratio of
   the model seconds to the raw bound (evaluated / prompt tok/s + completion / generation
   tok/s): how far slmgraph's calls (grammar, short prompts, KV reuse) are from raw llama.cpp.

Writes one table (stdout), ``bench.json`` and ``bench.png`` (matplotlib, when installed)
into ``--out``. Timings are wall-clock on a shared machine: the JSON records the load average.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Callable

from .config import Settings, physical_cores
from .errors import UserError

#: Stage order of the table (ledger stage names).
STAGE_ORDER = ("extract", "glean", "claims", "summarize", "report", "map", "reduce")


def raw_rates(model, repeats: int = 3) -> tuple[float, float]:
    """Raw (prompt tokens/s, generation tokens/s) of a loaded llama.cpp model on the bundled sample.

    Prompt: 600 tokens of ``dulce.txt`` evaluated after a cached system prefix; generation: up to
    96 greedy tokens with no grammar; summed over ``repeats`` runs (Source: the measurement of
    ``benchmarks/index_throughput.py``, moved here so both use it).
    """
    from .samples import DULCE

    toks = model.tokenize(DULCE.read_text(encoding="utf-8"))[:600]
    fixed, _ = model.prompt_tokens(model.render("You are a helpful assistant.", "x"))
    model.complete(fixed, toks[:8], schema=None, max_tokens=1)  # warm up, cache the fixed part
    p_tok = p_sec = g_tok = g_sec = 0.0
    for i in range(repeats):
        g = model.complete(fixed, toks[i * 10:] + model.tokenize("\n\nContinue the story:\n"), schema=None,
                           max_tokens=96)
        p_tok += g.prompt_tokens - g.cached_tokens
        p_sec += g.prompt_seconds
        g_tok += g.completion_tokens
        g_sec += g.seconds - g.prompt_seconds
    return p_tok / p_sec if p_sec else 0.0, g_tok / g_sec if g_sec else 0.0


def ledger(db: str | Path, run_id: str) -> dict:
    """Per-stage model figures of one run from the ``llm_calls`` ledger.

    Returns:
        ``{stage: {calls, prompt_tokens, reused_tokens, evaluated_tokens, completion_tokens,
        model_seconds, workers}}`` in call order (tokens in the model's tokens, seconds wall-clock).
    """
    from .store import Store

    st = Store(db, read_only=True)
    try:
        rows = st.con.execute(
            "SELECT stage, count(*), sum(prompt_tokens), sum(cached_tokens), sum(completion_tokens), sum(seconds), "
            "count(DISTINCT worker) FROM llm_calls WHERE run_id = ? GROUP BY stage ORDER BY min(call_id)",
            [run_id]).fetchall()
    finally:
        st.close()
    return {r[0]: {"calls": r[1], "prompt_tokens": int(r[2] or 0), "reused_tokens": int(r[3] or 0),
                   "evaluated_tokens": int((r[2] or 0) - (r[3] or 0)), "completion_tokens": int(r[4] or 0),
                   "model_seconds": round(r[5] or 0, 2), "workers": r[6]} for r in rows}


def bench_model(path: str | None, corpus: str | Path, settings: Settings, say: Callable[[str], None],
                load: Callable | None = None) -> dict:
    """Measure one model: raw rates, then an index run of ``corpus`` with per-stage ledger figures.

    Args:
        path: GGUF file (None = the bundled model).
        load: ``(path, settings) -> model`` (tests pass the fake); None = :func:`slmgraph.backend.load_model`.

    Returns:
        ``{model, n_params, raw: {prompt_tok_s, gen_tok_s}, stages: {stage: {...ledger, raw_bound_seconds,
        ratio_to_raw}}, stage_wall_seconds, index_seconds, entities, relationships, reports}``.
    """
    import dataclasses

    from .pipeline import run_index
    from .store import Store

    settings = dataclasses.replace(settings, model_path=path)  # extraction workers load the same GGUF
    if load is None:
        from .backend import load_model

        def load(p, s):
            return load_model(p, s.n_ctx, s.n_threads, s.seed, s.threads_explicit)

    model = load(path, settings)
    say(f"bench: {model.name}: raw prompt and generation speed ...")
    p_rate, g_rate = raw_rates(model)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        say(f"bench: {model.name}: indexing {corpus} ...")
        t0 = time.perf_counter()
        out = run_index(corpus, db, settings, progress=False, model=model, say=lambda m: None,
                        model_factory=None)
        wall = time.perf_counter() - t0
        led = ledger(db, out["run_id"])
        st = Store(db, read_only=True)
        try:
            counts = {t: st.count(t) for t in ("entities", "relationships", "community_reports")}
        finally:
            st.close()
    for row in led.values():
        bound = (row["evaluated_tokens"] / p_rate if p_rate else 0) + \
                (row["completion_tokens"] / g_rate if g_rate else 0)
        row["raw_bound_seconds"] = round(bound, 2)
        row["ratio_to_raw"] = round(row["model_seconds"] / bound, 2) if bound else None
    stages = {k: led[k] for k in sorted(led, key=lambda s: (STAGE_ORDER.index(s) if s in STAGE_ORDER else 99, s))}
    return {"model": model.name, "n_params": int(getattr(model, "n_params", 0) or 0),
            "threads": getattr(model, "n_threads", None),
            "raw": {"prompt_tok_s": round(p_rate, 1), "gen_tok_s": round(g_rate, 1)},
            "stages": stages,
            "stage_wall_seconds": {k: v["seconds"] for k, v in out.items() if isinstance(v, dict) and "seconds" in v},
            "index_seconds": round(wall, 1), "entities": counts["entities"],
            "relationships": counts["relationships"], "reports": counts["community_reports"]}


def run_bench(models: list[str | None], corpus: str | Path | None, out: str | Path, settings: Settings,
              say: Callable[[str], None] = print, load: Callable | None = None) -> dict:
    """``slmgraph bench``: every model through the same corpus; writes ``bench.json`` and ``bench.png``.

    Args:
        models: GGUF paths (None = the bundled model), measured one after another.
        corpus: folder or file (None = the bundled sample).

    Returns:
        ``{date, machine, load_average, corpus, models: [bench_model(...)], files: [...]}``.

    Raises:
        UserError: a model file is missing, the corpus is unreadable, ``out`` is not a folder.
    """
    from .ingest import read_documents
    from .samples import DULCE

    corpus = Path(corpus) if corpus else DULCE
    read_documents(corpus)  # a bad corpus fails before any model loads
    for m in models:
        if m is not None and not Path(m).is_file():
            raise UserError(f"--models: {m} is not a file: pass GGUF files separated by commas")
    outdir = Path(out)
    if outdir.exists() and not outdir.is_dir():
        raise UserError(f"--out {outdir} is a file: pass a folder")
    outdir.mkdir(parents=True, exist_ok=True)
    result = {"date": time.strftime("%Y-%m-%d %H:%M"), "corpus": str(corpus),
              "machine": f"{platform.machine()}, {physical_cores()} physical cores",
              "load_average_before": [round(x, 2) for x in os.getloadavg()], "models": []}
    for m in models:
        result["models"].append(bench_model(m, corpus, settings, say, load))
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    files = [outdir / "bench.json"]
    (outdir / "bench.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    png = chart(result, outdir / "bench.png")
    if png:
        files.append(png)
    result["files"] = [str(f) for f in files]
    return result


def render(result: dict) -> str:
    """The bench result as one plain-text table (one row per model and stage)."""
    head = ["model", "stage", "calls", "evaluated tok", "completion tok", "model s", "raw bound s", "x raw"]
    rows = []
    for m in result["models"]:
        rows.append([m["model"] + (f" ({m['threads']} thr)" if m.get("threads") else ""), "raw tok/s", "", f"{m['raw']['prompt_tok_s']:.0f}/s", f"{m['raw']['gen_tok_s']:.0f}/s",
                     "", "", ""])
        for stage, r in m["stages"].items():
            rows.append(["", stage, r["calls"], r["evaluated_tokens"], r["completion_tokens"],
                         f"{r['model_seconds']:.1f}", f"{r['raw_bound_seconds']:.1f}",
                         "" if r["ratio_to_raw"] is None else f"{r['ratio_to_raw']:.2f}"])
        rows.append(["", "index (wall)", "", "", "", f"{m['index_seconds']:.1f}", "", ""])
    cells = [head] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in cells]
    la = result.get("load_average_before")
    lines.append(f"\n{result['corpus']}; {result['machine']}; load average before {la} "
                 "(other processes on the cores slow every figure)")
    return "\n".join(lines)


def chart(result: dict, path: Path) -> Path | None:
    """A PNG with two panels: raw tokens/s per model, and model seconds per stage per model.
    Returns None when matplotlib is not installed (the table and JSON are still written)."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = [m["model"] for m in result["models"]]
    stages = [s for s in STAGE_ORDER if any(s in m["stages"] for m in result["models"])]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4), dpi=100)
    w = 0.8 / max(1, len(models))
    for i, m in enumerate(result["models"]):
        a1.bar([x + i * w for x in range(2)], [m["raw"]["prompt_tok_s"], m["raw"]["gen_tok_s"]], w, label=m["model"])
        a2.bar([x + i * w for x in range(len(stages))],
               [m["stages"].get(s, {}).get("model_seconds", 0) for s in stages], w, label=m["model"])
    a1.set_xticks([x + w * (len(models) - 1) / 2 for x in range(2)], ["prompt", "generation"])
    a1.set_ylabel("tokens/s (raw llama.cpp)")
    a2.set_xticks([x + w * (len(models) - 1) / 2 for x in range(len(stages))], stages)
    a2.set_ylabel("model seconds (index run)")
    a1.legend(fontsize=8)
    fig.suptitle(f"slmgraph bench on {Path(result['corpus']).name}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
