"""Issue 13 item 1: a full disk is one line, exit 1, the index marked incomplete, nothing committed lost,
and the same command resumes once there is room.

The real test mounts a small tmpfs (root only; skipped where mounting is refused); the other injects the
failure at the DuckDB boundary, so it runs everywhere.
"""

import os
import shutil
import subprocess
import uuid

import duckdb
import pytest

import slmgraph.cli.main as cli
from slmgraph.store.db import Store


def _corpus(root):
    root.mkdir()
    for i in range(6):
        (root / f"d{i}.txt").write_text(" ".join(f"Person{j} Name{j} met Acme{j} Corp in Paris{j}."
                                                for j in range(i * 40, i * 40 + 60)))
    return root


def _index(capsys, corpus, db):
    code = cli.main(["index", str(corpus), "--db", str(db), "--quiet"])
    return code, capsys.readouterr().err


def _one_line(err):
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("slmgraph: error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def tmpfs():
    """A 2 MB tmpfs (skipped when this process may not mount one)."""
    path = f"/tmp/slmgraph-tmpfs-{uuid.uuid4().hex[:8]}"
    os.makedirs(path)
    if shutil.which("mount") is None or os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", path], capture_output=True).returncode:
        os.rmdir(path)
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield path
    subprocess.run(["umount", path], check=False)
    os.rmdir(path)


@pytest.mark.parametrize("free_kb", [100, 400, 1000])
def test_a_full_disk_is_one_line_and_the_same_command_resumes(tmp_path, capsys, fake_cli, tmpfs, free_kb):
    corpus = _corpus(tmp_path / "corpus")
    # leave free_kb of the 2 MB free
    with open(os.path.join(tmpfs, "filler"), "wb") as f:
        f.write(b"\0" * ((2048 - free_kb) * 1024))
    db = os.path.join(tmpfs, "x.duckdb")
    code, err = _index(capsys, corpus, db)
    assert code == 1
    line = _one_line(err)
    assert "x.duckdb" in line and "No space left on device" in line and "free on its file system" in line
    assert "run the same command again" in line
    if os.path.exists(db):
        st = Store(db, read_only=True)  # committed rows are there (the .wal is replayed)
        assert st.get_meta("complete") == "0"
        st.close()
    os.remove(os.path.join(tmpfs, "filler"))
    subprocess.run(["mount", "-o", "remount,size=16m", tmpfs], check=True)
    code, err = _index(capsys, corpus, db)
    assert code == 0, err
    st = Store(db, read_only=True)
    assert st.get_meta("complete") == "1" and st.count("entities") > 0 and st.count("community_reports") > 0
    st.close()
    assert not os.path.exists(db + ".wal") or os.path.getsize(db + ".wal") == 0


def test_a_failed_checkpoint_is_reported_not_swallowed(tmp_path, capsys, fake_cli, monkeypatch):
    corpus = _corpus(tmp_path / "corpus")
    db = tmp_path / "x.duckdb"
    real = Store.checkpoint

    def full(self):
        try:
            raise duckdb.IOException('Could not write file "x.duckdb": No space left on device')
        except duckdb.Error as exc:
            raise self.storage_error(exc) from None

    monkeypatch.setattr(Store, "checkpoint", full)
    code, err = _index(capsys, corpus, db)
    assert code == 1
    assert "No space left on device" in _one_line(err) and str(db) in err
    st = Store(db, read_only=True)
    assert st.get_meta("complete") == "0" and st.count("extractions") > 0  # committed work kept
    st.close()
    monkeypatch.setattr(Store, "checkpoint", real)
    code, err = _index(capsys, corpus, db)
    assert code == 0, err


def test_close_raises_when_the_checkpoint_fails(tmp_path):
    st = Store(tmp_path / "x.duckdb", create=True)

    class Con:
        def execute(self, sql):
            raise duckdb.IOException("No space left on device")

        def close(self):
            pass

    real, st.con = st.con, Con()
    with pytest.raises(Exception, match="No space left on device") as exc:
        st.close()
    assert type(exc.value).__name__ == "StorageError"
    real.close()
