"""A sentence opening on "he"/"she" is about the person named last before it: it is evidence about that
person only, and it is quoted with the sentence naming them (slmgraph.names.forms.pronoun_quote), in local
search's quoted sentences and in the descriptions made at index time."""

import pytest
from conftest import FakeEmbedder

from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.extract_methods import extract_nlp
from slmgraph.indexing.stages.ner import pipeline_for
from slmgraph.names.forms import pronoun_quote
from slmgraph.query.extractive import sentence_points

BOOK = ("Priya Nair's book was published in August 2023, with a chapter on Margaret Moss of the point. "
        "She gave a talk at the open day and signed copies in the museum.")
CHAIR = ("Members gave Margaret Okafor a framed print of the lighthouse. "
         "She remains a member of the committee and will lead the school visits.")
PERSONS = {"Priya Nair": "Priya Nair", "Margaret Moss": "Margaret Moss", "Margaret Okafor": "Margaret Okafor",
           "Okafor": "Margaret Okafor"}


@pytest.fixture(scope="module")
def nlp():
    pipe, warning = pipeline_for("auto")
    assert pipe is not None, warning
    return pipe


def test_a_pronoun_is_the_person_named_last_before_it():
    sents = ["Walter Brennan spoke at our meeting.", "He served at the point for years.",
             "He has lent us his logbooks."]
    persons = {"Walter Brennan": "Walter Brennan"}
    assert pronoun_quote(sents, 0, persons) == (None, sents[0])  # no pronoun: the sentence alone
    assert pronoun_quote(sents, 1, persons) == ("Walter Brennan", " ".join(sents[:2]))
    assert pronoun_quote(sents, 2, persons) == ("Walter Brennan", " ".join(sents))  # a chain of pronouns
    # the person is named too far back to quote with it: dropped
    far = ["Walter Brennan spoke.", "The storm of 1979 broke the glass.", "The lamp went out.", "He lit it."]
    assert pronoun_quote(far, 3, persons) == ("Walter Brennan", None)
    # the last person named wins, not the first of the sentence
    book = [BOOK.split(". ")[0] + ".", BOOK.split(". ")[1]]
    assert pronoun_quote(book, 1, PERSONS)[0] == "Margaret Moss"
    assert pronoun_quote(["No one was named.", "She left."], 1, PERSONS) == (None, "She left.")


def test_local_evidence_about_one_person_leaves_out_a_pronoun_meaning_another():
    emb = FakeEmbedder()
    question = "What did Margaret Okafor do at the open day and the museum talk?"
    qv = emb.encode([question])[0]
    passages = [(1, BOOK), (2, CHAIR)]
    names = ["Margaret Okafor", "Okafor"]
    got = [p.text for p in sentence_points(passages, qv, emb, names=names, persons=PERSONS)]
    assert not any(t.startswith("She gave a talk") or "She gave a talk" in t for t in got)
    # her own pronoun sentence is quoted with the sentence naming her, and that sentence is not quoted again
    assert CHAIR in got
    assert "Members gave Margaret Okafor a framed print of the lighthouse." not in got
    # without the persons, sentences are taken alone (the old behaviour, for callers that pass none)
    alone = [p.text for p in sentence_points(passages, qv, emb, names=names)]
    assert "She gave a talk at the open day and signed copies in the museum." in alone
    # asked about the person the pronoun stands for, the sentence is quoted with its antecedent
    moss = [p.text for p in sentence_points([(1, BOOK)], emb.encode(["Margaret Moss talk"])[0], emb,
                                            names=["Margaret Moss", "Moss"], persons=PERSONS)]
    assert BOOK in moss


def test_a_description_opening_on_a_pronoun_says_who(nlp):
    text = ("At the meeting on 9 October, Margaret Okafor stood down as chair after four years. "
            "She will lead the Gullhaven Schools Project, which plans visits by local classes.")
    ex = extract_nlp(text, Settings(extractor="nlp"), nlp)
    desc = {e["name"]: e["description"] for e in ex.entities}
    assert desc["Gullhaven Schools Project"].startswith("At the meeting on 9 October, Margaret Okafor stood down")
    assert "She will lead the Gullhaven Schools Project" in desc["Gullhaven Schools Project"]


def test_a_pronoun_description_too_long_to_quote_whole_is_taken_alone_as_a_last_resort(nlp):
    long_first = ("This is my first spring newsletter as chair, and I want to begin by thanking Margaret Okafor, who "
                  "led the society from its founding meeting in January 2018 to the day the lens turned again.")
    text = f"{long_first} She has already brought two classes from Gullhaven Primary School to the point."
    ex = extract_nlp(text, Settings(extractor="nlp"), nlp)
    desc = {e["name"]: e["description"] for e in ex.entities}
    assert desc["Gullhaven Primary School"] == ("She has already brought two classes from Gullhaven Primary School "
                                                "to the point.")
