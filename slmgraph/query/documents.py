"""The documents behind citations: what a reader can open.

Every query method cites text units by their index-wide number and global search cites community
reports; this module maps both to documents:

* :func:`corpus_documents`: the documents in corpus order, each with a display name: its title (a
  leading file-name line or its file's stem), or its path when another document has the same title; when
  the documents are parts of works (:func:`series_parts`: "talk-part3", "book ch 4", "notes (2)"), the
  work's readable name and the part ("talk, part 3"), and coverage counts works with their parts;
  Corpus order is date order when at least half the documents carry a date (:func:`document_date`: in the
  title, the heading line, the file name or the first lines), undated ones after; otherwise, when at least half the
  documents' file names, titles or first lines number an episode (:func:`episode_number`: "Episode 29", "EP39",
  "Ep-12", "Episode Six", "#4"), episode order, unnumbered ones after; otherwise, and among equal dates or
  episodes, the paths in natural order (``part2`` before ``part10``);
* :func:`unit_sources`: a cited text unit's document and its position in it (``unit 3 of 12``);
* :func:`community_documents`: the documents behind a community (``community_reports.doc_ids`` when
  the index holds it, else the documents of the text units that mention its members), in corpus order;
* :func:`coverage`: how many of the corpus's documents that is, and the first and last;
* :func:`cited_documents` / :func:`sources_legend`: the same for every citation of an
  :class:`slmgraph.query.answer.Answer`, for ``--json``/the API and as lines under the answer's text.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class Doc:
    """One document. ``pos``: 1-based place in corpus order; ``name``: what citations call it; ``date``: the
    date it carries as written (:func:`document_date`), or None; ``episode``: the episode it numbers when the
    corpus is read in episode order (:func:`episode_number`), else None."""

    doc_id: str
    path: str
    title: str
    name: str
    pos: int
    n_units: int
    date: str | None = None
    work: str | None = None
    part: int | None = None
    episode: int | None = None


#: A trailing part number of a file stem or title: "-part12", "_part_3", " pt 2", " ch 4", "chapter 4",
#: "section 2", " (2)"; the keyword follows no letter, so "search4" is no chapter; the stem keeps a bracket it
#: closes ("Transcript (1)-part3" is part 3 of "Transcript (1)").
_PART = re.compile(r"(?i)^(?P<stem>.*?[^\W_][)\]]?)[\W_]*(?:(?<![^\W\d_])(?P<kw>part|pt|chapter|chap|ch|section|sect|sec)"
                   r"[\s_.\-]*(?P<n>\d{1,4})|\((?P<p>\d{1,4})\))$")
_PART_WORD = {"pt": "part", "chap": "chapter", "ch": "chapter", "sect": "section", "sec": "section"}


def part_of(name: str) -> tuple[str, str, int] | None:
    """``(work stem, part word, part number)`` of a name ending in a part number (see :data:`_PART`):
    "EP-03_ Talk-part15" -> ("EP-03_ Talk", "part", 15), "notes (2)" -> ("notes", "part", 2); None when it
    ends in none."""
    m = _PART.match((name or "").strip())
    if m is None:
        return None
    kw = (m.group("kw") or "part").lower()
    return m.group("stem"), _PART_WORD.get(kw, kw), int(m.group("n") or m.group("p"))


def readable(stem: str) -> str:
    """A file stem as a reader writes it: underscores as spaces, runs of spaces as one, no dangling
    separator ("EP-03_ Behind_the_Tech" -> "EP-03 Behind the Tech")."""
    return re.sub(r"\s+", " ", stem.replace("_", " ")).strip(" -.,")


def series_parts(names: dict[str, str]) -> dict[str, tuple[str, str, int]]:
    """``key -> (work name, part word, part number)`` for the names (``key -> file stem or title``) that are
    parts of a series: a work stem (compared case-blind, separators ignored) shared by at least two names
    that each end in a part number. Empty unless at least half the names are such parts: a corpus of
    separate documents keeps its documents."""
    got = {k: p for k, v in names.items() if (p := part_of(v))}
    by_work: dict[str, list[str]] = {}
    for k, (stem, _, _) in got.items():
        by_work.setdefault(readable(stem).casefold(), []).append(k)
    parts = {k for ks in by_work.values() if len(ks) > 1 for k in ks}
    if not parts or 2 * len(parts) < len(names):
        return {}
    return {k: (readable(got[k][0]), got[k][1], got[k][2]) for k in parts}


def natural_key(path: str) -> list:
    """Sort key comparing the digit runs of ``path`` as numbers (``part2`` before ``part10``)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t.casefold()) for t in re.split(r"(\d+)", path or "")]


#: Number words an episode may be named by ("Episode Six").
_NUMBER_WORDS = {w: i for i, w in enumerate("""zero one two three four five six seven eight nine ten eleven twelve
thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty""".split())}
#: An episode's number in a file name or a title ("Show_Episode 29_Guest", "Show-EP39_2021", "EP-05_ Show", "Ep.12",
#: "Episode Six", "Show #4 - Guest"); a letter before it would make it part of another word ("deep12").
_EPISODE = re.compile(r"(?i)(?<![a-z])(?:episode|ep)[\s._#-]*(\d{1,4}|" + "|".join(_NUMBER_WORDS) + r")(?![\da-z])|"
                      r"(?<![\w&])#\s*(\d{1,4})(?!\d)")


def episode_number(path: str, title: str = "") -> int | None:
    """The episode number the file name of ``path`` gives, else its ``title`` (:data:`_EPISODE`: "Episode 29",
    "EP39", "Ep-12", "Episode Six", "#4"), else None; a series' episodes are numbered in the order they were
    published, whatever their names' prefixes."""
    for text in (PurePosixPath(path or "").name, title or ""):
        m = _EPISODE.search(text)
        if m:
            got = m.group(1) or m.group(2)
            return int(got) if got.isdigit() else _NUMBER_WORDS[got.casefold()]
    return None


_MONTH_NO = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                         "dec"), start=1)}
#: Lines at the head of a document read for its date (a letter's "2 June 2021", a heading's date).
HEAD_LINES = 3


def date_key(date: str) -> tuple[int, int, int] | None:
    """``(year, month, day)`` of a date as :func:`slmgraph.indexing.stages.topics.title_date` finds it
    ("2024-03-01", "14 September 2019", "March 2019", "Q3 2021", "FY16", "2019"); 0 for a part not given
    (a quarter: its first month); None when no year is read."""
    t = date.lower()
    year = re.search(r"(?:19|20)\d{2}", t)
    if year is None:
        short = re.search(r"(?:fy|q[1-4])\s*(?:fy)?\s*'?(\d{2})\b", t)
        if short is None:
            return None
        y = 2000 + int(short.group(1))
    else:
        y = int(year.group(0))
    iso = re.fullmatch(r"\d{4}-(\d{2})(?:-(\d{2}))?", t)
    if iso:
        # "2023-24" is a fiscal year's span, no month
        return (y, int(iso.group(1)), int(iso.group(2) or 0)) if int(iso.group(1)) <= 12 else (y, 0, 0)
    month = next((n for m, n in _MONTH_NO.items() if re.search(rf"\b{m}", t)), 0)
    quarter = re.search(r"q([1-4])", t)
    if not month and quarter:
        month = 3 * int(quarter.group(1)) - 2
    day = re.search(r"(?<!\d)(\d{1,2})(?!\d)", t) if month and not quarter else None
    return y, month, int(day.group(1)) if day else 0


def _date_in(text: str) -> tuple[str, tuple[int, int, int]] | None:
    from slmgraph.indexing.stages.topics import title_date

    # A file name's separators: "minutes_2024_06" reads as "minutes 2024-06".
    text = re.sub(r"(?<=\d)[_.](?=\d)", "-", text or "").replace("_", " ")
    d = title_date(text)
    key = date_key(d) if d else None
    return (d, key) if key else None


#: Words at most in a first line read as the document's heading (a title line, not a sentence of its text).
HEADING_WORDS = 12


def date_detail(date: str, key: tuple[int, int, int]) -> int:
    """How specific a date is: 3 a day, 2 a month (or a quarter), 1 a year, 0 a fiscal year's span
    ("2023-24", "FY16")."""
    if re.search(r"(?i)\bfy|^\d{4}-\d{2}$", date.strip()) and not key[1]:
        return 0
    return 3 if key[2] else 2 if key[1] else 1


def document_date(title: str, path: str, head: str = "") -> tuple[str, tuple[int, int, int]] | None:
    """The date a document carries, as written and as :func:`date_key`: the most specific
    (:func:`date_detail`: a day before a month before a year before a fiscal year's span) of the first dates
    of its title (a leading file-name line), its heading (a first line of at most :data:`HEADING_WORDS`
    words, such as "Annual report 2021" or "12 March 2021"), its file name and its first :data:`HEAD_LINES`
    lines (``head``), the earlier of these on a tie; None when none holds one."""
    stem = PurePosixPath(path or "").stem
    lines = (head or "").splitlines()[:HEAD_LINES]
    first = next((ln for ln in lines if ln.strip()), "")
    heading = first if len(first.split()) <= HEADING_WORDS else ""
    best = None
    for text in (title if title != stem else "", heading, stem, "\n".join(lines)):
        got = _date_in(text)
        if got and (best is None or date_detail(*got) > date_detail(*best)):
            best = got
    return best


def built_filter(store) -> tuple[str, list]:
    """A ``WHERE`` clause on ``documents d`` (and its parameters) that keeps the documents of the last complete
    build while an update of the index is unfinished (meta ``complete`` 0): those added up to its meta
    ``built_added_at``, since the derived tables a query reads are still that build's, and of an edited
    document the old version an interrupted update keeps (:func:`slmgraph.indexing.stages.ingest.retiring`),
    not the new one. Empty otherwise (a
    complete index, or one whose last complete build predates the meta key)."""
    get = getattr(store, "get_meta", None)  # a bare connection holder (a test's) has no meta
    built = get("built_added_at") if get else None
    if not built or get("complete") == "1":
        return "", []
    from slmgraph.indexing.stages.ingest import retiring

    old = sorted(retiring(store))
    if not old:
        return "WHERE d.added_at IS NULL OR d.added_at <= CAST(? AS TIMESTAMP)", [built]
    # An edited document's new version (its old one, still held, is what the build read) is not counted twice.
    q = ",".join("?" * len(old))
    return (f"WHERE (d.added_at IS NULL OR d.added_at <= CAST(? AS TIMESTAMP)) AND (d.doc_id IN ({q}) OR "
            f"d.path NOT IN (SELECT path FROM documents WHERE doc_id IN ({q})))", [built, *old, *old])


def corpus_documents(store, built: bool = True) -> list[Doc]:
    """Every document, in corpus order (see the module doc: dates, else natural order of paths), with its
    display name and date; ``built``: during an unfinished update only those of the last complete build
    (:func:`built_filter`), whose tables the answers read.

    The name is the title unless another document shares it (the parts of one transcript all carry
    the transcript's file-name line), then the path without its suffix; a part of a series
    (:func:`series_parts` over the file stems) is named by its work and part ("EP-03 Talk, part 15"), and
    carries them as ``work`` and ``part``.
    """
    where, params = built_filter(store) if built else ("", [])
    rows = store.con.execute(f"""
        SELECT d.doc_id, d.path, d.title, count(t.chunk_id) FROM documents d
        LEFT JOIN text_units t USING (doc_id) {where} GROUP BY d.doc_id, d.path, d.title""", params).fetchall()
    heads = dict(store.con.execute("SELECT doc_id, left(text, 600) FROM text_units "
                                   "QUALIFY row_number() OVER (PARTITION BY doc_id ORDER BY ord) = 1").fetchall())
    dates = {r[0]: document_date(r[2] or "", r[1] or "", heads.get(r[0], "")) for r in rows}
    by_date = len(rows) > 1 and 2 * sum(1 for d in dates.values() if d) >= len(rows)
    far = (10**4, 0, 0)
    # the file name, else the title, else the heading line ("# Roots and Routes — Episode 5")
    episodes = {r[0]: episode_number(r[1] or "", r[2] or "") or episode_number(
        "", (heads.get(r[0]) or "").lstrip().split("\n", 1)[0][:200]) for r in rows}
    by_episode = not by_date and len(rows) > 1 and 2 * sum(1 for e in episodes.values() if e is not None) >= len(rows)
    rows.sort(key=lambda r: ((dates[r[0]] or (None, far))[1] if by_date else far,
                             (episodes[r[0]] if episodes[r[0]] is not None else 10**6) if by_episode else 0,
                             natural_key(r[1]), r[0]))
    titles: dict[str, int] = {}
    for _, path, title, _ in rows:
        t = (title or "").strip() or PurePosixPath(path or "").stem
        titles[t] = titles.get(t, 0) + 1
    series = series_parts({r[0]: PurePosixPath(r[1] or "").stem or (r[2] or "") for r in rows})
    shown = {k: f"{w}, {word} {n}" for k, (w, word, n) in series.items()}
    seen = Counter(shown.values())
    twice = {v for v, k in seen.items() if k > 1}
    out = []
    for pos, (doc_id, path, title, n) in enumerate(rows, start=1):
        t = (title or "").strip() or PurePosixPath(path or "").stem
        name = t if titles[t] == 1 else str(PurePosixPath(path or t).with_suffix(""))
        work, part = (series[doc_id][0], series[doc_id][2]) if doc_id in series else (None, None)
        if doc_id in shown and shown[doc_id] not in twice:
            name = shown[doc_id]
        out.append(Doc(doc_id, path or "", t, name, pos, int(n), (dates[doc_id] or (None,))[0], work, part,
                       episodes[doc_id] if by_episode else None))
    return out


def order_sentence(first: Doc, last: Doc) -> str:
    """How statements in corpus order run, as a sentence: "Each theme's statements follow the documents'
    dates, from “A” (2019-09) to “B” (2024-11)." when both ends carry a date, else "... follow the
    documents' order, from “A” to “B”." (a date the name already shows is not repeated)."""
    def named(d: Doc, dated: bool) -> str:
        shown = re.sub(r"[\W_]", "", d.date or "").lower() in re.sub(r"[\W_]", "", d.name).lower()
        return f"\u201c{d.name}\u201d" + (f" ({d.date})" if dated and not shown else "")

    dated = bool(first.date and last.date)
    return (f"Each theme's statements follow the documents' {'dates' if dated else 'order'}, from "
            f"{named(first, dated)} to {named(last, dated)}.")


def unit_sources(store, numbers: list[int], docs: list[Doc] | None = None) -> dict[int, dict]:
    """``unit number -> {"source", "doc_id", "document", "path", "unit", "of"}`` for cited text units.

    ``unit`` is the unit's 1-based position in its document and ``of`` the document's units; numbers
    the index does not hold are left out.
    """
    from slmgraph.query.answer import unit_numbers

    if not numbers:
        return {}
    by_id = {d.doc_id: d for d in (docs if docs is not None else corpus_documents(store))}
    want = set(numbers)
    num = {c: n for c, n in unit_numbers(store).items() if n in want}
    if not num:
        return {}
    q = ",".join("?" * len(num))
    ords = store.con.execute(f"""
        SELECT t.chunk_id, t.doc_id, (SELECT count(*) FROM text_units u WHERE u.doc_id = t.doc_id AND u.ord < t.ord)
        FROM text_units t WHERE t.chunk_id IN ({q})""", list(num)).fetchall()
    out, widened = {}, False
    for chunk, doc_id, before in ords:
        if doc_id not in by_id and not widened:  # a unit an unfinished update added: named all the same
            widened = True
            by_id.update((x.doc_id, x) for x in corpus_documents(store, built=False) if x.doc_id not in by_id)
        d = by_id.get(doc_id)
        if d is None:
            continue
        out[num[chunk]] = {"source": num[chunk], "doc_id": doc_id, "document": d.name, "path": d.path,
                           "unit": int(before) + 1, "of": d.n_units}
    return out


def _has_doc_ids(store) -> bool:
    return any(r[0] == "doc_ids" for r in store.con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'community_reports'").fetchall())


def community_documents(store, ids: list[int], docs: list[Doc] | None = None) -> dict[int, list[str]]:
    """``community_id -> [doc_id]`` in corpus order: the documents behind each community.

    Read from ``community_reports.doc_ids`` (a JSON list) where the index holds it; otherwise (an index
    built before that column) the documents of the text units that mention any member entity.
    """
    if not ids:
        return {}
    order = {d.doc_id: d.pos for d in (docs if docs is not None else corpus_documents(store))}
    q = ",".join("?" * len(ids))
    out: dict[int, list[str]] = {}
    if _has_doc_ids(store):
        for cid, raw in store.con.execute(f"SELECT community_id, doc_ids FROM community_reports "
                                          f"WHERE community_id IN ({q}) AND doc_ids IS NOT NULL", list(ids)).fetchall():
            try:
                got = json.loads(raw)
            except ValueError:
                continue
            if isinstance(got, list):
                out[cid] = [d for d in dict.fromkeys(map(str, got)) if d in order]
    missing = [i for i in ids if i not in out]
    if missing:
        q = ",".join("?" * len(missing))
        for cid, doc_id in store.con.execute(f"""
                SELECT DISTINCT m.community_id, t.doc_id FROM community_members m
                JOIN entity_text_units e USING (entity_id) JOIN text_units t USING (chunk_id)
                WHERE m.community_id IN ({q})""", missing).fetchall():
            out.setdefault(cid, []).append(doc_id)
    return {cid: sorted((d for d in v if d in order), key=order.get) for cid, v in out.items()}


def work_key(d: Doc) -> str:
    """The work a document belongs to: its series' work, else the document itself."""
    return "w:" + d.work.casefold() if d.work else "d:" + d.doc_id


def coverage(doc_ids: list[str], docs: list[Doc]) -> dict:
    """``{"documents", "of", "share", "first", "last"}`` of ``doc_ids`` (first/last: display names in corpus
    order; None when empty); when the documents are parts of at least two works (:func:`series_parts`), also
    ``"works"`` and ``"works_of"``: the works those documents are parts of, and the corpus's works."""
    by_id = {d.doc_id: d for d in docs}
    got = sorted((by_id[d] for d in set(doc_ids) if d in by_id), key=lambda d: d.pos)
    n = len(docs)
    out = {"documents": len(got), "of": n, "share": round(len(got) / n, 3) if n else 0.0,
           "first": got[0].name if got else None, "last": got[-1].name if got else None}
    works = {work_key(d) for d in docs}
    if any(d.work for d in docs) and 1 < len(works) < n:
        out["works"] = len({work_key(d) for d in got})
        out["works_of"] = len(works)
    return out


def reach(cov: dict) -> int:
    """What a coverage counts: its works when the corpus is parts of works, else its documents."""
    return cov.get("works", cov["documents"])


#: A theme in at least this share of a corpus's works is discussed corpus-wide (:func:`breadth_key`).
CORPUS_WIDE_SHARE = 0.5


def breadth_key(cov: dict) -> tuple[int, int, int]:
    """How widely a coverage says a theme is discussed, larger first: for parts of works, a theme in at least
    :data:`CORPUS_WIDE_SHARE` of the works comes before the others and, among those, the one discussed in more
    parts leads (in a series every episode touches its setting's words: how much of it discusses a theme tells
    its main themes apart); otherwise its works or documents (:func:`reach`), then its documents."""
    n = reach(cov)
    if "works" in cov and n >= CORPUS_WIDE_SHARE * cov["works_of"]:
        return (1, cov["documents"], n)
    return (0, n, cov["documents"])


def coverage_text(cov: dict) -> str:
    """``"in 14 of 41 documents, FY16 Q1–FY24 Q4"`` (one document: ``"in 1 of 41 documents, FY16 Q1"``); for
    parts of works ``"in 2 of 6 works (5 of 174 parts), A – B"``."""
    if not cov["documents"]:
        return f"in none of {cov.get('works_of', cov['of'])} {'works' if 'works' in cov else 'documents'}"
    span = cov["first"] if cov["first"] == cov["last"] else f"{cov['first']} \u2013 {cov['last']}"
    if "works" in cov:
        return f"in {cov['works']} of {cov['works_of']} works ({cov['documents']} of {cov['of']} parts), {span}"
    noun = "document" if cov["of"] == 1 else "documents"
    return f"in {cov['documents']} of {cov['of']} {noun}, {span}"


def cited_documents(store, citations: dict) -> dict:
    """The documents of an answer's citations (``Answer.cited_documents``).

    Returns:
        ``{"sources": {"12": {"doc_id", "document", "path", "unit", "of"}}, "reports": {"3": {"documents": [
        {"doc_id", "document", "path"}], "coverage": {...}}}}``; keys are the cited ids as strings (JSON).
    """
    docs = corpus_documents(store)
    by_id = {d.doc_id: d for d in docs}
    out: dict = {}
    sources = [i for i in citations.get("sources") or [] if isinstance(i, int)]
    if sources:
        out["sources"] = {str(n): {k: v for k, v in info.items() if k != "source"}
                          for n, info in unit_sources(store, sources, docs).items()}
    reports = [i for i in citations.get("reports") or [] if isinstance(i, int)]
    if reports:
        comm = community_documents(store, reports, docs)
        out["reports"] = {str(r): {"documents": [{"doc_id": d, "document": by_id[d].name, "path": by_id[d].path}
                                                 for d in comm.get(r, [])],
                                   "coverage": coverage(comm.get(r, []), docs)} for r in reports}
    return out


def source_label(info: dict) -> str:
    """``"minutes-2024-03, unit 2 of 3"``: a cited text unit as a reader finds it (a document of one unit: its
    name alone)."""
    return info["document"] if info["of"] == 1 else f"{info['document']}, unit {info['unit']} of {info['of']}"


def sources_legend(cited: dict) -> str:
    """Lines naming the document of every cited text unit and report (from :func:`cited_documents`), or ""."""
    lines = []
    src = cited.get("sources") or {}
    if src:
        lines.append("Documents cited:")
        lines += [f"- [{n}] {source_label(info)}" for n, info in src.items()]
    reps = cited.get("reports") or {}
    if reps:
        lines.append("Documents behind the cited reports:")
        lines += [f"- Report {r}: {coverage_text(info['coverage'])}" for r, info in reps.items()]
    return "\n".join(lines)


_CITE = re.compile(r"\[(?:Sources|Reports)\s*:[^\]]*\]")


def _line_points(text: str, cited: dict) -> list[dict]:
    """Points of an answer not built by theme: each line (a bullet, or a paragraph) that cites something,
    with the ids it cites and their documents."""
    from slmgraph.query.answer import _GROUP, KINDS, _ids

    src_docs = cited.get("sources") or {}
    rep_docs = cited.get("reports") or {}
    out = []
    for line in text.split("\n"):
        if line.startswith(("Sources:", "Documents cited:", "Documents behind")):
            continue
        got: dict[str, list[int]] = {}
        for m in re.finditer(r"\[([^\[\]]{1,400})\]", line):
            for g in _GROUP.finditer(m.group(1)):
                got.setdefault(KINDS[g.group(1).lower()], []).extend(i for i in _ids(g.group(2)) if i >= 0)
        if not got.get("sources") and not got.get("reports"):
            continue
        docs: dict[str, dict] = {}
        for n in got.get("sources", []):
            info = src_docs.get(str(n))
            if info:
                docs.setdefault(info["doc_id"], {"doc_id": info["doc_id"], "document": info["document"],
                                                 "path": info["path"]})
        for r in got.get("reports", []):
            for d in (rep_docs.get(str(r)) or {}).get("documents", []):
                docs.setdefault(d["doc_id"], d)
        body = _CITE.sub("", re.sub(r"^\s*[-*]\s+", "", line)).strip()
        out.append({"text": body, "sources": list(dict.fromkeys(got.get("sources", []))),
                    "reports": list(dict.fromkeys(got.get("reports", []))), "documents": list(docs.values())})
    return out


def attach_documents(store, ans) -> None:
    """Name the documents of ``ans``'s citations: fills ``ans.cited_documents``, ``ans.points`` (when the
    engine left them empty) and, unless the text names them already (``details["documents_named"]``),
    appends :func:`sources_legend` to ``ans.text``."""
    ans.cited_documents = cited_documents(store, ans.citations or {})
    if not ans.points:
        ans.points = _line_points(ans.text, ans.cited_documents)
    if not ans.details.get("documents_named"):
        legend = sources_legend(ans.cited_documents)
        if legend:
            ans.text = ans.text.rstrip() + "\n\n" + legend


def corpus_headings(store) -> frozenset:
    """The section titles of the index's text units (:func:`slmgraph.query.extractive.heading_keys`: Markdown
    headings and title lines, case-folded words), kept on the :class:`slmgraph.store.db.Store` object while its
    text units stay the same (their count and first and last chunk id)."""
    from slmgraph.query.extractive import heading_keys

    stamp = store.con.execute("SELECT count(*), min(chunk_id), max(chunk_id) FROM text_units").fetchone()
    got = getattr(store, "_section_titles", None)
    if got is None or got[0] != stamp:
        got = (stamp, heading_keys(t for (t,) in store.con.execute("SELECT text FROM text_units").fetchall()))
        try:
            store._section_titles = got
        except AttributeError:  # a store without instance attributes reads them again next time
            pass
    return got[1]


def no_prose_units(store) -> set[str]:
    """The chunk ids of the text units that hold no prose (:func:`slmgraph.text.shape.no_prose_passage`: a
    dumped table's or a log's text): no sentence of theirs can be quoted, so no search ranks them.

    Read from ``text_units.no_prose``, judged once at ingestion; a unit not judged yet (an index opened
    read-only before its migration, or a unit an older slmgraph added) is judged here from its text."""
    from slmgraph.text.shape import no_prose_passage

    if not store.has_column("text_units", "no_prose"):
        return {cid for cid, text in store.con.execute("SELECT chunk_id, text FROM text_units").fetchall()
                if no_prose_passage(text)}
    out = {cid for cid, in store.con.execute("SELECT chunk_id FROM text_units WHERE no_prose").fetchall()}
    return out | {cid for cid, text in store.con.execute(
        "SELECT chunk_id, text FROM text_units WHERE no_prose IS NULL").fetchall() if no_prose_passage(text)}
