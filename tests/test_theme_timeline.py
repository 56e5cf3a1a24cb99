"""A question about change over time follows its subject through the documents that speak of it, in
document order: the best statement of each document above a floor relative to the answer's best, at most
a capped number of points spread over the span."""

from __future__ import annotations

import numpy as np
from conftest import theme_index

from slmgraph.query.theme_model import TIMELINE_STATEMENTS, Theme
from slmgraph.query.theme_render import overview
from slmgraph.query.themes import focused_themes, timeline_picks

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october"]


class AxisEmbedder:
    """Cosines set by the words a text holds: "ferry" on one axis, the question's own words ("change over
    time") on a second, "bakery" on a third, and any other text on a fourth, so a sentence naming the ferry
    among other words is half as near the question as one restating it."""

    dim = 4

    def encode(self, texts, progress=False):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            low = t.lower()
            out[i] = [float("ferry" in low), float("change over time" in low), float("bakery" in low),
                      float("ferry" in low and "change over time" not in low)]
            if not out[i].any():
                out[i, 3] = 1.0
            out[i] /= np.linalg.norm(out[i])
        return out


def _ix(docs: dict[str, list[str]]):
    """A ThemeIndex over ``docs`` (doc id -> its text units, in order), every unit owned by community 10."""
    emb = AxisEmbedder()
    units = [(f"{d}#{i}", d, i, text) for d, texts in docs.items() for i, text in enumerate(texts)]
    ix = theme_index(units, embedder=emb, entities=[(10, "Harbour Board")], members=[(10, 10)],
                     entity_units=[(10, c) for c, _, _, _ in units], reports=[(10, "ferry plans")])
    return ix, [{"community_id": 10, "entities": ["Harbour Board"], "summary": ""}], emb


def _monthly(n_long_units: int = 24) -> dict[str, list[str]]:
    """Ten monthly notes, each with one sentence on the ferry plans among others, three earlier notes on other
    things, and one long undated log whose many units all repeat the question's words (it would fill the
    nearest units on its own)."""
    said = ["the ferry plans added a second boat", "councillors cut what the ferry plans cost the town",
            "a survey of islanders backed the ferry plans", "the ferry plans went to a public meeting",
            "the old slipway held up the ferry plans", "a county grant paid for half of the ferry plans",
            "the boatyard priced the boat of the ferry plans", "delays at the boatyard held the ferry plans back",
            "the ferry plans passed their first trial crossing", "the ferry plans ended in a timetable of six crossings"]
    # the ferry is the subject of most documents, not of all (a word of every document names no topic)
    docs = {f"2023-{i}-bakery": [f"The bakery on Mill Street opened a second oven in week {i} of the year."]
            for i in (10, 11, 12)}
    for i, (m, x) in enumerate(zip(MONTHS, said), start=1):
        docs[f"2024-{i:02d}-notes"] = [f"In {m.title()} 2024, {x}. The bakery on Mill Street sold {i} dozen buns."]
    docs["zz-log"] = [f"Log entry {k}: how did the ferry plans change over time, the log asks again."
                      for k in range(1, n_long_units + 1)]
    return docs


def test_a_timeline_quotes_every_document_speaking_of_its_subject_even_when_one_long_document_is_nearest():
    ix, pool, emb = _ix(_monthly())
    q = "How did the ferry plans change over time?"
    themes = focused_themes(ix, pool, {10: 60.0}, emb.encode([q])[0], emb, figures=True, temporal=True,
                            question=q)
    assert len(themes) == 1
    quoted = [ix.doc_by_id[s.doc_id].name for s in themes[0].statements]
    months = [n for n in quoted if n.endswith("-notes")]
    # each month is followed, once, in document order (the old answer read only the long log's units)
    assert months == sorted(months) and len(months) == len(MONTHS)
    assert len(themes[0].statements) <= TIMELINE_STATEMENTS
    assert not any("bakery" in s.text for s in themes[0].statements)


def test_a_period_speaking_of_the_subject_more_weakly_than_the_best_statement_is_not_skipped():
    docs = {k: v for k, v in _monthly().items() if k != "zz-log"}
    docs["2024-11-notes"] = ["In its review of 2024 the board looked at how the ferry plans change over time."]
    ix, pool, emb = _ix(docs)
    q = "How did the ferry plans change over time?"
    themes = focused_themes(ix, pool, {10: 60.0}, emb.encode([q])[0], emb, figures=True, temporal=True,
                            question=q)
    quoted = [ix.doc_by_id[s.doc_id].name for s in themes[0].statements]
    assert quoted == sorted(d for d in docs if d.endswith("-notes"))


def test_timeline_picks_gives_each_document_its_best_and_a_second_only_when_strong():
    items = [(1, 1, 0.9), (2, 1, 0.85), (3, 1, 0.5), (4, 2, 0.4), (5, 2, 0.38), (6, 3, 0.6)]
    picks, followed, stretches = timeline_picks(items, 0.75, lambda a, b: False, cap=12)
    assert sorted(picks) == [1, 2, 4, 6] and followed == 3 and stretches == 0


def test_timeline_picks_caps_the_points_and_spreads_them_over_the_span_keeping_each_stretchs_strongest():
    # 40 documents, each with one statement; every fourth document's is the strongest of its stretch
    items = [(k, k, 0.9 if k % 4 == 3 else 0.5) for k in range(40)]
    picks, followed, stretches = timeline_picks(items, 0.8, lambda a, b: False, cap=10)
    assert len(picks) == 10 and followed == 40 and stretches == 10
    assert sorted(picks) == [3, 7, 11, 15, 19, 23, 27, 31, 35, 39]
    # the first and the last stretch are both followed, whatever their strength
    weak_ends = [(0, 0, 0.3)] + [(k, k, 0.9) for k in range(1, 39)] + [(39, 39, 0.3)]
    picks, _, _ = timeline_picks(weak_ends, 0.8, lambda a, b: False, cap=10)
    assert min(picks) <= 3 and max(picks) >= 36


def test_a_repeated_statement_gives_way_to_its_documents_next_one():
    items = [(1, 1, 0.9), (2, 2, 0.8), (3, 2, 0.7)]
    picks, _, _ = timeline_picks(items, 0.95, lambda a, b: {a, b} == {1, 2}, cap=12)
    assert sorted(picks) == [1, 3]


def test_the_overview_says_what_each_point_of_a_long_timeline_stands_for():
    ix, _, _ = _ix({f"2024-{i:02d}-notes": ["The ferry plans were discussed again by the board."]
                    for i in range(1, 6)})
    t = Theme(10, "ferry plans", {"documents": 5, "of": 5}, [d.doc_id for d in ix.docs], [], followed=5,
              stretches=2)
    from slmgraph.query.theme_model import Statement
    t.statements = [Statement("The ferry plans were discussed again by the board.", 1, ix.docs[0].doc_id, 1, 1),
                    Statement("The ferry plans were discussed again by the board.", 5, ix.docs[4].doc_id, 1, 1)]
    text = overview([t], ix, temporal=True)
    assert "5 documents speak to the question; the statements are the strongest of each of 2 stretches of 2 or 3" \
           " consecutive documents." in text


def test_the_parts_of_a_work_are_one_period_of_the_timeline():
    said = {"Ada": ["the ferry plans added a second boat", "councillors cut what the ferry plans cost",
                    "islanders backed the ferry plans"],
            "Bo": ["the ferry plans went to a public meeting", "the old slipway held up the ferry plans",
                   "a grant paid for half of the ferry plans"],
            "Cy": ["the boatyard priced the ferry plans", "delays held the ferry plans back",
                   "the ferry plans ended in a timetable"]}
    docs = {f"Talk_with_{w}-part{i}": [f"In part {i} {x}."] for w, xs in said.items() for i, x in enumerate(xs, 1)}
    docs.update({f"Talk_with_Di-part{i}": [f"The bakery on Mill Street opened oven {i} of the year."]
                 for i in (1, 2, 3)})
    ix, pool, emb = _ix(docs)
    q = "How did the ferry plans change over time?"
    themes = focused_themes(ix, pool, {10: 60.0}, emb.encode([q])[0], emb, figures=True, temporal=True,
                            question=q)
    works = [ix.doc_by_id[s.doc_id].work for s in themes[0].statements]
    assert sorted(set(works)) == ["Talk with Ada", "Talk with Bo", "Talk with Cy"]
    assert all(works.count(w) <= 2 for w in works) and themes[0].followed == 3


def test_a_sentence_states_the_subject_by_two_of_its_words_or_by_the_acronym_the_corpus_defines():
    from slmgraph.query.themes import states_subject

    q = "How did the flood resilience plan budget change over time?"
    defined = {"FRP": "flood resilience plan"}
    assert states_subject("The FRP budget stood at 2.1 million pounds.", q, defined)
    assert states_subject("The flood plan budget was 1.2 million pounds.", q, {})
    # the budget of something else names one word of the subject
    assert not states_subject("The budget for Christmas lights was 3,500 pounds.", q, defined)
    assert not states_subject("The FRP budget stood at 2.1 million pounds.".replace("FRP ", ""), q, defined)


def test_asked_how_an_amount_changed_each_document_leads_with_its_sentence_stating_it():
    amounts = ["1.2 million", "1.5 million", "1.35 million", "2.1 million", "1.9 million"]
    docs = {f"2024-{i:02d}-minutes": [
        f"Ferry plans: change over time. The ferry committee met in {MONTHS[i].title()} and talked about the ferry "
        f"timetable, the ferry crew and the ferry fund at length. Other business: the bakery on Mill Street. "
        f"The ferry fund stood at {a} pounds after the meeting."] for i, a in enumerate(amounts)}
    docs.update({f"2023-{i}-bakery": [f"The bakery on Mill Street opened a second oven in week {i}."] for i in (1, 2)})
    ix, pool, emb = _ix(docs)
    q = "How did the ferry fund change over time?"
    themes = focused_themes(ix, pool, {10: 50.0}, emb.encode([q])[0], emb, figures=True, temporal=True, question=q)
    quoted = [s.text for t in themes for s in t.statements]
    for a in amounts:
        assert any(f"stood at {a} pounds" in s for s in quoted), (a, quoted)
    ix.store.con.close()
