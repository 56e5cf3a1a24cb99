"""Facets of a question: a global question that enumerates groups or things ("How do guests from robotics,
neuroscience, entertainment and online communities differ ...?", "Compare Q1 and Q3", "What do Alice and Bob
each say about X?") is answered facet by facet, in the question's order (no model).

* **parse** (:func:`question_facets`): the question's coordinated noun phrases from spaCy's dependency parse
  (a head noun and its ``Token.conjuncts``, or two nouns joined by the preposition "versus"); each facet is
  the conjunct's own phrase (its subtree without the other conjuncts, the coordinator, punctuation, a
  determiner or a possessive). The longest list of the question is its facets. No list: no facets. Two
  phrases joined by "or" alone ("personal anecdotes or stories", "other companies or industry rivals") are
  one topic said two ways, no list; a list that is one entity of the index as a whole ("Johnson and
  Johnson") is one name, no list;
* **gather** (:func:`facet_themes`): for each facet, the facet's question -- the question with its list
  replaced by the facet alone ("How do guests from robotics differ in how they approach building new
  technology?") -- is embedded; the text units that name the facet (every content word of it, as a word's
  stem opening a word of the text: "robotics" names "robotics", "online communities" names "online
  community"), nearest the facet's question first (stored unit vectors), up to :data:`FACET_UNITS`, give
  their sentences that name the facet themselves and pass the quote rules of every theme
  (:func:`slmgraph.query.theme_model._statement_ok`: whole sentences, no boilerplate, no framing); a
  sentence is kept within :data:`slmgraph.query.theme_model.EVIDENCE_MARGIN` of the facet's best and
  :data:`slmgraph.query.theme_model.PROBE_GAP` nearer the facet's question than any off-topic probe, up
  to :data:`PER_FACET` by maximal marginal relevance, one per text unit, none quoted under an earlier
  facet; over time (:func:`slmgraph.query.theme_model.is_temporal`) in corpus order;
* **focus** (:func:`focus_of`): the question's specific topic words outside its list ("the role of artificial
  intelligence in science and medicine": "artificial intelligence", and "AI" where the corpus writes it) are
  its focus; with one, a facet quotes only sentences naming the focus, read first from the units naming the
  facet and the focus, then from the units naming the focus nearest the facet's question (a facet said in other
  words), those not naming the facet kept only when nearer its question than any other facet's; a question
  about the guests quotes a host only where no one else's sentence will do;
* **write** (:func:`facets_overview`, :func:`render_facets`): one section per facet, its label, reach (the
  documents naming it) and statements with citations, as every theme's; a facet with no statement gets one
  line saying so ("No passage on robotics was found."), and the answer opens with one sentence saying
  which facets have evidence and how much.
"""


from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from slmgraph.query.clauses import subject_clause as _subject_clause
from slmgraph.query.documents import coverage
from slmgraph.query.extractive import _SPEAKER, _Mmr, _embed, prose_sentences, relevance
from slmgraph.query.theme_model import (
    EVIDENCE_MARGIN, PROBE_GAP, Statement, Theme, ThemeIndex, _statement_ok, _unit_norm, near_words, repeats,
    spoken, statement_penalty, statement_works, word_stem,
)
from slmgraph.query.theme_labels import phrase_pattern
from slmgraph.query.theme_lead import _q, speakers_first
from slmgraph.query.theme_render import _cap, _join, documents_cited, reach_text, statement_line

#: Part-of-speech tags of a list's items: nouns, names and numbers ("Q1", "2023").
NOMINAL = frozenset({"NOUN", "PROPN", "NUM"})
#: The preposition that lists two things ("robotics versus neuroscience"); spaCy parses it as a preposition.
VERSUS = frozenset({"versus", "vs", "vs.", "v.", "v"})
#: Children that belong to the list, or to no one item of it: left out of an item's phrase.
_NOT_ITEM = frozenset({"conj", "cc", "punct", "preconj", "appos", "relcl", "acl", "prep", "det", "poss", "case",
                       "predet"})
#: Text units read per facet (nearest its question first) and statements quoted per facet.
FACET_UNITS = 20
PER_FACET = 3
#: Words of a comparing question that frame it rather than name its subject ("the role of", "differ in how they
#: approach", "vary by the stage of"): never its focus.
_FOCUS_FRAME = frozenset("""role roles approach approaches approaching differ differs difference differences vary
varies variation compare compared comparison stage stages impact impacts significance perceive perceived view views
describe described generally think thinks feel feels discussion discussions discuss discussed conversation
conversations profession professions occupation occupations job jobs field fields trade trades background
backgrounds discipline disciplines expertise opinion opinions""".split())
#: A request for an account ("I want to ask you to talk about AI"): no statement of its own.
_ASKS = re.compile(r"(?i)\bask you\b|^\W*(tell|talk|describe|walk) (us|me)\b")
#: What naming the facet itself adds to a focused sentence's relevance, over one that names only the focus.
FACET_BONUS = 0.1
#: What a facet's sentences say the focus does (:func:`focus_roles`): its most relevant sentences parsed, the
#: clauses kept (words), and the most shown per facet.
ROLE_SENTENCES = 30
ROLES = 3
#: A facet's sentences on the focus are most of a comparison's when at least this many times the next facet's.
MOSTLY = 2
#: A focus phrase's acronym counts when the corpus writes it, in capitals, at least this many times ("AI").
ACRONYM_USES = 3

_NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


@dataclass
class Facet:
    """One item of the question's list: ``label`` as written ("online communities"), ``words`` its content
    words, each as written and as its stem (``("communities", "community")``), ``question`` the question asked
    of it alone."""

    label: str
    words: tuple
    question: str
    #: an item of a list in parentheses ("(startup, mid-size, large)"): a kind the question names exactly, quoted
    #: only where a sentence names it, never said in other words
    exact: bool = False


def parse_pipeline(name: str | None):
    """The spaCy pipeline ``name`` with its dependency parser (loaded once per process; the NER stage's copy
    leaves the parser out), or None when ``name`` is None, cannot be loaded or has no parser."""
    return _parse_pipeline(name) if name else None


def _load(name: str):
    try:
        import spacy

        nlp = spacy.load(name, exclude=["ner"])
    except (ImportError, OSError, ValueError):
        return None
    return nlp if "parser" in nlp.pipe_names else None


_CACHE: dict = {}


def _parse_pipeline(name: str):
    if name not in _CACHE:
        _CACHE[name] = _load(name)
    return _CACHE[name]


def pipeline_name(setting: str) -> str | None:
    """The spaCy pipeline a question is parsed with for ``--ner-model`` ``setting``: the installed default for
    ``auto``, None for ``none``, else the setting itself."""
    from slmgraph.indexing.stages.ner import installed_pipeline

    s = (setting or "auto").strip()
    if s.lower() == "none":
        return None
    return installed_pipeline() if s.lower() == "auto" else s


#: A question that may hold a list: a comma, a coordinator or "versus" (the parser is loaded only then).
_MAY_LIST = re.compile(r"(?i),|\b(and|or|versus|vs)\b")


def _phrase(tok) -> list:
    """The tokens of ``tok``'s own phrase: its subtree without the children of :data:`_NOT_ITEM` and theirs."""
    drop = set()
    for c in tok.children:
        if c.dep_ in _NOT_ITEM:
            drop.update(t.i for t in c.subtree)
    return [t for t in tok.subtree if t.i not in drop]


def _listed_appos(doc, tok) -> bool:
    """True when ``tok`` is an apposition that opens a coordination after a comma ("the plumber, the teacher and the
    farmer"): an item of its head's list, not another name for it ("Kevin Scott, the host")."""
    return (tok.dep_ == "appos" and tok.pos_ in NOMINAL and tok.head.pos_ in NOMINAL and bool(tok.conjuncts)
            and tok.head.i < tok.i and any(t.text == "," for t in doc[tok.head.i + 1:tok.i]))


def _items(doc) -> list[list]:
    """Every list of ``doc``: each a list of its items' head tokens, in order."""
    out = []
    for tok in doc:
        # a gerund listed with nouns is a field as they are ("baking, surgery and carpentry")
        gerund = tok.tag_ == "VBG" and any(c.pos_ in NOMINAL for c in tok.conjuncts)
        if tok.dep_ == "conj" or (tok.pos_ not in NOMINAL and not gerund):
            continue
        # "the plumber, the teacher and the farmer": the parse hangs the second item on the first as an apposition
        if _listed_appos(doc, tok):
            continue
        appos = [c for c in tok.children if _listed_appos(doc, c)]
        items = [tok] + (sorted([appos[0]] + list(appos[0].conjuncts), key=lambda t: t.i) if appos else
                         sorted(tok.conjuncts, key=lambda t: t.i))
        if len(items) < 2:
            vs = [c for c in tok.children if c.lower_ in VERSUS]
            objs = [o for v in vs for o in v.children if o.dep_ == "pobj"]
            if not objs:
                continue
            items = [tok] + [objs[0]] + sorted(objs[0].conjuncts, key=lambda t: t.i)
        if any(t.pos_ not in NOMINAL and not (t.tag_ == "VBG" and t is tok and gerund) for t in items):
            continue
        joins = [c.lower_ for t in items for c in t.children if c.dep_ == "cc"]
        # "anecdotes or stories": one topic said two ways, not two things to answer apart
        if len(items) == 2 and joins and all(j == "or" for j in joins):
            continue
        out.append(items)
    return out


def facets_for(question: str, setting: str, is_entity=None) -> list[Facet]:
    """:func:`question_facets` of ``question`` parsed by the pipeline of the ``--ner-model`` ``setting``
    (:func:`pipeline_name`), loaded only when the question may hold a list (a comma, "and", "or", "versus")."""
    if not _MAY_LIST.search(question or ""):
        return []
    return question_facets(question, parse_pipeline(pipeline_name(setting)), is_entity)


def question_facets(question: str, nlp, is_entity=None) -> list[Facet]:
    """The facets of ``question`` (see the module doc), in its order; [] when it lists nothing, or ``nlp``
    (a spaCy pipeline with a parser) is None.

    Args:
        is_entity: ``text -> bool``, True when a list's whole text is one entity of the index
            ("Johnson and Johnson"): then it is a name, no list.
    """
    if nlp is None or not _MAY_LIST.search(question or ""):
        return []
    listed = _paren_list(question, nlp)
    if listed:
        return listed
    doc = nlp(question)
    best: list = []
    for items in _items(doc):
        phrases = [_phrase(t) for t in items]
        # an item holding a verb is a misparse ("robotics versus neuroscience approach building technology"); a
        # lone gerund listed with nouns is a field ("baking, surgery and carpentry")
        if any(t.pos_ in ("VERB", "AUX") and not (len(p) == 1 and t.tag_ == "VBG"
                                                  and any(x[-1].pos_ in ("NOUN", "PROPN") for x in phrases))
               for p in phrases for t in p):
            continue
        a = min(p[0].idx for p in phrases)
        b = max(p[-1].idx + len(p[-1]) for p in phrases)
        if is_entity is not None and is_entity(question[a:b]):
            continue
        labels = ["".join(t.text_with_ws for t in p).strip() for p in phrases]
        labels = list(dict.fromkeys(labels))
        if len(labels) >= 2 and (not best or len(labels) > len(best[0])):
            best = [labels, a, b]
    listed = _comma_list(question, doc)
    if listed and (not best or len(listed[0]) > len(best[0])):
        best = listed  # a parse that folds the list's items into one noun ("farming, music and software engineering")
    if not best:
        return []
    labels, a, b = best
    out = []
    for lab in labels:
        words = tuple((w, word_stem(w)) for w in dict.fromkeys(re.findall(r"[^\W_]+", lab.casefold()))
                      if w not in _stop())
        if words:
            out.append(Facet(lab, words, f"{question[:a]}{lab}{question[b:]}"))
    return out if len(out) >= 2 else []


#: A list in parentheses after a noun: "the stage of the company (startup, mid-size, large)".
_PAREN = re.compile(r"\(([^()]{3,120})\)")
#: Nouns a parenthesised list's items are kinds of, not what they modify ("the company's stage (startup, large)").
_DIMENSIONS = frozenset("stage stages size sizes type types kind kinds level levels phase phases category "
                        "categories".split())


def _paren_list(question: str, nlp) -> list[Facet]:
    """The facets of a list in parentheses (:data:`_PAREN`: two or more items of one to three words, split at commas,
    "and", "or"), which a dependency parse reads badly; an adjectival item ("large", "mid-size": an adjective, or
    hyphenated) is labelled with the noun the list follows ("large company"), skipping "of the", a possessive and
    a dimension word (:data:`_DIMENSIONS`); [] when the question has no such list."""
    m = _PAREN.search(question)
    if not m:
        return []
    items = [x.strip(" .;:") for x in re.split(r",|\band\b|\bor\b|/", m.group(1))]
    items = [x for x in items if x]
    if len(items) < 2 or any(not 1 <= len(x.split()) <= 3 for x in items):
        return []
    before = re.findall(r"[^\W_]+(?:'s)?", question[:m.start()].casefold())
    noun = ""
    for w in reversed(before):
        w = re.sub(r"'s$", "", w)
        if w in _DIMENSIONS or w in _stop():
            continue
        noun = w
        break
    out = []
    for x in items:
        last = [t for t in nlp("the " + x) if not t.is_punct][-1]
        modifier = "-" in x or last.pos_ == "ADJ"
        label = f"{x} {noun}" if modifier and noun else x
        words = tuple((w, word_stem(w)) for w in dict.fromkeys(re.findall(r"[^\W_]+", label.casefold()))
                      if w not in _stop())
        if words:
            out.append(Facet(label, words, f"{question[:m.start()]}({label}){question[m.end():]}", exact=True))
    return out if len(out) >= 2 else []


def _comma_list(question: str, doc) -> list | None:
    """``[labels, start, end]`` of the question's run of nouns and adjectives holding a comma and a closing "and" or
    "or" ("farming, music and software engineering"), split there, each item one to three words; None without
    one."""
    run: list = []
    best = None
    for tok in list(doc) + [None]:
        if tok is not None and (tok.pos_ in NOMINAL or tok.pos_ == "ADJ" or tok.text == ","
                                or (tok.dep_ == "cc" and tok.lower_ in ("and", "or"))):
            run.append(tok)
            continue
        while run and (run[-1].text == "," or run[-1].dep_ == "cc"):
            run.pop()
        if any(t.text == "," for t in run) and any(t.dep_ == "cc" for t in run):
            items, cur = [], []
            for t in run:
                if t.text == "," or t.dep_ == "cc":
                    if cur:
                        items.append(cur)
                    cur = []
                else:
                    cur.append(t)
            items.append(cur)
            if len(items) >= 3 and all(1 <= len(x) <= 3 for x in items) and (best is None or len(items) > len(best[0])):
                best = [[" ".join(t.text for t in x) for x in items], items[0][0].idx,
                        items[-1][-1].idx + len(items[-1][-1])]
        run = []
    return best


def _stop() -> frozenset:
    from slmgraph.names.forms import STOP

    return STOP


def _pattern(f: Facet):
    """One regex per content word of ``f``: what the word and its stem share, opening a word of the text (a
    quick test before :func:`names`)."""
    import os

    # "company" opens no "companies": a prefix ending in "y" is cut before it
    return [re.compile(r"(?<![^\W_])" + re.escape(re.sub(r"(?<=..)y$", "", os.path.commonprefix(list(w)))),
                       re.IGNORECASE) for w in f.words]


def names(text: str, f: Facet, pats=None) -> bool:
    """True when ``text`` names facet ``f``: every content word of it is a word of the text by its stem
    (:func:`slmgraph.store.corpus_stats.word_stem`: "communities" names "online community"; "Q1" is no "Q10")."""
    if not all(p.search(text) for p in (pats or _pattern(f))):
        return False
    said = {word_stem(w) for w in re.findall(r"[^\W_]+", text.casefold())}
    return all(stem in said for _, stem in f.words)


def facet_themes(ix: ThemeIndex, facets: list[Facet], embedder, *, probes: list[str] | None = None,
                 temporal: bool = False, owner_of=None, focus: list[frozenset] | None = None,
                 hosts: set[str] | None = None, guests: dict | None = None) -> list[Theme]:
    """One :class:`Theme` per facet, in the question's order (see the module doc): ``topic`` the facet's
    label, ``statements`` its quotes (none for a facet without evidence), ``coverage`` the documents naming
    it, ``report`` the community owning its best statement's text unit (None without one), ``facet`` True.

    Args:
        owner_of: ``[chunk ids] -> {chunk id: community id}``, the community each unit belongs to.
        focus: the question's focus (:func:`focus_of`'s alternatives). With one, the units naming the facet and
            the focus are read first, then the units naming the focus nearest the facet's question (the facet said
            in other words); only sentences naming the focus are quoted, those naming the facet too gaining
            :data:`FACET_BONUS`, the others kept only when nearer this facet's question than any other facet's.
            Where no sentence names the focus, the facet's own sentences are quoted and ``t.off_focus`` is True.
        hosts: speakers (as :func:`slmgraph.query.theme_model.speaker_of` writes them) quoted only where no one
            else's sentence will do: the hosts, when the question asks about the guests.
        guests: ``facet index -> (doc ids, voices)`` for a list of the guests' fields
            (:func:`slmgraph.query.theme_fields.field_guests`): such a facet reads its works' units only, nearest
            its question first, and quotes its voices only (a sentence with no speaker label before it in its unit
            only where none of theirs will do), whether or not a sentence names the field's word; its coverage is
            its works, and ``t.voices`` its voices.
    """
    focus = focus or []
    hosts = hosts or set()
    units = ix.all_units()
    uvec = ix.unit_vectors([u.chunk_id for u in units])
    qvecs = _embed([f.question for f in facets], embedder)
    pv = _embed(list(probes), embedder) if probes else None
    used: list[str] = []
    out = []
    from slmgraph.query.theme_kinds import _clip

    focused_units = [u for u in units if on_focus(u.text, focus)] if focus else []
    guests = guests or {}
    replies = _replies(ix)
    for fi, f in enumerate(facets):
        pats = _pattern(f)
        # a facet of one word is said in the corpus's other words for it too ("doctor" and "healthcare" of
        # "medicine"); what it covers is counted by its own word
        near = [] if f.exact or guests.get(fi) is not None or len(f.words) != 1 else [
            phrase_pattern(w) for w in near_words(f.label, ix, embedder)]
        on = lambda text, pats=pats, near=near: names(text, f, pats) or any(p.search(text) for p in near)  # noqa: E731
        qv = qvecs[fi]
        cosine = lambda u: float(_unit_norm(uvec[u.chunk_id]) @ qv) if u.chunk_id in uvec else -1.0  # noqa: E731
        field = guests.get(fi)
        if field is not None:
            own = set(field[0])
            voices = {v.casefold() for v in field[1]}
            naming = [u for u in units if u.doc_id in own]
            docs = sorted(own, key=lambda d: ix.doc_by_id[d].pos)
            ranked = sorted(naming, key=lambda u: (-cosine(u), u.number))[:FACET_UNITS]
        else:
            docs = sorted({u.doc_id for u in units if names(u.text, f, pats)}, key=lambda d: ix.doc_by_id[d].pos)
            # a field answered by its word quotes none of the other fields' guests
            others = set(guests.get(-1 - fi, ((), ()))[0])
            naming = [u for u in units if on(u.text) and u.doc_id not in others]
            # the units naming the facet and the focus first, then those naming the focus nearest the facet's
            # question (a facet is often said in other words: "medicine" as "doctors" and "diagnosis")
            both = sorted((u for u in naming if on_focus(u.text, focus)), key=lambda u: (-cosine(u), u.number))
            near_units = [] if f.exact else sorted((u for u in focused_units if not on(u.text)),
                                                   key=lambda u: (-cosine(u), u.number))
            rest = sorted((u for u in naming if not on_focus(u.text, focus)), key=lambda u: (-cosine(u), u.number))
            ranked = both[:FACET_UNITS] + near_units[:FACET_UNITS] + (rest[:FACET_UNITS] if len(both) < PER_FACET else [])
        t = Theme(None, f.label, coverage(docs, ix.docs), docs, [], community_docs=docs)
        t.facet = True
        t.exact = f.exact
        t.voices = list(field[1]) if field is not None else []
        out.append(t)
        if not ranked:
            continue
        cands: list[tuple[str, Statement]] = []
        # 0: names the focus (and maybe the facet); 2: the facet alone; one more: said by a host
        tier: list[int] = []
        on_facet_of: list[bool] = []
        seen: set = set()
        for u in ranked:
            for s in prose_sentences(u.text):
                s = spoken(s)
                on_facet, focused = on(s), on_focus(s, focus)
                # a guest's reply to the host's question naming the facet (or the focus) is on it in other words
                # ("What is the role of AI in medicine?" "The alert is a second pair of eyes.")
                asked = replies.get((u.number, _SPEAKER.sub("", s).strip()), "") if field is None else ""
                facet_asked, focus_asked = bool(asked) and names(asked, f, pats), on_focus(asked, focus)
                by_reply = (facet_asked and not on_facet) or (focus_asked and not focused)
                on_facet, focused = on_facet or facet_asked, focused or focus_asked
                if s in seen or not (on_facet or focused or field is not None) or not _statement_ok(s, ix):
                    continue
                if f.exact and field is None and not on_facet:  # a field's guests speak for it in any words
                    continue
                # a question asks of the focus, it says nothing of it
                if (focused or field is not None) and (s.rstrip("\"'\u201d\u2019) ").endswith("?")
                                                       or _ASKS.search(_SPEAKER.sub("", s))):
                    continue
                who = ix.speaker(u, s)
                if field is not None and (not who or who.casefold() not in voices):
                    continue  # a field's guests speak for it: not the host, nor a line no label gives to them
                seen.add(s)
                shown = f"{s} (replying to \u201c{_clip(asked)}\u201d)" if by_reply else s
                cands.append((u.chunk_id, Statement(shown, u.number, u.doc_id, u.unit, ix.doc_by_id[u.doc_id].n_units,
                                                    speaker=who)))
                aside = (who and who in hosts) if field is None else not who
                tier.append((0 if focused or (field is not None and not focus) else 2) + (1 if aside else 0))
                on_facet_of.append(on_facet or field is not None)
        if not cands:
            continue
        vecs = _embed([st.text for _, st in cands], embedder)
        # a sentence not naming the facet must be nearer its question than any other facet's
        if len(facets) > 1:
            sims = vecs @ qvecs.T
            mine = sims[:, fi] > np.delete(sims, fi, axis=1).max(axis=1)
        else:
            mine = np.ones(len(cands), dtype=bool)
        keep = [k for k in range(len(cands)) if on_facet_of[k] or mine[k]]
        if not keep:
            continue
        best_tier = min(tier[k] for k in keep)
        t.off_focus = bool(focus) and best_tier >= 2
        keep = [k for k in keep if tier[k] == best_tier]
        cands = [cands[k] for k in keep]
        # the sentences on the question naming the facet itself: how much the corpus says of it (:func:`_balance`)
        t.pool = [st for (_, st), named in zip(cands, on_facet_of) if named]
        on_facet_of = [on_facet_of[k] for k in keep]
        vecs = vecs[keep]
        cos = vecs @ qv
        off = (vecs @ pv.T).max(axis=1) if pv is not None else np.full(len(cands), -1.0)
        rel = []
        for k, (_, st) in enumerate(cands):
            st.rel = (relevance(float(cos[k]), st.text) - statement_penalty(st, ix)
                      + (FACET_BONUS if on_facet_of[k] and focus else 0.0))
            rel.append(st.rel)
        top = max(rel)
        left = [k for k in range(len(cands)) if rel[k] >= top - EVIDENCE_MARGIN and cos[k] - off[k] >= PROBE_GAP]
        if len(left) < PER_FACET and best_tier == 0:
            # few sentences name both the facet and the focus: each of them is on the question, so those within
            # twice the margin are quoted too (a facet's second-best sentence need not be as near as its best)
            left += [k for k in range(len(cands)) if k not in left and rel[k] >= top - 2 * EVIDENCE_MARGIN
                     and cos[k] - off[k] >= PROBE_GAP]
        mmr = _Mmr(vecs)
        per_unit: set = set()
        picked: list[int] = []
        again: list[int] = []  # passed over for a unit already quoted
        while (left or again) and len(picked) < PER_FACET:
            # statements come from distinct text units; a facet whose candidates hold fewer units quotes one twice
            pool = left or again
            k = max(pool, key=lambda j: (mmr.value(j, rel[j]), -j))
            pool.remove(k)
            st = cands[k][1]
            if any(repeats(st.text, x) for x in used):
                continue
            if pool is left and st.source in per_unit:
                again.append(k)
                continue
            picked.append(k)
            per_unit.add(st.source)
            used.append(st.text)
            mmr.add(k)
        if not picked:
            continue
        t.statements = [cands[k][1] for k in picked]
        if temporal:
            t.statements.sort(key=lambda s: (ix.doc_by_id[s.doc_id].pos, s.unit))
        t.score = max(rel[k] for k in picked)
        owners = owner_of([cands[k][0] for k in picked]) if owner_of is not None else {}
        t.reports = list(dict.fromkeys(owners[cands[k][0]] for k in picked if cands[k][0] in owners))
        t.report = t.reports[0] if t.reports else None
        quoted = {s.doc_id for s in t.statements if names(s.text, f, pats)}
        if not quoted <= set(docs):
            t.doc_ids = sorted(set(docs) | quoted, key=lambda d: ix.doc_by_id[d].pos)
            t.coverage = coverage(t.doc_ids, ix.docs)
    return out


def _replies(ix: ThemeIndex) -> dict[tuple[int, str], str]:
    """``(text unit number, sentence without its speaker label) -> the question it replies to``: for the first
    :data:`slmgraph.query.theme_kinds.TOPIC_REPLY` statements of each guest's reply in a transcript
    (:func:`slmgraph.query.theme_kinds.guest_sentences`), the last sentence of the host's turn before, when it asks
    ("So what is the role of AI in medicine?"); {} for a corpus without hosts."""
    from slmgraph.query.theme_kinds import guest_sentences
    from slmgraph.query.theme_labels import _SENTENCE_SPLIT
    from slmgraph.query.theme_works import corpus_hosts

    if not corpus_hosts(ix):  # no host asks anything: no need to read every sentence
        return {}
    out = {}
    for s in guest_sentences(ix, "", lambda body, prompt: (1.0, ""), whole=False):
        # the host's question itself, not the whole turn: a long turn names much besides what it asks
        asked = next((x for x in reversed(_SENTENCE_SPLIT.split(s.asked))
                      if x.rstrip("\"'\u201d\u2019) ").endswith("?")), "")
        if asked:
            out[(s.source, s.text)] = asked
    return out


def focus_of(question: str, facets: list[Facet], ix: ThemeIndex) -> tuple[list[frozenset], list[str]]:
    """``(alternatives, phrases)``: the question's focus -- its topic words outside the list
    (:func:`slmgraph.query.theme_kinds.topic_of`, less the facets' words and :data:`_FOCUS_FRAME`) found in some
    but under :data:`slmgraph.query.theme_kinds.SPECIFIC_SHARE` of the text units, each run of them the question
    writes in a row one phrase, and the acronym of two or three topic words in a row when the corpus writes it in
    capitals at least :data:`ACRONYM_USES` times ("artificial intelligence" -> also "AI").

    ``alternatives``: per phrase or acronym, the word stems a text must all hold to name it (:func:`on_focus`);
    ``phrases``: the phrases as the question writes them, then the acronyms; ([], []) without any. "How do guests
    describe the role of artificial intelligence in science and medicine?" ->
    ([{"artifici", "intellig"}, {"ai"}], ["artificial intelligence", "AI"]) (stems shown loosely)."""
    from slmgraph.query.theme_kinds import SPECIFIC_SHARE, topic_of, unit_counts

    listed = {stem for f in facets for _, stem in f.words}
    topic = {w for w in topic_of(question, ix) - listed if w not in _FOCUS_FRAME}
    held = unit_counts(ix, topic)
    # a word no unit holds focuses on nothing
    focus = {w for w in topic if 0 < held[w] < SPECIFIC_SHARE * max(1, len(ix.all_units()))}
    raw = re.findall(r"[^\W_]+", question)
    # a word qualifying the head the facets share ("tech" of "a tech company" listed as "startup, mid-size, large
    # company") narrows what is listed, not what is asked about it
    heads = Counter(word_stem(f.words[-1][0].casefold()) for f in facets if len(f.words) > 1)
    shared = {h for h, n in heads.items() if n >= 2}
    focus -= {word_stem(w.casefold()) for w, nxt in zip(raw, raw[1:]) if word_stem(nxt.casefold()) in shared}
    alts: list[frozenset] = []
    words: list[str] = []
    run: list[str] = []
    for w in raw + [""]:
        if w and word_stem(w.casefold()) in focus:
            run.append(w)
        elif run:
            words.append(" ".join(run))
            alts.append(frozenset(word_stem(x.casefold()) for x in run))
            run = []
    seq = [w.casefold() for w in raw]
    text = ix.all_text()
    for n in (3, 2):
        for i in range(len(seq) - n + 1):
            part = seq[i:i + n]
            if not all(word_stem(w) in topic for w in part):
                continue
            acro = "".join(w[0] for w in part).upper()
            if acro not in words and len(re.findall(r"\b" + acro + r"\b", text)) >= ACRONYM_USES:
                words.append(acro)
                alts.append(frozenset({word_stem(acro.casefold())}))
    return list(dict.fromkeys(alts)), words


def on_focus(text: str, alternatives: list[frozenset]) -> bool:
    """True when ``text`` holds every word stem of one of ``alternatives`` (:func:`focus_of`)."""
    if not alternatives:
        return False
    said = {word_stem(w) for w in re.findall(r"[^\W_]+", text.casefold())}
    # the stem cuts "-ing" but keeps a final "e": "scaling" is "scal", "scale" must be too
    said |= {w[:-1] for w in said if len(w) > 4 and w.endswith("e")}
    return any(a <= said for a in alternatives)


def is_facets(themes: list[Theme]) -> bool:
    """True when ``themes`` are :func:`facet_themes`' facets."""
    return bool(themes) and all(getattr(t, "facet", False) for t in themes)


def missing_line(t: Theme) -> str:
    """The one line of a facet without a statement: "No passage on robotics was found." (no text unit names
    it), or "No passage on robotics bears on the question (4 documents name it)." (some do, none answers)."""
    if not t.coverage["documents"]:
        return f"No passage on {t.topic} was found."
    if getattr(t, "unfocused", False):
        return (f"No passage on {t.topic} also names {focus_text(t.focus_words)}; {t.topic} is named in "
                f"{reach_text(t.coverage, False)}.")
    return f"No passage on {t.topic} bears on the question (named in {reach_text(t.coverage, False)})."


def facets_overview(themes: list[Theme], ix: ThemeIndex) -> str:
    """The answer's opening sentence over its facets: how many the question names, and each with its
    statements and works (documents) and speakers, in the question's order, then those without evidence --
    "The question names four, answered in its order: robotics (2 statements from 2 works, by Daniela Rus),
    neuroscience (3 statements from 2 works) and online communities (1 statement from 1 work); no passage on
    entertainment bears on it."."""
    n = len(themes)
    items = []
    for t in themes:
        k = len(t.statements)
        if not k:
            continue
        w, noun = statement_works(t.statements, ix)
        who = list(dict.fromkeys(s.speaker for s in t.statements if s.speaker))
        said = sum(1 for s in t.statements if s.speaker)
        by = "" if not who else f", by {_join(who)}" if said == k else f", {said} of them by {_join(who)}"
        src = f" from {w} {noun}{'s' if w != 1 else ''}" if len(ix.docs) > 1 else ""
        if getattr(t, "voices", None):  # a field's guests: who they are says more than where they are quoted
            items.append(f"{t.topic} ({_join(t.voices)}, {k} statement{'s' if k != 1 else ''})")
            continue
        items.append(f"{t.topic} ({k} statement{'s' if k != 1 else ''}{src}{by})")
    empty = [t.topic for t in themes if not t.statements]
    sep = "; " if any("," in i for i in items) else ", "
    listed = items[0] if len(items) == 1 else items[0] + " and " + items[1] if len(items) == 2 else \
        sep.join(items[:-1]) + f"{sep.rstrip()} and " + items[-1]
    fields = any(getattr(t, "voices", None) for t in themes)
    text = f"The question names {_NUMBERS.get(n, str(n))}{' fields of its guests' if fields else ''}, answered in its order"
    focus = getattr(themes[0], "focus_words", []) if themes else []
    if focus:
        text += f", each on {focus_text(focus)}"
    text += f": {listed}" if items else ""
    if empty:
        text += f"; no passage on {_join(empty, last=' or ')} bears on it"
    text += "."
    if fields:
        text += _fields_contrast(themes)
    elif focus:
        text += _balance(themes, focus) + _roles_sentence(themes)
    if themes and not fields and all(getattr(t, "exact", False) for t in themes):  # kinds of one thing: how widely each is named
        text += " " + _by_reach(themes)
    return text


def _fields_contrast(themes: list[Theme]) -> str:
    """" Where they differ, by what each field's guests discuss and the other guests hardly do: robotics (Daniela
    Rus), soft robots and ...; neuroscience (...), ...." -- the fields with statements and subjects
    (``t.subjects``), in the question's order, then what their guests say they do (``t.doing``,
    :func:`fields_doing`); each "" under two such fields."""
    shown = [t for t in themes if t.statements and getattr(t, "subjects", None)]
    text = ""
    if len(shown) >= 2:
        items = [f"{t.topic} ({_join(t.voices)}) on {_join(t.subjects)}" for t in shown]
        text = (" Where they differ, by the subjects each field's guests discuss and the other guests hardly do: "
                + "; ".join(items[:-1]) + "; and " + items[-1] + ".")
    doing = [t for t in themes if t.statements and getattr(t, "doing", None)]
    if len(doing) >= 2:  # how each goes about it, in their own words
        text += (" What they say they do, in their words -- " + "; ".join(
            f"{t.topic}: " + _join([f"{_q(c)} ({who})" if who else _q(c) for c, who in t.doing]) for t in doing) + ".")
    return text


#: Verbs of a first-person clause that say how the speaker goes about their work ("we build", "I compare").
_DOING = frozenset("""build design make create develop start found invest draw compare use try test study record
train model bring combine teach write run focus solve explore measure prototype invent program code experiment
borrow copy simulate iterate ship launch hire fund grow""".split())
#: First-person clauses shown per field.
DOING = 2


def fields_doing(themes: list[Theme], nlp) -> None:
    """Set ``t.doing`` of each field facet with voices (``t.voices``) to ``[(clause, speaker)]``: what its guests say
    they do, in their words -- a clause whose subject is "I" or "we" and whose verb says how they go about their work
    (:data:`_DOING`), :data:`slmgraph.query.clauses.ROLE_MIN_WORDS` to :data:`slmgraph.query.clauses.ROLE_WORDS` words ("we draw inspiration both from
    the physical world and the biological world"), from the facet's quotes first, then its other sentences by
    relevance, at most :data:`DOING`; nothing without a parser."""
    if nlp is None:
        return
    for t in themes:
        if not getattr(t, "voices", None) or not t.statements:
            continue
        found: list[tuple[str, str]] = []
        for st, doc in _parsed_pool(t, nlp):
            verbs = [tok.head for tok in doc if tok.lower_ in ("i", "we") and tok.dep_ == "nsubj"]
            if not verbs or verbs[0].lemma_.casefold() not in _DOING:
                continue
            clause = _subject_clause(doc, [frozenset({"i"}), frozenset({"we"})])
            if clause and not any(clause.casefold() == c.casefold() for c, _ in found):
                found.append((clause, st.speaker or ""))
            if len(found) == DOING:
                break
        t.doing = found


def focus_roles(themes: list[Theme], alternatives: list[frozenset], nlp) -> None:
    """Set ``t.roles`` of each facet to ``[(clause, speaker)]``: what its sentences on the focus say the focus does,
    in their words -- a clause whose subject is the focus ("AI and computation holds so much potential to help",
    "the AI system and the doctor worked together"), from the subject's first word to the end of its verb's
    phrase, :data:`slmgraph.query.clauses.ROLE_MIN_WORDS` to :data:`slmgraph.query.clauses.ROLE_WORDS` words; the facet's quotes first, then its other sentences
    on the question by relevance (``t.pool``, :attr:`Statement.rel`), each speaker's first before anyone's second, at most :data:`ROLES`.
    Subject-verb clauses from the dependency parse are the usual open relation extraction (Fader et al. 2011,
    ReVerb); nothing is set without a parser (``nlp`` None) or a focus."""
    if nlp is None or not alternatives:
        return
    for t in themes:
        if getattr(t, "voices", None) or getattr(t, "off_focus", False) or not t.statements:
            continue
        found: list[tuple[str, str]] = []
        for st, doc in _parsed_pool(t, nlp):
            clause = _subject_clause(doc, alternatives)
            if clause and not any(clause.casefold() == c.casefold() for c, _ in found):
                found.append((clause, st.speaker or ""))
        t.roles = speakers_first(found)[:ROLES]


def _parsed_pool(t: Theme, nlp):
    """``(statement, parsed body)`` of a facet's sentences to read clauses from: its quotes first, then its other
    sentences on the question by relevance (``t.pool``), at most :data:`ROLE_SENTENCES`, questions left out, the
    speaker label dropped; parsed as one batch (spaCy's pipe is several times faster than a call per sentence)."""
    quoted = {id(x) for x in t.statements}
    pool = list(t.statements) + sorted((x for x in getattr(t, "pool", []) if id(x) not in quoted),
                                       key=lambda st: -(st.rel or 0.0))
    read = [(st, _SPEAKER.sub("", st.text).strip()) for st in pool[:ROLE_SENTENCES]]
    read = [(st, body) for st, body in read if not body.rstrip("\"')\u201d\u2019 ").endswith("?")]
    return zip((st for st, _ in read), nlp.pipe([body for _, body in read]))


def _roles_sentence(themes: list[Theme]) -> str:
    """" What they say it does, in their words -- science: “AI and computation holds so much potential to help”
    (Daniela Rus) and “an AI system gives us a conclusion” (Oren Etzioni); medicine: “...” (...)." -- the facets' :func:`focus_roles`, in the question's order; "" under two clauses."""
    shown = [t for t in themes if getattr(t, "roles", None)]
    if sum(len(t.roles) for t in shown) < 2:
        return ""
    parts = [f"{t.topic}: " + _join([f"{_q(c)}{f' ({who})' if who else ''}" for c, who in t.roles]) for t in shown]
    return " What they say it does, in their words -- " + "; ".join(parts) + "."


def _balance(themes: list[Theme], focus: list[str]) -> str:
    """" Sentences naming “scaling” or “tech” with each: startup 5 (all by Sam Altman), large company 2 (by 2
    speakers), mid-size company none; most are of startup." -- each facet's sentences on the focus that name the
    facet (``t.pool``; none for a facet quoted off the focus or not at all), the most first; the conclusion says
    where most of them are (at least :data:`MOSTLY` times the next), else that they are spread; "" under two
    facets or with none on the focus."""
    def count(t: Theme) -> int:
        return len(getattr(t, "pool", [])) if t.statements and not getattr(t, "off_focus", False) else 0

    if len(themes) < 2:
        return ""
    named = sorted((t for t in themes if count(t)), key=lambda t: -count(t))
    if not named:
        return ""

    def said(t: Theme) -> str:
        n = count(t)
        who = list(dict.fromkeys(s.speaker for s in t.pool if s.speaker))
        by = (f" (all by {who[0]})" if len(who) == 1 and n > 1 else f" (by {who[0]})" if len(who) == 1
              else f" (by {len(who)} speakers)" if who else "")
        return f"{t.topic} {n}{by}"

    items = [said(t) for t in named] + [f"{t.topic} none" for t in themes if not count(t)]
    text = f" Sentences naming {focus_text(focus)} with each: " + ", ".join(items)
    if len(named) == 1:
        return text + f"; only {named[0].topic} is named with it."
    if count(named[0]) >= MOSTLY * count(named[1]):
        return text + f"; most are of {named[0].topic}."
    return text + "; they are spread across them."


def _by_reach(themes: list[Theme]) -> str:
    """"By how widely the corpus names them: startup (in 3 of 6 works, 18 parts), large company (in 3, 6 parts);
    mid-size company in none." -- the facets from the most named to the least."""
    cov = sorted(themes, key=lambda t: (-t.coverage.get("works", t.coverage["documents"]), -t.coverage["documents"]))
    named = [t for t in cov if t.coverage["documents"]]
    if not named:
        return ""
    c0 = named[0].coverage
    of, noun = (c0["works_of"], "works") if "works" in c0 else (c0["of"], "documents")
    parts = [f"{t.topic} (in {t.coverage.get('works', t.coverage['documents'])}"
             + (f" of {of} {noun}" if i == 0 else "")
             + (f", {t.coverage['documents']} parts)" if "works" in t.coverage else ")") for i, t in enumerate(named)]
    none = [t.topic for t in cov if not t.coverage["documents"]]
    return ("By how widely the corpus names them: " + _join(parts)
            + (f"; {_join(none, last=' or ')} in none" if none else "") + ".")


#: A facet answer whose facets mostly hold no sentence naming the focus also quotes the focus across the corpus, at
#: most this many sentences.
FOCUS_QUOTES = 3


def focus_at_large(ix: ThemeIndex, found: list[Theme], facets: list[Facet], focus: list[frozenset],
                   focus_words: list[str], embedder, **kw) -> Theme | None:
    """The question's focus said across the corpus whatever the facet, as one more section
    (``t.at_large`` True), when under half of ``found`` quote a sentence naming the focus ("scaling" of a question
    listing startup, mid-size and large companies, which the corpus discusses as scaling a company): its phrase
    as a facet of its own (:func:`facet_themes`), the sentences already quoted dropped, at most
    :data:`FOCUS_QUOTES`; None when the focus is an acronym alone, the facets mostly name it, or nothing is left.
    With the section, a facet quoted off the focus is quoted no more (``unfocused``: its line says so)."""
    on = sum(1 for t in found if t.statements and not getattr(t, "off_focus", False))
    phrase = next((w for w in focus_words if not w.isupper()), "")
    if not focus or not phrase or 2 * on >= len(found):
        return None
    # the head the facets share ("company" of "mid-size company" and "large company") is what the focus is of
    heads = Counter(f.words[-1] for f in facets if len(f.words) > 1)
    head = next((h for h, n in heads.most_common(1) if n >= 2), None)
    words = (head,) if head else tuple((w, word_stem(w.casefold())) for w in re.findall(r"[^\W_]+", phrase))
    quoted = {s.text for t in found for s in t.statements}
    question = facets[0].question if facets else phrase
    # said of the head, the sentence must name it ("scale a company"), as a listed kind must be named
    got = facet_themes(ix, [Facet(head[0] if head else phrase, words, question, exact=bool(head))], embedder,
                       focus=focus, **kw)
    t = got[0] if got else None
    if t is None or not t.statements:
        return None
    t.statements = [s for s in t.statements if s.text not in quoted][:FOCUS_QUOTES]
    if not t.statements:
        return None
    t.at_large = True
    t.focus_words = focus_words
    for x in found:  # beside the focus's own section, a facet's nearest passages off the focus are off the question
        if x.statements and getattr(x, "off_focus", False):
            x.statements, x.unfocused = [], True
    t.topic = f"{phrase} of a {head[0]}, whatever its kind" if head else f"{phrase} at large"
    return t


def render_facets(themes: list[Theme], ix: ThemeIndex, scope: str = "") -> str:
    """The answer text of a faceted question: the opening sentence (:func:`facets_overview`), one section per
    facet (heading with its reports, its sentence, its statements; or its one line without any), the
    documents cited and the sources line, as :func:`slmgraph.query.theme_render.render_themes` writes them. A
    theme with ``at_large`` (:func:`focus_at_large`) comes last and is left out of the opening's count."""
    listed = [t for t in themes if not getattr(t, "at_large", False)]
    parts = [facets_overview(listed, ix)]
    for t in themes:
        if getattr(t, "at_large", False) and t.statements:
            k = len(t.statements)
            who = list(dict.fromkeys(s.speaker for s in t.statements if s.speaker))
            parts[0] += (f" Beyond them, {k} more sentence{'s' if k != 1 else ''} on {t.topic.split(',')[0]} "
                         f"{'are' if k != 1 else 'is'} quoted{', by ' + _join(who) if who else ''}.")
    for i, t in enumerate(themes, start=1):
        if not t.statements:
            parts.append(f"### {i}. {t.topic}\n{missing_line(t)}")
            continue
        head = f"### {i}. {t.topic}" + (f" [Reports: {', '.join(map(str, t.reports))}]" if t.reports else "")
        parts.append("\n".join([head, t.opening] + [statement_line(_said_by(st) if getattr(t, "voices", None)
                                                                    else st, ix) for st in t.statements]))
    cited = documents_cited(themes, ix)
    if cited:
        parts.append(cited)
    reports = list(dict.fromkeys(r for t in themes for r in t.reports))
    sources = list(dict.fromkeys(s.source for t in themes for s in t.statements))
    parts.append(f"Sources: community reports {', '.join(map(str, reports))}"
                 f"{' (' + scope + ')' if scope else ''}; text units {', '.join(map(str, sources))}.")
    return "\n\n".join(parts)


def _said_by(st: Statement) -> Statement:
    """``st`` with its speaker's name before it ("Ruth Mbeki: ..."), unless it opens on their label: a field's quotes
    come from several guests."""
    from dataclasses import replace

    if not st.speaker or re.match(re.escape(st.speaker) + r"\s*:", st.text, re.IGNORECASE):
        return st
    return replace(st, text=f"{st.speaker}: {st.text}")


def focus_text(words: list[str]) -> str:
    """The focus as the answer writes it: "“artificial intelligence” (“AI”)", "“scaling” or “tech company”"."""
    q = [chr(0x201c) + w + chr(0x201d) for w in words]
    acro = [x for w, x in zip(words, q) if w.isupper() and " " not in w]
    rest = [x for x in q if x not in acro]
    if not rest:
        return _join(acro, last=" or ")
    return _join(rest, last=" or ") + (f" ({_join(acro, last=' or ')})" if acro else "")


def facet_opening(t: Theme, ix: ThemeIndex) -> str:
    """A facet's sentence: its label, how widely the corpus names it, and the documents it is quoted from
    with their speakers -- "Robotics: named in 3 of 24 works (5 of 174 parts). Quoted below from “EP-1”
    (speakers: Daniela Rus)."."""
    if getattr(t, "voices", None):
        works = list(dict.fromkeys(ix.doc_by_id[d].work or ix.doc_by_id[d].name for d in t.doc_ids))
        text = (f"{_cap(t.topic)}: {_join(t.voices)}, the guest{'s' if len(t.voices) > 1 else ''} of "
                f"{_join([chr(0x201c) + w + chr(0x201d) for w in works])}, whose conversation"
                f"{'s' if len(works) > 1 else ''} the corpus holds nearest {t.topic}.")
        # who a guest is, in the words their conversation introduces them with, says why they speak for the field
        from slmgraph.query.theme_works import _introduced

        of = {d.doc_id: d.work or d.name or d.doc_id for d in ix.docs}
        said = [x for w in works for x in [_introduced(ix, of, w, t.voices)] if x]
        if said:
            text += f" Introduced there as: {' '.join(said)}"
        if getattr(t, "off_focus", False) and getattr(t, "focus_words", None):
            text += f" None of their sentences names {focus_text(t.focus_words)}; the nearest are quoted."
        return text
    if getattr(t, "at_large", False):
        text = (f"{_cap(t.topic)}: what the corpus says of {focus_text(getattr(t, 'focus_words', []) or [t.topic])} "
                f"beyond the facets above, the nearest the question first.")
    else:
        text = f"{_cap(t.topic)}: named in {reach_text(t.coverage)}."
    if getattr(t, "no_guest", False):
        text += (f" No guest's conversation stands out as {t.topic}'s, so the passages naming it are quoted, "
                 f"whoever speaks.")
    if t.statements and len(ix.docs) > 1:
        docs = sorted({s.doc_id for s in t.statements}, key=lambda d: ix.doc_by_id[d].pos)
        who = list(dict.fromkeys(s.speaker for s in t.statements if s.speaker))
        text += (f" Quoted below from {_join([chr(0x201c) + ix.doc_by_id[d].name + chr(0x201d) for d in docs])}"
                 f"{f' (speakers: {_join(who)})' if who else ''}.")
    if getattr(t, "off_focus", False) and getattr(t, "focus_words", None):
        text += f" None of its passages also names {focus_text(t.focus_words)}; the nearest are quoted."
    return text
