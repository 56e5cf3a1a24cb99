"""What each community is about and where: its topic label and the documents behind it (report stage).

**Topic** (:func:`community_topics`): the community's most distinctive terms against the rest of the
corpus, by class-based TF-IDF as in BERTopic (Grootendorst 2022, "BERTopic: Neural topic modeling with
a class-based TF-IDF procedure", arXiv:2203.05794, eq. 1; ``bertopic.vectorizers.ClassTfidfTransformer``):
each text unit is the document of one class -- the community (of one level) that most of its
mentions belong to -- the documents of a class are joined, and a term's weight in class *c* is

    W(t, c) = tf(t, c) / |c|  *  log(1 + A / f(t))

where tf(t, c) is how many of the class's text units mention t, |c| the sum of its term counts,
A the mean of |c| over the classes and f(t) the term's count over all classes. The vocabulary is the graph's own
terms -- its names and noun-phrase concepts (:mod:`slmgraph.indexing.stages.concepts`), their mentions read from
``entity_text_units`` -- so a label is made of phrases, never of stop words or verbs. The label takes
the community's own members by weight first (members its class documents do not mention by their
number of text units), then the terms of its class documents that are no other community's member
(another community's member is that community's topic), skipping junk
(:func:`junk`: file names, stop words, one- and two-letter names, orders to an assistant, one-word
capitalised common words the corpus also writes in lower case) and terms whose words a chosen term
already holds ("council" after "council tax"), up to :data:`TOPIC_TERMS`; concepts make the label and
names only complement it (:func:`label_terms`).

**Coverage** (:attr:`Topic.doc_ids`, :func:`coverage_sentence`): the documents of the text units
that are the community's class documents (those most of whose mentions are its members'), or for a
community that owns none, of every text unit that mentions a member (its reach), in corpus order --
documents as added to the index, then by path (the order :data:`slmgraph.indexing.stages.graph.READING_ORDER` reads
descriptions in) -- with the first and last named by title
(``documents.title``: a leading file-name line, else the file's stem) and a date when the title holds
one (:func:`title_date`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from slmgraph.indexing.stages.concepts import concept_ids
from slmgraph.names.forms import STOP
from slmgraph.text.prose import addressed_to_assistant

#: Terms in a topic label.
TOPIC_TERMS = 3

#: Corpus order of documents: as added to the index, then by path (graph.READING_ORDER's document order).
DOCUMENT_ORDER = "ORDER BY added_at NULLS LAST, path NULLS LAST, doc_id"

_FILE_NAME = re.compile(r"(?i)\.(txt|md|json|csv|html?|pdf|docx?)$")


@dataclass
class Topic:
    """A community's topic and coverage.

    Attributes:
        terms: the label's terms, most distinctive first (names as written, concepts in lower case).
        doc_ids: the community's documents in corpus order (module docstring, "Coverage").
    """

    terms: list[str] = field(default_factory=list)
    doc_ids: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The terms joined by commas ("budget shortfall, library, council tax"); "" for none."""
        return ", ".join(self.terms)


def class_tfidf(counts) -> "np.ndarray | object":
    """BERTopic's class-based TF-IDF of a ``(classes, terms)`` count matrix (scipy sparse or numpy):
    the L1-normalised term frequency of each class times ``log(1 + A / f(t))`` (module docstring).
    Returns a matrix of the same shape (scipy CSR for sparse input). Raises nothing; an empty class
    or term has weight 0."""
    import scipy.sparse as sp

    m = sp.csr_matrix(counts, dtype=np.float64)
    f = np.asarray(m.sum(axis=0)).ravel()
    sizes = np.asarray(m.sum(axis=1)).ravel()
    avg = sizes.mean() if sizes.size else 0.0
    idf = np.log1p(np.divide(avg, f, out=np.zeros_like(f), where=f > 0))
    tf = sp.diags(np.divide(1.0, sizes, out=np.zeros_like(sizes), where=sizes > 0)) @ m
    return sp.csr_matrix(tf @ sp.diags(idf))


def junk(name: str, is_concept: bool, common: set[str] | frozenset = frozenset()) -> bool:
    """True for a term that makes no topic: a file name, a stop word, one or two characters, an order to
    an assistant (:func:`slmgraph.text.prose.addressed_to_assistant`), or a one-word name in ``common`` (words
    the corpus writes in lower case: "Momentum", "Stories" taken for names at a sentence start)."""
    n = name.strip()
    folded = n.casefold()
    words = re.findall(r"\w+", folded)
    if not words or len(n) <= 2 or _FILE_NAME.search(n) or folded in STOP or addressed_to_assistant(n):
        return True
    return not is_concept and len(words) == 1 and folded in common


#: A word glued from two (a lost space: "thatI'd", "costsThe"): a lower-case run then a capital, where the
#: run is a stop word or the rest is "I" with a contraction, or the term is a concept (concepts are lower case).
_GLUE = re.compile(r"([a-z]+)([A-Z][\w'\u2019]*)")


def glued(name: str, is_concept: bool = False) -> bool:
    """True when a word of ``name`` is two words run together by a lost space ("thatI'd"); a camel-case
    name ("DeepMind", "iPhone") is not, unless the term is a concept (concepts are lower case)."""
    for w in name.split():
        m = _GLUE.search(w)
        if m is None:
            continue
        head, tail = m.group(1), m.group(2)
        if (is_concept or (len(head) > 1 and head.casefold() in STOP) or re.match(r"I['\u2019]", tail)
                or "'" in w[:m.start(2)]):
            return True
    return False


def label_terms(ranked: list[tuple[str, bool]], common: set[str] | frozenset = frozenset(),
                n_terms: int = TOPIC_TERMS) -> list[str]:
    """The terms of a topic label from ``ranked`` ``(term, is_concept)``, most distinctive first.

    Concepts make the label and names complement it: up to ``n_terms`` concepts -- phrases of several
    words before one-word ones of the same rank half (a one-word concept is kept only among the first
    ``4 * n_terms`` concepts) -- then, where fewer than two concepts qualify, names (of several words
    first; a one-word name only when no concept qualifies). Junk (:func:`junk`), glued words
    (:func:`glued`) and terms whose words a chosen term already holds ("council" after "council tax")
    are skipped."""
    concepts, names = [], []
    for name, is_concept in ranked:
        if junk(name, is_concept, common) or glued(name, is_concept):
            continue
        (concepts if is_concept else names).append(name)
    head = concepts[: 4 * n_terms]
    multi = [c for c in head if len(c.split()) > 1]
    ordered = multi + [c for c in head if len(c.split()) == 1] + concepts[4 * n_terms:]
    terms: list[str] = []
    used: list[set[str]] = []

    def take(name: str) -> None:
        words = set(re.findall(r"\w+", name.casefold()))
        if len(terms) < n_terms and not any(words <= u or u <= words for u in used):
            terms.append(name)
            used.append(words)

    for c in ordered[: 4 * n_terms]:
        take(c)
    if len(terms) < 2:
        for nm in [x for x in names if len(x.split()) > 1] + ([x for x in names if len(x.split()) == 1]
                                                                if not terms else []):
            take(nm)
    return terms


def _shown(name: str) -> str:
    """A name as shown in a label: ALL-CAPS names of several words title-cased (transcript speakers)."""
    words = name.split()
    if len(words) > 1 and name.isupper():
        return " ".join(w.capitalize() if len(w) > 3 else w for w in words)
    return name


def community_topics(store, common: set[str] | frozenset = frozenset(), n_terms: int = TOPIC_TERMS
                     ) -> dict[int, Topic]:
    """``community_id -> Topic`` for every community of the index (module docstring).

    Args:
        store: a :class:`slmgraph.store.db.Store` (or DuckDB connection) with ``communities``,
            ``community_members``, ``entities``, ``entity_text_units``, ``text_units`` and ``documents``.
        common: words the corpus writes in lower case (:func:`slmgraph.indexing.stages.report_data.lowercase_words`); empty
            skips that junk test.
        n_terms: terms per label.
    """
    import scipy.sparse as sp

    con = getattr(store, "con", store)
    ents = {eid: name for eid, name in con.execute("SELECT entity_id, name FROM entities").fetchall()}
    if not ents:
        return {}
    concepts = concept_ids(con)
    term_ix = {eid: i for i, eid in enumerate(sorted(ents))}
    term_eid = sorted(ents)
    unit_doc = dict(con.execute("SELECT chunk_id, doc_id FROM text_units").fetchall())
    unit_ix = {u: i for i, u in enumerate(sorted(unit_doc))}
    eu = [(term_ix[e], unit_ix[u]) for e, u in con.execute("SELECT entity_id, chunk_id FROM entity_text_units")
          .fetchall() if e in term_ix and u in unit_ix]
    # unit x term incidence: which text units mention which term
    ut = sp.csr_matrix((np.ones(len(eu)), ([u for _, u in eu], [t for t, _ in eu])),
                       shape=(len(unit_ix), len(term_ix)))
    ut.data[:] = 1.0
    te = ut.T.tocsr()  # term -> its units
    df = np.diff(te.indptr)  # text units per term
    doc_rank = {d: i for i, (d,) in enumerate(con.execute(f"SELECT doc_id FROM documents {DOCUMENT_ORDER}").fetchall())}
    unit_ids = sorted(unit_ix, key=unit_ix.get)
    members: dict[int, list[int]] = {}
    for cid, eid in con.execute("SELECT community_id, entity_id FROM community_members ORDER BY 1, 2").fetchall():
        if eid in term_ix:
            members.setdefault(cid, []).append(eid)
    levels: dict[int, list[int]] = {}
    for cid, level in con.execute("SELECT community_id, level FROM communities ORDER BY community_id").fetchall():
        levels.setdefault(level, []).append(cid)
    out: dict[int, Topic] = {}
    for level, cids in sorted(levels.items()):
        # community x term membership, and community x unit incidence (the units of any member: its reach)
        mr, mc = [], []
        for r, cid in enumerate(cids):
            for eid in members.get(cid, []):
                mr.append(r)
                mc.append(term_ix[eid])
        ct = sp.csr_matrix((np.ones(len(mr)), (mr, mc)), shape=(len(cids), len(term_ix)))
        level_members = set(mc)
        reach = (ct @ te).tocsr()  # community x unit: mentions of its members in the unit
        # Each text unit is one class's document, the community most of its mentions belong to (BERTopic
        # gives each document one class); ties go to the first community.
        owner = np.asarray(reach.argmax(axis=0)).ravel()
        mentioned = np.asarray(reach.sum(axis=0)).ravel() > 0
        uix = np.flatnonzero(mentioned)
        cu = sp.csr_matrix((np.ones(len(uix)), (owner[uix], uix)), shape=(len(cids), len(unit_ix)))
        weights = class_tfidf(cu @ ut)
        for r, cid in enumerate(cids):
            row = weights.getrow(r)
            score = dict(zip(row.indices.tolist(), row.data.tolist()))
            mem = members.get(cid, [])
            # members by weight, then (those its class documents do not mention) by their text units
            own = sorted((term_ix[e] for e in mem), key=lambda t: (-score.get(t, 0.0), -df[t], t))
            # another community's member is that community's topic, not this one's
            rest = sorted((t for t in score if t not in level_members and score[t] > 0), key=lambda t: (-score[t], t))
            terms = label_terms([(_shown(str(ents[term_eid[t]])), term_eid[t] in concepts) for t in own + rest],
                                common, n_terms)
            units = cu.indices[cu.indptr[r]:cu.indptr[r + 1]]  # the units it owns, else those it reaches
            if not len(units):
                units = reach.indices[reach.indptr[r]:reach.indptr[r + 1]]
            docs = {unit_doc[unit_ids[u]] for u in units.tolist()}
            out[cid] = Topic(terms, sorted(docs, key=lambda d: (doc_rank.get(d, len(doc_rank)), d)))
    return out


#: A date in a title: ISO (2024-03-01, 2024-03), day month year, month year, a quarter (Q3 2021, Q3
#: FY2021), a fiscal year (FY16, FY2016), a year (1900-2099).
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE = re.compile(
    rf"(?i)\b(\d{{4}}-\d{{2}}(?:-\d{{2}})?|\d{{1,2}}\s+{_MONTHS}\s+\d{{4}}|{_MONTHS}\s+\d{{1,2}},?\s+\d{{4}}|"
    rf"{_MONTHS}\s+\d{{4}}|q[1-4]\s*(?:fy)?\s*'?\d{{2,4}}|fy\s*'?\d{{2,4}}(?:\s*q[1-4])?|(?:19|20)\d{{2}})\b")


def title_date(title: str | None) -> str | None:
    """The first date a document title holds (see :data:`_DATE`: "Q3 2021", "FY16", "2024-03-01",
    "March 2019", a year), as written; None when it holds none."""
    m = _DATE.search(title or "")
    return m.group(1) if m else None


def corpus_documents(store) -> list[tuple[str, str]]:
    """``[(doc_id, title)]`` of every document in corpus order (:data:`DOCUMENT_ORDER`); the title is
    ``documents.title``, else the path."""
    con = getattr(store, "con", store)
    return [(d, t or p or d) for d, t, p in con.execute(f"SELECT doc_id, title, path FROM documents {DOCUMENT_ORDER}")
            .fetchall()]


def coverage_sentence(doc_ids: list[str], titles: dict[str, str], n_documents: int) -> str:
    """Where a community is, as a phrase: "in 14 of 41 documents, from “A” to “B” (2016 to 2024)",
    "in 1 of 41 documents, “A”", "in 5 of 41 documents, all titled “A”", "in all 3 documents, from ...".
    ``titles`` maps doc_id -> title (:func:`corpus_documents`); ``doc_ids`` are in corpus order. The
    dates are the titles' own (:func:`title_date`), shown when both ends hold one. "" for no documents."""
    if not doc_ids:
        return ""
    n = len(doc_ids)
    where = f"in all {n} documents" if n == n_documents and n > 1 else \
        f"in {n} of {n_documents} document{'s' if n_documents != 1 else ''}"
    first, last = titles.get(doc_ids[0], doc_ids[0]), titles.get(doc_ids[-1], doc_ids[-1])
    if n == 1:
        return f"{where}, \u201c{first}\u201d"
    if first == last:
        return f"{where}, all titled \u201c{first}\u201d"
    span = f"{where}, from \u201c{first}\u201d to \u201c{last}\u201d"
    d0, d1 = title_date(first), title_date(last)
    if d0 and d1 and d0 != d1:
        span += f" ({d0} to {d1})"
    return span
