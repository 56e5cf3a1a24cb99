"""A corpus-wide answer opens on what the corpus is: the phrases of its titles and headings, the name heading
its first document, the people in most documents, a book's own title and author -- from counted data."""

import duckdb

from slmgraph.query.documents import coverage
from slmgraph.query.theme_ident import Unit, book, identity_sentence, people, title_phrases
from slmgraph.query.theme_model import Theme, ThemeIndex
from slmgraph.query.theme_render import overview


def _newsletters():
    seasons = ["spring", "autumn"] * 5
    return [Unit(f"d{i}", [f"{2018 + i // 2}-0{3 + 6 * (i % 2)}-{s}-newsletter",
                           f"# Kestrel Point Lighthouse Preservation Society \u2014 {s.title()} Newsletter"])
            for i, s in enumerate(seasons)]


def test_phrases_in_every_title_or_heading_are_named_without_dates_or_parts_of_longer_ones():
    got = title_phrases(_newsletters())
    assert got == [("Kestrel Point Lighthouse Preservation Society", 10), ("Newsletter", 10)]


def test_a_kind_of_a_named_phrase_stays_and_initials_of_one_do_not():
    titles = ["agm", "committee", "agm", "orchard-planting", "agm", "water-fund", "lockdown", "agm"]
    heads = ["# Annual General Meeting, March 2017", "# Committee meeting, September 2017",
             "# Annual General Meeting, March 2018", "Orchard planting day report, November 2018",
             "# Annual General Meeting, March 2019", "# Committee meeting, October 2019",
             "# Emergency committee meeting (by video call), June 2020", "# Annual General Meeting, April 2021"]
    units = [Unit(f"d{i}", [f"20{17 + i}-03-{t}", h]) for i, (t, h) in enumerate(zip(titles, heads))]
    assert title_phrases(units) == [("Meeting", 7), ("Annual General Meeting", 4)]


def test_a_phrase_opening_on_a_named_one_counts_as_the_rest_of_its_words():
    titles = ["EP-03_ Behind_the_Tech_Kevin Scott_Podcast_with_Andrew Ng",
              "EP-13_ Behind_the_Tech_Kevin_Scott_Podcast_with_Sam-Altman",
              "EP-22_ Behind_the_Tech_Kevin_Drew-Endy_Bioengineering-pioneer",
              "EP-25_ Behind_the_Tech_CharlieStross_Sci-fi_author",
              "Ep-52_Behind_the_Tech_Kevin_Scott_Podcast_with_Bill_Gates-qc",
              "Ep-54_Behind_the_Tech_Kevin_Scott_Podcast_with_Neil_deGrasse_Tyson_V2"]
    got = title_phrases([Unit(t, [t, ""]) for t in titles])
    assert got == [("Behind the Tech", 6), ("Kevin Scott Podcast", 4)]  # not "Tech Kevin Scott Podcast"


def test_people_in_most_documents_are_named_but_not_a_lab_a_role_or_a_first_name_again():
    units = [Unit(f"d{i}", [], {"KEVIN SCOTT", "Kevin", "Nandakumar Lab", "Senior Cloud Advocate"}
                  | ({"Hannah Okafor"} if i < 3 else set())) for i in range(4)]
    got = people(units, ["Nandakumar Lab notebook"], common=lambda n: n == "Senior Cloud Advocate")
    assert got == [("Kevin Scott", 4), ("Hannah Okafor", 3)]


def test_a_book_making_most_of_the_corpus_is_named_by_its_own_title_and_author_lines():
    head = "The Project Gutenberg eBook of A Christmas Carol\n\nTitle: A Christmas Carol\n\nAuthor: Charles Dickens\n"
    assert book({"b": head, "r": "Title: notes"}, {"b": 97, "r": 1}) == ("b", "A Christmas Carol", "Charles Dickens")
    assert book({"b": head, "r": "notes"}, {"b": 3, "r": 5}) is None  # a small document's front matter names no corpus
    text = identity_sentence([], book_of=("A Christmas Carol", "Charles Dickens", ["README_text", "README_ref"]))
    assert text == ("The corpus is \u201cA Christmas Carol\u201d by Charles Dickens, with 2 other documents "
                    "(README_text and README_ref).")


def test_the_opening_names_phrases_first_heading_and_people_and_nothing_without_a_signal():
    units = [Unit("d0", ["2017-03-agm", "# Millbrook Allotment Association \u2014 Annual General Meeting, March 2017"],
                  {"Priya Raman"}),
             Unit("d1", ["2018-03-agm", "# Annual General Meeting, March 2018"], {"Priya Raman"}),
             Unit("d2", ["2019-03-agm", "# Annual General Meeting, March 2019"], {"Priya Raman", "Tom Penhallow"}),
             Unit("d3", ["2020-06-lockdown", "Site notice"], {"Tom Penhallow"})]
    text = identity_sentence(units, dates=("2017-03", "2020-06"), first_heading=units[0].lines[1])
    assert text == ("These 4 documents, dated 2017-03 to 2020-06, have \u201cAnnual General Meeting\u201d in the titles "
                    "or headings of 3 of 4; the first is headed \u201cMillbrook Allotment Association \u2014 Annual "
                    "General Meeting, March 2017\u201d. Priya Raman appears in 3 of them and Tom Penhallow in 2.")
    plain = [Unit(f"d{i}", [f"file{i}", ""]) for i in range(4)]
    assert identity_sentence(plain) == ""


def _store(docs):
    con = duckdb.connect()
    con.execute("CREATE TABLE documents (doc_id VARCHAR, path VARCHAR, title VARCHAR)")
    con.execute("CREATE TABLE text_units (chunk_id VARCHAR, doc_id VARCHAR, ord INT, text VARCHAR)")
    con.execute("CREATE TABLE entities (entity_id INT, name VARCHAR, type VARCHAR)")
    con.execute("CREATE TABLE entity_text_units (entity_id INT, chunk_id VARCHAR)")
    con.execute("INSERT INTO entities VALUES (1, 'Margaret Okafor', 'person'), (2, 'Gullhaven', 'location')")
    for i, (path, text) in enumerate(docs):
        con.execute("INSERT INTO documents VALUES (?, ?, ?)", [f"d{i}", path, path[:-3]])
        con.execute("INSERT INTO text_units VALUES (?, ?, 0, ?)", [f"u{i}", f"d{i}", text])
        con.execute("INSERT INTO entity_text_units VALUES (1, ?), (2, ?)", [f"u{i}", f"u{i}"])

    class S:
        pass
    s = S()
    s.con = con
    return s


def test_a_corpus_wide_overview_opens_on_what_the_corpus_is():
    docs = [(f"20{18 + i}-03-spring-newsletter.md", "# Kestrel Point Lighthouse Society \u2014 Spring Newsletter\n\n"
             "Margaret Okafor opened the open day in Gullhaven.") for i in range(3)]
    ix = ThemeIndex(_store(docs))
    ids = [d.doc_id for d in ix.docs]
    text = overview([Theme(1, "open days", coverage(ids, ix.docs), ids, [])], ix, wide=True)
    assert text.startswith("These 3 documents, dated 2018-03 to 2020-03, have \u201cKestrel Point Lighthouse "
                           "Society\u201d and \u201cSpring Newsletter\u201d in the titles or headings of all 3. "
                           "Margaret Okafor appears in all of them. Across the 3 documents, "), text
    # a focused question's overview answers it first, as before
    assert not overview([Theme(1, "open days", coverage(ids, ix.docs), ids, [])], ix).startswith("These 3")


def test_a_heading_is_a_short_first_line_and_not_a_sentence_or_a_speakers_turn():
    from slmgraph.query.theme_ident import _heading

    assert _heading("# Committee meeting, September 2017\n\nPresent: ...") == "# Committee meeting, September 2017"
    assert _heading("\nOrchard planting day report, November 2018\nWritten by") == \
        "Orchard planting day report, November 2018"
    assert _heading("Some words of this part.") == ""
    assert _heading("../KEVIN SCOTT: Hi everyone\nMore") == ""
    assert _heading("../\n[MUSIC]") == ""
