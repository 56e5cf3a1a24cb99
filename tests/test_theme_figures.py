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
    first = ans.text.split("\n")[0]
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
