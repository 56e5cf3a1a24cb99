"""Local search asked what a transcript's speaker thinks answers in that speaker's words: their own sentences
nearest the question, never another speaker's sentence on the same subject."""

import re

import pytest
from conftest import FakeEmbedder, FakeModel, small_index

from slmgraph.config.prompting import Prompts
from slmgraph.model.client import ModelClient
from slmgraph.query.engines.local_search import local_search

EP1 = ("Harbour Lines, Episode 1\n\n"
       "MAYA ROSS: Welcome back. My guest today is Lena Ortiz, a marine biologist at the station.\n\n"
       "LENA ORTIZ: Young researchers cannot afford to live near the harbour any more. "
       "If the housing act changes that for young families, good.\n\n"
       "MAYA ROSS: And the seals this winter?\n\n"
       "LENA ORTIZ: The seal colony on the north beach has doubled in five years.\n")
EP2 = ("Harbour Lines, Episode 2\n\n"
       "MAYA ROSS: My guest today is Samira Khan, founder of the drone company SkyParcel.\n\n"
       "SAMIRA KHAN: Our drones carry medical deliveries to the island clinic twice a day.\n\n"
       "MAYA ROSS: Let's move on to the housing act.\n\n"
       "SAMIRA KHAN: I'm against the housing act as written, because it shelves new building on the edge of town. "
       "I'd rather see the council build homes directly than cap the rents of the old ones.\n\n"
       "MAYA ROSS: So are you for or against the Coastal Housing Act overall?\n\n"
       "SAMIRA KHAN: Against it as written.\n")
EP3 = ("Harbour Lines, Episode 3\n\n"
       "MAYA ROSS: My guest today is Owen Price, who plays the fiddle at the Anchor every Friday night.\n\n"
       "OWEN PRICE: Songs are how a town remembers itself, and the Anchor has heard every one of ours.\n\n"
       "MAYA ROSS: What keeps you playing?\n\n"
       "OWEN PRICE: The crowd on a wet Friday in February, singing the old harbour songs back at me.\n")


@pytest.fixture
def harbour(tmp_path):
    store, s = small_index(tmp_path, "harbour", (("ep1.txt", EP1), ("ep2.txt", EP2), ("ep3.txt", EP3)))
    yield store, s
    store.close()


def test_a_speakers_view_is_quoted_in_their_words_and_no_one_elses(harbour):
    store, s = harbour
    ans = local_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s,
                       "What does Samira Khan think about the housing act?", FakeEmbedder())
    body = ans.text.split("\n\nSources:", 1)[0]
    assert "Samira Khan: I'm against the housing act as written" in body, ans.text
    # Lena Ortiz's sentence on the same act is hers, not an answer about Samira Khan
    assert "If the housing act changes that" not in body, ans.text
    quoted = [m.group(1) for m in re.finditer(r"^(?:- )?([A-Z][a-z]+ [A-Z][a-z]+): ", body, re.M)]
    assert quoted and set(quoted) == {"Samira Khan"}, ans.text
    cited = ans.citations["sources"]
    assert all(c in cited for c in map(int, re.findall(r"\[Sources: (\d+)\]", body)))


def test_a_stance_said_in_reply_is_the_speakers_and_a_view_never_given_is_said_so(harbour):
    from test_theme_kinds import WordEmbedder

    from slmgraph.query.engines.local_search import _speaker_points

    store, _ = harbour
    norm = dict(store.con.execute("SELECT name, norm FROM entities").fetchall())
    words = WordEmbedder()  # texts sharing words are near: the reply's context shares the question's
    q = "What does Samira Khan think about the Coastal Housing Act?"
    points, note = _speaker_points(store, [norm["Samira Khan"]], q, words.encode([q])[0], words)
    # four words, but her stance, said in reply to a question naming the act
    assert "Samira Khan: Against it as written." in [p.text for p in points] and note == ""
    assert all(p.text.startswith("Samira Khan: ") for p in points)
    q = "What does Owen Price think about the Coastal Housing Act?"
    act = [n for n in norm if n.casefold() == "coastal housing act"]
    points, note = _speaker_points(store, [norm["Owen Price"]] + [norm[n] for n in act], q, words.encode([q])[0],
                                   words)
    assert points and all(p.text.startswith("Owen Price: ") for p in points)
    if act:  # the act is an entity of the index: his answer says he never names it
        assert note.startswith("Owen Price never names “Coastal Housing Act” in their own turns"), note


def test_a_speaker_typed_a_place_or_named_by_first_name_is_still_answered_in_their_words(harbour):
    store, s = harbour
    # the NER may type a speaker's name a place ("Helen Marsh"): a name that labels turns is a person
    store.con.execute("UPDATE entities SET type = 'location' WHERE name = 'Samira Khan'")
    for q in ("What does Samira Khan think about the housing act?", "What does Samira think about the housing act?"):
        ans = local_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, q, FakeEmbedder())
        body = ans.text.split("\n\nSources:", 1)[0]
        quoted = [m.group(1) for m in re.finditer(r"^(?:- )?([A-Z][a-z]+ [A-Z][a-z]+): ", body, re.M)]
        assert quoted and set(quoted) == {"Samira Khan"}, (q, ans.text)


def test_a_first_name_two_speakers_share_names_neither(tmp_path):
    from slmgraph.query.engines.local_search import _speaker_by_first_name

    store, _ = small_index(tmp_path, "two", (("ep1.txt", EP2), ("ep2.txt", EP2.replace("SAMIRA KHAN", "SAMIRA OBI")
                                                                         .replace("Samira Khan", "Samira Obi"))))
    try:
        assert _speaker_by_first_name(store, "What does Samira think about the housing act?") == []
        assert _speaker_by_first_name(store, "What does Maya think?") == ["maya ross"]
        assert _speaker_by_first_name(store, "What does Nadia think?") == []  # no speaker's name begins with it
    finally:
        store.close()


def test_a_view_reported_of_someone_else_is_quoted_after_the_speakers_own(tmp_path):
    from test_theme_kinds import WordEmbedder

    from slmgraph.query.engines.local_search import _speaker_points

    ep = EP2.replace("SAMIRA KHAN: Against it as written.",
                     "SAMIRA KHAN: My brother is in favour of the Coastal Housing Act overall, as it happens.")
    store, _ = small_index(tmp_path, "rep", (("ep2.txt", ep),))
    try:
        norm = dict(store.con.execute("SELECT name, norm FROM entities").fetchall())
        words = WordEmbedder()
        q = "What does Samira Khan think about the Coastal Housing Act overall?"
        points, _ = _speaker_points(store, [norm["Samira Khan"]], q, words.encode([q])[0], words)
        texts = [p.text for p in points]
        assert texts and texts[0].startswith("Samira Khan: I'm against the housing act"), texts
    finally:
        store.close()


def test_a_first_name_the_index_holds_as_a_name_of_its_own_still_finds_the_speaker(harbour):
    store, s = harbour
    # the index also holds a lone "Samira" (the NER found her so somewhere): the speaker is still the one meant
    store.con.execute("INSERT INTO entities (entity_id, norm, name, type, description, degree) "
                      "VALUES (9999, 'samira', 'Samira', 'person', '', 0)")
    ans = local_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s,
                       "What does Samira think about the housing act?", FakeEmbedder())
    body = ans.text.split("\n\nSources:", 1)[0]
    quoted = [m.group(1) for m in re.finditer(r"^(?:- )?([A-Z][a-z]+ [A-Z][a-z]+): ", body, re.M)]
    assert quoted and set(quoted) == {"Samira Khan"}, ans.text


def test_a_speaker_asked_about_it_who_answers_on_something_else_is_said_so(tmp_path):
    from test_theme_kinds import WordEmbedder

    from slmgraph.query.engines.local_search import _speaker_points

    ep = ("Harbour Lines, Episode 4\n\nMAYA ROSS: My guest today is Nia Cole, who builds boats on the slipway.\n\n"
          "NIA COLE: I build wooden boats the way my grandfather taught me on this slipway.\n\nMAYA ROSS: And the "
          "Coastal Housing Act?\n\nNIA COLE: Honestly, the sea air in the morning is what keeps me going every day.\n")
    store, _ = small_index(tmp_path, "nia", (("ep2.txt", EP2), ("ep4.txt", ep)))
    try:
        norm = dict(store.con.execute("SELECT name, norm FROM entities").fetchall())
        act = [n for n in norm if n.casefold() == "coastal housing act"]
        if not act:
            pytest.skip("the act is no entity of this index")
        words = WordEmbedder()
        q = "What does Nia Cole think about the Coastal Housing Act?"
        points, note = _speaker_points(store, [norm["Nia Cole"], norm[act[0]]], q, words.encode([q])[0], words)
        assert points and all(p.text.startswith("Nia Cole: ") for p in points)
        assert note.startswith("Nia Cole never names “Coastal Housing Act” in their own words, nor states a view"), note
        # Samira Khan answers it in so many words: no note
        q = "What does Samira Khan think about the Coastal Housing Act?"
        _, note = _speaker_points(store, [norm["Samira Khan"], norm[act[0]]], q, words.encode([q])[0], words)
        assert note == ""
    finally:
        store.close()
