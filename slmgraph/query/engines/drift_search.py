"""DRIFT search (``--method drift``): a global primer from community reports,
then local-search follow-ups, reduced into one cited answer.

DRIFT (Dynamic Reasoning and Inference with Flexible Traversal; Microsoft
GraphRAG, "Introducing DRIFT Search", Oct 2024) starts from the community
reports, as global search does, and refines with local search:

1. **Primer.** The community reports of every level (carried-down copies
   skipped: same content) are scored for the question with the shared
   helpfulness scorer (:func:`slmgraph.query.scoring.score_items`), always
   with the embedding signal -- the question-report cosine over the vectors
   stored at index time; the model signal would cost two choice calls per
   report of every level (~2,000 on the podcast sample); the
   ``Settings.drift_primer_k`` best form the primer. When the best is under
   the index's floor (``Settings.helpfulness_floor``, lowered by the
   off-topic probes as in global search: :func:`slmgraph.query.scoring.index_floor`)
   the answer is the no-answer text, as in global search. The primer answer is the reports' points
   (:func:`slmgraph.query.extractive.report_points`); from 1B parameters the
   model writes the primer answer and its follow-up questions under a JSON
   schema (``drift_primer_*`` prompts).
2. **Follow-ups.** Under 1B parameters the follow-up questions are built
   from the data, not written by the model: the member entities of the
   primer's communities nearest to the question (entity embedding cosine),
   each put into the template ``prompts/drift_followup.txt`` ("What about
   $entity?"). A 135M model asked to write questions copies its examples and
   loops (docs/decisions.md: small models loop); an entity-built question
   is always about something the index holds. Each follow-up runs as a local
   search (:func:`slmgraph.query.engines.local_search.build_local_context` over the
   entities nearest to it); under 1B its intermediate answer is the sentences
   of that context's text units nearest to the original question
   (:func:`slmgraph.query.extractive.sentence_points`, no model call), from
   1B the model writes it (:func:`slmgraph.query.engines.local_search.local_search`).
   Deeper rounds (``Settings.drift_depth``) ask about the entities of the
   previous round's local contexts nearest to the question, for every model size.
3. **Budgets.** ``drift_followups`` follow-ups per round, ``drift_depth``
   rounds, and ``drift_tokens``: no follow-up starts once the tokens read
   (primer reports, local contexts) plus the model's prompt and completion
   tokens reach it.
4. **Reduce.** Every intermediate answer is scored against the original
   question with the same scorer (embedding signal); those under the floor are dropped (the
   relative cut of global search is not applied: follow-ups add to the
   primer). Under 1B the answer is the primer's points then the kept
   follow-ups' points, best first, near-duplicates merged, opened by at most
   one grounded model sentence when ``--opening`` asks for it
   (:func:`slmgraph.query.extractive.opening`);
   from 1B the model reduces them with the global reduce prompt. Reports are
   cited by community id, text units by their number in (document, position)
   order (:func:`slmgraph.query.answer.unit_numbers`).
"""

from __future__ import annotations

import time
from typing import Callable

from slmgraph.model.client import DEADLINE_ANSWER_S, DEADLINE_REPORT_S, ModelClient
from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.embed_lookup import load_vectors, nearest
from slmgraph.errors import UserError
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.report_store import load_reports, member_names
from slmgraph.store.db import Store
from slmgraph.text.prose import parse_json
from slmgraph.query.documents import corpus_documents, corpus_headings
from slmgraph.query.answer import Answer, check_citations, dedupe_lines, unit_numbers
from slmgraph.query.extractive import (
    Point, extractive_answer, has_repetition, near_duplicate, points_on_question, report_points, opening,
    sentence_points,
)
from slmgraph.query.named import check_names, known_of, name_details, name_refusal, name_variants
from slmgraph.query.route import asks_change, corpus_wide_phrase
from slmgraph.query.scoring import Scored, cosines, index_floor, probe_questions, quote_probes, score_items, select
from slmgraph.query.theme_model import framing


#: Follow-up points an extractive DRIFT answer adds to the primer's (at most
#: 2 per kept follow-up, nearest to the question first): with the primer's 4,
#: an answer of at most 9 points. Set by reading podcast answers; not swept.
FOLLOWUP_POINTS = 5


def primer_schema(max_followups: int) -> dict:
    """JSON schema of the primer (models of 1B or more): an answer and up to ``max_followups`` follow-up questions."""
    return {"type": "object", "properties": {
        "answer": {"type": "string", "maxLength": 800},
        "follow_ups": {"type": "array", "minItems": 1, "maxItems": max(1, max_followups),
                       "items": {"type": "string", "maxLength": 150}}},
        "required": ["answer", "follow_ups"]}


def all_reports(store: Store) -> dict[int, dict]:
    """``community_id -> report`` (as in :func:`slmgraph.indexing.stages.report_store.load_reports`, plus ``level``) of every
    level, without carried-down copies."""
    carried = {r[0] for r in store.con.execute(
        "SELECT community_id FROM communities WHERE carried_from IS NOT NULL").fetchall()}
    out = {}
    for (lv,) in store.con.execute("SELECT DISTINCT level FROM community_reports ORDER BY 1").fetchall():
        for r in load_reports(store, lv):
            if r["community_id"] not in carried:
                out[r["community_id"]] = dict(r, level=lv)
    return out


def _entity_names(store: Store, norms: list[str]) -> dict[str, str]:
    if not norms:
        return {}
    q = ",".join("?" * len(norms))
    return dict(store.con.execute(f"SELECT norm, name FROM entities WHERE norm IN ({q})", norms).fetchall())


def _entities_by_question(qv, norms: list[str], vec_ids: list[str], mat) -> list[str]:
    """``norms`` ranked by the cosine of their stored entity embedding with the question (best first)."""
    pos = {n: i for i, n in enumerate(vec_ids)}
    have = [n for n in dict.fromkeys(norms) if n in pos]
    if not have:
        return []
    sims = cosines(qv, mat[[pos[n] for n in have]])
    return [n for _, n in sorted(zip((-float(s) for s in sims), have))]


def drift_search(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                 embedder=None, on_text: Callable[[str], None] | None = None) -> Answer:
    """Answer ``question`` by DRIFT search (see the module doc).

    Args:
        embedder: ``encode(list[str]) -> (n, dim)``; None loads the bundled one.

    Returns:
        an :class:`Answer` with ``citations`` ``{"reports": [...], "sources": [...]}``
        and ``details``: ``primer`` (report ids and scores), ``follow_ups``
        (each question, its depth, how it was made, its score, whether kept,
        its context tokens), ``followup_source`` (``entities`` or ``model``),
        ``tokens_read``, ``tokens_spent``, ``budget``.

    Raises:
        UserError: the index has no community reports (built with
            ``--no-reports``: use ``--method lazy``) or no entity embeddings.
    """
    from slmgraph.query.engines.global_search import (
        _check_reports_exist, answer_mode, default_embedder, stored_vectors,
    )
    from slmgraph.query.engines.local_search import build_local_context, local_search

    t0 = time.perf_counter()
    _check_reports_exist(store)
    named = check_names(store, question, settings)
    if not named["answer"]:
        return name_refusal(Answer(text="", method="drift", question=question), prompts, named, on_text, t0)
    if embedder is None:
        embedder = default_embedder(settings)
    n_params = client.model  # the policy reads the model's capability record
    mode = answer_mode(settings, n_params)
    ans = Answer(text="", method="drift", question=question, details=name_details(named))
    budget = {"followups_per_round": settings.drift_followups, "depth": settings.drift_depth,
              "tokens": settings.drift_tokens}
    reports = all_reports(store)
    vectors = stored_vectors(store, "report", {i: r["full_text"] for i, r in reports.items()}, embedder)
    ids = list(reports)
    scored = score_items(question, ids, [reports[i]["full_text"] for i in ids], signal="embedding",
                         embedder=embedder, vectors=vectors)
    ranked = sorted(scored, key=lambda sc: (-sc.score, sc.id))
    floor, probe_best = settings.helpfulness_floor, None
    if settings.helpfulness_probes:  # the index's floor, as in global search (scoring.index_floor)
        floor, probe_best = index_floor(ids, [reports[i]["full_text"] for i in ids], embedder, vectors,
                                        probe_questions(prompts), settings.helpfulness_floor)
    if corpus_wide_phrase(question, prompts) is not None:
        floor = 0.0  # a question about the whole corpus is never refused (route.corpus_wide_phrase)
        # and its primer is the most important reports (their rating, as in global search's map_reduce: a
        # topic-free question's cosine ranks the emptiest reports first)
        ranked = sorted((Scored(sc.id, 10.0 * float(reports[sc.id].get("rating") or 0.0), sc.cosine) for sc in scored),
                        key=lambda sc: (-sc.score, sc.id))
        ans.details["ranked_by"] = "rating"
    top = [sc for sc in ranked[: settings.drift_primer_k] if sc.score >= floor]
    ans.details.update({"budget": budget, "signal": "embedding", "answer_mode": mode, "floor": round(floor, 1),
                        "probe_best": None if probe_best is None else round(probe_best, 1),
                        "best_score": round(ranked[0].score, 1) if ranked else 0.0,
                        "primer": [{"id": sc.id, "level": reports[sc.id]["level"], "score": round(sc.score, 1)}
                                   for sc in top], "follow_ups": [], "removed_citations": {}})
    if not top:
        ans.text = prompts.fill("no_answer", level="any level").strip()
        if on_text is not None:
            on_text(ans.text)
        ans.details.update({"tokens_read": 0, "tokens_spent": ans.prompt_tokens + ans.completion_tokens})
        ans.seconds = time.perf_counter() - t0
        return ans
    score_of = {sc.id: sc.score for sc in top}
    tokens_read = sum(reports[sc.id]["n_tokens"] or 0 for sc in top)
    qv = embedder.encode([question])[0]
    names = member_names(store, [sc.id for sc in top])
    headings = corpus_headings(store)
    primer_points = report_points([dict(reports[sc.id], entities=names.get(sc.id, [])) for sc in top], score_of,
                                  qv, embedder, max_points=4, headings=headings)
    for p in primer_points:
        p.label = "Reports"
    vec_ids, mat = load_vectors(store, "entity")
    if not vec_ids:
        raise UserError(f"index {store.path} has no entity embeddings: run 'slmgraph index' to finish it")
    primer_text = "\n".join(f"{p.head}: {p.text}" for p in primer_points)
    followups: list[tuple[str, str, str]] = []  # (question, made by, entity norm or "")
    if mode == "model":
        ctx = "\n\n".join(f"Report {sc.id}\n{reports[sc.id]['full_text']}" for sc in top)
        gen = client.call("drift_primer", prompts.text("drift_primer_system"),
                          prompts.fill("drift_primer_user", question=question,
                                       context=client.truncate(ctx, settings.local_context_tokens)),
                          schema=primer_schema(settings.drift_followups), max_tokens=settings.map_max_tokens,
                          deadline_s=DEADLINE_REPORT_S, use_cache=False)
        ans.add_call(gen)
        data, _ = parse_json(gen.text)
        if isinstance(data, dict):
            primer_text = str(data.get("answer") or primer_text).strip()
            for q in data.get("follow_ups") or []:
                if isinstance(q, str) and q.strip() and len(followups) < settings.drift_followups:
                    followups.append((q.strip(), "model", ""))
        tokens_read += gen.prompt_tokens
    members = [r[0] for r in store.con.execute(
        f"SELECT DISTINCT e.norm FROM community_members m JOIN entities e USING (entity_id) "
        f"WHERE m.community_id IN ({','.join('?' * len(top))})", [sc.id for sc in top]).fetchall()]
    asked: set[str] = set()
    if not followups:
        followups = _entity_followups(store, prompts, qv, members, vec_ids, mat, asked, settings.drift_followups)
    numbers = unit_numbers(store)
    inter: list[dict] = []  # intermediate answers of the follow-ups
    depth = 1
    while followups and depth <= settings.drift_depth:
        next_norms: list[str] = []
        for fq, made_by, norm in followups:
            spent = tokens_read + ans.prompt_tokens + ans.completion_tokens
            if spent >= settings.drift_tokens:
                ans.details["stopped"] = f"token budget: {spent} >= {settings.drift_tokens}"
                break
            fv = embedder.encode([fq])[0]
            hits = nearest(fv, vec_ids, mat, settings.local_top_k_entities)
            if mode == "extractive":
                _, used, ntok = build_local_context(store, client, [h[0] for h in hits],
                                                    settings.local_context_tokens, None, settings.local_shares,
                                                    question_vec=fv)
                texts = _unit_texts(store, used["source_chunks"])
                # The follow-up chooses the neighbourhood; its sentences are ranked by the original question.
                pts = sentence_points([(numbers[c], texts[c]) for c in used["source_chunks"]], qv, embedder,
                                      max_points=3, min_words=8, names=name_variants(known_of(named)),
                                      probes=quote_probes(question, prompts, settings), headings=headings)
                # a show's welcome, a call to tell your friends: no answer to any follow-up
                pts = [p for p in pts if not framing(p.text)]
                for p in pts:
                    p.label = "Sources"
                body = " ".join(p.text for p in pts)
            else:
                local = local_search(store, client, prompts, settings, fq, embedder)
                ans.model_calls += local.model_calls
                ans.prompt_tokens += local.prompt_tokens
                ans.completion_tokens += local.completion_tokens
                ans.call_keys += local.call_keys
                ntok = local.details.get("context_tokens", 0)
                chunks = [c["id"] for c in local.context if c["kind"] == "text_unit"]
                by_src = {c["source"]: c["id"] for c in local.context if c["kind"] == "text_unit"}
                cited = [numbers[by_src[s]] for s in local.citations.get("sources", []) if s in by_src] or \
                    [numbers[c] for c in chunks[:3]]
                # A refused follow-up (its names not in the index, or nothing near it) adds no point: its
                # no-answer text is not an intermediate answer.
                body = "" if local.details.get("refused") else _strip_citations(local.text.split("\n\nSources:")[0])
                pts = [Point("", body, cited, 0.0, "Sources")] if body.strip() else []
                used = {"source_chunks": chunks}
            tokens_read += ntok
            inter.append({"question": fq, "depth": depth, "made_by": made_by, "points": pts, "text": body,
                          "context_tokens": ntok})
            next_norms += [h[0] for h in hits if h[0] not in asked]
        depth += 1
        if depth > settings.drift_depth or "stopped" in ans.details:
            break
        followups = _entity_followups(store, prompts, qv, next_norms, vec_ids, mat, asked, settings.drift_followups)
    # Reduce: score the intermediate answers against the question, keep those above the floor.
    with_text = [i for i, a in enumerate(inter) if a["text"].strip()]
    kept_idx: set[int] = set()
    if with_text:
        sc = score_items(question, with_text, [inter[i]["text"] for i in with_text], signal="embedding",
                         embedder=embedder)
        for s in sc:
            inter[s.id]["score"] = round(s.score, 1)
        kept_idx = {s.id for s in select(sc, floor, 0.0)}
    ans.details["follow_ups"] = [{"question": a["question"], "depth": a["depth"], "made_by": a["made_by"],
                                  "score": a.get("score"), "kept": i in kept_idx,
                                  "context_tokens": a["context_tokens"]} for i, a in enumerate(inter)]
    ans.details["followup_source"] = "model" if any(a["made_by"] == "model" for a in inter) else "entities"
    kept = sorted(kept_idx, key=lambda i: -inter[i]["score"])
    valid = {"reports": {sc.id for sc in top}, "sources": {x for i in kept for p in inter[i]["points"] for x in p.ids}}
    if mode == "extractive":
        points = list(primer_points)
        extra = sorted((p for i in kept for p in inter[i]["points"][:2]), key=lambda p: -p.rank)
        for p in extra:
            if len(points) >= len(primer_points) + FOLLOWUP_POINTS:
                break
            if not any(near_duplicate(p.text, q.text) for q in points):
                points.append(p)
        points = points_on_question(_without_repeats(points), qv, embedder, quote_probes(question, prompts, settings),
                                    name_variants(known_of(named)))
        if asks_change(question):  # a change is read by comparing what each document says, in their order
            points = in_document_order(store, points)
            ans.details["order"] = "documents"
        synthesis, gen = opening(client, prompts, settings, question, points)
        if gen is not None:
            ans.add_call(gen)
        text = extractive_answer(points, "Reports", synthesis, _sources_line(points))
        if synthesis is not None and has_repetition(text):  # an answer never repeats or loops
            synthesis = None
            text = extractive_answer(points, "Reports", None, _sources_line(points))
        text, kept_c, removed = check_citations(text, valid)
        if on_text is not None:
            on_text(text.rsplit("\n\nSources:", 1)[0])
        ans.details.update({"points": len(points), "synthesis": synthesis,
                            "synthesis_raw": gen.text[:500] if gen is not None else None})
    else:
        blocks = [f"----Analyst 1----\nImportance Score: {round(max(score_of.values()))}\n{primer_text} "
                  f"[Reports: {', '.join(str(sc.id) for sc in top)}]"]
        for k, i in enumerate(kept, start=2):
            ids = inter[i]["points"][0].ids if inter[i]["points"] else []
            blocks.append(f"----Analyst {k}----\nImportance Score: {round(inter[i]['score'])}\n{inter[i]['text']}"
                          + (f" [Sources: {', '.join(map(str, ids))}]" if ids else ""))
        context = client.truncate("\n\n".join(blocks), client.n_ctx - settings.reduce_max_tokens - 600)
        gen = client.call("reduce", prompts.fill("reduce_system", cite="Reports"),
                          prompts.fill("reduce_user", question=question, context=context), schema=None,
                          max_tokens=settings.reduce_max_tokens, deadline_s=DEADLINE_ANSWER_S, use_cache=False, on_text=on_text)
        ans.add_call(gen)
        text, kept_c, removed = check_citations(dedupe_lines(gen.text.strip()), valid)
        if not any(kept_c.values()):  # the model cited nothing: cite what it was given
            kept_c = {"reports": [sc.id for sc in top],
                      "sources": [x for i in kept for p in inter[i]["points"] for x in p.ids]}
        line = _sources_line([Point("", "", kept_c["reports"], 0, "Reports"),
                              Point("", "", kept_c["sources"], 0, "Sources")])
        text = text.rstrip() + (f"\n\n{line}" if line else "")
        ans.details["finish_reason"] = gen.finish_reason
    cites: dict[str, list] = {"reports": [], "sources": []}
    if mode == "extractive":
        for p in points:
            kind = "reports" if p.label == "Reports" else "sources"
            cites[kind] += [i for i in p.ids if i not in cites[kind]]
    else:
        cites = {k: list(dict.fromkeys(v)) for k, v in kept_c.items()}
    ans.text = text
    ans.citations = {k: v for k, v in cites.items() if v}
    ans.context = ([{"kind": "report", "id": sc.id, "tokens": reports[sc.id]["n_tokens"]} for sc in top]
                   + [{"kind": "follow_up", "question": a["question"], "tokens": a["context_tokens"]} for a in inter])
    ans.details["removed_citations"] = {k: v for k, v in removed.items() if v}
    ans.details["tokens_read"] = tokens_read
    ans.details["context_tokens"] = tokens_read
    ans.details["tokens_spent"] = ans.prompt_tokens + ans.completion_tokens
    ans.seconds = time.perf_counter() - t0
    return ans


def _entity_followups(store: Store, prompts: Prompts, qv, norms: list[str], vec_ids, mat, asked: set,
                      n: int) -> list[tuple[str, str, str]]:
    """Up to ``n`` template follow-ups about the entities of ``norms`` nearest to the question, not asked yet."""
    ranked = [x for x in _entities_by_question(qv, norms, vec_ids, mat) if x not in asked][:n]
    names = _entity_names(store, ranked)
    out = []
    for norm in ranked:
        asked.add(norm)
        out.append((prompts.fill("drift_followup", entity=names.get(norm, norm)).strip(), "entities", norm))
    return out


def in_document_order(store: Store, points: list[Point]) -> list[Point]:
    """``points`` one sentence each, in the order of the documents that hold them (corpus order, then place in
    the document), each opened by its document's name in italics ("*week04*: The launch moved to 12 April."),
    as global search's timeline writes them (:func:`slmgraph.query.themes.timeline_picks`): a question about
    a change is answered by what the early and the late documents say. A sentence is placed by the first text
    unit, in corpus order, that holds it (whitespace folded), and its place in that unit; one found in none keeps its citations and goes
    last, unnamed. A point keeps its label and ids (a report's sentence still cites the report)."""
    import re

    docs = {d.doc_id: d for d in corpus_documents(store)}
    units = sorted(((docs[d].pos, o, " ".join(t.split()), d) for d, o, t in store.con.execute(
        "SELECT doc_id, ord, text FROM text_units").fetchall() if d in docs), key=lambda u: u[:2])
    placed = []
    for k, p in enumerate(points):
        for s in (x for x in re.split(r"(?<=[.!?])\s+", p.text) if x.strip()):
            if any(near_duplicate(s, q[2].text) for q in placed):
                continue
            # its opening as written (a sentence rendered from Markdown marks may be found in no unit: it goes last)
            probe = " ".join(s.split())[:80]
            at = next((u for u in units if probe in u[2]), None)
            key = (at[0], at[1], at[2].find(probe), k) if at else (len(docs) + 1, 0, 0, k)
            head = f"*{docs[at[3]].name}*: " if at else ""
            placed.append((key, head, Point("", s, list(p.ids), p.rank, p.label)))
    placed.sort(key=lambda x: x[0])
    return [Point("", head + q.text, q.ids, q.rank, q.label) for _, head, q in placed]


def _without_repeats(points: list[Point]) -> list[Point]:
    """``points`` without those repeating a sentence (3+ words, case and punctuation ignored) of an
    earlier point: report findings and follow-ups' text units can quote the same sentence."""
    import re

    seen: set[str] = set()
    out = []
    for p in points:
        keys = {" ".join(w) for w in (re.findall(r"\w+", x.casefold()) for x in re.split(r"(?<=[.!?])\s+", p.text))
                if len(w) >= 3}
        if keys & seen or has_repetition(p.text):
            continue
        seen |= keys
        out.append(p)
    return out


def _unit_texts(store: Store, chunks: list[str]) -> dict[str, str]:
    if not chunks:
        return {}
    q = ",".join("?" * len(chunks))
    return dict(store.con.execute(f"SELECT chunk_id, text FROM text_units WHERE chunk_id IN ({q})",
                                  chunks).fetchall())


def _strip_citations(text: str) -> str:
    """``text`` without bracketed citations (their display ids are per local search, not the index's)."""
    import re

    return re.sub(r"\s*\[[^\[\]]*\b(?:Entities|Relationships|Sources|Reports|Data)\b[^\[\]]*\]", "", text,
                  flags=re.I).strip()


def _sources_line(points: list[Point]) -> str:
    reps, units = [], []
    for p in points:
        target = reps if p.label == "Reports" else units
        target += [i for i in p.ids if i not in target]
    parts = ([f"community reports {', '.join(map(str, reps))}"] if reps else []) + \
        ([f"text units {', '.join(map(str, units))}"] if units else [])
    return f"Sources: {'; '.join(parts)}." if parts else ""
