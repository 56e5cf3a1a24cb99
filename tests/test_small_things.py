"""Issue 13 item 14: notes above progress bars, no "0report" bar, subcommand argument errors that name the
subcommand's --help, "1 core" in the singular, and llama.cpp's notices logged as errors kept off stderr."""

import sys

import pytest
from conftest import FakeEmbedder, FakeModel, fake_model_factory
from tqdm import tqdm

from slmgraph import cli
from slmgraph.config import Settings
from slmgraph.backend import keep_log_line as keep
from slmgraph.client import ModelClient
from slmgraph.pipeline import run_index
from slmgraph.prompting import Prompts
from slmgraph.reports import run_reports
from slmgraph.store import Store


def test_a_note_printed_while_a_bar_runs_gets_its_own_line(capsys):
    bar = tqdm(total=10, desc="extract", file=sys.stderr, mininterval=0)
    bar.update(3)
    cli._say(False)("extract: 2 worker processes x 1 llama.cpp thread on 2 cores")
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


def test_llama_cpp_notices_logged_as_errors_stay_off_stderr():
    swa = "llama_kv_cache_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/13194)\n"
    assert not keep(3, swa, verbose=False)          # the Gemma 3 notice, logged at GGML_LOG_LEVEL_ERROR
    assert not keep(5, "continued\n", verbose=False)  # its continuation follows it
    assert keep(3, "llama_model_load: error loading model\n", verbose=False)  # real errors still shown
    assert keep(5, "more of the error\n", verbose=False)
    assert not keep(2, "llama_context: n_ctx = 512\n", verbose=False)
    assert keep(2, "llama_context: n_ctx = 512\n", verbose=True)


@pytest.mark.integration
def test_loading_the_base_gemma_model_prints_no_llama_cpp_line():
    import subprocess

    from slmgraph.models import find_gemma_model

    try:
        path = find_gemma_model()
    except Exception as exc:  # noqa: BLE001 - the bench extra is not installed
        pytest.skip(f"Gemma 3 270M not installed ({exc})")
    code = ("from slmgraph.backend import install_log_filter; install_log_filter()\n"
            "from slmgraph.backend import LlamaModel\n"
            f"LlamaModel({str(path)!r}, n_ctx=512, n_threads=1)\n")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stderr
    assert "llama_" not in err and "SWA" not in err, err


def test_a_basic_answer_does_not_leak_passage_labels(tmp_path, corpus):
    from conftest import default_script, stage_of

    from slmgraph.search.basic_search import basic_search

    db = tmp_path / "x.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)

    def script(system, user, schema):
        if stage_of(schema, system) == "answer":
            return "Passage 4: Alice Smith founded Acme Corporation [Sources: 1]. Passage 2:\nIt is in Paris."
        return default_script(system, user, schema)

    store = Store(db, read_only=True)
    ans = basic_search(store, ModelClient(FakeModel(script), store, "q"), Prompts(), Settings(answers="model"),
                       "Who founded Acme Corporation?", FakeEmbedder())  # the model writes the whole answer
    store.close()
    assert "Passage" not in ans.text.split("\n\nSources:")[0]
    assert ans.text.startswith("Alice Smith founded Acme Corporation [Sources: 1].")
