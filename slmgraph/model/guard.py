"""The runaway guard: stops a generation at its deadline and breaks, then stops, loops.

Tiny models repeat a phrase or a record until ``maxItems`` or ``max_tokens`` (ARCHITECTURE.md
"Tiny models loop"); :class:`RunawayGuard` watches the generated tokens and finished sentences of one
generation for that, and the sampler in :mod:`slmgraph.model.backend` acts on what it says.
"""

from __future__ import annotations

import re
import time

from slmgraph.text.prose import REPEAT_SHARE, overlaps, word_set

#: The loop guard's unit while streaming (:meth:`RunawayGuard.text_loops`): text after ``.!?`` +
#: space or a line break. Deliberately not :func:`slmgraph.text.prose.sentences` (pysbd): the guard sees one
#: token at a time and must judge each finished piece at once, while pysbd needs the whole text and
#: would re-split the growing answer after every token (quadratic); a piece cut short after "Dr." only
#: makes a shorter line for the repetition count, which stays a repetition.
_SENT_END = re.compile(r"(?<=[.!?])\s+|\n")


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
#: Earlier near-repeats (:data:`slmgraph.text.prose.REPEAT_SHARE`) of a sentence that make free text a loop.
LOOP_REPEATED_LINES = 2


class RunawayGuard:
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
        self._line = ""  # the unfinished sentence of the streamed text

    def expired(self) -> bool:
        """True (``reason`` = ``deadline``) once the deadline has passed."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.reason = "deadline"
            return True
        return False

    def text_loops(self, text: str) -> bool:
        """True when a sentence or line that ``text`` (the next streamed piece) finishes nearly repeats
        two earlier ones (:meth:`repeated_line`); a loop can stay inside one paragraph."""
        *done, self._line = _SENT_END.split(self._line + text)
        return any(self.repeated_line(d) for d in done)

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
