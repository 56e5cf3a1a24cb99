"""Documents and token-exact text units."""

import hashlib

import pytest

from slmgraph.errors import UserError
from slmgraph.indexing.stages.ingest import ingest
from slmgraph.indexing.stages.ingest_chunk import chunk_tokens, make_text_units
from slmgraph.indexing.stages.ingest_read import Document, read_documents
from slmgraph.store.db import Store


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
    assert r1.added_units == r1.text_units > 0
    b_units = [r[0] for r in store.con.execute("SELECT chunk_id FROM text_units WHERE doc_id = ?", [b.doc_id]).fetchall()]
    store.con.execute("INSERT INTO entity_mentions VALUES (?, 'Bob Jones', 'bob jones', 'person', '')", [b_units[0]])
    r2 = ingest(store, [a, b], fake_model.tokenize, fake_model.detokenize, 50, 10)
    assert r2.added_units == 0 and r2.removed_units == 0
    r3 = ingest(store, [a], fake_model.tokenize, fake_model.detokenize, 50, 10)
    assert r3.removed_units == len(b_units) and r3.removed_documents == 1
    assert store.count("entity_mentions") == 0
    assert store.count("documents") == 1


def test_the_ingest_line_says_an_edited_file_is_edited_not_new_and_removed(tmp_path, fake_model):
    store = Store(tmp_path / "i.duckdb", create=True)
    texts = {f"{name.lower()}.txt": f"{name} went home early. " * 12 for name in ("Alice", "Bob", "Carol")}

    def run(texts):
        docs = [Document(hashlib.sha256(t.encode()).hexdigest()[:16], p, t) for p, t in sorted(texts.items())]
        return ingest(store, docs, fake_model.tokenize, fake_model.detokenize, 50, 10)

    assert run(texts).summary()[0].startswith("ingest: 3 documents (3 new), ")
    texts["alice.txt"] += "Then Alice came back."
    texts["bob.txt"] += "Then Bob came back."
    line = run(texts).summary()[0]
    assert line.startswith("ingest: 3 documents (2 edited), ") and "removed" not in line.split("tokens")[0]
    del texts["carol.txt"]
    texts["dan.txt"] = "Dan stayed in Berlin. " * 12
    assert run(texts).summary()[0].startswith("ingest: 3 documents (1 new, 1 removed), ")
    assert run(texts).summary()[0].startswith("ingest: 3 documents, ")  # nothing changed: no figures of documents


# --- issue 13 items 3-6 and issue 12's trailing units -------------------------------------------

import codecs
import os
import random

from hypothesis import given, settings as hsettings, strategies as st

from slmgraph.indexing.stages.ingest_chunk import TAIL_SHARE
from slmgraph.indexing.stages.ingest_read import decode, split_title
from slmgraph.names.forms import candidate_names


class ByteTokenizer:
    """A sub-word tokenizer over UTF-8 bytes: ``k`` bytes a token, so a character's bytes span tokens.

    ``detokenize`` drops the bytes of a split character, as llama.cpp's does with errors ignored:
    the failure mode that lost characters at window edges (issue 13 item 3).
    """

    def __init__(self, k: int = 3):
        self.k = k

    def tokenize(self, text: str) -> list[bytes]:
        b = text.encode("utf-8")
        return [b[i:i + self.k] for i in range(0, len(b), self.k)]

    def detokenize(self, tokens) -> str:
        return b"".join(tokens).decode("utf-8", errors="ignore")


def rejoin(units, text):
    """The document rebuilt from its units: each unit's characters past the previous unit's end."""
    out, end = "", 0
    for u in units:
        assert u.char_start <= end and u.text == text[u.char_start:u.char_end]
        out += text[end:u.char_end] if u.char_end > end else ""
        out = out if u.char_start <= end else None
        end = max(end, u.char_end)
    return out


@hsettings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400),
       size=st.integers(1, 40), overlap_share=st.floats(0, 0.95), k=st.integers(1, 5))
def test_units_rejoin_to_the_document_exactly_over_random_unicode(text, size, overlap_share, k):
    tok = ByteTokenizer(k)
    overlap = min(size - 1, int(size * overlap_share))
    units, _ = make_text_units(Document("d", "a.txt", text), tok.tokenize, tok.detokenize, size, overlap)
    if not text:
        assert units == []
        return
    assert units[0].char_start == 0 and units[-1].char_end == len(text)
    assert rejoin(units, text) == text
    assert [u.ord for u in units] == list(range(len(units)))


def test_japanese_with_emoji_loses_no_character_at_chunk_size_50():
    # Issue 13 item 3: 636 characters, --chunk-size 50 --chunk-overlap 0 gave 630 when joined.
    rng = random.Random(13)
    pool = "東京都の美術館で展示が始まりました。私は友人と一緒に行きました😀🎉👍🏽、とても楽しかったです！"
    text = "".join(rng.choice(pool) for _ in range(636))
    tok = ByteTokenizer(3)
    units, _ = make_text_units(Document("d", "ja.txt", text), tok.tokenize, tok.detokenize, 50, 0)
    assert len(units) > 5
    assert "".join(u.text for u in units) == text
    assert sum(len(u.text) for u in units) == 636
    assert all(u.n_tokens <= 50 for u in units[:-1]) and units[-1].n_tokens <= 50 + TAIL_SHARE * 50


class PieceTokenizer:
    """Sub-word tokenizer: leading whitespace plus 4-character pieces of each word (GPT-2-like spacing)."""

    def tokenize(self, text):
        out = []
        for m in __import__("re").finditer(r"\s*\S+|\s+", text):
            s = m.group()
            word = s.lstrip()
            lead = s[:len(s) - len(word)]
            pieces = [word[i:i + 4] for i in range(0, len(word), 4)] or [""]
            pieces[0] = lead + pieces[0]
            out.extend(pieces)
        return out

    def detokenize(self, tokens):
        return "".join(tokens)


def test_units_start_and_end_between_words_so_no_fragment_becomes_a_candidate():
    # Issue 13 item 4: "Trom", "Museum", "Eide" came from units cut mid-word.
    text = "Ingrid Solheim runs the Tromso Museum with Nils Eide. " * 120
    tok = PieceTokenizer()
    for size, overlap in ((50, 0), (50, 10), (97, 31), (600, 100)):
        units, _ = make_text_units(Document("d", "a.txt", text), tok.tokenize, tok.detokenize, size, overlap)
        for u in units:
            assert u.char_start == 0 or text[u.char_start - 1].isspace() or text[u.char_start].isspace()
            assert u.char_end == len(text) or text[u.char_end].isspace()
            assert u.n_tokens <= size + TAIL_SHARE * size
        names = {n for u in units for n in candidate_names(u.text, 100)}
        assert names and all(n in text.split(". ")[0] for n in names)
        assert not names & {"Trom", "Eid", "Tromso Mus", "Ingr", "Solh"}


def test_a_trailing_unit_of_few_new_tokens_is_merged_into_the_unit_before(fake_model):
    def units_of(n):
        text = " ".join(f"w{i}" for i in range(n))
        u, _ = make_text_units(Document("d", "a.txt", text), fake_model.tokenize, fake_model.detokenize, 600, 100)
        return [x.n_tokens for x in u]

    # A podcast file of 640 tokens: one unit of 640, not 600 + a unit of 40 new tokens.
    assert units_of(640) == [640]
    assert units_of(600 + int(TAIL_SHARE * 600) - 1) == [749]
    # 150 new tokens or more (the share of 600) stand as their own unit.
    assert units_of(650 + int(TAIL_SHARE * 600)) == [600, 300]
    assert units_of(600) == [600]
    assert chunk_tokens(list(range(640)), 600, 100) == [(0, 600), (500, 640)]  # no merge by default here
    assert chunk_tokens(list(range(640)), 600, 100, TAIL_SHARE) == [(0, 640)]


@pytest.mark.parametrize("codec,bom", [("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE),
                                       ("utf-32-le", codecs.BOM_UTF32_LE), ("utf-32-be", codecs.BOM_UTF32_BE),
                                       ("utf-8", codecs.BOM_UTF8)])
def test_files_with_a_byte_order_mark_are_decoded(tmp_path, codec, bom):
    text = "Ingrid Solheim visited Tromsø Museum. 東京 😀\n"
    (tmp_path / "a.txt").write_bytes(bom + text.encode(codec))
    docs, warnings = read_documents(tmp_path)
    assert warnings == [] and docs[0].text == text


def test_a_nul_byte_anywhere_skips_the_file_and_utf16_without_bom_gets_an_iconv_hint(tmp_path):
    (tmp_path / "late_nul.txt").write_bytes(b"Plain text. " * 1000 + b"\x00HIDDEN Person here.")
    (tmp_path / "u16.txt").write_bytes("Ingrid Solheim met Nils Eide.".encode("utf-16-le"))
    (tmp_path / "latin1.txt").write_bytes("Café Zoë".encode("latin-1"))
    (tmp_path / "ok.txt").write_text("Ingrid Solheim met Nils Eide.")
    docs, warnings = read_documents(tmp_path)
    assert [d.path for d in docs] == ["ok.txt"]
    assert any("late_nul.txt" in w and "NUL byte at byte 12000" in w for w in warnings)
    assert any("u16.txt" in w and "iconv -f UTF-16LE -t UTF-8" in w for w in warnings)
    assert any("latin1.txt" in w and "iconv -f " in w and "-t UTF-8" in w for w in warnings)
    text, why = decode(codecs.BOM_UTF16_LE + "a\x00b".encode("utf-16-le"), "x.txt")
    assert text is None and "NUL character" in why


def test_an_unreadable_folder_and_a_dangling_symlink_get_one_warning_each(tmp_path, monkeypatch):
    (tmp_path / "ok.txt").write_text("Ingrid Solheim met Nils Eide.")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "x.txt").write_text("Hidden Person.")
    os.symlink(tmp_path / "gone.txt", tmp_path / "dangling.txt")
    real_scandir = os.scandir

    def scandir(path="."):  # root ignores chmod 000, so refuse the listing the way the kernel would
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    docs, warnings = read_documents(tmp_path)
    assert [d.path for d in docs] == ["ok.txt"]
    assert len(warnings) == 2
    assert sum("locked" in w and "Permission denied" in w for w in warnings) == 1
    assert sum("dangling.txt" in w and "does not exist" in w for w in warnings) == 1


def test_links_inside_the_input_are_read_and_links_out_of_it_only_when_asked(tmp_path):
    top, out = tmp_path / "top", tmp_path / "out"
    (top / "sub").mkdir(parents=True)
    out.mkdir()
    (top / "sub" / "a.txt").write_text("Alice Smith met Bob Jones.", encoding="utf-8")
    (out / "b.txt").write_text("Carol White met Dan Brown.", encoding="utf-8")
    (out / "c.md").write_text("Erin Black met Fay Green.", encoding="utf-8")
    (top / "again").symlink_to(top / "sub", target_is_directory=True)
    (top / "x.txt").symlink_to(top / "sub" / "a.txt")
    (top / "shared").symlink_to(out, target_is_directory=True)
    (top / "c.md").symlink_to(out / "c.md")
    docs, warnings = read_documents(top)
    assert [d.path for d in docs] == ["again/a.txt"]  # x.txt has the same content
    said = {n: [w for w in warnings if w.startswith(f"not reading {'folder ' * (n == 'shared')}{n}:")]
            for n in ("shared", "c.md")}
    assert all(len(w) == 1 and "outside the input folder" in w[0] and "--follow-links" in w[0]
               for w in said.values()), warnings
    docs, warnings = read_documents(top, follow_links=True)
    assert [d.path for d in docs] == ["again/a.txt", "c.md", "shared/b.txt"]
    assert not any("not reading" in w for w in warnings)


def test_a_link_to_a_folder_holding_it_is_a_loop_named_once(tmp_path):
    (tmp_path / "beside.txt").write_text("Gina Hall flew to Rome.", encoding="utf-8")
    top = tmp_path / "top"
    (top / "deep").mkdir(parents=True)
    (top / "a.txt").write_text("Alice Smith met Bob Jones.", encoding="utf-8")
    (top / "up").symlink_to("..", target_is_directory=True)
    (top / "deep" / "back").symlink_to("..", target_is_directory=True)
    for follow in (False, True):
        docs, warnings = read_documents(top, follow_links=follow)
        assert [d.path for d in docs] == ["a.txt"]
        assert sorted(w.split(":")[0] for w in warnings) == ["not reading folder deep/back", "not reading folder up"]
        assert all("symbolic link loop" in w for w in warnings)


def test_a_first_line_naming_the_file_is_its_title_not_its_text(tmp_path):
    name = "EP-03_ Behind_the_Tech_Kevin Scott_Podcast_with_Andrew Ng"
    (tmp_path / f"{name}-part10.txt").write_text(f"{name}.txt  to supervised learning, that maybe we're under")
    (tmp_path / "notes.txt").write_text("report.txt is a file Ingrid Solheim wrote.")
    docs, _ = read_documents(tmp_path)
    by = {d.path: d for d in docs}
    assert by[f"{name}-part10.txt"].title == name
    assert by[f"{name}-part10.txt"].text == "to supervised learning, that maybe we're under"
    assert by["notes.txt"].title == "notes" and by["notes.txt"].text.startswith("report.txt is")
    assert split_title("a.md\nText", "a.md") == ("a", "Text")


def test_ingest_stores_titles_and_character_spans(tmp_path, fake_model):
    store = Store(tmp_path / "i.duckdb", create=True)
    d = Document("a" * 16, "a.txt", "Alice Smith went home. " * 60, "Alice")
    ingest(store, [d], fake_model.tokenize, fake_model.detokenize, 50, 10)
    assert store.con.execute("SELECT title FROM documents").fetchone()[0] == "Alice"
    rows = store.con.execute("SELECT char_start, char_end, text FROM text_units ORDER BY ord").fetchall()
    assert all(d.text[s:e] == t for s, e, t in rows) and rows[-1][1] == len(d.text)


def test_the_iconv_hint_converts_the_file_in_place_and_writes_nothing_elsewhere(tmp_path):
    import shutil
    import subprocess

    if not shutil.which("iconv"):
        pytest.skip("no iconv on this machine")
    corpus, elsewhere = tmp_path / "corpus", tmp_path / "cwd"
    corpus.mkdir()
    elsewhere.mkdir()
    (corpus / "latin1.txt").write_bytes("Café Zoë met Ingrid Solheim.".encode("latin-1"))
    (corpus / "ok.txt").write_text("Nils Eide stayed home.", encoding="utf-8")
    _, warnings = read_documents(corpus)
    hint = next(w for w in warnings if "latin1.txt" in w)
    command = hint.split("convert it in place with  ", 1)[1].split(", naming its real", 1)[0]
    subprocess.run(command, shell=True, check=True, cwd=elsewhere)
    docs, warnings = read_documents(corpus)
    assert sorted(d.path for d in docs) == ["latin1.txt", "ok.txt"] and not warnings
    assert "Café Zoë" in next(d.text for d in docs if d.path == "latin1.txt")
    assert list(elsewhere.iterdir()) == [] and sorted(p.name for p in corpus.iterdir()) == ["latin1.txt", "ok.txt"]


def test_a_short_latin1_file_is_told_to_convert_from_windows_1252_and_cyrillic_is_not():
    from slmgraph.indexing.stages.ingest_read import likely_encodings

    assert likely_encodings("Le hôpital de la ville. Café für Müller.".encode("latin-1"))[0] == "WINDOWS-1252"
    assert likely_encodings("Привет, как дела? Это тест файла.".encode("cp1251"))[0] != "WINDOWS-1252"
