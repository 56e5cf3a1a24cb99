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
3. **Reports**: the LLM-free extractor (:func:`slmgraph.indexing.stages.extract_methods.extract_nlp`)
   gives a proxy graph of the whole corpus; the real graph, community and
   report stages run on it with a dry-run model that counts each report
   prompt's tokens instead of generating. Up to four of those prompts (at
   the 25th-90th percentile of size) are then run for real to measure
   completion tokens and rates. The proxy's report count
   is scaled by (entities the model kept / candidates) on the sample.
4. **Embeddings**: the embedder is loaded and times a batch of entity
   descriptions and text units, tokenized and encoded longest first as the
   embed stage does with texts it has no vector for (a first build reuses none),
   at the precision the build will use (``embed_precision``).

The prediction is an estimate, not a bound: ``benchmarks/index_throughput.py``
compares it with a real run (docs/decisions.md: estimate within 30 percent).

One concern, over 500 lines: the ``estimate`` command's calibration run and its prediction.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from slmgraph.config.settings import Settings
from slmgraph.indexing import pipeline
from slmgraph.indexing.pipeline import NO_CANDIDATES, IndexContext
from slmgraph.indexing.stages.extract_routes import model_writes, use_model_descriptions
from slmgraph.indexing.stages.ingest_read import read_documents
from slmgraph.model.client import DEADLINE_REPORT_S, Choice, Generation, ModelClient, Prompt
from slmgraph.names.forms import candidate_names
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.reports import report_schema
from slmgraph.store.db import Store, new_run_id


#: The clock the LLM-free calibration times its steps with (seconds); a benchmark sets a CPU clock to
#: predict CPU seconds instead of wall-clock (benchmarks/estimate_check.py).
clock: Callable[[], float] = time.perf_counter


class DryRunModel:
    """A :class:`slmgraph.model.protocol.Model` that records prompts instead of generating.

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
        self.n_ctx_train = model.n_ctx_train
        self.n_params = model.n_params
        self.path = None  #: no file: extraction never starts worker processes for a dry run
        self.n_threads = model.n_threads
        self._fixed: list[int] | None = None

    def reserve_threads(self) -> int:
        """No thread is claimed: a dry run runs no llama.cpp thread."""
        return self.n_threads

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
             say: Callable[[str], None] = print, follow_links: bool = False) -> dict:
    """Predict the tokens and wall-clock of ``slmgraph index input_path`` on this machine.

    Args:
        settings: the settings the index run would use (extractor, thread plan, ...).
        model: the loaded model (its load time is measured by the caller).
        sample: text units extracted for real in the calibration (more = slower, closer).
        model_factory: for extraction worker processes (tests); None loads the GGUF.
        embedder_factory: ``() -> Embedder``; None = the bundled all-MiniLM-L6-v2.
        follow_links: read what symbolic links under ``input_path`` lead to outside it (as ``index --follow-links``).

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
    docs, warnings = read_documents(input_path, follow_links)
    for w in warnings:
        say(f"warning: {w}")
    prompts = Prompts(settings.prompts_dir)
    stages: dict[str, dict] = {}
    calib: dict = {}
    with tempfile.TemporaryDirectory(prefix="slmgraph-estimate-") as tmp:
        store = Store(Path(tmp) / "estimate.duckdb", create=True)
        # What the index run's stages read; each step below runs the registered stages it names on it.
        ctx = IndexContext(store=store, settings=settings, model=model, prompts=prompts, docs=docs)
        try:
            t0 = clock()
            ing = run(ctx, "ingest")
            stages["ingest"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                "seconds": clock() - t0}
            units = store.con.execute("SELECT chunk_id, text, n_tokens FROM text_units ORDER BY doc_id, ord").fetchall()
            n_cand = {cid: len(candidate_names(text, settings.candidate_budget(True))) for cid, text, _ in units}
            n_tok = {cid: n for cid, _, n in units}
            corpus = {"documents": ing.documents, "tokens": ing.tokens, "text_units": len(units),
                      "candidates": sum(n_cand.values()),
                      "units_with_candidates": sum(1 for v in n_cand.values() if v)}
            ratio = 1.0
            from slmgraph.indexing.stages.extract_routes import uses_model

            if uses_model(settings, model):  # else: the LLM-free route, run in full
                ratio = _calibrate_extraction(ctx, units, n_cand, n_tok, sample, progress, model_factory, say, stages,
                                              calib)
            elif not model_writes(settings.reports, model, "reports"):
                # No model call in any stage: calibrated on a sample, scaled to the corpus.
                _estimate_llm_free(ctx, units, embedder_factory, stages, calib, say)
            else:
                t0 = time.perf_counter()
                run(ctx, "extract")
                stages["extract"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                     "seconds": time.perf_counter() - t0}
            if "graph" not in stages:
                lazy = _LazyEmbedder(settings, embedder_factory)
                _estimate_reports(ctx, ratio, lazy, stages, calib, say)
                _estimate_embeddings(store, ratio, lazy, stages, calib, say)
        finally:
            store.close()
    notes = []
    if settings.claims:
        notes.append("--claims: the claims stage (one more call per text unit with entities) is not included")
    if model_writes(settings.summaries, model, "summaries"):
        notes.append("model-written element summaries (one call per entity or relationship with several "
                     "descriptions) are not included")
    for st in stages.values():
        st["seconds"] = round(st["seconds"], 1)
    total = sum(st["seconds"] for st in stages.values())
    return {"stages": stages, "total_seconds": round(total, 1), "corpus": corpus, "calibration": calib,
            "notes": notes, "estimate_seconds": round(time.perf_counter() - t_all, 1)}


#: Share of the text units the LLM-free calibration runs for real (spread evenly over the corpus),
#: with at least :data:`LLM_FREE_MIN_UNITS` and at most :data:`LLM_FREE_MAX_UNITS`: the sample's
#: share balances its cost against the estimate's error (docs/decisions.md: estimate within 30 percent).
LLM_FREE_SHARE = 0.08
LLM_FREE_MIN_UNITS = 24
LLM_FREE_MAX_UNITS = 240


def heaps_exponent(points: list[tuple[int, int]]) -> float:
    """Exponent ``beta`` of Heaps' law ``distinct = k * tokens ** beta`` fitted (least squares in
    log-log) to ``(tokens read, distinct items seen)`` points, clipped to [0, 1]; 1.0 (linear
    growth, the cautious choice) when fewer than two usable points.

    Source: Heaps' law of vocabulary growth (H. S. Heaps, *Information Retrieval*, 1978, sec. 7.5),
    applied to distinct entity and relationship keys, which grow the same way with the text read.
    """
    pts = [(t, d) for t, d in points if t > 0 and d > 0]
    if len(pts) < 2 or len({t for t, _ in pts}) < 2:
        return 1.0
    x = np.log([t for t, _ in pts])
    y = np.log([d for _, d in pts])
    return float(min(1.0, max(0.0, np.polyfit(x, y, 1)[0])))


#: Random orders of the sample averaged into its growth curve (a rarefaction curve: the expected
#: distinct count of a random subset of each size), and the subset sizes fitted, as shares of the
#: sample: one order's curve is too noisy to fit, the mean of many over the sample's second half is not
#: (docs/decisions.md: estimate within 30 percent).
GROWTH_ORDERS = 20
GROWTH_POINTS = (0.5, 0.625, 0.75, 0.875, 1.0)


def _growth(store, units: list[str], n_tok: dict[str, int], settings: Settings) -> dict[str, list[tuple[float, float]]]:
    """Rarefaction curves of the sample ``units``: ``{"entities": [(tokens, distinct entities)], "relationships":
    [...]}`` at :data:`GROWTH_POINTS`, each the mean over :data:`GROWTH_ORDERS` seeded random orders. Entities
    are counted after the rule-based entity resolution (:func:`slmgraph.indexing.stages.resolve.resolve_entities` without the
    embedding rule), relationships as distinct pairs of resolved entities."""
    from collections import Counter, defaultdict

    from slmgraph.indexing.stages.resolve import resolve_entities

    ments: dict[str, list] = defaultdict(list)
    for cid, name, norm, etype in store.con.execute(
            "SELECT chunk_id, name, norm, type FROM entity_mentions WHERE coalesce(norm, '') <> ''").fetchall():
        ments[cid].append((name, norm, etype))
    rels: dict[str, list] = defaultdict(list)
    for cid, a, b in store.con.execute("SELECT chunk_id, source_norm, target_norm FROM relationship_mentions").fetchall():
        rels[cid].append((a, b))

    def counts(chunks: list[str]) -> tuple[int, int]:
        names: dict = defaultdict(Counter)
        types: dict = defaultdict(Counter)
        mentions: Counter = Counter()
        for c in chunks:
            for name, norm, etype in ments.get(c, ()):
                names[norm][name] += 1
                types[norm][etype] += 1
            mentions.update({norm for _, norm, _ in ments.get(c, ())})
        canon = resolve_entities(names, types, mentions, threshold=None, rules=settings.resolution_rules,
                                 types_reliable=False).mapping
        pairs = {tuple(sorted((canon[a], canon[b]))) for c in chunks for a, b in rels.get(c, ())
                 if a in canon and b in canon and canon[a] != canon[b]}
        return len(set(canon.values())), len(pairs)

    rng = np.random.default_rng(0)
    sums = np.zeros((len(GROWTH_POINTS), 3))
    for _ in range(GROWTH_ORDERS):
        order = list(units)
        rng.shuffle(order)
        for i, share in enumerate(GROWTH_POINTS):
            part = order[:max(1, round(share * len(order)))]
            sums[i] += (sum(n_tok[c] for c in part), *counts(part))
    mean = sums / GROWTH_ORDERS
    return {"entities": [(t, e) for t, e, _ in mean], "relationships": [(t, r) for t, _, r in mean]}


#: Texts the calibration's embedder encodes once on load, of a name's to a sentence's length.
WARM_UP_TEXTS = ("Harlow", "Harlow Council", "The council met on Tuesday to discuss the budget shortfall.")


class _LazyEmbedder:
    """The embedder as the real run gets it: loaded on first use (the graph stage's name embeddings,
    else the embed stage), its load (with a first encoding, :data:`WARM_UP_TEXTS`) and its encoding
    timed apart (seconds)."""

    def __init__(self, settings: Settings, factory: Callable | None):
        self.settings, self.factory = settings, factory
        self.emb = None
        self.load_seconds = 0.0
        self.encode_seconds = 0.0

    def get(self):
        """The loaded embedder (loading it the first time)."""
        if self.emb is None:
            t = clock()
            if self.factory is not None:
                self.emb = self.factory()
            else:
                from slmgraph.indexing.stages.embed import Embedder

                self.emb = Embedder(batch_size=self.settings.embed_batch_size, threads=self.settings.n_threads,
                                    precision=self.settings.embed_precision)
            # torch's first calls set up its kernels: a cost paid once per build, not per name embedded.
            self.emb.encode(list(WARM_UP_TEXTS))
            self.load_seconds = clock() - t
        return self.emb

    def encode(self, texts: list[str]) -> np.ndarray:
        """Vectors of ``texts``, shape (n, dim); the time is added to :attr:`encode_seconds`."""
        e = self.get()
        t = clock()
        out = e.encode(texts)
        self.encode_seconds += clock() - t
        return out


def _embed_per_item(store, emb, kinds: dict[str, list[str]]) -> dict[str, float]:
    """Seconds per item of each kind: tokenized, encoded (longest first) and stored as
    :func:`slmgraph.indexing.stages.embed.run_embeddings` does with items it has no stored vector for."""
    from slmgraph.indexing.stages.embed import embed_items, window_keys
    from slmgraph.store.bulk import insert_columns

    per_item = {}
    for kind, texts in kinds.items():
        if not texts:
            per_item[kind] = 0.0
            continue
        t0 = clock()
        keys, lengths = window_keys(emb, texts)
        vecs = embed_items(emb, texts, lengths)
        with store.transaction():  # one statement, as the embed stage writes (a row-by-row insert costs more)
            insert_columns(store.con, "embeddings", {"kind": [f"estimate-{kind}"] * len(texts),
                                                     "item_id": [str(i) for i in range(len(texts))],
                                                     "model": ["estimate"] * len(texts),
                                                     "vector": np.asarray(vecs, np.float32), "window_key": keys},
                           replace=("kind", "item_id"))
        per_item[kind] = (clock() - t0) / len(texts)
    return per_item


def _report_vectors(store) -> int:
    """Report vectors the embed stage computes: one per report that is not a copy of an ancestor's
    (a community carried down unchanged has its ancestor's text, and the embed stage reuses the
    vector of a text it has already encoded, :func:`slmgraph.indexing.stages.embed.run_embeddings`)."""
    return store.con.execute("SELECT count(*) FROM community_reports "
                             "WHERE coalesce(context_kind, '') != 'carried'").fetchone()[0]


def _ahead_threads(settings, model) -> int:
    """Threads :func:`slmgraph.indexing.pipeline.start_embed_ahead` would give its thread (0: it starts none)."""
    from slmgraph.indexing.stages.extract_routes import uses_model

    threads = getattr(model, "n_threads", None) or settings.n_threads or 0
    if threads < 2 or settings.executor != "local" or uses_model(settings, model):
        return 0
    return threads - 1


def _ahead_slowdown(store, emb, settings, model, unit_texts: list[str], windows: list[str], per_item: dict) -> float:
    """Seconds per text unit (its further windows included) encoded with the embed-ahead thread's torch threads
    over the same with every thread (``per_item["text_unit"]``), measured on the calibration sample; 1.0 where
    no thread would start or torch is not loaded (the tests' fakes)."""
    import sys

    ahead = _ahead_threads(settings, model)
    torch = sys.modules.get("torch")
    if not ahead or torch is None or not unit_texts or per_item.get("text_unit", 0) <= 0:
        return 1.0
    from slmgraph.indexing.stages.embed import encode_threads

    with encode_threads(ahead):
        one = _embed_per_item(store, emb, {"text_unit": unit_texts, "text_unit_window": windows})
    per_unit = one["text_unit"] + one.get("text_unit_window", 0.0) * len(windows) / max(1, len(unit_texts))
    return max(1.0, per_unit / per_item["text_unit"])


def _embed_ahead_overlap(stages: dict, settings, model, load_stage: str, load_seconds: float,
                         unit_seconds: float, slowdown: float, fills_cores: bool = False) -> float:
    """Move the work :func:`slmgraph.indexing.pipeline.start_embed_ahead` does during extraction out of the later stages.

    Where the real run embeds ahead, the embedder loads on the thread (not in the graph or embed stage) and
    the text units are encoded there at ``slowdown`` times their embed-stage time (:func:`_ahead_slowdown`)
    until extraction ends; the embed stage keeps the rest. ``stages`` is changed in place (``load_stage``, the stage that
    would load the embedder, and ``embed``). With ``fills_cores`` (the extraction workers take every core,
    :func:`slmgraph.indexing.stages.extract.extraction_fills_cores`) the thread starts only after extraction, beside
    the graph stage, which then shares its core with it: nothing is hidden.

    Returns:
        seconds taken off the embed stage (0 where no thread would start).
    """
    if fills_cores or not _ahead_threads(settings, model) or unit_seconds <= 0:
        return 0.0
    window = stages["extract"]["seconds"] - load_seconds
    if window <= 0:
        return 0.0
    stages[load_stage]["seconds"] = max(0.0, stages[load_stage]["seconds"] - load_seconds)
    hidden = min(unit_seconds, window / slowdown)
    stages["embed"]["seconds"] = max(0.0, stages["embed"]["seconds"] - hidden)
    return hidden


def run(ctx: IndexContext, name: str, **changes):
    """The result of the registered index stage ``name`` run on ``ctx`` with ``changes`` to its fields
    (:func:`dataclasses.replace`): the estimate runs the index's own stages, on its temporary index."""
    st, = pipeline.stages(name)
    return st.run(dataclasses.replace(ctx, **changes) if changes else ctx)


#: Exponent of a concept's distinct neighbours in the text read: a kept concept's links grow like a
#: vocabulary (Heaps' law) with about the square root of the text; fitted within a sample it reads lower,
#: since the sample's kept concepts are its rare ones (docs/decisions.md: the estimate's graph counts).
CONCEPT_DEGREE_EXPONENT = 0.5


def graph_counts(store) -> dict[str, int]:
    """The built graph's parts the estimate scales apart: ``names`` (entities that are not concepts),
    ``concepts``, ``name_edges`` (relationships between two names) and ``concept_edges`` (the rest)."""
    names, concepts = store.con.execute(
        "SELECT count(*) FILTER (WHERE c.entity_id IS NULL), count(c.entity_id) FROM entities e "
        "LEFT JOIN concepts c USING (entity_id)").fetchone()
    nn, rest = store.con.execute(
        "SELECT count(*) FILTER (WHERE s.entity_id IS NULL AND t.entity_id IS NULL), "
        "count(*) FILTER (WHERE s.entity_id IS NOT NULL OR t.entity_id IS NOT NULL) FROM relationships r "
        "LEFT JOIN concepts s ON s.entity_id = r.source_id LEFT JOIN concepts t ON t.entity_id = r.target_id"
    ).fetchone()
    return {"names": names, "concepts": concepts, "name_edges": nn, "concept_edges": rest}


def predict_graph(sample: dict[str, int], r_tok: float, beta_e: float, beta_r: float, n_units: int) -> dict[str, float]:
    """The whole corpus's graph counts (as :func:`graph_counts`) from the sample's, ``r_tok`` times fewer tokens.

    Names and the relationships between them grow by Heaps' law with the exponents fitted to the sample
    (``beta_e``, ``beta_r``); concepts at least as names do, up to the corpus's concept budget
    (:func:`slmgraph.indexing.stages.concepts.concept_budget`), their links with their number and with
    :data:`CONCEPT_DEGREE_EXPONENT`.
    """
    from slmgraph.indexing.stages.concepts import concept_budget

    names = sample["names"] * r_tok ** beta_e
    concepts = min(float(concept_budget(n_units)), sample["concepts"] * r_tok ** beta_e) if sample["concepts"] else 0.0
    per_concept = sample["concept_edges"] / sample["concepts"] if sample["concepts"] else 0.0
    return {"names": names, "concepts": concepts, "name_edges": sample["name_edges"] * r_tok ** beta_r,
            "concept_edges": concepts * per_concept * r_tok ** CONCEPT_DEGREE_EXPONENT}


def _estimate_llm_free(ctx: IndexContext, units, embedder_factory, stages, calib, say) -> None:
    """Estimate a run that makes no model call (LLM-free extraction, data-built reports) from a sample.

    ``LLM_FREE_SHARE`` of the text units, spread evenly over the corpus, go
    through every stage for real, with the plan the whole corpus gets
    (extraction's worker processes even where the sample alone would stay in
    this process; the embed-ahead thread only beside an extraction that leaves
    a core free): spaCy NER (its pipeline's load and the workers' start timed apart), graph with the embedding resolution rule
    (the embedder's load timed apart), communities, data-built reports, and
    embedding of entities, text units and reports. Each stage's time is scaled
    to the corpus by what it grows with: extraction by tokens; the graph's
    names, concepts and relationships by :func:`predict_graph`, and the graph,
    community and report stages by those counts (provenance rows by tokens);
    text units' embeddings by their word pieces (counted for every text unit),
    entities' and reports' by their predicted number.
    """
    from slmgraph.indexing.stages.embed import entity_text, further_windows
    from slmgraph.indexing.stages.extract import nlp_pool_plan
    from slmgraph.indexing.stages.ner import pipeline_for

    store, model, settings = ctx.store, ctx.model, ctx.settings
    n_tok = {cid: n for cid, _, n in units}
    ids = [cid for cid, _, _ in units]
    k = min(len(ids), max(LLM_FREE_MIN_UNITS, min(LLM_FREE_MAX_UNITS, round(LLM_FREE_SHARE * len(ids)))))
    picked = _even_sample(ids, k)
    full = len(picked) == len(ids)
    tok_all = sum(n_tok.values())
    tok_s = sum(n_tok[c] for c in picked) or 1
    r_tok = tok_all / tok_s
    say(f"estimate: running {len(picked)} of {len(ids)} text units through every stage (no model call)")
    t0 = clock()
    pipeline_for(settings.ner_model)  # loaded once per process, as in the real run
    ner_load = clock() - t0
    # The sample runs on the worker processes the whole corpus gets (the real run's plan, not the sample's, which
    # may be too small for workers), with a client as in the real run: nlp_pool_plan gives no worker without one.
    full_plan = nlp_pool_plan(model, settings, len(ids))
    ex_settings = (dataclasses.replace(settings, workers=full_plan.workers)
                   if full_plan is not None and not settings.workers else settings)
    t0, w0 = clock(), time.perf_counter()
    ex = run(ctx, "extract", only=set(picked), settings=ex_settings, client=ModelClient(model, None, "estimate"))
    t_ex, w_ex = clock() - t0, time.perf_counter() - w0
    # The workers' start (paid once, whatever the corpus) is reported in wall seconds: on another clock (CPU
    # seconds, benchmarks/estimate_check.py) it counts at the call's own clock-to-wall rate.
    startup = min(t_ex, float(getattr(ex, "startup_seconds", 0.0) or 0.0) * (t_ex / w_ex if w_ex > 0 else 1.0))
    stages["extract"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                         "seconds": ner_load + startup + (t_ex - startup) * r_tok}
    # Growth of distinct entities and relationships over random subsets of the sample (Heaps' law).
    curves = _growth(store, picked, n_tok, settings)
    beta_e = 1.0 if full else heaps_exponent(curves["entities"])
    beta_r = 1.0 if full else heaps_exponent(curves["relationships"])

    # Graph: the embedder loads on the first name embedding, as in the real run, timed apart.
    lazy = _LazyEmbedder(settings, embedder_factory)
    t0 = clock()
    g = run(ctx, "graph", settings=dataclasses.replace(settings, summaries="join"), embed=lazy.encode)
    graph_load = lazy.load_seconds
    t_graph = clock() - t0 - graph_load
    t_names = lazy.encode_seconds
    parts = graph_counts(store)
    pred = dict(parts) if full else predict_graph(parts, r_tok, beta_e, beta_r, len(ids))
    n_ent_pred = pred["names"] + pred["concepts"]
    n_rel_pred = pred["name_edges"] + pred["concept_edges"]
    r_ent = n_ent_pred / max(1, g.entities)
    prov = sum(store.count(t) for t in ("entity_text_units", "relationship_text_units"))
    rows_s = g.entities + g.relationships + prov
    rows_pred = n_ent_pred + n_rel_pred + prov * r_tok
    rest = max(0.0, t_graph - t_names)
    # The resolution rule embeds the names left after the rules: they grow as the names do.
    stages["graph"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                       "seconds": graph_load + t_names * pred["names"] / max(1, parts["names"])
                       + rest * rows_pred / max(1, rows_s)}
    t0 = clock()
    run(ctx, "communities")
    stages["communities"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                             "seconds": (clock() - t0) * (n_ent_pred + n_rel_pred)
                             / max(1, g.entities + g.relationships)}
    dry = DryRunModel(model, _CANNED_REPORT)
    t0 = clock()
    run(ctx, "reports", client=ModelClient(dry, None, "estimate"))
    stages["reports"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                         "seconds": (clock() - t0) * r_ent}
    # Embeddings: each kind encoded and stored as run_embeddings does; text units by word piece, counted for
    # every text unit of the corpus, entities and reports per item times their predicted number.
    emb = lazy.get()
    embed_load = 0.0 if graph_load else lazy.load_seconds  # no name embedding: the embed stage loads it
    n_reports = store.count("community_reports")
    n_rep_vec = _report_vectors(store)
    unit_texts = [t for (t,) in store.con.execute(
        "SELECT text FROM text_units WHERE chunk_id IN (SELECT unnest(?)) ORDER BY chunk_id LIMIT 48",
        [picked]).fetchall()]
    windows = [w for ws in further_windows(emb, unit_texts) for w in ws]  # a text unit's further windows
    per_item = _embed_per_item(store, emb, {
        "entity": [entity_text(n, t, d or "") for n, t, d in store.con.execute(
            "SELECT name, type, description FROM entities ORDER BY entity_id LIMIT 96").fetchall()],
        "text_unit": unit_texts,
        "text_unit_window": windows,
        "report": [t or "" for (t,) in store.con.execute(
            "SELECT full_text FROM community_reports ORDER BY community_id LIMIT 64").fetchall()]})
    per_item["text_unit"] += per_item["text_unit_window"] * len(windows) / max(1, len(unit_texts))
    pieces = _word_pieces(emb, [t for (t,) in store.con.execute("SELECT text FROM text_units").fetchall()])
    pieces_s = _word_pieces(emb, unit_texts)
    units_seconds = (per_item["text_unit"] * len(unit_texts) * pieces / pieces_s if pieces and pieces_s
                     else len(ids) * per_item["text_unit"])
    n_rep_pred = n_reports * r_ent
    stages["embed"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                       "seconds": embed_load + n_ent_pred * per_item["entity"] + units_seconds
                       + n_rep_vec * r_ent * per_item["report"]}
    slowdown = _ahead_slowdown(store, emb, settings, model, unit_texts, windows, per_item)
    hidden = _embed_ahead_overlap(stages, settings, model, "graph" if graph_load else "embed", graph_load or embed_load,
                                  units_seconds, slowdown, fills_cores=full_plan is not None and (
                                      settings.executor == "ray" or full_plan.total_threads >= full_plan.cores))
    calib["llm_free"] = {
        "units": len(picked), "tokens": tok_s, "scale_tokens": round(r_tok, 2),
        "ner_load_seconds": round(ner_load, 1), "ner_seconds_per_1k_tokens": round(1000 * (t_ex - startup) / tok_s, 3),
        "extract_startup_seconds": round(startup, 1), "extract_workers": ex.workers,
        "heaps_beta_entities": round(beta_e, 3), "heaps_beta_relationships": round(beta_r, 3),
        "graph_sample": parts, "graph_predicted": {k: round(v) for k, v in pred.items()},
        "entities_sample": g.entities, "entities_predicted": round(n_ent_pred),
        "relationships_sample": g.relationships, "relationships_predicted": round(n_rel_pred),
        "reports_sample": n_reports, "reports_predicted": round(n_rep_pred),
        "report_vectors_sample": n_rep_vec, "text_unit_word_pieces": pieces,
        "embedder_load_seconds": round(lazy.load_seconds, 1), "graph_names_seconds": round(t_names, 2),
        "graph_rest_seconds": round(rest, 2), "graph_rows_scale": round(rows_pred / max(1, rows_s), 2),
        "embed_seconds_per_item": {k: round(v, 4) for k, v in per_item.items()},
        "embed_ahead_slowdown": round(slowdown, 2), "embed_ahead_hidden_seconds": round(hidden, 1),
        "embed_precision": getattr(emb, "precision", "")}


def _word_pieces(emb, texts: list[str]) -> int:
    """Word pieces of ``texts`` in the embedder's tokenizer (0 where the embedder cannot count them: the tests' fakes)."""
    count = getattr(emb, "piece_counts", None)
    if count is None or not texts:
        return 0
    try:
        return int(sum(count(texts)))
    except AttributeError:  # an embedder without a transformers tokenizer (the ONNX runner)
        return 0


def _calibrate_extraction(ctx: IndexContext, units, n_cand, n_tok, sample, progress, model_factory, say, stages,
                          calib) -> float:
    """Extract the calibration sample for real; fill ``stages['extract']``; return the entity keep ratio."""
    store, model, prompts, settings = ctx.store, ctx.model, ctx.prompts, ctx.settings
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
    st = run(ctx, "extract", client=client, progress=progress, model_factory=model_factory, say=say, only=set(picked))
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
    from slmgraph.indexing.stages.extract import extraction_system

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


def _estimate_reports(ctx: IndexContext, ratio, lazy, stages, calib, say) -> None:
    """Dry-run graph, communities and reports on the LLM-free proxy graph; time up to four real report calls.
    The graph stage includes the embedder's load and the name embeddings of the resolution rule (``lazy``)."""
    model, settings = ctx.model, ctx.settings
    run(ctx, "extract", settings=dataclasses.replace(settings, extractor="nlp"))
    t0 = time.perf_counter()
    # Entity resolution as in the real run, the embedding rule included (it loads the embedder).
    run(ctx, "graph", settings=dataclasses.replace(settings, summaries="join"), embed=lazy.encode)
    stages["graph"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": time.perf_counter() - t0}
    t0 = time.perf_counter()
    run(ctx, "communities")
    stages["communities"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                             "seconds": time.perf_counter() - t0}
    dry = DryRunModel(model, _CANNED_REPORT)
    t0 = time.perf_counter()
    run(ctx, "reports", client=ModelClient(dry, None, "estimate"))
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
    with_findings = use_model_descriptions(settings, model)
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


def _estimate_embeddings(store, ratio, lazy, stages, calib, say) -> None:
    """Embed stage: entities (scaled by the keep ratio), text units and community reports, each timed
    per item (encoded and stored); the embedder's load counts here only if the graph stage did not load it."""
    from slmgraph.indexing.stages.embed import entity_text, further_windows

    loaded_before = lazy.emb is not None
    emb = lazy.get()
    load = 0.0 if loaded_before else lazy.load_seconds
    n_ent = store.count("entities")
    n_units = store.count("text_units")
    n_reports = _report_vectors(store)
    # Model-written reports are only canned text in the dry run: a text unit's length stands for them.
    texts = [t for (t,) in store.con.execute("SELECT text FROM text_units ORDER BY chunk_id LIMIT 32").fetchall()]
    windows = [w for ws in further_windows(emb, texts) for w in ws]  # the text units' further windows
    per_item = _embed_per_item(store, emb, {
        "entity": [entity_text(n, t, d or "") for n, t, d in store.con.execute(
            "SELECT name, type, description FROM entities ORDER BY entity_id LIMIT 64").fetchall()],
        "text_unit": texts, "text_unit_window": windows})
    n_ent_pred = n_ent * ratio
    stages["embed"] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                       "seconds": load + n_ent_pred * per_item["entity"]
                       + (n_units + n_reports * ratio) * per_item["text_unit"]
                       + n_units * per_item["text_unit_window"] * len(windows) / max(1, len(texts))}
    calib["embed"] = {"load_seconds": round(lazy.load_seconds, 1), "seconds_per_entity": round(per_item["entity"], 4),
                      "seconds_per_text_unit": round(per_item["text_unit"], 4),
                      "entities_predicted": round(n_ent_pred), "report_vectors_predicted": round(n_reports * ratio),
                      "precision": getattr(emb, "precision", "")}


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
