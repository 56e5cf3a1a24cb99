"""An update interrupted during extraction keeps an edited document's old text units (their text, records and
vectors) until the new version's are extracted, so a query before the re-run still finds its text; the
re-run leaves one version."""

import pytest
from conftest import FakeEmbedder, FakeModel

import slmgraph
import slmgraph.indexing.pipeline as pipeline
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.query.documents import corpus_documents
from slmgraph.store.db import Store


def _index(folder, db):
    run_index(folder, db, Settings(extract_mode="json", min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)


def _alpha(db):
    store = Store(db, read_only=True)
    rows = store.con.execute(
        "SELECT d.doc_id, t.chunk_id, t.text, (SELECT count(*) FROM entity_mentions m WHERE m.chunk_id = t.chunk_id), "
        "(SELECT count(*) FROM embeddings e WHERE e.kind = 'text_unit' AND e.item_id = t.chunk_id) "
        "FROM documents d JOIN text_units t USING (doc_id) WHERE d.path = 'alpha.txt' ORDER BY d.doc_id, t.ord"
    ).fetchall()
    store.close()
    return rows


def test_an_edited_documents_old_text_stays_until_its_new_version_is_extracted(tmp_path, corpus, monkeypatch):
    db = tmp_path / "ix.duckdb"
    _index(corpus, db)
    before = _alpha(db)
    assert before and all(n_mentions and n_vectors for *_, n_mentions, n_vectors in before)
    old = (corpus / "alpha.txt").read_text(encoding="utf-8")
    (corpus / "alpha.txt").write_text("Zoe Quinn opened the archive in Lyon.\n\n" + old, encoding="utf-8")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(pipeline, "run_extraction", interrupted)
        with pytest.raises(KeyboardInterrupt):
            _index(corpus, db)
    during = _alpha(db)
    # The old version's units are all there with their mentions and vectors, beside the new version's.
    assert set(before) <= set(during)
    with slmgraph.open(db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        assert ix.interrupted
        docs = corpus_documents(ix.store)
        assert len(docs) == 3 and sum(d.path == "alpha.txt" for d in docs) == 1  # counted once, as built
        for method in ("basic", "local"):
            ans = ix.query("Who founded Acme Corporation?", method=method)
            assert "Alice Smith founded Acme Corporation" in ans.text, (method, ans.text)

    _index(corpus, db)
    after = _alpha(db)
    assert len({doc_id for doc_id, *_ in after}) == 1 and after[0][0] != before[0][0]
    assert "Zoe Quinn" in after[0][2] and all(n_vectors for *_, n_vectors in after)
    store = Store(db, read_only=True)
    assert store.con.execute("SELECT count(*) FROM documents WHERE path = 'alpha.txt'").fetchone()[0] == 1
    store.close()


def test_an_update_interrupted_after_extraction_keeps_every_unit_the_last_build_cites(tmp_path, corpus, monkeypatch):
    db = tmp_path / "ix.duckdb"
    _index(corpus, db)
    before = _alpha(db)
    old = (corpus / "alpha.txt").read_text(encoding="utf-8")
    (corpus / "alpha.txt").write_text("Zoe Quinn opened the archive in Lyon.\n\n" + old, encoding="utf-8")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(pipeline, "build_graph", interrupted)  # every text unit extracted, the graph not yet built
        with pytest.raises(KeyboardInterrupt):
            _index(corpus, db)
    assert set(before) <= set(_alpha(db))
    store = Store(db, read_only=True)
    cited = store.con.execute("SELECT count(*) FROM entity_text_units e WHERE NOT EXISTS "
                              "(SELECT 1 FROM text_units t WHERE t.chunk_id = e.chunk_id)").fetchone()[0]
    store.close()
    assert cited == 0  # the last complete build's graph cites no unit that is gone
    with slmgraph.open(db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        assert ix.interrupted
        for method in ("basic", "local"):
            ans = ix.query("Who founded Acme Corporation?", method=method)
            assert "Alice Smith founded Acme Corporation" in ans.text, (method, ans.text)

    _index(corpus, db)
    after = _alpha(db)
    assert len({doc_id for doc_id, *_ in after}) == 1 and "Zoe Quinn" in after[0][2]
    store = Store(db, read_only=True)
    assert store.con.execute("SELECT count(*) FROM documents WHERE path = 'alpha.txt'").fetchone()[0] == 1
    assert store.con.execute("SELECT count(*) FROM entity_text_units e WHERE NOT EXISTS "
                             "(SELECT 1 FROM text_units t WHERE t.chunk_id = e.chunk_id)").fetchone()[0] == 0
    assert "Zoe Quinn" in {n for (n,) in store.con.execute("SELECT name FROM entities").fetchall()}
    store.close()


def test_stats_count_an_edited_file_once_while_its_update_is_unfinished(tmp_path, corpus, monkeypatch):
    import shutil

    from slmgraph.indexing.stages.ingest import RETIRING
    from slmgraph.tools.stats import collect, finished_counts

    db = tmp_path / "ix.duckdb"
    _index(corpus, db)
    old = (corpus / "alpha.txt").read_text(encoding="utf-8")
    (corpus / "alpha.txt").write_text(old + "\nZoe Quinn opened the archive in Lyon.\n", encoding="utf-8")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(pipeline, "run_extraction", interrupted)
        with pytest.raises(KeyboardInterrupt):
            _index(corpus, db)
    # The same state killed inside ingest: both versions' rows held, the old one not yet named as retiring.
    early = tmp_path / "early.duckdb"
    shutil.copy(db, early)
    store = Store(early)
    store.set_meta(RETIRING, "")
    store.close()
    during = {}
    for path in (db, early):
        store = Store(path, read_only=True)
        assert store.get_meta("complete") != "1" and store.count("documents") == 4  # alpha.txt twice
        during[path] = (collect(store)["tables"]["documents"], finished_counts(store))
        store.close()

    _index(corpus, db)
    store = Store(db, read_only=True)
    finished = (store.count("documents"), store.count("text_units"))
    assert store.get_meta("complete") == "1" and finished[0] == 3 and finished_counts(store) == finished
    store.close()
    assert during[db] == during[early] == (3, finished)


def test_a_resumed_update_does_not_count_the_interrupted_runs_changes_again(tmp_path, corpus, monkeypatch):
    db = tmp_path / "ix.duckdb"
    _index(corpus, db)
    old = (corpus / "alpha.txt").read_text(encoding="utf-8")
    (corpus / "alpha.txt").write_text("Zoe Quinn opened the archive in Lyon.\n\n" + old, encoding="utf-8")
    (corpus / "gamma.txt").unlink()

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    def ingest_line(lines):
        return next(x for x in lines if x.startswith("ingest:"))

    first, again = [], []
    with monkeypatch.context() as m:
        m.setattr(pipeline, "run_extraction", interrupted)
        with pytest.raises(KeyboardInterrupt):
            run_index(corpus, db, Settings(extract_mode="json", min_community_size=2), progress=False,
                      model=FakeModel(), embedder_factory=FakeEmbedder, say=first.append)
    run_index(corpus, db, Settings(extract_mode="json", min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=again.append)
    assert "(1 edited, 1 removed)" in ingest_line(first) and ", 0 removed)" not in ingest_line(first)
    # the re-run finds nothing new: the edit and the removal were the interrupted run's, and it said them
    assert ingest_line(again).endswith("(0 new, 0 removed)") and "edited" not in ingest_line(again)
