"""Extraction: schema, validation rules, repair, resume, and the LLM-free mode."""

import json

from conftest import FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.extract import run_extraction
from slmgraph.indexing.stages.extract_methods import extract_nlp
from slmgraph.indexing.stages.extract_routes import use_model_descriptions
from slmgraph.indexing.stages.extract_schema import extraction_schema, validate
from slmgraph.indexing.stages.extract_text import add_cooccurrence, text_descriptions
from slmgraph.indexing.stages.ingest import ingest
from slmgraph.indexing.stages.ingest_read import Document
from slmgraph.model.client import ModelClient
from slmgraph.config.prompting import Prompts
from slmgraph.text.prose import parse_json
from slmgraph.store.db import Store

CANDS = ["Alice Smith", "Acme Corporation", "Paris"]
TYPES = ("person", "organization", "location")


def test_schema_names_are_enums_of_candidates_and_required_once():
    s = Settings()
    sch = extraction_schema(CANDS, s, with_descriptions=False)
    ents = sch["properties"]["entities"]
    assert ents["required"] == CANDS and list(ents["properties"]) == CANDS
    assert ents["properties"]["Paris"]["enum"][-1] == "other"
    rel = sch["properties"]["relationships"]
    assert rel["maxItems"] == s.max_relationships
    assert rel["items"]["properties"]["source"]["enum"] == CANDS
    assert rel["items"]["properties"]["strength"]["enum"] == list(range(1, 11))
    with_desc = extraction_schema(CANDS, s, with_descriptions=True)
    assert "description" in with_desc["properties"]["entities"]["properties"]["Paris"]["properties"]


def test_validate_drops_invented_duplicate_and_self_loop_records():
    data = {"entities": [{"name": "Alice Smith", "type": "person", "description": "a"},
                         {"name": "alice smith", "type": "person", "description": "dup"},
                         {"name": "Marie Curie", "type": "person", "description": "invented"},
                         {"name": "Paris", "type": "planet", "description": ""}],
            "relationships": [{"source": "Alice Smith", "target": "Alice Smith", "strength": 3},
                              {"source": "Alice Smith", "target": "Sorbonne", "strength": 3},
                              {"source": "Alice Smith", "target": "Acme Corporation", "strength": 30},
                              {"source": "Acme Corporation", "target": "Alice Smith", "strength": 2}]}
    ents, rels, dropped = validate(data, CANDS, TYPES)
    assert [e["name"] for e in ents] == ["Alice Smith", "Paris", "Acme Corporation"]
    assert ents[1]["type"] == "unknown"           # type outside the list
    assert ents[2]["type"] == "unknown"           # endpoint added as entity
    assert len(rels) == 1 and rels[0]["strength"] == 10  # clamped; reverse pair is a duplicate
    assert dropped == 2 + 3                       # dup + invented entity; self-loop, unknown end, duplicate pair


def test_validate_accepts_the_schema_object_form_and_keeps_other_as_unknown():
    data = {"entities": {"Alice Smith": "person", "Paris": "other"}, "relationships": []}
    ents, rels, dropped = validate(data, CANDS, TYPES)
    assert [(e["name"], e["type"]) for e in ents] == [("Alice Smith", "person"), ("Paris", "unknown")]
    assert validate("garbage", CANDS, TYPES) == ([], [], 0)


def test_parse_json_repairs_truncated_output():
    assert parse_json('{"a": 1}') == ({"a": 1}, "ok")
    value, status = parse_json('{"entities": {"Alice Smith": "person", "Paris": "loc')
    assert status == "repaired" and value["entities"]["Alice Smith"] == "person"
    assert parse_json("")[1] == "failed"


def test_text_descriptions_replace_ungrounded_ones():
    text = "Alice Smith founded Acme Corporation in Paris. Paris is large."
    ents = [{"name": "Alice Smith", "description": "Scientist who studied radioactivity at the Sorbonne."},
            {"name": "Paris", "description": "Paris is large."}]
    rels = [{"source": "Alice Smith", "target": "Paris", "description": ""}]
    n = text_descriptions(text, ents, rels, 200)
    assert n == 2
    assert ents[0]["description"] == "Alice Smith founded Acme Corporation in Paris."
    assert ents[1]["description"] == "Paris is large."
    assert rels[0]["description"] == "Alice Smith founded Acme Corporation in Paris."


def test_cooccurrence_adds_only_unrelated_pairs():
    text = "Alice Smith founded Acme Corporation in Paris."
    ents = [{"name": n} for n in CANDS]
    rels = [{"source": "Paris", "target": "Alice Smith", "description": "x", "strength": 4}]
    assert add_cooccurrence(text, ents, rels, 200) == 2
    pairs = {frozenset((r["source"], r["target"])) for r in rels}
    assert pairs == {frozenset(p) for p in [("Paris", "Alice Smith"), ("Alice Smith", "Acme Corporation"),
                                             ("Acme Corporation", "Paris")]}


def test_description_mode_auto_follows_model_size():
    s = Settings()
    assert not use_model_descriptions(s, 135_000_000)
    assert use_model_descriptions(s, 3_000_000_000)
    s.descriptions = "text"
    assert not use_model_descriptions(s, 3_000_000_000)


def test_nlp_extractor_makes_no_model_call():
    ex = extract_nlp("Alice Smith met Bob Jones in Paris. Bob Jones left.", Settings(extractor="nlp"))
    assert {e["name"] for e in ex.entities} == {"Alice Smith", "Bob Jones", "Paris"}
    assert len(ex.relationships) == 3


def _units_store(tmp_path, model):
    store = Store(tmp_path / "x.duckdb", create=True)
    docs = [Document(f"{i:016d}", f"d{i}.txt", f"Alice Smith met Bob Jones number {i} in Paris. " * 20)
            for i in range(3)]
    ingest(store, docs, model.tokenize, model.detokenize, 60, 10)
    return store


def test_run_extraction_resumes_and_skips_done_units(tmp_path):
    model = FakeModel()
    store = _units_store(tmp_path, model)
    n_units = store.count("text_units")
    client = ModelClient(model, store, "r1")
    r = run_extraction(store, client, Prompts(), Settings(extract_mode="json"), progress=False)
    # one extraction call per unit (every candidate fits the first call: no gleaning check)
    assert r.extracted == n_units and len(model.calls) == n_units
    assert store.count("entity_mentions") > 0
    # simulate a kill after 2 units were lost: delete their records
    store.con.execute("DELETE FROM extractions WHERE chunk_id IN (SELECT chunk_id FROM extractions LIMIT 2)")
    model.calls.clear()
    r2 = run_extraction(store, ModelClient(model, store, "r2"), Prompts(), Settings(extract_mode="json"), progress=False)
    assert r2.extracted == 2 and r2.reused == n_units - 2
    # the index's cache answered the two redone units: no model call at all
    assert model.calls == []
    mentions = store.con.execute("SELECT chunk_id, norm, count(*) FROM entity_mentions GROUP BY ALL HAVING count(*) > 1").fetchall()
    assert mentions == []  # no duplicate rows


def test_changing_extraction_settings_re_extracts(tmp_path):
    model = FakeModel()
    store = _units_store(tmp_path, model)
    run_extraction(store, ModelClient(model, store, "r"), Prompts(), Settings(extract_mode="json"), progress=False)
    r = run_extraction(store, ModelClient(model, store, "r"), Prompts(), Settings(extract_mode="json", max_candidates=5), progress=False)
    assert r.extracted == store.count("text_units")


def test_llm_extraction_output_is_grounded_in_candidates(tmp_path):
    def inventive(system, user, schema):
        return json.dumps({"entities": {"Alice Smith": "person", "Marie Curie": "person"},
                           "relationships": [{"source": "Alice Smith", "target": "Marie Curie", "strength": 3}]})
    model = FakeModel(script=inventive)
    store = _units_store(tmp_path, model)
    run_extraction(store, ModelClient(model, store, "r"), Prompts(), Settings(extract_mode="json", cooccurrence=False), progress=False)
    names = {r[0] for r in store.con.execute("SELECT DISTINCT norm FROM entity_mentions").fetchall()}
    assert names == {"alice smith"}
    assert store.count("relationship_mentions") == 0
    assert store.con.execute("SELECT sum(n_dropped) FROM extractions").fetchone()[0] > 0


def test_units_cut_by_the_deadline_are_redone_next_run(tmp_path):
    model = FakeModel()
    model.finish = "deadline"
    store = _units_store(tmp_path, model)
    n = store.count("text_units")
    run_extraction(store, ModelClient(model, store, "r"), Prompts(), Settings(extract_mode="json"), progress=False)
    assert store.count("llm_cache") == 0  # never cached
    model.finish = "stop"
    r = run_extraction(store, ModelClient(model, store, "r2"), Prompts(), Settings(extract_mode="json"), progress=False)
    assert r.extracted == n and r.reused == 0


def test_a_user_prompt_without_its_placeholders_is_refused(tmp_path):
    import pytest

    from slmgraph.errors import UserError

    (tmp_path / "basic_user.txt").write_text("Answer: $question only")
    (tmp_path / "nosuch_prompt.txt").write_text("x")
    # checked when the folder is opened, before any model is loaded
    with pytest.raises(UserError, match=r"basic_user.txt does not use \$context"):
        Prompts(tmp_path)
    (tmp_path / "basic_user.txt").write_text("Answer $question from $context only")
    p = Prompts(tmp_path)
    assert p.fill("basic_user", question="q", context="c") == "Answer q from c only"
    assert p.fill("map_user", question="q", context="c").startswith("Question: q")  # bundled file still used


# --- grounding and free names ----------------------------------------------------

from slmgraph.indexing.stages.extract import extraction_key
from slmgraph.indexing.stages.extract_schema import FREE_NAME_MAX_CHARS, free_extraction_schema, ground


def test_free_schema_bounds_names_and_counts_and_converts_to_a_grammar():
    s = Settings(max_candidates=7)
    for with_desc in (False, True):
        sch = free_extraction_schema(s, with_desc)
        ents = sch["properties"]["entities"]
        assert ents["type"] == "array" and ents["maxItems"] == 7
        name = ents["items"]["properties"]["name"]
        assert name == {"type": "string", "minLength": 1, "maxLength": FREE_NAME_MAX_CHARS}
        assert "enum" not in name
        rel = sch["properties"]["relationships"]["items"]["properties"]
        assert rel["source"] == name and rel["strength"]["enum"] == list(range(1, 11))
        assert ("description" in ents["items"]["properties"]) is with_desc
    # llama.cpp's converter honours the bounds (a schema it cannot convert would fall back to any JSON)
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(free_extraction_schema(s, False)))
    rules = dict(line.split(" ::= ", 1) for line in gbnf.splitlines())
    assert rules["entities-item-name"].count("char") == FREE_NAME_MAX_CHARS      # 1 required + 59 optional
    assert rules["entities"].count("entities-item") == 7                          # maxItems
    # the few-shot examples have the schema's shape
    for name in ("extract_example_free_text", "extract_example_free_model"):
        ex = json.loads(Prompts().text(name))
        assert isinstance(ex["entities"], list) and {"name", "type"} <= set(ex["entities"][0])
        ents, rels, dropped = validate(ex, None, Settings().entity_types)
        assert dropped == 0 and len(ents) == 4 and len(rels) == 3


def test_validate_free_names_keeps_written_names_and_drops_bad_ones():
    data = {"entities": [{"name": " Marie   Curie ", "type": "person"}, {"name": "marie curie", "type": "person"},
                         {"name": "x" * (FREE_NAME_MAX_CHARS + 1), "type": "person"}, {"name": "...", "type": "other"},
                         {"name": 7, "type": "person"}],
            "relationships": [{"source": "Marie Curie", "target": "Sorbonne", "strength": 7},
                              {"source": "Marie Curie", "target": "", "strength": 7}]}
    ents, rels, dropped = validate(data, None, TYPES)
    assert [e["name"] for e in ents] == ["Marie Curie", "Sorbonne"]    # endpoint added, as GraphRAG does
    assert rels == [{"source": "Marie Curie", "target": "Sorbonne", "description": "", "strength": 7}]
    assert dropped == 4 + 1


def test_ground_drops_names_not_in_the_text_and_their_relationships():
    text = "Alice Smith founded Acme Corporation's lab in Paris."
    ents = [{"name": n, "type": "unknown", "description": ""}
            for n in ("Alice Smith", "the Acme Corporation", "Marie Curie", "Pari")]
    rels = [{"source": "Alice Smith", "target": "Marie Curie"}, {"source": "Alice Smith", "target": "the Acme Corporation"},
            {"source": "Pari", "target": "Alice Smith"}]
    kept, krels, n = ground(text, ents, rels)
    assert [e["name"] for e in kept] == ["Alice Smith", "the Acme Corporation"] and n == 2
    assert krels == [rels[1]]


def _free_inventive(system, user, schema):
    if "choices" in schema:
        return "N"  # the gleaning check: nothing missed
    assert schema["properties"]["entities"]["type"] == "array"      # free names were asked for
    assert "Candidate names" not in user
    return json.dumps({"entities": [{"name": "Alice Smith", "type": "person"}, {"name": "Marie Curie", "type": "person"},
                                    {"name": "Paris", "type": "location"}],
                       "relationships": [{"source": "Alice Smith", "target": "Marie Curie", "strength": 3},
                                         {"source": "Marie Curie", "target": "Sorbonne", "strength": 3},
                                         {"source": "Alice Smith", "target": "Paris", "strength": 3}]})


def test_free_names_mode_grounding_drops_and_counts_an_invented_name(tmp_path):
    model = FakeModel(script=_free_inventive)
    store = _units_store(tmp_path, model)
    n_units = store.count("text_units")
    s = Settings(constrain_names=False, cooccurrence=False)
    r = run_extraction(store, ModelClient(model, store, "r"), Prompts(), s, progress=False)
    names = {row[0] for row in store.con.execute("SELECT DISTINCT norm FROM entity_mentions").fetchall()}
    assert names == {"alice smith", "paris"}
    # Marie Curie and Sorbonne (added as a relationship endpoint) are dropped in every unit, with their relationships
    assert r.ungrounded == 2 * n_units
    assert store.con.execute("SELECT sum(n_ungrounded) FROM extractions").fetchone()[0] == 2 * n_units
    rels = store.con.execute("SELECT DISTINCT source_norm, target_norm FROM relationship_mentions").fetchall()
    assert rels == [("alice smith", "paris")]
    # without grounding the invented names stay
    (tmp_path / "b").mkdir()
    store2 = _units_store(tmp_path / "b", model)
    r2 = run_extraction(store2, ModelClient(model, store2, "r"), Prompts(),
                        Settings(constrain_names=False, cooccurrence=False, grounding=False), progress=False)
    assert r2.ungrounded == 0
    assert {"marie curie", "sorbonne"} <= {row[0] for row in store2.con.execute(
        "SELECT DISTINCT norm FROM entity_mentions").fetchall()}


def test_candidate_mode_grounds_nothing_away(tmp_path):
    model = FakeModel()
    store = _units_store(tmp_path, model)
    r = run_extraction(store, ModelClient(model, store, "r"), Prompts(), Settings(extract_mode="json"), progress=False)
    assert r.entities > 0 and r.ungrounded == 0
    assert all(schema["properties"]["entities"]["type"] == "object" for _, _, schema in model.calls
               if "choices" not in schema)


def test_extraction_key_changes_with_naming_and_grounding():
    base = extraction_key("text", "m", "p", Settings())
    assert extraction_key("text", "m", "p", Settings(constrain_names=False)) != base
    assert extraction_key("text", "m", "p", Settings(grounding=False)) != base
    assert extraction_key("text", "m", "p", Settings()) == base


def test_switching_to_free_names_re_extracts_with_the_free_prompt(tmp_path):
    model = FakeModel()
    store = _units_store(tmp_path, model)
    run_extraction(store, ModelClient(model, store, "r"), Prompts(), Settings(extract_mode="json"), progress=False)
    model.calls.clear()
    r = run_extraction(store, ModelClient(model, store, "r"), Prompts(), Settings(constrain_names=False),
                       progress=False)
    assert r.extracted == store.count("text_units") and model.calls
    system, user, _ = model.calls[0]
    assert '"entities": [{"name": "Marie Curie"' in system and user.startswith("Text:\n")


def test_stats_show_the_grounding_drop_rate(tmp_path):
    from slmgraph.tools.stats import collect, render

    model = FakeModel(script=_free_inventive)
    store = _units_store(tmp_path, model)
    run_extraction(store, ModelClient(model, store, "r"), Prompts(), Settings(constrain_names=False, cooccurrence=False),
                   progress=False)
    figs = collect(store)
    n = store.count("text_units")
    assert figs["grounding"] == {"entities_before": 4 * n, "ungrounded": 2 * n, "rate": 0.5}
    assert "grounding: %d of %d extracted entities dropped (50.0 %%)" % (2 * n, 4 * n) in render(figs, "x")


def test_the_llm_free_progress_bar_shows_no_token_rate(tmp_path, capsys):
    model = FakeModel()
    store = _units_store(tmp_path, model)
    r = run_extraction(store, None, Prompts(), Settings(extractor="nlp", workers=1), progress=True)
    err = capsys.readouterr().err
    assert r.extracted == store.count("text_units") and f"{r.entities} entities" in err
    assert "tok/s" not in err  # no model tokens on this route: no "0 tok/s"
    store.close()
