"""A Ctrl-C (a real SIGINT to a subprocess) during an update of a complete index, at several points: a query
before the re-run answers from the index as the last complete build left it and says in one line how to
finish the update; the re-run gives the index an uninterrupted update gives."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import FakeEmbedder, FakeModel

import slmgraph
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store

TESTS = Path(__file__).resolve().parent

#: The child: an index run with the fake model whose stage ``argv[3]`` stops for a minute after its work
#: (``extract``: before it, right after ingest committed), printing HOLD so the test can send its SIGINT.
CHILD = textwrap.dedent("""
    import dataclasses, sys, time
    sys.path.insert(0, sys.argv[4])
    from conftest import FakeEmbedder, FakeModel
    import slmgraph.indexing.pipeline as p
    from slmgraph.config.settings import Settings

    def hold():
        print("HOLD", flush=True)
        time.sleep(120)

    def held(run, before):
        def go(ctx):
            if before:
                hold()
            res = run(ctx)
            if not before:
                hold()
            return res
        return go

    p.STAGES[:] = [dataclasses.replace(st, run=held(st.run, st.name == "extract")) if st.name == sys.argv[3]
                   else st for st in p.STAGES]
    p.run_index(sys.argv[1], sys.argv[2], Settings(extract_mode="json", min_community_size=2), progress=False,
                model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
""")


def _default_sigint() -> None:
    # A child inherits an ignored SIGINT (an earlier test's library may leave the runner ignoring it), and
    # Python then raises no KeyboardInterrupt: the child gets the default disposition back before it starts.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_hold(proc) -> None:
    """Read the child's stdout up to its HOLD line (a line printed before it, such as a library's notice, is
    skipped); fail with what it printed if it ends without one."""
    seen = []
    for line in proc.stdout:
        if line.strip() == "HOLD":
            return
        seen.append(line)
    raise AssertionError("".join(seen)[-1000:] + proc.communicate(timeout=60)[1][-2000:])


def _index(folder, db):
    run_index(folder, db, Settings(extract_mode="json", min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)


def _derived(db):
    """The tables a query reads that the derived stages write."""
    store = Store(db, read_only=True)
    q = store.con.execute
    snap = {
        "entities": q("SELECT norm, name, type, description FROM entities ORDER BY norm").fetchall(),
        "communities": q("SELECT c.level, list(e.norm ORDER BY e.norm) FROM communities c JOIN community_members m "
                         "USING (community_id) JOIN entities e USING (entity_id) GROUP BY c.community_id, c.level "
                         "ORDER BY 1, 2").fetchall(),
        "reports": q("SELECT community_id, level, title, summary FROM community_reports ORDER BY 1").fetchall(),
        "embeddings": q("SELECT kind, item_id, model FROM embeddings WHERE kind <> 'text_unit' "
                        "ORDER BY 1, 2").fetchall(),
    }
    store.close()
    return snap


def _update(folder: Path) -> None:
    with open(folder / "alpha.txt", "a", encoding="utf-8") as f:
        f.write("Frank Green sold Acme Corporation a launch pad near Paris.\n")
    (folder / "delta.txt").write_text("Grace Hall flew from Berlin to Paris with Frank Green. Grace Hall met "
                                      "Eve Black at Berlin Institute.\n", encoding="utf-8")
    (folder / "gamma.txt").unlink()


@pytest.mark.parametrize("point", ["extract", "graph", "communities", "reports"])
def test_a_query_after_a_ctrl_c_in_an_update_answers_from_the_last_complete_build(tmp_path, corpus, point):
    db = tmp_path / "ix.duckdb"
    _index(corpus, db)
    before = _derived(db)
    _update(corpus)
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(
        [str(Path(slmgraph.__file__).parent.parent), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(corpus), str(db), point, str(TESTS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=_default_sigint)
    _wait_hold(proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err, err[-2000:]

    assert _derived(db) == before  # nothing the last complete build wrote was replaced half-way
    with slmgraph.open(db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        assert "interrupted" in ix.interrupted
        assert f"re-run 'slmgraph index {corpus} --db {db}'" in ix.interrupted
        notes = []
        for method in ("global", "local", "basic", "lazy"):
            ans = ix.query("Who founded Acme Corporation?", method=method, on_note=notes.append)
            assert ans.text.strip(), method
            assert ans.details["interrupted"] == ix.interrupted
        assert notes.count(ix.interrupted) == 1  # said once, when the first question loads the model

    _index(corpus, db)  # the re-run finishes the update
    with slmgraph.open(db, model=FakeModel(), embedder_factory=FakeEmbedder) as ix:
        assert ix.interrupted is None
    store = Store(db, read_only=True)
    assert store.get_meta("complete") == "1"
    assert not store.con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name <> 'main'").fetchone()[0]
    store.close()


def test_an_interrupted_update_resumes_to_the_index_of_an_uninterrupted_one(tmp_path, corpus):
    import shutil

    db, ref = tmp_path / "ix.duckdb", tmp_path / "ref.duckdb"
    _index(corpus, db)
    shutil.copy(db, ref)
    _update(corpus)
    _index(corpus, ref)
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(
        [str(Path(slmgraph.__file__).parent.parent), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(corpus), str(db), "reports", str(TESTS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=_default_sigint)
    _wait_hold(proc)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    _index(corpus, db)
    assert _derived(db) == _derived(ref)


def test_an_index_never_completed_is_still_refused(tmp_path, corpus, monkeypatch):
    import slmgraph.indexing.pipeline as pipeline
    from slmgraph.errors import UserError

    def crash(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "run_extraction", crash)
    db = tmp_path / "ix.duckdb"
    with pytest.raises(KeyboardInterrupt):
        _index(corpus, db)
    with pytest.raises(UserError, match="is not complete"):
        slmgraph.open(db, model=FakeModel(), embedder_factory=FakeEmbedder)
