"""The floor of a focused answer's themes, measured: how far above the off-topic probes
(``prompts/offtopic_probes.txt``) the best statement of an on-topic question's evidence stands, against how far
the best statement of an off-topic question's evidence does (the same pipeline as
:func:`slmgraph.query.themes.focused_themes`: the 20 text units nearest the question, their sentences that can be
statements, gap = cosine with the question minus the highest cosine with a probe). An off-topic question's best
gap is what chance reaches in this corpus; the share ``best off-topic gap / best on-topic gap`` is the share of
the best statement's gap under which a statement is no nearer the question than chance.
A probe within ``SIMILAR`` cosine of an off-topic question is left out of that question's gaps (a question
about football is near the football probe: its gaps would be understated).

Usage::

    python benchmarks/relevance_floor.py INDEX.duckdb ON.csv OFF.txt OUT.json
"""

import csv
import json
import sys

import numpy as np

from slmgraph.config.prompting import Prompts
from slmgraph.query.extractive import _embed, prose_sentences
from slmgraph.query.question_embed import question_embedder
from slmgraph.query.scoring import probe_questions
from slmgraph.query.theme_model import EVIDENCE_UNITS, ThemeIndex, _statement_ok, _unit_norm, spoken
from slmgraph.store.db import Store

SIMILAR = 0.4


def best_gap(ix, units, uvec, q: str, probes: list[str], emb) -> tuple[float, float]:
    """``(best gap, best cosine)`` of ``q``'s evidence statements."""
    qv = _unit_norm(emb.encode([q])[0])
    ranked = sorted((u for u in units if u.chunk_id in uvec),
                    key=lambda u: (-float(_unit_norm(uvec[u.chunk_id]) @ qv), u.number))[:EVIDENCE_UNITS]
    sents = list(dict.fromkeys(s for u in ranked for s in map(spoken, prose_sentences(u.text)) if _statement_ok(s, ix)))
    v = _embed(sents, emb)
    pv = _embed(probes, emb)
    pv = pv[(pv @ qv) < SIMILAR]
    cos = v @ qv
    off = (v @ pv.T).max(axis=1)
    return float((cos - off).max()), float(cos.max())


def main() -> None:
    if len(sys.argv) != 5:
        raise SystemExit("usage: python benchmarks/relevance_floor.py INDEX.duckdb ON.csv OFF.txt OUT.json")
    db, on_file, off_file, out = sys.argv[1:5]
    with open(on_file, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    on = [r[next(k for k in ("question_text", "question") if k in rows[0])] for r in rows]
    off = [ln.strip() for ln in open(off_file, encoding="utf-8") if ln.strip() and not ln.startswith("#")]
    store = Store(db)
    ix = ThemeIndex(store)
    units = ix.all_units()
    uvec = ix.unit_vectors([u.chunk_id for u in units])
    emb = question_embedder()
    probes = probe_questions(Prompts())
    res = {"on": {q: best_gap(ix, units, uvec, q, probes, emb) for q in on},
           "off": {q: best_gap(ix, units, uvec, q, probes, emb) for q in off}}
    g_on = [g for g, _ in res["on"].values()]
    g_off = [g for g, _ in res["off"].values()]
    res["summary"] = {"on_best_gap_median": float(np.median(g_on)), "off_best_gap_median": float(np.median(g_off)),
                      "on_min": min(g_on), "on_max": max(g_on), "off_min": min(g_off), "off_max": max(g_off),
                      "share_median": float(np.median(g_off) / np.median(g_on))}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res["summary"], indent=1))
    for k in ("on", "off"):
        for q, (g, c) in res[k].items():
            print(k, round(g, 3), round(c, 3), q)


if __name__ == "__main__":
    main()
