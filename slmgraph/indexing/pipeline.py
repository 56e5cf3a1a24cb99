"""The indexing pipeline: every stage in order, each reading the previous
stage's tables and writing its own (ARCHITECTURE.md "The data flow").

documents -> text units -> extraction records -> (claims, with
``Settings.claims``) -> graph -> communities -> community reports ->
embeddings. Each stage's wall-clock goes to ``stage_runs``; each model call to
``llm_calls``.
"""

from __future__ import annotations

import dataclasses
import logging
import shlex
import time
from pathlib import Path
from typing import Callable

import duckdb

from slmgraph.indexing.stages.claims import clear_claims, run_claims
from slmgraph.indexing.stages.communities import run_communities
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.indexing.stages.extract import run_extraction
from slmgraph.indexing.stages.graph import build_graph
from slmgraph.indexing.stages.ingest import chunking_key, ingest, kept_paths
from slmgraph.indexing.stages.ingest_read import path_text, read_input
from slmgraph.model.backend import load_model
from slmgraph.model.client import ModelClient
from slmgraph.model import policy
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.reports import ReportsResult, run_reports
from slmgraph.store.db import COMPACT_SHARE, Store, dumps, new_run_id
from slmgraph.store.failures import _human

log = logging.getLogger("slmgraph")

#: Index stage -> the auto setting (slmgraph.model.policy.SETTINGS) deciding who does its work.
ROUTE_OF_STAGE = {"extract": "descriptions", "graph": "summaries", "reports": "reports"}


#: Seconds an interrupted run waits for the embed-ahead thread before it leaves it to die with the process.
EMBED_AHEAD_GRACE_S = 2.0


def start_embed_ahead(store: Store, settings: Settings, model, get_embedder):
    """A started :class:`slmgraph.indexing.stages.embed_ahead.EmbedAhead` for the text units without a vector, or None.

    Started only where extraction leaves a core idle: the LLM-free extractor (one process, one core), the
    local executor, and a thread grant of two or more; the thread takes the cores extraction does not use.
    """
    from slmgraph.indexing.stages.embed_ahead import EmbedAhead, embed_ahead_texts
    from slmgraph.indexing.stages.extract_routes import uses_model

    threads = getattr(model, "n_threads", None) or settings.n_threads or 0
    if threads < 2 or settings.executor != "local" or uses_model(settings, model):
        return None
    texts = embed_ahead_texts(store)
    return EmbedAhead(texts, get_embedder, threads=threads - 1).start() if texts else None


def no_entity_reason(store: Store, settings: Settings) -> str:
    """Why an index run found no entity, as one clause (for the warning ``index`` prints).

    Either the candidate pass found no name in any text unit (see
    :data:`slmgraph.tools.estimate.NO_CANDIDATES`), or the model kept none of the candidates.
    """
    from slmgraph.tools.estimate import NO_CANDIDATES

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
        out.append(f"--prompts {settings.prompts_dir}: its examples type names as {', '.join(unused)}, not among "
                   f"the entity types, so those names keep other types: add them with --entity-types")
    reachable = {t for t in NER_TYPES.values() if t} | steered_types(settings.prompts_dir, types)
    new = [t for t in types if t not in reachable]
    if new and not extracts:
        out.append(f"--entity-types: the LLM-free extraction types entities from spaCy's labels "
                   f"({', '.join(sorted(reachable))}), so no entity gets {', '.join(new)} unless a --prompts "
                   f"folder's examples or entity_patterns.jsonl name one; {how}")
    return out


def run_index(input_path: str | Path, db_path: str | Path, settings: Settings, *, replace: bool = False,
              progress: bool = True, model=None, embedder_factory: Callable | None = None,
              say: Callable[[str], None] = print, model_factory: Callable | None = None,
              wait: float = 0.0,
              sources: dict[str, str] | None = None, summary_limit: int | None = None,
              report_limit: int | None = None) -> dict:
    """Index ``input_path`` into the DuckDB file ``db_path`` (created if new).

    Re-running on the same input is incremental: unchanged text units keep
    their extractions, removed documents are removed, and every model call
    whose prompt is unchanged is answered from the index's cache. With
    ``settings.claims`` off, claims of an earlier run are deleted (their
    model outputs stay cached).

    Args:
        settings: all settings (see :class:`slmgraph.config.settings.Settings`).
        replace: allow indexing a different input folder into an existing
            index (its old documents are removed).
        model: a loaded model (tests pass a fake); None loads ``settings.model_path``.
        embedder_factory: ``() -> Embedder``; None = the bundled all-MiniLM-L6-v2.
            Called at most once, when the graph stage's embedding resolution
            rule or the embed stage first needs it.
        model_factory: ``threads -> Model`` for extraction worker processes
            (tests pass a picklable fake); None = each worker loads the GGUF.
        say: where one-line progress notes and warnings go.
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
    if old_root and old_root != root and not replace and n_docs:
        raise UserError(f"index {db_path} was built from {old_root}, not {root}: pass --replace to "
                        "re-index it from the new input, or pick another --db")
    prompts = Prompts(settings.prompts_dir)
    reading = read_input(input_path)
    docs, warnings = reading.documents, reading.warnings
    if model is None:
        model = load_model(settings.model_path, settings.n_ctx, settings.n_threads, settings.seed,
                           settings.threads_explicit)
    for w in warnings:  # after every check that can refuse the command (the model's --n-ctx is one)
        say(f"warning: {w}")
    store = Store(db_path, create=True, wait=wait, on_wait=say)
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
        # model or prompts changed; otherwise by the stage that first finds work (ingest, extraction,
        # claims), so a re-run with nothing to do writes only its stage_runs rows.
        if not up_to_date_before or old_root != root:
            store.set_meta("complete", "0")
        store.set_meta("input_root", root)
        store.set_meta("model_path", str(model.path or ""))
        store.set_meta("model_name", model.name)
        store.set_meta("model_params", str(getattr(model, "n_params", None) or ""))
        store.set_meta("settings", dumps(settings.index_fingerprint()))
        store.set_meta("routes", dumps(routes))
        from slmgraph.config.file import report as settings_report

        store.set_meta("settings_sources", dumps(settings_report(settings, sources or {})))
        run_id = new_run_id()
        client = ModelClient(model, store, run_id)
        out: dict = {"run_id": run_id}

        def stage(name: str, fn, items_key: str | None = None):
            t0 = time.perf_counter()
            res = fn()
            dt = time.perf_counter() - t0
            figures = res if isinstance(res, dict) else dataclasses.asdict(res)
            if name in ROUTE_OF_STAGE:  # which route ran and why, in the stage_runs row
                figures = dict(figures, route=routes[ROUTE_OF_STAGE[name]])
            items = figures.get(items_key, 0) if items_key else 0
            store.record_stage(run_id, name, dt, int(items) if isinstance(items, (int, float)) else 0,
                               dumps(figures))
            out[name] = dict(figures, seconds=round(dt, 2))
            return res

        chunking = chunking_key(str(getattr(model, "fingerprint", None) or model.name), settings.chunk_size,
                                settings.chunk_overlap)
        ing = stage("ingest", lambda: ingest(store, docs, model.tokenize, model.detokenize, settings.chunk_size,
                                             settings.chunk_overlap, keep=reading.unreadable, chunking=chunking,
                                             progress=progress), "text_units")
        kept = f", {len(ing.kept)} document{'s' if len(ing.kept) > 1 else ''} kept unread" if ing.kept else ""
        say(f"ingest: {ing.documents} documents, {ing.tokens} tokens, {ing.text_units} text units "
            f"({ing.added_units} new, {ing.removed_units} removed{kept})")
        # The input is partial: a file or folder that exists could not be read (its old documents are kept); a
        # link that leads nowhere and under which nothing was ever indexed took nothing from the index.
        partial = [u for u in reading.unreadable if (u.warned and not u.link) or kept_paths(ing.kept, [u])]
        for u in partial:
            if not u.warned:  # a dangling link not named as a text file, under which documents were indexed
                say(f"warning: {u.line}")
        out["unreadable"] = [f"{u.path} ({u.cause})" for u in partial]
        embedder: list = []  # loaded on first use and shared by the embed-ahead thread, the graph and embed stages

        def get_embedder():
            if not embedder:
                from slmgraph.indexing.stages.embed import Embedder

                # torch's intra-op threads: what the thread registry granted this process (slmgraph.model.threads),
                # not the configured count, which other slmgraph processes may already be using.
                threads = getattr(model, "n_threads", None) or settings.n_threads
                embedder.append(embedder_factory() if embedder_factory else
                                Embedder(batch_size=settings.embed_batch_size, threads=threads))
            return embedder[0]

        ahead = start_embed_ahead(store, settings, model, get_embedder)
        try:
            ex = stage("extract", lambda: run_extraction(store, client, prompts, settings, progress,
                                                             model_factory=model_factory, say=say), "extracted")
        except BaseException:
            # Unwinding (a Ctrl-C, a failure): never wait long for the thread, which may be stuck on an import
            # lock the interrupted main thread held.
            if ahead is not None:
                ahead.stop(timeout=EMBED_AHEAD_GRACE_S)
            raise
        if ahead is not None:
            out["embed_ahead"] = {"texts": ahead.stop(), "thread_seconds": round(ahead.seconds, 2)}
        status = ", ".join(f"{k} {v}" for k, v in sorted(ex.status.items())) or "nothing new"
        grounding = (f"{ex.ungrounded} entities dropped by grounding (names not in their text unit)"
                     if settings.grounding else "grounding off")
        invalid = "names not among the candidates" if settings.constrain_names else "empty or overlong names"
        say(f"extract: {ex.extracted} text units extracted, {ex.reused} reused; the new ones gave "
            f"{ex.entities} entities, {ex.relationships} relationships; {ex.dropped} records dropped by validation "
            f"(duplicates, self-loops, {invalid}); {grounding}; status: {status}")
        cl = None
        if settings.claims:
            cl = stage("claims", lambda: run_claims(store, client, prompts, settings, progress), "extracted")
            say(f"claims: {cl['extracted']} text units read, {cl['reused']} reused, {cl['no_entities']} without "
                f"entities; {cl['claims']} claims stored ({cl['self']} with subject = object kept without an object), "
                f"{cl['dropped']} dropped ({cl['ungrounded']} whose sentence does not name the subject, {cl['invalid']} "
                f"duplicates or unknown names or sentences); {cl['total']} claims in the index")
        removed_claims = 0
        if not settings.claims:
            removed = removed_claims = clear_claims(store)
            if removed:
                say(f"claims: off; {removed} claims of an earlier run removed")
        nothing_new = (up_to_date_before and not ing.added_units and not ing.removed_units
                       and not ex.extracted and not (cl is not None and cl["extracted"])
                       and not removed_claims)
        if nothing_new:
            # Rebuilding the graph, communities, reports and embeddings would give the same tables and
            # rewrite most of the file (it grew 7.4 -> 11.8 MB on the demo) for nothing.
            say("graph, communities, reports, embed: up to date (no new or changed text unit, same settings)")
            store.set_meta("complete", "1")  # written only if a stage marked it 0 (set_meta skips an equal value)
            out["up_to_date"] = True
            compact(store, say, out)
            return out
        g = stage("graph", lambda: build_graph(store, client.count, settings.entity_description_max_tokens,
                                               settings=settings, embed=lambda texts: get_embedder().encode(texts),
                                               client=client, prompts=prompts, progress=progress,
                                               summary_limit=summary_limit), "entities")
        merged = ", ".join(f"{k} {v}" for k, v in g.merges.items() if v) or "none"
        summ = (f"{g.summarized} element summaries by the model ({g.summary_calls} model calls, "
                f"{g.summary_cache_hits} from cache, {g.summaries_rejected} ungrounded ones joined instead)"
                if g.summaries == "model" else "descriptions joined")
        say(f"graph: {g.entities} entities, {g.relationships} relationships, {g.isolated} isolated; "
            f"entity resolution merges: {merged}; {summ}")
        if not g.entities:
            say(f"warning: {no_entity_reason(store, settings)}; global and local search need entities: ask with  "
                f"slmgraph query --db {shlex.quote(str(db_path))} --method basic \"your question\"  (it reads the "
                "text units)")
        com = stage("communities", lambda: run_communities(store, settings), "levels")
        per = ", ".join(f"level {k}: {v}" for k, v in sorted(com.per_level.items()))
        say(f"communities: {com.levels} level{'s' if com.levels != 1 else ''} ({per})" if com.levels else
            "communities: none (no entities)")
        if settings.reports == "none":
            rep = stage("reports", lambda: skip_reports(store), "reports")
            store.set_meta("reports", "skipped")
            removed = f"; {rep.removed} reports of an earlier run removed" if rep.removed else ""
            say(f"reports: skipped (--no-reports){removed}: answer global questions with --method lazy")
        else:
            rep = stage("reports", lambda: run_reports(store, client, prompts, settings, progress,
                                                       model_factory=model_factory, say=say, limit=report_limit),
                        "reports")
            store.set_meta("reports", "written")
            say(f"reports: {rep.reports} written ({rep.model_calls} model calls, {rep.cache_hits} from cache, "
                f"{rep.single} single-entity), {rep.carried} carried down")
            if rep.budget_tokens:
                cut = "whole descriptions" if rep.description_tokens is None else \
                    f"descriptions cut to {rep.description_tokens} tokens"
                scaled = f", contexts scaled to {rep.budget_scale:.0%}" if rep.budget_scale < 1 else ""
                say(f"reports: budget {rep.budget_tokens:,} prompt tokens (--report-budget {settings.report_budget:g} "
                    f"x corpus tokens), planned {rep.planned_tokens:,}: {cut}{scaled}")

        def embed():
            from slmgraph.indexing.stages.embed import run_embeddings

            return run_embeddings(store, ahead.wrap(get_embedder()) if ahead else get_embedder(), progress)

        emb = stage("embed", embed, "embedded")
        say(f"embed: {emb.embedded} vectors computed ({emb.word_pieces} word pieces), {emb.kept} kept, "
            f"{emb.reused} reused by content (same text in the embedder's window)")
        # Everything into the .duckdb file first: the index is marked complete only once it is there.
        store.checkpoint()
        store.set_meta("build_key", build_key)
        store.set_meta("complete", "1")
        compact(store, say, out)
        return out
    except duckdb.Error as exc:  # a failed write (disk full): one line, nothing committed lost
        raise store.storage_error(exc) from None
    finally:
        store.close()


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
