"""Global search: map-reduce over the community reports of one level
(paper sec. 3.1.6; ARCHITECTURE.md stages 7-8), and the same machinery over raw
text units (the paper's TS baseline).

Map: the items (reports of a level, or text units) are shuffled with a
seeded RNG and packed, whole, into batches that fill the model's window
(counted with the model's own tokenizer) minus the map prompt and the answer
reserve. Each batch yields key points, each with the ids that support it and
a helpfulness score 0-100. Points scored 0 are dropped.

Reduce: the surviving points, highest score first, fill one window; the
model writes the final answer citing ids. Citations of ids that were not in
the map's input are removed. When no point survives, the answer says the
corpus holds nothing relevant and no reduce call is made.

Dynamic community selection (GraphRAG's ``dynamic_community_selection``):
instead of one level, start at the root level, let the model say whether
each report is relevant to the question, descend only into the
sub-communities of relevant ones, and map-reduce over the relevant reports
whose sub-communities were not relevant (the most specific relevant ones).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable

from tqdm import tqdm

from ..config import Settings
from ..errors import UserError
from ..client import ModelClient
from ..prompting import Prompts
from ..reports import load_reports
from ..store import Store
from ..text import parse_json
from . import Answer, check_citations, context_room, dedupe_lines, pack


@dataclass
class MapReduceKind:
    """How one map-reduce family names things: prompt files, the id field of a
    point, the block label and the citation kind."""

    map_prompt: str  #: prompt stem: ``<stem>_system`` / ``<stem>_user``
    id_field: str  #: schema field of a point holding supporting ids
    label: str  #: block header word, e.g. "Report" -> "Report 12"
    cite: str  #: citation kind: "reports" or "sources"


REPORTS = MapReduceKind("map", "reports", "Report", "reports")
TEXT_UNITS = MapReduceKind("map_text", "passages", "Passage", "sources")


def map_schema(ids: list[int], id_field: str = "reports") -> dict:
    """JSON schema of one map answer: up to 5 points with supporting ids (an
    enum of the batch's ids) and a 0-100 helpfulness score."""
    return {
        "type": "object",
        "properties": {
            "points": {"type": "array", "minItems": 1, "maxItems": 5, "items": {
                "type": "object", "properties": {
                    "answer": {"type": "string", "maxLength": 300},
                    id_field: {"type": "array", "minItems": 1, "maxItems": 5,
                               "items": {"type": "integer", "enum": sorted(ids)}},
                    "score": {"type": "integer", "enum": list(range(0, 101))}},
                "required": ["answer", id_field, "score"]}},
        },
        "required": ["points"],
    }


def available_levels(store: Store) -> list[int]:
    """Levels that have community reports, ascending."""
    return [r[0] for r in store.con.execute(
        "SELECT DISTINCT level FROM community_reports ORDER BY level").fetchall()]


def report_block(rep: dict) -> str:
    """A report as packed into a map batch: ``"Report <id>\\n<full text>"``."""
    return f"Report {rep['community_id']}\n{rep['full_text']}"


def _check_reports_exist(store: Store) -> list[int]:
    levels = available_levels(store)
    if not levels:
        if store.count("text_units") and not store.count("entities"):
            raise UserError(f"index {store.path} holds no entities (its text has no capitalised names), so it has "
                            "no community reports: ask with --method basic, which reads the text units")
        raise UserError(f"index {store.path} has no community reports: run 'slmgraph index' to finish it")
    return levels


def map_reduce(client: ModelClient, prompts: Prompts, settings: Settings, question: str,
               items: list[tuple[int, str]], kind: MapReduceKind, ans: Answer, seed: int, progress: bool = True,
               on_text: Callable[[str], None] | None = None, no_answer: str | None = None) -> Answer:
    """Map-reduce ``items`` (``(id, block text)``) for ``question`` into ``ans``.

    Shuffles ``items`` with ``seed``, packs them into window-filling batches,
    maps each batch to scored points, drops zero scores, and reduces the rest
    within one window. Fills ``ans.text``, ``citations``, ``context`` (in the
    shuffled order) and ``details``.

    Raises:
        UserError: the question leaves no room for items in the window.
    """
    t0 = time.perf_counter()
    order = list(items)
    random.Random(seed).shuffle(order)
    valid_ids = {i for i, _ in order}
    map_system, budget = context_room(client, prompts, kind.map_prompt, question, settings.map_max_tokens, 200,
                                      "the map batches")
    batches, n_trunc = pack(order, budget, client.count, client.truncate)
    points: list[dict] = []
    batch_info = []
    bar = tqdm(batches, desc="map", unit="batch", disable=not progress, dynamic_ncols=True, leave=False)
    for batch in bar:
        ids = [i for i, _ in batch]
        context = "\n\n".join(t for _, t in batch)
        gen = client.call("map", map_system, prompts.fill(f"{kind.map_prompt}_user", question=question,
                                                          context=context),
                          schema=map_schema(ids, kind.id_field), max_tokens=settings.map_max_tokens,
                          deadline_s=180.0, use_cache=False)
        ans.add_call(gen)
        data, _ = parse_json(gen.text)
        raw_points = data.get("points", []) if isinstance(data, dict) else []
        raw_points = raw_points if isinstance(raw_points, list) else []
        kept = 0
        seen: dict[str, dict] = {}
        for p in raw_points:
            if not isinstance(p, dict):
                continue
            try:
                score = max(0, min(100, int(p.get("score", 0))))
            except (TypeError, ValueError):
                score = 0
            text = str(p.get("answer", "")).strip()
            cited = []
            for i in p.get(kind.id_field, []) if isinstance(p.get(kind.id_field), list) else []:
                if isinstance(i, int) and i in ids and i not in cited:
                    cited.append(i)
            if score == 0 or not text:
                continue
            key = " ".join(text.casefold().split())
            if key in seen:  # a small model repeats a point: keep it once, best score
                dup = seen[key]
                dup["score"] = max(dup["score"], score)
                dup["ids"] += [i for i in cited if i not in dup["ids"]]
                continue
            seen[key] = {"answer": text, "score": score, "ids": cited, "batch": len(batch_info)}
            points.append(seen[key])
            kept += 1
        batch_info.append({"ids": ids, "context_tokens": client.count(context), "points_kept": kept,
                           "points_total": len(raw_points), "finish_reason": gen.finish_reason,
                           "raw": gen.text[:2000]})
    ans.details.update({"seed": seed, "items": len(order), "batches": batch_info, "map_budget_tokens": budget,
                        "truncated_items": n_trunc, "points_kept": len(points),
                        "points_dropped": sum(b["points_total"] for b in batch_info) - len(points)})

    if not points:
        ans.details["removed_citations"] = {}  # no reduce call: nothing was cited
        ans.text = (no_answer or prompts.fill("no_answer", level=str(ans.level))).strip()
        if on_text is not None:
            on_text(ans.text)
        ans.seconds += time.perf_counter() - t0
        return ans
    points.sort(key=lambda p: (-p["score"], p["batch"]))
    reduce_system = prompts.fill("reduce_system", cite=kind.cite.capitalize())
    r_overhead = client.overhead(reduce_system, prompts.fill("reduce_user", question=question, context=""))
    r_budget = client.n_ctx - r_overhead - settings.reduce_max_tokens
    blocks, used_points = [], []
    used = 0
    for i, p in enumerate(points, start=1):
        cite = f" [{kind.cite.capitalize()}: {', '.join(map(str, p['ids']))}]" if p["ids"] else ""
        block = f"----Analyst {i}----\nImportance Score: {p['score']}\n{p['answer']}{cite}"
        n = client.count(block + "\n\n")
        if used + n > r_budget:
            break
        blocks.append(block)
        used_points.append(p)
        used += n
    gen = client.call("reduce", reduce_system, prompts.fill("reduce_user", question=question,
                                                             context="\n\n".join(blocks)),
                      schema=None, max_tokens=settings.reduce_max_tokens, deadline_s=300.0, use_cache=False,
                      on_text=on_text)
    ans.add_call(gen)
    text, kept, removed = check_citations(dedupe_lines(gen.text.strip()), {kind.cite: valid_ids})
    sources: list[int] = []
    for p in used_points:
        sources += [i for i in p["ids"] if i not in sources]
    sources += [i for i in kept[kind.cite] if i not in sources]
    if sources:
        scope = f"level {ans.level}" if ans.level is not None else "selected dynamically"
        where = f"community reports {', '.join(map(str, sources))} ({scope})" if kind is REPORTS \
            else f"text units {', '.join(map(str, sources))}"
        text = text.rstrip() + f"\n\nSources: {where}."
    ans.text = text
    ans.citations = {kind.cite: sources}
    ans.details.update({"reduce_points": len(used_points), "reduce_context_tokens": used,
                        "removed_citations": removed, "finish_reason": gen.finish_reason})
    ans.seconds += time.perf_counter() - t0
    return ans


def global_search(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                  level: int = 0, seed: int | None = None, progress: bool = True, dynamic: bool = False,
                  on_text: Callable[[str], None] | None = None) -> Answer:
    """Answer a global question by map-reduce over community reports.

    Args:
        level: community level (0 = root level, the paper's C0); ignored with ``dynamic``.
        seed: shuffle seed (default ``settings.seed``); recorded in ``details``.
        dynamic: choose the reports by dynamic community selection (see the module doc).
        on_text: receives the final answer's text as it is generated (streaming).

    Raises:
        UserError: the index has no reports, or not at ``level``; or the
            question is too long for the window.
    """
    t0 = time.perf_counter()
    levels = _check_reports_exist(store)
    seed = settings.seed if seed is None else seed
    if dynamic:
        ans = Answer(text="", method="global", question=question, level=None)
        reports, info = select_reports(store, client, prompts, settings, question, ans, progress)
        ans.details["dynamic"] = info
        no_answer = prompts.fill("no_answer", level="any level").strip() if reports else (
            "I am sorry, but the indexed documents hold nothing relevant to this question: no community report "
            "was rated relevant to it.")
    else:
        if level not in levels:
            raise UserError(f"level {level} is not in the index (levels {levels[0]}..{levels[-1]}): "
                            "pass --level with one of them")
        ans = Answer(text="", method="global", question=question, level=level)
        reports = load_reports(store, level)
        no_answer = None
    ans.seconds = time.perf_counter() - t0
    if dynamic and not reports:
        ans.text = no_answer
        if on_text is not None:
            on_text(ans.text)
        return ans
    by_id = {r["community_id"]: r for r in reports}
    map_reduce(client, prompts, settings, question, [(r["community_id"], report_block(r)) for r in reports],
               REPORTS, ans, seed, progress, on_text, no_answer)
    order = [i for b in ans.details["batches"] for i in b["ids"]]
    ans.context = [{"kind": "report", "id": i, "tokens": by_id[i]["n_tokens"]} for i in order]
    return ans


def relevance_schema() -> dict:
    """JSON schema of a relevance rating: ``{"relevant": "yes" | "no"}``."""
    return {"type": "object", "properties": {"relevant": {"type": "string", "enum": ["yes", "no"]}},
            "required": ["relevant"]}


def select_reports(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                   ans: Answer, progress: bool = True) -> tuple[list[dict], dict]:
    """Dynamic community selection: rate reports from the root level down.

    Every root-level report is rated; the sub-communities of a relevant
    report are rated next (carried-down copies are skipped: same content);
    irrelevant reports are pruned with everything below them. Selected: the
    relevant reports none of whose sub-communities is relevant.

    Returns:
        ``(selected reports as in load_reports, info)``; ``info`` has
        ``rated`` (model calls), ``relevant`` and ``selected`` counts and the
        selected ids.
    """
    rows = store.con.execute("SELECT c.community_id, c.level, c.parent_id, c.carried_from FROM communities c "
                             "JOIN community_reports r USING (community_id) ORDER BY c.level, c.community_id").fetchall()
    children: dict[int | None, list[int]] = {}
    level_of = {}
    for cid, level, parent, carried in rows:
        level_of[cid] = level
        if carried is None:
            children.setdefault(parent, []).append(cid)
    reports = {}
    for lv in sorted(set(level_of.values())):
        reports.update({r["community_id"]: r for r in load_reports(store, lv)})
    system = prompts.text("rate_system")
    queue = list(children.get(None, []))
    relevant: set[int] = set()
    rated = 0
    bar = tqdm(desc="rate", unit="report", disable=not progress, dynamic_ncols=True, leave=False)
    budget = client.n_ctx - client.overhead(system, prompts.fill("rate_user", question=question, report="")) - 8
    while queue:
        cid = queue.pop(0)
        text = client.truncate(report_block(reports[cid]), budget)
        gen = client.call("rate", system, prompts.fill("rate_user", question=question, report=text),
                          schema=relevance_schema(), max_tokens=8, deadline_s=60.0, use_cache=False)
        ans.add_call(gen)
        rated += 1
        bar.update(1)
        data, _ = parse_json(gen.text)
        if isinstance(data, dict) and data.get("relevant") == "yes":
            relevant.add(cid)
            queue.extend(children.get(cid, []))
    bar.close()
    selected = [cid for cid in sorted(relevant) if not any(k in relevant for k in children.get(cid, []))]
    info = {"rated": rated, "relevant": len(relevant), "selected": len(selected), "selected_ids": selected}
    return [reports[c] for c in selected], info


def text_unit_search(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                     seed: int | None = None, progress: bool = True,
                     on_text: Callable[[str], None] | None = None) -> Answer:
    """The paper's TS baseline: the global map-reduce over shuffled raw text units.

    Text units are numbered 1..n in (document, position) order for citation;
    ``context`` maps the numbers to chunk ids.
    """
    t0 = time.perf_counter()
    rows = store.con.execute("SELECT chunk_id, text, n_tokens FROM text_units ORDER BY doc_id, ord").fetchall()
    if not rows:
        raise UserError(f"index {store.path} has no text units: run 'slmgraph index' first")
    ans = Answer(text="", method="ts", question=question)
    items = [(i, f"Passage {i}\n{' '.join(text.split())}") for i, (_, text, _) in enumerate(rows, start=1)]
    ans.seconds = time.perf_counter() - t0
    map_reduce(client, prompts, settings, question, items, TEXT_UNITS, ans,
               settings.seed if seed is None else seed, progress, on_text,
               no_answer="I am sorry, but the indexed documents hold nothing relevant to this question: no text "
                         "unit was scored as helpful for it.")
    order = [i for b in ans.details["batches"] for i in b["ids"]]
    ans.context = [{"kind": "text_unit", "id": rows[i - 1][0], "source": i, "tokens": rows[i - 1][2]} for i in order]
    return ans
