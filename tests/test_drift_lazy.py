"""DRIFT search, budgeted lazy search and index --no-reports, with the scripted fake model."""

import json
import re

import pytest
from conftest import FakeEmbedder, FakeModel, default_script

from slmgraph.cli.main import main
from slmgraph.model.client import ModelClient
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.query.answer import unit_numbers
from slmgraph.query.engines.drift_search import drift_search
from slmgraph.query.extractive import has_repetition
from slmgraph.query.engines.global_search import global_search
from slmgraph.query.engines.lazy_search import lazy_search
from slmgraph.query.route import route
from slmgraph.store.db import Store

ROCKETS = "Who built rockets at Acme Corporation with Alice Smith?"
OFF_TOPIC = "Knitting patterns for wool scarves?"  # the fake embedder scores it < 15 with every text unit


@pytest.fixture
def index(tmp_path, corpus):
    db = tmp_path / "idx.duckdb"
    s = Settings(min_community_size=2)
    run_index(corpus, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    return db, s


@pytest.fixture
def lazy_index(tmp_path, corpus):
    """--extractor nlp --no-reports: an index built without a single model call."""
    db = tmp_path / "lazy.duckdb"
    s = Settings(min_community_size=2, extractor="nlp", reports="none")
    out = run_index(corpus, db, s, progress=False, model=FakeModel(script=_no_call), embedder_factory=FakeEmbedder,
                    say=lambda m: None)
    return db, s, out


def _no_call(system, user, schema):
    raise AssertionError("no model call expected")


def _big(script=None, choice_script=None):
    m = FakeModel(script=script, choice_script=choice_script)
    m.n_params = 2_000_000_000
    return m


def _units(db) -> dict[int, str]:
    store = Store(db)
    try:
        num = unit_numbers(store)
        text = dict(store.con.execute("SELECT chunk_id, text FROM text_units").fetchall())
        return {n: text[c] for c, n in num.items()}
    finally:
        store.close()


# ---- lazy search ----

def test_lazy_answers_from_relevant_text_units_with_citations(index):
    db, s = index
    store = Store(db)
    ans = lazy_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, ROCKETS, FakeEmbedder())
    units = _units(db)
    assert ans.method == "lazy" and ans.citations["sources"]
    assert set(ans.citations["sources"]) <= set(units)
    # Every point is a sentence of the text unit it cites.
    for line in ans.text.split("\n"):
        m = re.match(r"- (.+) \[Sources: ([\d, ]+)\]$", line)
        if m:
            assert any(m.group(1) in " ".join(units[int(i)].split()) for i in m.group(2).split(", "))
    assert "rockets" in ans.text and not has_repetition(ans.text)
    d = ans.details
    assert 0 < d["tests_used"] <= d["budget"] == s.lazy_budget
    assert d["test_tokens_read"] == 0  # the embedding test reads stored vectors
    assert d["context_tokens"] == d["answer_context_tokens"] > 0
    assert d["tokens_spent"] == ans.prompt_tokens + ans.completion_tokens
    assert ans.model_calls <= 1  # at most the opening sentence
    store.close()


def test_lazy_stops_at_its_budget_and_deepens_into_passing_communities(index):
    db, s = index
    store = Store(db)
    client = ModelClient(FakeModel(), store, "q")
    small = lazy_search(store, client, Prompts(), s, ROCKETS, FakeEmbedder(), budget=1)
    assert small.details["tests_used"] == 1 and len(small.details["tested"]) == 1
    s.helpfulness_floor, s.helpfulness_relative = 1.0, 0.0
    full = lazy_search(store, client, Prompts(), s, ROCKETS, FakeEmbedder(), budget=100)
    levels = full.details["levels"]
    assert full.details["tests_used"] == store.count("text_units")  # a small corpus is tested whole
    assert len([lv for lv in levels if lv != "none"]) >= 2, levels  # passing communities were deepened into
    with pytest.raises(UserError, match="--budget"):
        lazy_search(store, client, Prompts(), s, ROCKETS, FakeEmbedder(), budget=0)
    store.close()


def test_lazy_off_topic_question_gets_the_no_answer_text_without_a_model_call(index):
    db, s = index
    store = Store(db)
    model = FakeModel(script=_no_call)
    ans = lazy_search(store, ModelClient(model, store, "q"), Prompts(), s, OFF_TOPIC, FakeEmbedder())
    assert "nothing relevant" in ans.text and ans.citations == {} and model.calls == []
    assert str(ans.details["tests_used"]) in ans.text
    store.close()


def test_lazy_answers_a_corpus_wide_question_the_floor_would_refuse(index):
    db, s = index
    s.helpfulness_floor, s.helpfulness_probes = 99.0, False  # every tested unit is under the floor
    store = Store(db)
    model = FakeModel(script=_no_call)
    refused = lazy_search(store, ModelClient(model, store, "q"), Prompts(), s, OFF_TOPIC, FakeEmbedder())
    assert "nothing relevant" in refused.text
    ans = lazy_search(store, ModelClient(model, store, "q"), Prompts(), s,
                      "What are the main themes of these documents?", FakeEmbedder())
    assert ans.details["corpus_wide_phrase"] and ans.citations and "nothing relevant" not in ans.text
    assert model.calls == []
    store.close()


def test_lazy_and_ts_spread_a_question_naming_the_notes_period_the_floor_would_refuse(index):
    """A new user's weekly notes: "the main themes across these weekly team notes" asks about the whole
    corpus (its period and team name no topic), so lazy and TS search answer it from text units spread across
    documents, however far every unit is from its wording; a question with a topic is still refused."""
    from slmgraph.query.engines.global_search import text_unit_search

    db, s = index
    s.helpfulness_floor, s.helpfulness_probes = 99.0, False  # every unit is under the floor
    store = Store(db)
    model = FakeModel(script=_no_call)
    client = ModelClient(model, store, "q")
    for q in ("What are the main themes across these weekly team notes?",
              "What were the main topics of the quarter?"):
        lazy = lazy_search(store, client, Prompts(), s, q, FakeEmbedder())
        ts = text_unit_search(store, client, Prompts(), s, q, progress=False, embedder=FakeEmbedder())
        for ans in (lazy, ts):
            assert ans.details["corpus_wide_phrase"] and "nothing relevant" not in ans.text, (q, ans.method)
            assert ans.details["spread"] and ans.citations["sources"]
        assert "spread across the corpus" in lazy.text
    for q in (OFF_TOPIC, "What are the main themes of this year's knitting patterns?"):
        for ans in (lazy_search(store, client, Prompts(), s, q, FakeEmbedder()),
                    text_unit_search(store, client, Prompts(), s, q, progress=False, embedder=FakeEmbedder())):
            assert "nothing relevant" in ans.text and not ans.details["corpus_wide_phrase"], (q, ans.method)
    assert model.calls == []
    store.close()


def test_lazy_model_relevance_tests_are_counted(index):
    db, s = index
    s.helpfulness = "model"
    store = Store(db)

    def rockets_yes(system, user, options):
        hit = "rockets" in user.lower()
        return [0.9 if o.lower() == "yes" and hit or o.lower() == "no" and not hit else 0.1 for o in options]

    ans = lazy_search(store, ModelClient(FakeModel(choice_script=rockets_yes), store, "q"), Prompts(), s, ROCKETS,
                      FakeEmbedder(), budget=3)
    d = ans.details
    assert d["signal"] == "model" and d["tests_used"] == 3
    assert d["test_tokens_read"] > 0 and d["context_tokens"] == d["test_tokens_read"] + d["answer_context_tokens"]
    # P(yes) for the question and for the content-free question, per test; then the opening sentence.
    assert ans.model_calls - (1 if d.get("synthesis_raw") is not None else 0) == 2 * 3
    units = _units(db)
    assert all("rockets" in units[i].lower() for i in d["relevant"])
    store.close()


def test_lazy_model_written_answer_from_1b(index):
    db, s = index
    store = Store(db)
    def script(system, user, schema):
        first = re.search(r"Passage (\d+):", user).group(1)
        return f"Alice Smith and Bob Jones built them [Sources: {first}, 999]."

    model = _big(script=script)
    ans = lazy_search(store, ModelClient(model, store, "q"), Prompts(), s, ROCKETS, FakeEmbedder())
    assert ans.details["answer_mode"] == "model" and ans.details["removed_citations"] == {"sources": [999]}
    assert "999" not in ans.text and set(ans.citations["sources"]) <= set(_units(db))
    store.close()


# ---- --no-reports ----

def test_an_nlp_no_reports_index_makes_no_model_call_and_lazy_answers_a_global_question(lazy_index):
    db, s, out = lazy_index
    store = Store(db)
    assert store.con.execute("SELECT count(*) FROM llm_calls WHERE run_id = ?", [out["run_id"]]).fetchone()[0] == 0
    assert store.count("community_reports") == 0 and store.count("communities") > 0
    assert out["reports"]["skipped"] is True and store.get_meta("reports") == "skipped"
    stage = store.con.execute("SELECT note FROM stage_runs WHERE stage = 'reports'").fetchone()
    assert json.loads(stage[0])["skipped"] is True
    q = "What are the main themes across these documents about Acme Corporation and Berlin?"
    ans = lazy_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, q, FakeEmbedder())
    assert ans.citations["sources"] and "Sources: text units" in ans.text
    for method in (global_search, drift_search):
        with pytest.raises(UserError, match="--no-reports.*--method lazy"):
            if method is global_search:
                method(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, q, level=0, progress=False,
                       embedder=FakeEmbedder())
            else:
                method(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, q, FakeEmbedder())
    assert route(q, Prompts(), reports=False)[0] == "lazy" and route(q, Prompts())[0] == "global"
    store.close()


def test_no_reports_removes_the_reports_of_an_earlier_run(index, corpus):
    db, s = index
    store = Store(db)
    assert store.count("community_reports") > 0
    store.close()
    s.reports = "none"
    run_index(corpus, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db)
    assert store.count("community_reports") == 0
    assert store.con.execute("SELECT count(*) FROM embeddings WHERE kind = 'report'").fetchone()[0] == 0
    store.close()


def _cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_global_and_drift_on_a_no_reports_index_give_one_line_errors(lazy_index, capsys):
    db, _, _ = lazy_index
    code, out, _ = _cli(capsys, "stats", "--db", str(db))
    assert code == 0 and "skipped (indexed with --no-reports)" in out
    for method in ("global", "drift"):
        code, _, err = _cli(capsys, "query", "--db", str(db), "--method", method, "What are the themes?")
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("slmgraph: error: ")
        assert "--no-reports" in lines[0] and "--method lazy" in lines[0]


@pytest.mark.parametrize("argv,words", [
    (["index", "IN", "--db", "x.duckdb", "--no-reports", "--reports", "data"], ["--no-reports", "--reports data"]),
    (["query", "--db", "DB", "--method", "lazy", "--budget", "0", "q"], ["--budget 0"]),
    (["query", "--db", "DB", "--method", "drift", "--depth", "0", "q"], ["--depth 0"]),
    (["query", "--db", "DB", "--method", "drift", "--followups", "-1", "q"], ["--followups -1"]),
])
def test_cli_budget_mistakes_are_one_line(tmp_path, corpus, capsys, argv, words):
    db = tmp_path / "i.duckdb"
    if argv[0] == "query":
        run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
                  embedder_factory=FakeEmbedder, say=lambda m: None)
    argv = [str(corpus) if a == "IN" else str(db) if a in ("DB", "x.duckdb") else a for a in argv]
    code, _, err = _cli(capsys, *argv)
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("slmgraph: error: "), err
    for w in words:
        assert w in lines[0]


# ---- DRIFT ----

def test_drift_primer_then_entity_follow_ups_reduced_into_one_cited_answer(index):
    db, s = index
    s.helpfulness_floor = 5.0  # the fake embedder's cosines are bag-of-words overlaps
    store = Store(db)
    ans = drift_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, ROCKETS, FakeEmbedder())
    reports = {r[0] for r in store.con.execute("SELECT community_id FROM community_reports").fetchall()}
    d = ans.details
    assert ans.method == "drift" and d["answer_mode"] == "extractive"
    assert ans.citations["reports"] and set(ans.citations["reports"]) <= reports
    assert set(ans.citations.get("sources", [])) <= set(_units(db))
    assert 1 <= len(d["primer"]) <= s.drift_primer_k
    fus = d["follow_ups"]
    assert fus and d["followup_source"] == "entities" and all(f["made_by"] == "entities" for f in fus)
    assert all(re.fullmatch(r"What about .+\?", f["question"]) for f in fus)
    assert len({f["question"] for f in fus}) == len(fus)  # no entity asked twice
    assert len([f for f in fus if f["depth"] == 1]) <= s.drift_followups
    assert max(f["depth"] for f in fus) <= s.drift_depth
    assert "Sources: community reports" in ans.text and not has_repetition(ans.text)
    assert ans.model_calls <= 1 and d["tokens_read"] > 0
    store.close()


def test_drift_budgets_bound_the_follow_ups(index):
    db, s = index
    s.helpfulness_floor = 5.0
    store = Store(db)
    client = ModelClient(FakeModel(), store, "q")
    s.drift_followups, s.drift_depth = 1, 1
    one = drift_search(store, client, Prompts(), s, ROCKETS, FakeEmbedder())
    assert len(one.details["follow_ups"]) == 1
    s.drift_followups, s.drift_depth, s.drift_tokens = 3, 2, 1
    none = drift_search(store, client, Prompts(), s, ROCKETS, FakeEmbedder())
    assert none.details["follow_ups"] == [] and "token budget" in none.details["stopped"]
    assert none.citations["reports"]  # the primer still answers
    store.close()


def test_drift_off_topic_question_takes_the_no_answer_path(index):
    db, s = index
    store = Store(db)
    model = FakeModel(script=_no_call)
    # (the fake embedder's hashed words collide: this question scores under the floor with every report)
    ans = drift_search(store, ModelClient(model, store, "q"), Prompts(), s, "Which wine pairs with cheese?",
                       FakeEmbedder())
    assert "nothing relevant" in ans.text and ans.citations == {} and model.calls == []
    store.close()


def test_drift_from_1b_the_model_writes_primer_follow_ups_and_reduce(index):
    db, s = index
    s.helpfulness_floor = 5.0
    store = Store(db)

    def script(system, user, schema):
        if schema is not None and "follow_ups" in schema.get("properties", {}):
            return json.dumps({"answer": "Alice Smith and Bob Jones built rockets.",
                               "follow_ups": ["Who is Bob Jones?", "Where is Acme Corporation?"]})
        if schema is not None:
            return default_script(system, user, schema)
        if "Analysts' points" in user:
            given = re.search(r"\[Sources: (\d+)", user).group(1)
            return f"They built rockets at Acme Corporation [Reports: 999] [Sources: {given}, 998]."
        return "Bob Jones joined Acme Corporation [Sources: 1]."

    model = _big(script=script)
    ans = drift_search(store, ModelClient(model, store, "q"), Prompts(), s, ROCKETS, FakeEmbedder())
    d = ans.details
    assert d["answer_mode"] == "model" and d["followup_source"] == "model"
    assert [f["question"] for f in d["follow_ups"] if f["depth"] == 1] == ["Who is Bob Jones?",
                                                                           "Where is Acme Corporation?"]
    assert "follow_ups" in model.calls[0][2]["properties"]  # the first call is the primer
    given = re.search(r"\[Sources: (\d+)", next(c[1] for c in model.calls if "Analysts' points" in c[1])).group(1)
    assert d["removed_citations"] == {"reports": [999], "sources": [998]} and "999" not in ans.text
    assert ans.citations == {"sources": [int(given)]}
    store.close()


def test_every_new_prompt_fills(tmp_path):
    p = Prompts()
    assert p.fill("drift_followup", entity="Acme") .strip() == "What about Acme?"
    assert "$" not in p.fill("drift_primer_user", question="q", context="c")
    assert "7" in p.fill("no_answer_lazy", tests="7")


def test_no_reports_wins_over_a_settings_file():
    import dataclasses

    from slmgraph.config import file as sf

    typed = sf.typed_from_flags({"no_reports", "budget"})
    assert typed == {"reports": "flag --no-reports", "lazy_budget": "flag --budget"}
    base = dataclasses.replace(Settings(), reports="none", lazy_budget=7)
    s, sources = sf.resolve(base, {"reports": "data", "lazy_budget": 50}, None, typed)
    assert s.reports == "none" and s.lazy_budget == 7 and sources["reports"] == "flag --no-reports"


def test_drift_drops_points_that_repeat_an_earlier_points_sentence():
    from slmgraph.query.engines.drift_search import _without_repeats
    from slmgraph.query.extractive import Point, extractive_answer

    a = Point("Acme", "Alice Smith built rockets at Acme. Paris was home.", [1], 0.9, "Reports")
    b = Point("", "Paris was home.", [7], 0.5, "Sources")
    c = Point("", "Carol White studied physics with Dan Brown.", [8], 0.4, "Sources")
    kept = _without_repeats([a, b, c])
    assert kept == [a, c]
    assert has_repetition(extractive_answer([a, b, c], "Reports", None, ""))
    assert not has_repetition(extractive_answer(kept, "Reports", None, ""))
