"""Helpfulness scores and the selection rule: which items (community reports,
or text units) reach the answer of a global question.

One entry point, :func:`score_items`, serves the global map (reports of a
level), ``--dynamic`` selection (reports from the root level down), the TS
map (text units) and any later caller (DRIFT, lazy search). Each item gets a
helpfulness score 0-100 from two signals, neither a generated number:

* ``embedding``: the cosine between the question's and the item's
  all-MiniLM-L6-v2 vectors (reports are embedded at index time, kind
  ``report`` in ``embeddings``; items without a stored vector are embedded
  at query time), as ``100 * max(0, cosine)``.
* ``model``: the model's P(yes) / (P(yes) + P(no)) for "does this item help
  answer the question?" (:meth:`slmgraph.model.client.ModelClient.choose`: the
  instructions and the question are the system prefix, evaluated once and
  reused; each item costs only its own tokens), minus the same probability
  for the content-free question "N/A" (calibration against a content-free
  input, Zhao et al. 2021, "Calibrate before use"), as
  ``100 * max(0, p - p_na)``.
* ``combined``: the mean of the two.

Which signal is used by default depends on the model's size
(:func:`default_signal`). The embedding separates on-topic from off-topic
questions far better than a small model's P(yes), which is also slow to ask
of every report (docs/decisions.md: helpfulness by embedding). No model
of 1B parameters or more has been measured yet: until one is (re-run the
benchmark with ``--model``), :func:`default_signal` keeps the embedding for
every size, and the floor is on the embedding's scale -- ``--helpfulness
model|combined`` are for measurement (their scores run lower than the
embedding's on the same questions).

Selection (:func:`select`): an item is kept when its score is at least
:data:`FLOOR` and at least :data:`RELATIVE` times the best score; when the
best is under the floor nothing is kept (the no-answer path). The best item
is always kept when it passes the floor, so a question the corpus answers
never ends with everything dropped. Both constants come from the same
benchmark (see their comments).

A cosine's scale depends on the corpus and on how its reports are written
(the demo story's reports are short: "What are the main themes of this
story?" reaches 19 there, the podcast's vaguest global question 23). So for
the embedding signal the floor of an index is lowered, never raised, to what
a fixed set of off-topic probe questions (``prompts/offtopic_probes.txt``,
none of them among the benchmark's questions) reach on its items plus
:data:`PROBE_MARGIN` (:func:`index_floor`): probes reached at most 9.3 on the
demo story (floor 15.3: themes answered, sourdough bread 3.8 not) and 25.6
on the podcast sample (floor stays 22).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from slmgraph.config.settings import Settings

#: Score floor (0-100): the best report must reach it for a question to be
#: answered. It answers every global question of the podcast sample and
#: refuses most off-topic ones (docs/decisions.md: helpfulness floor 22);
#: expect a margin of a few points either way on other corpora.
FLOOR = Settings.helpfulness_floor  # 22.0
#: An item is kept when it scores at least this share of the best item's
#: score (GraphRAG keeps every point with a non-zero score; a relative cut
#: keeps the reports close to the best one and drops the tail of weakly
#: related ones that only dilute an extractive answer). Set by reading the
#: podcast answers (1-10 reports cited per question at 0.7); not swept.
RELATIVE = Settings.helpfulness_relative  # 0.7
#: Points above the best off-topic probe's score at which an index's floor
#: is set when that is under FLOOR (see the module doc; chosen on the demo
#: story and the podcast sample, where on-topic questions' best scores were
#: 10 and more points above the probes' best).
PROBE_MARGIN = 6.0
#: Options scored for the model signal: both capitalisations of yes and no
#: (the assistant's turn starts without a space), summed per answer.
YES_NO = ["Yes", "No", "yes", "no"]
#: The content-free question of the model signal's calibration.
CONTENT_FREE = "N/A"


@dataclass
class Scored:
    """One item's helpfulness.

    Attributes:
        id: the item's id (community id, or text unit number).
        score: helpfulness 0-100 of the signal in use.
        cosine: question-item cosine (all-MiniLM), or None when not computed.
        p_yes: the model's P(yes)/(P(yes)+P(no)), or None when not asked.
        p_yes_na: the same for the content-free question, or None.
    """

    id: object
    score: float
    cosine: float | None = None
    p_yes: float | None = None
    p_yes_na: float | None = None

    def as_dict(self) -> dict:
        """JSON-ready dict (rounded)."""
        d = {"id": self.id, "score": round(self.score, 1)}
        if self.cosine is not None:
            d["cosine"] = round(self.cosine, 4)
        if self.p_yes is not None:
            d["p_yes"] = round(self.p_yes, 4)
            d["p_yes_na"] = round(self.p_yes_na, 4) if self.p_yes_na is not None else None
        return d


def default_signal(n_params) -> str:
    """The ``auto`` signal for ``n_params`` (a loaded model or its parameter count):
    :func:`slmgraph.model.policy.helpfulness` (``embedding`` unless the model's capability record shows its
    P(yes) separating on- from off-topic questions at least as well)."""
    from slmgraph.model.policy import helpfulness

    return helpfulness("auto", n_params)


def cosines(question_vec: np.ndarray, item_vecs: np.ndarray) -> np.ndarray:
    """Cosine of the question with each item, shape ``(n,)``; vectors are
    L2-normalised first (zero vectors give 0)."""
    q = np.asarray(question_vec, dtype=np.float32)
    m = np.asarray(item_vecs, dtype=np.float32).reshape(len(item_vecs), -1)
    if not len(m):
        return np.zeros(0, dtype=np.float32)
    qn = np.linalg.norm(q)
    mn = np.linalg.norm(m, axis=1)
    out = (m @ q) / np.where(mn * qn > 0, mn * qn, 1.0)
    return np.where(mn * qn > 0, out, 0.0).astype(np.float32)


def embedding_score(cos: float) -> float:
    """``100 * max(0, cosine)``, capped at 100."""
    return float(min(100.0, max(0.0, 100.0 * cos)))


def p_yes(choice) -> float:
    """P(yes) / (P(yes) + P(no)) of a :class:`slmgraph.model.protocol.Choice` over :data:`YES_NO`
    (0.5 when no option has mass: the probabilities are then uniform)."""
    probs = choice.probs
    yes = sum(p for o, p in zip(choice.options, probs) if o.strip().lower() == "yes")
    no = sum(p for o, p in zip(choice.options, probs) if o.strip().lower() == "no")
    return yes / (yes + no) if yes + no > 0 else 0.5


def model_score(p: float, p_na: float | None) -> float:
    """``100 * max(0, p - p_na)`` (``p_na`` None: ``100 * p``)."""
    return float(min(100.0, max(0.0, 100.0 * (p - (p_na or 0.0)))))


def combine(signal: str, cos: float | None, p: float | None, p_na: float | None) -> float:
    """The helpfulness score 0-100 of ``signal`` (``embedding``, ``model`` or ``combined``).

    Raises:
        ValueError: an unknown signal, or a signal whose input is missing.
    """
    if signal == "embedding":
        if cos is None:
            raise ValueError("the embedding signal needs a cosine")
        return embedding_score(cos)
    if signal == "model":
        if p is None:
            raise ValueError("the model signal needs P(yes)")
        return model_score(p, p_na)
    if signal == "combined":
        if cos is None or p is None:
            raise ValueError("the combined signal needs a cosine and P(yes)")
        return (embedding_score(cos) + model_score(p, p_na)) / 2
    raise ValueError(f"unknown helpfulness signal {signal!r}")


def ask_model(client, prompts, question: str, texts: list[str], max_item_tokens: int = 400,
              on_call=None) -> list[float]:
    """P(yes)/(P(yes)+P(no)) per item text for ``question`` (one choice call each).

    The instructions and the question form the system prompt (``help_system``,
    the prefix evaluated once); each item, cut to ``max_item_tokens`` tokens,
    is the user part (``help_user``). ``on_call`` receives each
    :class:`slmgraph.model.protocol.Choice` (for token accounting).
    """
    system = prompts.fill("help_system", question=question)
    out = []
    for t in texts:
        ch = client.choose("help", system, prompts.fill("help_user", item=client.truncate(t, max_item_tokens)),
                           YES_NO)
        if on_call is not None:
            on_call(ch)
        out.append(p_yes(ch))
    return out


def score_items(question: str, ids: list, texts: list[str], *, signal: str, embedder=None,
                vectors: dict | None = None, client=None, prompts=None, calibrate: bool = True,
                max_item_tokens: int = 400, on_call=None) -> list[Scored]:
    """Helpfulness of each item for ``question``, in the order given.

    Args:
        ids / texts: the items (same length).
        signal: ``embedding``, ``model`` or ``combined`` (see the module doc).
        embedder: has ``encode(list[str]) -> (n, dim)``; needed by the
            embedding signal (the question, and items missing from ``vectors``).
        vectors: ``id -> vector`` stored at index time; missing ids are
            embedded from their text now (older indexes).
        client / prompts: a :class:`slmgraph.model.client.ModelClient` and
            :class:`slmgraph.config.prompting.Prompts`, needed by the model signal.
        calibrate: subtract P(yes) for the content-free question.
        on_call: receives each model choice made (token accounting).

    Returns:
        one :class:`Scored` per item.

    Raises:
        ValueError: an unknown signal, or its embedder/client missing.
    """
    if len(ids) != len(texts):
        raise ValueError("ids and texts differ in length")
    if signal not in ("embedding", "model", "combined"):
        raise ValueError(f"unknown helpfulness signal {signal!r}")
    cos: list[float | None] = [None] * len(ids)
    ps: list[float | None] = [None] * len(ids)
    pna: list[float | None] = [None] * len(ids)
    if signal in ("embedding", "combined") and ids:
        if embedder is None:
            raise ValueError(f"the {signal} signal needs an embedder")
        vectors = dict(vectors or {})
        missing = [i for i, k in enumerate(ids) if k not in vectors]
        if missing:
            new = embedder.encode([texts[i] for i in missing])
            for i, v in zip(missing, new):
                vectors[ids[i]] = v
        qv = embedder.encode([question])[0]
        cos = [float(c) for c in cosines(qv, np.stack([np.asarray(vectors[k], dtype=np.float32) for k in ids]))]
    if signal in ("model", "combined") and ids:
        if client is None or prompts is None:
            raise ValueError(f"the {signal} signal needs a model client and prompts")
        ps = ask_model(client, prompts, question, texts, max_item_tokens, on_call)
        if calibrate:
            pna = ask_model(client, prompts, CONTENT_FREE, texts, max_item_tokens, on_call)
    return [Scored(k, combine(signal, c, p, q), c, p, q) for k, c, p, q in zip(ids, cos, ps, pna)]


def probe_questions(prompts) -> list[str]:
    """The off-topic probe questions of ``prompts/offtopic_probes.txt`` (comments and blank lines skipped)."""
    return [ln.strip() for ln in prompts.text("offtopic_probes").splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]


def quote_probes(question: str, prompts, settings) -> list[str] | None:
    """The off-topic probe questions an extractive answer's sentences are checked against
    (:func:`slmgraph.query.extractive.sentence_points`), or None: with ``settings.helpfulness_probes`` off, and
    for a question about the whole corpus (:func:`slmgraph.query.route.corpus_wide_phrase`), which names no
    topic to be on."""
    from slmgraph.query.route import corpus_wide_phrase

    if not settings.helpfulness_probes or corpus_wide_phrase(question, prompts) is not None:
        return None
    return probe_questions(prompts) or None


def index_floor(ids: list, texts: list[str], embedder, vectors: dict | None, probes: list[str],
                floor: float = FLOOR, margin: float = PROBE_MARGIN) -> tuple[float, float | None]:
    """``(floor for these items, best probe score)`` under the embedding signal:
    ``min(floor, best score any probe question reaches on the items + margin)``
    (see the module doc). No probes or no items: ``(floor, None)``."""
    if not probes or not ids or embedder is None:
        return floor, None
    best = max(max(s.score for s in score_items(p, ids, texts, signal="embedding", embedder=embedder,
                                                vectors=vectors)) for p in probes)
    return min(floor, best + margin), best


def matrix_floor(mat: np.ndarray, embedder, probes: list[str], floor: float = FLOOR,
                 margin: float = PROBE_MARGIN) -> tuple[float, float | None]:
    """:func:`index_floor` for items given as a vector matrix ``(n, dim)`` (text units or entities, the
    items basic and local search retrieve): ``min(floor, best score any probe reaches on a row + margin)``,
    the probes embedded in one batch. No probes, rows or embedder: ``(floor, None)``."""
    m = np.asarray(mat, dtype=np.float32)
    if not probes or embedder is None or m.ndim != 2 or not len(m):
        return floor, None
    m = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
    p = np.asarray(embedder.encode(probes), dtype=np.float32).reshape(len(probes), -1)
    p = p / np.maximum(np.linalg.norm(p, axis=1, keepdims=True), 1e-9)
    best = embedding_score(float((p @ m.T).max()))
    return min(floor, best + margin), best


def relevance_gate(question: str, best_cosine: float, mat: np.ndarray | None, embedder, prompts, settings,
                   probe_floor: tuple[float, float | None] | None = None) -> dict:
    """Whether basic or local search may answer ``question`` (GraphRAG's basic and local search answer
    anything; slmgraph refuses, as global search does, a question the index holds nothing near).

    The score is ``100 * best_cosine`` (the best question-item cosine of what the search retrieved:
    text units for basic search, the local context's text units for local search); the floor is
    ``settings.helpfulness_floor`` lowered to what the off-topic probes reach on the same kind of items
    plus :data:`PROBE_MARGIN` (:func:`matrix_floor`, when ``settings.helpfulness_probes``). A question
    about the whole corpus (:func:`slmgraph.query.route.corpus_wide_phrase`) is never refused.
    The floor's figures: docs/decisions.md: relevance gate of local and basic search.

    ``probe_floor``: ``(floor, best probe score)`` computed by the caller (for a statistic other than
    the best cosine with the rows of ``mat``; local search's mean), used instead of :func:`matrix_floor`.

    Returns:
        ``{"answer": bool, "best_score", "floor", "probe_best", "corpus_wide_phrase"}`` (scores 0-100, rounded).
    """
    from slmgraph.query.route import corpus_wide_phrase

    floor, probe_best = settings.helpfulness_floor, None
    if probe_floor is not None:
        floor, probe_best = probe_floor
    elif settings.helpfulness_probes and mat is not None:
        floor, probe_best = matrix_floor(mat, embedder, probe_questions(prompts), settings.helpfulness_floor)
    best = embedding_score(best_cosine)
    wide = corpus_wide_phrase(question, prompts)
    return {"answer": best >= floor or wide is not None, "best_score": round(best, 1), "floor": round(floor, 1),
            "probe_best": None if probe_best is None else round(probe_best, 1), "corpus_wide_phrase": wide}


def select(scored: list[Scored], floor: float = FLOOR, relative: float = RELATIVE) -> list[Scored]:
    """The items that reach the answer, best first (ties by the given order).

    Kept: score >= ``floor`` and >= ``relative`` x the best score. Nothing
    when the best is under ``floor``; otherwise at least the best item.
    """
    if not scored:
        return []
    ranked = sorted(enumerate(scored), key=lambda t: (-t[1].score, t[0]))
    best = ranked[0][1].score
    if best < floor or best <= 0:
        return []
    return [s for _, s in ranked if s.score >= floor and s.score >= relative * best]


def roc_auc(positives: list[float], negatives: list[float]) -> float:
    """ROC AUC of scores: the probability that a random positive outscores a
    random negative (ties count half; Mann-Whitney U / (n_pos n_neg)).

    Raises:
        ValueError: either list is empty.
    """
    if not positives or not negatives:
        raise ValueError("roc_auc needs positives and negatives")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))
