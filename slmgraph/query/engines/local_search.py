"""Local search: answer from the neighbourhood of the entities nearest to the
question (paper sec. 3.1.6 / GraphRAG local search; ARCHITECTURE.md stage 9).

1. The entities the question names (:func:`slmgraph.query.named.named_entities`) come first; then
   the ``top_k`` entities whose description embeddings are nearest the question's (cosine).
2. Gather, each within its share of the token budget:
   community reports of the communities holding those entities (ranked by how
   many selected entities they hold, then rating); the entities themselves;
   their relationships (both ends selected first, then by weight); and the
   text units they come from: first those that mention the named entities (else the nearest one),
   then by how many selected entities they mention.
   When the index holds claims (``slmgraph index --claims``), the claims whose
   subject is a selected entity follow the relationships, in what the
   relationships' share leaves (ARCHITECTURE.md stage 9); they carry no id and are
   not cited.
3. With models of 1B parameters or more the model answers from that
   context, citing entity, relationship and source ids; cited ids not in the
   context are removed. Under 1B the answer is extractive
   (:mod:`slmgraph.query.extractive`): the sentences of the context's text
   units (else of its relationships' descriptions) nearest to the question,
   each citing its source, opened by at most one grounded model sentence.

Before 3, a question neither the context's text units nor the nearest entity
is near enough (:func:`_gate`: the mean of the two best cosines against the
floor of global search, calibrated on the index by the off-topic probes) gets
the no-answer text with no model call; GraphRAG's local search answers anything.
"""

from __future__ import annotations

import time
from typing import Callable

from slmgraph.indexing.stages.claims import load_claims
from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.embed_lookup import load_vectors, nearest
from slmgraph.errors import UserError
from slmgraph.model.client import DEADLINE_ANSWER_S, ModelClient
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.report_context import CLAIMS_HEADER, claim_line
from slmgraph.store.db import Store
from slmgraph.store.rows import EntityRow, RelationshipRow, ReportRow, TextUnitRow, rows
from slmgraph.query.documents import corpus_headings
from slmgraph.query.answer import Answer, check_citations, context_room, dedupe_lines, unit_numbers
from slmgraph.query.engines.basic_search import refusal
from slmgraph.query.extractive import (
    Point, could_define, defining_points, extractive_answer, first_sentences, near_duplicate, opening, sentence_points,
)
from slmgraph.query.lead_sentence import asks_identity
from slmgraph.query.named import check_names, name_details, name_refusal, name_variants, named_entities, names_vouch
from slmgraph.query.scoring import cosines, quote_probes, relevance_gate

SECTIONS = ("reports", "entities", "relationships", "sources")


def _defining_first(store: Store, units: list[TextUnitRow], names: list[str]) -> list[TextUnitRow]:
    """``units`` with, for each of ``names`` (at most two), the unit holding the first sentence in reading
    order (document path, position) that says what the name is
    (:func:`slmgraph.query.extractive.defining_points`: "N, the treasurer, ...", "N was elected Chair")
    moved to the front, the first name's first; the others keep their order. A short "Who is X?" is
    nearest the units that merely mention X, and only a few units fit the context, so without this the
    statement of X's office was often left out (allotment minutes: "its parks officer, Dennis Kraal," in a
    unit ranked below the four that fit). Reading order, because a text says who someone is where it
    brings them in (a play's list of persons, the minutes that first name an officer)."""
    front: list[str] = []
    order: dict = {}
    for name in names:
        # The sentence split is the costly part: only units whose text holds a match are split.
        cands = [(u.chunk_id, u.text) for u in units if u.chunk_id not in front and could_define(u.text, name)]
        if cands and not order:
            q = ",".join("?" * len(units))
            order = {c: (p, o) for c, p, o in store.con.execute(
                f"SELECT t.chunk_id, d.path, t.ord FROM text_units t JOIN documents d USING (doc_id) "
                f"WHERE t.chunk_id IN ({q})", [u.chunk_id for u in units]).fetchall()}
        cands.sort(key=lambda c: order.get(c[0], ("", 0)))
        got = defining_points(cands, [name], max_points=1)
        if got:
            front.append(got[0].ids[0])
    if not front:
        return units
    by_id = {u.chunk_id: u for u in units}
    return [by_id[c] for c in front] + [u for u in units if u.chunk_id not in front]


def _fill(client: ModelClient, header: str, rows: list[tuple[object, str]], budget: int) -> tuple[str, list, int]:
    """Header + as many rows as fit ``budget`` tokens: ``(text, ids_used, tokens)``."""
    lines = [header]
    used = client.count(header + "\n")
    ids = []
    for rid, line in rows:
        n = client.count(line + "\n")
        if used + n > budget:
            continue  # this row does not fit; a shorter one further down may

        lines.append(line)
        ids.append(rid)
        used += n
    return "\n".join(lines), ids, used


def build_local_context(store: Store, client: ModelClient, entity_norms: list[str], budget: int,
                        level: int | None = None,
                        shares: tuple[float, float, float, float] = (0.10, 0.20, 0.20, 0.50),
                        own: list[str] | None = None, question_vec=None,
                        defining_first: bool = False) -> tuple[str, dict, int]:
    """Context tables for the selected entities within ``budget`` tokens.

    The text units that mention an entity of ``own`` (the entities the question is about; default the
    first of ``entity_norms``) come first, most of them first; then the other selected entities' units,
    by how many selected entities they mention: a person's own memo before the minutes that name her
    neighbours. Units tied on both counts go nearest the question first (cosine of ``question_vec``, shape
    ``(dim,)``, with the unit's ``text_unit`` vector; units without one last), then in reading order
    (document path, position): never by chunk id, a hash of the document's bytes, so editing one figure
    of a document cannot move its units behind its neighbours'. With ``defining_first`` (a question naming
    ``own``), the unit that says what an own entity is (:func:`_defining_first`) goes before them all, so
    the answer can open with it and a model reads it.

    ``shares`` splits the budget between reports, entities, relationships and
    text units, in that order; what a section leaves unused passes to the next.

    Claims of the selected entities (as subject), when the index holds any,
    get what the relationships leave of their share, and pass on what they
    leave to the text units.

    Returns:
        ``(text, used_ids, tokens)``; ``used_ids`` maps ``entities``,
        ``relationships``, ``sources`` (text unit numbers of :func:`slmgraph.query.answer.unit_numbers`,
        stable across queries) and ``reports`` to the ids
        placed in the context, ``source_chunks`` to the chunk ids, and
        ``claims`` to the claim ids.
    """
    con = store.con
    if not entity_norms:
        return "", {"entities": [], "relationships": [], "sources": [], "reports": [], "source_chunks": [],
                    "claims": []}, 0
    placeholders = ",".join("?" * len(entity_norms))
    ents = rows(con, EntityRow, f"SELECT entity_id, norm, name, type, description FROM entities "
                                f"WHERE norm IN ({placeholders})", entity_norms)
    rank = {n: i for i, n in enumerate(entity_norms)}
    ents.sort(key=lambda e: rank[e.norm])
    sel = [e.entity_id for e in ents]
    sel_set = set(sel)
    names = dict(con.execute("SELECT entity_id, name FROM entities").fetchall())
    if level is None:
        lv = con.execute("SELECT max(level) FROM community_reports").fetchone()[0]
        level = lv if lv is not None else 0
    q = ",".join("?" * len(sel))
    reps = rows(con, ReportRow, f"""
        SELECT r.community_id, r.title, r.summary, r.rating
        FROM community_members m JOIN community_reports r ON r.community_id = m.community_id
        WHERE r.level = ? AND m.entity_id IN ({q})
        GROUP BY ALL ORDER BY count(*) DESC, r.rating DESC, r.community_id""", [level] + sel)
    rels = rows(con, RelationshipRow, f"""
        SELECT rel_id, source_id, target_id, description, weight
        FROM relationships
        WHERE source_id IN ({q}) OR target_id IN ({q})
        ORDER BY (source_id IN ({q}))::INT + (target_id IN ({q}))::INT DESC, weight DESC, rel_id""", sel * 4)
    own_ids = [e.entity_id for e in ents if e.norm in set(own if own is not None else entity_norms[:1])] or [-1]
    qo = ",".join("?" * len(own_ids))
    units = rows(con, TextUnitRow, f"""
        SELECT t.chunk_id, t.text
        FROM entity_text_units e JOIN text_units t ON t.chunk_id = e.chunk_id JOIN documents d USING (doc_id)
        WHERE e.entity_id IN ({q})
        GROUP BY t.chunk_id, t.text, d.path, t.ord
        ORDER BY count(DISTINCT e.entity_id) FILTER (WHERE e.entity_id IN ({qo})) DESC,
                 count(DISTINCT e.entity_id) DESC, d.path, t.ord, t.chunk_id""", sel + own_ids)
    if question_vec is not None and len(units) > 1:
        tiers = {r[0]: (r[1], r[2]) for r in con.execute(f"""
            SELECT e.chunk_id, count(DISTINCT e.entity_id) FILTER (WHERE e.entity_id IN ({qo})),
                   count(DISTINCT e.entity_id)
            FROM entity_text_units e WHERE e.entity_id IN ({q}) GROUP BY e.chunk_id""", own_ids + sel).fetchall()}
        vids, mat = load_vectors(store, "text_unit")
        pos = {c: i for i, c in enumerate(vids)}
        have = [u.chunk_id for u in units if u.chunk_id in pos]
        near = dict(zip(have, cosines(question_vec, mat[[pos[c] for c in have]]).tolist())) if have else {}
        # sorted() is stable: within one cosine the reading order of the query above stays.
        units.sort(key=lambda u: (-tiers[u.chunk_id][0], -tiers[u.chunk_id][1], -near.get(u.chunk_id, -2.0)))
    if defining_first:
        units = _defining_first(store, units, [e.name for e in ents if e.entity_id in set(own_ids)][:2])
    total_share = sum(shares) or 1.0
    budgets = {k: int(budget * v / total_share) for k, v in zip(SECTIONS, shares)}
    parts, used_ids, total = [], {}, 0

    text, ids, n = _fill(client, "-----Reports-----\nid,title,summary",
                         [(r.community_id, f"{r.community_id},{r.title},{r.summary}") for r in reps],
                         budgets["reports"])
    parts.append(text); used_ids["reports"] = ids; total += n
    budgets["entities"] += budgets["reports"] - n
    text, ids, n = _fill(client, "-----Entities-----\nid,entity,type,description",
                         [(e.entity_id, f"{e.entity_id},{e.name},{e.type},{e.description}") for e in ents
                          if e.entity_id in sel_set],
                         budgets["entities"])
    parts.append(text); used_ids["entities"] = ids; total += n
    budgets["relationships"] += budgets["entities"] - n
    text, ids, n = _fill(client, "-----Relationships-----\nid,source,target,description,weight",
                         [(r.rel_id, f"{r.rel_id},{names[r.source_id]},{names[r.target_id]},{r.description},"
                                     f"{r.weight:g}") for r in rels],
                         budgets["relationships"])
    parts.append(text); used_ids["relationships"] = ids; total += n
    left = budgets["relationships"] - n
    claims = [c for c in load_claims(store) if c["subject_id"] in sel_set]
    used_ids["claims"] = []
    if claims:
        claims.sort(key=lambda c: (sel.index(c["subject_id"]), c["claim_id"]))
        first: dict[str, int] = {}  # line -> first claim id: overlapping text units repeat claims
        for c in claims:
            first.setdefault(claim_line(c), c["claim_id"])
        text, ids, n = _fill(client, CLAIMS_HEADER, [(cid, line) for line, cid in first.items()], left)
        if ids:
            parts.append(text); used_ids["claims"] = ids; total += n
            left -= n
    budgets["sources"] += left
    # Text units are cited by their index-wide number (slmgraph.query.answer.unit_numbers, as TS, DRIFT and
    # lazy search cite them), not by their position in this context: the same unit has the same id in
    # every answer.
    numbers = unit_numbers(store)
    chunk_of = {numbers[u.chunk_id]: u.chunk_id for u in units}
    src_rows = [(numbers[u.chunk_id], f"{numbers[u.chunk_id]},{' '.join(u.text.split())}") for u in units]
    text, ids, n = _fill(client, "-----Sources-----\nid,text", src_rows, budgets["sources"])
    parts.append(text); used_ids["sources"] = ids; total += n
    used_ids["source_chunks"] = [chunk_of[i] for i in ids]
    return "\n\n".join(parts), used_ids, total


def local_search(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                 embedder, level: int | None = None, on_text: Callable[[str], None] | None = None) -> Answer:
    """Answer an entity-centric question from the nearest entities' neighbourhood.

    Args:
        embedder: an :class:`slmgraph.indexing.stages.embed.Embedder` (or a fake with ``encode``).
        level: community level whose reports go in the context (default: deepest).

    Raises:
        UserError: the index has no entity embeddings (indexing did not finish).
    """
    t0 = time.perf_counter()
    if level is not None:
        levels = [r[0] for r in store.con.execute("SELECT DISTINCT level FROM community_reports ORDER BY 1").fetchall()]
        if level not in levels:
            raise UserError(f"level {level} is not in the index (levels {levels[0] if levels else '-'}.."
                            f"{levels[-1] if levels else '-'}): pass --level with one of them")
    ids, mat = load_vectors(store, "entity")
    if not ids:
        raise UserError(f"index {store.path} holds no entities (its text has no capitalised names): ask with "
                        "--method basic, which reads the text units" if store.count("text_units") and not
                        store.count("entities") else
                        f"index {store.path} has no entity embeddings: run 'slmgraph index' to finish it")
    named = check_names(store, question, settings, in_index=True)  # an entity's name seeds the search
    if not named["answer"]:
        return name_refusal(Answer(text="", method="local", question=question, level=level), prompts, named,
                            on_text, t0)
    qv = embedder.encode([question])[0]
    hits = nearest(qv, ids, mat, settings.local_top_k_entities)
    system, room = context_room(client, prompts, "local", question, settings.reduce_max_tokens, 100)
    budget = min(settings.local_context_tokens, room)
    # a first name alone ("What does Priya think?") is no name the NER or the index holds whole, but a speaker's
    speaker = _speaker_by_first_name(store, question)
    own = named_entities(store, named["named"])
    own = speaker + [o for o in own if o not in speaker] or [h[0] for h in hits[:1]]
    selected = own + [h[0] for h in hits if h[0] not in own]
    context, used, ntok = build_local_context(store, client, selected[:max(len(own), len(hits))], budget, level,
                                              settings.local_shares, own=own, question_vec=qv,
                                              defining_first=bool(named["named"]))
    ans = Answer(text="", method="local", question=question, level=level)
    gate = names_vouch(named, _gate(store, question, qv, hits, mat, used, embedder, prompts, settings))
    if not gate["answer"]:
        refusal(ans, prompts, "text unit" if used["source_chunks"] else "entity description",
                gate, on_text, [{"kind": "text_unit", "id": c, "source": s} for s, c in
                                zip(used["sources"], used["source_chunks"])], t0)
        ans.details["nearest_entities"] = [{"norm": n, "cosine": round(c, 4)} for n, c in hits]
        return ans
    ans.context = ([{"kind": "entity", "id": i} for i in used["entities"]]
                   + [{"kind": "relationship", "id": i} for i in used["relationships"]]
                   + [{"kind": "report", "id": i} for i in used["reports"]]
                   + [{"kind": "claim", "id": i} for i in used["claims"]]
                   + [{"kind": "text_unit", "id": c, "source": s} for s, c in zip(used["sources"],
                                                                                  used["source_chunks"])])
    from slmgraph.query.engines.global_search import answer_mode

    if answer_mode(settings, client.model) == "extractive":
        _extractive_local(store, client, prompts, settings, question, embedder, qv, used, ans, on_text,
                          about=own if named["named"] or speaker else [])
        ans.details = {"nearest_entities": [{"norm": n, "cosine": round(c, 4)} for n, c in hits],
                       "context_tokens": ntok, "budget_tokens": budget, "answer_mode": "extractive",
                       **gate, **name_details(named), **ans.details}
        ans.seconds = time.perf_counter() - t0
        return ans
    gen = client.call("local", system, prompts.fill("local_user", context=context, question=question), schema=None,
                      max_tokens=settings.reduce_max_tokens, deadline_s=DEADLINE_ANSWER_S, use_cache=False, on_text=on_text)
    ans.add_call(gen)
    text = dedupe_lines(gen.text.strip())
    text, kept, removed = check_citations(text, {k: set(used[k]) for k in
                                                 ("entities", "relationships", "sources", "reports")})
    cited = "; ".join(f"{'text units' if k == 'sources' else k} {', '.join(map(str, v))}" for k, v in kept.items()
                      if v)
    given = (f"{len(used['entities'])} entities, {len(used['relationships'])} relationships, "
             f"{len(used['reports'])} reports, {len(used['sources'])} text units")
    text += (f"\n\nSources: {cited} (of {given} given)." if cited else
             f"\n\nSources: none cited by the model; it was given {given}.")
    ans.text = text
    ans.citations = kept
    ans.details = {"removed_citations": removed, "nearest_entities": [{"norm": n, "cosine": round(c, 4)} for n, c in hits],
                   "context_tokens": ntok, "budget_tokens": budget, **gate, **name_details(named)}
    ans.seconds = time.perf_counter() - t0
    return ans


def _gate(store: Store, question: str, qv, hits, entity_mat, used: dict, embedder, prompts: Prompts,
          settings: Settings) -> dict:
    """The relevance gate of local search (:func:`slmgraph.query.scoring.relevance_gate`). Its cosine is
    the mean of the question's best cosine with the context's text units (what the answer quotes) and
    with the nearest entity (what local search is about), because either alone refused on-topic or
    passed off-topic questions (docs/decisions.md: relevance gate of local and basic search). The floor
    is calibrated the same way, each probe's score being the mean of its best cosine with any text
    unit and with any entity. A context without text units is judged by its nearest entity alone."""
    entity_best = hits[0][1] if hits else 0.0
    if used["source_chunks"]:
        ids, mat = load_vectors(store, "text_unit")
        pos = {c: i for i, c in enumerate(ids)}
        rows = [pos[c] for c in used["source_chunks"] if c in pos]
        if rows:
            best = float(cosines(qv, mat[rows]).max())
            gate = relevance_gate(question, (best + entity_best) / 2, None, embedder, prompts, settings,
                                  probe_floor=_mean_probe_floor(mat, entity_mat, embedder, prompts, settings))
            gate.update({"text_unit_best": round(100 * best, 1), "entity_best": round(100 * entity_best, 1)})
            return gate
    return relevance_gate(question, entity_best, entity_mat, embedder, prompts, settings)


def _mean_probe_floor(unit_mat, entity_mat, embedder, prompts: Prompts, settings: Settings):
    """``(floor, best probe score)`` for the mean statistic of :func:`_gate`: each probe scores the mean
    of its best cosine with any text unit and with any entity (an upper bound of what it would reach
    on a local context); the floor is lowered to the best probe + PROBE_MARGIN, never raised."""
    import numpy as np

    from slmgraph.query.scoring import PROBE_MARGIN, embedding_score, probe_questions

    probes = probe_questions(prompts) if settings.helpfulness_probes else []
    if not probes or embedder is None:
        return settings.helpfulness_floor, None

    def best_per_probe(mat):
        m = np.asarray(mat, dtype=np.float32)
        if m.ndim != 2 or not len(m):
            return np.zeros(len(probes), dtype=np.float32)
        m = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
        return (p @ m.T).max(axis=1)

    p = np.asarray(embedder.encode(probes), dtype=np.float32).reshape(len(probes), -1)
    p = p / np.maximum(np.linalg.norm(p, axis=1, keepdims=True), 1e-9)
    best = embedding_score(float(((best_per_probe(unit_mat) + best_per_probe(entity_mat)) / 2).max()))
    return min(settings.helpfulness_floor, best + PROBE_MARGIN), best


def _extractive_local(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                      embedder, qv,
                      used: dict, ans: Answer, on_text, about: list[str] | None = None) -> None:
    """The extractive local answer (models under 1B): see the module doc. A question naming entities of
    the index (``about``: their norms) is answered first with what they are (:func:`_lead_points`)."""
    label = "Sources"
    if used["source_chunks"]:
        q = ",".join("?" * len(used["source_chunks"]))
        texts = dict(store.con.execute(f"SELECT chunk_id, text FROM text_units WHERE chunk_id IN ({q})",
                                       used["source_chunks"]).fetchall())
        passages = [(s, texts[c]) for s, c in zip(used["sources"], used["source_chunks"])]
    else:
        label = "Relationships"
        q = ",".join("?" * max(1, len(used["relationships"])))
        passages = store.con.execute(f"SELECT rel_id, description FROM relationships WHERE rel_id IN ({q})",
                                     used["relationships"] or [-1]).fetchall()
    names = _names_of(store, about or [])
    points = sentence_points(passages, qv, embedder, names=names,
                             probes=quote_probes(question, prompts, settings), headings=corpus_headings(store),
                             persons=_persons_of(store, used["source_chunks"]) if label == "Sources" else None,
                             question=question)
    lead = _lead_points(store, about or [], passages if label == "Sources" else [], used)
    for p in list(points):
        same = next((x for x in lead if near_duplicate(x.text, p.text)), None)
        if same is not None:
            points.remove(p)
            if same.label:  # the description says what a quoted sentence says: quote the sentence instead
                lead[lead.index(same)] = Point(p.head, p.text, p.ids, p.rank)
            else:
                same.ids += [i for i in p.ids if i not in same.ids]
    said, note = (_speaker_points(store, about or [], question, qv, embedder) if not asks_identity(question, names)
                  else ([], ""))
    if said:
        # a question about what a speaker thinks is answered in their words, never in another speaker's
        points = said
        numbers = unit_numbers(store)
        for p in said:
            chunk = next(c for c, n in numbers.items() if n == p.ids[0])
            if p.ids[0] not in used["sources"]:
                used["sources"].append(p.ids[0])
                used["source_chunks"].append(chunk)
        # what the other named things are may be another speaker's sentence: only what defines the speaker stays
        first = said[0].text.split(": ", 1)[0]
        lead = [x for x in lead if first.split()[-1].casefold() in x.text.casefold()
                and not any(near_duplicate(x.text, p.text) for p in said)]
    if lead and points and not asks_identity(question, names):
        # A question asking more of its names than who they are is answered by its best sentence first.
        points = points[:1] + lead + points[1:max(1, 5 - len(lead))]
    else:
        points = lead + points[:max(0, 5 - len(lead))]
    synthesis, gen = opening(client, prompts, settings, question, points)
    if gen is not None:
        ans.add_call(gen)
    entity_cited = list(dict.fromkeys(i for p in points if p.label == "Entities" for i in p.ids))
    points_cited = [p for p in points if p.label != "Entities"]
    cited = list(dict.fromkeys(i for p in points_cited for i in p.ids))
    given = (f"{len(used['entities'])} entities, {len(used['relationships'])} relationships, "
             f"{len(used['reports'])} reports, {len(used['sources'])} text units")
    what = "text units" if label == "Sources" else "relationships"
    cites = "; ".join(x for x in (f"{what} {', '.join(map(str, cited))}" if cited else "",
                                  f"entities {', '.join(map(str, entity_cited))}" if entity_cited else "") if x)
    text = extractive_answer(points, label, synthesis, f"Sources: {cites} (of {given} given)." if cites else "",
                             lead=True)
    if said and note:
        text = f"{note}\n\n{text}"
    if on_text is not None:
        on_text(text.rsplit("\n\nSources:", 1)[0])
    ans.text = text or "The nearest entities' context holds no sentence that answers this question."
    ans.citations = {label.lower(): cited, **({"entities": entity_cited} if entity_cited else {})}
    ans.details = {"removed_citations": {}, "synthesis": synthesis,
                   "synthesis_raw": gen.text[:500] if gen is not None else None}


#: A named speaker's sentences quoted at most, and how far under their best a sentence may stand (cosine).
SPEAKER_POINTS = 4
SPEAKER_MARGIN = 0.25
#: What saying a stance in so many words adds to a speaker's sentence's score (cosine).
STANCE_BONUS = 0.2
#: What giving another person's view ("My son is in favour of it") takes from a speaker's sentence's score (cosine).
REPORTED_PENALTY = 0.2
#: The fewest words of a speaker's sentence worth quoting ("Thank you, Maya." says nothing).
SPEAKER_MIN_WORDS = 6


def _speaker_points(store: Store, norms: list[str], question: str, qv, embedder) -> tuple[list[Point], str]:
    """``(points, note)``: a transcript speaker's own sentences nearest the question, for a question naming them
    (``norms``: the named entities): the first named person whose name labels speaker turns ("SAMIRA KHAN: ...")
    anywhere in the index; their sentences (:func:`slmgraph.query.theme_model.speaker_of`) of at least
    :data:`SPEAKER_MIN_WORDS` words (or saying a stance in so many words: "Against it as written."), no question,
    ranked by the mean of the sentence's cosine with the question and its context's (their turn and the turn
    before: "I'm against it" answers a question naming the act), within :data:`SPEAKER_MARGIN` of the best, at most
    :data:`SPEAKER_POINTS`, each once, as "Name: sentence" citing its text unit's number. ``note``: one sentence
    when the question names something else that none of those contexts names ("Owen Price never names the Coastal
    Resilience Act; ..."), else "". ([], "") when no named person speaks, or none of their sentences passes."""
    import re

    import numpy as np

    from slmgraph.query.extractive import prose_sentences
    from slmgraph.names.forms import STOP
    from slmgraph.query.theme_mentions import _AGAINST, _FOR, _VIEW_WORDS, other_forms, reported
    from slmgraph.query.theme_model import _turns, speaker_of, spoken, word_stem

    if not norms:
        return [], ""
    q = ",".join("?" * len(norms))
    found_names = store.con.execute(f"SELECT name, type FROM entities WHERE norm IN ({q})", norms).fetchall()
    units = store.con.execute("SELECT chunk_id, text FROM text_units").fetchall()
    # a name that labels speaker turns is a person whatever the NER typed it ("Helen Marsh" as a place)
    speaks = {n for n, _ in found_names if _labels_turns(n, units)}
    people = [n for n, t in found_names if n in speaks or t == "person"]
    people.sort(key=lambda n: n not in speaks)
    things = [n for n, _ in found_names if n not in people]
    unit_q = qv / max(float(np.linalg.norm(qv)), 1e-9)
    for name in people:
        label = re.compile(r"(?mi)^[ \t]*" + re.escape(name) + r"[ \t]*:")
        mine = [(c, t) for c, t in units if label.search(t or "")]
        if not mine:
            continue
        found: list[tuple[str, str, str, bool]] = []
        for c, t in mine:
            starts = [o for o, _ in _turns(t)] + [len(t)]
            for x in prose_sentences(t):
                x = spoken(x)
                body = re.sub(r"^[^:]{1,40}:\s*", "", x) if label.match(x) else x
                stated = _FOR.search(body) or _AGAINST.search(body)
                if (speaker_of(t, x).casefold() != name.casefold() or body.rstrip("\"'\u201d\u2019) ").endswith("?")
                        or (len(body.split()) < SPEAKER_MIN_WORDS and not stated)):
                    continue
                at = t.find(body[:40])
                k = max((i for i, o in enumerate(starts[:-1]) if o <= at), default=0)
                found.append((c, body, t[starts[max(0, k - 1)]:starts[k + 1]], bool(stated)))
        found = list(dict.fromkeys(found))
        if not found:
            continue
        texts = list(dict.fromkeys([b for _, b, _, _ in found] + [x for _, _, x, _ in found]))
        vecs = embedder.encode(texts)
        vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
        cos_of = dict(zip(texts, (vecs @ unit_q).tolist()))
        # a stance said in so many words ("I'm strongly in favor.") is what "what does X think" asks for, where its
        # context names the question's subject ("I'm against it" after "And the waterfront plan?" is no view of an act)
        subject = {word_stem(w) for w in re.findall(r"[a-z]+", question.casefold())
                   if len(w) > 3 and w not in STOP and w not in _VIEW_WORDS and w not in name.casefold().split()}
        on_subject = lambda x: bool(subject & {word_stem(w) for w in re.findall(r"[a-z]+", x.casefold())})  # noqa: E731
        # another person's view the speaker reports ("My son is in favour of it") is not theirs
        cos = [0.5 * cos_of[b] + 0.5 * cos_of[x] + (STANCE_BONUS if st and on_subject(x) else 0.0)
               - (REPORTED_PENALTY if reported(b) else 0.0) for _, b, x, st in found]
        order = sorted(range(len(found)), key=lambda k: -cos[k])
        numbers = unit_numbers(store)
        out: list[Point] = []
        shown = name.title() if name.isupper() else name
        for k in order:
            if cos[k] < cos[order[0]] - SPEAKER_MARGIN or len(out) == SPEAKER_POINTS:
                break
            c, body, _, _ = found[k]
            if any(near_duplicate(body, p.text.split(": ", 1)[-1]) for p in out):
                continue
            out.append(Point("", f"{shown}: {body}", [numbers[c]], float(cos[k])))
        said = " ".join(x for _, _, x, _ in found).casefold()
        own = " ".join(b for _, b, _, _ in found).casefold()
        corpus = "\n".join(t or "" for _, t in units)
        forms = {n: [n] + other_forms(n, corpus) for n in things}
        missing = [n for n in things if not any(f.casefold() in said for f in forms[n])]
        # asked about it, with no word of their own on it nor a stance said in reply: say so, or a sentence on
        # another subject reads as their view of this one
        unsaid = [n for n in things if not any(f.casefold() in own for f in forms[n])]
        replied = any(st and on_subject(x) for _, _, x, st in found)
        note = (f"{shown} never names \u201c{missing[0]}\u201d in their own turns or the questions put to them; the sentences of "
                f"theirs nearest the question follow." if missing and len(missing) == len(things) else
                f"{shown} never names \u201c{unsaid[0]}\u201d in their own words, nor states a view of it in reply; the "
                f"sentences of theirs nearest the question follow." if things and len(unsaid) == len(things)
                and not replied else "")
        return out, note
    return [], ""


def _labels_turns(name: str, units) -> bool:
    """Whether ``name`` labels a speaker turn ("HELEN MARSH: ...", any case) in one of ``units``
    (``(chunk_id, text)`` rows)."""
    import re

    label = re.compile(r"(?mi)^[ \t]*" + re.escape(name) + r"[ \t]*:")
    return any(label.search(t or "") for _, t in units)


def _speaker_by_first_name(store: Store, question: str) -> list[str]:
    """``[norm]`` of the one entity whose name starts with a capitalised word of ``question`` (not its first
    word) and labels speaker turns ("Priya" of "PRIYA NANDAKUMAR: ...", whether or not the NER took "Priya" for a
    name or the index holds a "Priya" of its own); [] when no word, or more than one speaker, fits, or the
    question writes a speaker's full name."""
    import re

    from slmgraph.names.forms import STOP

    words = [w for w in re.findall(r"(?<!^)\b[A-Z][a-z]{2,}\b", question.strip()) if w.casefold() not in STOP]
    if not words:
        return []
    units = store.con.execute("SELECT chunk_id, text FROM text_units").fetchall()
    # a full name of a speaker in the question is found as it stands ("Helen Marsh"), not by its first word
    if any(_labels_turns(f"{a} {b}", units) for a, b in zip(words, words[1:])):
        return []
    for w in dict.fromkeys(words):
        rows = store.con.execute("SELECT norm, name FROM entities WHERE lower(name) LIKE ? ORDER BY degree DESC",
                                 [w.casefold() + " %"]).fetchall()
        fit = list(dict.fromkeys(n for n, name in rows if _labels_turns(name, units)))
        if len(fit) == 1:
            return fit
    return []


def _names_of(store: Store, norms: list[str]) -> list[str]:
    """The names of the entities ``norms`` and their short forms (:func:`slmgraph.query.named.name_variants`)."""
    if not norms:
        return []
    names = [n for (n,) in store.con.execute(f"SELECT name FROM entities WHERE norm IN ({','.join('?' * len(norms))})",
                                             norms).fetchall()]
    return name_variants(names)


def _persons_of(store: Store, chunk_ids: list[str]) -> dict[str, str]:
    """The persons the text units ``chunk_ids`` name: each surface form a sentence may use (the entity's name
    its :func:`slmgraph.query.named.name_variants` and its first word) -> the entity's name, for the pronoun rule of
    :func:`slmgraph.query.extractive.sentence_points`. A short form two persons share ("Moss" of Alfred and
    Edith Moss) is left out: it names neither for certain."""
    if not chunk_ids:
        return {}
    names = [n for (n,) in store.con.execute(
        f"SELECT DISTINCT e.name FROM entities e JOIN entity_text_units u ON u.entity_id = e.entity_id "
        f"WHERE e.type = 'person' AND u.chunk_id IN ({','.join('?' * len(chunk_ids))}) ORDER BY 1",
        chunk_ids).fetchall()]
    forms: dict[str, set[str]] = {}
    for n in names:
        first = n.split()[0]
        for v in name_variants([n]) + ([first] if " " in n and len(first) > 2 and first[:1].isupper() else []):
            forms.setdefault(v, set()).add(n)  # "Walter" of "Walter Brennan", as a text says it again
    return {v: next(iter(who)) for v, who in forms.items() if len(who) == 1}


def _lead_points(store: Store, norms: list[str], passages: list[tuple[object, str]], used: dict) -> list[Point]:
    """What the entities ``norms`` are, to open the answer: per entity, the sentence of the context's text
    units that defines it (:func:`slmgraph.query.extractive.defining_points`: "Linda Cho, the Chief
    Information Officer, ..."), else the sentence of the opening of its own description in the index
    (:func:`slmgraph.query.extractive.first_sentences`) that defines it, cited as an entity when that
    entity is in the context. A description that says no such thing ("Alice Smith founded Acme.") opens
    nothing."""
    if not norms:
        return []
    q = ",".join("?" * len(norms))
    found = {n: (eid, name, desc) for eid, n, name, desc in store.con.execute(
        f"SELECT entity_id, norm, name, description FROM entities WHERE norm IN ({q})", norms).fetchall()}
    lead: list[Point] = []
    for n in norms[:2]:
        if n not in found:
            continue
        eid, name, desc = found[n]
        got = defining_points(passages, [name], max_points=1)
        if got and not any(near_duplicate(p.text, got[0].text) for p in lead):
            lead += got
            continue
        text = next((x.text for x in defining_points([(eid, first_sentences(desc or ""))], [name])), "")
        if text and eid in used["entities"] and not any(near_duplicate(p.text, text) for p in lead):
            lead.append(Point("", text, [eid], 1.0, label="Entities"))
    return lead
