"""What is not a person or an organisation, whatever NER says: a phrase of common nouns ("Town Hall",
"Harbour Row"), a vessel after its noun ("the schooner Mary Ellen"), a time of the calendar ("Christmas",
"Easter"), a heading's topic word ("## Membership"), and no name runs across a title line's dash."""

import pytest

from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.ner import find_candidates, pipeline_for
from slmgraph.names.kinds import calendar_name, head_kind

TYPES = Settings().entity_types


@pytest.fixture(scope="module")
def nlp():
    pipe, warning = pipeline_for("auto")
    assert pipe is not None, warning
    return pipe


def names(text, nlp):
    return {c.name: c.type for c in find_candidates(text, TYPES, 60, nlp).candidates}


def test_a_phrase_of_common_nouns_is_a_place_never_a_person(nlp):
    assert head_kind("Gullhaven Town Hall") == head_kind("Harbour Row") == "location"
    assert head_kind("Stuart Hall") is None  # a surname that is also a building noun says nothing alone
    got = names("The society was founded at a public meeting in the Gullhaven Town Hall. The last keeper, "
                "Walter Brennan, retired to a cottage on Harbour Row. Gullhaven Town Hall was full.", nlp)
    assert got["Gullhaven Town Hall"] == "location" and got["Harbour Row"] == "location"
    assert got["Walter Brennan"] == "person"


def test_a_vessel_after_its_noun_is_no_person(nlp):
    got = names("The keeper Alfred Moss recorded that the schooner Mary Ellen ran onto the rocks in fog. "
                "Moss and his son rowed out to the schooner Mary Ellen and saved five of her crew.", nlp)
    assert got["Mary Ellen"] == "concept"
    assert got["Alfred Moss"] == "person"


def test_holidays_seasons_and_headings_are_no_organisations(nlp):
    assert calendar_name("Christmas") and calendar_name("Easter to October 2023") and calendar_name("Autumn")
    assert not calendar_name("Christmas Island") and not calendar_name("June") and not calendar_name("Easter Rising")
    text = ("# Kestrel Point Lighthouse Preservation Society \u2014 Autumn Newsletter\n\n"
            "Welcome to the autumn newsletter of the society.\n\n## Membership\n\n"
            "Membership has grown to 164, almost double the figure in March. Tomas Lindqvist reports that our "
            "bank balance was 4,870 pounds.\n\nChristmas raised more than any other month for the Coastal "
            "Heritage Trust, and the Christmas market stall raised 620 pounds.\n")
    got = names(text, nlp)
    assert "Membership" not in got and "Christmas" not in got
    assert not any("\u2014" in n for n in got)  # the title line is cut at its dash
    assert got.get("Kestrel Point Lighthouse Preservation Society") == "organization"
    assert got.get("Tomas Lindqvist") == "person"
    # a name heading its section stays a name
    assert names("## Barclays\n\nBarclays gave 500 pounds to the society last year.\n", nlp) == {
        "Barclays": "organization"}
