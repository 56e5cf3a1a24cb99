"""The stage bench's story workload is capped: by default the model writes the reports of the
``STORY_REPORTS`` largest communities and the summaries of the ``STORY_SUMMARIES`` elements with the most
descriptions, so the bench's cost does not grow with the demo story's graph; flags raise the caps."""

from __future__ import annotations

import pytest
from conftest import FakeEmbedder, FakeModel, stage_of

from slmgraph.eval import calibrate
from slmgraph.cli.main import main
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.indexing.pipeline import run_index
from slmgraph.indexing.stages.report_store import largest_communities
from slmgraph.samples import DULCE
from slmgraph.store.db import Store


@pytest.fixture(scope="module")
def story_graph(tmp_path_factory):
    """The demo story indexed on its LLM-free route: how many communities would get a model report."""
    db = tmp_path_factory.mktemp("story") / "s.duckdb"
    run_index(DULCE, db, calibrate.llm_free_settings(Settings()), progress=False, model=FakeModel(),
              say=lambda m: None, embedder_factory=FakeEmbedder)
    st = Store(db, read_only=True)
    try:
        return largest_communities(st, None), dict(st.con.execute(
            "SELECT community_id, count(*) FROM community_members GROUP BY 1").fetchall())
    finally:
        st.close()


def test_largest_communities_are_ranked_by_size_and_cut(story_graph):
    ids, size = story_graph
    assert len(ids) > calibrate.STORY_REPORTS  # else the default cap would not be exercised
    assert [size[c] for c in ids] == sorted((size[c] for c in ids), reverse=True)
    assert all(size[c] > 1 for c in ids)


@pytest.mark.parametrize("reports", [None, calibrate.STORY_REPORTS + 1])
def test_the_story_stage_writes_at_most_n_model_reports_the_largest_and_scores_those(tmp_path, story_graph,
                                                                                     reports):
    ids, _ = story_graph
    n = calibrate.STORY_REPORTS if reports is None else reports
    wl = calibrate.workload(gold_docs=1, on_topic=1, off_topic=1,
                            **({} if reports is None else {"reports": reports}))
    model = FakeModel()
    res = calibrate.run([None], tmp_path / "out", Settings(), say=lambda m: None, load=lambda p, s: model, wl=wl,
                        embedder_factory=FakeEmbedder)
    free, row = res["rows"]
    assert row["stages"]["report"]["calls"] == n
    assert free["stages"]["report"]["figures"]["texts"] == row["stages"]["report"]["figures"]["texts"] == n
    assert res["workload"]["story_reports"] == n
    written = [u for s, u, sc in model.calls if stage_of(sc, s) == "report"]
    assert len(written) == n


def test_the_story_stage_writes_at_most_n_model_summaries(tmp_path):
    wl = calibrate.workload(gold_docs=1, on_topic=1, off_topic=1, summaries=2, reports=1)
    model = FakeModel()
    res = calibrate.run([None], tmp_path / "out", Settings(), say=lambda m: None, load=lambda p, s: model, wl=wl,
                        embedder_factory=FakeEmbedder)
    assert res["rows"][1]["stages"]["summarize"]["calls"] == 2


def test_a_story_cap_below_one_is_a_one_line_error(capsys):
    with pytest.raises(UserError, match="--story-reports 0"):
        calibrate.workload(reports=0)
    assert main(["bench", "--story-summaries", "0", "--out", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--story-summaries 0" in err[0]
