"""Helpfulness scores (designed embeddings, the fake model's token probabilities),
the selection rule, extractive answers and data-built report titles."""

import math

import numpy as np
import pytest
from conftest import FakeEmbedder, FakeModel, ent_rows, rel_rows

from slmgraph.model.backend import Choice
from slmgraph.model.client import ModelClient
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.reports import data_report, lowercase_words, title_entities
from slmgraph.query.extractive import (
    Point, grounded_synthesis, has_repetition, near_duplicate, render_points, report_points, sentence_points,
    synthesize,
)
from slmgraph.query.scoring import YES_NO, Scored, combine, default_signal, p_yes, roc_auc, score_items, select


class DesignedEmbedder:
    """Returns fixed vectors: the question is e0; each item text maps to a chosen vector."""

    name = "designed"

    def __init__(self, table: dict[str, list[float]]):
        self.table = table

    def encode(self, texts, progress=False):
        return np.asarray([self.table.get(t, [1.0, 0.0, 0.0]) for t in texts], dtype=np.float32)


def _unit(cos: float) -> list[float]:
    """A unit vector whose cosine with e0 = [1, 0, 0] is ``cos``."""
    return [cos, math.sqrt(max(0.0, 1 - cos * cos)), 0.0]


Q = "What is this about?"


def _embedder(cosines: dict[str, float]) -> DesignedEmbedder:
    return DesignedEmbedder({Q: [1.0, 0.0, 0.0], **{t: _unit(c) for t, c in cosines.items()}})


def test_embedding_score_is_the_cosine_in_percent_and_ties_keep_the_given_order():
    emb = _embedder({"a": 0.4, "b": 0.4, "c": 0.1})
    sc = score_items(Q, [1, 2, 3], ["a", "b", "c"], signal="embedding", embedder=emb)
    assert [round(s.score, 3) for s in sc] == [40.0, 40.0, 10.0]
    chosen = select(sc, floor=26, relative=0.7)
    assert [s.id for s in chosen] == [1, 2]  # a tie: both kept, in the given order


def test_all_low_scores_select_nothing_and_all_high_keep_those_near_the_best():
    low = score_items(Q, [1, 2], ["a", "b"], signal="embedding", embedder=_embedder({"a": 0.2, "b": 0.05}))
    assert select(low, floor=26, relative=0.7) == []
    high = score_items(Q, [1, 2, 3], ["a", "b", "c"], signal="embedding",
                       embedder=_embedder({"a": 0.9, "b": 0.8, "c": 0.5}))
    assert [s.id for s in select(high, floor=26, relative=0.7)] == [1, 2]  # 50 < 0.7 x 90
    assert [s.id for s in select(high, floor=26, relative=0.0)] == [1, 2, 3]


def test_the_best_item_is_always_kept_when_it_passes_the_floor():
    sc = [Scored(7, 27.0), Scored(8, 5.0)]
    assert [s.id for s in select(sc, floor=26, relative=1.0)] == [7]
    assert select([Scored(1, 0.0)], floor=0, relative=0) == []  # a zero is never helpful
    assert select([], floor=26) == []


def test_negative_cosines_score_zero_and_stored_vectors_are_used_before_the_embedder():
    emb = _embedder({"a": -0.5})
    sc = score_items(Q, [1, 2], ["a", "b"], signal="embedding", embedder=emb, vectors={2: _unit(0.3)})
    assert sc[0].score == 0.0 and sc[1].score == pytest.approx(30.0, abs=1e-3)
    assert sc[1].cosine == pytest.approx(0.3, abs=1e-4)


def _probs(p_yes_for: dict[str, float]):
    """A choice script: P("Yes") for an item whose text contains a key, the rest to "No"."""

    def script(system, user, options):
        p = next((v for k, v in p_yes_for.items() if k in user), 0.5)
        return [p if o == "Yes" else (1 - p) if o == "No" else 0.0 for o in options]

    return script


def test_model_signal_is_p_yes_calibrated_against_the_content_free_question():
    def script(system, user, options):
        na = system.rstrip().endswith("Question: N/A")
        p = 0.3 if na else (0.8 if "apples" in user else 0.35)
        return [p if o == "Yes" else (1 - p) if o == "No" else 0.0 for o in options]

    model = FakeModel(choice_script=script)
    client = ModelClient(model, None, "t")
    sc = score_items("Which fruit?", [1, 2], ["apples grow here", "trains run late"], signal="model",
                     client=client, prompts=Prompts())
    assert sc[0].p_yes == pytest.approx(0.8) and sc[0].p_yes_na == pytest.approx(0.3)
    assert sc[0].score == pytest.approx(50.0) and sc[1].score == pytest.approx(5.0)
    # the question is in the system prefix (evaluated once), the item alone in the user part
    systems = {c[0] for c in model.calls}
    assert any("Which fruit?" in s for s in systems) and all("apples" not in s for s in systems)
    assert all(c[2]["options"] == YES_NO for c in model.calls)


def test_a_yes_no_option_with_no_mass_and_all_options_without_mass():
    no_yes = Choice(YES_NO, [float("-inf"), math.log(0.5), float("-inf"), math.log(0.5)])
    assert p_yes(no_yes) == 0.0
    none = Choice(YES_NO, [float("-inf")] * 4)
    assert p_yes(none) == 0.5  # uniform: no information
    assert combine("model", None, 0.5, 0.5) == 0.0
    only_lower = Choice(YES_NO, [float("-inf"), float("-inf"), math.log(0.9), math.log(0.1)])
    assert p_yes(only_lower) == pytest.approx(0.9)


def test_all_high_model_probabilities_do_not_separate_after_calibration():
    model = FakeModel(choice_script=_probs({"": 0.95}))  # says yes to everything, the content-free question too
    sc = score_items("Anything?", [1, 2], ["x y", "z w"], signal="model", client=ModelClient(model, None, "t"),
                     prompts=Prompts())
    assert all(s.score == 0.0 for s in sc) and select(sc) == []


def test_combined_is_the_mean_and_signals_need_their_inputs():
    assert combine("combined", 0.4, 0.8, 0.3) == pytest.approx((40 + 50) / 2)
    with pytest.raises(ValueError):
        combine("model", 0.4, None, None)
    with pytest.raises(ValueError):
        score_items(Q, [1], ["a"], signal="embedding")
    with pytest.raises(ValueError):
        score_items(Q, [1], ["a"], signal="made-up", embedder=_embedder({}))
    assert default_signal(135_000_000) == "embedding"


def test_roc_auc_counts_ties_as_half():
    assert roc_auc([3, 4], [1, 2]) == 1.0 and roc_auc([1], [1]) == 0.5 and roc_auc([1, 3], [2]) == 0.5


def _report(cid, title, findings, summary=""):
    return {"community_id": cid, "title": title, "summary": summary,
            "findings": [{"summary": s, "explanation": e} for s, e in findings], "full_text": title}


def test_report_points_merge_near_duplicates_cite_every_report_and_never_repeat():
    reports = [
        _report(1, "Alex Mercer and Dulce base", [("a", "Alex Mercer leads the team at Dulce base."),
                                                   ("b", "The team decodes an alien signal.")]),
        _report(2, "Jordan Hayes", [("c", "The team decodes the alien signal."),  # near-duplicate of report 1's
                                    ("d", "Jordan Hayes studies the signal's patterns.")]),
        _report(3, "Alex Mercer and Dulce base", [("e", "Alex Mercer reports to Taylor Cruz.")]),  # same title as 1
        _report(4, "Sam Rivera", [("f", "The team decodes an alien signal.")]),  # only a duplicate finding
    ]
    pts = report_points(reports, {1: 50, 2: 40, 3: 35, 4: 30})
    text = render_points(pts, "Reports")
    # 2's duplicate finding, 3's title and 4's only finding join the first point's citations
    assert [p.ids for p in pts] == [[1, 2, 3, 4], [2]]
    assert text.count("decodes") == 1  # the near-duplicate finding appears once
    assert "[Reports: " in text and not has_repetition(text)
    cited = {i for p in pts for i in p.ids}
    assert cited == {1, 2, 3, 4}


def test_sentence_points_pick_the_nearest_sentences_and_merge_repeated_ones():
    passages = [(1, "Alex Mercer went to the base at night. The weather was cold and dry all week."),
                (2, "Alex Mercer went to the base at night! Short one.")]
    emb = DesignedEmbedder({"base?": [1, 0, 0], "Alex Mercer went to the base at night.": _unit(0.9),
                            "Alex Mercer went to the base at night!": _unit(0.9),
                            "The weather was cold and dry all week.": _unit(0.1), "Short one.": _unit(0.05)})
    pts = sentence_points(passages, emb.encode(["base?"])[0], emb, max_points=1)
    assert len(pts) == 1 and pts[0].ids == [1, 2] and "base" in pts[0].text
    assert not any("Short one" in p.text for p in pts)
    # a short sentence is weighed by its relevance, not dropped for its length: here it is the least relevant
    pts = sentence_points(passages, emb.encode(["base?"])[0], emb, max_points=3)
    assert [p.text for p in pts][-1] == "Short one."


def test_report_points_prefer_a_statement_naming_the_reports_entities_over_nearer_weak_quotes():
    """The question-nearest sentence is a question and a quoted fragment; the chosen one is the
    declarative sentence naming two of the report's entities, though its cosine is lower."""
    q_sent = "KEVIN SCOTT: So what did you think about the signal at the base?"
    frag = '"I would laugh if we ever found Martians playing poker at the base, you know."'
    plain = "Jordan Hayes decoded the signal with Alex Mercer at the base in the desert."
    emb = DesignedEmbedder({Q: [1, 0, 0], q_sent: _unit(0.58), frag: _unit(0.55), plain: _unit(0.45)})
    rep = dict(_report(1, "Alex Mercer and Jordan Hayes", [("a", q_sent), ("b", frag), ("c", plain)]),
               entities=["Alex Mercer", "Jordan Hayes", "Dulce"])
    pts = report_points([rep], {1: 40}, emb.encode([Q])[0], emb, per_report=1)
    assert [p.text for p in pts] == [plain]
    # without the report's entities the penalties alone still rank the statement first
    pts = report_points([dict(rep, entities=[])], {1: 40}, emb.encode([Q])[0], emb, per_report=1)
    assert [p.text for p in pts] == [plain]


def test_report_points_drop_weak_points_and_fill_from_the_reserve():
    """A report whose only sentence is a quoted fragment gives no point when a plain statement exists;
    reserve reports are read (and cited) only to reach min_points plain points."""
    weak = _report(1, "Martians", [("a", '"I would laugh if we ran into Martians playing poker down there."')])
    good = _report(2, "Dulce", [("b", "Alex Mercer stood gazing at the elevator that led into Dulce base.")])
    extra = _report(3, "Alex Mercer and Jordan Hayes",
                    [("c", "Jordan Hayes shuffled the papers while Alex Mercer watched the briefing.")])
    spare = _report(4, "Sam Rivera", [("d", "Sam Rivera worked at the console through the long night shift.")])
    emb = FakeEmbedder()
    qv = emb.encode([Q])[0]
    pts = report_points([weak, good], {1: 20, 2: 18, 3: 13, 4: 12}, qv, emb, reserve=[extra, spare], min_points=2)
    assert [p.ids for p in pts] == [[2], [3]]  # the weak point dropped; one reserve report fills; 4 unread
    assert not any("Martians" in p.text for p in pts)
    # a weak point is kept when it is the only point there is
    pts = report_points([weak], {1: 20}, qv, emb)
    assert [p.ids for p in pts] == [[1]]


def test_points_do_not_restate_each_other_mmr():
    """Two near-identical relevant sentences (cosine 0.99 to each other, not word duplicates) and one
    less relevant but different: maximal marginal relevance takes the different one second."""
    a = "Alex Mercer leads the team into the base at night."
    b = "At night the squad is led inside the facility by Mercer."
    c = "The radio signal repeats a pattern every eleven minutes."
    emb = DesignedEmbedder({Q: [1, 0, 0], a: [0.8, 0.6, 0.0], b: [0.79, 0.61, 0.02], c: [0.6, 0.0, 0.8]})
    pts = sentence_points([(1, f"{a} {b} {c}")], emb.encode([Q])[0], emb, max_points=2)
    assert [p.text for p in pts] == [a, c]


def test_sentence_kinds_and_quotable():
    from slmgraph.query.extractive import quotable, sentence_kinds

    assert sentence_kinds("KEVIN SCOTT: When did you start thinking about AI?") == ["question"]
    assert "fragment" in sentence_kinds('"Hayes, Mercer, this is not philosophy hour.')
    assert "heading" in sentence_kinds("../Behind the Tech with Kevin Scott Podcast Episode 52 – Bill Gates.")
    assert "cut" in sentence_kinds("The team went down into the base and then\u2026")
    assert sentence_kinds("Jordan Hayes decoded the signal with Alex Mercer.") == []
    assert not quotable("KEVIN SCOTT: (Laughter.) Yeah, sort of a humility engine and more.", 6)
    assert not quotable("KEVIN SCOTT: Yeah, right.", 3)
    assert quotable("KEVIN SCOTT: We built the first compiler for that machine in a year.", 8)


def test_has_repetition_sees_repeated_sentences_and_looped_phrases():
    assert has_repetition("The team met. The team met.")
    assert has_repetition("The ability to learn from- the ability to learn from- the ability to learn from- x")
    assert has_repetition("education, education, education matters")
    assert not has_repetition("Alex Mercer leads. Jordan Hayes decodes. Taylor Cruz commands.")
    assert not near_duplicate("Alex Mercer leads the team.", "Taylor Cruz commands the base.")


POINTS = [Point("Alex Mercer and Dulce base", "Alex Mercer leads the team at Dulce base.", [1]),
          Point("Jordan Hayes", "Jordan Hayes decodes the alien signal.", [2])]


@pytest.mark.parametrize("written,kept", [
    ("The story is about Alex Mercer's team decoding an alien signal at Dulce base.", True),
    ("The importance of innovation and teamwork shapes modern companies everywhere.", False),  # generic
    ("Passage 4: Alex Mercer leads the team.", False),                                          # leaked label
    ("Alex Mercer, Alex Mercer, Alex Mercer, Alex Mercer.", False),                            # loop
    ("Alex Mercer leads the team at Dulce base.", False),                                      # repeats a point
    ("Yes.", False),
])
def test_the_opening_sentence_is_kept_only_when_grounded(written, kept):
    out = grounded_synthesis(written, POINTS)
    assert (out is not None) == kept
    if kept:
        assert out.endswith(".") and len(out.split(".")) == 2


def test_synthesize_asks_once_and_drops_an_ungrounded_sentence():
    model = FakeModel(script=lambda system, user, schema: "Innovation matters for every company in the world.")
    client = ModelClient(model, None, "t")
    kept, gen = synthesize(client, Prompts(), "What is the story about?", POINTS)
    assert kept is None and gen.text and len(model.calls) == 1
    assert "Jordan Hayes decodes" in model.calls[0][1] and "[" not in model.calls[0][1]  # points without citations


def test_data_report_title_is_a_noun_phrase_of_top_entities_never_a_file_name():
    ents = ent_rows([(1, "episode_12.txt", "unknown", "", 50), (2, "KEVIN SCOTT", "person", "Kevin hosts.", 40),
                     (3, "Scott", "person", "", 30), (4, "Behind", "unknown", "", 20),
                     (5, "Code.org", "organization", "", 9), (6, "Alice Steinglass", "person", "", 8)])
    rels = rel_rows([(1, 2, 5, "KEVIN SCOTT: Yeah.", 1, 49),
                     (2, 2, 6, "Kevin Scott asked Alice Steinglass about Code.org and teaching children to program.",
                      1, 48)])
    common = lowercase_words(["He sat behind the desk."])
    assert title_entities(ents, common=common) == ["Kevin Scott", "Code.org", "Alice Steinglass"]
    rep = data_report(9, 0, ents, rels, max_size=12, common=common)
    assert rep.title == "Kevin Scott, Code.org and Alice Steinglass"
    assert rep.summary.startswith("This community is about Kevin Scott, Code.org and Alice Steinglass: 6 entities")
    assert "teaching children to program" in rep.summary and "Yeah." not in rep.summary
    assert 0 < rep.rating <= 10 and rep.findings and rep.context_kind == "data"


def test_small_models_build_reports_from_the_data_and_embed_them(tmp_path, corpus):
    from conftest import FakeEmbedder, stage_of

    from slmgraph.config.settings import Settings
    from slmgraph.indexing.pipeline import run_index
    from slmgraph.store.db import Store

    model = FakeModel()
    db = tmp_path / "d.duckdb"
    out = run_index(corpus, db, Settings(min_community_size=2), progress=False, model=model,
                    embedder_factory=FakeEmbedder, say=lambda m: None)
    assert out["reports"]["written_by"] == "data" and out["reports"]["model_calls"] == 0
    assert not [c for c in model.calls if stage_of(c[2], c[0]) == "report"]
    store = Store(db, read_only=True)
    n = store.count("community_reports")
    assert n and store.con.execute("SELECT count(*) FROM embeddings WHERE kind = 'report'").fetchone()[0] == n
    titles = [r[0] for r in store.con.execute("SELECT title FROM community_reports").fetchall()]
    assert all(t and ".txt" not in t and ".md" not in t and "," not in t.split(" and ")[-1] for t in titles)
    store.close()


def test_the_index_floor_drops_to_the_off_topic_probes_plus_a_margin_but_never_rises():
    from slmgraph.query.scoring import index_floor

    emb = DesignedEmbedder({"probe": [1.0, 0.0, 0.0], "a": _unit(0.093), "b": _unit(0.05),
                            "hot": _unit(0.4)})
    floor, best = index_floor([1, 2], ["a", "b"], emb, None, ["probe"], floor=22, margin=6)
    assert best == pytest.approx(9.3, abs=1e-3) and floor == pytest.approx(15.3, abs=1e-3)
    floor, best = index_floor([1, 2], ["a", "hot"], emb, None, ["probe"], floor=22, margin=6)
    assert floor == 22 and best == pytest.approx(40.0, abs=1e-3)
    assert index_floor([1], ["a"], emb, None, [], floor=22) == (22, None)
