"""A question too long for the window: the remedy names a window the model allows, or none."""

from __future__ import annotations

import pytest
from conftest import FakeModel

from slmgraph import api
from slmgraph.errors import UserError


def test_a_too_long_question_suggests_a_window_the_model_allows():
    msg = api.question_too_long(300, 2048, 8192)
    assert "pass --n-ctx 3072" in msg and "at most 256" in msg
    msg = api.question_too_long(1500, 8192, 8192)  # the default model's window is already its largest
    assert "--n-ctx" not in msg.split(":", 1)[1] and "shorten it to at most 1024 tokens" in msg
    msg = api.question_too_long(1500, 4096, 8192)
    assert "shorten it to at most 1024 tokens with --n-ctx 8192" in msg and "or to 512" in msg
    assert "pass --n-ctx 12288" in api.question_too_long(1500, 8192, 0)  # trained window unknown


def test_a_prompt_that_cannot_fit_does_not_suggest_a_larger_window_than_the_models(tmp_path):
    from slmgraph.model.client import ModelClient

    client = ModelClient(FakeModel(n_ctx=64, n_ctx_train=64), None, "t")
    with pytest.raises(UserError) as exc:
        client.call("s", "system " * 40, "user " * 40, schema=None, max_tokens=10)
    assert "raise --n-ctx" not in str(exc.value) and "lower --chunk-size" in str(exc.value)
    client = ModelClient(FakeModel(n_ctx=64, n_ctx_train=8192), None, "t")
    with pytest.raises(UserError, match=r"raise --n-ctx \(up to 8192"):
        client.call("s", "system " * 40, "user " * 40, schema=None, max_tokens=10)
