"""Extractive-first answers for models under 1B parameters.

A 135M model asked to write an answer loops, copies its examples or writes
generic sentences (docs/decisions.md: small models loop). So with small
models an answer is assembled from the data the query selected:

* global search: the best-scored community reports' titles and findings
  (:func:`report_points`), one point per report, near-duplicate findings
  merged with their citations;
* TS, basic and local search: the sentences of the selected passages (or of
  the local context's text units and relationships) nearest to the question
  (:func:`sentence_points`), each citing where it comes from;

then, when asked to (:func:`opening_on`: ``--opening model``, or from 1B
parameters; off by default for smaller models, whose sentence did not help on
the podcast questions), the model writes one opening sentence (:func:`synthesize`),
kept only when it is grounded in the points under the test used for report
titles (:func:`slmgraph.names.forms.is_grounded`, half of its content words in the
points) and neither loops nor repeats. :func:`has_repetition` is the
property every answer must have: no repeated sentence, no looped phrase.
No point and no opening sentence is a sentence that gives orders to an
assistant (:func:`slmgraph.text.prose.addressed_to_assistant`: injected "Ignore all
previous instructions ..." lines stay in the text units but are never repeated), nor a letter's or an
article's furniture (:func:`furniture`: a salutation, a byline, a dateline such as "Published 14 December
2025."), one rule for every method that quotes sentences (:func:`quotable`).

One concern, over 500 lines: answers assembled from selected sentences (selection, ranking, citing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from slmgraph.model.client import DEADLINE_SENTENCE_S
from slmgraph.names.forms import content_words, cut, is_grounded, pronoun_quote
from slmgraph.names.kinds import furniture as is_furniture, list_line
from slmgraph.names.lexicon import LABEL_CAPITALS, OFFICE_WORDS, PERSONAL_TITLES, ROLE_WORDS
from slmgraph.model.policy import model_does
from slmgraph.query.lead_sentence import lead_scores
from slmgraph.indexing.stages.report_data import FINDING_MAX_CHARS
from slmgraph.text.shape import LONG_STRETCH
from slmgraph.text.prose import (
    addressed_to_assistant, degenerate, markdown_structure, overlaps, plain_sentence, sentence_spans, sentences,
    word_count, word_length, word_set,
)

#: Two texts whose content words overlap this much (Jaccard) are near-duplicates.
NEAR_DUPLICATE = 0.6
#: A transcript's speaker label at the start of a sentence ("KEVIN SCOTT: ").
_SPEAKER = re.compile(rf"^[{LABEL_CAPITALS}][{LABEL_CAPITALS} .'/-]+:\s*")
#: Markers of the context's labels that must not leak into an answer.
_MARKERS = re.compile(r"(?i)\b(passage|report|source|analyst)\s+\d+\s*:?")


@dataclass
class Point:
    """One point of an extractive answer.

    Attributes:
        head: a short label (a report title), or "" for a bare sentence.
        text: the point's sentence(s), copied from the data.
        ids: the ids it cites (first = where it was taken from).
        rank: the ranking key it was chosen by (higher first).
        label: the citation label of its ids when it differs from the
            answer's (DRIFT mixes report points and text-unit points), else "".
    """

    head: str
    text: str
    ids: list = field(default_factory=list)
    rank: float = 0.0
    label: str = ""


def _norm_words(s: str) -> frozenset:
    return frozenset(content_words(s)) or word_set(s)


def near_duplicate(a: str, b: str, threshold: float = NEAR_DUPLICATE) -> bool:
    """True when ``a`` and ``b`` share at least ``threshold`` of their content words (Jaccard)."""
    wa, wb = _norm_words(a), _norm_words(b)
    if not wa or not wb:
        return a.strip().casefold() == b.strip().casefold()
    return overlaps(wa, wb, threshold)


#: A name or a figure of a sentence: a capitalised word after its first word, or a number.
_NAME_OR_FIGURE = re.compile(r"(?<=\s)[A-Z][\w'\u2019-]*|\d+(?:[.,]\d+)*")


def same_statement(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` state the same thing: near-duplicates (:func:`near_duplicate`) naming the same
    names and figures (:data:`_NAME_OR_FIGURE`, speaker labels set aside), as the overlap of two text units
    repeats a sentence; "Pérez of Seaview Bakery gave 500 dollars" and "Pérez of Harbour Bakery gave 500
    dollars" are two statements of two documents, never one point citing both."""
    if not near_duplicate(a, b):
        return False
    ka, kb = (frozenset(_NAME_OR_FIGURE.findall(" " + _SPEAKER.sub("", x).strip())) for x in (a, b))
    return ka == kb


def has_repetition(text: str) -> bool:
    """True when ``text`` repeats a sentence (case and spacing ignored, 3+ words)
    or loops a phrase (1-8 words repeated 3+ times in a row, as in
    "the ability to learn from- the ability to learn from- the ability ...")."""
    seen = set()
    for line in text.split("\n"):
        for s in re.split(r"(?<=[.!?])\s+", line):
            words = re.findall(r"\w+", s.casefold())
            if len(words) < 3:
                continue
            key = " ".join(words)
            if key in seen:
                return True
            seen.add(key)
    words = re.findall(r"\w+", text.casefold())
    for k in range(1, 9):
        for i in range(0, len(words) - 3 * k + 1):
            a = words[i:i + k]
            if a == words[i + k:i + 2 * k] == words[i + 2 * k:i + 3 * k]:
                if k == 1 and not a[0].isalpha():
                    continue
                return True
    return False


#: A sentence whose words start with a capital letter or digit this often reads as a heading or a file
#: name ("../Behind the Tech with Kevin Scott Podcast Episode 52 – Bill Gates."), not a statement.
HEADING_SHARE = 0.6
#: Selection penalties, in cosine units on the scale of the quoted sentences' question cosines
#: (docs/decisions.md: sentence selection penalties): a question, a quoted
#: dialogue fragment (a sentence opening with a quotation mark: a line of speech, not a finding), a
#: heading, or a sentence cut by the character cap; ``short``: a finding with no sentence of
#: ``min_words`` words and naming none of its report's entities, quoted whole ("COUNCILLOR REYES: That is
#: correct." won a quote for "What are the main themes?").
PENALTY = {"question": 0.15, "fragment": 0.15, "heading": 0.15, "cut": 0.05, "short": 0.15, "procedure": 0.15}
#: Bonus per entity of the report the sentence names, counted up to :data:`MAX_NAMED` (a sentence that
#: names two of the community's entities states a relationship of it; paper sec. 3.1.5: a report is
#: about its entities and their relationships).
NAMED_BONUS = 0.05
MAX_NAMED = 2
#: Maximal marginal relevance trade-off (Carbonell and Goldstein 1998, "The use of MMR, diversity-based
#: reranking"): a candidate's value is ``MMR_LAMBDA * relevance - (1 - MMR_LAMBDA) * its highest cosine
#: with a sentence already in the answer``. 0.7 is the value commonly used for retrieval diversification
#: (e.g. LangChain's max_marginal_relevance_search default is 0.5; we weigh relevance more because every
#: candidate already comes from a selected report); not swept.
MMR_LAMBDA = 0.7
#: A quoted sentence is on the question when its cosine with it exceeds its cosine with every off-topic probe
#: question (``prompts/offtopic_probes.txt``) by at least this: the probe check of global search's focused
#: themes (``slmgraph.query.theme_model.PROBE_GAP`` is this value), applied to :func:`sentence_points`.
PROBE_GAP = 0.15
#: ... or when its cosine with the question is within this of the best such sentence's (the evidence margin
#: of global search's focused themes): a sentence of figures sits near the cost and price probes.
BEST_MARGIN = 0.15
_QUOTE_OPEN = ('"', "\u201c", "\u2018", "'")
_BACKCHANNEL = re.compile(r"(?i)^\W*\((laughter|laughs|applause|crosstalk|music)\b")
#: Meeting procedure that states no fact about its motion ("Moved by Grace Whitfield, carried with one
#: abstention.", "Seconded by Tom Hale.", "Motion carried unanimously.").
_PROCEDURE = re.compile(r"(?i)^\W*((the )?motion (was )?(carried|passed|approved|seconded|defeated)\b"
                        r"|(moved|seconded|proposed) by\b|carried( unanimously| with| by|\.)|approved unanimously\b)")
#: Words that make a short line a statement rather than a heading: auxiliaries, pronouns, and replies
#: ("Yes.", "It is.").
_NOT_HEADING = frozenset("""
is are was were be been being am has have had do does did will would shall should can could may might must
i you he she it we they me him her us them this that these those there here who which what
yes no yeah ok okay right sure thanks exactly absolutely well indeed agreed true
""".split())
#: Most words of a run-in heading or a heading line ("Cardiac wing.", "Nurse contract.", "Staffing").
HEADING_WORDS = 6
#: A sentence wholly in emphasis, or opening one that the split cut ("**Cardiac wing.**", "**Cardiac wing.").
_EMPHASISED = re.compile(r"^\s*(\*\*|__)(?=\S)[^*_]+?(\1)?\s*$")


#: A list item's marker opening a line ("1. ", "2) ", "- ", "* ", "a. "): a numbered agenda item's run-in
#: heading ("1. Budget. Treasurer ... reported ...") is a heading once its number is set aside.
_LIST_MARKER = re.compile(r"^\s{0,3}(?:[-*+\u2022]|\d{1,3}[.)]|[a-z][.)])\s+")
#: Most words of a run-in heading judged by its place (:func:`run_in_heading`).
RUN_IN_WORDS = 4
#: A year or a year range, which a run-in heading may hold ("Budget 2022-23.").
_YEAR = re.compile(r"(?:1[89]|20)\d\d(?:[-\u2013/]\d{2,4})?")


def is_heading(raw: str) -> bool:
    """True when the sentence ``raw`` (as written, Markdown marks and all) is a heading, not a statement:
    a short phrase (at most :data:`HEADING_WORDS` words, starting with a capital, a list item's number or
    bullet set aside) that is wholly in
    emphasis -- a run-in heading the sentence splitter cut off ("**Cardiac wing.** The board approved ...")
    -- or that ends with a colon or no punctuation at all (a heading line: "Staffing"), or a single word
    ended by a period ("Finances.", "1. Budget."). A reply or a pronoun ("Yes.", "It is") is never a heading."""
    raw = _LIST_MARKER.sub("", raw.strip(), count=1)
    body = _SPEAKER.sub("", raw).strip()
    if _SPEAKER.match(raw.strip()):
        return False
    emphasised = bool(_EMPHASISED.match(body))
    plain = body.strip("*_ \t")
    words = re.findall(r"[^\W_][\w'\u2019-]*", plain)
    if not words or len(words) > HEADING_WORDS or not plain[:1].isupper() or any(
            w.casefold() in _NOT_HEADING for w in words):
        return False
    end = plain[-1]
    return emphasised or end == ":" or end.isalnum() or (len(words) == 1 and end == ".")


#: A sentence's closing punctuation (a closing quote or bracket may follow it).
_ENDS = re.compile(r"[.!][\"'\u201d\u2019)\]]*$")


def sentence_kinds(sentence: str) -> list[str]:
    """The kinds of weak quote ``sentence`` is (empty list: a plain statement).

    ``question`` (ends with "?"), ``fragment`` (opens with a quotation mark once a
    transcript's speaker label is removed: a quoted line of dialogue; or with a lower-case
    letter: the tail of a sentence cut where a text unit begins), ``heading``
    (at least :data:`HEADING_SHARE` of its 3+ words capitalised or numbers, or a path),
    ``cut`` (ends with the ellipsis of :func:`slmgraph.names.forms.cut` or of the data), ``procedure`` (meeting
    procedure such as "Moved by Grace Whitfield, carried with one abstention.": no fact about its motion).
    """
    body = _SPEAKER.sub("", sentence).strip()
    kinds = []
    if body.rstrip(" \"'\u201d\u2019").endswith("?"):
        kinds.append("question")
    if body.startswith(_QUOTE_OPEN) or body[:1].islower() or body[:1] in ",;:)]":  # a quoted line, or a sentence
        kinds.append("fragment")  # cut at a text unit's start ("clearly ruffled but ...", ", uh, microprocessor ...")
    words = re.findall(r"[^\W_][\w'\u2019-]*", body)
    # A number counts as a heading's word unless the line is a sentence: ended, with no list colon ("Membership
    # is 389." and "Membership stood at 231 on 28 February 2019." state figures; "Q3 Results 2021" titles a
    # section, "16 November 2019: walk to the point." lists an event).
    digits = not (_ENDS.search(body) and ":" not in body)
    if body.startswith(("../", "./", "/")) or (len(words) >= 3 and sum(
            w[0].isupper() or (digits and w[0].isdigit()) for w in words) >= HEADING_SHARE * len(words)):
        kinds.append("heading")
    if body.rstrip(".").endswith("\u2026"):
        kinds.append("cut")
    if _PROCEDURE.match(body):
        kinds.append("procedure")
    return kinds


#: Emphasis marks left at a sentence's edge when a run-in heading's "**...**" is split inside.
_EDGE_MARKS = re.compile(r"^(\*\*|__)\s*|\s*(\*\*|__)$")


def list_opener(sentence: str) -> bool:
    """True when ``sentence`` ends with a colon once a speaker label is set aside ("The plan has three
    parts:", "The board agreed the following:"): it opens what follows and states nothing itself."""
    body = _SPEAKER.sub("", sentence).strip().rstrip(" \"'\u201d\u2019*_")
    return body.endswith(":")


def run_in_heading(raw: str, before: str, after: str) -> bool:
    """True when the sentence ``raw`` is a run-in heading by its place and shape: it opens a list item (a
    numbered or bulleted line, :data:`_LIST_MARKER`; emphasis marks only before it, ``before``), more text follows it on
    the same line (``after``), and it is a short phrase -- at most :data:`RUN_IN_WORDS` words, the first
    capitalised, no figure but a year ("Budget 2022-23.") -- with no word that makes a statement
    (:data:`_NOT_HEADING`: an auxiliary, a
    pronoun, a reply), so "2. Digital inclusion. Helen Castellanos presented ..." gives no point
    "Digital inclusion." while "2. Work stopped. ..." stays a sentence (its verb is no auxiliary, but a past
    tense: a word ending in "ed"), and so does a short sentence opening a line of prose ("Nurse numbers rose.")."""
    if before.strip(" \t*_") or not after.split("\n", 1)[0].strip() or not _LIST_MARKER.match(raw.strip()):
        return False
    plain = _LIST_MARKER.sub("", raw.strip(), count=1).strip("*_ \t")
    if _SPEAKER.match(plain) or not plain[:1].isupper() or not plain.endswith("."):
        return False
    words = re.findall(r"[^\W_][\w'\u2019-]*", plain)
    return 0 < len(words) <= RUN_IN_WORDS and not any(
        w.casefold() in _NOT_HEADING or (w[:1].isdigit() and not _YEAR.fullmatch(w))
        or (w.islower() and w.endswith("ed")) for w in words)


#: A sentence's end: its mark (the full-width marks of Chinese and Japanese too), then closing quotes or brackets.
_SENTENCE_END = re.compile(r"[.!?\u2026\u3002\uff01\uff1f\uff0e][\"'\u201d\u2019)\]*_\u300d\u300f\uff09]*$")


def heading_line(raw: str, before: str, after: str) -> bool:
    """True when the sentence ``raw`` is a title or heading line: alone on its line (``before`` and ``after``
    hold nothing of it), ended by no sentence mark, and with no word that makes a statement
    (:data:`_NOT_HEADING`): "City of Kestrel Bay Finance Committee, public hearing on the library budget,
    9 March 2023" names a document, it states nothing."""
    if before.strip(" \t") or after.split("\n", 1)[0].strip():
        return False
    plain = _LIST_MARKER.sub("", raw.strip(), count=1).strip()
    if not plain or _SENTENCE_END.search(plain) or _SPEAKER.match(plain):
        return False
    return not any(w.casefold() in _NOT_HEADING for w in re.findall(r"[^\W_][\w'\u2019-]*", plain))


def prose_sentences(text: str, title_lines: bool = True) -> list[str]:
    """The sentences of ``text`` that may be quoted as prose, each as plain text: split on the text as
    written (:func:`slmgraph.text.prose.sentences`: line structure ends a sentence, so a transcript's turn, a
    heading and a table row are sentences of their own; folding the whitespace first glued a table's
    rows and a heading to the prose around them), Markdown structure left out
    (:func:`slmgraph.text.prose.markdown_structure`: table rows, headings, code fences, rules) and inline
    Markdown rendered (:func:`slmgraph.text.prose.plain_sentence`: no ``**``, no ``\\*``); headings are never
    prose (:func:`is_heading`: "**Cardiac wing.**" cut from a run-in heading; :func:`run_in_heading`: "2. Digital
    inclusion." opening an agenda item; without ``title_lines``, :func:`heading_line`: a document's title
    line, where the text is a document's rather than a report's), nor is a list opener (:func:`list_opener`:
    "The plan has three parts:"), and the emphasis marks a split leaves at a sentence's edge
    ("** The board approved ...") are dropped."""
    text = text or ""
    out = []
    for a, b in sentence_spans(text):
        s = text[a:b]
        line_start = text.rfind("\n", 0, a) + 1
        line_end = text.find("\n", b)
        before, after = text[line_start:a], text[b:] if line_end < 0 else text[b:line_end]
        if markdown_structure(s) is None and not is_heading(s) and not list_opener(s) and not run_in_heading(
                s, before, after) and (title_lines or not heading_line(s, before, after)):
            p = _EDGE_MARKS.sub("", plain_sentence(s))
            if p:
                out.append(p)
    return out


def furniture(sentence: str) -> bool:
    """True when ``sentence`` is a letter's or an article's furniture, no statement (:func:`slmgraph.names.kinds.furniture`:
    "Dear members,", "Yours sincerely, Jane Smith", "By Jane Smith, correspondent", a signature line, a dateline
    such as "Published 14 December 2025.")."""
    return is_furniture(_SPEAKER.sub("", sentence).strip())


#: Opening words of a sentence that leans on what came before it.
_FILLER = re.compile(r"(?i)^\W*(it|this|that|these|those|they|them|he|she|his|her|there|so|and|but|or|yeah|yes|no|"
                     r"well|oh|okay|ok|right|also|then|which|such|by the way|anyway|i mean|you know|like|um+|uh+)\b(?!-)")
#: A hedge or a hesitation that may open a spoken sentence before what it leans on ("I think -- that's ...",
#: "Um, and, and just ...").
_HEDGE = re.compile(r"(?i)^\W*(?:(?:i think|i mean|you know|um+|uh+|er|like|and|so)\b[\s,.\-\u2014\u2013]*)+")
#: What a sentence opened by a hedge leans on: a demonstrative's or a pronoun's verb, a conjunction, a hesitation.
_LEANS = re.compile(r"(?i)^\W*(?:that['\u2019]s|this is|that is|that was|um+|uh+|and|but|so|or|which)\b")


def leans(sentence: str) -> bool:
    """True when ``sentence`` (speaker label dropped) leans on what came before it: it opens on a pronoun, a
    demonstrative or a conjunction (:data:`_FILLER`), or does so after a hedge or a hesitation ("I think --
    that's, like, the best part of tech.", "Um, and, and just hearing ..."; :data:`_HEDGE`)."""
    body = _SPEAKER.sub("", sentence).strip()
    if _FILLER.match(body):
        return True
    rest = _HEDGE.sub("", body, count=1)
    return rest != body and bool(_LEANS.match(rest) or not rest)


#: Words of a sentence that says nothing on its own: a reply or an acknowledgement ("Yes.", "Good point.",
#: "Agreed, thanks."), a pointer elsewhere or a placeholder ("See above.", "TBD", "N/A").
_EMPTY_WORDS = frozenset("""
yes yeah yep yup no nope ok okay sure right agreed agree exactly absolutely indeed true correct fine great good
nice cool fair point points noted done thanks thank you see above below as same ditto etc tbd tba tbc n a na
none nothing pending later hmm mm um uh oh well wow totally definitely of course that's that is it
""".split())
#: Most words of a leaning sentence that is filler (:func:`filler`): "They agreed.", "This is risky." lean on
#: the sentence before and state nothing else; a longer one may still carry a fact of its own.
FILLER_WORDS = 7


def filler(sentence: str) -> bool:
    """True when ``sentence`` (speaker label dropped) says nothing on its own, so it is quoted by no method while
    any other sentence is there to quote: only reply, acknowledgement or pointer words (:data:`_EMPTY_WORDS`:
    "Yes.", "Good point.", "See above.", "TBD"), a lone name ("Lena Okafor.": at most three words, each
    capitalised), or a sentence of at most :data:`FILLER_WORDS` words that leans on the one before it
    (:func:`leans`: "They agreed.", "It depends.", "This is risky.")."""
    body = _SPEAKER.sub("", sentence).strip()
    words = re.findall(r"[^\W_][\w'\u2019/-]*", body)
    if not words:
        return True
    if all(w.casefold().replace("\u2019", "'") in _EMPTY_WORDS or w.casefold() in ("n/a",) for w in words):
        return True
    if len(words) <= 3 and all(w[:1].isupper() for w in words) and not any(c.isdigit() for c in body):
        return True
    return len(words) <= FILLER_WORDS and leans(body)


#: A Markdown heading line (``## Action items``) of a text: its words are a section's title.
_ATX = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")


def _heading_key(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", plain_sentence(text).casefold()))


def heading_keys(texts) -> frozenset:
    """The section titles of ``texts`` (an iterable of documents' or text units' text), as case-folded words:
    their Markdown headings (``# Week 14 sync``, ``## Action items``) and their title lines
    (:func:`heading_line`: a line alone, no sentence mark, no word that makes a statement). An entity
    description or a report finding built from a text can carry such a line as if it were a sentence
    ("Action items."); :func:`corpus_heading` tells it."""
    keys = set()
    for text in texts:
        text = text or ""
        for m in _ATX.finditer(text):
            keys.add(_heading_key(m.group(1)))
        for line in text.split("\n"):
            s = line.strip()
            if s and not s.startswith("#") and heading_line(s, "", "") and len(s.split()) <= HEADING_WORDS:
                keys.add(_heading_key(s))
    keys.discard("")
    return frozenset(keys)


def corpus_heading(sentence: str, keys) -> bool:
    """True when ``sentence``, its emphasis and end mark aside, is a section title of the corpus (one of the
    ``keys`` of :func:`heading_keys`): "Action items." from "## Action items" is no statement."""
    return bool(keys) and _heading_key(_SPEAKER.sub("", sentence)) in keys


def quotable(sentence: str, min_words: int) -> bool:
    """True when ``sentence`` may be quoted at all: ``min_words`` words or more besides a speaker
    label (counted in the script's own units, :func:`slmgraph.text.prose.word_count`: a Chinese or Japanese
    character is one) and at most :data:`slmgraph.text.shape.LONG_STRETCH` words long
    (:func:`slmgraph.text.prose.word_length`: a Chinese or Japanese character is 1/1.5 word; longer is no
    sentence: a dumped table's or a log's run of text), not a back-channel line ("(Laughter.) Yeah."), not
    addressed to an assistant, not a letter's salutation, sign-off, byline or dateline (:func:`furniture`), not a list
    line ("Present: A, B, C", :func:`slmgraph.names.kinds.list_line`: who was there states nothing)."""
    body = _SPEAKER.sub("", sentence).strip()
    return min_words <= word_count(body) and word_length(body) <= LONG_STRETCH and not _BACKCHANNEL.match(body) \
        and not addressed_to_assistant(sentence) and not furniture(body) and not list_line(sentence)


def names_named(sentence: str, names: list[str]) -> int:
    """How many of ``names`` occur in ``sentence`` as whole words (case ignored)."""
    s = sentence.casefold()
    return sum(1 for n in names if n and re.search(r"(?<!\w)" + re.escape(n.casefold()) + r"(?!\w)", s))


def relevance(q_cos: float, sentence: str, names: list[str] | None = None) -> float:
    """A candidate sentence's relevance: its cosine with the question, plus :data:`NAMED_BONUS` per
    entity of ``names`` it names (up to :data:`MAX_NAMED`), minus the :data:`PENALTY` of each of its
    :func:`sentence_kinds`."""
    bonus = NAMED_BONUS * min(MAX_NAMED, names_named(sentence, names)) if names else 0.0
    return q_cos + bonus - sum(PENALTY[k] for k in sentence_kinds(sentence))


def _embed(texts: list[str], embedder):
    """L2-normalised vectors of ``texts``, shape ``(n, dim)``; None without an embedder."""
    import numpy as np

    if embedder is None or not texts:
        return None
    v = np.asarray(embedder.encode(texts), dtype=np.float32).reshape(len(texts), -1)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)


def _q_cosines(question_vec, vecs, n: int) -> list[float]:
    """Cosine of each candidate with the question (0s without vectors)."""
    import numpy as np

    if vecs is None or question_vec is None:
        return [0.0] * n
    q = np.asarray(question_vec, dtype=np.float32)
    q = q / max(float(np.linalg.norm(q)), 1e-9)
    return [float(c) for c in vecs @ q]


def on_question(vecs, question_vec, probes: list[str], embedder, near_best: bool = True) -> list[bool]:
    """Whether each row of ``vecs`` (L2-normalised sentence vectors, ``(n, dim)``) is on the question: its
    cosine with ``question_vec`` exceeds its highest cosine with the off-topic ``probes`` by :data:`PROBE_GAP`,
    or (with ``near_best``) is within :data:`BEST_MARGIN` of the best row's that does."""
    import numpy as np

    pv = _embed(list(probes), embedder)
    q = np.asarray(question_vec, dtype=np.float32)
    q = q / max(float(np.linalg.norm(q)), 1e-9)
    cos = vecs @ q
    off = (vecs @ pv.T).max(axis=1)
    gap = [bool(c - o >= PROBE_GAP) for c, o in zip(cos, off)]
    if not near_best or not any(gap):
        return gap
    best = max(float(c) for c, g in zip(cos, gap) if g)
    return [g or bool(c >= best - BEST_MARGIN) for c, g in zip(cos, gap)]


def points_on_question(points: list[Point], question_vec, embedder, probes: list[str] | None,
                       names: list[str] | None = None) -> list[Point]:
    """``points`` without those off the question (:func:`on_question` on each point's text; a point naming
    one of ``names``, in its head or text, is on it), in their order; the first point alone when none is on
    it, and ``points`` as they are without ``probes``, vectors or a second point."""
    if not probes or question_vec is None or embedder is None or len(points) < 2:
        return points
    naming = [bool(names) and names_named(f"{p.head} {p.text}", names) > 0 for p in points]
    near = on_question(_embed([p.text for p in points], embedder), question_vec, probes, embedder,
                       near_best=not any(naming))
    return [p for p, n, m in zip(points, near, naming) if n or m] or points[:1]


class _Mmr:
    """Maximal marginal relevance over the sentences already in an answer (:data:`MMR_LAMBDA`)."""

    def __init__(self, vecs):
        self.vecs = vecs
        self.chosen: list[int] = []

    def value(self, i: int, rel: float) -> float:
        if self.vecs is None or not self.chosen:
            return rel
        red = float((self.vecs[self.chosen] @ self.vecs[i]).max())
        return MMR_LAMBDA * rel - (1 - MMR_LAMBDA) * red

    def add(self, i: int) -> None:
        self.chosen.append(i)


#: Kinds of :func:`sentence_kinds` that make a point weak: a report whose best sentence is one of these
#: gives no point while the answer has a plain statement (the demo story's "Martians" report held only
#: a joke line of dialogue, its "Hayes, Mercer" report only a quoted fragment).
WEAK_KINDS = ("question", "fragment", "heading")


def report_points(reports: list[dict], scores: dict, question_vec=None, embedder=None, max_points: int = 8,
                  per_report: int = 2, max_chars: int = FINDING_MAX_CHARS, min_words: int = 8,
                  reserve: list[dict] | None = None,
                  min_points: int = 3, headings=frozenset()) -> list[Point]:
    """One point per report, best-scored reports first: the report's title as the head and
    up to ``per_report`` sentences of its findings as the text.

    The sentences are chosen by maximal marginal relevance (:class:`_Mmr`) over
    :func:`relevance`: the cosine with the question, a bonus for each of the
    report's entities named (``entities`` of the report dict: its members by
    degree), penalties for questions, quoted dialogue fragments, headings and cut
    sentences; the redundancy term is taken against every sentence already in the
    answer, so later points do not restate earlier ones. Sentences of fewer than
    ``min_words`` words besides a speaker label ("KEVIN SCOTT: Yeah.") and
    back-channel lines ("(Laughter.)") are not candidates, unless a finding has
    no other sentence: its whole text is then a candidate, penalised by
    ``PENALTY["short"]`` and weak when it names none of the report's entities (its
    speaker label aside: "COUNCILLOR REYES: That is correct." states nothing about
    anyone, "Jordan Hayes studies the signal." does). Markdown structure is never quoted and inline
    Markdown is rendered (:func:`prose_sentences`); a finding's sentence that is a section title of the corpus
    (:func:`corpus_heading` over ``headings``: "Action items." carried from "## Action items" into an entity's
    description) is never quoted, and a finding of filler only (:func:`filler`: "Good point.", "They agreed.")
    is such a short finding. A report's second sentence is added only when its
    relevance is at least that of its first minus ``PENALTY["question"]``
    (no filler after a good quote).

    A point whose first sentence is weak (:data:`WEAK_KINDS`, or such a short finding) is dropped when the
    answer has another point. When fewer than ``min_points`` points are plain
    statements, the ``reserve`` reports (selected by the floor but under the
    relative cut, best first) are read too, until ``min_points`` are.

    A finding that nearly repeats one already used (:func:`near_duplicate`)
    is not repeated: its report is cited by the point that holds it. A report
    whose findings were all used elsewhere, or whose title nearly repeats an
    earlier point's, joins that point's citations.

    Args:
        reports: dicts with ``community_id``, ``title``, ``summary``, ``findings``
            and optionally ``entities`` (names, most connected first).
        scores: ``community_id -> helpfulness 0-100`` (of ``reports`` and ``reserve``).
        question_vec: the question's vector (None: findings in report order).
        max_points: points at most.
        reserve: reports read only to reach ``min_points`` plain points.
        headings: the corpus's section titles (:func:`heading_keys` of its text units; empty: none known).

    Returns:
        points, best first; each cites the reports it holds.
    """
    key = lambda r: (-scores.get(r["community_id"], 0.0), r["community_id"])  # noqa: E731
    main = sorted(reports, key=key)[: max_points * 2]
    ranked = main + sorted(reserve or [], key=key)[:max_points]
    cands: list[tuple[int, str]] = []  # (report index, one sentence of a finding)
    short: set[int] = set()  # a finding's whole short text that names none of its report's entities
    for i, r in enumerate(ranked):
        names = r.get("entities") or re.split(r", | and ", r.get("title") or "")
        for f in r.get("findings") or []:
            body = f"{f.get('explanation') or f.get('summary') or ''}"
            prose = [x for x in prose_sentences(body) if word_length(x) <= LONG_STRETCH and not furniture(x)
                     and not corpus_heading(x, headings)]
            sents = [x for x in prose if quotable(x, min_words) and not filler(x)]
            if not sents and prose and not addressed_to_assistant(body):
                sents = [" ".join(prose)]
                if all(filler(x) for x in prose) or not names_named(_SPEAKER.sub("", sents[0]), names):
                    short.add(len(cands))  # "COUNCILLOR REYES: That is correct." -- said, but states nothing
            for x in sents:
                cands.append((i, x))
        if not r.get("findings") and not corpus_heading(r.get("title") or "", headings):
            # a report without findings: its summary, else its text (one about a section title states nothing)
            body = " ".join(x for x in prose_sentences(r.get("summary") or re.sub(r"^#[^\n]*\n?", "", r.get(
                "full_text") or "") or r.get("title", "")) if not furniture(x))
            if body and not addressed_to_assistant(body):
                cands.append((i, cut(body, max_chars)))
    # a report's sentences are whole: a finding's long sentence is cut only when the report has no other
    by_r: dict[int, list[int]] = {}
    for k, (i, _) in enumerate(cands):
        by_r.setdefault(i, []).append(k)
    keep = []
    for i, ks in by_r.items():
        fits = [k for k in ks if len(cands[k][1]) <= max_chars]
        keep += fits or ks
    keep.sort()
    short = {keep.index(k) for k in short if k in keep}
    cands = [(i, cut(t, max_chars)) for i, t in (cands[k] for k in keep)]
    vecs = _embed([t for _, t in cands], embedder) if question_vec is not None else None
    qcos = _q_cosines(question_vec, vecs, len(cands))
    rel = [relevance(c, t, ranked[i].get("entities")) - (PENALTY["short"] if k in short else 0.0)
           if question_vec is not None else 0.0 for k, ((i, t), c) in enumerate(zip(cands, qcos))]
    by_report: dict[int, list[int]] = {}
    for k, (i, _) in enumerate(cands):
        by_report.setdefault(i, []).append(k)
    mmr = _Mmr(vecs)
    points: list[Point] = []
    weak: set[int] = set()  # id() of the weak points
    used: list[tuple[str, Point]] = []  # finding text -> the point holding it
    for i, r in enumerate(ranked):
        plain = len(points) - len(weak)
        if i >= len(main) and plain >= min_points:
            break
        rid = r["community_id"]
        title_dup = next((p for p in points if p.head and near_duplicate(p.head, r["title"], 0.8)), None)
        if title_dup is not None:
            if i < len(main):
                title_dup.ids.append(rid)
            continue
        chosen: list[int] = []
        left = list(by_report.get(i, []))
        while left and len(chosen) < per_report:
            k = max(left, key=lambda j: (mmr.value(j, rel[j]), -j))
            left.remove(k)
            t = cands[k][1]
            dup = next((p for u, p in used if near_duplicate(u, t)), None)
            if dup is not None:
                if rid not in dup.ids and i < len(main):
                    dup.ids.append(rid)
                continue
            if any(near_duplicate(t, cands[x][1]) for x in chosen):
                continue
            if chosen and rel[k] < rel[chosen[0]] - PENALTY["question"]:
                break
            chosen.append(k)
        if not chosen:
            continue
        is_weak = chosen[0] in short or any(k in WEAK_KINDS for k in sentence_kinds(cands[chosen[0]][1]))
        if i >= len(main) and is_weak:
            continue  # a reserve report is read only for a plain statement
        if len(points) - len(weak) >= max_points:
            break
        for k in chosen:
            mmr.add(k)
        p = Point(r["title"], " ".join(cands[k][1] for k in chosen), [rid], scores.get(rid, 0.0))
        points.append(p)
        if is_weak:
            weak.add(id(p))
        used += [(cands[k][1], p) for k in chosen]
    if len(weak) < len(points):
        points = [p for p in points if id(p) not in weak]
    return points[:max_points]


def whole_sentences(cands: list[tuple], max_chars: int) -> list[tuple]:
    """``cands`` (tuples whose last item is a sentence) with the sentences longer than ``max_chars`` left out:
    a quote is a whole sentence, never one cut short with an ellipsis; only when every sentence is longer are
    they kept, cut (:func:`slmgraph.names.forms.cut`)."""
    fits = [c for c in cands if len(c[-1]) <= max_chars]
    return fits if fits or not cands else [c[:-1] + (cut(c[-1], max_chars),) for c in cands]


def sentence_points(passages: list[tuple[object, str]], question_vec=None, embedder=None, max_points: int = 5,
                    min_words: int = 1, max_chars: int = 300, per_passage: int | None = None,
                    names: list[str] | None = None, probes: list[str] | None = None,
                    headings=frozenset(), persons: dict[str, str] | None = None,
                    question: str | None = None) -> list[Point]:
    """The sentences of ``passages`` most relevant to the question, one point each.

    Chosen by maximal marginal relevance (:class:`_Mmr`) over :func:`relevance`
    (the question cosine with the penalties for questions, quoted dialogue
    fragments, headings and cut sentences), so the points do not restate each
    other. Sentences are those of :func:`prose_sentences` (no table row, heading or
    Markdown mark is quoted); back-channel lines are skipped, and sentences of fewer than
    ``min_words`` words (:func:`quotable`; by default every sentence with a word: a short
    sentence is weighed by its relevance like any other, "Grace Hopper joined the Navy."
    answers "Who joined the Navy?"); a sentence that nearly repeats a chosen one (overlapping text
    units repeat sentences; :func:`same_statement`: the same names and figures) adds its passage to that point's
    citations instead. Meeting procedure
    ("Moved by Grace Whitfield, carried with one abstention.") comes after every other sentence; filler
    (:func:`filler`: "Yes.", "See above.", "They agreed.") is quoted only when no other sentence may be, and a
    section title of the corpus (:func:`corpus_heading`: "Action items." of an entity's description) never.

    Args:
        passages: ``(cite id, text)``, best first (the order breaks ties).
        per_passage: points one passage gives at most (None: no limit).
        names: the names the question asks about: a sentence naming one of them comes before every
            sentence naming none (a question about a person is answered by what is said of them).
        probes: the off-topic probe questions: a sentence naming none of ``names`` is quoted only when it is
            on the question (:func:`on_question`; when a sentence names one of ``names``, by the probe gap
            alone); when no sentence is, the one most relevant is quoted alone (the passages passed the
            search's own relevance gate).
        headings: the corpus's section titles (:func:`heading_keys`; empty: only the passages' own Markdown).
        persons: the persons the passages name (surface form -> person): a sentence opening on "he" or
            "she" is about the person named last before it in its passage
            (:func:`slmgraph.names.forms.pronoun_quote`), so it is quoted with the sentence naming that
            person, or not at all when that sentence is further back; with ``names``, it is quoted only when
            that person is one of them or it names one of them itself ("She gave a talk" after "a chapter
            on Margaret Moss" says nothing of Margaret Okafor). None: sentences are taken alone.
        question: the question's text: the first point is then the sentence that best answers it
            (:func:`slmgraph.query.lead_sentence.lead_scores`: its relevance plus the question's words it holds
            and the kind of answer it gives), the others chosen as before after it. None: the first point is
            the most relevant sentence.

    Returns:
        up to ``max_points`` points, most relevant first (with ``question``, the one that answers it first).
    """
    cands: list[tuple[int, object, str]] = []
    section: dict[tuple[int, str], str] = {}  # (passage order, sentence) -> the heading of its section
    for order, (pid, text) in enumerate(passages):
        sents = prose_sentences(text or "", title_lines=False)
        heads = [(m.start(), m.group(1)) for m in _ATX.finditer(text or "")] if question else []
        for k, s in enumerate(sents):
            if heads:
                at = (text or "").find(s[:24])
                section[(order, s)] = next((h for start, h in reversed(heads) if 0 <= start < at), "")
            if persons:
                who, s = pronoun_quote(sents, k, persons)
                if s is None or (who is not None and names and who not in names
                                 and not names_named(sents[k], names)):
                    continue  # the pronoun is someone the question does not ask about, or too far back
            if quotable(s, min_words) and not corpus_heading(s, headings):
                cands.append((order, pid, s))
    # Filler says nothing on its own: it is a candidate only when the passages hold nothing else.
    cands = [c for c in cands if not filler(c[2])] or cands
    cands = whole_sentences(cands, max_chars)
    vecs = _embed([c[2] for c in cands], embedder) if question_vec is not None else None
    qcos = _q_cosines(question_vec, vecs, len(cands))
    rel = [relevance(c, x[2]) if question_vec is not None else 0.0 for x, c in zip(cands, qcos)]
    stated = [not _PROCEDURE.match(_SPEAKER.sub("", x[2]).strip()) for x in cands]
    naming = [bool(names) and names_named(x[2], names) > 0 for x in cands]
    mmr = _Mmr(vecs)
    points: list[Point] = []
    left = list(range(len(cands)))
    allowed = set(left)  # the sentences that may be points; the rest only merge the citations of repeats
    if probes and vecs is not None and cands:
        # A question about someone is answered by what is said of them: a sentence naming neither them nor
        # anything else of the question's must clear the probes by the gap, however near the best it is.
        near = on_question(vecs, question_vec, probes, embedder, near_best=not any(naming))
        allowed = {k for k in left if near[k] or naming[k]} or {
            max(left, key=lambda j: (stated[j], rel[j], -cands[j][0], -j))}
    lead = lead_scores(question, [c[2] for c in cands], rel, [section.get((c[0], c[2]), "") for c in cands],
                       [leans(c[2]) for c in cands]) if question and question_vec is not None else None
    while left:
        pool = [j for j in left if j in allowed]
        full = len(points) >= max_points or not pool  # then only merge the citations of repeated sentences
        first = lead if lead is not None and not points else None  # the opening sentence: the one that answers
        # The opening sentence weighs the question's names as its other words (a sentence may answer "Who was
        # elected secretary at the AGM?" without naming the AGM); the others come naming them first.
        k = left[0] if full else max(pool, key=lambda j: (
            (stated[j], first[j], -cands[j][0], -j) if first is not None
            else (stated[j], naming[j], mmr.value(j, rel[j]), -cands[j][0], -j)))
        left.remove(k)
        _, pid, s = cands[k]
        # a sentence quoted with the one before it (a pronoun's person) holds that one: the same statement
        dup = next((p for p in points if same_statement(p.text, s) or s in p.text or p.text in s), None)
        if dup is not None:
            if pid not in dup.ids:
                dup.ids.append(pid)
            continue
        if full:
            continue
        if per_passage is not None and sum(p.ids[0] == pid for p in points) >= per_passage:
            continue
        points.append(Point("", s, [pid], rel[k]))
        mmr.add(k)
    return points


#: Words of a title or office that, after a name and a comma, make an apposition ("Marcus Reyes, chair of
#: the board, ...", "Linda Cho, Chief Information Officer, ..."): these, and the offices of the role lexicon
#: (:data:`slmgraph.names.lexicon.ROLE_WORDS`, ``OFFICE_WORDS``: "treasurer", "clerk", "councillor") less
#: the personal titles and the words that are as often no office ("acting on", "count the", "major").
_ROLE_LEXICON = sorted((ROLE_WORDS | OFFICE_WORDS) - PERSONAL_TITLES - frozenset(
    "count private major justice co prime acting interim associate honorary members executive".split()))
_TITLE = (r"(?:chair\w*|head|director|chief|president|vice|ceo|cfo|cio|cto|coo|officer|manager|secretary|"
          r"treasurer|member|founder|co-founder|dean|professor|dr|mayor|minister|governor|senator|editor|"
          r"spokes\w*|lead|leader|partner|owner|nurse|doctor|surgeon|physician|captain|general|"
          + "|".join(re.escape(w) for w in _ROLE_LEXICON) + ")")
_ARTICLE = r"(?:the|a|an|its|our|their|his|her|one of)"
#: A possessive or an article before an office ("its parks officer", "Scrooge's clerk", "the new chair").
_DETERMINER = r"(?:the|a|an|its|our|their|his|her|my|your|[A-Z][\w'-]*['\u2019]s)"
#: A name after a preposition that opens a clause, and before a comma, opens a clause about something else
#: ("For Alex Mercer, the link ...; for Taylor Cruz, the initiative pulsed ..."): no apposition; after a
#: noun the preposition is part of the name's phrase ("Ghost of Jacob Marley, a spectre of ..."). Python's
#: look-behinds are of fixed width, hence one per word and opening.
_NOT_AFTER_PREPOSITION = "".join(rf"(?<!^{w}\s)(?<![,;:]\s{w}\s)" for w in
                                 "for to with of by from at in on about like unlike as than".split())
#: A verb of taking an office, after a copula ("was re-elected Chair", "was appointed as the treasurer").
_INSTALLED = r"(?:re-?elected|elected|appointed|named|made|chosen|co-opted|voted)(?:\s+as)?"


def _defines(name: str) -> re.Pattern:
    """The pattern of a sentence that says what ``name`` is: an apposition ("N, the Chief Information
    Officer,", "N, chair of the board,", "N, who is ..."), a speaker's own ("I'm co-host N, Senior
    Developer Advocate at GitHub"), one the other way round ("its parks officer,
    N,", "the council leader, Councillor N"), a role in brackets after the name ("N (Treasurer)"), a
    copula, after an aside or not ("N is/was/became the ...", "N, aged 88, was made an honorary member"),
    an office taken ("N was re-elected Chair") or held ("N chairs/leads/heads the ...", "his successor as
    parks officer is N")."""
    n = re.escape(name)
    aside = r"(?:\s*,[^,.;]{1,40},)?"  # "N, aged 88, was ...": a short aside between the name and its verb
    return re.compile(
        rf"(?i)(?<!\w){_NOT_AFTER_PREPOSITION}{n}(?:'s)?[\"'\u201d\u2019)]*\s*,\s*"
        rf"(?:{_ARTICLE}\s|{_TITLE}\b|who\s+(?:is|was|serves|served|chairs|chaired|leads|led|heads|headed)\b)"
        rf"|\b(?:I['\u2019]m|I am|my name is)\s+(?:[\w-]+\s+){{0,2}}{n}\s*,\s*\w"
        rf"|(?<!\w){n}{aside}\s+(?:is|was|has been|had been|remains|became|serves as|served as|acts as)\s+"
        rf"(?:{_INSTALLED}\s+)?(?:{_ARTICLE}\s|{_TITLE}\b)"
        rf"|(?<!\w){n}\s+(?:chairs|chaired|leads|led|heads|headed|directs|directed|runs|ran|founded)\s+{_ARTICLE}\s"
        rf"|(?<!\w){n}\s*\((?:[\w'-]+\s+){{0,2}}{_TITLE}\b[^()]{{0,40}}\)"
        rf"|(?<![\w'-]){_DETERMINER}\s+(?:[\w'-]+\s+){{0,3}}{_TITLE}(?:\s+(?:of|to|for)\s+[^,.;]{{1,40}})?\s*,\s*"
        rf"(?:[A-Z][\w'-]*\.?\s+)?{n}(?!\w)"
        rf"|\bas\s+(?:{_ARTICLE}\s+)?(?:[\w'-]+\s+){{0,2}}{_TITLE}\s+(?:is|was|became)\s+(?:[A-Z][\w'-]*\.?\s+)?"
        rf"{n}(?!\w)")


def _role_near(name: str) -> re.Pattern:
    """The pattern of a sentence that ties ``name`` to an office without saying it is theirs in so many
    words: "as" and an office a few words after the name ("N announced that this would be his last year as
    Treasurer", "N will stand down as Chair"). Weaker than :func:`_defines`, so only its fallback."""
    n = re.escape(name)
    return re.compile(rf"(?i)(?<!\w){n}(?!\w)(?:\W+\w+){{0,10}}?\W+as\s+(?:{_ARTICLE}\s+)?(?:[\w'-]+\s+){{0,2}}?"
                      rf"{_TITLE}\b")


def could_define(text: str, name: str) -> bool:
    """True when ``text`` holds a match of :func:`_defines` or :func:`_role_near` for ``name``, whitespace
    folded: a cheap test before :func:`defining_points` splits ``text`` into sentences (a match may still
    span two sentences, which :func:`defining_points` rejects)."""
    if not name or name.casefold() not in (text or "").casefold():  # the patterns ignore case too
        return False
    flat = " ".join(text.split())
    return bool(_defines(name).search(flat) or _role_near(name).search(flat))


def defining_points(passages: list[tuple[object, str]], names: list[str], max_points: int = 2,
                    max_chars: int = 300) -> list[Point]:
    """The sentences of ``passages`` that say what one of ``names`` is (:func:`_defines`: "Linda Cho, the
    Chief Information Officer, ...", "Marcus Reyes chairs the board."; failing that, :func:`_role_near`:
    "... his last year as Treasurer"), at most one per name and
    ``max_points`` in all, in passage order; each cites its passage (a repeat adds its passage).

    Args:
        passages: ``(cite id, text)``, the entity's own text units first.
        names: the names the question is about (entity names of the index).
    """
    points: list[Point] = []
    for name in names:
        if len(points) >= max_points or not name:
            break
        found: Point | None = None
        for pat in (_defines(name), _role_near(name)):  # a statement of what the name is before a role near it
            for pid, text in passages:
                for x in prose_sentences(text or ""):
                    if not pat.search(x) or not quotable(x, 3) or x.rstrip(" '\"\u2019\u201d").endswith("?"):
                        continue  # a question ("And your brother, Tiny Tim?") states nothing
                    x = cut(x, max_chars)
                    if found is None and not any(near_duplicate(p.text, x) for p in points):
                        found = Point("", x, [pid], 1.0)
                    elif found is not None and near_duplicate(found.text, x) and pid not in found.ids:
                        found.ids.append(pid)
            if found is not None:
                points.append(found)
                break
    return points


def first_sentences(description: str, min_words: int = 8, max_chars: int = 300) -> str:
    """The opening of an entity ``description``: its first prose sentence, with the second when the
    first is shorter than ``min_words`` words; "" when it has none. A letter's or an article's furniture
    (:func:`furniture`: "Published 14 December 2025.") is no sentence of it."""
    sents = [x for x in prose_sentences(description or "") if not addressed_to_assistant(x) and not furniture(x)]
    if not sents:
        return ""
    out = sents[0]
    if word_count(out) < min_words and len(sents) > 1:
        out = f"{out} {sents[1]}"
    return cut(out, max_chars)


def render_points(points: list[Point], label: str) -> str:
    """Points as markdown bullets: ``- **head**: text [Label: 1, 2]`` (no head: ``- text [...]``);
    a point's own ``label`` overrides ``label``."""
    lines = []
    for p in points:
        cite = f" [{p.label or label}: {', '.join(map(str, p.ids))}]" if p.ids else ""
        lines.append(f"- **{p.head}**: {p.text}{cite}" if p.head else f"- {p.text}{cite}")
    return "\n".join(lines)


def grounded_synthesis(text: str, points: list[Point]) -> str | None:
    """The first sentence of a model-written ``text`` when it may open an answer, else None.

    Kept when: half of its content words occur in the points
    (:func:`slmgraph.names.forms.is_grounded`, as for report titles), it is not a
    copied list or a loop (:func:`slmgraph.indexing.stages.reports.degenerate`,
    :func:`has_repetition`), it has at least 4 words, it leaks no context
    label ("Passage 4:", "Report 12"), it gives no orders to an assistant
    (:func:`slmgraph.text.prose.addressed_to_assistant`), and it does not merely repeat a point.
    """
    text = " ".join((text or "").split())
    first = sentences(text)[0] if sentences(text) else ""
    first = first.strip().strip('"').strip()
    if (word_count(first) < 4 or _MARKERS.search(first) or degenerate(first) or has_repetition(first)
            or addressed_to_assistant(first)):
        return None
    words = set()
    for p in points:
        words.update(content_words(f"{p.head} {p.text}"))
    if not is_grounded(first, words, 0.5):
        return None
    if any(near_duplicate(first, p.text, 0.8) for p in points):
        return None
    if not first.endswith((".", "!", "?")):
        first += "."
    return first


def opening_on(settings, n_params: int | None) -> bool:
    """Whether an extractive answer asks the model for its opening sentence (``Settings.opening``:
    ``model`` yes, ``off`` no, ``auto`` as :func:`slmgraph.model.policy.route` decides: the model's capability
    record, else from 1B parameters). ``auto`` leaves it off under 1B, where the sentence was rarely
    supported and cost most of a query's time (docs/decisions.md: no opening sentence under 1B)."""
    return model_does("opening", getattr(settings, "opening", "auto"), n_params)


def opening(client, prompts, settings, question: str, points: list[Point]) -> tuple[str | None, object]:
    """:func:`synthesize` when :func:`opening_on` and there are points, else ``(None, None)`` (no model call)."""
    if not points or not opening_on(settings, client.model):
        return None, None
    return synthesize(client, prompts, question, points)


def synthesize(client, prompts, question: str, points: list[Point], max_tokens: int = 60,
               max_point_tokens: int = 1500) -> tuple[str | None, object]:
    """Ask the model for one opening sentence over ``points``; ``(kept sentence or None, Generation)``.

    The points are given without citations, cut to ``max_point_tokens``
    tokens; greedy, capped at ``max_tokens`` (one sentence). See
    :func:`grounded_synthesis` for when the sentence is kept.
    """
    listing = "\n".join(f"- {p.head + ': ' if p.head else ''}{p.text}" for p in points)
    listing = client.truncate(listing, max_point_tokens)
    gen = client.call("synthesis", prompts.text("synthesis_system"),
                      prompts.fill("synthesis_user", question=question, points=listing),
                      schema=None, max_tokens=max_tokens, deadline_s=DEADLINE_SENTENCE_S, use_cache=False)
    return grounded_synthesis(gen.text, points), gen


def extractive_answer(points: list[Point], label: str, synthesis: str | None, sources_line: str,
                      groups: list[tuple[str, list[Point]]] | None = None, lead: bool = False) -> str:
    """The answer text: the synthesis (if any), the points, and the sources line. With ``groups``
    (``[(heading, points)]``, the same points), each group's points under a ``### heading`` line. With
    ``lead`` (and no ``groups``), the first point is the answer's opening sentence, a paragraph of its own
    with its citation ("Gareth Lloyd repaired the standpipe on 4 March. [Sources: 3]"), the others bullets
    after it: the sentence that answers is read first, not as one item of a list."""
    if groups:
        body = "\n\n".join(f"### {head}\n{render_points(ps, label)}" for head, ps in groups if ps)
    elif lead and points:
        first = render_points(points[:1], label)[2:]
        body = "\n\n".join(x for x in (first, render_points(points[1:], label)) if x)
    else:
        body = render_points(points, label)
    parts = ([synthesis] if synthesis else []) + [body] + ([sources_line] if sources_line else [])
    return "\n\n".join(p for p in parts if p)

