"""The corpus statistics a global answer's labels and lead read (``corpus_terms``): counted once when the index
is built, equal to a direct count of the text units and noun phrases, kept right by an update that adds or
removes a document, filled once for an index made before the table, and read by a query instead of the text."""

import re

import duckdb
import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.query.theme_labels import _suffix_units, residual_idf
from slmgraph.query.theme_lead import corpus_word_share
from slmgraph.query.theme_model import ThemeIndex
from slmgraph.store.db import Store


def _settings():
    return Settings(min_community_size=2, extractor="nlp", reports="none")


def _index(folder, db):
    run_index(folder, db, _settings(), progress=False, model=FakeModel(), embedder_factory=FakeEmbedder,
              say=lambda m: None)


def _direct(db) -> dict:
    """The statistics counted here from the stored text and phrases, without slmgraph's counting code."""
    from slmgraph.names.forms import STOP

    con = duckdb.connect(str(db), read_only=True)
    try:
        units = con.execute("SELECT chunk_id, doc_id, text FROM text_units").fetchall()
        mentions = con.execute("SELECT DISTINCT chunk_id, norm FROM concept_mentions").fetchall()
    finally:
        con.close()
    word: dict[str, list[int]] = {}
    stem: dict[str, set] = {}
    for _, doc, text in units:
        toks = re.findall(r"[^\W_]+", text.casefold())
        keys = [t[:-1] if t.endswith("s") and len(t) > 3 else t for t in toks]
        for k in keys:
            word.setdefault(k, [0, 0])[1] += 1
        for k in set(keys):
            word[k][0] += 1
        for w in {w for w in re.findall(r"[^\W\d_]{3,}", text.casefold()) if w not in STOP}:
            s = w
            for end in ("ies", "es", "s", "ed", "ing"):
                if w.endswith(end) and len(w) - len(end) >= 4 and not w.endswith("ss"):
                    s = w[: -len(end)] + ("y" if end == "ies" else "")
                    break
            stem.setdefault(s, set()).add(doc)
    suffix: dict[str, set] = {}
    phrase: dict[str, set] = {}
    for c, norm in mentions:
        phrase.setdefault(norm, set()).add(c)
        ws = [t[:-1] if t.endswith("s") and len(t) > 3 else t for t in re.findall(r"[^\W_]+", norm.casefold())]
        for i in range(len(ws)):
            suffix.setdefault(" ".join(ws[i:]), set()).add(c)
    return {"word": {k: tuple(v) for k, v in word.items()}, "stem": {k: len(d) for k, d in stem.items()},
            "suffix": {k: len(c) for k, c in suffix.items()}, "phrase": {k: len(c) for k, c in phrase.items()},
            "units": len(units)}


def _stored(db) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT kind, term, units, occurrences FROM corpus_terms").fetchall()
    finally:
        con.close()
    return {"word": {t: (u, c) for k, t, u, c in rows if k == "word"},
            "stem": {t: u for k, t, u, _ in rows if k == "stem"},
            "suffix": {t: u for k, t, u, _ in rows if k == "suffix"},
            "phrase": {t: u for k, t, u, _ in rows if k == "phrase"},
            "units": next(u for k, t, u, _ in rows if k == "total" and t == "units")}


@pytest.fixture
def built(tmp_path, corpus):
    db = tmp_path / "idx.duckdb"
    _index(corpus, db)
    return corpus, db


def test_the_build_stores_the_statistics_of_a_direct_count(built):
    _, db = built
    stored, direct = _stored(db), _direct(db)
    assert direct["suffix"], "the corpus has noun phrases"
    assert stored == direct
    assert stored["word"]["acme"] == (2, 4) and stored["stem"]["rocket"] == 1


def test_a_query_reads_the_stored_statistics_not_the_text(built):
    _, db = built
    store = Store(db, read_only=True)
    try:
        ix = ThemeIndex(store)
        ridf, share, suffix = residual_idf(ix), dict(corpus_word_share(ix)), dict(_suffix_units(ix))
        phrases = dict(ix.phrase_units)
    finally:
        store.close()
    assert ridf and share and suffix and phrases
    # the text and the phrases changed behind the statistics' back (their row counts kept): a query that
    # counted them would now find no word, stem or phrase
    con = duckdb.connect(str(db))
    con.execute("UPDATE text_units SET text = ''")
    con.execute("UPDATE concept_mentions SET norm = 'zzz'")
    con.close()
    store = Store(db, read_only=True)
    try:
        ix = ThemeIndex(store)
        assert residual_idf(ix) == ridf
        assert corpus_word_share(ix) == share
        assert _suffix_units(ix) == suffix
        assert ix.phrase_units == phrases
    finally:
        store.close()
    # statistics another version of the count wrote are not read: the query counts the (now empty) text
    con = duckdb.connect(str(db))
    con.execute("UPDATE corpus_terms SET occurrences = occurrences + 1 WHERE kind = 'total' AND term = 'version'")
    con.close()
    store = Store(db, read_only=True)
    try:
        assert residual_idf(ThemeIndex(store)) == {}
    finally:
        store.close()


def test_an_update_that_adds_or_removes_a_document_changes_the_statistics(built):
    corpus, db = built
    before = _stored(db)
    assert "volcano" not in before["word"]
    (corpus / "delta.txt").write_text("Helen Park studied the volcano near Acme Corporation. The volcano erupted "
                                      "twice.\n", encoding="utf-8")
    _index(corpus, db)
    added = _stored(db)
    assert added == _direct(db)
    assert added["word"]["volcano"] == (1, 2) and added["word"]["acme"][1] == before["word"]["acme"][1] + 1
    (corpus / "gamma.txt").unlink()
    _index(corpus, db)
    removed = _stored(db)
    assert removed == _direct(db)
    assert removed["units"] < added["units"] and "interviewed" not in removed["word"]


def test_an_index_made_before_the_table_gets_it_once_and_reads_the_same(built):
    _, db = built
    want = _stored(db)
    store = Store(db, read_only=True)
    try:
        ridf = residual_idf(ThemeIndex(store))
    finally:
        store.close()
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE corpus_terms")
    con.execute("DELETE FROM migrations WHERE name = 'add_corpus_terms'")
    con.close()
    store = Store(db, read_only=True)  # a query on it as it is counts from the text
    try:
        assert residual_idf(ThemeIndex(store)) == ridf
    finally:
        store.close()
    Store(db).close()  # opened for writing: the schema step counts once
    assert _stored(db) == want
