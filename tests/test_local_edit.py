"""Local search orders the text units tied on their selected entities by their nearness to the question, not
by chunk id (a hash of the document's bytes): editing one figure of a document, then updating the index, keeps
its unit ahead of a neighbour that names the same people but is not about the question."""

from conftest import FakeEmbedder, FakeModel

import slmgraph
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index

QUESTION = "How much does the plus plan cost a month?"


def _index(folder, db):
    run_index(folder, db, Settings(extract_mode="json", min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)


def _first_unit(db) -> str:
    with slmgraph.open(db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        ans = ix.query(QUESTION, method="local")
        units = [c["id"] for c in ans.context if c["kind"] == "text_unit"]
        assert len(units) == 2, ans.context
        return ix.store.con.execute("SELECT text FROM text_units WHERE chunk_id = ?", [units[0]]).fetchone()[0]


def test_an_edited_units_rank_in_local_context_does_not_follow_its_new_chunk_id(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    # Both name the same two people (a tie on the selected entities); the second is about the question and
    # sorts after the first by path, so only nearness to the question puts it first.
    (corpus / "a.txt").write_text("Alice Smith and Bob Jones talked about the garden party and the rain.\n",
                                  encoding="utf-8")
    db = tmp_path / "ix.duckdb"
    for price in ("8.49", "10.99"):  # the edit gives b.txt a chunk id after a.txt's
        (corpus / "b.txt").write_text(f"Alice Smith and Bob Jones said the plus plan will cost {price} a month.\n",
                                      encoding="utf-8")
        _index(corpus, db)  # an update after the first
        assert f"cost {price}" in _first_unit(db), price
