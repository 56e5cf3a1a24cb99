"""The Python API: slmgraph.index / slmgraph.open, the same functions the CLI uses."""

import pytest
from conftest import FakeEmbedder, FakeModel

import slmgraph
from slmgraph.errors import UserError
from slmgraph.query.answer import Answer


@pytest.fixture
def index_db(tmp_path, corpus):
    db = tmp_path / "i.duckdb"
    out = slmgraph.index(corpus, db, model=FakeModel(), embedder_factory=FakeEmbedder, min_community_size=2,
                         max_gleanings=0)
    assert out["ingest"]["documents"] == 3
    return db


def test_index_open_query_stats_export(index_db, tmp_path):
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        a = ix.query("Who founded Acme Corporation?", method="basic")
        assert isinstance(a, Answer) and a.method == "basic" and a.text.strip()
        assert a.context and a.seconds >= 0
        assert a.model_calls == 0 and a.prompt_tokens == 0  # extractive, no opening sentence under 1B (auto)
        assert set(a.citations) and all(isinstance(v, list) for v in a.citations.values())
        g = ix.query("What are the main themes?", level=0)
        assert g.method == "global" and g.level == 0
        auto = ix.query("What are the main themes across these documents?", method="auto")
        assert auto.details["route"]["chose"] in ("global", "local")
        st = ix.stats()
        assert st["tables"]["entities"] > 0
        assert st["settings"]["min_community_size"] == {"value": 2, "source": "argument"}
        files = ix.export(tmp_path / "out", format="csv")
        assert {f.name for f in files} >= {"entities.csv", "community_reports.csv"}
    with pytest.raises(Exception):
        ix.store.con.execute("SELECT 1")  # closed by the context manager


def test_api_mistakes_raise_user_errors(index_db, tmp_path, corpus):
    with pytest.raises(UserError, match="unknown setting 'chunksize'"):
        slmgraph.index(corpus, tmp_path / "j.duckdb", model=FakeModel(), chunksize=300)
    with pytest.raises(UserError, match="chunk_size"):
        slmgraph.index(corpus, tmp_path / "j.duckdb", model=FakeModel(), chunk_size="big")
    assert not (tmp_path / "j.duckdb").exists()
    with pytest.raises(UserError, match="does not exist"):
        slmgraph.open(tmp_path / "none.duckdb")
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        with pytest.raises(UserError, match="level 9"):
            ix.query("themes?", level=9)
        with pytest.raises(UserError, match="method 'vector'"):
            ix.query("themes?", method="vector")
        with pytest.raises(UserError, match="question is empty"):
            ix.query("  ")
        with pytest.raises(UserError, match="has no words"):
            ix.query("   ?")


def test_question_not_text_and_level_as_string(index_db):
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        with pytest.raises(UserError, match="question is not text .*pass a question string"):
            ix.query(None)
        with pytest.raises(UserError, match="question is not text"):
            ix.query(b"themes?")
        a = ix.query("What are the main themes?", level="0")
        assert a.level == 0
        assert len(ix.reports(level="0")) and ix.browse_reports(level="0")
        with pytest.raises(UserError, match="level must be an integer, got 'one'"):
            ix.query("themes?", level="one")
        with pytest.raises(UserError, match="level must be an integer, got 1.5"):
            ix.query("themes?", level=1.5)
        with pytest.raises(UserError, match="level 9 is not in index"):
            ix.query("themes?", level="9")


def test_keyword_arguments_override_the_settings_file(tmp_path, corpus):
    cfg = tmp_path / "s.toml"
    cfg.write_text("chunk_size = 300\nseed = 7\n")
    s, src = slmgraph.settings_for(cfg, seed=9)
    assert s.chunk_size == 300 and src["chunk_size"] == f"file {cfg.resolve()}"
    assert s.seed == 9 and src["seed"] == "argument"
    assert src["n_ctx"] == "default"


def test_readme_python_example_runs_with_the_fake_model(tmp_path, corpus, monkeypatch):
    """The README's "Python API" example, run as written with the bundled model swapped for the fake."""
    import re
    from pathlib import Path

    import slmgraph.api
    import slmgraph.indexing.stages.embed
    import slmgraph.indexing.pipeline

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    code = re.search(r"## Python API.*?```python\n(.+?)\n```", text, re.S).group(1)
    monkeypatch.setattr(slmgraph.indexing.pipeline, "load_model", lambda *a, **k: FakeModel())
    monkeypatch.setattr(slmgraph.indexing.stages.embed, "Embedder", lambda *a, **k: FakeEmbedder())
    monkeypatch.setattr("slmgraph.query.question_embed.question_embedder", lambda *a, **k: FakeEmbedder())
    import slmgraph.model.backend

    monkeypatch.setattr(slmgraph.model.backend, "load_model", lambda *a, **k: FakeModel())
    (tmp_path / "notes").symlink_to(corpus, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "notes.duckdb").is_file()
    assert (tmp_path / "export" / "graph.graphml").is_file()


@pytest.mark.parametrize("bad, match", [
    ({"n_ctx": 1024}, "n_ctx"), ({"chunk_size": 10}, "chunk_size"), ({"chunk_size": 2000, "n_ctx": 4096}, "chunk_size"),
    ({"chunk_overlap": 600}, "chunk_overlap"), ({"n_threads": 0}, "n_threads"), ({"workers": 0}, "workers"),
    ({"max_candidates": 0}, "max_candidates"), ({"max_gleanings": -1}, "max_gleanings"),
    ({"resolution_threshold": 1.5}, "resolution_threshold"), ({"entity_types": ["no!"]}, "entity_types"),
    ({"choices": "keep,guess"}, "choices"), ({"ray_address": "10.0.0.1:6379"}, "ray_address"),
    ({"reports": "always"}, "reports"), ({"local_context_tokens": 50}, "local_context_tokens"),
    ({"lazy_budget": 0}, "lazy_budget"), ({"local_shares": (0, 0, 0, 0)}, "local_shares"),
])
def test_python_callers_get_the_cli_checks(tmp_path, corpus, bad, match):
    """Every value the CLI refuses is refused for slmgraph.index(...) too, before the index is created."""
    with pytest.raises(UserError, match=match):
        slmgraph.index(corpus, tmp_path / "bad.duckdb", model=FakeModel(), **bad)
    assert not (tmp_path / "bad.duckdb").exists()


# ---- one query front door, read-only readers, tables as DataFrames, insert ----

def test_a_second_process_queries_while_a_script_holds_the_index_open(index_db):
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    code = ("import sys; sys.path.insert(0, sys.argv[2]); from conftest import FakeEmbedder, FakeModel; import slmgraph\n"
            "with slmgraph.open(sys.argv[1], model=FakeModel(), embedder_factory=FakeEmbedder) as ix:\n"
            "    print(ix.query('Who founded Acme Corporation?', method='basic').method)")
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        assert ix.query("Who founded Acme Corporation?", method="basic").text
        run = subprocess.run([sys.executable, "-c", code, str(index_db), str(tests)], capture_output=True, text=True,
                             timeout=300, cwd=tests.parent)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip().splitlines()[-1] == "basic"


def test_the_api_refuses_what_the_cli_refuses_before_any_model_call(index_db):
    model = FakeModel(n_ctx_train=8192)
    with slmgraph.open(index_db, model=model, embedder_factory=FakeEmbedder) as ix:
        with pytest.raises(UserError, match="the question is 2000 tokens long; at most 1024"):
            ix.query(" ".join(f"w{i}" for i in range(2000)), method="basic")
        with pytest.raises(UserError, match="method 'vector'"):
            ix.query("themes?", method="vector")
        ix.store.con  # still open after refusals
    assert not model.calls


def test_the_cli_query_goes_through_the_api(index_db, capsys, monkeypatch):
    from slmgraph.api import Index
    from slmgraph.cli.main import main

    seen = []
    real = Index.check_question

    def spy(self, question, method="global", level=None):
        seen.append((method, level))
        return real(self, question, method, level)

    monkeypatch.setattr(Index, "check_question", spy)
    monkeypatch.setattr("slmgraph.model.backend.load_model", lambda *a, **k: FakeModel())
    monkeypatch.setattr("slmgraph.query.question_embed.question_embedder", lambda *a, **k: FakeEmbedder())
    assert main(["query", "--db", str(index_db), "--method", "basic", "--quiet", "Who founded Acme?"]) == 0
    assert main(["query", "--db", str(index_db), "--level", "9", "themes?"]) == 2
    assert seen == [("basic", None), ("global", 9)]
    assert "level 9 is not in index" in capsys.readouterr().err


def test_tables_as_dataframes_and_points_with_documents(index_db):
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        ents, rels = ix.entities(), ix.relationships()
        assert len(ents) == ix.store.count("entities") and {"title", "type", "description"} <= set(ents.columns)
        assert len(rels) == ix.store.count("relationships") and {"source", "target", "weight"} <= set(rels.columns)
        assert "Acme Corporation" in set(ents["title"])
        docs, units = ix.documents(), ix.text_units()
        assert len(docs) == 3 and len(units) == ix.store.count("text_units")
        assert set(units["human_readable_id"]) == {r[0] for r in ix.store.con.execute(
            "SELECT unit_no FROM text_units").fetchall()}
        reps = ix.reports(level=0)
        assert len(reps) and set(reps["level"]) == {0}
        with pytest.raises(UserError, match="level 9"):
            ix.reports(level=9)
        a = ix.query("Who founded Acme Corporation?", method="basic")
        assert a.points and all(p["sources"] and p["documents"] for p in a.points)
        assert {d["doc_id"] for p in a.points for d in p["documents"]} <= set(docs["id"])


def test_dataframes_without_pandas_give_one_line(index_db, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        with pytest.raises(UserError, match=r"pip install 'slmgraph\[frames\]'"):
            ix.entities()


def test_insert_indexes_more_text_incrementally(index_db, corpus):
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        before = ix.store.count("text_units")
        out = ix.insert(["Quentin Marsh founded Zorblax Industries in Oslo. Quentin Marsh sold Zorblax Industries."])
        assert len(out["inserted"]) == 1 and (corpus / "slmgraph-inserted").is_dir()
        assert len(ix.documents()) == 4 and ix.store.count("text_units") == before + 1
        assert out["extract"]["reused"] >= before  # the old text units keep their extraction
        assert any("Zorblax" in t for t in ix.entities()["title"])
        assert ix.query("Who founded Zorblax Industries?", method="basic").text
        with pytest.raises(UserError, match="non-empty strings"):
            ix.insert(["  "])


def test_query_takes_the_per_query_options_of_slmgraph_query(index_db):
    import inspect

    from slmgraph.cli.parser import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    flags = {a.dest for a in sub.choices["query"]._actions} - {
        "help", "question", "question_file", "db", "config", "model", "threads", "seed", "prompts", "quiet", "wait", "json",
        "n_ctx"}  # the model, the file and the output are the index's (slmgraph.open) or the CLI's own
    assert flags <= set(inspect.signature(slmgraph.api.Index.query).parameters), flags
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        a = ix.query("What are the main themes across these documents?", method="lazy", budget=1)
        assert a.details["budget"] == 1 and a.details["tests_used"] <= 1
        assert ix.query("What are the main themes across these documents?", method="lazy").details["budget"] == 100
        assert ix.settings.lazy_budget == 100  # an option is for its question only
        for bad, match in (({"budget": 0}, "budget=0.*at least 1"), ({"budget": "7"}, "budget='7'.*whole number"),
                           ({"depth": 0}, "depth=0"), ({"followups": -1}, "followups=-1"),
                           ({"answers": "poem"}, "answers='poem'.*extractive"),
                           ({"local_shares": (0, 0, 0, 0)}, "local_shares"),
                           ({"local_tokens": 10**6}, r"local_tokens=1000000\) does not fit"),
                           ({"local_tokens": 100}, "at least 200"),
                           ({"lvl": 1}, r"unknown option 'lvl' \(did you mean level\?\)")):
            with pytest.raises(UserError, match=match):
                ix.query("Who founded Acme?", method="basic", **bad)
        b = ix.query("Who founded Acme Corporation?", method="basic", answers="extractive", opening="off",
                     helpfulness="embedding", local_tokens=1000, local_shares=(0.1, 0.2, 0.2, 0.5))
        assert b.text.strip()


@pytest.mark.parametrize("call, value", [
    ("unit_documents", ["x"]), ("unit_documents", [None]), ("unit_documents", [1.5]), ("unit_documents", None),
    ("unit_documents", "x"), ("report_titles", ["x"]), ("report_titles", 1.5), ("report_titles", None),
    ("browse_entities", None), ("browse_entities", 3), ("browse_entities", ["Acme"])])
def test_bad_ids_and_queries_give_one_line_naming_the_value(index_db, call, value):
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        with pytest.raises(UserError) as err:
            getattr(ix, call)(value)
    msg = str(err.value)
    assert "\n" not in msg and repr(value if not isinstance(value, list) else value[0]) in msg


def test_unit_documents_takes_numbers_as_ints_strings_or_one_number(index_db):
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        both = ix.unit_documents([1, "2"])
        assert set(both) == {1, 2} and ix.unit_documents(1) == {1: both[1]}


def test_a_closed_index_says_so_in_one_user_error(index_db):
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        pass
    for call in (lambda: ix.query("Who founded Acme Corporation?", method="basic"), ix.stats, ix.levels,
                 ix.entities):
        with pytest.raises(UserError, match="is closed.*slmgraph.open"):
            call()
    ix.close()  # closing again is harmless


# ---- bad input anywhere in the API is one UserError line, never a raw TypeError/AttributeError/duckdb error ----

@pytest.mark.parametrize("call", [
    lambda db, corpus, tmp: slmgraph.open(None),
    lambda db, corpus, tmp: slmgraph.open(5),
    lambda db, corpus, tmp: slmgraph.open(db, wait="soon"),
    lambda db, corpus, tmp: slmgraph.open(db, wait=-1),
    lambda db, corpus, tmp: slmgraph.index(None, tmp / "n.duckdb", model=FakeModel()),
    lambda db, corpus, tmp: slmgraph.index(corpus, None, model=FakeModel()),
    lambda db, corpus, tmp: slmgraph.index(corpus, 7, model=FakeModel()),
], ids=["open None", "open int", "open wait text", "open wait negative", "index input None", "index db None",
        "index db int"])
def test_paths_and_waits_of_the_wrong_type_are_user_errors(index_db, corpus, tmp_path, call):
    with pytest.raises(UserError) as err:
        call(index_db, corpus, tmp_path)
    msg = str(err.value)
    assert "\n" not in msg and ("path" in msg or "wait" in msg), msg
    assert not (tmp_path / "n.duckdb").exists()


def test_bad_arguments_to_an_open_index_are_user_errors(index_db, tmp_path):
    from slmgraph.api import answer

    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        client, prompts = ix._client_for_query()
        for call, match in (
                (lambda: answer(ix.store, client, prompts, ix.settings, None), "question is not text"),
                (lambda: ix.text_unit(1, support=5), "support must be text, got 5"),
                (lambda: ix.citation("sources", 1, support=["Acme"]), r"support must be text, got \['Acme'\]"),
                (lambda: ix.insert(None), "pass one or more non-empty strings"),
                (lambda: ix.insert(5), "pass one or more non-empty strings"),
                (lambda: ix.export(None), "path"),
                (lambda: ix.export(3, format="csv"), "path")):
            with pytest.raises(UserError, match=match) as err:
                call()
            assert "\n" not in str(err.value)
        assert ix.text_unit(1, support=None)["text"]  # no support: nothing to mark, as before


@pytest.mark.parametrize("table", ["entities", "embeddings", "community_reports"])
def test_an_index_missing_a_table_is_refused_at_open_in_one_line(index_db, table):
    import duckdb

    con = duckdb.connect(str(index_db))
    con.execute(f"DROP TABLE {table} CASCADE")
    con.close()
    with pytest.raises(UserError, match=f"index .* has no {table} table: .*index its input again") as err:
        slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("method", ["basic", "global", "local"])
def test_a_question_in_another_language_is_refused_saying_why(index_db, method):
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        es = ix.query("¿Cuáles son los temas principales?", method=method)
        de = ix.query("Was sind die wichtigsten Themen?", method=method)
        # a foreign question naming what the index holds, and an English one it holds nothing of: no such line
        named = ix.query("¿Quién fundó Acme Corporation?", method=method)
        off = ix.query("What are the rules of cricket?", method=method)
    line = "The indexed documents are in English and the question seems to be in {}: none of its words occur"
    assert line.format("Spanish") in es.text and es.text.count("\n" + line.format("Spanish")) == 1
    assert line.format("German") in de.text and de.details["language_note"].startswith(line.format("German"))
    assert "language_note" not in named.details and "language_note" not in off.details
    assert "seems to be in" not in named.text + off.text


def test_stopword_language_needs_two_stop_words_of_one_language():
    from slmgraph.text.language import stopword_language

    assert stopword_language("Quels sont les thèmes principaux ?") == "fr"
    assert stopword_language("What did the committee decide about the water fund?") == "en"
    assert stopword_language("Die Hard trivia?") is None and stopword_language("Margaret Oduya") is None


@pytest.mark.parametrize("question,lang", [("这个实验室研究什么？", "Chinese"), ("この研究室は何を研究していますか？", "Japanese"),
                                           ("이 연구실은 무엇을 연구합니까?", "Korean")])
def test_a_question_in_cjk_script_gets_the_language_line(question, lang):
    from slmgraph.text.language import foreign_question_note

    sample = "The lab studies how soil microbes recover after flooding. Luis Ferreira is the lab manager."
    seen = []
    note = foreign_question_note(question, sample, lambda w: seen.append(w) or False)
    assert note == (f"The indexed documents are in English and the question seems to be in {lang}: none of its "
                    "words occur in them; ask in English.")
    assert seen and all(w in question for w in seen)
    # a name the index holds, written in Latin letters against the CJK ones, is a word of its own
    assert foreign_question_note("Luis Ferreira是做什么工作的人？", sample, lambda w: w == "ferreira") is None
    assert foreign_question_note("实验室研究土壤微生物。", "这个实验室研究什么？", lambda w: False) is None  # same script


def test_a_cjk_question_the_index_cannot_answer_is_refused_saying_why(index_db):
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        ans = ix.query("이 연구실은 무엇을 연구합니까?", method="basic")
    assert ans.details["refused"] and ans.details["language_note"].endswith("seems to be in Korean: none of its "
                                                                             "words occur in them; ask in English.")


def test_the_language_note_reads_no_documents_for_a_question_of_no_known_language(monkeypatch):
    from slmgraph import api

    class Store:  # any read of the index fails the test
        @property
        def con(self):
            raise AssertionError("the index was read")

    assert api._language_note(Store(), "Margaret Oduya?") is None


def test_global_search_refusing_a_question_about_one_entity_names_local_search(index_db):
    hint = ("The question names 'Eve Black', which the index holds: ask with --method local (or --method auto), "
            "which answers questions about one entity from its own text.")
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder, helpfulness_floor=99.0) as ix:
        who = ix.query("Who is Eve Black?", method="global")
        themes = ix.query("What are the main themes of quantum physics?", method="global")  # no name: no hint
        auto = ix.query("Who is Eve Black?", method="auto")  # auto routes it already
    assert who.details["method_hint"] == hint and who.text.endswith("\n" + hint)
    assert "method_hint" not in themes.details and "--method local" not in themes.text
    assert "method_hint" not in auto.details
