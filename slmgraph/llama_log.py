"""llama.cpp's own log lines: keep its real errors on stderr, drop the ones that are not.

llama-cpp-python forwards llama.cpp's log through a callback that prints
every ERROR-level line even with ``verbose=False`` (llama_cpp/_logger.py).
llama.cpp logs some notices at that level: loading the base Gemma 3 270M
GGUF prints ``llama_kv_cache_iswa: using full-size SWA cache (ref: …)`` at
level 3 (GGML_LOG_LEVEL_ERROR), though nothing is wrong (issue 13 item 14).
:func:`install` replaces the callback with one that prints ERROR lines
except the notices in :data:`NOTICES` and, like the library's, nothing below
ERROR unless the library's logger is set to verbose.
"""

from __future__ import annotations

import ctypes
import logging
import sys

#: llama.cpp lines logged at ERROR level that report no error (substrings).
NOTICES = ("using full-size SWA cache",)

_GGML_ERROR = 3
_GGML_CONT = 5
_callback = None  # keeps the ctypes callback alive while llama.cpp holds it
_last_shown = False


def keep(level: int, text: str, verbose: bool) -> bool:
    """Whether a llama.cpp log line of ``level`` (ggml_log_level) is printed.

    Continuation lines (level 5) follow the line they continue.
    """
    global _last_shown
    if level == _GGML_CONT:
        return _last_shown
    _last_shown = verbose or (level == _GGML_ERROR and not any(n in text for n in NOTICES))
    return _last_shown


def install() -> None:
    """Route llama.cpp's log through :func:`keep` (idempotent; a no-op without llama-cpp-python)."""
    global _callback
    if _callback is not None:
        return
    try:
        import llama_cpp
    except ImportError:  # pragma: no cover - install problem, reported when a model loads
        return
    lib_logger = logging.getLogger("llama-cpp-python")

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        line = text.decode("utf-8", errors="replace")
        if keep(level, line, lib_logger.level <= logging.DEBUG and lib_logger.level != logging.NOTSET):
            print(line, end="", flush=True, file=sys.stderr)

    _callback = callback
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
