"""Global search: map-reduce over the community reports of one level
(paper sec. 3.1.6; ARCHITECTURE.md stages 7-8), and the same machinery over raw
text units (the paper's TS baseline).

Map: the items (reports of a level, or text units) are shuffled with a
seeded RNG and packed, whole, into batches that fill the model's window
(counted with the model's own tokenizer) minus the map prompt and the answer
reserve. Every item gets a helpfulness score 0-100
(:func:`slmgraph.query.scoring.score_items`: question-item embedding cosine,
or on request the model's calibrated P(yes); never a generated
number), recorded per item in ``details["scores"]`` and per batch. The
selection rule (:func:`slmgraph.query.scoring.select`) decides which items
reach the reduce step; when none does, the answer says the corpus holds
nothing relevant and no further model call is made.

Reduce, models under 1B parameters (``Settings.answers`` auto or
``extractive``): the answer is assembled from the selected items
(:mod:`slmgraph.query.extractive`: reports' titles and findings, or
passages' sentences), each point citing its items, opened by at most one
model-written sentence that is kept only when grounded in the points.
Models of 1B or more (or ``answers`` = model): each batch of selected items
is mapped by the model to key points (their score is the best helpfulness of
the items they cite), and the model writes the answer from the points within
one window. Citations of ids that were not in the map's input are removed.

Dynamic community selection (GraphRAG's ``dynamic_community_selection``):
instead of one level, start at the root level, score each report with the
same helpfulness score, descend only into the sub-communities of reports at
or above the floor, and answer from the selected reports none of whose
sub-communities passed (the most specific relevant ones).

One concern, over 500 lines: global search (map, reduce and the extractive answer of one level).
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass
from typing import Callable

from tqdm import tqdm

from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.model.client import DEADLINE_ANSWER_S, DEADLINE_REPORT_S, ModelClient
from slmgraph.model.policy import model_does
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.report_store import load_reports, member_names
from slmgraph.store.db import Store
from slmgraph.store.rows import TextUnitRow, rows
from slmgraph.text.prose import parse_json
from slmgraph.query.documents import corpus_headings
from slmgraph.query.answer import Answer, check_citations, context_room, dedupe_lines, pack, unit_numbers
from slmgraph.query.extractive import Point, extractive_answer, opening, report_points, sentence_points
from slmgraph.query.named import check_names, known_of, name_details, name_refusal, name_variants, units_naming
from slmgraph.query.route import asked_topic, corpus_aspect, corpus_wide_phrase, named_corpus_phrase
from slmgraph.query.scoring import Scored, default_signal, index_floor, probe_questions, score_items, select
from slmgraph.query.theme_model import is_temporal, text_stems


@dataclass
class MapReduceKind:
    """How one map-reduce family names things: prompt files, the id field of a
    point, the block label and the citation kind."""

    map_prompt: str  #: prompt stem: ``<stem>_system`` / ``<stem>_user``
    id_field: str  #: schema field of a point holding supporting ids
    label: str  #: block header word, e.g. "Report" -> "Report 12"
    cite: str  #: citation kind: "reports" or "sources"


#: Reports beyond the selected ones whose themes an extractive answer reads (best-scored first).
THEME_READS = 6
#: Passages (points) a corpus-wide TS answer spreads over, one per document and community.
SPREAD_PASSAGES = 6
#: A question about how its topic changed is answered, though no report passes the floor, when text units of at
#: least this many documents name every word of the topic (:func:`units_holding`).
TOPIC_NAMED_DOCS = 3
#: Points one text unit gives at most in a TS answer from several text units (its points spread across them).
UNIT_POINTS = 2


def naming_spread(chosen: list, ranked: list, naming: set, doc_of: dict, k: int = SPREAD_PASSAGES) -> list:
    """``chosen`` (selected :class:`slmgraph.query.scoring.Scored` text units) with the best-scored units of
    ``ranked`` that name whom the question asks about (``naming``: their ids) added, those of a document not
    yet among the chosen ones first, up to ``k`` units in all: a question about someone is answered from what
    the documents say of them, not from the one unit nearest its wording (which may be about another person).
    ``doc_of``: unit id -> document id."""
    out = list(chosen)
    have = {sc.id for sc in out}
    docs = {doc_of.get(sc.id) for sc in out}
    more = sorted((sc for sc in ranked if sc.id in naming and sc.id not in have), key=lambda x: (-x.score, x.id))
    for sc in sorted(more, key=lambda x: doc_of.get(x.id) in docs):  # stable: by score within each group
        if len(out) >= k:
            break
        out.append(sc)
        docs.add(doc_of.get(sc.id))
    return out

REPORTS = MapReduceKind("map", "reports", "Report", "reports")
TEXT_UNITS = MapReduceKind("map_text", "passages", "Passage", "sources")


def map_schema(ids: list[int], id_field: str = "reports") -> dict:
    """JSON schema of one map answer (models of 1B or more): up to 5 points
    with supporting ids (an enum of the batch's ids). No score: a point's
    helpfulness is its best item's score (slmgraph.query.scoring)."""
    return {
        "type": "object",
        "properties": {
            "points": {"type": "array", "minItems": 1, "maxItems": 5, "items": {
                "type": "object", "properties": {
                    "answer": {"type": "string", "maxLength": 300},
                    id_field: {"type": "array", "minItems": 1, "maxItems": 5,
                               "items": {"type": "integer", "enum": sorted(ids)}}},
                "required": ["answer", id_field]}},
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
    if not levels and store.get_meta("reports") == "skipped":
        raise UserError(f"index {store.path} was built with --no-reports: use --method lazy, or re-index "
                        "without --no-reports for global and drift search")
    if not levels:
        if store.count("text_units") and not store.count("entities"):
            raise UserError(f"index {store.path} holds no entities (its text has no capitalised names), so it has "
                            "no community reports: ask with --method basic, which reads the text units")
        raise UserError(f"index {store.path} has no community reports: run 'slmgraph index' to finish it")
    return levels


def answer_mode(settings: Settings, n_params: int | None) -> str:
    """``extractive`` or ``model``: who writes a global/local/basic answer.

    ``Settings.answers`` = auto: as :func:`slmgraph.model.policy.route` decides for ``n_params`` (a loaded
    model's capability record, else the size rule: extractive under 1B parameters).
    """
    return "model" if model_does("answers", settings.answers, n_params) else "extractive"


def helpfulness_signal(settings: Settings, n_params: int | None) -> str:
    """The helpfulness signal in use: ``Settings.helpfulness``, or for auto
    :func:`slmgraph.query.scoring.default_signal` of the model's size."""
    return settings.helpfulness if settings.helpfulness != "auto" else default_signal(n_params)


def map_reduce(client: ModelClient, prompts: Prompts, settings: Settings, question: str,
               items: list[tuple[int, str]], kind: MapReduceKind, ans: Answer, seed: int, progress: bool = True,
               on_text: Callable[[str], None] | None = None, no_answer: str | None = None, *,
               embedder=None, vectors: dict | None = None, records: dict | None = None, store=None,
               names: list[str] | None = None, naming: set | None = None, theme_writer=None) -> Answer:
    """Score, select and answer from ``items`` (``(id, block text)``) for ``question``, into ``ans``.

    Shuffles ``items`` with ``seed`` and packs them into window-filling
    batches; scores every item (:func:`slmgraph.query.scoring.score_items`);
    selects (:func:`slmgraph.query.scoring.select`); answers extractively or
    by the model's map and reduce (see the module doc). Fills ``ans.text``,
    ``citations``, ``context`` (in the shuffled order) and ``details``
    (``seed``, ``batches`` with each item's score, ``scores``, ``selected``,
    ``signal``, ``answer_mode``).

    Args:
        embedder: ``encode(list[str])``; needed by the embedding signal.
        vectors: ``id -> vector`` stored at index time (missing ids are embedded now).
        records: ``id -> report dict`` (as in load_reports) for extractive
            report answers; None: items are passages (sentence points).
        store: the index, for an extractive answer by theme (:mod:`slmgraph.query.themes`);
            None: report points (:func:`slmgraph.query.extractive.report_points`).
        names, naming: the names the question asks about that the index holds, and the ids of the items
            naming them: those items come first among the selected ones, are selected whatever their score
            when no item passes, and an extractive answer quotes the sentences naming them first.
        theme_writer: as :func:`global_search`'s.

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
    n_params = client.model
    signal = helpfulness_signal(settings, n_params)
    mode = answer_mode(settings, n_params)
    texts = {i: t for i, t in order}
    score_texts = {i: (records[i]["full_text"] if records and i in records else t) for i, t in order}
    bar = tqdm(total=len(order), desc="score", unit="item", disable=not progress, dynamic_ncols=True, leave=False)
    scored: dict = {}
    for batch in batches:
        ids = [i for i, _ in batch]
        for sc in score_items(question, ids, [score_texts[i] for i in ids], signal=signal, embedder=embedder,
                              vectors=vectors, client=client, prompts=prompts, on_call=ans.add_call):
            scored[sc.id] = sc
        bar.update(len(ids))
    bar.close()
    batch_info = [{"ids": [i for i, _ in b], "context_tokens": client.count("\n\n".join(t for _, t in b)),
                   "scores": [round(scored[i].score, 1) for i, _ in b]} for b in batches]
    ranked = [scored[i] for i, _ in order]
    floor, probe_best = settings.helpfulness_floor, None
    if signal == "embedding" and settings.helpfulness_probes:
        all_ids = [i for i, _ in order]
        floor, probe_best = index_floor(all_ids, [score_texts[i] for i in all_ids], embedder, vectors,
                                        probe_questions(prompts), settings.helpfulness_floor)
    chosen = select(ranked, floor, settings.helpfulness_relative)
    if naming:
        # the items naming whom the question asks about come first; when none passes, they answer it, however
        # far their wording is from the question's
        chosen = [sc for sc in chosen if sc.id in naming] + [sc for sc in chosen if sc.id not in naming] or \
            sorted((sc for sc in ranked if sc.id in naming), key=lambda x: (-x.score, x.id))
    # A question about the whole corpus ("the main themes", a phrase of prompts/auto_global.txt) has an
    # answer in any non-empty index: no report need resemble its wording, so the floor -- which exists to
    # refuse questions the corpus cannot answer -- does not apply to it; the relative cut still does.
    wide = corpus_wide_phrase(question, prompts)
    if wide is None and store is not None:  # "these board minutes": words every document holds name the corpus
        wide = named_corpus_phrase(question, prompts, lambda words: _most_documents_hold(store, words))
    # A question about the whole corpus from one side ("What were the society's main challenges?") that no report
    # is near is answered as one about its themes, each led by its statements on that side (route.ASPECTS); one a
    # report is near keeps the focused answer of the statements nearest it.
    aspect = corpus_aspect(question, prompts, corpus_subject(store)) if wide is None and not chosen and \
        records is not None and store is not None and _names_aspect(question, prompts) else None
    if aspect is not None:
        wide = aspect[0]
        ans.details["aspect"] = aspect[0]
    basis = ranked  # the scores selection and the extractive answer go by
    if wide is not None and records is not None and ranked:
        # A question about the whole corpus names no topic, so its cosine with a report measures how little the
        # report says: on a user's small corpus the turn "COUNCILLOR REYES: That is correct." scored 12.4 for
        # "What are the main themes?" and the three largest communities' reports 0 (cosines -0.09..-0.03).
        # Such a question is answered from the most important reports instead: by their rating (paper sec.
        # 3.1.5; data-built reports rate a community by its size), 0-10 as 0-100, under the same relative cut.
        basis = [Scored(sc.id, 10.0 * float(records[sc.id].get("rating") or 0.0), sc.cosine) for sc in ranked]
        chosen = select(basis, 0.0, settings.helpfulness_relative)
        ans.details["ranked_by"] = "rating"
    elif not chosen and wide is not None and ranked:
        chosen = select(ranked, 0.0, settings.helpfulness_relative)
    elif not chosen and records is not None and store is not None and embedder is not None and ranked:
        # A question asking for the themes of a topic ("the main themes of the restoration work") is judged by its
        # topic, not its framing, and against the text units, as basic search judges a question: a data-built
        # report restates its members' names, which a topic's wording need not share.
        topic = asked_topic(question, prompts)
        gate = topic_gate(store, topic, embedder, prompts, settings) if topic else None
        if gate is not None and not gate["answer"] and is_temporal(question):
            # how a thing changed, asked of a corpus that names it again and again ("Membership rose to 231."):
            # the units naming it are the answer, however far one word's vector sits from each of them
            named = units_holding(store, topic)
            if len({d for d, _ in named}) >= TOPIC_NAMED_DOCS:
                gate = {**gate, "answer": True, "named_units": len(named)}
        if gate is not None:
            ans.details["topic_gate"] = {"topic": topic, **gate}
            if gate["answer"]:
                chosen = select(ranked, 0.0, settings.helpfulness_relative)
    ans.details["corpus_wide_phrase"] = wide
    ans.details.update({"seed": seed, "items": len(order), "batches": batch_info, "map_budget_tokens": budget,
                        "truncated_items": n_trunc, "signal": signal, "answer_mode": mode,
                        "floor": round(floor, 1), "probe_best": None if probe_best is None else round(probe_best, 1),
                        "relative": settings.helpfulness_relative,
                        "scores": [sc.as_dict() for sc in ranked],
                        "selected": [sc.id for sc in chosen],
                        "best_score": round(max((sc.score for sc in ranked), default=0.0), 1)})
    if not chosen and mode == "extractive" and wide is None and store is not None and _transcript_answer(
            store, question, embedder, ans, on_text, settings):
        # no report passes, but the question is one the corpus's own sentences answer (what a speaker asks, who
        # the guests are, sentences of a kind, counted mentions): each lane answers only from what it finds
        ans.seconds += time.perf_counter() - t0
        return ans
    if not chosen:
        ans.details["removed_citations"] = {}  # no answer was written: nothing was cited
        ans.text = (no_answer or prompts.fill("no_answer", level=f"level {ans.level}")).strip()
        if on_text is not None:
            on_text(ans.text)
        ans.seconds += time.perf_counter() - t0
        return ans
    score_of = {sc.id: sc.score for sc in chosen}
    scope = f"level {ans.level}" if ans.level is not None else "selected dynamically"
    if mode == "extractive":
        floor_used = 0.0 if wide is not None else floor  # the floor does not apply to a corpus-wide question
        reserve = [sc for sc in select(basis, floor_used, 0.0) if sc.id not in score_of]
        per_passage = None
        # Once a report passes the floor the question is one the corpus answers; the themes are then read from
        # the best-scored reports, each kept by how well its own statements answer (themes.STATEMENT_MARGIN).
        near = [sc for sc in sorted(ranked, key=lambda x: (-x.score, x.id)) if sc.id not in score_of][:THEME_READS]
        if records is not None and store is not None and _by_theme(
                client, prompts, settings, store, question, chosen + near, {
                    **{sc.id: sc.score for sc in near}, **score_of}, records, ans, embedder, scope, on_text,
                wide is not None, theme_writer, aspect):
            pass
        else:
            if wide is not None and records is None and store is not None:
                # A question about the whole corpus names nothing to rank passages by: take them from
                # many documents and communities, one point each, not from the one nearest its wording.
                from slmgraph.query.themes import spread_units

                pool = [sc.id for sc in sorted(ranked, key=lambda x: (-x.score, x.id))]
                picked = spread_units(store, pool, SPREAD_PASSAGES)
                by_id = {sc.id: sc for sc in ranked}
                chosen, reserve, per_passage = [by_id[i] for i in picked], [], 1
                score_of = {sc.id: sc.score for sc in chosen}
                ans.details["spread"] = picked
            elif records is None and store is not None and naming and wide is None:
                chosen = naming_spread(chosen, ranked, naming, unit_documents(store))
                score_of = {sc.id: sc.score for sc in chosen}
                ans.details["spread"] = [sc.id for sc in chosen]
            _extractive(client, prompts, settings, question, chosen, score_of, texts, records, kind, ans, embedder,
                        scope, on_text, reserve, per_passage, names,
                        corpus_headings(store) if store is not None else frozenset())
        if not ans.text.strip():  # the selected items held no sentence to quote: say so, never print nothing
            ans.text = (no_answer or prompts.fill("no_answer", level=f"level {ans.level}")).strip()
            ans.citations = {}
            if on_text is not None:
                on_text(ans.text)
        ans.seconds += time.perf_counter() - t0
        return ans
    _model_map_reduce(client, prompts, settings, question, chosen, score_of, texts, kind, ans, map_system,
                      budget, valid_ids, scope, progress, on_text)
    ans.seconds += time.perf_counter() - t0
    return ans


def _names_aspect(question: str, prompts: Prompts) -> bool:
    """True when ``question`` holds a word of an aspect of :data:`slmgraph.query.route.ASPECTS` (a cheap test before
    the corpus's statistics are read)."""
    from slmgraph.names.forms import content_words
    from slmgraph.query.route import ASPECTS

    words = set(content_words(question))
    return any(words & a for a, _ in ASPECTS)


def corpus_subject(store: Store) -> frozenset:
    """The word stems of the corpus's own subject: those found in at least
    :data:`slmgraph.query.theme_model.UBIQUITOUS_SHARE` of its documents
    (:func:`slmgraph.query.theme_lead.corpus_word_share`; "society" and "lighthouse" in a lighthouse society's
    newsletters)."""
    from slmgraph.query.theme_lead import corpus_word_share
    from slmgraph.query.theme_model import UBIQUITOUS_SHARE, ThemeIndex

    ix = ThemeIndex(store)
    if len(ix.docs) < 2:
        return frozenset()
    return frozenset(w for w, share in corpus_word_share(ix).items() if share >= UBIQUITOUS_SHARE)


def topic_gate(store: Store, topic: str, embedder, prompts: Prompts, settings: Settings) -> dict:
    """:func:`slmgraph.query.scoring.relevance_gate` of ``topic`` (a question's topic words, :func:`asked_topic`)
    on the text unit nearest it: ``{"answer", "best_score", "floor", "probe_best", ...}``."""
    from slmgraph.indexing.stages.embed_lookup import load_vectors, nearest
    from slmgraph.query.scoring import relevance_gate

    ids, mat = load_vectors(store, "text_unit")
    if not ids:
        return {"answer": False, "best_score": 0.0, "floor": settings.helpfulness_floor, "probe_best": None}
    hits = nearest(embedder.encode([topic])[0], ids, mat, 1)
    return relevance_gate(topic, hits[0][1] if hits else 0.0, mat, embedder, prompts, settings)


def units_holding(store: Store, topic: str) -> list[tuple[str, str]]:
    """``[(doc id, chunk id)]`` of the text units holding every word of ``topic`` (word stems, any case,
    :func:`slmgraph.query.theme_model.text_stems`)."""
    want = text_stems(topic)
    if not want:
        return []
    return [(d, c) for d, c, text in store.con.execute("SELECT doc_id, chunk_id, text FROM text_units").fetchall()
            if want <= text_stems(text)]


def _sources_line(kind: MapReduceKind, ids: list, scope: str) -> str:
    if not ids:
        return ""
    where = (f"community reports {', '.join(map(str, ids))} ({scope})" if kind is REPORTS
             else f"text units {', '.join(map(str, ids))}")
    return f"Sources: {where}."


def _extractive(client, prompts, settings, question, chosen, score_of, texts, records, kind, ans, embedder,
                scope, on_text, reserve=(), per_passage=None, names=None, headings=frozenset()) -> None:
    """The extractive answer of models under 1B (see :mod:`slmgraph.query.extractive`); ``reserve``:
    items over the floor but under the relative cut, read only when the selected reports give fewer
    than three plain statements (:func:`slmgraph.query.extractive.report_points`)."""
    qv = embedder.encode([question])[0] if embedder is not None else None
    if records is not None:
        score_of = {**score_of, **{sc.id: sc.score for sc in reserve}}
        points = report_points([records[sc.id] for sc in chosen], score_of, qv, embedder,
                               reserve=[records[sc.id] for sc in reserve], headings=headings)
    else:
        passages = [(sc.id, re.sub(r"^Passage \d+\s*", "", texts[sc.id])) for sc in chosen]
        if per_passage is None and len(passages) > 1:
            per_passage = UNIT_POINTS  # points from several text units: no one unit gives most of them
            spread = {"per_passage": per_passage}
        else:
            spread = {"max_points": SPREAD_PASSAGES, "per_passage": per_passage} if per_passage else {}
        points = sentence_points(passages, qv, embedder, names=names, headings=headings, **spread)
    synthesis, gen = opening(client, prompts, settings, question, points)
    if gen is not None:
        ans.add_call(gen)
    cited: list = []
    for p in points:
        cited += [i for i in p.ids if i not in cited]
    text = extractive_answer(points, kind.cite.capitalize(), synthesis, _sources_line(kind, cited, scope))
    text, kept, removed = check_citations(text, {kind.cite: {sc.id for sc in chosen} | {sc.id for sc in reserve}})
    if on_text is not None:  # the caller prints the sources line itself (as after a streamed answer)
        on_text(text.rsplit("\n\nSources:", 1)[0])
    ans.text = text
    ans.citations = {kind.cite: cited}
    ans.details.update({"points": len(points), "synthesis": synthesis,
                        "reserve_cited": [i for i in cited if i in {sc.id for sc in reserve}],
                        "synthesis_raw": gen.text[:500] if gen is not None else None,
                        "removed_citations": removed})


def _transcript_answer(store, question, embedder, ans, on_text, settings: Settings | None = None) -> bool:
    """A question about what a transcript's speaker asks, answered from all of that speaker's questions
    (:mod:`slmgraph.query.theme_asks`), about who its guests are, answered from its speaker labels
    (:func:`slmgraph.query.theme_works.cast_answer`), or asking for statements of a kind (stories, advice, hopes,
    worries, passions), answered from the corpus's sentences of that kind (:mod:`slmgraph.query.theme_kinds`),
    whether speakers move between their stories and another kind of talk (:mod:`slmgraph.query.theme_segues`),
    or how often something is said or by which speakers, answered by counting the corpus's mentions of it
    (:mod:`slmgraph.query.theme_mentions`); False (``ans`` untouched) when the question is none of these."""
    from slmgraph.query.theme_asks import about_asking, asks_answer
    from slmgraph.query.theme_facets import parse_pipeline, pipeline_name
    from slmgraph.query.theme_kinds import kinds_answer, kinds_asked
    from slmgraph.query.theme_mentions import asks_mentions, mentions_answer
    from slmgraph.query.theme_model import ThemeIndex
    from slmgraph.query.theme_segues import asks_segue, segue_answer
    from slmgraph.query.theme_works import _CAST, cast_answer

    if not (about_asking(question) or _CAST.search(question) or kinds_asked(question)
            or asks_mentions(question) or asks_segue(question)):  # most questions: no index read
        return False
    ix = ThemeIndex(store)
    got = (asks_answer(ix, question, embedder) or cast_answer(ix, question) or segue_answer(ix, question, embedder)
           or kinds_answer(ix, question, embedder, parse=None if settings is None else lambda: parse_pipeline(
               pipeline_name(settings.ner_model))) or mentions_answer(ix, question, embedder))
    if got is None:
        return False
    text, points, cited = got
    text, _, removed = check_citations(text, {"sources": set(cited)})
    if on_text is not None:
        on_text(text.rsplit("\n\nSources:", 1)[0])
    ans.text = text
    ans.citations = {"reports": [], "sources": cited}
    ans.points = points
    ans.details.update({"points": len(points), "by_theme": False, "transcript": True,
                        "documents_named": True, "removed_citations": removed})
    return True


def _by_theme(client, prompts, settings, store, question, chosen, score_of, records, ans, embedder, scope, on_text,
              wide, theme_writer=None, aspect: tuple[str, list[str]] | None = None) -> bool:
    """The extractive answer by theme (:func:`slmgraph.query.themes.theme_answer`): the selected reports and
    the next best-scored ones (``chosen``; a theme is kept by how well its statements answer,
    :data:`slmgraph.query.theme_model.STATEMENT_MARGIN`), or for a question about the whole corpus every report of
    the level, broadest first. False (``ans``
    untouched) when no theme has a statement (reports with no text unit behind them); ``theme_writer``: as
    :func:`global_search`'s."""
    from slmgraph.query.extractive import opening_on, synthesize
    from slmgraph.query.named import entities_named
    from slmgraph.query.themes import theme_answer
    from slmgraph.query.theme_facets import facets_for, is_facets, parse_pipeline, pipeline_name
    from slmgraph.query.theme_render import theme_points

    # the corpus's own word for the subject: a phrase it defines once and then abbreviates is asked by its acronym
    question = question if wide else by_acronym(store, question)
    if not wide and _transcript_answer(store, question, embedder, ans, on_text, settings):
        return True
    if not wide and _unnamed_answer(store, question, embedder, ans, on_text):
        return True
    # a question let through by its topic (the themes of the restoration work) is answered from its topic's evidence
    gate = ans.details.get("topic_gate") or {}
    topic = gate.get("topic") if gate.get("answer") else None
    qv = embedder.encode([topic or question])[0] if embedder is not None else None
    reports = list(records.values()) if wide else [records[sc.id] for sc in chosen]
    scores = score_of if not wide else {**{i: 0.0 for i in records}, **score_of}
    def write(t):
        sentence, gen = synthesize(client, prompts, question, [Point(t.topic, s.text) for s in t.statements])
        ans.add_call(gen)
        return sentence

    # Where the policy lets the model write (its capability record, else the size rule), it writes one
    # sentence per theme from the theme's statements, kept only when grounded in them.
    writer = theme_writer or (write if opening_on(settings, client.model) else None)

    # A focused question's themes are found from its evidence among every report of the level, each statement
    # nearer the question than any off-topic probe (slmgraph.query.themes.focused_themes).
    # A question listing groups or things is answered facet by facet (slmgraph.query.theme_facets).
    facets = [] if wide else facets_for(question, settings.ner_model, lambda s: bool(entities_named(store, s)))
    if facets and abbreviated(store, facets):  # "carbon capture and storage", which the corpus writes "CCS"
        facets = []
    text, themes, ix = theme_answer(store, question, reports, scores, qv, embedder, wide=wide, scope=scope,
                                    writer=writer, pool=list(records.values()),
                                    probes=probe_questions(prompts) if settings.helpfulness_probes else None,
                                    facets=facets, aspect=aspect,
                                    parse=parse_pipeline(pipeline_name(settings.ner_model)) if facets else None)
    if not themes:
        return False
    # The overall opening sentence of extractive answers, where asked for (slmgraph.query.extractive.opening_on).
    synthesis, gen = opening(client, prompts, settings, question,
                             [Point(t.topic, " ".join(s.text for s in t.statements)) for t in themes])
    if gen is not None:
        ans.add_call(gen)
    if synthesis:
        text = f"{synthesis}\n\n{text}"
    # a facet's statements may come from units no community owns: it cites no report
    cited = list(dict.fromkeys(r for t in themes for r in (t.reports or [t.report]) if r is not None))
    valid = {"reports": set(cited), "sources": {s.source for t in themes for s in t.statements}}
    text, kept, removed = check_citations(text, valid)
    if on_text is not None:
        on_text(text.rsplit("\n\nSources:", 1)[0])
    ans.text = text
    ans.citations = {"reports": cited,
                     "sources": list(dict.fromkeys(s.source for t in themes for s in t.statements))}
    ans.points = theme_points(themes, ix)
    # The reports read beyond the helpfulness selection whose themes made the answer join the selection.
    beyond = [t.report for t in themes if t.report is not None and t.report not in set(ans.details.get("selected") or [])]
    if beyond and not wide:
        ans.details["selected"] = list(ans.details["selected"]) + beyond
        ans.details["selected_beyond_cut"] = beyond
    ans.details.update({"points": len(themes), "themes": [{"report": t.report, "topic": t.topic,
                                                           "documents": t.coverage["documents"]} for t in themes],
                        "by_theme": True, "documents_named": True, "synthesis": synthesis,
                        "facets": [f.label for f in facets] if is_facets(themes) else [],
                        "theme_sentences": "model" if writer is not None else "template",
                        "synthesis_raw": gen.text[:500] if gen is not None else None,
                        "removed_citations": removed})
    return True


def _model_map_reduce(client, prompts, settings, question, chosen, score_of, texts, kind, ans, map_system, budget,
                      valid_ids, scope, progress, on_text) -> None:
    """Models of 1B or more: the model maps the selected items to points and writes the answer."""
    sel = [(sc.id, texts[sc.id]) for sc in chosen]
    batches, _ = pack(sel, budget, client.count, client.truncate)
    points: list[dict] = []
    seen: dict[str, dict] = {}
    for bi, batch in enumerate(tqdm(batches, desc="map", unit="batch", disable=not progress, dynamic_ncols=True,
                                    leave=False)):
        ids = [i for i, _ in batch]
        gen = client.call("map", map_system, prompts.fill(f"{kind.map_prompt}_user", question=question,
                                                          context="\n\n".join(t for _, t in batch)),
                          schema=map_schema(ids, kind.id_field), max_tokens=settings.map_max_tokens,
                          deadline_s=DEADLINE_REPORT_S, use_cache=False)
        ans.add_call(gen)
        data, _ = parse_json(gen.text)
        raw = data.get("points", []) if isinstance(data, dict) else []
        for p in raw if isinstance(raw, list) else []:
            if not isinstance(p, dict):
                continue
            text = str(p.get("answer", "")).strip()
            cited = [i for i in dict.fromkeys(p.get(kind.id_field) or []) if isinstance(i, int) and i in ids] \
                if isinstance(p.get(kind.id_field), list) else []
            if not text or not cited:
                continue
            # The point's score is its best item's helpfulness, not the number the model wrote.
            score = max(score_of[i] for i in cited)
            key = " ".join(text.casefold().split())
            if key in seen:
                seen[key]["ids"] += [i for i in cited if i not in seen[key]["ids"]]
                continue
            seen[key] = {"answer": text, "score": score, "ids": cited, "batch": bi}
            points.append(seen[key])
    if not points:  # the model wrote no usable point: answer from the best items' own text
        points = [{"answer": " ".join(texts[sc.id].split())[:600], "score": sc.score, "ids": [sc.id], "batch": 0}
                  for sc in chosen[:3]]
    points.sort(key=lambda p: (-p["score"], p["batch"]))
    reduce_system = prompts.fill("reduce_system", cite=kind.cite.capitalize())
    r_overhead = client.overhead(reduce_system, prompts.fill("reduce_user", question=question, context=""))
    r_budget = client.n_ctx - r_overhead - settings.reduce_max_tokens
    blocks, used_points, used = [], [], 0
    for i, p in enumerate(points, start=1):
        cite = f" [{kind.cite.capitalize()}: {', '.join(map(str, p['ids']))}]"
        block = f"----Analyst {i}----\nImportance Score: {round(p['score'])}\n{p['answer']}{cite}"
        n = client.count(block + "\n\n")
        if used + n > r_budget:
            break
        blocks.append(block)
        used_points.append(p)
        used += n
    gen = client.call("reduce", reduce_system, prompts.fill("reduce_user", question=question,
                                                             context="\n\n".join(blocks)),
                      schema=None, max_tokens=settings.reduce_max_tokens, deadline_s=DEADLINE_ANSWER_S, use_cache=False,
                      on_text=on_text)
    ans.add_call(gen)
    text, kept, removed = check_citations(dedupe_lines(gen.text.strip()), {kind.cite: valid_ids})
    sources: list = []
    for p in used_points:
        sources += [i for i in p["ids"] if i not in sources]
    sources += [i for i in kept[kind.cite] if i not in sources]
    line = _sources_line(kind, sources, scope)
    ans.text = text.rstrip() + (f"\n\n{line}" if line else "")
    ans.citations = {kind.cite: sources}
    ans.details.update({"points": len(points), "reduce_points": len(used_points), "reduce_context_tokens": used,
                        "removed_citations": removed, "finish_reason": gen.finish_reason})


def default_embedder(settings: Settings):
    """The bundled all-MiniLM-L6-v2 :class:`slmgraph.indexing.stages.embed.Embedder` (loaded on call: its imports are slow)."""
    from slmgraph.indexing.stages.embed import Embedder

    return Embedder(batch_size=settings.embed_batch_size, threads=settings.n_threads)


def stored_vectors(store: Store, kind: str, texts: dict, embedder) -> dict:
    """``id -> vector`` of the items whose stored embedding (``kind``) matches
    their current text and ``embedder``; ids are the keys of ``texts``
    (``str(id)`` in the table). Items missing here are embedded at query time
    by :func:`slmgraph.query.scoring.score_items` (indexes built before
    reports were embedded)."""
    from slmgraph.indexing.stages.embed import embed_tag

    if embedder is None or not texts:
        return {}
    rows = store.con.execute("SELECT item_id, model, vector FROM embeddings WHERE kind = ?", [kind]).fetchall()
    by_key = {str(k): k for k in texts}
    out = {}
    for item, tag, vec in rows:
        k = by_key.get(item)
        if k is not None and tag == embed_tag(embedder, texts[k]):
            out[k] = vec
    return out


def _needs_embedder(settings: Settings, client: ModelClient) -> bool:
    return helpfulness_signal(settings, client.model) != "model" or \
        answer_mode(settings, client.model) == "extractive"


def global_search(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                  level: int = 0, seed: int | None = None, progress: bool = True, dynamic: bool = False,
                  on_text: Callable[[str], None] | None = None, embedder=None,
                  theme_writer: Callable | None = None) -> Answer:
    """Answer a global question from the community reports of one level (or selected dynamically).

    Args:
        level: community level (0 = root level, the paper's C0); ignored with ``dynamic``.
        seed: shuffle seed (default ``settings.seed``); recorded in ``details``.
        dynamic: choose the reports by dynamic community selection (see the module doc).
        on_text: receives the final answer's text.
        embedder: ``encode(list[str])``, the index's embedder; None loads the bundled one when needed.
        theme_writer: ``theme -> sentence or None``, called for every theme of an extractive answer by theme
            in place of the model's writer, whatever ``settings.opening`` says (the stage bench scores each
            theme's model sentence against its template opening, :func:`slmgraph.eval.calibrate.opening_quality`).

    Raises:
        UserError: the index has no reports, or not at ``level``; or the
            question is too long for the window.
    """
    t0 = time.perf_counter()
    levels = _check_reports_exist(store)
    if not dynamic and level not in levels:
        raise UserError(f"level {level} is not in the index (levels {levels[0]}..{levels[-1]}): "
                        "pass --level with one of them")
    named = check_names(store, question, settings)
    if not named["answer"]:
        return name_refusal(Answer(text="", method="global", question=question, level=None if dynamic else level),
                            prompts, named, on_text, t0)
    seed = settings.seed if seed is None else seed
    if embedder is None and _needs_embedder(settings, client):
        embedder = default_embedder(settings)
    if dynamic and corpus_wide_phrase(question, prompts) is not None and 0 in levels:
        # A question about the whole corpus is answered from the root level's themes, as plain global search
        # does: dynamic selection descends by the floor, which such a question's wording cannot pass.
        ans = global_search(store, client, prompts, settings, question, level=0, seed=seed, progress=progress,
                            on_text=on_text, embedder=embedder, theme_writer=theme_writer)
        ans.details["dynamic"] = {"fallback": "level 0", "because": "corpus-wide question"}
        return ans
    if dynamic:
        ans = Answer(text="", method="global", question=question, level=None)
        reports, info = select_reports(store, client, prompts, settings, question, ans, progress, embedder)
        ans.details["dynamic"] = info
        no_answer = prompts.fill("no_answer", level="any level").strip()
    else:
        ans = Answer(text="", method="global", question=question, level=level)
        reports = load_reports(store, level)
        no_answer = None
    ans.seconds = time.perf_counter() - t0
    if dynamic and not reports:
        if 0 in levels:  # never refuse what plain global search answers: ask level 0 as it would
            info = ans.details["dynamic"]
            ans = global_search(store, client, prompts, settings, question, level=0, seed=seed, progress=progress,
                                on_text=on_text, embedder=embedder, theme_writer=theme_writer)
            ans.details["dynamic"] = {**info, "fallback": "level 0", "because": "no report passed the floor"}
            return ans
        ans.text = no_answer
        if on_text is not None:
            on_text(ans.text)
        return ans
    by_id = {r["community_id"]: r for r in reports}
    for cid, names in member_names(store, list(by_id)).items():  # central entities, for the extractive answer
        by_id[cid]["entities"] = names
    vectors = stored_vectors(store, "report", {i: r["full_text"] for i, r in by_id.items()}, embedder)
    ans.details.update(name_details(named))
    map_reduce(client, prompts, settings, question, [(r["community_id"], report_block(r)) for r in reports],
               REPORTS, ans, seed, progress, on_text, no_answer, embedder=embedder, vectors=vectors, records=by_id,
               store=store, theme_writer=theme_writer)
    order = [i for b in ans.details["batches"] for i in b["ids"]]
    ans.context = [{"kind": "report", "id": i, "tokens": by_id[i]["n_tokens"]} for i in order]
    if not ans.details["selected"] and not ans.points:  # an answer given from the units needs no pointer to them
        _unit_fallback(store, prompts, settings, question, embedder, ans, on_text)
    return ans


def unnamed_words(store: Store, question: str) -> str:
    """The question's topic words, quoted and joined by "or" ("“cryptocurrency”"), when no text unit holds any of
    them (:func:`slmgraph.query.theme_mentions.absent_words`); "" otherwise."""
    return " or ".join(f"\u201c{w}\u201d" for w in _unnamed(store, question)[0])


def _unnamed(store: Store, question: str) -> tuple[list[str], object]:
    """``(words, index view)``: :func:`slmgraph.query.theme_mentions.absent_words` of ``question`` and the
    :class:`slmgraph.query.theme_model.ThemeIndex` they were read with; ``([], None)`` when a text unit holds each
    of the question's words as written (one query, no reading of the corpus word by word)."""
    from slmgraph.query.theme_mentions import absent_words
    from slmgraph.query.theme_model import ThemeIndex

    # the topic words are some of the question's words: when a text unit holds each of those as written, one is
    # named, and the corpus need not be read word by word (basic search asks this of every question)
    said = sorted({w.casefold() for w in re.findall(r"[^\W_]+", question or "")})
    if said:
        held = store.con.execute("SELECT " + ", ".join(
            "bool_or(regexp_matches(lower(text), ?))" for _ in said) + " FROM text_units",
            [_whole_word(re.escape(w)) for w in said]).fetchone()
        if held and all(held):
            return [], None
    ix = ThemeIndex(store)
    return absent_words(question, ix), ix


#: Words a phrase may hold between the words its acronym takes its initials from ("carbon capture and storage").
_ACRONYM_GLUE = frozenset({"and", "of", "for"})


def _whole_word(pattern: str) -> str:
    """``pattern`` as a whole word in DuckDB's regular expressions (no letter or digit either side)."""
    return r"(^|[^\pL\pN])" + pattern + r"([^\pL\pN]|$)"


def _most_documents_hold(store: Store, words: list[str]) -> list[bool]:
    """Whether at least half the index's documents hold each of ``words`` (whole words, any case), in one query."""
    row = store.con.execute("SELECT count(DISTINCT doc_id), " + ", ".join(
        "count(DISTINCT CASE WHEN regexp_matches(lower(text), ?) THEN doc_id END)" for _ in words)
        + " FROM text_units", [_whole_word(re.escape(w.casefold())) for w in words]).fetchone()
    return [2 * int(n) >= int(row[0]) > 0 for n in row[1:]]


def _uses(store: Store, patterns: list[str], case: bool = True) -> list[int]:
    """How many times each of ``patterns`` (regular expressions, whole words) is written in the corpus's text
    units, in one query."""
    row = store.con.execute("SELECT " + ", ".join(
        "coalesce(sum(len(regexp_extract_all(text, ?))), 0)" for _ in patterns) + " FROM text_units",
        [("" if case else "(?i)") + _whole_word(p) for p in patterns]).fetchone()
    return [int(n) for n in row]


def by_acronym(store: Store, question: str) -> str:
    """``question`` with a lower-case phrase of two to four words (and, of, for between them) written as its
    acronym where the corpus writes the acronym at least :data:`slmgraph.query.theme_topics.ACRONYM_USES` times
    and the phrase fewer ("What do guests think about carbon capture and storage?" -> "... about CCS?"): the
    speakers say the acronym once it is defined, so the phrase alone finds little more than its definition."""
    from slmgraph.names.forms import STOP
    from slmgraph.query.theme_topics import ACRONYM_USES

    toks = list(re.finditer(r"[^\W\d_][\w'-]*", question or ""))
    spans: list[tuple[list, str]] = []  # (the span's words, its acronym), the longest first
    for size in (6, 5, 4, 3, 2):
        for i in range(len(toks) - size + 1):
            span = toks[i:i + size]
            words = [m.group(0) for m in span]
            heads = [w for w in words if w not in _ACRONYM_GLUE]
            if (not 2 <= len(heads) <= 4 or words[0] in _ACRONYM_GLUE or words[-1] in _ACRONYM_GLUE
                    or any(not w.islower() or w in STOP for w in heads)
                    or any(question[a.end():b.start()].strip() for a, b in zip(span, span[1:]))):
                continue
            spans.append((span, "".join(w[0] for w in heads).upper()))
    if not spans:
        return question
    # every acronym counted in one query; a phrase only where its acronym is written often enough
    acros = list(dict.fromkeys(a for _, a in spans))
    uses = dict(zip(acros, _uses(store, acros)))
    for span, acro in spans:
        phrase = r"\s+".join(re.escape(m.group(0)) for m in span)
        if uses[acro] >= ACRONYM_USES and _uses(store, [phrase], case=False)[0] < ACRONYM_USES:
            return question[:span[0].start()] + acro + question[span[-1].end():]
    return question


def abbreviated(store: Store, facets: list) -> bool:
    """Whether the words of the listed ``facets`` (:class:`slmgraph.query.theme_facets.Facet`) are one term the
    corpus abbreviates: their initials, as one word in capitals, written at least
    :data:`slmgraph.query.theme_topics.ACRONYM_USES` times ("carbon capture and storage" as "CCS"), so the
    question asks of one thing, not of a list."""
    from slmgraph.query.theme_topics import ACRONYM_USES

    words = [w for f in facets for w, _ in f.words]
    if not 2 <= len(words) <= 5:
        return False
    return _uses(store, ["".join(w[0] for w in words).upper()])[0] >= ACRONYM_USES


def _unnamed_answer(store: Store, question: str, embedder, ans: Answer, on_text) -> bool:
    """When no text unit names any of the question's topic words (:func:`unnamed_words`) and the index holds no
    other word near any of them (:func:`slmgraph.query.theme_model.near_words`), ``ans`` says so in one line and
    True; otherwise False, ``ans`` untouched: passages nearest a subject the corpus never names are about something
    else ("soil carbon" of "cryptocurrency"), while a subject named in other words is answered from those."""
    from slmgraph.query.theme_model import near_words

    # an index of reports alone (no text unit to look in) cannot tell what its corpus never names
    if not store.con.execute("SELECT count(*) FROM text_units").fetchone()[0]:
        return False
    words, ix = _unnamed(store, question)
    if not words or any(near_words(w.casefold(), ix, embedder) for w in words):
        return False
    missing = " or ".join(f"\u201c{w}\u201d" for w in words)
    ans.text = f"No passage of the corpus names {missing}."
    ans.details.update({"unnamed": missing, "by_theme": True, "points": 0})
    if on_text is not None:
        on_text(ans.text)
    return True


def _unit_fallback(store: Store, prompts: Prompts, settings: Settings, question: str, embedder, ans: Answer,
                   on_text) -> None:
    """No report passed the floor: when the text units pass basic search's gate
    (:func:`slmgraph.query.scoring.relevance_gate` on the nearest unit, as
    :func:`slmgraph.query.engines.basic_search.basic_search` applies it), the no-answer text says so and points to
    basic search, which answers from them; when no text unit names any of the question's topic words
    (:func:`unnamed_words`) it says that instead."""
    from slmgraph.indexing.stages.embed_lookup import nearest_units, unit_matrix
    from slmgraph.query.documents import no_prose_units
    from slmgraph.query.scoring import relevance_gate

    if embedder is None:
        return
    missing = unnamed_words(store, question)
    if missing:  # no passage names what the question asks about: nothing nearer to point to
        ans.text = ans.text.rstrip() + f" No passage of the corpus names {missing}."
        ans.details.update({"unnamed": missing})
        if on_text is not None:
            on_text(f" No passage of the corpus names {missing}.")
        return
    # the units as basic search reads them (every window of every unit, no prose-less unit): the same gate
    ids, mat, owners = unit_matrix(store)
    if not ids:
        return
    junk = no_prose_units(store)
    keep = [r for r, o in enumerate(owners) if o not in junk]
    if junk and keep:
        mat, owners = mat[keep], [owners[r] for r in keep]
    hits = nearest_units(embedder.encode([question])[0], owners, mat, 1)
    gate = relevance_gate(question, hits[0][1] if hits else 0.0, mat, embedder, prompts, settings)
    if not gate["answer"]:
        return
    ans.text = (ans.text.rstrip() + f" Its text units come nearer: the nearest scores {gate['best_score']:g} over "
                f"their floor of {gate['floor']:g}, so basic search (--method basic) answers from them.")
    ans.details.update({"fallback": "basic", "fallback_gate": gate})
    if on_text is not None:
        on_text(" " + ans.text.rsplit(" Its text units come nearer", 1)[1].join(["Its text units come nearer", ""]))


def select_reports(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                   ans: Answer, progress: bool = True, embedder=None) -> tuple[list[dict], dict]:
    """Dynamic community selection by helpfulness, from the root level down.

    Every root-level report is scored (:func:`slmgraph.query.scoring.score_items`,
    the signal in use); the sub-communities of a report scoring at least
    ``settings.helpfulness_floor`` are scored next (carried-down copies are
    skipped: same content); the others are pruned with everything below
    them. Selected: the relevant reports none of whose sub-communities is relevant.

    Returns:
        ``(selected reports as in load_reports, info)``; ``info`` has
        ``rated`` (reports scored), ``relevant`` and ``selected`` counts, the
        selected ids and every rated report's score.
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
    signal = helpfulness_signal(settings, client.model)
    vectors = stored_vectors(store, "report", {i: r["full_text"] for i, r in reports.items()}, embedder)
    frontier = list(children.get(None, []))
    relevant: set[int] = set()
    scores: dict[int, float] = {}
    while frontier:
        scored = score_items(question, frontier, [reports[c]["full_text"] for c in frontier], signal=signal,
                             embedder=embedder, vectors=vectors, client=client, prompts=prompts,
                             on_call=ans.add_call)
        nxt = []
        for sc in scored:
            scores[sc.id] = round(sc.score, 1)
            if sc.score >= settings.helpfulness_floor:
                relevant.add(sc.id)
                nxt.extend(children.get(sc.id, []))
        frontier = nxt
    selected = [cid for cid in sorted(relevant) if not any(k in relevant for k in children.get(cid, []))]
    info = {"rated": len(scores), "relevant": len(relevant), "selected": len(selected), "selected_ids": selected,
            "scores": scores}
    return [reports[c] for c in selected], info


def unit_documents(store: Store) -> dict:
    """Text unit number (:func:`slmgraph.query.answer.unit_numbers`) -> its document id."""
    numbers = unit_numbers(store)
    return {numbers[c]: d for c, d in store.con.execute("SELECT chunk_id, doc_id FROM text_units").fetchall()
            if c in numbers}


def text_unit_search(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                     seed: int | None = None, progress: bool = True,
                     on_text: Callable[[str], None] | None = None, embedder=None) -> Answer:
    """The paper's TS baseline: the global map over shuffled raw text units.

    Text units are cited by their index-wide number (:func:`slmgraph.query.answer.unit_numbers`, stable
    across incremental runs); ``context`` maps the numbers to chunk ids. Their helpfulness uses the
    text-unit embeddings stored at index time.
    """
    t0 = time.perf_counter()
    units = rows(store, TextUnitRow, "SELECT chunk_id, text, n_tokens FROM text_units ORDER BY doc_id, ord")
    if not units:
        raise UserError(f"index {store.path} has no text units: run 'slmgraph index' first")
    # a table's or a decoded binary's units hold no sentence to quote (text_units.no_prose, judged at ingestion)
    junk = {c for c, in store.con.execute("SELECT chunk_id FROM text_units WHERE no_prose").fetchall()} \
        if store.has_column("text_units", "no_prose") else set()
    units = [u for u in units if u.chunk_id not in junk] or units
    named = check_names(store, question, settings)
    if not named["answer"]:
        return name_refusal(Answer(text="", method="ts", question=question), prompts, named, on_text, t0)
    numbers = unit_numbers(store)
    units.sort(key=lambda u: numbers[u.chunk_id])
    by_number = {numbers[u.chunk_id]: u for u in units}
    if embedder is None and _needs_embedder(settings, client):
        embedder = default_embedder(settings)
    ans = Answer(text="", method="ts", question=question, details=name_details(named))
    known = known_of(named)
    # The text as written (line breaks kept): an extractive answer splits it into sentences, and a heading
    # or a Markdown table row is a sentence of its own only while its line breaks are there.
    items = [(i, f"Passage {i}\n{u.text.strip()}") for i, u in by_number.items()]
    by_chunk = stored_vectors(store, "text_unit", {u.chunk_id: u.text for u in units}, embedder)
    vectors = {i: by_chunk[u.chunk_id] for i, u in by_number.items() if u.chunk_id in by_chunk}
    ans.seconds = time.perf_counter() - t0
    map_reduce(client, prompts, settings, question, items, TEXT_UNITS, ans,
               settings.seed if seed is None else seed, progress, on_text,
               no_answer="I am sorry, but the indexed documents hold nothing relevant to this question: no text "
                         "unit was scored as helpful for it.", embedder=embedder, vectors=vectors, store=store,
               names=name_variants(known), naming=units_naming({i: u.text for i, u in by_number.items()}, known))
    order = [i for b in ans.details["batches"] for i in b["ids"]]
    ans.context = [{"kind": "text_unit", "id": by_number[i].chunk_id, "source": i, "tokens": by_number[i].n_tokens}
                   for i in order]
    return ans
