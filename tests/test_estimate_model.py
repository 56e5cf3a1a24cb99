"""The estimate's model of the graph's growth, the bulk insert of derived tables, and the throughput
benchmark's stage rows."""

import sys
from pathlib import Path

import duckdb
import pytest

from slmgraph.indexing.stages.concepts import concept_budget
from slmgraph.store.bulk import insert_rows
from slmgraph.tools.estimate import CONCEPT_DEGREE_EXPONENT, predict_graph

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))


def test_concepts_stop_at_the_corpus_budget():
    # The calibration sample of podcast_large: 181 names, 240 concepts; the build kept 332 concepts (its
    # budget) where scaling concepts like names predicted 1,656.
    sample = {"names": 181, "concepts": 240, "name_edges": 222, "concept_edges": 1210}
    pred = predict_graph(sample, 12.76, 0.76, 0.92, 665)
    assert pred["concepts"] == concept_budget(665)
    assert pred["names"] == pytest.approx(181 * 12.76 ** 0.76)
    assert pred["name_edges"] == pytest.approx(222 * 12.76 ** 0.92)
    # Each kept concept keeps the sample's links per concept, grown with the text read.
    assert pred["concept_edges"] == pytest.approx(concept_budget(665) * 1210 / 240 * 12.76 ** CONCEPT_DEGREE_EXPONENT)


def test_a_graph_without_concepts_predicts_none():
    pred = predict_graph({"names": 50, "concepts": 0, "name_edges": 40, "concept_edges": 0}, 4.0, 0.8, 0.9, 400)
    assert pred["concepts"] == 0 and pred["concept_edges"] == 0
    assert pred["names"] == pytest.approx(50 * 4.0 ** 0.8)


def test_insert_rows_keeps_order_nulls_and_replaces():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name VARCHAR, parent INTEGER, w DOUBLE)")
    cols = ("id", "name", "parent", "w")
    insert_rows(con, "t", cols, [[3, "c", None, 1.0], [1, "a", 3, 2.5], [2, None, None, 4]])
    assert con.execute("SELECT * FROM t").fetchall() == [(3, "c", None, 1.0), (1, "a", 3, 2.5), (2, None, None, 4.0)]
    insert_rows(con, "t", cols, [[1, "A", None, 0.5]], replace=("id",))
    assert con.execute("SELECT name, parent FROM t WHERE id = 1").fetchone() == ("A", None)
    insert_rows(con, "t", cols, [])
    assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 3
    with pytest.raises(duckdb.ConstraintException):
        insert_rows(con, "t", cols, [[2, "b", None, 1.0]])


def test_the_embed_ahead_thread_is_no_stage_of_the_throughput_table():
    import index_throughput

    out = {"run_id": "r", "ingest": {"seconds": 2.0}, "extract": {"seconds": 10.0},
           "embed_ahead": {"texts": 9, "thread_seconds": 10.0, "seconds": 10.0}, "graph": {"seconds": 1.0},
           "embed": {"seconds": 5.0}, "compact": {"size": 1}}
    assert list(index_throughput.stage_figures(out)) == ["ingest", "extract", "graph", "embed"]
