"""One name lookup for local search, the API and serve's entity search (slmgraph.query.named.entities_named):
an entity stored with a quoted nickname is found by the nickname with the last name and by the name without it."""

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.api import open as open_index
from slmgraph.config.settings import Settings
from slmgraph.names.forms import name_forms
from slmgraph.indexing.pipeline import run_index
from slmgraph.query import browse
from slmgraph.query.named import check_names, entities_named, named_entities
from slmgraph.store.db import Store

STORED = 'Margaret "Peggy" Doyle'


@pytest.fixture
def db(tmp_path, corpus):
    db = tmp_path / "idx.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db)
    store.con.execute("UPDATE entities SET name = ? WHERE name = 'Eve Black'", [STORED])
    # A second entity holding both words: "Peggy Doyle" is not just the one name that contains it.
    nid = store.con.execute("SELECT max(entity_id) + 1 FROM entities").fetchone()[0]
    store.con.execute("INSERT INTO entities VALUES (?, 'peggy doyle foundation', 'Peggy Doyle Foundation', "
                      "'organization', '', 1, 0)", [nid])
    store.close()
    return db


def test_name_forms_of_a_quoted_nickname():
    assert name_forms(STORED) == [STORED, "Margaret Doyle", "Peggy Doyle"]
    assert name_forms("Acme Corporation") == ["Acme Corporation"]
    assert name_forms('"Weird Al" Band') == ['"Weird Al" Band']  # no given name before the quotes


@pytest.mark.parametrize("asked", ["Peggy Doyle", "Margaret Doyle", "margaret doyle", STORED])
def test_the_nickname_and_the_plain_name_find_the_entity(db, asked):
    store = Store(db)
    eid, norm = store.con.execute("SELECT entity_id, norm FROM entities WHERE name = ?", [STORED]).fetchone()
    assert entities_named(store, asked) == [eid]
    assert named_entities(store, [asked]) == [norm]  # local search's own entities
    assert browse.entities(store, asked)[0]["id"] == eid  # serve's entity search box
    assert browse.entity(store, asked)["id"] == eid  # GET /api/entities/{name}
    assert browse.neighbours(store, asked)["nodes"][0]["id"] == eid
    assert check_names(store, f"Who is {asked}?", Settings())["unknown_names"] == []
    store.close()
    with open_index(db) as ix:
        assert ix.entity(asked)["name"] == STORED


def test_a_substring_search_still_lists_every_entity_holding_it(db):
    store = Store(db)
    names = [e["name"] for e in browse.entities(store, "Doyle")]
    assert set(names) == {STORED, "Peggy Doyle Foundation"}
    assert [e["name"] for e in browse.entities(store, "Peggy Doyle Foundation")] == ["Peggy Doyle Foundation"]
    store.close()
