"""An update killed during the extraction of new files: a query answers from the last complete build, and the
document counts it states (the overview's "Across the N documents", each theme's coverage) are that build's,
not those of the documents table the unfinished update already grew."""

import os
import signal
import subprocess
import sys
from pathlib import Path

from conftest import FakeEmbedder, FakeModel
from test_interrupted_update import CHILD, TESTS, _default_sigint, _index, _wait_hold

import slmgraph
from slmgraph.query.documents import corpus_documents, unit_sources
from slmgraph.store.db import Store


def _interrupt_during_extract(corpus: Path, db: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(
        [str(Path(slmgraph.__file__).parent.parent), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(corpus), str(db), "extract", str(TESTS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_default_sigint)
    _wait_hold(proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err, err[-2000:]


def test_counts_during_an_interrupted_update_are_those_of_the_last_complete_build(tmp_path, corpus):
    db = tmp_path / "ix.duckdb"
    _index(corpus, db)
    store = Store(db, read_only=True)
    built = sorted(d.doc_id for d in corpus_documents(store))
    store.close()
    assert len(built) == 3
    (corpus / "delta.txt").write_text("Grace Hall flew from Berlin to Paris with Frank Green. Grace Hall met "
                                      "Eve Black at Berlin Institute.\n", encoding="utf-8")
    _interrupt_during_extract(corpus, db)

    store = Store(db, read_only=True)
    try:
        assert store.get_meta("complete") != "1" and store.count("documents") == 4  # the new file is ingested
        assert sorted(d.doc_id for d in corpus_documents(store)) == built
        assert len(corpus_documents(store, built=False)) == 4
        new_no = store.con.execute("SELECT t.unit_no FROM text_units t JOIN documents d USING (doc_id) "
                                   "WHERE d.path = 'delta.txt'").fetchone()[0]
        assert unit_sources(store, [new_no])[new_no]["path"] == "delta.txt"  # still named when cited
    finally:
        store.close()
    with slmgraph.open(db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        assert ix.interrupted
        ans = ix.query("What are the main themes across these documents?", method="global")
        assert "4 documents" not in ans.text and "of 4" not in ans.text, ans.text
        assert "Across the 3 documents" in ans.text or "of 3 documents" in ans.text, ans.text

    _index(corpus, db)  # finished: every document counts
    store = Store(db, read_only=True)
    try:
        assert len(corpus_documents(store)) == 4
    finally:
        store.close()
