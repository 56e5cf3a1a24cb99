"""Query engines: global (map-reduce over community reports), local (entity
neighbourhood) and basic (vector RAG over text units, the paper's SS).

Shared pieces live here: the :class:`Answer` every engine returns, window
packing counted in the model's own tokens, and citation checking.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from slmgraph.text.prose import REPEAT_SHARE, addressed_to_assistant, overlaps, sentences, word_set


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
        details: engine-specific figures (batches, points kept/dropped, ...);
            ``removed_citations`` is ``{kind: [ids]}`` in every engine.
        call_keys: the cache key of each model call, in call order: the
            ``llm_calls.key`` of the ledger rows that hold each call's prompt
            size and output (ARCHITECTURE.md "The cache key and the ledger").
        points: the answer's points, structured: ``{"text", "sources", "documents", ...}`` each
            (global answers by theme add ``topic``, ``coverage`` and ``reports``); documents are
            ``{"doc_id", "document", "path"}``.
        cited_documents: the document of every cited id
            (:func:`slmgraph.query.documents.cited_documents`): ``{"sources": {"12": {"doc_id",
            "document", "path", "unit", "of"}}, "reports": {"3": {"documents", "coverage"}}}``.
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
    call_keys: list = field(default_factory=list)
    points: list = field(default_factory=list)
    cited_documents: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-serialisable dict of all fields (``--json`` output)."""
        return asdict(self)

    def add_call(self, gen) -> None:
        """Add one :class:`slmgraph.model.protocol.Generation`'s (or :class:`slmgraph.model.protocol.Choice`'s) tokens to the totals."""
        self.model_calls += 0 if gen.from_cache else 1
        self.prompt_tokens += gen.prompt_tokens
        self.completion_tokens += getattr(gen, "completion_tokens", 0)
        self.call_keys.append(gen.key)


def context_room(client, prompts, stem: str, question: str, reserve: int, minimum: int,
                 what: str = "context") -> tuple[str, int]:
    """``(system prompt, tokens left for context)`` of a query prompt family.

    The room is the window minus the prompt with empty context (system text,
    template, question) minus ``reserve`` tokens for the answer.

    Raises:
        UserError: less than ``minimum`` tokens are left (the question is too long).
    """
    from slmgraph.errors import UserError

    system = prompts.text(f"{stem}_system")
    user = prompts.fill(f"{stem}_user", question=question, context="")
    room = client.n_ctx - client.overhead(system, user) - reserve
    if room < minimum:
        raise UserError(f"question of {client.count(question)} tokens leaves no room for {what} in the "
                        f"{client.n_ctx}-token window: ask a shorter question")
    return system, room


def dedupe_lines(text: str) -> str:
    """``text`` without sentences (:func:`slmgraph.text.prose.sentences`) that nearly repeat an earlier one
    (:data:`slmgraph.text.prose.REPEAT_SHARE` of their words shared, Jaccard; sentences of fewer than 3 words are kept)
    and without sentences that give orders to an assistant
    (:func:`slmgraph.text.prose.addressed_to_assistant`: a model-written answer that
    copied an injected "Ignore all previous instructions ..."); a line left
    empty by that is dropped.

    Small models loop in free text, across lines or inside one paragraph; a
    repeated point is noise, not emphasis.
    """
    seen: list[frozenset] = []
    out = []
    for line in text.split("\n"):
        kept = []
        for sent in sentences(line) or [line.strip()]:
            words = word_set(sent)
            if addressed_to_assistant(sent):
                continue
            if len(words) >= 3 and any(overlaps(w, words, REPEAT_SHARE) for w in seen):
                continue
            if len(words) >= 3:
                seen.append(words)
            kept.append(sent)
        if kept or not line.strip():
            out.append(" ".join(kept))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


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


#: Citation kinds and the words that name them (singular or plural).
KINDS = {"report": "reports", "reports": "reports", "entity": "entities", "entities": "entities",
         "relationship": "relationships", "relationships": "relationships", "source": "sources",
         "sources": "sources"}
_LABEL = {"reports": "Reports", "entities": "Entities", "relationships": "Relationships", "sources": "Sources"}
_BRACKET = re.compile(r"\[([^\[\]]{1,400})\]")
_GROUP = re.compile(r"(?i)\b(reports?|entit(?:y|ies)|relationships?|sources?)\b\s*[:(]?\s*((?:\d+\s*(?:[-\u2013]\s*\d+)?"
                    r"\s*[,;]?\s*)+)(\+\s*more)?\s*\)?")


def _ids(spec: str) -> list[int]:
    out: list[int] = []
    for a, b in re.findall(r"(\d+)(?:\s*[-\u2013]\s*(\d+))?", spec):
        lo = int(a)
        hi = int(b) if b else lo
        if hi - lo > 50 or hi < lo:  # a wide range cites nothing specific
            out.append(-1)
            continue
        out.extend(range(lo, hi + 1))
    return out


def check_citations(text: str, valid: dict[str, set[int]]) -> tuple[str, dict[str, list[int]], dict[str, list[int]]]:
    """Keep only citations of ids that exist.

    Finds bracketed citations in the forms models write -- ``[Reports: 3, 7]``,
    ``[Report 3]``, ``[Data: Reports (3, 7); Entities (2)]``, ranges ``3-5``
    -- and, for each kind in ``valid`` (``reports``, ``entities``,
    ``relationships``, ``sources``), removes ids not in its set. A bracket
    left with no id is removed; kinds not in ``valid`` are left untouched.

    Returns:
        ``(text, kept, removed)``: the checked text, and per kind the ids kept
        and removed, in order of first citation.
    """
    kept: dict[str, list[int]] = {k: [] for k in valid}
    removed: dict[str, list[int]] = {k: [] for k in valid}

    def fix_bracket(m: re.Match) -> str:
        inner = m.group(1)
        groups = list(_GROUP.finditer(inner))
        if not groups:
            return m.group(0)
        parts = []
        for g in groups:
            kind = KINDS[g.group(1).lower()]
            if kind not in valid:
                parts.append(g.group(0).strip().rstrip(";,"))
                continue
            good = []
            for i in _ids(g.group(2)):
                if i in valid[kind]:
                    if i not in good:
                        good.append(i)
                    if i not in kept[kind]:
                        kept[kind].append(i)
                elif i >= 0 and i not in removed[kind]:
                    removed[kind].append(i)
            if good:
                parts.append(f"{_LABEL[kind]}: {', '.join(map(str, good))}")
        return f"[{'; '.join(parts)}]" if parts else ""

    out = _BRACKET.sub(fix_bracket, text)
    out = re.sub(r"[ \t]+([.,;:!?])", r"\1", out)  # no space left before punctuation
    out = re.sub(r"[ \t]+$", "", out, flags=re.M)
    return out, kept, removed


def unit_numbers(store) -> dict:
    """``chunk_id -> n``: the index-wide citation numbers of text units (TS, local, basic, DRIFT's
    follow-ups and lazy search cite them).

    The number is ``text_units.unit_no``, given once when the text unit was first ingested
    (:func:`slmgraph.indexing.stages.ingest.next_unit_no`), so indexing more files never renumbers the units
    earlier answers cite. An index of schema version 1 opened read-only (not yet migrated, see
    :func:`slmgraph.store.migrations.number_text_units`) is numbered as version 1 did: 1..n in
    ``(doc_id, ord)`` order, the numbers its migration stores.
    """
    if store.has_unit_numbers():
        return dict(store.con.execute("SELECT chunk_id, unit_no FROM text_units").fetchall())
    rows = store.con.execute("SELECT chunk_id FROM text_units ORDER BY doc_id, ord").fetchall()
    return {r[0]: i for i, r in enumerate(rows, start=1)}
