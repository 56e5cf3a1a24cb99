"""``slmgraph estimate``: predict an index run's tokens and wall-clock before running it.

Indexing a corpus on a CPU takes hours; this predicts how many, from a short
calibration run of the chosen model on this machine, with nothing written to
the user's index. Everything runs in a temporary DuckDB file:

1. **Ingest** the whole corpus (real; gives every text unit's tokens) and run
   the candidate pass on every text unit (real; the extraction output grows
   with the number of candidate names).
2. **Extraction calibration**: ``sample`` text units spread evenly over the
   corpus are extracted for real, with the same thread plan and worker
   processes as ``slmgraph index``. From their ledger rows: prompt tok/s,
   generation tok/s, prompt overhead per call and completion tokens as a
   linear function of the candidate count. Each text unit's model time is
   then predicted from its own tokens and candidates, and the calibration's
   wall-clock is scaled by predicted total / predicted sample time.
3. **Reports**: the LLM-free extractor (:func:`slmgraph.extract.extract_nlp`)
   gives a proxy graph of the whole corpus; the real graph, community and
   report stages run on it with a dry-run model that counts each report
   prompt's tokens instead of generating. Up to four of those prompts (at
   the 25th-90th percentile of size) are then run for real to measure
   completion tokens and rates. The proxy's report count
   is scaled by (entities the model kept / candidates) on the sample.
4. **Embeddings**: the embedder is loaded and times a batch of entity
   descriptions and text units.

The prediction is an estimate, not a bound: ``benchmarks/index_throughput.py``
compares it with a real run (issue 4: within +-30 %).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from .communities import run_communities
from .config import Settings
from .extract import model_writes, run_extraction, use_model_descriptions
from .graph import build_graph
from .ingest import ingest, read_documents
from .client import DEADLINE_REPORT_S, Choice, Generation, ModelClient, Prompt
from .names import candidate_names
from .prompting import Prompts
from .reports import report_schema, run_reports
from .store import Store, new_run_id


class DryRunModel:
    """A :class:`slmgraph.backend.Model` that records prompts instead of generating.

    Tokenizes and renders with the real model (so prompt sizes are exact);
    ``complete`` returns ``canned`` text at once and keeps ``(fixed, rest)``
    of every call in :attr:`prompts` for replay. ``score_options`` records
    the prompt too and gives every option the same log-probability (0.0);
    ``follow_up`` answers the first choice or ``canned``.
    """

    def __init__(self, model, canned: str):
        self.model = model
        self.canned = canned
        self.prompts: list[tuple[list[int], list[int]]] = []
        self.name = model.name
        self.fingerprint = "dry-run:" + model.fingerprint
        self.n_ctx = model.n_ctx
        self.n_params = model.n_params
        self.path = None  #: no file: extraction never starts worker processes for a dry run
        self.n_threads = model.n_threads
        self._fixed: list[int] | None = None

    def tokenize(self, text: str) -> list[int]:
        """As the real model."""
        return self.model.tokenize(text)

    def detokenize(self, tokens: list[int]) -> str:
        """As the real model."""
        return self.model.detokenize(tokens)

    def render(self, system: str, user: str) -> Prompt:
        """As the real model."""
        return self.model.render(system, user)

    def prompt_tokens(self, prompt: Prompt) -> tuple[list[int], list[int]]:
        """As the real model."""
        return self.model.prompt_tokens(prompt)

    def complete(self, fixed, rest, *, schema, max_tokens, deadline_s=None, on_text=None) -> Generation:
        """Record the prompt; return the canned text (prefix reuse as the real model would have it)."""
        self.prompts.append((list(fixed), list(rest)))
        reused = len(fixed) if self._fixed == list(fixed) else 0
        self._fixed = list(fixed)
        return Generation(self.canned, len(fixed) + len(rest), reused, 0, 0.0, "stop")

    def score_options(self, fixed: list[int], rest: list[int], options: list[str]) -> Choice:
        """Record the prompt; every option gets log-probability 0.0 (no preference)."""
        self.prompts.append((list(fixed), list(rest)))
        reused = len(fixed) if self._fixed == list(fixed) else 0
        self._fixed = list(fixed)
        return Choice(options=list(options), logprobs=[0.0] * len(options),
                      prompt_tokens=len(fixed) + len(rest), cached_tokens=reused)

    def continuation(self, user: str) -> list[int]:
        """As the real model."""
        return self.model.continuation(user)

    def follow_up(self, history, extra, *, schema=None, choices=None, max_tokens=1, deadline_s=None) -> Generation:
        """Return the first choice (or ``canned``); the whole history counts as reused."""
        n_hist = sum(len(t) for t, _ in history)
        return Generation(choices[0] if choices else self.canned, n_hist + len(extra), n_hist, 0, 0.0, "stop")


_CANNED_REPORT = ('{"title": "Community", "summary": "A community of related entities.", "rating": 5, '
                  '"rating_explanation": "Estimate.", "findings": [{"summary": "Finding", "explanation": "Text."}]}')


#: Why a text unit has no candidate names (the candidate pass looks for capitalised words).
NO_CANDIDATES = ("the candidate pass finds names as capitalised words, and the text has none outside sentence "
                 "starts: lowercase prose, only numbers, or a script without capital letters such as Chinese")


def _even_sample(items: list, k: int) -> list:
    """``k`` items spread evenly over ``items`` (all of them if ``k >= len``)."""
    if k >= len(items):
        return list(items)
    if k <= 1:
        return [items[len(items) // 2]]
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)]


def _fit_line(x: list[float], y: list[float]) -> tuple[float, float]:
    """Least-squares ``y = a + b x`` with ``a, b >= 0`` (a constant when x does not vary)."""
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    if len(xa) < 2 or np.ptp(xa) == 0:
        return float(ya.mean()) if len(ya) else 0.0, 0.0
    b, a = np.polyfit(xa, ya, 1)
    if b < 0:
        return float(ya.mean()), 0.0
    if a < 0:
        return 0.0, float((xa * ya).sum() / (xa * xa).sum())
    return float(a), float(b)


def estimate(input_path: str | Path, settings: Settings, model, *, sample: int = 8, progress: bool = True,
             model_factory: Callable | None = None, embedder_factory: Callable | None = None,
             say: Callable[[str], None] = print) -> dict:
    """Predict the tokens and wall-clock of ``slmgraph index input_path`` on this machine.

    Args:
        settings: the settings the index run would use (extractor, thread plan, ...).
        model: the loaded model (its load time is measured by the caller).
        sample: text units extracted for real in the calibration (more = slower, closer).
        model_factory: for extraction worker processes (tests); None loads the GGUF.
        embedder_factory: ``() -> Embedder``; None = the bundled all-MiniLM-L6-v2.

    Returns:
        dict with ``stages`` (per stage: ``calls``, ``prompt_tokens`` evaluated,
        ``completion_tokens``, ``seconds`` predicted), ``total_seconds``,
        ``corpus`` (documents, tokens, text units, candidates), ``calibration``
        (measured rates and what was run), ``notes`` (stages the settings add
        that are not estimated) and ``estimate_seconds`` (the cost
        of this estimate).

    Raises:
        UserError: bad input folder (as ``slmgraph index``).
    """
    t_all = time.perf_counter()
    docs, warnings = read_documents(input_path)
    for w in warnings:
        say(f"warning: {w}")
    prompts = Prompts(settings.prompts_dir)
    stages: dict[str, dict] = {}
    calib: dict = {}
    with tempfile.TemporaryDirectory(prefix="slmgraph-estimate-") as tmp:
        store = Store(Path(tmp) / "estimate.duckdb", create=True)
        try:
            t0 = time.perf_counter()
            ing = ingest(store, docs, model.tokenize, model.detokenize, settings.chunk_size, settings.chunk_overlap)
            stages["ingest"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                "seconds": time.perf_counter() - t0}
            units = store.con.execute("SELECT chunk_id, text, n_tokens FROM text_units ORDER BY doc_id, ord").fetchall()
            n_cand = {cid: len(candidate_names(text, settings.max_candidates)) for cid, text, _ in units}
            n_tok = {cid: n for cid, _, n in units}
            corpus = {"documents": ing.documents, "tokens": ing.tokens, "text_units": len(units),
                      "candidates": sum(n_cand.values()),
                      "units_with_candidates": sum(1 for v in n_cand.values() if v)}
            ratio = 1.0
            from .extract import uses_model

            if uses_model(settings, getattr(model, "n_params", None)):  # else: the LLM-free route, run in full
                ratio = _calibrate_extraction(store, model, prompts, settings, units, n_cand, n_tok, sample,
                                              progress, model_factory, say, stages, calib)
            else:
                t0 = time.perf_counter()
                run_extraction(store, None, prompts, settings, progress=False)
                stages["extract"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                     "seconds": time.perf_counter() - t0}
            _estimate_reports(store, model, prompts, settings, ratio, stages, calib, say)
            _estimate_embeddings(store, settings, ratio, embedder_factory, stages, calib, say)
        finally:
            store.close()
    notes = []
    if settings.claims:
        notes.append("--claims: the claims stage (one more call per text unit with entities) is not included")
    if model_writes(settings.summaries, model.n_params):
        notes.append("model-written element summaries (one call per entity or relationship with several "
                     "descriptions) are not included")
    for st in stages.values():
        st["seconds"] = round(st["seconds"], 1)
    total = sum(st["seconds"] for st in stages.values())
    return {"stages": stages, "total_seconds": round(total, 1), "corpus": corpus, "calibration": calib,
            "notes": notes, "estimate_seconds": round(time.perf_counter() - t_all, 1)}


def _calibrate_extraction(store, model, prompts, settings, units, n_cand, n_tok, sample, progress, model_factory,
                          say, stages, calib) -> float:
    """Extract the calibration sample for real; fill ``stages['extract']``; return the entity keep ratio."""
    if not settings.constrain_names:
        # Free names: every text unit gets a call, whatever its candidates.
        n_cand = {cid: max(1, n) for cid, n in n_cand.items()}
    pool = [cid for cid, _, _ in units if n_cand[cid]]
    if not pool:
        # Nothing for the model to extract: no call, so no rate is measured (none is invented).
        stages["extract"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0}
        calib["extract"] = {"units": 0, "why": NO_CANDIDATES}
        return 1.0
    picked = _even_sample(pool, sample)
    client = ModelClient(model, store, new_run_id())
    say(f"estimate: extracting {len(picked)} of {len(units)} text units to calibrate")
    t0 = time.perf_counter()
    st = run_extraction(store, client, prompts, settings, progress, model_factory=model_factory, say=say,
                        only=set(picked))
    wall = time.perf_counter() - t0
    startup = st.startup_seconds
    calls = store.con.execute("SELECT prompt_tokens, cached_tokens, completion_tokens, seconds, "
                              "coalesce(prompt_seconds, 0) FROM llm_calls ORDER BY call_id").fetchall()
    evaluated = sum(p - c for p, c, _, _, _ in calls)
    compl = sum(k for _, _, k, _, _ in calls)
    p_sec = sum(ps for *_, ps in calls)
    g_sec = sum(s - ps for _, _, _, s, ps in calls)
    prompt_rate = evaluated / p_sec if p_sec > 0 else 400.0
    gen_rate = compl / g_sec if g_sec > 0 else 50.0
    per_unit = store.con.execute(
        "SELECT chunk_id, n_entities, completion_tokens FROM extractions WHERE chunk_id IN (SELECT unnest(?))",
        [picked]).fetchall()
    kept = sum(n for _, n, _ in per_unit)
    cands = sum(n_cand[c] for c, _, _ in per_unit)
    ratio = kept / cands if cands else 1.0
    # Completion tokens per text unit as a line in its candidate count.
    n_calls_per_unit = len(calls) / max(1, len(picked))
    a, b = _fit_line([n_cand[c] for c, _, _ in per_unit], [k or 0 for _, _, k in per_unit])
    # Prompt tokens a text unit pays beyond its own (template, instructions,
    # candidate list): the median, so the units that also evaluated the fixed
    # prefix (one per worker) do not count.
    ev = store.con.execute("SELECT chunk_id, evaluated_tokens FROM extractions WHERE chunk_id IN (SELECT unnest(?))",
                           [picked]).fetchall()
    overhead = max(0.0, float(np.median([(e or 0) - n_tok[c] for c, e in ev]))) if ev else 0.0

    def model_seconds(cid: str) -> float:
        if not n_cand[cid]:
            return 0.0
        return (n_tok[cid] + overhead) / prompt_rate + (a + b * n_cand[cid]) / gen_rate

    total_ms = sum(model_seconds(c) for c in n_cand)
    sample_ms = sum(model_seconds(c) for c in picked) or 1e-9
    scale = total_ms / sample_ms
    # Each worker evaluated the fixed prefix (instructions + few-shot) once: a
    # cost the real run pays once too, so it is taken out before scaling.
    from .extract import extraction_system

    system, _ = extraction_system(prompts, settings, model)
    fixed_len = len(model.prompt_tokens(model.render(system, ""))[0])
    first_calls = store.con.execute("SELECT count(*) FROM llm_calls WHERE stage = 'extract' AND cached_tokens = 0"
                                    ).fetchone()[0]
    workers = max(1, st.workers)
    prefix_s = min(max(0.0, wall - startup), first_calls * fixed_len / prompt_rate / workers)
    pred = startup + prefix_s + (wall - startup - prefix_s) * scale
    n_work = sum(1 for v in n_cand.values() if v)
    stages["extract"] = {"calls": round(n_work * n_calls_per_unit),
                         "prompt_tokens": round(sum(n_tok[c] + overhead for c in n_cand if n_cand[c])),
                         "completion_tokens": round(sum(a + b * n_cand[c] for c in n_cand if n_cand[c])),
                         "seconds": pred}
    calib["extract"] = {"units": len(picked), "wall_seconds": round(wall, 1), "startup_seconds": startup,
                        "workers": st.workers, "threads": st.threads,
                        "prompt_tok_per_s": round(prompt_rate, 1), "gen_tok_per_s": round(gen_rate, 1),
                        "prompt_overhead_tokens": round(overhead), "completion_tokens": [round(a, 1), round(b, 2)],
                        "entities_kept_per_candidate": round(ratio, 3), "prefix_seconds": round(prefix_s, 1)}
    return ratio


def _estimate_reports(store, model, prompts, settings, ratio, stages, calib, say) -> None:
    """Dry-run graph, communities and reports on the LLM-free proxy graph; time up to four real report calls."""
    nlp = dataclasses.replace(settings, extractor="nlp")
    run_extraction(store, None, prompts, nlp, progress=False)
    t0 = time.perf_counter()
    client0 = ModelClient(model, None, "estimate")
    # Rule-based entity resolution as in the real run (the embedding rule needs the embedder: skipped).
    build_graph(store, client0.count, settings.entity_description_max_tokens,
                settings=dataclasses.replace(settings, summaries="join"))
    stages["graph"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": time.perf_counter() - t0}
    t0 = time.perf_counter()
    run_communities(store, settings)
    stages["communities"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                             "seconds": time.perf_counter() - t0}
    dry = DryRunModel(model, _CANNED_REPORT)
    t0 = time.perf_counter()
    run_reports(store, ModelClient(dry, None, "estimate"), prompts, settings, progress=False)
    python_seconds = time.perf_counter() - t0
    prompts_seen = dry.prompts
    n_proxy = len(prompts_seen)
    if not prompts_seen:
        stages["reports"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": python_seconds}
        return
    sizes = sorted(range(n_proxy), key=lambda i: len(prompts_seen[i][1]))
    # Four prompts at the 25th/50th/75th/90th percentile of size (fewer if there are fewer).
    probe = sorted({sizes[min(n_proxy - 1, int(q * n_proxy))] for q in (0.25, 0.5, 0.75, 0.9)})
    say(f"estimate: timing {len(probe)} of {n_proxy} community reports")
    with_findings = use_model_descriptions(settings, model.n_params)
    gens = []
    for i in probe:
        fixed, rest = prompts_seen[i]
        max_tokens = min(settings.report_max_tokens, model.n_ctx - len(fixed) - len(rest))
        gens.append(model.complete(fixed, rest, schema=report_schema(with_findings), max_tokens=max_tokens,
                                   deadline_s=DEADLINE_REPORT_S))
    p_rate = sum(g.prompt_tokens - g.cached_tokens for g in gens) / max(1e-9, sum(g.prompt_seconds for g in gens))
    g_sec = sum(g.seconds - g.prompt_seconds for g in gens)
    g_rate = sum(g.completion_tokens for g in gens) / g_sec if g_sec > 0 else 50.0
    mean_compl = float(np.mean([g.completion_tokens for g in gens]))
    fixed_len = len(prompts_seen[0][0])
    evaluated = [len(r) for _, r in prompts_seen]
    evaluated[0] += fixed_len
    n_calls = n_proxy * ratio
    model_s = (sum(evaluated) / p_rate + n_proxy * mean_compl / g_rate) * ratio
    stages["reports"] = {"calls": round(n_calls), "prompt_tokens": round(sum(evaluated) * ratio),
                         "completion_tokens": round(n_proxy * mean_compl * ratio),
                         "seconds": python_seconds + model_s}
    calib["reports"] = {"proxy_report_calls": n_proxy, "probe_calls": len(gens),
                        "prompt_tok_per_s": round(p_rate, 1), "gen_tok_per_s": round(g_rate, 1),
                        "mean_completion_tokens": round(mean_compl, 1), "scaled_by": round(ratio, 3)}


def _estimate_embeddings(store, settings, ratio, embedder_factory, stages, calib, say) -> None:
    """Load the embedder and time a batch of entity descriptions and text units."""
    n_ent = store.count("entities")
    n_units = store.count("text_units")
    ents = [f"{n} ({t}): {d}" for n, t, d in store.con.execute(
        "SELECT name, type, description FROM entities ORDER BY entity_id LIMIT 64").fetchall()]
    texts = [t for (t,) in store.con.execute("SELECT text FROM text_units ORDER BY chunk_id LIMIT 32").fetchall()]
    t0 = time.perf_counter()
    if embedder_factory is not None:
        emb = embedder_factory()
    else:
        from .embed import Embedder

        emb = Embedder(batch_size=settings.embed_batch_size, threads=settings.n_threads)
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    emb.encode(ents)
    t_ent = (time.perf_counter() - t0) / max(1, len(ents))
    t0 = time.perf_counter()
    emb.encode(texts)
    t_unit = (time.perf_counter() - t0) / max(1, len(texts))
    n_ent_pred = n_ent * ratio
    stages["embed"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                       "seconds": load + n_ent_pred * t_ent + n_units * t_unit}
    calib["embed"] = {"load_seconds": round(load, 1), "seconds_per_entity": round(t_ent, 4),
                      "seconds_per_text_unit": round(t_unit, 4), "entities_predicted": round(n_ent_pred)}


def render(est: dict) -> str:
    """The estimate as a plain-text table (one row per stage, then the total)."""
    c = est["corpus"]
    lines = [f"corpus: {c['documents']} documents, {c['tokens']:,} tokens, {c['text_units']} text units "
             f"({c['units_with_candidates']} with candidate names, {c['candidates']:,} candidates)", "",
             f"{'stage':<12} {'calls':>7} {'prompt tok':>11} {'compl tok':>10} {'predicted':>11}"]
    for name, st in est["stages"].items():
        lines.append(f"{name:<12} {st['calls']:>7,} {st['prompt_tokens']:>11,} {st['completion_tokens']:>10,} "
                     f"{_hms(st['seconds']):>11}")
    lines.append(f"{'total':<12} {'':>7} {'':>11} {'':>10} {_hms(est['total_seconds']):>11}")
    cal = est["calibration"]
    if "extract" in cal and not cal["extract"]["units"]:
        lines += ["", f"calibration: no text unit has candidate names ({cal['extract']['why']}): extraction would "
                      "make no model call and find no entity; only 'slmgraph query --method basic' would answer"]
    elif "extract" in cal:
        e = cal["extract"]
        lines += ["", f"calibration: {e['units']} text units extracted in {e['wall_seconds']} s with "
                      f"{e['workers']} worker(s) x {e['threads']} thread(s); prompt {e['prompt_tok_per_s']} tok/s, "
                      f"generation {e['gen_tok_per_s']} tok/s; the model kept {e['entities_kept_per_candidate']:.0%} "
                      "of candidate names"]
    if "reports" in cal:
        r = cal["reports"]
        lines.append(f"reports: {r['proxy_report_calls']} report prompts on the LLM-free proxy graph, "
                     f"{r['probe_calls']} timed ({r['mean_completion_tokens']} completion tokens each)")
    lines += [f"not estimated: {n}" for n in est.get("notes", [])]
    lines.append(f"(this estimate took {est['estimate_seconds']} s)")
    return "\n".join(lines)


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}h{(s % 3600) // 60:02d}m{s % 60:02d}s" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"
