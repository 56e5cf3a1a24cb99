"""A prompts folder's examples and EntityRuler phrase patterns steer the LLM-free candidate pass."""

import json

import pytest

from conftest import FakeEmbedder, FakeModel
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.indexing.pipeline import idle_options, run_index
from slmgraph.store.db import Store

TYPES = ("person", "organization", "location", "weapon")


def _tuned(tmp_path, entities: dict) -> str:
    d = tmp_path / "tuned"
    d.mkdir()
    (d / "extract_example_model.txt").write_text(json.dumps(
        {"entities": {n: {"type": t, "description": ""} for n, t in entities.items()}, "relationships": []}) + "\n",
        encoding="utf-8")
    return str(d)


def _types(db) -> dict:
    st = Store(db, read_only=True)
    try:
        return dict(st.con.execute("SELECT name, type FROM entities").fetchall())
    finally:
        st.close()


def test_an_example_naming_an_entity_of_a_new_type_gives_it_that_type_in_the_llm_free_index(tmp_path, corpus):
    (corpus / "gamma.txt").write_text("Eve Black carried Excalibur to Paris. The Thornblade stayed with Acme "
                                      "Corporation; Eve Black sold the Thornblade in Paris.\n", encoding="utf-8")
    tuned = _tuned(tmp_path, {"Excalibur": "weapon", "Thornblade": "weapon", "Alice Smith": "other"})
    said = []
    s = Settings(workers=1, entity_types=TYPES, prompts_dir=tuned)
    run_index(corpus, tmp_path / "i.duckdb", s, progress=False, model=FakeModel(), say=said.append,
              embedder_factory=FakeEmbedder)
    types = _types(tmp_path / "i.duckdb")
    assert types.get("Excalibur") == "weapon" and types.get("Thornblade") == "weapon"
    assert types.get("Alice Smith") == "person"  # "other" in an example is no type
    assert not any("no entity gets weapon" in x for x in said)
    assert sum("only its examples' 2 typed names act" in x for x in said) == 1


def test_entity_patterns_give_names_a_type_and_a_changed_folder_rebuilds_the_extraction(tmp_path, corpus):
    d = tmp_path / "tuned"
    d.mkdir()
    (d / "entity_patterns.jsonl").write_text('{"label": "ORGANIZATION", "pattern": "Paris"}\n', encoding="utf-8")
    s = Settings(workers=1, entity_types=TYPES, prompts_dir=str(d))
    run_index(corpus, tmp_path / "i.duckdb", s, progress=False, model=FakeModel(), say=lambda m: None,
              embedder_factory=FakeEmbedder)
    assert _types(tmp_path / "i.duckdb")["Paris"] == "organization"
    (d / "entity_patterns.jsonl").write_text('{"label": "LOCATION", "pattern": "Acme Corporation"}\n',
                                             encoding="utf-8")
    run_index(corpus, tmp_path / "i.duckdb", s, progress=False, model=FakeModel(), say=lambda m: None,
              embedder_factory=FakeEmbedder)
    types = _types(tmp_path / "i.duckdb")
    assert types["Acme Corporation"] == "location" and types["Paris"] == "location"


def test_a_token_pattern_is_refused_in_one_line_naming_the_file_and_line(tmp_path, corpus):
    d = tmp_path / "tuned"
    d.mkdir()
    (d / "entity_patterns.jsonl").write_text('\n{"label": "WEAPON", "pattern": [{"LOWER": "sword"}]}\n',
                                             encoding="utf-8")
    with pytest.raises(UserError, match=r"entity_patterns.jsonl line 2: only phrase patterns"):
        run_index(corpus, tmp_path / "i.duckdb", Settings(workers=1, entity_types=TYPES, prompts_dir=str(d)),
                  progress=False, model=FakeModel(), say=lambda m: None, embedder_factory=FakeEmbedder)


def test_a_type_the_examples_give_outside_the_entity_types_is_named_in_one_line(tmp_path):
    tuned = _tuned(tmp_path, {"Excalibur": "weapon"})
    lines = idle_options(Settings(workers=1, prompts_dir=tuned), FakeModel())
    assert sum("type names as weapon, not among the entity types" in x for x in lines) == 1
    assert all("\n" not in x for x in lines)
