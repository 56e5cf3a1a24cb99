"""Statements of a kind: a question asking for stories, passions, hopes or worries across a corpus is answered from
the corpus's sentences of that kind, said by its guests, with their speakers and documents named."""

from __future__ import annotations

import hashlib
import re

import numpy as np
from conftest import theme_index

from slmgraph.query.answer import Answer
from slmgraph.query.engines.global_search import _transcript_answer
from slmgraph.query.theme_kinds import kinds_answer, kinds_asked, stage_of


class WordEmbedder:
    """A bag of hashed words: sentences sharing words are near."""

    name, dim = "kinds-fake", 64

    def encode(self, texts, progress=False):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in set(re.findall(r"\w+", t.lower())):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
            out[i] /= max(np.linalg.norm(out[i]), 1e-9)
        return out


TOWNS = ["Leeds", "Porto", "Quito", "Oslo", "Perth"]
#: Each guest: (label, childhood story, first-job story, advice, hope about AI, worry about AI, worry about weather).
GUESTS = [
    ("ADA LOVELACE", "Growing up in Leeds, I spent my weekends in my aunt's chemistry lab above the bakery.",
     "I remember my first job, washing glassware in a dye works beside the canal.",
     "My advice to young people is to learn chemistry by building small things with friends.",
     "I am hopeful that AI will help chemists find safer dyes much faster.",
     "I worry that AI will flood the chemistry journals with careless papers.",
     "I worry that the Leeds winters are getting colder for the canal boats."),
    ("BORIS KARLOV", "Growing up in Porto, my grandfather took me to the harbour to read the tides.",
     "My first job was counting crates of sardines at dawn for a fishmonger.",
     "If you are young, don't be afraid of geology fieldwork in the rain.",
     "I am optimistic that AI can map fault lines before the next earthquake.",
     "I am afraid AI models of the seabed will be trusted blindly by insurers.",
     "I am scared of the storms that batter the Douro estuary each autumn."),
    ("CLARA OSWIN", "As a child in Quito I collected orchids with my sister on the volcano slopes.",
     "I remember my first job at a flower market, trimming roses for export.",
     "I always tell my students to keep a field diary of every plant they see.",
     "I am excited that AI could identify rare orchids from one blurry photograph.",
     "I am concerned that AI will replace the botanists who walk the forests.",
     "I am worried about the dry season burning the Andean meadows."),
    ("DORA MILAJE", "When I was nine, my father built me a telescope from plumbing pipes in Oslo.",
     "My first job was sweeping the floors of the planetarium after the evening shows.",
     "My advice is to stay up late and learn the constellations before the mathematics.",
     "I hope AI will sift the sky surveys for comets that no one has seen.",
     "I fear AI will fill the night sky catalogues with phantom galaxies.",
     "I fear the Oslo fog will hide the aurora for another winter."),
    ("EMIL STRAND", "My mother ran a pet shop in Perth and I fed the lizards before school.",
     "I remember my first job, cleaning the penguin pools at the city zoo.",
     "You should volunteer at an animal shelter before you study zoology.",
     "I am hopeful AI can track endangered quolls through camera traps.",
     "The danger is that AI tracking collars will be used by poachers.",
     "The danger is that the Perth heatwaves will kill the reef fish."),
]


def _corpus(mentions=(), names=None):
    """Five interviews, one guest each: the host tells a story of his own and asks; each guest tells of their
    childhood and their first job, gives advice, voices a hope and a worry about AI, and a worry about the
    weather. ``names``: the five documents' names (else talk0 to talk4)."""
    units = []
    for i, (g, *said) in enumerate(GUESTS):
        doc = names[i] if names else f"talk{i}"
        text = ("KEVIN SCOTT: When I was a kid in Virginia, my father fixed radios in the garage every weekend.\n"
                + f"KEVIN SCOTT: What got you started on your career, {g.split()[0].title()}?\n"
                + "".join(f"{g}: {s}\n" for s in said))
        units.append((f"u{i}", doc, 0, text))
        # more talk, naming no AI: "AI" is specific to a few of the corpus's units
        town = TOWNS[i]
        units += [(f"u{i}{k}", doc, k, f"{g}: {town} has {k + 2} bridges over the river and a market on "
                   f"{day}.\n{g}: The {town} museum opens at {k + 8} in the morning on {day}.\n")
                  for k, day in enumerate(["Monday", "Tuesday", "Friday"], start=1)]
    return theme_index(units, embedder=WordEmbedder(), mentions=mentions)


def test_the_kinds_a_question_asks_for():
    assert kinds_asked("What do guests say they love?") == ["passions"] and kinds_asked("Do guests love AI?") == []
    assert kinds_asked("What personal anecdotes or stories do tech leaders often share?") == ["stories"]
    assert kinds_asked("How have the guests' hopes and worries about AI evolved?") == ["hopes", "worries"]
    assert kinds_asked("What advice do guests give to young people?") == ["advice"]
    assert kinds_asked("What are the personal passions that drive tech leaders?") == ["passions"]
    # a theme, a company's culture "driving" advances, the host's techniques: no kind of statement
    assert kinds_asked("What are the main themes across these episodes?") == []
    assert kinds_asked("Which guests talk about company culture driving technological advancements?") == []
    assert kinds_asked("What narrative techniques encourage guests to open up about their experiences?") == []


def test_a_story_is_placed_in_the_stage_of_life_it_tells_of():
    assert stage_of("When I was a kid in Leeds, my mother kept a notebook.") == "childhood and family"
    assert stage_of("I remember my first job, sorting samples for a museum.") == "first jobs and careers"
    assert stage_of("We founded the company in a garage.") == "founding and building"
    assert stage_of("I went to Paris that spring.") == "other moments"


def test_stories_are_the_guests_own_grouped_by_stage_of_life_with_speakers_and_documents():
    text, points, cited = kinds_answer(_corpus(), "What personal anecdotes do the guests often share?", WordEmbedder())
    head = text.split("\n\n")[0]
    # ten stories, two in each interview; the host's own story is not the guests'
    assert head.startswith("10 sentences tell stories of their own in all 5 documents")
    assert "Virginia" not in text and "Kevin Scott" not in text
    assert "childhood and family (5, in 5 documents)" in head and "first jobs and careers (5, in 5 documents)" in head
    assert "### Childhood and family" in text and "### First jobs and careers" in text
    quotes = [line for line in text.splitlines() if line.startswith("- *talk")]
    assert quotes and all(re.search(r"\*talk\d, unit 1 of 4\*: [A-Z][a-z]+ [A-Z][a-z]+: ", q) for q in quotes)
    assert all(re.search(r"\[Sources: \d+\]$", q) for q in quotes)
    assert "Documents cited:" in text and {p["topic"] for p in points} == {"childhood and family", "first jobs and careers"}
    assert all(d["document"].startswith("talk") for p in points for d in p["documents"])
    assert set(cited) <= {p_src for p in points for p_src in p["sources"]}


def test_hopes_and_worries_about_a_topic_name_it_and_run_in_corpus_order_when_change_is_asked():
    text, points, _ = kinds_answer(_corpus(), "How have the guests' hopes and worries about AI evolved across the "
                                              "interviews?", WordEmbedder())
    head = text.split("\n\n")[0]
    assert "5 sentences voice hopes naming “AI” in all 5 documents" in head
    assert "5 sentences voice worries naming “AI” in all 5 documents" in head
    # the worries about the weather name no AI
    assert "winters" not in text
    worries = text.split("### Worries, document by document")[1].split("\n\n")[0]
    # under the line saying who speaks, the quotes
    speakers = [g.title() for line in worries.splitlines() if line.startswith("- ") for g, *_ in GUESTS
                if g.title() in line]
    assert speakers == [g.title() for g, *_ in GUESTS]
    # as many in each: no document said to hold the most
    assert "most in" not in head
    assert [p["topic"] for p in points] == ["hopes", "worries"]


def test_too_few_sentences_of_the_kind_give_no_answer_this_way():
    units = [("u0", "a", 0, "ADA LOVELACE: I worry that chemistry classes are closing across the north.\n"),
             ("u1", "b", 0, "BORIS KARLOV: The weather in Porto was mild for most of the year.\n")]
    assert kinds_answer(theme_index(units, embedder=WordEmbedder()), "What do guests worry about?", WordEmbedder()) is None
    assert kinds_answer(_corpus(), "What are the main themes?", WordEmbedder()) is None
    assert kinds_answer(_corpus(), "What do guests worry about?", None) is None


def test_global_search_answers_a_question_of_a_kind_from_its_sentences():
    ix = _corpus()
    ans = Answer(question="q", method="global", text="")
    assert _transcript_answer(ix.store, "What stories do the guests share?", WordEmbedder(), ans, None)
    assert ans.text.startswith("10 sentences tell stories of their own")
    assert ans.details["transcript"] and ans.details["documents_named"]
    assert set(ans.citations["sources"]) == {s for p in ans.points for s in p["sources"]}
    assert not _transcript_answer(ix.store, "What are the main themes?", WordEmbedder(), Answer(question="q", method="global", text=""), None)


def test_a_unit_opening_mid_turn_gives_its_first_sentences_to_the_speaker_before():
    from slmgraph.query.theme_kinds import _opening_speaker

    before = "KEVIN SCOTT: Tell me about it.\nADA LOVELACE: Well, when I was a kid in Leeds, I built a loom."
    assert _opening_speaker(before, "when I was a kid in Leeds, I built a loom. It was slow.") == "Ada Lovelace"
    assert _opening_speaker(before, "Something else entirely, said later.") == "Ada Lovelace"
    assert _opening_speaker("No labels here at all.", "More words.") == ""


def test_the_story_a_question_speaks_of_is_no_kind_and_form_words_are_no_topic():
    from slmgraph.query.theme_kinds import topic_of

    assert kinds_asked("Do guests segue fluidly, and how does this impact the overall story?") == []
    ix = _corpus()
    assert topic_of("What narrative structures do guests rely on when recounting the journey of their careers?",
                    ix) >= {"journey"}
    assert not topic_of("What narrative structures do guests use?", ix) & {"narrative", "structur", "structure"}


def test_a_story_naming_two_stages_is_placed_in_the_later_and_one_sentence_reads_in_the_singular():
    from slmgraph.query.theme_kinds import _verb

    assert stage_of("My job at this company right after I graduated high school was to press rivets.") == \
        "first jobs and careers"
    assert _verb("voice worries", 1) == "voices worries" and _verb("tell stories of their own", 2) == \
        "tell stories of their own"


def test_a_question_about_the_host_reads_the_hosts_own_sentences():
    from slmgraph.query.theme_asks import asked_of

    worries = ["the rent going up every single year", "the bridge closing for repairs", "the choir losing its hall"]
    units = [(f"u{i}", f"talk{i}", 0, f"KEVIN SCOTT: My fear is that the old boathouse number {i} will flood again.\n"
                                      f"{name}: I worry about {worries[i]}.\n")
             for i, name in enumerate(["ANNA BELL", "OTTO RANK", "IDA WELLS"])]
    ix = theme_index(units, embedder=WordEmbedder())
    text, _, _ = kinds_answer(ix, "What does the host fear?", WordEmbedder())
    assert "Kevin Scott: My fear is" in text and "rent" not in text and "bridge" not in text
    assert asked_of("What questions does the host ask?", ix) == "Kevin Scott"
    # "risks" taken is no worry
    assert kinds_asked("Which risks did the club take?") == []


def test_a_first_job_told_any_way_is_a_first_job():
    assert stage_of("A paper round at twelve, but my first real job was at Hallam's Bakery.") == "first jobs and careers"
    assert stage_of("My first week, I counted a farmer's deposit, all in coins.") == "first jobs and careers"


def test_a_reply_to_the_hosts_question_asking_for_a_kind_is_of_that_kind():
    replies = [("Baking sourdough bread on Saturdays for the early crews at the club.", "The ovens were cold."),
               ("Restoring wooden boats, mostly old clinker skiffs with copper rivets.", "It rained in Porto."),
               ("Jazz trumpet in a dance band that plays the Christmas dinner each year.", "Our drummer moved away."),
               ("Keeping four hives of bees on my allotment beside the railway line.", "The trains are late."),
               ("Drawing comics where the single sculls are herons and the eights are dragons.", "Paper is dear.")]
    names = ["ANNA BELL", "OTTO RANK", "IDA WELLS", "UMA THORN", "ELLA FITZ"]
    units = [(f"u{i}", f"talk{i}", 0, f"KEVIN SCOTT: What do you do when you're not working?\n"
                                      f"{names[i]}: {a}\n{names[i]}: {b}\n")
             for i, (a, b) in enumerate(replies)]
    text, _, _ = kinds_answer(theme_index(units, embedder=WordEmbedder()), "What are the guests' passions?",
                              WordEmbedder())
    # no cue word marks them, the host's question does
    assert text.startswith("5 sentences speak of their passions in all 5 documents")
    assert "sourdough" in text and "bees" in text and "trains" not in text


def test_a_short_sentence_counts_only_when_it_names_the_kind():
    units = [(f"u{i}", f"talk{i}", 0, f"KEVIN SCOTT: Hello there.\n{name}: {line}\n{name}: I love that man.\n")
             for i, (name, line) in enumerate([("ANNA BELL", "Music is my passion."), ("OTTO RANK", "Climbing is my passion."),
                                               ("IDA WELLS", "Chess is my passion."), ("UMA THORN", "Sailing is my passion."),
                                               ("ELLA FITZ", "Poetry is my passion.")])]
    text, _, _ = kinds_answer(theme_index(units, embedder=WordEmbedder()), "What are the guests' passions?", WordEmbedder())
    assert text.startswith("5 sentences speak of their passions in all 5 documents")
    assert "Climbing is my passion." in text and "that man" not in text


def test_the_counts_of_a_kind_agree_between_the_opening_and_its_groups(monkeypatch):
    import re

    import slmgraph.query.theme_kinds as tk

    monkeypatch.setattr(tk, "KEEP", 4)  # fewer quoted than found: the groups hold the nearest only
    text, _, _ = kinds_answer(_corpus(), "What hopes do the guests voice?", WordEmbedder())
    head, *sections = text.split("\n\n")
    found = int(re.match(r"(\d+) sentences voice hopes", head).group(1))
    counts = [int(re.search(r"^(\d+) sentences? in ", s, re.M).group(1)) for s in sections if s.startswith("### ")]
    assert found == 5 and counts
    if len(counts) == 1:  # the kind's one group stands for all of it
        assert counts == [found], text
    else:
        assert "Of the 4 nearest the question, grouped by meaning" in head and sum(counts) <= 4, text


def test_what_recurs_across_the_speakers_is_said_from_the_phrases_they_share():
    from slmgraph.query.theme_kinds import motifs

    q = "What personal anecdotes do the guests often share?"
    # every guest's first job, two guests' fathers and mothers (one speaker each: no motif), the host's father
    mentions = [(f"u{i}", "first job", "first job") for i in range(5)] + [
        ("u3", "father", "father"), ("u4", "mother", "mother"), ("u0", "chemistry lab", "chemistry lab")]
    ix = _corpus(mentions)
    text, _, _ = kinds_answer(ix, q, WordEmbedder())
    head = text.split("\n\n")[0]
    assert head.endswith("What recurs across speakers: “first job” (5 speakers: Ada Lovelace, Boris Karlov, Clara "
                         "Oswin, Dora Milaje and Emil Strand)."), head
    # a phrase the question holds, or a phrase in over a quarter of the units, is no motif
    assert motifs(ix, [], q, WordEmbedder()) == []
    wide = _corpus([(f"u{i}{k}", "first job", "first job") for i in range(5) for k in ("", 1)])
    assert "What recurs" not in kinds_answer(wide, q, WordEmbedder())[0]
    asked = kinds_answer(ix, "What stories of a first job do the guests share?", WordEmbedder())
    assert asked is None or "What recurs" not in asked[0]
    # an index without concept phrases says nothing of what recurs
    assert "What recurs" not in kinds_answer(_corpus(), q, WordEmbedder())[0]


def test_advice_is_the_sentences_naming_it_and_the_replies_to_a_request_for_it():
    text, points, _ = kinds_answer(_corpus(), "What advice do the guests give to young people?", WordEmbedder())
    # four name their advice ("my advice", "I always tell my students", "don't be afraid"); "you should" alone is weak
    head = text.split("\n\n")[0]
    assert "5 sentences give advice in all 5 documents" in head, text
    # the advice by what it is about, first
    assert head.startswith("In short, the advice is of two kinds: learning and skills (“to learn chemistry by "
                           "building small things with friends”, Ada Lovelace; "), head
    assert "### Learning and skills" in text and "### Risk and persistence" in text
    assert "field diary" in text and "geology fieldwork" in text
    assert "bridges" not in text and "Virginia" not in text
    # a reply to a request for advice is advice over its first sentences, praise of the question not counted, the
    # apostrophe curled or not
    replies = [("That\u2019s a great question.", "Don\u2019t be afraid to take apart old radios.", "Keep a notebook of what breaks.",
                "Ask why it broke before you fix it.", "The bus was late again."),
               ("Good question.", "Learn to weld before you learn to code.", "Start with scrap metal from the yard.",
                "Wear thick gloves near the grinder every time.", "My cat sleeps all day."),
               ("Well.", "Find a mentor who fixes engines on weekends.", "Ask them everything twice.",
                "Read the manuals twice over at night.", "The weather was grey.")]
    names = ["ANNA BELL", "OTTO RANK", "IDA WELLS"]
    units = [(f"u{i}", f"talk{i}", 0, "KEVIN SCOTT: What advice would you give to young engineers?\n"
                                      + "".join(f"{names[i]}: {s}\n" for s in said))
             for i, said in enumerate(replies)]
    text, _, _ = kinds_answer(theme_index(units, embedder=WordEmbedder()), "What advice do guests give?",
                              WordEmbedder())
    # three statements of each reply, "Well." none; the fourth and the praise of the question are no advice
    assert "8 sentences give advice in all 3 documents" in text.split("\n\n")[0], text
    assert "old radios" in text and "scrap metal" in text and "mentor" in text
    assert "bus was late" not in text and "cat sleeps" not in text and "great question" not in text


def test_where_the_stories_fall_in_a_conversation_says_whether_they_follow_a_life():
    # each guest's childhood, school, first job and founding, one to a text unit
    lives = [("ANNA BELL", "When I was a kid, my father fixed radios in our Leeds garage.",
              "In high school I built a crystal set for the physics fair.", "My first job was soldering pager boards.",
              "Then I founded a company making hearing aids with two friends."),
             ("OTTO RANK", "Growing up in Porto, my grandmother kept bees on the roof.",
              "At university I studied marine chemistry and rowed badly.", "My first job was testing harbour water.",
              "Later we started a startup selling tide sensors to fishermen."),
             ("IDA WELLS", "As a child I drew maps of every street in Quito.", "In college I learned surveying from a "
              "retired colonel.", "I was hired by the city to redraw the tram lines.", "Eventually I co-founded a "
              "business printing atlases for schools."),
             ("UMA THORN", "When I was ten my mother taught me chess on the ferry to Oslo.", "In grad school I wrote a "
              "chess engine in a week.", "My first job was at a bank writing risk reports.", "So I founded a company "
              "that teaches chess to pensioners."),
             ("ELLA FITZ", "My dad sold lizards in a Perth pet shop.", "At university I studied reptiles and deserts.",
              "My first job was feeding crocodiles at the zoo.", "We launched a startup tracking goannas by radio.")]

    def corpus(order):
        return theme_index([(f"u{i}{k}", f"talk{i}", k, f"{life[0]}: {life[1 + j]}\n") for i, life in enumerate(lives)
                            for k, j in enumerate(order)], embedder=WordEmbedder())

    q = "What personal stories do the guests share?"
    head = kinds_answer(corpus([0, 1, 2, 3]), q, WordEmbedder())[0].split("\n\n")[0]
    assert ("Where these 12 sentences telling stories fall in a conversation (the median point of each stage, from a "
            "conversation's opening at 0 % to its end at 100 %): childhood and family at 12 %, school and university "
            "at 38 % and first jobs and careers at 62 %; so they are told in the order of a life, its early years "
            "first (each work apart: 5 of the 5 works telling two stages or more open on the earliest stage they "
            "tell).") in head, head
    head = kinds_answer(corpus([3, 2, 1, 0]), q, WordEmbedder())[0].split("\n\n")[0]
    assert "childhood and family at 88 %" in head and "so they do not follow the order of a life" in head, head
    assert "0 of the 5 works telling two stages or more open on the earliest stage" in head
    # every story in one unit of a document: no course to follow
    assert "Where these" not in kinds_answer(_corpus(), "What personal anecdotes do the guests share?",
                                             WordEmbedder())[0]


def test_what_the_speakers_say_they_love_is_listed_each_speakers_first():
    from slmgraph.query.theme_kinds import Said, loves, loves_sentence

    said = [Said("I love that type of brainstorming because new vistas open.", 1, "a", 1, 1, "Bill Gates", "passions"),
            Said("I love reading sort of firsthand accounts of people as they lived.", 2, "b", 1, 1, "Sam Altman",
                 "passions"),
            Said("I love it so much.", 3, "b", 1, 1, "Sam Altman", "passions"),
            Said("I\u2019m passionate about the mountains and the sea.", 4, "c", 1, 1, "Ada Lovelace", "passions"),
            Said("I love that you do this.", 5, "c", 1, 1, "Ada Lovelace", "passions"),
            Said("I loved gaming, and I had a Nintendo.", 6, "a", 1, 1, "Bill Gates", "passions")]
    found = loves(said)
    assert found == [("brainstorming", ["Bill Gates"]), ("reading firsthand accounts of people", ["Sam Altman"]),
                     ("the mountains and the sea", ["Ada Lovelace"]), ("gaming", ["Bill Gates"])]
    assert loves_sentence(found).startswith("What they say they love: “brainstorming” (Bill Gates); “reading")
    assert loves_sentence(found[:1]) == ""


def test_the_elements_the_stories_hold_are_counted_by_sentence_and_speaker():
    from slmgraph.query.theme_kinds import Said, elements, elements_sentence

    said = [Said("Then I realized I could build it myself.", 1, "a", 1, 1, "Ada Lovelace", "stories"),
            Said("That\u2019s when my life changed, and I decided to move.", 2, "b", 1, 1, "Sam Altman", "stories"),
            Said("I was lucky to meet her.", 3, "a", 1, 1, "Ada Lovelace", "stories"),
            Said("A teacher encouraged me to apply.", 4, "c", 1, 1, "Bo Chen", "stories"),
            Said("My mentor taught me to weld.", 5, "b", 1, 1, "Sam Altman", "stories")]
    found = elements(said)
    # luck has one speaker only: no element
    assert [(label, n, who) for label, n, who, _ in found] == [
        ("a parent, teacher or mentor who set them on their way", 2, ["Bo Chen", "Sam Altman"]),
        ("a turning point", 2, ["Ada Lovelace", "Sam Altman"])]
    text = elements_sentence(found)
    assert text.startswith("What the stories hold: a parent, teacher or mentor who set them on their way in 2 sentences "
                           "of 2 speakers (") and "“I realized”" in text, text
    assert elements_sentence([]) == ""


def test_what_the_speakers_advise_is_listed_in_their_own_words():
    from slmgraph.query.theme_kinds import Said, advises, advises_sentence

    said = [Said("Yeah, well, I always tell my students, you\u2019ve got to pick hard problems that aren\u2019t solved.", 1, "a",
                 1, 1, "David Baker", "advice"),
            Said("First, learn every child's name in the first week, because names matter.", 2, "b", 1, 1, "Lena Okafor",
                 "advice"),
            Said("Second, find one colleague who will tell you the truth.", 3, "b", 1, 1, "Lena Okafor", "advice"),
            Said("My biggest piece of advice to anyone is, like, have a hobby.", 4, "c", 1, 1, "Justine Ezarik", "advice"),
            Said("I get a lot of requests to give advice to kids.", 5, "d", 1, 1, "Stevie Bathiche", "advice"),
            Said("So don\u2019t be afraid to stray from your goals.", 6, "c", 1, 1, "Justine Ezarik", "advice")]
    found = advises(said)
    # each speaker's first before anyone's second; a reason dropped; naming advice without giving any is none
    assert found == [("pick hard problems that aren't solved", "David Baker"),
                     ("learn every child's name in the first week", "Lena Okafor"),
                     ("have a hobby", "Justine Ezarik"),
                     ("find one colleague who will tell you the truth", "Lena Okafor"),
                     ("don't be afraid to stray from your goals", "Justine Ezarik")], found
    assert advises_sentence(found).startswith("What they advise, in their own words: “pick hard problems")
    assert advises_sentence(found[:1]) == ""


def test_a_sentence_saying_what_it_advises_is_quoted_before_one_only_naming_advice():
    from slmgraph.query.theme_kinds import Said, _pick, advice_in

    assert advice_in("I get a lot of requests to give advice to kids.") == ""
    assert advice_in("My biggest piece of advice to anyone is, like, have a hobby.") == "have a hobby"
    said = [Said("I get a lot of requests to give advice to young people about careers.", 1, "talk0", 1, 1,
                 "Stevie Bathiche", "advice"),
            Said("My advice to young people is learn to write well.", 2, "talk1", 1, 1, "Lena Okafor", "advice")]
    for s in said:
        s.score = 1.0
    picked = _pick(_corpus(), said, "What advice do guests give to young people?", WordEmbedder(), ["advice"])
    # the request shares more of the question's words, yet the advice itself leads
    assert [s.speaker for s in picked] == ["Lena Okafor", "Stevie Bathiche"]


def test_a_question_about_change_opens_with_what_the_halves_say():
    text, _, _ = kinds_answer(_corpus(), "How have the guests' hopes and worries about AI evolved across the "
                                         "interviews?", WordEmbedder())
    head = text.split("\n\n")[0]
    # five interviews, one hope and one worry about AI each: two in the first half, three in the last; the change
    # asked about comes first, the counts of each kind after it
    assert head.startswith("Read in corpus order (the first 2 documents, “talk0” to “talk1”, then the last 3, "
                           "“talk2” to “talk4”): hopes and worries are both voiced about as often in both halves "
                           "(hopes 2 then 3, worries 2 then 3)"), head
    trend_end = head.index("the balance of hopes and worries holds.")
    assert trend_end < head.index("sentences voice hopes")


def test_halves_of_a_corpus_read_by_episode_are_named_by_their_episodes():
    ix = _corpus(names=["Episode 9", "Episode 2", "Episode 5", "Episode 1", "Episode 7"])
    text, _, _ = kinds_answer(ix, "How have the guests' hopes and worries about AI evolved across the interviews?",
                              WordEmbedder())
    assert ("Read in episode order (the first 2 documents, episodes 1 to 2, then the last 3, episodes 5 to 9): "
            in text.split("\n\n")[0]), text


def test_a_sentence_conceding_one_kind_is_of_the_kind_it_stresses():
    from slmgraph.query.theme_kinds import stressed

    assert stressed("So, even though we have tremendous successes in AI, robotics and vision, there are also "
                    "limitations.") == "there are also limitations."
    assert stressed("AI holds so much potential to help, but we have to do it very carefully.") == \
        "we have to do it very carefully."
    assert stressed("I hope it works.") == ""
    units = [(f"u{i}", f"talk{i}", 0, f"HOST: Where is AI going?\n{g}: {x}\n") for i, (g, x) in enumerate([
        ("ADA LOVE", "Even though we have tremendous successes with AI, there are also limitations in what it knows."),
        ("BEN ODE", "I am hopeful that AI will help nurses with the night shifts."),
        ("CY DIX", "I worry that AI will make mistakes nobody notices.")])]
    ix = theme_index(units, embedder=WordEmbedder())
    from slmgraph.query.theme_kinds import found

    kinds = {s.speaker: s.kind for s in found(ix, "What are the guests' hopes and worries about AI?",
                                                ["hopes", "worries"])}
    assert kinds == {"Ada Love": "worries", "Ben Ode": "hopes", "Cy Dix": "worries"}, kinds


def test_a_question_about_how_stories_are_built_is_answered_first_then_element_by_element():
    told = [["When I was ten, my uncle gave me a broken radio in Leeds. I was lucky he never wanted it back.",
             "In college I studied physics on a scholarship from the mill.",
             "My first job was setting type in a print shop, where I was fortunate the owner trusted me with keys."],
            ["Growing up in Porto, at eight I raced a rusty bicycle down to the harbour every dawn.",
             "At university the geology department felt like a second home.",
             "My first job was loading bread vans for a bakery, and by luck the baker taught me accounts."],
            ["When I was twelve my grandmother built me a telescope from plumbing pipes in Quito.",
             "In high school our chemistry teacher let us stay late for experiments.",
             "I joined a museum as a night guard, and I happened to meet the curator who changed everything."],
            ["As a child in Oslo I practised piano for hours while my father mended nets.",
             "At college I switched from music to biology after a summer on the fjords.",
             "My first job was painting hulls at the shipyard, and I was lucky the foreman liked questions."]]
    units = []
    for i, (g, said) in enumerate(zip(NAMES, told)):
        units += [(f"u{i}{k}", f"ep{i + 1}", k, f"MAYA OKAFOR: And then?\n{g}: {x}\n") for k, x in enumerate(said)]
    ix = theme_index(units, embedder=WordEmbedder())
    text, points, _ = kinds_answer(ix, "What narrative structures do the guests rely on when recounting their "
                                       "careers?", WordEmbedder())
    head = text.split("\n\n")[0]
    assert head.startswith("In short, the stories credit luck or chance (5 sentences, 4 speakers: “fortunate”, "
                           "“luck”) and set their scenes with an age or a year")
    # a section per element, its statements quoted with their speakers
    # (the ages and years are all quoted already under the stages of life: no section of their own)
    assert "### Luck or chance" in text and "### Childhood and family" in text
    luck = text.split("### Luck or chance")[1].split("###")[0]
    assert "lucky" in luck or "fortunate" in luck


#: Guests of the small series below.
NAMES = ["ADA KING", "BO LINDQVIST", "CY ROSS", "DI VOSS", "EVA MORENO", "FINN OKORO"]


def _series(turns):
    """One interview per ``(guest, [(host line, guest line)])``, a unit each."""
    units = []
    for i, (g, pairs) in enumerate(turns):
        text = "".join(f"MAYA OKAFOR: {h}\n{g}: {s}\n" for h, s in pairs)
        units.append((f"u{i}", f"ep{i + 1}", 0, text))
    return theme_index(units, embedder=WordEmbedder())


def test_replies_to_the_host_putting_the_same_topic_to_every_guest_are_on_it_and_quoted_with_the_question():
    said = [("I am very hopeful.", "hope"), ("I am hopeful.", "hope"), ("I am cautiously hopeful.", "hope"),
            ("I am worried.", "worry"), ("I am deeply worried about who owns the data.", "worry"),
            ("I used to be excited; not anymore.", "gone")]
    turns = [(NAMES[i], [("Where did you grow up?", "I grew up near the harbour in a small town."),
                                       ("Brain-computer interfaces. Hope or fear?", s),
                                       ("What do you do for fun?", "I sail on weekends.")]) for i, (s, _) in enumerate(said)]
    ix = _series(turns)
    text, _, _ = kinds_answer(ix, "How did the guests' hopes and worries about brain-computer interfaces evolve "
                                  "across the episodes?", WordEmbedder())
    head = text.split("\n\n")[0]
    assert head.startswith("3 sentences voice hopes on “brain-computer interfaces” in 3 of the 6 documents")
    assert "2 sentences voice worries on “brain-computer interfaces”" in head
    # a hope given up is no hope; the host's question names the topic beside each reply
    assert "not anymore" not in text.split("### Worries")[0]
    assert "Ada King (asked “Brain-computer interfaces.”): I am very hopeful." in text
    assert "grew up" not in text and "sail" not in text


def _one_line_each(lines, host):
    """One interview per line: the host says ``host``, a guest of :data:`NAMES` the line."""
    return theme_index([(f"u{i}", f"ep{i + 1}", 0, f"MAYA OKAFOR: {host}\n{NAMES[i]}: {s}\n")
                        for i, s in enumerate(lines)], embedder=WordEmbedder())


def test_passions_in_the_work_and_beside_it_and_a_question_about_life_outside_work():
    lines = ["I'm so excited about the bridge project we are building.", "I love sailing on the lake.",
             "I find the research work very meaningful.", "Outside work I love singing in a choir.",
             "I'm thrilled by every new company we help.", "I love baking bread on Sundays."]
    ix = _one_line_each(lines, "Welcome.")
    text, points, _ = kinds_answer(ix, "What passions drive the guests in their work?", WordEmbedder())
    assert text.startswith("In short, what drives them is of two kinds: the work itself (")
    assert [p["topic"] for p in points] == ["the work itself", "beside the work"]
    work = text.split("### The work itself")[1].split("###")[0]
    assert "bridge project" in work and "choir" not in work  # "outside work" is beside it
    # the opening names what they love beside the work: the list of loves does not say it again
    assert "sailing on the lake" in text.split("\n\n")[0] and "What they say they love" not in text
    text, points, _ = kinds_answer(ix, "What passions outside work do the guests have?", WordEmbedder())
    assert not text.startswith("In short") and "the work itself" not in [p["topic"] for p in points]


def test_advice_said_as_a_label_of_its_own_is_advice():
    lines = ["Advice: learn to swim in cold water.", "Advice: draw every day.", "Advice: finish small things.",
             "Advice: read the terms and conditions.", "Advice: cook for other people."]
    ix = _one_line_each(lines, "Any last words?")
    text, _, _ = kinds_answer(ix, "What advice do the guests give to young people?", WordEmbedder())
    assert "5 sentences give advice in all 5 documents" in text.split("\n\n")[0]
    assert "learning and skills (“learn to swim in cold water”, Ada King; " in text


def test_an_announcement_of_advice_is_quoted_with_the_advice_that_follows_it():
    from slmgraph.query.theme_kinds import Said, advice_in, advises, with_advice

    assert advice_in("And so if the class doesn't go well, go find an online course and work at it.") == \
        "go find an online course and work at it"
    assert advice_in("The key is that what you want to do is build a rare mix of skills.") == \
        "build a rare mix of skills"
    assert advice_in("If it rained, we stayed home and read.") == ""
    text = ("HOST: Any advice?\nLENA OKAFOR: I get a lot of requests to give advice to kids. It's funny. "
            "What you want to do is learn two fields that nobody combines.\nHOST: Thanks.\n")
    ix = theme_index([("u0", "talk0", 0, text)])
    s = Said("I get a lot of requests to give advice to kids.", 1, "talk0", 1, 1, "Lena Okafor", "advice")
    joined, = with_advice(ix, [s])
    assert joined.text == ("I get a lot of requests to give advice to kids. \u2026 What you want to do is learn two "
                           "fields that nobody combines.")
    assert advises([joined]) == [("learn two fields that nobody combines", "Lena Okafor")]
    # advice given in the sentence itself, or not at all in the turn, is left as it is
    other = Said("It's funny.", 1, "talk0", 1, 1, "Lena Okafor", "advice")
    assert with_advice(ix, [other]) == [other]
    ix.store.con.close()


def test_a_trend_says_what_each_halfs_hopes_and_worries_say_the_topic_does():
    import pytest

    from slmgraph.query.theme_facets import parse_pipeline, pipeline_name

    nlp = parse_pipeline(pipeline_name("auto"))
    if nlp is None:
        pytest.skip("no spaCy pipeline with a parser is installed")
    q = "How have the guests' hopes and worries about AI evolved across the interviews?"
    text, _, _ = kinds_answer(_corpus(), q, WordEmbedder(), parse=lambda: nlp)
    head = text.split("\n\n")[0]
    assert ("What they say of “AI” -- in the earlier documents, hopes: “AI will help chemists find safer dyes much "
            "faster” (Ada Lovelace)") in head, head
    assert "in the later documents, hopes: “AI could identify rare orchids from one blurry photograph” (Clara Oswin)" \
        in head
    assert "worries: “AI will replace the botanists who walk the forests” (Clara Oswin)" in head
    # without a parser the trend is given alone
    plain, _, _ = kinds_answer(_corpus(), q, WordEmbedder())
    assert "What they say" not in plain


def test_advice_is_of_the_kind_its_first_cue_names():
    from slmgraph.query.theme_kinds import OTHER_ADVICE, advice_kind

    assert advice_kind("learn chemistry by building small things with friends") == "learning and skills"
    assert advice_kind("talk to customers before you write code") == "other people"
    assert advice_kind("find one senior nurse who will tell you the truth about your mistakes") == "other people"
    assert advice_kind("pick hard problems that aren't solved") == "what to work on"
    assert advice_kind("don't be afraid to stray from them") == "risk and persistence"
    assert advice_kind("have a hobby that you do outside of anything") == "a life beyond work"
    assert advice_kind("work one year in a busy place before you open your own") == OTHER_ADVICE


def _hopes_corpus():
    """Four interviews: the host asks each guest for hopes and worries about AI in one question, and what a young
    person should hear."""
    said = [("TOMAS REYES", "Mostly it worries me. I worry that all bread will taste the same.",
             "I tell every apprentice the same thing. It took me years. Sharpen your own tools."),
            ("PRIYA NANDA", "My worries are bigger than my hopes, I will say that plainly. I worry about deskilling.",
             "Sleep is not optional. And find a mentor who will tell you the truth about your work."),
            ("SAM OKAFOR", "I am mostly hopeful. A team of twelve can do what used to need fifty.",
             "People ask me for advice all the time. There isn't a secret. If you get stuck, go find someone who "
             "has done it."),
            ("GRACE WHIT", "I am more hopeful than most of my colleagues. My worry is cheating, of course.",
             "Read widely, including things you disagree with.")]
    units = [(f"u{i}", f"ep{i + 1}", 0, f"MAYA ORTIZ: Let's talk about AI. What do you hope for and worry about?\n"
                                       f"{g}: {a}\nMAYA ORTIZ: What should a young person hear from you?\n{g}: {b}\n")
             for i, (g, a, b) in enumerate(said)]
    return theme_index(units, embedder=WordEmbedder())


def test_a_reply_to_a_question_asking_for_hopes_and_worries_is_of_the_kind_it_says():
    ix = _hopes_corpus()
    text, _, _ = kinds_answer(ix, "Which guests are mostly hopeful about AI?", WordEmbedder())
    # a question asking which speakers needs only a few sentences; "Mostly it worries me" and "My worries are
    # bigger than my hopes" answer the host's question but voice no hope
    hopes = text.split("### Hopes")[1].split("\n\n")[0]
    assert "Sam Okafor: I am mostly hopeful." in hopes and "Grace Whit: I am more hopeful" in hopes, text
    assert "worries me" not in hopes and "bigger than my hopes" not in hopes
    ix.store.con.close()


def test_a_question_on_what_a_young_person_should_hear_asks_for_advice():
    ix = _hopes_corpus()
    text, _, _ = kinds_answer(ix, "What advice do guests give young people?", WordEmbedder())
    head = text.split("\n\n")[0]
    for advice in ("Sharpen your own tools", "find a mentor who will tell you the truth about your work",
                   "go find someone who has done it", "Read widely, including things you disagree with"):
        assert advice in head, (advice, head)
    ix.store.con.close()


def test_advice_opening_on_a_verb_of_the_table_is_read_and_a_story_opening_is_not():
    from slmgraph.query.theme_kinds import advice_in

    assert advice_in("Survey your culverts every year and clear them before winter.") == \
        "Survey your culverts every year and clear them before winter"
    assert advice_in("Pay farmers to store water upstream.") == "Pay farmers to store water upstream"
    assert advice_in("Let me tell you a story.") == ""


def test_a_passion_quoted_in_the_opening_is_cut_at_its_clause_and_never_on_a_preposition():
    from slmgraph.query.theme_kinds import _cut

    # whole where short, at its first comma where that is short enough, else at a word that is no preposition
    assert _cut("passion at YC, the thing that directly led to OpenAI", 11) == \
        "passion at YC, the thing that directly led to OpenAI"
    assert _cut("excited about the work I get to do in computer science and AI, I actually feel like anyone could "
                "do what I do", 11) == "excited about the work I get to do in computer science and AI"
    assert _cut("excited about the long bridge project that we are building across the wide river in the north "
                "of the city for years", 11) == "excited about the long bridge project that we are building ..."


def test_what_a_half_says_of_the_topic_is_the_clause_naming_it_where_it_is_no_subject():
    import pytest

    from slmgraph.query.clauses import subject_clause, topic_clause
    from slmgraph.query.theme_facets import parse_pipeline, pipeline_name
    from slmgraph.query.theme_model import word_stem

    nlp = parse_pipeline(pipeline_name("auto"))
    if nlp is None:
        pytest.skip("no spaCy pipeline with a parser is installed")
    ai = [frozenset({word_stem("ai")})]
    doc = nlp("And certainly, I think that it's a profoundly dangerous thing to just sign over to an AI.")
    assert subject_clause(doc, ai, 3) == ""
    assert topic_clause(doc, ai, 3) == "it's a profoundly dangerous thing to just sign over to an AI"
    # a clause too long to read as one, or naming no topic, gives none
    assert topic_clause(nlp("The weather was fine and we walked to the harbour."), ai, 3) == ""
    assert topic_clause(nlp("And that's way beyond the capabilities of AI today."), ai, 3) == ""



def test_a_quote_whose_subject_points_back_is_quoted_after_the_sentence_it_points_to():
    from slmgraph.query.theme_kinds import Said, in_context

    s = Said("This was one of my areas of passion.", 1, "a", 1, 1, "Sam Altman", "passions",
             before="We don't know how to do hard tech startups that well.")
    assert in_context(s) == "We don't know how to do hard tech startups that well. This was one of my areas of passion."
    # a sentence standing on its own, or one at a turn's start, is quoted alone
    s.text = "I love reading firsthand accounts."
    assert in_context(s) == "I love reading firsthand accounts."
    assert in_context(Said("That is my passion.", 1, "a", 1, 1, "Sam Altman", "passions")) == "That is my passion."


def test_a_quotes_context_quoted_on_its_own_is_not_said_twice():
    from slmgraph.query.theme_kinds import Quotes, Said

    ix = _one_line_each(["The skill is listening.", "I love rooms."], "Welcome.")
    doc = ix.docs[0].doc_id
    before = "The most important skill is listening to the drummer."
    alone = Said(before, 1, doc, 1, 1, "Elena Marsh", "passions")
    after = Said("This is what I love.", 1, doc, 1, 1, "Elena Marsh", "passions", before=before)
    cites = Quotes(ix)
    text, _, _ = cites.answer([cites.line(alone), cites.line(after)])
    assert text.count(before) == 1 and "Elena Marsh: This is what I love. [Sources: 1]" in text
    cites = Quotes(ix)
    text, _, _ = cites.answer([cites.line(after)])
    assert f"{before} This is what I love." in text
    ix.store.con.close()


def test_a_reply_denying_what_was_asked_is_not_of_the_kind_and_a_pastime_with_family_is_beside_the_work():
    from slmgraph.query.theme_kinds import at_work, cue_weight

    asked = "Any worries about drones?"
    assert cue_weight("Very little, to be honest.", "worries", asked) == 0
    assert cue_weight("Not really.", "worries", asked) == 0
    assert cue_weight("Plenty of them.", "worries", asked) > 0
    assert cue_weight("Nothing worries me more than a drone over a school.", "worries", asked) > 0
    assert cue_weight("No one knows who keeps the footage.", "worries", asked) > 0
    assert not at_work("I build model bridges with my son out of popsicle sticks.")
    assert at_work("I build bridges that carry a city's traffic.")
