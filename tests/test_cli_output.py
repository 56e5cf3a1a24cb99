"""The CLI's terminal output: notes above progress bars, no empty report bar, argument errors that name the
subcommand's --help, "1 core" in the singular."""

import json
import sys
from pathlib import Path

import pytest
from conftest import FakeEmbedder, FakeModel, fake_model_factory
from tqdm import tqdm

from slmgraph.cli import main as cli
from slmgraph.cli.commands import say_unless
from slmgraph.model.client import ModelClient
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.reports import run_reports
from slmgraph.store.db import Store


def test_a_note_printed_while_a_bar_runs_gets_its_own_line(capsys):
    bar = tqdm(total=10, desc="extract", file=sys.stderr, mininterval=0)
    bar.update(3)
    say_unless(False)("extract: 2 worker processes x 1 llama.cpp thread on 2 cores")
    bar.close()
    err = capsys.readouterr().err
    line = next(x for x in err.split("\n") if "worker processes" in x)
    assert line.split("\r")[-1] == "extract: 2 worker processes x 1 llama.cpp thread on 2 cores"


def test_no_report_bar_on_an_index_without_communities(tmp_path, capsys):
    store = Store(tmp_path / "x.duckdb", create=True)
    r = run_reports(store, ModelClient(FakeModel(), store, "r"), Prompts(), Settings(), progress=True)
    store.close()
    assert r.reports == 0
    assert "0report" not in capsys.readouterr().err


@pytest.mark.parametrize("argv,helps", [
    (["stats", "--db", "x.duckdb", "--foo"], "slmgraph stats --help"),
    (["query", "q", "--db", "x.duckdb", "--bar", "3"], "slmgraph query --help"),
    (["index", "in", "--db", "x.duckdb", "--nope"], "slmgraph index --help"),
])
def test_unknown_arguments_point_to_the_subcommands_help(capsys, argv, helps):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"(see '{helps}')" in err and len(err.strip().splitlines()) == 1


def test_one_core_is_singular(tmp_path, corpus):
    notes = []
    run_index(corpus, tmp_path / "x.duckdb", Settings(min_community_size=2, workers=2, n_threads=1, descriptions="model"), progress=False,
              model=FakeModel(), embedder_factory=FakeEmbedder, say=notes.append, model_factory=fake_model_factory)
    line = next(n for n in notes if "worker processes" in n)
    assert line.endswith("on 1 core")


@pytest.mark.parametrize("argv,code,says", [
    (["query", "--db", "x.duckdb", "--json", ""], 2, "the question is empty"),
    (["query", "--db", "x.duckdb", "--json", "   ?"], 2, "the question '?' has no words"),
    (["query", "--db", "missing.duckdb", "--json", "what?"], 2, "does not exist"),
    (["query", "--db", "x.duckdb", "--json", "--method", "bogus", "what?"], 2, "invalid choice: 'bogus'"),
    (["stats", "--db", "missing.duckdb", "--json"], 2, "does not exist"),
    (["query", "--db", "x.duckdb", "--json", "What about caf\udce9?"], 2, "not UTF-8 text"),
])
def test_with_json_an_error_is_a_json_object_on_stdout_too(tmp_path, monkeypatch, capsys, argv, code, says):
    monkeypatch.chdir(tmp_path)

    def run(args):
        try:
            return cli.main(args)
        except SystemExit as exc:
            return exc.code

    assert run(argv) == code
    out, err = capsys.readouterr()
    assert says in json.loads(out)["error"]
    assert err.startswith("slmgraph: error: ") and says in err and len(err.strip().splitlines()) == 1
    # without --json the error is the one line on standard error only, with the same status
    assert run([a for a in argv if a != "--json"]) == code
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("how", ["argument", "stdin"])
def test_a_question_of_bytes_that_are_not_utf8_is_one_error_line(tmp_path, how):
    import os
    import subprocess

    raw = b"What about caf\xe9?"
    argv = [sys.executable, "-m", "slmgraph.cli", "query", "--db", str(tmp_path / "x.duckdb"), "--json",
            raw if how == "argument" else "-"]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    r = subprocess.run(argv, input=raw if how == "stdin" else b"", capture_output=True, env=env, timeout=300)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 2 and "Traceback" not in err, err
    assert "not UTF-8 text" in json.loads(r.stdout)["error"]
    assert len(err.strip().splitlines()) == 1

