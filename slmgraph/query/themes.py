"""Global answers organised by theme (extractive; the GraphRAG paper's "what is this corpus about").

The answer is its own synthesis, built from the data by templates:

* an **overview paragraph** (:func:`overview`) that answers first: for a focused question it opens with who
  answers, from how many documents, and the noun phrases the statements share, and over time with the earliest
  and latest statement (:mod:`slmgraph.query.theme_lead`); for a corpus-wide question
  (:func:`slmgraph.query.route.corpus_wide_phrase`) the main themes ranked by how many documents
  discuss them ("Across the 8 documents, the main themes are flood defence (in 6 of 8 documents), ...");
  for a focused question the themes that bear on it, the most relevant first, with their reach; a corpus-wide
  answer also names a topic running through nearly every document (:func:`running_themes`);
* one section per selected community report, with
  - its **topic**: ``community_reports.topic`` (:mod:`slmgraph.indexing.stages.topics`) or, for an index built before
    that column was filled, the report's title; a community labelled by names alone (a publication, a
    speaker) is no theme of a corpus-wide answer while concept themes remain;
  - its **sentence** (:func:`template_opening`): who says its statements and the phrases they share
    (:func:`slmgraph.query.theme_lead.theme_common`), then the topic, its other key concepts and the names most
    tied to it, how widely it is discussed -- its community's documents (:func:`community_documents`, the count
    its report and ``/api/reports`` give), or for a corpus-wide question the documents whose prose holds its
    label's phrases (:func:`slmgraph.query.theme_labels.label_documents`), and any it is quoted from, counted
    against the corpus, with the dates
    their titles hold -- and the documents its statements are quoted
    from; where the answer policy lets the model write (:func:`slmgraph.query.extractive.opening_on`), a
    sentence the model writes from the theme's statements, kept only when grounded
    (:func:`slmgraph.query.extractive.grounded_synthesis`), comes before it;
  - its **strongest statements**: whole sentences of the units that mention its members in the documents
    it is discussed in, one per document, the units nearest to the question first, chosen by maximal
    marginal relevance over the whole answer (:func:`slmgraph.query.extractive.relevance`: cosine with
    the question -- for a corpus-wide question, with the theme itself -- plus the named-entity bonus,
    minus the weak-quote penalties, plus :func:`content_weight`: the theme's concepts, figures and dates
    count for a statement, an opening pronoun against it). A *focused* question (neither corpus-wide nor
    about change over time) is answered by the sentences nearest it instead: the units of the whole
    community nearest the question, ranked by relevance alone (figures count only when it asks for them),
    with no spread over documents -- blind judges preferred that. A sentence repeated near-verbatim across
    many documents, or made of word shingles many documents share (:class:`Boilerplate`: a safe-harbour
    line, a show's intro), and a line framing the conversation (:func:`framing`: "Today I'm joined by
    ...") are never statements;
  - **citations that name documents**: each statement cites its text unit ``[Sources: n]`` and names the
    unit's document and position;
* the **documents cited** (:func:`documents_cited`) and the sources line.

A *focused* question's themes are found from its evidence (:func:`focused_themes`), not from the
best-scored reports: the text units of the whole index nearest the question are read, a sentence is kept
only near the best one and nearer the question than any off-topic probe question, and the themes are the
communities those sentences come from, each labelled by the phrases its statements share
(:func:`relabel`: a recurring, topical phrase, :mod:`slmgraph.query.theme_labels`), with its community's
reach and the speakers of its statements named. Other themes are labelled the same way from the text units they are
read from.

A question about change over time (:func:`is_temporal`: "how has X evolved") gets one timeline that
follows its subject through the documents speaking of it, in document order (:func:`focused_themes`,
:func:`timeline_picks`): the best statement of each such document (a second where it is as strong as the
answer's best evidence), with a floor relative to the answer's best statement, and with more documents than
points, the best of each stretch of consecutive documents; a question about amounts or change
(:func:`asks_figures`) prefers statements holding figures and dates.
"""


from __future__ import annotations

import re

import numpy as np

from slmgraph.indexing.stages.topics import _shown, junk
from slmgraph.query.documents import community_documents, breadth_key, coverage, reach
from slmgraph.query.extractive import _Mmr, _embed, names_named, near_duplicate, prose_sentences, relevance
from slmgraph.query.theme_arc import arc_sentence
from slmgraph.query.theme_ident import corpus_identity
from slmgraph.query.theme_topics import topic_themes
from slmgraph.query.theme_works import corpus_hosts, corpus_works, works_overview, works_section
from slmgraph.store.corpus_stats import phrase_key
from slmgraph.query.theme_aspects import aspect_opening, aspects_overview, focused_aspects, is_aspects
from slmgraph.query.theme_facets import (
    facet_opening, facet_themes, fields_doing, focus_at_large, focus_of, focus_roles, render_facets,
)
from slmgraph.query.theme_fields import asks_fields, field_guests
from slmgraph.query.theme_mentions import absent_phrase, asks_mentions, unnamed_parts
from slmgraph.query.theme_labels import (
    defined_acronyms, label_documents, label_phrases, label_units, phrase_pattern, relabel, running_names,
    running_words, same_theme,
)
from slmgraph.query.theme_model import (
    EVIDENCE_MARGIN, EVIDENCE_UNITS, FIGURE_MARGIN, FIGURE_QUESTION_BONUS, KEY_CONCEPTS,
    KEY_NAMES, MAX_THEMES, MIN_THEMES, EDGE_PENALTY, PER_FOCUSED_THEME, PER_TEMPORAL_THEME, PER_THEME, PROBE_GAP,
    STATEMENT_MARGIN, Statement, TIMELINE_DOCS, TIMELINE_FLOOR, TIMELINE_PER_DOC, TIMELINE_STATEMENTS, Theme,
    ThemeIndex, UNITS_PER_THEME, _statement_ok, _unit_norm, asks_figures, content_weight, has_figure,
    is_temporal, names_asked, near_words, question_words, repeats, short_penalty, spoken, statement_penalty,
    text_stems, topic_words, word_stem,
)
from slmgraph.query.theme_render import render_themes, template_opening


#: A corpus-wide question asking for one side of the corpus (:func:`slmgraph.query.route.corpus_aspect`): the
#: weight of a statement's cosine with the sentences saying that side, added to its relevance (equal to its
#: cosine with the theme, so a statement leads its theme by being both on the theme and on the side asked for).
ASPECT_WEIGHT = 1.0
#: A corpus-wide answer's theme is named in at least this share of the corpus's works (or documents), in a corpus
#: of at least WIDE_FLOOR_DOCS of them.
WIDE_FLOOR_SHARE = 0.1
WIDE_FLOOR_DOCS = 10
#: Subjects of a field's guests the comparison of fields names (:func:`field_subjects`).
FIELD_SUBJECTS = 3


#: A question about the guests of an interview series.
_GUESTS = re.compile(r"(?i)\b(guests?|interviewees?)\b")


def _themes_of(ix: ThemeIndex, reports: list[dict], scores: dict) -> list[Theme]:
    """One :class:`Theme` per report, no statement yet: its topic, coverage, key concepts and names."""
    ids = [r["community_id"] for r in reports]
    comm_docs = community_documents(ix.store, ids, ix.docs)
    term_docs = ix.term_documents(ids)
    topics = ix.topics(ids)
    themes = []
    known = ix.concept_names
    for r in reports:
        cid = r["community_id"]
        topic = topics.get(cid) or r.get("title") or f"Community {cid}"
        ents = [str(e) for e in (r.get("entities") or []) if e]
        terms = [x.strip() for x in topic.split(",") if x.strip()]
        # A theme is discussed where its label's terms are mentioned; its statements come from those documents.
        by_term = term_docs.get(cid, {})
        on = set().union(*[by_term.get(x.casefold(), set()) for x in terms]) if terms else set()
        d = sorted(on, key=lambda x: ix.doc_by_id[x].pos) if on else comm_docs.get(cid, [])
        concepts = list(dict.fromkeys([x for x in terms if x.casefold() in known] +
                                      [e for e in ents if e.casefold() in known]))[:KEY_CONCEPTS]
        names = list(dict.fromkeys(_shown(e) for e in ents if e.casefold() not in known
                                   and e.casefold() not in topic.casefold() and not junk(e, False)
                                   and not ix.legal_name(e)))[:KEY_NAMES]
        # its count is the community's own (the report's and /api/reports' too); statements are read from ``d``
        own = comm_docs.get(cid, [])
        themes.append(Theme(cid, topic, coverage(own, ix.docs), d, names, score=float(scores.get(cid, 0.0)),
                            concepts=concepts, community_docs=own))
    return themes


def _probe_vectors(probes: list[str] | None, embedder):
    return _embed(list(probes), embedder) if probes and embedder is not None else None


def focused_themes(ix: ThemeIndex, pool: list[dict], scores: dict, question_vec, embedder, *,
                   probes: list[str] | None = None, max_themes: int = MAX_THEMES, figures: bool = False,
                   temporal: bool = False, question: str = "") -> list[Theme]:
    """The themes of a focused question's answer, evidence first: the statements answering the question,
    grouped by the community each comes from, best first.

    The :data:`EVIDENCE_UNITS` text units of the whole index nearest the question (stored unit vectors) are
    read for statements (:func:`_statement_ok`); a statement is kept when its relevance
    (:func:`slmgraph.query.extractive.relevance` with the owning community's members, minus the short-line
    penalty) is within :data:`EVIDENCE_MARGIN` of the best statement's and its cosine with the question
    exceeds every off-topic probe question's (``probes``) by :data:`PROBE_GAP`. Each unit belongs to the
    community of ``pool`` (the level's reports, dicts with ``entities``) with the most members it mentions; a
    theme is such a community, with up to :data:`PER_FOCUSED_THEME` statements (maximal marginal relevance,
    near-duplicates dropped), ranked by its best statement, so a theme exists only where the question's
    evidence is and never holds a statement off the question. Its label is :func:`relabel`'s.
    With ``figures`` (the question asks about amounts: :func:`asks_figures`) a statement's relevance gains
    :data:`FIGURE_QUESTION_BONUS` for an amount or a count and half of it for another number or a date
    (:func:`has_figure`), before the margin is applied, and a sentence holding an amount or a count that names a
    topic word of the question (:func:`topic_words`) is evidence too when its cosine is within
    :data:`FIGURE_MARGIN` of the best one's and above every probe's, so the sentences stating the figures asked
    about are read even when phrased far from the question; a theme then quotes up to :data:`PER_TEMPORAL_THEME`
    statements, those holding figures first, and two statements differing in their figures are no repeat.
    With ``temporal`` (change over time) the answer is one timeline that follows the subject through the
    documents speaking of it: the nearest unit of each of the :data:`TIMELINE_DOCS` documents (works, for parts
    of works: a work is one period) nearest the question is read besides the nearest units (one long document's units do not crowd out the others), and
    the theme of the best statement quotes the statements of the whole evidence, whichever community they come
    from (a series of figures is not split by the communities its sentences fall in), chosen by
    :func:`timeline_picks` among those nearer the question than any probe by :data:`PROBE_GAP` and within
    :data:`EVIDENCE_MARGIN` of the best, or naming a topic word of the question (:func:`topic_words`) with at
    least :data:`TIMELINE_FLOOR` of the best one's relevance (a floor relative to the answer's best statement,
    so a period speaking of the subject more weakly is not skipped), or stating the
    figures asked about, in corpus (date) order. Returns [] when no statement passes.
    """
    qv = _unit_norm(question_vec)
    units = ix.all_units()
    uvec = ix.unit_vectors([u.chunk_id for u in units])
    nearest = sorted((u for u in units if u.chunk_id in uvec),
                     key=lambda u: (-float(_unit_norm(uvec[u.chunk_id]) @ qv), u.number))
    ranked = nearest[:EVIDENCE_UNITS]
    # the parts of a work (an episode's) are one period of a timeline: it follows the subject by work
    first: dict = {}
    for d in ix.docs:
        first.setdefault(d.work or d.doc_id, d.pos)
    place = {d.doc_id: first[d.work or d.doc_id] for d in ix.docs}
    if temporal:  # a timeline reads each document's nearest unit too, the nearest documents first
        ranked += timeline_units(nearest, TIMELINE_DOCS, {u.chunk_id for u in ranked}, place)
    by_report = {r["community_id"]: r for r in pool}
    unit_of = {u.number: u.chunk_id for u in ranked}
    owner = ix.unit_owners([u.chunk_id for u in ranked], list(by_report), scores)
    cands: list[tuple[int, Statement]] = []
    seen: set = set()
    for u in ranked:
        cid = owner.get(u.chunk_id)
        if cid is None:
            continue
        for s in prose_sentences(u.text):
            s = spoken(s)
            if s in seen or not _statement_ok(s, ix):
                continue
            seen.add(s)
            cands.append((cid, Statement(s, u.number, u.doc_id, u.unit, ix.doc_by_id[u.doc_id].n_units,
                                         speaker=ix.speaker(u, s))))
    # a question about the guests is answered in their words, the hosts' only where no guest's will do
    hosts = {h.title() for h in corpus_hosts(ix)} if _GUESTS.search(question or "") else set()
    cands = [c for c in cands if c[1].speaker not in hosts] or cands
    if not cands:
        return []
    vecs = _embed([st.text for _, st in cands], embedder)
    cos = vecs @ qv
    pv = _probe_vectors(probes, embedder)
    off = (vecs @ pv.T).max(axis=1) if pv is not None else np.full(len(cands), -1.0)
    rel = []
    for k, (cid, st) in enumerate(cands):
        # a question about amounts: the sentences stating them are its evidence, not only ties among the nearest
        fig = FIGURE_QUESTION_BONUS * has_figure(st.text) / 2 if figures else 0.0
        st.rel = relevance(float(cos[k]), st.text, by_report[cid].get("entities")) - statement_penalty(st, ix) + fig
        rel.append(st.rel)
    top = max(rel)
    live = [k for k in range(len(cands)) if rel[k] >= top - EVIDENCE_MARGIN and cos[k] - off[k] >= PROBE_GAP]
    stating: list[int] = []  # the sentences stating the figures asked about
    if figures:
        asked = topic_words(question, units)
        amounts = [k for k in range(len(cands)) if has_figure(cands[k][1].text) == 2
                   and names_asked(cands[k][1].text, asked)]
        # near the best sentence stating an amount of what is asked (a section title may be nearer the question
        # than any sentence holding a figure)
        best = max((float(cos[k]) for k in amounts), default=0.0)
        stating = [k for k in amounts if k not in set(live) and cos[k] >= best - FIGURE_MARGIN and cos[k] > off[k]]
        live += stating
    if not temporal and not figures:  # a focused question: its statements of every community, in aspects
        found = focused_aspects(ix, cands, vecs, rel, cos, off, embedder, question,
                                lambda cids: _themes_of(ix, [by_report[c] for c in cids], scores))
        if found:
            return found
    ranked_live = sorted(live, key=lambda k: (-rel[k], k))
    order = list(dict.fromkeys(cands[k][0] for k in ranked_live))[:1 if temporal else max_themes]
    themes = {t.report: t for t in _themes_of(ix, [by_report[c] for c in order], scores)}
    mmr = _Mmr(vecs)
    used: list[str] = []
    taken: set[str] = set()
    out = []
    defined = defined_acronyms(ix) if temporal and figures else {}
    for cid in order:
        t = themes[cid]
        if temporal:
            # a statement under the evidence margin speaks of the subject when it names a topic word of the question
            floor, asked = top * TIMELINE_FLOOR if top > 0 else top, topic_words(question, units)
            points = sorted({k for k in range(len(cands)) if cos[k] - off[k] >= PROBE_GAP and (
                rel[k] >= top - EVIDENCE_MARGIN or rel[k] >= floor and names_asked(cands[k][1].text, asked))}
                            | set(stating))
            # asked how amounts changed, a document's sentence stating one of the subject leads it
            lead = {k: FIGURE_LEAD if figures and has_figure(cands[k][1].text) == 2 and states_subject(
                cands[k][1].text, question, defined) else 0.0 for k in points}
            picks, t.followed, t.stretches = timeline_picks(
                [(k, place[cands[k][1].doc_id], rel[k] + lead[k]) for k in points], top - EVIDENCE_MARGIN,
                lambda a, b: repeats(cands[a][1].text, cands[b][1].text, figures))
            # in reading order: a document's statements as its text holds them
            t.statements = [cands[k][1] for k in sorted(picks, key=lambda k: (
                ix.doc_by_id[cands[k][1].doc_id].pos, cands[k][1].unit, k))]
        left = [] if temporal else [k for k in live if cands[k][0] == cid]
        cap = PER_TEMPORAL_THEME if figures else PER_FOCUSED_THEME
        while left and len(t.statements) < cap:
            k = max(left, key=lambda j: (has_figure(cands[j][1].text) if figures else 0, mmr.value(j, rel[j]), -j))
            left.remove(k)
            st = cands[k][1]
            if any(repeats(st.text, x, figures) for x in used):
                continue
            t.statements.append(st)
            used.append(st.text)
            mmr.add(k)
        if temporal:
            t.statements.sort(key=lambda s: (ix.doc_by_id[s.doc_id].pos, s.unit))
        if t.statements:
            t.score = max(s.rel for s in t.statements)
            t.reports = cited_reports(t, ix, list(by_report), embedder)
            mine = [k for k in range(len(cands)) if any(cands[k][1] is x for x in t.statements)]
            picked = relabel(t, ix, embedder, [unit_of[cands[k][1].source] for k in mine], vecs[mine].mean(axis=0),
                             stated=[x.text for x in t.statements], taken=taken, min_terms=1)
            # a theme labelled by its statements' phrases is discussed where those phrases are, and its count
            # says so: the community it was found in may hold none of them
            d = ix.phrase_documents(picked)
            if d:
                t.doc_ids = t.community_docs = d
                t.coverage = coverage(d, ix.docs)
            # the concepts and names its sentence names are those its label or its statements hold
            said = " ".join(x.text for x in t.statements).casefold() + " " + t.topic.casefold()
            t.concepts = [c for c in t.concepts if re.search(r"(?<!\w)" + re.escape(c.casefold()) + r"(?!\w)", said)]
            t.names = [n for n in t.names if re.search(r"(?<!\w)" + re.escape(n.casefold()) + r"(?!\w)", said)]
            out.append(t)
    return out




def timeline_units(nearest: list, docs: int, have: set, place: dict | None = None) -> list:
    """The nearest text unit of each of the first ``docs`` documents of ``nearest`` (units with ``chunk_id``
    and ``doc_id``, nearest the question first), those whose ``chunk_id`` is in ``have`` left out: the units
    a timeline reads besides the nearest ones, one per document; with ``place`` (``doc_id -> position of its
    work``) one per work."""
    seen: set = set()
    out = []
    for u in nearest:
        key = place.get(u.doc_id, u.doc_id) if place else u.doc_id
        if key in seen:
            continue
        seen.add(key)
        if u.chunk_id not in have:
            out.append(u)
        if len(seen) >= docs:
            break
    return out


def states_subject(sentence: str, question: str, defined: dict[str, str]) -> bool:
    """Whether ``sentence`` names at least two of the question's topic words (:func:`question_words`), an acronym
    the corpus defines (``defined``, :func:`slmgraph.query.theme_labels.defined_acronyms`) naming its phrase's
    ("The FRP budget stood at 2.1 million pounds." of "How did the flood resilience plan budget change?"; "The
    budget for Christmas lights was 3,500 pounds." names one)."""
    said = sentence + "".join(f" {phrase}" for acro, phrase in defined.items()
                              if re.search(rf"(?<![^\W_]){acro}(?![^\W_])", sentence))
    return len(text_stems(said) & question_words(question)) >= 2


#: What a sentence stating an amount of the subject adds to its relevance in a timeline of how amounts changed:
#: more than any cosine difference, so it leads its document.
FIGURE_LEAD = 1.0


def timeline_picks(items: list[tuple[int, int, float]], strong: float, repeat, *,
                   cap: int = TIMELINE_STATEMENTS, per_doc: int = TIMELINE_PER_DOC) -> tuple[list[int], int, int]:
    """The points of a timeline: ``(keys picked, documents followed, stretches)``.

    ``items`` are the candidate statements above the answer's floor, ``(key, document position, relevance)``
    (the position of a part of a work is its work's: a work is one document here); ``repeat(a, b)`` says key
    ``a`` nearly repeats key ``b``. Each document speaking to the question gives its
    best statement; while the points stay under ``cap``, one holding a second statement of relevance at least
    ``strong`` gives that too (up to ``per_doc``). With more documents than ``cap``, the documents in corpus
    order are cut into ``cap`` stretches of consecutive documents of near-equal size and each gives its best
    statement (0 stretches when not cut), so the points spread evenly over the span, the strongest kept. A
    statement repeating one picked before it (the strongest picked first) gives way to its document's next.
    """
    by_doc: dict[int, list[tuple[float, int]]] = {}
    for k, pos, r in items:
        by_doc.setdefault(pos, []).append((-r, k))
    docs = sorted(by_doc)
    n = len(docs)
    if not docs or cap <= 0:
        return [], n, 0
    grouped = n > cap
    groups = [docs[i * n // cap:(i + 1) * n // cap] for i in range(cap)] if grouped else [[d] for d in docs]
    queues = [sorted(c for d in g for c in by_doc[d]) for g in groups]
    picked: list[int] = []
    # the strongest stretch picks first, so a repeat gives way in the weaker one
    for q in sorted(queues, key=lambda q: q[0]):
        k = next((k for _, k in q if not any(repeat(k, p) for p in picked)), None)
        if k is not None:
            picked.append(k)
    if not grouped:
        doc_of = {k: pos for k, pos, _ in items}
        held = {pos: sum(1 for p in picked if doc_of[p] == pos) for pos in docs}
        for r, k in sorted(c for q in queues for c in q if -c[0] >= strong):
            if len(picked) >= cap:
                break
            if k in picked or held[doc_of[k]] >= per_doc or any(repeat(k, p) for p in picked):
                continue
            picked.append(k)
            held[doc_of[k]] += 1
    return picked, n, (cap if grouped else 0)


def build_themes(ix: ThemeIndex, reports: list[dict], scores: dict, question_vec, embedder, *,
                 wide: bool = False, temporal: bool = False, max_themes: int = MAX_THEMES,
                 figures: bool = False, question: str = "", pool: list[dict] | None = None,
                 probes: list[str] | None = None, aspect: list[str] | None = None) -> list[Theme]:
    """The themes of an answer from the selected ``reports`` (dicts as :func:`slmgraph.indexing.stages.report_store.load_reports`,
    with ``entities``), best first: by ``scores`` (``community_id -> helpfulness``), or with ``wide`` the most
    widely discussed communities' themes (and :func:`running_themes`) by the coverage each shows, the documents
    holding its label; themes whose topic nearly repeats an earlier one's, or with no statement, are left out, and
    with ``wide`` so is one whose label says what an earlier one's says (:func:`slmgraph.query.theme_labels.same_theme`).

    Args:
        question_vec: the question's vector (None: statements in corpus order).
        embedder: ``encode(list[str])`` for the candidate sentences (and a topic's vector).
        figures: the question asks about amounts or change (:func:`asks_figures`): statements with figures
            and dates first.
        pool: every report of the level (dicts with ``entities``): a focused question's themes are then
            found from its evidence (:func:`focused_themes`) among them, else (no statement passes) as below.
        probes: off-topic probe questions: a statement of a question with a topic (focused or over time) is
            nearer the question than any of them by :data:`PROBE_GAP` (:func:`focused_themes`), while any is.
        aspect: with ``wide``, the sentences saying the side of the corpus the question asks for
            (:func:`slmgraph.query.route.corpus_aspect`: "We had a problem.", "It was a setback.", ...): a
            statement's relevance gains :data:`ASPECT_WEIGHT` times its cosine with the nearest of them, so each
            theme's statements on that side come first, and the themes whose statements say it most come first.
    """
    # A focused question (a topic, not the whole corpus, not change over time) is answered by the sentences
    # nearest it: blind judges preferred that to spreading statements over the theme's documents.
    focused = not wide and not temporal and question_vec is not None
    # A question about how figures changed over time is answered from its evidence too, in date order.
    if (focused or (temporal and figures and question_vec is not None)) and not wide and pool and embedder is not None:
        # no statement on the question in the evidence (an embedder too coarse for the probes): the reports'
        # themes answer, as the question passed the helpfulness floor
        found = focused_themes(ix, pool, scores, question_vec, embedder, probes=probes, max_themes=max_themes,
                               figures=figures, temporal=temporal, question=question)
        if found:
            return cover_quoted(found, ix)
    themes = _themes_of(ix, reports, scores)
    known = ix.concept_names
    # A community labelled by names alone (a publication, a speaker, a passing mention) is not a theme while
    # others are labelled by concepts, unless the question names it.
    asked = question.casefold()

    def about(t: Theme) -> bool:
        terms = [x.strip() for x in t.topic.split(",") if x.strip()]
        return any(x.casefold() in known for x in terms) or (
            not wide and any(re.search(r"(?<!\w)" + re.escape(x.casefold()) + r"(?!\w)", asked) for x in terms))

    # Only for a corpus-wide question: a focused one is answered wherever its evidence sits, name-labelled or not.
    if wide and known and sum(1 for t in themes if about(t)) >= MIN_THEMES:
        themes = [t for t in themes if about(t)]
    if wide:
        themes.sort(key=lambda t: (-reach(t.coverage), -t.coverage["documents"], -t.score, t.report))
    else:
        themes.sort(key=lambda t: (-t.score, -t.coverage["documents"], t.report))
    keep = max_themes + 3
    # a corpus-wide answer reads further candidates, as those whose label repeats an earlier one's are left out
    reads = keep * 2 if wide else keep
    pooled: list[Theme] = []
    for t in themes:
        if any(near_duplicate(t.topic, k.topic, 0.8) for k in pooled):
            continue
        pooled.append(t)
        if len(pooled) >= reads:
            break
    units = ix.units([t.report for t in pooled])
    by_report = {r["community_id"]: r for r in reports}
    qv = _unit_norm(question_vec) if question_vec is not None else None
    # Each theme's candidate sentences come from its units nearest the question (for a corpus-wide question,
    # nearest the theme's own report: the question names no topic to be near to).
    all_units = {u.chunk_id for us in units.values() for u in us}
    uvec = ix.unit_vectors(sorted(all_units))
    taken: set[str] = set()
    relabelled: set[int] = set()
    kept: list[Theme] = []
    labels: list[list[str]] = []
    # the units each theme's community owns among the level's: a label backs off to their phrases when none recurs
    owner = ix.unit_owners(sorted(all_units), [r["community_id"] for r in reports], scores)
    own_units: list[list] = []  # each kept theme's text units
    # how widely each kept theme is discussed, which picks a corpus-wide answer's themes: its community's reach
    # (a label is often narrower than its community: it counts the label's documents, not which themes lead)
    breadth: list[tuple[int, int, int]] = []
    # a corpus of many works: its themes are first the topics its works share (theme_topics), then communities
    topical = topic_themes(ix, reports, scores, embedder, keep) if wide and not aspect else []
    if len(topical) < MIN_THEMES:
        topical = []
    said_by: dict[int, list] = {}  # a topic's statements name one of its phrases
    for t, us, phrases in topical:
        said_by[id(t)] = [phrase_pattern(x) for x in phrases]
        kept.append(t)
        own_units.append(us)
        labels.append(label_phrases(t.topic))
        breadth.append(breadth_key(t.coverage))
        taken.update(phrase_key(x) for x in label_phrases(t.topic))
    for t in pooled:
        # its label from the phrases of the units it is discussed in, against their centroid, before its
        # statements are chosen (a corpus-wide question's statements are those nearest the label)
        mine = [u.chunk_id for u in units.get(t.report, []) if u.doc_id in set(t.doc_ids)] or \
            [u.chunk_id for u in units.get(t.report, [])]
        vs = [_unit_norm(uvec[c]) for c in mine if c in uvec]
        trial = set(taken)
        picked = relabel(t, ix, embedder, mine, np.mean(vs, axis=0) if vs else None, taken=trial,
                         core=[c for c in mine if owner.get(c) == t.report])
        phrases = picked or label_phrases(t.topic)
        # a corpus-wide answer lists distinct themes: one saying what a more widely discussed one says gives way
        # to the next candidate
        if wide and same_theme(phrases, labels, embedder):
            continue
        taken = trial
        if picked:
            relabelled.add(t.report)
        community_breadth = breadth_key(t.coverage)
        if wide:
            # a corpus-wide answer's "in N of M documents" counts the documents its label's phrases are in, and
            # its statements come from those
            # (none: the documents it is quoted from, :func:`cover_quoted`)
            said_in = label_documents(ix, phrases)
            cov = coverage(said_in, ix.docs)
            whole = cov.get("works_of", cov["of"])
            # a label few documents name is no theme of the whole corpus, however far its community reaches
            # (a show's intro names "tech world" in every episode; its body, in two)
            if whole >= WIDE_FLOOR_DOCS and reach(cov) < WIDE_FLOOR_SHARE * whole:
                continue
            t.doc_ids = t.community_docs = said_in
            t.coverage = cov
            t.passages = label_units(ix, phrases)
        kept.append(t)
        breadth.append(community_breadth)  # only a kept theme's: the list stays aligned with ``kept``
        own_units.append(units.get(t.report, []))
        labels.append(phrases)
        if len(kept) >= keep:
            break
    # the kept themes that are topics running through the corpus, or shared by its works: no community's
    running: set[int] = {id(t) for t, _, _ in topical}
    if wide:
        added = running_themes(ix, reports, scores, list(zip(kept, labels)), taken, embedder)
        for t, us in added:
            running.add(id(t))
            kept.append(t)
            own_units.append(us)
            breadth.append(breadth_key(t.coverage))
        missing = sorted({u.chunk_id for _, us in added for u in us} - set(uvec))
        uvec.update(ix.unit_vectors(missing))
        if not aspect:  # a running topic among the others by how widely it is discussed
            at = sorted(range(len(kept)), key=lambda i: (tuple(-x for x in breadth[i]), i))
            kept, own_units = [kept[i] for i in at], [own_units[i] for i in at]
    anchors = {}
    if embedder is not None and (wide or qv is None):
        # the report's summary restates the stored label, which a new one replaces
        texts = [f"{t.topic}: {', '.join(t.concepts)}" if id(t) in running else
                 t.topic if t.report in relabelled else f"{t.topic}. {by_report[t.report].get('summary') or ''}"
                 for t in kept]
        vecs = _embed(texts, embedder) if texts else None
        anchors = {i: vecs[i] for i in range(len(kept))} if vecs is not None else {}
    elif qv is not None:
        anchors = {i: qv for i in range(len(kept))}
    said = _embed(list(aspect), embedder) if aspect and embedder is not None and wide else None

    def _said(v) -> float:
        return ASPECT_WEIGHT * float((said @ _unit_norm(v)).max()) if said is not None else 0.0

    def work_of(doc_id: str) -> str:  # the parts of one work (an episode) are one voice: spread over works
        d = ix.doc_by_id.get(doc_id)
        return d.work if d is not None and d.work is not None else doc_id

    # a series' corpus-wide themes are what its guests say: the hosts' framing (introductions, recaps) is no theme
    hosts = {h.casefold() for h in corpus_hosts(ix)} if wide else set()
    cands: list[tuple[int, Statement]] = []  # (theme index, statement)
    for ti, t in enumerate(kept):
        inside = set(t.doc_ids)
        # A corpus-wide question quotes where the theme's terms are; a focused one, the unit nearest the question
        # among all the community's units (the question's evidence need not repeat the label's terms).
        us = ([u for u in own_units[ti] if u.doc_id in inside] if wide else []) or own_units[ti]
        a = anchors.get(ti)
        if a is not None:
            # asked for one side of the corpus: its units saying that side are read first
            ranked = sorted(us, key=lambda u: (-(float(_unit_norm(uvec[u.chunk_id]) @ a) + _said(uvec[u.chunk_id])
                                                 if u.chunk_id in uvec else -1.0), u.number))
        else:
            ranked = list(us)
        if not focused:  # a work's opening and closing parts (its intro and outro) are read last
            ranked.sort(key=lambda u: ix.at_edge(u.doc_id, u.unit))
        # Spread over the theme's works (documents): the best unit of each work, in rank order (statements come
        # from distinct documents, which the theme's sentence names).
        seen, spread = set(), []
        for u in ranked:
            if work_of(u.doc_id) not in seen:
                seen.add(work_of(u.doc_id))
                spread.append(u)
        if focused:  # a focused question reads the units nearest it, wherever they sit
            ranked = ranked[:UNITS_PER_THEME]
        else:
            limit = UNITS_PER_THEME * 2 if temporal else UNITS_PER_THEME + 1
            # a theme of few documents reads more of each (a one-file corpus has one document)
            ranked = (spread + [u for u in ranked if u not in spread])[:limit]
        # A theme labelled by names alone is about them: its statements name one of them (a focused question's
        # evidence need not name them).
        named_only = [] if t.concepts or focused else [x.strip() for x in t.topic.split(",") if x.strip()]
        for u in ranked:
            for s in prose_sentences(u.text):
                s = spoken(s)
                if not _statement_ok(s, ix) or (named_only and not names_named(s, named_only)) or \
                        (id(t) in said_by and not any(p.search(s) for p in said_by[id(t)])):
                    continue
                who = ix.speaker(u, s)
                if who and who.casefold() in hosts:
                    continue
                cands.append((ti, Statement(s, u.number, u.doc_id, u.unit, ix.doc_by_id[u.doc_id].n_units,
                                            speaker=who)))
    vecs = None
    if cands and embedder is not None:  # a unit shared by several themes gives the same sentences: embed each once
        uniq = list(dict.fromkeys(c[1].text for c in cands))
        at = {t: i for i, t in enumerate(uniq)}
        u = _embed(uniq, embedder)
        vecs = u[[at[c[1].text] for c in cands]]
    on_aspect = (vecs @ said.T).max(axis=1) if said is not None and vecs is not None else np.zeros(len(cands))
    rel = []
    for k, (ti, st) in enumerate(cands):
        a = anchors.get(ti)
        cos = float(vecs[k] @ a) if vecs is not None and a is not None else 0.0
        short = short_penalty(st.text)
        # A focused question ranks by nearness to it alone, unless it asks for figures.
        weight = content_weight(st.text, kept[ti].concepts, figures) if not focused or figures else 0.0
        edge = EDGE_PENALTY if ix.at_edge(st.doc_id, st.unit) else 0.0
        # a running topic is no community: no member's name makes its statement relevant
        ents = None if id(kept[ti]) in running else by_report[kept[ti].report].get("entities")
        rel.append(relevance(cos, st.text, ents) - short + weight - edge
                   + ASPECT_WEIGHT * float(on_aspect[k]))
        st.rel = rel[-1]
    mmr = _Mmr(vecs)
    per = PER_TEMPORAL_THEME if temporal else PER_THEME
    used: list[str] = []
    out: list[Theme] = []
    order = list(range(len(kept)))
    live = set(range(len(cands)))
    pv = _probe_vectors(probes, embedder) if not wide and qv is not None and vecs is not None else None
    if pv is not None:  # a question with a topic: a statement no nearer it than an off-topic probe is not on it
        off = (vecs @ pv.T).max(axis=1)
        # unless none is (an embedder too coarse for the probes): the question passed the helpfulness floor
        live = {k for k in live if float(vecs[k] @ qv) - float(off[k]) >= PROBE_GAP} or live
    if not wide and rel:
        # A question with a topic: a statement far below the best one does not answer it, and the themes whose
        # statements answer it best come first.
        top = max(rel)
        best = {ti: max((rel[k] for k in live if cands[k][0] == ti), default=None) for ti in order}
        order = sorted((ti for ti in order if best[ti] is not None), key=lambda ti: (-best[ti], ti))
        # Under MIN_THEMES themes within the margin, the next ones within twice the margin are read too.
        within = [ti for ti in order if best[ti] >= top - STATEMENT_MARGIN]
        more = [ti for ti in order if top - 2 * STATEMENT_MARGIN <= best[ti] < top - STATEMENT_MARGIN]
        order = within + more[: max(0, MIN_THEMES - len(within))]
        bar = {ti: (top - STATEMENT_MARGIN if ti in within else top - 2 * STATEMENT_MARGIN) for ti in order}
        live = {k for k in live if cands[k][0] in bar and rel[k] >= bar[cands[k][0]]}
        if len(order) <= 2 and not focused:  # one or two themes answer it: each gives as many statements as over time
            per = max(per, PER_TEMPORAL_THEME)
    for ti in order:
        t = kept[ti]
        left = [k for k, (i, _) in enumerate(cands) if i == ti and k in live]
        docs_used: set = set()
        # Statements come from distinct works (documents); a theme whose candidates hold fewer documents than
        # PER_THEME repeats one up to PER_THEME statements (never over time, unless the corpus is one document).
        while left and len(t.statements) < per:
            fresh = left if focused else [j for j in left if work_of(cands[j][1].doc_id) not in docs_used] or (
                left if (not temporal or len(ix.docs) == 1) and len(t.statements) < PER_THEME else [])
            if not fresh:
                break
            # a question about amounts or change quotes the statements holding figures or dates first
            k = max(fresh, key=lambda j: (has_figure(cands[j][1].text) if figures else 0, mmr.value(j, rel[j]), -j))
            left.remove(k)
            st = cands[k][1]
            if any(repeats(st.text, u, figures) for u in used):
                continue
            t.statements.append(st)
            used.append(st.text)
            docs_used.add(work_of(st.doc_id))
            mmr.add(k)
        if t.statements:
            if temporal:
                t.statements.sort(key=lambda s: (ix.doc_by_id[s.doc_id].pos, s.unit))
            t.reports = cited_reports(t, ix, [r["community_id"] for r in reports], embedder)
            out.append(t)
        if len(out) >= max_themes:
            break
    if said is not None:  # the themes whose statements say the aspect most come first
        best = {id(t): max((float(on_aspect[k]) for k, (ti, st) in enumerate(cands) if kept[ti] is t
                            and any(st is x for x in t.statements)), default=0.0) for t in out}
        out.sort(key=lambda t: -best[id(t)])
    out = cover_quoted(out, ix)
    if wide:
        every = ix.all_units()
        for t in out:
            t.names = names_beside(t, ix, (by_report.get(t.report) or {}).get("entities") or [], every)
    if wide and said is None:  # quotes may widen a theme's figure: the order follows the figure shown
        out.sort(key=lambda t: (tuple(-x for x in breadth_key(t.coverage)), -t.coverage.get("passages", 0)))
    return out


def running_themes(ix: ThemeIndex, reports: list[dict], scores: dict, earlier: list[tuple[Theme, list[str]]],
                   taken: set[str], embedder) -> list[tuple[Theme, list]]:
    """``[(theme, its text units)]``, no statement yet: one theme per topic running through the corpus
    (:func:`slmgraph.query.theme_labels.running_words`: a word discussed in nearly every document, which the
    communities' labels cannot show, as document-frequency weights give it none; and
    :func:`slmgraph.query.theme_labels.running_names`: a named subject, a policy or a plan, discussed so), unless an ``earlier`` theme
    (``(theme, its label's phrases)``) whose label holds the word or says what it says (:func:`same_theme`) is
    in as many documents already -- a narrower one ("water supply", in 2 documents) is an aspect of it and
    stays; labelled by the word, its compounds as its concepts, counted in the documents holding it, and filed
    under the community of the level (``reports``) owning most of its units. Its word is added to ``taken``."""
    from collections import Counter

    from slmgraph.store.corpus_stats import phrase_key

    out = []
    ids = [r["community_id"] for r in reports]
    for word, compounds, _ in running_words(ix) + running_names(ix):
        key = phrase_key(word)
        docs = label_documents(ix, [word])
        if any(t.coverage["documents"] >= len(docs) and (
                any(key in phrase_key(p).split() for p in phrases) or same_theme([word], [phrases], embedder))
               for t, phrases in earlier):
            continue
        pat = phrase_pattern(word)
        us = [u for u in ix.all_units() if pat.search(u.text)]
        owners = Counter(ix.unit_owners([u.chunk_id for u in us], ids, scores).values())
        if not us or not owners:
            continue
        t = Theme(owners.most_common(1)[0][0], word, coverage(docs, ix.docs), docs, [],
                  concepts=compounds[:KEY_CONCEPTS], community_docs=docs, passages=[u.chunk_id for u in us])
        taken.add(key)
        out.append((t, us))
    return out


def cited_reports(t: Theme, ix: ThemeIndex, ids: list[int], embedder) -> list[int]:
    """The community reports ``t`` cites, in its statements' order: for each statement, of the communities of
    ``ids`` (the level's) with a member its text unit mentions, the one whose stored report vector is nearest
    the theme's label and the statement (cosine; ``t.report`` first on ties and without vectors or an
    embedder) -- a theme cites the reports its quotes come from that are about what it says, never one its
    quotes are not about."""
    if not t.statements:
        return [t.report]
    from slmgraph.query.answer import unit_numbers

    chunk_of = {n: c for c, n in unit_numbers(ix.store).items()}
    chunks = sorted({chunk_of[s.source] for s in t.statements if s.source in chunk_of})
    mentioned: dict[str, set] = {}
    if chunks and ids:
        qc, qi = ",".join("?" * len(chunks)), ",".join("?" * len(ids))
        for c, cid in ix.store.con.execute(f"""
                SELECT DISTINCT u.chunk_id, m.community_id FROM entity_text_units u JOIN community_members m
                USING (entity_id) WHERE u.chunk_id IN ({qc}) AND m.community_id IN ({qi})""",
                                           chunks + list(ids)).fetchall():
            mentioned.setdefault(c, set()).add(cid)
    every = sorted({x for v in mentioned.values() for x in v} | {t.report})
    qr = ",".join("?" * len(every))
    vec = {int(k): _unit_norm(v) for k, v in ix.store.con.execute(
        f"SELECT item_id, vector FROM embeddings WHERE kind = 'report' AND item_id IN ({qr})",
        [str(x) for x in every]).fetchall()} if embedder is not None else {}
    said = _embed([f"{t.topic}. {s.text}" for s in t.statements], embedder) if vec else None
    out = []
    for i, s in enumerate(t.statements):
        cands = sorted(mentioned.get(chunk_of.get(s.source), set()) | {t.report}, key=lambda x: (x != t.report, x))
        if said is not None:
            cands.sort(key=lambda x: -float(vec[x] @ said[i]) if x in vec else 1.0)
        out.append(cands[0])
    return list(dict.fromkeys(out))


def names_beside(t: Theme, ix: ThemeIndex, members: list[str], units: list | None = None,
                 k: int = KEY_NAMES) -> list[str]:
    """Up to ``k`` of a theme's community ``members`` that are no concept, most tied to its label first: those
    named in the most prose sentences of the theme's documents (``t.doc_ids``) that hold one of its label's
    phrases; a member no such sentence names is left out, so "most tied to" never names someone the theme's
    own sentences never bring up. [] when no member is named beside the label. ``units``: :meth:`ThemeIndex.all_units`
    when the caller has them."""
    known = ix.concept_names
    cands = list(dict.fromkeys(_shown(str(e)) for e in members if e and str(e).casefold() not in known
                               and str(e).casefold() not in t.topic.casefold() and not junk(str(e), False)))
    if not cands or not t.doc_ids:
        return []
    pats = [phrase_pattern(p) for p in label_phrases(t.topic)]
    names = {n: re.compile(r"(?<!\w)" + re.escape(n) + r"(?!\w)") for n in cands}
    counts: dict[str, int] = {}
    docs = set(t.doc_ids)
    for u in ix.all_units() if units is None else units:
        if u.doc_id not in docs or not any(p.search(u.text) for p in pats):
            continue
        for sent in prose_sentences(u.text):
            if any(p.search(sent) for p in pats):
                for n, pat in names.items():
                    if pat.search(sent):
                        counts[n] = counts.get(n, 0) + 1
    out: list[str] = []
    for n in sorted(counts, key=lambda n: (-counts[n], cands.index(n))):
        # "Rivera" beside "Sam Rivera" is the same person named twice
        if not any(set(n.split()) <= set(m.split()) or set(m.split()) <= set(n.split()) for m in out):
            out.append(n)
    return out[:k]


def cover_quoted(themes: list[Theme], ix: ThemeIndex) -> list[Theme]:
    """``themes`` with each one's documents and coverage widened to the documents its statements quote: a
    theme is discussed at least where it is quoted, so its reach never claims fewer documents than it shows."""
    for t in themes:
        quoted = {s.doc_id for s in t.statements if s.doc_id in ix.doc_by_id}
        own = set(t.community_docs) if t.community_docs else set(t.doc_ids)
        if not quoted <= set(t.doc_ids):
            t.doc_ids = sorted(set(t.doc_ids) | quoted,
                               key=lambda d: ix.doc_by_id[d].pos if d in ix.doc_by_id else 10**9)
        if not quoted <= own:
            t.coverage = coverage(sorted(own | quoted), ix.docs)
    return cover_passages(themes, ix)


#: A theme discussed in one document of at least this many text units states its reach by that document's
#: passages: "in 1 of 3 documents" says nothing where one long document holds the corpus.
PASSAGE_MIN_UNITS = 5


def cover_passages(themes: list[Theme], ix: ThemeIndex) -> list[Theme]:
    """``themes`` with the coverage of each one discussed in a single document of :data:`PASSAGE_MIN_UNITS` text
    units or more given ``"passages"`` (how many of that document's units its label's phrases are in --
    ``t.passages``, else its community's units -- or it is quoted from), ``"passages_of"`` (the document's
    units) and ``"from"``/``"to"`` (the first and last of them, 1-based); other themes are left as they are."""
    positions = None
    for t in themes:
        cov = t.coverage
        counted = set(t.community_docs or t.doc_ids) | {s.doc_id for s in t.statements}
        counted &= set(ix.doc_by_id)
        if cov.get("documents") != 1 or "works" in cov or len(counted) != 1:
            continue
        doc = ix.doc_by_id[next(iter(counted))]
        if doc.n_units < PASSAGE_MIN_UNITS:
            continue
        if positions is None:
            positions = {u.chunk_id: (u.doc_id, u.unit) for u in ix.all_units()}
        chunks = t.passages or [u.chunk_id for u in ix.units([t.report]).get(t.report, [])]
        at = {positions[c][1] for c in chunks if c in positions and positions[c][0] == doc.doc_id}
        at |= {s.unit for s in t.statements if s.doc_id == doc.doc_id}
        if at:
            t.coverage = {**cov, "passages": len(at), "passages_of": doc.n_units, "from": min(at), "to": max(at)}
    return themes




def theme_answer(store, question: str, reports: list[dict], scores: dict, question_vec, embedder, *,
                 wide: bool = False, scope: str = "", writer=None, pool: list[dict] | None = None,
                 probes: list[str] | None = None, facets: list | None = None,
                 aspect: tuple[str, list[str]] | None = None, parse=None) -> tuple[str, list[Theme], ThemeIndex]:
    """``(answer text, themes, index view)`` of a global answer by theme (see the module doc); the text is ""
    when no theme has a statement. A question that lists facets (``facets``, from
    :func:`slmgraph.query.theme_facets.question_facets`; neither corpus-wide nor about change over time) is
    answered facet by facet (:mod:`slmgraph.query.theme_facets`) when any facet has a statement; the themes are
    then the facets with statements.

    Args:
        reports: the selected reports (with ``wide``: every report of the level), dicts with ``entities``.
        scores: ``community_id -> helpfulness 0-100``.
        writer: ``theme -> sentence or None``, the model's grounded sentence for a theme where the answer
            policy lets the model write it (None, or a None result: the template's sentences).
        pool, probes: as :func:`build_themes`.
        aspect: ``(aspect word, the sentences saying it)`` of a corpus-wide question asking for one side of the corpus
            (:func:`slmgraph.query.route.corpus_aspect`): its sentences rank the statements (:func:`build_themes`).
        parse: a spaCy pipeline with a parser (:func:`slmgraph.query.theme_facets.parse_pipeline`): a faceted
            answer then says, in its speakers' words, what each facet's sentences say the focus does
            (:func:`slmgraph.query.theme_facets.focus_roles`); None: it does not.
    """
    ix = ThemeIndex(store)
    temporal = is_temporal(question)
    # A question about change over time asks for one timeline; the things it lists are its topic
    # (docs/decisions.md: facets of a listing question).
    if facets and not wide and not temporal and embedder is not None:
        focus, focus_words = focus_of(question, facets, ix)
        # a question about the guests asks for their words before the host's
        hosts = {h.title() for h in corpus_hosts(ix)} if _GUESTS.search(question or "") else set()
        # a list of the guests' fields asks for those guests' words (docs/decisions.md: guests by field)
        guests = field_guests(ix, facets, embedder) if asks_fields(question, facets[0].label) else {}
        found = facet_themes(ix, facets, embedder, probes=probes, temporal=temporal, owner_of=lambda chunks: ix.unit_owners(
            chunks, [r["community_id"] for r in (pool or reports)], scores), focus=focus, hosts=hosts, guests=guests)
        for t in found:
            t.focus_words = focus_words
        if not guests:  # facets mostly silent on the focus: what the corpus says of it whatever the facet
            extra = focus_at_large(ix, found, facets, focus, focus_words, embedder, probes=probes, hosts=hosts,
                                   owner_of=lambda chunks: ix.unit_owners(
                                       chunks, [r["community_id"] for r in (pool or reports)], scores))
            if extra is not None:
                found.append(extra)
        if guests:  # fields compared: what each field's guests discuss that the other guests do not
            field_subjects(found, ix, corpus_works(ix, embedder))
            for fi, t in enumerate(found):  # a field no guest stands out for is answered by its word: said so
                t.no_guest = fi not in guests and fi < len(facets)
        focus_roles(found, focus, parse)  # what the facets' sentences say the focus does
        if guests:  # what each field's guests say they do
            fields_doing(found, parse)
        if any(t.statements for t in found):
            for t in found:
                if t.statements:
                    t.opening = facet_opening(t, ix)
                    written = writer(t) if writer is not None else None
                    if written:
                        t.opening = f"{written} {t.opening}"
            return render_facets(found, ix, scope=scope), [t for t in found if t.statements], ix
    themes = build_themes(ix, reports, scores, question_vec, embedder, wide=wide, temporal=temporal,
                          figures=asks_figures(question), question=question, pool=pool, probes=probes,
                          aspect=aspect[1] if wide and aspect else None)
    for t in themes:
        t.opening = aspect_opening(t) or template_opening(t, ix, question)
        written = writer(t) if writer is not None else None
        if written:
            t.opening = f"{written} {t.opening}"
    if not themes:
        return "", [], ix
    text = render_themes(themes, ix, wide=wide, temporal=temporal, scope=scope,
                         aspect=aspect[0] if wide and aspect else "")
    if is_aspects(themes):  # the aspects' own opening sentence replaces the overview paragraph
        text = aspects_overview(themes, ix) + text[text.find("\n\n"):]
    missing = absent_phrase(question, ix) if not wide and asks_mentions(question) else None
    unnamed: list[str] = []
    if not wide and not missing:
        unnamed, unheld = unnamed_parts(question, ix)
        # a word of the subject no passage holds, nor any word near it ("schools"): the rest is only the nearest
        unnamed = unnamed or [w for w in unheld if not near_words(w.casefold(), ix, embedder)]
    if missing or unnamed:  # what the speakers say of a thing the corpus never names: the themes are only the nearest
        said = f"\u201c{missing}\u201d" if missing else " or ".join(f"\u201c{w}\u201d" for w in unnamed)
        text = f"No passage of the corpus names {said}; what follows is the nearest it comes. {text}"
    if wide and not temporal and not aspect:  # what the whole corpus discusses includes how that changed
        arc = arc_sentence(ix)
        if arc:
            cut = text.find("\n\n")
            text = f"{text[:cut]}\n\n{arc}{text[cut:]}" if cut >= 0 else f"{text}\n\n{arc}"
        else:  # a corpus of distinct works: what each discusses on its own
            text = with_works(text, corpus_works(ix, embedder), corpus_identity(ix))
    return text, themes, ix


def field_subjects(themes: list[Theme], ix: ThemeIndex, works: list) -> None:
    """Set ``t.subjects`` of each field facet with voices (``t.voices``) to the subjects of its works
    (:func:`slmgraph.query.theme_works.corpus_works`: the noun phrases a work discusses and few others do), at most
    :data:`FIELD_SUBJECTS`, a work's own order, the facet's works in corpus order; ``[]`` where ``works`` lists none of
    its works."""
    by_title = {w.title: w for w in works}
    for t in themes:
        if not getattr(t, "voices", None):
            continue
        titles = dict.fromkeys(ix.doc_by_id[d].work or ix.doc_by_id[d].name or d for d in t.doc_ids)
        shown = [s for x in titles if x in by_title for s, _ in by_title[x].subjects]
        # a subject that is the field's own word says nothing of how the field differs
        t.subjects = [s for s in dict.fromkeys(shown) if word_stem(s.casefold()) != word_stem(t.topic.casefold())
                      ][:FIELD_SUBJECTS]


def with_works(text: str, works: list, lead: str = "") -> str:
    """``text`` with the works' overview sentence after its opening ``lead`` (what the corpus is), else after its
    opening paragraph, and their section before its documents cited (:mod:`slmgraph.query.theme_works`);
    ``text`` itself without works."""
    if not works:
        return text
    said = works_overview(works)
    if lead and text.startswith(lead):
        text = f"{lead} {said}{text[len(lead):]}"
    else:
        cut = text.find("\n\n")
        text = f"{text[:cut]} {said}{text[cut:]}" if cut >= 0 else f"{text} {said}"
    at = text.find("\n\nDocuments cited:")
    at = at if at >= 0 else text.find("\n\nSources:")
    section = works_section(works)
    return f"{text[:at]}\n\n{section}{text[at:]}" if at >= 0 else f"{text}\n\n{section}"


def spread_units(store, ranked: list[int], k: int) -> list[int]:
    """Up to ``k`` of the text units ``ranked`` (unit numbers, best first), spread across communities and
    documents, for a question about the whole corpus: the root level's communities take turns, the one over
    the most text units first, each giving its best-ranked unit from a document not yet used; units of no
    community come last. Fewer than ``k`` when the documents run out.
    """
    from slmgraph.query.answer import unit_numbers

    if k <= 0 or not ranked:
        return []
    numbers = unit_numbers(store)
    want = set(ranked)
    chunk_of = {n: c for c, n in numbers.items() if n in want}
    doc_of = {}
    rows = store.con.execute("SELECT chunk_id, doc_id FROM text_units").fetchall()
    by_chunk = dict(rows)
    for n, c in chunk_of.items():
        doc_of[n] = by_chunk.get(c)
    groups: dict = {}
    for cid, chunk in store.con.execute("""
            SELECT DISTINCT m.community_id, e.chunk_id FROM community_members m JOIN communities c USING (community_id)
            JOIN entity_text_units e USING (entity_id) WHERE c.level = 0""").fetchall():
        if chunk in by_chunk:
            groups.setdefault(cid, set()).add(chunk)
    rank = {n: i for i, n in enumerate(ranked)}
    queues = []
    for cid, chunks in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        q = sorted((numbers[c] for c in chunks if numbers.get(c) in rank), key=rank.get)
        if q:
            queues.append(q)
    queues.append(list(ranked))  # units of no community, and whatever the communities left
    chosen: list[int] = []
    docs_used: set = set()
    while len(chosen) < k and any(queues):
        for q in queues:
            while q and (q[0] in chosen or doc_of.get(q[0]) in docs_used):
                q.pop(0)
            if q and len(chosen) < k:
                n = q.pop(0)
                chosen.append(n)
                docs_used.add(doc_of.get(n))
    return chosen
