"""Basic search: vector RAG over text units (the paper's SS baseline).

Embed the question, take the ``top_k`` most similar text units (cosine), put
them into one window within the token budget, and answer citing the passage
ids: with models under 1B parameters extractively (the passages' sentences
nearest to the question, each citing its passage, opened by at most one
grounded model sentence; :mod:`slmgraph.search.extractive`), else the model
writes the answer.
"""

from __future__ import annotations

import re
import time
from typing import Callable

from ..config import Settings
from ..embed import load_vectors, nearest
from ..errors import UserError
from ..client import DEADLINE_ANSWER_S, ModelClient
from ..prompting import Prompts
from ..store import Store
from . import Answer, check_citations, context_room, dedupe_lines
from .extractive import extractive_answer, sentence_points, synthesize


def basic_search(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                 embedder, on_text: Callable[[str], None] | None = None) -> Answer:
    """Answer from the ``settings.basic_top_k`` text units nearest to the question.

    Raises:
        UserError: the index has no text-unit embeddings.
    """
    t0 = time.perf_counter()
    ids, mat = load_vectors(store, "text_unit")
    if not ids:
        raise UserError(f"index {store.path} has no text-unit embeddings: run 'slmgraph index' to finish it")
    hits = nearest(embedder.encode([question])[0], ids, mat, settings.basic_top_k)
    texts = dict(store.con.execute(
        f"SELECT chunk_id, text FROM text_units WHERE chunk_id IN ({','.join('?' * len(hits))})",
        [h[0] for h in hits]).fetchall())
    system, budget = context_room(client, prompts, "basic", question, settings.reduce_max_tokens, 200, "passages")
    blocks, used, ntok = [], [], 0
    for i, (cid, score) in enumerate(hits, start=1):
        block = f"Passage {i}:\n{' '.join(texts[cid].split())}"
        n = client.count(block + "\n\n")
        if ntok + n > budget:
            break
        blocks.append(block)
        used.append((i, cid, score))
        ntok += n
    ans = Answer(text="", method="basic", question=question)
    from .global_search import answer_mode

    if answer_mode(settings, getattr(client.model, "n_params", None)) == "extractive":
        qv = embedder.encode([question])[0]
        points = sentence_points([(i, texts[cid]) for i, cid, _ in used], qv, embedder)
        synthesis, gen = synthesize(client, prompts, question, points) if points else (None, None)
        if gen is not None:
            ans.add_call(gen)
        cited = list(dict.fromkeys(i for p in points for i in p.ids))
        given = ", ".join(str(i) for i, _, _ in used)
        text = extractive_answer(points, "Sources", synthesis,
                                 f"Sources: passages {', '.join(map(str, cited))} (of {given} given)." if cited
                                 else "")
        if on_text is not None:
            on_text(text.rsplit("\n\nSources:", 1)[0])
        ans.text = text or "The nearest passages hold no sentence that answers this question."
        ans.citations = {"sources": cited}
        ans.context = [{"kind": "text_unit", "id": cid, "source": i, "cosine": round(s, 4)} for i, cid, s in used]
        ans.details = {"removed_citations": {}, "context_tokens": ntok, "answer_mode": "extractive",
                       "synthesis": synthesis,
                       "synthesis_raw": gen.text[:500] if gen is not None else None}
        ans.seconds = time.perf_counter() - t0
        return ans
    gen = client.call("basic", system, prompts.fill("basic_user", context="\n\n".join(blocks), question=question),
                      schema=None, max_tokens=settings.reduce_max_tokens, deadline_s=DEADLINE_ANSWER_S, use_cache=False,
                      on_text=on_text)
    ans.add_call(gen)
    answer = re.sub(r"\bPassage \d+:\s*", "", gen.text).strip()  # context labels the model copied (issue 13)
    text, kept, removed = check_citations(dedupe_lines(answer), {"sources": {i for i, _, _ in used}})
    cited = kept["sources"]
    given = ", ".join(str(i) for i, _, _ in used)
    text += (f"\n\nSources: passages {', '.join(map(str, cited))} (of {given} given)." if cited else
             f"\n\nSources: none cited by the model; it was given passages {given}.")
    ans.text = text
    ans.citations = kept
    ans.context = [{"kind": "text_unit", "id": cid, "source": i, "cosine": round(s, 4)} for i, cid, s in used]
    ans.details = {"removed_citations": removed, "context_tokens": ntok}
    ans.seconds = time.perf_counter() - t0
    return ans
