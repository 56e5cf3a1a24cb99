"""The llama-cpp-python adapter: the only module that imports ``llama_cpp``.

:class:`LlamaAdapter` holds every access to llama-cpp-python internals (``Llama._ctx``,
``Llama._model``, the low-level sampler and token-piece functions, the model-params patch); it also
loads a ``Llama``, reads a GGUF's trained window, builds the chat-template formatter and installs a
log callback. It refuses versions outside :data:`LLAMA_CPP_SUPPORTED`.
"""

from __future__ import annotations

import ctypes
import json
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import numpy as np

from slmgraph.errors import GrammarError, UserError


#: llama-cpp-python versions this module was written and tested for: ``[low, high)``.
#: The adapter reads internals (``Llama._ctx``, ``Llama._model``, the low-level
#: sampler API) that change between minor releases; 0.3.36 is the measured one.
LLAMA_CPP_SUPPORTED = ((0, 3, 0), (0, 4, 0))


def import_llama_cpp():
    """The ``llama_cpp`` module.

    Raises:
        UserError: llama-cpp-python is not installed.
    """
    try:
        import llama_cpp
    except ImportError:  # pragma: no cover - install problem
        raise UserError("llama-cpp-python is not installed: run the README's install command") from None
    return llama_cpp


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


class LlamaAdapter:
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
    def load(cls, llama_cpp, **kwargs) -> "LlamaAdapter":
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

    @staticmethod
    def chat_formatter(template: str, eos_token: str, bos_token: str):
        """llama-cpp-python's Jinja2 formatter of a GGUF chat ``template`` (adds the assistant turn opener):
        called with ``messages=[{"role", "content"}, ...]``, its result's ``.prompt`` is the rendered text."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        return Jinja2ChatFormatter(template=template, eos_token=eos_token, bos_token=bos_token,
                                   add_generation_prompt=True)

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


def trained_window(llama_cpp, path: Path) -> int | None:
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


def set_log_callback(handle: Callable[[int, bytes], None]):
    """Route llama.cpp's log (every line, whatever its level) to ``handle(ggml_log_level, text)``.

    Returns:
        the ctypes callback, which the caller must keep referenced while llama.cpp holds it (it can
        also be called directly with ``(level, text, None)``); None without llama-cpp-python.
    """
    try:
        import llama_cpp
    except ImportError:  # pragma: no cover - install problem, reported when a model loads
        return None

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        handle(level, text)

    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
    return callback
