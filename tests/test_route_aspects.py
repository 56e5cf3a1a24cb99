"""``--method auto`` on a question asking for one side of the whole corpus ("What were the main challenges?"): global
search (lazy without reports) when it names no person, place or organisation, local search when it does; and the
one topic-word rule of slmgraph.query.route."""

from __future__ import annotations

import pytest
from conftest import FakeEmbedder, FakeModel

import slmgraph
from slmgraph.config.prompting import Prompts
from slmgraph.query.route import asked_topic, corpus_aspect, corpus_wide_phrase, route

CORPUS_WIDE = ["What are the main challenges discussed?", "What successes did the society report?",
               "What lessons were learned?", "What disagreements came up?", "What were the society's main goals?",
               "What were the three biggest setbacks?", "List the problems the committee faced."]
NAMING = ["What challenges did Alice Chen face?", "What did Alice Chen say about the challenges?",
          "What problems did the Kestrel Point Lighthouse Society have?",
          # one fact, not a side of the corpus: an amount, a person, a time
          "How much does the plus plan cost a month?", "Who set the goals?", "When was the problem fixed?"]


def test_auto_sends_a_corpus_wide_aspect_question_to_global_and_one_naming_someone_to_local():
    p = Prompts()
    for q in CORPUS_WIDE:
        method, why = route(q, p)
        assert method == "global" and "names no person" in why, q
        assert route(q, p, reports=False)[0] == "lazy", q
    for q in NAMING:
        assert route(q, p)[0] == "local" and route(q, p, reports=False)[0] == "local", q
    # the names the caller finds decide: a name written in lower case is still a name of the index
    q = "What problems did the keeper's cottage have?"
    assert route(q, p)[0] == "global" and route(q, p, named=lambda x: ["Keeper's Cottage"])[0] == "local"


@pytest.fixture
def index_db(tmp_path, corpus):
    db = tmp_path / "i.duckdb"
    slmgraph.index(corpus, db, model=FakeModel(), embedder_factory=FakeEmbedder, min_community_size=2,
                   max_gleanings=0)
    return db


def test_the_api_routes_by_the_names_of_the_index_as_well_as_the_questions_capitals(index_db):
    with slmgraph.open(index_db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        wide = ix.query("What were the main problems?", method="auto")
        assert wide.details["route"]["chose"] == "global" and "problems" in wide.details["route"]["because"]
        # "alice smith", written in lower case, is an entity of the index: the question is about her
        named = ix.query("what problems did alice smith have?", method="auto")
        assert named.details["route"]["chose"] == "local", named.details["route"]


def test_number_words_name_no_topic_for_any_of_the_routes_topic_rules():
    p = Prompts()
    # a count is no topic: the aspect question is about the corpus, as the themes question is
    assert corpus_aspect("What were the society's two main challenges?", p, frozenset({"society"}))[0] == "challenges"
    q = "What were the main themes of the twelve newsletters?"
    assert corpus_wide_phrase(q, p) is not None and asked_topic(q, p) is None
    assert asked_topic("What are the main themes of the first two restoration projects?", p) == "restoration projects"


def test_a_verb_framing_the_aspect_names_no_topic_of_its_own():
    p = Prompts()
    assert corpus_aspect("What lessons were learned?", p)[0] == "lessons"
    assert corpus_aspect("What disagreements came up?", p)[0] == "disagreements"
    assert corpus_aspect("What problems did the society face?", p, frozenset({"society"}))[0] == "problems"
    assert corpus_aspect("What problems did the orchids face?", p, frozenset({"society"})) is None
    # how they were met is one side of the problems, not a topic of its own
    assert corpus_aspect("What problems came up and how were they resolved?", p)[0] == "problems"
    assert corpus_aspect("What issues arose and how were they dealt with?", p)[0] == "issues"


def test_a_word_merely_holding_a_routing_phrases_word_is_a_topic_of_its_own():
    p = Prompts()
    # "maintenance" holds "main", "ideals" holds "idea": topics, judged by the floor
    q = "What are the main themes of maintenance?"
    assert corpus_wide_phrase(q, p) is None and asked_topic(q, p) == "maintenance"
    assert asked_topic("What are the common themes about ideals?", p) == "ideals"
    # an inflection of a routing phrase's word is still framing
    for q in ("Give a summary of the main ideas.", "Summarizing, what are the themes generally?",
              "What are the most common patterns and trends?"):
        assert corpus_wide_phrase(q, p), q
