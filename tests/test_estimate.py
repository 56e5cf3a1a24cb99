"""``slmgraph estimate`` with the fake model: a prediction per stage, nothing written."""

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.tools.estimate import _even_sample, _fit_line, estimate, render


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


def test_heaps_exponent_recovers_the_growth_of_distinct_items():
    from slmgraph.tools.estimate import heaps_exponent

    pts = [(t, round(3 * t ** 0.6)) for t in (1000, 2000, 4000, 8000, 16000)]
    assert heaps_exponent(pts) == pytest.approx(0.6, abs=0.01)
    assert heaps_exponent([(t, 7) for t in (100, 200, 400)]) == pytest.approx(0.0, abs=1e-9)  # nothing new after the first unit
    assert heaps_exponent([(100, 5), (200, 40)]) == 1.0  # faster than linear: clipped
    assert heaps_exponent([(100, 5)]) == 1.0  # one point: the cautious linear growth


FIRST = ["Alice", "Bruno", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hiro"]
LAST = ["Weber", "Rossi", "Tanaka", "Okafor", "Larsen", "Moreau", "Novak", "Silva"]
FIRST2 = ["Ingrid", "Jonas", "Kofi", "Lucia", "Mateo", "Nadia", "Oskar", "Priya"]
LAST2 = ["Adler", "Brandt", "Castillo", "Dubois", "Eriksen", "Fontaine", "Gallo", "Horvat"]


def _people_corpus(root, n_docs, distinct: bool):
    """``n_docs`` one-unit documents naming two people each: new people in every document
    (``distinct``) or the same two throughout."""
    root.mkdir(parents=True)
    for i in range(n_docs):
        j = i if distinct else 0
        a = f"{FIRST[j % 8]} {LAST[(j // 8) % 8]}"  # 60 documents: 60 different people a, 60 b
        b = f"{FIRST2[j % 8]} {LAST2[(j // 8) % 8]}"
        (root / f"d{i:02d}.txt").write_text(f"{a} met {b} in the harbour on day {i}. {a} thanked {b}.\n",
                                            encoding="utf-8")
    return root


class SlowLoadEmbedder(FakeEmbedder):
    """The fake embedder with a 0.3 s load, as torch and the model file take seconds in a real run, and 2 ms
    per text encoded."""

    loads = 0

    def __init__(self):
        import time

        time.sleep(0.3)
        SlowLoadEmbedder.loads += 1

    def encode(self, texts, progress=False):
        import time

        time.sleep(0.002 * len(texts))
        return super().encode(texts, progress)


@pytest.mark.parametrize("distinct", [True, False])
def test_llm_free_estimate_runs_a_sample_and_scales_counts_by_their_growth(tmp_path, distinct):
    from slmgraph.tools.estimate import LLM_FREE_MIN_UNITS
    from slmgraph.indexing.pipeline import run_index
    from slmgraph.store.db import Store

    corpus = _people_corpus(tmp_path / "c", 60, distinct)
    # One thread: no spare core, so no text unit is embedded ahead and the graph stage loads the embedder.
    settings = Settings(min_community_size=2, workers=1, n_threads=1)
    model = FakeModel()
    SlowLoadEmbedder.loads = 0
    est = estimate(corpus, settings, model, progress=False, embedder_factory=SlowLoadEmbedder, say=lambda m: None)
    assert model.calls == []  # the default route for a small model: no model call in any stage
    cal = est["calibration"]["llm_free"]
    assert cal["units"] == LLM_FREE_MIN_UNITS < est["corpus"]["text_units"] == 60
    # The graph stage loads the embedder for the name-embedding resolution rule: the estimate counts it there.
    assert SlowLoadEmbedder.loads == 1 and cal["embedder_load_seconds"] >= 0.3
    assert est["stages"]["graph"]["seconds"] >= 0.3 and est["stages"]["embed"]["seconds"] > 0
    out = run_index(corpus, tmp_path / "real.duckdb", settings, progress=False, model=FakeModel(),
                    embedder_factory=FakeEmbedder, say=lambda m: None)
    st = Store(tmp_path / "real.duckdb", read_only=True)
    reports = st.count("community_reports")
    st.close()
    real = out["graph"]["entities"]
    if distinct:  # every document adds people: linear growth, the sample's count scaled by the tokens
        assert cal["heaps_beta_entities"] > 0.8
        assert cal["entities_sample"] < real and abs(cal["entities_predicted"] / real - 1) < 0.25
    else:  # the same people throughout: the sample has seen them all
        assert cal["heaps_beta_entities"] < 0.1 and cal["entities_predicted"] == real
        assert cal["reports_predicted"] == reports


def test_estimate_of_a_folder_of_links_reads_them_only_when_told(tmp_path, corpus):
    from slmgraph.errors import UserError

    linked = tmp_path / "linked"
    linked.mkdir()
    for f in sorted(p for p in corpus.iterdir() if p.is_file()):
        (linked / f.name).symlink_to(f.resolve())
    settings = Settings(min_community_size=2, workers=1)
    with pytest.raises(UserError, match="--follow-links"):
        estimate(linked, settings, FakeModel(), sample=1, progress=False, embedder_factory=FakeEmbedder,
                 say=lambda m: None)
    est = estimate(linked, settings, FakeModel(), sample=1, progress=False, embedder_factory=FakeEmbedder,
                   say=lambda m: None, follow_links=True)
    assert est["corpus"]["documents"] == len(list(linked.iterdir())) >= 2
