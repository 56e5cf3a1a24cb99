"""Segues: whether guests move, within one reply, between their own stories and another kind of talk, counted and
quoted from the replies where they do."""

from conftest import theme_index
from test_theme_kinds import WordEmbedder

from slmgraph.query.theme_segues import asks_segue, segue_answer

UNITS = [
    ("a0", "a", 0, "JO BAKER: Tell us how you started, Ada.\n\nADA LOVE: When I was a kid I fixed the radio in my "
                   "father's shop every Saturday. The radio industry today gives insights from chips, not from "
                   "repairs at all.\n"),
    ("b0", "b", 0, "JO BAKER: Where does shipping stand, Ben?\n\nBEN ODE: The shipping industry gives insights "
                   "into world trade every single month. I remember my first job on the docks in Hull.\n"),
    ("c0", "c", 0, "JO BAKER: Cy, how did it begin?\n\nCY DIX: I remember my first bike and the hill behind our "
                   "house.\n\nJO BAKER: And the industry insights?\n\nCY DIX: The bicycle industry gives insights "
                   "into city planning for everyone.\n"),
]


def test_the_question_asking_whether_speakers_move_between_stories_and_another_talk():
    q = "Do guests segue between personal narratives and industry insights fluidly, and how does this impact it?"
    assert asks_segue(q) == ("personal narratives", "industry insights")
    assert asks_segue("Do speakers switch between industry insights and their anecdotes?") == (
        "anecdotes", "industry insights")
    assert asks_segue("Do guests move between their personal stories and points about their field within one "
                      "answer?") == ("personal stories", "points about their field")
    # neither side is the speakers' stories, or no move between: no such question
    assert asks_segue("Do guests move between cities and towns?") is None
    assert asks_segue("What personal narratives do guests share?") is None


def test_a_segue_is_a_story_then_the_other_talk_in_one_turn_counted_each_way_and_linked():
    ix = theme_index(UNITS, embedder=WordEmbedder(), mentions=[("a0", "radio", "radio")])
    q = "Do guests segue between personal narratives and industry insights?"
    text, points, cited = segue_answer(ix, q, WordEmbedder())
    head = text.split("\n\n")[0]
    # Ada moves on by herself; Ben goes the other way; Cy's point follows the host's question, so it is no segue
    assert head == ("Yes, in 2 of the 3 documents. Within one reply, with no question between, guests move from a "
                    "story of their own to industry insights once, by Ada Love, and from industry insights "
                    "back to a story once. In 1 of the 1 moves to industry insights, the point picks up the story's "
                    "subject (“radio”): there the story grounds the point in the guest's own experience."), head
    assert "### Ada Love, in “a”: from a story to industry insights, carrying “radio” across" in text
    ada = text.split("### Ada Love", 1)[1].split("\n###", 1)[0].splitlines()
    assert ada[1].startswith("- *a*: Ada Love: When I was a kid") and "radio industry today" in ada[2]
    assert "Cy Dix" not in text and "Jo Baker" not in text
    assert sorted(cited) == [1, 2] and len(points) == 2
    assert segue_answer(ix, "What do guests say about radios?", WordEmbedder()) is None
    ix.store.con.close()


def test_global_search_answers_a_segue_question_from_the_replies():
    from slmgraph.query.answer import Answer
    from slmgraph.query.engines.global_search import _transcript_answer

    ix = theme_index(UNITS, embedder=WordEmbedder())
    ans = Answer(question="q", method="global", text="")
    q = "Do guests move between their personal stories and industry insights?"
    assert _transcript_answer(ix.store, q, WordEmbedder(), ans, None)
    assert ans.text.startswith("Yes, in 2 of the 3 documents.") and ans.details["transcript"]
    # an index without noun phrases links the two sentences by a long word they share
    assert "the point picks up the story's subject (“radio”)" in ans.text
    ix.store.con.close()


def test_what_the_host_asks_after_a_move_says_what_it_does_to_the_conversation():
    units = [(f"{k}0", k, 0, f"JO BAKER: Tell us how you started.\n\n{g}: {story} {point}\n\nJO BAKER: {asked}\n")
             for k, g, point, story, asked in (
                 ("a", "ADA LOVE", "The radio industry today gives insights from chips, not from repairs at all.", "When I was a kid I fixed the radio in my father's shop every Saturday.", "Why chips rather than repairs?"),
                 ("b", "BEN ODE", "The clock industry today gives insights on chips, not on winding at all.", "I remember my first job winding clocks for my father in Leeds.", "And the chips, where are they made?"),
                 ("c", "CY DIX", "The kettle industry today gives insights on power, not on repairs at all.", "Growing up, I spent my evenings taking kettles apart in the shed.", "Do you still collect kettles?"))]
    ix = theme_index(units, embedder=WordEmbedder())
    text, _, _ = segue_answer(ix, "Do guests segue between personal narratives and industry insights?",
                              WordEmbedder())
    head = text.split("\n\n")[0]
    assert head.endswith("Of the 3 moves the host's next question can be read after, it takes up the point's "
                         "subject in 2, goes back to the story's in 1, and turns to something else in 0: so a move "
                         "to industry insights steers the conversation toward it."), head
    # works of one text unit each have no course to place the moves in
    assert "of the way into a conversation" not in head
    ix.store.con.close()


def test_a_reply_moves_each_way_once_however_many_story_sentences_lead_to_its_point():
    units = [("a0", "a", 0, "JO BAKER: Tell us how you started, Ada.\n\nADA LOVE: When I was a kid I fixed the radio in "
                            "my father's shop. I remember my first soldering iron burning my thumb. The radio "
                            "industry today gives insights from chips, not from repairs at all.\n")]
    ix = theme_index(units, embedder=WordEmbedder())
    text, _, _ = segue_answer(ix, "Do guests segue between personal narratives and industry insights?", WordEmbedder())
    assert "guests move from a story of their own to industry insights once, by Ada Love" in text, text
    ix.store.con.close()
