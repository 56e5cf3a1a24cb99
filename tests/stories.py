"""Two short stories and an index of them with the scripted fake model, for tests of incremental runs."""

from pathlib import Path

from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index


STORY_B = ("Alice Smith founded Acme Corporation in Paris. Acme Corporation builds robots for Bob Jones.\n\n"
           "Bob Jones lives in Lyon. He met Alice Smith at the Paris Robot Fair.\n")
STORY_C = ("Carol White directs the Lyon Museum. The Lyon Museum shows robots built by Acme Corporation.\n\n"
           "Carol White invited Bob Jones to the museum.\n")


def _index(folder: Path, db: Path, **kw) -> dict:
    settings = Settings(min_community_size=2, chunk_size=60, chunk_overlap=10)
    return run_index(folder, db, settings, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder,
                     say=lambda m: None, **kw)


def _indexed(tmp_path, *stories):
    """``(folder, db)``: ``stories`` written as b.txt, c.txt, ... in a new folder and indexed."""
    folder, db = tmp_path / "in", tmp_path / "x.duckdb"
    folder.mkdir()
    for name, story in zip("bcdefgh", stories):
        (folder / f"{name}.txt").write_text(story)
    _index(folder, db)
    return folder, db
