"""The machine-wide llama.cpp thread budget."""

import os

from slmgraph.model.threads import claim_threads, claimed_elsewhere


def test_second_process_gets_the_free_cores_and_a_warning(tmp_path):
    (tmp_path / "1").write_text("2")          # pid 1 is alive: another process holds 2 threads
    (tmp_path / "999999999").write_text("2")  # a dead process: its claim is stale
    warnings = []
    assert claimed_elsewhere(tmp_path) == 2
    assert not (tmp_path / "999999999").exists()
    granted = claim_threads(2, False, warnings.append, registry=tmp_path, cores=3)
    assert granted == 1 and len(warnings) == 1 and "using 1 thread" in warnings[0]
    assert (tmp_path / str(os.getpid())).read_text() == "1"


def test_explicit_threads_are_kept_with_a_warning(tmp_path):
    (tmp_path / "1").write_text("2")
    warnings = []
    assert claim_threads(2, True, warnings.append, registry=tmp_path, cores=2) == 2
    assert "oversubscribes" in warnings[0]


def test_alone_no_warning(tmp_path):
    warnings = []
    assert claim_threads(2, False, warnings.append, registry=tmp_path, cores=2) == 2
    assert warnings == []
