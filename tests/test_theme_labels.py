"""Theme labels a reader recognises (topical, recurring phrases; one topic per label) and one document count
per community in its report, /api/reports and a global answer."""

from __future__ import annotations

import json

import numpy as np
import pytest

from slmgraph.query.question_embed import question_embedder
from slmgraph.query.theme_labels import relabel, residual_idf, weighted_phrases
from slmgraph.query.theme_model import Theme, ThemeIndex
from slmgraph.store.db import Store

# Sixteen units: "chip" clusters in four of them (a topic), "massive" is said once in each of eight (a
# description), "admired tech hero" is said once while "tech hero" recurs, "ticket sales" is said in one unit.
FILLER = "The guests talked for a while about many things and then moved on to the next question of the day."
UNITS = {
    f"u{i}": text for i, text in enumerate([
        "Chip design is hard. A chip needs many layers and the chip team tests every chip design twice.",
        "The chip design group built a new chip. Every chip goes through chip design review.",
        "Chip design tools help the chip team. The chip was fast. Our admired tech hero visited the tech team.",
        "A chip design for phones. The chip shipped late but the chip design was good. A tech hero spoke about tech.",
        "It was a massive effort. " + FILLER, "They made massive efforts. " + FILLER,
        "A massive effort followed. " + FILLER, "Another massive effort. " + FILLER,
        "A massive effort again. " + FILLER, "Some massive efforts. " + FILLER,
        "Still a massive effort. " + FILLER, "One more massive effort. " + FILLER,
        "The tech hero of the valley talks tech. " + FILLER, "Ticket sales were discussed once. " + FILLER,
        FILLER, FILLER])}
PHRASES = {
    "u0": [("chip design", "chip design"), ("chip team", "chip team")],
    "u1": [("chip design group", "chip design group"), ("chip design", "chip design")],
    "u2": [("chip design", "chip design"), ("chip team", "chip team"),
           ("admired tech hero", "admired tech hero")],
    "u3": [("chip design", "chip design"), ("tech hero", "tech hero"), ("ticket sale", "ticket sales")],
    **{f"u{i}": [("massive effort", "massive efforts")] for i in range(4, 12)},
    "u12": [("tech hero", "tech hero")], "u13": [("ticket sale", "ticket sales")],
}
DOCS = ["d0", "d0", "d1", "d1", "d2", "d2", "d3", "d3", "d4", "d4", "d5", "d5", "d6", "d6", "d7", "d7"]


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "i.duckdb", create=True)
    con = s.con
    for d in sorted(set(DOCS)):
        con.execute("INSERT INTO documents (doc_id, path, title) VALUES (?, ?, ?)", [d, f"{d}.txt", d])
    for i, (c, text) in enumerate(UNITS.items()):
        con.execute("INSERT INTO text_units (chunk_id, doc_id, ord, text) VALUES (?, ?, ?, ?)", [c, DOCS[i], i, text])
        for k, n in PHRASES.get(c, []):
            con.execute("INSERT INTO concept_mentions VALUES (?, ?, ?, '')", [c, k, n])
    # community 1: the chip team, mentioned in units 0-3 and 8 (documents d0, d1, d4), its class documents d0, d1
    con.execute("INSERT INTO entities (entity_id, norm, name, type) VALUES (1, 'chip team', 'Chip Team', 'ORG')")
    con.execute("INSERT INTO communities VALUES (1, 0, NULL, 1, NULL)")
    con.execute("INSERT INTO community_members VALUES (1, 1)")
    for c in ("u0", "u1", "u2", "u3", "u8"):
        con.execute("INSERT INTO entity_text_units VALUES (1, ?)", [c])
    con.execute("INSERT INTO community_reports (community_id, level, title, summary, findings, rating, topic, doc_ids) "
                "VALUES (1, 0, 'Chip Team', 'Chip Team: in 2 of 8 documents.', '[]', 5.0, 'chip team', ?)",
                [json.dumps(["d0", "d1"])])
    yield s
    s.con.close()


@pytest.fixture(scope="module")
def embedder():
    return question_embedder()


def test_residual_idf_tells_a_clustered_word_from_one_spread_like_chance(store):
    ridf = residual_idf(ThemeIndex(store))
    # "chip" recurs inside the few units about it; "massive" is said once per unit, as chance would spread it
    assert ridf["chip"] > 1.0 > 0.2 > ridf["massive"]


def test_a_label_phrase_is_topical_and_recurs_or_backs_off_to_its_recurring_head(store):
    ix = ThemeIndex(store)
    got = {p: w for p, w, _ in weighted_phrases(ix, [f"u{i}" for i in range(13)])}
    assert max(got, key=got.get) == "chip design"  # the topic of four units, not the description of eight
    assert "massive efforts" not in got  # recurs, but its modifier is spread like chance
    assert "admired tech hero" not in got and "tech hero" in got  # said once: backs off to its recurring compound
    assert "ticket sales" not in got  # said in one of the theme's units only


def test_a_label_is_one_topic_not_a_pair_with_a_weak_second(store, embedder):
    ix = ThemeIndex(store)
    t = Theme(1, "chip team", {}, [], [])
    chunks = [f"u{i}" for i in range(14)]
    anchor = np.mean(embedder.encode([UNITS[c] for c in ("u0", "u1", "u2", "u3")]), axis=0)
    picked = relabel(t, ix, embedder, chunks, anchor)
    assert picked == ["chip design"] and t.topic == "chip design"
    # a later theme takes neither that phrase nor one holding its words
    t2 = Theme(2, "x", {}, [], [])
    taken = {"chip design"}
    relabel(t2, ix, embedder, chunks, anchor, taken=taken)
    assert "chip design" not in t2.topic


def test_a_community_has_one_document_count_in_its_report_the_api_and_an_answer(store):
    from slmgraph.query.browse import reports
    from slmgraph.query.themes import _themes_of

    ix = ThemeIndex(store)
    # its members are mentioned in d0, d1 and d4; its report counts its class documents d0 and d1
    api = reports(store, level=0)[0]
    theme = _themes_of(ix, [{"community_id": 1, "entities": ["Chip Team"], "title": "Chip Team"}], {1: 50.0})[0]
    assert api["coverage"]["documents"] == theme.coverage["documents"] == 2
    assert "2 of 8 documents" in api["summary"]


def test_a_theme_whose_phrases_all_point_away_from_it_gets_no_label_rather_than_a_crash():
    """Every candidate's cosine with the theme below 0 leaves none above a relative floor: no label, no error."""
    import numpy as np

    from slmgraph.query.theme_labels import pick_label

    class Away:
        def encode(self, texts):
            return np.array([[-1.0, 0.1 * i] for i, _ in enumerate(texts)], dtype=np.float32)

    weighed = [("gallery rail", 3.0, {1, 2}), ("lantern room", 2.0, {2, 3})]
    assert pick_label(weighed, np.array([1.0, 0.0], dtype=np.float32), Away()) == []
