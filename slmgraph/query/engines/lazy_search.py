"""Budgeted lazy search (``--method lazy``): the LazyGraphRAG idea, with no community reports.

LazyGraphRAG (Edge, Trinh, Larson, Microsoft Research blog "LazyGraphRAG:
Setting a new standard for quality and cost", Nov 2024) defers all model
work to query time: the index holds only text units, their embeddings and a
graph of co-occurring names with its hierarchical communities (here: an index
built with ``--extractor nlp --no-reports``, no model call at index time).
At query time:

1. Text units are ranked by the cosine of their stored embedding with the
   question's (of their best window: a unit longer than the embedder's window
   has a vector per further window, :func:`slmgraph.indexing.stages.embed.further_windows`,
   and is tested with its best one); a community's rank is its best unit's cosine (a text unit
   belongs to every community of an entity it mentions; units naming no
   entity form one extra group, ``None``).
2. Relevance tests, community by community in rank order: the
   :data:`UNITS_PER_COMMUNITY` best untested units of a community are tested
   with the shared helpfulness scorer (:func:`slmgraph.query.scoring.score_items`:
   the question-unit embedding cosine by default -- the stored vector, no text
   read; the model's calibrated P(yes) on the unit cut to
   ``Settings.lazy_test_tokens`` tokens with ``--helpfulness model|combined``);
   a unit is relevant under the selection rule of global search
   (:func:`slmgraph.query.scoring.select`: at least the index's floor --
   ``helpfulness_floor``, lowered by the off-topic probes over the text units
   as global search does over reports (:func:`slmgraph.query.scoring.index_floor`) -- and
   ``helpfulness_relative`` times the best score; on the podcast sample the
   floor alone passed 95 of 100 tested units for a corpus-wide question, so
   nothing was left to deepen into).
3. Iterative deepening: a community with a relevant unit passes, and its
   sub-communities are ranked and tested next (their best units are ones the
   parent's top units did not cover); after :data:`MISS_STREAK` successive
   communities of a level with no relevant unit, the rest of that level is
   skipped. It stops when no community is left or ``budget`` tests are used.
4. The answer is built from the relevant units, best first, within
   ``Settings.lazy_answer_tokens`` tokens: under 1B parameters extractively
   (:func:`slmgraph.query.extractive.sentence_points`, their sentences nearest
   to the question, each citing its text unit, opened by at most one grounded
   model sentence), grouped under the title of their community (:func:`file_points`);
   from 1B the model writes it with the basic-search prompt.

Text units are cited by their number in (document, position) order, as in TS
(:func:`slmgraph.query.answer.unit_numbers`). ``details`` records the tests used and
the budget, the communities visited per level, the tokens read (by the tests,
and for the answer) and the model tokens spent.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from slmgraph.model.client import DEADLINE_ANSWER_S, ModelClient
from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.embed import WINDOW_KIND
from slmgraph.indexing.stages.embed_lookup import load_vectors
from slmgraph.errors import UserError
from slmgraph.config.prompting import Prompts
from slmgraph.store.db import Store
from slmgraph.store.rows import TextUnitRow, rows
from slmgraph.query.documents import corpus_headings
from slmgraph.query.answer import Answer, check_citations, context_room, dedupe_lines, unit_numbers
from slmgraph.query.documents import no_prose_units
from slmgraph.query.extractive import extractive_answer, opening, sentence_points
from slmgraph.query.named import check_names, known_of, name_details, name_refusal, name_variants, units_naming
from slmgraph.query.route import asks_change, corpus_wide_phrase
from slmgraph.query.scoring import Scored, cosines, index_floor, probe_questions, quote_probes, score_items, select

#: Units tested per community visit: LazyGraphRAG tests the top-k chunks of
#: each ranked community; k = 4 spreads a budget of 100 tests over ~25
#: communities on the podcast sample (195 at level 0). Not swept.
UNITS_PER_COMMUNITY = 4
#: Successive communities of one level with no relevant unit after which the
#: rest of that level is skipped (LazyGraphRAG's "z successive communities
#: yield zero relevant chunks"). Not swept.
MISS_STREAK = 5
#: Text units a corpus-wide question's answer is spread over (one point each).
SPREAD_UNITS = 6


def unit_communities(store: Store) -> tuple[dict, dict, dict]:
    """The community tree over text units.

    Returns:
        ``(units_of, children, level_of)``: ``community_id -> set(chunk_id)``
        (the text units mentioning any member entity; key ``None`` holds the
        units that mention no entity), ``community_id | None -> [child ids]``
        (``None``: the root level), ``community_id -> level``.
    """
    con = store.con
    units_of: dict = {}
    for cid, chunk in con.execute("SELECT DISTINCT m.community_id, e.chunk_id FROM community_members m "
                                  "JOIN entity_text_units e USING (entity_id)").fetchall():
        units_of.setdefault(cid, set()).add(chunk)
    orphans = {r[0] for r in con.execute("SELECT chunk_id FROM text_units WHERE chunk_id NOT IN "
                                         "(SELECT chunk_id FROM entity_text_units)").fetchall()}
    if orphans:
        units_of[None] = orphans
    children: dict = {}
    level_of: dict = {}
    for cid, level, parent in con.execute("SELECT community_id, level, parent_id FROM communities "
                                          "ORDER BY level, community_id").fetchall():
        level_of[cid] = level
        children.setdefault(parent, []).append(cid)
    return units_of, children, level_of


#: The heading of the text units that mention no entity of the graph (no community holds them).
NO_COMMUNITY = "Text naming no one of the graph"


def file_points(store: Store, points: list, by_no: dict, roots: list, units_of: dict, via: dict) -> list[tuple]:
    """``points`` grouped by community: ``[(community id | None, title, points)]``, the group of the best
    point first, the points of a group in their order.

    A point is filed under the root community (``roots``, best ranked first) holding the text unit it is
    quoted from (its first id; ``by_no``: unit number -> chunk id; ``units_of`` as
    :func:`unit_communities`) whose members its sentence names most, ties to the community the unit was
    tested for (``via``: chunk id -> community id), then to rank: a unit belongs to the community of every
    entity it mentions, and the one its quoted sentence is about is the one to file it under. A unit no
    community holds goes under :data:`NO_COMMUNITY`.

    The title: the community's report title when the index holds one, else up to three of its best
    connected members (:func:`slmgraph.indexing.stages.report_data.title_entities`, as a report built from
    the data titles a community without a topic) among those its quoted sentences name, the most named
    first (else those its quoted units mention, else all), so the heading names what is quoted under it;
    a lower-case one-word name (a concept such as "committee") is an ordinary word, no name for a
    heading."""
    from slmgraph.indexing.stages.report_data import join_names, title_entities
    from slmgraph.store.rows import EntityRow

    chunks = sorted({by_no[p.ids[0]] for p in points if p.ids and p.ids[0] in by_no})
    cands = {c: [k for k in roots if c in units_of.get(k, ())] or ([via[c]] if via.get(c) is not None else [])
             for c in chunks}
    cids = sorted({k for ks in cands.values() for k in ks})
    members: dict = {}
    titles: dict = {}
    if cids:
        q = ",".join("?" * len(cids))
        titles = {c: t for c, t in store.con.execute(
            f"SELECT community_id, title FROM community_reports WHERE community_id IN ({q})", cids).fetchall() if t}
        for cid, eid, name, degree in store.con.execute(
                f"SELECT m.community_id, e.entity_id, e.name, e.degree FROM community_members m "
                f"JOIN entities e USING (entity_id) WHERE m.community_id IN ({q})", cids).fetchall():
            members.setdefault(cid, []).append(EntityRow(entity_id=eid, name=name, degree=degree or 0))
    forms = {e.entity_id: name_variants([str(e.name)]) for es in members.values() for e in es}

    def named_in(k, text: str) -> list:
        return [e for e in members.get(k, []) if any(f in text for f in forms[e.entity_id])]

    groups: dict = {}
    for p in points:
        c = by_no.get(p.ids[0]) if p.ids else None
        ks = cands.get(c, [])
        # max() keeps the first of equals: the tested-for community, then the best ranked
        home = max(sorted(ks, key=lambda k: k != via.get(c)), key=lambda k: len(named_in(k, p.text)), default=None)
        groups.setdefault(home, []).append(p)
    out = []
    for k, ps in groups.items():
        if k is None:
            out.append((None, NO_COMMUNITY, ps))
            continue
        if k not in titles:
            ents = members.get(k, [])
            common = {str(e.name) for e in ents if " " not in str(e.name) and str(e.name)[:1].islower()}
            # the members its sentences name most lead (degree breaks ties: title_entities sorts by it)
            told = {e.entity_id: sum(e in named_in(k, p.text) for p in ps) for e in ents}
            said = [e._replace(degree=told[e.entity_id] * 1_000_000 + e.degree) for e in ents if told[e.entity_id]]
            units = {by_no[p.ids[0]] for p in ps}
            if not said:
                inside = {r[0] for r in store.con.execute(
                    f"SELECT entity_id FROM entity_text_units WHERE chunk_id IN ({','.join('?' * len(units))})",
                    sorted(units)).fetchall()}
                said = [e for e in ents if e.entity_id in inside]
            titles[k] = join_names(title_entities(said or ents, common=common))
        out.append((k, titles[k], ps))
    return out


def status(wide: str | None, relevant: list, scores: dict, known: list[str], floor: float, cited: list,
           number: dict) -> str:
    """Why the answer's text units were chosen, for its sources line; it agrees with what the answer shows
    (``cited``: the unit numbers it cites; ``number``: chunk id -> unit number): units spread over the corpus
    (a corpus-wide ``wide`` question), the relevant ones of those tested, and the units naming the question's
    ``known`` names that did not reach the relevance ``floor``."""
    from slmgraph.query.named import quoted_names

    if wide is not None:
        return "spread across the corpus's communities and documents for a question about all of it"
    passed = {number[c] for c in relevant}
    others = [n for n in cited if n not in passed]
    if not others:
        return f"{len(relevant)} relevant of {len(scores)} tested"
    units = ", ".join(map(str, others))
    if not relevant:
        return (f"quoted because they name {quoted_names(known)}: {units} (none of the {len(scores)} tested "
                f"reached the relevance floor of {floor:.1f})")
    return (f"{len(relevant)} relevant of {len(scores)} tested, and {len(others)} more quoted because they name "
            f"{quoted_names(known)}: {units}")


def lazy_search(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                embedder=None, budget: int | None = None, on_text: Callable[[str], None] | None = None) -> Answer:
    """Answer ``question`` from text units found by budgeted relevance tests (see the module doc).

    Args:
        embedder: ``encode(list[str]) -> (n, dim)``, the index's embedder; None loads the bundled one.
        budget: relevance tests at most (default ``settings.lazy_budget``).

    Returns:
        an :class:`Answer` with ``citations["sources"]`` (text unit numbers);
        ``details``: ``tests_used``, ``budget``, ``tested``/``relevant`` (unit
        numbers with scores), ``levels`` (communities visited and passed per
        level), ``tested_tokens`` (tokens of the tested units), ``test_tokens_read``
        (prompt tokens the tests gave the model: 0 with the embedding signal),
        ``answer_context_tokens``, ``context_tokens`` (their sum: what the query
        read) and ``tokens_spent`` (model prompt + completion tokens).

    Raises:
        UserError: ``budget`` < 1, or the index has no text units or no text-unit embeddings.
    """
    from slmgraph.query.engines.global_search import answer_mode, default_embedder, helpfulness_signal, stored_vectors

    t0 = time.perf_counter()
    budget = settings.lazy_budget if budget is None else budget
    if budget < 1:
        raise UserError(f"--budget {budget} must be at least 1 relevance test")
    units = rows(store, TextUnitRow, "SELECT chunk_id, text, n_tokens FROM text_units ORDER BY doc_id, ord")
    if not units:
        raise UserError(f"index {store.path} has no text units: run 'slmgraph index' first")
    named = check_names(store, question, settings)
    if not named["answer"]:
        return name_refusal(Answer(text="", method="lazy", question=question), prompts, named, on_text, t0)
    # A unit holding no prose (a dumped table) has no sentence to quote: it would only use up the tests.
    junk = no_prose_units(store)
    if len(junk) < len(units):
        units = [u for u in units if u.chunk_id not in junk]
    else:
        junk = set()
    if embedder is None:
        embedder = default_embedder(settings)
    text_of = {u.chunk_id: u.text for u in units}
    ntok = {u.chunk_id: u.n_tokens for u in units}
    number = unit_numbers(store)
    vectors = stored_vectors(store, "text_unit", text_of, embedder)
    if len(vectors) < len(units) and vectors and store.get_meta("complete") != "1":
        # An interrupted update: the units it added have no vector yet; the others are read as before.
        units = [u for u in units if u.chunk_id in vectors]
    if len(vectors) < len(units):
        raise UserError(f"index {store.path} has no embeddings for {len(units) - len(vectors)} of its text units: "
                        "run 'slmgraph index' on its input to finish it")
    ids = [u.chunk_id for u in units]
    qv = embedder.encode([question])[0]
    cos = dict(zip(ids, (float(c) for c in cosines(qv, np.stack([np.asarray(vectors[i], dtype=np.float32)
                                                                  for i in ids])))))
    # A unit's further windows (its sentences past the embedder's window): the unit is scored by its best
    # window, so its vector for this question's tests is that window's; the probes see every window.
    probe_vectors = dict(vectors)
    wids, wmat = load_vectors(store, WINDOW_KIND)
    keep = [r for r, w in enumerate(wids) if w.split("#", 1)[0] in cos]
    wids, wmat = [wids[r] for r in keep], wmat[keep] if keep else wmat
    if wids:
        for w, v, c in zip(wids, wmat, cosines(qv, wmat)):
            probe_vectors[w] = v
            owner = w.split("#", 1)[0]
            if float(c) > cos[owner]:
                cos[owner], vectors[owner] = float(c), v
    units_of, children, level_of = unit_communities(store)
    if store.get_meta("complete") != "1" or junk:  # the graph names removed (or left out) text units
        units_of = {c: us & cos.keys() for c, us in units_of.items()}
        units_of = {c: us for c, us in units_of.items() if us}
    n_params = client.model  # the policy reads the model's capability record
    signal = helpfulness_signal(settings, n_params)
    ans = Answer(text="", method="lazy", question=question, details=name_details(named))
    scores: dict[str, float] = {}  # chunk_id -> helpfulness of the tested units
    levels: dict = {}

    def rank(cids: list) -> list:
        return sorted(cids, key=lambda c: (-max((cos[u] for u in units_of.get(c, ())), default=-1.0),
                                           -1 if c is None else c))

    via: dict = {}  # chunk_id -> the community it was first tested for: where the answer files it

    def test(chunks: list[str], cid=None) -> None:
        for c in chunks:
            via.setdefault(c, cid)
        texts = [client.truncate(text_of[c], settings.lazy_test_tokens) for c in chunks]
        for sc in score_items(question, chunks, texts, signal=signal, embedder=embedder, vectors=vectors,
                              client=client, prompts=prompts, max_item_tokens=settings.lazy_test_tokens,
                              on_call=ans.add_call):
            scores[sc.id] = sc.score

    floor, probe_best = settings.helpfulness_floor, None
    if signal == "embedding" and settings.helpfulness_probes:  # the index's floor, as in global search
        floor, probe_best = index_floor(ids + wids, [text_of[i.split("#", 1)[0]] for i in ids + wids], embedder,
                                        probe_vectors, probe_questions(prompts), settings.helpfulness_floor)
    frontier = rank(list(children.get(None, [])) + ([None] if None in units_of else []))
    while frontier and len(scores) < budget:
        nxt: list = []
        misses = 0
        for cid in frontier:
            left = budget - len(scores)
            if left <= 0:
                break
            lv = "none" if cid is None else str(level_of.get(cid, "?"))
            info = levels.setdefault(lv, {"visited": 0, "passed": 0})
            todo = sorted((u for u in units_of.get(cid, ()) if u not in scores), key=lambda u: (-cos[u], number[u]))
            test(todo[: min(UNITS_PER_COMMUNITY, left)], cid)
            info["visited"] += 1
            bar = max(floor, settings.helpfulness_relative * max(scores.values(), default=0.0))
            if any(scores.get(u, 0.0) >= bar for u in units_of.get(cid, ())):
                info["passed"] += 1
                misses = 0
                nxt += [c for c in children.get(cid, []) if c is not None]
            else:
                misses += 1
                if misses >= MISS_STREAK:
                    break
        frontier = rank(list(dict.fromkeys(nxt)))
    tested = [Scored(c, s) for c, s in scores.items()]
    relevant = [sc.id for sc in select(tested, floor, settings.helpfulness_relative)]
    # The text units naming whom the question asks about come first; when no unit passes, they answer it,
    # tested or not (a person said of in many documents is no nearer a short "Who is X?" than the floor).
    known = known_of(named)
    naming = units_naming({c: text_of[c] for c in cos}, known)  # only units with a vector are scored
    # Every unit naming them is evidence about them, relevant or not: a "Who is X?" is nearest the one unit
    # that says little else, while the units saying what X did fall under the floor.
    answering = [c for c in relevant if c in naming] + sorted(
        (c for c in naming if c not in relevant), key=lambda c: (-cos[c], number[c])) + [
        c for c in relevant if c not in naming]
    # A corpus-wide question ("the main themes") has an answer in any non-empty index: the floor does not
    # refuse it, as in global and DRIFT search (slmgraph.query.route.corpus_wide_phrase).
    wide = corpus_wide_phrase(question, prompts)
    if not relevant and wide is not None and tested:
        relevant = [sc.id for sc in select(tested, 0.0, settings.helpfulness_relative)]
    test_read = ans.prompt_tokens  # the tests' model tokens (0 with the embedding signal)
    tested_tokens = sum(ntok[c] for c in scores)
    chosen, used = [], 0
    for c in answering:
        if chosen and used + ntok[c] > settings.lazy_answer_tokens:
            break
        chosen.append(c)
        used += ntok[c]
    if wide is not None:
        # A question about the whole corpus names nothing to test units against: answer from units spread
        # across the root communities and the documents (slmgraph.query.themes.spread_units), not from the
        # few nearest its wording.
        from slmgraph.query.themes import spread_units

        by_no = {number[c]: c for c in ids}
        picked = spread_units(store, [number[c] for c in sorted(ids, key=lambda c: (-cos[c], number[c]))],
                              SPREAD_UNITS)
        chosen, used = [], 0
        for n in picked:
            if chosen and used + ntok[by_no[n]] > settings.lazy_answer_tokens:
                break
            chosen.append(by_no[n])
            used += ntok[by_no[n]]
        ans.details["spread"] = [number[c] for c in chosen]
    ans.details.update({"budget": budget, "tests_used": len(scores), "signal": signal, "no_prose_units": len(junk),
                        "floor": round(floor, 1), "probe_best": None if probe_best is None else round(probe_best, 1),
                        "corpus_wide_phrase": wide, "levels": levels,
                        "tested": [{"source": number[c], "score": round(s, 1)} for c, s in scores.items()],
                        "relevant": [number[c] for c in relevant], "tested_tokens": tested_tokens,
                        "naming_units": sorted(number[c] for c in naming),
                        "test_tokens_read": test_read, "answer_context_tokens": used,
                        "removed_citations": {}})
    ans.context = [{"kind": "text_unit", "id": c, "source": number[c], "tokens": ntok[c],
                    "score": round(scores.get(c, 0.0), 1)} for c in chosen]
    if not chosen:
        ans.text = prompts.fill("no_answer_lazy", tests=str(len(scores))).strip()
        if on_text is not None:
            on_text(ans.text)
    elif answer_mode(settings, n_params) == "extractive":
        points = sentence_points([(number[c], text_of[c]) for c in chosen], qv, embedder, names=name_variants(known),
                                 probes=quote_probes(question, prompts, settings), headings=corpus_headings(store),
                                 **({"max_points": SPREAD_UNITS, "per_passage": 1} if wide is not None else {}))
        timeline = asks_change(question)
        if timeline:  # a change is read by comparing what each document says, in their (date) order
            from slmgraph.query.engines.drift_search import in_document_order

            points = in_document_order(store, points)
            ans.details["order"] = "documents"
        synthesis, gen = opening(client, prompts, settings, question, points)
        if gen is not None:
            ans.add_call(gen)
        cited = list(dict.fromkeys(i for p in points for i in p.ids))
        why = status(wide, relevant, scores, known, floor, cited, number)
        line = f"Sources: text units {', '.join(map(str, cited))} ({why})." if cited else ""
        by_no = {number[c]: c for c in chosen}
        # One timeline, each quote opened by its document's name: community headings would split it.
        groups = [] if timeline else file_points(store, points, by_no, rank(list(children.get(None, []))),
                                                 units_of, via)
        ans.details["groups"] = [{"community": cid, "title": title, "sources": [p.ids[0] for p in ps]}
                                 for cid, title, ps in groups]
        text = extractive_answer(points, "Sources", synthesis, line,
                                 groups=[(t, ps) for _, t, ps in groups] or None)
        if on_text is not None:
            on_text(text.rsplit("\n\nSources:", 1)[0])
        ans.text = text or "The relevant text units hold no sentence that answers this question."
        ans.citations = {"sources": cited}
        ans.details.update({"answer_mode": "extractive", "synthesis": synthesis,
                            "synthesis_raw": gen.text[:500] if gen is not None else None})
    else:
        system, room = context_room(client, prompts, "basic", question, settings.reduce_max_tokens, 200,
                                    "passages")
        blocks = [f"Passage {number[c]}:\n{' '.join(text_of[c].split())}" for c in chosen]
        context = client.truncate("\n\n".join(blocks), room)
        gen = client.call("lazy", system, prompts.fill("basic_user", context=context, question=question),
                          schema=None, max_tokens=settings.reduce_max_tokens, deadline_s=DEADLINE_ANSWER_S, use_cache=False,
                          on_text=on_text)
        ans.add_call(gen)
        text, kept, removed = check_citations(dedupe_lines(gen.text.strip()),
                                              {"sources": {number[c] for c in chosen}})
        cited = kept["sources"] or [number[c] for c in chosen]
        ans.text = text + f"\n\nSources: text units {', '.join(map(str, cited))} " \
                          f"({status(wide, relevant, scores, known, floor, cited, number)})."
        ans.citations = {"sources": cited}
        ans.details.update({"answer_mode": "model", "removed_citations": removed,
                            "finish_reason": gen.finish_reason})
    ans.details["context_tokens"] = test_read + used
    ans.details["tokens_spent"] = ans.prompt_tokens + ans.completion_tokens
    ans.seconds = time.perf_counter() - t0
    return ans
