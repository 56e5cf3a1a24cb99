"""A question listing the fields its guests come from ("How do guests from robotics, neuroscience and music
differ ...?") is answered by the guests of each field, found by how near each work is to the field, and quotes
those guests only; a field no work stands out for is answered by its word."""

from __future__ import annotations

from conftest import theme_index
from test_theme_kinds import WordEmbedder as _Words
from slmgraph.query.theme_facets import Facet, facet_themes, facets_overview, render_facets
from slmgraph.query.theme_fields import asks_fields, field_guests
from slmgraph.query.theme_model import word_stem
from slmgraph.query.theme_works import Work
from slmgraph.query.themes import field_subjects


class WordEmbedder(_Words):
    """The kinds tests' bag of hashed words, wide enough that six guests' words rarely share a slot."""

    name, dim = "fields-fake", 256


#: Each work: (guest's label, what the host says of them, the guest's two turns).
WORKS = [
    ("ROSA LEE", "My guest Rosa Lee leads a robotics lab.",
     "I build robotics arms that weld car doors, and every gripper is tested on real parts.",
     "The hardest part of building new machines is teaching them to recover when they drop something."),
    ("BEN ODE", "My guest Ben Ode studies neuroscience.",
     "In neuroscience we record from thousands of neurons while the animal learns a task.",
     "The hardest part of building new tools is that the brain changes while you measure it."),
    ("CAL DIX", "My guest Cal Dix writes music for films.",
     "I write music on an old piano first and only then move the tune to the computer.",
     "The hardest part of building new songs is knowing when a chorus is finished."),
    ("DORA FOX", "My guest Dora Fox keeps bees on the hills.",
     "Bees need clover and heather, and a wet spring ruins the honey harvest.",
     "The hives are checked every week from April until the heather fades."),
    ("ELI GRAY", "My guest Eli Gray bakes bread in the old mill.",
     "Sourdough needs a starter fed every morning and an oven hot enough to crack the crust.",
     "The mill grinds its own flour from wheat grown three fields away."),
    ("FAY HOLT", "My guest Fay Holt sails cargo boats along the coast.",
     "A cargo boat under sail carries wine and coffee without burning any diesel.",
     "The crossing takes four days when the wind holds and a week when it does not."),
]
QUESTION = "How do guests from robotics, neuroscience and music differ in how they approach building new things?"


def _facet(label: str) -> Facet:
    words = tuple((w, word_stem(w)) for w in label.split())
    return Facet(label, words, QUESTION.replace("robotics, neuroscience and music", label))


def _index():
    units = []
    for i, (label, intro, a, b) in enumerate(WORKS):
        units.append((f"w{i}a", f"ep{i}", 0, f"ANNA PARK: Welcome back. {intro}\n{label}: {a}"))
        units.append((f"w{i}b", f"ep{i}", 1, f"ANNA PARK: Tell us about building new things.\n{label}: {b}"))
    return theme_index(units, embedder=WordEmbedder())


def test_a_list_after_guests_from_is_a_list_of_their_fields():
    assert asks_fields(QUESTION, "robotics")
    assert asks_fields("What do speakers working in farming and fishing say about the harbour?", "farming")
    assert not asks_fields("How do robotics, neuroscience and music differ?", "robotics")
    assert not asks_fields("How do guests describe the role of AI in science and medicine?", "science")


def test_each_field_finds_its_guest_and_a_field_no_work_stands_out_for_finds_none():
    ix = _index()
    facets = [_facet("robotics"), _facet("neuroscience"), _facet("music"), _facet("business")]
    found = field_guests(ix, facets, WordEmbedder())
    assert found[0] == (["ep0"], ["Rosa Lee"])
    assert found[1] == (["ep1"], ["Ben Ode"])
    assert found[2] == (["ep2"], ["Cal Dix"])
    assert 3 not in found  # no work names business: its word answers it


def test_a_fields_guest_is_quoted_and_the_host_never_is():
    ix = _index()
    emb = WordEmbedder()
    facets = [_facet("robotics"), _facet("neuroscience"), _facet("music")]
    themes = facet_themes(ix, facets, emb, guests=field_guests(ix, facets, emb))
    assert [t.voices for t in themes] == [["Rosa Lee"], ["Ben Ode"], ["Cal Dix"]]
    robotics = [s.text for s in themes[0].statements]
    # the guest's sentence on building, which never names robotics, is hers to quote
    assert any("teaching them to recover" in s for s in robotics)
    assert all(s.speaker == t.voices[0] for t in themes for s in t.statements)
    assert not any("ANNA PARK" in s or "Tell us" in s for t in themes for s in (x.text for x in t.statements))
    assert themes[0].doc_ids == ["ep0"]
    opening = facets_overview(themes, ix)
    assert opening.startswith("The question names three fields of its guests, answered in its order: robotics (Rosa Lee, ")
    text = render_facets(themes, ix)
    assert "### 3. music" in text and "Cal Dix" in text


def test_among_few_works_a_field_needs_less_to_stand_out():
    import numpy as np

    from slmgraph.query.theme_fields import MIN_Z, least_z

    assert least_z(24) == MIN_Z and least_z(10) == MIN_Z
    # one work of six apart from the rest stands sqrt(5) = 2.24 deviations above the mean, at most
    assert abs(least_z(6) - 0.7 * 5 ** 0.5) < 1e-9
    # six works where the marine biologist's stands clearly first but the rest are spread: found among six
    score = np.array([0.417, 0.089, 0.211, 0.183, 0.228, 0.241])
    z = (score.max() - score.mean()) / score.std()
    assert least_z(6) < z < MIN_Z


def test_a_list_of_professions_in_parentheses_asks_for_the_guests_and_a_work_of_two_guests_serves_two():
    assert asks_fields("How does opinion on the act vary by profession (doctor, carpenter, fisherman)?", "doctor")
    assert not asks_fields("How does scaling vary by stage (startup, mid-size, large)?", "startup")
    # a work with two guests: the robotics guest and the music guest share one episode
    units = []
    for i, (label, intro, a, b) in enumerate(WORKS):
        units.append((f"w{i}a", f"ep{i}", 0, f"ANNA PARK: Welcome back. {intro}\n{label}: {a}"))
        units.append((f"w{i}b", f"ep{i}", 1, f"ANNA PARK: Tell us about building new things.\n{label}: {b}"))
    cal = WORKS[2]
    units[0] = ("w0a", "ep0", 0, f"ANNA PARK: Welcome back. {WORKS[0][1]} {cal[1]}\n{WORKS[0][0]}: {WORKS[0][2]}\n"
                                 f"{cal[0]}: {cal[2]}")
    units[1] = ("w0b", "ep0", 1, f"{units[1][3]}\n{cal[0]}: {cal[3]}")
    units = [u for u in units if u[1] != "ep2"]
    ix = theme_index(units, embedder=WordEmbedder())
    found = field_guests(ix, [_facet("robotics"), _facet("music")], WordEmbedder())
    assert found[0] == (["ep0"], ["Rosa Lee"]) and found[1] == (["ep0"], ["Cal Dix"]), found
    ix.store.con.close()


def test_fields_are_compared_by_the_subjects_only_their_guests_discuss():
    ix = _index()
    emb = WordEmbedder()
    facets = [_facet("robotics"), _facet("neuroscience"), _facet("music")]
    themes = facet_themes(ix, facets, emb, guests=field_guests(ix, facets, emb))
    title = {d.doc_id: d.work or d.name or d.doc_id for d in ix.docs}
    works = [Work(title["ep0"], 1, 2, subjects=[("robotics", 2), ("grippers", 2), ("car doors", 2), ("welding", 2),
                                                ("spare parts", 2)]),
             Work(title["ep1"], 1, 2, subjects=[("neurons", 2), ("animal tasks", 2)])]
    field_subjects(themes, ix, works)
    # the field's own word says nothing of how it differs; at most three subjects; a field whose work lists none, none
    assert themes[0].subjects == ["grippers", "car doors", "welding"]
    assert themes[1].subjects == ["neurons", "animal tasks"] and themes[2].subjects == []
    assert ("Where they differ, by the subjects each field's guests discuss and the other guests hardly do: "
            "robotics (Rosa Lee) on grippers, car doors and welding; and neuroscience (Ben Ode) on neurons and "
            "animal tasks.") in facets_overview(themes, ix)
    # one field with subjects compares nothing
    field_subjects(themes, ix, works[:1])
    assert "Where they differ" not in facets_overview(themes, ix)


def test_a_field_no_guest_stands_out_for_says_its_passages_are_quoted_whoever_speaks():
    from slmgraph.query.theme_facets import facet_opening

    ix = _index()
    emb = WordEmbedder()
    facets = [_facet("robotics"), _facet("building")]
    guests = field_guests(ix, facets, emb)
    assert 1 not in guests  # every guest speaks of building: none stands out for it
    themes = facet_themes(ix, facets, emb, guests=guests)
    themes[1].no_guest = True
    assert themes[1].statements
    assert ("No guest's conversation stands out as building's, so the passages naming it are quoted, whoever "
            "speaks.") in facet_opening(themes[1], ix)
    assert "stands out" not in facet_opening(themes[0], ix)
    # the robotics guest is robotics': the field answered by its word quotes the others only
    assert guests[-2] == (["ep0"], [])
    assert themes[1].statements and all(s.doc_id != "ep0" for s in themes[1].statements)


def test_what_each_fields_guests_say_they_do_is_given_in_their_words():
    import pytest

    from slmgraph.query.theme_facets import fields_doing, parse_pipeline, pipeline_name

    nlp = parse_pipeline(pipeline_name("auto"))
    if nlp is None:
        pytest.skip("no spaCy pipeline with a parser is installed")
    ix = _index()
    emb = WordEmbedder()
    facets = [_facet("robotics"), _facet("neuroscience"), _facet("music")]
    themes = facet_themes(ix, facets, emb, guests=field_guests(ix, facets, emb))
    fields_doing(themes, nlp)
    assert themes[0].doing == [("I build robotics arms that weld car doors, and every gripper is tested on real parts",
                                "Rosa Lee")]
    assert themes[1].doing == [("we record from thousands of neurons while the animal learns a task", "Ben Ode")]
    opening = facets_overview(themes, ix)
    assert ("What they say they do, in their words -- robotics: “I build robotics arms that weld car doors, and every "
            "gripper is tested on real parts” (Rosa Lee); neuroscience: “we record") in opening, opening
    # "The hardest part ... is" says what is hard, not what they do
    assert not any("hardest" in c for t in themes for c, _ in getattr(t, "doing", []))


def test_a_fields_guest_is_introduced_as_their_conversation_introduces_them():
    works = [list(w) for w in WORKS]
    works[0][1] = "I first met Rosa when I was a student. My guest Rosa Lee is a roboticist who runs a lab."
    units = []
    for i, (label, intro, a, b) in enumerate(works):
        units.append((f"w{i}a", f"ep{i}", 0, f"ANNA PARK: Welcome back. {intro}\n{label}: {a}"))
        units.append((f"w{i}b", f"ep{i}", 1, f"ANNA PARK: Tell us about building new things.\n{label}: {b}"))
    ix = theme_index(units, embedder=WordEmbedder())
    emb = WordEmbedder()
    facets = [_facet("robotics"), _facet("neuroscience"), _facet("music")]
    from slmgraph.query.theme_facets import facet_opening

    openings = [facet_opening(t, ix) for t in facet_themes(ix, facets, emb, guests=field_guests(ix, facets, emb))]
    assert openings[0].endswith("Introduced there as: “My guest Rosa Lee is a roboticist who runs a lab.”"), openings
    # "I was a student" introduces the host; a work saying no "is a ..." of its guest introduces no one
    assert not any("Introduced" in x for x in openings[1:])

