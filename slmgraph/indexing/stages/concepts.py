"""Noun-phrase concepts beside names: graph nodes of type ``concept`` (extraction and graph merge).

Names alone leave a corpus's themes out of the graph ("budget shortfall", "flood defence", "cloud
revenue" are nobody's name). As graphrag's NLP graph (``build_noun_graph``: noun phrases of each text
unit, linked by co-occurrence) and LazyGraphRAG (noun-phrase concepts and their co-occurrence) do,
each text unit's noun phrases become candidate concepts:

* **Phrases** (:func:`phrases`): read from the spaCy ``Doc`` the candidate pass already made for the
  names (:mod:`slmgraph.indexing.stages.ner`), so the text is parsed once. A phrase is a compound of the tagger's
  common nouns with the adjectives before it (the ``(ADJ)* (NOUN)+`` chunk of noun-phrase
  chunkers; spaCy's ``noun_chunks`` need the dependency parser, which the candidate pass does not
  load): "budget shortfall", "council tax", "flood defences". Tokens inside a named-entity span of
  any label (names, dates, amounts), proper nouns, numbers, stop words and generic adjectives
  ("other", "new") break or trim a phrase; a phrase headed by a pronoun, or by a generic noun with
  nothing but adjectives before it ("thing", "complicated thing", "lot") is dropped
  (:data:`GENERIC_NOUNS`). At most :data:`MAX_WORDS` words (the
  last ones: the head of an English noun phrase is its last word).
* **Key**: lower case with the head noun lemmatised by the pipeline's rule lemmatizer
  (``spacy.pipeline.Lemmatizer.rule_lemmatize``; the plural rule of :func:`slmgraph.names.forms._singular`
  without one): "flood defences" and "Flood defence" are one concept.
* **Links**: a concept and another concept or a name in one sentence (:func:`slmgraph.text.prose.sentences`)
  co-occur; per text unit a link counts its sentences, and in the graph its weight is the number of
  text units that hold it, as for names' relationships.
* **Corpus filter** (:func:`keep`): a concept becomes a node when it occurs in at least
  :data:`MIN_UNITS` text units (a phrase of one text unit links nothing across the corpus: graphrag
  prunes its graph's nodes below a frequency of 2 by default, ``PruneGraphDefaults.min_node_freq``)
  and in at most :data:`MAX_UNIT_SHARE` of them, or :data:`MAX_UNITS_FLOOR` text units in a small
  corpus (a phrase in a large share of the text units -- "world", "work", "life" in interviews --
  tells no community from another: the ``max_df`` cut of TF-IDF vocabularies; docs/decisions.md:
  concept thresholds), and its
  key is no name's key (the name already stands for it); at most :func:`concept_budget` of them (one
  per two text units), those in the most text units first. A concept's description is its first
  sentences, up to :data:`DESCRIPTION_TOKENS` (what its embedding reads).

Resolution never touches concepts: they are added after names are resolved, so no rule merges a
concept into a name or a name into a concept.

Tables: ``concept_mentions`` and ``concept_links`` (per text unit, written with its extraction
records), ``concepts`` (the entity ids that are concepts; rebuilt with the graph).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from slmgraph.names.forms import STOP, _sentence_initial, _singular, cut, mentions, normalize_name, quoted_sentence
from slmgraph.names.kinds import furniture, list_spans
from slmgraph.store.bulk import insert_rows
from slmgraph.text.prose import sentence_spans

#: Part of every extraction key of a build with concepts: bump it when a change here changes what a
#: text unit's concepts are, so indexes re-extract.
CONCEPTS_VERSION = "4"

#: Fewest text units a concept occurs in to become a node (graphrag's ``prune_graph.min_node_freq``: 2).
MIN_UNITS = 2
#: Largest share of the corpus's text units a concept may occur in to become a node; a phrase in
#: more of them is background, not a theme (see the module docstring) ...
MAX_UNIT_SHARE = 0.1
#: ... but a concept in up to this many text units is kept whatever the share (a small corpus's themes
#: recur in a large share of its few text units).
MAX_UNITS_FLOOR = 5
#: Most concept nodes per text unit of the corpus, and the fewest any corpus may have: the concepts in
#: the most text units are kept first. The budget bounds what concepts add to a build (each node is
#: embedded, and more nodes make more communities and reports; docs/decisions.md: concept thresholds).
CONCEPTS_PER_UNIT = 0.5
MIN_CONCEPT_BUDGET = 20

#: Cap of a concept's joined description, tokens: its first sentences (what its embedding and the
#: reports read), not every sentence naming a common phrase.
DESCRIPTION_TOKENS = 64
#: Longest phrase, words (the last words: the head is last).
MAX_WORDS = 4
#: Most concepts kept per text unit (by mentions, then first position): a long list of one-off
#: phrases adds pairs, not themes.
MAX_PER_UNIT = 40

#: Nouns too general to be a concept on their own (they stay in compounds: "fiscal year", "time zone").
GENERIC_NOUNS = frozenset("""
thing things stuff lot lots kind kinds sort sorts type types bit bits way ways part parts fact facts case cases
point points example examples number numbers time times day days year years lot place places something anything
everything nothing one ones people person man men woman women guy guys folks bunch piece pieces side sides end
question questions answer answers idea ideas reason reasons problem problems area areas level levels matter
sense moment moments minute minutes second seconds hour hours week weeks month months today tomorrow yesterday
word words name names yes yeah okay ok uh um hmm behalf
""".split())

#: Adjectives that say nothing about the noun after them; trimmed from the front of a phrase.
GENERIC_ADJECTIVES = frozenset("""
other many much more most few several various new old good great big small little large same different certain
whole real sure own next last first second third final main major minor particular specific general entire such
able likely possible important interesting huge tiny lot lots previous recent early late best better worse worst
high low long short full right wrong true free clear simple easy hard
""".split())

_WORD_POS = frozenset({"NOUN", "ADJ"})


@dataclass
class UnitConcepts:
    """The concepts of one text unit.

    Attributes:
        mentions: ``{"norm": key, "name": its most frequent surface form in the unit (lower case), "description":
            first sentence naming it}`` per concept.
        links: ``{"concept": key, "other": key, "other_kind": "concept" | "name", "description":
            first such sentence, "sentences": count}`` per co-occurring pair in one sentence (a
            concept-concept pair once, its keys in sorted order).
    """

    mentions: list[dict] = field(default_factory=list)
    links: list[dict] = field(default_factory=list)


def _lemma(tok, lemmatizer) -> str:
    """Lower-case lemma of a noun token: the pipeline's rule lemmatizer, else the plural rule."""
    if lemmatizer is not None:
        try:
            forms = lemmatizer.rule_lemmatize(tok)
            if forms and forms[0]:
                return forms[0].lower()
        except (KeyError, ValueError, AttributeError):  # a lemmatizer without rule tables: the plural rule
            pass
    w = tok.text.lower()
    return _singular(w) if tok.tag_ in ("NNS", "NNPS") else w


def phrases(doc, text: str, lemmatizer=None) -> list[tuple[int, int, str]]:
    """The noun-phrase concepts of a parsed text: ``[(start, end, key)]`` character offsets in ``text``
    (the text ``doc`` was made from), in text order (rules in the module docstring).

    Args:
        doc: a spaCy ``Doc`` with part-of-speech tags (``pos_``, ``tag_``) and entities.
        text: the text of ``doc``.
        lemmatizer: the pipeline's ``lemmatizer`` component, or None (plural rule).
    """
    in_ent = set()
    for ent in doc.ents:
        in_ent.update(range(ent.start, ent.end))
    out: list[tuple[int, int, str]] = []
    run: list = []
    n = len(doc)

    def word_ok(tok) -> bool:
        if tok.i in in_ent or tok.pos_ not in _WORD_POS or tok.like_num or not tok.text.isalpha():
            return False
        if tok.is_stop and tok.pos_ != "NOUN":
            return False
        # a capital away from a sentence start: a name the NER did not tag, not a concept
        return not (tok.text[0].isupper() and not _sentence_initial(text, tok.idx))

    def joiner(i: int) -> bool:
        """Token ``i`` is a hyphen inside a word ("long-term", "cost-of-living")."""
        t = doc[i]
        return (t.text == "-" and 0 < i < n - 1 and not doc[i - 1].whitespace_ and not t.whitespace_
                and doc[i - 1].text.isalpha() and doc[i + 1].text.isalpha() and i not in in_ent)

    def flush() -> None:
        toks = list(run)
        run.clear()
        while toks and (toks[-1].pos_ != "NOUN" or toks[-1].text == "-"):
            toks.pop()
        # leading words that say nothing ("other", "new", "the"), unless hyphenated to the next
        while toks and (toks[0].text == "-" or (
                (toks[0].lower_ in GENERIC_ADJECTIVES or toks[0].is_stop or toks[0].lower_ in STOP)
                and not (len(toks) > 1 and toks[1].text == "-"))):
            toks.pop(0)
        words = [t for t in toks if t.text != "-"]
        starts = [t for t in words if not (t.i > 0 and doc[t.i - 1].text == "-" and toks[0].i < t.i)]
        if len(starts) > MAX_WORDS:  # the last words (a hyphenated one counts once): the head is last
            cut_at = starts[-MAX_WORDS].i
            toks = [t for t in toks if t.i >= cut_at]
            words = [t for t in words if t.i >= cut_at]
        if not words or all(t.pos_ != "NOUN" for t in words):
            return
        head = toks[-1]
        if head.is_stop or head.lower_ in STOP:
            return
        key = " ".join(text[toks[0].idx:head.idx].lower().split())
        key = (key + " " if key and not key.endswith("-") else key) + _lemma(head, lemmatizer)
        if head.lower_ in GENERIC_NOUNS and all(t.pos_ == "ADJ" for t in words[:-1]):
            return  # "thing", "complicated thing": a generic noun with only adjectives says nothing
        if any(len(t.text) < 2 for t in words):
            return
        out.append((toks[0].idx, head.idx + len(head.text), key))  # the key; the surface is text[start:end]

    last = -1
    for i in _run_tokens(doc):
        if i > last + 1:
            flush()  # a token between that no rule below adds ends the run
        last = i
        tok = doc[i]
        if word_ok(tok) or (run and joiner(i)) or (
                i + 1 < n and joiner(i + 1) and tok.text.isalpha() and i not in in_ent
                and not (tok.text[0].isupper() and not _sentence_initial(text, tok.idx))):
            run.append(tok)
        else:
            flush()
    flush()
    return out


def _run_tokens(doc) -> list[int]:
    """Indices of the tokens of ``doc`` that :func:`phrases` may add to a phrase: a noun or an adjective, a
    hyphen, or a token before a hyphen (every other token ends the phrase). Read from the ``Doc``'s arrays
    (``Doc.to_array``), so the many other tokens cost no Python object each."""
    import numpy as np
    from spacy.attrs import ORTH, POS
    from spacy.symbols import ADJ, NOUN

    arr = doc.to_array([POS, ORTH])
    if not len(arr):
        return []
    hyphen = arr[:, 1] == doc.vocab.strings["-"]
    before_hyphen = np.zeros_like(hyphen)
    before_hyphen[:-1] = hyphen[1:]
    return np.flatnonzero((arr[:, 0] == NOUN) | (arr[:, 0] == ADJ) | hyphen | before_hyphen).tolist()


def unit_concepts(doc, text: str, names: list[str], max_chars: int, lemmatizer=None,
                  persons: list[str] | None = None) -> UnitConcepts:
    """A text unit's concepts and their same-sentence links to each other and to ``names``.

    Args:
        doc: the spaCy ``Doc`` of ``text`` (the candidate pass's, :class:`slmgraph.indexing.stages.ner.CandidatePass`).
        text: the masked text of the unit (what ``doc`` was made from).
        names: the unit's extracted entity names (their keys are :func:`slmgraph.names.forms.normalize_name`).
        max_chars: cap of a description (``description_max_chars``).
        lemmatizer: the pipeline's lemmatizer component, or None.
        persons: the names of ``names`` that are persons: a description opening on "he" or "she" is quoted
            with the sentence naming the person meant (:func:`slmgraph.names.forms.quoted_sentence`).

    Returns:
        :class:`UnitConcepts`; a concept whose key is one of ``names``' keys is left out (the name
        stands for it).
    """
    found = phrases(doc, text, lemmatizer)
    name_keys = {normalize_name(n): n for n in names}
    # "Present: A (chair), B (treasurer)": a record of who was there; "Dear members of the board,": an address
    listed = list_spans(text) + [(a, b) for a, b in sentence_spans(text) if furniture(text[a:b])]
    found = [f for f in found if f[2] not in name_keys and not any(a < f[1] and f[0] < b for a, b in listed)]
    if not found:
        return UnitConcepts()
    counts = Counter(k for *_, k in found)
    first_at = {}
    for s, _, k in found:
        first_at.setdefault(k, s)
    kept = set(sorted(counts, key=lambda k: (-counts[k], first_at[k]))[:MAX_PER_UNIT])
    spans = sentence_spans(text)
    desc: dict[str, str] = {}
    pairs: dict[tuple[str, str, str], list[str]] = {}
    j = 0
    by_sentence: dict[int, list[str]] = defaultdict(list)
    for s, e, k in found:
        if k not in kept:
            continue
        while j < len(spans) and spans[j][1] <= s:
            j += 1
        if j < len(spans) and k not in by_sentence[j]:
            by_sentence[j].append(k)
    folded = [" ".join(text[a:b].split()) for a, b in spans]
    alone: dict[str, str] = {}
    who = {p: p for p in persons or ()}
    for i, ks in sorted(by_sentence.items()):
        sent = text[spans[i][0]:spans[i][1]]
        if any(a < spans[i][1] and spans[i][0] < b for a, b in listed):
            continue  # a sentence that runs into a list line links nothing
        short = cut(folded[i], max_chars)
        quote = quoted_sentence(folded, i, who, max_chars)  # "She will lead the education group": say who
        for k in ks:
            if quote is not None:
                desc.setdefault(k, quote)
            alone.setdefault(k, short)  # a last resort, when no sentence of it can say who "she" is
        ks = sorted(ks)
        for a_i, a in enumerate(ks):
            for b in ks[a_i + 1:]:
                pairs.setdefault((a, b, "concept"), []).append(short)
        for nk, n in name_keys.items():
            if mentions(sent, n):
                for k in ks:
                    pairs.setdefault((k, nk, "name"), []).append(short)
    surface: dict[str, Counter] = defaultdict(Counter)
    for s, e, k in found:
        surface[k][" ".join(text[s:e].split()).lower()] += 1
    mentions_out = [{"norm": k, "name": min(surface[k].items(), key=lambda kv: (-kv[1], kv[0]))[0],
                     "description": desc.get(k) or alone.get(k, "")} for k in sorted(kept, key=first_at.get)]
    links = [{"concept": a, "other": b, "other_kind": kind, "description": ds[0], "sentences": len(ds)}
             for (a, b, kind), ds in sorted(pairs.items())]
    return UnitConcepts(mentions_out, links)


def lemmatizer_of(nlp):
    """The pipeline's ``lemmatizer`` component (loaded disabled by :func:`slmgraph.indexing.stages.ner.load_pipeline`), or None."""
    if nlp is None or "lemmatizer" not in getattr(nlp, "component_names", ()):
        return None
    return nlp.get_pipe("lemmatizer")


def unit_concepts_of(cp, nlp, ents: list[dict], settings) -> UnitConcepts | None:
    """The concepts of a text unit from its candidate pass ``cp`` (:class:`slmgraph.indexing.stages.ner.CandidatePass`,
    whose ``doc`` is reused) and its extracted entities ``ents`` (``{"name", ...}``); None when
    ``settings.concepts`` is off or the unit was not parsed (no pipeline, or another language)."""
    if not getattr(settings, "concepts", False) or getattr(cp, "doc", None) is None:
        return None
    return unit_concepts(cp.doc, cp.masked, [e["name"] for e in ents], settings.description_max_chars,
                         lemmatizer_of(nlp), [e["name"] for e in ents if e.get("type") == "person"])


def store_unit(con, chunk_id: str, uc: UnitConcepts | None, new: bool = False) -> None:
    """Replace a text unit's concept rows (call inside the transaction of its extraction records);
    ``new``: the unit has no rows yet (its first extraction), so none are deleted."""
    if not new:
        con.execute("DELETE FROM concept_mentions WHERE chunk_id = ?", [chunk_id])
        con.execute("DELETE FROM concept_links WHERE chunk_id = ?", [chunk_id])
    if uc is None:
        return
    insert_rows(con, "concept_mentions", ("chunk_id", "norm", "name", "description"),
                [(chunk_id, m["norm"], m["name"], m["description"]) for m in uc.mentions])
    insert_rows(con, "concept_links", ("chunk_id", "concept_norm", "other_norm", "other_kind", "description",
                                       "sentences"),
                [(chunk_id, r["concept"], r["other"], r["other_kind"], r["description"], r["sentences"])
                 for r in uc.links])


def unit_range(n_units: int, min_units: int = MIN_UNITS, max_share: float = MAX_UNIT_SHARE,
               floor: int = MAX_UNITS_FLOOR) -> tuple[int, int]:
    """``(fewest, most)`` text units a concept may occur in to become a node, for a corpus of
    ``n_units`` text units: at least ``min_units``, at most ``max_share`` of them or ``floor``, whichever
    is more (the most is never below the fewest)."""
    return min_units, max(min_units, floor, math.floor(max_share * n_units))


def concept_budget(n_units: int) -> int:
    """Most concept nodes of a corpus of ``n_units`` text units (:data:`CONCEPTS_PER_UNIT`, at least
    :data:`MIN_CONCEPT_BUDGET`)."""
    return max(MIN_CONCEPT_BUDGET, int(CONCEPTS_PER_UNIT * n_units))


def keep(df: dict[str, int], n_units: int, names: set[str] | frozenset = frozenset()) -> set[str]:
    """The concept keys that become nodes: ``df`` maps a key to the text units holding it; ``names``
    are the graph's name keys (a concept with a name's key is left out). Those within
    :func:`unit_range`, in the most text units first (then by key), up to :func:`concept_budget`."""
    lo, hi = unit_range(n_units)
    ok = sorted((k for k, n in df.items() if lo <= n <= hi and k not in names), key=lambda k: (-df[k], k))
    return set(ok[:concept_budget(n_units)])


@dataclass
class ConceptGraph:
    """Concepts as graph elements (:func:`concept_graph`).

    Attributes:
        units: concept key -> text units holding it.
        names: concept key -> its surface forms (lower case) and their text units.
        descriptions: concept key -> its descriptions in reading order.
        edges: ``(key, key)`` sorted pair (concept keys and name entity keys) -> ``{"descs", "strength",
            "units"}`` as :func:`slmgraph.indexing.stages.graph.build_graph` keeps its edges.
        dropped_share: concepts left out for occurring in too many text units; ``dropped_rare``: in
            too few; ``dropped_names``: with a name's key; ``dropped_budget``: past :func:`concept_budget`.
    """

    units: dict[str, set] = field(default_factory=dict)
    names: dict[str, Counter] = field(default_factory=dict)
    descriptions: dict[str, list[str]] = field(default_factory=dict)
    edges: dict[tuple[str, str], dict] = field(default_factory=dict)
    dropped_share: int = 0
    dropped_rare: int = 0
    dropped_names: int = 0
    dropped_budget: int = 0


def no_prose_chunks(con) -> set[str]:
    """The chunk ids of the text units judged no prose at ingestion (``text_units.no_prose``: a table, a log or
    encoded data, :func:`slmgraph.text.shape.no_prose_passage`); empty in an index without the flag."""
    cols = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                      "WHERE table_name = 'text_units'").fetchall()}
    if "no_prose" not in cols:
        return set()
    return {r[0] for r in con.execute("SELECT chunk_id FROM text_units WHERE no_prose").fetchall()}


def concept_graph(con, canon: dict[str, str], reading_order: str) -> ConceptGraph:
    """The corpus's concepts that pass :func:`keep`, with their descriptions and links, from the
    ``concept_mentions`` / ``concept_links`` tables; a text unit that is no prose (:func:`no_prose_chunks`)
    counts neither towards the corpus's text units nor as a mention or a link (a decoded binary's or a
    table's runs of nouns make no theme).

    Args:
        con: the index's DuckDB connection.
        canon: name mention key -> entity key after resolution (a link to a name follows it; a link
            to a name key that is no entity is dropped).
        reading_order: the SQL ``JOIN ... ORDER BY`` tail over mention rows ``m`` that orders
            descriptions (:data:`slmgraph.indexing.stages.graph.READING_ORDER`).
    """
    junk = no_prose_chunks(con)
    n_units = int(con.execute("SELECT count(*) FROM text_units").fetchone()[0]) - len(junk)
    ment = con.execute(f"SELECT m.chunk_id, m.norm, m.name, m.description FROM concept_mentions m {reading_order}, "
                       "m.norm").fetchall()
    units: dict[str, set] = defaultdict(set)
    descs: dict[str, list[str]] = defaultdict(list)
    shown: dict[str, Counter] = defaultdict(Counter)
    for chunk_id, norm, name, desc in ment:
        if chunk_id in junk:
            continue
        units[norm].add(chunk_id)
        shown[norm][name or norm] += 1
        if desc:
            descs[norm].append(desc)
    entity_keys = set(canon.values())
    lo, hi = unit_range(n_units)
    kept = keep({k: len(u) for k, u in units.items()}, n_units, entity_keys)
    out = ConceptGraph(dropped_share=sum(len(u) > hi for u in units.values()),
                       dropped_rare=sum(len(u) < lo for u in units.values()),
                       dropped_names=sum(lo <= len(u) <= hi and k in entity_keys for k, u in units.items()))
    out.dropped_budget = sum(lo <= len(u) <= hi and k not in entity_keys for k, u in units.items()) - len(kept)
    out.units = {k: units[k] for k in kept}
    out.names = {k: shown[k] for k in kept}
    out.descriptions = {k: descs[k] for k in kept}
    links = con.execute("SELECT m.chunk_id, m.concept_norm, m.other_norm, m.other_kind, m.description, m.sentences "
                        f"FROM concept_links m {reading_order}, m.concept_norm, m.other_norm").fetchall()
    for chunk_id, a, b, kind, desc, n in links:
        if a not in kept or chunk_id in junk:
            continue
        if kind == "name":
            b = canon.get(b)
            if b is None:
                continue
        elif b not in kept:
            continue
        if a == b:
            continue
        e = out.edges.setdefault((min(a, b), max(a, b)), {"descs": [], "strength": [], "units": set()})
        if desc:
            e["descs"].append(desc)
        e["strength"].append(min(10, int(n or 1)))
        e["units"].add(chunk_id)
    return out


def concept_ids(source) -> set[int]:
    """The entity ids of an index that are concepts (the ``concepts`` table; empty in an older index)."""
    import duckdb

    con = getattr(source, "con", source)
    try:
        return {r[0] for r in con.execute("SELECT entity_id FROM concepts").fetchall()}
    except duckdb.CatalogException:  # an index written before concepts existed, opened read-only
        return set()
