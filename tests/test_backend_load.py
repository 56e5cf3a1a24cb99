"""slmgraph.model.backend's model load and slmgraph.model.llama_log: llama.cpp's own lines kept off the terminal,
one-line errors for a window the model cannot have, threads claimed only before a model call."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from stories import STORY_B

import slmgraph.model.backend as backend
import slmgraph.model.threads as threads
from slmgraph.model.adapter import LlamaAdapter
from slmgraph.model.llama_log import LLAMA_LOG, LlamaLog
from slmgraph.errors import UserError


def _gguf(tmp_path: Path) -> Path:
    p = tmp_path / "m.gguf"
    p.write_bytes(b"GGUF" + b"\0" * 64)
    return p


def test_an_n_ctx_over_the_trained_window_is_one_line_without_llama_cpp_lines(tmp_path, monkeypatch, capfd):
    LLAMA_LOG.install()
    if LLAMA_LOG.callback is None:
        pytest.skip("llama-cpp-python is not installed")

    def failing_load(llama_cpp, **kw):  # what llama.cpp does with a window it cannot allocate
        LLAMA_LOG.callback(3, b"llama_init_from_model: failed to initialize the context\n", None)
        LLAMA_LOG.callback(3, b"llama_kv_cache: failed to allocate buffer for kv cache\n", None)
        raise ValueError("Failed to create llama_context")

    monkeypatch.setattr(LlamaAdapter, "load", classmethod(lambda cls, llama_cpp, **kw:
                                                                    failing_load(llama_cpp, **kw)))
    monkeypatch.setattr(backend, "trained_window", lambda llama_cpp, path: 4096)
    with pytest.raises(UserError, match=r"--n-ctx 8192 exceeds the 4096-token window m.gguf was trained for"):
        backend.LlamaModel(_gguf(tmp_path), n_ctx=8192)
    assert capfd.readouterr().err == ""


def test_a_window_past_the_default_is_refused_before_llama_cpp_allocates_it(tmp_path, monkeypatch, capfd):
    """llama.cpp allocates the whole KV cache at load: --n-ctx 999999999 got the process killed (out of
    memory) before it could fail. Past the default window the trained one is read first."""
    LLAMA_LOG.install()
    if LLAMA_LOG.callback is None:
        pytest.skip("llama-cpp-python is not installed")
    monkeypatch.setattr(LlamaAdapter, "load", classmethod(lambda cls, llama_cpp, **kw: pytest.fail("loaded")))
    monkeypatch.setattr(backend, "trained_window", lambda llama_cpp, path: 8192)
    with pytest.raises(UserError, match=r"--n-ctx 999999999 exceeds the 8192-token window m.gguf was trained for"):
        backend.LlamaModel(_gguf(tmp_path), n_ctx=999_999_999)
    assert capfd.readouterr().err == ""


def test_a_load_that_fails_for_another_reason_names_llama_cpps_line_in_ours(tmp_path, monkeypatch, capfd):
    LLAMA_LOG.install()
    if LLAMA_LOG.callback is None:
        pytest.skip("llama-cpp-python is not installed")

    def failing_load(cls, llama_cpp, **kw):
        LLAMA_LOG.callback(3, b"llama_model_load: error loading model: tensor 'x' data is not within bounds\n",
                              None)
        raise ValueError("Failed to load model from file")

    monkeypatch.setattr(LlamaAdapter, "load", classmethod(failing_load))
    monkeypatch.setattr(backend, "trained_window", lambda llama_cpp, path: None)
    with pytest.raises(UserError) as exc:
        backend.LlamaModel(_gguf(tmp_path), n_ctx=4096)
    assert "tensor 'x' data is not within bounds" in str(exc.value) and "complete GGUF" in str(exc.value)
    assert capfd.readouterr().err == ""


def test_held_log_lines_are_printed_when_not_held(capfd):
    LLAMA_LOG.install()
    if LLAMA_LOG.callback is None:
        pytest.skip("llama-cpp-python is not installed")
    with LLAMA_LOG.held() as held:
        LLAMA_LOG.callback(3, b"held error\n", None)
        LLAMA_LOG.callback(2, b"a warning, never shown\n", None)
    LLAMA_LOG.callback(3, b"shown error\n", None)
    assert held == ["held error\n"]
    assert capfd.readouterr().err == "shown error\n"


def test_a_ctrl_c_during_the_load_is_raised_when_it_ends_not_dropped_in_the_log_callback(tmp_path, monkeypatch,
                                                                                          capfd):
    LLAMA_LOG.install()
    if LLAMA_LOG.callback is None:
        pytest.skip("llama-cpp-python is not installed")
    went_on = []

    def load(cls, llama_cpp, **kw):  # Ctrl-C while llama.cpp loads and logs (the log callback is Python)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(3):
            LLAMA_LOG.callback(2, b"llama_model_loader: loaded meta data\n", None)
        went_on.append(True)
        raise ValueError("Failed to load model from file")

    monkeypatch.setattr(LlamaAdapter, "load", classmethod(load))
    monkeypatch.setattr(backend, "trained_window", lambda llama_cpp, path: None)
    # Python's own Ctrl-C handler, as the CLI has it (an earlier test in the session may have installed another).
    prev = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            backend.LlamaModel(_gguf(tmp_path), n_ctx=4096)
        assert went_on  # llama.cpp's call finishes, then the interrupt is raised
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, prev)
    assert "Exception ignored" not in capfd.readouterr().err


@pytest.mark.integration
def test_the_cli_says_one_line_for_an_n_ctx_the_model_cannot_have(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text(STORY_B)
    exe = Path(sys.executable).with_name("slmgraph")
    r = subprocess.run([str(exe), "index", str(tmp_path / "in"), "--db", str(tmp_path / "x.duckdb"),
                        "--n-ctx", "999999999", "--quiet"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [r.stderr.strip()] and r.stderr.startswith("slmgraph: error: --n-ctx 999999999 "
                                                                                "exceeds the 8192-token window"), r.stderr


@pytest.mark.integration
def test_a_normal_load_prints_nothing_from_llama_cpp():
    code = ("from slmgraph.model.backend import LlamaModel\n"
            "from slmgraph.model.gguf import default_model_path\n"
            "m = LlamaModel(default_model_path(), n_ctx=2048, n_threads=1)\n"
            "m.complete(*m.prompt_tokens(m.render('Say hi.', 'Hi')), schema=None, max_tokens=4)\n")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stderr
    assert err == "", err


def test_load_model_claims_threads_only_when_a_model_call_is_about_to_run(tmp_path, monkeypatch, caplog):
    made = {}

    class Loaded:
        def __init__(self, path, **kw):
            made.update(kw)

    monkeypatch.setattr(backend, "LlamaModel", Loaded)
    monkeypatch.setattr(threads, "claimed_elsewhere", lambda registry=None: 8)
    monkeypatch.setattr(threads, "REGISTRY", tmp_path / "reg")
    with caplog.at_level(logging.WARNING, logger="slmgraph"):
        backend.load_model(str(_gguf(tmp_path)), 4096, 2, 42)
        assert "other slmgraph processes" not in caplog.text  # loading alone says nothing
        granted = made["claim"](2)  # the first model call
    assert granted == 1 and "already run in other slmgraph processes" in caplog.text


def test_llama_cpp_notices_logged_as_errors_stay_off_stderr():
    keep = LlamaLog().keep
    swa = "llama_kv_cache_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/13194)\n"
    assert not keep(3, swa, verbose=False)          # the Gemma 3 notice, logged at GGML_LOG_LEVEL_ERROR
    assert not keep(5, "continued\n", verbose=False)  # its continuation follows it
    assert keep(3, "llama_model_load: error loading model\n", verbose=False)  # real errors still shown
    assert keep(5, "more of the error\n", verbose=False)
    assert not keep(2, "llama_context: n_ctx = 512\n", verbose=False)
    assert keep(2, "llama_context: n_ctx = 512\n", verbose=True)


def test_a_continuation_line_follows_the_line_of_its_own_filter():
    shown, dropped = LlamaLog(), LlamaLog()
    assert shown.keep(3, "llama_model_load: error loading model\n", verbose=False)
    assert not dropped.keep(3, "llama_kv_cache_iswa: using full-size SWA cache\n", verbose=False)
    assert shown.keep(5, "more of the error\n", verbose=False)
    assert not dropped.keep(5, "more of the notice\n", verbose=False)


@pytest.mark.integration
def test_loading_the_base_gemma_model_prints_no_llama_cpp_line():
    import subprocess

    from slmgraph.models import find_gemma_model

    try:
        path = find_gemma_model()
    except Exception as exc:  # noqa: BLE001 - the bench extra is not installed
        pytest.skip(f"Gemma 3 270M not installed ({exc})")
    code = ("from slmgraph.model.llama_log import install_log_filter; install_log_filter()\n"
            "from slmgraph.model.backend import LlamaModel\n"
            f"LlamaModel({str(path)!r}, n_ctx=512, n_threads=1)\n")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stderr
    assert "llama_" not in err and "SWA" not in err, err
