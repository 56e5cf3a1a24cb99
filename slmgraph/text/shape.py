"""Whether a document's text is prose: a dumped table, a log or base64-like text indexed beside real
documents is cut into text units that hold no sentence, and they crowd out real evidence at query time.

:func:`not_prose` is the one test, measured on the text's *stretches*: the runs of words between line
breaks and sentence ends (``.``, ``!``, ``?``, a danda or ``؟`` followed by white space; ``。！？``). A document of at least
:data:`MIN_WORDS` words is not prose when

* :data:`LONG_SHARE` of its words or more lie in stretches longer than :data:`LONG_STRETCH` words (an
  English sentence runs 15-30 words, a long one 60; a transcript's turn or a table row ends at its line
  break), or
* fewer than :data:`WORD_SHARE` of its tokens look like words of a language (:data:`_WORDLIKE`: letters
  only, at most :data:`MAX_WORD_CHARS` of them, with a vowel, lower-case or capitalised), as in a table of
  figures, codes and identifiers.

Both figures are shares, so the test reads the same on a page and on a book.
"""

from __future__ import annotations

import re

#: Documents shorter than this (words) are never judged: a short note or a list is fine as it is.
MIN_WORDS = 300
#: A stretch (words between line breaks and sentence ends) longer than this is no sentence.
LONG_STRETCH = 150
#: Share of a document's words in stretches over :data:`LONG_STRETCH` words that makes it not prose.
LONG_SHARE = 0.5
#: Share of a document's tokens that must look like words for it to be prose.
WORD_SHARE = 0.5
#: A word-like token has at most this many letters (longer runs are identifiers or encodings).
MAX_WORD_CHARS = 20

# sentence ends: Latin, Devanagari (danda), Arabic question mark, and the CJK full stops (no space after)
_STRETCH_END = re.compile(r"\n|(?<=[.!?\u0964\u0965\u061f])[\"'\u201d\u2019)]*\s|(?<=[\u3002\uff01\uff1f])")
_WORDLIKE = re.compile(r"^[\"'(\u201c\u2018]*([A-Za-z\u00c0-\u024f]?[a-z\u00df-\u024f]+(?:['\u2019-][a-z]+)*|[A-Z]{1,4}|"
                       r"[Ia])[\"')\u201d\u2019.,;:!?]*$")
_VOWEL = re.compile(r"[aeiouyAEIOUY\u00c0-\u024f]")
_LATIN_OR_DIGIT = re.compile(r"[A-Za-z0-9\u00c0-\u024f]")


def word_like(token: str) -> bool:
    """True when a whitespace token looks like a word of a language: in the Latin script, :data:`_WORDLIKE`
    with a vowel and at most :data:`MAX_WORD_CHARS` letters; in another script (Cyrillic, Greek, Arabic,
    Devanagari, a CJK run with no spaces), no Latin letter or digit and mostly letters (``str.isalpha``)."""
    if _LATIN_OR_DIGIT.search(token):
        return len(token) <= MAX_WORD_CHARS + 4 and bool(_WORDLIKE.match(token)) and bool(_VOWEL.search(token))
    letters = sum(1 for c in token if c.isalpha())
    return letters > 0 and 2 * letters >= len(token)


def prose_figures(text: str) -> dict:
    """The figures :func:`not_prose` reads: ``{"words", "longest", "long_share", "word_share"}``
    (``longest``: the longest stretch in words; shares 0-1)."""
    tokens = text.split()
    n = len(tokens)
    long_words, longest = 0, 0
    for stretch in _STRETCH_END.split(text):
        k = len(stretch.split())
        longest = max(longest, k)
        if k > LONG_STRETCH:
            long_words += k
    wordlike = sum(1 for t in tokens if word_like(t))
    return {"words": n, "longest": longest, "long_share": long_words / n if n else 0.0,
            "word_share": wordlike / n if n else 1.0}


def not_prose(text: str) -> str | None:
    """Why ``text`` is not prose (a phrase for a warning line), or None when it is (see the module doc)."""
    f = prose_figures(text or "")
    if f["words"] < MIN_WORDS:
        return None
    if f["long_share"] >= LONG_SHARE:
        return (f"{f['long_share']:.0%} of its {f['words']:,} words run in stretches of over {LONG_STRETCH} words "
                f"with no line break or sentence end (the longest: {f['longest']:,})")
    if f["word_share"] < WORD_SHARE:
        return f"only {f['word_share']:.0%} of its {f['words']:,} tokens are words (the rest: figures, codes, symbols)"
    return None


#: A passage (a text unit) shorter than this (words) is never judged by :func:`no_prose_passage`.
MIN_PASSAGE_WORDS = 50


def no_prose_passage(text: str) -> bool:
    """True when the passage ``text`` (a text unit, of :data:`MIN_PASSAGE_WORDS` words or more) fails either
    test of :func:`not_prose`: none of its stretches is a sentence an answer could quote, so a search
    spends no test and no answer slot on it."""
    f = prose_figures(text or "")
    return f["words"] >= MIN_PASSAGE_WORDS and (f["long_share"] >= LONG_SHARE or f["word_share"] < WORD_SHARE)


#: Share of word-like tokens under which a passage is no text at all (codes, figures, keys), whatever its
#: sentence ends: a passage of tagged names ("Person12 met Acme12 Corp") reads about 0.4 and is still text.
JUNK_WORD_SHARE = 0.25


def junk_passage(text: str) -> bool:
    """True when the passage ``text`` (:data:`MIN_PASSAGE_WORDS` words or more) has no sentence structure
    (:data:`LONG_SHARE` of its words in stretches over :data:`LONG_STRETCH` words) or almost no words (under
    :data:`JUNK_WORD_SHARE`): stricter than :func:`no_prose_passage`, since such a passage gives the graph
    nothing (no entity, concept or model call) rather than only being passed over by a search."""
    f = prose_figures(text or "")
    return f["words"] >= MIN_PASSAGE_WORDS and (f["long_share"] >= LONG_SHARE or f["word_share"] < JUNK_WORD_SHARE)
