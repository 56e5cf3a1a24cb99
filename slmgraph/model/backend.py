"""The llama.cpp backend: :class:`LlamaModel`, one GGUF model run in-process, and :func:`load_model`.

One concern, the model over one ``llama_cpp.Llama``: loading (GGUF checks, the trained-window check,
one-line load errors), token-exact tokenization, rendering a chat with the GGUF's own template, greedy
completion under an optional JSON-schema grammar with KV-prefix reuse, KV-history replay for
follow-ups, and option scoring by token probability. It implements
:class:`slmgraph.model.protocol.Model`; llama-cpp-python internals are reached only through
:class:`slmgraph.model.adapter.LlamaAdapter`, loops are judged by
:class:`slmgraph.model.guard.RunawayGuard`.

Facts this module relies on (llama-cpp-python 0.3.x; ARCHITECTURE.md
"Running the model on a CPU"): ``Llama`` reuses the KV state of the longest common token
prefix of consecutive prompts; ``n_threads``/``n_threads_batch`` default to
logical CPUs and must be set; ``max_tokens=None`` runs to the end of the
window; grammar sampling checks every vocabulary entry per token, so schemas
are kept flat with enums and ``maxItems``.
"""

from __future__ import annotations

import codecs
import logging
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import numpy as np

from slmgraph.errors import GrammarError, UserError
from slmgraph.model.adapter import LlamaAdapter, import_llama_cpp, trained_window
from slmgraph.model.gguf import check_gguf, default_model_path, file_fingerprint
from slmgraph.model.guard import RunawayGuard
from slmgraph.model.llama_log import LLAMA_LOG
from slmgraph.model.protocol import Choice, Generation, Prompt
from slmgraph.store.db import dumps

log = logging.getLogger("slmgraph")

#: Sentinel used to split a rendered chat into template prefix / content / tail.
_SENTINEL = "\u2063SLMGRAPH_CONTENT\u2063"

#: Tokens by logit checked one at a time against the grammar (after the arg-max) before the whole
#: vocabulary is filtered (LlamaModel._pick; docs/decisions.md: grammar checks the top tokens first).
PICK_TOP_K = 16


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    """Natural-log softmax of one row of logits (float64; ``-inf`` logits stay ``-inf``)."""
    x = logits.astype(np.float64)
    m = np.max(x[np.isfinite(x)]) if np.isfinite(x).any() else 0.0
    return x - m - np.log(np.sum(np.exp(x - m)))


#: A requested window larger than this many tokens (the default --n-ctx) is checked against the model's
#: trained window before the model is loaded (:class:`LlamaModel`); smaller ones after, at no extra cost.
PRECHECK_N_CTX = 8192


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
        llama_cpp = import_llama_cpp()
        kwargs = dict(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                      seed=seed, verbose=False, n_batch=512, use_mmap=True)
        LLAMA_LOG.install()
        # llama.cpp's lines about a failed load are held back: the failure is reported as one line of ours.
        too_large = None
        with deferred_interrupt(), LLAMA_LOG.held() as held:
            failure = None
            # A window past the default is checked against the trained one before it is allocated: llama.cpp
            # allocates the whole KV cache at load, so a huge --n-ctx would get the process killed (out of memory).
            train = trained_window(llama_cpp, path) if n_ctx > PRECHECK_N_CTX else None
            if train and n_ctx > train:
                too_large = train
            else:
                try:
                    self._lc = LlamaAdapter.load(llama_cpp, **kwargs)
                except (ValueError, RuntimeError) as exc:
                    failure = str(exc)
                    train = train or trained_window(llama_cpp, path)
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
            bos = self._token_text(self.llm.token_bos())
            eos = self._token_text(self.llm.token_eos())
            self._formatter = LlamaAdapter.chat_formatter(self.chat_template, eos_token=eos, bos_token=bos)
        self._turn: tuple[str, str] | None = None  #: (close, tail) of a follow-up turn, see continuation()
        self._grammars: dict[str, tuple[bytes, bytes]] = {}
        self._pieces: dict[int, bytes] = {}

    @property
    def adapter(self) -> LlamaAdapter:
        """The llama-cpp-python adapter (logits, end-of-generation test), for measurements that drive
        :attr:`llm` directly (:func:`slmgraph.eval.bench.raw_seconds`)."""
        return self._lc

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
        the KV cache by ensure_fixed, prefix length the rest was evaluated after)``.
        """
        reused = self.ensure_fixed(fixed)
        cached = min(len(fixed), len(tokens) - 1)
        self.llm.n_tokens = cached
        self.llm.eval(tokens[cached:])
        return reused, cached

    def ensure_fixed(self, fixed: list[int]) -> int:
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
            reused = self.ensure_fixed(segs[0][0] if segs else [])
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
        guard = RunawayGuard(deadline_s, max_loop_breaks)
        gsampler = self._grammar_sampler(schema) if schema is not None else None
        lc = self._lc
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pieces: list[str] = []
        generated: list[int] = []
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
                    if schema is None and guard.text_loops(text):
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
