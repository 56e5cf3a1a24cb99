"""Which quoted sentence opens an extractive basic or local answer: the one that best answers the question.

The points of an extractive answer are chosen by their cosine with the question
(:func:`slmgraph.query.extractive.sentence_points`); the nearest sentence is often context, not the answer
("Haymo of Faversham ... was an English Franciscan scholar." for "What language were books being translated
into during the era of Haymo of Faversham?"). A reader looks for the answer in the first sentence, so the
first point is chosen by :func:`lead_scores`, the sentence-retrieval score of question answering (the
question's words a sentence holds, weighted by how rare they are among the candidates, added to its cosine:
Allan, Wade and Bolivar 2003, *Retrieval and novelty detection at the sentence level*; the expected answer
type of the wh-word: Hovy et al. 2001, *Toward semantics-based answer pinpointing*):

* ``cosine``: the candidate's relevance as the points rank it (cosine with the question, penalties and the
  names' bonus of :func:`slmgraph.query.extractive.relevance`);
* ``+ OVERLAP_WEIGHT * overlap``: the share of the question's focus words (:func:`focus_words`: its words
  besides the wh-word, stop words and asking words, by :func:`slmgraph.store.corpus_stats.word_stem`) the
  sentence holds, each weighted by its inverse document frequency over the candidate sentences (a word every
  candidate holds tells none apart);
* ``+ TYPE_BONUS``: the sentence holds what the wh-word asks for beyond the question's own words
  (:func:`answer_kind`, :func:`holds_kind`: a date for "when", a figure for "how much", a name for "who");
* ``- LEANING``: the sentence leans on the one before it (:func:`slmgraph.query.extractive.leans`: "It was
  fixed in May.", "Um, and just hearing Bill talk ..."), so it reads badly as the answer's first sentence.

The overlap weight and the type bonus were chosen on the answer-lead benchmark (``benchmarks/answer_lead.py``,
``benchmarks/results/lead_s17.md``: 37 questions, a flat optimum from 0.15 to 0.8); the leaning penalty is the
value of the "fragment" penalty, not swept.
"""

from __future__ import annotations

import math
import re

from slmgraph.names.forms import STOP
from slmgraph.names.lexicon import LABEL_CAPITALS
from slmgraph.names.kinds import _DATE, _TIME
from slmgraph.store.corpus_stats import word_stem

#: Weight of the idf-weighted share of the question's focus words a sentence holds (cosine units).
OVERLAP_WEIGHT = 0.3
#: Bonus of a sentence holding what the question's wh-word asks for (cosine units).
TYPE_BONUS = 0.05
#: Penalty of a sentence that leans on the one before it (cosine units; the "fragment" penalty of
#: :data:`slmgraph.query.extractive.PENALTY`, a sentence cut where a text unit begins).
LEANING = 0.15

#: Words that ask rather than name what is asked about (besides :data:`slmgraph.names.forms.STOP`).
ASKING = frozenset("""
who whom whose what which when where why how tell describe explain say said says mention mentioned
name named kind sort type does did do happen happened
""".split())
_WORD = re.compile(r"[^\W_][\w'\u2019-]*")
#: A figure: digits, a currency sign or a share.
_FIGURE = re.compile(r"\d|[$\u00a3\u20ac\u00a5%]")
#: A name: a capitalised word after a sentence's first word (a speaker label set aside).
_CAPITAL = re.compile(r"(?<=[\s(\"'\u201c])[A-Z][\w'\u2019-]*")
_SPEAKER = re.compile(rf"^[{LABEL_CAPITALS}][{LABEL_CAPITALS} .'/-]+:\s*")
#: Question openings and the kind of answer they ask for.
_KINDS = (
    ("date", re.compile(r"(?i)^\W*(when\b|(in |on )?what (year|date|day|month|time)\b|(in |on )?which (year|date|"
                        r"day|month)\b|how long ago\b)")),
    ("figure", re.compile(r"(?i)^\W*(how (much|many|long|old|big|large|far|tall|high)\b|what (is|was|were|are) "
                          r"the (number|cost|price|population|amount|total|balance|size|rent|fee)s?\b)")),
    ("name", re.compile(r"(?i)^\W*(who|whom|whose|where)\b|\b(which|what) (person|man|woman|company|"
                        r"city|town|country|band|film|team|street|place)\b")),
)


def focus_words(question: str) -> set[str]:
    """The stems (:func:`slmgraph.store.corpus_stats.word_stem`) of the words ``question`` asks about: its words
    less stop words and :data:`ASKING` words; a word of under three letters only when written with a capital
    (a name's part: "Ng") or digits ("f(x)" gives none; "1986" is kept)."""
    out = set()
    for w in _WORD.findall(question or ""):
        f = w.casefold().strip("'\u2019")
        if f in STOP or f in ASKING:
            continue
        if len(f) >= 3 or w[:1].isupper() or f.isdigit():
            out.add(word_stem(f))
    return out


def answer_kind(question: str) -> str | None:
    """What the question's wh-word asks for: ``"date"`` (when, what year), ``"figure"`` (how much, how many,
    what was the population), ``"name"`` (who, where, which company), or None."""
    for kind, pat in _KINDS:
        if pat.search(question or ""):
            return kind
    return None


def holds_kind(sentence: str, kind: str | None, asked: set[str]) -> bool:
    """True when ``sentence`` holds an answer of ``kind`` (:func:`answer_kind`) that is not one of the
    question's own words (``asked``: their stems): a date or a time, a figure, a capitalised name."""
    body = _SPEAKER.sub("", sentence or "")
    if kind == "date":
        return any(not all(word_stem(w.casefold()) in asked for w in _WORD.findall(m.group(0)))
                   for m in list(_DATE.finditer(body)) + list(_TIME.finditer(body)))
    if kind == "figure":
        return any(_FIGURE.search(w) and word_stem(w.casefold()) not in asked for w in body.split())
    if kind == "name":
        return any(word_stem(w.casefold()) not in asked and w.casefold() not in STOP for w in _CAPITAL.findall(body))
    return False


def _stems(sentence: str) -> set[str]:
    return {word_stem(w.casefold().strip("'\u2019")) for w in _WORD.findall(_SPEAKER.sub("", sentence or ""))}


def lead_scores(question: str, sentences: list[str], relevance: list[float],
                sections: list[str] | None = None, leaning: list[bool] | None = None) -> list[float]:
    """The lead score of each of ``sentences`` (the candidate quotes, aligned with ``relevance``, their
    ranking relevance in cosine units; with ``sections``, the heading of the section each stands in, "" for
    none; with ``leaning``, whether each leans on the sentence before it): see the module doc. A section's
    heading words count as the sentence's own for the overlap ("Rents will rise to £40 ..." under "## Rents
    for 2024" answers "What will the rent be in 2024?"). Same length as ``sentences``."""
    asked = focus_words(question)
    stems = [_stems(s) | _stems(h) for s, h in zip(sentences, sections or [""] * len(sentences))]
    n = len(sentences)
    idf = {w: math.log(1 + (n - df + 0.5) / (df + 0.5)) for w in asked
           for df in [sum(w in st for st in stems)]}
    total = sum(idf.values())
    kind = answer_kind(question)
    out = []
    for s, st, rel, lean in zip(sentences, stems, relevance, leaning or [False] * len(sentences)):
        overlap = sum(idf[w] for w in asked & st) / total if total else 0.0
        out.append(rel + OVERLAP_WEIGHT * overlap + (TYPE_BONUS if holds_kind(s, kind, asked) else 0.0)
                   - (LEANING if lean else 0.0))
    return out


def asks_identity(question: str, names: list[str]) -> bool:
    """True when ``question`` asks only what one of ``names`` is ("Who is Andrew Ng?", "What is the Gates
    Foundation?"): every focus word (:func:`focus_words`) is a word of those names. A question asking more of
    them ("What did Bill Gates say about memory?") is answered by its own best sentence first."""
    asked = focus_words(question)
    named = set().union(*(_stems(n) for n in names)) if names else set()
    return bool(asked) and asked <= named
