"""Word and phrase statistics of the whole corpus, counted once when an index is built (table ``corpus_terms``)
so that a query reads them rather than scanning every text unit.

Rows of ``corpus_terms`` by ``kind``:

* ``word``: a word key (:func:`word_key` of each word :data:`WORD` finds in a text unit, case-folded), ``units``
  the text units holding it, ``occurrences`` its occurrences in them -- residual IDF
  (:func:`slmgraph.query.theme_labels.residual_idf`) reads these;
* ``stem``: a word stem (:func:`word_stem` of each content word, :func:`slmgraph.names.forms.content_words`),
  ``units`` the documents whose text units hold it -- the corpus word share (:func:`slmgraph.query.theme_lead.corpus_word_share`) reads these;
* ``suffix``: a trailing sub-phrase of a noun phrase's key (``concept_mentions.norm`` through :func:`phrase_key`:
  "admired tech hero" gives "admired tech hero", "tech hero" and "hero"), ``units`` the text units holding a
  phrase that ends in it;
* ``phrase``: a noun phrase's key as stored (``concept_mentions.norm``), ``units`` the text units holding it;
* ``total``: ``units`` (text units counted), ``mentions`` (``concept_mentions`` rows counted) and ``version``
  (:data:`VERSION`) in ``occurrences``: a reader compares them with the live tables and its own version and
  counts afresh when they differ (an index an older slmgraph updated, or one whose update is under way).

The tokenisation is the one the query side used when it scanned the text, so the figures are the same.
"""

from __future__ import annotations

import re

import duckdb

from slmgraph.names.forms import content_words
from slmgraph.store.bulk import insert_columns

#: What the rows count: a reader takes stored rows of another version for none (and counts afresh).
VERSION = 1
#: A word: a run of letters or digits.
WORD = re.compile(r"[^\W_]+")

def word_stem(word: str) -> str:
    """A crude English stem: a plural's or a participle's ending cut ("passengers" -> "passenger",
    "vessels" -> "vessel", "funded" -> "fund")."""
    w = word.casefold()
    for end in ("ies", "es", "s", "ed", "ing"):
        if w.endswith(end) and len(w) - len(end) >= 4 and not w.endswith("ss"):
            return w[: -len(end)] + ("y" if end == "ies" else "")
    return w


def phrase_key(surface: str) -> str:
    """A phrase's words case-folded, a final "s" dropped ("Computer scientists" and "computer scientist" match)."""
    return " ".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in WORD.findall(surface.casefold()))


def count_terms(units, mentions, kinds=("word", "stem")) -> dict[str, dict[str, tuple[int, int]]]:
    """``kind -> term -> (units, occurrences)`` (kinds ``word``, ``stem``, ``suffix``, ``phrase``, ``total`` as
    the module says) of ``units`` (``(chunk_id, doc_id, text)`` rows) and ``mentions`` (``(chunk_id, norm)`` rows
    of ``concept_mentions``, repeats allowed); of ``kinds`` only (of ``word`` and ``stem``; the others always)."""
    words: dict[str, list[int]] = {}
    stems: dict[str, set] = {}
    keys: dict[str, str] = {}
    n = 0
    for _chunk, doc_id, text in units:
        text = str(text or "")
        n += 1
        seen: set[str] = set()
        for w in WORD.findall(text.casefold()) if "word" in kinds else ():
            k = keys.get(w)
            if k is None:
                k = keys[w] = phrase_key(w)
            got = words.get(k)
            if got is None:
                got = words[k] = [0, 0]
            got[1] += 1
            if k not in seen:
                seen.add(k)
                got[0] += 1
        for w in set(content_words(text)) if "stem" in kinds else ():
            stems.setdefault(word_stem(w), set()).add(doc_id)
    suffix: dict[str, set] = {}
    phrase: dict[str, set] = {}
    n_mentions = 0
    for chunk, norm in mentions:
        n_mentions += 1
        phrase.setdefault(norm, set()).add(chunk)
        ws = phrase_key(str(norm)).split()
        for i in range(len(ws)):
            suffix.setdefault(" ".join(ws[i:]), set()).add(chunk)
    return {"word": {k: (u, c) for k, (u, c) in words.items()},
            "stem": {k: (len(d), 0) for k, d in stems.items()},
            "suffix": {k: (len(c), 0) for k, c in suffix.items()},
            "phrase": {k: (len(c), 0) for k, c in phrase.items() if k is not None},
            "total": {"units": (n, n), "mentions": (n_mentions, n_mentions), "version": (0, VERSION)}}


def write_corpus_stats(con) -> int:
    """Count the corpus's terms (:func:`count_terms`) from the ``text_units`` and ``concept_mentions`` tables
    ``con`` reads and replace the ``corpus_terms`` rows with them, inside the caller's transaction; returns the
    rows written."""
    units = con.execute("SELECT chunk_id, doc_id, text FROM text_units").fetchall()
    try:
        mentions = con.execute("SELECT chunk_id, norm FROM concept_mentions").fetchall()
    except duckdb.CatalogException:  # an index older than noun phrases
        mentions = []
    counted = count_terms(units, mentions)
    cols: dict[str, list] = {"kind": [], "term": [], "units": [], "occurrences": []}
    for kind, terms in counted.items():
        for term, (u, c) in terms.items():
            cols["kind"].append(kind)
            cols["term"].append(term)
            cols["units"].append(u)
            cols["occurrences"].append(c)
    con.execute("DELETE FROM corpus_terms")
    insert_columns(con, "corpus_terms", cols)
    return len(cols["kind"])


def read_terms(con, kind: str) -> dict[str, tuple[int, int]] | None:
    """``term -> (units, occurrences)`` of the stored ``corpus_terms`` rows of ``kind``, or None when the index
    holds none that match its live tables (no table: an index made before it, opened read-only; totals that
    differ from the live ``text_units`` and ``concept_mentions`` counts, or another :data:`VERSION`): the
    caller counts afresh."""
    try:
        totals = dict(con.execute("SELECT term, occurrences FROM corpus_terms WHERE kind = 'total'").fetchall())
        if not totals or totals.get("version") != VERSION or totals.get("units") != con.execute("SELECT count(*) FROM text_units").fetchone()[0] \
                or totals.get("mentions") != con.execute("SELECT count(*) FROM concept_mentions").fetchone()[0]:
            return None
        return {t: (u, c) for t, u, c in con.execute(
            "SELECT term, units, occurrences FROM corpus_terms WHERE kind = ?", [kind]).fetchall()}
    except duckdb.Error:
        return None
