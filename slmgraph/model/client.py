"""The model client: what stages call for a model answer.

:class:`ModelClient` renders a prompt with the model's template, checks it
against the window budget, answers from the index's content-addressed cache
(``llm_cache``) when it can, and otherwise runs the :class:`slmgraph.model.protocol.Model`
and writes one ``llm_calls`` ledger row per real call with the call's cache key
and output. It never imports llama-cpp-python: the adapter does
(ARCHITECTURE.md "The client: budgets, cache and ledger").

:class:`Choice`, :class:`Generation` and :class:`Prompt` are defined by the
model protocol (:mod:`slmgraph.model.protocol`) and re-exported here for the stages.
"""

from __future__ import annotations

import hashlib
import json
from typing import Callable

import numpy as np

from slmgraph.model.protocol import SAMPLER_VERSION, Choice, Generation, Model, Prompt
from slmgraph.errors import UserError
from slmgraph.store.db import Store, dumps

# --- Budgets of one model call (ARCHITECTURE.md "Budgets": "Deadlines", "Answer reserves").
# Wall-clock deadlines per call, seconds: runaway generations to the 8k limit otherwise take most of
# a build's wall time (ARCHITECTURE.md "Deadlines"); a call past its
# deadline stops (finish reason ``deadline``) and is never cached.
#: A one-sentence call: the opening sentence of an extractive answer, a relevance rating.
DEADLINE_SENTENCE_S = 60.0
#: One text unit's call: extraction, gleaning, claims; an element summary.
DEADLINE_UNIT_S = 120.0
#: A community report, a global-search map batch, a DRIFT primer.
DEADLINE_REPORT_S = 180.0
#: The written answer of reduce, local, basic, lazy and DRIFT search.
DEADLINE_ANSWER_S = 300.0
#: Fewest tokens a prompt must leave free in the window for the call to run (a completion
#: shorter than this is no answer); below it the call is a user error (raise --n-ctx).
MIN_ROOM_TOKENS = 16
#: Characters per token of English text in the BPE tokenizers used (SmolLM2, Gemma): the
#: estimate behind completion caps of descriptions and claims (ARCHITECTURE.md "Answer reserves").
CHARS_PER_TOKEN = 3.5

__all__ = ["SAMPLER_VERSION", "Choice", "Generation", "Model", "ModelClient", "Prompt", "call_key"]


class ModelClient:
    """What stages call: budgeted, cached, ledgered model calls.

    Args:
        model: a :class:`Model` (``LlamaModel`` or a test fake).
        store: the index; its ``llm_cache`` answers repeated calls and its
            ``llm_calls`` ledger gets one row per real call. None: no cache/ledger.
        run_id: ledger run id.
        worker: ledger worker number.
    """

    def __init__(self, model: Model, store: Store | None, run_id: str, worker: int = 0):
        self.model = model
        self.store = store
        self.run_id = run_id
        self.worker = worker
        self.calls = 0
        self.cache_hits = 0

    @property
    def n_ctx(self) -> int:
        """Context window of the model, tokens."""
        return self.model.n_ctx

    def _window_remedy(self) -> str:
        """What to do about a prompt that does not fit the window: a larger ``--n-ctx`` only when the
        model accepts one (its trained window, ``Model.n_ctx_train``, is larger or unknown)."""
        train = self.model.n_ctx_train
        if train and self.model.n_ctx >= train:
            return f"lower --chunk-size (the {train}-token window the model was trained for is its largest --n-ctx)"
        return (f"raise --n-ctx (up to {train}, the model's trained window)" if train else "raise --n-ctx") + \
            ", or lower --chunk-size"

    def count(self, text: str) -> int:
        """Tokens of ``text`` in the model's tokenizer."""
        return len(self.model.tokenize(text))

    def overhead(self, system: str, user_template_tokens: str = "") -> int:
        """Tokens a prompt costs with empty content: template + system + fixed user text."""
        fixed, rest = self.model.prompt_tokens(self.model.render(system, user_template_tokens))
        return len(fixed) + len(rest)

    def truncate(self, text: str, max_tokens: int) -> str:
        """``text`` cut to at most ``max_tokens`` tokens (whole text if it fits)."""
        toks = self.model.tokenize(text)
        if len(toks) <= max_tokens:
            return text
        return self.model.detokenize(toks[:max_tokens])

    def call(self, stage: str, system: str, user: str, *, schema: dict | None, max_tokens: int,
             deadline_s: float | None = None, on_text: Callable[[str], None] | None = None,
             use_cache: bool = True) -> Generation:
        """One model call for ``stage`` with a system and a user message.

        ``max_tokens`` is lowered if the prompt leaves less room in the window.

        Raises:
            UserError: the prompt alone does not fit the window (stages budget
                their contexts to the window, so only a window set too small
                for the chunk size gets here).
        """
        prompt = self.model.render(system, user)
        fixed, rest = self.model.prompt_tokens(prompt)
        n_prompt = len(fixed) + len(rest)
        room = self.model.n_ctx - n_prompt
        if room < MIN_ROOM_TOKENS:
            raise UserError(f"a {stage} prompt of {n_prompt} tokens does not fit the model's {self.model.n_ctx}-token "
                            f"window: {self._window_remedy()}")
        max_tokens = min(max_tokens, room)
        key = call_key([SAMPLER_VERSION, self.model.fingerprint, fixed, rest, schema, max_tokens])
        history = [(fixed, False), (rest, False)]
        hit = self._cached(key, use_cache)
        if hit is not None:
            if on_text is not None:
                on_text(hit.text)
            return self._finish_hit(hit, n_prompt, history, key)
        gen = self.model.complete(fixed, rest, schema=schema, max_tokens=max_tokens, deadline_s=deadline_s,
                                  on_text=on_text)
        return self._record(stage, gen, key, history, use_cache)

    def follow_up(self, stage: str, prev: Generation, user: str, *, schema: dict | None = None,
                  choices: list[str] | None = None, max_tokens: int = 1, deadline_s: float | None = None,
                  use_cache: bool = True) -> Generation | None:
        """Continue ``prev``'s exchange with a new user turn ``user`` (gleaning).

        The model continues from its KV state when it still holds ``prev``
        (:meth:`slmgraph.model.backend.LlamaModel.follow_up`): only the new turn's tokens
        are evaluated; the ledger records the history as reused tokens.
        Cached and ledgered like :meth:`call`, keyed by ``prev``'s key and the new turn.

        Args:
            prev: a generation returned by :meth:`call` or :meth:`follow_up`.
            choices: force a one-token choice among these answers (e.g. ``["Y", "N"]``).

        Returns:
            the generation, or None when the exchange would not fit the window.
        """
        extra = self.model.continuation(user)
        n_hist = sum(len(t) for t, _ in prev.history)
        room = self.model.n_ctx - n_hist - len(extra)
        need = 1 if choices else 16
        if room < need:
            return None
        max_tokens = 1 if choices else min(max_tokens, room)
        key = call_key([SAMPLER_VERSION, self.model.fingerprint, "follow-up", prev.key, extra, schema, choices,
                    max_tokens])
        history = list(prev.history) + [(extra, False)]
        hit = self._cached(key, use_cache)
        if hit is not None:
            return self._finish_hit(hit, n_hist + len(extra), history, key)
        gen = self.model.follow_up(prev.history, extra, schema=schema, choices=choices, max_tokens=max_tokens,
                                   deadline_s=deadline_s)
        return self._record(stage, gen, key, history, use_cache)

    def choose(self, stage: str, system: str, user: str, options: list[str], *,
               use_cache: bool = True) -> Choice:
        """Score ``options`` as the answer to a system + user prompt by token probability.

        Put what is shared by many calls (instructions, examples, the
        question) in ``system``: it is the fixed part whose KV state is
        evaluated once per process and reused, so each call pays only for
        ``user``'s tokens. Cached by content like :meth:`call` and written to
        the ledger with ``completion_tokens`` 0 and finish reason ``choice``.

        Returns:
            :class:`Choice` (``logprobs`` per option; ``probs``, ``best``).

        Raises:
            UserError: the prompt does not fit the window.
            ValueError: fewer than two options, or an option with no tokens.
        """
        prompt = self.model.render(system, user)
        fixed, rest = self.model.prompt_tokens(prompt)
        n_prompt = len(fixed) + len(rest)
        if n_prompt + 8 > self.model.n_ctx:
            raise UserError(f"a {stage} prompt of {n_prompt} tokens does not fit the model's {self.model.n_ctx}-token "
                            f"window: {self._window_remedy()}")
        key = call_key([SAMPLER_VERSION, self.model.fingerprint, "choose", fixed, rest, list(options)])
        if self.store is not None and use_cache:
            hit = self.store.cache_get(key)
            if hit is not None:
                self.cache_hits += 1
                lps = [float(x) for x in json.loads(hit[0])]
                return Choice(options=list(options), logprobs=lps, prompt_tokens=n_prompt, cached_tokens=n_prompt,
                              from_cache=True, key=key)
        ch = self.model.score_options(fixed, rest, list(options))
        ch.key = key
        self.calls += 1
        if self.store is not None:
            self.store.record_call(self.run_id, stage, self.worker, self.model.name, ch.prompt_tokens,
                                   ch.cached_tokens, 0, ch.seconds, "choice", ch.prompt_seconds, key,
                                   json.dumps({"options": list(options), "logprobs": _finite(ch.logprobs)}))
            if use_cache:
                self.store.cache_put(key, stage, json.dumps(_finite(ch.logprobs)), "choice")
        return ch

    def _cached(self, key: str, use_cache: bool) -> Generation | None:
        if self.store is None or not use_cache:
            return None
        hit = self.store.cache_get(key)
        if hit is None:
            return None
        self.cache_hits += 1
        toks = hit[2] if len(hit) > 2 and hit[2] is not None else self.model.tokenize(hit[0])
        return Generation(hit[0], 0, 0, 0, 0.0, hit[1], from_cache=True, tokens=toks)

    @staticmethod
    def _finish_hit(hit: Generation, n_prompt: int, history: list, key: str) -> Generation:
        hit.prompt_tokens = hit.cached_tokens = n_prompt
        hit.history = history + [(hit.tokens, True)]
        hit.key = key
        return hit

    def _record(self, stage: str, gen: Generation, key: str, history: list, use_cache: bool) -> Generation:
        self.calls += 1
        toks = gen.tokens if gen.tokens is not None else self.model.tokenize(gen.text)
        gen.history = history + [(toks, True)]
        gen.key = key
        if self.store is not None:
            self.store.record_call(self.run_id, stage, self.worker, self.model.name, gen.prompt_tokens,
                                   gen.cached_tokens, gen.completion_tokens, gen.seconds, gen.finish_reason,
                                   gen.prompt_seconds, key, gen.text)
            # An output cut by the wall-clock deadline depends on machine load: never reuse it.
            if use_cache and gen.finish_reason != "deadline":
                self.store.cache_put(key, stage, gen.text, gen.finish_reason, gen.tokens)
        return gen


def _finite(logprobs: list[float]) -> list[float]:
    """Log-probabilities for JSON, which has no -inf: no mass is stored as -1e30."""
    return [float(x) if np.isfinite(x) else -1e30 for x in logprobs]


def call_key(parts: list) -> str:
    """sha256 of the JSON of ``parts``: the content key of a model call (64 hex).

    ``parts`` are the sampler version, the model fingerprint, the prompt's token
    ids, the schema/options and the limits: everything that decides the output
    (ARCHITECTURE.md "The cache key and the ledger").
    """
    return hashlib.sha256(dumps(parts).encode()).hexdigest()
