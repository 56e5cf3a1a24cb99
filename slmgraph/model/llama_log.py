"""llama.cpp's own log lines: its real errors reach stderr, its notices logged as errors do not.

llama-cpp-python forwards llama.cpp's log through a callback that prints every ERROR-level line even
with ``verbose=False`` (llama_cpp/_logger.py), and llama.cpp logs some notices at that level: loading
the base Gemma 3 270M GGUF prints ``llama_kv_cache_iswa: using full-size SWA cache (ref: …)`` at level 3
(GGML_LOG_LEVEL_ERROR), though nothing is wrong. :class:`LlamaLog` replaces the callback with one that
prints ERROR lines except the notices in :data:`LOG_NOTICES` and, like the library's, nothing below
ERROR unless the library's logger is set to verbose. llama.cpp has one log callback per process, so
there is one filter per process: :data:`LLAMA_LOG`.
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager

from slmgraph.model.adapter import set_log_callback

#: llama.cpp lines logged at ERROR level that report no error (substrings).
LOG_NOTICES = ("using full-size SWA cache",)

_GGML_ERROR = 3
_GGML_CONT = 5


class LlamaLog:
    """The filter between llama.cpp's log and stderr, and the state it needs.

    Attributes:
        callback: the ctypes callback llama.cpp calls once :meth:`install` has run (kept here so that
            it stays alive while llama.cpp holds it; callable as ``(level, text bytes, None)``),
            else None.
    """

    def __init__(self):
        self.callback = None
        self._last_shown = False  # whether the last line that was not a continuation was kept
        self._held: list[str] | None = None  # lines held back by held(), else None (printed)

    def keep(self, level: int, text: str, verbose: bool) -> bool:
        """Whether a llama.cpp log line of ``level`` (ggml_log_level) is printed.

        Continuation lines (level 5) follow the line they continue.
        """
        if level == _GGML_CONT:
            return self._last_shown
        self._last_shown = verbose or (level == _GGML_ERROR and not any(n in text for n in LOG_NOTICES))
        return self._last_shown

    @contextmanager
    def held(self):
        """Within the block, the llama.cpp log lines :meth:`keep` keeps are appended to the
        yielded list instead of being printed (the caller decides: a model load that fails with a
        reason of ours drops them, e.g. the two lines about a context window too large to allocate).
        Needs :meth:`install`; blocks nest (the innermost holds)."""
        outer, self._held = self._held, []
        try:
            yield self._held
        finally:
            self._held = outer

    def install(self) -> None:
        """Route llama.cpp's log through :meth:`keep` (idempotent; a no-op without llama-cpp-python).

        Called by every :class:`slmgraph.model.backend.LlamaModel` load (and by the CLI first), so no
        llama.cpp line below ERROR reaches stderr on a normal load, whatever the entry point (CLI, API,
        worker process).
        """
        if self.callback is None:
            self.callback = set_log_callback(self._line)

    def _line(self, level: int, text: bytes) -> None:
        lib_logger = logging.getLogger("llama-cpp-python")
        line = text.decode("utf-8", errors="replace")
        if self.keep(level, line, lib_logger.level <= logging.DEBUG and lib_logger.level != logging.NOTSET):
            if self._held is not None:
                self._held.append(line)
            else:
                print(line, end="", flush=True, file=sys.stderr)


#: The process's filter (llama.cpp holds one log callback per process).
LLAMA_LOG = LlamaLog()


def install_log_filter() -> None:
    """Route llama.cpp's log through :data:`LLAMA_LOG` (:meth:`LlamaLog.install`)."""
    LLAMA_LOG.install()
