"""Global answers organised by theme (extractive; the GraphRAG paper's "what is this corpus about").

The answer is its own synthesis, built from the data by templates:

* an **overview paragraph** (:func:`overview`) that answers first: for a corpus-wide question
  (:func:`slmgraph.query.route.corpus_wide_phrase`) the main themes ranked by how many documents
  discuss them ("Across the 8 documents, the main themes are flood defence (in 6 of 8 documents), ...");
  for a focused question the themes that bear on it, the most relevant first, with their reach;
* one section per selected community report, with
  - its **topic**: ``community_reports.topic`` (:mod:`slmgraph.indexing.stages.topics`) or, for an index built before
    that column was filled, the report's title; a community labelled by names alone (a publication, a
    speaker) is no theme of a corpus-wide answer while concept themes remain;
  - its **sentence** (:func:`template_opening`): the topic, its other key concepts and the names most tied
    to it, how widely it is discussed -- the documents whose text units mention the label's terms, counted
    against the corpus, with the dates their titles hold -- and the documents its statements are quoted
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
(:func:`relabel`: class-based TF-IDF then KeyBERT's MMR), with its reach where those phrases are and the
speakers of its statements named. Other themes are labelled the same way from the text units they are
read from.

A question about change over time (:func:`is_temporal`: "how has X evolved") gets each theme's
statements in document order, spread over the theme's documents; a question about amounts or change
(:func:`asks_figures`) prefers statements holding figures and dates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from slmgraph.indexing.stages.topics import _shown, glued, junk
from slmgraph.query.documents import Doc, community_documents, corpus_documents, coverage, order_sentence
from slmgraph.query.extractive import (
    _SPEAKER, _Mmr, _embed, names_named, near_duplicate, prose_sentences, quotable, relevance, sentence_kinds,
)

#: A sentence is boilerplate when its first or last :data:`KEY_WORDS` words recur in at least this many
#: documents (overlapping text units put a sentence in two neighbouring documents' units, so two is no sign
#: of a template; a sentence of eight words or more written again word for word in a third document is one).
BOILERPLATE_MIN_DOCS = 3
KEY_WORDS = 8
#: A sentence template (:class:`Boilerplate`): at least :data:`TEMPLATE_SHARE` of a sentence's word
#: :data:`SHINGLE_WORDS`-grams each occur in at least :data:`SHINGLE_MIN_DOCS` documents (one more than a
#: repeated sentence needs, as a template matches by parts of its words only).
SHINGLE_WORDS = 5
SHINGLE_MIN_DOCS = 4
TEMPLATE_SHARE = 0.6
#: Themes shown at most; statements per theme (per temporal theme); text units read per theme.
MAX_THEMES = 6
PER_THEME = 2
PER_TEMPORAL_THEME = 4
UNITS_PER_THEME = 4
#: Words a statement has at least (besides a speaker label); under :data:`FULL_WORDS` it is penalised by
#: :data:`SHORT_PENALTY` (cosine units), so a short line is quoted only where a theme has nothing longer.
MIN_WORDS = 5
FULL_WORDS = 8
SHORT_PENALTY = 0.15
#: For a question with a topic, a statement whose relevance is this far (cosine units) under the best
#: statement's is left out, and so is a theme left with none.
STATEMENT_MARGIN = 0.2
MIN_THEMES = 3
#: A focused question's evidence (:func:`focused_themes`): the text units of the whole index nearest the
#: question, of which statements within :data:`EVIDENCE_MARGIN` (cosine units) of the best one are kept, at
#: most :data:`PER_FOCUSED_THEME` per theme.
EVIDENCE_UNITS = 20
EVIDENCE_MARGIN = 0.15
PER_FOCUSED_THEME = 3
#: A focused answer's statement is nearer the question than any off-topic probe question
#: (``prompts/offtopic_probes.txt``) is to it by at least this (cosine).
PROBE_GAP = 0.15
#: Terms of a label chosen from a theme's phrases (:func:`keyphrase_label`) and the MMR diversity weight.
LABEL_TERMS = 2
LABEL_DIVERSITY = 0.3
#: A focused theme's label takes a second phrase only when its cosine with the statements is at least this
#: share of the first phrase's.
LABEL_FLOOR = 0.75
#: A statement longer than this is not quoted (a run-on transcript turn is not a statement).
MAX_STATEMENT_CHARS = 320
#: Content weights of a statement (cosine units): a sentence opening on a pronoun or a demonstrative
#: ("It was deferred.", "This is why...") means little out of its context and loses
#: :data:`FILLER_PENALTY`; one naming the theme's concepts gains :data:`CONCEPT_BONUS` each (up to
#: :data:`MAX_CONCEPTS_NAMED`); one holding a figure or a date gains :data:`FIGURE_BONUS`, or
#: :data:`FIGURE_QUESTION_BONUS` when the question asks about amounts or change (:func:`asks_figures`).
FILLER_PENALTY = 0.2
CONCEPT_BONUS = 0.04
MAX_CONCEPTS_NAMED = 2
FIGURE_BONUS = 0.03
FIGURE_QUESTION_BONUS = 0.15
#: Key concepts and names a theme's sentence states at most.
KEY_CONCEPTS = 4
KEY_NAMES = 3
#: Opening words of a sentence that leans on what came before it.
_FILLER = re.compile(r"(?i)^\W*(it|this|that|these|those|they|them|he|she|his|her|there|so|and|but|or|yeah|yes|no|"
                     r"well|oh|okay|ok|right|also|then|which|such|by the way|anyway|i mean|you know|like)\b(?!-)")
#: A figure (a number, an amount, a share) or a date.
_FIGURE = re.compile(r"(?i)\d|[$\u00a3\u20ac\u00a5%]|\b(million|billion|thousand|hundred|percent|per cent|dozen)\b|"
                     r"\b(january|february|march|april|june|july|august|september|october|november|december)\b")
#: Words of a question about amounts or figures.
_AMOUNTS = re.compile(r"(?i)\b(how (much|many)|budgets?|costs?|cost(ing|ed)?|spend\w*|spent|revenues?|fund\w*|"
                      r"prices?|amounts?|figures?|numbers?|shortfalls?|deficits?|targets?|growth|grew|percent\w*|"
                      r"rates?|sales|profits?|income|earnings|money|financ\w*|pay\w*|fees?|tax\w*|savings?|"
                      r"investments?|margins?|losses|debt)\b")
#: Words asking how something changed over time.
_TEMPORAL = re.compile(r"(?i)\b(evolv\w*|over (the )?(time|years?|decades?|past|last)\b"
                       r"|chang(e|ed|es|ing) (over|since|from)"
                       r"|trend\w*|timeline|history of|progress(ed|ion)? (of|over)|through the years|from year to year"
                       r"|since (the )?(first|start|beginning)|develop\w* over)")
_WORD = re.compile(r"[^\W_]+")
#: A whole sentence ends with its punctuation (a text unit's edge cuts one off mid-clause).
_ENDED = re.compile(r"(?<!\.\.)[.!?][\"'\u201d\u2019)\]]*$")
#: A whole sentence opens on a word, a figure or an opening quote (a unit's edge or a split leaves ":, uh, ...").
_OPENED = re.compile(r"[\w\"'\u201c\u2018(\[]")
#: Words of a speaker framing the conversation itself rather than stating anything: a welcome, an
#: introduction of a co-host or guest, a thank-you for coming, a pointer to the next or this episode, a call
#: to subscribe (meta-discourse of talk shows, meetings and calls).
_FRAMING = re.compile(
    r"(?i)\b(welcome (back )?to|(i['\u2019]m|i am|we['\u2019]re|we are) joined by|joining (me|us)\b|"
    r"(great|special|wonderful|exciting) (episode|show|guest|conversation)|"
    r"(this|today['\u2019]s|our|the next|next|last) (episode|show|podcast)\b|"
    r"(next|last) time on\b|thank(s| you)( so much| very much)?,?( \w+,?)? for (coming|joining|being|doing|taking)|"
    r"subscribe\b|needs no introduction|with us (here )?today|on the (show|podcast)\b|e-?mail (us\b|any ?time)|"
    r"(like|want) to (share with|add)[^.]{0,6} us\b|tell (all (of )?)?your friends|"
    r"follow [^.]{0,40}\bon (twitter|your favou?rite)|our guest (today|this week)|guest today\b)")


def is_temporal(question: str) -> bool:
    """True when ``question`` asks how something changed over time ("How have revenue targets evolved?")."""
    return bool(_TEMPORAL.search(question or ""))


def asks_figures(question: str) -> bool:
    """True when ``question`` asks about amounts or change ("How did the council deal with its budget
    shortfall?", "How have revenue targets evolved?"): its statements should carry figures and dates."""
    return bool(_AMOUNTS.search(question or "")) or is_temporal(question)


def content_weight(sentence: str, concepts: list[str], figures: bool = False) -> float:
    """What a statement carries besides its cosine (cosine units; see :data:`FILLER_PENALTY`):
    ``-FILLER_PENALTY`` when it opens on a pronoun or demonstrative, ``+CONCEPT_BONUS`` per concept of
    ``concepts`` it names (up to :data:`MAX_CONCEPTS_NAMED`), and a figure bonus when it holds a
    number, an amount or a date (larger when ``figures``: the question asks about amounts or change)."""
    body = _SPEAKER.sub("", sentence).strip()
    w = -FILLER_PENALTY if _FILLER.match(body) else 0.0
    folded = body.casefold()
    named = sum(1 for c in concepts if c and re.search(r"(?<!\w)" + re.escape(c.casefold()) + r"(?!\w)", folded))
    w += CONCEPT_BONUS * min(MAX_CONCEPTS_NAMED, named)
    if _FIGURE.search(body):
        w += FIGURE_QUESTION_BONUS if figures else FIGURE_BONUS
    return w


def framing(sentence: str) -> bool:
    """True when ``sentence`` frames the conversation rather than states anything (:data:`_FRAMING`:
    "Today I'm joined by my colleague ...", "We have a great episode for you today", "Thanks for coming
    in"): it is never a statement of a theme."""
    return bool(_FRAMING.search(_SPEAKER.sub("", sentence)))


def _key_words(sentence: str) -> list[str]:
    return _WORD.findall(_SPEAKER.sub("", sentence).casefold())


class Boilerplate:
    """Sentences repeated near-verbatim across many documents of an index, and sentence templates.

    Built once per query from every text unit, by two tests:

    * **repeated sentences**: each sentence's first and last :data:`KEY_WORDS` words (speaker label dropped,
      case folded) are keys, counted by document; a sentence is boilerplate when one of its keys occurs in
      at least :data:`BOILERPLATE_MIN_DOCS` documents;
    * **templates**: each sentence's word :data:`SHINGLE_WORDS`-grams (w-shingles, Broder 1997, "On the
      resemblance and containment of documents") are counted by document; a sentence is boilerplate when at
      least :data:`TEMPLATE_SHARE` of its shingles (two or more) each occur in :data:`SHINGLE_MIN_DOCS`
      documents or more -- a show's intro and outro said again in other words and with another guest's
      name ("If you have anything you'd like to share with us, please email ...").
    """

    def __init__(self, units: list[tuple[str, str]]):
        """``units``: ``(doc_id, text)`` of every text unit."""
        from collections import Counter

        self.threshold = BOILERPLATE_MIN_DOCS
        docs: dict[tuple, set] = {}
        shingles: dict[str, set] = {}
        split = re.compile(r"(?<=[.!?])\s+|\n+")
        for doc_id, text in units:
            mine = shingles.setdefault(doc_id, set())
            for s in split.split(text or ""):
                for k in self._keys(s):
                    docs.setdefault(k, set()).add(doc_id)
                mine.update(self._shingles(s))
        self.counts = {k: len(v) for k, v in docs.items() if len(v) >= self.threshold}
        per = Counter()
        for sh in shingles.values():
            per.update(sh)
        self.shingle_docs = {k: n for k, n in per.items() if n >= SHINGLE_MIN_DOCS}

    @staticmethod
    def _keys(sentence: str) -> list[tuple]:
        w = _key_words(sentence)
        if len(w) < KEY_WORDS:
            return []
        return [("<",) + tuple(w[:KEY_WORDS]), (">",) + tuple(w[-KEY_WORDS:])]

    @staticmethod
    def _shingles(sentence: str) -> set[int]:
        w = _key_words(sentence)
        return {hash(tuple(w[i:i + SHINGLE_WORDS])) for i in range(len(w) - SHINGLE_WORDS + 1)}

    def documents(self, sentence: str) -> int:
        """The most documents any key of ``sentence`` occurs in (0 when under the threshold)."""
        return max((self.counts.get(k, 0) for k in self._keys(sentence)), default=0)

    def template(self, sentence: str) -> bool:
        """True when ``sentence`` is made of shingles many documents share (see the class doc)."""
        sh = self._shingles(sentence)
        return len(sh) >= 2 and sum(1 for k in sh if k in self.shingle_docs) >= TEMPLATE_SHARE * len(sh)

    def __contains__(self, sentence: str) -> bool:
        return self.documents(sentence) >= self.threshold or self.template(sentence)


#: A transcript's speaker label at the start of a line ("KEVIN SCOTT: ", "Christina Warren: ").
_TURN = re.compile(r"(?m)^\W{0,3}([A-Z][A-Za-z.'\u2019-]+(?: [A-Z][A-Za-z.'\u2019-]+){0,3}):\s")


def speaker_of(unit_text: str, sentence: str) -> str:
    """Who says ``sentence`` in a transcript: the last speaker label (a line opening on one to four
    capitalised words and a colon) at or before where the sentence starts in ``unit_text``, shown in title
    case ("Sam Altman"); "" when the unit holds no label before it or the sentence is not found."""
    words = sentence.split()
    at = -1
    if words:
        body = _SPEAKER.sub("", sentence).split()
        probe = re.escape(" ".join(body[:6])).replace("\\ ", "\\s+") if body else ""
        m = re.search(probe, unit_text) if probe else None
        at = m.start() if m else -1
    if at < 0:
        return ""
    label = ""
    for m in _TURN.finditer(unit_text, 0, at + 1):
        label = m.group(1)
    return " ".join(w.capitalize() for w in label.split()) if label.isupper() else label


@dataclass
class Statement:
    """One quoted sentence: its text unit's number, document and position, and who says it (:func:`speaker_of`)."""

    text: str
    source: int
    doc_id: str
    unit: int
    of: int
    rel: float = 0.0
    speaker: str = ""


@dataclass
class Theme:
    """One theme of an answer (see the module doc); ``coverage`` as :func:`slmgraph.query.documents.coverage`."""

    report: int
    topic: str
    coverage: dict
    doc_ids: list
    names: list
    opening: str = ""
    statements: list = field(default_factory=list)
    score: float = 0.0
    concepts: list = field(default_factory=list)


@dataclass
class _Unit:
    chunk_id: str
    number: int
    doc_id: str
    unit: int
    text: str


class ThemeIndex:
    """What a theme answer reads from one index: documents, the units of communities, boilerplate."""

    def __init__(self, store):
        self.store = store
        self.docs: list[Doc] = corpus_documents(store)
        self.doc_by_id = {d.doc_id: d for d in self.docs}
        self._boiler: Boilerplate | None = None
        self._has_topic = any(r[0] == "topic" for r in store.con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'community_reports'").fetchall())

    @property
    def boilerplate(self) -> Boilerplate:
        if self._boiler is None:
            units = self.store.con.execute("SELECT doc_id, text FROM text_units").fetchall()
            self._boiler = Boilerplate(units)
        return self._boiler

    @property
    def concept_names(self) -> set[str]:
        """Case-folded names of the index's concept nodes (empty in an index built without concepts)."""
        if getattr(self, "_concepts", None) is None:
            import duckdb

            try:
                self._concepts = {str(n).casefold() for (n,) in self.store.con.execute(
                    "SELECT e.name FROM entities e JOIN concepts c USING (entity_id)").fetchall()}
            except duckdb.Error:
                self._concepts = set()
        return self._concepts

    def unit_phrases(self, chunks: list[str]) -> dict[str, list[tuple[str, str]]]:
        """``chunk_id -> [(key, surface)]``: the noun phrases the concept pass found in each text unit
        (``concept_mentions``, every phrase, not only those kept as nodes); empty in an index without them."""
        import duckdb

        if not chunks:
            return {}
        q = ",".join("?" * len(chunks))
        out: dict[str, list] = {}
        try:
            for c, k, n in self.store.con.execute(
                    f"SELECT chunk_id, norm, name FROM concept_mentions WHERE chunk_id IN ({q})", list(chunks)).fetchall():
                out.setdefault(c, []).append((str(k), str(n or k)))
        except duckdb.Error:
            return {}
        return out

    @property
    def phrase_units(self) -> dict[str, int]:
        """``phrase key -> the number of text units it occurs in`` over the whole index (see :meth:`unit_phrases`)."""
        if getattr(self, "_phrase_df", None) is None:
            import duckdb

            try:
                self._phrase_df = dict(self.store.con.execute(
                    "SELECT norm, count(DISTINCT chunk_id) FROM concept_mentions GROUP BY norm").fetchall())
            except duckdb.Error:
                self._phrase_df = {}
        return self._phrase_df

    def phrase_documents(self, phrases: list[str]) -> list[str]:
        """The documents whose text units hold any of ``phrases`` (as :meth:`unit_phrases` writes them), in
        corpus order; [] in an index without phrases."""
        import duckdb

        if not phrases:
            return []
        q = ",".join("?" * len(phrases))
        try:
            docs = {d for (d,) in self.store.con.execute(
                f"SELECT DISTINCT t.doc_id FROM concept_mentions m JOIN text_units t USING (chunk_id) "
                f"WHERE lower(m.name) IN ({q})", [p.casefold() for p in phrases]).fetchall()}
        except duckdb.Error:
            return []
        return sorted((d for d in docs if d in self.doc_by_id), key=lambda d: self.doc_by_id[d].pos)

    @property
    def n_units(self) -> int:
        return int(self.store.con.execute("SELECT count(*) FROM text_units").fetchone()[0])

    def topics(self, ids: list[int]) -> dict[int, str]:
        """``community_id -> topic label`` where the index holds one (else absent: the caller uses the title)."""
        if not ids or not self._has_topic:
            return {}
        q = ",".join("?" * len(ids))
        return {cid: t for cid, t in self.store.con.execute(
            f"SELECT community_id, topic FROM community_reports WHERE community_id IN ({q})", list(ids)).fetchall()
            if t and t.strip()}

    def term_documents(self, ids: list[int]) -> dict[int, dict[str, set]]:
        """``community_id -> {member name (case-folded) -> the documents whose text units mention it}``."""
        if not ids:
            return {}
        q = ",".join("?" * len(ids))
        out: dict[int, dict[str, set]] = {}
        for cid, name, doc_id in self.store.con.execute(f"""
                SELECT DISTINCT m.community_id, e.name, t.doc_id FROM community_members m
                JOIN entities e USING (entity_id) JOIN entity_text_units u USING (entity_id)
                JOIN text_units t ON t.chunk_id = u.chunk_id WHERE m.community_id IN ({q})""", list(ids)).fetchall():
            if doc_id in self.doc_by_id:
                out.setdefault(cid, {}).setdefault(str(name).casefold(), set()).add(doc_id)
        return out

    def units(self, ids: list[int]) -> dict[int, list[_Unit]]:
        """``community_id -> its text units`` (those mentioning a member entity), in corpus order."""
        if not ids:
            return {}
        from slmgraph.query.answer import unit_numbers

        numbers = unit_numbers(self.store)
        q = ",".join("?" * len(ids))
        rows = self.store.con.execute(f"""
            SELECT DISTINCT m.community_id, t.chunk_id, t.doc_id, t.ord, t.text FROM community_members m
            JOIN entity_text_units e USING (entity_id) JOIN text_units t USING (chunk_id)
            WHERE m.community_id IN ({q})""", list(ids)).fetchall()
        pos = self._unit_positions({r[2] for r in rows})
        out: dict[int, list[_Unit]] = {}
        for cid, chunk, doc_id, ord_, text in rows:
            if doc_id in self.doc_by_id and chunk in numbers:
                out.setdefault(cid, []).append(_Unit(chunk, numbers[chunk], doc_id, pos.get((doc_id, ord_), 1), text))
        for v in out.values():
            v.sort(key=lambda u: (self.doc_by_id[u.doc_id].pos, u.unit))
        return out

    def _unit_positions(self, doc_ids: set) -> dict:
        if not doc_ids:
            return {}
        q = ",".join("?" * len(doc_ids))
        rows = self.store.con.execute(f"SELECT doc_id, ord FROM text_units WHERE doc_id IN ({q}) ORDER BY doc_id, ord",
                                      list(doc_ids)).fetchall()
        out, last, k = {}, None, 0
        for doc_id, ord_ in rows:
            k = k + 1 if doc_id == last else 1
            last = doc_id
            out[(doc_id, ord_)] = k
        return out

    def all_units(self) -> list[_Unit]:
        """Every text unit of the index's documents, in corpus order."""
        from slmgraph.query.answer import unit_numbers

        numbers = unit_numbers(self.store)
        rows = self.store.con.execute("SELECT chunk_id, doc_id, ord, text FROM text_units").fetchall()
        pos = self._unit_positions({r[1] for r in rows})
        out = [_Unit(c, numbers[c], d, pos.get((d, o), 1), t) for c, d, o, t in rows
               if d in self.doc_by_id and c in numbers]
        out.sort(key=lambda u: (self.doc_by_id[u.doc_id].pos, u.unit))
        return out

    def unit_owners(self, chunks: list[str], ids: list[int], scores: dict) -> dict[str, int]:
        """``chunk_id -> community_id``: of the communities ``ids``, the one with the most members the unit
        mentions (ties: the higher ``scores``, then the lower id); a unit mentioning none is absent."""
        if not chunks or not ids:
            return {}
        qc, qi = ",".join("?" * len(chunks)), ",".join("?" * len(ids))
        best: dict[str, tuple] = {}
        for chunk, cid, n in self.store.con.execute(f"""
                SELECT u.chunk_id, m.community_id, count(DISTINCT m.entity_id) FROM entity_text_units u
                JOIN community_members m USING (entity_id) WHERE u.chunk_id IN ({qc}) AND m.community_id IN ({qi})
                GROUP BY 1, 2""", list(chunks) + list(ids)).fetchall():
            key = (n, float(scores.get(cid, 0.0)), -cid)
            if chunk not in best or key > best[chunk][0]:
                best[chunk] = (key, cid)
        return {c: v[1] for c, v in best.items()}

    def unit_vectors(self, chunks: list[str]) -> dict[str, np.ndarray]:
        """Stored text-unit embeddings of ``chunks`` (any embedder tag: used only to rank a theme's units)."""
        if not chunks:
            return {}
        q = ",".join("?" * len(chunks))
        return {k: np.asarray(v, dtype=np.float32) for k, v in self.store.con.execute(
            f"SELECT item_id, vector FROM embeddings WHERE kind = 'text_unit' AND item_id IN ({q})",
            list(chunks)).fetchall()}


def _statement_ok(s: str, ix: ThemeIndex) -> bool:
    """True when the sentence ``s`` (whitespace folded) may be a theme's statement: a whole, plain sentence
    of :data:`MIN_WORDS` words or more and at most :data:`MAX_STATEMENT_CHARS`, no question or fragment, no
    path, no cut-off opening, no boilerplate (:class:`Boilerplate`) and no framing of the conversation (:func:`framing`)."""
    return not (len(s) > MAX_STATEMENT_CHARS or not quotable(s, MIN_WORDS) or not _ENDED.search(s)
                or not _OPENED.match(s)
                or any(k in ("question", "fragment") for k in sentence_kinds(s))
                or s.startswith(("../", "./", "/")) or framing(s) or s in ix.boilerplate)


def _unit_norm(v):
    v = np.asarray(v, dtype=np.float32)
    return v / max(float(np.linalg.norm(v)), 1e-9)


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
                                   and e.casefold() not in topic.casefold() and not junk(e, False)))[:KEY_NAMES]
        themes.append(Theme(cid, topic, coverage(d, ix.docs), d, names, score=float(scores.get(cid, 0.0)),
                            concepts=concepts))
    return themes


def _probe_vectors(probes: list[str] | None, embedder):
    return _embed(list(probes), embedder) if probes and embedder is not None else None


def focused_themes(ix: ThemeIndex, pool: list[dict], scores: dict, question_vec, embedder, *,
                   probes: list[str] | None = None, max_themes: int = MAX_THEMES) -> list[Theme]:
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
    evidence is and never holds a statement off the question. Its label is :func:`keyphrase_label`'s.
    Returns [] when no statement passes.
    """
    qv = _unit_norm(question_vec)
    units = ix.all_units()
    uvec = ix.unit_vectors([u.chunk_id for u in units])
    ranked = sorted((u for u in units if u.chunk_id in uvec),
                    key=lambda u: (-float(_unit_norm(uvec[u.chunk_id]) @ qv), u.number))[:EVIDENCE_UNITS]
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
            s = " ".join(s.split())
            if s in seen or not _statement_ok(s, ix):
                continue
            seen.add(s)
            cands.append((cid, Statement(s, u.number, u.doc_id, u.unit, ix.doc_by_id[u.doc_id].n_units,
                                         speaker=speaker_of(u.text, s))))
    if not cands:
        return []
    vecs = _embed([st.text for _, st in cands], embedder)
    cos = vecs @ qv
    pv = _probe_vectors(probes, embedder)
    off = (vecs @ pv.T).max(axis=1) if pv is not None else np.full(len(cands), -1.0)
    rel = []
    for k, (cid, st) in enumerate(cands):
        short = SHORT_PENALTY if len(_SPEAKER.sub("", st.text).split()) < FULL_WORDS else 0.0
        # a sentence leaning on what came before it ("It was ...", "Like we've got ...") says little out of context
        lean = FILLER_PENALTY if _FILLER.match(_SPEAKER.sub("", st.text).strip()) else 0.0
        st.rel = relevance(float(cos[k]), st.text, by_report[cid].get("entities")) - short - lean
        rel.append(st.rel)
    top = max(rel)
    live = [k for k in range(len(cands)) if rel[k] >= top - EVIDENCE_MARGIN and cos[k] - off[k] >= PROBE_GAP]
    order = list(dict.fromkeys(cands[k][0] for k in sorted(live, key=lambda k: (-rel[k], k))))[:max_themes]
    themes = {t.report: t for t in _themes_of(ix, [by_report[c] for c in order], scores)}
    mmr = _Mmr(vecs)
    used: list[str] = []
    taken: set[str] = set()
    out = []
    for cid in order:
        t = themes[cid]
        left = [k for k in live if cands[k][0] == cid]
        while left and len(t.statements) < PER_FOCUSED_THEME:
            k = max(left, key=lambda j: (mmr.value(j, rel[j]), -j))
            left.remove(k)
            st = cands[k][1]
            if any(near_duplicate(st.text, x) for x in used):
                continue
            t.statements.append(st)
            used.append(st.text)
            mmr.add(k)
        if t.statements:
            t.score = max(s.rel for s in t.statements)
            mine = [k for k in live if cands[k][1] in t.statements]
            picked = relabel(t, ix, embedder, [unit_of[cands[k][1].source] for k in mine], vecs[mine].mean(axis=0),
                             stated=[x.text for x in t.statements], taken=taken, min_terms=1)
            # a theme labelled by its statements' phrases is discussed where those phrases are
            d = ix.phrase_documents(picked)
            if d:
                t.doc_ids, t.coverage = d, coverage(d, ix.docs)
            # the concepts and names its sentence names are those its label or its statements hold
            said = " ".join(x.text for x in t.statements).casefold() + " " + t.topic.casefold()
            t.concepts = [c for c in t.concepts if re.search(r"(?<!\w)" + re.escape(c.casefold()) + r"(?!\w)", said)]
            t.names = [n for n in t.names if re.search(r"(?<!\w)" + re.escape(n.casefold()) + r"(?!\w)", said)]
            out.append(t)
    return out


def keyphrase_label(phrases: list[str], anchor, embedder, n: int = LABEL_TERMS,
                    diversity: float = LABEL_DIVERSITY, floor: float = 0.0) -> list[str]:
    """Up to ``n`` of ``phrases`` that say what a theme is: KeyBERT's maximal marginal relevance
    (Grootendorst 2020, ``keybert._mmr.mmr``; Carbonell & Goldstein 1998): the phrase nearest ``anchor``
    (a unit vector of the theme's text) first, then each next one maximising
    ``(1 - diversity) * cos(phrase, anchor) - diversity * max cos(phrase, chosen)``; a phrase whose words a
    chosen one holds ("council" after "council tax") is skipped, and so is one whose cosine with ``anchor``
    is under ``floor`` times the first phrase's. [] for no phrases."""
    phrases = list(dict.fromkeys(p for p in phrases if p and p.strip()))
    if not phrases or anchor is None or embedder is None:
        return []
    v = _embed(phrases, embedder)
    sim = v @ _unit_norm(anchor)
    chosen: list[int] = []
    words: list[set] = []
    while len(chosen) < n:
        best, val = None, None
        for i in range(len(phrases)):
            w = set(re.findall(r"\w+", phrases[i].casefold()))
            if i in chosen or any(w <= u or u <= w for u in words) or (
                    chosen and float(sim[i]) < floor * float(sim[chosen[0]])):
                continue
            red = max((float(v[i] @ v[j]) for j in chosen), default=0.0)
            x = (1 - diversity) * float(sim[i]) - diversity * red
            if val is None or x > val:
                best, val = i, x
        if best is None:
            break
        chosen.append(best)
        words.append(set(re.findall(r"\w+", phrases[best].casefold())))
    return [phrases[i] for i in chosen]


#: Words that make a phrase say how a speaker felt, not what was discussed ("amazing set", "brand new things").
_EVALUATIVE = frozenset("amazing incredible awesome crazy cool fantastic wonderful brilliant super brand terrible "
                        "fun nice neat weird cute lovely beautiful nasty horrible tremendous gigantic".split())


def label_worthy(phrase: str) -> bool:
    """False for a phrase that names no topic: junk (:func:`slmgraph.indexing.stages.topics.junk`), a glued word, a
    generic head noun ("approach things") or a generic or evaluative adjective ("amazing set", "other
    projects"; :data:`slmgraph.indexing.stages.concepts.GENERIC_NOUNS`, ``GENERIC_ADJECTIVES``)."""
    from slmgraph.indexing.stages.concepts import GENERIC_ADJECTIVES, GENERIC_NOUNS

    words = _WORD.findall(phrase.casefold())
    return bool(words) and not (junk(phrase, True) or glued(phrase, True) or words[-1] in GENERIC_NOUNS
                                or any(w in GENERIC_ADJECTIVES or w in _EVALUATIVE for w in words))


def theme_phrases(ix: ThemeIndex, chunks: list[str], stated: list[str] | None = None, limit: int = 20,
                  taken: set[str] | frozenset = frozenset()) -> list[str]:
    """Candidate phrases of a theme's label: the noun phrases of its text units ``chunks``
    (:meth:`ThemeIndex.unit_phrases`), of several words where there are at least two such, ranked by
    class-based TF-IDF (:func:`slmgraph.indexing.stages.topics.class_tfidf`'s weight with the theme as the
    class: the units of ``chunks`` holding the phrase, times ``log(1 + units / units holding it)``), at most
    ``limit``, as written most often. With ``stated`` (its statements), only phrases the statements name;
    phrases that are not :func:`label_worthy`, or whose key is in ``taken`` (an earlier theme's label), never."""
    import math

    per = ix.unit_phrases(list(dict.fromkeys(chunks)))
    tf: dict[str, int] = {}
    surface: dict[str, dict[str, int]] = {}
    folded = [_SPEAKER.sub("", x).casefold() for x in stated] if stated is not None else None
    for c, rows in per.items():
        for k, n in dict(rows).items():
            if _phrase_key(n) in taken or not label_worthy(n):
                continue
            if folded is not None and not any(re.search(r"(?<!\w)" + re.escape(n.casefold()) + r"(?!\w)", f)
                                              for f in folded):
                continue
            tf[k] = tf.get(k, 0) + 1
            surface.setdefault(k, {})[n] = surface.get(k, {}).get(n, 0) + 1
    if not tf:
        return []
    df, total = ix.phrase_units, max(ix.n_units, 1)
    multi = [k for k in tf if len(k.split()) > 1]
    keys = multi if len(multi) >= 2 else list(tf)
    ranked = sorted(keys, key=lambda k: (-tf[k] * math.log1p(total / max(df.get(k, 1), 1)), k))[:limit]
    return [max(surface[k].items(), key=lambda kv: (kv[1], kv[0]))[0] for k in ranked]


def _phrase_key(surface: str) -> str:
    """A phrase's words case-folded, a final "s" dropped ("Computer scientists" and "computer scientist" match)."""
    return " ".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in _WORD.findall(surface.casefold()))


def relabel(t: Theme, ix: ThemeIndex, embedder, chunks: list[str], anchor, stated: list[str] | None = None,
            taken: set[str] | None = None, min_terms: int = 2) -> list[str]:
    """Give ``t`` a label that reads as its topic: of its candidate phrases (:func:`theme_phrases` of its
    text units ``chunks``, with ``stated`` only those its statements name), the :data:`LABEL_TERMS` that
    :func:`keyphrase_label` picks against ``anchor`` (a vector of the theme's text: its statements' or units'
    centroid), joined as "A and B"; ``taken``: the phrase keys earlier themes' labels hold, skipped, and
    added to. The label stays as it is when fewer than ``min_terms`` phrases are found. Returns the
    phrases of the new label ([] when it stays)."""
    if anchor is None or embedder is None:
        return []
    taken = taken if taken is not None else set()
    phrases = theme_phrases(ix, chunks, stated, taken=frozenset(taken))
    # a theme labelled by its statements may take one phrase: a second only as near them as the first
    picked = keyphrase_label([p for p in phrases if _phrase_key(p) not in taken], anchor, embedder,
                             floor=LABEL_FLOOR if min_terms < 2 else 0.0)
    if len(picked) < max(1, min_terms):
        return []
    t.topic = _join(picked)
    t.concepts = picked  # the stored label's terms said what the new label replaces
    taken.update(_phrase_key(p) for p in picked)
    return picked


def build_themes(ix: ThemeIndex, reports: list[dict], scores: dict, question_vec, embedder, *,
                 wide: bool = False, temporal: bool = False, max_themes: int = MAX_THEMES,
                 figures: bool = False, question: str = "", pool: list[dict] | None = None,
                 probes: list[str] | None = None) -> list[Theme]:
    """The themes of an answer from the selected ``reports`` (dicts as :func:`slmgraph.indexing.stages.report_store.load_reports`,
    with ``entities``), best first: by ``scores`` (``community_id -> helpfulness``), or by coverage with
    ``wide``; themes whose topic nearly repeats an earlier one's, or with no statement, are left out.

    Args:
        question_vec: the question's vector (None: statements in corpus order).
        embedder: ``encode(list[str])`` for the candidate sentences (and a topic's vector).
        figures: the question asks about amounts or change (:func:`asks_figures`): statements with figures
            and dates first.
        pool: every report of the level (dicts with ``entities``): a focused question's themes are then
            found from its evidence (:func:`focused_themes`) among them, else (no statement passes) as below.
        probes: off-topic probe questions: a statement of a question with a topic (focused or over time) is
            nearer the question than any of them by :data:`PROBE_GAP` (:func:`focused_themes`), while any is.
    """
    # A focused question (a topic, not the whole corpus, not change over time) is answered by the sentences
    # nearest it: blind judges preferred that to spreading statements over the theme's documents.
    focused = not wide and not temporal and question_vec is not None
    if focused and pool and embedder is not None:
        # no statement on the question in the evidence (an embedder too coarse for the probes): the reports'
        # themes answer, as the question passed the helpfulness floor
        found = focused_themes(ix, pool, scores, question_vec, embedder, probes=probes, max_themes=max_themes)
        if found:
            return found
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
        themes.sort(key=lambda t: (-t.coverage["documents"], -t.score, t.report))
    else:
        themes.sort(key=lambda t: (-t.score, -t.coverage["documents"], t.report))
    kept: list[Theme] = []
    for t in themes:
        if any(near_duplicate(t.topic, k.topic, 0.8) for k in kept):
            continue
        kept.append(t)
        if len(kept) >= max_themes + 3:
            break
    units = ix.units([t.report for t in kept])
    by_report = {r["community_id"]: r for r in reports}
    qv = _unit_norm(question_vec) if question_vec is not None else None
    # Each theme's candidate sentences come from its units nearest the question (for a corpus-wide question,
    # nearest the theme's own report: the question names no topic to be near to).
    all_units = {u.chunk_id for us in units.values() for u in us}
    uvec = ix.unit_vectors(sorted(all_units))
    taken: set[str] = set()
    relabelled: set[int] = set()
    for t in kept:
        # its label from the phrases of the units it is discussed in, against their centroid, before its
        # statements are chosen (a corpus-wide question's statements are those nearest the label)
        mine = [u.chunk_id for u in units.get(t.report, []) if u.doc_id in set(t.doc_ids)] or \
            [u.chunk_id for u in units.get(t.report, [])]
        vs = [_unit_norm(uvec[c]) for c in mine if c in uvec]
        if relabel(t, ix, embedder, mine, np.mean(vs, axis=0) if vs else None, taken=taken):
            relabelled.add(t.report)
    anchors = {}
    if embedder is not None and (wide or qv is None):
        # the report's summary restates the stored label, which a new one replaces
        texts = [t.topic if t.report in relabelled else f"{t.topic}. {by_report[t.report].get('summary') or ''}"
                 for t in kept]
        vecs = _embed(texts, embedder) if texts else None
        anchors = {t.report: vecs[i] for i, t in enumerate(kept)} if vecs is not None else {}
    elif qv is not None:
        anchors = {t.report: qv for t in kept}
    cands: list[tuple[int, Statement]] = []  # (theme index, statement)
    for ti, t in enumerate(kept):
        inside = set(t.doc_ids)
        # A corpus-wide question quotes where the theme's terms are; a focused one, the unit nearest the question
        # among all the community's units (the question's evidence need not repeat the label's terms).
        us = ([u for u in units.get(t.report, []) if u.doc_id in inside] if wide else []) or units.get(t.report, [])
        a = anchors.get(t.report)
        if a is not None:
            ranked = sorted(us, key=lambda u: (-(float(_unit_norm(uvec[u.chunk_id]) @ a) if u.chunk_id in uvec
                                                 else -1.0), u.number))
        else:
            ranked = list(us)
        # Spread over the theme's documents: the best unit of each document, in rank order (statements come
        # from distinct documents, which the theme's sentence names).
        seen, spread = set(), []
        for u in ranked:
            if u.doc_id not in seen:
                seen.add(u.doc_id)
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
                s = " ".join(s.split())
                if not _statement_ok(s, ix) or (named_only and not names_named(s, named_only)):
                    continue
                cands.append((ti, Statement(s, u.number, u.doc_id, u.unit, ix.doc_by_id[u.doc_id].n_units,
                                            speaker=speaker_of(u.text, s))))
    vecs = None
    if cands and embedder is not None:  # a unit shared by several themes gives the same sentences: embed each once
        uniq = list(dict.fromkeys(c[1].text for c in cands))
        at = {t: i for i, t in enumerate(uniq)}
        u = _embed(uniq, embedder)
        vecs = u[[at[c[1].text] for c in cands]]
    rel = []
    for k, (ti, st) in enumerate(cands):
        a = anchors.get(kept[ti].report)
        cos = float(vecs[k] @ a) if vecs is not None and a is not None else 0.0
        short = SHORT_PENALTY if len(_SPEAKER.sub("", st.text).split()) < FULL_WORDS else 0.0
        # A focused question ranks by nearness to it alone, unless it asks for figures.
        weight = content_weight(st.text, kept[ti].concepts, figures) if not focused or figures else 0.0
        rel.append(relevance(cos, st.text, by_report[kept[ti].report].get("entities")) - short + weight)
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
        # Statements come from distinct documents; a theme whose candidates hold fewer documents than
        # PER_THEME repeats one up to PER_THEME statements (never over time, unless the corpus is one document).
        while left and len(t.statements) < per:
            fresh = left if focused else [j for j in left if cands[j][1].doc_id not in docs_used] or (
                left if (not temporal or len(ix.docs) == 1) and len(t.statements) < PER_THEME else [])
            if not fresh:
                break
            k = max(fresh, key=lambda j: (mmr.value(j, rel[j]), -j))
            left.remove(k)
            st = cands[k][1]
            if any(near_duplicate(st.text, u) for u in used):
                continue
            t.statements.append(st)
            used.append(st.text)
            docs_used.add(st.doc_id)
            mmr.add(k)
        if t.statements:
            if temporal:
                t.statements.sort(key=lambda s: (ix.doc_by_id[s.doc_id].pos, s.unit))
            out.append(t)
        if len(out) >= max_themes:
            break
    return out


def _join(items: list[str], sep: str = ", ", last: str = " and ") -> str:
    """"A", "A and B", "A, B and C" (``sep`` between items, ``last`` before the last)."""
    items = [i for i in items if i]
    return items[0] if len(items) == 1 else sep.join(items[:-1]) + last + items[-1] if items else ""


def _join_topics(items: list[str]) -> str:
    """Like :func:`_join`, but with semicolons when a topic holds commas, so a reader sees where each ends."""
    return _join(items, "; ", "; and ") if any("," in i for i in items) else _join(items)


def _quoted(topic: str) -> str:
    return f"\u201c{topic}\u201d" if "," in topic else topic


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def reach_text(cov: dict, share: bool = True) -> str:
    """"14 of 41 documents (34 %)" (``share``: with the percentage), "all 8 documents", "1 of 41 documents"."""
    n, of = cov["documents"], cov["of"]
    if n == of:
        return f"all {n} documents" if n > 1 else "the corpus's one document"
    # From the counts, not the rounded share: 5 of 11 is 45 %, where 0.455 would print 46.
    share = f" ({round(100 * n / of)} %)" if share and of > 1 and n > 1 else ""
    return f"{n} of {of} document{'s' if of != 1 else ''}{share}"


def _span(t: Theme, ix: ThemeIndex) -> str:
    """The dates the theme's first and last documents' titles hold (", dated 2016 to 2024"), else ""."""
    from slmgraph.indexing.stages.topics import title_date

    if len(t.doc_ids) < 2:
        return ""
    first, last = ix.doc_by_id.get(t.doc_ids[0]), ix.doc_by_id.get(t.doc_ids[-1])
    d0 = title_date(first.title) if first else None
    d1 = title_date(last.title) if last else None
    return f", dated {d0} to {d1}" if d0 and d1 and d0 != d1 else ""


def template_opening(t: Theme, ix: ThemeIndex | None = None) -> str:
    """The theme's sentences, built from the data: what it is (its key concepts and the names most tied
    to it), how widely the corpus discusses it (its reach, and the dates of its first and last documents
    where their titles hold dates), and which documents the statements under it come from -- "Flood
    defence, river level and sandbags, with Mayor Lena Ortiz and the Environment Agency: discussed in 6 of
    8 documents (75 %), dated 2024-01 to 2024-08. Quoted below from “minutes 2024-01” and “minutes 2024-05”."
    """
    concepts = [c for c in t.concepts if c.casefold() not in t.topic.casefold()]
    what = _cap(t.topic)
    if concepts:
        what += f" (with {_join(concepts[:KEY_CONCEPTS - 1])})"
    if t.names:
        what += f", most tied to {_join(t.names)}"
    text = f"{what}: discussed in {reach_text(t.coverage)}{_span(t, ix) if ix is not None else ''}."
    if ix is not None and t.statements and len(ix.docs) > 1:  # a one-document corpus: every quote is from it
        docs = sorted({s.doc_id for s in t.statements}, key=lambda d: ix.doc_by_id[d].pos)
        quoted = [ix.doc_by_id[d].name for d in docs]
        who = list(dict.fromkeys(s.speaker for s in t.statements if s.speaker))
        text += (f" Quoted below from {_join([chr(0x201c) + q + chr(0x201d) for q in quoted])}"
                 f"{f' (speakers: {_join(who)})' if who else ''}.")
    return text


def overview(themes: list[Theme], ix: ThemeIndex, *, wide: bool = False, temporal: bool = False) -> str:
    """The answer's opening paragraph, built from the data: for a corpus-wide question the main themes
    with how many documents discuss each ("Across the 8 documents, the main themes are flood defence (in
    6 of 8 documents), the budget shortfall (4) and ..."); for a focused question the themes that bear
    on it, the most relevant first, with their reach, and which of them the corpus discusses most widely;
    for a question about change over time, the span of documents the statements follow."""
    n_docs = len(ix.docs)
    if not themes:
        return ""
    items = [f"{t.topic} (in {reach_text(t.coverage, share=False)})" if i == 0 else
             f"{t.topic} (in {t.coverage['documents']})" for i, t in enumerate(themes)] if n_docs > 1 else \
        [t.topic for t in themes]
    if wide:
        where = f"Across the {n_docs} documents" if n_docs != 1 else "In its one document"
        text = (f"{where}, the corpus's main theme"
                f"{'s are' if len(themes) != 1 else ' is'} {_join_topics(items)}, the most widely discussed first.")
        if len(themes) > 1 and themes[0].coverage["documents"] > themes[-1].coverage["documents"]:
            text += (f" {_cap(_quoted(themes[0].topic))} runs through the most documents; {_quoted(themes[-1].topic)} is the"
                     f" narrowest of these (in {reach_text(themes[-1].coverage, False)}).")
        return text
    k = len(themes)
    text = (f"{k} themes of the corpus bear on this question, the most relevant first: {_join_topics(items)}." if k > 1 else
            f"One theme of the corpus bears on this question: {items[0]}.")
    if k > 1:
        widest = max(themes, key=lambda t: (t.coverage["documents"], -themes.index(t)))
        text += f" Of these, {_quoted(widest.topic)} is the most widely discussed (in {reach_text(widest.coverage, False)})."
    said = [(list(dict.fromkeys(s.speaker for s in t.statements if s.speaker)), t.topic) for t in themes]
    if any(who for who, _ in said):  # a transcript: who speaks to the question, theme by theme
        text += " Speakers quoted: " + "; ".join(f"{_join(who)} on {_quoted(topic)}" for who, topic in said if who) + "."
    if temporal:
        docs = sorted({s.doc_id for t in themes for s in t.statements}, key=lambda d: ix.doc_by_id[d].pos)
        if len(docs) > 1:
            text += " " + order_sentence(ix.doc_by_id[docs[0]], ix.doc_by_id[docs[-1]])
    return text


def statement_line(st: Statement, ix: ThemeIndex) -> str:
    """``- *document, unit 2 of 5*: sentence [Sources: 12]`` (a document of one unit: no position)."""
    doc = ix.doc_by_id[st.doc_id].name
    where = doc if st.of == 1 else f"{doc}, unit {st.unit} of {st.of}"
    return f"- *{where}*: {st.text} [Sources: {st.source}]"


def documents_cited(themes: list[Theme], ix: ThemeIndex) -> str:
    """``Documents cited:`` and one line per cited text unit (``- [12] document, unit 2 of 5``), in citation
    order; "" for none."""
    seen: dict[int, Statement] = {}
    for t in themes:
        for st in t.statements:
            seen.setdefault(st.source, st)
    if not seen:
        return ""
    lines = ["Documents cited:"]
    for n, st in seen.items():
        doc = ix.doc_by_id[st.doc_id].name
        lines.append(f"- [{n}] {doc if st.of == 1 else f'{doc}, unit {st.unit} of {st.of}'}")
    return "\n".join(lines)


def render_themes(themes: list[Theme], ix: ThemeIndex, *, wide: bool = False, temporal: bool = False,
                  scope: str = "") -> str:
    """The answer text: the overview paragraph (:func:`overview`), one section per theme (heading, the
    theme's sentences, its statements), the documents cited, and the sources line."""
    parts = [overview(themes, ix, wide=wide, temporal=temporal)]
    for i, t in enumerate(themes, start=1):
        lines = [f"### {i}. {t.topic} [Reports: {t.report}]", t.opening or template_opening(t, ix)]
        lines += [statement_line(st, ix) for st in t.statements]
        parts.append("\n".join(lines))
    cited = documents_cited(themes, ix)
    if cited:
        parts.append(cited)
    reports = [t.report for t in themes]
    sources = list(dict.fromkeys(s.source for t in themes for s in t.statements))
    parts.append(f"Sources: community reports {', '.join(map(str, reports))}"
                 f"{' (' + scope + ')' if scope else ''}; text units {', '.join(map(str, sources))}.")
    return "\n\n".join(parts)


def theme_points(themes: list[Theme], ix: ThemeIndex) -> list[dict]:
    """The structured points of ``Answer.points``: one per theme, ``{"topic", "text", "coverage", "reports",
    "sources", "documents"}`` (documents: ``{"doc_id", "document", "path"}`` of its statements' units)."""
    out = []
    for t in themes:
        docs = list(dict.fromkeys(s.doc_id for s in t.statements))
        out.append({"topic": t.topic, "text": " ".join([t.opening] + [s.text for s in t.statements]).strip(),
                    "coverage": t.coverage, "reports": [t.report],
                    "sources": list(dict.fromkeys(s.source for s in t.statements)),
                    "documents": [{"doc_id": d, "document": ix.doc_by_id[d].name, "path": ix.doc_by_id[d].path}
                                  for d in docs]})
    return out


def theme_answer(store, question: str, reports: list[dict], scores: dict, question_vec, embedder, *,
                 wide: bool = False, scope: str = "", writer=None, pool: list[dict] | None = None,
                 probes: list[str] | None = None) -> tuple[str, list[Theme], ThemeIndex]:
    """``(answer text, themes, index view)`` of a global answer by theme (see the module doc); the text is ""
    when no theme has a statement.

    Args:
        reports: the selected reports (with ``wide``: every report of the level), dicts with ``entities``.
        scores: ``community_id -> helpfulness 0-100``.
        writer: ``theme -> sentence or None``, the model's grounded sentence for a theme where the answer
            policy lets the model write it (None, or a None result: the template's sentences).
        pool, probes: as :func:`build_themes`.
    """
    ix = ThemeIndex(store)
    temporal = is_temporal(question)
    themes = build_themes(ix, reports, scores, question_vec, embedder, wide=wide, temporal=temporal,
                          figures=asks_figures(question), question=question, pool=pool, probes=probes)
    for t in themes:
        t.opening = template_opening(t, ix)
        written = writer(t) if writer is not None else None
        if written:
            t.opening = f"{written} {t.opening}"
    if not themes:
        return "", [], ix
    return render_themes(themes, ix, wide=wide, temporal=temporal, scope=scope), themes, ix


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
