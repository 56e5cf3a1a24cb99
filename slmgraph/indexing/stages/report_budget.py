"""The per-build report budget: which description cap (and, if need be, which share of each context) keeps
the report calls within ``Settings.report_budget`` prompt tokens per corpus token, beyond the fixed
prefix (:func:`plan_report_budget`). It ties the report stage's cost to the corpus, since whole
descriptions made the reports cost more than the extraction (docs/decisions.md: report budget per
corpus token).
"""

from __future__ import annotations

from dataclasses import dataclass

from slmgraph.indexing.stages.report_context import (
    HEAD_ENTITIES, HEAD_RELATIONSHIPS, HEAD_SUBREPORTS, SUBREPORT_SUMMARY_TOKENS, SUBREPORT_TITLE_TOKENS,
)
from slmgraph.model.client import ModelClient
from slmgraph.store.rows import EntityRow, RelationshipRow

#: Description caps (tokens of each entity or relationship description, and of each sub-community
#: report's summary, in a report context) that the per-build report budget chooses among, most
#: generous first; None keeps whole descriptions. A ladder rather than a continuous value, so that
#: an incremental update that changes the corpus a little keeps the same cap and the index cache
#: still answers the reports of unchanged communities. It stops at 24 tokens, roughly one sentence (a
#: judgement, not a measurement): a shorter cut leaves a fragment, so below it the budget keeps
#: fewer lines instead (the lowest-ranked relationships go first, as when a
#: context is full in GraphRAG; paper sec. 3.1.5).
DESCRIPTION_CAPS = (None, 256, 128, 96, 64, 48, 32, 24)
#: Fewest context tokens a report gets when the per-build budget has to scale contexts down beyond
#: the smallest description cap: the section headers (24 tokens) and a line.
MIN_SCALED_CONTEXT = 48


@dataclass
class ReportBudget:
    """The per-build report budget's decision (:func:`plan_report_budget`).

    ``budget_tokens``: prompt tokens the report calls may evaluate beyond the
    fixed prefix (``Settings.report_budget`` x corpus tokens; 0 = no per-build
    budget); ``planned_tokens``: what the plan expects them to evaluate;
    ``desc_tokens``: the description cap chosen (None: whole descriptions);
    ``scale``: share of each report's planned context it gets (1.0 unless the
    smallest cap is still over budget); ``context``: ``community_id -> context
    budget`` in tokens of each model-written report.
    """
    budget_tokens: int = 0
    planned_tokens: int = 0
    desc_tokens: int | None = None
    scale: float = 1.0
    context: dict | None = None


def plan_report_budget(client: ModelClient, calls: list[int], members: dict[int, list[int]],
                       children: dict[int, list[int]], reported: set[int], ents: dict[int, EntityRow],
                       inner: dict[int, list[RelationshipRow]], window_budget: int, call_overhead: int,
                       budget_tokens: int) -> ReportBudget:
    """Choose the description cap (and, if need be, a scale) that keeps the report calls within
    ``budget_tokens`` evaluated prompt tokens.

    The plan counts, for each model-written report, the per-call prompt tokens
    beyond the fixed prefix (``call_overhead``: template and instructions
    around an empty context) and its context: the lines of its elements with
    descriptions cut to the cap, a child's report line
    (:data:`SUBREPORT_TITLE_TOKENS` + the summary at the cap) instead of its
    elements where that is shorter, capped by ``window_budget``. Line costs are
    added per line (tokenization across line ends may differ by a token) and
    without sentence de-duplication, so the plan is an upper bound within that
    rounding, for which each context is allowed 1/16 + 4 tokens more than its
    plan (and counted so). The first cap of :data:`DESCRIPTION_CAPS` whose plan fits is
    taken; when even the smallest does not, every report keeps a floor (its
    headers and one line: :data:`MIN_SCALED_CONTEXT` tokens, or for a parent
    one child's report line) and what its plan holds above the floor is scaled
    by the same share (in 1/32 steps) to fit, keeping its top-ranked lines;
    the floors alone may exceed the budget. The plan depends only on the data,
    never on the number of workers.

    Args:
        calls: community ids of the reports the model writes.
        reported: ids of every community that gets a report before its parent
            (model-written or single-entity; not carried-down copies).
        inner: ``community_id -> relationships inside it``.
        budget_tokens: 0 = no per-build budget (whole descriptions, ``window_budget`` each).

    Returns:
        :class:`ReportBudget`.
    """
    if not calls:
        return ReportBudget(budget_tokens, 0, None, 1.0, {})
    head = client.count(HEAD_ENTITIES + "\n" + HEAD_RELATIONSHIPS + "\n")
    head_sub = client.count(HEAD_SUBREPORTS + "\n")
    e_cost = {eid: (client.count(f"{e.name},{e.type},\n"), client.count(e.description or "")) for eid, e in ents.items()}
    r_cost: dict[int, tuple[int, int]] = {}
    for rs in inner.values():
        for r in rs:
            if r.rel_id not in r_cost:
                r_cost[r.rel_id] = (client.count(f"{ents[r.source_id].name},{ents[r.target_id].name},,{r.weight:g}\n"),
                                    client.count(r.description or ""))

    def lines(eids, rels, cap) -> int:
        c = cap if cap is not None else 1 << 30
        return (sum(e_cost[e][0] + min(e_cost[e][1], c) for e in eids)
                + sum(r_cost[r.rel_id][0] + min(r_cost[r.rel_id][1], c) for r in rels))

    floor: dict[int, int] = {}

    def planned(cid: int, cap: int | None) -> int:
        mem = members.get(cid, [])
        summary = SUBREPORT_SUMMARY_TOKENS if cap is None else min(cap, SUBREPORT_SUMMARY_TOKENS)
        covered: set[int] = set()
        inside: list[set[int]] = []
        subs = 0
        for k in children.get(cid, []):
            if k not in reported:
                continue
            rep = 4 + SUBREPORT_TITLE_TOKENS + summary
            if rep < lines(members.get(k, []), inner.get(k, []), cap):
                subs += rep
                kset = set(members.get(k, []))
                covered |= kset
                inside.append(kset)
        rels = [r for r in inner.get(cid, []) if not any(r.source_id in ks and r.target_id in ks for ks in inside)]
        n = head + lines([e for e in mem if e not in covered], rels, cap) + (head_sub + subs if subs else 0)
        # Fewest tokens this context is scaled down to: the headers and one line (a parent: one
        # child's report, else it would read its child's top line and repeat the child's prompt).
        floor[cid] = min(n, max(MIN_SCALED_CONTEXT, head + head_sub + 4 + SUBREPORT_TITLE_TOKENS + summary
                                if subs else MIN_SCALED_CONTEXT))
        return min(window_budget, n)

    for cap in DESCRIPTION_CAPS:
        plan = {cid: planned(cid, cap) for cid in calls}
        if not budget_tokens:
            return ReportBudget(0, sum(plan.values()) + call_overhead * len(calls), cap, 1.0,
                                {cid: window_budget for cid in calls})
        # Each context may use a little more than its plan (tokenization across line ends); that room
        # is part of the plan, and the contexts never exceed it, so the calls stay within the budget.
        context = {cid: min(window_budget, n + n // 16 + 4) for cid, n in plan.items()}
        total = sum(context.values()) + call_overhead * len(calls)
        if total <= budget_tokens:
            return ReportBudget(budget_tokens, total, cap, 1.0, context)
    room = budget_tokens - call_overhead * len(calls) - sum(floor[cid] for cid in plan)
    above = sum(n - floor[cid] for cid, n in plan.items())
    scale = max(0, int(32 * room / max(1, above))) / 32
    context = {cid: min(window_budget, floor[cid] + int((n - floor[cid]) * scale)) for cid, n in plan.items()}
    return ReportBudget(budget_tokens, sum(context.values()) + call_overhead * len(calls), cap, scale, context)
