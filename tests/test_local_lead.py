"""Extractive answers about a hospital's year: local search opens with what a named entity is, no method
quotes a run-in heading ("**Cardiac wing.** The board approved ...") as a statement, meeting procedure
ranks last, and ``auto`` sends a question about change over time to global search."""

import re

import pytest
from conftest import FakeEmbedder, FakeModel, small_index

from slmgraph.model.client import ModelClient
from slmgraph.config.prompting import Prompts
from slmgraph.query.engines.basic_search import basic_search
from slmgraph.query.extractive import defining_points, first_sentences, prose_sentences, sentence_points
from slmgraph.query.engines.lazy_search import lazy_search
from slmgraph.query.engines.local_search import local_search
from slmgraph.query.route import route

MINUTES = ("# Board minutes, March\n\n"
           "**Cardiac wing.** The board approved the Cardiac Wing plan after Marcus Reyes presented the costs. "
           "Moved by Grace Whitfield, carried with one abstention.\n\n"
           "**Finances.** Grace Whitfield reported that Mercy Hospital closed the quarter with a small surplus.\n\n"
           "**Nurse contract.** Linda Cho asked Grace Whitfield about the Nurse Union talks.\n")
MEMO = ("# Memo\n\nLinda Cho, the Chief Information Officer, moved the patient records of Mercy Hospital to a "
        "new system in April. Linda Cho trained the staff of Mercy Hospital on the system.\n")
NEWS = ("# News\n\nMarcus Reyes chairs the board of Mercy Hospital. Marcus Reyes opened the Cardiac Wing in June. "
        "Grace Whitfield praised Marcus Reyes for the Cardiac Wing.\n\n**Staffing.** Mercy Hospital hired forty "
        "nurses.\n")
HEADINGS = {"Cardiac wing.", "Finances.", "Nurse contract.", "Staffing."}


@pytest.fixture
def hospital(tmp_path):
    docs = (("minutes_march.md", MINUTES), ("memo_it.md", MEMO), ("news.md", NEWS))
    store, s = small_index(tmp_path, "hospital", docs)
    yield store, s
    store.close()


def _bullets(text: str) -> list[str]:
    """The points of an extractive answer, its opening sentence (a paragraph of its own) and its bullets,
    citations removed."""
    body = text.split("\n\nSources:", 1)[0]
    return [re.sub(r"\s*\[[^\]]*\]$", "", ln.removeprefix("- ")) for ln in body.splitlines() if ln.strip()]


@pytest.mark.parametrize("question, lead", [
    ("Who is Linda Cho and what did she do?", "Linda Cho, the Chief Information Officer,"),
    ("Who is Marcus Reyes?", "Marcus Reyes chairs the board"),
])
def test_local_search_opens_with_what_the_named_entity_is(hospital, question, lead):
    store, s = hospital
    ans = local_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, question, FakeEmbedder())
    points = _bullets(ans.text)
    assert points and points[0].startswith(lead), ans.text
    assert len(points) == len(set(points)) and len(points) > 1


def test_a_question_asking_more_of_a_name_opens_with_its_answer_then_what_the_name_is(hospital):
    store, s = hospital
    ans = local_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s,
                       "What did Linda Cho ask about the nurse union talks?", FakeEmbedder())
    points = _bullets(ans.text)
    assert points[0] == "Linda Cho asked Grace Whitfield about the Nurse Union talks.", ans.text
    assert points[1].startswith("Linda Cho, the Chief Information Officer,"), ans.text


@pytest.mark.parametrize("method", ["local", "basic", "lazy"])
@pytest.mark.parametrize("question", ["What did the board decide about the cardiac wing?",
                                      "What happened to the nurse contract and the finances?"])
def test_no_method_quotes_a_heading_as_a_statement(hospital, method, question):
    store, s = hospital
    client, p, e = ModelClient(FakeModel(), store, "q"), Prompts(), FakeEmbedder()
    search = {"local": local_search, "basic": basic_search, "lazy": lazy_search}[method]
    ans = search(store, client, p, s, question, e)
    points = _bullets(ans.text)
    assert points, ans.text
    assert not any(x in HEADINGS or x.strip("*") in HEADINGS for x in points), ans.text


def test_headings_are_not_prose_but_their_sentences_are():
    assert prose_sentences(MINUTES) == [
        "The board approved the Cardiac Wing plan after Marcus Reyes presented the costs.",
        "Moved by Grace Whitfield, carried with one abstention.",
        "Grace Whitfield reported that Mercy Hospital closed the quarter with a small surplus.",
        "Linda Cho asked Grace Whitfield about the Nurse Union talks."]
    # statements as short as a heading stay prose; a heading line without a period is not
    assert prose_sentences("Staffing\nNurse numbers rose. Prices rose. She resigned. Yes.") == [
        "Nurse numbers rose.", "Prices rose.", "She resigned.", "Yes."]


def test_meeting_procedure_ranks_after_every_statement():
    passages = [(1, "Moved by Grace Whitfield, carried with one abstention. "
                    "Grace Whitfield reported a surplus for the cardiac wing.")]
    qv = FakeEmbedder().encode(["Who moved the motion about Grace Whitfield?"])[0]
    points = sentence_points(passages, qv, FakeEmbedder())
    assert [p.text for p in points] == ["Grace Whitfield reported a surplus for the cardiac wing.",
                                        "Moved by Grace Whitfield, carried with one abstention."]


def test_defining_sentences_and_description_openings():
    passages = [(4, "Linda Cho asked about the talks. Linda Cho was present."), (7, MEMO), (9, NEWS)]
    got = defining_points(passages, ["Linda Cho", "Marcus Reyes", "Grace Whitfield"])
    assert [(p.text.split(",")[0].split(" chairs")[0], p.ids) for p in got] == [("Linda Cho", [7]),
                                                                               ("Marcus Reyes", [9])]
    assert first_sentences("Chair of the board. Marcus Reyes opened the wing. He retired.") == (
        "Chair of the board. Marcus Reyes opened the wing.")


@pytest.mark.parametrize("question, reports, method", [
    ("How did the nurse staffing situation change during 2025?", True, "global"),
    ("How did the nurse staffing situation change during 2025?", False, "lazy"),
    ("How has nurse staffing evolved?", True, "global"),
    ("What happened to staffing over the year?", True, "global"),
    ("How did staffing change?", True, "global"),
    ("How did Linda Cho change the records system?", True, "local"),  # an act, not change over time
    ("Who is Linda Cho and what did she do?", True, "local"),
])
def test_auto_sends_questions_about_change_over_time_to_global(question, reports, method):
    assert route(question, Prompts(), reports=reports)[0] == method


def test_without_a_defining_sentence_in_the_context_the_entity_description_opens_the_answer(hospital):
    from slmgraph.query.engines.local_search import _lead_points

    store, _ = hospital
    eid, norm, desc = store.con.execute(
        "SELECT entity_id, norm, description FROM entities WHERE name = 'Linda Cho'").fetchone()
    [p] = _lead_points(store, [norm], [(3, "Linda Cho asked about the talks.")], {"entities": [eid]})
    assert p.label == "Entities" and p.ids == [eid] and "Chief Information Officer" in p.text
    assert desc.startswith(p.text)
    assert _lead_points(store, [norm], [], {"entities": []}) == []  # an entity outside the context is not cited


def test_a_description_that_does_not_say_what_the_entity_is_opens_nothing(hospital):
    from slmgraph.query.engines.local_search import _lead_points

    store, _ = hospital
    eid, norm = store.con.execute("SELECT entity_id, norm FROM entities WHERE name = 'Grace Whitfield'").fetchone()
    assert _lead_points(store, [norm], [(3, "Grace Whitfield praised the plan.")], {"entities": [eid]}) == []
