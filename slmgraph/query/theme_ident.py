"""What a corpus is, in one or two sentences built from counted data (no model): the opening of a corpus-wide
answer, before its themes.

Signals, all from the index:

* a book's own front matter: a document whose first text unit holds a ``Title:`` line (and an ``Author:``
  line), as a Project Gutenberg text does, holding most of the corpus's text units -- "The corpus is “A
  Christmas Carol” by Charles Dickens, with 2 other documents (README_graphrag_reference and README_text).";
* the phrases recurring in the documents' titles and first-line headings (dates and numbers left out),
  counted by document (by work, for the parts of works), in at least half of them;
* a name heading the first document that those phrases do not hold (an organisation is often named in
  full only there);
* the people (entity type ``person``) named in at least half of the documents (works);
* the first and last dates of the documents (:attr:`slmgraph.query.documents.Doc.date`).

When none of these holds, the answer opens as before (:func:`corpus_identity` returns "").
"""


from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from slmgraph.names.forms import STOP
from slmgraph.query.extractive import _SPEAKER
from slmgraph.query.theme_lead import _join, _q

#: A phrase is read from titles and headings when it is in at least this share of the documents (works).
PHRASE_SHARE = 0.5
#: Words a phrase has at most; phrases named at most.
PHRASE_WORDS = 6
MAX_PHRASES = 2
#: Each word of a phrase beyond its first weighs this share of a document when phrases are ranked: a longer
#: phrase names more ("Kevin Scott Podcast" in 4 titles ranks above "Kevin" in 5).
WORD_WEIGHT = 0.15
#: A first line of at most this many words is a heading.
HEADING_WORDS = 12
#: People named at most; the share of documents (works) they are in; documents (works) a corpus has at least
#: for them to be named.
MAX_PEOPLE = 3
PEOPLE_SHARE = 0.5
PEOPLE_MIN_UNITS = 3
#: A book's text units are at least this share of the corpus's for the corpus to be called that book.
BOOK_SHARE = 0.5
#: Other documents listed by name at most beside a book.
MAX_OTHERS = 3

_MONTHS = frozenset("""january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec""".split())
#: What ends a phrase in a title or heading: a dash, a colon, a bracket, a comma, a slash, sentence ends.
_SEGMENT = re.compile(r"\s+[-\u2013\u2014]+\s+|[\u2013\u2014:|()\[\]{},;/.!?\"\u201c\u201d]")
_TOKEN = re.compile(r"[^\W_]+(?:['\u2019][^\W\d_]+)?")
_TITLE_LINE = re.compile(r"(?im)^\s*title:\s*(\S.{0,150}?)\s*$")
_AUTHOR_LINE = re.compile(r"(?im)^\s*author:\s*(\S.{0,100}?)\s*$")
#: A capitalised run of words (a name), which may hold "of", "the", "and", "for", "&".
_NAME_RUN = re.compile(r"\b[A-Z][\w'\u2019]+(?:\s+(?:(?:of|the|and|for|&)\s+)*[A-Z][\w'\u2019]+)+")


@dataclass
class Unit:
    """One document, or one work with its parts: ``lines`` are its title and its heading (the first line of
    its first text unit when that is at most :data:`HEADING_WORDS` words), ``people`` the names of the
    persons its text units mention."""

    key: str
    lines: list[str]
    people: set[str] = field(default_factory=set)


def _clean_line(line: str) -> str:
    return re.sub(r"\s+", " ", line.replace("_", " ").lstrip("#").strip())


def _runs(line: str) -> list[list[str]]:
    """The word runs of a title or heading: split at :data:`_SEGMENT`, and at a number, a month or a hyphen
    joining a number, so no phrase holds a date ("2018-03-spring-newsletter" -> [["spring", "newsletter"]])."""
    out = []
    for seg in _SEGMENT.split(_clean_line(line).replace("-", " ")):
        run: list[str] = []
        for tok in _TOKEN.findall(seg):
            if any(c.isdigit() for c in tok) or tok.casefold() in _MONTHS:
                if run:
                    out.append(run)
                run = []
            else:
                run.append(tok)
        if run:
            out.append(run)
    return out


def _phrases(line: str) -> dict[str, str]:
    """``key -> surface`` of the phrases of a title or heading: runs of 1 to :data:`PHRASE_WORDS` words that
    neither open nor close on a stop word, with a word of three letters or more."""
    out: dict[str, str] = {}
    for run in _runs(line):
        for i in range(len(run)):
            for j in range(i + 1, min(len(run), i + PHRASE_WORDS) + 1):
                words = run[i:j]
                if words[0].casefold() in STOP or words[-1].casefold() in STOP:
                    continue
                if not any(len(w) >= 3 and w.casefold() not in STOP for w in words):
                    continue
                if len(words) == 1 and len(words[0]) < 3:
                    continue
                out.setdefault(" ".join(w.casefold() for w in words), " ".join(words))
    return out


def _inside(short: str, long: str) -> bool:
    return short != long and f" {short} " in f" {long} "


def _overlaps(a: str, b: str) -> bool:
    """True when ``a`` closes on words ``b`` opens on, neither holding the other ("behind the tech", "tech
    kevin scott")."""
    x, y = a.split(), b.split()
    return any(x[-i:] == y[:i] for i in range(1, min(len(x), len(y)))) and not (_inside(a, b) or _inside(b, a))


def _acronym(short: str, long: str) -> bool:
    """True when ``short`` is the initials of ``long``'s words ("agm", "annual general meeting")."""
    words = long.split()
    return len(words) > 1 and " " not in short and short == "".join(w[0] for w in words)


def title_phrases(units: list[Unit]) -> list[tuple[str, int]]:
    """``[(surface, documents)]``: at most :data:`MAX_PHRASES` phrases of the units' titles and headings in at
    least :data:`PHRASE_SHARE` of the units (and two), by units weighed by length (:data:`WORD_WEIGHT`), chosen
    one by one. A phrase is left out when a longer one holding it is in as many units (it says less), when a
    chosen one holds it, and when it is a chosen one's initials; one opening on a chosen phrase counts as the
    rest of its words ("Behind the Tech Kevin Scott Podcast" as "Kevin Scott Podcast"); one closing on it stays
    (it names a kind of it: "Meeting" in 10, "Annual General Meeting" in 6); one holding it elsewhere is left
    out."""
    n = len(units)
    where: dict[str, set] = {}
    surfaces: dict[str, Counter] = {}
    for u in units:
        for line in u.lines:
            for key, surface in _phrases(line).items():
                where.setdefault(key, set()).add(u.key)
                surfaces.setdefault(key, Counter())[surface] += 1
    floor = max(2, math.ceil(PHRASE_SHARE * n))
    cands = [k for k, v in where.items() if len(v) >= floor]
    chosen: list[str] = []
    while len(chosen) < MAX_PHRASES:
        pool: dict[str, int] = {}
        for k in cands:
            for c in chosen:
                if k.startswith(c + " "):
                    k = k[len(c) + 1:]
            if k not in where or len(where[k]) < floor or any(_overlaps(k, c) or _overlaps(c, k) for c in chosen) or any(
                    k == c or _inside(k, c) or _acronym(k, c) or _acronym(c, k)
                    or (_inside(c, k) and not k.endswith(" " + c)) for c in chosen):
                continue
            pool[k] = len(where[k])
        closed = [k for k in pool if not any(_inside(k, o) and pool[o] == pool[k] for o in pool)]
        if not closed:
            break
        chosen.append(min(closed, key=lambda k: (-pool[k] * (1 + WORD_WEIGHT * (len(k.split()) - 1)),
                                                  -len(k.split()), k)))
    # as most often written; on a tie as a heading writes it (capitalised) rather than a file name
    return [(max(surfaces[k].items(), key=lambda sc: (sc[1], sum(ch.isupper() for ch in sc[0])))[0], len(where[k]))
            for k in chosen]


def first_name_heading(heading: str, phrases: list[str]) -> str:
    """``heading`` (the first document's) when it holds a name (a capitalised run of two words or more) that
    shares no word with ``phrases``, else "": "Millbrook Allotment Association — Annual General Meeting,
    March 2017" beside "Annual General Meeting" names the association."""
    line = _clean_line(heading)
    if not line or len(line.split()) > HEADING_WORDS:
        return ""
    said = {w.casefold() for p in phrases for w in p.split()}
    for m in _NAME_RUN.finditer(line):
        words = {w.casefold() for w in m.group(0).split()} - STOP
        if len(words) >= 2 and not words & said:
            return line
    return ""


def book(heads: dict[str, str], units: dict[str, int]) -> tuple[str, str, str] | None:
    """``(doc_id, title, author)`` of the document whose first text unit (``heads``: doc_id -> text) holds a
    ``Title:`` line (author "" without an ``Author:`` line) and at least :data:`BOOK_SHARE` of the corpus's
    text units (``units``: doc_id -> count); None when none does."""
    total = sum(units.values()) or 1
    for doc_id, head in heads.items():
        m = _TITLE_LINE.search(head or "")
        if m and units.get(doc_id, 0) >= BOOK_SHARE * total:
            a = _AUTHOR_LINE.search(head)
            return doc_id, m.group(1).strip(), a.group(1).strip() if a else ""
    return None


def _person(name: str) -> str:
    """A name as a reader writes it: a transcript's upper-case speaker label in title case."""
    return name.title() if name.isupper() and len(name) > 3 else name


def people(units: list[Unit], phrases: list[str], common=None) -> list[tuple[str, int]]:
    """``[(name, units)]``: at most :data:`MAX_PEOPLE` persons named in at least :data:`PEOPLE_SHARE` of the
    units, most first; none in fewer than :data:`PEOPLE_MIN_UNITS` units. A name a title phrase (``phrases``,
    as written) holds before a lower-case word ("Nandakumar Lab" in "Nandakumar Lab notebook") is left out, and so is one whose words are part of a
    name already listed ("Kevin" beside "Kevin Scott"), and one ``common(name)`` says is made of common words
    ("Senior Cloud Advocate": a role the text writes in lower case too)."""
    n = len(units)
    if n < PEOPLE_MIN_UNITS:
        return []
    count: Counter = Counter()
    shown: dict[str, str] = {}
    for u in units:
        for p in {_person(x).casefold() for x in u.people}:
            count[p] += 1
        for x in u.people:
            shown.setdefault(_person(x).casefold(), _person(x))
    # a name a phrase holds before a common noun names no person ("Nandakumar Lab" of "Nandakumar Lab notebook")
    before_noun = set()
    for p in phrases:
        words = p.split()
        for i in range(1, len(words)):
            if words[i][:1].islower():
                before_noun.add(" ".join(words[:i]).casefold())
    out: list[tuple[str, int]] = []
    for key, c in sorted(count.items(), key=lambda kc: (-kc[1], -len(kc[0].split()), kc[0])):
        if c < PEOPLE_SHARE * n or len(out) == MAX_PEOPLE:
            break
        if common is not None and common(shown[key]):
            continue
        if any(b.endswith(key) for b in before_noun) or any(set(key.split()) <= set(o.casefold().split()) for o, _ in out):
            continue
        out.append((shown[key], c))
    return out


def _in(c: int, n: int) -> str:
    return ("both" if n == 2 else f"all {n}") if c == n else f"{c} of {n}"


def identity_sentence(units: list[Unit], n_parts: int = 0, dates: tuple[str, str] | None = None,
                      first_heading: str = "", book_of: tuple[str, str, list[str]] | None = None,
                      common=None) -> str:
    """The opening that says what the corpus is, or "".

    Args:
        units: the documents, or the works (with ``n_parts`` their parts), in corpus order.
        dates: the first and last documents' dates, when they carry them.
        first_heading: the first document's heading (:func:`first_name_heading` decides whether it is named).
        book_of: ``(title, author, other document names)`` of a book making most of the corpus (:func:`book`).
        common: ``name -> bool``, True for a name made of words the corpus writes in lower case (:func:`people`).

    Returns:
        "These 12 documents, dated 2017-03 to 2024-03, have “meeting” (10 of 12) and “Annual General
        Meeting” (6) in their titles or headings; the first is headed “Millbrook Allotment Association —
        Annual General Meeting, March 2017”. Margaret Oduya, Priya Raman and Owen Trevithick appear in 11 of
        them." -- or "The corpus is “A Christmas Carol” by Charles Dickens, with 2 other documents (A and B)."
    """
    if book_of is not None:
        title, author, others = book_of
        text = f"The corpus is {_q(title)}{f' by {author}' if author else ''}"
        if others:
            k = len(others)
            text += f", with {k} other document{'s' if k != 1 else ''}"
            if k <= MAX_OTHERS:
                text += f" ({_join(others)})"
        return text + "."
    n = len(units)
    if n < 2:
        return ""
    phrases = title_phrases(units)
    heading = first_name_heading(first_heading, [p for p, _ in phrases])
    who = people(units, [p for p, _ in phrases], common)
    if not phrases and not heading and not who:
        return ""
    head = f"These {n} works ({n_parts} parts)" if n_parts else f"These {n} documents"
    if dates and dates[0] != dates[1]:
        head += f", dated {dates[0]} to {dates[1]},"
    clauses = []
    if phrases:
        if len({c for _, c in phrases}) == 1:
            named = f"{_join([_q(p) for p, _ in phrases])} in the titles or headings of {_in(phrases[0][1], n)}"
        else:
            named = (_join([f"{_q(p)} ({_in(c, n) if i == 0 else c})" for i, (p, c) in enumerate(phrases)])
                     + " in their titles or headings")
        clauses.append(f"have {named}")
    if heading:
        clauses.append(f"the first is headed {_q(heading)}" if clauses else f"open with one headed {_q(heading)}")
    text = head + " " + "; ".join(clauses) + "." if clauses else ""
    if who:
        groups: list[tuple[list[str], int]] = []
        for name, c in who:
            if groups and groups[-1][1] == c:
                groups[-1][0].append(name)
            else:
                groups.append(([name], c))
        parts = []
        for i, (names, c) in enumerate(groups):
            reach = ("both of them" if n == 2 else "all of them") if c == n else f"{c} of them" if i == 0 else str(c)
            verb = ("appear in " if len(names) > 1 else "appears in ") if i == 0 and text else "in "
            parts.append(f"{_join(names)} {verb}{reach}")
        said = _join(parts) if len(parts) > 1 else parts[0]
        text = f"{text} {said}." if text else f"{head} name {said}."
    return text.strip()


def _heading(head: str) -> str:
    """The first line of ``head`` when it is a heading: a Markdown one, or at most :data:`HEADING_WORDS` words
    not ending a sentence and not opening on a speaker's label ("KEVIN SCOTT: Hi"); else ""."""
    first = next((ln for ln in (head or "").splitlines() if ln.strip()), "").strip()
    if _SPEAKER.match(re.sub(r"^[\W_]+", "", first)):  # a transcript's first turn
        return ""
    short = len(first.split()) <= HEADING_WORDS and not re.search(r"[.!?]$", first)
    return first if (first.startswith("#") or short) and _TOKEN.search(first) else ""


def corpus_identity(ix) -> str:
    """:func:`identity_sentence` of a :class:`slmgraph.query.theme_model.ThemeIndex`'s corpus: its documents
    (or works) in corpus order, their titles, the first lines of their first text units, the persons their
    text units mention (``entities`` of type ``person``; none in an index without them) and their dates; kept
    on ``ix`` (an answer reads it twice)."""
    if getattr(ix, "_identity", None) is None:
        ix._identity = _corpus_identity(ix)
    return ix._identity


def _corpus_identity(ix) -> str:
    import duckdb

    docs = ix.docs
    con = getattr(getattr(ix, "store", None), "con", None)
    if not docs or con is None:
        return ""
    try:
        heads = {d: t or "" for d, t in con.execute(
            "SELECT doc_id, left(text, 3000) FROM text_units "
            "QUALIFY row_number() OVER (PARTITION BY doc_id ORDER BY ord) = 1").fetchall() if d in ix.doc_by_id}
    except duckdb.Error:
        return ""
    found = book(heads, {d.doc_id: d.n_units for d in docs})
    if found is not None:
        others = [d.name for d in docs if d.doc_id != found[0]]
        return identity_sentence([], book_of=(found[1], found[2], others))
    try:
        mentioned = con.execute(
            "SELECT DISTINCT t.doc_id, e.name FROM entities e JOIN entity_text_units x USING (entity_id) "
            "JOIN text_units t USING (chunk_id) WHERE e.type = 'person'").fetchall()
    except duckdb.Error:
        mentioned = []
    works = any(d.work for d in docs)
    units: dict[str, Unit] = {}
    for d in docs:  # a work's title and heading are its first part's
        key = (d.work or d.doc_id) if works else d.doc_id
        if key not in units:
            units[key] = Unit(key, [d.work if works and d.work else d.title, _heading(heads.get(d.doc_id, ""))])
    for doc_id, name in mentioned:
        d = ix.doc_by_id.get(doc_id)
        if d is not None and name:
            units[(d.work or d.doc_id) if works else d.doc_id].people.add(str(name))
    dated = [d for d in docs if d.date]
    dates = (dated[0].date, dated[-1].date) if len(dated) >= 2 and 2 * len(dated) >= len(docs) else None
    return identity_sentence(list(units.values()), n_parts=len(docs) if works else 0, dates=dates,
                             first_heading=_heading(heads.get(docs[0].doc_id, "")), common=_lower_case(con))


def _lower_case(con):
    """``name -> bool``: True when every word of ``name`` is also written in lower case in some text unit."""
    def common(name: str) -> bool:
        words = [w.lower() for w in _TOKEN.findall(name)]
        return bool(words) and all(con.execute(
            "SELECT count(*) > 0 FROM text_units WHERE regexp_matches(text, ?)",
            [r"(^|[^\w])" + re.escape(w) + r"([^\w]|$)"]).fetchone()[0] for w in words)
    return common
