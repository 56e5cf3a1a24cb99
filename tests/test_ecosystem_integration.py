"""Integration: init / --config, the Python API, stats sources, export, picture, prompt-tune and bench (real GGUF)."""

import duckdb
import pytest

import slmgraph
from slmgraph.cli.main import main
from slmgraph.samples import DULCE

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The bundled sample indexed through the Python API with a settings file written by ``slmgraph init``."""
    from slmgraph.config.settings import Settings
    from slmgraph.model.backend import load_model

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
        # extractive and cited; the bundled 135M model writes no opening sentence by default (Settings.opening)
        assert a.text.strip() and a.level == 0 and a.citations.get("reports") and a.model_calls == 0
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
    from slmgraph.config.prompting import Prompts

    assert main(["prompt-tune", str(DULCE), "--out", str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out
    assert "example passage:" in out
    Prompts(tmp_path / "p").check()
    system = (tmp_path / "p" / "extract_system.txt").read_text()
    assert "Marie Curie" not in system and "Candidate names:" in system


def test_bench_with_the_real_model_on_a_tiny_corpus_questions_and_gold(tmp_path, corpus, capsys):
    import json

    (tmp_path / "questions.txt").write_text("What did Alice Smith and Bob Jones build at Acme Corporation?\n"
                                            "Who studied physics with Dan Brown in Berlin?\n", encoding="utf-8")
    off = tmp_path / "off.txt"
    off.write_text("How do I bake sourdough bread at home?\nWhich wines pair well with grilled salmon?\n",
                   encoding="utf-8")
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps([{
        "title": "Tiny", "sents": [["Alice", "Smith", "met", "Bob", "Jones", "in", "Paris", "."],
                                   ["Smith", "founded", "Acme", "Corporation", "there", "."]],
        "vertexSet": [[{"name": "Alice Smith", "type": "PER"}, {"name": "Smith", "type": "PER"}],
                      [{"name": "Bob Jones", "type": "PER"}], [{"name": "Paris", "type": "LOC"}],
                      [{"name": "Acme Corporation", "type": "ORG"}]],
        "labels": [{"h": 0, "t": 1, "r": "P1"}, {"h": 3, "t": 2, "r": "P2"}]}]), encoding="utf-8")
    code = main(["bench", "--corpus", str(corpus), "--offtopic", str(off), "--gold", str(gold),
                 "--out", str(tmp_path / "b")])
    out = capsys.readouterr().out
    assert code == 0
    assert "AUC P(yes)" in out and "entity F1 strict" in out
    m = json.loads((tmp_path / "b" / "bench.json").read_text())["models"][0]
    assert m["raw"]["prompt_tok_s"] > 0 and m["raw"]["gen_tok_s"] > 0
    a = m["answers"]
    assert a["on_topic"]["questions"] == 2 and a["off_topic"]["questions"] == 2
    assert a["auc_signal_in_use"] is not None and a["auc_model_p_yes"] is not None
    assert m["stages"]["help"]["calls"] >= 4 * a["model_signal_reports"]  # P(yes) per question and report
    assert m["gold"]["documents"] == 1 and m["gold"]["entities_strict_f1"] > 0
