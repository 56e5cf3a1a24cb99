"""Extraction of entities and relationships from text units (paper sec. 3.1.2).

Two extractors:

* ``llm`` (default): the candidate pass (:mod:`slmgraph.names.forms`) proposes the
  names that occur in the text unit; the model chooses among them, types and
  describes them and relates them, under a JSON schema whose name fields are
  ``enum``s of those candidates. A small model therefore cannot invent a name
  or emit unparseable output; the content is still validated (duplicates,
  self-loops and relationships to unlisted entities are dropped and counted).
  With ``constrain_names`` off (``--free-names``) the names are free strings
  of bounded length and count instead -- the way GraphRAG extracts with a
  large model -- so that what the candidate constraint buys can be measured.
* ``nlp``: no model. Every candidate is an entity (type ``unknown``, described
  by its first sentence); two candidates in one sentence are related. The
  baseline every model setting must beat, and a mode for very slow machines.

Grounding (``settings.grounding``, on by default) then drops every entity
whose name does not occur in its text unit under the tolerant match
(:func:`slmgraph.names.forms.name_occurs`), with the relationships to it, and counts
the dropped entities (``Extraction.n_ungrounded``). Candidate names are spans
of the text, so it drops ~nothing in the default mode; with free names it
removes invented names and names copied from the few-shot example.

Each text unit's result is committed as soon as it is made, keyed by a
content hash of (text, model, prompts, settings): an interrupted run resumes
where it stopped and re-indexing unchanged text costs no model call.

This module is the stage: its run over the text units (:func:`run_extraction`), the content key, the
prompts and the rows it writes. The pieces, one concern each: the methods for one text unit
(:mod:`slmgraph.indexing.stages.extract_methods`), the schemas, validation and grounding of the model's
records (:mod:`slmgraph.indexing.stages.extract_schema`), what the text itself says
(:mod:`slmgraph.indexing.stages.extract_text`) and which route a model takes
(:mod:`slmgraph.indexing.stages.extract_routes`).
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from typing import Callable

from tqdm import tqdm

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import CHOICES, Settings
from slmgraph.indexing.stages.concepts import CONCEPTS_VERSION, store_unit
from slmgraph.indexing.stages.extract_methods import Extraction, extract_nlp, extract_unit
from slmgraph.indexing.stages.extract_routes import use_model_descriptions, uses_model
from slmgraph.indexing.stages.ingest import retiring
from slmgraph.indexing.stages.ner import pipeline_for, pipeline_meta
from slmgraph.indexing.stages.steer import fingerprint as steer_fingerprint
from slmgraph.model.client import Model, ModelClient
from slmgraph.names.forms import normalize_name
from slmgraph.store.bulk import insert_rows
from slmgraph.store.db import Store, dumps
from slmgraph.text.language import LANGUAGE_NAMES, LANGUAGE_NOTES

log = logging.getLogger("slmgraph")

#: Part of every extraction key: bump it when a change to extraction (this module, the ``extract_*``
#: modules beside it, :mod:`slmgraph.names.forms` or the sampler, ``llm.SAMPLER_VERSION``) changes
#: what an extraction yields, so indexes re-extract.
EXTRACTOR_VERSION = "14"

#: Prompt files of each naming mode: system, user, few-shot output with
#: model-written descriptions, few-shot output without them.
PROMPT_FILES = {
    True: ("extract_system", "extract_user", "extract_example_model", "extract_example_text"),
    False: ("extract_free_system", "extract_free_user", "extract_example_free_model", "extract_example_free_text"),
}

def extraction_key(text: str, model_fp: str, prompt_fp: str, settings: Settings,
                   edges: tuple[bool, bool] = (True, True)) -> str:
    """Content key of a text unit's extraction: sha256(text, model, prompts, the settings whose field metadata
    puts them in the ``extraction`` key -- and in ``extraction_model`` when a model makes the calls --, document
    edges), 32 hex. ``model_fp`` is "" when extraction makes no model call (:func:`uses_model`)."""
    s = settings
    llm = s.extractor == "llm" and bool(model_fp)
    keyed = s.key_values("extraction") | (s.key_values("extraction_model") if llm else {})
    parts = [EXTRACTOR_VERSION, text, model_fp if llm else "", prompt_fp if llm else "", sorted(keyed.items()),
             list(edges), CONCEPTS_VERSION if s.concepts else ""]
    steered = steer_fingerprint(s.prompts_dir, tuple(s.entity_types))
    if steered:  # keys of builds the prompts folder does not steer stay as they were
        parts.append(["steer", steered])
    return hashlib.sha256(dumps(parts).encode()).hexdigest()[:32]


def extraction_prompt_files(settings: Settings) -> list[str]:
    """Names of the prompt files an extraction with ``settings`` reads (for its cache key)."""
    names = list(PROMPT_FILES[settings.constrain_names])
    if settings.max_gleanings > 0:
        names += ["glean_check", "glean_user"]
    return names + [f"choose_{k}_{part}" for k in CHOICES for part in ("system", "user")]


def extraction_system(prompts: Prompts, settings: Settings, model) -> tuple[str, bool]:
    """``(system prompt, with_descriptions)`` of the extraction calls for ``model``.

    The system prompt (instructions + few-shot example, for candidate or free
    names) is the fixed prefix every extraction call shares, so it is
    evaluated once per process.
    """
    system_name, _, example_model, example_text = PROMPT_FILES[settings.constrain_names]
    with_desc = use_model_descriptions(settings, model)
    example = prompts.text(example_model if with_desc else example_text).strip()
    system = prompts.fill(system_name, entity_types=", ".join(settings.entity_types), example=example)
    return system, with_desc


def store_extraction(con, chunk_id: str, key: str, ex: Extraction, redo: bool | None = None) -> None:
    """Replace a text unit's extraction records (call inside a transaction).

    A call cut by the wall-clock deadline depends on machine load: its records
    are kept for now, but its key is left empty so the next run redoes it.
    A unit's mention and concept rows exist only beside its ``extractions`` row (written here in one
    transaction, deleted with it by ingest; :func:`clear_unrecorded` restores that before a run), so a
    unit without that row has no rows to delete: its first extraction scans no table of
    :data:`UNIT_TABLES`. Each table's rows are one statement (:func:`slmgraph.store.bulk.insert_rows`).
    ``redo``: whether the unit has an ``extractions`` row, when the caller knows (None: looked up here).
    """
    if redo is None:
        redo = con.execute("SELECT count(*) FROM extractions WHERE chunk_id = ?", [chunk_id]).fetchone()[0] > 0
    if redo:
        con.execute("DELETE FROM entity_mentions WHERE chunk_id = ?", [chunk_id])
        con.execute("DELETE FROM relationship_mentions WHERE chunk_id = ?", [chunk_id])
    stored_key = None if ex.finish_reason == "deadline" else key
    con.execute(f"INSERT {'OR REPLACE ' if redo else ''}INTO extractions (chunk_id, cache_key, status, n_candidates, "
                "n_entities, n_relationships, n_dropped, raw, n_ungrounded, gleanings, evaluated_tokens, "
                "completion_tokens, n_left_out, n_choices, n_rejected) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [chunk_id, stored_key, ex.status, ex.n_candidates, len(ex.entities), len(ex.relationships),
                 ex.n_dropped, ex.raw, ex.n_ungrounded, ex.gleanings, ex.evaluated_tokens, ex.completion_tokens,
                 ex.n_left_out, ex.n_choices, ex.n_rejected])
    insert_rows(con, "entity_mentions", ("chunk_id", "name", "norm", "type", "description"),
                [(chunk_id, e["name"], normalize_name(e["name"]), e["type"], e["description"]) for e in ex.entities])
    insert_rows(con, "relationship_mentions", ("chunk_id", "source_norm", "target_norm", "description", "strength"),
                [(chunk_id, normalize_name(r["source"]), normalize_name(r["target"]), r["description"], r["strength"])
                 for r in ex.relationships])
    store_unit(con, chunk_id, ex.concepts, new=not redo)


#: The tables holding a text unit's extraction records besides ``extractions`` (what :func:`store_extraction` replaces).
UNIT_TABLES = ("entity_mentions", "relationship_mentions", "concept_mentions", "concept_links")


def clear_unrecorded(store: Store, chunk_ids: list[str]) -> int:
    """Delete the rows of :data:`UNIT_TABLES` of the text units among ``chunk_ids`` that have no ``extractions``
    row (a state no run leaves: both are written in one transaction), so that :func:`store_extraction`
    can rely on it. One scan of each table; nothing is written when there are none. Returns the text
    units cleared."""
    if not chunk_ids:
        return 0
    union = " UNION ".join(f"SELECT chunk_id FROM {t} WHERE chunk_id IN (SELECT unnest(?))" for t in UNIT_TABLES)
    found = [c for c, in store.con.execute(
        f"SELECT chunk_id FROM ({union}) WHERE chunk_id NOT IN (SELECT chunk_id FROM extractions)",
        [list(chunk_ids)] * len(UNIT_TABLES)).fetchall()]
    if found:
        with store.transaction() as con:
            for t in UNIT_TABLES:
                con.execute(f"DELETE FROM {t} WHERE chunk_id IN (SELECT unnest(?))", [found])
    return len(found)


def worker_job(client: ModelClient, prompts: Prompts, settings: Settings,
               model: Model) -> Callable[[tuple[str, tuple[bool, bool]]], Extraction]:
    """What an extraction worker process does per text unit (:class:`slmgraph.indexing.executors.batch.WorkerSpec` ``make_job``).

    Builds the extraction system prompt once for the worker's model, loads the NER pipeline once in the
    process (:func:`slmgraph.indexing.stages.ner.pipeline_for`; the parent already warned if there is none) and returns
    ``(text, (begins document, ends document)) -> Extraction`` (:func:`extract_unit`).
    """
    system, with_desc = extraction_system(prompts, settings, model)
    nlp, _ = pipeline_for(settings.ner_model)
    return lambda task: extract_unit(client, prompts, task[0], settings, system, with_desc, nlp, tuple(task[1]))


#: Fewest text units the LLM-free extraction hands to worker processes: below it, spawning them and loading
#: spaCy in each costs more than the units' parse, so they are extracted in this process.
NLP_POOL_MIN_UNITS = 48


def pending_units(store: Store, settings: Settings, model_fp: str, prompt_fp: str,
                  only: set[str] | None = None) -> tuple[list[tuple[str, str, str, tuple[bool, bool]]], int]:
    """``(todo, reused)``: the text units without an up-to-date extraction record, as ``(chunk_id, text,
    key, (begins document, ends document))`` in document order, and the number that have one (``only``:
    just these ``chunk_id``s)."""
    rows = store.con.execute(
        "SELECT t.chunk_id, t.text, e.cache_key, t.ord = min(t.ord) OVER (PARTITION BY t.doc_id), "
        "t.ord = max(t.ord) OVER (PARTITION BY t.doc_id), t.doc_id "
        "FROM text_units t LEFT JOIN extractions e USING (chunk_id) ORDER BY t.doc_id, t.ord").fetchall()
    todo = []
    reused = 0
    old_versions = retiring(store)  # kept for queries until this stage ends, never extracted again
    for chunk_id, text, have, first, last, doc_id in rows:
        if (only is not None and chunk_id not in only) or doc_id in old_versions:
            continue
        edges = (bool(first), bool(last))
        key = extraction_key(text, model_fp, prompt_fp, settings, edges)
        if have == key:
            reused += 1
        else:
            todo.append((chunk_id, text, key, edges))
    return todo, reused


def nlp_pool_plan(model, settings: Settings, n_units: int):
    """The worker plan (:class:`slmgraph.indexing.executors.batch.ThreadPlan`) of the LLM-free extraction
    of ``n_units`` text units, or None to extract them in this process.

    Workers: one per core of this process's thread count (the model's, else ``--threads``;
    :func:`slmgraph.indexing.executors.batch.plan_threads`, which ``--workers`` overrides); this process
    only writes. spaCy's threads do not spin, so nothing is claimed from the machine-wide llama.cpp budget
    (:mod:`slmgraph.model.threads`). Used with ``--executor ray``, with ``--workers`` above one, and
    otherwise from :data:`NLP_POOL_MIN_UNITS` units on a plan of two or more workers.
    """
    from slmgraph.indexing.executors.batch import plan_threads

    if model is None or not n_units:
        return None
    if settings.executor != "ray" and not (settings.workers or 0) > 1 and n_units < NLP_POOL_MIN_UNITS:
        return None
    plan = plan_threads(getattr(model, "n_threads", None) or settings.n_threads, n_units, settings.workers)
    return plan if plan.workers > 1 or settings.executor == "ray" else None


def nlp_worker_spec(client: ModelClient | None, settings: Settings, plan):
    """The :class:`slmgraph.indexing.executors.batch.WorkerSpec` of an LLM-free extraction worker (loads no
    model; :func:`nlp_worker_job`) under ``plan``."""
    from slmgraph.indexing.executors.batch import WorkerSpec

    return WorkerSpec(None, 0, settings.seed, plan.threads, settings, client.run_id if client is not None else "",
                      nlp_worker_job)


def start_nlp_pool(client: ModelClient | None, settings: Settings, n_units: int):
    """Worker processes for the LLM-free extraction of at least ``n_units`` text units, started now (their
    spawn and spaCy load take a second or two) and entered, or None where :func:`run_extraction` would not
    use them: a model extraction, another executor than ``local``, or a plan (:func:`nlp_pool_plan`) without
    workers. Pass the pool to :func:`run_extraction`, which uses it or closes it; close it
    (``pool.__exit__``) if no extraction follows."""
    from slmgraph.indexing.executors.batch import WorkerPool

    model = client.model if client is not None else None
    if settings.executor != "local" or model is None or uses_model(settings, model):
        return None
    plan = nlp_pool_plan(model, settings, n_units)
    if plan is None:
        return None
    return WorkerPool(lambda _worker: nlp_worker_spec(client, settings, plan), plan, "extract").__enter__()


def extraction_fills_cores(store: Store, client: ModelClient | None, prompts: Prompts, settings: Settings,
                           only: set[str] | None = None) -> bool:
    """True when this run's LLM-free extraction will run in worker processes or actors that take every
    core of the thread plan (:func:`nlp_pool_plan`), so no core is left for another thread."""
    model = client.model if client is not None else None
    if model is None or uses_model(settings, model):
        return False
    todo, _ = pending_units(store, settings, "", prompts.digest(*extraction_prompt_files(settings)), only)
    plan = nlp_pool_plan(model, settings, len(todo))
    return plan is not None and (settings.executor == "ray" or plan.total_threads >= plan.cores)


#: Most text units in one task of the LLM-free workers: their masked texts go through ``nlp.pipe`` together.
NLP_BATCH = 8


def nlp_task_sizes(n_units: int, workers: int) -> list[int]:
    """Text units per task of the LLM-free workers, in the order the tasks are sent (summing to ``n_units``):
    :data:`NLP_BATCH` while many are left, then fewer, down to single units. Workers take the next task as
    they finish one, so the last tasks are short and the run does not end on one worker finishing a full
    task while the others idle."""
    sizes = []
    left = n_units
    while left > 0:
        k = max(1, min(NLP_BATCH, left // max(1, 2 * workers)))
        sizes.append(k)
        left -= k
    return sizes


class PipedParses:
    """A spaCy pipeline whose calls on the given texts answer from one ``nlp.pipe`` over all of them
    (batched, as spaCy recommends; the same parses as one call per text), run at the first call; any
    other text, attribute or method goes to the pipeline itself."""

    def __init__(self, nlp, texts: list[str]):
        self._nlp, self._texts, self._docs = nlp, texts, None

    def __call__(self, text: str):
        if self._docs is None:
            self._docs = dict(zip(self._texts, self._nlp.pipe(self._texts, batch_size=len(self._texts) or 1)))
        doc = self._docs.pop(text, None)
        return doc if doc is not None else self._nlp(text)

    def __getattr__(self, name: str):
        return getattr(self._nlp, name)


def nlp_worker_job(client, prompts: Prompts, settings: Settings, model) -> Callable[[list], list[Extraction]]:
    """What an LLM-free extraction worker does per task (a ``make_job`` with no model): loads the NER
    pipeline once (:func:`slmgraph.indexing.stages.ner.pipeline_for`) and returns ``[(text, (begins
    document, ends document))] -> [Extraction]`` (:func:`slmgraph.indexing.stages.extract_methods.extract_nlp`,
    as the extraction in this process), the units' masked texts parsed together (:class:`PipedParses`).
    Call it only in a worker process: it keeps torch from being imported there."""
    import sys

    from slmgraph.text.markdown import mask_markup

    if "torch" not in sys.modules and "thinc" not in sys.modules:
        # spaCy's CPU pipelines run on thinc's numpy ops; thinc imports torch only to offer it, which
        # costs each worker a second and a few hundred MB, so this worker process marks it absent.
        sys.modules["torch"] = None
    nlp, _ = pipeline_for(settings.ner_model)

    def run(batch: list) -> list[Extraction]:
        piped = PipedParses(nlp, [mask_markup(t) for t, _ in batch]) if nlp is not None else None
        return [extract_nlp(t, settings, piped, tuple(e)) for t, e in batch]

    return run


@dataclass
class ExtractResult:
    """What stages 2-3 did: ``extracted`` (text units processed now), ``reused`` (already done),
    ``entities``, ``relationships``, ``dropped`` (records dropped by validation), ``ungrounded``
    (entities dropped by grounding), ``status`` (status -> units), ``left_out`` (candidates past
    ``--max-candidates``) in ``units_over_budget`` units, ``choices`` / ``rejected`` (model
    choices by token probability and what they dropped), ``languages`` (language -> units),
    ``descriptions`` (``model`` or ``text``), ``ner_model``, and the thread plan (``workers``,
    ``threads``, ``startup_seconds``: spawning workers and loading their models), and ``budget``
    (candidate names per text unit in this run, :meth:`Settings.candidate_budget`). All counts are
    of the units processed now."""
    descriptions: str
    extracted: int
    reused: int
    entities: int
    relationships: int
    dropped: int
    ungrounded: int
    status: dict[str, int]
    workers: int
    threads: int
    startup_seconds: float
    left_out: int
    units_over_budget: int
    choices: int
    rejected: int
    languages: dict[str, int]
    ner_model: str | None
    budget: int

    def summary(self, settings: Settings) -> list[str]:
        """The progress line ``index`` prints (``settings``: the run's, for what validation and grounding did)."""
        status = ", ".join(f"{k} {v}" for k, v in sorted(self.status.items())) or "nothing new"
        grounding = (f"{self.ungrounded} entities dropped by grounding (names not in their text unit)"
                     if settings.grounding else "grounding off")
        invalid = "names not among the candidates" if settings.constrain_names else "empty or overlong names"
        return [f"extract: {self.extracted} text units extracted, {self.reused} reused; the new ones gave "
                f"{self.entities} entities, {self.relationships} relationships; {self.dropped} records dropped by "
                f"validation (duplicates, self-loops, {invalid}); {grounding}; status: {status}"]


def run_extraction(store: Store, client: ModelClient | None, prompts: Prompts, settings: Settings,
                   progress: bool = True, model_factory=None, say=None, only: set[str] | None = None,
                   pool=None) -> ExtractResult:
    """Extract every text unit that has no up-to-date extraction record.

    With the llm extractor and more than one worker in the thread plan
    (:func:`slmgraph.indexing.executors.batch.plan_threads`), text units are extracted by spawned
    worker processes and written here, the single writer; so are those of the LLM-free route when
    they are enough to pay for the workers' start (:func:`nlp_pool_plan`); with ``--executor ray``
    either route runs on Ray actors; otherwise in this process. Either way each text unit's records (and its ledger rows and
    cache entries) are committed in one transaction as soon as they arrive,
    so a killed run loses at most the units in flight, and the result does not
    depend on the number of workers (each call reuses only the fixed prefix).

    Args:
        client: model client of this process (None for the nlp extractor).
        model_factory: ``threads -> Model`` for worker processes (tests); None
            = load ``client.model.path`` in each worker.
        say: ``str -> None`` for the thread-plan note and warnings.
        only: extract just these text units (``chunk_id``s; the estimate's calibration sample).
        pool: LLM-free workers started earlier (:func:`start_nlp_pool`, while ingest ran): used when this run
            extracts in worker processes under the same plan, else closed. Closed on return either way.

    Returns:
        :class:`ExtractResult`.

    Raises:
        UserError: a prompt does not fit the window.
        WorkerError: a worker process crashed (re-run to resume).
    """
    from slmgraph.indexing.executors.batch import WorkerSpec, stage_plan
    from slmgraph.indexing.executors.raypool import open_pool
    from slmgraph.model.threads import update_claim

    prompt_fp = prompts.digest(*extraction_prompt_files(settings))
    model = client.model if client is not None else None
    n_params = model  # the policy reads the model's capability record
    calls_model = model is not None and uses_model(settings, n_params)
    model_fp = model.fingerprint if calls_model else ""
    system, with_desc = extraction_system(prompts, settings, model)
    ner_name, ner_lang, warning = pipeline_meta(settings.ner_model)
    if warning and say:
        say(f"warning: {warning}")
    todo, reused = pending_units(store, settings, model_fp, prompt_fp, only)
    clear_unrecorded(store, [t[0] for t in todo])
    # Units with an extractions row (a stale key): only theirs need the old rows deleted, so the writer
    # skips that lookup for the others (one statement less in each unit's transaction).
    stored = {c for c, in store.con.execute("SELECT chunk_id FROM extractions").fetchall()} if todo else set()
    stats = {"descriptions": "model" if with_desc else "text", "extracted": 0, "reused": reused, "entities": 0,
             "relationships": 0, "dropped": 0, "ungrounded": 0, "status": {}, "workers": 1, "threads": 0,
             "startup_seconds": 0.0, "left_out": 0, "units_over_budget": 0, "choices": 0, "rejected": 0,
             "languages": {}, "ner_model": ner_name, "budget": settings.candidate_budget(calls_model)}
    parallel = calls_model and todo and (model_factory is not None or getattr(model, "path", None) is not None)
    plan = None
    if parallel:
        plan = stage_plan(model, settings, len(todo), say)
        parallel = plan.workers > 1 or settings.executor == "ray"
        stats["workers"], stats["threads"] = plan.workers, plan.threads
    elif not calls_model and todo:
        plan = nlp_pool_plan(model, settings, len(todo))
        parallel = plan is not None
        if parallel:
            stats["workers"], stats["threads"] = plan.workers, plan.threads
    started = pool  # workers started ahead (start_nlp_pool): used below or closed at the end
    bar = tqdm(total=len(todo), desc="extract", unit="unit", disable=not progress or not todo, dynamic_ncols=True)
    tokens = 0
    t_start = time.perf_counter()

    def commit(chunk_id, key, ex, calls=(), puts=()):
        nonlocal tokens
        with store.transaction() as con:
            store_extraction(con, chunk_id, key, ex, redo=chunk_id in stored)
            for row in calls:
                store.record_call(*row)
            for put in puts:
                store.cache_put(*put)
        stats["extracted"] += 1
        stats["entities"] += len(ex.entities)
        stats["relationships"] += len(ex.relationships)
        stats["dropped"] += ex.n_dropped
        stats["ungrounded"] += ex.n_ungrounded
        stats["status"][ex.status] = stats["status"].get(ex.status, 0) + 1
        stats["left_out"] += ex.n_left_out
        stats["units_over_budget"] += ex.n_left_out > 0
        stats["choices"] += ex.n_choices
        stats["rejected"] += ex.n_rejected
        stats["languages"][ex.language] = stats["languages"].get(ex.language, 0) + 1
        tokens += ex.evaluated_tokens + ex.completion_tokens
        bar.update(1)
        # The LLM-free route reads no model tokens: its rate is the bar's own units per second.
        rate = f"{tokens / max(time.perf_counter() - t_start, 1e-9):.0f} tok/s, " if calls_model else ""
        bar.set_postfix_str(f"{rate}{stats['entities']} entities", refresh=False)

    try:
        if parallel:
            # Token ids stay JSON text until a worker hits the entry (memory of a large cache).
            cache = {k: (o, f, t) for k, o, f, t in store.con.execute(
                "SELECT key, output, finish_reason, tokens FROM llm_cache WHERE stage IN ('extract', 'glean')"
            ).fetchall()} if calls_model else {}

            def spec_for(worker: int) -> WorkerSpec:
                if not calls_model:  # spaCy only: the worker loads no model
                    return nlp_worker_spec(client, settings, plan)
                return WorkerSpec(str(model.path) if getattr(model, "path", None) is not None else None, model.n_ctx, settings.seed,
                                  plan.threads, settings, client.run_id, worker_job, cache, model_factory)

            if say:
                where = "Ray actors" if settings.executor == "ray" else "worker processes"
                what = f"x {plan.threads} llama.cpp thread(s)" if calls_model else "(spaCy)"
                say(f"extract: {plan.workers} {where} {what} "
                    f"on {plan.cores} core{'s' if plan.cores != 1 else ''}")
            n_threads = getattr(model, "n_threads", None)
            update_claim(max(plan.total_threads, n_threads or 1))
            if started is not None and (calls_model or settings.executor != "local" or started.plan != plan):
                started.__exit__(None, None, None)
                started = None
            use, started = started, None
            try:
                with use or open_pool(spec_for, plan, settings, "extract") as pool:
                    if calls_model:
                        for chunk_id, key, ex, calls, puts, _worker in pool.results(
                                [(c, (t, e), k) for c, t, k, e in todo]):
                            commit(chunk_id, key, ex, calls, puts)
                    else:  # a few units per task, each committed on its own as it arrives
                        batches, i = [], 0
                        for k in nlp_task_sizes(len(todo), plan.workers):
                            batches.append(todo[i:i + k])
                            i += k
                        tasks = [(tuple(u[0] for u in b), [(u[1], u[3]) for u in b], tuple(u[2] for u in b))
                                 for b in batches]
                        for chunk_ids, keys, exs, _calls, _puts, _worker in pool.results(tasks):
                            for chunk_id, key, ex in zip(chunk_ids, keys, exs):
                                commit(chunk_id, key, ex)
            finally:
                update_claim(n_threads or settings.n_threads)
            stats["startup_seconds"] = round(pool.startup_seconds, 2)
        else:
            # Only an extraction in this process parses: the workers load their own pipeline, and spaCy's
            # import here would take CPU from them while they start.
            nlp = pipeline_for(settings.ner_model)[0] if todo else None
            for chunk_id, text, key, edges in todo:
                ex = extract_unit(client if calls_model else None, prompts, text, settings, system, with_desc, nlp,
                                  edges)
                commit(chunk_id, key, ex)
    finally:
        bar.close()
        if started is not None:  # workers started ahead for a pooled extraction this run did not make
            started.__exit__(None, None, None)
    if say:
        for w in extraction_warnings(stats, settings, ner_lang):
            say(f"warning: {w}")
    return ExtractResult(**stats)


def extraction_warnings(stats: dict, settings: Settings, nlp) -> list[str]:
    """The run's warnings about candidates (each said once per run): text units with more candidates
    than the budget, and languages whose names the candidate pass cannot (fully) find
    (:data:`slmgraph.indexing.stages.ner.LANGUAGE_NOTES`; not said when the pipeline reads that language).
    ``nlp``: the spaCy pipeline, or its language code, or None."""
    out = []
    if stats.get("left_out"):
        budget = stats.get("budget", settings.max_candidates)
        out.append(f"{stats['units_over_budget']} text unit(s) had more candidate names than --max-candidates "
                   f"{budget}: {stats['left_out']} were left out (the least mentioned; see "
                   "'slmgraph stats'); raise --max-candidates to keep them")
    lang = nlp if isinstance(nlp, str) or nlp is None else getattr(nlp, "lang", None)
    for code, n in sorted(stats.get("languages", {}).items()):
        if code in LANGUAGE_NOTES and code != lang:
            out.append(f"{n} text unit(s) in {LANGUAGE_NAMES.get(code, code)}: {LANGUAGE_NOTES[code]}")
    return out
