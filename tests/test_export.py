"""slmgraph export: GraphML that igraph and networkx read, graphrag-shaped Parquet/CSV tables."""

import duckdb
import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.cli.main import main
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index

GRAPHRAG_COLUMNS = {  # microsoft/graphrag docs/index/outputs.md (+ id, human_readable_id on every table)
    "documents": ["id", "human_readable_id", "title", "text", "text_unit_ids"],
    "text_units": ["id", "human_readable_id", "text", "n_tokens", "document_ids", "entity_ids", "relationship_ids",
                   "covariate_ids"],
    "entities": ["id", "human_readable_id", "title", "type", "description", "text_unit_ids", "frequency", "degree",
                 "x", "y"],
    "relationships": ["id", "human_readable_id", "source", "target", "description", "weight", "combined_degree",
                      "text_unit_ids"],
    "communities": ["id", "human_readable_id", "community", "level", "parent", "children", "title", "entity_ids",
                    "relationship_ids", "text_unit_ids", "period", "size"],
    "community_reports": ["id", "human_readable_id", "community", "level", "parent", "children", "title",
                          "summary", "full_content", "rank", "rating_explanation", "findings", "full_content_json",
                          "period", "size"],
}


@pytest.fixture
def db(tmp_path, corpus):
    db = tmp_path / "i.duckdb"
    run_index(corpus, db, Settings(min_community_size=2, claims=True), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    return db


def _counts(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("documents", "text_units", "entities", "relationships", "communities",
                          "community_reports", "claims")}
    finally:
        con.close()


def test_graphml_loads_in_igraph_and_networkx_with_every_entity(db, tmp_path, capsys):
    import igraph as ig

    assert main(["export", "--db", str(db), "--format", "graphml", "--out", str(tmp_path / "g")]) == 0
    path = tmp_path / "g" / "graph.graphml"
    assert str(path) in capsys.readouterr().out
    n = _counts(db)
    g = ig.Graph.Read_GraphML(str(path))
    assert g.vcount() == n["entities"] and g.ecount() == n["relationships"]
    assert {"name", "type", "description", "degree", "community_level_0"} <= set(g.vs.attributes())
    assert {"weight", "description"} <= set(g.es.attributes())
    assert all(v["community_level_0"] >= 0 for v in g.vs)  # every level covers every entity
    nx = pytest.importorskip("networkx")
    h = nx.read_graphml(path)
    assert h.number_of_nodes() == n["entities"]
    assert h.number_of_edges() == n["relationships"]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_tables_have_graphrags_names_and_the_index_row_counts(db, tmp_path, fmt):
    assert main(["export", "--db", str(db), "--format", fmt, "--out", str(tmp_path / fmt)]) == 0
    n = _counts(db)
    con = duckdb.connect()
    for table, cols in GRAPHRAG_COLUMNS.items():
        path = tmp_path / fmt / f"{table}.{fmt}"
        got = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM '{path}'").fetchall()]
        assert got[:len(cols)] == cols, table
        assert con.execute(f"SELECT count(*) FROM '{path}'").fetchone()[0] == n[table]
    cov = tmp_path / fmt / f"covariates.{fmt}"
    assert n["claims"] and con.execute(f"SELECT count(*) FROM '{cov}'").fetchone()[0] == n["claims"]
    if fmt == "parquet":
        ents = con.execute(f"SELECT sum(len(entity_ids)) FROM '{tmp_path / fmt}/communities.parquet' "
                           "WHERE level = 0").fetchone()[0]
        assert ents == n["entities"]
        rel = con.execute(f"SELECT source, target FROM '{tmp_path / fmt}/relationships.parquet' LIMIT 1").fetchone()
        names = {r[0] for r in con.execute(f"SELECT title FROM '{tmp_path / fmt}/entities.parquet'").fetchall()}
        assert set(rel) <= names
        pd = pytest.importorskip("pandas")
        assert list(pd.read_parquet(tmp_path / fmt / "entities.parquet").columns)[:10] == GRAPHRAG_COLUMNS["entities"]


def test_csv_list_columns_are_json_a_reader_can_parse(db, tmp_path):
    import csv
    import json

    assert main(["export", "--db", str(db), "--format", "csv", "--out", str(tmp_path / "csv")]) == 0
    with open(tmp_path / "csv" / "communities.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows
    for row in rows:
        ids = json.loads(row["entity_ids"])
        assert isinstance(ids, list) and all(isinstance(i, str) for i in ids)
    with open(tmp_path / "csv" / "community_reports.csv", newline="", encoding="utf-8") as f:
        reports = list(csv.DictReader(f))
    assert all(isinstance(json.loads(r["findings"]), list) for r in reports)


def test_export_mistakes_are_one_line(db, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert main(["export", "--db", str(db), "--format", "csv", "--out", str(tmp_path / "file")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("slmgraph: error: ") and "is a file" in err and "\n" not in err
    with pytest.raises(SystemExit) as e:
        main(["export", "--db", str(db), "--format", "xlsx", "--out", str(tmp_path / "o")])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err
    assert main(["export", "--db", str(tmp_path / "none.duckdb"), "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_help_lists_the_ecosystem_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for cmd in ("init", "export", "picture", "bench", "prompt-tune"):
        assert cmd in out
    with pytest.raises(SystemExit):
        main(["index", "--help"])
    assert "--config" in capsys.readouterr().out


def test_bench_with_the_fake_model_writes_table_json_and_png(tmp_path, corpus, capsys, monkeypatch):
    import json

    import slmgraph.model.backend

    monkeypatch.setattr(slmgraph.model.backend, "load_model", lambda *a, **k: FakeModel())
    monkeypatch.setattr("slmgraph.indexing.stages.embed.Embedder", lambda *a, **k: FakeEmbedder())
    monkeypatch.setattr("slmgraph.query.question_embed.question_embedder", lambda *a, **k: FakeEmbedder())
    gguf = tmp_path / "other.gguf"
    gguf.write_bytes(b"GGUF")
    (tmp_path / "questions.txt").write_text("What did Alice Smith build?\n", encoding="utf-8")  # beside the corpus
    code = main(["bench", "--models", f"bundled,{gguf}", "--corpus", str(corpus), "--out", str(tmp_path / "b"),
                 "--workers", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "raw tok/s" in out and "x raw" in out
    res = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert len(res["models"]) == 2
    for m in res["models"]:
        # a < 1B model's default extraction is LLM-free (README "Small models"): no extraction call
        assert m["stages"].get("extract", {}).get("calls", 0) == 0 and m["raw"]["gen_tok_s"] > 0
        assert m["entities"] > 0
    if pytest.importorskip("matplotlib"):
        assert (tmp_path / "b" / "bench.png").stat().st_size > 1000


def test_bench_mistakes_are_one_line(tmp_path, capsys):
    assert main(["bench", "--models", str(tmp_path / "none.gguf"), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("slmgraph: error: ") and "none.gguf" in err and "\n" not in err
    assert main(["bench", "--models", ",", "--out", str(tmp_path / "b")]) == 2
    assert "--models is empty" in capsys.readouterr().err
