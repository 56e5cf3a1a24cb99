"""A new user's council papers: an office before a lone surname resolves to the one person of that surname
("Chair Okafor" is "Miriam Okafor"), and a tie between the types text units give a name goes to the name's
type over concept ("Leeds" a place, though one unit reads "the Leeds tour" as a product)."""

from collections import Counter

from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.indexing.stages.resolve import majority_type, resolve_entities
from slmgraph.names.forms import normalize_name
from slmgraph.store.db import Store


def _resolve(mentions):
    nm, ty, mc = {}, {}, Counter()
    for surface, t in mentions:
        k = normalize_name(surface)
        nm.setdefault(k, Counter())[surface] += 1
        ty.setdefault(k, Counter())[t] += 1
        mc[k] += 1
    return resolve_entities(nm, ty, mc, threshold=None).mapping


def test_an_office_before_a_lone_surname_resolves_to_the_one_person_of_that_surname():
    m = _resolve([("Miriam Okafor", "person")] * 3 + [("Chair Okafor", "unknown"), ("Member States", "unknown"),
                                                       ("Treasurer Dunmore", "unknown")])
    assert m["chair okafor"] == "miriam okafor"
    assert m["member states"] == "member states"  # "States" is no person's surname here
    assert m["treasurer dunmore"] == "treasurer dunmore"  # nor "Dunmore"


def test_a_mis_cut_title_is_no_surname_an_office_stands_before():
    nm, ty, mc = {}, {}, Counter()
    for surface, t in [("Kevin Scott Chief Technology", "person"), ("Chief Technology", "unknown"),
                       ("MacArthur Fellow", "person"), ("Executive Fellow", "unknown")]:
        k = normalize_name(surface)
        nm.setdefault(k, Counter())[surface] += 1
        ty.setdefault(k, Counter())[t] += 1
        mc[k] += 1
    log = resolve_entities(nm, ty, mc, threshold=None).log
    assert not [r for r in log if r.rule == "title"], log


def test_two_people_of_the_surname_block_it_and_a_place_is_never_a_surname():
    m = _resolve([("Miriam Okafor", "person"), ("Daniel Okafor", "person"), ("Chair Okafor", "unknown"),
                  ("North Yorkshire", "location"), ("Director Yorkshire", "unknown")])
    assert m["chair okafor"] == "chair okafor"
    assert m["director yorkshire"] == "director yorkshire"


def test_a_type_tie_goes_to_the_names_type_over_concept_for_a_one_word_name():
    assert majority_type(Counter({"concept": 1, "location": 1}), ("unknown",), one_word=True) == "location"
    assert majority_type(Counter({"concept": 1, "person": 1, "unknown": 3}), ("unknown",), one_word=True) == "person"
    assert majority_type(Counter({"concept": 2, "location": 1}), ("unknown",), one_word=True) == "concept"
    # A longer name keeps the alphabetical order: an award NER also reads as an organisation stays a concept.
    assert majority_type(Counter({"concept": 1, "organization": 1}), ("unknown",)) == "concept"
    assert majority_type(Counter({"organization": 1, "location": 1}), one_word=True) == "location"
    assert majority_type(Counter({"unknown": 2}), ("unknown",)) == "unknown"


def test_index_merges_the_chair_and_types_leeds_a_place(tmp_path):
    docs = {
        "01_hearing.txt": "Finance Committee hearing, 9 March 2023\n\nChair Miriam Okafor opened the hearing on the "
                          "library budget. Chair Okafor said the grant fell by 12 percent since 2021.\n",
        "02_tour.txt": "Board minutes, April 2023\n\nThe board approved the Leeds tour for the spring season. Miriam "
                       "Okafor thanked the players.\n",
        "03_travel.txt": "Newsletter, June 2023\n\nThe players travel to Leeds and York in June. The member states of "
                         "the network sent greetings.\n",
    }
    (tmp_path / "in").mkdir()
    for name, text in docs.items():
        (tmp_path / "in" / name).write_text(text, encoding="utf-8")
    db = tmp_path / "t.duckdb"
    run_index(tmp_path / "in", db, Settings(extractor="nlp", resolution_threshold=None, min_community_size=2),
              progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    st = Store(db, read_only=True)
    try:
        ents = dict(st.con.execute("SELECT name, type FROM entities").fetchall())
        merged = st.con.execute("SELECT norm, into_norm, rule FROM merge_log").fetchall()
    finally:
        st.close()
    assert "Chair Okafor" not in ents and ents.get("Miriam Okafor") == "person", ents
    assert ("chair okafor", "miriam okafor", "title") in merged, merged
    assert ents.get("Leeds") == "location", ents
