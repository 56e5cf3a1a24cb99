"""A society's yearly newsletters (a new user's corpus): a short line stating a figure ("Membership is 389.") is a
statement, so a question about change over the years quotes each year's figure, filler staying out; a question
for the corpus's challenges is answered by its themes, led by what went wrong; and a question for the themes of a
topic is judged by its topic, not by its framing."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest
from conftest import FakeEmbedder, FakeModel, theme_index

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.model.client import ModelClient
from slmgraph.query.engines.global_search import global_search
from slmgraph.query.extractive import filler, sentence_kinds
from slmgraph.query.theme_model import _statement_ok, figure_line, short_penalty
from slmgraph.store.db import Store

YEARS = [(2018, 87), (2019, 231), (2020, 322), (2021, 389), (2022, 447), (2023, 463)]
OTHER = ["The harbour choir sang carols at the winter fair in the town hall.",
         "Volunteers repainted the porch and rebuilt the garden wall of the cottage.",
         "The committee thanked the ferry company for carrying the school visit free of charge."]


class WordEmbedder(FakeEmbedder):
    """:class:`FakeEmbedder` over words of letters only: figures do not move a sentence's vector (as with a
    sentence embedder, where "Membership is 87." and "Membership is 463." are near twins)."""

    def encode(self, texts, progress=False):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[^\W\d_]+", t.lower()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
            out[i] /= max(float(np.linalg.norm(out[i])), 1e-9)
        return out


class ContentEmbedder(WordEmbedder):
    """:class:`WordEmbedder` over content words only (no stop word), as a sentence embedder weighs them."""

    def encode(self, texts, progress=False):
        from slmgraph.names.forms import content_words

        return super().encode([" ".join(content_words(t)) for t in texts], progress)


def _newsletters():
    units = []
    for i, (year, n) in enumerate(YEARS):
        text = f"{OTHER[i % 3]} Membership is {n}. {OTHER[(i + 1) % 3]}"
        units.append((f"c{year}", f"newsletter-{year}", 0, text))
    emb = WordEmbedder()
    ix = theme_index(units, embedder=emb, entities=[(1, "Gullhaven")], members=[(0, 1)],
                     entity_units=[(1, c) for c, *_ in units])
    return ix, emb


def test_a_short_line_stating_a_figure_of_something_is_a_statement_and_filler_is_not():
    ix, _ = _newsletters()
    for s in ("Membership is 389.", "Visitors numbered 5,210.", "Membership has reached 298."):
        assert figure_line(s) and _statement_ok(s, ix) and short_penalty(s) == 0.0, s
        assert "heading" not in sentence_kinds(s), s
    for s in ("It was 493.", "They agreed.", "Yes, 12.", "Back in 1995.", "In 2019.", "Page 4 of 9.", "May 2021.",
              "See above.", "Thanks, 2 minutes.", "The choir sang."):
        assert not figure_line(s) and not _statement_ok(s, ix), s
    assert filler("They agreed.") and short_penalty("The choir sang.") > 0
    # a titled line keeps its heading shape; a dated list line is no sentence of a figure either
    assert "heading" in sentence_kinds("Annual General Meeting 2019")
    ix.store.con.close()


def test_a_question_about_change_over_the_years_quotes_every_years_short_figure_line():
    from slmgraph.query.themes import focused_themes

    ix, emb = _newsletters()
    q = "How did membership change over the years?"
    pool = [{"community_id": 0, "entities": ["Gullhaven"]}]
    themes = focused_themes(ix, pool, {}, emb.encode([q])[0], emb, figures=True, temporal=True, question=q)
    quoted = [s.text for t in themes for s in t.statements]
    assert [f"Membership is {n}." for _, n in YEARS] == [s for s in quoted if s.startswith("Membership")]
    ix.store.con.close()


CHOIR = [
    ("2019", "The Harbour Choir Society sang the winter concert in the Wexley town hall with Anna Brandt as conductor. "
             "Anna Brandt chose carols from the Baltic coast for the winter concert."),
    ("2020", "The Harbour Choir Society saw its spring concert cancelled and the hall roof damaged by the storm. "
             "Tom Kerr said the repair of the hall roof was delayed and money ran short."),
    ("2021", "The Harbour Choir Society rehearsed in the Wexley library while Tom Kerr restored the organ pipes. "
             "The organ restoration work by Tom Kerr cleaned every pipe and rebuilt the bellows."),
    ("2022", "The Harbour Choir Society toured the Baltic coast with Anna Brandt and sang in six churches. "
             "Anna Brandt recorded the Baltic tour for the Wexley radio station."),
]


@pytest.fixture(scope="module")
def choir(tmp_path_factory):
    root = tmp_path_factory.mktemp("choir")
    src = root / "in"
    src.mkdir()
    for year, text in CHOIR:
        (src / f"newsletter_{year}.md").write_text(f"# Harbour Choir Society newsletter {year}\n\n{text}\n",
                                                  encoding="utf-8")
    db = root / "choir.duckdb"
    s = Settings(min_community_size=2)
    run_index(src, db, s, progress=False, model=FakeModel(), embedder_factory=ContentEmbedder, say=lambda m: None)
    store = Store(db)
    yield store, ModelClient(FakeModel(), store, "q"), s
    store.close()


def test_aspect_words_and_the_corpus_subject_make_a_corpus_wide_question_another_topic_does_not():
    from slmgraph.query.route import asked_topic, corpus_aspect

    p = Prompts()
    assert corpus_aspect("What were the society's main challenges?", p, frozenset({"society"}))[0] == "challenges"
    assert corpus_aspect("What were the main problems?", p)[0] == "problems"
    # without the corpus's subject, "society" is a topic; a topic word of its own makes a focused question
    assert corpus_aspect("What were the society's main challenges?", p) is None
    assert corpus_aspect("What were the main challenges of orchid care?", p, frozenset({"society"})) is None
    assert corpus_aspect("What are the main themes?", p) is None
    assert asked_topic("What are the main themes of the restoration work?", p) == "restoration work"
    assert asked_topic("What are the main themes?", p) is None and asked_topic("Who is Tom Kerr?", p) is None


def test_a_question_for_the_corpus_challenges_is_answered_by_its_themes_led_by_what_went_wrong(choir):
    store, client, s = choir
    s.helpfulness_floor, s.helpfulness_probes = 99.0, False  # no report is near the question's wording
    ans = global_search(store, client, Prompts(), s, "What were the society's main challenges?", level=0,
                        progress=False, embedder=ContentEmbedder())
    assert "nothing relevant" not in ans.text and ans.details["aspect"] == "challenges", ans.text
    assert "speak most of challenges first" in ans.text
    first = next(ln for ln in ans.text.splitlines() if ln.startswith("- *"))
    assert "cancelled" in first or "delayed" in first, ans.text
    # another topic than the corpus's own is judged by the floor
    off = global_search(store, client, Prompts(), s, "What were the main challenges of orchid care?", level=0,
                        progress=False, embedder=ContentEmbedder())
    assert "nothing relevant" in off.text and "aspect" not in off.details


def test_the_themes_of_a_topic_the_text_units_hold_are_answered_though_no_report_is_near_the_wording(choir):
    store, client, s = choir
    s.helpfulness_probes = False
    q = "What are the main themes of the organ restoration work?"
    s.helpfulness_floor = 99.0
    probe = global_search(store, client, Prompts(), s, q, level=0, progress=False, embedder=ContentEmbedder())
    report_best, topic_best = probe.details["best_score"], probe.details["topic_gate"]["best_score"]
    assert probe.details["topic_gate"]["topic"] == "organ restoration work" and topic_best > report_best
    s.helpfulness_floor = (report_best + topic_best) / 2  # over every report, under the topic's nearest unit
    ans = global_search(store, client, Prompts(), s, q, level=0, progress=False, embedder=ContentEmbedder())
    assert "nothing relevant" not in ans.text and ans.details["topic_gate"]["answer"], ans.text
    assert "organ" in ans.text.split("Documents cited:")[0]
    # a topic the text units do not hold is still refused at the same floor
    off = global_search(store, client, Prompts(), s, "What are the main themes of knitting wool scarves?", level=0,
                        progress=False, embedder=ContentEmbedder())
    assert "nothing relevant" in off.text, off.text


@pytest.fixture(scope="module")
def yearly(tmp_path_factory):
    root = tmp_path_factory.mktemp("yearly")
    src = root / "in"
    src.mkdir()
    lines = {2019: "The choir had 40 singers and many members of the society came to sing in the winter concert.",
             2020: "How many members did the society have? The choir had 52 singers in the society that year.",
             2021: "The choir had 61 singers at the spring concert in the Wexley town hall."}
    for year, line in lines.items():
        (src / f"newsletter_{year}.md").write_text(f"# Choir newsletter {year}\n\n{line} Anna Brandt conducted "
                                                  f"the Harbour Choir in Wexley.\n", encoding="utf-8")
    db = root / "yearly.duckdb"
    s = Settings(min_community_size=2)
    run_index(src, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db)
    yield store, ModelClient(FakeModel(), store, "q"), s
    store.close()


def test_basic_search_answers_a_question_naming_a_year_from_that_years_documents(yearly):
    from slmgraph.query.engines.basic_search import basic_search

    store, client, s = yearly
    ans = basic_search(store, client, Prompts(), s, "How many members did the society have in 2021?", FakeEmbedder())
    docs = dict(store.con.execute("SELECT chunk_id, doc_id FROM text_units").fetchall())
    used = {docs[c["id"]] for c in ans.context}
    assert used and all("2021" in d or "2021" in str(
        store.con.execute("SELECT path FROM documents WHERE doc_id = ?", [d]).fetchone()[0]) for d in used), ans.text
    assert "61 singers" in ans.text and "52 singers" not in ans.text
    # a question naming no year reads the nearest units, whatever their year
    other = basic_search(store, client, Prompts(), s, "How many members did the society have?", FakeEmbedder())
    assert not other.details["year_units"] and len({docs[c["id"]] for c in other.context}) == 3


def test_how_a_topic_the_units_name_again_and_again_changed_is_answered_though_no_report_passes(choir):
    from slmgraph.query.route import asked_topic

    assert asked_topic("How has the organ changed over the years?", Prompts()) == "organ"
    store, client, s = choir
    s.helpfulness_probes = False
    s.helpfulness_floor = 99.0  # no report, and no unit's vector, is near enough
    q = "How has the Baltic touring changed over the years?"
    refused = global_search(store, client, Prompts(), s, q, level=0, progress=False, embedder=ContentEmbedder())
    assert "nothing relevant" in refused.text  # "Baltic touring": one document holds both words
    q = "How has Anna Brandt's conducting changed over the years?"
    off = global_search(store, client, Prompts(), s, q, level=0, progress=False, embedder=ContentEmbedder())
    assert "nothing relevant" in off.text  # no unit says "conducting"
    q = "How has the Harbour Choir Society changed over the years?"
    ans = global_search(store, client, Prompts(), s, q, level=0, progress=False, embedder=ContentEmbedder())
    # every newsletter names the society: its units answer, in date order
    assert "nothing relevant" not in ans.text and ans.details["topic_gate"]["named_units"] == 4, ans.text
    s.helpfulness_floor = Settings().helpfulness_floor
