"""Query engines: global (map-reduce over community reports), local (entity
neighbourhood) and basic (vector RAG over text units, the paper's SS).

Shared pieces live here: the :class:`Answer` every engine returns, window
packing counted in the model's own tokens, and citation checking.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field


@dataclass
class Answer:
    """A query's result.

    Attributes:
        text: the answer shown to the user (citations checked).
        method: ``global`` | ``local`` | ``basic``.
        question: the question asked.
        level: community level used (global search), else None.
        citations: cited ids by kind, e.g. ``{"reports": [3, 7]}``; every id
            exists in the index.
        context: the context items the answer was built from (kind, id, tokens, ...).
        model_calls: model calls made.
        prompt_tokens / completion_tokens: summed over the calls (tokens).
        seconds: wall-clock of the whole query.
        details: engine-specific figures (batches, points kept/dropped, ...).
    """

    text: str
    method: str
    question: str
    level: int | None = None
    citations: dict = field(default_factory=dict)
    context: list = field(default_factory=list)
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-serialisable dict of all fields (``--json`` output)."""
        return asdict(self)

    def add_call(self, gen) -> None:
        """Add one :class:`slmgraph.llm.Generation`'s tokens to the totals."""
        self.model_calls += 0 if gen.finish_reason == "cache" else 1
        self.prompt_tokens += gen.prompt_tokens
        self.completion_tokens += gen.completion_tokens


def pack(items: list[tuple[object, str]], budget: int, count, truncate) -> tuple[list[list[tuple[object, str]]], int]:
    """Pack text items, in order, into batches of at most ``budget`` tokens each.

    Greedy in the given order: an item that does not fit the current batch
    starts a new one, so no item is split across batches or lost; an item
    alone larger than ``budget`` is cut to ``budget`` tokens in a batch of its own.

    Args:
        items: ``(id, text)``; texts are joined with a blank line inside a batch.
        count: ``str -> int`` tokens in the model's tokenizer.
        truncate: ``(str, max_tokens) -> str``.

    Returns:
        ``(batches, n_truncated)``; each batch joined with ``"\\n\\n"`` counts at
        most ``budget`` tokens (checked on the joined text, not a sum).
    """
    batches: list[list[tuple[object, str]]] = []
    cur: list[tuple[object, str]] = []
    n_trunc = 0

    def joined_tokens(batch):
        return count("\n\n".join(t for _, t in batch))

    for item_id, text in items:
        if count(text) > budget:
            text = truncate(text, budget)
            while count(text) > budget and text:
                text = text[: max(0, len(text) - 16)]
            n_trunc += 1
        trial = cur + [(item_id, text)]
        if cur and joined_tokens(trial) > budget:
            batches.append(cur)
            cur = [(item_id, text)]
        else:
            cur = trial
    if cur:
        batches.append(cur)
    return batches, n_trunc


_CITE = re.compile(r"\[(?:Data:\s*)?([A-Za-z ]+?):\s*([\d,\s+more]+)\]")


def check_citations(text: str, kind_word: str, valid: set[int]) -> tuple[str, list[int], list[int]]:
    """Keep only citations of ids that exist.

    Finds ``[<kind_word>: 1, 2]`` (e.g. ``[Reports: 3, 7]``) in ``text`` and
    removes ids not in ``valid`` (a citation left empty is removed whole).

    Returns:
        ``(text, kept_ids, removed_ids)``; ids in order of first citation.
    """
    kept: list[int] = []
    removed: list[int] = []

    def fix(m: re.Match) -> str:
        word = m.group(1).strip()
        if word.lower().rstrip("s") != kind_word.lower().rstrip("s"):
            return m.group(0)
        ids = [int(x) for x in re.findall(r"\d+", m.group(2))]
        good = [i for i in ids if i in valid]
        for i in ids:
            if i in valid:
                if i not in kept:
                    kept.append(i)
            elif i not in removed:
                removed.append(i)
        return f"[{word}: {', '.join(map(str, good))}]" if good else ""

    return _CITE.sub(fix, text), kept, removed
