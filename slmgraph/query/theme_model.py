"""What a theme is made of: the statement rules (boilerplate, framing, speakers, content weight), the
:class:`Statement` and :class:`Theme` records and the :class:`ThemeIndex` a global answer reads.

One concern: the data of a theme and the rules a sentence must pass to be one of its statements; building
the themes is :mod:`slmgraph.query.themes`, labelling them :mod:`slmgraph.query.theme_labels`, writing
them out :mod:`slmgraph.query.theme_render`.
"""


from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from dataclasses import dataclass, field

import numpy as np

from slmgraph.query.documents import Doc, corpus_documents, corpus_headings
from slmgraph.names.lexicon import LABEL_CAPITALS, LABEL_LETTERS, LABEL_WORDS, ROLE_WORDS
from slmgraph.query.extractive import (
    PROBE_GAP as EXTRACTIVE_PROBE_GAP, _EMPTY_WORDS, _SPEAKER, corpus_heading, filler, leans, quotable,
    sentence_kinds,
)
from slmgraph.store.corpus_stats import read_terms, word_stem


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
#: A shorter sentence is a statement when it states a figure of something (:func:`figure_line`: "Membership is
#: 493."): at least this many words, one of them a number and one a content word naming what it counts.
FIGURE_LINE_WORDS = 3
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
#: A question about change over time is answered by one timeline that follows its subject through the
#: documents speaking of it (:func:`slmgraph.query.themes.timeline_picks`): besides the nearest text units, the
#: nearest unit of each of the :data:`TIMELINE_DOCS` documents (works) nearest the question is read; a statement naming a
#: topic word of the question with at least :data:`TIMELINE_FLOOR` of the relevance of the answer's best one (or
#: within :data:`EVIDENCE_MARGIN` of it) may be a point, the best of each
#: document (a second within :data:`EVIDENCE_MARGIN` of the best, up to :data:`TIMELINE_PER_DOC`), at most
#: :data:`TIMELINE_STATEMENTS` points, so with more documents than that, the best of each of that many stretches of
#: consecutive documents.
TIMELINE_STATEMENTS = 12
TIMELINE_DOCS = 36
TIMELINE_FLOOR = 0.5
TIMELINE_PER_DOC = 2
#: A focused answer's statement is nearer the question than any off-topic probe question
#: (``prompts/offtopic_probes.txt``) is to it by at least this (cosine): the one gap every method quotes by.
PROBE_GAP = EXTRACTIVE_PROBE_GAP
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
#: A statement from a work's opening or closing part (or a document's first or last text unit) loses this much
#: relevance (cosine units): a show's intro and outro live there -- a guest's introduction, a welcome, a
#: sign-off -- so a sentence there is quoted only when it is clearly nearer the question than the rest.
EDGE_PENALTY = 0.1
#: A work of fewer parts (a document of fewer units) has no opening or closing part of its own.
EDGE_MIN_PARTS = 3
#: Key concepts and names a theme's sentence states at most.
KEY_CONCEPTS = 4
KEY_NAMES = 3
#: A transcript's stage cue in brackets ("[MUSIC]", "[inaudible]", "[mimics chords]"): no one's words.
_CUE = re.compile(r"\s*\[[^\]\d]{2,30}\]\s*")
#: A figure (a number, an amount, a share) or a date.
_FIGURE = re.compile(r"(?i)\d|[$\u00a3\u20ac\u00a5%]|\b(million|billion|thousand|hundred|percent|per cent|dozen)\b|"
                     r"\b(january|february|march|april|june|july|august|september|october|november|december)\b")
#: A number as written ("4.1", "1,200", "14").
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def figures_of(sentence: str) -> tuple[str, ...]:
    """The numbers ``sentence`` holds, in order ("£4 million, up 8 %" -> ("4", "8"))."""
    return tuple(_NUMBER.findall(sentence))


def repeats(a: str, b: str, figures: bool = False) -> bool:
    """True when statement ``a`` nearly repeats ``b`` (:func:`slmgraph.query.extractive.near_duplicate`); with
    ``figures`` (the question asks about amounts or change), never when their numbers differ: "a shortfall of
    £5 million" and "a shortfall of £6 million" are two figures of a series."""
    from slmgraph.query.extractive import near_duplicate

    return near_duplicate(a, b) and not (figures and figures_of(a) != figures_of(b))


#: An amount of money or a share ("£4 million", "$1.2bn", "8 %", "three percent").
_AMOUNT = re.compile(r"(?i)[$\u00a3\u20ac\u00a5%]|\b(million|billion|thousand|bn|percent|per cent|dollars?|pounds?|"
                     r"euros?)\b")


#: A count written with a thousands separator or as a decimal ("148,000", "1.5"), which a year is not.
_COUNT = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])|(?<![\d.,])\d+\.\d+(?![\d.])")


def has_figure(sentence: str) -> int:
    """How strongly ``sentence`` states a figure: 2 for an amount of money or a share (:data:`_AMOUNT`) or a
    count (:data:`_COUNT`: "148,000 passengers"), 1 for another number or a date (:data:`_FIGURE`), 0 for
    none."""
    body = _SPEAKER.sub("", sentence)
    return 2 if _AMOUNT.search(body) or _COUNT.search(body) else 1 if _FIGURE.search(body) else 0


#: A focused question about amounts also reads, as its evidence, a sentence holding an amount or a count
#: (:func:`has_figure` 2) that names a word of the question (:func:`names_asked`) when its cosine with the
#: question is within :data:`FIGURE_MARGIN` of the best statement's and it is nearer the question than any
#: off-topic probe: the sentence stating a figure is often phrased far from the question.
FIGURE_MARGIN = 0.4
#: A question word found in at least this share of the documents names no topic (the corpus's own subject).
UBIQUITOUS_SHARE = 0.9
#: Words of a question that say nothing of its topic (besides stop words).
_ASKING = frozenset("""ask asked answer changed change changes evolve evolved figure figures happen
happened number numbers time times year years over last past""".split())


def question_words(question: str) -> set[str]:
    """The topic words of ``question`` as :func:`word_stem`s: words of four letters or more that are no stop
    word, do not only ask and are no number word ("How many passengers did the ferry carry?" -> {"passenger",
    "ferry", "carry"}; "the twelve newsletters" gives "newsletter", not "twelve": a count or an order names no
    topic, :func:`slmgraph.names.forms.number_word`). Numbers in digits stay: a year ("2019") is what a question
    is about."""
    from slmgraph.names.forms import STOP, number_word

    return {word_stem(w) for w in _WORD.findall((question or "").casefold())
            if len(w) >= 4 and w not in STOP and w not in _ASKING and not (w.isalpha() and number_word(w))}


def text_stems(text: str) -> set[str]:
    """The :func:`word_stem`s of every word of ``text`` (any case)."""
    return {word_stem(w) for w in _WORD.findall((text or "").casefold())}


def topic_words(question: str, units) -> set[str]:
    """:func:`question_words` of ``question`` less those found in at least :data:`UBIQUITOUS_SHARE` of the
    documents of ``units`` (objects with ``text`` and ``doc_id``)."""
    words = question_words(question)
    docs: dict[str, set] = {w: set() for w in words}
    all_docs = set()
    for u in units:
        all_docs.add(u.doc_id)
        for w in text_stems(u.text) & words:
            docs[w].add(u.doc_id)
    n = len(all_docs)
    return {w for w in words if n < 2 or len(docs[w]) < UBIQUITOUS_SHARE * n}


@lru_cache(maxsize=1 << 16)
def stem_forms(word: str) -> frozenset[str]:
    """The stems ``word`` may have been asked by: its own, and for a word ending in "e" or "es" its other
    number's ("drone" -> {"drone", "dron"}, "drones" -> {"dron", "drone"}), since :func:`word_stem` cuts "es"
    whole and a singular and its plural would otherwise never meet."""
    w = word.casefold()
    out = {word_stem(w)}
    if w.endswith("es"):
        out.add(word_stem(w[:-1]))
    elif w.endswith("e"):
        out.add(word_stem(w + "s"))
    return frozenset(out)


def names_asked(sentence: str, words: set[str]) -> bool:
    """True when ``sentence`` holds a word of ``words`` (:func:`question_words`), in either number."""
    return bool(words) and any(not stem_forms(w).isdisjoint(words) for w in _WORD.findall(sentence.casefold()))


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
    r"follow [^.]{0,40}\bon (twitter|your favou?rite)|our guests? (today|this week)|guests? today\b|"
    r"today['\u2019]s guests?\b|\btoday,? (on the show,? )?our guests? (is|are)\b|"
    r"(i['\u2019]d|i would|we['\u2019]d|let['\u2019]s) (love to |like to )?(talk|chat|hear|ask you)( now)? (a (little )?bit )?about\b)")


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
    w = -FILLER_PENALTY if leans(body) else 0.0
    folded = body.casefold()
    named = sum(1 for c in concepts if c and re.search(r"(?<!\w)" + re.escape(c.casefold()) + r"(?!\w)", folded))
    w += CONCEPT_BONUS * min(MAX_CONCEPTS_NAMED, named)
    if _FIGURE.search(body):
        w += FIGURE_QUESTION_BONUS if figures else FIGURE_BONUS
    return w


def spoken(sentence: str) -> str:
    """``sentence`` without a transcript's bracketed stage cues ("[MUSIC] Welcome back." -> "Welcome back."),
    whitespace folded."""
    return " ".join(_CUE.sub(" ", sentence).split())


#: A reply's opening that praises the question, not answers it ("That's such a great question, and I appreciate that.").
PLEASANTRY = re.compile(r"(?i)\b((great|good|wonderful|tough|hard|fascinating|interesting|fair|excellent) question|"
                        r"i appreciate (that|the question))\b")


#: A transcript's header line: a field of its metadata, not anyone's words ("Guest: Joe Fletcher (bus driver)",
#: "Broadcast: 16 April 2026"); a label in capitals ("GUEST: I grew up ...") is a speaker's turn, no header.
_META = re.compile(r"^\W*(guests?|hosts?|co-?hosts?|presenters?|interviewers?|interviewees?|producers?|broadcast|"
                   r"recorded|recording|date|location|transcript|transcribed by|edited by|episode \d+)\s*:",
                   re.IGNORECASE)


def framing(sentence: str) -> bool:
    """True when ``sentence`` frames the conversation rather than states anything (:data:`_FRAMING`:
    "Today I'm joined by my colleague ...", "We have a great episode for you today", "Thanks for coming
    in"), or is a header's field (:data:`_META`: "Guest: Joe Fletcher (bus driver)."): it is never a statement
    of a theme."""
    meta = _META.match(sentence)
    return bool(_FRAMING.search(_SPEAKER.sub("", sentence)) or (meta and not meta.group(1).isupper()))


#: Licence and legal terms (a copyright notice, a licence, a warranty disclaimer, refund terms): a passage dense in
#: them is an edition's legal matter, not what its corpus discusses (:func:`legal_paragraph`).
_LEGAL = re.compile(r"(?i)\u00a9|\b(copyright\w*|licen[cs]\w*|trademark\w*|warrant(?:y|ies)|refund\w*|liabilit\w*|"
                    r"liable|disclaim\w*|indemn\w*|infring\w*|royalt(?:y|ies)|merchantab\w*|redistribut\w*|"
                    r"terms of (?:use|service)|all rights reserved|intellectual property|public domain)\b")
#: A paragraph is legal matter when it holds at least :data:`LEGAL_MIN_TERMS` legal terms of at least
#: :data:`LEGAL_MIN_KINDS` kinds (their first five letters), at least :data:`LEGAL_DENSITY` of its words: one
#: "licence" in a story is no licence text, a copyright notice beside its disclaimer and refund terms is.
LEGAL_MIN_TERMS = 3
LEGAL_MIN_KINDS = 2
LEGAL_DENSITY = 0.02
#: A community is the licence's when at least this share of its members' mentions lie in legal matter.
LEGAL_COMMUNITY_SHARE = 0.5
#: The line an e-book (Project Gutenberg's) opens its text with, or closes it with, before or after its
#: licence and header ("*** START OF THE PROJECT GUTENBERG EBOOK A CHRISTMAS CAROL ***", "*** END OF ...").
_EDITION_MARK = re.compile(r"(?im)^[ \t]*\*{3}[ \t]*(START|END) OF\b[^\n]*")
_PARAGRAPHS = re.compile(r"(\n[ \t]*\n)")


def legal_paragraph(paragraph: str) -> bool:
    """True when ``paragraph`` is dense in licence and legal terms (:data:`_LEGAL`, see :data:`LEGAL_MIN_TERMS`)."""
    hits = [h.casefold()[:5] for h in (m.group(0) for m in _LEGAL.finditer(paragraph))]
    return (len(hits) >= LEGAL_MIN_TERMS and len(set(hits)) >= LEGAL_MIN_KINDS
            and len(hits) >= LEGAL_DENSITY * max(1, len(paragraph.split())))


def story_text(units) -> dict[str, str]:
    """The text of each text unit that its corpus's themes may read, for the units that lose some:
    ``chunk_id -> kept text`` ("" for a unit wholly dropped; a unit keeping all of its text is absent).

    ``units``: ``(chunk_id, doc_id, ord, text)`` of every text unit. Dropped: an e-book's header before its
    ``*** START OF ...`` line (one in the first half of its document) and its licence after its ``*** END OF ...``
    line (one in the second half), and any paragraph (text between blank lines) dense in licence and legal terms
    (:func:`legal_paragraph`). An edition's legal matter is not what the book is about; the index keeps it, so
    a search asking about the licence still finds it.
    """
    by_doc: dict[str, list] = {}
    for c, d, o, text in units:
        by_doc.setdefault(d, []).append((o, c, text or ""))
    out: dict[str, str] = {}
    for rows in by_doc.values():
        rows.sort()
        n = len(rows)
        kept = [t for _, _, t in rows]
        start = end = None
        for i, t in enumerate(kept):
            for m in _EDITION_MARK.finditer(t):
                at = (i + m.start() / max(1, len(t))) / n
                if m.group(1).upper() == "END" and end is None and at >= 0.5:
                    end = (i, m.start())
                elif m.group(1).upper() == "START" and at <= 0.5:
                    start = (i, m.end())
        if end is not None:
            kept = kept[:end[0]] + [kept[end[0]][:end[1]]] + [""] * (n - end[0] - 1)
        if start is not None:
            kept = [""] * start[0] + [kept[start[0]][start[1]:]] + kept[start[0] + 1:]
        for (_, c, text), k in zip(rows, kept):
            k = "".join("" if p.strip() and legal_paragraph(p) else p
                        for p in _PARAGRAPHS.split(k))
            if k != text:
                out[c] = k if re.search(r"\w", k) else ""
    return out


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
        return [("<",) + tuple(w[:KEY_WORDS]), (">",) + tuple(w[-KEY_WORDS:]), ("=",) + tuple(w)]

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
        if _NUMBER.search(sentence):
            # a sentence of figures is news when its figures are ("Revenue was $4.1 billion, up 8 %" each
            # quarter): boilerplate only when repeated whole, figures and all
            return max((self.counts.get(k, 0) for k in self._keys(sentence) if k[0] == "="), default=0) \
                >= self.threshold
        return self.documents(sentence) >= self.threshold or self.template(sentence)


#: A label and a colon at the start of a line ("KEVIN SCOTT: ", "Christina Warren: ") and the rest of the line; a
#: bullet's or a heading's marker before it is kept in group 1 so that :func:`_turns` can refuse it.
_TURN = re.compile(rf"(?m)^([^\w\n]{{0,3}})([{LABEL_CAPITALS}][{LABEL_LETTERS}.'\u2019-]+(?: [{LABEL_CAPITALS}][{LABEL_LETTERS}.'\u2019-]+){{0,3}}):[ \t]*(.*)")
#: Marks that open a list item or a heading, never a speaker's turn ("- Visits: 655,000", "# Library: Report").
_ITEM_MARKS = frozenset("-*\u2022\u2013\u2014#>+|")


def _prose(rest: str, caps: bool = False) -> bool:
    """True when what follows a label reads as speech: words with a lower-case one or a sentence's stop ("Yes,
    we did.", "Nice. (Laughter.)"), not opening on a figure unless the label is in capitals (``caps``: "SAM
    ALTMAN: 2003. I was born in '85."), unlike a heading's title ("Annual Report 2023-24") or a figure."""
    rest = rest.strip()
    if not any(c.isalpha() for c in rest) or (not caps and (rest[0].isdigit() or rest[0] in "$\u00a3\u20ac%")):
        return False
    return any(w[:1].islower() for w in rest.split()) or any(c in rest for c in ".!?\u2026") or "--" in rest


def _caps(label: str) -> bool:
    """True for a label written in capitals ("KEVIN SCOTT"), a transcript's way of marking a turn."""
    return label.isupper() and sum(c.isalpha() for c in label) > 1


def _no_one(label: str) -> bool:
    """True for a label that names no one: words of :data:`LABEL_WORDS` and office words only ("Present", "Chair")."""
    return all(w.casefold().rstrip(".") in LABEL_WORDS or w.casefold().rstrip(".") in ROLE_WORDS
               for w in label.split())


def _turns(unit_text: str) -> list[tuple[int, str]]:
    """The speaker turns of ``unit_text`` as (offset, label), in order: a label opening a line, not after a list's
    or a heading's mark, followed by speech (:func:`_prose`, on its line or the next), that is written in capitals
    ("KEVIN SCOTT:"), opens two or more such lines, or stands in a unit where such a turn is taken (turn-taking)."""
    cands = []
    for m in _TURN.finditer(unit_text):
        if set(m.group(1)) & _ITEM_MARKS:
            continue
        rest = m.group(3) if m.group(3).strip() else unit_text[m.end() + 1:].split("\n", 1)[0]
        if _prose(rest, _caps(m.group(2))):
            cands.append((m.start(2), m.group(2)))
    seen = Counter(label for _, label in cands)
    sure = {label for label in seen if not _no_one(label) and (_caps(label) or seen[label] >= 2)}
    # a unit cut inside its first label ("LIE STROSS:" of "CHARLIE STROSS:") names the turn by the whole label
    whole = {label: next((w for w in seen if len(w) > len(label) and w.endswith(label)
                          and w[-len(label) - 1].isalpha()), label) for label in seen}
    return [(at, whole[label] if at == 0 else label) for at, label in cands
            if sure and (label in sure or len(seen) >= 2)]


def speaker_of(unit_text: str, sentence: str) -> str:
    """Who says ``sentence`` in a transcript: the last speaker turn (:func:`_turns`: a line opening on one to
    four capitalised words and a colon) at or before where the sentence starts in ``unit_text``, shown in title
    case ("Sam Altman"); "" when the unit holds no label before it, the label names no one (words of
    :data:`slmgraph.names.lexicon.LABEL_WORDS` and office words only) or the sentence is not found."""
    at = _sentence_at(unit_text, sentence)
    if at < 0:
        return ""
    label = ""
    for start, name in _turns(unit_text):
        if start > at:
            break
        label = name
    if _no_one(label):
        return ""  # a list's or a role's label ("Present:", "Apologies:", "Chair:") names no one
    return _shown_label(label)


def _sentence_at(unit_text: str, sentence: str) -> int:
    """Where ``sentence`` (its first six words, a speaker label dropped, any spacing) starts in ``unit_text``; -1
    when not found."""
    body = _SPEAKER.sub("", sentence).split() if sentence.split() else []
    probe = re.escape(" ".join(body[:6])).replace("\\ ", "\\s+") if body else ""
    m = re.search(probe, unit_text) if probe else None
    return m.start() if m else -1


def _shown_label(label: str) -> str:
    """A speaker label as answers name the speaker: "KEVIN SCOTT" in title case, "Christina Warren" as written."""
    return " ".join(w.capitalize() for w in label.split()) if label.isupper() else label


def opening_speaker(before: str, text: str) -> str:
    """Who is speaking where ``text`` (a text unit) opens, from ``before`` (the unit before it in its work, which
    it may overlap): the last speaker turn of ``before`` ahead of where ``text`` opens in it (its end,
    when they do not overlap), in title case as :func:`speaker_of` gives it; "" without one."""
    head = text[:60]
    at = before.find(head) if head else -1
    cut = at if at >= 0 else len(before)
    label = ""
    for start, name in _turns(before):
        if start >= cut:
            break
        label = name
    if not label or _no_one(label):
        return ""
    return _shown_label(label)


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
    #: the community's documents (:func:`slmgraph.query.documents.community_documents`), which ``coverage`` counts
    community_docs: list = field(default_factory=list)
    #: the reports it cites: those of the communities owning its statements' text units (empty: ``report``)
    reports: list = field(default_factory=list)
    #: a timeline's documents that speak to the question, and the stretches of consecutive ones its points are
    #: picked from (0: none, each point is its own document's; :func:`slmgraph.query.themes.timeline_picks`)
    followed: int = 0
    stretches: int = 0
    #: the text units (chunk ids) its label's phrases are in, where a corpus-wide answer counts its reach by them
    #: (empty: its community's units; :func:`slmgraph.query.themes.cover_passages`)
    passages: list = field(default_factory=list)


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
    def story(self) -> dict[str, str]:
        """:func:`story_text` of the index's text units: ``chunk_id -> the text its themes may read`` for the units
        holding an edition's header, licence or other legal matter ("" for a unit of nothing else)."""
        if getattr(self, "_story", None) is None:
            self._story = story_text(self.store.con.execute("SELECT chunk_id, doc_id, ord, text FROM text_units").fetchall())
        return self._story

    @property
    def headings(self) -> frozenset:
        """The section titles of the index's text units (:func:`slmgraph.query.extractive.heading_keys`)."""
        if getattr(self, "_headings", None) is None:
            self._headings = corpus_headings(self.store)
        return self._headings

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

    def at_edge(self, doc_id: str, unit: int) -> bool:
        """True when the text unit ``unit`` (1-based) of ``doc_id`` opens or closes its work: the work's first or
        last part (a work of :data:`EDGE_MIN_PARTS` parts or more), or, for a document that is no part, its
        first or last unit (of :data:`EDGE_MIN_PARTS` or more)."""
        d = self.doc_by_id.get(doc_id)
        if d is None:
            return False
        if getattr(self, "_spans", None) is None:
            spans: dict = {}
            for x in self.docs:
                if x.work is not None and x.part is not None:
                    lo, hi, n = spans.get(x.work, (x.part, x.part, 0))
                    spans[x.work] = (min(lo, x.part), max(hi, x.part), n + 1)
            self._spans = spans
        if d.work is not None and d.part is not None and d.work in self._spans:
            lo, hi, n = self._spans[d.work]
            return n >= EDGE_MIN_PARTS and d.part in (lo, hi)
        return d.n_units >= EDGE_MIN_PARTS and unit in (1, d.n_units)

    def point_in_work(self, doc_id: str, unit: int, within: float = 0.5) -> float:
        """How far into its work the text unit ``unit`` (1-based) of ``doc_id`` is, from 0 (the work's opening) to 1
        (its end): the document's rank among its work's parts plus the unit's middle (or the point ``within`` it, 0
        to 1) within the document, over the work's parts; a document that is no part is its own work. 0.5 for an
        unknown document."""
        d = self.doc_by_id.get(doc_id)
        if d is None:
            return 0.5
        if getattr(self, "_ranks", None) is None:
            works: dict = {}
            for x in self.docs:
                works.setdefault(x.work if x.work is not None else x.doc_id, []).append(x)
            self._ranks = {x.doc_id: (i, len(ds)) for ds in works.values()
                           for i, x in enumerate(sorted(ds, key=lambda y: (y.part if y.part is not None else 0, y.pos)))}
        i, n = self._ranks[doc_id]
        return (i + (min(max(unit, 1), d.n_units) - 1 + within) / max(d.n_units, 1)) / n

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

    def phrase_vectors(self):
        """``(keys, matrix)``: the noun phrases the embed stage embedded (kind ``phrase``,
        :func:`slmgraph.indexing.stages.embed.phrase_keys`) and their unit vectors, shape ``(n, dim)``;
        ``([], None)`` in an index without them. Read once."""
        got = getattr(self, "_phrase_vecs", None)
        if got is None:
            import duckdb

            try:
                rows = self.store.con.execute(
                    "SELECT item_id, vector FROM embeddings WHERE kind = 'phrase' ORDER BY item_id").fetchall()
            except duckdb.Error:
                rows = []
            got = ([k for k, _ in rows], np.asarray([v for _, v in rows], dtype=np.float32) if rows else None)
            self._phrase_vecs = got
        return got

    @property
    def phrase_units(self) -> dict[str, int]:
        """``phrase key -> the number of text units it occurs in`` over the whole index (see :meth:`unit_phrases`)."""
        if getattr(self, "_phrase_df", None) is None:
            import duckdb

            stored = read_terms(self.store.con, "phrase")
            if stored is not None:
                self._phrase_df = {k: u for k, (u, _) in stored.items()}
                return self._phrase_df
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
        """``community_id -> its text units`` (those mentioning a member entity), in corpus order, each with the text
        its themes may read (:attr:`story`): a unit of legal matter alone is none, and a unit partly of it is a
        community's only where the rest names one of its members."""
        if not ids:
            return {}
        from slmgraph.query.answer import unit_numbers

        numbers = unit_numbers(self.store)
        legal = self.legal_mentions
        if legal:  # a community mentioned mostly in legal matter is the licence's, no theme of the corpus
            ids = [c for c in ids if not self._legal_community(c, legal)]
            if not ids:
                return {}
        q = ",".join("?" * len(ids))
        rows = self.store.con.execute(f"""
            SELECT m.community_id, t.chunk_id, t.doc_id, t.ord, t.text, list(DISTINCT n.name) FROM community_members m
            JOIN entity_text_units e USING (entity_id) JOIN text_units t USING (chunk_id)
            LEFT JOIN entities n USING (entity_id)
            WHERE m.community_id IN ({q}) GROUP BY 1, 2, 3, 4, 5""", list(ids)).fetchall()
        pos = self._unit_positions({r[2] for r in rows})
        out: dict[int, list[_Unit]] = {}
        story = self.story
        for cid, chunk, doc_id, ord_, text, names in rows:
            if chunk in story:  # a member named only in an edition's licence is not discussed here
                text = story[chunk]
                folded = text.casefold()
                if not any(str(x).casefold() in folded for x in names or [] if x):
                    continue
            if doc_id in self.doc_by_id and chunk in numbers and text:
                out.setdefault(cid, []).append(_Unit(chunk, numbers[chunk], doc_id, pos.get((doc_id, ord_), 1), text))
        for v in out.values():
            v.sort(key=lambda u: (self.doc_by_id[u.doc_id].pos, u.unit))
        return out

    @property
    def legal_mentions(self) -> dict[int, tuple[int, int]]:
        """``entity_id -> (its mentions in legal matter, all its mentions)``, counted by text unit, for the entities
        mentioned in a unit :attr:`story` drops or trims (a mention in a trimmed unit is legal where the kept text
        does not name it); {} when no unit holds legal matter."""
        if getattr(self, "_legal_mentions", None) is None:
            story, out = self.story, {}
            if story:
                for eid, name, chunk, n in self.store.con.execute(
                        "SELECT e.entity_id, n.name, e.chunk_id, count(*) OVER (PARTITION BY e.entity_id) "
                        "FROM entity_text_units e JOIN entities n USING (entity_id)").fetchall():
                    legal = chunk in story and not (story[chunk] and str(name).casefold() in story[chunk].casefold())
                    k, total = out.get(eid, (0, n))
                    out[eid] = (k + legal, total)
                out = {e: v for e, v in out.items() if v[0]}
            self._legal_mentions = out
        return self._legal_mentions

    def _legal_community(self, cid: int, legal: dict) -> bool:
        """True when at least :data:`LEGAL_COMMUNITY_SHARE` of the mentions of community ``cid``'s members lie in
        legal matter (:attr:`legal_mentions`)."""
        members = [e for (e,) in self.store.con.execute(
            "SELECT entity_id FROM community_members WHERE community_id = ?", [cid]).fetchall()]
        got = [legal.get(e) for e in members]
        if not any(got):
            return False
        total = sum(v[1] for v in got if v) + self._mentions_of([e for e, v in zip(members, got) if not v])
        return sum(v[0] for v in got if v) >= LEGAL_COMMUNITY_SHARE * max(1, total)

    def _mentions_of(self, entities: list) -> int:
        if not entities:
            return 0
        q = ",".join("?" * len(entities))
        return int(self.store.con.execute(f"SELECT count(*) FROM entity_text_units WHERE entity_id IN ({q})",
                                          list(entities)).fetchone()[0])

    def legal_name(self, name: str) -> bool:
        """True when every mention of an entity named ``name`` (case-folded) lies in legal matter: no name a theme
        is tied to."""
        if getattr(self, "_legal_names", None) is None:
            legal = self.legal_mentions
            ids = [e for e, (k, n) in legal.items() if k == n]
            self._legal_names = {str(x).casefold() for (x,) in self.store.con.execute(
                f"SELECT name FROM entities WHERE entity_id IN ({','.join('?' * len(ids))})", ids).fetchall()} if ids else set()
        return name.casefold() in self._legal_names

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

    def all_text(self) -> str:
        """Every text unit's text joined by newlines, in corpus order; built once per index view (acronyms and
        their names are counted over it)."""
        if getattr(self, "_all_text", None) is None:
            self._all_text = "\n".join(u.text for u in self.all_units())
        return self._all_text

    def speaker(self, u, sentence: str) -> str:
        """Who says ``sentence`` of the text unit ``u`` (an :meth:`all_units` item): :func:`speaker_of`, or, for a
        sentence ahead of the unit's first label (a unit opening mid-turn), the speaker where the unit before it in
        its work leaves off (:func:`opening_speaker`); "" without one."""
        who = speaker_of(u.text, sentence)
        if who or not sentence:
            return who
        if getattr(self, "_before", None) is None:
            units, before = self.all_units(), {}
            for a, b in zip(units, units[1:]):
                da, db = self.doc_by_id[a.doc_id], self.doc_by_id[b.doc_id]
                if (da.work or da.doc_id) == (db.work or db.doc_id):
                    before[b.chunk_id] = a
            self._before = before
        prev = self._before.get(u.chunk_id)
        if prev is None:
            return ""
        at = _sentence_at(u.text, sentence)
        turns = _turns(u.text)
        # only a sentence found ahead of the unit's first label is the turn the unit before leaves off
        if at < 0 or (turns and turns[0][0] <= at):
            return ""
        return opening_speaker(prev.text, u.text)

    def unit_by_number(self) -> dict[int, "_Unit"]:
        """``index-wide unit number -> unit`` over :meth:`all_units`, built once per index view."""
        if getattr(self, "_by_number", None) is None:
            self._by_number = {u.number: u for u in self.all_units()}
        return self._by_number

    def all_units(self) -> list[_Unit]:
        """Every text unit of the index's documents, in corpus order; read once per index view (a corpus-wide
        answer's running topics, topics across works and tied names all scan it)."""
        if getattr(self, "_all_units", None) is not None:
            return self._all_units
        from slmgraph.query.answer import unit_numbers

        numbers = unit_numbers(self.store)
        rows = self.store.con.execute("SELECT chunk_id, doc_id, ord, text FROM text_units").fetchall()
        pos = self._unit_positions({r[1] for r in rows})
        story = self.story
        out = [_Unit(c, numbers[c], d, pos.get((d, o), 1), story.get(c, t)) for c, d, o, t in rows
               if d in self.doc_by_id and c in numbers and story.get(c, t)]
        out.sort(key=lambda u: (self.doc_by_id[u.doc_id].pos, u.unit))
        self._all_units = out
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


#: A year as written ("1995", "2021").
_YEAR = re.compile(r"1[5-9]\d\d|20\d\d")
#: Words that name no thing a figure counts: months and days (a date is no count of anything).
_NO_COUNTED = frozenset("""january february march april june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""".split())


def figure_line(sentence: str) -> bool:
    """True when ``sentence`` (speaker label dropped), however short, states a figure of something: at least
    :data:`FIGURE_LINE_WORDS` words, a number written in digits, and a content word of four letters or more
    (:func:`slmgraph.names.forms.content_words`, no month or day) naming what it counts, opening on no pronoun or
    conjunction (:func:`slmgraph.query.extractive.leans`) -- "Membership is 493.", "Visitors numbered 5,210.";
    not "It was 493.", "In 2019.", "Page 4 of 9."."""
    from slmgraph.names.forms import content_words

    body = _SPEAKER.sub("", sentence).strip()
    words = _WORD.findall(body.casefold())
    # a year alone dates something and counts nothing ("Back in 1995."); a reply opens on an empty word
    counts = [n for n in _NUMBER.findall(body) if not _YEAR.fullmatch(n)]
    if len(words) < FIGURE_LINE_WORDS or not counts or leans(body) or words[0] in _EMPTY_WORDS:
        return False
    return any(len(w) >= 4 and w not in _NO_COUNTED and w != "page" for w in content_words(body))


def _statement_ok(s: str, ix: ThemeIndex) -> bool:
    """True when the sentence ``s`` (whitespace folded) may be a theme's statement: a whole, plain sentence
    of :data:`MIN_WORDS` words or more (or a shorter one stating a figure, :func:`figure_line`) and at most
    :data:`MAX_STATEMENT_CHARS`, no question or fragment, no
    path, no cut-off opening, no boilerplate (:class:`Boilerplate`), no framing of the conversation (:func:`framing`)
    no question however ended (:func:`asks`), no filler (:func:`slmgraph.query.extractive.filler`: "They
    agreed.") and no section title of the corpus (:func:`slmgraph.query.extractive.corpus_heading`)."""
    return not (len(s) > MAX_STATEMENT_CHARS or not quotable(s, MIN_WORDS if not figure_line(s) else FIGURE_LINE_WORDS)
                or not _ENDED.search(s)
                or not _OPENED.match(s)
                or any(k in ("question", "fragment") for k in sentence_kinds(s))
                or s.startswith(("../", "./", "/")) or framing(s) or asks(s) or filler(s)
                or corpus_heading(s, ix.headings) or s in ix.boilerplate)


#: A sentence shaped as a question though ended by a period: a question word then its verb ("What's your role
#: model ...", "How do you start ...").
_ASKS = re.compile(r"(?i)^\W*(what|why|how|where|when|who|which)(['\u2019]s\b|\s+(is|are|was|were|do|does|did|can|"
                   r"could|would|will|should|have|has)\s+(you|we|they|he|she|it|i|your|our|their|his|her|the|a|an|this|"
                   r"that|these|those)\b)")


def asks(sentence: str) -> bool:
    """True when ``sentence`` (speaker label dropped) is shaped as a question whatever its end (:data:`_ASKS`):
    a transcript writes a host's question with a period, and a question states nothing."""
    return bool(_ASKS.match(_SPEAKER.sub("", sentence)))


def _unit_norm(v):
    v = np.asarray(v, dtype=np.float32)
    return v / max(float(np.linalg.norm(v)), 1e-9)


def statement_works(statements, ix: ThemeIndex) -> tuple[int, str]:
    """How many works (documents, where the corpus has no works) ``statements`` come from, and the noun."""
    docs = {s.doc_id for s in statements if s.doc_id in ix.doc_by_id}
    if any(d.work for d in ix.docs):
        return len({ix.doc_by_id[d].work or d for d in docs}), "work"
    return len(docs), "document"


def short_penalty(sentence: str) -> float:
    """:data:`SHORT_PENALTY` for a sentence of under :data:`FULL_WORDS` words (speaker label dropped), else 0; a
    line stating a figure (:func:`figure_line`: "Membership is 389.") is whole at any length: 0."""
    return SHORT_PENALTY if len(_SPEAKER.sub("", sentence).split()) < FULL_WORDS and not figure_line(sentence) else 0.0


def statement_penalty(st: "Statement", ix: "ThemeIndex") -> float:
    """What a candidate statement loses from its relevance (cosine units): :data:`SHORT_PENALTY` when shorter
    than :data:`FULL_WORDS` words and stating no figure (:func:`short_penalty`), :data:`FILLER_PENALTY` when it leans on what came before it ("It was ..."),
    which says little out of context, and :data:`EDGE_PENALTY` in a work's opening or closing part, which holds
    its intro and outro (a guest's introduction, a welcome)."""
    short = short_penalty(st.text)
    lean = FILLER_PENALTY if leans(st.text) else 0.0
    edge = EDGE_PENALTY if ix.at_edge(st.doc_id, st.unit) else 0.0
    return short + lean + edge


#: A noun phrase this near a term's embedding (cosine) is another word for it (:func:`near_words`), at most this
#: many: "partnership" of "collaboration" (0.66) is, "public" of "privacy" (0.61) and "crime" of "laws" (0.60) are not.
NEAR_COSINE = 0.63
NEAR_WORDS = 4


def near_words(term: str, ix, embedder) -> list[str]:
    """The corpus's other words for a common noun the question asks about: the index's noun phrases of one or two
    words embedded at index time (:meth:`ThemeIndex.phrase_vectors`), holding no word of ``term``'s stem, whose
    cosine with ``term`` is at least :data:`NEAR_COSINE` ("partnership" of "collaboration", "competitor" of
    "rivals", "legislation" of "laws"), the nearest first, a phrase holding a nearer one dropped, at most
    :data:`NEAR_WORDS`; [] for a name, an acronym, a phrase, without an embedder, or in an index built before
    phrases were embedded. The nearest words in an embedding space are the usual query expansion of a term a corpus
    rarely writes (Kuzi et al. 2016)."""
    from slmgraph.query.extractive import _embed

    # a name or an acronym ("Harbour Trust", "AI") is its own word
    if embedder is None or " " in term or not term.islower():
        return []
    keys, vecs = ix.phrase_vectors()
    if vecs is None:
        return []
    stem = word_stem(term.casefold())
    q = _embed([term], embedder)[0]
    # the term's other number is the term ("law" of "laws")
    same = {term.casefold(), term.casefold().rstrip("s"), term.casefold() + "s"}
    cos = vecs @ q
    near = np.flatnonzero(cos >= NEAR_COSINE)  # a handful of the thousands of phrases
    ranked = [keys[i] for i in near[np.argsort(-cos[near], kind="stable")]
              if keys[i] not in same and stem not in {word_stem(w) for w in keys[i].split()}]
    stems = {k: {word_stem(w) for w in k.split()} for k in ranked}
    # a phrase holding a nearer word says no more than it ("medical doctor" of "doctor"), nor does its other number
    out = [k for k in ranked if not any(o != k and stems[o] <= stems[k] for o in ranked)]
    return out[:NEAR_WORDS]
