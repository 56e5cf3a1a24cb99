"""The Model protocol: the tests' fake, the dry-run model and LlamaModel implement the same members and signatures."""

from __future__ import annotations

import inspect

import pytest
from conftest import FakeModel

from slmgraph.model.adapter import LLAMA_CPP_SUPPORTED, _version_tuple, check_llama_cpp_version
from slmgraph.model.backend import LlamaModel
from slmgraph.model.protocol import Model
from slmgraph.errors import UserError
from slmgraph.tools.estimate import DryRunModel

METHODS = ["tokenize", "detokenize", "render", "prompt_tokens", "complete", "score_options", "continuation",
           "follow_up", "reserve_threads"]
ATTRIBUTES = ["name", "fingerprint", "n_ctx", "n_ctx_train", "n_params", "path", "n_threads"]


def _params(fn) -> list[tuple[str, object, object]]:
    """``(name, kind, has default)`` of a function's parameters, without ``self``."""
    return [(p.name, p.kind, p.default is not inspect.Parameter.empty)
            for p in inspect.signature(fn).parameters.values() if p.name != "self"]


def test_protocol_lists_every_member():
    members = {n for n in dir(Model) if not n.startswith("_")} | set(Model.__annotations__)
    assert members == set(METHODS) | set(ATTRIBUTES)


def test_fake_model_implements_the_protocol():
    fake = FakeModel()
    assert isinstance(fake, Model)
    for m in METHODS:
        assert _params(getattr(FakeModel, m)) == _params(getattr(Model, m)), m


def test_dry_run_model_implements_the_protocol():
    dry = DryRunModel(FakeModel(), canned="{}")
    assert isinstance(dry, Model)
    for m in METHODS:
        assert _params(getattr(DryRunModel, m)) == _params(getattr(Model, m)), m


def test_llama_model_methods_match_the_protocol():
    for m in METHODS:
        # LlamaModel may add keyword-only tuning arguments with defaults (max_loop_breaks).
        theirs = [p for p in _params(getattr(LlamaModel, m)) if not (p[1] is inspect.Parameter.KEYWORD_ONLY and p[2]
                                                                     and p[0] not in dict.fromkeys(
                                                                         q[0] for q in _params(getattr(Model, m))))]
        assert theirs == _params(getattr(Model, m)), m


def test_a_model_missing_a_member_is_not_a_model():
    class NoFollowUp(FakeModel):
        follow_up = None

    assert not isinstance(NoFollowUp(), Model)
    assert not isinstance(object(), Model)


def test_llama_cpp_version_range():
    low, high = LLAMA_CPP_SUPPORTED
    check_llama_cpp_version(".".join(map(str, low)))
    check_llama_cpp_version("0.3.36")
    assert _version_tuple("0.3.36rc1") == (0, 3, 36)
    for bad in (".".join(map(str, high)), "0.2.90", "1.0.0"):
        with pytest.raises(UserError, match=r"llama-cpp-python .* supports >=0\.3\.0,<0\.4\.0"):
            check_llama_cpp_version(bad)
