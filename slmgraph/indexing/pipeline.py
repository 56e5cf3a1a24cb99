"""The indexing pipeline: a registered list of stages (:data:`STAGES`), each a :class:`Stage` that takes
one :class:`IndexContext` and returns its result dataclass, run in order by :func:`run_index`
(ARCHITECTURE.md "The data flow").

documents -> text units -> extraction records -> (claims, with
``Settings.claims``) -> graph -> communities -> community reports ->
embeddings. The runner keeps the bookkeeping: meta ``complete`` and ``build_key``, each stage's
wall-clock and figures in ``stage_runs``, and the progress lines (each result's ``summary``); each model
call goes to ``llm_calls``. ``estimate`` and the gold scorer run subsets of the same list (:func:`stages`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shlex
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import duckdb

from slmgraph.indexing.stages.claims import ClaimsRemoved, clear_claims, run_claims
from slmgraph.indexing.stages.communities import run_communities
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError, echo
from slmgraph.indexing.stages.embed_ahead import locked_encode
from slmgraph.indexing.stages.extract import (NLP_POOL_MIN_UNITS, extraction_fills_cores, run_extraction,
                                               start_nlp_pool)
from slmgraph.indexing.stages.graph import build_graph
from slmgraph.indexing.stages.ingest import chunking_key, ingest, kept_paths, retire_replaced, retiring
from slmgraph.indexing.stages.ingest_read import path_text, read_input
from slmgraph.model.backend import load_model
from slmgraph.model.client import ModelClient
from slmgraph.model import policy
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.reports import ReportsResult, run_reports
from slmgraph.store.corpus_stats import write_corpus_stats
from slmgraph.store.db import COMPACT_SHARE, Store, dumps, new_run_id
from slmgraph.store.failures import _human

log = logging.getLogger("slmgraph")


def start_embed_ahead(store: Store, settings: Settings, model, get_embedder, busy: int = 1):
    """A started :class:`slmgraph.indexing.stages.embed_ahead.EmbedAhead` for the text units without a vector, or None.

    Started only where the stage under way leaves a core idle: the LLM-free extractor, the local executor,
    and a thread grant larger than ``busy`` (the cores the stage under way holds); the thread takes the rest.
    Not on an update of a complete index, whose derived tables and embeddings are built aside.
    """
    from slmgraph.indexing.stages.embed_ahead import EmbedAhead, embed_ahead_texts
    from slmgraph.indexing.stages.extract_routes import uses_model

    threads = getattr(model, "n_threads", None) or settings.n_threads or 0
    if threads - busy < 1 or settings.executor != "local" or uses_model(settings, model):
        return None
    if store.get_meta("build_key"):
        # An update builds the embeddings aside (Store.stage_derived) on this connection; the thread's own
        # connection would write to the index's tables, which the swap at the end replaces.
        return None
    units = embed_ahead_texts(store)
    return EmbedAhead(store, units, get_embedder, threads=threads - busy).start() if units else None


def model_after_extraction(settings: Settings, model) -> bool:
    """Whether the graph or reports stage calls the model (which then holds every core)."""
    return (policy.model_does("summaries", settings.summaries, model)
            or (settings.reports != "none" and policy.model_does("reports", settings.reports, model)))


def _stop_ahead(ctx: "IndexContext", timeout: float | None = None) -> None:
    """Stop the embed-ahead thread (after its current batch) and note its figures in ``ctx.extras``."""
    ahead = ctx.ahead
    if ahead is None:
        return
    n = ahead.stop(timeout)
    ctx.extras["embed_ahead"] = {"texts": n, "rows": len(ahead.made), "word_pieces": ahead.word_pieces,
                                 "thread_seconds": round(ahead.seconds, 2)}


#: Why a text unit has no candidate names (the candidate pass looks for capitalised words).
NO_CANDIDATES = ("the candidate pass finds names as capitalised words, and the text has none outside sentence "
                 "starts: lowercase prose, only numbers, or a script without capital letters such as Chinese")


def no_entity_reason(store: Store, settings: Settings) -> str:
    """Why an index run found no entity, as one clause (for the warning ``index`` prints).

    Either the candidate pass found no name in any text unit (:data:`NO_CANDIDATES`), or the model kept none
    of the candidates.
    """
    n_units = store.count("text_units")
    cands = store.con.execute("SELECT coalesce(sum(n_candidates), 0) FROM extractions").fetchone()[0]
    if not cands:
        return f"no entity was found in the {n_units} text units: {NO_CANDIDATES}"
    return (f"no entity was found in the {n_units} text units: the model ({settings.extractor} extractor) kept none "
            f"of their {cands} candidate names; a larger --model may")


def idle_options(settings: Settings, model) -> list[str]:
    """One line per option that cannot act on the routes this index run takes (no silent no-op):
    ``--prompts DIR`` when no index stage calls the model (or extraction does not): its instructions act
    on nothing, only its examples' typed names (:mod:`slmgraph.indexing.stages.steer`); ``--entity-types`` naming a type
    the LLM-free extraction never gives (its types come from the NER labels,
    :data:`slmgraph.indexing.stages.ner.NER_TYPES`, and the prompts folder's names)."""
    from slmgraph.indexing.stages.extract_routes import uses_model
    from slmgraph.indexing.stages.ner import NER_TYPES
    from slmgraph.indexing.stages.steer import steered_types, type_map, unused_types

    types = tuple(settings.entity_types)
    extracts = settings.extractor != "nlp" and uses_model(settings, model)
    writes = (policy.model_does("summaries", settings.summaries, model)
              or policy.model_does("reports", settings.reports, model) or settings.claims)
    how = "calibrate a model that wins the stage (slmgraph calibrate MODEL) or force it, e.g. --descriptions model"
    out = []
    unused = unused_types(settings.prompts_dir, types)
    if settings.prompts_dir and not extracts:
        what = "no index stage calls the model" if not writes else "extraction does not call the model"
        named = sum(t in types for _, t in type_map(settings.prompts_dir).values())
        acts = (f"only its examples' {named} typed names act (the LLM-free pass gives them their types)"
                if named else "its extraction prompts and example change nothing in this index")
        out.append(f"--prompts {settings.prompts_dir}: {what} (LLM-free routes), so {acts}; {how}")
    if unused:
        out.append(f"--prompts {settings.prompts_dir}: its examples type names as {', '.join(map(echo, unused))}, "
                   f"not among the entity types, so those names keep other types: add them with --entity-types")
    reachable = {t for t in NER_TYPES.values() if t} | steered_types(settings.prompts_dir, types)
    new = [t for t in types if t not in reachable]
    if new and not extracts:
        out.append(f"--entity-types: the LLM-free extraction types entities from spaCy's labels "
                   f"({', '.join(sorted(reachable))}), so no entity gets {', '.join(map(echo, new))} unless a "
                   f"--prompts folder's examples or entity_patterns.jsonl name one; {how}")
    return out


class RunStore(Store):
    """The store of an index run: the first transaction that commits a change (a stage's first write) also
    marks the index unfinished (meta ``complete`` = 0), so a run killed after it never leaves a changed index
    marked complete; a run that changes nothing writes no meta (ARCHITECTURE.md "Incremental runs")."""

    #: True until a transaction has marked the index unfinished (the runner arms it once the run's meta is set).
    marking = False

    @contextmanager
    def transaction(self):
        with super().transaction() as con:
            if self.marking:
                self.set_meta("complete", "0")
            yield con
        self.marking = False


@dataclasses.dataclass
class IndexContext:
    """What every stage reads: the open index, the settings, the model and the run's options.

    ``client`` None: no stage calls the model (LLM-free extraction, the gold scorer's ``nlp`` config);
    token counts then use ``model.tokenize``. ``embed`` (``texts -> array (n, dim)``) serves the graph
    stage's embedding resolution rule, ``embedder`` (``() -> Embedder``) the embed stage, ``embedder_factory`` (the caller's, or None) the
    embed stage's Ray actors; ``only`` limits
    extraction to those text units (the estimate's samples); ``extras`` collects the runner's figures
    beside the stages' results (``run_index``'s return value: ``run_id``, ``unreadable``, ``embed_ahead``).
    ``prestart``: ingest starts the LLM-free extraction's worker processes once it has cut enough new text
    units for them (:func:`slmgraph.indexing.stages.extract.start_nlp_pool`), kept in ``pool`` until the
    extract stage takes them.
    """

    store: Store
    settings: Settings
    model: object
    prompts: Prompts
    client: ModelClient | None = None
    docs: list = dataclasses.field(default_factory=list)
    keep: list = dataclasses.field(default_factory=list)
    chunking: str | None = None
    progress: bool = False
    say: Callable[[str], None] | None = None
    model_factory: Callable | None = None
    embed: Callable | None = None
    embedder: Callable | None = None
    embedder_factory: Callable | None = None
    only: set[str] | None = None
    summary_limit: int | None = None
    report_limit: int | None = None
    db_path: str | Path = ""
    ahead: object = None
    extras: dict = dataclasses.field(default_factory=dict)
    prestart: bool = False
    pool: object = None

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in the model's tokenizer."""
        return self.client.count(text) if self.client is not None else len(self.model.tokenize(text))


@dataclasses.dataclass(frozen=True)
class Stage:
    """One index stage: ``run(ctx) -> result`` (a dataclass with a ``summary(settings)`` method giving the
    progress lines ``index`` prints).

    ``items``: the result field ``stage_runs`` counts as the stage's items; ``route``: the auto setting
    (:data:`slmgraph.model.policy.SETTINGS`) deciding who does its work, recorded with its figures;
    ``derived``: the stage rebuilds its tables from earlier stages' tables, so it is skipped when nothing
    was new since the last complete build; ``changed(result)``: whether a non-derived stage changed the
    index; ``when(settings)``: whether it runs (None: always), else ``otherwise(ctx)`` runs instead and is
    not recorded; ``after(ctx, result)``: what the runner says or keeps after the summary.
    """

    name: str
    run: Callable[[IndexContext], object]
    items: str = ""
    route: str = ""
    derived: bool = False
    changed: Callable[[object], bool] = lambda res: False
    when: Callable[[Settings], bool] | None = None
    otherwise: Callable[[IndexContext], object] | None = None
    after: Callable[[IndexContext, object], None] | None = None


def _ingest(ctx: IndexContext):
    tried = False

    def added(n: int) -> None:
        # The workers' spawn and spaCy load (a second or two on every core) run beside the cutting, which
        # holds one core, instead of at the extract stage's start.
        nonlocal tried
        if not tried and n >= NLP_POOL_MIN_UNITS:
            tried = True
            ctx.pool = start_nlp_pool(ctx.client, ctx.settings, n)

    prestart = ctx.prestart and ctx.only is None and ctx.pool is None
    return ingest(ctx.store, ctx.docs, ctx.model.tokenize, ctx.model.detokenize, ctx.settings.chunk_size,
                  ctx.settings.chunk_overlap, keep=ctx.keep, chunking=ctx.chunking, progress=ctx.progress,
                  on_added=added if prestart else None)


def _after_ingest(ctx: IndexContext, ing) -> None:
    # The input is partial: a file or folder that exists could not be read (its old documents are kept); a
    # link that leads nowhere and under which nothing was ever indexed took nothing from the index.
    partial = [u for u in ctx.keep if (u.warned and not u.link) or kept_paths(ing.kept, [u])]
    for u in partial:
        if not u.warned:  # a dangling link not named as a text file, under which documents were indexed
            ctx.say(f"warning: {u.line}")
    ctx.extras["unreadable"] = [f"{u.path} ({u.cause})" for u in partial]


def _extract(ctx: IndexContext):
    # Extraction workers on every core leave the thread no spare core: it would only take turns with them.
    ahead = ctx.ahead = (start_embed_ahead(ctx.store, ctx.settings, ctx.model, ctx.embedder)
                         if ctx.embedder is not None and not extraction_fills_cores(
                             ctx.store, ctx.client, ctx.prompts, ctx.settings, ctx.only) else None)
    pool, ctx.pool = ctx.pool, None
    try:
        res = run_extraction(ctx.store, ctx.client, ctx.prompts, ctx.settings, ctx.progress,
                             model_factory=ctx.model_factory, say=ctx.say, only=ctx.only, pool=pool)
    except BaseException:
        if pool is not None:  # run_extraction closes it, unless it failed before taking it
            pool.__exit__(*sys.exc_info())
        # Unwinding (a Ctrl-C, a failure): never wait for the thread's encode (it may be loading the embedder, or
        # stuck on an import lock the interrupted main thread held), only for a commit under way.
        if ahead is not None:
            ahead.abandon()
        raise
    # The graph, communities and reports stages run on one core: the thread goes on (or starts) beside them,
    # unless the model writes there and holds every core.
    if model_after_extraction(ctx.settings, ctx.model):
        _stop_ahead(ctx)
    elif ahead is None and ctx.embedder is not None:
        ctx.ahead = start_embed_ahead(ctx.store, ctx.settings, ctx.model, ctx.embedder)
    return res


def _claims(ctx: IndexContext):
    return run_claims(ctx.store, ctx.client, ctx.prompts, ctx.settings, ctx.progress)


def _clear_claims(ctx: IndexContext):
    return ClaimsRemoved(clear_claims(ctx.store))


def _graph(ctx: IndexContext):
    return build_graph(ctx.store, ctx.count_tokens, ctx.settings.entity_description_max_tokens,
                       settings=ctx.settings, embed=ctx.embed, client=ctx.client, prompts=ctx.prompts,
                       progress=ctx.progress, summary_limit=ctx.summary_limit)


def _after_graph(ctx: IndexContext, g) -> None:
    if not g.entities and ctx.say is not None:
        ctx.say(f"warning: {no_entity_reason(ctx.store, ctx.settings)}; global and local search need entities: "
                f"ask with  slmgraph query --db {shlex.quote(str(ctx.db_path))} --method basic \"your question\"  "
                "(it reads the text units)")


def _communities(ctx: IndexContext):
    return run_communities(ctx.store, ctx.settings)


def _reports(ctx: IndexContext):
    if ctx.settings.reports == "none":
        rep = skip_reports(ctx.store)
    else:
        rep = run_reports(ctx.store, ctx.client, ctx.prompts, ctx.settings, ctx.progress,
                          model_factory=ctx.model_factory, say=ctx.say, limit=ctx.report_limit)
    ctx.store.set_meta("reports", "skipped" if rep.skipped else "written")
    # The corpus's word and phrase statistics, counted once here so a query reads them (store.corpus_stats).
    with ctx.store.transaction() as con:
        write_corpus_stats(con)
    return rep


def _embed(ctx: IndexContext):
    from slmgraph.indexing.stages.embed import run_embeddings

    emb = ctx.embedder()
    _stop_ahead(ctx)
    ahead, ctx.ahead = ctx.ahead, None
    if ahead is not None:
        return run_embeddings(ctx.store, ahead.wrap(emb), ctx.progress, made_ahead=ahead.made,
                              ahead_pieces=ahead.word_pieces)
    if ctx.settings.executor != "ray":
        return run_embeddings(ctx.store, emb, ctx.progress)
    return _embed_on_ray(ctx, emb)


def _embed_on_ray(ctx: IndexContext, emb):
    """The embed stage with its encoding on Ray actors (:class:`slmgraph.indexing.executors.rayembed.RayEmbedPool`):
    as many actors as the thread plan has workers, each with the run's embedder (``embedder_factory``, or the
    bundled one at the actor's threads); opened only when something is left to encode."""
    import functools

    from slmgraph.indexing.executors.batch import plan_threads
    from slmgraph.indexing.executors.rayembed import RayEmbedPool
    from slmgraph.indexing.stages.embed import Embedder, run_embeddings

    cores = getattr(ctx.model, "n_threads", None) or ctx.settings.n_threads or 1
    plan = plan_threads(cores, cores, ctx.settings.workers)
    make = ctx.embedder_factory or functools.partial(Embedder, batch_size=ctx.settings.embed_batch_size,
                                                     threads=plan.threads,
                                                     precision=getattr(emb, "precision", "fp32"))

    class LazyPool:
        """Starts the actors on the first ``results`` call, so a run with nothing to encode starts no Ray."""

        pool = None

        def results(self, tasks):
            self.pool = RayEmbedPool(make, plan, ctx.settings.ray_address, actors=ctx.settings.workers).__enter__()
            if ctx.say is not None:
                ctx.say(f"embed: {len(self.pool.actors)} Ray actors x {plan.threads} thread(s)")
            yield from self.pool.results(tasks)

    lazy = LazyPool()
    try:
        return run_embeddings(ctx.store, emb, ctx.progress, pool=lazy)
    finally:
        if lazy.pool is not None:
            lazy.pool.__exit__(None, None, None)


#: The index pipeline, in order (ARCHITECTURE.md "The data flow"): ``index`` runs every stage,
#: ``estimate`` and the gold scorer run the ones they name (:func:`stages`).
STAGES: list[Stage] = [
    Stage("ingest", _ingest, items="text_units", changed=lambda r: bool(r.added_units or r.removed_units),
          after=_after_ingest),
    Stage("extract", _extract, items="extracted", route="descriptions", changed=lambda r: bool(r.extracted)),
    Stage("claims", _claims, items="extracted", changed=lambda r: bool(r.removed if isinstance(r, ClaimsRemoved) else r.extracted),
          when=lambda s: s.claims, otherwise=_clear_claims),
    Stage("graph", _graph, items="entities", route="summaries", derived=True, after=_after_graph),
    Stage("communities", _communities, items="levels", derived=True),
    Stage("reports", _reports, items="reports", route="reports", derived=True),
    Stage("embed", _embed, items="embedded", derived=True),
]


def stages(*names: str) -> list[Stage]:
    """The registered stages named (all of them when none is), in the pipeline's order.

    Raises:
        KeyError: a name no registered stage has.
    """
    known = {st.name for st in STAGES}
    missing = [n for n in names if n not in known]
    if missing:
        raise KeyError(f"no index stage named {', '.join(missing)}")
    return [st for st in STAGES if not names or st.name in names]


def run_index(input_path: str | Path, db_path: str | Path, settings: Settings, *, replace: bool = False,
              follow_links: bool = False, progress: bool = True, model=None, embedder_factory: Callable | None = None,
              say: Callable[[str], None] = print, model_factory: Callable | None = None,
              wait: float = 0.0,
              sources: dict[str, str] | None = None, summary_limit: int | None = None,
              report_limit: int | None = None, warn: Callable[[str], None] | None = None) -> dict:
    """Index ``input_path`` into the DuckDB file ``db_path`` (created if new), running :data:`STAGES`.

    Re-running on the same input is incremental: unchanged text units keep
    their extractions, removed documents are removed, and every model call
    whose prompt is unchanged is answered from the index's cache. With
    ``settings.claims`` off, claims of an earlier run are deleted (their
    model outputs stay cached).

    Args:
        settings: all settings (see :class:`slmgraph.config.settings.Settings`).
        replace: allow indexing a different input folder into an existing
            index (its old documents are removed).
        follow_links: read what symbolic links under the input lead to outside it (else each such link is
            named in a warning, and what the index holds under it is kept: :func:`read_input`).
        model: a loaded model (tests pass a fake); None loads ``settings.model_path``.
        embedder_factory: ``() -> Embedder``; None = the bundled all-MiniLM-L6-v2.
            Called at most once, when the graph stage's embedding resolution
            rule or the embed stage first needs it.
        model_factory: ``threads -> Model`` for extraction worker processes
            (tests pass a picklable fake); None = each worker loads the GGUF.
        say: where one-line progress notes and warnings go.
        warn: where the warnings naming a file of the input left out of the index go (undecodable, empty,
            repeated), when not to ``say``: a quiet run still names every file it did not index.
        wait: seconds to wait while another process holds the index (0 = refuse at once).
        sources: ``{setting: "flag --x" | "file PATH" | "default" | ...}`` (slmgraph.config.file.resolve);
            recorded with the values in ``meta`` key ``settings_sources`` for ``stats``.
        summary_limit, report_limit: model-written summaries and reports only for that many elements /
            largest communities (``build_graph``, ``run_reports``; the stage bench's caps, not recorded in
            the index's settings); None = all.

    Returns:
        dict of per-stage figures: ``run_id`` and one dict per stage run (with its ``seconds``);
        ``up_to_date: True`` (and no graph/communities/reports/embed entries) when nothing was new
        since the last complete build with the same settings, model and prompts
        (ARCHITECTURE.md, "Incremental runs").

    Raises:
        UserError: bad input folder, model or ``--db`` (nothing in the index
            is changed before the input has been read successfully; every such
            error comes before the input's warnings, e.g. skipped files, are said).
        StorageError: a write or checkpoint failed (disk full): the index stays
            marked incomplete, committed work is kept, the same call resumes.
    """
    root = path_text(Path(input_path).expanduser().resolve())
    # Check --db (and --replace) before any work or output: reading the input, its warnings, the model load.
    old_root, n_docs = Store.precheck(db_path, wait=wait, on_wait=say)
    if old_root and old_root != root and not os.path.lexists(root):
        read_input(input_path, follow_links)  # a missing input is said as such, not as another index's input
    if old_root and old_root != root and not replace and n_docs:
        raise UserError(f"index {db_path} was built from {old_root}, not {root}: pass --replace to "
                        "re-index it from the new input, or pick another --db")
    prompts = Prompts(settings.prompts_dir)
    reading = read_input(input_path, follow_links)
    docs, warnings = reading.documents, reading.warnings
    if model is None:
        model = load_model(settings.model_path, settings.n_ctx, settings.n_threads, settings.seed,
                           settings.threads_explicit)
    for w in warnings:  # after every check that can refuse the command (the model's --n-ctx is one)
        (warn if warn is not None and w.startswith("skipped ") else say)(f"warning: {w}")
    store = RunStore(db_path, create=True, wait=wait, on_wait=say)
    ctx = None
    try:
        old_root = store.get_meta("input_root")
        if old_root and old_root != root and not replace and store.count("documents"):
            raise UserError(f"index {db_path} was built from {old_root}, not {root}: pass --replace to "
                            "re-index it from the new input, or pick another --db")
        # What the last complete build was made with: a re-run that finds nothing new under the same
        # settings, model and prompts has nothing to rebuild (ARCHITECTURE.md, "Incremental runs").
        # Who does each auto stage (slmgraph.model.policy): a new capability record changes the build like a setting.
        routes = policy.routes(settings, model)
        notice = policy.notice(settings, model)
        if notice:
            say(notice)
        for line in idle_options(settings, model):
            say(f"warning: {line}")
        build_key = dumps({"settings": settings.index_fingerprint(), "model": str(model.path or model.name),
                           "prompts": str(Path(settings.prompts_dir).resolve()) if settings.prompts_dir else "",
                           "routes": {k: v["route"] for k, v in routes.items()}})
        up_to_date_before = store.get_meta("complete") == "1" and store.get_meta("build_key") == build_key
        # meta complete = 0 from the first write of a run until its last stage: here when the settings,
        # model or prompts changed; otherwise in the transaction of the first stage that changes the index
        # (RunStore), so a re-run with nothing to do writes only its stage_runs rows.
        if not up_to_date_before or old_root != root:
            store.set_meta("complete", "0")
        store.set_meta("input_root", root)
        store.set_meta("follow_links", "1" if follow_links else "")  # Index.insert() re-reads the input the same way
        store.set_meta("model_path", str(model.path or ""))
        store.set_meta("model_name", model.name)
        store.set_meta("model_params", str(getattr(model, "n_params", None) or ""))
        store.set_meta("settings", dumps(settings.index_fingerprint()))
        store.set_meta("routes", dumps(routes))
        from slmgraph.config.file import report as settings_report

        store.set_meta("settings_sources", dumps(settings_report(settings, sources or {})))
        store.marking = True
        run_id = new_run_id()
        embedder: list = []  # loaded on first use and shared by the embed-ahead thread, the graph and embed stages
        # The embed-ahead thread and the main thread (graph stage) may both ask first: the model loads once.
        embedder_lock = threading.Lock()

        def get_embedder():
            with embedder_lock:
                if not embedder:
                    from slmgraph.indexing.stages.embed import Embedder

                    # torch's intra-op threads: what the thread registry granted this process
                    # (slmgraph.model.threads), not the configured count, which other slmgraph processes may
                    # already be using.
                    threads = getattr(model, "n_threads", None) or settings.n_threads
                    embedder.append(embedder_factory() if embedder_factory else
                                    Embedder(batch_size=settings.embed_batch_size, threads=threads,
                                             precision=settings.embed_precision))
                return embedder[0]

        ctx = IndexContext(
            store=store, settings=settings, model=model, prompts=prompts, client=ModelClient(model, store, run_id),
            docs=docs, keep=reading.unreadable, progress=progress, say=say, model_factory=model_factory,
            chunking=chunking_key(str(getattr(model, "fingerprint", None) or model.name), settings.chunk_size,
                                  settings.chunk_overlap),
            embed=lambda texts: locked_encode(get_embedder(), texts), embedder=get_embedder,
            embedder_factory=embedder_factory,
            summary_limit=summary_limit, report_limit=report_limit, db_path=db_path, extras={"run_id": run_id},
            prestart=True)
        out = ctx.extras
        changed = staged = False
        for st in STAGES:
            if st.derived and up_to_date_before and not changed:
                # Rebuilding the graph, communities, reports and embeddings would give the same tables and
                # rewrite most of the file (it grew 7.4 -> 11.8 MB on the demo) for nothing.
                rest = ", ".join(s.name for s in STAGES if s.derived and (s.when is None or s.when(settings)))
                say(f"{rest}: up to date (no new or changed text unit, same settings)")
                store.set_meta("complete", "1")  # written only if a stage marked it 0 (set_meta skips an equal value)
                out["up_to_date"] = True
                compact(store, say, out)
                return out
            if st.derived and not staged and store.get_meta("build_key"):
                # Queries read the last complete build until every derived table is rebuilt (swap below); a
                # first build has none to keep, and queries refuse it until it completes. The edited
                # documents' old versions, which that build cites, stay until the swap but are not read.
                store.stage_derived(hidden_docs=sorted(retiring(store)))
                staged = True
            if st.derived and not staged:
                # Every text unit is extracted and no complete build cites the old versions: they go now.
                retire_replaced(store)
            if st.when is not None and not st.when(settings):
                res = st.otherwise(ctx) if st.otherwise is not None else None
            else:
                res = run_stage(ctx, st, run_id, routes)
            if res is None:
                continue
            changed = changed or (not st.derived and st.changed(res))
            for line in res.summary(settings):
                say(line)
            if st.after is not None:
                st.after(ctx, res)
        if staged:
            store.swap_derived(also=lambda con: retire_replaced(store, con))
        # Everything into the .duckdb file first: the index is marked complete only once it is there.
        store.checkpoint()
        store.set_meta("build_key", build_key)
        # The documents this build holds: those added up to now (an edited one keeps its first added_at), so
        # a query during a later, interrupted update counts the documents its derived tables were built from.
        built = store.con.execute("SELECT max(added_at)::VARCHAR FROM documents").fetchone()[0]
        if built:
            store.set_meta("built_added_at", built)
        store.set_meta("complete", "1")
        compact(store, say, out)
        return out
    except duckdb.Error as exc:  # a failed write (disk full): one line, nothing committed lost
        raise store.storage_error(exc) from None
    finally:
        if ctx is not None and ctx.pool is not None:  # a run that ends between ingest and extraction
            ctx.pool.__exit__(*sys.exc_info())
        if ctx is not None and ctx.ahead is not None:  # a run that ends before the embed stage
            ctx.ahead.abandon()
        store.close()


def run_stage(ctx: IndexContext, st: Stage, run_id: str, routes: dict):
    """Run one stage and record it: its wall-clock, items and figures (with its route, from
    :func:`slmgraph.model.policy.routes`) in ``stage_runs``, and in ``ctx.extras[name]`` with its
    ``seconds``. Returns the stage's result."""
    t0 = time.perf_counter()
    res = st.run(ctx)
    dt = time.perf_counter() - t0
    figures = dataclasses.asdict(res)
    if st.route:  # which route ran and why, in the stage_runs row
        figures = dict(figures, route=routes[st.route])
    items = figures.get(st.items, 0) if st.items else 0
    ctx.store.record_stage(run_id, st.name, dt, int(items) if isinstance(items, (int, float)) else 0, dumps(figures))
    ctx.extras[st.name] = dict(figures, seconds=round(dt, 2))
    return res


def compact(store: Store, say: Callable[[str], None], out: dict) -> None:
    """Compact the finished index when its free blocks pass :data:`slmgraph.store.db.COMPACT_SHARE` of the file
    (:meth:`Store.compact`), and say so; ``out["compact"]`` gets the sizes in bytes."""
    c = store.compact()
    out["compact"] = c._asdict()
    if c.after is not None:
        say(f"index: compacted from {_human(c.size)} to {_human(c.after)} (rewritten tables had left "
            f"{_human(c.free)} of free blocks, {c.free / c.size:.0%} of the file; compacted past {COMPACT_SHARE:.0%})")
    elif c.reason:
        say(f"warning: index not compacted ({c.reason}); its {_human(c.free)} of free blocks are reused by later "
            "runs")


def skip_reports(store: Store) -> ReportsResult:
    """The report stage under ``--no-reports``: no report is written, and those of an
    earlier run are deleted (they described communities that were just recomputed;
    their model outputs stay in the cache). Returns a :class:`ReportsResult` with
    ``skipped`` and ``removed`` (reports deleted)."""
    n = store.count("community_reports")
    if n:
        with store.transaction():
            store.con.execute("DELETE FROM community_reports")
    return ReportsResult(skipped=True, reason="--no-reports", reports=0, removed=n)
