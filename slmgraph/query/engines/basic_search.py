"""Basic search: vector RAG over text units (the paper's SS baseline).

Embed the question, take the ``top_k`` most similar text units (cosine of a
unit's best window, :func:`slmgraph.indexing.stages.embed_lookup.nearest_units`), put
them into one window within the token budget, and answer citing the passage
ids: with models under 1B parameters extractively (the passages' sentences
nearest to the question, each citing its passage, opened by at most one
grounded model sentence; :mod:`slmgraph.query.extractive`), else the model
writes the answer. A question no text unit is near enough
(:func:`slmgraph.query.scoring.relevance_gate`: the floor of global search,
calibrated on the index's text units by the off-topic probes) gets the
no-answer text with no model call.
"""

from __future__ import annotations

import re
import time
from typing import Callable

from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.embed_lookup import best_per_unit, nearest_units, unit_matrix
from slmgraph.errors import UserError
from slmgraph.model.client import DEADLINE_ANSWER_S, ModelClient
from slmgraph.config.prompting import Prompts
from slmgraph.store.db import Store
from slmgraph.query.documents import corpus_headings, no_prose_units
from slmgraph.query.answer import Answer, check_citations, context_room, dedupe_lines, unit_numbers
from slmgraph.query.extractive import extractive_answer, opening, sentence_points
from slmgraph.query.named import check_names, known_of, name_details, name_refusal, name_variants, names_vouch
from slmgraph.query.scoring import quote_probes, relevance_gate
from slmgraph.text.prose import cjk_bigrams


#: A text unit holding at least this share of the question's Han and katakana bigrams
#: (:func:`slmgraph.text.prose.cjk_bigrams`), and at least :data:`CJK_MIN_SHARED` of them, shares its words.
CJK_SHARE = 0.5
CJK_MIN_SHARED = 2


def cjk_matches(store: Store, question: str, skip: set[str]) -> list[str]:
    """The text units (chunk ids, not in ``skip``) sharing a Chinese or Japanese question's words, most shared
    first: at least :data:`CJK_SHARE` of its character bigrams and :data:`CJK_MIN_SHARED` of them. The bundled
    embedder reads English: a Japanese question scores under the floor even beside the passage it quotes
    (18.6 against 22 for a new user's newsletters), so basic search takes these words as its evidence too.
    Empty for a question without Han or katakana."""
    asked = cjk_bigrams(question)
    if not asked:
        return []
    need = max(CJK_MIN_SHARED, CJK_SHARE * len(asked))
    found = []
    for cid, text in store.con.execute("SELECT chunk_id, text FROM text_units ORDER BY doc_id, ord").fetchall():
        shared = len(asked & cjk_bigrams(text)) if cid not in skip else 0
        if shared >= need:
            found.append((-shared, len(found), cid))
    return [cid for *_, cid in sorted(found)]


def refusal(ans: Answer, prompts: Prompts, what: str, gate: dict, on_text, context: list, t0: float) -> Answer:
    """``ans`` as the no-answer of basic or local search (no model call): the
    ``no_answer_nearest`` text naming the nearest ``what``'s score and the floor;
    ``details`` holds the gate (:func:`slmgraph.query.scoring.relevance_gate`) and ``refused``."""
    ans.text = prompts.fill("no_answer_nearest", what=what, best=f"{gate['best_score']:g}",
                            floor=f"{gate['floor']:g}").strip()
    ans.citations = {}
    ans.context = context
    ans.details = {"refused": True, "removed_citations": {}, **gate}
    if on_text is not None:
        on_text(ans.text)
    ans.seconds = time.perf_counter() - t0
    return ans


#: A question naming a year reads this many times ``basic_top_k`` nearest text units for those of that year.
YEAR_READS = 4
#: A year as a question writes it ("in 2021").
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")


def year_units(store: Store, question: str, hits: list[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    """Of ``hits`` (``(chunk id, cosine)``, nearest first), up to ``k`` from the documents dated in a year the
    question names ("How many members did the society have in 2021?"), in their order; [] when it names none,
    when under half the documents carry a date (:func:`slmgraph.query.documents.corpus_documents`), or when no
    hit is of such a document. A figure asked for one year is stated in that year's documents; the nearest
    wording may be another year's ("Membership reached 341 in 2020")."""
    from slmgraph.query.documents import corpus_documents, date_key

    years = {int(y) for y in _YEAR.findall(question or "")}
    if not years or not hits:
        return []
    docs = corpus_documents(store)
    year_of = {d.doc_id: key[0] for d in docs if d.date and (key := date_key(d.date))}
    if 2 * len(year_of) < len(docs):
        return []
    q = ",".join("?" * len(hits))
    doc_of = dict(store.con.execute(f"SELECT chunk_id, doc_id FROM text_units WHERE chunk_id IN ({q})",
                                    [c for c, _ in hits]).fetchall())
    return [h for h in hits if year_of.get(doc_of.get(h[0])) in years][:k]


def basic_search(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, question: str,
                 embedder, on_text: Callable[[str], None] | None = None) -> Answer:
    """Answer from the ``settings.basic_top_k`` text units nearest to the question.

    A question no text unit is near (:func:`slmgraph.query.scoring.relevance_gate`) and none shares the Chinese
    or Japanese words of (:func:`cjk_matches`, then the passages given), or whose names the index does not hold
    (:func:`slmgraph.query.named.check_names`), gets the no-answer text, with no model call.

    Raises:
        UserError: the index has no text-unit embeddings.
    """
    t0 = time.perf_counter()
    ids, mat, owners = unit_matrix(store)  # every window of every text unit: a late sentence is reachable
    if not ids:
        raise UserError(f"index {store.path} has no text-unit embeddings: run 'slmgraph index' to finish it")
    named = check_names(store, question, settings)
    if not named["answer"]:
        return name_refusal(Answer(text="", method="basic", question=question), prompts, named, on_text, t0)
    junk = no_prose_units(store)
    keep = [r for r, o in enumerate(owners) if o not in junk]
    if junk and keep:
        mat, owners = mat[keep], [owners[r] for r in keep]
    qv = embedder.encode([question])[0]
    hits = nearest_units(qv, owners, mat, settings.basic_top_k)
    gate = names_vouch(named, relevance_gate(question, hits[0][1] if hits else 0.0, mat, embedder, prompts,
                                             settings))
    shared = cjk_matches(store, question, junk)
    if shared:  # the passages: the units sharing the question's words (the embedder cannot tell which do)
        cos = {cid: c for cid, (c, _) in best_per_unit(qv, owners, mat).items()}
        hits = [(cid, cos.get(cid, 0.0)) for cid in shared[:settings.basic_top_k]]
        gate = dict(gate, answer=True, cjk_matches=len(shared))
    if not gate["answer"]:
        return refusal(Answer(text="", method="basic", question=question), prompts, "text unit", gate, on_text,
                       [{"kind": "text_unit", "id": cid, "cosine": round(c, 4)} for cid, c in hits], t0)
    # the nearest passages of a corpus that never names what the question asks about are not about it: said first
    from slmgraph.query.engines.global_search import unnamed_words

    missing = unnamed_words(store, question)
    lead = (f"No passage of the corpus names {missing}; the passages nearest the question follow, none of them on "
            f"it.\n\n" if missing else "")
    dated = year_units(store, question, nearest_units(qv, owners, mat, settings.basic_top_k * YEAR_READS),
                       settings.basic_top_k)
    if dated:  # a question naming a year is answered from the documents of that year among the nearest
        hits = dated
    texts = dict(store.con.execute(
        f"SELECT chunk_id, text FROM text_units WHERE chunk_id IN ({','.join('?' * len(hits))})",
        [h[0] for h in hits]).fetchall())
    system, budget = context_room(client, prompts, "basic", question, settings.reduce_max_tokens, 200, "passages")
    blocks, used, ntok = [], [], 0
    numbers = unit_numbers(store)  # cite text units by their index-wide number, as every other method does
    for cid, score in hits:
        i = numbers[cid]
        block = f"Passage {i}:\n{' '.join(texts[cid].split())}"
        n = client.count(block + "\n\n")
        if ntok + n > budget:
            break
        blocks.append(block)
        used.append((i, cid, score))
        ntok += n
    ans = Answer(text="", method="basic", question=question)
    from slmgraph.query.engines.global_search import answer_mode

    if answer_mode(settings, client.model) == "extractive":
        points = sentence_points([(i, texts[cid]) for i, cid, _ in used], qv, embedder,
                                 names=name_variants(known_of(named)), probes=quote_probes(question, prompts, settings),
                                 headings=corpus_headings(store), question=question)
        synthesis, gen = opening(client, prompts, settings, question, points)
        if gen is not None:
            ans.add_call(gen)
        cited = list(dict.fromkeys(i for p in points for i in p.ids))
        given = ", ".join(str(i) for i, _, _ in used)
        text = extractive_answer(points, "Sources", synthesis,
                                 f"Sources: text units {', '.join(map(str, cited))} (of {given} given)." if cited
                                 else "", lead=True)
        text = lead + text if text else text
        if on_text is not None:
            on_text(text.rsplit("\n\nSources:", 1)[0])
        ans.text = text or "The nearest passages hold no sentence that answers this question."
        ans.citations = {"sources": cited}
        ans.context = [{"kind": "text_unit", "id": cid, "source": i, "cosine": round(s, 4)} for i, cid, s in used]
        ans.details = {"removed_citations": {}, "context_tokens": ntok, "answer_mode": "extractive", **gate,
                       "year_units": [c for c, _ in dated],
                       "no_prose_units": len(junk),
                       **name_details(named),
                       "synthesis": synthesis,
                       "synthesis_raw": gen.text[:500] if gen is not None else None}
        ans.seconds = time.perf_counter() - t0
        return ans
    gen = client.call("basic", system, prompts.fill("basic_user", context="\n\n".join(blocks), question=question),
                      schema=None, max_tokens=settings.reduce_max_tokens, deadline_s=DEADLINE_ANSWER_S, use_cache=False,
                      on_text=on_text)
    ans.add_call(gen)
    answer = re.sub(r"\bPassage \d+:\s*", "", gen.text).strip()  # context labels the model copied
    text, kept, removed = check_citations(dedupe_lines(answer), {"sources": {i for i, _, _ in used}})
    cited = kept["sources"]
    given = ", ".join(str(i) for i, _, _ in used)
    text += (f"\n\nSources: text units {', '.join(map(str, cited))} (of {given} given)." if cited else
             f"\n\nSources: none cited by the model; it was given text units {given}.")
    ans.text = lead + text
    ans.citations = kept
    ans.context = [{"kind": "text_unit", "id": cid, "source": i, "cosine": round(s, 4)} for i, cid, s in used]
    ans.details = {"removed_citations": removed, "context_tokens": ntok, **gate, **name_details(named)}
    ans.seconds = time.perf_counter() - t0
    return ans
