"""The whole pipeline with the fake model: content, determinism, incrementality, reports."""

import json

from conftest import FakeEmbedder, FakeModel, default_script, ent_rows, rel_rows, stage_of, super_groups

from slmgraph.config.settings import Settings
from slmgraph.model.client import ModelClient
from slmgraph.indexing.pipeline import run_index
from slmgraph.indexing.stages.report_context import element_context
from slmgraph.store.db import Store


def _index(corpus, db, model=None, **kw):
    model = model or FakeModel()
    s = Settings(**{"extract_mode": "json", "min_community_size": 2, "reports": "model", **kw})
    out = run_index(corpus, db, s, progress=False, model=model, embedder_factory=FakeEmbedder, say=lambda m: None)
    return model, out


def _snapshot(db):
    store = Store(db, read_only=True)
    q = store.con.execute
    snap = {
        "entities": q("SELECT norm, name, type, description FROM entities ORDER BY norm").fetchall(),
        "relationships": q("""SELECT a.norm, b.norm, r.weight FROM relationships r JOIN entities a ON a.entity_id = r.source_id
                              JOIN entities b ON b.entity_id = r.target_id ORDER BY 1, 2""").fetchall(),
        "communities": q("""SELECT c.level, list(e.norm ORDER BY e.norm) FROM communities c JOIN community_members m USING (community_id)
                            JOIN entities e USING (entity_id) GROUP BY c.community_id, c.level ORDER BY 1, 2""").fetchall(),
        "reports": q("SELECT level, title, summary, findings FROM community_reports ORDER BY level, title, summary").fetchall(),
    }
    store.close()
    return snap


def test_index_fills_every_table(tmp_path, corpus):
    db = tmp_path / "a.duckdb"
    _, out = _index(corpus, db)
    store = Store(db, read_only=True)
    for table in ("documents", "text_units", "extractions", "entities", "relationships", "communities",
                  "community_reports", "embeddings", "llm_calls", "stage_runs"):
        assert store.count(table) > 0, table
    assert store.count("documents") == 3
    # every community has a report, every level covers every entity
    assert store.con.execute("SELECT count(*) FROM communities LEFT JOIN community_reports USING (community_id) "
                             "WHERE community_reports.community_id IS NULL").fetchone()[0] == 0
    n_ent = store.count("entities")
    per_level = store.con.execute("SELECT level, count(*) FROM community_members JOIN communities USING (community_id) "
                                  "GROUP BY level").fetchall()
    assert all(n == n_ent for _, n in per_level)
    stages = {r[0] for r in store.con.execute("SELECT stage FROM llm_calls").fetchall()}
    assert {"extract", "report"} <= stages
    assert store.get_meta("complete") == "1"


def test_same_input_twice_gives_same_index_and_no_model_calls(tmp_path, corpus):
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    _index(corpus, a)
    _index(corpus, b)
    assert _snapshot(a) == _snapshot(b)
    model = FakeModel()
    # the fake tokenizer assigns ids on first sight; warm it like the first run so cache keys match
    _index(corpus, tmp_path / "warm.duckdb", model=model)
    model.calls.clear()
    before = _snapshot(tmp_path / "warm.duckdb")
    _, out = _index(corpus, tmp_path / "warm.duckdb", model=model)
    assert model.calls == []
    assert out["extract"]["extracted"] == 0
    # nothing new under the same settings: the later stages are not rebuilt, and the index is unchanged
    assert out.get("up_to_date") is True and "graph" not in out and "reports" not in out
    assert _snapshot(tmp_path / "warm.duckdb") == before
    assert Store(tmp_path / "warm.duckdb", read_only=True).get_meta("complete") == "1"


def test_a_rerun_rebuilds_after_a_settings_change_or_an_unfinished_run(tmp_path, corpus):
    db = tmp_path / "a.duckdb"
    model, _ = _index(corpus, db)
    _, out = _index(corpus, db, model=model, leiden_resolution=2.0)
    assert "up_to_date" not in out and "communities" in out, "a changed setting rebuilds the later stages"
    _, out = _index(corpus, db, model=model, leiden_resolution=2.0)
    assert out.get("up_to_date") is True
    store = Store(db)
    store.set_meta("complete", "0")  # as left by a run killed after extraction
    store.close()
    _, out = _index(corpus, db, model=model, leiden_resolution=2.0)
    assert "up_to_date" not in out and "reports" in out, "an unfinished index is finished, not skipped"


def test_adding_a_document_extracts_only_its_text_units(tmp_path, corpus):
    db = tmp_path / "a.duckdb"
    model, _ = _index(corpus, db)
    before = Store(db, read_only=True)
    old_reports = {r[0]: r[1] for r in before.con.execute("SELECT full_text, community_id FROM community_reports").fetchall()}
    before.close()
    (corpus / "delta.txt").write_text("Zed Quinn sailed to Lisbon. Zed Quinn loved Lisbon.", encoding="utf-8")
    model.calls.clear()
    _, out = _index(corpus, db, model=model)
    assert out["ingest"]["added_units"] == 1
    extract_calls = [c for c in model.calls if stage_of(c[2], c[0]) == "extract"]
    assert len(extract_calls) == 1 and "Zed Quinn" in extract_calls[0][1]
    report_calls = [c for c in model.calls if stage_of(c[2], c[0]) == "report"]
    after = Store(db, read_only=True)
    n_reports = after.count("community_reports")
    unchanged = sum(1 for (t,) in after.con.execute("SELECT full_text FROM community_reports").fetchall() if t in old_reports)
    after.close()
    assert unchanged > 0, "reports of untouched communities are reused"
    assert len(report_calls) < n_reports
    assert out["reports"]["cache_hits"] > 0, "unchanged communities' reports come from the cache"


def test_another_input_folder_needs_replace(tmp_path, corpus):
    import pytest

    from slmgraph.errors import UserError

    db = tmp_path / "a.duckdb"
    model, _ = _index(corpus, db)
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("Quentin Blake drew Matilda.", encoding="utf-8")
    with pytest.raises(UserError, match="--replace"):
        _index(other, db, model=model)
    store = Store(db, read_only=True)
    assert store.count("documents") == 3  # nothing indexed was lost
    store.close()


def test_report_context_respects_budget_and_ranks_by_combined_degree():
    model = FakeModel()
    client = ModelClient(model, None, "r")
    ents = ent_rows([(i, f"E{i}", "person", f"word{i} " * 5, 10 - i) for i in range(1, 8)])
    rels = rel_rows([(10 + i, 1, i, f"rel{i} " * 4, 1.0, 20 - i) for i in range(2, 8)])
    text, tokens, complete = element_context(client, ents, rels, 60)
    assert tokens <= 60 and not complete
    assert client.count(text) <= 60 + 2
    rel_lines = text.split("-----Relationships-----\n", 1)[1].splitlines()[1:]
    assert rel_lines and rel_lines[0].startswith("E1,E2,rel2")  # highest combined degree first
    full, _, complete_full = element_context(client, ents, rels, 10_000)
    assert complete_full and all(f"E{i}" in full for i in range(1, 8))


def test_higher_level_report_uses_sub_reports_when_elements_do_not_fit(tmp_path):
    store = Store(tmp_path / "h.duckdb", create=True)
    ents, wedges = super_groups()
    ents.remove(99)
    edges = [(a, b) for a, b, _ in wedges]
    store.con.executemany("INSERT INTO entities VALUES (?, ?, ?, 'person', ?, 1, 0)",
                          [[e, f"e{e}", f"Entity{e}", "long description " * 6] for e in ents])
    store.con.executemany("INSERT INTO relationships VALUES (?, ?, ?, 'related closely', 1, 5, 2)",
                          [[i + 1, a, b] for i, (a, b) in enumerate(edges)])
    from slmgraph.indexing.stages.communities import run_communities
    from slmgraph.config.prompting import Prompts
    from slmgraph.indexing.stages.reports import run_reports

    s = Settings(min_community_size=3, seed=1, reports="model")
    run_communities(store, s)
    model = FakeModel()
    client = ModelClient(model, store, "r")
    s.report_context_tokens = client.overhead(Prompts().text("report_system_short"),
                                              Prompts().fill("report_user", context="")) + 200
    run_reports(store, client, Prompts(), s, progress=False)
    kinds = dict(store.con.execute("SELECT context_kind, count(*) FROM community_reports GROUP BY 1").fetchall())
    assert kinds.get("sub-reports", 0) >= 1
    for (ctx_tokens,) in store.con.execute("SELECT context_tokens FROM community_reports").fetchall():
        assert ctx_tokens <= s.report_context_tokens
    sub_prompts = [c[1] for c in model.calls if "Sub-community reports" in c[1]]
    assert sub_prompts and "Sub-report: " in sub_prompts[0]


def _own_words(system, user, schema):
    """The default script, with each model-written description a sentence in the text's own words."""
    out = default_script(system, user, schema)
    if stage_of(schema, system) != "extract" or '"description"' not in out:
        return out
    data = json.loads(out)
    for name, e in data["entities"].items():
        e["description"] = f"{name} appears in the text, founded and joined."
    return json.dumps(data)


def test_a_model_of_1b_parameters_writes_descriptions_and_findings(tmp_path, corpus):
    big = FakeModel(_own_words)
    big.n_params = 2_000_000_000
    db = tmp_path / "big.duckdb"
    _, out = _index(corpus, db, model=big)
    assert out["extract"]["descriptions"] == "model" and out["reports"]["findings"] == "model"
    extract_calls = [c for c in big.calls if stage_of(c[2], c[0]) == "extract"]
    assert '"description"' in extract_calls[0][0]  # the few-shot example with descriptions
    store = Store(db, read_only=True)
    descs = [r[0] for r in store.con.execute("SELECT description FROM entity_mentions").fetchall()]
    assert any("appears in the text" in d for d in descs)
    findings = [json.loads(r[0]) for r in store.con.execute(
        "SELECT findings FROM community_reports WHERE context_kind = 'elements'").fetchall()]
    assert findings and all(f and f[0]["summary"].startswith("About ") for f in findings)
    store.close()


def test_extract_note_reports_grounding_drops(tmp_path, corpus):
    def free_inventive(system, user, schema):
        if stage_of(schema, system) != "extract":
            from conftest import default_script

            return default_script(system, user, schema)
        return json.dumps({"entities": [{"name": "Marie Curie", "type": "person"}], "relationships": []})

    notes: list[str] = []
    out = run_index(corpus, tmp_path / "i.duckdb", Settings(min_community_size=2, constrain_names=False),
                    progress=False, model=FakeModel(script=free_inventive), embedder_factory=FakeEmbedder,
                    say=notes.append)
    n_units = out["extract"]["extracted"]
    assert out["extract"]["ungrounded"] == n_units
    note = next(n for n in notes if n.startswith("extract:"))
    assert f"{n_units} entities dropped by grounding" in note
    notes.clear()
    run_index(corpus, tmp_path / "j.duckdb", Settings(min_community_size=2, grounding=False), progress=False,
              model=FakeModel(), embedder_factory=FakeEmbedder, say=notes.append)
    assert "grounding off" in next(n for n in notes if n.startswith("extract:"))
