"""Gleaning (paper sec. 3.1.2): forced Y/N, continuation of the exchange, stop conditions."""

import json

from conftest import FakeModel, default_script

from slmgraph.config.settings import Settings
from slmgraph.model.client import ModelClient
from slmgraph.indexing.stages.extract import extraction_system
from slmgraph.indexing.stages.extract_methods import extract_llm, unit_candidates
from slmgraph.indexing.stages.ner import pipeline_for
from slmgraph.config.prompting import Prompts
from slmgraph.store.db import Store

TEXT = ("Alice Smith met Bob Jones in Paris. Carol White joined them at Acme Corporation. "
        "Dan Brown came from Berlin with Eve Black.")


def _script(answers, add=True):
    """Y/N answers in order (then N); gleaning rounds relate the first two names offered (if ``add``)."""
    answers = list(answers)

    def script(system, user, schema):
        if "choices" in schema:
            return answers.pop(0) if answers else "N"
        if user.startswith("Add only what your answer missed"):
            names = schema["properties"]["relationships"]["items"]["properties"]["source"]["enum"]
            offered = list(schema["properties"]["entities"]["properties"])
            rels = [{"source": names[0], "target": names[-1], "strength": 4}] if add and len(names) > 1 else []
            return json.dumps({"entities": {n: "person" for n in offered} if add else
                               {n: "other" for n in offered}, "relationships": rels})
        return default_script(system, user, schema)
    return script


def _run(model, settings, store=None):
    prompts = Prompts()
    client = ModelClient(model, store, "r")
    system, desc = extraction_system(prompts, settings, model)
    return extract_llm(client, prompts, TEXT, settings, system, desc, pipeline_for(settings.ner_model)[0])


def _kinds(model):
    out = []
    for _, user, schema in model.calls:
        out.append("check" if "choices" in schema else "glean" if user.startswith("Add only") else "extract")
    return out


def test_answer_n_stops_after_the_check():
    m = FakeModel(_script(["N"]))
    ex = _run(m, Settings(max_gleanings=3, max_candidates=3, cooccurrence=False))
    assert _kinds(m) == ["extract", "check"] and ex.gleanings == 0


def test_gleaning_off_makes_no_check():
    m = FakeModel(_script(["Y"]))
    _run(m, Settings(max_gleanings=0, max_candidates=3))
    assert _kinds(m) == ["extract"]


def test_yes_glean_adds_the_further_candidates_and_stops_at_max_gleanings():
    m = FakeModel(_script(["Y", "Y", "Y"]))
    s = Settings(max_gleanings=2, max_candidates=3, cooccurrence=False)
    ex = _run(m, s)
    assert _kinds(m) == ["extract", "check", "glean", "check", "glean"]  # 2 rounds, no third check
    assert ex.gleanings == 2
    names = {e["name"] for e in ex.entities}
    # first 3 candidates from the extraction, the next 3 from round 1, 3 more from round 2
    assert {"Alice Smith", "Bob Jones", "Paris", "Carol White", "Acme Corporation"} <= names
    assert len(names) >= 7
    # the round's schema offered only further candidates; relationships may use every name
    ranked = [c.name for c in unit_candidates(TEXT, s, pipeline_for(s.ner_model)[0], budget=9).candidates]
    glean_schema = m.calls[2][2]
    assert list(glean_schema["properties"]["entities"]["properties"]) == ranked[3:6]
    first = m.calls[0][2]["properties"]["entities"]["required"]
    assert first == ranked[:3]
    assert first[0] in glean_schema["properties"]["relationships"]["items"]["properties"]["source"]["enum"]
    # the check tells the model which further names exist
    assert f"Further candidate names: {'; '.join(ranked[3:6])}." in m.calls[1][1]


def test_no_check_when_every_candidate_was_offered():
    m = FakeModel(_script(["Y", "Y", "Y"]))
    # all 8 candidates fit the first call: nothing further to offer, so no check and no round
    ex = _run(m, Settings(max_gleanings=3, max_candidates=20, cooccurrence=False))
    assert _kinds(m) == ["extract"] and ex.gleanings == 0


def test_truncated_extraction_is_not_gleaned():
    m = FakeModel(_script(["Y"]))
    m.finish = "length"
    _run(m, Settings(max_gleanings=1, max_candidates=3))
    assert _kinds(m) == ["extract"]


def test_follow_ups_continue_from_the_model_state_and_are_cached(tmp_path):
    store = Store(tmp_path / "g.duckdb", create=True)
    m = FakeModel(_script(["Y"]))
    s = Settings(max_gleanings=1, max_candidates=3, cooccurrence=False)
    ex1 = _run(m, s, store)
    rows = store.con.execute("SELECT stage, prompt_tokens, cached_tokens FROM llm_calls ORDER BY call_id").fetchall()
    assert [r[0] for r in rows] == ["extract", "glean", "glean"]
    for stage, prompt, cached in rows[1:]:
        assert 0 < cached < prompt  # the history was reused; only the new turn was evaluated
    assert ex1.evaluated_tokens == sum(p - c for _, p, c in rows)
    m2 = FakeModel(_script(["Y"]))
    ex2 = _run(m2, s, store)
    assert m2.calls == [] and ex2.entities == ex1.entities and ex2.relationships == ex1.relationships
    assert ex2.evaluated_tokens == 0


def test_stats_report_gleaning_resolution_and_workers(tmp_path, corpus):
    from conftest import FakeEmbedder

    from slmgraph.indexing.pipeline import run_index
    from slmgraph.tools.stats import collect, render

    db = tmp_path / "s.duckdb"
    # one candidate per call: every text unit has further names; every check answered Y: one round each
    run_index(corpus, db, Settings(extract_mode="json", min_community_size=2, max_gleanings=1, max_candidates=1), progress=False,
              model=FakeModel(_script(["Y"] * 50)), embedder_factory=FakeEmbedder, say=lambda m: None)
    st = Store(db, read_only=True)
    figs = collect(st)
    n_units = st.count("text_units")
    st.close()
    g = figs["gleaning"]
    assert g["glean_calls"] == 2 * n_units  # a check and a round per text unit
    assert 0 <= g["rounds"] <= n_units and g["rounds"] == g["text_units_added_to"]
    text = render(figs, str(db))
    assert f"gleaning: {2 * n_units} model calls" in text
    assert figs["workers"] == [{"worker": 0, "calls": 2 * n_units + n_units,
                                "seconds": figs["workers"][0]["seconds"]}]


def test_a_round_whose_further_names_are_all_other_ends_gleaning_but_keeps_them():
    m = FakeModel(_script(["Y", "Y", "Y"], add=False))  # types every offered name "other", relates nothing
    ex = _run(m, Settings(max_gleanings=3, max_candidates=3, cooccurrence=False))
    assert _kinds(m) == ["extract", "check", "glean"] and ex.gleanings == 0
    # the further names are still entities (type unknown), as "other" in the first round
    assert {"Carol White", "Acme Corporation", "Dan Brown"} <= {e["name"] for e in ex.entities}
