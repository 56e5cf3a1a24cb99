"""Names in the graph a co-operative's papers stand on: offices written as titles, ships and their prefixes,
a label glued to a name, an island's type, and attendance lines that relate no one and are never quoted."""

from collections import Counter

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.indexing.stages.concepts import unit_concepts
from slmgraph.indexing.stages.ner import find_candidates, pipeline_for
from slmgraph.indexing.stages.resolve import resolve_entities, strip_titles
from slmgraph.names.forms import normalize_name
from slmgraph.names import kinds, spans
from slmgraph.query.extractive import quotable, sentence_points
from slmgraph.store.db import Store

TYPES = Settings().entity_types

MINUTES = """Board minutes, 4 March 2021 - Harrowby Water Trust

Present: Elspeth Fairlie (chair), Tomas Brandauer (general manager), Wilhelmina Ostrova (treasurer), Gideon Lyle.
Apologies: Marguerite Dunmore.

1. Vessel. Chair Elspeth Fairlie said the MV Kestrel would be withdrawn in May. Treasurer Wilhelmina Ostrova
reported that the repair of the MV Kestrel would cost more than a new hull.

2. Crossings. Tomas Brandauer said the ferry crossing to Inchmurrin ran late on eleven days. Gideon Lyle asked
for a second crossing to Inchmurrin on Saturdays.
"""

LETTER = """Letter to members, 9 June 2022

Dear members,

Chair Elspeth Fairlie has asked me to thank every household. Chief Executive Rowan Achterberg signed the contract
for the MV Osprey, which will replace the MV Kestrel on the crossing to Inchmurrin. Master Ingrid Solberg will
take command of the MV Osprey in spring.

Update Corwin: Fairhaven Yards confirmed that welder Corwin Maddox will lead the hull team.

Yours sincerely,
Elspeth Fairlie
"""


@pytest.fixture(scope="module")
def nlp():
    pipe, warning = pipeline_for("auto")
    assert pipe is not None, warning
    return pipe


def _names(text, nlp):
    return {c.name: c.type for c in find_candidates(text, TYPES, 60, nlp).candidates}


def test_offices_written_as_titles_are_cut_from_names():
    text = "Chair Priya Nair spoke."
    assert spans.untitled(text, 0, 15, "Chair Priya Nair", "person")[2:] == ("Priya Nair", "person")
    assert spans.untitled("x", 0, 0, "Chief Executive Tom Reyes", "organization")[2:] == ("Tom Reyes", "person")
    assert spans.untitled("x", 0, 0, "Treasurer Fiona Baxter", "unknown")[2] == "Fiona Baxter"
    assert spans.untitled("x", 0, 0, "Ms Elaine Forsyth", "organization")[2:] == ("Elaine Forsyth", "person")
    assert spans.untitled("x", 0, 0, "Chair Nair", "person")[2] == "Chair Nair"  # no full name would remain
    assert spans.untitled("x", 0, 0, "Director General Motors", "unknown")[2] == "Director General Motors"
    assert spans.untitled("x", 0, 0, "Head Start Program", "unknown")[2] == "Head Start Program"
    assert strip_titles("chair priya nair") == ("priya nair", ["chair"])
    assert strip_titles("chief executive tom reyes") == ("tom reyes", ["chief", "executive"])
    assert strip_titles("general manager duncan reid") == ("duncan reid", ["general", "manager"])
    assert strip_titles("member states")[0] == "member states"


def test_titled_and_plain_name_resolve_to_the_plain_name():
    mentions = [("Chair Priya Nair", "person")] * 3 + [("Priya Nair", "person")]
    nm, ty, mc = {}, {}, Counter()
    for surface, t in mentions:
        k = normalize_name(surface)
        nm.setdefault(k, Counter())[surface] += 1
        ty.setdefault(k, Counter())[t] += 1
        mc[k] += 1
    res = resolve_entities(nm, ty, mc, threshold=None)
    assert res.mapping["chair priya nair"] == "priya nair"
    assert res.mapping.get("priya nair", "priya nair") == "priya nair"


def test_ship_prefixes_and_labels():
    assert kinds.head_kind("MV Solas") == "concept" and kinds.head_kind("HMS Ardent") == "concept"
    assert kinds.head_kind("Ms Elaine Forsyth") is None  # a title, not a ship
    assert kinds.head_kind("Storm Babet") == "event" and kinds.head_kind("Orkney Ferries") == "organization"
    assert kinds.not_a_name("MV", "the MV Solas sailed", [(4, 6)]) == "prefix"
    assert spans.vessel_cut(0, 24, "Delivery of the MV Solas", "unknown")[2:] == ("MV Solas", "concept")
    line = "Update Rory: the yard confirmed it."
    assert spans.unlabelled(line, 0, 11, "Update Rory", "unknown")[2] == "Rory"
    assert spans.unlabelled("Then Update Rory said", 5, 16, "Update Rory", "unknown")[2] == "Update Rory"


def test_candidates_of_minutes_and_letter(nlp):
    got = {**_names(MINUTES, nlp), **_names(LETTER, nlp)}
    assert not any(n.split()[0] in ("Chair", "Treasurer", "Chief", "Master", "Update") for n in got), got
    assert "MV" not in got and "Kestrel" not in got and "Osprey" not in got
    assert got.get("MV Kestrel") == "concept" and got.get("MV Osprey") == "concept"
    for person in ("Elspeth Fairlie", "Wilhelmina Ostrova", "Rowan Achterberg", "Ingrid Solberg"):
        assert got.get(person) == "person", (person, got)
    assert got.get("Inchmurrin") == "location", got
    storm = "Storm Babet closed the harbour for two days in October. Sailings resumed after Storm Babet had passed."
    assert _names(storm, nlp).get("Storm Babet") == "event"
    who = "Some members objected. Ewan Grant, a fisherman from Skerrin, said the money would be better spent."
    assert _names(who, nlp).get("Ewan Grant") == "person"


def test_list_lines_are_no_statements():
    assert kinds.list_line("Present: Elspeth Fairlie (chair), Tomas Brandauer (general manager), Gideon Lyle.")
    assert kinds.list_line("Apologies: Marguerite Dunmore.") and kinds.list_line("In attendance: Ann Lee, Bo Chen.")
    assert not kinds.list_line("Present-day ferries carry more cars than the old ones did.")
    assert kinds.list_line("Present from the board: Elspeth Fairlie, Tomas Brandauer, Gideon Lyle.")
    assert not kinds.list_line("From the start of the year, fares for residents stayed the same.")
    s = "Present: Elspeth Fairlie (chair), Tomas Brandauer (general manager), Wilhelmina Ostrova (treasurer)."
    assert not quotable(s, 3)
    pts = sentence_points([(1, MINUTES)], max_points=10)
    assert pts and not any(p.text.startswith(("Present", "Apologies")) for p in pts)


def test_list_line_gives_no_concept_links(nlp):
    text = ("Present: Elspeth Fairlie (general manager), Tomas Brandauer (general manager).\n\n"
            "The general manager asked for a new hull.")
    cp = find_candidates(text, TYPES, 60, nlp)
    uc = unit_concepts(cp.doc, cp.masked, [c.name for c in cp.candidates], 300)
    assert not any(link["other_kind"] == "name" for link in uc.links), uc.links
    assert not any("Present" in m["description"] for m in uc.mentions)


def test_salutations_and_sign_offs_of_speeches_and_letters_are_furniture():
    for s in ["Ladies and gentlemen, dear friends,", "With respect,", "Respectfully yours, Tom Hale",
              "Hello, everyone!", "KEVIN SCOTT: Hello, everyone!", "Dear members of the board,"]:
        assert not quotable(s, 1), s
    for s in ["Hello and welcome to the show, where we talk about ships.",
              "With respect to the budget, the board agreed to cut costs.",
              "On behalf of the board, I thank the Ainsworth Foundation for its gift."]:
        assert quotable(s, 3), s


def test_a_salutation_or_behalf_gives_no_concept(nlp):
    text = ("Dear members of the board,\n\nThe concert hall needs a new roof before the winter season. "
            "On behalf of the players, I ask the board for a pay review.\n\nLadies and gentlemen, dear friends,\n\n"
            "The concert hall opens in October.")
    cp = find_candidates(text, TYPES, 60, nlp)
    uc = unit_concepts(cp.doc, cp.masked, [c.name for c in cp.candidates], 300)
    keys = {m["norm"] for m in uc.mentions}
    assert "concert hall" in keys, keys
    assert not any(k.startswith(("dear", "member", "lady", "gentleman", "friend")) or k == "behalf" for k in keys), keys
    assert not any(m["description"].startswith(("Dear", "Ladies")) for m in uc.mentions)


def test_index_of_minutes_relates_no_attendee_pair(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "minutes.txt").write_text(MINUTES, encoding="utf-8")
    (tmp_path / "in" / "letter.txt").write_text(LETTER, encoding="utf-8")
    db = tmp_path / "m.duckdb"
    run_index(tmp_path / "in", db, Settings(extractor="nlp", resolution_threshold=None, min_community_size=2),
              progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    st = Store(db, read_only=True)
    try:
        ents = dict(st.con.execute("SELECT name, type FROM entities").fetchall())
        descs = dict(st.con.execute("SELECT name, description FROM entities").fetchall())
        rels = st.con.execute(
            "SELECT s.name, t.name, r.description FROM relationships r JOIN entities s ON s.entity_id = r.source_id "
            "JOIN entities t ON t.entity_id = r.target_id").fetchall()
    finally:
        st.close()
    assert ents.get("Elspeth Fairlie") == "person" and "Chair Elspeth Fairlie" not in ents
    assert ents.get("MV Kestrel") == "concept" and "MV" not in ents
    assert "Marguerite Dunmore" in ents  # a list line still gives its people
    assert not any((d or "").startswith(("Present", "Apologies")) for d in descs.values()), descs
    assert not any(d.startswith(("Present", "Apologies")) for *_, d in rels), rels
    assert not any("Marguerite Dunmore" in (a, b) for a, b, _ in rels)


def test_cooccurrence_takes_no_description_from_a_list_line():
    from slmgraph.indexing.stages.extract_text import cooccurrence

    text = "Present: Ann Lee (chair), Bo Chen.\nApologies: Cy Dunn.\n\nAnn Lee opened the meeting with Bo Chen."
    first, pairs = cooccurrence(text, ["Ann Lee", "Bo Chen", "Cy Dunn"], 300)
    assert first == {"ann lee": "Ann Lee opened the meeting with Bo Chen.",
                     "bo chen": "Ann Lee opened the meeting with Bo Chen."}
    assert list(pairs) == [("ann lee", "bo chen")]


def test_any_label_before_a_list_of_three_names_is_a_list_line():
    line = ("Speakers: Councillor Peter Brandt (committee chair), Chair Miriam Okafor, Robert Ainsley, Grace Mbeki, "
            "Leticia Moreno.")
    assert kinds.list_line(line) and kinds.list_line("Judges: Ann Lee; Bo Chen; Cy de Vries.")
    text = "Hearing, 9 March 2023\n\n" + line + "\n\nMiriam Okafor answered that the grant fell."
    assert kinds.list_spans(text) == [(text.index("Speakers"), text.index("Speakers") + len(line))]
    assert not kinds.list_line("Grace Mbeki: Ann Lee, Bo Chen and Cy Dee signed it.")
    assert not kinds.list_line("KEVIN SCOTT: Paris, London and Berlin are all great cities.")
    assert not kinds.list_line("Visits: 655,000 (2021: 518,000).")
    assert not kinds.list_line("Partners: Ann Lee and Bo Chen.")  # two names: no list


def test_a_list_line_or_a_salutation_relates_and_describes_no_one():
    from slmgraph.indexing.stages.extract_text import cooccurrence

    text = ("Speakers: Peter Brandt (chair), Miriam Okafor, Robert Ainsley, Grace Mbeki.\n\n"
            "Dear Chair Okafor and members of the Board,\n\nGrace Mbeki said that staff numbers have fallen.")
    first, pairs = cooccurrence(text, ["Peter Brandt", "Miriam Okafor", "Robert Ainsley", "Grace Mbeki",
                                       "Chair Okafor", "Board"], 300)
    assert pairs == {}
    assert set(first) == {"grace mbeki"} and first["grace mbeki"].startswith("Grace Mbeki said")
