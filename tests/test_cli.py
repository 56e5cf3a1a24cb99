"""The command line: one-line errors with exit status 2 for user mistakes."""

import duckdb
import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.cli.main import main
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _fake_index(corpus, db):
    """Index ``corpus`` into ``db`` with the scripted fake model (no GGUF, no torch)."""
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)


def _one_line_error(err: str, *words):
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("slmgraph: error: ")
    assert "Traceback" not in err
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_empty_folder(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, _, err = _run(capsys, "index", str(tmp_path / "empty"), "--db", str(tmp_path / "x.duckdb"), "--quiet")
    assert code == 2
    _one_line_error(err, "no readable .txt or .md files", "empty")
    assert not (tmp_path / "x.duckdb").exists()


def test_missing_model_file(tmp_path, corpus, capsys):
    code, _, err = _run(capsys, "index", str(corpus), "--db", str(tmp_path / "x.duckdb"), "--model",
                        str(tmp_path / "nope.gguf"), "--quiet")
    assert code == 2
    _one_line_error(err, "nope.gguf", "--model")


def test_model_file_that_is_not_gguf(tmp_path, corpus, capsys):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model")
    code, _, err = _run(capsys, "index", str(corpus), "--db", str(tmp_path / "x.duckdb"), "--model", str(bad), "--quiet")
    assert code == 2
    _one_line_error(err, "not a GGUF file")


def test_db_that_is_not_a_slmgraph_index(tmp_path, capsys):
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE t (x INT)")
    con.close()
    code, _, err = _run(capsys, "stats", "--db", str(other))
    assert code == 2
    _one_line_error(err, "not a slmgraph index")
    code, _, err = _run(capsys, "query", "--db", str(other), "what?")
    assert code == 2
    _one_line_error(err, "not a slmgraph index")


def test_db_that_is_not_a_duckdb_file(tmp_path, capsys):
    junk = tmp_path / "notes.txt"
    junk.write_text("hello")
    code, _, err = _run(capsys, "stats", "--db", str(junk))
    assert code == 2
    _one_line_error(err, "not a DuckDB file")


def test_missing_db(tmp_path, capsys):
    code, _, err = _run(capsys, "query", "--db", str(tmp_path / "none.duckdb"), "what?")
    assert code == 2
    _one_line_error(err, "does not exist", "slmgraph index")


@pytest.mark.parametrize("args,words", [
    (["--chunk-size", "10"], ["--chunk-size"]),
    (["--chunk-overlap", "700"], ["--chunk-overlap"]),
    (["--threads", "0"], ["--threads"]),
    (["--n-ctx", "512"], ["--n-ctx"]),
    (["--entity-types", " , "], ["--entity-types"]),
    (["--resolution", "high"], ["--resolution", "'off'"]),
    (["--resolution", "1.5"], ["--resolution"]),
    (["--gleanings", "-1"], ["--gleanings"]),
    (["--workers", "0"], ["--workers"]),
])
def test_bad_settings(tmp_path, corpus, capsys, args, words):
    code, _, err = _run(capsys, "index", str(corpus), "--db", str(tmp_path / "x.duckdb"), "--quiet", *args)
    assert code == 2
    _one_line_error(err, *words)


def test_a_chunk_size_below_the_default_overlap_names_the_default_and_the_remedy(tmp_path, corpus, capsys):
    code, _, err = _run(capsys, "index", str(corpus), "--db", str(tmp_path / "x.duckdb"), "--quiet",
                        "--chunk-size", "100", "--chunk-overlap", "100")
    assert code == 2
    _one_line_error(err, "--chunk-overlap 100 must be", "--chunk-size 100", "pass --chunk-overlap 10")
    overlap = Settings().chunk_overlap
    code, _, err = _run(capsys, "index", str(corpus), "--db", str(tmp_path / "x.duckdb"), "--quiet",
                        "--chunk-size", str(max(50, overlap)))
    assert code == 2
    _one_line_error(err, f"--chunk-overlap {overlap} (the default)", "pass --chunk-overlap")


def test_stats_on_an_index_and_a_missing_query_model(tmp_path, corpus, capsys):
    db = tmp_path / "idx.duckdb"
    _fake_index(corpus, db)
    code, out, _ = _run(capsys, "stats", "--db", str(db))
    assert code == 0
    for word in ("documents", "community_reports", "level", "extract", "report", "wall-clock"):
        assert word in out
    code, out, _ = _run(capsys, "stats", "--db", str(db), "--json")
    import json
    figs = json.loads(out)
    assert figs["tables"]["documents"] == 3 and figs["levels"][0]["level"] == 0
    # the index was built by a fake model with no file: query needs --model
    code, _, err = _run(capsys, "query", "--db", str(db), "--model", str(tmp_path / "missing.gguf"), "q")
    assert code == 2
    _one_line_error(err, "missing.gguf")


def test_incomplete_index_is_refused(tmp_path, corpus, capsys):
    # An index no build ever finished (no build_key); an interrupted update is read: test_interrupted_update.py.
    db = tmp_path / "idx.duckdb"
    _fake_index(corpus, db)
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = '0' WHERE key = 'complete'")
    con.execute("DELETE FROM meta WHERE key = 'build_key'")
    con.close()
    code, _, err = _run(capsys, "query", "--db", str(db), "q")
    assert code == 2
    _one_line_error(err, "not complete")


def _argparse_run(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


@pytest.mark.parametrize("argv,words", [
    (["index", "x", "--db", "d.duckdb", "--summaries", "foo"], ["--summaries", "slmgraph index --help"]),
    (["index", "x", "--db", "d.duckdb", "--workers", "1.5"], ["--workers"]),
    (["query", "q", "--db", "d.duckdb", "--method", "foo"], ["--method"]),
    (["nosuchcommand"], ["nosuchcommand"]),
])
def test_argparse_mistakes_are_one_line(capsys, argv, words):
    code, _, err = _argparse_run(capsys, *argv)
    assert code == 2 and "usage:" not in err
    _one_line_error(err, *words)


def test_checks_that_come_before_the_model_load(tmp_path, corpus, capsys):
    missing_model = str(tmp_path / "missing.gguf")
    # --db problems are reported even though the model is also missing: the db is checked first
    code, _, err = _run(capsys, "index", str(corpus), "--db", str(tmp_path), "--model", missing_model)
    assert code == 2
    _one_line_error(err, "is a folder")
    # estimate: a bad input folder before the model
    code, _, err = _run(capsys, "estimate", str(tmp_path / "nope"), "--model", missing_model)
    assert code == 2
    _one_line_error(err, "does not exist")
    # a broken user prompt template is found at start-up, not hours into a run
    bad = tmp_path / "prompts"
    bad.mkdir()
    (bad / "report_user.txt").write_text("Write a report.\n", encoding="utf-8")
    code, _, err = _run(capsys, "index", str(corpus), "--db", str(tmp_path / "i.duckdb"), "--prompts", str(bad),
                        "--model", missing_model)
    assert code == 2
    _one_line_error(err, "report_user.txt", "$context")


@pytest.mark.parametrize("flag", ["--model", "--prompts"])
def test_empty_path_options_are_refused(tmp_path, corpus, capsys, flag):
    code, _, err = _run(capsys, "index", str(corpus), "--db", str(tmp_path / "i.duckdb"), flag, "")
    assert code == 2
    _one_line_error(err, flag, "empty")


def test_when_every_file_is_skipped_the_error_says_why(tmp_path, capsys):
    d = tmp_path / "latin"
    d.mkdir()
    (d / "a.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    code, _, err = _run(capsys, "index", str(d), "--db", str(tmp_path / "i.duckdb"), "--quiet")
    assert code == 2
    _one_line_error(err, "not UTF-8", "iconv")


def test_symlinked_folders_are_followed_once(tmp_path):
    from slmgraph.indexing.stages.ingest_read import read_documents

    real = tmp_path / "real"
    real.mkdir()
    (real / "a.txt").write_text("Alice Smith met Bob Jones.", encoding="utf-8")
    top = tmp_path / "top"
    top.mkdir()
    (top / "link").symlink_to(real, target_is_directory=True)
    (real / "loop").symlink_to(top, target_is_directory=True)  # a cycle must not loop forever
    docs, warnings = read_documents(top, follow_links=True)
    assert [d.path for d in docs] == ["link/a.txt"]
    assert len(warnings) == 1 and "link/loop" in warnings[0] and "symbolic link loop" in warnings[0]


def test_demo_refuses_to_overwrite_an_index_of_other_input(tmp_path, corpus, capsys):
    db = tmp_path / "mine.duckdb"
    _fake_index(corpus, db)
    code, _, err = _run(capsys, "demo", "--db", str(db), "--model", str(tmp_path / "missing.gguf"))
    assert code == 2
    _one_line_error(err, "demo would replace it")


def test_stats_on_an_older_index_opened_read_only(tmp_path, corpus, capsys):
    db = tmp_path / "old.duckdb"
    _fake_index(corpus, db)
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE extractions DROP COLUMN n_ungrounded")
    con.execute("ALTER TABLE extractions DROP COLUMN gleanings")
    con.close()
    code, out, err = _run(capsys, "stats", "--db", str(db))
    assert code == 0 and "Traceback" not in err
    assert "grounding: not recorded" in out


def test_entity_types_are_deduplicated_and_shares_must_be_finite():
    from slmgraph.cli.flags import settings_from_args as _settings
    from slmgraph.cli.parser import build_parser
    from slmgraph.errors import UserError

    s = _settings(build_parser().parse_args(["index", "in", "--db", "x", "--entity-types", "person,,PERSON, place"]))
    assert s.entity_types == ("person", "place")
    with pytest.raises(UserError, match="--local-shares"):
        _settings(build_parser().parse_args(["query", "q", "--db", "x", "--local-shares", "nan,1,1,1"]))
    with pytest.raises(UserError, match="--n-ctx 0"):
        _settings(build_parser().parse_args(["index", "in", "--db", "x", "--n-ctx", "0"]))


@pytest.mark.parametrize("value", ["-0.5", "inf", "nan"])
def test_a_negative_or_infinite_report_budget_is_one_line_error(tmp_path, capsys, value):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("Alice Smith met Bob Jones in Paris.\n", encoding="utf-8")
    code, _, err = _run(capsys, "index", str(tmp_path / "c"), "--db", str(tmp_path / "x.duckdb"), "--quiet",
                        "--report-budget", value)
    assert code == 2
    _one_line_error(err, "--report-budget", value)
    assert not (tmp_path / "x.duckdb").exists()


def test_python_dash_m_slmgraph_cli_runs_the_entry_point(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, "-m", "slmgraph.cli", "query", "--db", str(tmp_path / "none.duckdb"), "x"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().startswith("slmgraph: error: "), r.stderr
    assert "Traceback" not in r.stderr


def test_index_of_a_missing_input_into_an_existing_index_says_the_input_is_missing(tmp_path, corpus, capsys):
    db = tmp_path / "mine.duckdb"
    _fake_index(corpus, db)
    code, _, err = _run(capsys, "index", str(tmp_path / "nosuch"), "--db", str(db))
    assert code == 2
    _one_line_error(err, "does not exist")
    assert "--replace" not in err  # no destructive remedy for a mistyped path
