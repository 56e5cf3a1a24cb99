"""The stage bench measures the theme opening sentence (stage ``opening``) against the template opening, and
``auto`` opening follows that measurement: a model writing grounded sentences that combine two statements
wins, one copying a statement or looping loses."""

from __future__ import annotations

import re

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.eval import calibrate
from slmgraph.indexing.pipeline import run_index
from slmgraph.model import policy
from slmgraph.query.extractive import Point
from slmgraph.samples import DULCE
from slmgraph.store.db import Store, new_run_id


def _statements(user: str) -> list[str]:
    """The statements of a synthesis prompt's points (``- topic: statement`` lines)."""
    block = user.split('"""', 2)[1]
    return [ln[2:].split(": ", 1)[-1].strip() for ln in block.splitlines() if ln.startswith("- ")]


def _is_synthesis(system: str) -> bool:
    return "opening sentence" in system


def _clause(s: str, n: int = 7) -> str:
    return " ".join(re.sub(r"[.!?\"]+$", "", s).split()[:n])


def combining(system, user, schema):
    """Joins the openings of the first two statements: grounded, and drawing on both."""
    if not _is_synthesis(system):
        return "An answer."
    st = _statements(user)
    b = _clause(st[1])
    return f"{_clause(st[0])}, and {b[:1].lower() + b[1:]}."


def copying(system, user, schema):
    """Copies the first statement."""
    return _statements(user)[0] if _is_synthesis(system) else "An answer."


def looping(system, user, schema):
    """Loops on the first statement's words."""
    if not _is_synthesis(system):
        return "An answer."
    w = _clause(_statements(user)[0], 3)
    return " ".join([w] * 6) + "."


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    """Row 0's index of the demo story (the LLM-free route) and a three-question workload."""
    db = tmp_path_factory.mktemp("opening") / "free.duckdb"
    run_index(DULCE, db, calibrate.llm_free_settings(Settings()), progress=False, model=FakeModel(),
              say=lambda m: None, embedder_factory=FakeEmbedder)
    return db, calibrate.workload(gold_docs=1, on_topic=3, off_topic=1)


def _measure(db, wl, model, llm_free=False) -> dict:
    st = Store(db)
    try:
        return calibrate.opening_quality(st, model, calibrate.llm_free_settings(Settings()), wl, FakeEmbedder(),
                                         new_run_id(), llm_free=llm_free)
    finally:
        st.close()


def test_combining_means_two_statements_each_give_a_word_the_other_lacks():
    pts = [Point("river flooding", "The council raised the flood wall in March."),
           Point("river flooding", "Sandbags were handed out to every household on Mill Lane.")]
    both = "The council raised the flood wall and handed out sandbags on Mill Lane."
    assert calibrate.combines(both, pts)
    assert not calibrate.combines("The council raised the flood wall in March.", pts)
    c = calibrate.opening_counts(both, pts, "What was done about the river flooding?")
    assert c["kept"] and c["combines"] and c["counts"] and not c["invented"]
    # a name neither the statements nor the question hold is a garbled or invented one
    garbled = "The council raised the flood wall and handed out sandbags on Mil Lane with Mayor Ortez."
    c = calibrate.opening_counts(garbled, pts, "What was done about the river flooding?")
    assert c["kept"] and c["invented"] == ["Mil", "Mayor", "Ortez"] and not c["counts"]
    loop = "The council raised the wall the wall the wall the wall."
    c = calibrate.opening_counts(loop, pts, "What was done?")
    assert c["repeated"] and not c["kept"] and not c["counts"]


def test_a_combining_writer_scores_above_the_template_and_a_copier_or_looper_scores_nothing(story):
    db, wl = story
    free = _measure(db, wl, FakeModel(), llm_free=True)
    assert free["themes"] > 0  # themes of two or more statements to write for
    model = FakeModel(script=combining)
    good = _measure(db, wl, model)
    calls = [u for s, u, _ in model.calls if _is_synthesis(s)]
    assert len(calls) == good["themes"] == free["themes"]  # one call per theme, the same themes as row 0's
    assert good["quality"] > free["quality"] and good["combines_share"] == 1.0
    for script in (copying, looping):
        bad = _measure(db, wl, FakeModel(script=script))
        assert bad["quality"] == 0.0 and bad["kept_share"] == 0.0, script.__name__


@pytest.mark.parametrize("script,wins", [(combining, True), (copying, False), (looping, False)])
def test_auto_opening_follows_the_records_opening_stage(story, script, wins):
    db, wl = story
    free = {"stages": {"opening": _measure(db, wl, FakeModel(), llm_free=True)}}
    model = FakeModel(script=script)
    o = _measure(db, wl, model)
    row = {"model": model.name, "n_params": model.n_params,
           "stages": {"opening": {"quality": o["quality"], "measure": calibrate.MEASURES["opening"],
                                  "seconds": o["seconds"], "figures": o}}}
    policy.write_record(calibrate.record_of(model, row, free, "bench"))
    r = policy.route("opening", "auto", model)
    assert r.model is wins and "capability record" in r.reason and "not measured" not in r.reason
    assert ("at least as good as" in r.reason) is wins
    assert policy.route("opening", "off", model).model is False


def test_the_bundled_gguf_writes_one_ledgered_sentence_per_theme_and_its_record_decides_the_route(story):
    """Integration: the real bundled model on the stage, through the answer path's ``synthesize``."""
    from slmgraph.model.backend import load_model

    db, wl = story
    free = {"stages": {"opening": _measure(db, wl, FakeModel(), llm_free=True)}}
    model = load_model(None, 8192, Settings().n_threads, 42)
    st = Store(db)
    run_id = new_run_id()
    try:
        o = calibrate.opening_quality(st, model, calibrate.llm_free_settings(Settings()), wl, FakeEmbedder(),
                                      run_id, llm_free=False)
        calls = st.con.execute("SELECT count(*), sum(completion_tokens) FROM llm_calls WHERE run_id = ? "
                               "AND stage = 'synthesis'", [run_id]).fetchone()
    finally:
        st.close()
    assert o["themes"] == free["stages"]["opening"]["themes"] > 0
    assert calls[0] == o["themes"] and calls[1] > 0  # one real call per theme, each ledgered with its tokens
    assert 0.0 <= o["quality"] <= 1.0 and len(o["samples"]) == min(8, o["themes"])
    row = {"model": "bundled", "n_params": model.n_params,
           "stages": {"opening": {"quality": o["quality"], "measure": calibrate.MEASURES["opening"],
                                  "seconds": o["seconds"], "figures": o}}}
    rec = calibrate.record_of(model, row, free, "bench")
    policy.write_record(rec)
    r = policy.route("opening", "auto", model)
    assert r.model is rec.stages["opening"]["beats"] and "capability record" in r.reason
