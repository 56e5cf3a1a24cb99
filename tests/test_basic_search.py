"""Basic search answers: no passage labels leak into the text."""

from conftest import FakeEmbedder, FakeModel

from slmgraph.model.client import ModelClient
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.store.db import Store


def test_a_basic_answer_does_not_leak_passage_labels(tmp_path, corpus):
    from conftest import default_script, stage_of

    from slmgraph.query.engines.basic_search import basic_search

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
