"""A hostile new user's inputs on the ingest side: nothing indexed is lost to a file that cannot be read for a
moment, no file name or encoding fails every rerun, a large file is ingested in bounded memory and not cut
again on resume, the index file does not keep growing with rewrites, and no index setting is left out of
the build key."""

import os
import re
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import duckdb
import pytest
from conftest import FakeEmbedder, FakeModel

import slmgraph.cli.main as cli
from slmgraph.cli.commands import PARTIAL
import slmgraph.indexing.pipeline as pipeline
from slmgraph.config.settings import Settings
from slmgraph.errors import StorageError
from slmgraph.indexing.stages.ingest import ingest
from slmgraph.indexing.stages.ingest_chunk import make_text_units
from slmgraph.indexing.stages.ingest_read import Document, read_documents
from slmgraph.store.db import Store


def _index(capsys, corpus, db, *extra):
    code = cli.main(["index", str(corpus), "--db", str(db), *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def _docs(db):
    st = Store(db, read_only=True)
    try:
        return sorted(r[0] for r in st.con.execute("SELECT path FROM documents").fetchall()), \
            st.con.execute("SELECT count(*) FROM entity_mentions").fetchone()[0]
    finally:
        st.close()


def _deny(monkeypatch, *names):
    """Reading files named ``names`` fails with EACCES (this test runs as root, which ignores chmod)."""
    real = Path.read_bytes

    def read_bytes(self):
        if self.name in names:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)


# --- item 1: unreadable is not removed ----------------------------------------------------------------

def test_an_unreadable_file_keeps_what_the_index_holds_for_it_and_the_run_says_it_is_partial(
        tmp_path, corpus, capsys, fake_cli, monkeypatch):
    db = tmp_path / "x.duckdb"
    assert _index(capsys, corpus, db)[0] == 0
    before = _docs(db)
    _deny(monkeypatch, "alpha.txt", "gamma.txt")
    code, out, err = _index(capsys, corpus, db)
    assert code == PARTIAL == 3, err
    assert _docs(db) == before  # their documents and what was extracted from them are still there
    lines = [x for x in err.splitlines() if "cannot read" in x]
    assert len(lines) == 2 and all("Permission denied" in x and "kept" in x for x in lines), err
    assert "the index is partial" in err and "Traceback" not in err
    code, _, err = _index(capsys, corpus, db, "--quiet")
    assert code == 3 and [x for x in err.splitlines() if x.strip()] == [
        "slmgraph: warning: the index is partial: 2 files or folders of the input could not be read: alpha.txt "
        "(Permission denied); gamma.txt (Permission denied); what the index held for them is kept: make them "
        "readable (or remove them) and run the same command again"]
    st = Store(db, read_only=True)
    assert st.get_meta("complete") == "1"  # usable: queries answer from what it holds
    st.close()
    monkeypatch.undo()
    code, _, err = _index(capsys, corpus, db)
    assert code == 0 and "partial" not in err
    assert _docs(db) == before


def test_a_file_that_no_longer_exists_is_still_removed(tmp_path, corpus, capsys, fake_cli):
    db = tmp_path / "x.duckdb"
    assert _index(capsys, corpus, db)[0] == 0
    (corpus / "gamma.txt").unlink()
    code, _, err = _index(capsys, corpus, db)
    assert code == 0, err
    assert "gamma.txt" not in _docs(db)[0]


def test_an_unreadable_folder_a_dangling_link_and_a_link_loop_keep_their_documents(
        tmp_path, corpus, capsys, fake_cli, monkeypatch):
    outside = tmp_path / "usb"
    outside.mkdir()
    (outside / "delta.txt").write_text("Frank Green sailed to Oslo with Acme Corporation.", encoding="utf-8")
    (outside / "epsilon.txt").write_text("Gina Hall flew to Rome for Acme Corporation.", encoding="utf-8")
    (corpus / "delta.txt").symlink_to(outside / "delta.txt")
    (corpus / "linked").symlink_to(outside, target_is_directory=True)
    db = tmp_path / "x.duckdb"
    assert _index(capsys, corpus, db, "--follow-links")[0] == 0
    before = _docs(db)
    assert "delta.txt" in before[0] and "linked/epsilon.txt" in before[0] and "sub dir/béta notes.md" in before[0]
    shutil.rmtree(outside)  # the drive is unplugged: two dangling links
    (corpus / "loop.txt").symlink_to(corpus / "loop.txt")
    real_scandir = os.scandir

    def scandir(path="."):
        if str(path).endswith("sub dir"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, _, err = _index(capsys, corpus, db)
    assert code == 3, err
    assert _docs(db) == before
    said = {p: x for x in err.splitlines() for p in ("delta.txt", "linked", "loop.txt", "sub dir") if f" {p}:" in x}
    assert "dangling symbolic link" in said["delta.txt"] and "dangling symbolic link" in said["linked"]
    assert "symbolic link loop" in said["loop.txt"] and "does not exist" not in said["loop.txt"]
    assert "Permission denied" in said["sub dir"]


def test_a_link_out_of_the_input_is_read_only_when_asked_and_what_it_gave_is_kept(tmp_path, corpus, capsys,
                                                                                   fake_cli):
    outside = tmp_path / "usb"
    outside.mkdir()
    (outside / "delta.txt").write_text("Frank Green sailed to Oslo with Acme Corporation.", encoding="utf-8")
    (corpus / "linked").symlink_to(outside, target_is_directory=True)
    db = tmp_path / "x.duckdb"
    code, _, err = _index(capsys, corpus, db)
    assert code == 0, err
    assert "linked/delta.txt" not in _docs(db)[0]
    said = [x for x in err.splitlines() if " linked:" in x]
    assert len(said) == 1 and "outside the input folder" in said[0] and "--follow-links" in said[0]
    assert _index(capsys, corpus, db, "--follow-links")[0] == 0
    before = _docs(db)
    assert "linked/delta.txt" in before[0]
    code, _, err = _index(capsys, corpus, db)  # its file still exists: the document is kept, the run partial
    assert code == PARTIAL, err
    assert _docs(db) == before
    assert "partial" in err and "--follow-links" in err.split("partial")[-1]


def test_a_link_to_the_folder_holding_the_input_is_a_loop_named_once_and_never_read(tmp_path, corpus, capsys,
                                                                                    fake_cli):
    (tmp_path / "elsewhere.txt").write_text("Gina Hall flew to Rome for Acme Corporation.", encoding="utf-8")
    (corpus / "loop").symlink_to("..", target_is_directory=True)
    db = tmp_path / "x.duckdb"
    for extra in ((), ("--follow-links",)):
        code, _, err = _index(capsys, corpus, db, *extra)
        assert code == 0, err
        assert not any(p.startswith("loop/") for p in _docs(db)[0])
        said = [x for x in err.splitlines() if " loop:" in x]
        assert len(said) == 1 and "symbolic link loop" in said[0]


def test_a_dangling_link_never_indexed_is_named_but_does_not_make_the_index_partial(tmp_path, corpus, capsys,
                                                                                    fake_cli):
    (corpus / "notes.txt").symlink_to(tmp_path / "never-there.txt")
    db = tmp_path / "x.duckdb"
    code, _, err = _index(capsys, corpus, db)
    assert code == 0, err
    assert "notes.txt" in err and "dangling symbolic link" in err
    assert "partial" not in err


def _held(db):
    st = Store(db, read_only=True)
    try:
        return [st.con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("text_units", "entities")]
    finally:
        st.close()


def test_a_file_that_no_longer_decodes_keeps_its_document_units_and_entities_and_the_run_is_partial(
        tmp_path, corpus, capsys, fake_cli):
    db = tmp_path / "x.duckdb"
    assert _index(capsys, corpus, db)[0] == 0
    before, held = _docs(db), _held(db)
    alpha = (corpus / "alpha.txt").read_bytes()
    (corpus / "alpha.txt").write_bytes(alpha + b"\xe9")  # one Latin-1 byte: not UTF-8 any more
    (corpus / "gamma.txt").write_bytes(b"Eve\x00Black")  # binary
    code, _, err = _index(capsys, corpus, db)
    assert code == PARTIAL, err
    assert _docs(db) == before and _held(db) == held
    assert "the index is partial" in err and "alpha.txt (not UTF-8 text (byte" in err and "gamma.txt (binary" in err
    assert "0 removed" in err and "Traceback" not in err
    (corpus / "alpha.txt").write_bytes(alpha)
    (corpus / "gamma.txt").unlink()
    code, _, err = _index(capsys, corpus, db)
    assert code == 0 and "partial" not in err
    assert _docs(db)[0] == [p for p in before[0] if p != "gamma.txt"]


def test_an_emptied_file_keeps_its_document_and_the_run_is_partial(tmp_path, corpus, capsys, fake_cli):
    db = tmp_path / "x.duckdb"
    assert _index(capsys, corpus, db)[0] == 0
    before, held = _docs(db), _held(db)
    (corpus / "gamma.txt").write_bytes(b"")
    code, _, err = _index(capsys, corpus, db)
    assert code == PARTIAL, err
    assert _docs(db) == before and _held(db) == held
    assert "gamma.txt (empty)" in err and "kept" in err


def test_an_undecodable_file_never_indexed_is_skipped_without_making_the_index_partial(tmp_path, corpus, capsys,
                                                                                      fake_cli):
    (corpus / "latin.txt").write_bytes("Caf\u00e9 Paris".encode("latin-1"))
    (corpus / "blank.txt").write_bytes(b"\n")
    code, _, err = _index(capsys, corpus, tmp_path / "x.duckdb")
    assert code == 0, err
    assert "skipped" in err and "latin.txt" in err and "blank.txt" in err and "partial" not in err


# --- item 8: a file name that is not UTF-8 --------------------------------------------------------------

def test_a_file_name_that_is_not_utf8_is_indexed_under_an_escaped_name_on_every_run(tmp_path, corpus, capsys,
                                                                                    fake_cli):
    bad = os.path.join(os.fsencode(corpus), b"bad\xffname.txt")
    with open(bad, "wb") as f:
        f.write("Grace Hopper joined the Navy in Arlington.".encode())
    db = tmp_path / "x.duckdb"
    for _ in range(2):
        code, _, err = _index(capsys, corpus, db)
        assert code == 0, err
        assert "space" not in err
    assert "bad\\xffname.txt" in _docs(db)[0]


def test_a_database_error_that_is_not_the_disks_does_not_ask_to_free_space(tmp_path):
    st = Store(tmp_path / "x.duckdb", create=True)
    try:
        st.con.execute("INSERT INTO meta VALUES (?, ?)", ["k", "bad\udcffname"])
    except duckdb.Error as exc:
        msg = str(st.storage_error(exc))
    else:  # a DuckDB that stores the name: nothing to classify
        msg = "not a disk problem"
    st.con.close()
    assert "free some space" not in msg and "not a disk problem" in msg
    full = Store(tmp_path / "y.duckdb", create=True)
    msg = str(full.storage_error(duckdb.IOException('Could not write file "y.duckdb": No space left on device')))
    full.con.close()
    assert "free some space" in msg and "No space left on device" in msg


# --- the GBK hint ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("codec,text", [
    ("gbk", "王小明在北京大学学习物理学。他的老师李华教授来自上海，研究量子力学和凝聚态物理。"),
    ("shift_jis", "田中さんは東京大学で物理学を勉強しています。先生は大阪から来ました。"),
    ("cp1251", "Иван Петров работает в Московском университете. Он изучает физику и математику."),
])
def test_the_iconv_hint_names_an_encoding_that_gives_back_the_text(tmp_path, codec, text):
    if not shutil.which("iconv"):
        pytest.skip("no iconv on this machine")
    (tmp_path / "f.txt").write_bytes(text.encode(codec))
    (tmp_path / "ok.txt").write_text("Nils Eide stayed home.", encoding="utf-8")
    _, warnings = read_documents(tmp_path)
    hint = next(w for w in warnings if "f.txt" in w)
    command = hint.split("convert it in place with  ", 1)[1].split(", naming its real", 1)[0]
    subprocess.run(command, shell=True, check=True, cwd=tmp_path)
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == text, hint


# --- a 50 MB file: progress, bounded memory, nothing cut again on resume ----------------------------------

class CountingModel(FakeModel):
    """The fake model, counting the characters it is asked to tokenize."""

    def __init__(self):
        super().__init__()
        self.chars = 0

    def tokenize(self, text, *a, **kw):
        self.chars += len(text)
        return super().tokenize(text, *a, **kw)


def _big_text(words: int) -> str:
    names = ["Alice", "Smith", "met", "the", "crew", "of", "Acme", "in", "Paris.", "They", "built", "rockets"]
    return " ".join(names[(i * 7 + i // 5) % len(names)] for i in range(words))


def test_a_large_document_is_cut_with_memory_bounded_by_its_size(fake_model):
    doc = Document("d" * 16, "big.txt", _big_text(300_000))  # 1.6 MB
    seen = []
    tracemalloc.start()
    try:
        units, n = make_text_units(doc, fake_model.tokenize, fake_model.detokenize, 600, 100,
                                   **({"on_chars": seen.append} if "on_chars" in
                                      make_text_units.__code__.co_varnames else {}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert units[-1].char_end == len(doc.text) and n == 300_000
    # The units' own text is ~1.2 x the document; a list of every word's span was ~30 x.
    assert peak < 8 * len(doc.text), peak
    assert sum(seen) == len(doc.text)  # progress: every character reported once


def test_a_resumed_ingest_does_not_cut_unchanged_documents_again(tmp_path, corpus, capsys):
    model = CountingModel()
    db = tmp_path / "x.duckdb"
    pipeline.run_index(corpus, db, Settings(min_community_size=2), progress=False, model=model,
                       embedder_factory=FakeEmbedder, say=lambda m: None)
    st = Store(db)
    docs, _ = read_documents(corpus)
    model.chars = 0
    res = ingest(st, docs, model.tokenize, model.detokenize, 600, 100,
                 **({"chunking": st.con.execute("SELECT any_value(chunking) FROM documents").fetchone()[0]}
                    if st.has_column("documents", "chunking") else {}))
    st.close()
    assert res.added_units == 0 and res.removed_units == 0 and res.text_units > 0
    assert model.chars == 0  # nothing tokenized: the stored units of the same bytes and settings are kept


def test_an_interrupted_ingest_keeps_the_documents_it_finished(tmp_path, fake_model):
    from slmgraph.indexing.pipeline import RunStore

    st = RunStore(tmp_path / "x.duckdb", create=True)
    st.marking = True  # as an index run arms it: its first change marks the index unfinished
    docs = [Document(f"{i:016d}", f"d{i}.txt", f"Person{i} Name met Acme in Paris. " * 50) for i in range(4)]
    calls = {"n": 0}

    def tokenize(text, *a, **kw):
        if "Person2" in text:
            raise KeyboardInterrupt
        calls["n"] += 1
        return fake_model.tokenize(text)

    with pytest.raises(KeyboardInterrupt):
        ingest(st, docs, tokenize, fake_model.detokenize, 50, 10)
    assert st.count("documents") == 2 and st.get_meta("complete") == "0"
    res = ingest(st, docs, fake_model.tokenize, fake_model.detokenize, 50, 10)
    assert st.count("documents") == 4 and res.removed_units == 0
    st.close()


# --- index growth: compaction ----------------------------------------------------------------------------

def test_a_rewrite_does_not_leave_the_index_file_mostly_free_blocks(tmp_path, monkeypatch):
    import slmgraph.store.db as store_mod

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(12):
        (corpus / f"d{i}.txt").write_text(" ".join(f"Person{j} Name{j} met Acme{j} Corp in Paris{j}."
                                                   for j in range(i * 50, i * 50 + 80)), encoding="utf-8")
    db = tmp_path / "x.duckdb"
    monkeypatch.setattr(store_mod, "COMPACT_MIN_BYTES", 0, raising=False)

    def build():
        return pipeline.run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
                                  embedder_factory=FakeEmbedder, say=lambda m: None)

    build()
    for k in range(2):  # one edit, then another
        (corpus / "d3.txt").write_text(f"Edit {k}: Zed Quill met Acme3 Corp in Paris3.", encoding="utf-8")
        build()
    con = duckdb.connect(str(db), read_only=True)
    total, free = con.execute("SELECT total_blocks, free_blocks FROM pragma_database_size()").fetchone()
    con.close()
    share = getattr(store_mod, "COMPACT_SHARE", 0.25)
    assert free <= share * total, (free, total)


# --- the error line and the 'ask with' line -------------------------------------------------------------

def test_an_error_line_is_not_inside_a_progress_bar_and_no_bar_follows_it(tmp_path, corpus, capsys, monkeypatch):
    from tqdm import tqdm

    def run_index(*a, **kw):
        bar = tqdm(total=10, desc="embed", file=sys.stderr)
        bar.update(4)
        raise StorageError("writing index x.duckdb failed (No space left on device); 1 KB free on its file system")

    monkeypatch.setattr(pipeline, "run_index", run_index)
    code = cli.main(["index", str(corpus), "--db", str(tmp_path / "x.duckdb")])
    import gc

    gc.collect()  # a bar left open would draw itself again when collected
    err = capsys.readouterr().err
    assert code == 1
    lines = re.split(r"[\r\n]", err.rstrip())
    assert lines[-1].startswith("slmgraph: error: writing index"), err
    assert sum("slmgraph: error" in x for x in lines) == 1 and not any("embed" in x for x in lines[-1:])


def test_the_ask_with_line_quotes_a_path_with_spaces(tmp_path, corpus, capsys, fake_cli):
    db = tmp_path / "my index.duckdb"
    code, out, _ = _index(capsys, corpus, db)
    assert code == 0
    assert f"--db '{db}'" in out


# --- the build key holds every index setting --------------------------------------------------------------

def test_rules_after_off_is_not_up_to_date(tmp_path, corpus):
    db = tmp_path / "x.duckdb"

    def build(rules: bool):
        s = Settings(min_community_size=2, resolution_threshold=None, resolution_rules=rules)
        return pipeline.run_index(corpus, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder,
                                  say=lambda m: None)

    build(False)
    assert build(False).get("up_to_date")
    assert not build(True).get("up_to_date")


#: Modules of the index stages: a setting they read changes what the index holds, unless it only says
#: where or how fast the work runs.
INDEX_MODULES = tuple(f"indexing/stages/{m}" for m in ("ingest", "extract", "claims", "ner", "resolve", "graph",
                                                        "communities", "reports", "embed")) + (
    "names/forms", "indexing/pipeline", "indexing/executors/batch", "indexing/executors/raypool")
RUNTIME = {"model_path", "n_threads", "threads_explicit", "workers", "executor", "ray_address", "embed_batch_size",
           "embed_precision", "prompts_dir"}


def test_every_setting_is_in_the_index_fingerprint_unless_no_index_stage_reads_it():
    import dataclasses

    import slmgraph.config.settings as config

    fp = Settings().index_fingerprint()
    names = {f.name for f in dataclasses.fields(Settings)}
    left_out = names - set(fp)
    assert "resolution_rules" in fp
    root = Path(config.__file__).parents[1]
    source = "\n".join((root / f"{m}.py").read_text(encoding="utf-8") for m in INDEX_MODULES)
    read = {n for n in left_out if re.search(rf"\.{n}\b", source)}
    assert read <= RUNTIME, f"index stages read {sorted(read - RUNTIME)}, which the index fingerprint leaves out"
    for n in names - left_out:  # each one in it changes it
        s = Settings()
        v = getattr(s, n)
        if isinstance(v, config.Mode):
            new = next(m for m in type(v) if m != v)
        elif n == "choices":
            new = "keep"
        else:
            new = (not v) if isinstance(v, bool) else (v + 1 if isinstance(v, (int, float)) else
                                                       ("x" if v is None or isinstance(v, str) else tuple(v) + ("x",)))
        setattr(s, n, new)
        assert s.index_fingerprint() != fp, n


def test_a_quiet_run_still_names_a_file_it_skips(tmp_path, corpus, capsys, fake_cli):
    (corpus / "latin.txt").write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e".encode("latin-1"))
    code, out, err = _index(capsys, corpus, tmp_path / "x.duckdb", "--quiet")
    assert code == 0, err
    # progress is quiet; a file of the input left out of the index is not
    assert "skipped" in err and "latin.txt" in err and "iconv" in err and "Traceback" not in err
