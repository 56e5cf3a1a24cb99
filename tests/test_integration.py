"""Integration: the real bundled GGUF (SmolLM2-135M-Instruct) in-process.

Runs the whole pipeline on the bundled sample ``dulce.txt`` (about 5,000
tokens, 10 text units), from index to a global answer, twice, to check that
the same input gives the same index. Takes a few minutes on 2 cores.
"""

import json
import re

import pytest

from slmgraph.config.settings import Settings
from slmgraph.model.backend import load_model
from slmgraph.model.protocol import Model
from slmgraph.model.client import ModelClient
from slmgraph.indexing.pipeline import run_index
from slmgraph.indexing.stages.embed import phrase_keys
from slmgraph.config.prompting import Prompts
from slmgraph.samples import DULCE
from slmgraph.query.engines.global_search import global_search
from slmgraph.store.db import Store

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def model():
    return load_model(None, 8192, Settings().n_threads, 42)


def test_model_renders_with_its_chat_template_and_round_trips_tokens(model):
    p = model.render("SYSTEM TEXT", "USER TEXT")
    assert "<|im_start|>" in p.fixed and p.fixed.endswith("\n") and p.content == "USER TEXT"
    text = "Operation: Dulce — naïve café, 42 agents.\n"
    assert model.detokenize(model.tokenize(text)) == text
    assert model.n_params > 100_000_000
    assert isinstance(model, Model) and model.path.is_file() and model.n_threads >= 1


def test_follow_up_continues_from_the_kv_state_with_the_same_result_as_a_rebuilt_history(model):
    client = ModelClient(model, None, "t")
    system = "You extract names from texts and answer questions about them."
    gen = client.call("t", system, "Text: Alex Mercer met Jordan Hayes at Dulce base. List the names.",
                      schema=None, max_tokens=24)
    n_hist = sum(len(t) for t, _ in gen.history)
    ask = "Which of them leads the team? Answer in one sentence."
    a = client.follow_up("t", gen, ask, max_tokens=20)
    assert a.cached_tokens == n_hist  # continued: only the new turn was evaluated
    yn = client.follow_up("t", a, "Did you miss a name? Answer Y or N.", choices=["Y", "N"])
    assert yn.text in ("Y", "N") and yn.completion_tokens == 1
    client.call("t", "Another system prompt.", "Say hello.", schema=None, max_tokens=5)  # disturb the KV cache
    b = model.follow_up(gen.history, model.continuation(ask), max_tokens=20)
    assert b.cached_tokens < n_hist  # rebuilt from the history
    assert b.text == a.text


def test_score_options_reads_probabilities_reuses_the_prefix_and_rewinds(model):
    client = ModelClient(model, None, "t")
    system = "Answer the question with yes or no. " * 10
    a = client.choose("t", system, "Is Paris a city in France?", [" yes", " no", " maybe not"])
    assert len(a.logprobs) == 3 and all(lp < 0 for lp in a.logprobs)
    assert sum(a.probs) == pytest.approx(1.0)
    b = client.choose("t", system, "Is Paris a city in France?", [" yes", " no", " maybe not"])
    assert b.cached_tokens > 0  # the system prefix came from the KV state
    assert b.logprobs == pytest.approx(a.logprobs, abs=1e-3)  # scoring a multi-token option rewound the state
    g = client.call("t", system, "Is Paris a city in France?", schema=None, max_tokens=3)
    assert g.text  # generation still works from the rewound state


def test_grammar_constrained_output_is_valid_and_prefix_is_reused(model):
    client = ModelClient(model, None, "t")
    schema = {"type": "object", "properties": {"name": {"type": "string", "enum": ["Alex Mercer", "Dulce"]},
                                               "n": {"type": "integer", "enum": [1, 2, 3]}},
              "required": ["name", "n"]}
    system = "You answer in JSON. " * 20
    g1 = client.call("t", system, "Who leads the team? Alex Mercer leads it.", schema=schema, max_tokens=40)
    g2 = client.call("t", system, "Where is the base? It is at Dulce.", schema=schema, max_tokens=40)
    for g in (g1, g2):
        data = json.loads(g.text)
        assert data["name"] in ("Alex Mercer", "Dulce") and data["n"] in (1, 2, 3)
        assert g.completion_tokens > 0
    fixed, _ = model.prompt_tokens(model.render(system, ""))
    assert g2.cached_tokens == len(fixed)  # the fixed part was evaluated once and reused
    g3 = client.call("t", system, "Where is the base? It is at Dulce.", schema=schema, max_tokens=40)
    assert g3.text == g2.text  # greedy and independent of the previous call


def _snapshot(db):
    st = Store(db, read_only=True)
    snap = {
        "entities": st.con.execute("SELECT norm, type, description FROM entities ORDER BY norm").fetchall(),
        "communities": st.con.execute("SELECT level, list(entity_id ORDER BY entity_id) FROM community_members "
                                      "JOIN communities USING (community_id) GROUP BY community_id, level "
                                      "ORDER BY 1, 2").fetchall(),
        "reports": st.con.execute("SELECT level, full_text FROM community_reports ORDER BY 1, 2").fetchall(),
    }
    st.close()
    return snap


@pytest.fixture(scope="module")
def dulce_index(tmp_path_factory, model):
    db = tmp_path_factory.mktemp("dulce") / "a.duckdb"
    out = run_index(DULCE, db, Settings(), progress=False, model=model, say=lambda m: None)
    return db, out


def test_dulce_index_has_every_stage(dulce_index):
    db, out = dulce_index
    assert out["extract"]["extracted"] == out["ingest"]["text_units"] == 10
    assert set(out["extract"]["status"]) <= {"ok", "repaired", "truncated"}
    snap = _snapshot(db)
    assert len(snap["entities"]) >= 5 and snap["reports"]
    st = Store(db, read_only=True)
    assert st.con.execute("SELECT type FROM entities WHERE norm = 'alex mercer'").fetchone() == ("person",)
    assert dict(st.con.execute("SELECT norm, into_norm FROM merge_log").fetchall()).get("mercer") == "alex mercer"
    st.close()
    st = Store(db, read_only=True)
    kinds = dict(st.con.execute("SELECT kind, count(*) FROM embeddings GROUP BY kind").fetchall())
    assert sum(n for k, n in kinds.items() if k not in ("text_unit_window", "phrase")) == (
        st.count("entities") + st.count("text_units") + st.count("community_reports"))
    assert kinds.get("text_unit_window", 0) >= st.count("text_units")  # ~600-token units: a further window each
    # the noun phrases of two text units or more, embedded as themselves
    assert kinds.get("phrase", 0) == len(phrase_keys(st)) > 0
    st.close()


def test_same_input_twice_gives_the_same_index(tmp_path, dulce_index, model):
    db, _ = dulce_index
    again = tmp_path / "b.duckdb"
    run_index(DULCE, again, Settings(), progress=False, model=model, say=lambda m: None)
    assert _snapshot(again) == _snapshot(db)


def test_global_answer_from_the_real_model(dulce_index, model):
    from slmgraph.indexing.stages.embed import Embedder
    from slmgraph.query.extractive import has_repetition

    db, _ = dulce_index
    store = Store(db)
    client = ModelClient(model, store, "q")
    emb = Embedder()
    ans = global_search(store, client, Prompts(), Settings(), "What are the main themes of this story?",
                        level=0, progress=False, embedder=emb)
    valid = {r[0] for r in store.con.execute("SELECT community_id FROM community_reports WHERE level = 0").fetchall()}
    assert ans.details["answer_mode"] == "extractive" and ans.details["signal"] == "embedding"
    assert len(ans.citations["reports"]) >= 2 and set(ans.citations["reports"]) <= valid
    assert "Sources: community reports" in ans.text and not has_repetition(ans.text)
    assert ans.model_calls == 0  # the opening sentence is off under 1B (Settings.opening auto)
    from slmgraph.query.extractive import WEAK_KINDS, sentence_kinds

    bullets = [ln for ln in ans.text.splitlines() if ln.startswith("- ")]
    assert len(bullets) >= 2 and not any(set(sentence_kinds(b.split("**: ", 1)[-1])) & set(WEAK_KINDS)
                                         for b in bullets)  # no question, quoted fragment or heading quoted
    off = global_search(store, client, Prompts(), Settings(), "How do I bake sourdough bread?", level=0,
                        progress=False, embedder=emb)
    assert "nothing relevant" in off.text and off.citations == {} and off.model_calls == 0
    stages = dict(store.con.execute("SELECT stage, count(*) FROM llm_calls GROUP BY 1").fetchall())
    # the 135M model's extraction choices do not beat the LLM-free pass, and reports are built from the data
    # under 1B: default indexing calls no model
    assert "extract" not in stages and "report" not in stages and not any(k.startswith("choose") for k in stages)
    store.close()


def test_local_search_with_the_bundled_embedder(dulce_index, model):
    from slmgraph.indexing.stages.embed import Embedder
    from slmgraph.query.engines.local_search import local_search

    db, _ = dulce_index
    store = Store(db)
    ans = local_search(store, ModelClient(model, store, "q"), Prompts(), Settings(), "Who is Taylor Cruz?",
                       Embedder())
    names = [n["norm"] for n in ans.details["nearest_entities"]]
    assert any("cruz" in n or "taylor" in n for n in names[:3])
    assert ans.text.strip() and ans.details["context_tokens"] <= Settings().local_context_tokens
    assert ans.details["answer_mode"] == "extractive" and not re.search(r"Passage \d", ans.text)
    store.close()


def test_basic_and_local_search_refuse_an_off_topic_question_on_the_demo_index(dulce_index, model):
    from slmgraph.indexing.stages.embed import Embedder
    from slmgraph.query.answer import unit_numbers
    from slmgraph.query.engines.basic_search import basic_search
    from slmgraph.query.engines.local_search import local_search

    db, _ = dulce_index
    store = Store(db)
    client = ModelClient(model, store, "q")
    emb = Embedder()
    units = set(unit_numbers(store).values())
    for search in (basic_search, local_search):
        off = search(store, client, Prompts(), Settings(), "How do I bake sourdough bread at home?", emb)
        assert "nothing relevant" in off.text and off.citations == {} and off.model_calls == 0, search
        assert off.details["refused"] and off.details["best_score"] < off.details["floor"]
        on = search(store, client, Prompts(), Settings(), "Who is Taylor Cruz?", emb)
        assert not on.details.get("refused") and on.citations["sources"], search
        assert set(on.citations["sources"]) <= units and "Sources: text units" in on.text
    store.close()


def test_drift_and_lazy_answer_the_demo_question_with_citations(dulce_index, model):
    from slmgraph.indexing.stages.embed import Embedder
    from slmgraph.query.answer import unit_numbers
    from slmgraph.query.engines.drift_search import drift_search
    from slmgraph.query.extractive import has_repetition
    from slmgraph.query.engines.lazy_search import lazy_search

    db, _ = dulce_index
    store = Store(db)
    client = ModelClient(model, store, "q")
    emb = Embedder()
    q = "What are the main themes of this story?"
    reports = {r[0] for r in store.con.execute("SELECT community_id FROM community_reports").fetchall()}
    units = set(unit_numbers(store).values())
    drift = drift_search(store, client, Prompts(), Settings(), q, emb)
    assert drift.citations["reports"] and set(drift.citations["reports"]) <= reports
    assert set(drift.citations.get("sources", [])) <= units
    assert drift.details["followup_source"] == "entities" and drift.details["follow_ups"]
    assert "Sources: community reports" in drift.text and not has_repetition(drift.text)
    lazy = lazy_search(store, client, Prompts(), Settings(), q, emb)
    assert lazy.citations["sources"] and set(lazy.citations["sources"]) <= units
    assert 0 < lazy.details["tests_used"] <= 100 and "Sources: text units" in lazy.text
    assert not has_repetition(lazy.text)
    for ans in (drift, lazy):  # prose: the story's Markdown scene breaks ("\\*" lines) are never quoted
        assert "\\" not in ans.text and "| " not in ans.text, ans.text
    store.close()


def test_an_nlp_index_without_reports_makes_no_model_call_and_lazy_answers(tmp_path, model):
    from slmgraph.indexing.stages.embed import Embedder
    from slmgraph.query.engines.lazy_search import lazy_search

    db = tmp_path / "lazy.duckdb"
    out = run_index(DULCE, db, Settings(extractor="nlp", reports="none"), progress=False, model=model,
                    say=lambda m: None)
    store = Store(db)
    assert store.con.execute("SELECT count(*) FROM llm_calls WHERE run_id = ?", [out["run_id"]]).fetchone()[0] == 0
    assert store.count("community_reports") == 0 and store.count("communities") > 0
    ans = lazy_search(store, ModelClient(model, store, "q"), Prompts(), Settings(),
                      "What are the main themes across this story?", Embedder())
    assert ans.citations["sources"] and ans.details["tests_used"] > 0
    store.close()


def test_the_thread_sharing_warning_comes_only_with_a_model_call(dulce_index, tmp_path, monkeypatch, capsys, caplog):
    """Other slmgraph processes hold every core: an extractive query (no model call) says nothing about
    them; a query whose opening sentence the model writes claims its threads and says so."""
    import logging

    import slmgraph.model.threads as threads
    from slmgraph.cli import main as cli

    db, _ = dulce_index
    monkeypatch.setattr(threads, "REGISTRY", tmp_path / "reg")
    monkeypatch.setattr(threads, "claimed_elsewhere", lambda registry=None: 8)
    question = "What are the main themes of this story?"
    with caplog.at_level(logging.WARNING, logger="slmgraph"):
        assert cli.main(["query", "--db", str(db), question]) == 0
        assert "other slmgraph processes" not in caplog.text + capsys.readouterr().err
        assert cli.main(["query", "--db", str(db), "--opening", "model", question]) == 0
    assert "already run in other slmgraph processes" in caplog.text + capsys.readouterr().err


def test_the_demo_main_themes_answer_names_themes_with_coverage_and_documents(dulce_index, model):
    from slmgraph.api import answer
    from slmgraph.query.theme_labels import label_phrases
    from slmgraph.cli.parser import DEMO_QUESTION
    from slmgraph.indexing.stages.embed import Embedder

    db, _ = dulce_index
    store = Store(db)
    try:
        ans = answer(store, ModelClient(model, store, "q"), Prompts(), Settings(), DEMO_QUESTION, method="global",
                     level=0, embedder_factory=Embedder)
    finally:
        store.close()
    sections = [sec.split("\n") for sec in ans.text.split("\n\n") if sec.startswith("### ")]
    assert len(sections) >= 3, ans.text
    assert ans.text.startswith("In its one document, the corpus's main themes are ")  # the overview names them
    assert "\n\nDocuments cited:\n- [" in ans.text
    st = Store(db, read_only=True)
    try:
        phrases = {str(n).casefold() for (n,) in st.con.execute("SELECT name FROM concept_mentions").fetchall()}
    finally:
        st.close()
    for head, opening, *statements in sections:
        assert re.match(r"### \d+\. \S.* \[Reports: \d+(, \d+)*\]$", head)
        # a label names a topic: noun phrases of the story of several words, not a lone generic word
        label = re.match(r"### \d+\. (.+) \[Reports:", head).group(1)
        assert all(p.casefold() in phrases and len(p.split()) > 1 for p in label_phrases(label)), head
        # reach of the one-file sample by passage (its statements all come from it, so no "Quoted below from")
        assert re.match(r".+: discussed in \d+ of 10 passages \(\d+ %\), (from|all in) its .+\.$", opening), opening
        assert statements and all(re.match(r"- \*dulce, unit \d+ of 10\*: .+ \[Sources: \d+\]$", s)
                                  for s in statements)
    cited = ans.cited_documents["sources"]
    assert set(map(int, cited)) == set(ans.citations["sources"])
    assert all(info["document"] == "dulce" and info["path"] == "dulce.txt" for info in cited.values())
    assert len(ans.points) == len(sections)
    assert all(p["topic"] and p["coverage"]["documents"] == 1 and p["documents"] for p in ans.points)
