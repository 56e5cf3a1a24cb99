"""Types and edges of names in a trust's papers: a role said of a person outvotes a place's head noun, a
preposition governs every name of its list, a trailing locative phrase is no part of a name, and headings,
region adjectives and offices give no entity."""

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.indexing.stages.ner import find_candidates, pipeline_for
from slmgraph.names import kinds, spans
from slmgraph.store.db import Store

TYPES = Settings().entity_types

MINUTES = """# Board minutes, 3 May 2021

Present: Marta Fenwick (Chair), Oswin Marsh (Artistic Director), Ilse Brook (Players' Representative).

The Harland Sinfonia board met at the Brenton Hall in Ashby. Oswin Marsh proposed a season of new music by
Western composers. Two principal players left for orchestras in Bristol and Dundee.
"""

RELEASE = """# Gala press release, June 2022

Artistic Director Oswin Marsh said the Harland Sinfonia would open its new home, the Harland Hall on Quay Street,
in September. Oswin Marsh agreed to conduct the first concert. The Harland Hall seats 900.
"""

SPEECH = """# Speech at the opening of the Harland Hall, 2 September 2022

Friends, tonight I thank Oswin Marsh, who led us for ten years, and Marta Fenwick, our Chair.

Marta Fenwick, Chair
"""


@pytest.fixture(scope="module")
def nlp():
    pipe, warning = pipeline_for("auto")
    assert pipe is not None, warning
    return pipe


def _names(text, nlp):
    return {c.name: c.type for c in find_candidates(text, TYPES, 60, nlp).candidates}


def test_a_role_said_of_a_name_makes_a_person_whatever_its_last_word(nlp):
    names = _names(MINUTES, nlp)
    assert names.get("Oswin Marsh") == "person", names  # "marsh" heads place names, the role says a person
    assert names.get("Marta Fenwick") == "person", names
    assert names.get("Ilse Brook") == "person", names  # "(Players' Representative)"; "brook" heads places
    assert _names(RELEASE, nlp).get("Oswin Marsh") == "person"  # "Artistic Director Oswin Marsh said"
    assert _names(SPEECH, nlp).get("Oswin Marsh") == "person"  # "Oswin Marsh, who led us"


def test_role_after_a_name():
    assert kinds.role_after("Ann Lee (Chair), Bo Li", 7)
    assert kinds.role_after("Ann Lee (Music Director).", 7)
    assert kinds.role_after("Ann Lee, Chair\n", 7)
    assert kinds.role_after("Ann Lee, the conductor, said", 7)
    assert not kinds.role_after("King Philip of Spain, his wife, Elisabeth", 20)
    assert not kinds.role_after("Ann Lee (1950), Bo Li", 7)
    assert not kinds.role_after("Ann Lee, Bo Li and Cy Ray", 7)


def test_a_preposition_governs_every_name_of_its_list(nlp):
    assert _names(MINUTES, nlp).get("Dundee") == "location"  # "in Bristol and Dundee"
    text = "players left for Bristol and Dundee."
    assert kinds.context_kind(text, text.index("Dundee"), text.index("Dundee") + 6) is None  # no preposition


def test_a_trailing_locative_phrase_is_no_part_of_a_name(nlp):
    names = _names(RELEASE, nlp)
    assert "Harland Hall" in names and names.get("Quay Street") == "location", names
    assert not any(" on " in n for n in names), names
    names = _names(MINUTES, nlp)
    assert "Brenton Hall" in names and names.get("Ashby") == "location", names
    assert not any(" in " in n for n in names), names


@pytest.mark.parametrize("text", ["the Committee on Foreign Affairs met", "Alice in Wonderland is a book",
                                  "a Conference on Trade and Development", "the Hall in the Park"])
def test_names_with_in_or_on_that_stay_whole(text):
    start = text.index(text.split()[1]) if text.startswith(("the", "a ")) else 0
    end = {"the Committee on Foreign Affairs met": 32, "Alice in Wonderland is a book": 19,
           "a Conference on Trade and Development": 37, "the Hall in the Park": 20}[text]
    assert spans.locative_parts(text, start, end, "organization") == [(start, end, "organization")]


def test_headings_region_adjectives_and_offices_give_no_entity(nlp):
    names = _names(MINUTES, nlp) | _names(RELEASE, nlp) | _names(SPEECH, nlp)
    for fragment in ("Speech", "Gala", "Western", "Artistic Director", "Players", "Players' Representative"):
        assert fragment not in names, (fragment, names)


def test_a_name_written_whole_elsewhere_is_not_cut_in_a_heading(nlp):
    text = ("# Wool Exchange campaign update, November 2022\n\nThe campaign to build the new concert hall in the "
            "Wool Exchange has raised £1.3 million.\n")
    names = _names(text, nlp)
    assert "Wool Exchange" in names and "Exchange" not in names, names


def test_a_place_spreads_to_an_untyped_name_it_is_joined_with():
    text = "a tour to Leeds and Harwick soon"
    assert kinds.coordinated_pairs(text, [(10, 15, "leeds"), (20, 27, "harwick")]) == [["leeds", "harwick"]]
    assert kinds.coordinated_pairs("Ann, Leeds and Harwick", [(5, 10, "leeds"), (15, 22, "harwick")]) == []
    assert kinds.pair_kind(["location", "unknown"]) == "location"
    assert kinds.pair_kind(["person", "unknown"]) is None


def test_a_firm_named_by_a_profession_is_an_organisation():
    assert kinds.head_kind("Sorensen Bay Architects") == "organization"
    assert kinds.head_kind("Hale and Pike Solicitors") == "organization"


def test_index_types_and_merges_across_documents(tmp_path):
    (tmp_path / "in").mkdir()
    for name, text in (("01_minutes.md", MINUTES), ("02_release.md", RELEASE), ("03_speech.md", SPEECH)):
        (tmp_path / "in" / name).write_text(text, encoding="utf-8")
    db = tmp_path / "t.duckdb"
    run_index(tmp_path / "in", db, Settings(extractor="nlp", resolution_threshold=None, min_community_size=2),
              progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    st = Store(db, read_only=True)
    try:
        ents = dict(st.con.execute("SELECT name, type FROM entities").fetchall())
    finally:
        st.close()
    assert ents.get("Oswin Marsh") == "person" and ents.get("Marta Fenwick") == "person", ents
    assert "Harland Hall" in ents and not any(" on " in n or " in " in n for n in ents), ents
    assert not {"Speech", "Gala", "Western", "Artistic Director", "Players"} & set(ents), ents
