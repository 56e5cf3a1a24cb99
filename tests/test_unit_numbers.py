"""Text-unit numbers, the ids answers cite: stable when files are added or removed, kept from the previous schema
version, the same in search and export."""

from __future__ import annotations

import hashlib
from pathlib import Path

from conftest import FakeEmbedder, FakeModel
from stories import STORY_B, STORY_C, _index, _indexed

from slmgraph.config.settings import Settings
from slmgraph.query.answer import unit_numbers
from slmgraph.store.db import Store
from slmgraph.store.schema import SCHEMA_VERSION


def _numbers(db: Path) -> dict:
    store = Store(db, read_only=True)
    try:
        return unit_numbers(store)
    finally:
        store.close()


def _doc_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _early_text(before: list[str]) -> str:
    """A story whose document id sorts before every id in ``before`` (the old numbering's order)."""
    for i in range(10_000):
        text = f"Dora Green ({i}) sells Acme Corporation robots in Paris.\n\nDora Green met Alice Smith.\n"
        if all(_doc_id(text) < d for d in before):
            return text
    raise AssertionError("no early document id found")


def test_adding_a_file_that_sorts_first_keeps_every_citation_number(tmp_path):
    folder, db = _indexed(tmp_path, STORY_B, STORY_C)
    before = _numbers(db)
    assert sorted(before.values()) == list(range(1, len(before) + 1))
    early = _early_text([_doc_id(STORY_B), _doc_id(STORY_C)])
    (folder / "a.txt").write_text(early)  # sorts first by path and by document id
    _index(folder, db)
    after = _numbers(db)
    assert {c: after[c] for c in before} == before  # old answers' citations still point at the same units
    new = sorted(after[c] for c in after if c not in before)
    assert new and new[0] == len(before) + 1 and len(set(after.values())) == len(after)


def test_a_removed_units_number_is_never_given_again(tmp_path):
    folder, db = _indexed(tmp_path, STORY_B, STORY_C)
    first = _numbers(db)
    (folder / "c.txt").unlink()  # c.txt's units hold the highest numbers
    _index(folder, db)
    (folder / "d.txt").write_text(STORY_C.replace("Carol White", "Erin Black"))
    _index(folder, db)
    now = _numbers(db)
    new = [n for c, n in now.items() if c not in first]
    assert new and min(new) > max(first.values())


def test_the_same_corpus_gives_the_same_numbers_in_path_order(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "b.txt").write_text(STORY_B)
    (folder / "c.txt").write_text(STORY_C)
    _index(folder, tmp_path / "1.duckdb")
    _index(folder, tmp_path / "2.duckdb")
    one, two = _numbers(tmp_path / "1.duckdb"), _numbers(tmp_path / "2.duckdb")
    assert one == two
    store = Store(tmp_path / "1.duckdb", read_only=True)
    order = [c for c, in store.con.execute("SELECT t.chunk_id FROM text_units t JOIN documents d USING (doc_id) "
                                           "ORDER BY d.path, t.ord").fetchall()]
    store.close()
    assert [one[c] for c in order] == list(range(1, len(order) + 1))


def _as_version_1(db: Path) -> None:
    """Make ``db`` look like an index written by schema version 1 (no stored numbers)."""
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE text_units DROP COLUMN unit_no")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.execute("DELETE FROM meta WHERE key = 'next_unit_no'")
    con.execute("DROP TABLE migrations")  # version 1 recorded no migration steps
    con.close()


def test_an_index_of_the_previous_version_keeps_the_numbers_it_cited(tmp_path):
    folder, db = _indexed(tmp_path, STORY_B, STORY_C)
    _as_version_1(db)
    store = Store(db, read_only=True)  # a query on the old index, before any re-index
    old = unit_numbers(store)
    v1 = [c for c, in store.con.execute("SELECT chunk_id FROM text_units ORDER BY doc_id, ord").fetchall()]
    store.close()
    assert old == {c: i for i, c in enumerate(v1, start=1)}  # version 1's numbering
    store = Store(db)  # opened for writing: migrated
    assert store.get_meta("schema_version") == SCHEMA_VERSION and unit_numbers(store) == old
    store.close()
    (folder / "a.txt").write_text(_early_text([_doc_id(STORY_B), _doc_id(STORY_C)]))
    _index(folder, db)
    after = _numbers(db)
    assert {c: after[c] for c in old} == old and min(n for c, n in after.items() if c not in old) > len(old)


def test_text_unit_search_cites_the_stored_numbers(tmp_path):
    from slmgraph.model.client import ModelClient
    from slmgraph.config.prompting import Prompts
    from slmgraph.query.engines.global_search import text_unit_search

    folder, db = _indexed(tmp_path, STORY_B)
    (folder / "a.txt").write_text(_early_text([_doc_id(STORY_B)]))
    _index(folder, db)
    store = Store(db, read_only=True)
    ans = text_unit_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), Settings(),
                           "Who founded Acme Corporation?", progress=False, embedder=FakeEmbedder())
    numbers = unit_numbers(store)
    store.close()
    assert ans.context and all(c["source"] == numbers[c["id"]] for c in ans.context)


def test_export_gives_text_units_the_number_answers_cite(tmp_path):
    import duckdb

    from slmgraph.tools.export import export

    folder, db = _indexed(tmp_path, STORY_B)
    (folder / "a.txt").write_text(_early_text([_doc_id(STORY_B)]))
    _index(folder, db)
    store = Store(db, read_only=True)
    export(store, tmp_path / "out", "csv")
    numbers = unit_numbers(store)
    store.close()
    got = dict(duckdb.sql(f"SELECT id, human_readable_id FROM '{tmp_path / 'out' / 'text_units.csv'}'").fetchall())
    assert got == numbers
