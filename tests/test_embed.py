"""The embed stage reuses vectors by content: what the embedder reads of a text (issue 12)."""

import hashlib
import re

import numpy as np
import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.embed import current_items, embed_items, entity_text, run_embeddings, window_keys
from slmgraph.indexing.stages.graph import build_graph
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store


class WindowEmbedder(FakeEmbedder):
    """The conftest fake, reading only the first ``window`` words of a text (as all-MiniLM reads
    only its first 256 word pieces); records every text it encodes."""

    name = "window-fake"

    def __init__(self, window: int = 8):
        self.window = window
        self.encoded: list[str] = []

    def windows(self, texts):
        return [tuple(int(hashlib.md5(w.encode()).hexdigest()[:8], 16) for w in re.findall(r"\w+", t.lower())[:self.window])
                for t in texts]

    def encode(self, texts, progress=False):
        self.encoded.extend(texts)
        return super().encode([" ".join(re.findall(r"\w+", t)[:self.window]) for t in texts])


LONG = "one two three four five six seven eight"  # fills the 8-word window


def _store(tmp_path, entities=(), units=(), reports=()):
    """A store holding only the tables the embed stage reads."""
    store = Store(tmp_path / "e.duckdb", create=True)
    _put(store, entities, units, reports)
    return store


def _put(store, entities=(), units=(), reports=()):
    con = store.con
    with store.transaction():
        for t in ("entities", "text_units", "community_reports"):
            con.execute(f"DELETE FROM {t}")
        for i, (norm, name, etype, desc) in enumerate(entities, start=1):
            con.execute("INSERT INTO entities VALUES (?, ?, ?, ?, ?, 1, 0)", [i, norm, name, etype, desc])
        for cid, text in units:
            con.execute("INSERT INTO text_units (chunk_id, doc_id, ord, tok_start, tok_end, n_tokens, text) "
                        "VALUES (?, 'd', 0, 0, 1, 1, ?)", [cid, text])
        for rid, text in reports:
            con.execute("INSERT INTO community_reports (community_id, level, title, full_text) VALUES (?, 0, 't', ?)",
                        [rid, text])


def _vectors(store, kind):
    return {i: np.asarray(v, dtype=np.float32) for i, v in
            store.con.execute("SELECT item_id, vector FROM embeddings WHERE kind = ?", [kind]).fetchall()}


def test_an_unchanged_rerun_embeds_nothing_and_tokenizes_nothing(tmp_path):
    store = _store(tmp_path, entities=[("alex", "Alex", "person", "A pilot.")], units=[("u1", "Alex flies.")],
                   reports=[(0, "# Alex\n\nAbout Alex.")])
    emb = WindowEmbedder()
    first = run_embeddings(store, emb, progress=False)
    assert (first.embedded, first.kept, first.reused) == (3, 0, 0)
    assert first.per_kind == {"entity": {"embedded": 1, "kept": 0, "reused": 0},
                              "text_unit": {"embedded": 1, "kept": 0, "reused": 0},
                              "report": {"embedded": 1, "kept": 0, "reused": 0}}
    emb.encoded.clear()
    calls = []
    emb.windows = lambda texts: calls.append(texts) or WindowEmbedder.windows(emb, texts)
    again = run_embeddings(store, emb, progress=False)
    assert (again.embedded, again.kept, again.reused, again.removed) == (0, 3, 0, 0)
    assert emb.encoded == [] and calls == []


def test_a_renamed_id_with_the_same_text_reuses_the_stored_vector(tmp_path):
    store = _store(tmp_path, reports=[(0, "# Alex and Jordan\n\nThey fly."), (1, "# Dulce\n\nThe base.")])
    emb = WindowEmbedder()
    run_embeddings(store, emb, progress=False)
    before = _vectors(store, "report")
    # The communities are renumbered: the two texts swap ids, a third community is new.
    _put(store, reports=[(1, "# Alex and Jordan\n\nThey fly."), (0, "# Dulce\n\nThe base."), (7, "# Mercer\n\nA spy.")])
    emb.encoded.clear()
    res = run_embeddings(store, emb, progress=False)
    assert emb.encoded == ["# Mercer\n\nA spy."]
    assert res.per_kind["report"] == {"embedded": 1, "kept": 0, "reused": 2}
    after = _vectors(store, "report")
    assert np.array_equal(after["1"], before["0"]) and np.array_equal(after["0"], before["1"])
    # A merged entity: its key changed, its text did not.
    _put(store, entities=[("mercer", "Mercer", "person", "A spy.")])
    run_embeddings(store, emb, progress=False)
    _put(store, entities=[("alex mercer", "Mercer", "person", "A spy.")])
    emb.encoded.clear()
    res = run_embeddings(store, emb, progress=False)
    assert emb.encoded == [] and res.reused == 1 and res.removed == 1
    assert set(_vectors(store, "entity")) == {"alex mercer"}


def test_a_change_beyond_the_window_is_not_embedded_again_but_one_inside_it_is(tmp_path):
    store = _store(tmp_path, units=[("u1", LONG + " and then some")])
    emb = WindowEmbedder(window=8)
    run_embeddings(store, emb, progress=False)
    v0 = _vectors(store, "text_unit")["u1"]
    _put(store, units=[("u1", LONG + " and then some more sentences appended later.")])
    emb.encoded.clear()
    res = run_embeddings(store, emb, progress=False)
    assert emb.encoded == [] and (res.embedded, res.kept, res.reused) == (0, 0, 1)
    assert np.array_equal(_vectors(store, "text_unit")["u1"], v0)
    _put(store, units=[("u1", "zero " + LONG)])  # inside the window
    res = run_embeddings(store, emb, progress=False)
    assert emb.encoded == ["zero " + LONG] and res.embedded == 1
    assert not np.array_equal(_vectors(store, "text_unit")["u1"], v0)


def test_stored_vectors_equal_a_fresh_embedding_of_the_same_text(tmp_path):
    ents = [(f"e{i}", f"Name{i}", "person", " ".join(f"w{i}x{k}" for k in range(i))) for i in range(12)]
    units = [(f"u{i}", f"text {i} " * (i + 1)) for i in range(5)]
    store = _store(tmp_path, entities=ents, units=units, reports=[(3, "# R\n\nsame as u0")])
    emb = WindowEmbedder(window=6)
    run_embeddings(store, emb, progress=False)
    fresh = WindowEmbedder(window=6)
    got = _vectors(store, "entity")
    for norm, name, etype, desc in ents:
        assert np.allclose(got[norm], fresh.encode([entity_text(name, etype, desc)])[0])
    got = _vectors(store, "text_unit")
    for cid, text in units:
        assert np.allclose(got[cid], fresh.encode([text])[0])


def test_the_same_window_twice_in_one_run_is_encoded_once(tmp_path):
    store = _store(tmp_path, units=[("u1", LONG + " tail a"), ("u2", LONG + " tail b")],
                   reports=[(0, LONG + " report tail")])
    emb = WindowEmbedder(window=8)
    res = run_embeddings(store, emb, progress=False)
    assert len(emb.encoded) == 1 and res.embedded == 1 and res.reused == 2
    v = _vectors(store, "text_unit")
    assert np.array_equal(v["u1"], v["u2"]) and np.array_equal(v["u1"], _vectors(store, "report")["0"])


def test_items_are_encoded_longest_first_and_returned_in_their_order():
    emb = WindowEmbedder(window=50)
    texts = ["a b", "a b c d e", "a", "a b c"]
    _, lengths = window_keys(emb, texts)
    assert lengths == [2, 5, 1, 3]
    out = embed_items(emb, texts, lengths)
    assert emb.encoded == ["a b c d e", "a b c", "a b", "a"]
    assert np.allclose(out, FakeEmbedder().encode(texts))


def test_without_windows_the_key_is_the_full_text_hash():
    keys, _ = window_keys(FakeEmbedder(), ["x y", "x y", "x z"])
    assert keys[0] == keys[1] != keys[2] and keys[0].startswith("fake-embedder:")


def test_an_index_from_before_window_keys_keeps_its_vectors(tmp_path):
    """Rows written before the ``window_key`` column (NULL there) still count as current for an
    unchanged text; a changed text is embedded again."""
    store = _store(tmp_path, units=[("u1", "old text"), ("u2", "other text")])
    emb = WindowEmbedder()
    run_embeddings(store, emb, progress=False)
    store.con.execute("UPDATE embeddings SET window_key = NULL")
    _put(store, units=[("u1", "old text"), ("u2", "changed text")])
    emb.encoded.clear()
    res = run_embeddings(store, emb, progress=False)
    assert emb.encoded == ["changed text"] and (res.kept, res.embedded) == (1, 1)


def test_descriptions_follow_the_order_documents_were_added(tmp_path):
    """A document added later appends its sentences to a joined description instead of landing
    among them by text-unit hash, so the description's start (what the embedder reads) holds."""
    store = Store(tmp_path / "g.duckdb", create=True)
    con = store.con

    def add_doc(doc, path, when, chunk, sentence):
        con.execute("INSERT INTO documents (doc_id, path, n_chars, n_tokens, added_at) VALUES (?, ?, 1, 1, ?)",
                    [doc, path, when])
        con.execute("INSERT INTO text_units (chunk_id, doc_id, ord, tok_start, tok_end, n_tokens, text) "
                    "VALUES (?, ?, 0, 0, 1, 1, ?)", [chunk, doc, sentence])
        con.execute("INSERT INTO entity_mentions VALUES (?, 'Alex', 'alex', 'person', ?)", [chunk, sentence])

    add_doc("d1", "b.txt", "2026-01-01 10:00:00", "ffff", "Alex flies the plane.")
    add_doc("d2", "c.txt", "2026-01-01 10:00:00", "aaaa", "Alex lands at Dulce.")
    build_graph(store, lambda t: len(t.split()), 200)
    first = con.execute("SELECT description FROM entities").fetchone()[0]
    assert first == "Alex flies the plane. Alex lands at Dulce."  # path order, not chunk-id order
    add_doc("d3", "a.txt", "2026-01-02 09:00:00", "0000", "Alex meets Mercer.")
    build_graph(store, lambda t: len(t.split()), 200)
    after = con.execute("SELECT description FROM entities").fetchone()[0]
    assert after == first + " Alex meets Mercer."


def test_an_added_document_embeds_its_text_units_and_every_vector_is_that_of_its_text(tmp_path, corpus):
    db = tmp_path / "i.duckdb"

    def index():
        return run_index(corpus, db, Settings(), progress=False, model=FakeModel(), embedder_factory=FakeEmbedder,
                         say=lambda m: None)

    first = index()["embed"]
    n_units = first["per_kind"]["text_unit"]["embedded"]
    (corpus / "delta.txt").write_text("Frank Green joined Acme Corporation in Paris. Frank Green met Alice Smith.\n",
                                      encoding="utf-8")
    add = index()["embed"]
    assert add["per_kind"]["text_unit"] == {"embedded": 1, "kept": n_units, "reused": 0}
    assert add["embedded"] < first["embedded"]
    store = Store(db, read_only=True)
    fresh = FakeEmbedder()
    rows = {(k, i): v for k, i, v in store.con.execute("SELECT kind, item_id, vector FROM embeddings").fetchall()}
    items = current_items(store)
    assert set(rows) == {(k, i) for k, i, _ in items}
    for kind, item, text in items:
        assert np.allclose(rows[(kind, item)], fresh.encode([text])[0]), (kind, item)
    store.close()


@pytest.mark.integration
def test_the_real_embedder_reads_256_word_pieces_and_the_stage_reuses_beyond_them(tmp_path):
    from slmgraph.indexing.stages.embed import Embedder

    emb = Embedder()
    assert emb.max_seq_length == 256
    base = " ".join(f"Alex Mercer flew sortie number {i} over Dulce." for i in range(60))  # > 256 word pieces
    w1, w2, w3 = emb.windows([base, base + " A later finding about Jordan Hayes.", "Short text."])
    assert len(w1) == 256 and w1 == w2 and len(w3) < 10
    store = _store(tmp_path, units=[("u1", base)], reports=[(0, "Short text.")])
    run_embeddings(store, emb, progress=False)
    _put(store, units=[("u1", base + " A later finding about Jordan Hayes.")], reports=[(4, "Short text.")])
    res = run_embeddings(store, emb, progress=False)
    # the text unit's vector and the report's are reused; of its further windows only the last, which
    # now holds the added sentence, is encoded (every sentence is read whole by some window)
    assert (res.embedded, res.reused) == (1, 2)
    wins = store.con.execute("SELECT count(*) FROM embeddings WHERE kind = 'text_unit_window'").fetchone()[0]
    assert wins >= 2 and res.per_kind["text_unit_window"] == {"embedded": 1, "kept": wins - 1, "reused": 0}
    fresh = emb.encode([base + " A later finding about Jordan Hayes.", "Short text."])
    assert np.allclose(_vectors(store, "text_unit")["u1"], fresh[0], atol=1e-5)
    assert np.allclose(_vectors(store, "report")["4"], fresh[1], atol=1e-5)


def test_the_corpus_noun_phrases_of_two_units_or_more_are_embedded_as_themselves(tmp_path):
    store = _store(tmp_path, units=[("u1", "Alex flies."), ("u2", "Alex lands.")])
    with store.transaction() as con:
        con.execute("DELETE FROM corpus_terms")
        for term, units in (("partnership", 2), ("flight school", 3), ("rare word", 1), ("very long phrase here", 2),
                            ("co2 level", 2)):
            con.execute("INSERT INTO corpus_terms VALUES ('phrase', ?, ?, 0)", [term, units])
    emb = WindowEmbedder()
    res = run_embeddings(store, emb, progress=False)
    # one or two words of letters, in two units or more: the vocabulary near_words looks a term up in
    assert sorted(_vectors(store, "phrase")) == ["flight school", "partnership"]
    assert res.per_kind["phrase"] == {"embedded": 2, "kept": 0, "reused": 0}
    again = run_embeddings(store, emb, progress=False)
    assert again.per_kind["phrase"] == {"embedded": 0, "kept": 2, "reused": 0}
