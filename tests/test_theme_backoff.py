"""Labels of themes whose phrases do not recur (a short story, a few units): a specific noun phrase, not a
lone generic word; and a theme cites the reports its quotes come from."""

from __future__ import annotations

import numpy as np
import pytest

from slmgraph.query.question_embed import question_embedder
from slmgraph.query.theme_labels import keyphrase_backoff, relabel
from slmgraph.query.theme_model import Statement, Theme, ThemeIndex
from slmgraph.query.themes import cited_reports
from slmgraph.store.db import Store

# Four units of one story: "thoughts" is said in every unit, each several-word phrase once.
UNITS = {
    "u0": "The radio transmitter picked up an alien signal. Her thoughts raced.",
    "u1": "Signal distortions grew as the team decoded the alien transmission. His thoughts wandered.",
    "u2": "The team argued about protocol in the briefing room. Quiet thoughts again.",
    "u3": "A brief nod, then more thoughts about the steel doors of the base.",
}
PHRASES = {
    "u0": [("radio transmitter", "radio transmitter"), ("alien signal", "alien signal"), ("thought", "thoughts")],
    "u1": [("signal distortion", "signal distortions"), ("alien transmission", "alien transmission"),
           ("thought", "thoughts"), ("team", "team")],
    "u2": [("team", "team"), ("protocol", "protocol"), ("briefing room", "briefing room"), ("thought", "thoughts")],
    "u3": [("brief nod", "brief nod"), ("thought", "thoughts"), ("steel door", "steel doors"), ("base", "base")],
}


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "i.duckdb", create=True)
    con = s.con
    con.execute("INSERT INTO documents (doc_id, path, title) VALUES ('d0', 'story.txt', 'story')")
    for i, (c, text) in enumerate(UNITS.items()):
        con.execute("INSERT INTO text_units (chunk_id, doc_id, ord, text) VALUES (?, 'd0', ?, ?)", [c, i, text])
        for k, n in PHRASES[c]:
            con.execute("INSERT INTO concept_mentions VALUES (?, ?, ?, '')", [c, k, n])
    # community 1 (Mara) is mentioned in u0 and u1, community 2 (Cole) in u2 and u3; both in u1
    for eid, name, units in ((1, "Mara", ("u0", "u1")), (2, "Cole", ("u1", "u2", "u3"))):
        con.execute("INSERT INTO entities (entity_id, norm, name, type) VALUES (?, ?, ?, 'PERSON')",
                    [eid, name.casefold(), name])
        con.execute("INSERT INTO communities VALUES (?, 0, NULL, 1, NULL)", [eid])
        con.execute("INSERT INTO community_members VALUES (?, ?)", [eid, eid])
        for c in units:
            con.execute("INSERT INTO entity_text_units VALUES (?, ?)", [eid, c])
    yield s
    s.con.close()


@pytest.fixture(scope="module")
def embedder():
    return question_embedder()


def test_a_theme_whose_phrases_do_not_recur_is_labelled_by_a_specific_phrase_not_a_generic_word(store, embedder):
    ix = ThemeIndex(store)
    t = Theme(1, "thoughts", {}, [], [])
    anchor = np.mean(embedder.encode(["The team picks up an alien signal and decodes its transmission."]), axis=0)
    picked = relabel(t, ix, embedder, list(UNITS), anchor)
    # "thoughts" recurs in every unit, yet a noun phrase of the theme says what it is about
    assert picked and all(len(p.split()) > 1 for p in picked), picked
    assert "thoughts" not in t.topic and ("signal" in t.topic or "transmi" in t.topic), t.topic


def test_the_back_off_ranks_noun_compounds_near_the_theme_and_skips_taken_ones(store, embedder):
    ix = ThemeIndex(store)
    anchor = np.mean(embedder.encode(["An alien signal was picked up and its distortions decoded."]), axis=0)
    got = [p for p, _, _ in keyphrase_backoff(ix, list(UNITS), anchor, embedder)]
    # the one noun compound (its modifier "signal" heads a phrase of the index: a noun) wins over phrases whose
    # modifier is no noun of the index ("brief nod"), and single words never come
    assert got == ["signal distortions"]
    units = {"u2": UNITS["u2"], "u3": UNITS["u3"]}
    got = [p for p, _, _ in keyphrase_backoff(ix, list(units), anchor, embedder)]
    assert got and "thoughts" not in got and all(len(p.split()) == 2 for p in got)  # no compound: any phrase
    assert not any("signal" in p for p in keyphrase_backoff(ix, list(UNITS), anchor, embedder,
                                                            taken={"signal"}))


def test_a_theme_labelled_from_its_own_units_is_not_labelled_from_the_ones_it_shares(store, embedder):
    for c, v in zip(UNITS, embedder.encode(list(UNITS.values()))):
        store.con.execute("INSERT INTO embeddings (kind, item_id, model, vector) VALUES ('text_unit', ?, 'm', ?)",
                          [c, [float(x) for x in v]])
    ix = ThemeIndex(store)
    t = Theme(2, "thoughts", {}, [], [])
    anchor = np.mean(embedder.encode([UNITS[c] for c in UNITS]), axis=0)
    picked = relabel(t, ix, embedder, list(UNITS), anchor, core=["u2", "u3"])
    # its own units are about the briefing room and the base's doors, not the signal of Mara's units
    assert picked and not any("signal" in p or "transmi" in p for p in picked), picked


def test_a_theme_cites_the_report_its_quote_comes_from_that_is_about_it(store, embedder):
    from slmgraph.query.answer import unit_numbers

    for cid, text in ((1, "Mara and the alien signal: the radio transmitter and its signal distortions."),
                      (2, "Cole and the base: the steel doors, the briefing room and protocol.")):
        store.con.execute("INSERT INTO embeddings (kind, item_id, model, vector) VALUES ('report', ?, 'm', ?)",
                          [str(cid), [float(x) for x in embedder.encode([text])[0]]])
    ix = ThemeIndex(store)
    num = unit_numbers(store)
    door = Statement("A brief nod, then more thoughts about the steel doors of the base.", num["u3"], "d0", 4, 4)
    signal = Statement("The radio transmitter picked up an alien signal.", num["u0"], "d0", 1, 4)
    # a theme read from Mara's community whose quote is about the base's doors cites Cole's report
    t = Theme(1, "steel doors", {}, ["d0"], [], statements=[door])
    assert cited_reports(t, ix, [1, 2], embedder) == [2]
    t = Theme(1, "alien signal", {}, ["d0"], [], statements=[signal, door])
    assert cited_reports(t, ix, [1, 2], embedder)[0] == 1
    # a unit mentioning only the theme's own community cites it; without an embedder, its own report
    assert cited_reports(Theme(1, "x", {}, ["d0"], [], statements=[signal]), ix, [1, 2], embedder) == [1]
    assert cited_reports(Theme(1, "steel doors", {}, ["d0"], [], statements=[door]), ix, [1, 2], None) == [1]
