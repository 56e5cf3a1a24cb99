"""A themed global answer written out: the overview paragraph, each theme's template sentence and
statements with citations that name documents, the documents cited, and the structured points.
"""


from __future__ import annotations

import re

from slmgraph.query.documents import order_sentence, reach
from slmgraph.query.theme_ident import corpus_identity
from slmgraph.query.theme_lead import answer_lead, theme_common, timeline_lead
from slmgraph.query.theme_model import KEY_CONCEPTS, Statement, Theme, ThemeIndex


def _join(items: list[str], sep: str = ", ", last: str = " and ") -> str:
    """"A", "A and B", "A, B and C" (``sep`` between items, ``last`` before the last)."""
    items = [i for i in items if i]
    return items[0] if len(items) == 1 else sep.join(items[:-1]) + last + items[-1] if items else ""


def _join_topics(items: list[str]) -> str:
    """Like :func:`_join`, but with semicolons when a topic holds a comma or an "and" of its own, so a reader
    sees where each ends."""
    return _join(items, "; ", "; and ") if any("," in i or " and " in i for i in items) else _join(items)


def _quoted(topic: str) -> str:
    return f"\u201c{topic}\u201d" if "," in topic else topic


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


#: Where a passage lies in its document, by fifths.
_FIFTHS = ("first fifth", "second fifth", "middle fifth", "fourth fifth", "last fifth")


#: The least sentences a group needs before the answer says where in a conversation it falls.
PLACE_LEAST = 3


def no_course(ix: ThemeIndex, doc_ids) -> bool:
    """True when every document of ``doc_ids`` is a work of one text unit: nothing in it falls earlier or later."""
    return all(ix.doc_by_id[d].n_units == 1 and ix.doc_by_id[d].work is None for d in doc_ids)


def placed(groups: list[tuple[str, list[float]]]) -> list[tuple[str, float]]:
    """``[(label, median point)]`` of the groups of at least :data:`PLACE_LEAST` points (each how far into its work a
    sentence is, 0 its opening to 1 its end; :meth:`ThemeIndex.point_in_work`), in the given order."""
    import statistics

    return [(label, statistics.median(pts)) for label, pts in groups if len(pts) >= PLACE_LEAST]


def place_text(found: list[tuple[str, float]]) -> str:
    """"childhood and family at 15 %, school and university at 14 %": :func:`placed`'s medians as the answer writes
    them."""
    return _join([f"{label} at {round(100 * m)} %" for label, m in found])


def in_order(found: list[tuple[str, float]], slack: float = 0.05) -> bool:
    """True when :func:`placed`'s medians rise with the given order (each at least the one before less ``slack``)
    and the last lies clearly after the first (by more than ``slack``)."""
    ms = [m for _, m in found]
    return len(ms) >= 3 and all(b >= a - slack for a, b in zip(ms, ms[1:])) and ms[-1] - ms[0] > slack


def passage_span(cov: dict) -> str:
    """Where in its document a theme's passages lie (``cov`` with ``from``, ``to``, ``passages_of``): "from its
    first fifth to its last fifth", "from its opening to its end", "all in its middle fifth"."""
    n, a, b = cov["passages_of"], cov["from"], cov["to"]

    def fifth(u: int) -> str:
        return _FIFTHS[min(4, (u - 1) * 5 // max(1, n))]

    if fifth(a) == fifth(b) and not (a == 1 and b == n):
        return f"all in its {fifth(a)}"
    return f"from its {'opening' if a == 1 else fifth(a)} to its {'end' if b == n else fifth(b)}"


def passage_reach(cov: dict, share: bool = True, named: bool = True) -> str:
    """A theme's reach in the one document it is discussed in (:func:`slmgraph.query.themes.cover_passages`):
    "23 of 97 passages of “carol” (24 %), from its first fifth to its end" (``named``, in a corpus of more
    documents: the document named; ``share``: with the percentage)."""
    p, n = cov["passages"], cov["passages_of"]
    head = f"{p} of {n} passage{'s' if n != 1 else ''}"
    if named and cov.get("of", 1) > 1 and cov.get("first"):
        head += f" of \u201c{cov['first']}\u201d"
    if share and 1 < p < n:
        head += f" ({round(100 * p / n)} %)"
    return f"{head}, {passage_span(cov)}"


def reach_text(cov: dict, share: bool = True, nested: bool = True) -> str:
    """"14 of 41 documents (34 %)" (``share``: with the percentage), "all 8 documents", "1 of 41 documents";
    for parts of works (:func:`slmgraph.query.documents.coverage`'s ``works``) the works with the parts in
    brackets: "2 of 6 works (33 %; 5 of 174 parts)", "1 of 6 works (3 of 174 parts)"; not ``nested`` (the text
    goes in brackets itself): "1 of 6 works, 3 of 174 parts"; a theme discussed in one long document by its
    passages (:func:`passage_reach`): "23 of 97 passages of “carol” (24 %), from its first fifth to its end"."""
    if "passages" in cov:
        return passage_reach(cov, share)
    if "works" in cov:
        n, of, noun = cov["works"], cov["works_of"], "work"
    else:
        n, of, noun = cov["documents"], cov["of"], "document"
    parts = f"{cov['documents']} of {cov['of']} parts" if noun == "work" else ""
    if n == of:
        head = f"all {n} {noun}s" if n > 1 else f"the corpus's one {noun}"
        if not parts or cov["documents"] == cov["of"]:
            return head
        return f"{head} ({parts})" if nested else f"{head}, {parts}"
    # From the counts, not the rounded share: 5 of 11 is 45 %, where 0.455 would print 46.
    pct = f"{round(100 * n / of)} %" if share and of > 1 and n > 1 else ""
    inner = "; ".join(x for x in (pct, parts) if x)
    head = f"{n} of {of} {noun}{'s' if of != 1 else ''}"
    return head + ((f" ({inner})" if nested else f", {inner}") if inner else "")


def _short_reach(cov: dict) -> str:
    """A later item's reach in a list that stated the totals once: "4", or for parts of works "2 works, 5 parts"
    (the parts tell apart themes that every work discusses), or for one long document's passages "12, from its
    second fifth to its end"."""
    if "passages" in cov:
        return f"{cov['passages']}, {passage_span(cov)}"
    if "works" not in cov:
        return str(cov["documents"])
    w, p = cov["works"], cov["documents"]
    return f"{w} work{'s' if w != 1 else ''}, {p} part{'s' if p != 1 else ''}"


def _span(t: Theme, ix: ThemeIndex) -> str:
    """The dates the titles of the first and last documents its coverage counts hold (", dated 2016 to 2024"),
    else "" (also when those documents are not the ones counted: a range never comes from other documents)."""
    from slmgraph.indexing.stages.topics import title_date

    # the documents ``coverage`` counts: the community's (or, without them, the theme's) and those quoted
    # (:func:`slmgraph.query.themes.cover_quoted`)
    counted = set(t.community_docs or t.doc_ids) | {s.doc_id for s in t.statements}
    docs = sorted((ix.doc_by_id[d] for d in counted if d in ix.doc_by_id), key=lambda d: d.pos)
    if len(docs) < 2 or len(docs) != t.coverage.get("documents"):
        return ""
    first, last = docs[0], docs[-1]
    d0 = title_date(first.title) if first else None
    d1 = title_date(last.title) if last else None
    return f", dated {d0} to {d1}" if d0 and d1 and d0 != d1 else ""


def template_opening(t: Theme, ix: ThemeIndex | None = None, question: str = "") -> str:
    """The theme's sentences, built from the data: first what its statements have in common (who says them
    and the words they share, :func:`slmgraph.query.theme_lead.theme_common`), then what it is (its key concepts and the names most tied
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
    common = theme_common(t, ix, question) if ix is not None else ""
    if common:
        text = f"{common} {text}"
    if ix is not None and t.statements and len(ix.docs) > 1:  # a one-document corpus: every quote is from it
        docs = sorted({s.doc_id for s in t.statements}, key=lambda d: ix.doc_by_id[d].pos)
        quoted = [ix.doc_by_id[d].name for d in docs]
        # the first sentence named the speakers already
        who = [] if common and all(s.speaker for s in t.statements) else list(
            dict.fromkeys(s.speaker for s in t.statements if s.speaker))
        text += (f" Quoted below from {_join([chr(0x201c) + q + chr(0x201d) for q in quoted])}"
                 f"{f' (speakers: {_join(who)})' if who else ''}.")
    return text


def overview(themes: list[Theme], ix: ThemeIndex, *, wide: bool = False, temporal: bool = False,
             aspect: str = "") -> str:
    """The answer's opening paragraph, built from the data: for a corpus-wide question the main themes
    with how many documents discuss each ("Across the 8 documents, the main themes are flood defence (in
    6 of 8 documents), the budget shortfall (4) and ..."); for a focused question the themes that bear
    on it, the most relevant first, with their reach, and which of them the corpus discusses most widely;
    for a question about change over time, the span of documents the statements follow; a corpus-wide answer
    opens on what the corpus is (:func:`slmgraph.query.theme_ident.corpus_identity`); for a corpus-wide
    question asking for one side of it (``aspect``: "challenges"), the main themes whose statements say it most
    first."""
    n_docs = len(ix.docs)
    if not themes:
        return ""
    # a corpus-wide question is answered by what the corpus is, then the list of its main themes
    lead = corpus_identity(ix) if wide else answer_lead(themes, ix)
    text = _overview(themes, ix, n_docs, wide=wide, temporal=temporal, aspect=aspect)
    if temporal:
        text += (" " + timeline_lead(themes, ix)).rstrip()
    return f"{lead} {text}" if lead else text


def _overview(themes: list[Theme], ix: ThemeIndex, n_docs: int, *, wide: bool, temporal: bool,
              aspect: str = "") -> str:
    # the themes all come from one long document: their reach is told by its passages, which it names once
    one = themes[0].coverage.get("first") if all(
        "passages" in t.coverage and t.coverage.get("first") == themes[0].coverage.get("first") for t in themes) else None
    items = [f"{t.topic} (in {passage_reach(t.coverage, share=False, named=False) if one else reach_text(t.coverage, share=False, nested=False)})"
             if i == 0 else f"{t.topic} (in {_short_reach(t.coverage)})" for i, t in enumerate(themes)] \
        if n_docs > 1 or one else [t.topic for t in themes]
    if wide:
        n_works = themes[0].coverage.get("works_of")
        where = (f"Across the {n_works} works ({n_docs} parts)" if n_works else
                 f"Across the {n_docs} documents" if n_docs != 1 else "In its one document")
        order = f"those whose statements speak most of {aspect} first" if aspect else "the most widely discussed first"
        subject = f"the corpus's main theme{'s' if len(themes) != 1 else ''}"
        if one and n_docs > 1:
            subject += f", all from \u201c{one}\u201d ({themes[0].coverage['passages_of']} passages),"
        text = (f"{where}, {subject}"
                f"{' are' if len(themes) != 1 else ' is'} {_join_topics(items)}, {order}.")
        if one and not aspect and len(themes) > 1 and themes[0].coverage["passages"] > themes[-1].coverage["passages"]:
            text += (f" {_cap(_quoted(themes[0].topic))} runs through the most passages; {_quoted(themes[-1].topic)} is"
                     f" the narrowest of these (in {passage_reach(themes[-1].coverage, False, False)}).")
            return text
        if aspect and len(themes) > 1:  # listed by the side asked for: the widest and narrowest are named apart
            widest = max(themes, key=lambda t: (reach(t.coverage), -themes.index(t)))
            narrowest = min(themes, key=lambda t: (reach(t.coverage), -themes.index(t)))
            if reach(widest.coverage) > reach(narrowest.coverage):
                text += (f" {_cap(_quoted(widest.topic))} runs through the most documents; {_quoted(narrowest.topic)} is"
                         f" the narrowest of these (in {reach_text(narrowest.coverage, False, False)}).")
        elif len(themes) > 1 and reach(themes[0].coverage) > reach(themes[-1].coverage):
            text += (f" {_cap(_quoted(themes[0].topic))} runs through the most documents; {_quoted(themes[-1].topic)} is the"
                     f" narrowest of these (in {reach_text(themes[-1].coverage, False, False)}).")
        return text
    k = len(themes)
    text = (f"{k} themes of the corpus bear on this question, the most relevant first: {_join_topics(items)}." if k > 1 else
            f"One theme of the corpus bears on this question: {items[0]}.")
    if k > 1:
        widest = max(themes, key=lambda t: (reach(t.coverage), t.coverage["documents"], t.coverage.get("passages", 0),
                                            -themes.index(t)))
        text += (f" Of these, {_quoted(widest.topic)} is the most widely discussed"
                 f" (in {reach_text(widest.coverage, False, False)}).")
    said = [(list(dict.fromkeys(s.speaker for s in t.statements if s.speaker)), t.topic) for t in themes]
    if any(who for who, _ in said):  # a transcript: who speaks to the question, theme by theme
        text += " Speakers quoted: " + "; ".join(f"{_join(who)} on {_quoted(topic)}" for who, topic in said if who) + "."
    if temporal:
        docs = sorted({s.doc_id for t in themes for s in t.statements}, key=lambda d: ix.doc_by_id[d].pos)
        if len(docs) > 1:
            text += " " + order_sentence(ix.doc_by_id[docs[0]], ix.doc_by_id[docs[-1]])
        grouped = [t for t in themes if t.stretches]
        if grouped:  # a timeline over more documents than it has points: what each point stands for
            n, k = grouped[0].followed, grouped[0].stretches
            size = f"{n // k}" if n % k == 0 else f"{n // k} or {n // k + 1}"
            noun = "works" if any(d.work for d in ix.docs) else "documents"
            text += (f" {n} {noun} speak to the question; the statements are the strongest of each of {k}"
                     f" stretches of {size} consecutive {noun}.")
    return text


#: A sentence that opens on its speaker's label ("KEVIN SCOTT: ...", "Priya Nair: ...").
_LABELLED = re.compile(r"^[A-Z][\w .'/-]{0,40}:\s")


def statement_line(st: Statement, ix: ThemeIndex) -> str:
    """``- *document, unit 2 of 5*: Speaker: sentence [Sources: 12]`` (a document of one unit: no position; the
    speaker where the transcript names one and the sentence does not open on it: a host's words are never taken for
    a guest's)."""
    doc = ix.doc_by_id[st.doc_id].name
    where = doc if st.of == 1 else f"{doc}, unit {st.unit} of {st.of}"
    text = st.text if not st.speaker or _LABELLED.match(st.text) else f"{st.speaker}: {st.text}"
    return f"- *{where}*: {text} [Sources: {st.source}]"


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
                  scope: str = "", aspect: str = "") -> str:
    """The answer text: the overview paragraph (:func:`overview`), one section per theme (heading, the
    theme's sentences, its statements), the documents cited, and the sources line."""
    parts = [overview(themes, ix, wide=wide, temporal=temporal, aspect=aspect)]
    for i, t in enumerate(themes, start=1):
        lines = [f"### {i}. {t.topic} [Reports: {', '.join(map(str, t.reports or [t.report]))}]",
                 t.opening or template_opening(t, ix)]
        lines += [statement_line(st, ix) for st in t.statements]
        parts.append("\n".join(lines))
    cited = documents_cited(themes, ix)
    if cited:
        parts.append(cited)
    reports = list(dict.fromkeys(r for t in themes for r in (t.reports or [t.report])))
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
                    "coverage": t.coverage, "reports": [r for r in (t.reports or [t.report]) if r is not None],
                    "sources": list(dict.fromkeys(s.source for s in t.statements)),
                    "documents": [{"doc_id": d, "document": ix.doc_by_id[d].name, "path": ix.doc_by_id[d].path}
                                  for d in docs]})
    return out
