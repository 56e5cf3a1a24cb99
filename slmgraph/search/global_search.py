"""Global search: map-reduce over the community reports of one level
(paper sec. 3.1.6; DESIGN.md stages 7-8).

Map: the level's reports are shuffled with a seeded RNG and packed, whole,
into batches that fill the model's window (counted with the model's own
tokenizer) minus the map prompt and the answer reserve. Each batch yields key
points, each with the report ids that support it and a helpfulness score
0-100. Points scored 0 are dropped.

Reduce: the surviving points, highest score first, fill one window; the
model writes the final answer citing report ids. Citations of ids that are
not among the level's reports are removed. When no point survives, the
answer says the corpus holds nothing relevant and no reduce call is made.
"""

from __future__ import annotations

import random
import time
from typing import Callable

from tqdm import tqdm

from ..config import Settings
from ..errors import UserError
from ..extract import parse_json
from ..llm import ModelClient
from ..prompting import Prompts
from ..reports import load_reports
from ..store import Store
from . import Answer, check_citations, pack


def map_schema(report_ids: list[int]) -> dict:
    """JSON schema of one map answer: up to 5 points with supporting report ids and a 0-100 score."""
    return {
        "type": "object",
        "properties": {
            "points": {"type": "array", "minItems": 1, "maxItems": 5, "items": {
                "type": "object", "properties": {
                    "answer": {"type": "string", "maxLength": 300},
                    "reports": {"type": "array", "minItems": 1, "maxItems": 5,
                                "items": {"type": "integer", "enum": sorted(report_ids)}},
                    "score": {"type": "integer", "enum": list(range(0, 101))}},
                "required": ["answer", "reports", "score"]}},
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


def global_search(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                  level: int = 0, seed: int | None = None, progress: bool = True,
                  on_text: Callable[[str], None] | None = None) -> Answer:
    """Answer a global question by map-reduce over the reports of ``level``.

    Args:
        level: community level (0 = root level, the paper's C0).
        seed: shuffle seed (default ``settings.seed``); recorded in ``details``.
        on_text: receives the final answer's text as it is generated (streaming).

    Raises:
        UserError: the index has no reports, or not at ``level``; or the
            question is too long for the window.
    """
    t0 = time.perf_counter()
    levels = available_levels(store)
    if not levels:
        if store.count("text_units") and not store.count("entities"):
            raise UserError(f"index {store.path} holds no entities: extraction found no names in its documents; "
                            "try --method basic, or re-index with another --model or --extractor nlp")
        raise UserError(f"index {store.path} has no community reports: run 'slmgraph index' to finish it")
    if level not in levels:
        raise UserError(f"level {level} is not in the index (levels {levels[0]}..{levels[-1]}): pass --level with one of them")
    seed = settings.seed if seed is None else seed
    reports = load_reports(store, level)
    valid_ids = {r["community_id"] for r in reports}
    order = list(reports)
    random.Random(seed).shuffle(order)
    ans = Answer(text="", method="global", question=question, level=level)

    # --- map -------------------------------------------------------------
    map_system = prompts.text("map_system")
    overhead = client.overhead(map_system, prompts.fill("map_user", question=question, context=""))
    # A schema's enum of ids costs nothing in the prompt, but each report id costs ~2 tokens in blocks.
    budget = client.n_ctx - overhead - settings.map_max_tokens
    if budget < 200:
        raise UserError(f"question of {client.count(question)} tokens leaves no room for reports in the "
                        f"{client.n_ctx}-token window: ask a shorter question")
    batches, n_trunc = pack([(r["community_id"], report_block(r)) for r in order], budget, client.count,
                            client.truncate)
    points: list[dict] = []
    batch_info = []
    bar = tqdm(batches, desc="map", unit="batch", disable=not progress, dynamic_ncols=True, leave=False)
    for batch in bar:
        ids = [i for i, _ in batch]
        context = "\n\n".join(t for _, t in batch)
        gen = client.call("map", map_system, prompts.fill("map_user", question=question, context=context),
                          schema=map_schema(ids), max_tokens=settings.map_max_tokens, deadline_s=180.0,
                          use_cache=False)
        ans.add_call(gen)
        data, _ = parse_json(gen.text)
        raw_points = data.get("points", []) if isinstance(data, dict) else []
        kept = 0
        seen: dict[str, dict] = {}
        for p in raw_points if isinstance(raw_points, list) else []:
            if not isinstance(p, dict):
                continue
            try:
                score = max(0, min(100, int(p.get("score", 0))))
            except (TypeError, ValueError):
                score = 0
            text = str(p.get("answer", "")).strip()
            cited = []
            for i in p.get("reports", []) if isinstance(p.get("reports"), list) else []:
                if isinstance(i, int) and i in ids and i not in cited:
                    cited.append(i)
            if score == 0 or not text:
                continue
            key = " ".join(text.casefold().split())
            if key in seen:  # a small model repeats a point: keep it once, best score
                dup = seen[key]
                dup["score"] = max(dup["score"], score)
                dup["reports"] += [i for i in cited if i not in dup["reports"]]
                continue
            seen[key] = {"answer": text, "score": score, "reports": cited, "batch": len(batch_info)}
            points.append(seen[key])
            kept += 1
        batch_info.append({"reports": ids, "context_tokens": client.count(context), "points_kept": kept,
                           "points_total": len(raw_points) if isinstance(raw_points, list) else 0,
                           "finish_reason": gen.finish_reason, "raw": gen.text[:2000]})
    ans.context = [{"kind": "report", "id": r["community_id"], "tokens": r["n_tokens"]} for r in order]
    ans.details = {"seed": seed, "reports": len(reports), "batches": batch_info, "map_budget_tokens": budget,
                   "truncated_reports": n_trunc, "points_kept": len(points),
                   "points_dropped": sum(b["points_total"] for b in batch_info) - len(points)}

    # --- reduce ----------------------------------------------------------
    if not points:
        ans.text = prompts.fill("no_answer", level=str(level)).strip()
        if on_text is not None:
            on_text(ans.text)
        ans.seconds = time.perf_counter() - t0
        return ans
    points.sort(key=lambda p: (-p["score"], p["batch"]))
    reduce_system = prompts.text("reduce_system")
    r_overhead = client.overhead(reduce_system, prompts.fill("reduce_user", question=question, context=""))
    r_budget = client.n_ctx - r_overhead - settings.reduce_max_tokens
    blocks, used_points = [], []
    used = 0
    for i, p in enumerate(points, start=1):
        cite = f" [Reports: {', '.join(map(str, p['reports']))}]" if p["reports"] else ""
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
    text, kept, removed_by_kind = check_citations(gen.text.strip(), {"reports": valid_ids})
    cited, removed = kept["reports"], removed_by_kind["reports"]
    sources = []
    for p in used_points:
        for i in p["reports"]:
            if i not in sources:
                sources.append(i)
    for i in cited:
        if i not in sources:
            sources.append(i)
    if sources:
        text = text.rstrip() + f"\n\nSources: community reports {', '.join(map(str, sources))} (level {level})."
    ans.text = text
    ans.citations = {"reports": sources}
    ans.details.update({"reduce_points": len(used_points), "reduce_context_tokens": used,
                        "removed_citations": removed, "finish_reason": gen.finish_reason})
    ans.seconds = time.perf_counter() - t0
    return ans
