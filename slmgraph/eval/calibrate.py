"""The stage bench: each model doing every model stage on a fixed workload, against the LLM-free route.

``slmgraph bench`` and ``slmgraph calibrate MODEL`` run it. Every model stage is forced on
(:func:`forced_settings`: JSON extraction with model-written descriptions and gleaning, element
summaries, community reports, the map and reduce of global answers; claims with ``claims``) on the
workload shipped with the package (:class:`Workload`):

* ``extract``: the Re-DocRED dev slice (``slmgraph/samples/redocred_dev_slice.json``), each document
  indexed alone and scored by :mod:`slmgraph.eval.gold`: strict and lenient entity F1, relationship-pair F1,
  type accuracy. Quality = the mean of strict entity F1 and type accuracy (the model route types the
  entities; its descriptions are checked by the extraction itself).
* ``summarize``, ``report``, ``claims``: the demo story ``dulce.txt`` indexed with the stage on, on the
  graph of the LLM-free extraction (the same graph as row 0's). The model writes the summaries of the
  :data:`STORY_SUMMARIES` elements with the most distinct descriptions and the reports of the
  :data:`STORY_REPORTS` largest communities (:func:`slmgraph.indexing.stages.report_store.largest_communities`; the others are
  the LLM-free texts); the reports of both rows are scored on those communities only.
  Quality of summaries and reports = the **grounded share** (:func:`grounded`) times one minus the
  share of repeated sentences, times one minus the share of model texts the stage replaced by its
  LLM-free fallback (a summary or a report title/summary failing the stage's grounding check); claims:
  the share whose source sentence names both subject and object.
* ``answer``: the story's first questions and off-topic questions answered by global search at level 0
  on the LLM-free index (so only the answer's writer differs): quality = the mean of the on-topic
  answers' grounded share (an unanswered question counts 0) and the share of off-topic questions
  refused.
* ``opening``: the on-topic questions answered by extractive global search at level 0 on the LLM-free
  index; for every theme of the answer quoting two or more statements (:func:`opening_quality`), the model
  writes its opening sentence from the theme's statements, as the answer path asks it
  (:func:`slmgraph.query.extractive.synthesize`, one call per theme); row 0's sentence is the template
  opening the answer has without a model (:func:`slmgraph.query.theme_render.template_opening`, or the
  aspect's or facet's). Quality = the share of themes whose sentence *counts* (:func:`opening_counts`): kept by
  :func:`slmgraph.query.extractive.grounded_synthesis` (grounded in the statements, no loop or repeat, not a
  near-copy of one statement), drawing content words from two different statements (:func:`combines`), and
  naming no name the statements and question do not hold (a garbled or invented name).
* ``help`` (opt-in, ``--p-yes``): the helpfulness scoring's ROC AUC with the model's P(yes) against the
  embedding's (:func:`slmgraph.eval.bench.answer_quality`).

Row 0 is the LLM-free route of every stage (``extractor nlp``, text descriptions, joined summaries,
data reports, extractive answers; claims have none). Per stage and model: quality, the figures behind
it, evaluated / cached / completion tokens and model seconds from the ``llm_calls`` ledger, wall
seconds, and the ratio of the model seconds to the llama.cpp bound at the stage's mean call shape
(:func:`slmgraph.eval.bench.raw_rates_at`). Writes ``bench.md``, ``bench.json`` and ``bench.png`` and one
capability record per model (:mod:`slmgraph.model.policy`): a stage "beats" when its quality is above 0 and
at least row 0's.

One concern, over 500 lines: the stage bench that writes a model's capability record.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from slmgraph.model import policy
from slmgraph.config.settings import Settings, physical_cores
from slmgraph.errors import UserError
from slmgraph.names.forms import content_words, is_grounded
from slmgraph.outputs import output_folder
from slmgraph.samples import DULCE, DULCE_QUESTIONS, GOLD_SLICE, OFFTOPIC_QUESTIONS

#: Stages of the table, in order; ``claims`` only with ``claims``, ``help`` only with ``p_yes``.
STAGES = ("extract", "summarize", "report", "claims", "answer", "opening", "help")
#: Ledger stages counted under each bench stage.
LEDGER_STAGES = {"extract": ("extract", "glean"), "summarize": ("summarize",), "report": ("report",),
                 "claims": ("claims",), "answer": None, "opening": ("synthesis",), "help": ("help",)}
#: What each stage's quality figure is.
MEASURES = {"extract": "mean of entity strict F1 and type accuracy on the gold slice",
            "summarize": "grounded x (1 - repeated) x (1 - replaced) share of summaries",
            "report": "grounded x (1 - repeated) x (1 - replaced) share of reports",
            "claims": "share of claims whose sentence names subject and object",
            "answer": "mean of on-topic grounded share and off-topic refusal share",
            "opening": "share of theme opening sentences kept, combining 2+ statements, inventing no name",
            "help": "ROC AUC of the best report score, on- vs off-topic"}
#: A sentence is supported by its cited text when at least this share of its content words occur there.
GROUNDED_SHARE = 0.5
#: Default workload size: gold documents, on-topic and off-topic questions (the first of each file).
GOLD_DOCS, ON_TOPIC, OFF_TOPIC = 4, 5, 5
#: Default story workload: element summaries and community reports the model writes (the elements with the
#: most descriptions, the largest communities), so the bench's cost does not grow with the story's graph.
STORY_SUMMARIES, STORY_REPORTS = 8, 4
_CITATION = re.compile(r"\[(?:Reports?|Sources?|Entities|Data|Records)[^\]]*\]", re.I)


@dataclass
class Workload:
    """The fixed bench workload: gold documents, the story, its questions and off-topic questions."""

    gold_docs: list
    story: Path
    on_topic: list[str]
    off_topic: list[str]
    summaries: int = STORY_SUMMARIES
    reports: int = STORY_REPORTS


def workload(gold_docs: int = GOLD_DOCS, on_topic: int = ON_TOPIC, off_topic: int = OFF_TOPIC,
             gold: str | Path | None = None, summaries: int = STORY_SUMMARIES,
             reports: int = STORY_REPORTS) -> Workload:
    """The shipped workload, cut to the given sizes (``gold`` replaces the shipped Re-DocRED slice;
    ``summaries`` / ``reports``: model-written story summaries and reports).

    Raises:
        UserError: a size below 1, or a bad ``gold`` file (slmgraph.eval.gold.load_gold).
    """
    from slmgraph.eval.bench import read_questions
    from slmgraph.eval.gold import load_gold

    for name, v in (("--gold-docs", gold_docs), ("--questions", on_topic), ("--offtopic", off_topic),
                    ("--story-summaries", summaries), ("--story-reports", reports)):
        if v < 1:
            raise UserError(f"{name} {v} must be at least 1")
    return Workload(load_gold(Path(gold) if gold else GOLD_SLICE, gold_docs), DULCE,
                    read_questions(DULCE_QUESTIONS)[:on_topic], read_questions(OFFTOPIC_QUESTIONS)[:off_topic],
                    summaries, reports)


def forced_settings(base: Settings, claims: bool = True) -> Settings:
    """``base`` with every model stage on (the bench's model rows); ``claims`` off leaves that stage out."""
    return dataclasses.replace(base, extractor="llm", extract_mode="json", descriptions="model", max_gleanings=1,
                               summaries="model", reports="model", claims=claims, answers="model", opening="off",
                               helpfulness="embedding", workers=1)


def llm_free_settings(base: Settings) -> Settings:
    """``base`` with every stage on its LLM-free route (row 0)."""
    return dataclasses.replace(base, extractor="nlp", descriptions="text", summaries="join", reports="data",
                               claims=False, answers="extractive", opening="off", helpfulness="embedding", workers=1)


def grounded(text: str, source: str) -> tuple[int, int, int]:
    """``(supported, sentences, repeated)`` of ``text`` against ``source``.

    The documented test: citation markers (``[Reports: 1, 2]``) are removed, the text is split into
    sentences (:func:`slmgraph.text.prose.sentences`), and a sentence with content words (3+ letters, not a stop
    word: :func:`slmgraph.names.forms.content_words`) is *supported* when at least :data:`GROUNDED_SHARE` of them
    occur in ``source``, *repeated* when it shares 80 % of its content words with an earlier sentence
    (:func:`slmgraph.query.extractive.near_duplicate`).
    """
    from slmgraph.query.extractive import near_duplicate
    from slmgraph.text.prose import sentences

    words = set(content_words(source))
    sents = [s for s in sentences(_CITATION.sub("", text or "")) if content_words(s)]
    sup = sum(is_grounded(s, words, GROUNDED_SHARE) for s in sents)
    rep = sum(any(near_duplicate(s, t, 0.8) for t in sents[:i]) for i, s in enumerate(sents))
    return sup, len(sents), rep


def _share(a: int, b: int) -> float | None:
    return round(a / b, 3) if b else None


def _text_quality(pairs: list[tuple[str, str]]) -> dict:
    """Grounded and repeated shares of ``(text, source)`` pairs, summed over the pairs."""
    sup = n = rep = 0
    for text, src in pairs:
        a, b, c = grounded(text, src)
        sup, n, rep = sup + a, n + b, rep + c
    g, r = _share(sup, n), _share(rep, n)
    return {"texts": len(pairs), "sentences": n, "grounded_share": g, "repeated_share": r,
            "quality": None if g is None else round(g * (1 - (r or 0)), 3)}


def summary_quality(store) -> dict:
    """:func:`_text_quality` of the descriptions of entities found in two or more text units, each against
    the text of those units."""
    rows = store.con.execute("""
        SELECT e.description, string_agg(t.text, ' ') FROM entities e
        JOIN entity_text_units u USING (entity_id) JOIN text_units t USING (chunk_id)
        GROUP BY e.entity_id, e.description HAVING count(*) >= 2 ORDER BY e.entity_id""").fetchall()
    return _text_quality([(r[0] or "", r[1] or "") for r in rows])


def report_quality(store, only: list[int] | None = None) -> dict:
    """:func:`_text_quality` of the reports (summary and findings; not the title) against what they were
    written from: their members' names, the text of the members' text units and the children's reports
    (not the members' descriptions, which a model may have written without support); ``only``: those
    community ids (None = all)."""
    con = store.con
    src = {cid: txt or "" for cid, txt in con.execute("""
        SELECT m.community_id, string_agg(e.name, ' ')
        FROM community_members m JOIN entities e USING (entity_id) GROUP BY m.community_id""").fetchall()}
    for cid, txt in con.execute("""
            SELECT community_id, string_agg(text, ' ') FROM (
                SELECT DISTINCT m.community_id, t.chunk_id, t.text FROM community_members m
                JOIN entity_text_units u USING (entity_id) JOIN text_units t USING (chunk_id))
            GROUP BY community_id""").fetchall():
        src[cid] = src.get(cid, "") + " " + (txt or "")
    children: dict[int, list[int]] = {}
    for cid, parent in con.execute(
            "SELECT community_id, parent_id FROM communities WHERE parent_id IS NOT NULL").fetchall():
        children.setdefault(parent, []).append(cid)
    full = dict(con.execute("SELECT community_id, full_text FROM community_reports").fetchall())
    pairs = []
    for cid, summary, findings in con.execute(
            "SELECT community_id, summary, findings FROM community_reports ORDER BY community_id").fetchall():
        parts = [summary or ""] + [f"{f.get('summary', '')}. {f.get('explanation', '')}"
                                   for f in json.loads(findings or "[]") if isinstance(f, dict)]
        if only is not None and cid not in only:
            continue
        source = src.get(cid, "") + " " + " ".join(full.get(k) or "" for k in children.get(cid, []))
        pairs.append((" ".join(parts), source))
    return _text_quality(pairs)


def claims_quality(store) -> dict:
    """Claims stored, and the share whose source sentence names both subject and object (tolerant match)."""
    from slmgraph.names.forms import name_occurs

    rows = store.con.execute("""
        SELECT c.source_quote, s.name, o.name FROM claims c
        LEFT JOIN entity_mentions s ON s.chunk_id = c.chunk_id AND s.norm = c.subject_norm
        LEFT JOIN entity_mentions o ON o.chunk_id = c.chunk_id AND o.norm = c.object_norm""").fetchall()
    seen, ok = set(), 0
    for quote, subj, obj in rows:
        key = (quote, subj, obj)
        if key in seen:
            continue
        seen.add(key)
        ok += bool(subj and obj and name_occurs(subj, quote or "") and name_occurs(obj, quote or ""))
    return {"claims": len(seen), "both_named": ok, "quality": _share(ok, len(seen))}


def answer_quality(store, model, settings: Settings, wl: Workload, embedder, run_id: str) -> dict:
    """Answers to the workload's questions by global search at level 0 on ``store``.

    Returns:
        ``{on_topic, answered, grounded_share, off_topic, refused, repeated_share, quality, seconds}``:
        ``grounded_share`` is the mean over on-topic questions of the answer's supported-sentence share
        against the text of the reports it cites (0 when it cites none); an off-topic question is
        refused when the answer cites no report.
    """
    from slmgraph.model.client import ModelClient
    from slmgraph.config.prompting import Prompts
    from slmgraph.query.engines.global_search import global_search

    t0 = time.perf_counter()
    client = ModelClient(model, store, run_id)
    prompts = Prompts(settings.prompts_dir)
    full = dict(store.con.execute("SELECT community_id, full_text FROM community_reports").fetchall())
    g_shares, answered, refused, sents, reps = [], 0, 0, 0, 0
    for q in wl.on_topic:
        ans = global_search(store, client, prompts, settings, q, level=0, progress=False, embedder=embedder)
        cited = ans.citations.get("reports") or []
        if not cited:
            g_shares.append(0.0)
            continue
        answered += 1
        body = ans.text.split("\n\nSources:", 1)[0]  # the engine's list of sources is not the model's text
        sup, n, rep = grounded(body, " ".join(full.get(c) or "" for c in cited))
        g_shares.append(sup / n if n else 0.0)
        sents, reps = sents + n, reps + rep
    for q in wl.off_topic:
        ans = global_search(store, client, prompts, settings, q, level=0, progress=False, embedder=embedder)
        refused += not (ans.citations.get("reports") or [])
    g = round(sum(g_shares) / len(g_shares), 3) if g_shares else 0.0
    r = refused / len(wl.off_topic) if wl.off_topic else 1.0
    return {"on_topic": len(wl.on_topic), "answered": answered, "grounded_share": g,
            "off_topic": len(wl.off_topic), "refused": refused, "repeated_share": _share(reps, sents),
            "quality": round((g + r) / 2, 3), "seconds": round(time.perf_counter() - t0, 1)}


def combines(sentence: str, points: list) -> bool:
    """True when ``sentence`` draws content words from two different points: two points each share with it
    a content word (:func:`slmgraph.names.forms.content_words`) the other lacks. The points' heads (a theme's
    label, the same on every point) are set aside, so a copy of one statement never combines."""
    heads = {w for p in points for w in content_words(p.head)}
    words = set(content_words(sentence)) - heads
    own = [set(content_words(p.text)) & words for p in points]
    return any(a - b and b - a for i, a in enumerate(own) for b in own[i + 1:])


#: A capitalised word after a sentence's first word: a name (or a figure of speech) the sentence states.
_NAME = re.compile(r"(?<=\s)[A-Z][^\W\d_]{2,}")


def invented_names(sentence: str, points: list, question: str) -> list[str]:
    """The capitalised words of ``sentence`` after its first word that neither the points nor the question
    hold (case ignored): a name the model garbled ("Merser" for "Mercer") or made up."""
    held = {w.casefold() for w in re.findall(r"[^\W\d_]+", question + " " + " ".join(
        f"{p.head} {p.text}" for p in points))}
    return [w for w in _NAME.findall(" " + sentence.strip()) if w.casefold() not in held][:5]


def opening_counts(text: str, points: list, question: str) -> dict:
    """How the opening sentence ``text`` (a model's raw output or a template opening) fares over ``points``.

    Returns:
        ``{written, grounded, repeated, kept, combines, invented, counts}`` (bools; ``invented``: the
        :func:`invented_names` list): ``written`` the text holds a sentence with content words; ``grounded``
        its first sentence has :data:`GROUNDED_SHARE` of its content words in the points; ``repeated`` the
        text loops or repeats a sentence (:func:`slmgraph.query.extractive.has_repetition`); ``kept``
        :func:`slmgraph.query.extractive.grounded_synthesis` keeps it; ``counts`` kept, :func:`combines`
        and no invented name.
    """
    from slmgraph.query.extractive import grounded_synthesis, has_repetition
    from slmgraph.text.prose import sentences

    first = next((x for x in sentences(" ".join((text or "").split())) if content_words(x)), "")
    words = {w for p in points for w in content_words(f"{p.head} {p.text}")}
    kept = grounded_synthesis(text or "", points)
    comb = bool(kept) and combines(kept, points)
    inv = invented_names(kept, points, question) if kept else []
    return {"written": bool(first), "grounded": bool(first) and is_grounded(first, words, GROUNDED_SHARE),
            "repeated": has_repetition(text or ""), "kept": kept is not None, "combines": comb, "invented": inv,
            "counts": bool(kept) and comb and not inv}


def opening_quality(store, model, settings: Settings, wl: Workload, embedder, run_id: str,
                    llm_free: bool = False) -> dict:
    """The opening-sentence stage: the workload's on-topic questions answered by extractive global search at
    level 0 on ``store`` (``settings`` on the LLM-free routes, so the themes are the same in every row),
    and for each theme quoting two or more statements its opening scored by :func:`opening_counts` over
    the points the answer path gives the model (``Point(topic, statement)`` each): ``model``'s sentence
    (:func:`slmgraph.query.extractive.synthesize`, one call per such theme, ledgered under ``run_id``), or
    with ``llm_free`` the template opening the answer carries without a model (row 0). A theme of one
    statement has nothing to combine and is left out of both rows.

    Returns:
        ``{questions, themes, written, grounded_share, repeated_share, kept_share, combines_share,
        invented_names, quality, seconds, samples}``: shares over ``themes``; ``quality`` the share whose
        sentence counts; ``samples`` the first sentences scored (at most 8, ``{question, topic, text,
        counts}``).
    """
    from slmgraph.config.prompting import Prompts
    from slmgraph.model.client import ModelClient
    from slmgraph.query.engines.global_search import global_search
    from slmgraph.query.extractive import Point, synthesize

    t0 = time.perf_counter()
    client = ModelClient(model, store, run_id)
    prompts = Prompts(settings.prompts_dir)
    scored: list[tuple[str, str, str, dict]] = []
    for q in wl.on_topic:
        def write(t, q=q):
            points = [Point(t.topic, st.text) for st in t.statements]
            if len(points) < 2:
                return None
            if llm_free:
                text = t.opening  # the template's (or the aspect's, the facet's) opening, set before the writer
            else:
                text = synthesize(client, prompts, q, points)[1].text
            scored.append((q, t.topic, text, opening_counts(text, points, q)))
            return None  # only the sentence is scored: the answer itself stays row 0's

        # ``settings`` are row 0's whatever the row: only the opening's writer differs
        global_search(store, client, prompts, settings, q, level=0, progress=False, embedder=embedder,
                      theme_writer=write)
    n = len(scored)

    def share(key: str) -> float | None:
        return _share(sum(bool(c[key]) for _, _, _, c in scored), n)

    return {"questions": len(wl.on_topic), "themes": n, "written": sum(c["written"] for *_, c in scored),
            "grounded_share": share("grounded"), "repeated_share": share("repeated"), "kept_share": share("kept"),
            "combines_share": share("combines"), "invented_names": sum(len(c["invented"]) for *_, c in scored),
            "quality": share("counts") if n else 0.0, "seconds": round(time.perf_counter() - t0, 1),
            "samples": [{"question": q, "topic": tp, "text": " ".join((x or "").split())[:300],
                         "counts": c["counts"]} for q, tp, x, c in scored[:8]]}


def ledger_rows(db: Path, run_ids: list[str]) -> dict:
    """``{ledger stage: {calls, evaluated, cached, completion, model_seconds, loops}}`` of the runs
    (``loops``: calls that ended on the loop guard, finish_reason ``repetition``)."""
    from slmgraph.store.db import Store

    st = Store(db, read_only=True)
    try:
        q = ",".join("?" * len(run_ids))
        rows = st.con.execute(
            f"SELECT stage, count(*), sum(prompt_tokens), sum(cached_tokens), sum(completion_tokens), sum(seconds), "
            f"count(*) FILTER (WHERE finish_reason = 'repetition') FROM llm_calls WHERE run_id IN ({q}) "
            f"GROUP BY stage", run_ids).fetchall()
    finally:
        st.close()
    return {r[0]: {"calls": r[1], "evaluated": int((r[2] or 0) - (r[3] or 0)), "cached": int(r[3] or 0),
                   "completion": int(r[4] or 0), "model_seconds": round(r[5] or 0, 2), "loops": r[6]} for r in rows}


def _sum(rows: list[dict]) -> dict:
    out = {"calls": 0, "evaluated": 0, "cached": 0, "completion": 0, "model_seconds": 0.0, "loops": 0}
    for r in rows:
        for k in out:
            out[k] += r.get(k, 0) or 0
    out["model_seconds"] = round(out["model_seconds"], 2)
    return out


def bound_ratio(model, row: dict) -> float | None:
    """Model seconds over the llama.cpp bound at the stage's mean call shape (mean cached, evaluated and
    completion tokens per call; :func:`slmgraph.eval.bench.raw_rates_at`, one repeat); None for a model
    that is not a llama.cpp one (a fake) or a stage without calls."""
    from slmgraph.eval.bench import raw_rates_at
    from slmgraph.model.backend import LlamaModel

    if not row.get("calls") or not isinstance(model, LlamaModel) or not row.get("model_seconds"):
        return None
    c = row["calls"]
    cached, prompt, compl = round(row["cached"] / c), max(1, round(row["evaluated"] / c)), round(row["completion"] / c)
    if cached + prompt + compl + 32 > getattr(model, "n_ctx", 4096):
        return None
    p_rate, g_rate = raw_rates_at(model, cached, prompt, compl, repeats=1)
    bound = (row["evaluated"] / p_rate if p_rate else 0) + (row["completion"] / g_rate if g_rate else 0)
    return round(row["model_seconds"] / bound, 2) if bound else None


def _story_index(model, settings: Settings, db: Path, embedder, wl: Workload) -> tuple[dict, dict]:
    """Index the story into ``db`` (model summaries and reports cut to ``wl``'s);
    ``(run_index result, {stage: wall seconds})``."""
    from slmgraph.indexing.pipeline import run_index

    out = run_index(DULCE, db, settings, progress=False, model=model, say=lambda m: None,
                    embedder_factory=lambda: embedder, summary_limit=wl.summaries, report_limit=wl.reports)
    return out, {k: v.get("seconds", 0.0) for k, v in out.items() if isinstance(v, dict)}


def _memo(embedder):
    """``embedder`` encoding each distinct text once (the probe questions and reports every question scores)."""
    from slmgraph.web.serve import MemoEmbedder

    return MemoEmbedder(embedder)


def measure(model, settings: Settings, wl: Workload, embedder, free_db: Path, say: Callable[[str], None], *,
            llm_free: bool = False, p_yes: bool = False, claims: bool = False) -> dict:
    """One row of the stage bench: ``model`` with every model stage forced on, or (``llm_free``) the
    LLM-free route with ``model`` only tokenizing the story.

    Args:
        free_db: the LLM-free story index; row 0 writes it, model rows answer the questions on it.
        claims: measure the claims stage too (no ``auto`` setting depends on it).

    Returns:
        ``{model, n_params, cpu_seconds: {part: s}, stages: {stage: {quality, measure, seconds, calls,
        evaluated, cached, completion, model_seconds, loops, bound_ratio, figures}}}``; ``cpu_seconds`` is
        this process's CPU time (all threads, llama.cpp's included) per part: ``extract``, ``story``
        (the story index: summaries, reports, claims, embeddings), ``answer``, ``opening``, ``help``.
    """
    from slmgraph.eval.gold import WordTokenizer, run_config
    from slmgraph.indexing.stages.report_store import largest_communities
    from slmgraph.store.db import Store, new_run_id

    name = "LLM-free" if llm_free else model.name
    s = llm_free_settings(settings) if llm_free else forced_settings(settings, claims)
    stages: dict[str, dict] = {}
    cpu: dict[str, float] = {}
    embedder = _memo(embedder)  # per row: every row pays for its own embeddings
    c0 = time.process_time()

    say(f"bench: {name}: extraction on {len(wl.gold_docs)} gold documents ...")
    # Extraction alone: summaries and claims are measured on the story.
    gs = dataclasses.replace(s, summaries="join", claims=False)
    r = run_config("llm-free" if llm_free else "model", gs, wl.gold_docs, WordTokenizer() if llm_free else model,
                   embedder_factory=lambda: embedder, say=lambda m: None)
    c = r["cost"]
    cpu["extract"], c0 = round(time.process_time() - c0, 1), time.process_time()
    stages["extract"] = {"quality": round((r["entities"]["f1"] + (r["types"]["accuracy"] or 0.0)) / 2, 3),
                         "seconds": c["wall_seconds"], "calls": c["model_calls"],
                         "evaluated": c["prompt_tokens_evaluated"], "cached": c["prompt_tokens_reused"],
                         "completion": c["completion_tokens"], "model_seconds": c["model_seconds"], "loops": 0,
                         "figures": {"entities_strict_f1": r["entities"]["f1"],
                                     "entities_lenient_f1": r["entities_lenient"]["f1"], "pairs_f1": r["pairs"]["f1"],
                                     "type_accuracy": r["types"]["accuracy"], "documents": r["documents"]}}

    say(f"bench: {name}: indexing the story with {'no model stage' if llm_free else 'summaries, reports' + (', claims' if claims else '') + ' on'} ...")
    with tempfile.TemporaryDirectory(prefix="slmgraph-bench-") as tmp:
        db = free_db if llm_free else Path(tmp) / "story.duckdb"
        # The story's extraction is row 0's (extraction is scored on the gold slice), so summaries, reports
        # and claims are compared on the same graph as the LLM-free route's.
        story = dataclasses.replace(s, extractor="nlp", descriptions="text")
        out, walls = _story_index(model, story, db, embedder, wl)
        cpu["story"], c0 = round(time.process_time() - c0, 1), time.process_time()
        led = ledger_rows(db, [out["run_id"]])
        st = Store(db, read_only=True)
        try:
            stages["summarize"] = {"figures": summary_quality(st), "seconds": walls.get("graph", 0.0)}
            chosen = set(largest_communities(st, wl.reports))
            stages["report"] = {"figures": report_quality(st, chosen), "seconds": walls.get("reports", 0.0)}
            if not llm_free and claims:
                stages["claims"] = {"figures": claims_quality(st), "seconds": walls.get("claims", 0.0)}
        finally:
            st.close()
    for k in ("summarize", "report", "claims"):
        if k in stages:
            stages[k].update(_sum([led[x] for x in LEDGER_STAGES[k] if x in led]))
            stages[k]["quality"] = stages[k]["figures"]["quality"]
    # The stages replace a model text that fails their grounding check by the LLM-free one: that text is
    # the safety net's, not the model's, so the share replaced counts against the model.
    g, rp = out.get("graph") or {}, out.get("reports") or {}
    for k, replaced, written in (("summarize", g.get("summaries_rejected", 0), g.get("summary_calls", 0)),
                                 ("report", rp.get("ungrounded_fields_replaced", 0), 2 * rp.get("model_calls", 0))):
        f = stages[k]["figures"]
        f["model_texts_replaced"] = _share(replaced, written) if written else None
        if written and f["quality"] is not None:
            stages[k]["quality"] = f["quality"] = round(f["quality"] * (1 - replaced / written), 3)

    say(f"bench: {name}: {len(wl.on_topic)} + {len(wl.off_topic)} questions ...")
    run_id = new_run_id()
    st = Store(free_db)
    try:
        a = answer_quality(st, model, s, wl, embedder, run_id)
    finally:
        st.close()
    cpu["answer"], c0 = round(time.process_time() - c0, 1), time.process_time()
    aled = ledger_rows(free_db, [run_id])
    stages["answer"] = dict(_sum(list(aled.values())), quality=a["quality"], seconds=a["seconds"], figures=a)

    say(f"bench: {name}: theme opening sentences on {len(wl.on_topic)} questions ...")
    run_id = new_run_id()
    st = Store(free_db)
    try:
        o = opening_quality(st, model, llm_free_settings(settings), wl, embedder, run_id, llm_free=llm_free)
    finally:
        st.close()
    cpu["opening"], c0 = round(time.process_time() - c0, 1), time.process_time()
    oled = ledger_rows(free_db, [run_id])
    stages["opening"] = dict(_sum([oled[x] for x in LEDGER_STAGES["opening"] if x in oled]), quality=o["quality"],
                             seconds=o["seconds"], figures=o)

    if p_yes:
        from slmgraph.eval.bench import answer_quality as help_auc

        say(f"bench: {name}: P(yes) helpfulness on the same questions ...")
        run_id = new_run_id()
        st = Store(free_db)
        try:
            h = help_auc(st, model, s, wl.on_topic, wl.off_topic, embedder, run_id)
        finally:
            st.close()
        cpu["help"] = round(time.process_time() - c0, 1)
        hled = ledger_rows(free_db, [run_id])
        q = h["auc_signal_in_use"] if llm_free else h["auc_model_p_yes"]
        stages["help"] = dict(_sum([hled[x] for x in ("help",) if x in hled] if not llm_free else []),
                              quality=q, seconds=h["seconds"],
                              figures={k: h[k] for k in ("auc_signal_in_use", "auc_model_p_yes", "signal")})
    for k, row in stages.items():
        row["measure"] = MEASURES[k]
        row["bound_ratio"] = None if llm_free else bound_ratio(model, row)
    return {"model": name, "path": None if llm_free else str(getattr(model, "path", None) or ""),
            "n_params": 0 if llm_free else int(getattr(model, "n_params", 0) or 0), "cpu_seconds": cpu,
            "stages": {k: stages[k] for k in STAGES if k in stages}}


def record_of(model, row: dict, free: dict, source: str) -> policy.Record:
    """The capability record of ``model`` from its bench row and row 0: a stage beats the LLM-free route
    when its quality is above 0 and at least row 0's (a stage without an LLM-free route, claims, never beats: no
    ``auto`` setting turns it on; a model none of whose texts passed does not win a tie at 0)."""
    stages = {}
    for k, r in row["stages"].items():
        f = free["stages"].get(k)
        q, q0 = r.get("quality"), (f or {}).get("quality")
        beats = q is not None and q0 is not None and q >= q0 and q > 0
        stages[k] = {"beats": beats, "measure": r["measure"], "model": q, "llm_free": q0,
                     "seconds": r.get("seconds"), "llm_free_seconds": (f or {}).get("seconds"),
                     "figures": r.get("figures")}
    return policy.Record(key=policy.model_key(model), model=row["model"], version=policy.policy_version(),
                         n_params=row["n_params"], stages=stages, date=policy.today(), source=source)


def run(models: list[str | None], out: str | Path, settings: Settings, say: Callable[[str], None] = print,
        load: Callable | None = None, *, wl: Workload | None = None, p_yes: bool = False, claims: bool = False,
        embedder_factory: Callable | None = None, source: str = "bench") -> dict:
    """The stage bench of ``models`` (GGUF paths; None = the bundled model): row 0 then each model; writes
    ``bench.md``, ``bench.json``, ``bench.png`` into ``out`` and a capability record per model.

    Args:
        load: ``(path, settings) -> model`` (tests pass a fake); None = :func:`slmgraph.model.backend.load_model`.
        wl: the workload (None: :func:`workload` at its defaults).
        p_yes / claims: also measure the P(yes) helpfulness stage / the claims stage (opt-in: no ``auto``
            setting depends on either, and they are the slowest).
        embedder_factory: ``() -> embedder`` (tests pass a fake); None = the bundled all-MiniLM-L6-v2.

    Returns:
        ``{date, machine, load_average_before, load_average_after, seconds, cpu_seconds, workload,
        rows: [row 0, ...], records: [paths], files: [paths]}`` (``cpu_seconds``: this process's CPU time,
        all threads; on a shared machine the wall seconds grow with the load, the CPU seconds much less).

    Raises:
        UserError: a model file is missing; ``out`` cannot be created (checked before any model loads).
    """
    t_start, c_start = time.perf_counter(), time.process_time()
    for m in models:
        if m is not None and not Path(m).is_file():
            raise UserError(f"{m} is not a file: pass GGUF files (bench: separated by commas)")
    wl = wl or workload()
    outdir = output_folder(out)
    if load is None:
        from slmgraph.model.backend import load_model

        def load(p, s):
            return load_model(p, s.n_ctx, s.n_threads, s.seed, s.threads_explicit)
    if embedder_factory is None:
        from slmgraph.indexing.stages.embed import Embedder

        def embedder_factory():
            return Embedder(batch_size=settings.embed_batch_size, threads=settings.n_threads)

    embedder = embedder_factory()
    result = {"date": policy.today(), "machine": f"{platform.machine()}, {physical_cores()} physical cores",
              "load_average_before": [round(x, 2) for x in os.getloadavg()], "version": policy.policy_version(),
              "workload": {"gold_documents": len(wl.gold_docs), "story": wl.story.name, "on_topic": len(wl.on_topic),
                           "off_topic": len(wl.off_topic), "story_summaries": wl.summaries,
                           "story_reports": wl.reports, "p_yes": p_yes, "claims": claims},
              "rows": [], "records": []}
    with tempfile.TemporaryDirectory(prefix="slmgraph-bench-free-") as tmp:
        free_db = Path(tmp) / "llm_free.duckdb"
        free = None
        for m in models:
            s = dataclasses.replace(settings, model_path=m)
            model = load(m, s)
            if free is None:
                free = measure(model, s, wl, embedder, free_db, say, llm_free=True, p_yes=p_yes)
                _write(result | {"rows": [free]}, outdir, t_start, c_start)
                result["rows"].append(free)
            row = measure(model, s, wl, embedder, free_db, say, p_yes=p_yes, claims=claims)
            result["rows"].append(row)
            rec = record_of(model, row, free, source)
            try:
                result["records"].append(str(policy.write_record(rec)))
            except OSError as exc:
                say(f"warning: capability record of {row['model']} not written ({exc}): set "
                    f"{policy.RECORDS_ENV} to a writable folder")
            row["beats"] = {k: v["beats"] for k, v in rec.stages.items()}
            _write(result, outdir, t_start, c_start)  # after each model, so a long run's finished rows are kept
    _write(result, outdir, t_start, c_start)
    files = [outdir / "bench.md", outdir / "bench.json"]
    png = chart(result, outdir / "bench.png")
    if png:
        files.append(png)
    result["files"] = [str(f) for f in files]
    return result


def _write(result: dict, outdir: Path, t_start: float, c_start: float) -> None:
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    result["seconds"] = round(time.perf_counter() - t_start, 1)
    result["cpu_seconds"] = round(time.process_time() - c_start, 1)
    (outdir / "bench.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (outdir / "bench.md").write_text(render(result) + "\n", encoding="utf-8")


def _f(x, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def render(result: dict) -> str:
    """The stage bench as a Markdown table (one row per stage and model, row 0 first in each stage) and the
    run conditions."""
    head = ["stage", "model", "quality", "beats LLM-free", "detail", "calls", "evaluated tok", "cached tok",
            "completion tok", "model s", "wall s", "x llama.cpp bound"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for stage in STAGES:
        for row in result["rows"]:
            r = row["stages"].get(stage)
            if r is None:
                continue
            fig = r.get("figures") or {}
            if stage == "extract":
                detail = (f"lenient {_f(fig.get('entities_lenient_f1'))}, pairs {_f(fig.get('pairs_f1'))}, "
                          f"types {_f(fig.get('type_accuracy'))}")
            elif stage in ("summarize", "report"):
                detail = (f"{fig.get('texts')} texts, grounded {_f(fig.get('grounded_share'))}, repeated "
                          f"{_f(fig.get('repeated_share'))}, replaced {_f(fig.get('model_texts_replaced'))}, "
                          f"loops {r.get('loops', 0)}")
            elif stage == "claims":
                detail = f"{fig.get('claims')} claims, {fig.get('both_named')} name both"
            elif stage == "opening":
                detail = (f"{fig.get('themes')} themes of {fig.get('questions')} questions, kept "
                          f"{_f(fig.get('kept_share'))}, combining {_f(fig.get('combines_share'))}, grounded "
                          f"{_f(fig.get('grounded_share'))}, repeated {_f(fig.get('repeated_share'))}, invented "
                          f"names {fig.get('invented_names')}")
            elif stage == "answer":
                detail = (f"answered {fig.get('answered')}/{fig.get('on_topic')}, grounded "
                          f"{_f(fig.get('grounded_share'))}, off-topic refused {fig.get('refused')}/"
                          f"{fig.get('off_topic')}, repeated {_f(fig.get('repeated_share'))}")
            else:
                detail = f"embedding AUC {_f(fig.get('auc_signal_in_use'))}, P(yes) AUC {_f(fig.get('auc_model_p_yes'))}"
            beats = row.get("beats", {}).get(stage)
            cells = [stage, row["model"], _f(r.get("quality")), "row 0" if "beats" not in row else
                     ("yes" if beats else "no"), detail, r.get("calls", 0), r.get("evaluated", 0), r.get("cached", 0),
                     r.get("completion", 0), _f(r.get("model_seconds"), ".1f"), _f(r.get("seconds"), ".1f"),
                     _f(r.get("bound_ratio"), ".2f")]
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    w = result["workload"]
    per_row = ", ".join(f"{r['model']} {sum((r.get('cpu_seconds') or {}).values()):.0f}" for r in result["rows"])
    cut = (f" (model summaries of the {w['story_summaries']} elements with the most descriptions, reports of the "
           f"{w['story_reports']} largest communities)") if "story_reports" in w else ""
    lines.append(f"\nWorkload: {w['gold_documents']} Re-DocRED dev documents, {w['story']}{cut} with {w['on_topic']} "
                 f"on-topic and {w['off_topic']} off-topic questions; prompts and sampler {result['version']}; "
                 f"{result['machine']}; load average before {result['load_average_before']}, after "
                 f"{result.get('load_average_after')}; {result.get('seconds')} s in all, "
                 f"{result.get('cpu_seconds')} CPU s ({per_row}; other processes on the cores slow every wall "
                 "figure). Quality: " + "; ".join(f"{k}: {v}" for k, v in MEASURES.items()) + ".")
    return "\n".join(lines)


def chart(result: dict, path: Path) -> Path | None:
    """A PNG with one panel per stage: quality against wall seconds, one mark per model (row 0 included).
    None when matplotlib is not installed (the table and JSON are still written)."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stages = [s for s in STAGES if any(s in r["stages"] for r in result["rows"])]
    fig, axes = plt.subplots(1, len(stages), figsize=(3.2 * len(stages), 3.4), dpi=100, squeeze=False)
    marks = "osD^v<>ph*"
    for ax, stage in zip(axes[0], stages):
        for i, row in enumerate(result["rows"]):
            r = row["stages"].get(stage)
            if r is None or r.get("quality") is None:
                continue
            ax.plot([r.get("seconds") or 0], [r["quality"]], marks[i % len(marks)], color=f"C{i % 10}", markersize=8,
                    label=row["model"])
        ax.set_title(stage, fontsize=9)
        ax.set_xlabel("seconds (wall)", fontsize=8)
        ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel("quality (0..1)")
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.suptitle("slmgraph bench: quality against seconds per stage", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
