"""Integration: init / --config, the Python API, stats sources and export on the demo index (real GGUF)."""

import duckdb
import pytest

import slmgraph
from slmgraph.cli import main
from slmgraph.samples import DULCE

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The bundled sample indexed through the Python API with a settings file written by ``slmgraph init``."""
    from slmgraph.config import Settings
    from slmgraph.backend import load_model

    root = tmp_path_factory.mktemp("eco")
    assert main(["init", str(root)]) == 0
    cfg = root / "slmgraph.toml"
    cfg.write_text(cfg.read_text().replace("max_gleanings = 1", "max_gleanings = 0"))
    model = load_model(None, 8192, Settings().n_threads, 42)
    db = root / "demo.duckdb"
    slmgraph.index(DULCE, db, config=cfg, model=model, seed=42)
    return root, db, model, cfg


def test_api_query_and_stats_sources_on_the_demo_index(demo, capsys):
    root, db, model, cfg = demo
    with slmgraph.open(db, model=model) as ix:
        a = ix.query("What are the main themes of this story?", method="global", level=0)
        assert a.text.strip() and a.level == 0 and a.model_calls >= 1
        st = ix.stats()
    assert st["settings"]["max_gleanings"] == {"value": 0, "source": f"file {cfg.resolve()}"}
    assert st["settings"]["seed"] == {"value": 42, "source": "argument"}
    assert main(["stats", "--db", str(db)]) == 0
    assert "settings of the last index run" in capsys.readouterr().out


def test_export_of_the_demo_index(demo, tmp_path):
    import igraph as ig

    _, db, _, _ = demo
    assert main(["export", "--db", str(db), "--format", "graphml", "--out", str(tmp_path)]) == 0
    assert main(["export", "--db", str(db), "--format", "parquet", "--out", str(tmp_path)]) == 0
    con = duckdb.connect(str(db), read_only=True)
    n_ent = con.execute("SELECT count(*) FROM entities").fetchone()[0]
    n_rep = con.execute("SELECT count(*) FROM community_reports").fetchone()[0]
    con.close()
    assert ig.Graph.Read_GraphML(str(tmp_path / "graph.graphml")).vcount() == n_ent > 0
    nx = pytest.importorskip("networkx")
    assert nx.read_graphml(tmp_path / "graph.graphml").number_of_nodes() == n_ent
    got = duckdb.connect().execute(f"SELECT count(*), count(title) FROM '{tmp_path}/community_reports.parquet'")
    assert got.fetchone() == (n_rep, n_rep)


def test_picture_of_the_demo_index(demo, tmp_path):
    pytest.importorskip("plotly")
    pytest.importorskip("matplotlib")
    import json
    import re

    _, db, _, _ = demo
    out = tmp_path / "index.html"
    assert main(["picture", "--db", str(db), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script id="slmgraph-data" type="application/json">(.+?)</script>', page,
                                re.S).group(1))
    con = duckdb.connect(str(db), read_only=True)
    n, levels = con.execute("SELECT count(*), count(DISTINCT level) FROM communities").fetchone()
    con.close()
    assert len(data) == n and len({c["level"] for c in data}) == levels
    assert (tmp_path / "index.png").stat().st_size > 5000


def test_prompt_tune_with_the_real_model_on_the_sample(tmp_path, capsys):
    from slmgraph.prompting import Prompts

    assert main(["prompt-tune", str(DULCE), "--out", str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out
    assert "example passage:" in out
    Prompts(tmp_path / "p").check()
    system = (tmp_path / "p" / "extract_system.txt").read_text()
    assert "Marie Curie" not in system and "Candidate names:" in system
