"""The estimate of a build that embeds text units ahead, during LLM-free extraction (slmgraph.tools.estimate)."""

import pytest

from slmgraph.config.settings import Settings
from slmgraph.tools.estimate import _embed_ahead_overlap


class M:
    n_threads = 2


def _stages(extract, graph, embed):
    return {"extract": {"seconds": extract}, "graph": {"seconds": graph}, "embed": {"seconds": embed}}


def test_text_units_encoded_during_extraction_leave_the_embed_stage_and_the_load_the_graph_stage():
    st = _stages(extract=60.0, graph=10.0, embed=80.0)
    hidden = _embed_ahead_overlap(st, Settings(extractor="nlp"), M(), "graph", 4.0, 50.0, 1.6)
    assert hidden == pytest.approx((60.0 - 4.0) / 1.6)
    assert st["graph"]["seconds"] == pytest.approx(6.0) and st["embed"]["seconds"] == pytest.approx(80.0 - hidden)
    # A short extraction hides only what its window holds; a long one at most all of the text units.
    st = _stages(extract=400.0, graph=10.0, embed=80.0)
    assert _embed_ahead_overlap(st, Settings(extractor="nlp"), M(), "embed", 4.0, 50.0, 1.6) == 50.0
    assert st["embed"]["seconds"] == pytest.approx(80.0 - 4.0 - 50.0) and st["graph"]["seconds"] == 10.0


def test_no_overlap_without_a_spare_core_or_with_ray():
    for settings, threads in ((Settings(extractor="nlp"), 1), (Settings(extractor="nlp", executor="ray"), 2)):
        M.n_threads = threads
        st = _stages(extract=60.0, graph=10.0, embed=80.0)
        assert _embed_ahead_overlap(st, settings, M(), "graph", 4.0, 50.0, 1.6) == 0.0
        assert st == _stages(extract=60.0, graph=10.0, embed=80.0)
    M.n_threads = 2


def test_the_sample_is_extracted_on_the_worker_processes_the_whole_corpus_gets(tmp_path):
    from conftest import FakeEmbedder, FakeModel, people_corpus

    from slmgraph.indexing.pipeline import run_index
    from slmgraph.indexing.stages.extract import NLP_POOL_MIN_UNITS
    from slmgraph.tools.estimate import estimate

    docs = people_corpus(tmp_path / "c", n_docs=60)
    settings = Settings(min_community_size=2, n_threads=2)
    est = estimate(docs, settings, FakeModel(), progress=False, embedder_factory=FakeEmbedder, say=lambda m: None)
    out = run_index(docs, tmp_path / "real.duckdb", settings, model=FakeModel(), progress=False,
                    embedder_factory=FakeEmbedder, say=lambda m: None)
    cal = est["calibration"]["llm_free"]
    # The sample alone is too small for workers; the build of the whole corpus runs two, and so does the sample.
    assert cal["units"] < NLP_POOL_MIN_UNITS <= est["corpus"]["text_units"]
    assert out["extract"]["workers"] == 2 and cal["extract_workers"] == 2
    # The build's workers take both cores: nothing is embedded ahead during its extraction, nor in the estimate.
    assert cal["embed_ahead_hidden_seconds"] == 0.0


def test_no_overlap_when_the_extraction_workers_fill_the_cores():
    st = _stages(extract=60.0, graph=10.0, embed=80.0)
    assert _embed_ahead_overlap(st, Settings(extractor="nlp"), M(), "graph", 4.0, 50.0, 1.6, fills_cores=True) == 0.0
    assert st == _stages(extract=60.0, graph=10.0, embed=80.0)
