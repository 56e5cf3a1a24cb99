"""A "Who is X?" answer opens with what identifies X: the sentence that states X's office or what X is
("X was elected Treasurer", "its parks officer, X,", "X (\"Tiny Tim\"), a ..."), taken into the local
context even when the units that merely mention X are nearer the question; a clause opened by a
preposition ("for X, the initiative pulsed") and a question ("Was X, the clerk, ever paid?") define nothing."""

import re

import pytest
from conftest import FakeEmbedder, FakeModel, small_index

from slmgraph.config.prompting import Prompts
from slmgraph.model.client import ModelClient
from slmgraph.query.engines.local_search import local_search
from slmgraph.query.extractive import defining_points

#: Three committee notes that mention Nadia Petrov in passing, with the words of "Who is ...?", and the
#: annual meeting, last in reading order, that says what she is.
DOCS = {
    "2021-05-committee.md": "# Committee, May 2021\n\nWho brought the cake? Nadia Petrov brought a lemon cake, and it "
                            "is the best cake the committee has had. Nadia Petrov asked who is minding the gate key.\n",
    "2022-06-committee.md": "# Committee, June 2022\n\nNadia Petrov asked who is cutting the hedge by the lane. Nadia "
                            "Petrov said it is too wet to mow.\n",
    "2023-07-committee.md": "# Committee, July 2023\n\nNadia Petrov asked who is taking the minutes when it is "
                            "raining. Nadia Petrov laughed.\n",
    "2024-03-agm.md": "# Annual meeting, March 2024\n\nThe meeting approved the accounts and the new rents for the "
                      "plots by the railway. Nadia Petrov was elected Treasurer. Rents rise by five pounds from "
                      "April.\n",
}


@pytest.fixture
def club(tmp_path):
    store, s = small_index(tmp_path, "club", DOCS)
    yield store, s
    store.close()


def test_who_is_opens_with_the_office_even_when_its_unit_is_farthest_from_the_question(club):
    store, s = club
    s.local_context_tokens = 90  # three of the four units fit: the nearest three mention her in passing
    ans = local_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, "Who is Nadia Petrov?",
                       FakeEmbedder())
    first = next(ln for ln in ans.text.splitlines() if ln.strip())  # the opening sentence, a paragraph of its own
    assert re.sub(r"\s*\[[^\]]*\]$", "", first) == "Nadia Petrov was elected Treasurer.", ans.text
    assert 4 in ans.citations["sources"]  # the annual meeting, cited as the text unit it is quoted from


@pytest.mark.parametrize("name, text", [
    ("Margaret Oduya", "Margaret Oduya was re-elected Chair."),
    ("Kwame Asante", "Kwame Asante was appointed as the treasurer of the society."),
    ("Dennis Kraal", "The council owns the land, but its parks officer, Dennis Kraal, said no money was available."),
    ("Beatrice Ngata", "Margaret Oduya met the new council leader, Councillor Beatrice Ngata."),
    ("Lewis Aberdeen", "Dennis Kraal has left the council; his successor as parks officer is Lewis Aberdeen."),
    ("Bob Cratchit", "Bob Cratchit, clerk to Ebenezer Scrooge."),
    ("Tiny Tim", 'Tim Cratchit ("Tiny Tim"), a cripple, youngest son of Bob Cratchit.'),
    ("Edith Blyth", "Edith Blyth, aged 88, was made an honorary life member."),
    ("Tom Penhallow", "Present: the members. Tom Penhallow announced that this would be his last year as Treasurer."),
    ("CHRISTINA WARREN", "CHRISTINA WARREN: And I'm Christina Warren, Senior Cloud Advocate at Microsoft."),
])
def test_a_stated_office_or_identity_is_a_defining_sentence(name, text):
    got = defining_points([(1, "Someone else spoke. " + text)], [name])
    assert [p.text for p in got] == [text.removeprefix("Present: the members. ")]


@pytest.mark.parametrize("name, text", [
    ("Taylor Cruz", "For Alex Mercer, the link was distant; for Taylor Cruz, the initiative pulsed like a heartbeat."),
    ("Bob Cratchit", "Fred turned to his wife. Was Bob Cratchit, the clerk, ever paid a fair wage?"),
])
def test_a_passing_mention_is_no_defining_sentence(name, text):
    assert defining_points([(1, text)], [name]) == []


def test_a_stated_office_comes_before_an_office_merely_near_the_name():
    passages = [(1, "Tom Penhallow announced that this would be his last year as Treasurer."),
                (2, "Tom Penhallow was elected Treasurer in 2006.")]
    assert [p.ids for p in defining_points(passages, ["Tom Penhallow"])] == [[2]]


def test_a_name_written_in_capitals_finds_its_defining_unit():
    from slmgraph.query.extractive import could_define

    # a transcript's entity is named as its speaker label is written; the text says the name in title case
    text = "CHRISTINA WARREN: Me too. CHRISTINA WARREN: And I'm Christina Warren, Senior Cloud Advocate at Microsoft."
    assert could_define(text, "CHRISTINA WARREN") and not could_define("CHRISTINA WARREN: Me too.", "CHRISTINA WARREN")
