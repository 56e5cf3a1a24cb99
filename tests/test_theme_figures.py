"""Answers that quote figures for questions about amounts and change, never a letter's furniture, and that
answer a question about a person the documents name (lazy and TS search)."""

from __future__ import annotations

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.model.client import ModelClient
from slmgraph.query.engines.global_search import global_search, text_unit_search
from slmgraph.query.engines.lazy_search import lazy_search
from slmgraph.query.extractive import furniture, quotable, sentence_points
from slmgraph.query.route import corpus_wide_phrase
from slmgraph.query.theme_model import Boilerplate, has_figure, repeats
from slmgraph.store.db import Store

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august"]
SHORTFALL = [7, 5, 6, 3, 4, 2, 8, 1]


def _letter(i: int) -> str:
    if i % 2 == 0:
        body = [f"The council faces a budget shortfall of {SHORTFALL[i]} million pounds this quarter, "
                f"Treasurer Omar Reyes told the finance committee.",
                "Omar Reyes proposed shorter library hours to close the budget shortfall."]
    else:
        body = ["Priya Natarajan opened the library garden with the volunteers.",
                "Residents along the river asked Priya Natarajan about the flood barrier and the pumping station."]
    body.append("Wardens planted oak trees beside the new cycle path near the school.")
    return (f"Wexley Newsletter {MONTHS[i].title()} 2024\n\nBy Jane Smith, correspondent\n\nDear members,\n\n"
            + "\n\n".join(body) + "\n\nYours sincerely,\nJane Smith\n")


@pytest.fixture(scope="module")
def letters(tmp_path_factory):
    root = tmp_path_factory.mktemp("letters")
    src = root / "in"
    src.mkdir()
    for i, m in enumerate(MONTHS):
        (src / f"newsletter_{i + 1:02d}_{m}_2024.txt").write_text(_letter(i), encoding="utf-8")
    db = root / "letters.duckdb"
    s = Settings(min_community_size=2)
    run_index(src, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db)
    yield store, ModelClient(FakeModel(), store, "q"), s
    store.close()


def test_salutations_sign_offs_and_bylines_are_never_quoted():
    for s in ["Dear members,", "Dear Ms. Smith:", "Yours sincerely,", "Yours sincerely, Jane Smith", "Kind regards",
              "Best regards, Tom", "By Jane Smith, correspondent", "Jane Smith"]:
        assert furniture(s) and not quotable(s, 1), s
    for s in ["The council faces a budget shortfall.", "By March the council had cut spending by 5 percent.",
              "Best practice is to test the barrier every spring.", "Yes.",
              "Dear reader, the budget is late and the council knows it."]:
        assert not furniture(s), s
    points = sentence_points([(1, _letter(0))], FakeEmbedder().encode(["Dear members, what did Jane Smith write?"])[0],
                             FakeEmbedder(), max_points=10)
    quoted = [p.text for p in points]
    assert quoted and not any(t.startswith(("Dear", "Yours", "By Jane")) or t == "Jane Smith" for t in quoted)


@pytest.mark.parametrize("method", ["lazy", "ts"])
def test_lazy_and_ts_answer_a_question_about_a_person_the_documents_name(letters, method):
    store, client, s = letters
    q = "What did Priya Natarajan do?"
    if method == "lazy":
        ans = lazy_search(store, client, Prompts(), s, q, FakeEmbedder())
    else:
        ans = text_unit_search(store, client, Prompts(), s, q, progress=False, embedder=FakeEmbedder())
    assert "nothing relevant" not in ans.text
    first = next(ln for ln in ans.text.split("\n") if not ln.startswith("### "))  # lazy's community heading
    assert "Priya Natarajan" in first, ans.text
    assert "Dear members" not in ans.text and "Yours sincerely" not in ans.text


def test_a_corpus_wide_question_may_call_the_documents_newsletters():
    assert corpus_wide_phrase("What are the main themes across these newsletters?", Prompts()) is not None
    assert corpus_wide_phrase("What are the main themes of these flood newsletters?", Prompts()) is None


def test_figures_differ_so_a_series_is_neither_boilerplate_nor_a_repeat():
    units = [(f"d{i}", _letter(i)) for i in range(8)]
    bp = Boilerplate(units)
    one = f"The council faces a budget shortfall of {SHORTFALL[0]} million pounds this quarter, " \
          "Treasurer Omar Reyes told the finance committee."
    two = one.replace(f" {SHORTFALL[0]} ", f" {SHORTFALL[1]} ")
    assert one not in bp
    assert "Wardens planted oak trees beside the new cycle path near the school." in bp
    assert repeats(one, two) and not repeats(one, two, figures=True) and repeats(one, one, figures=True)
    assert has_figure(one) == 2 and has_figure("The barrier took 7 months.") == 1 and not has_figure("No figure.")


def test_a_question_about_change_over_time_quotes_the_figures_in_document_order(letters):
    store, client, s = letters
    ans = global_search(store, client, Prompts(), s, "How has the budget shortfall evolved over the year?", level=0,
                        progress=False, embedder=FakeEmbedder())
    lines = [ln for ln in ans.text.splitlines() if "budget shortfall of" in ln]
    # several quarters' figures, not one sentence standing for all of them, in the documents' order
    assert len(lines) >= 3, ans.text
    assert "Wardens planted" not in ans.text
    figures = [int(ln.split("shortfall of ")[1].split()[0]) for ln in lines]
    months = [next(i for i, m in enumerate(MONTHS) if m in ln) for ln in lines]
    assert months == sorted(months) and len(set(figures)) == len(figures)


#: A newsletter's head: its byline and its dateline, then its text.
_DATED = ("# Harbor Lane Community Orchard - Newsletter, December 2025\n\n"
          "Edited by Lucy Barrowman. Published 14 December 2025.\n\n## A year in the orchard\n\n"
          "The hedge was cut on 14 December 2025. Fireblight took two old pears and a young Bramley.\n")


@pytest.mark.parametrize("line", [
    "Published 14 December 2025.", "14 December 2025", "Last updated: Monday, 3 May 2024, 10:30 GMT",
    "Posted by Jane Smith on 3 May 2024", "Posted by Jane Smith and Tom Lee on May 3, 2024 at 4:10pm.",
    "Updated 2025-12-14.", "Posted on Dec. 3, 2024 at 10 a.m.", "*Published 14 December 2025.*",
    "Veröffentlicht am 14.12.2025", "Publié le 14 décembre 2025", "Publicado el 14 de diciembre de 2025",
    "REPORTER: Published 14 December 2025."])
def test_a_dateline_is_furniture_and_never_quoted(line):
    assert furniture(line) and not quotable(line, 1)


@pytest.mark.parametrize("line", [
    "The hedge was cut on 14 December 2025.", "The report was published on 14 December 2025.",
    "Published 14 December 2025, with 300 copies printed.", "May 2025 was the wettest month.",
    "Posted by Jane Smith on 3 May 2024 to warn members.", "We met 3 times in 2025.", "Edited by Lucy Barrowman.",
    "The meeting closed at 4:10pm."])
def test_a_sentence_stating_more_than_its_date_is_quoted(line):
    assert not furniture(line) and quotable(line, 1)


def test_a_dateline_is_no_point_of_any_quoting_path():
    from slmgraph.query.extractive import first_sentences, report_points

    emb = FakeEmbedder()
    qv = emb.encode(["What was published in December 2025?"])[0]
    quoted = [p.text for p in sentence_points([(1, _DATED)], qv, emb, max_points=10)]
    assert "The hedge was cut on 14 December 2025." in quoted and not any("Published" in t for t in quoted)
    finding = {"summary": "Published", "explanation": "Published 14 December 2025."}
    report = {"community_id": 1, "title": "Lucy Barrowman", "summary": "", "entities": ["Lucy Barrowman"],
              "findings": [finding, {"summary": "Hedge", "explanation": "The hedge was cut on 14 December 2025 "
                                                                       "by the Parks Department of the town."}]}
    points = report_points([report], {1: 80}, qv, emb)
    assert points and not any("Published" in p.text for p in points)
    assert first_sentences("Published 14 December 2025. Lucy Barrowman edits the newsletter.").startswith("Lucy")


def test_a_dateline_describes_no_one():
    from slmgraph.indexing.stages.extract_text import cooccurrence

    first, _ = cooccurrence("Posted by Jane Smith on 3 May 2024.\n\nJane Smith planted the pear row.",
                            ["Jane Smith"], 300)
    assert first["jane smith"].startswith("Jane Smith planted")
