"""A series' episodes are read in the order of their numbers, whatever style each file name writes them in."""

import duckdb
import pytest

from slmgraph.query.documents import corpus_documents, episode_number


@pytest.mark.parametrize("path, title, want", [
    ("Behind the Tech_Episode 29_Collier_Bloomberg_Transcript-part3.txt", "", 29),
    ("Behind-the-Tech_EP39_2021_Year-in-Review_Transcript-part1.txt", "", 39),
    ("EP-05_ Behind_the_Tech_Kevin Scott_Podcast_with_Danielle Feinberg-part2.txt", "", 5),
    ("Ep-12-part1.txt", "", 12),
    ("Episode Six - Kwame Mensah.txt", "", 6),
    ("Roots & Routes #4 - Samuel Adeyemi.txt", "", 4),
    ("05_roots_routes_hannah_berg.txt", "Roots and Routes, Episode 5", 5),
    # no episode: a word holding "ep", a number after "#" in a name, no number at all
    ("deep12.txt", "", None), ("Repeat 5.txt", "", None), ("C# 4 notes.txt", "", None), ("notes.txt", "", None),
])
def test_an_episode_number_is_read_from_the_file_name_else_the_title(path, title, want):
    assert episode_number(path, title) == want


def _store(docs):
    """``docs``: ``[(path, first line)]``."""
    con = duckdb.connect()
    con.execute("CREATE TABLE documents (doc_id VARCHAR, path VARCHAR, title VARCHAR)")
    con.execute("CREATE TABLE text_units (chunk_id VARCHAR, doc_id VARCHAR, ord INT, text VARCHAR)")
    for i, (p, head) in enumerate(docs):
        con.execute("INSERT INTO documents VALUES (?, ?, ?)", [f"d{i}", p, p.rsplit(".", 1)[0]])
        con.execute("INSERT INTO text_units VALUES (?, ?, 0, ?)", [f"u{i}", f"d{i}", f"{head}\nHOST: Welcome."])

    class S:
        pass
    s = S()
    s.con = con
    return s


def test_episodes_named_in_many_styles_are_read_in_their_numbers_order():
    docs = [("Show_Episode 9_Oren.txt", "# Show"), ("EP-02 Show with Tomas.txt", "# Show"),
            ("ep10-amara.md", "# Show"), ("Episode Six - Kwame.txt", "# Show"),
            ("Show #4 - Samuel.txt", "# Show"), ("05_show_hannah.txt", "# Show — Episode 5"),
            ("rr-ep3-priya.md", "# Show"), ("Show_Episode 1_Lena.txt", "# Show"), ("bonus notes.txt", "# Notes")]
    order = [d.path for d in corpus_documents(_store(docs))]
    assert order == ["Show_Episode 1_Lena.txt", "EP-02 Show with Tomas.txt", "rr-ep3-priya.md", "Show #4 - Samuel.txt",
                     "05_show_hannah.txt", "Episode Six - Kwame.txt", "Show_Episode 9_Oren.txt", "ep10-amara.md",
                     "bonus notes.txt"]


def test_without_numbered_episodes_the_paths_keep_their_natural_order():
    docs = [("notes10.txt", "x"), ("notes2.txt", "x"), ("report #3.txt", "x")]
    assert [d.path for d in corpus_documents(_store(docs))] == ["notes2.txt", "notes10.txt", "report #3.txt"]
