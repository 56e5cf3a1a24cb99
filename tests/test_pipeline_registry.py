"""The registered stage list of slmgraph.indexing.pipeline: what ``index``, ``estimate`` and the gold scorer
run (names and order), a stage added to the list runs and is recorded with no other edit, and the runner,
not the stages, marks the index unfinished."""

from __future__ import annotations

import dataclasses
import json

from conftest import FakeEmbedder, FakeModel

import slmgraph.indexing.pipeline as pipeline
from slmgraph.config.settings import Settings
from slmgraph.eval.gold import GoldDoc, WordTokenizer, run_config
from slmgraph.indexing.pipeline import STAGES, Stage, run_index
from slmgraph.indexing.stages.ingest import Document, ingest
from slmgraph.store.db import Store
from slmgraph.tools.estimate import estimate

REGISTERED = ["ingest", "extract", "claims", "graph", "communities", "reports", "embed"]


def _recording(monkeypatch) -> list[str]:
    """Replace each registered stage by one that notes its name and runs it; returns the names run, in order."""
    ran: list[str] = []

    def wrap(st: Stage) -> Stage:
        def run(ctx):
            ran.append(st.name)
            return st.run(ctx)

        return dataclasses.replace(st, run=run)

    monkeypatch.setattr(pipeline, "STAGES", [wrap(st) for st in STAGES])
    return ran


def _settings(**kw) -> Settings:
    return Settings(**{"extract_mode": "json", "min_community_size": 2, "reports": "model", "workers": 1, **kw})


def test_the_registry_is_the_pipeline_in_order():
    assert [st.name for st in STAGES] == REGISTERED
    assert [st.name for st in pipeline.stages("graph", "ingest")] == ["ingest", "graph"]  # the list's order


def test_index_runs_every_registered_stage_in_order_and_records_each(tmp_path, corpus, monkeypatch):
    ran = _recording(monkeypatch)
    db = tmp_path / "a.duckdb"
    out = run_index(corpus, db, _settings(claims=True), progress=False, model=FakeModel(),
                    embedder_factory=FakeEmbedder, say=lambda m: None)
    assert ran == REGISTERED
    store = Store(db, read_only=True)
    recorded = [s for (s,) in store.con.execute("SELECT stage FROM stage_runs ORDER BY rowid").fetchall()]
    store.close()
    assert recorded == REGISTERED and all(name in out for name in REGISTERED)


def test_estimate_and_the_gold_scorer_run_subsets_of_the_registered_list(tmp_path, corpus, monkeypatch):
    ran = _recording(monkeypatch)
    estimate(corpus, _settings(), FakeModel(), sample=2, progress=False, embedder_factory=FakeEmbedder,
             say=lambda m: None)
    # the model route: ingest, the calibration sample, then the LLM-free proxy graph's stages
    assert ran == ["ingest", "extract", "extract", "graph", "communities", "reports"]
    ran.clear()
    estimate(corpus, _settings(extractor="nlp", reports="data"), FakeModel(), progress=False,
             embedder_factory=FakeEmbedder, say=lambda m: None)
    assert ran == ["ingest", "extract", "graph", "communities", "reports"]
    ran.clear()
    doc = GoldDoc(0, "Hand made", "Alice Smith met Bob Jones in Paris. Smith founded Acme Corp there.", [], set())
    run_config("nlp", Settings(extractor="nlp"), [doc, doc], WordTokenizer(), embedder_factory=FakeEmbedder,
               say=lambda m: None)
    assert ran == ["ingest", "extract", "graph"] * 2


@dataclasses.dataclass
class Tally:
    """A stage result of a test stage: the entities it counted."""
    entities: int

    def summary(self, settings) -> list[str]:
        return [f"tally: {self.entities} entities"]


def test_a_stage_added_to_the_list_is_run_recorded_and_summarised(tmp_path, corpus, monkeypatch):
    tally = Stage("tally", lambda ctx: Tally(ctx.store.count("entities")), items="entities", derived=True)
    monkeypatch.setattr(pipeline, "STAGES", [*STAGES, tally])
    said: list[str] = []
    db = tmp_path / "a.duckdb"
    out = run_index(corpus, db, _settings(), progress=False, model=FakeModel(), embedder_factory=FakeEmbedder,
                    say=said.append)
    store = Store(db, read_only=True)
    n = store.count("entities")
    row = store.con.execute("SELECT items, note FROM stage_runs WHERE stage = 'tally'").fetchone()
    stages = [s for (s,) in store.con.execute("SELECT stage FROM stage_runs ORDER BY rowid").fetchall()]
    store.close()
    assert n > 0 and row[0] == n and json.loads(row[1]) == {"entities": n}
    assert stages[-2:] == ["embed", "tally"] and out["tally"]["entities"] == n
    assert f"tally: {n} entities" in said
    # a derived stage is up to date with the others on a no-op re-run
    said.clear()
    out = run_index(corpus, db, _settings(), progress=False, model=FakeModel(), embedder_factory=FakeEmbedder,
                    say=said.append)
    assert out["up_to_date"] is True and "tally" not in out
    assert "graph, communities, reports, embed, tally: up to date" in "\n".join(said)


def test_a_stage_leaves_meta_complete_to_the_runner(tmp_path):
    store = Store(tmp_path / "x.duckdb", create=True)
    store.set_meta("complete", "1")
    res = ingest(store, [Document("0" * 16, "a.txt", "Alice Smith met Bob Jones in Paris.")],
                 FakeModel().tokenize, FakeModel().detokenize, 50, 10)
    assert res.added_units == 1 and store.get_meta("complete") == "1"  # the stage alone does not touch it
    store.close()
    run = pipeline.RunStore(tmp_path / "y.duckdb", create=True)
    run.set_meta("complete", "1")
    run.marking = True  # armed by run_index once the run's meta is written
    ingest(run, [Document("0" * 16, "a.txt", "Alice Smith met Bob Jones in Paris.")],
           FakeModel().tokenize, FakeModel().detokenize, 50, 10)
    assert run.get_meta("complete") == "0" and run.marking is False
    run.close()
