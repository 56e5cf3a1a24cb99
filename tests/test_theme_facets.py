"""A global question that lists groups or things is answered facet by facet, in the question's order, and a
facet with no evidence says so in one line; a question that lists nothing is answered as before."""

from __future__ import annotations

import json

import pytest

from slmgraph.query.named import entities_named
from slmgraph.query.question_embed import question_embedder
from slmgraph.query.theme_facets import facets_for, parse_pipeline, pipeline_name, question_facets
from slmgraph.query.themes import theme_answer
from slmgraph.store.db import Store

UNITS = [
    ("d0", "Surgeons use robots to operate through tiny incisions in the hospital. "
           "The weather in the valley was warm that spring."),
    ("d1", "The surgeons say the robots steady their hands during long heart operations. "
           "Our garden grew tomatoes and beans."),
    ("d2", "Nurses rely on delivery robots to carry medicines along the hospital corridors at night. "
           "The cafeteria served soup and bread for lunch."),
    ("d3", "The nurses say the delivery robots save them hours of walking on every shift. "
           "The band played three songs at the festival."),
    ("d4", "The band played three songs at the festival and the crowd sang along to every chorus."),
    ("d5", "Our garden grew tomatoes, beans and squash during the long and sunny summer months."),
]
POOL = [{"community_id": 1, "entities": ["City Hospital"], "summary": ""}]
PROBES = ["What music did the band play?", "What grows in the garden?"]


@pytest.fixture(scope="module")
def nlp():
    p = parse_pipeline(pipeline_name("auto"))
    if p is None:
        pytest.skip("no spaCy pipeline with a parser is installed")
    return p


@pytest.fixture(scope="module")
def embedder():
    return question_embedder()


@pytest.fixture
def store(tmp_path, embedder):
    s = Store(tmp_path / "i.duckdb", create=True)
    con = s.con
    for d in sorted({d for d, _ in UNITS}):
        con.execute("INSERT INTO documents (doc_id, path, title) VALUES (?, ?, ?)", [d, f"{d}.txt", d])
    vecs = embedder.encode([t for _, t in UNITS])
    for i, (d, text) in enumerate(UNITS):
        c = f"u{i}"
        con.execute("INSERT INTO text_units (chunk_id, doc_id, ord, text) VALUES (?, ?, 0, ?)", [c, d, text])
        con.execute("INSERT INTO embeddings (kind, item_id, model, vector) VALUES ('text_unit', ?, 'm', ?)",
                    [c, vecs[i].tolist()])
    con.execute("INSERT INTO entities (entity_id, norm, name, type) VALUES (1, 'city hospital', 'City Hospital', 'ORG')")
    for i, n in ((2, "Johnson and Johnson"), (3, "Procter and Gamble")):
        con.execute("INSERT INTO entities (entity_id, norm, name, type) VALUES (?, ?, ?, 'ORG')", [i, n.lower(), n])
    con.execute("INSERT INTO communities VALUES (1, 0, NULL, 1, NULL)")
    con.execute("INSERT INTO community_members VALUES (1, 1)")
    for i in range(len(UNITS)):
        con.execute("INSERT INTO entity_text_units VALUES (1, ?)", [f"u{i}"])
    con.execute("INSERT INTO community_reports (community_id, level, title, summary, findings, rating, topic, doc_ids) "
                "VALUES (1, 0, 'City Hospital', '', '[]', 5.0, 'hospital', ?)",
                [json.dumps(sorted({d for d, _ in UNITS}))])
    yield s
    s.con.close()


def _labels(question, nlp, is_entity=None):
    return [f.label for f in question_facets(question, nlp, is_entity)]


def test_a_list_with_commas_and_and_gives_its_items_in_order(nlp):
    q = ("How do guests from robotics, neuroscience, entertainment and online communities differ in how they "
         "approach building new technology?")
    facets = question_facets(q, nlp)
    assert [f.label for f in facets] == ["robotics", "neuroscience", "entertainment", "online communities"]
    # each facet is asked the question alone
    assert facets[0].question == "How do guests from robotics differ in how they approach building new technology?"


def test_a_list_of_nouns_each_with_its_article_keeps_its_first_item(nlp):
    # the parse hangs "the teacher" on "the plumber" as an apposition; a name's apposition is no list
    q = "How do the plumber, the teacher and the farmer see the heat-pump pilot?"
    assert [f.label for f in question_facets(q, nlp)] == ["plumber", "teacher", "farmer"]
    assert [f.label for f in question_facets("What did Kevin Scott, the host, say about AI and robotics?", nlp)] == \
        ["AI", "robotics"]


def test_a_list_joined_by_or_of_three_items_is_facets(nlp):
    assert _labels("Did the housing, transport or parks departments cut their budgets?", nlp) == [
        "housing", "transport", "parks"]


def test_compare_x_and_y(nlp):
    assert _labels("Compare Q1 and Q3.", nlp) == ["Q1", "Q3"]


def test_two_people_each(nlp):
    assert _labels("What do Alice and Bob each say about taxes?", nlp) == ["Alice", "Bob"]


def test_two_phrases_joined_by_or_are_one_topic(nlp):
    assert _labels("What personal anecdotes or stories do tech leaders often share?", nlp) == []


def test_a_question_without_a_list_has_no_facets(nlp):
    assert _labels("What are the main themes across these documents?", nlp) == []
    assert facets_for("What advice do guests give to young people?", "auto") == []


def test_a_name_holding_and_is_one_facet_when_the_index_holds_it(nlp, store):
    known = lambda s: bool(entities_named(store, s))  # noqa: E731
    assert _labels("What did Johnson and Johnson say about vaccines?", nlp, known) == []
    q = "What did Procter and Gamble say about vaccines?"
    assert _labels(q, nlp, known) == []
    # the same words where the index holds no such entity: a list of two
    assert _labels(q, nlp, lambda s: False) == ["Procter", "Gamble"]


def _answer(store, embedder, question, facets):
    qv = embedder.encode([question])[0]
    return theme_answer(store, question, POOL, {1: 50.0}, qv, embedder, pool=POOL, probes=PROBES, facets=facets)


def test_each_facet_gets_its_section_and_a_facet_without_evidence_its_line(store, embedder, nlp):
    q = "How do surgeons, nurses and astronauts use robots in their work?"
    facets = question_facets(q, nlp)
    text, themes, _ = _answer(store, embedder, q, facets)
    heads = [line for line in text.splitlines() if line.startswith("### ")]
    assert [h.split(" [")[0] for h in heads] == ["### 1. surgeons", "### 2. nurses", "### 3. astronauts"]
    assert "No passage on astronauts was found." in text
    surgeons = text.split("### 1. surgeons")[1].split("### 2.")[0]
    nurses = text.split("### 2. nurses")[1].split("### 3.")[0]
    assert "operate through tiny incisions" in surgeons and "Nurses" not in surgeons
    assert "carry medicines" in nurses and "urgeons" not in nurses
    # citations name documents, as every theme's do
    assert "- *d0*: Surgeons use robots" in text and "Documents cited:" in text
    assert text.startswith("The question names three, answered in its order: surgeons (")
    assert [t.topic for t in themes] == ["surgeons", "nurses"]


def test_a_question_without_a_list_is_answered_as_before(store, embedder):
    q = "How do surgeons use robots in the hospital?"
    facets = facets_for(q, "auto")
    assert facets == []
    before = theme_answer(store, q, POOL, {1: 50.0}, embedder.encode([q])[0], embedder, pool=POOL, probes=PROBES)
    after = _answer(store, embedder, q, facets)
    assert after[0] == before[0] and after[0]


def test_a_question_about_change_over_time_keeps_its_timeline(store, embedder, nlp):
    q = "How have surgeons and nurses used robots over the years?"
    facets = question_facets(q, nlp)
    assert [f.label for f in facets] == ["surgeons", "nurses"]
    before = theme_answer(store, q, POOL, {1: 50.0}, embedder.encode([q])[0], embedder, pool=POOL, probes=PROBES)
    after = _answer(store, embedder, q, facets)
    assert after[0] == before[0] and after[0] and "### 1. surgeons" not in after[0]


FOCUS_UNITS = [
    ("f0", "d0", 0, "ANA RUIZ: Surgeons play golf on sunny weekends at the club.\n"
                    "ANA RUIZ: Surgeons use AI to read heart scans before an operation."),
    ("f1", "d1", 0, "BEN OKAFOR: Nurses sing in the hospital choir every Friday evening.\n"
                    "BEN OKAFOR: Nurses use AI to plan the night shifts on the ward."),
    ("f2", "d2", 0, "HOST PERSON: Surgeons at the clinic say AI is a fad of the season.\n"
                    "BEN OKAFOR: The AI lab opened in May beside the car park."),
] + [(f"g{i}", f"e{i}", 0, f"CLERK: The market sold {i + 3} crates of pears and apples on a windy morning.")
     for i in range(8)]


def test_a_facet_is_quoted_on_the_question_s_focus_and_its_acronym(nlp):
    from conftest import theme_index
    from test_theme_kinds import WordEmbedder

    from slmgraph.query.theme_facets import facet_themes, facets_overview, focus_of

    ix = theme_index(FOCUS_UNITS, embedder=WordEmbedder())
    q = "How do guests from surgeons and nurses use artificial intelligence?"
    facets = question_facets(q, nlp)
    assert [f.label for f in facets] == ["surgeons", "nurses"]
    focus, words = focus_of(q, facets, ix)
    # the question writes it out, the corpus in capitals
    assert focus == [frozenset({"ai"})] and words == ["AI"]
    themes = facet_themes(ix, facets, WordEmbedder(), focus=focus, hosts={"Host Person"})
    for t in themes:
        t.focus_words = words
    surgeons, nurses = ([s.text for s in t.statements] for t in themes)
    # each facet's own sentence on the focus first; never one off the focus, nor the host's
    assert surgeons[0].endswith("Surgeons use AI to read heart scans before an operation.")
    assert nurses[0].endswith("Nurses use AI to plan the night shifts on the ward.")
    assert not any(w in s for s in surgeons + nurses for w in ("golf", "choir", "fad"))
    assert facets_overview(themes, ix).startswith("The question names two, answered in its order, each on “AI”: ")
    # a group only a host speaks of is still answered, from the host's words
    only_host = facet_themes(ix, facets, WordEmbedder(), focus=focus, hosts={"Ben Okafor"})
    assert only_host[1].statements and only_host[1].statements[0].text.endswith("plan the night shifts on the ward.")
    # without a focus, the facet's own sentences are read, the host's among them
    plain = facet_themes(ix, facets, WordEmbedder())
    assert any("golf" in s.text or "fad" in s.text for s in plain[0].statements)
    ix.store.con.close()


def test_a_facet_never_named_with_the_focus_says_so(nlp):
    from conftest import theme_index
    from test_theme_kinds import WordEmbedder

    from slmgraph.query.theme_facets import facet_opening, facet_themes, focus_of

    units = [u for u in FOCUS_UNITS if u[0] not in ("f0", "f2")] + [
        ("f9", "d9", 0, "ANA RUIZ: Surgeons play golf on sunny weekends at the club."),
        ("f8", "d8", 0, "CLERK: The AI kiosk at the market broke. The AI kiosk was mended by noon.")]
    ix = theme_index(units, embedder=WordEmbedder())
    q = "How do surgeons and nurses use artificial intelligence?"
    facets = question_facets(q, nlp)
    focus, words = focus_of(q, facets, ix)
    themes = facet_themes(ix, facets, WordEmbedder(), focus=focus)
    for t in themes:
        t.focus_words = words
    assert themes[0].off_focus and not themes[1].off_focus
    assert facet_opening(themes[0], ix).endswith("None of its passages also names “AI”; the nearest are quoted.")
    ix.store.con.close()


def test_an_answer_by_theme_about_a_thing_no_passage_names_says_so(store, embedder):
    q = "How do the participants feel about the surgical drones?"
    text, _, _ = _answer(store, embedder, q, [])
    assert text.startswith("No passage of the corpus names “surgical drones”; what follows is the nearest it comes. ")
    q = "How do the participants feel about the delivery robots?"  # the corpus names them: no such line
    text, _, _ = _answer(store, embedder, q, [])
    assert text and "No passage of the corpus names" not in text


def test_a_list_in_parentheses_gives_its_items_an_adjective_with_the_noun_it_follows(nlp):
    q = "How do discussions about scaling a tech company vary by the stage of the company (startup, mid-size, large)?"
    facets = question_facets(q, nlp)
    assert [f.label for f in facets] == ["startup", "mid-size company", "large company"]
    assert all(f.exact for f in facets)
    assert facets[2].question.endswith("by the stage of the company (large company)?")
    assert _labels("How do guests see the ferries at each stage (pilot, rollout, full service)?", nlp) == [
        "pilot", "rollout", "full service"]
    assert _labels("What did the chair (Ann Lee) say?", nlp) == []  # one item: no list


def test_an_item_of_a_parenthesised_list_is_quoted_only_where_a_sentence_names_it(nlp):
    from conftest import theme_index
    from test_theme_kinds import WordEmbedder

    from slmgraph.query.theme_facets import facet_themes, facets_overview, focus_of

    units = [("p0", "d0", 0, "ANA RUIZ: Our startup had to scale the servers every month. Startups scale by hiring."),
             ("p1", "d1", 0, "BEN OKAFOR: Large companies scale slowly, because every change needs a committee."),
             ("p2", "d2", 0, "CY DIX: Scaling the night shift was hard. We scale teams by pairing people."),
             ("p3", "d3", 0, "DI LEE: The weather was warm. The harvest came early that year.")]
    ix = theme_index(units, embedder=WordEmbedder())
    q = "How does scaling vary by the stage of the company (startup, mid-size, large)?"
    facets = question_facets(q, nlp)
    focus, _ = focus_of(q, facets, ix)
    startup, mid, large = facet_themes(ix, facets, WordEmbedder(), focus=focus)
    # kinds of one thing: the opening says how widely each is named, the most first
    assert facets_overview([startup, mid, large], ix).endswith(
        "By how widely the corpus names them: startup (in 1 of 4 documents) and large company (in 1); mid-size "
        "company in none.")
    assert startup.statements and all("tartup" in s.text for s in startup.statements)
    # no sentence names a mid-size company: none said "in other words" stands in for it
    assert not mid.statements
    # "companies" is named by "company"; "scale" is on the focus "scaling"
    assert [s.text for s in large.statements] == [
        "BEN OKAFOR: Large companies scale slowly, because every change needs a committee."]
    ix.store.con.close()


def test_a_comma_list_the_parse_folds_into_one_noun_is_split(nlp):
    q = "How do guests from farming, music and software engineering differ in what they want for the town?"
    assert _labels(q, nlp) == ["farming", "music", "software engineering"]
    assert _labels("Did the housing, transport or parks departments cut their budgets?", nlp) == [
        "housing", "transport", "parks"]


def test_a_quoted_sentence_names_its_speaker_unless_it_opens_on_the_label():
    from conftest import theme_index

    from slmgraph.query.theme_model import Statement
    from slmgraph.query.theme_render import statement_line

    ix = theme_index([("u0", "d0", 0, "JO BAKER: Welcome. I think the plan is a disaster.")])
    host = Statement("I think the plan is a disaster.", 1, "d0", 1, 1, speaker="Jo Baker")
    assert statement_line(host, ix) == "- *d0*: Jo Baker: I think the plan is a disaster. [Sources: 1]"
    labelled = Statement("JO BAKER: Welcome.", 1, "d0", 1, 1, speaker="Jo Baker")
    assert statement_line(labelled, ix) == "- *d0*: JO BAKER: Welcome. [Sources: 1]"
    plain = Statement("The plan is a disaster.", 1, "d0", 1, 1)
    assert statement_line(plain, ix) == "- *d0*: The plan is a disaster. [Sources: 1]"
    ix.store.con.close()


def test_a_facet_with_few_sentences_on_its_focus_quotes_those_within_twice_the_margin():
    from conftest import theme_index
    from test_theme_kinds import WordEmbedder

    from slmgraph.query.theme_facets import Facet, facet_themes
    from slmgraph.query.theme_model import word_stem

    units = [("f0", "d0", 0, "ANA RUIZ: Surgeons use AI to read heart scans before an operation."),
             ("f1", "d0", 1, "ANA RUIZ: Surgeons say AI also counts every sponge and clamp in the theatre, so nothing "
                             "stays inside a patient."),
             ("f2", "d0", 2, "ANA RUIZ: Back in my first winter at the old hospital, surgeons laughed whenever "
                             "anybody mentioned AI at lunch."),
             ("f3", "d1", 0, "BEN OKAFOR: Nurses use AI to plan the night shifts on the ward.")] + [
        (f"g{i}", f"e{i}", 0, f"CLERK: The market sold {i + 3} crates of pears and apples on a windy morning.")
        for i in range(8)]
    ix = theme_index(units, embedder=WordEmbedder())
    facets = [Facet(w, ((w, word_stem(w)),), f"How do {w} use AI?") for w in ("surgeons", "nurses")]
    surgeons, nurses = facet_themes(ix, facets, WordEmbedder(), focus=[frozenset({"ai"})])
    # every sentence names the surgeons and AI: the one furthest from the question is still on it
    assert [s.unit for s in surgeons.statements] == [1, 2, 3]
    assert len(nurses.statements) == 1
    ix.store.con.close()


def _facet_theme(topic: str, sentences: list[tuple[str, str]], quoted: bool = True):
    from slmgraph.query.theme_model import Statement, Theme

    pool = [Statement(text, i, "d0", i, 9, rel=1.0 - i / 10, speaker=who) for i, (who, text) in enumerate(sentences)]
    t = Theme(None, topic, {"documents": 1, "of": 1}, ["d0"], [], statements=pool[:1] if quoted else [])
    t.pool = pool
    return t


def test_a_comparison_says_how_many_sentences_name_the_focus_with_each_facet_and_where_most_are():
    from slmgraph.query.theme_facets import _balance

    startup = _facet_theme("startup", [("Sam Altman", f"Startups scale fast {i}.") for i in range(5)])
    large = _facet_theme("large company", [("Andrew Ng", "Large companies scale slowly."),
                                           ("Bill Gates", "A large company scales by buying.")])
    middle = _facet_theme("mid-size company", [], quoted=False)
    assert _balance([startup, middle, large], ["scaling"]) == (
        " Sentences naming “scaling” with each: startup 5 (all by Sam Altman), large company 2 (by 2 speakers), "
        "mid-size company none; most are of startup.")
    large.pool = large.pool * 2  # four: no longer under half the first's
    assert _balance([startup, large], ["scaling"]).endswith("; they are spread across them.")
    # a facet quoted off the focus names it nowhere
    large.off_focus = True
    assert _balance([startup, large], ["scaling"]).endswith("large company none; only startup is named with it.")
    assert _balance([startup], ["scaling"]) == ""


def test_what_the_facets_sentences_say_the_focus_does_is_given_in_their_words(nlp):
    from slmgraph.query.theme_facets import _roles_sentence, focus_roles

    surgeons = _facet_theme("surgeons", [
        ("Ana Ruiz", "Surgeons say the AI system reads heart scans faster than any resident."),
        ("Ana Ruiz", "Surgeons want AI to read every scan in the hospital before breakfast."),
        ("Ben Okafor", "AI is, you know, a thing that surgeons talk about at lunch."),
        ("Ben Okafor", "In our hospital an AI model counts every sponge before the surgeons close."),
        ("Ana Ruiz", "Will AI replace surgeons one day?")])
    nurses = _facet_theme("nurses", [("Cara Holt", "On the ward, AI plans the night shifts for the nurses.")])
    focus_roles([surgeons, nurses], [frozenset({"ai"})], nlp)
    # a finite clause whose subject is the focus; no infinitive, no filler, no question
    assert surgeons.roles == [("the AI system reads heart scans faster than any resident", "Ana Ruiz"),
                              ("an AI model counts every sponge before the surgeons close", "Ben Okafor")]
    assert nurses.roles == [("AI plans the night shifts for the nurses", "Cara Holt")]
    assert _roles_sentence([surgeons, nurses]) == (
        " What they say it does, in their words -- surgeons: “the AI system reads heart scans faster than any "
        "resident” (Ana Ruiz) and “an AI model counts every sponge before the surgeons close” (Ben Okafor); "
        "nurses: “AI plans the night shifts for the nurses” (Cara Holt).")
    focus_roles([surgeons], [frozenset({"ai"})], None)  # no parser: nothing is said
    assert _roles_sentence([nurses]) == ""


def test_a_guests_reply_to_the_hosts_question_naming_a_facet_is_on_it_and_one_unit_may_give_several(nlp):
    from conftest import theme_index
    from test_theme_kinds import WordEmbedder

    from slmgraph.query.theme_facets import facet_themes, question_facets

    def episode(host_q: str, guest: str, lines: list[str]) -> str:
        return "\n".join([f"MAYA OKAFOR: Welcome to the show, {guest.title()}.", f"{guest}: Thanks for having me.",
                          f"MAYA OKAFOR: {host_q}"] + [f"{guest}: {x}" for x in lines])

    units = [("u0", "ep0", 0, episode("So what is the role of AI in medicine, from where you stand?", "GRACE HALL",
                                      ["The alert is a second pair of eyes on every patient.",
                                       "The decisions still belong to the nurses who can touch the patient."])),
             ("u1", "ep1", 0, episode("How does AI show up on a farm?", "TOM BRENNAN",
                                      ["AI drones read the barley fields every week.",
                                       "AI sensors read the soil in those fields every day."])),
             ("u2", "ep2", 0, episode("What did you cook last night?", "LUIS BARRA",
                                      ["Beans with smoked chilli and fresh bread.", "My sister brought the wine."])),
             ("u3", "ep3", 0, episode("Where did you grow up?", "ANA RUIZ",
                                      ["In Porto, above my uncle's bakery.", "We moved to Lisbon when I was ten."]))]
    ix = theme_index(units, embedder=WordEmbedder())
    facets = question_facets("How do guests describe the role of AI in medicine and farming?", nlp)
    medicine, farming = facet_themes(ix, facets, WordEmbedder())
    # the nurse never says "medicine": she answers the host's question that does, and the quote shows it
    assert medicine.statements and {s.speaker for s in medicine.statements} == {"Grace Hall"}
    assert all(s.text.endswith("(replying to “So what is the role of AI in medicine, from where you stand?”)")
               for s in medicine.statements)
    # both of the farmer's sentences are in one text unit: a facet with no other unit quotes it twice
    assert {s.speaker for s in farming.statements} == {"Tom Brennan"} and len(farming.statements) == 2
    ix.store.con.close()


def test_a_focus_the_facets_hardly_name_is_also_quoted_of_their_shared_head(nlp):
    from conftest import theme_index
    from test_theme_kinds import WordEmbedder

    from slmgraph.query.theme_facets import facet_themes, focus_at_large, focus_of, render_facets

    units = [("p0", "d0", 0, "ANA RUIZ: Our startup was scaling the servers every month in the first year."),
             ("p1", "d1", 0, "BEN OKAFOR: Large companies move slowly, because every change needs a committee."),
             ("p2", "d2", 0, "CY DIX: Nobody teaches you how to scale a company once the first hundred people join."),
             ("p3", "d3", 0, "DI LEE: The weather was warm and the harvest came early that year."),
             ("p4", "d4", 0, "EVE MARSH: A tech company hires fast and the office fills with desks every week.")]
    units += [(f"w{i}", f"e{i}", 0, f"FAY OSEI: The river rose {i + 2} feet after the storm on day {i}.")
              for i in range(5)]
    ix = theme_index(units, embedder=WordEmbedder())
    q = "How do discussions about scaling a tech company vary by the stage of the company (startup, mid-size, large)?"
    facets = question_facets(q, nlp)
    # "tech" qualifies the company the list sorts: the question asks about scaling it
    focus, words = focus_of(q, facets, ix)
    assert words == ["scaling"]
    found = facet_themes(ix, facets, WordEmbedder(), focus=focus)
    for t in found:
        t.focus_words = words
    extra = focus_at_large(ix, found, facets, focus, words, WordEmbedder())
    assert extra is not None and extra.topic == "scaling of a company, whatever its kind"
    # a sentence on scaling a company that no facet quotes; none that names no company, none quoted already
    assert [s.text for s in extra.statements] == [
        "CY DIX: Nobody teaches you how to scale a company once the first hundred people join."]
    text = render_facets(found + [extra], ix)
    assert text.startswith("The question names three,") and (
        "Beyond them, 1 more sentence on scaling of a company is quoted, by Cy Dix." in text.split("\n\n")[0])
    assert "### 4. scaling of a company, whatever its kind" in text
    # beside it, the large company's passages off scaling are no longer quoted: its line says why
    assert "### 3. large company\nNo passage on large company also names “scaling”; large company is named in 1 of " \
           "10 documents." in text, text
    # facets that mostly quote the focus need no such section
    assert focus_at_large(ix, [t for t in found if t.statements][:1], facets, focus, words, WordEmbedder()) is None
    ix.store.con.close()


def test_a_gerund_listed_with_nouns_is_a_facet(nlp):
    assert _labels("How do guests from baking, surgery and carpentry differ in how they approach their work?",
                   nlp) == ["baking", "surgery", "carpentry"]
    # a verb that lists nothing is no facet
    assert _labels("How are the guests baking bread and cakes differently?", nlp) != ["baking", "bread"]



def test_an_answer_by_theme_names_a_word_of_its_subject_no_passage_holds(store, embedder):
    q = "What did the hospital decide about the robots in its submarines?"
    text, _, _ = _answer(store, embedder, q, [])
    assert text.startswith("No passage of the corpus names “submarines”; what follows is the nearest it comes. "), text
