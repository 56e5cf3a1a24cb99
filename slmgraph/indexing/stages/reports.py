"""Community reports, written bottom-up (paper sec. 3.1.5; ARCHITECTURE.md stage 6): the stage's run over
every community (:func:`run_reports`) and the model's report call (schema, prompt, parsing).

The pieces it puts together, one concern each:

* :mod:`slmgraph.indexing.stages.report_context`: the context a report's prompt shows (element rows
  ranked by combined degree, children's reports standing for their elements, claims), within
  ``report_context_tokens`` and the per-build budget;
* :mod:`slmgraph.indexing.stages.report_budget`: the per-build report budget (``Settings.report_budget``
  prompt tokens per corpus token, beyond the fixed prefix), which chooses the description cap;
* :mod:`slmgraph.indexing.stages.report_data`: reports built from the data (models under 1B parameters,
  ``Settings.reports`` = ``auto`` or ``data``), findings from the data, and the checks on a model's text;
* :mod:`slmgraph.indexing.stages.report_store`: the rows in the index file;
* :mod:`slmgraph.indexing.executors.bottom_up`: the order, children before parents.

The model writes JSON (title, summary, findings, rating, rating_explanation)
under a schema. A community carried down unchanged from the level above
reuses that report (no model call), and a community of one entity with no
relationships gets a report made from that entity's description (no model
call): there is nothing to summarise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tqdm import tqdm

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.indexing.executors.bottom_up import bottom_up
from slmgraph.indexing.stages.claims import load_claims
from slmgraph.indexing.stages.concepts import concept_ids
from slmgraph.indexing.stages.extract_routes import model_writes, use_model_descriptions
from slmgraph.indexing.stages.report_budget import plan_report_budget
from slmgraph.indexing.stages.report_context import element_context, subreport_context
from slmgraph.indexing.stages.report_data import (
    Report, data_report, ground_report, lowercase_words, text_findings, without_orders,
)
from slmgraph.indexing.stages.report_store import largest_communities, store_report, store_reports
from slmgraph.indexing.stages.topics import community_topics, corpus_documents, coverage_sentence
from slmgraph.model.client import DEADLINE_REPORT_S, ModelClient
from slmgraph.store.db import Store
from slmgraph.store.rows import CommunityRow, EntityRow, RelationshipRow, rows
from slmgraph.text.prose import parse_json

#: Fewest context tokens a report prompt must have room for (a few entity and relationship rows);
#: a smaller window is a user error (raise --n-ctx).
MIN_REPORT_CONTEXT_TOKENS = 100
REPORT_SCHEMA_LIMITS = {"title": 80, "summary": 500, "rating_explanation": 200, "finding_summary": 120,
                        "finding_explanation": 400, "findings": 5}


def report_schema(with_findings: bool = True) -> dict:
    """JSON schema of a community report (flat, capped strings, rating enum 0..10).

    Without findings the model writes only title, summary and rating; the
    findings are then taken from the community's top relationships (see
    :func:`text_findings`).
    """
    L = REPORT_SCHEMA_LIMITS
    props = {
        "title": {"type": "string", "maxLength": L["title"]},
        "summary": {"type": "string", "maxLength": L["summary"]},
        "rating": {"type": "integer", "enum": list(range(0, 11))},
        "rating_explanation": {"type": "string", "maxLength": L["rating_explanation"]},
    }
    if with_findings:
        props["findings"] = {"type": "array", "maxItems": L["findings"], "items": {
            "type": "object", "properties": {
                "summary": {"type": "string", "maxLength": L["finding_summary"]},
                "explanation": {"type": "string", "maxLength": L["finding_explanation"]}},
            "required": ["summary", "explanation"]}}
    return {"type": "object", "properties": props, "required": list(props)}


def _parse_report(text: str) -> dict:
    data, status = parse_json(text)
    if not isinstance(data, dict):
        data = {}
    findings = data.get("findings") if isinstance(data.get("findings"), list) else []
    findings = [f for f in findings if isinstance(f, dict) and (f.get("summary") or f.get("explanation"))]
    try:
        rating = float(data.get("rating", 0))
    except (TypeError, ValueError):
        rating = 0.0
    return {"title": str(data.get("title") or "").strip(), "summary": str(data.get("summary") or "").strip(),
            "findings": findings, "rating": max(0.0, min(10.0, rating)),
            "rating_explanation": str(data.get("rating_explanation") or "").strip(), "status": status}


def worker_job(client: ModelClient, prompts: Prompts, settings: Settings, model) -> Callable[[str], str]:
    """What a report worker does per community (:class:`slmgraph.indexing.executors.batch.WorkerSpec` ``make_job``).

    Returns ``user prompt -> model output text``: the same call as the serial
    path (:func:`_write`), so the cache key, the ledger row and the output do
    not depend on where the report is written. The system prompt (the fixed
    prefix) is evaluated once per worker and its KV state reused.
    """
    with_findings = use_model_descriptions(settings, model)
    system = prompts.text("report_system" if with_findings else "report_system_short")
    return lambda user: _write(client, system, user, settings, with_findings)


def _write(client: ModelClient, system: str, user: str, settings: Settings, with_findings: bool) -> str:
    """One report call: JSON under :func:`report_schema`, capped at ``report_max_tokens``, 180 s deadline."""
    return client.call("report", system, user, schema=report_schema(with_findings),
                       max_tokens=settings.report_max_tokens, deadline_s=DEADLINE_REPORT_S).text


@dataclass
class ReportsResult:
    """What stage 6 did: ``reports`` written (``single`` of them for one entity without
    relationships, ``carried`` copied down from an unsplittable ancestor), ``model_calls`` and
    ``cache_hits`` (worker processes included), ``written_by`` (``model`` or ``data``:
    :func:`data_report`), ``findings`` (``model`` or ``text``), ``ungrounded_fields_replaced``,
    the thread plan (``workers``, ``threads``, ``startup_seconds``); ``skipped`` with
    ``reason`` under ``--no-reports``, when ``removed`` counts the reports of an earlier run deleted;
    the per-build report budget (:class:`slmgraph.indexing.stages.report_budget.ReportBudget`): ``budget_tokens``
    (0: none),
    ``planned_tokens`` (prompt tokens beyond the fixed prefix the model-written reports were planned
    to evaluate), ``description_tokens`` (the description cap; None: whole) and ``budget_scale``."""
    reports: int = 0
    carried: int = 0
    single: int = 0
    written_by: str = "data"
    findings: str = "text"
    ungrounded_fields_replaced: int = 0
    workers: int = 1
    threads: int = 0
    startup_seconds: float = 0.0
    model_calls: int = 0
    cache_hits: int = 0
    skipped: bool = False
    reason: str = ""
    removed: int = 0
    budget_tokens: int = 0
    planned_tokens: int = 0
    description_tokens: int | None = None
    budget_scale: float = 1.0

    def summary(self, settings: Settings) -> list[str]:
        """The progress lines ``index`` prints (``settings``: the run's, for ``--report-budget``)."""
        if self.skipped:
            removed = f"; {self.removed} reports of an earlier run removed" if self.removed else ""
            return [f"reports: skipped (--no-reports){removed}: answer global questions with --method lazy"]
        out = [f"reports: {self.reports} written ({self.model_calls} model calls, {self.cache_hits} from cache, "
               f"{self.single} single-entity), {self.carried} carried down"]
        if self.budget_tokens:
            cut = ("whole descriptions" if self.description_tokens is None else
                   f"descriptions cut to {self.description_tokens} tokens")
            scaled = f", contexts scaled to {self.budget_scale:.0%}" if self.budget_scale < 1 else ""
            out.append(f"reports: budget {self.budget_tokens:,} prompt tokens (--report-budget "
                       f"{settings.report_budget:g} x corpus tokens), planned {self.planned_tokens:,}: {cut}{scaled}")
        return out



def run_reports(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, progress: bool = True,
                model_factory: Callable | None = None, say: Callable[[str], None] | None = None,
                limit: int | None = None) -> ReportsResult:
    """Write a report for every community, level by level from the deepest, and store them.

    The communities of one level are independent (a parent reads only its
    children's reports, one level deeper), so each level is one round of
    tasks: with more than one worker in the thread plan
    (:func:`slmgraph.indexing.executors.batch.stage_plan`) or ``--executor ray``, the model calls
    run on the batch engine's workers (:func:`worker_job`), and this process,
    the single writer, parses, grounds and commits each report with its ledger
    row and cache entry as it arrives; otherwise in this process. The contexts
    are built here, so the reports do not depend on the number of workers.
    A rerun after an interruption finds the model outputs in the index cache.
    With ``settings.claims`` the members' claims join the context
    (:func:`element_context`) and, when findings come from the data, the
    findings (:func:`text_findings`); a single entity with no relationships
    gets its claims as findings.

    Args:
        model_factory: ``threads -> Model`` for worker processes (tests); None
            = each worker loads ``client.model.path``.
        limit: with a model writing, only the ``limit`` largest communities get a model call
            (:func:`largest_communities`; the stage bench's cap), the others a data report; None = all.
        say: ``str -> None`` for the thread-plan note and warnings.

    Returns:
        :class:`ReportsResult` (``written_by`` is ``data`` with ``settings.reports`` = data, or auto
        and a model under 1B parameters).

    Raises:
        UserError: the window leaves no room for a report's context.
        WorkerError: a worker process crashed (re-run to resume from the cache).
    """
    from slmgraph.indexing.executors.batch import WorkerSpec, stage_plan
    from slmgraph.indexing.executors.raypool import open_pool
    from slmgraph.model.threads import update_claim

    con = store.con
    comms = rows(con, CommunityRow, "SELECT community_id, level, parent_id, size, carried_from FROM communities "
                 "ORDER BY level DESC, community_id")
    members: dict[int, list[int]] = {}
    for cid, eid in con.execute("SELECT community_id, entity_id FROM community_members ORDER BY 1, 2").fetchall():
        members.setdefault(cid, []).append(eid)
    ents = {e.entity_id: e for e in rows(con, EntityRow, "SELECT entity_id, name, type, description, degree "
                                                         "FROM entities")}
    rels = rows(con, RelationshipRow, "SELECT rel_id, source_id, target_id, description, weight, combined_degree "
                                      "FROM relationships ORDER BY rel_id")
    out_of: dict[int, list[RelationshipRow]] = {}
    for r in rels:
        out_of.setdefault(r.source_id, []).append(r)

    def inner_rels(mem: list[int]) -> list[RelationshipRow]:
        mset = set(mem)
        return sorted((r for e in mset for r in out_of.get(e, []) if r.target_id in mset), key=lambda r: r.rel_id)

    claims_of: dict[int, list[dict]] = {}
    for c in load_claims(store) if settings.claims else []:
        claims_of.setdefault(c["subject_id"], []).append(c)
    children: dict[int, list[int]] = {}
    for c in comms:
        if c.parent_id is not None:
            children.setdefault(c.parent_id, []).append(c.community_id)
    model = client.model
    n_params = model  # the policy reads the model's capability record
    by_model = model_writes(settings.reports, n_params, "reports")
    with_findings = use_model_descriptions(settings, n_params)
    max_size = max((len(m) for m in members.values()), default=1)
    common = set() if by_model else lowercase_words(
        r[0] for r in con.execute("SELECT text FROM text_units").fetchall())
    system, budget, call_overhead = "", 0, 0
    if by_model:
        system = prompts.text("report_system" if with_findings else "report_system_short")
        empty = prompts.fill("report_user", context="")
        overhead = client.overhead(system, empty)
        budget = min(settings.report_context_tokens, client.n_ctx - settings.report_max_tokens) - overhead
        if budget < MIN_REPORT_CONTEXT_TOKENS:
            raise UserError(f"the {client.n_ctx}-token window leaves no room for a community report's context: "
                            "raise --n-ctx")
        call_overhead = len(model.prompt_tokens(model.render(system, empty))[1])
    reports: dict[int, Report] = {}
    topics = community_topics(store, common)
    doc_titles = dict(corpus_documents(store))
    concept_set = concept_ids(store)
    stats = {"reports": 0, "carried": 0, "single": 0,
             "written_by": "model" if by_model else "data",
             "findings": "model" if by_model and with_findings else "text",
             "ungrounded_fields_replaced": 0, "workers": 1, "threads": 0, "startup_seconds": 0.0}
    calls0, hits0 = client.calls, client.cache_hits
    with store.transaction():
        store.clear("reports")
    written = [c for c in comms if c.carried_from is None]
    looped = {r.source_id for r in rels if r.source_id == r.target_id}
    call_ids = [c.community_id for c in written
                if len(members.get(c.community_id, [])) > 1 or set(members.get(c.community_id, [])) & looped] \
        if by_model else []
    data_ids: set[int] = set()  # communities past ``limit``: a data report instead of a model call
    if by_model and limit is not None:
        chosen = set(largest_communities(store, limit))
        data_ids = {c for c in call_ids if c not in chosen}
        call_ids = [c for c in call_ids if c in chosen]
    data_common = lowercase_words(r[0] for r in con.execute("SELECT text FROM text_units").fetchall()) \
        if data_ids else common
    n_calls = len(call_ids)
    inner = {c.community_id: inner_rels(members.get(c.community_id, [])) for c in comms}
    corpus_tokens = int(con.execute("SELECT coalesce(sum(n_tokens), 0) FROM documents").fetchone()[0])
    plan_b = plan_report_budget(client, call_ids, members, children, {c.community_id for c in written}, ents, inner,
                                budget, call_overhead, round(settings.report_budget * corpus_tokens))
    stats.update(budget_tokens=plan_b.budget_tokens, planned_tokens=plan_b.planned_tokens,
                 description_tokens=plan_b.desc_tokens, budget_scale=plan_b.scale)
    plan = None
    if n_calls and (model_factory is not None or model.path is not None):
        plan = stage_plan(model, settings, n_calls, say)
        if plan.workers == 1 and settings.executor != "ray":
            plan = None
    bar = tqdm(total=len(written), desc="reports", unit="report", disable=not progress or not written,
               dynamic_ncols=True)

    built: list[Report] = []  # reports built without a model call, written at the end

    def commit(rep: Report, calls=(), puts=(), answered: bool = False) -> None:
        t = topics.get(rep.community_id)
        if t is not None and not rep.topic:
            rep.topic, rep.doc_ids = t.label, list(t.doc_ids)
        reports[rep.community_id] = rep
        stats["reports"] += 1
        bar.update(1)
        if not answered:
            # No model call: nothing to resume, so written with the carried reports in one statement.
            built.append(rep)
            return
        with store.transaction():
            store_report(store, client, rep)
            for row in calls:
                store.record_call(*row)
            for put in puts:
                store.cache_put(*put)

    def finish(pending_item, text: str) -> Report:
        cid, level, e_rows, r_rows, c_rows, ctx, ntok, kind = pending_item
        d = _parse_report(text)
        stats["ungrounded_fields_replaced"] += ground_report(d, ctx, e_rows, r_rows)
        findings = d["findings"] if with_findings else text_findings(e_rows, r_rows, claims=c_rows)
        return without_orders(Report(cid, level, d["title"], d["summary"], findings, d["rating"],
                                     d["rating_explanation"], ntok, kind), e_rows)

    remote = {"calls": 0, "hits": 0}  # model calls and cache hits in worker processes
    level_of = {c.community_id: c.level for c in comms}
    pending: dict[int, tuple] = {}

    def prepare(cid: int) -> str | None:
        """Build a ready community's context: commit its report when it needs no model call (None),
        else return its prompt."""
        level = level_of[cid]
        mem = members.get(cid, [])
        e_rows = [ents[e] for e in mem]
        r_rows = inner[cid]
        c_rows = [c for e in mem for c in claims_of.get(e, [])]
        if not by_model or cid in data_ids:
            t = topics.get(cid)
            cover = coverage_sentence(t.doc_ids, doc_titles, len(doc_titles)) if t is not None else ""
            commit(without_orders(data_report(cid, level, e_rows, r_rows, c_rows, max_size, data_common, t,
                                              cover, concept_set), e_rows))
            stats["single"] += len(mem) == 1 and not r_rows
            return None
        if len(mem) == 1 and not r_rows:
            e = e_rows[0]
            commit(without_orders(Report(
                cid, level, e.name, e.description or f"{e.name} ({e.type}) is mentioned in the documents.",
                text_findings([], [], claims=c_rows) if c_rows else [],
                0.0, "A single entity with no relationships.", 0, "entity"), e_rows))
            stats["single"] += 1
            return None
        b, cap = plan_b.context[cid], plan_b.desc_tokens
        sub = subreport_context(client, cid, children, reports, members, e_rows, r_rows, b, c_rows, cap) \
            if children.get(cid) else None
        if sub is not None:
            ctx, ntok, _ = sub
            kind = "sub-reports"
        else:
            ctx, ntok, _ = element_context(client, e_rows, r_rows, b, c_rows, cap)
            kind = "elements"
        pending[cid] = (cid, level, e_rows, r_rows, c_rows, ctx, ntok, kind)
        return prompts.fill("report_user", context=ctx)

    def rounds(pool):
        # A parent reads only its own children's reports: it is written as soon as its last child is.
        order = [c.community_id for c in written]
        parent_of = {c.community_id: c.parent_id for c in comms}
        for cid, text, calls, puts in bottom_up(order, parent_of, prepare,
                                                lambda user: _write(client, system, user, settings, with_findings),
                                                pool):
            if pool is not None:
                remote["calls"] += len(calls)
                remote["hits"] += not calls
            commit(finish(pending.pop(cid), text), calls, puts, answered=True)

    try:
        if plan is None:
            rounds(None)
        else:
            cache = {k: (o, f, t) for k, o, f, t in store.con.execute(
                "SELECT key, output, finish_reason, tokens FROM llm_cache WHERE stage = 'report'").fetchall()}

            def spec_for(worker: int) -> WorkerSpec:
                return WorkerSpec(str(model.path) if model.path is not None else None, model.n_ctx, settings.seed,
                                  plan.threads, settings, client.run_id, worker_job, cache, model_factory)

            if say:
                where = "Ray actors" if settings.executor == "ray" else "worker processes"
                say(f"reports: {plan.workers} {where} x {plan.threads} llama.cpp thread(s) on {plan.cores} cores")
            stats["workers"], stats["threads"] = plan.workers, plan.threads
            update_claim(max(plan.total_threads, model.n_threads or 1))
            try:
                with open_pool(spec_for, plan, settings, "reports") as pool:
                    rounds(pool)
            finally:
                update_claim(model.n_threads or settings.n_threads)
            stats["startup_seconds"] = round(pool.startup_seconds, 2)
    finally:
        bar.close()
    # Carried communities point to an ancestor, which is written after them
    # (levels are processed deepest first): write them in a second pass.
    carried_rows = []
    for c in comms:
        if c.carried_from is not None:
            src = reports[c.carried_from]
            rep = Report(c.community_id, c.level, src.title, src.summary, src.findings, src.rating, src.rating_explanation,
                         src.context_tokens, "carried", src.topic, src.doc_ids)
            reports[c.community_id] = rep
            carried_rows.append(rep)
    with store.transaction():
        store_reports(store, client, built + carried_rows)
    stats["carried"] = len(carried_rows)
    stats["model_calls"] = client.calls - calls0 + remote["calls"]
    stats["cache_hits"] = client.cache_hits - hits0 + remote["hits"]
    return ReportsResult(**stats)
