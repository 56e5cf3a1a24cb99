"""Documents and token-exact text units."""

import pytest

from slmgraph.errors import UserError
from slmgraph.ingest import Document, chunk_tokens, ingest, make_text_units, read_documents
from slmgraph.store import Store


@pytest.mark.parametrize("n,size,overlap", [(0, 600, 100), (1, 600, 100), (600, 600, 100), (601, 600, 100),
                                             (1234, 600, 100), (1000, 100, 0), (37, 10, 9)])
def test_chunk_windows_cover_every_token_with_exact_overlap(n, size, overlap):
    spans = chunk_tokens(list(range(n)), size, overlap)
    if n == 0:
        assert spans == []
        return
    assert spans[0][0] == 0 and spans[-1][1] == n
    covered = set()
    for s, e in spans:
        assert 0 < e - s <= size
        covered.update(range(s, e))
    assert covered == set(range(n))
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        assert s2 == s1 + size - overlap  # step is exact
        assert e1 - s2 == min(overlap, e1 - s2)  # overlap never larger than asked


def test_chunk_rejects_bad_sizes():
    with pytest.raises(UserError):
        chunk_tokens([1, 2, 3], 0, 0)
    with pytest.raises(UserError):
        chunk_tokens([1, 2, 3], 10, 10)


def test_text_units_are_token_exact(fake_model):
    text = " ".join(f"word{i}" for i in range(250))
    units, n = make_text_units(Document("d1", "a.txt", text), fake_model.tokenize, fake_model.detokenize, 100, 20)
    assert n == 250
    assert [u.n_tokens for u in units] == [100, 100, 90]
    assert units[1].text.startswith("word80 ")  # 100 - 20 overlap
    tokens = fake_model.tokenize(text)
    for u in units:
        assert u.text == fake_model.detokenize(tokens[u.tok_start:u.tok_end])
    assert [u.ord for u in units] == [0, 1, 2]


def test_read_documents_recursive_with_spaces_and_non_ascii(corpus):
    docs, warnings = read_documents(corpus)
    assert sorted(d.path for d in docs) == ["alpha.txt", "gamma.txt", "sub dir/béta notes.md"]
    assert warnings == []


def test_binary_and_undecodable_files_are_skipped_with_warning(corpus):
    (corpus / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    (corpus / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (corpus / "empty.md").write_text("   \n")
    (corpus / "image.png").write_bytes(b"\x89PNG")  # not a .txt/.md: ignored silently
    docs, warnings = read_documents(corpus)
    assert len(docs) == 3
    assert any("blob.txt" in w and "binary" in w for w in warnings)
    assert any("latin1.txt" in w and "UTF-8" in w for w in warnings)
    assert any("empty.md" in w for w in warnings)
    assert not any("image.png" in w for w in warnings)


def test_empty_folder_and_missing_path_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="no readable .txt or .md files"):
        read_documents(tmp_path)
    with pytest.raises(UserError, match="does not exist"):
        read_documents(tmp_path / "nope")


def test_ingest_is_incremental_and_removes_what_a_removed_document_supported(tmp_path, fake_model):
    store = Store(tmp_path / "i.duckdb", create=True)
    a = Document("a" * 16, "a.txt", "Alice Smith went home. " * 30)
    b = Document("b" * 16, "b.txt", "Bob Jones stayed. " * 30)
    r1 = ingest(store, [a, b], fake_model.tokenize, fake_model.detokenize, 50, 10)
    assert r1["added_units"] == r1["text_units"] > 0
    b_units = [r[0] for r in store.con.execute("SELECT chunk_id FROM text_units WHERE doc_id = ?", [b.doc_id]).fetchall()]
    store.con.execute("INSERT INTO entity_mentions VALUES (?, 'Bob Jones', 'bob jones', 'person', '')", [b_units[0]])
    r2 = ingest(store, [a, b], fake_model.tokenize, fake_model.detokenize, 50, 10)
    assert r2["added_units"] == 0 and r2["removed_units"] == 0
    r3 = ingest(store, [a], fake_model.tokenize, fake_model.detokenize, 50, 10)
    assert r3["removed_units"] == len(b_units) and r3["removed_documents"] == 1
    assert store.count("entity_mentions") == 0
    assert store.count("documents") == 1
