"""Appending a line to a document re-extracts only the text units whose text changed, and the extraction
records, entities and relationships equal a from-scratch build of the new text."""

import shutil

from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store

SENTENCES = ["Alice Smith founded Acme Corporation in Paris.", "Bob Jones joined Acme Corporation later.",
             "Carol White met Dan Brown in Berlin.", "Eve Black wrote about Acme Corporation.",
             "Frank Green sold rockets to Berlin Institute.", "Grace Hall flew from Paris to Berlin."]


def _settings():
    return Settings(extract_mode="json", min_community_size=2, chunk_size=60, chunk_overlap=10)


def _index(folder, db):
    return run_index(folder, db, _settings(), progress=False, model=FakeModel(), embedder_factory=FakeEmbedder,
                     say=lambda m: None)


def _units(db):
    store = Store(db, read_only=True)
    try:
        return [r[0] for r in store.con.execute("SELECT text FROM text_units t JOIN documents d USING (doc_id) "
                                                "WHERE d.path LIKE '%long.txt' ORDER BY ord").fetchall()]
    finally:
        store.close()


def _records(db):
    store = Store(db, read_only=True)
    q = store.con.execute
    try:
        return {
            "extractions": q("SELECT t.text, e.cache_key, e.n_entities FROM extractions e JOIN text_units t "
                             "USING (chunk_id) ORDER BY 1").fetchall(),
            "mentions": q("SELECT t.text, m.norm, m.type, m.description FROM entity_mentions m JOIN text_units t "
                          "USING (chunk_id) ORDER BY ALL").fetchall(),
            "entities": q("SELECT norm, name, type, description, n_mentions FROM entities ORDER BY norm").fetchall(),
            "relationships": q("SELECT a.norm, b.norm, r.description, r.weight FROM relationships r JOIN entities a "
                               "ON a.entity_id = r.source_id JOIN entities b ON b.entity_id = r.target_id "
                               "ORDER BY 1, 2").fetchall(),
        }
    finally:
        store.close()


def test_appending_a_line_re_extracts_only_the_changed_unit(tmp_path, corpus):
    long = corpus / "long.txt"
    long.write_text(" ".join(SENTENCES * 5) + "\n", encoding="utf-8")
    db = tmp_path / "ix.duckdb"
    _index(corpus, db)
    before = _units(db)
    assert len(before) >= 3
    with open(long, "a", encoding="utf-8") as f:
        f.write("Helen Ward opened a pier at Port Ellen.\n")
    out = _index(corpus, db)
    after = _units(db)
    assert len(after) == len(before)
    changed = [t for t in after if t not in before]
    assert len(changed) == 1 and after[-1] == changed[0]
    assert out["extract"]["extracted"] == 1
    assert out["extract"]["reused"] == out["ingest"]["text_units"] - 1

    fresh_in, fresh_db = tmp_path / "fresh", tmp_path / "fresh.duckdb"
    shutil.copytree(corpus, fresh_in)
    _index(fresh_in, fresh_db)
    assert _records(db) == _records(fresh_db)


def test_an_update_stopped_after_ingest_keeps_the_vectors_of_an_edited_documents_unchanged_units(
        tmp_path, corpus, monkeypatch):
    import pytest

    import slmgraph.indexing.pipeline as pipeline

    long = corpus / "long.txt"
    long.write_text(" ".join(SENTENCES * 5) + "\n", encoding="utf-8")
    db = tmp_path / "ix.duckdb"
    _index(corpus, db)
    before = _units(db)
    with open(long, "a", encoding="utf-8") as f:
        f.write("Helen Ward opened a pier at Port Ellen.\n")

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "run_extraction", stop)
    with pytest.raises(KeyboardInterrupt):
        _index(corpus, db)
    store = Store(db, read_only=True)
    try:
        units = store.con.execute("SELECT chunk_id, text FROM text_units t JOIN documents d USING (doc_id) "
                                  "WHERE d.path LIKE '%long.txt' ORDER BY ord").fetchall()
        vectors = {i for (i,) in store.con.execute("SELECT item_id FROM embeddings WHERE kind = 'text_unit'").fetchall()}
    finally:
        store.close()
    unchanged = [c for c, t in units if t in before]
    assert len(unchanged) == len(units) - 1
    # Queries before the re-run read these vectors: the edited document's unchanged text stays searchable.
    assert all(c in vectors for c in unchanged)
    assert units[-1][0] not in vectors
