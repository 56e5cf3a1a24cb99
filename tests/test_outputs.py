"""One rule for the commands that write files (slmgraph.outputs, README "Output files"): init, export,
picture and prompt-tune create a missing output folder with its parents; generated files (export,
picture) are overwritten, files you edit (init, prompt-tune) need --force; a file in the way is a
one-line error naming it."""

import importlib.util

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.cli.main import main
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index


@pytest.fixture
def db(tmp_path, corpus):
    db = tmp_path / "i.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    return db


@pytest.fixture
def fake_model(monkeypatch):
    import slmgraph.model.backend

    monkeypatch.setattr(slmgraph.model.backend, "load_model", lambda *a, **k: FakeModel())


def _commands(db, corpus, out):
    """Each command with ``out`` (a folder) as where it writes; the file it writes there."""
    cmds = {"init": (["init", str(out)], out / "slmgraph.toml"),
            "export": (["export", "--db", str(db), "--format", "graphml", "--out", str(out)], out / "graph.graphml"),
            "prompt-tune": (["prompt-tune", str(corpus), "--out", str(out)], out / "extract_system.txt")}
    if importlib.util.find_spec("matplotlib") and importlib.util.find_spec("plotly"):
        cmds["picture"] = (["picture", "--db", str(db), "--out", str(out / "index.html")], out / "index.html")
    return cmds


def test_every_command_creates_a_missing_output_folder_with_its_parents(db, corpus, tmp_path, fake_model, capsys):
    for name in _commands(db, corpus, tmp_path):
        argv, written = _commands(db, corpus, tmp_path / name / "a" / "b")[name]
        assert main(argv) == 0, (name, capsys.readouterr().err)
        assert written.is_file(), name


def test_generated_files_are_overwritten_edited_files_need_force(db, corpus, tmp_path, fake_model, capsys):
    for name in _commands(db, corpus, tmp_path):
        out = tmp_path / name
        argv, written = _commands(db, corpus, out)[name]
        assert main(argv) == 0, name
        written.write_text("edited by hand\n", encoding="utf-8")
        code = main(argv)
        err = capsys.readouterr().err
        if name in ("export", "picture"):  # generated from the index: refreshed
            assert code == 0 and "edited by hand" not in written.read_text(encoding="utf-8"), name
        else:  # meant to be edited: kept unless --force
            assert code == 2 and "--force" in err and str(out) in err, name
            assert written.read_text(encoding="utf-8") == "edited by hand\n", name
            assert main(argv + ["--force"]) == 0, name
            assert "edited by hand" not in written.read_text(encoding="utf-8"), name


def test_a_file_in_the_way_is_a_one_line_error_naming_it(db, corpus, tmp_path, fake_model, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    for name in _commands(db, corpus, tmp_path):
        argv, _ = _commands(db, corpus, blocker / "sub")[name]
        assert main(argv) == 2, name
        err = capsys.readouterr().err.strip()
        assert err.startswith("slmgraph: error: ") and str(blocker) in err and "\n" not in err, (name, err)
    assert blocker.read_text() == "x"
