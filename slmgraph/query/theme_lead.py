"""The sentences a themed global answer opens with, built from its statements by templates (no model):

* :func:`answer_lead`: who answers the question, from how many documents, and the words the statements
  share -- "9 statements by Andrew Ng (3), Kevin Scott (2) and Sam Altman (2), from 4 of the 6 works, bear
  on the question; they speak most of “stories” (3) and “engineer” (2).";
* :func:`timeline_lead`: for a question about change over time, what the earliest and the latest statement
  say and where they come from, with the figures each states;
* :func:`theme_common`: what a theme's statements have in common -- who says them and the words they share
  ("Kevin Scott and Andrew Ng speak here of “rivets” and “circuit boards” (both statements).").

Every claim is counted from the quoted statements; a word is one of their shared words only when it is no
stop word and is found in under :data:`COMMON_WORD_SHARE` of the corpus's documents (a word every episode
uses, "think", "really", says nothing of a theme).
"""


from __future__ import annotations

import re

from slmgraph.names.forms import content_words
from slmgraph.query.extractive import _SPEAKER
from slmgraph.query.theme_model import Theme, ThemeIndex, word_stem
from slmgraph.store.corpus_stats import count_terms, read_terms

#: A word found in at least this share of the corpus's documents is no shared word of a theme.
COMMON_WORD_SHARE = 0.15
#: Shared words a sentence names at most; speakers the lead names at most (then "and N others").
SHARED_WORDS = 3
LEAD_SPEAKERS = 4
#: Letters a shared word has at least.
MIN_LETTERS = 4


def _join(items: list[str]) -> str:
    items = [i for i in items if i]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""


def speakers_first(said: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``said`` (``[(text, speaker)]``, in the order found) with each speaker's first before anyone's second, and so
    on, the order found kept within each round: no one speaker fills a short list."""
    rank: dict[str, int] = {}
    keyed = []
    for i, (text, who) in enumerate(said):
        keyed.append((rank.get(who, 0), i, text, who))
        rank[who] = rank.get(who, 0) + 1
    return [(text, who) for _, _, text, who in sorted(keyed)]


def _q(word: str) -> str:
    return f"\u201c{word}\u201d"


def corpus_word_share(ix: ThemeIndex) -> dict[str, float]:
    """``word stem -> share of the corpus's documents whose text units hold it`` (cached on ``ix``; empty for
    an index view without a store)."""
    cached = getattr(ix, "_word_share", None)
    if cached is not None:
        return cached
    store = getattr(ix, "store", None)
    docs: dict[str, tuple[int, int]] = {}
    if store is not None:
        docs = read_terms(store.con, "stem")
        if docs is None:  # no statistics matching the text units: count them from the text
            docs = count_terms(store.con.execute("SELECT chunk_id, doc_id, text FROM text_units").fetchall(), [],
                               kinds=("stem",))["stem"]
    n = max(1, len(ix.docs))
    ix._word_share = {w: d / n for w, (d, _) in docs.items()}
    return ix._word_share


def shared_words(texts: list[str], ix: ThemeIndex, avoid: str = "", least: int = 2) -> list[tuple[str, int]]:
    """``[(word as first written, number of texts holding it)]``: the content words of :data:`MIN_LETTERS`
    letters or more found in at least ``least`` of ``texts`` (by :func:`word_stem`), the most widely shared
    first, words of ``avoid`` (a label the reader already sees) after the others; never a word of under
    :data:`COMMON_WORD_SHARE` of the corpus's documents' reach, nor a speaker label's word."""
    share = corpus_word_share(ix)
    avoided = {word_stem(w) for w in content_words(avoid)}
    count: dict[str, int] = {}
    shown: dict[str, str] = {}
    first: dict[str, int] = {}
    for t in texts:
        body = _SPEAKER.sub("", t)
        for w in dict.fromkeys(x for x in content_words(body) if len(x) >= MIN_LETTERS):
            s = word_stem(w)
            if share.get(s, 0.0) >= COMMON_WORD_SHARE:
                continue
            count[s] = count.get(s, 0) + 1
            shown.setdefault(s, w)
            first.setdefault(s, len(first))
    ranked = sorted((s for s, n in count.items() if n >= least), key=lambda s: (s in avoided, -count[s], first[s]))
    return [(shown[s], count[s]) for s in ranked]


def _stems(text: str) -> list[str]:
    return [word_stem(w) for w in re.findall(r"[^\W_]+", text.casefold())]


def _holds(seq: list[str], sub: tuple) -> bool:
    n = len(sub)
    return any(tuple(seq[i:i + n]) == sub for i in range(len(seq) - n + 1))


def _unit_phrases(statements, ix: ThemeIndex) -> list[tuple[str, tuple]]:
    """``[(surface, stems)]``: the noun phrases of the statements' text units (``concept_mentions``) that
    under :data:`COMMON_WORD_SHARE` of the corpus's text units hold; [] without them."""
    store = getattr(ix, "store", None)
    if store is None or not hasattr(store, "has_unit_numbers"):  # a bare connection's view has no unit numbers
        return []
    from slmgraph.query.answer import unit_numbers

    chunk_of = getattr(ix, "_chunk_of", None)
    if chunk_of is None:  # one read of the numbering per query, not one per theme
        chunk_of = ix._chunk_of = {n: c for c, n in unit_numbers(store).items()}
    chunks = [chunk_of[s.source] for s in statements if s.source in chunk_of]
    phrases: dict[str, str] = {}
    for pairs in ix.unit_phrases(chunks).values():
        for key, surface in pairs:
            phrases.setdefault(key, surface)
    n_units = max(1, ix.n_units)
    df = ix.phrase_units
    out = []
    for key, surface in phrases.items():
        sub = tuple(_stems(surface))
        if sub and sum(len(w) for w in sub) >= MIN_LETTERS and df.get(key, 0) / n_units < COMMON_WORD_SHARE:
            out.append((surface, sub))
    return out


def shared_terms(statements, ix: ThemeIndex, avoid: str = "", least: int = 2) -> list[tuple[str, int]]:
    """Like :func:`shared_words`, but of the noun phrases the index's concept pass found in the statements'
    text units (``concept_mentions``; a phrase is in a statement when its words' stems are, in order), the
    longer phrase first among equally shared ones and no phrase overlapping one already listed; a phrase in
    :data:`COMMON_WORD_SHARE` of the corpus's text units or more is left out. Falls back to
    :func:`shared_words` in an index without phrases."""
    texts = [s.text for s in statements]
    phrases = _unit_phrases(statements, ix)
    if not phrases:
        return shared_words(texts, ix, avoid=avoid, least=least)
    avoided = set(_stems(avoid))
    bodies = [_stems(_SPEAKER.sub("", t)) for t in texts]
    cands = []
    for surface, sub in phrases:
        n = sum(1 for b in bodies if _holds(b, sub))
        if n >= least:
            cands.append((surface, sub, n))
    cands.sort(key=lambda c: (set(c[1]) <= avoided, -c[2], -len(c[1]), c[0]))
    out, used = [], set()
    for surface, sub, n in cands:
        if used & set(sub):
            continue
        used |= set(sub)
        out.append((surface, n))
    return out


def _speakers(statements) -> list[tuple[str, int]]:
    out: dict[str, int] = {}
    for s in statements:
        if s.speaker:
            out[s.speaker] = out.get(s.speaker, 0) + 1
    return sorted(out.items(), key=lambda kv: -kv[1])


def theme_common(t: Theme, ix: ThemeIndex, question: str = "") -> str:
    """The theme's first sentence: who says its statements and the words two or more of them share (the
    label's own words last), with how many statements hold them. "" when they share none (the next sentence
    then names the speakers); ``question`` is unused by the template and kept for a writer of another."""
    sts = list(t.statements)
    if not sts:
        return ""
    n = len(sts)
    # the speakers are this sentence's subject only when every statement has one
    who = [w for w, _ in _speakers(sts)] if all(s.speaker for s in sts) else []
    words = shared_terms(sts, ix, avoid=t.topic)[:SHARED_WORDS] if n > 1 else []
    subject = _join(who) if who else ("Its statements" if n > 1 else "Its statement")
    verb = "speaks" if (len(who) == 1 or (not who and n == 1)) else "speak"
    if words:
        if all(c == n for _, c in words):
            held = f"all {n} statements" if n > 2 else "both statements"
            return f"{subject} {verb} here of {_join([_q(w) for w, _ in words])} ({held})."
        return f"{subject} {verb} here of " + _join([f"{_q(w)} ({c} of {n} statements)" for w, c in words]) + "."
    return ""


def answer_lead(themes: list[Theme], ix: ThemeIndex) -> str:
    """The answer's first sentence: how many statements answer, by whom (each speaker with the number of
    statements, the most first), from how many of the corpus's documents (works, for parts of works), and
    the words two or more statements of the whole answer share. "" without statements."""
    sts = [s for t in themes for s in t.statements]
    if not sts:
        return ""
    n = len(sts)
    docs = {s.doc_id for s in sts if s.doc_id in ix.doc_by_id}
    works = {ix.doc_by_id[d].work or d for d in docs}
    n_works = len({d.work or d.doc_id for d in ix.docs})
    whole = any(d.work for d in ix.docs)
    noun = "work" if whole else "document"
    of = len(ix.docs) if not whole else n_works
    k = len(works) if whole else len(docs)
    where = (f"from the corpus's one {noun}" if of == 1 else
             f"from all {of} {noun}s" if k == of else f"from {k} of the {of} {noun}s")
    if whole and of > 1:
        where += f" ({len(docs)} part{'s' if len(docs) != 1 else ''})"
    who = _speakers(sts)
    by = ""
    if who:
        shown = [f"{w} ({c})" if c > 1 else w for w, c in who[:LEAD_SPEAKERS]]
        rest = len(who) - LEAD_SPEAKERS
        if rest > 0:
            shown.append(f"{rest} other{'s' if rest != 1 else ''}")
        named = sum(c for _, c in who)
        # statements with no speaker label are nobody's: never credit them to the speakers of the others
        by = f" by {_join(shown)}" if named == n else f", {named} of them by {_join(shown)}"
    text = f"{n} statement{'s' if n != 1 else ''}{by}, {where}, bear{'s' if n == 1 else ''} on the question"
    words = shared_terms(sts, ix)[:SHARED_WORDS] if n > 1 else []
    if words:
        text += f"; they speak most of {_join([f'{_q(w)} ({c})' for w, c in words])}"
    return text + "."


def _own_words(text: str, other: str, ix: ThemeIndex, phrases: list[tuple[str, tuple]] | None = None) -> list[str]:
    """Up to two noun phrases of ``phrases`` (:func:`_unit_phrases`) that ``text`` holds and ``other`` shares no
    word of, in reading order; without any, content words of ``text`` that ``other`` lacks and under
    :data:`COMMON_WORD_SHARE` of the corpus's documents hold."""
    share = corpus_word_share(ix)
    theirs = {word_stem(w) for w in content_words(other)}
    body = _SPEAKER.sub("", text)
    mine = _stems(body)
    found = sorted(((p, sub) for p, sub in phrases or [] if _holds(mine, sub) and not set(sub) & theirs),
                   key=lambda ps: next(i for i in range(len(mine)) if tuple(mine[i:i + len(ps[1])]) == ps[1]))
    out: list[str] = []
    for p, sub in found:
        if not any(set(sub) & set(_stems(o)) for o in out):
            out.append(p)
    if out:
        return out[:2]
    return [w for w in dict.fromkeys(content_words(body)) if len(w) >= MIN_LETTERS and word_stem(w) not in theirs
            and share.get(word_stem(w), 0.0) < COMMON_WORD_SHARE][:2]


#: A figure as a reader quotes it: a currency sign, the number, a scale word and a unit or the noun it
#: counts ("4.1 million dollars", "$1.2bn", "12 percent", "1,200 volumes", "3,300"); a year range
#: ("2021-22") or a date is a time, not a figure, and is matched only to be left out.
_STATED = re.compile(
    r"(?i)(?P<date>\b(?:1[89]|20)\d\d(?:\s*[-\u2013/]\s*\d{2,4})?\b(?![.,]\d))"
    r"|(?P<fig>[$\u00a3\u20ac\u00a5]\s?\d+(?:[.,]\d+)*(?:\s?(?:million|billion|thousand|bn|m|k)\b)?"
    r"|(?<![\w.,])\d+(?:[.,]\d+)*(?:\s?(?:million|billion|thousand|hundred)\b)?"
    r"(?:\s?(?:%|percent\b|per cent\b|(?:dollars?|pounds?|euros?|yen)\b|(?-i:[a-z]{3,})\b))?)")
#: Words after a number that are no unit of it ("12 of the 40", "5 in 2023").
_NOT_UNIT = frozenset("""of in on at to by for from and or the a an with than per was were is are be been has had
have will would who which that this these those""".split())


def stated_figures(sentence: str) -> list[str]:
    """The figures ``sentence`` states, as written with their unit or the noun they count ("cut the grant
    for 2021-22 by 12 percent, from 4.1 million dollars to 3.6 million dollars" -> ["12 percent",
    "4.1 million dollars", "3.6 million dollars"]); years, year ranges and days of a date are left out (the
    statement's document carries its date). Amounts (a currency, a share, a scale word) come first."""
    body = _SPEAKER.sub("", sentence)
    out: list[str] = []
    for m in _STATED.finditer(body):
        fig = m.group("fig")
        if not fig:
            continue
        words = fig.split()
        if len(words) > 1 and words[-1].casefold() in _NOT_UNIT:
            fig = " ".join(words[:-1])
        after = body[m.end():m.end() + 12].lstrip()
        if re.fullmatch(r"\d{1,2}(?:[.:]\d\d)?", fig) and re.match(
                r"(?i)(january|february|march|april|may|june|july|august|september|october|november|december|"
                r"[ap]\.?m\b)", after):
            continue  # the day of a date ("15 March"), a time of day ("8.40 pm")
        out.append(fig)
    amount = re.compile(r"(?i)[$\u00a3\u20ac\u00a5%]|\b(million|billion|thousand|bn|percent|per cent|dollars?|"
                        r"pounds?|euros?|yen)\b")
    return sorted(dict.fromkeys(out), key=lambda f: not amount.search(f))


def timeline_lead(themes: list[Theme], ix: ThemeIndex) -> str:
    """For a question about change over time, what came first and what later: a statement of the earliest and
    one of the latest document quoted (corpus order; "the first" and "the last" in the documents' order when
    either carries no date), within each the first (the last) stating a figure where one does, each with its
    document, its date where the document carries one, who says it, the figures it states and two words it
    has that the other lacks -- "The earliest statement,
    from “minutes 2019” (2019-09), states 4 and speaks of “shortfall”; the latest, from “minutes 2024”
    (2024-11), states 6 and speaks of “reserves”." "" when the statements come from fewer than two documents."""
    sts = sorted((s for t in themes for s in t.statements if s.doc_id in ix.doc_by_id),
                 key=lambda s: (ix.doc_by_id[s.doc_id].pos, s.unit))
    if len({s.doc_id for s in sts}) < 2:
        return ""
    # from the first and the last documents listed below, so "the earliest" is the earliest a reader sees; a
    # change is told by its figures: within each of the two, a statement stating one where there is one
    first = [s for s in sts if s.doc_id == sts[0].doc_id]
    last = [s for s in sts if s.doc_id == sts[-1].doc_id]
    a = next((s for s in first if stated_figures(s.text)), first[0])
    b = next((s for s in reversed(last) if stated_figures(s.text)), last[-1])
    phrases = _unit_phrases([a, b], ix)

    def said(s, other) -> str:
        d = ix.doc_by_id[s.doc_id]
        date = f" ({d.date})" if d.date and d.date not in d.name else ""
        who = f" by {s.speaker}" if s.speaker else ""
        parts = []
        figs = stated_figures(s.text)
        if figs:
            parts.append(f"states {_join(figs[:3])}")
        own = _own_words(s.text, other.text, ix, phrases)
        if own:
            parts.append(f"speaks of {_join([_q(w) for w in own])}")
        return f"{who}, from {_q(d.name)}{date}" + (f", {' and '.join(parts)}" if parts else "")

    if ix.doc_by_id[a.doc_id].date and ix.doc_by_id[b.doc_id].date:
        return f"The earliest statement{said(a, b)}; the latest{said(b, a)}."
    # undated documents have an order, not a time: never call the first one the earliest
    return f"In the documents' order, the first statement{said(a, b)}; the last{said(b, a)}."
