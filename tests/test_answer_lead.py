"""A focused question's basic or local answer opens with the sentence that answers it, as a sentence of its own
before the other points: not with context that merely shares the question's wording ("When the frost came,
the standpipe was leaking ..." for "When was the standpipe repaired?"), nor, when the question asks more of a
name than who it is, with the sentence saying who it is."""

import re

import pytest
from conftest import FakeEmbedder, FakeModel, small_index

from slmgraph.config.prompting import Prompts
from slmgraph.model.client import ModelClient
from slmgraph.query.engines.basic_search import basic_search
from slmgraph.query.engines.local_search import local_search
from slmgraph.query.extractive import extractive_answer, Point, sentence_points

#: Newsletters in which a context sentence shares more of the question's wording ("was", "the") than the
#: sentence that answers it, so it is nearer the question by a bag-of-words cosine (0.76 against 0.60).
DOCS = {
    "2023-01.md": "# January newsletter\n\n## Water\n\nThe standpipe was leaking in the frost. Priya Raman turned "
                  "the water off at the mains.\n\n## Rents\n\nRents for the year stay at the same level.\n",
    "2023-03.md": "# March newsletter\n\n## Water\n\nGareth Lloyd repaired the standpipe on 4 March. Priya Raman "
                  "turned the water back on.\n\n## Shed\n\nThe shed door is stiff.\n",
}


@pytest.fixture
def club(tmp_path):
    store, s = small_index(tmp_path, "club", DOCS)
    yield store, s
    store.close()


def _first(text: str) -> str:
    """The answer's first line, without a bullet mark or its citation."""
    line = next(ln for ln in text.splitlines() if ln.strip())
    return re.sub(r"\s*\[[^\]]*\]$", "", re.sub(r"^- ", "", line))


@pytest.mark.parametrize("method", ["basic", "local"])
def test_the_answer_opens_with_the_sentence_that_answers(club, method):
    store, s = club
    search = {"basic": basic_search, "local": local_search}[method]
    ans = search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, "When was the standpipe repaired?",
                 FakeEmbedder())
    assert _first(ans.text) == "Gareth Lloyd repaired the standpipe on 4 March.", ans.text
    lead = ans.text.split("\n\n", 1)[0]
    assert not lead.startswith("- ") and re.search(r"\[Sources: \d+\]$", lead), ans.text  # a sentence of its own
    assert "\n- " in ans.text or ans.text.count("[Sources:") == 1  # the other points follow as bullets


def test_the_nearest_sentence_still_comes_without_a_question():
    """Without the question's text the points keep their order by relevance (drift and lazy search)."""
    passages = [(1, "The standpipe was leaking in the frost. Gareth Lloyd repaired the standpipe on 4 March.")]
    e = FakeEmbedder()
    qv = e.encode(["When was the standpipe repaired?"])[0]
    plain = sentence_points(passages, qv, e)
    led = sentence_points(passages, qv, e, question="When was the standpipe repaired?")
    assert plain[0].text == "The standpipe was leaking in the frost."
    assert led[0].text == "Gareth Lloyd repaired the standpipe on 4 March."
    assert {p.text for p in plain} == {p.text for p in led}


def test_a_sentence_leaning_on_the_one_before_does_not_open_the_answer():
    """"So the standpipe was repaired on 4 March." is as near the question and holds its date, but opens on a
    conjunction: it reads as the answer's first sentence only when nothing else answers as well."""
    passages = [(1, "Gareth Lloyd repaired the standpipe in March. So the standpipe was repaired on 4 March.")]
    e = FakeEmbedder()
    qv = e.encode(["When was the standpipe repaired?"])[0]
    led = sentence_points(passages, qv, e, question="When was the standpipe repaired?")
    assert [p.text for p in led] == ["Gareth Lloyd repaired the standpipe in March.",
                                     "So the standpipe was repaired on 4 March."]


def test_lead_is_a_paragraph_and_the_rest_bullets():
    points = [Point("", "A answers.", [3]), Point("", "B adds.", [1, 2])]
    assert extractive_answer(points, "Sources", None, "Sources: text units 3, 1, 2.", lead=True) == (
        "A answers. [Sources: 3]\n\n- B adds. [Sources: 1, 2]\n\nSources: text units 3, 1, 2.")
    assert extractive_answer(points[:1], "Sources", None, "", lead=True) == "A answers. [Sources: 3]"
