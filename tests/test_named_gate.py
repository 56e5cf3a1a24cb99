"""The named-entity gate (slmgraph.query.named): a question naming a person, organisation or place the
index never mentions is refused in one line by every search method, with no model call; questions about
what the index holds, by full or partial name, are still answered."""

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.model.client import ModelClient
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.query.engines.basic_search import basic_search
from slmgraph.query.engines.drift_search import drift_search
from slmgraph.query.engines.global_search import global_search, text_unit_search
from slmgraph.query.engines.lazy_search import lazy_search
from slmgraph.query.engines.local_search import local_search
from slmgraph.store.db import Store


def _no_call(system, user, schema):
    raise AssertionError("the model was called")


@pytest.fixture
def index(tmp_path, corpus):
    db = tmp_path / "idx.duckdb"
    s = Settings(min_community_size=2)
    run_index(corpus, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    return db, s


def _run(method, store, s, question):
    model = FakeModel(script=_no_call)
    client = ModelClient(model, store, "q")
    p, e = Prompts(), FakeEmbedder()
    if method == "global":
        ans = global_search(store, client, p, s, question, progress=False, embedder=e)
    elif method == "dynamic":
        ans = global_search(store, client, p, s, question, progress=False, dynamic=True, embedder=e)
    elif method == "ts":
        ans = text_unit_search(store, client, p, s, question, progress=False, embedder=e)
    elif method == "local":
        ans = local_search(store, client, p, s, question, e)
    elif method == "basic":
        ans = basic_search(store, client, p, s, question, e)
    elif method == "drift":
        ans = drift_search(store, client, p, s, question, e)
    else:
        ans = lazy_search(store, client, p, s, question, e)
    return ans, model


METHODS = ["global", "dynamic", "ts", "local", "basic", "drift", "lazy"]


@pytest.mark.parametrize("method", METHODS)
def test_a_question_about_a_name_the_index_never_mentions_is_refused_in_one_line(index, method):
    db, s = index
    s.helpfulness_floor, s.helpfulness_probes = 0.0, False  # the cosine floor would let anything through
    store = Store(db)
    ans, model = _run(method, store, s, "Who is Angela Merkel?")
    assert ans.text == ("I am sorry, but there is no entity named 'Angela Merkel' in the index, nor in its text "
                        "units: the indexed documents hold nothing about this question.")
    assert "\n" not in ans.text and ans.citations == {} and model.calls == []
    assert ans.details["refused"] and ans.details["unknown_names"] == ["Angela Merkel"]
    store.close()


@pytest.mark.parametrize("method", METHODS)
def test_a_question_about_a_name_the_index_holds_is_answered(index, method):
    db, s = index
    s.helpfulness_floor, s.helpfulness_probes = 0.0, False
    store = Store(db)
    ans, _ = _run(method, store, s, "What did Alice Smith build at Acme Corporation?")
    assert "no entity named" not in ans.text and not ans.details.get("refused")
    assert ans.details["unknown_names"] == [] and "Alice Smith" in ans.details["named"]
    store.close()


def test_names_are_matched_by_the_index_keys_partly_and_in_the_text(index):
    from slmgraph.query.named import check_names, question_names

    db, s = index
    store = Store(db)
    for q, named in [("What did Smith found in Paris?", ["Smith", "Paris"]),  # a last name
                     ("What did Acme Corporation's founders do?", ["Acme Corporation's"]),  # a possessive
                     ("What did ACME CORPORATION do in PARIS?", ["PARIS"])]:  # case
        assert check_names(store, q, s) == {"named": named, "unknown_names": [], "answer": True}, q
    assert question_names("What does President Angela Merkel say?", s) == ["Angela Merkel"]  # a title
    gate = check_names(store, "Did Alice Smith ever meet Angela Merkel?", s)
    assert gate["answer"] and gate["unknown_names"] == ["Angela Merkel"]  # one known name: answered
    assert check_names(store, "What are the main themes of these documents?", s) == \
        {"named": [], "unknown_names": [], "answer": True}
    assert store.con.execute("SELECT count(*) FROM entities WHERE name = 'Eve Black'").fetchone()[0] == 1
    store.con.execute("DELETE FROM entities WHERE name = 'Eve Black'")  # a name extraction left out
    assert check_names(store, "What did Eve Black write?", s)["unknown_names"] == []  # still in the text
    store.close()


def test_a_span_without_a_capital_letter_is_no_name():
    from slmgraph.query.named import question_names

    assert question_names("apple varieties", Settings()) == []  # spaCy's small pipeline tags "apple" ORG


def test_without_an_ner_pipeline_the_capitalised_runs_are_the_names():
    from slmgraph.query.named import question_names

    s = Settings(ner_model="none")
    assert question_names("Who is Angela Merkel?", s) == ["Angela Merkel"]
    assert question_names("What are the main themes?", s) == []


@pytest.mark.parametrize("method", ["basic", "local"])
def test_a_question_naming_what_the_index_holds_passes_the_relevance_floor(index, method):
    # A new user's "Who is Elena Voss?" was refused by basic and local search: the question's cosine with
    # her text unit fell under the floor. A known name vouches for the question; no name still meets the floor.
    db, s = index
    s.helpfulness_floor, s.helpfulness_probes = 99.0, False  # a floor no cosine reaches
    store = Store(db)
    named, _ = _run(method, store, s, "Who is Carol White?")
    plain, _ = _run(method, store, s, "what happened there?")
    store.close()
    assert not named.details.get("refused") and named.details.get("known_names") == ["Carol White"]
    assert plain.details.get("refused")


def test_local_search_seeds_an_indexed_name_the_ner_pass_misses(index, monkeypatch):
    # A new user's "Who is Tomas Reinholt?" was refused by local search: spaCy's small pipeline found no
    # name in it, so the nearest entity by embedding ("chair") chose the context and the text-unit floor
    # refused. The index's own names, matched as whole words in any case, seed the search and vouch for it.
    import slmgraph.query.named as named_mod

    monkeypatch.setattr(named_mod, "question_names", lambda question, settings: [])  # the NER finds nothing
    db, s = index
    s.helpfulness_floor, s.helpfulness_probes = 99.0, False  # a floor no cosine reaches
    store = Store(db)
    carol = store.con.execute("SELECT entity_id FROM entities WHERE norm = 'carol white'").fetchone()[0]
    for q in ("Who is Carol White?", "tell me about carol white"):
        ans, model = _run("local", store, s, q)
        assert not ans.details.get("refused"), q
        assert ans.details["named"] == ["Carol White"] and ans.details.get("known_names") == ["Carol White"], q
        assert [c["id"] for c in ans.context if c["kind"] == "entity"][0] == carol, q  # seeded first
    assert _run("local", store, s, "what happened there?")[0].details.get("refused")  # no name: as before
    store.close()


def test_index_names_are_whole_proper_names_not_inside_a_longer_name(index):
    from slmgraph.query.named import index_names

    db, _ = index
    store = Store(db)
    assert index_names(store, "What did carol white and DAN BROWN study?") == ["Carol White", "Dan Brown"]
    assert index_names(store, "Who is Carolina Whitehouse?") == []  # whole words only
    assert index_names(store, "Did Paris ever meet Angela?", covered=["Paris Hilton"]) == []  # inside a longer name
    store.con.execute("INSERT INTO text_units (chunk_id, doc_id, ord, text, n_tokens) "
                      "SELECT chunk_id || '-x', doc_id, ord + 100, 'we walked to paris by the river.', n_tokens "
                      "FROM text_units LIMIT 1")
    assert index_names(store, "What happened in Paris?") == []  # the documents write it as a common word
    store.close()


def test_auto_answers_from_the_text_units_when_no_report_helps_but_they_pass(index, monkeypatch):
    # A new user's "What happened with the fireblight?" in the web app's auto method: global search found
    # no helpful report and pointed to basic search; auto now answers with it after global's notice.
    import slmgraph.query.engines.global_search as gs
    from slmgraph.api import answer
    from slmgraph.query.answer import Answer

    notice = "I am sorry: no community report scored as helpful. Its text units come nearer."

    def no_report(store, client, prompts, settings, question, **kw):
        return Answer(text=notice, method="global", question=question, level=0,
                      details={"fallback": "basic", "best_score": 1.0, "floor": 22.0})

    monkeypatch.setattr(gs, "global_search", no_report)
    db, s = index
    store = Store(db)
    q = "How did Alice Smith's rockets change over time?"  # auto routes a change over time to global
    streamed: list[str] = []
    s.helpfulness_floor, s.helpfulness_probes = 0.0, False  # basic search's floor lets its units through
    ans = answer(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, q, method="auto",
                 on_text=streamed.append, embedder_factory=FakeEmbedder)
    assert ans.method == "basic" and ans.text.startswith(notice + "\n\n") and len(ans.text) > len(notice) + 2
    assert ans.citations.get("sources") and "basic search answered" in ans.details["route"]["because"]
    s.helpfulness_floor = 99.0  # basic search refuses too: global's notice stays the answer
    ans = answer(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, "How did things change over time?",
                 method="auto", embedder_factory=FakeEmbedder)
    assert ans.method == "global" and ans.text == notice
    ans = answer(store, ModelClient(FakeModel(), store, "q"), Prompts(), s.__class__(helpfulness_floor=0.0), q,
                 method="global", embedder_factory=FakeEmbedder)
    assert ans.method == "global" and ans.text == notice  # a method the user chose is kept
    store.close()


@pytest.mark.parametrize("method", ["global", "local", "basic"])
def test_a_misspelt_name_is_refused_with_the_index_name_nearest_it(index, method):
    db, s = index
    s.helpfulness_floor, s.helpfulness_probes = 0.0, False
    store = Store(db)
    ans, model = _run(method, store, s, "What did Alice Smyth build?")
    assert ans.text.endswith("the indexed documents hold nothing about this question. Did you mean 'Alice Smith'?")
    assert "\n" not in ans.text and model.calls == [] and ans.details["close_names"] == ["Alice Smith"]
    store.close()


def test_a_misspelt_name_beside_a_known_one_is_pointed_to_its_nearest(tmp_path, corpus):
    from conftest import FakeEmbedder, FakeModel

    from slmgraph.api import _misspelt_note
    from slmgraph.config.settings import Settings
    from slmgraph.indexing.pipeline import run_index
    from slmgraph.query.answer import Answer
    from slmgraph.store.db import Store

    db = tmp_path / "x.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db, read_only=True)
    ans = Answer(text="An answer.", method="global", question="q")
    note = _misspelt_note(store, Settings(), "Did Alice Smyth work with Acme Corporation?", ans)
    assert note == "The index holds no \u201cAlice Smyth\u201d; the nearest name it holds is \u201cAlice Smith\u201d.", note
    assert _misspelt_note(store, Settings(), "Did Alice Smith work with Acme Corporation?", ans) is None
    # a refusal already asks "Did you mean ...?"
    asked = Answer(text="Nothing. Did you mean \u201cAlice Smith\u201d?", method="global", question="q")
    assert _misspelt_note(store, Settings(), "Did Alice Smyth work with Acme Corporation?", asked) is None
    store.close()
