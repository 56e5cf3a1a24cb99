"""What a speaker asks: a question about a transcript's interviewer is answered from all of their questions."""

from __future__ import annotations

import hashlib
import re

import numpy as np
from conftest import theme_index

from slmgraph.query.answer import Answer
from slmgraph.query.engines.global_search import _transcript_answer
from slmgraph.query.theme_asks import CHECK, OPEN, asked_of, asks_answer, drawn_out, form_of, speaker_questions

CHILDHOOD = {"parents", "kid", "child", "grow", "grew", "childhood"}
FUTURE = {"future", "next", "exciting", "horizon", "coming"}


class AskEmbedder:
    """Questions about childhood point one way, about the future another, anything else a word hash."""

    name, dim = "ask-fake", 32

    def encode(self, texts, progress=False):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            words = set(re.findall(r"\w+", t.lower()))
            out[i, 0] = 3.0 * bool(words & CHILDHOOD)
            out[i, 1] = 3.0 * bool(words & FUTURE)
            for w in words:
                out[i, 2 + int(hashlib.md5(w.encode()).hexdigest(), 16) % (self.dim - 2)] += 0.2
            out[i] /= max(np.linalg.norm(out[i]), 1e-9)
        return out


GUESTS = ["ADA LOVELACE", "BORIS KARLOV", "CLARA OSWIN", "DORA MILAJE"]


def _corpus():
    """Four interviews: the host asks each guest about their parents and childhood and about the future of
    computing, and checks one thing back; the guests answer (and ask one question of their own)."""
    units, mentions = [], []
    for i, g in enumerate(GUESTS):
        text = (f"KEVIN SCOTT: Welcome to the show.\n"
                f"KEVIN SCOTT: Were your parents scientists when you were a kid?\n"
                f"{g}: My parents were teachers and I grew up near the sea.\n"
                f"KEVIN SCOTT: So you grew up near the sea in a small town?\n"
                f"KEVIN SCOTT: What is the most exciting thing about the future of computing?\n"
                f"{g}: The future of computing is bright. Do you agree with me on that point, Kevin?\n"
                f"KEVIN SCOTT: Really?\n")
        units.append((f"u{i}", f"talk{i}", 0, text))
        mentions += [(f"u{i}", "parents", "parents"), (f"u{i}", "future", "future"), (f"u{i}", "computing", "computing")]
    return theme_index(units, mentions=mentions, embedder=AskEmbedder())


def test_a_question_about_a_speakers_questions_names_the_speaker():
    ix = _corpus()
    assert asked_of("What types of questions does Kevin Scott commonly ask his guests?", ix) == "Kevin Scott"
    assert asked_of("What does Scott ask?", ix) == "Kevin Scott"
    # not about asking, or asked of him
    assert asked_of("What does Kevin Scott think about computing?", ix) == ""
    assert asked_of("Who asked Kevin Scott about the future?", ix) == ""


def test_forms_of_questions():
    assert form_of("So, like, how did you get into computers?") == "their past"
    assert form_of("What do you think we ought to push on?") == "their views"
    assert form_of("Do you have a favourite book?") == "what they do"
    assert form_of("What sorts of games were you into?") == OPEN
    assert form_of("And you grew up in Asia?") == CHECK


def test_only_the_speakers_own_questions_of_some_length_are_read():
    got = speaker_questions(_corpus(), "Kevin Scott")
    texts = [a.text for a in got]
    # "Really?" is too short and the guests' question is theirs; a question asked in each interview counts in each
    assert texts == ["Were your parents scientists when you were a kid?",
                     "So you grew up near the sea in a small town?",
                     "What is the most exciting thing about the future of computing?"] * 4
    assert [a.form for a in got[:3]] == ["their past", CHECK, OPEN]


def test_overlapping_units_repeat_no_question():
    text = "KEVIN SCOTT: Were your parents scientists when you were a kid?\nADA LOVELACE: Yes."
    ix = theme_index([("a", "talk", 0, text), ("b", "talk", 1, text)])
    assert len(speaker_questions(ix, "Kevin Scott")) == 1


def test_the_answer_counts_forms_and_groups_subjects_with_documents_named():
    ix = _corpus()
    text, points, cited = asks_answer(ix, "What questions does Kevin Scott ask?", AskEmbedder())
    first = text.split("\n\n")[0]
    assert first.startswith("Kevin Scott asks 12 questions in all 4 documents, about 3 in each")
    assert "4 ask about their past (“were your …”)" in first
    # by subject: the childhood questions and the future ones, each with examples from distinct documents
    assert "Grouped by meaning, the largest groups ask about parents (8 questions, in 4 documents) and" in first
    assert "### 1. parents" in text and text.count("Were your parents scientists") == 1
    assert "Documents cited:\n- [" in text and all(f"[Sources: {n}]" in text for n in cited)
    assert asks_answer(ix, "What does Kevin Scott think about computing?", AskEmbedder()) is None


def test_global_search_answers_it_from_the_speakers_questions():
    ix = _corpus()
    ans = Answer(text="", method="global", question="q", level=0)
    assert _transcript_answer(ix.store, "What questions does Kevin Scott ask his guests?", AskEmbedder(), ans, None)
    assert ans.text.startswith("Kevin Scott asks") and ans.citations["sources"]
    assert ans.details["transcript"]
    other = Answer(text="", method="global", question="q", level=0)
    assert not _transcript_answer(ix.store, "What is the future of computing?", AskEmbedder(), other, None)
    assert other.text == ""


def test_a_question_opening_on_a_name_keeps_its_form():
    assert form_of("Priya, what did you want to be when you were ten?") == "their past"
    assert form_of("So, what did you do next?") == "their past"


def test_a_speaker_who_asks_nothing_is_said_to():
    ix = theme_index([("a", "talk", 0, "HOST ANN: Do you like the sea?\nGUEST BOB: Yes, I like the sea."),
                      ("b", "chat", 0, "HOST ANN: Hello.")])
    text, points, cited = asks_answer(ix, "What questions does Guest Bob ask?", AskEmbedder())
    assert text == ("Guest Bob asks no question (of 4 words or more) in the corpus; they speak in 1 of its 2 "
                    "documents. [Sources: 2]")
    assert points == [] and cited == [2]  # "talk" is the second document in corpus order


def test_a_short_name_is_found():
    ix = theme_index([("a", "talk", 0, "HOST ANN: Do you like the sea?\nGUEST BOB: Yes.")])
    assert asked_of("What kinds of questions does Ann ask?", ix) == "Host Ann"


def test_how_the_guests_are_drawn_out_is_answered_from_the_hosts_questions():
    ix = _corpus()
    q = "What narrative techniques are used to encourage guests to open up about their experiences?"
    assert drawn_out(q, ix) == "Kevin Scott"
    text, _, _ = asks_answer(ix, q, AskEmbedder())
    # "Really?" draws a guest on, so it counts here
    assert text.startswith("The guests are drawn out by the host's questions.") and "Kevin Scott asks 16 questions" in text
    # a question naming a speaker, or not about drawing guests out, is not the host's
    assert drawn_out("How does Ada Lovelace encourage guests to open up?", ix) == ""
    assert drawn_out("What encourages innovation?", ix) == ""
    ans = Answer(text="", method="global", question="q", level=0)
    assert _transcript_answer(ix.store, q, AskEmbedder(), ans, None) and ans.text.startswith("The guests are drawn")


def test_a_corpus_without_speaker_labels_says_so():
    ix = theme_index([("a", "talk", 0, "Margaret Okafor asked whether the boathouse would flood. Nobody knew.")])
    text, points, cited = asks_answer(ix, "What questions does Margaret Okafor ask?", AskEmbedder())
    assert text == ('The documents have no speaker labels (a line opening on a name and a colon, "MARGARET OKAFOR: '
                    '..."), so the questions Margaret Okafor asks cannot be told from anyone else\'s.')
    assert points == [] and cited == []


def test_where_the_questions_fall_in_a_conversation_is_said_in_its_order():
    towns = ["Leeds", "Porto", "Quito", "Oslo"]
    units = []
    for i, (g, town) in enumerate(zip(GUESTS, towns)):
        said = [f"KEVIN SCOTT: Were your parents sailors in {town} when you were small?\n{g}: They mended nets.\n",
                f"KEVIN SCOTT: So you left {town} for the capital at sixteen?\n{g}: I did, by train.\n",
                f"KEVIN SCOTT: Do you think robots will mend the {town} nets one day?\n{g}: Perhaps, in time.\n"]
        units += [(f"u{i}{k}", f"talk{i}", k, text) for k, text in enumerate(said)]
    ix = theme_index(units, embedder=AskEmbedder())
    text, _, _ = asks_answer(ix, "What types of questions does Kevin Scott ask?", AskEmbedder())
    head = text.split("\n\n")[0]
    assert ("Where they fall in a conversation (the median point of each, from a conversation's opening at 0 % to its "
            "end at 100 %): those about their past at 4 %, checks on what was just said at 38 % and those about "
            "their views at 71 %") in head, head
    assert head.endswith("So a conversation runs from the guest's past to their views."), head
    drawn, _, _ = asks_answer(ix, "What techniques are used to encourage guests to open up?", AskEmbedder())
    assert drawn.startswith("The guests are drawn out by the host's questions. Read from Kevin Scott's 12 questions, in "
                            "the order a conversation takes them (the median point of each, from a conversation's "
                            "opening at 0 % to its end at 100 %), the techniques are starting from their own past (4 "
                            "questions, 33 % of all, at 4 %), following up on what they have just said (4 questions, "
                            "33 % of all, at 38 %) and asking for their views late in a conversation (4 questions, "
                            "33 % of all, at 71 %)"), drawn


def test_each_technique_is_shown_with_the_replies_it_draws():
    # the past draws long replies, checks short ones; of two questions in one turn the reply answers the last
    units = []
    for i, g in enumerate(GUESTS):
        long = " ".join(["We sailed the coast every summer and my father taught me to read the charts."] * 4)
        said = [f"KEVIN SCOTT: Hello there. Were your parents sailors when you were small?\n{g}: {long}\n"
                f"KEVIN SCOTT: Nice.\n",
                f"KEVIN SCOTT: So you left for the capital at sixteen?\n{g}: I did, by train.\nKEVIN SCOTT: Right.\n",
                f"KEVIN SCOTT: What did you study first? Do you think robots will mend the nets one day?\n"
                f"{g}: Perhaps, in time, if the nets are simple enough for them.\nKEVIN SCOTT: Okay.\n"]
        units += [(f"u{i}{k}", f"talk{i}", k, text) for k, text in enumerate(said)]
    ix = theme_index(units, embedder=AskEmbedder())
    text, points, _ = asks_answer(ix, "What techniques are used to encourage guests to open up?", AskEmbedder())
    head = text.split("\n\n")[0]
    assert ("How much each draws out, by the median length of the guest's reply (12 replies read whole): starting "
            "from their own past 60 words, asking for their views 11 words and following up on what they have just "
            "said 4 words; so guests say most after starting from their own past and least after following up on "
            "what they have just said.") in head, head
    assert "By their form" not in head  # the techniques sentence already counts the forms
    sections = text.split("\n\n")[1:4]
    assert [s.split("\n")[0] for s in sections] == [
        "### 1. starting from their own past", "### 2. following up on what they have just said",
        "### 3. asking for their views"], sections
    assert "the guests' replies run a median 60 words (4 read whole)" in sections[0]
    assert "  - Ada Lovelace replies (60 words): \u201cWe sailed the coast every summer and my father taught me to " \
           "read the charts.\u201d" in sections[0]
    # "I did, by train." is too short to show as what a reply says
    assert "replies" not in sections[1].split("\n", 2)[2]
    assert [p["topic"] for p in points] == ["starting from their own past", "following up on what they have just said",
                                            "asking for their views"]


def test_techniques_drawing_replies_of_about_one_length_are_not_ranked():
    units = []
    for i, g in enumerate(GUESTS):
        said = [f"KEVIN SCOTT: Were your parents sailors when you were small?\n{g}: They mended nets on the quay every "
                f"morning of the year.\nKEVIN SCOTT: Nice.\n",
                f"KEVIN SCOTT: Do you think robots will mend the nets one day?\n{g}: Perhaps, in time, if the nets are "
                f"simple enough for them.\nKEVIN SCOTT: Okay.\n"]
        units += [(f"u{i}{k}", f"talk{i}", k, text) for k, text in enumerate(said)]
    ix = theme_index(units, embedder=AskEmbedder())
    text, _, _ = asks_answer(ix, "What techniques are used to encourage guests to open up?", AskEmbedder())
    assert "; so each draws about as much." in text.split("\n\n")[0], text


def test_short_follow_ups_count_when_asked_how_guests_are_drawn_out():
    assert form_of("What do you hope for and what worries you?") == "their views"
    units = []
    for i, g in enumerate(GUESTS):
        units.append((f"u{i}", f"talk{i}", 0,
                      f"KEVIN SCOTT: What was it like where you started, the whole story?\n"
                      f"{g}: It started in a small workshop behind my school where we fixed bicycles for the whole "
                      f"street every weekend and I learned to listen to machines.\nKEVIN SCOTT: And then?\n"
                      f"{g}: Then I left.\nKEVIN SCOTT: What do you hope for and what worries you?\n"
                      f"{g}: I hope the tools get cheaper for small shops.\n"))
    ix = theme_index(units, embedder=AskEmbedder())
    drawn, _, _ = asks_answer(ix, "What techniques are used to encourage guests to open up?", AskEmbedder())
    assert "Kevin Scott asks 12 questions" in drawn, drawn
    assert "### 2. following up on what they have just said\n4 of Kevin Scott's 12 questions" in drawn, drawn
    # asked what he asks, a two-word question asks nothing
    asked, _, _ = asks_answer(ix, "What types of questions does Kevin Scott ask?", AskEmbedder())
    assert asked.startswith("Kevin Scott asks 8 questions"), asked


def test_a_request_for_an_account_is_an_open_question_of_the_drawn_out_answer():
    assert form_of("Tell us how it started, who turned up and what you learned.") == OPEN
    units = [(f"u{i}", f"talk{i}", 0, f"KEVIN SCOTT: Tell us how it started, who turned up and what you learned.\n"
                                      f"{g}: It started with a phone call and forty strangers with shovels on a wet "
                                      f"Sunday morning, and by the evening we had a rota.\nKEVIN SCOTT: Really?\n"
                                      f"{g}: Really.\n") for i, g in enumerate(GUESTS)]
    ix = theme_index(units, embedder=AskEmbedder())
    drawn, _, _ = asks_answer(ix, "What techniques are used to encourage guests to open up?", AskEmbedder())
    assert "Kevin Scott asks 8 questions" in drawn and "### 1. open questions" in drawn, drawn
