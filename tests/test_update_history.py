"""The same files give the same index whatever the updates before: entity ids, relationships and communities
of an index updated (files added, then removed) equal those of a from-scratch build of the same files."""

import shutil

from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store

LATE = ("zeta.txt", "Aaron Abel met Alice Smith in Paris. Aaron Abel and Bob Jones founded Zenith Labs in Berlin.\n")


def _index(folder, db):
    run_index(folder, db, Settings(extract_mode="json", min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)


def _graph(db) -> dict:
    """The derived tables with their ids, as a query reads them."""
    store = Store(db, read_only=True)
    q = store.con.execute
    try:
        return {
            "entities": q("SELECT entity_id, norm, name, type, description, n_mentions, degree FROM entities "
                          "ORDER BY 1").fetchall(),
            "relationships": q("SELECT rel_id, source_id, target_id, description, weight FROM relationships "
                               "ORDER BY 1").fetchall(),
            "communities": q("SELECT community_id, level, parent_id, size FROM communities ORDER BY 1").fetchall(),
            "members": q("SELECT community_id, entity_id FROM community_members ORDER BY 1, 2").fetchall(),
            "reports": q("SELECT community_id, title, summary FROM community_reports ORDER BY 1").fetchall(),
        }
    finally:
        store.close()


def _fresh(tmp_path, corpus, name):
    folder, db = tmp_path / name, tmp_path / f"{name}.duckdb"
    shutil.copytree(corpus, folder)
    _index(folder, db)
    return _graph(db)


def test_files_added_then_removed_leave_the_index_of_a_fresh_build(tmp_path, corpus):
    (corpus / "omega.txt").write_text("Quinn sailed to Lisbon with Alice Smith. Quinn loved Lisbon and Paris.\n",
                                      encoding="utf-8")
    fresh = _fresh(tmp_path, corpus, "fresh")
    db = tmp_path / "ix.duckdb"
    _index(corpus, db)
    # the added file names "Zed Quinn": while it is indexed, "Quinn" is resolved into that entity and leaves the graph
    (corpus / LATE[0]).write_text(LATE[1] + "Zed Quinn met Bob Jones in Lisbon.\n", encoding="utf-8")
    _index(corpus, db)
    store = Store(db, read_only=True)
    assert "quinn" not in {n for n, in store.con.execute("SELECT norm FROM entities").fetchall()}
    store.close()
    (corpus / LATE[0]).unlink()
    _index(corpus, db)
    assert _graph(db) == fresh


def test_a_file_added_by_an_update_gives_the_ids_of_a_fresh_build(tmp_path, corpus):
    db = tmp_path / "ix.duckdb"
    _index(corpus, db)
    (corpus / LATE[0]).write_text(LATE[1], encoding="utf-8")
    _index(corpus, db)
    got = _graph(db)
    assert any(n.startswith("aaron") for _, n, *_ in got["entities"])
    assert got == _fresh(tmp_path, corpus, "fresh")
