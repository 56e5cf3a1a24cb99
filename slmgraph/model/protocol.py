"""The model interface: what the client and the stages program against.

:class:`Model` is the typed protocol (``LlamaModel`` in :mod:`slmgraph.model.backend`, the tests'
fake in ``tests/conftest.py`` and the estimate's dry run implement it); :class:`Generation`,
:class:`Prompt` and :class:`Choice` are what its methods take and return; :data:`SAMPLER_VERSION` is
the part of every cache key that names the sampler.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, runtime_checkable

import numpy as np

#: Part of every cache key: bump it when a change to the sampler (greedy pick,
#: loop guard, stop rules) can change what the same prompt generates. "3":
#: cache entries hold the generated token ids, which a follow-up continues
#: (older entries, without them, must not be continued from retokenized text).
SAMPLER_VERSION = "3"


@dataclass
class Generation:
    """Result of one completion.

    Attributes:
        text: generated text (without the prompt).
        prompt_tokens: all prompt tokens of the call.
        cached_tokens: prompt tokens reused from the KV cache (not evaluated).
        completion_tokens: generated tokens.
        seconds: wall-clock of the call.
        finish_reason: ``stop`` (end of generation), ``length`` (max_tokens hit),
            ``deadline`` or ``repetition`` (runaway guards).
        from_cache: served from the index's cache: no model call was made.
        prompt_seconds: of ``seconds``, the time spent evaluating the prompt
            (the rest is generation); 0 when not measured.
        tokens: the generated token ids (None when unknown, e.g. a fake model).
        history: the whole exchange as segments ``[(token ids, one_at_a_time), ...]``
            in evaluation order (fixed part, prompt, generated tokens, follow-up
            turns, ...), set by :class:`ModelClient` so that a follow-up can continue it.
        key: the content key of the call (cache key), set by :class:`ModelClient`.
    """

    text: str
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    seconds: float
    finish_reason: str
    from_cache: bool = False
    prompt_seconds: float = 0.0
    tokens: list[int] | None = None
    history: tuple | None = None
    key: str = ""


@dataclass
class Prompt:
    """A prompt split for prefix reuse.

    ``fixed`` is the template part that is identical across calls of one stage
    (system instructions + few-shot examples, ending on a newline); ``lead`` is
    template text between it and the user text; ``content`` is the per-call
    user text; ``tail`` is the template after the content (the assistant turn
    opener).
    """

    fixed: str
    lead: str
    content: str
    tail: str


@dataclass
class Choice:
    """Result of scoring a few fixed options after one prompt (no text is generated).

    The model's log-probability of each option's token sequence after the
    prompt is read off its next-token distributions: a choice costs prompt
    evaluation only and cannot degenerate (ARCHITECTURE.md "Choices by
    probability").

    Attributes:
        options: the options, as given (their text is tokenized as it stands,
            so ``" yes"`` and ``"yes"`` are different options).
        logprobs: natural-log probability of each option's whole token
            sequence after the prompt (``-inf`` when the model gives it no mass).
        prompt_tokens: all prompt tokens of the call.
        cached_tokens: prompt tokens reused from the KV cache (not evaluated).
        seconds: wall-clock of the call.
        prompt_seconds: of ``seconds``, the time spent evaluating the prompt.
        from_cache: served from the index's cache: no model call was made.
        key: the content key of the call (cache key), set by :class:`ModelClient`.
    """

    options: list[str]
    logprobs: list[float]
    prompt_tokens: int = 0
    cached_tokens: int = 0
    seconds: float = 0.0
    prompt_seconds: float = 0.0
    from_cache: bool = False
    key: str = ""

    @property
    def probs(self) -> list[float]:
        """Probabilities renormalised over the options (sum 1; uniform when every option has no mass)."""
        lp = np.array(self.logprobs, dtype=np.float64)
        finite = np.isfinite(lp)
        if not finite.any():
            return [1.0 / len(lp)] * len(lp)
        lp = np.where(finite, lp, -np.inf)
        e = np.exp(lp - lp[finite].max())
        return (e / e.sum()).tolist()

    @property
    def best(self) -> int:
        """Index of the most probable option (the first on a tie)."""
        probs = self.probs
        return max(range(len(probs)), key=lambda i: (probs[i], -i))


@runtime_checkable
class Model(Protocol):
    """What the client and the stages need from a model: :class:`slmgraph.model.backend.LlamaModel` or a test fake.

    Token ids are ints of the model's own tokenizer; windows and budgets are
    counted in them. ``isinstance(x, Model)`` checks that every member below
    exists (a unit test holds the tests' fake to it).

    Attributes:
        name: file name of the model (ledger column ``model``).
        fingerprint: content fingerprint of the weights (part of every cache key).
        n_ctx: context window, tokens.
        n_params: parameter count (stages let models of 1B or more write more).
        path: the GGUF file, or None for a model with no file (a fake): worker
            processes load their own copy from it.
        n_threads: llama.cpp threads this process uses (the thread budget, final
            once :meth:`reserve_threads` has run); 0 for a model that runs no
            llama.cpp threads (a fake), whose callers then use the settings' budget.
        n_ctx_train: the window the model was trained for, tokens (0 when unknown):
            the largest ``--n-ctx`` it accepts.
    """

    name: str
    fingerprint: str
    n_ctx: int
    n_ctx_train: int
    n_params: int
    path: Path | None
    n_threads: int

    def reserve_threads(self) -> int:
        """Claim this process's threads before the first model call (see LlamaModel.reserve_threads);
        returns ``n_threads``."""
        ...

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` in the model's own tokenizer (no BOS)."""
        ...

    def detokenize(self, tokens: list[int]) -> str:
        """Text of token ids."""
        ...

    def render(self, system: str, user: str) -> Prompt:
        """A system + user chat rendered with the model's template, split for prefix reuse."""
        ...

    def prompt_tokens(self, prompt: Prompt) -> tuple[list[int], list[int]]:
        """``(fixed tokens, rest tokens)`` of a rendered prompt."""
        ...

    def complete(self, fixed: list[int], rest: list[int], *, schema: dict | None, max_tokens: int,
                 deadline_s: float | None = None,
                 on_text: Callable[[str], None] | None = None) -> Generation:
        """Greedy completion of ``fixed + rest`` under an optional JSON schema (see LlamaModel.complete)."""
        ...

    def score_options(self, fixed: list[int], rest: list[int], options: list[str]) -> Choice:
        """Log-probability of each option after ``fixed + rest`` (see LlamaModel.score_options)."""
        ...

    def continuation(self, user: str) -> list[int]:
        """Tokens closing the assistant's turn and asking ``user`` in a new turn (see LlamaModel.continuation)."""
        ...

    def follow_up(self, history: list[tuple[list[int], bool]], extra: list[int], *, schema: dict | None = None,
                  choices: list[str] | None = None, max_tokens: int = 1,
                  deadline_s: float | None = None) -> Generation:
        """Continue an exchange with ``extra`` after ``history`` (see LlamaModel.follow_up)."""
        ...
