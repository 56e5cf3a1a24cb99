"""A graph a reader can trust (slmgraph.names.kinds and its callers): no place merged into a newspaper or a person,
types from head nouns, context and a vote, no salutation, office or document part as an entity, no
relationship from a list line, local search from the entity's own text units, speaker labels as persons."""

from collections import Counter

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.extract_text import cooccurrence
from slmgraph.names.kinds import coordinated, list_kind, list_spans, names_only, not_a_name, quoted_titles, vote
from slmgraph.names.forms import normalize_name
from slmgraph.indexing.stages.ner import find_candidates, pipeline_for
from slmgraph.indexing.pipeline import run_index
from slmgraph.indexing.stages.report_data import bare_turn, text_findings
from slmgraph.indexing.stages.resolve import resolve_entities
from slmgraph.store.db import Store
from slmgraph.store.rows import EntityRow, RelationshipRow

TYPES = Settings().entity_types

#: A town council's papers: minutes, a letter, the local paper, a company's memo and board note, a hearing.
COUNCIL = {
    "minutes.txt": (
        "MILLBROOK TOWN COUNCIL\n"
        "Minutes of the meeting held on 4 March 2025 at Millbrook Library\n\n"
        "Present: Mayor Elena Ruiz, Cllr Tom Reyes, Cllr Ana Li, Cllr Robert Achebe\n"
        "Apologies: Cllr Sarah Kent\n\n"
        "1. The Mayor welcomed members. Cllr Tom Reyes said the Aldane River had flooded Fenwick Lane twice "
        "this winter.\n"
        "2. Bluewater Renewables proposed a solar farm at Hollins Meadows. Cllr Ana Li asked whether Bluewater "
        "Renewables had consulted the residents of Millbrook.\n"
        "3. The Town Clerk reported that the Millbrook Gazette would publish the notice. The Town Clerk will "
        "write to Bluewater Renewables.\n\n"
        "Signed:\nElena Ruiz\nMayor\n"),
    "letter.txt": (
        "Dear Mayor,\n\n"
        "I write about the flooding on Fenwick Lane. The water from the Aldane River reached my door in "
        "Millbrook twice this winter, and the drains on Fenwick Lane were blocked.\n\n"
        "Yours sincerely,\nMargaret Doyle\nRosa Ferreira\n"),
    "gazette.txt": (
        "Floods return to Millbrook\n\n"
        "Residents of Millbrook said the council must act. The Millbrook Gazette asked Bluewater Renewables "
        "about the plan, and Bluewater Renewables said the farm at Hollins Meadows would not add to the "
        "flooding. Millbrook Library will host a public meeting in Millbrook on Friday. Methodist volunteers "
        "served tea at the Methodist hall.\n"),
    "memo.txt": (
        "MEMO\n"
        "From: Priya Natarajan, Head of Engineering, Bluewater Renewables\n"
        "To: Board of Bluewater Renewables\n"
        "cc: Tom Reyes, Ana Li\n\n"
        "Priya Natarajan recommends raising the solar panels at Hollins Meadows by one metre above the flood "
        "line. Priya Natarajan estimates that the change adds four percent to the cost of the scheme.\n"),
    "hearing.txt": (
        "DR. SMITH: Thank you, Mayor.\n"
        "DR. SMITH: The Aldane River rose two metres at Fenwick Lane on the third of March.\n"
        "MAYOR RUIZ: Thank you, Dr. Smith.\n"),
}


@pytest.fixture(scope="module")
def nlp():
    pipe, warning = pipeline_for("auto")
    assert pipe is not None, warning
    return pipe


def cands(text, nlp):
    return {c.name: c.type for c in find_candidates(text, TYPES, 60, nlp).candidates}


@pytest.fixture(scope="module")
def council(tmp_path_factory):
    """The council corpus indexed on the LLM-free route: the store (read-only)."""
    tmp = tmp_path_factory.mktemp("council")
    folder = tmp / "in"
    folder.mkdir()
    for name, text in COUNCIL.items():
        (folder / name).write_text(text, encoding="utf-8")
    db = tmp / "c.duckdb"
    run_index(folder, db, Settings(extractor="nlp", resolution_threshold=None, min_community_size=2),
              progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    st = Store(db, read_only=True)
    yield st
    st.close()


def _entities(store) -> dict[str, str]:
    return dict(store.con.execute("SELECT norm, type FROM entities").fetchall())


# --- resolution never merges across kinds ----------------------------------------------------------------


def test_the_town_is_not_merged_into_its_newspaper(council):
    ents = _entities(council)
    assert ents.get("millbrook") == "location" and ents.get("millbrook gazette") == "organization", ents
    merged = dict(council.con.execute("SELECT norm, into_norm FROM merge_log").fetchall())
    assert "millbrook" not in merged


def test_a_place_never_merges_into_another_kind_even_with_unreliable_types():
    def res(items, reliable=False, units=None):
        nm = {normalize_name(n): Counter([n]) for n, _ in items}
        ty = {normalize_name(n): Counter([t]) for n, t in items}
        return resolve_entities(nm, ty, Counter(nm.keys()), threshold=None, types_reliable=reliable, units=units)

    r = res([("Millbrook", "location"), ("Millbrook Gazette", "person")])
    assert r.mapping["millbrook"] == "millbrook"
    r = res([("Washington", "location"), ("George Washington", "person")])
    assert r.mapping["washington"] == "washington"
    # the same merges between kinds that may be one entity still happen, with their evidence logged
    r = res([("Kellen", "person"), ("Marta Kellen", "person")])
    assert r.mapping["kellen"] == "marta kellen" and "both typed person" in r.log[0].detail


def test_a_name_subset_with_an_untyped_side_needs_one_text_unit_naming_both():
    nm = {"kellen": Counter(["Kellen"]), "marta kellen": Counter(["Marta Kellen"])}
    ty = {"kellen": Counter(["unknown"]), "marta kellen": Counter(["person"])}
    apart = resolve_entities(nm, ty, {"kellen": 1, "marta kellen": 1}, threshold=None,
                             units={"kellen": {"u1"}, "marta kellen": {"u2"}})
    assert apart.mapping["kellen"] == "kellen"
    together = resolve_entities(nm, ty, {"kellen": 1, "marta kellen": 1}, threshold=None,
                                units={"kellen": {"u1"}, "marta kellen": {"u1", "u2"}})
    assert together.mapping["kellen"] == "marta kellen"
    assert "text unit u1" in together.log[0].detail and "untyped" in together.log[0].detail
    # typed differently: never, whatever the text
    ty["kellen"] = Counter(["organization"])
    assert resolve_entities(nm, ty, {"kellen": 1, "marta kellen": 1}, threshold=None, types_reliable=False,
                            units={"kellen": {"u1"}, "marta kellen": {"u1"}}).mapping["kellen"] == "kellen"


def test_every_merge_of_the_council_index_records_its_evidence(council):
    details = [d for (d,) in council.con.execute("SELECT detail FROM merge_log").fetchall()]
    assert details and all("typed" in d or "untyped" in d for d in details), details


# --- types from head nouns, context and a vote ------------------------------------------------------------


def test_head_nouns_type_streets_places_companies_and_the_paper(nlp):
    c = {}
    for text in COUNCIL.values():
        c.update(cands(text, nlp))
    want = {"Bluewater Renewables": "organization", "Fenwick Lane": "location", "Hollins Meadows": "location",
            "Millbrook Library": "organization", "Aldane River": "location", "Millbrook Gazette": "organization"}
    assert {n: c.get(n) for n in want} == want, c
    assert cands("Aldane River flooded the fields again.", nlp).get("Aldane River") == "location"
    assert cands("Halden Ltd sold the farm.", nlp).get("Halden Ltd") == "organization"


def test_context_types_a_name_the_pipeline_left_untyped_or_got_wrong(nlp):
    assert vote([("person", 2), ("location", 1), ("location", 1), ("location", 1)], TYPES) == "location"
    assert vote([("organization", 2), ("location", 2)], TYPES) == "location"  # the documented tie
    assert vote([("person", 2), ("organization", 2)], TYPES) == "person"  # else the first mention's
    assert vote([("unknown", 4)], TYPES) == "unknown"
    c = cands("Quillon's board approved the plan. The board of Quillon met in Tarnby. We drove to Tarnby.", nlp)
    assert c.get("Quillon") == "organization" and c.get("Tarnby") == "location", c


@pytest.mark.parametrize("text, name, kind", [
    # a definition or an apposition says what a name is; the head of its noun phrase is the last noun
    ("In 1990 Wereta was a town in northern Ethiopia.", "Wereta", "location"),
    ("Gym Class Heroes is an American rock band from Geneva, New York.", "Gym Class Heroes", "organization"),
    ("Yuliana Peniche is a Mexican actress. Peniche starred in three films.", "Yuliana Peniche", "person"),
    ("The road reaches Tarnwick, a village in the Ryedale district, at noon.", "Tarnwick", "location"),
    # the head before "of", a kind-saying first word, a place-name ending
    ("He fought at the Battle of Tarnby Ridge in 1917.", "Battle of Tarnby Ridge", "event"),
    ("The church stands on Via Pesce, near the old gate.", "Via Pesce", "location"),
    ("FK Fyllingsdalen won the cup twice.", "FK Fyllingsdalen", "organization"),
    ("Operation Vistula displaced thousands of families.", "Operation Vistula", "event"),
    ("Ships of the fleet escorted HMS Ardent home.", "HMS Ardent", "concept"),
    ("The Lincolnshire Wolds lie east, and Yorkshire lies north.", "Yorkshire", "location"),
    # an acronym names a body; a religion written as an adjective is its church
    ("He studied at INSEAD for two years.", "INSEAD", "organization"),
    ("The Roman Catholic and Eastern Orthodox churches split.", "Roman Catholic", "organization"),
])
def test_definitions_heads_prefixes_and_endings_type_a_name(nlp, text, name, kind):
    c = cands(text, nlp)
    assert c.get(name) == kind, c


def test_names_written_as_one_list_share_its_kind(nlp):
    assert list_kind(["person", "person", "organization", "person"]) == "person"
    assert list_kind(["person", "location", "organization"]) is None  # no kind of two thirds
    assert coordinated("A, B and C met D.", [(0, 1, "a"), (3, 4, "b"), (9, 10, "c"), (15, 16, "d")]) == [["a", "b", "c"]]
    c = cands("He met international stars like Celine Dion, Jean Paul Gaultier, Sylvester Stallone and Helena "
              "Paparizou.", nlp)
    assert c.get("Celine Dion") == "person", c  # tagged ORG alone


def test_a_quoted_title_is_one_name_typed_as_a_work(nlp):
    c = cands('Dolly Parton recorded "Two Doors Down" in 1977, and "Two Doors Down" reached the charts.', nlp)
    assert c.get("Two Doors Down") == "concept" and "Two Doors" not in c, c
    assert quoted_titles('He said "more acoustic, less pop-oriented." \u201cBah! Humbug!\u201d') == []
    assert quoted_titles('"It\'s All Wrong, but It\'s All Right."') == [(1, 35, "It's All Wrong, but It's All Right")]
    # a nickname inside a name, an alias in brackets and a short order are no titles
    assert quoted_titles('Dwayne "The Rock" Johnson, Tim Cratchit ("Tiny Tim") and "Move out," he said.') == []


def test_types_agree_across_the_council_index(council):
    ents = _entities(council)
    for norm, t in {"bluewater renewables": "organization", "fenwick lane": "location", "hollins meadows":
                    "location", "millbrook library": "organization", "aldane river": "location",
                    "priya natarajan": "person"}.items():
        assert ents.get(norm) == t, (norm, ents)


# --- not a name ------------------------------------------------------------------------------------------


def test_salutations_offices_document_parts_and_group_adjectives_are_not_names(council):
    ents = _entities(council)
    for bad in ("dear mayor", "mayor", "town clerk", "minutes", "present", "apologies", "methodist", "signed",
                "memo", "robert achebe leader"):
        assert bad not in ents, (bad, ents)
    assert {"elena ruiz", "tom reyes", "ana li", "robert achebe", "margaret doyle"} <= set(ents), ents


def test_a_name_after_dear_and_before_an_office_keeps_only_the_name(nlp):
    c = cands("Dear Priya Natarajan,\nThank you. Robert Achebe Leader of the Council agreed.", nlp)
    assert "Priya Natarajan" in c and "Dear Priya Natarajan" not in c, c
    assert not any(n.startswith("Robert Achebe L") for n in c), c


def test_interjections_and_sentence_opening_common_words_are_not_names(nlp):
    text = ("OPERATOR: Bye-bye.\nMomentum is strong this quarter. Stories like this one matter. We kept the "
            "momentum and told new stories. Harriet Vance thanked Kestrel Analytics.")
    c = cands(text, nlp)
    assert not {"Bye-bye", "Momentum", "Stories"} & set(c), c
    assert {"Harriet Vance", "Kestrel Analytics"} <= set(c), c
    assert not_a_name("Momentum", "Momentum grew. We kept the momentum.", [(0, 8)]) == "common word"
    assert not_a_name("Minutes", "Minutes", [(0, 7)]) == "document part"
    assert not_a_name("Town Clerk", "the Town Clerk", [(4, 14)]) == "office"
    assert not_a_name("Halden", "Halden grew. We met in Halden.", [(0, 6), (23, 29)]) is None


# --- list lines state no relationship ------------------------------------------------------------------


def test_attendance_signature_and_distribution_lines_give_no_relationship():
    text = COUNCIL["minutes.txt"] + "\n" + COUNCIL["letter.txt"] + "\n" + COUNCIL["memo.txt"]
    names = ["Elena Ruiz", "Tom Reyes", "Ana Li", "Robert Achebe", "Sarah Kent", "Margaret Doyle", "Rosa Ferreira",
             "Priya Natarajan", "Bluewater Renewables", "Hollins Meadows"]
    first, pairs = cooccurrence(text, names, 300)
    people = {normalize_name(n) for n in names[:7]}
    assert not any(a in people and b in people for a, b in pairs), pairs
    assert ("hollins meadows", "priya natarajan") in pairs  # a sentence that states something still relates
    assert {"elena ruiz", "tom reyes", "margaret doyle"} <= set(first) | people
    assert names_only("Cllr Tom Reyes (Chair), Cllr Ana Li and Mayor Elena Ruiz.", ["Tom Reyes", "Ana Li",
                                                                                    "Elena Ruiz"])
    assert not names_only("Tom Reyes, the engineer, met Ana Li.", ["Tom Reyes", "Ana Li"])
    assert len(list_spans("Present:\nA B\nC D\n\nA B met C D.")) == 3


def test_the_council_index_links_no_councillor_to_another_by_the_present_line(council):
    pairs = council.con.execute(
        "SELECT a.norm, b.norm FROM relationships r JOIN entities a ON a.entity_id = r.source_id "
        "JOIN entities b ON b.entity_id = r.target_id").fetchall()
    councillors = {"elena ruiz", "tom reyes", "ana li", "robert achebe", "sarah kent"}
    linked = {frozenset(p) for p in pairs if set(p) <= councillors}
    assert not linked, linked
    ents = _entities(council)
    assert {"robert achebe", "sarah kent"} <= set(ents)  # the names stay as mentions


# --- local search and speaker labels ---------------------------------------------------------------------


def test_local_search_about_a_person_starts_at_her_own_memo(council):
    from slmgraph.model.client import ModelClient
    from slmgraph.config.prompting import Prompts
    from slmgraph.query.engines.local_search import local_search

    ans = local_search(council, ModelClient(FakeModel(), council, "q"), Prompts(), Settings(helpfulness_floor=5.0),
                       "Who is Priya Natarajan?", FakeEmbedder())
    units = [c["id"] for c in ans.context if c["kind"] == "text_unit"]
    memo = council.con.execute("SELECT t.chunk_id FROM text_units t JOIN documents d ON d.doc_id = t.doc_id "
                               "WHERE d.path LIKE '%memo.txt'").fetchall()
    assert units and units[0] in {m for (m,) in memo}, (units, memo)
    assert "Priya Natarajan recommends" in ans.text, ans.text


def test_a_speaker_label_is_the_person_and_a_bare_turn_is_no_finding(nlp, council):
    c = cands(COUNCIL["hearing.txt"], nlp)
    assert c.get("SMITH") == "person" and "DR. SMITH" not in c and "DR" not in c, c
    ents = _entities(council)
    assert ents.get("smith") == "person" and "dr smith" not in ents, ents
    assert bare_turn("DR. SMITH: Thank you, Mayor.") and not bare_turn(
        "DR. SMITH: The Aldane River rose two metres at Fenwick Lane.")
    e = [EntityRow(1, "smith", "Smith", "person", "DR. SMITH: Thank you, Mayor.", 2, 1),
         EntityRow(2, "ruiz", "Ruiz", "person", "MAYOR RUIZ: Thank you, Dr. Smith.", 1, 1)]
    r = [RelationshipRow(1, 1, 2, "DR. SMITH: Thank you, Mayor. MAYOR RUIZ: Thank you, Dr. Smith.", 1.0, 5.0, 2)]
    assert text_findings(e, r) == []
    for (findings,) in council.con.execute("SELECT findings FROM community_reports").fetchall():
        assert "Thank you, Mayor" not in findings


# --- issue 26's small items: Sherlock and Mycroft, the city of Washington -----------------------------------


def test_sherlock_holmes_is_one_name_and_his_mentions_stay_his(nlp):
    c = cands("Sherlock Holmes lived in London.", nlp)
    assert c.get("Sherlock Holmes") == "person" and "Sherlock" not in c and "Holmes" not in c, c
    text = ("Sherlock Holmes lived in London. Mycroft Holmes worked in Whitehall. Mr Holmes played the violin. "
            "Holmes smiled.")
    found = cands(text, nlp)
    nm = {normalize_name(n): Counter([n]) for n in found}
    ty = {normalize_name(n): Counter([t]) for n, t in found.items()}
    m = resolve_entities(nm, ty, Counter(nm.keys()), threshold=None, types_reliable=False,
                         units={k: {"u"} for k in nm}).mapping
    assert m.get("holmes", "holmes") != "mycroft holmes" and m.get("mr holmes", "mr holmes") != "mycroft holmes", m


def test_the_city_of_washington_is_not_george_washington(nlp):
    text = ("George Washington led the army. The government moved to Washington in 1800. Congress meets in "
            "Washington.")
    found = cands(text, nlp)
    assert found.get("Washington") == "location", found
    nm = {normalize_name(n): Counter([n]) for n in found}
    ty = {normalize_name(n): Counter([t]) for n, t in found.items()}
    r = resolve_entities(nm, ty, Counter(nm.keys()), threshold=None, types_reliable=False)
    assert r.mapping["washington"] == "washington" and r.mapping["george washington"] == "george washington"


def test_transcript_annotations_imperatives_and_titled_places_are_read_right(nlp):
    text = ("We will be right back with more insights.  Stick around.\n(Crosstalk.)\nKEVIN SCOTT: Yay.\n"
            "And shout out, Alderman Library. That is where I met Anna Kerr.")
    c = cands(text, nlp)
    assert not {"Stick", "Crosstalk", "Yay", "Library"} & set(c), c
    assert c.get("Alderman Library") == "organization" and c.get("Anna Kerr") == "person", c


def test_a_code_with_digits_is_no_person_and_two_building_nouns_are_a_place(nlp):
    # en_core_web_sm labels both PERSON, with no other cue to outvote it
    c = cands("The group recommends dwarf rootstocks (M26 and MM106) and local heritage varieties. Edith Blyth "
              "has found two surviving trees in old gardens on Mill Row.", nlp)
    assert c.get("MM106") not in (None, "person") and c.get("Mill Row") == "location", c
    assert c.get("Edith Blyth") == "person", c
