"""``slmgraph estimate`` with the fake model: a prediction per stage, nothing written."""

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config import Settings
from slmgraph.estimate import _even_sample, _fit_line, estimate, render


def test_even_sample_spreads_over_the_corpus():
    assert _even_sample(list(range(10)), 3) == [0, 4, 9] or _even_sample(list(range(10)), 3) == [0, 5, 9]
    assert _even_sample([1, 2], 5) == [1, 2]
    assert _even_sample([1, 2, 3], 1) == [2]


def test_fit_line_is_non_negative():
    assert _fit_line([1, 2, 3], [12, 14, 16]) == pytest.approx((10.0, 2.0))
    a, b = _fit_line([1, 2, 3], [30, 20, 10])  # falling: a constant
    assert (a, b) == pytest.approx((20.0, 0.0))
    a, b = _fit_line([5, 5], [7, 9])
    assert (a, b) == pytest.approx((8.0, 0.0))


def test_estimate_predicts_every_stage_from_a_sample(tmp_path, corpus):
    model = FakeModel()
    notes = []
    est = estimate(corpus, Settings(extract_mode="json", min_community_size=2, workers=1, reports="model"), model, sample=2, progress=False,
                   embedder_factory=FakeEmbedder, say=notes.append)
    assert set(est["stages"]) == {"ingest", "extract", "graph", "communities", "reports", "embed"}
    units = est["corpus"]["units_with_candidates"]
    assert est["corpus"]["documents"] == 3 and units >= 3
    ex = est["stages"]["extract"]
    assert ex["calls"] == units  # one extraction call per text unit with candidates (no further names: no check)
    assert est["calibration"]["extract"]["units"] == 2
    assert est["stages"]["reports"]["calls"] >= 1 and est["calibration"]["reports"]["probe_calls"] >= 1
    assert est["total_seconds"] == round(sum(s["seconds"] for s in est["stages"].values()), 1)
    # only the sample and the probe report calls reached the model
    extract_calls = [c for c in model.calls if c[2] and "entities" in c[2].get("properties", {})]
    assert len(extract_calls) == 2
    assert not [c for c in model.calls if "choices" in c[2]]  # every candidate offered at once: no gleaning check
    assert len(model.calls) <= 2 + 4  # + up to four timed report prompts
    assert "calibrate" in notes[0]
    assert "predicted" in render(est) and "total" in render(est)
    a, b = est["calibration"]["extract"]["completion_tokens"]
    assert a >= 0 and b >= 0 and est["notes"] == []


def test_estimate_says_what_it_does_not_include(tmp_path, corpus):
    est = estimate(corpus, Settings(min_community_size=2, workers=1, claims=True, summaries="model"), FakeModel(),
                   sample=1, progress=False, embedder_factory=FakeEmbedder, say=lambda m: None)
    assert any("--claims" in n for n in est["notes"]) and any("summaries" in n for n in est["notes"])
    assert "not estimated: --claims" in render(est)
