"""Quality of the extractive answers (models under 1B parameters) on the podcast sample.

For one index (``--db``) this script answers fixed questions and prints
objective figures, computed from the answer text alone (so the same script
measures any version of the code; run it with another checkout's Python to
get a "before"):

* **global search** (default settings, level 0), on the 10 on-topic
  questions of ``global_questions_sample.csv`` and the 10 off-topic ones of
  ``global_answers.py``: answered / refused, and per quoted sentence (a
  sentence of a bullet's text; the bullet cites its report, whose entities are
  its community's members):

  - ``weak``: a question (ends with "?"), a quoted-dialogue fragment (starts
    with a quotation mark once a transcript's speaker label is removed), under
    8 words (speaker label removed), cut ("…" at its end) or a back-channel
    line ("(Laughter"); each kind also counted alone;
  - ``names_1`` / ``names_2``: names at least 1 / 2 of its report's entities
    (whole words, case ignored);
  - ``q_term``: holds a content word of the question (slmgraph.names.forms.content_words,
    compared on their first 5 letters);
  - ``q_cos``: all-MiniLM cosine with the question (mean);
  - ``redundancy``: per answer, the highest cosine between two of its quoted
    sentences (mean over answers; lower = less repetition), and answers with a
    repeated sentence or looped phrase (slmgraph.query.extractive.has_repetition);
  - ``label_in_text``: share of bullets whose label shares a content word with
    the bullet's text.

  ``weak`` and ``names_*`` are also what the new selection prefers, so they
  show that it does what it says; ``q_cos``, ``q_term``, ``redundancy`` and
  coverage are independent of it.
* **basic and local search** on the same 20 questions plus 6 entity questions
  (``LOCAL_ON``): answered (an answer citing at least one source) or refused.
* **named off-topic questions** (``NAMED_OFF``: people, organisations and places the podcast never
  mentions, e.g. "Who is Angela Merkel?"): refused or answered by every method measured.
* **DRIFT and lazy search** on the on-topic, entity and off-topic questions: answered or refused, and
  answers with a repeated sentence or looped phrase.
* **prose** (every method): answers whose quoted text holds Markdown -- a table row (``| a | b |``), a
  backslash escape (``\\*``), emphasis marks inside a bullet's text (``**``) or a heading mark.
* **the opening sentence** (``--opening N``): global search with the model's
  opening sentence on the first N on-topic questions: how often it is kept,
  the share of its content words found in the points (grounding), its cosine
  with the question against the points' mean, and the seconds it costs.

All other runs replace :func:`slmgraph.query.extractive.synthesize` by a
function that returns no sentence (the points are the same either way, and
the 135M model's call costs most of a query's seconds).

Usage::

    python benchmarks/answer_quality.py --db podcast.duckdb --out answer_quality_after [--opening 10]

Writes ``benchmarks/results/<--out>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from global_answers import OFF_TOPIC, SHARED, load_questions  # noqa: E402

#: Entity-centric questions the podcast sample answers (for basic and local search).
LOCAL_ON = ["What does Andrew Ng say about education?", "Where did Andrew Ng grow up?",
            "What did Bill Gates say about AI?", "What is Code.org?", "What did Sam Altman do before OpenAI?",
            "Who is Kevin Scott?"]
#: People, organisations and places the podcast sample never mentions (checked with grep): every method
#: should refuse these however near their other words come to a transcript.
NAMED_OFF = ["Who is Angela Merkel?", "What did Taylor Swift say about her concert tour?",
             "Where did Lionel Messi grow up?", "What does the European Central Bank say about inflation?",
             "How does Toyota build its cars in Nairobi?"]
#: Markdown that must not be quoted into an answer's bullet text: a table row, a backslash escape, a
#: heading mark, emphasis marks.
_MARKUP = re.compile(r"\|[^|\n]*\|[^|\n]*\||\\[*_`#\[\]|]|(?:^|\s)#{1,6}\s|\*\*")
_BULLET = re.compile(r"^- (?:\*\*(?P<head>.+?)\*\*: )?(?P<text>.*?)(?: \[(?P<label>[A-Za-z]+): (?P<ids>[\d, ]+)\])?$")
_SPEAKER = re.compile(r"^[A-Z][A-Z .'/-]+:\s*")
_QUOTES = ('"', "\u201c", "\u2018", "'")


def bullets(text: str) -> list[dict]:
    """The answer's bullets: ``{head, text, label, ids}`` (ids as ints)."""
    out = []
    for line in text.splitlines():
        m = _BULLET.match(line.strip())
        if m and line.startswith("- "):
            ids = [int(x) for x in (m["ids"] or "").replace(" ", "").split(",") if x]
            out.append({"head": m["head"] or "", "text": m["text"], "label": m["label"], "ids": ids})
    return out


def weak_kinds(sentence: str) -> list[str]:
    """Why a quoted sentence is weak (empty: it is not): question, fragment, short, cut, backchannel."""
    body = _SPEAKER.sub("", sentence).strip()
    kinds = []
    if body.rstrip(" \"'\u201d\u2019").endswith("?"):
        kinds.append("question")
    if body.startswith(_QUOTES):
        kinds.append("fragment")
    if len(body.split()) < 8:
        kinds.append("short")
    if body.endswith("\u2026") or body.endswith("\u2026."):
        kinds.append("cut")
    if "(laughter" in body.casefold():
        kinds.append("backchannel")
    return kinds


def markup_leaks(text: str) -> int:
    """Bullets of an answer whose own text (the quoted part, not the bold head) holds Markdown."""
    return sum(bool(_MARKUP.search(b["text"])) for b in bullets(text))


def names_in(sentence: str, names: list[str]) -> int:
    """How many of ``names`` occur in ``sentence`` as whole words (case ignored)."""
    s = sentence.casefold()
    return sum(1 for n in names if n and re.search(r"(?<!\w)" + re.escape(n.casefold()) + r"(?!\w)", s))


def main() -> int:
    """Answer the questions, measure, print and write the results."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--questions-file", type=Path, default=SHARED / "global_questions_sample.csv")
    ap.add_argument("--out", default="answer_quality")
    ap.add_argument("--opening", type=int, default=0, help="measure the opening sentence on N on-topic questions")
    ap.add_argument("--methods", default="global,basic,local,drift,lazy")
    ap.add_argument("--note", default="", help="run conditions to record")
    ap.add_argument("--global-on", type=int, default=None,
                    help="global search: only the first N on-topic questions (all by default)")
    ap.add_argument("--no-global-style-local", action="store_true",
                    help="basic and local search: leave out the global-style on-topic questions (keep the entity, "
                         "off-topic and named ones), to save time under CPU contention")
    ap.add_argument("--per-set", type=int, default=5,
                    help="DRIFT and lazy search: the first N questions of each set (on-topic, entity, off-topic; "
                         "every named off-topic one), as DRIFT's local follow-ups take seconds per question")
    args = ap.parse_args()

    import slmgraph
    import slmgraph.query.extractive as ex
    from slmgraph.model.backend import load_model
    from slmgraph.model.client import ModelClient
    from slmgraph.config.settings import Settings
    from slmgraph.indexing.stages.embed import Embedder
    from slmgraph.names.forms import content_words
    from slmgraph.text.prose import sentences
    from slmgraph.config.prompting import Prompts
    from slmgraph.query.engines import basic_search as bs_mod, global_search as gs_mod, local_search as ls_mod
    from slmgraph.query.engines import drift_search as dr_mod, lazy_search as lz_mod
    from slmgraph.store.db import Store

    real_synthesize = ex.synthesize

    def no_opening(*a, **k):
        return None, None

    def set_opening(fn):
        for mod in (gs_mod, bs_mod, ls_mod, dr_mod, lz_mod):
            mod.synthesize = fn

    s = Settings()
    store = Store(args.db)
    model = load_model(store.get_meta("model_path") or None, s.n_ctx, s.n_threads, s.seed)
    client = ModelClient(model, store, "bench-answer-quality")
    prompts = Prompts()
    embedder = Embedder(batch_size=s.embed_batch_size, threads=s.n_threads)
    members: dict[int, list[str]] = {}
    for cid, name in store.con.execute("SELECT m.community_id, e.name FROM community_members m "
                                       "JOIN entities e USING (entity_id)").fetchall():
        members.setdefault(cid, []).append(name)
    on_topic = load_questions(args.questions_file)
    all_on_topic = on_topic
    if args.global_on is not None:
        on_topic = on_topic[: args.global_on]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    result: dict = {"code": str(Path(slmgraph.__file__).parent.parent), "db": args.db, "note": args.note,
                    "machine": platform.machine()}

    def vec(texts):
        v = np.asarray(embedder.encode(texts), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)

    set_opening(no_opening)
    rows, sent_rows, named_rows = [], [], []
    leaks = {}
    if "global" in methods:
        for qi, q in enumerate(on_topic + OFF_TOPIC + NAMED_OFF):
            ans = gs_mod.global_search(store, client, prompts, s, q, progress=False, embedder=embedder)
            bl = bullets(ans.text)
            answered = bool(ans.details.get("selected")) and bool(bl)
            if qi >= len(on_topic) + len(OFF_TOPIC):
                named_rows.append({"method": "global", "question": q, "answered": answered, "answer": ans.text})
                print(f"global NAMED {'answered' if answered else 'refused'} -- {q[:60]}", flush=True)
                continue
            qv = vec([q])[0]
            qwords = {w[:5] for w in content_words(q)}
            sents = []
            for b in bl:
                for x in sentences(b["text"]):
                    ents = members.get(b["ids"][0], []) if b["ids"] else []
                    sents.append({"q": qi, "sentence": x, "weak": weak_kinds(x), "names": names_in(x, ents),
                                  "q_term": bool({w[:5] for w in content_words(x)} & qwords)})
            red = None
            if sents:
                sv = vec([r["sentence"] for r in sents])
                for r, c in zip(sents, sv @ qv):
                    r["q_cos"] = float(c)
                if len(sents) > 1:
                    sim = sv @ sv.T
                    np.fill_diagonal(sim, -1)
                    red = float(sim.max())
            sent_rows += sents
            label_ok = [bool(set(content_words(b["head"])) & set(content_words(b["text"]))) for b in bl if b["head"]]
            rows.append({"question": q, "on_topic": qi < len(on_topic), "answered": answered,
                         "bullets": len(bl), "sentences": len(sents), "redundancy": red,
                         "repetition": ex.has_repetition(ans.text), "label_in_text": label_ok,
                         "cited": ans.citations.get("reports", []), "answer": ans.text})
            print(f"global [{qi + 1}] {'ON ' if qi < len(on_topic) else 'OFF'} "
                  f"{'answered' if answered else 'refused'} {len(sents)} sentences -- {q[:60]}", flush=True)
        on_s = [r for r in sent_rows if r["q"] < len(on_topic)]
        n = max(1, len(on_s))
        kinds = ("question", "fragment", "short", "cut", "backchannel")
        on_rows = [r for r in rows if r["on_topic"]]
        labels = [x for r in on_rows for x in r["label_in_text"]]
        result["global"] = {
            "on_topic_answered": sum(r["answered"] for r in on_rows),
            "off_topic_refused": sum(not r["answered"] for r in rows if not r["on_topic"]),
            "quoted_sentences": len(on_s),
            "weak_share": round(sum(bool(r["weak"]) for r in on_s) / n, 3),
            **{f"{k}_share": round(sum(k in r["weak"] for r in on_s) / n, 3) for k in kinds},
            "names_1_share": round(sum(r["names"] >= 1 for r in on_s) / n, 3),
            "names_2_share": round(sum(r["names"] >= 2 for r in on_s) / n, 3),
            "q_term_share": round(sum(r["q_term"] for r in on_s) / n, 3),
            "q_cos_mean": round(statistics.mean(r["q_cos"] for r in on_s), 4) if on_s else None,
            "redundancy_mean": round(statistics.mean(r["redundancy"] for r in on_rows
                                                     if r["redundancy"] is not None), 4),
            "answers_with_repetition": sum(r["repetition"] for r in on_rows),
            "label_in_text_share": round(sum(labels) / max(1, len(labels)), 3),
            "distinct_reports_cited": len({i for r in on_rows for i in r["cited"]}),
        }
        leaks["global"] = sum(markup_leaks(r["answer"]) for r in rows)
    for m in ("basic", "local", "drift", "lazy"):
        if m not in methods:
            continue
        res = []
        sets = ([] if args.no_global_style_local else all_on_topic, LOCAL_ON, OFF_TOPIC)
        if m in ("drift", "lazy"):
            sets = tuple(x[: args.per_set] for x in sets)
        n_on, n_off = len(sets[0]) + len(sets[1]), len(sets[2])
        for qi, q in enumerate(sets[0] + sets[1] + sets[2] + NAMED_OFF):
            t0 = time.perf_counter()
            if m == "basic":
                ans = bs_mod.basic_search(store, client, prompts, s, q, embedder)
            elif m == "local":
                ans = ls_mod.local_search(store, client, prompts, s, q, embedder)
            elif m == "drift":
                ans = dr_mod.drift_search(store, client, prompts, s, q, embedder)
            else:
                ans = lz_mod.lazy_search(store, client, prompts, s, q, embedder)
            cited = [i for v in ans.citations.values() for i in v]
            if qi >= n_on + n_off:
                named_rows.append({"method": m, "question": q, "answered": bool(cited), "answer": ans.text})
                print(f"{m} NAMED {'answered' if cited else 'refused'} -- {q[:60]}", flush=True)
                continue
            res.append({"question": q, "on_topic": qi < n_on, "answered": bool(cited),
                        "best": ans.details.get("best_score"), "floor": ans.details.get("floor"),
                        "repetition": ex.has_repetition(ans.text), "markup": markup_leaks(ans.text),
                        "seconds": round(time.perf_counter() - t0, 1), "answer": ans.text})
            print(f"{m} [{qi + 1}] {'ON ' if res[-1]['on_topic'] else 'OFF'} "
                  f"{'answered' if res[-1]['answered'] else 'refused'} -- {q[:60]}", flush=True)
        result[m] = {"on_topic_answered": sum(r["answered"] for r in res if r["on_topic"]),
                     "on_topic": sum(r["on_topic"] for r in res),
                     "off_topic_refused": sum(not r["answered"] for r in res if not r["on_topic"]),
                     "off_topic": sum(not r["on_topic"] for r in res),
                     "answers_with_repetition": sum(r["repetition"] for r in res),
                     "seconds_median": statistics.median(r["seconds"] for r in res), "questions": res}
        leaks[m] = sum(r["markup"] for r in res)
    if named_rows:
        by_m: dict = {}
        for r in named_rows:
            by_m.setdefault(r["method"], []).append(r)
        result["named_off_topic"] = {m: {"refused": sum(not r["answered"] for r in v), "questions": len(v)}
                                     for m, v in by_m.items()}
    result["markup_leaks"] = leaks
    if args.opening:
        set_opening(real_synthesize)
        if hasattr(s, "opening"):
            s.opening = "model"
        op = []
        for q in on_topic[: args.opening]:
            t0 = time.perf_counter()
            ans = gs_mod.global_search(store, client, prompts, s, q, progress=False, embedder=embedder)
            secs = time.perf_counter() - t0
            raw, kept = ans.details.get("synthesis_raw"), ans.details.get("synthesis")
            bl = bullets(ans.text)
            pw = set()
            for b in bl:
                pw.update(content_words(f"{b['head']} {b['text']}"))
            first = (sentences(" ".join((raw or "").split())) or [""])[0]
            cw = content_words(first)
            grounded = sum(w in pw for w in cw) / len(cw) if cw else 0.0
            qv = vec([q])[0]
            pts = vec([b["text"] for b in bl]) @ qv if bl else np.zeros(1)
            op.append({"question": q, "raw": raw, "kept": kept, "grounded_share": round(grounded, 3),
                       "q_cos_opening": round(float(vec([first or "-"])[0] @ qv), 4),
                       "q_cos_points_mean": round(float(pts.mean()), 4), "seconds": round(secs, 1),
                       "completion_tokens": ans.completion_tokens})
            print(f"opening: kept={kept is not None} grounded={grounded:.2f} {secs:.1f}s -- {(raw or '')[:100]!r}",
                  flush=True)
        result["opening"] = {
            "questions": len(op), "kept": sum(o["kept"] is not None for o in op),
            "grounded_share_mean": round(statistics.mean(o["grounded_share"] for o in op), 3),
            "q_cos_opening_mean": round(statistics.mean(o["q_cos_opening"] for o in op), 4),
            "q_cos_points_mean": round(statistics.mean(o["q_cos_points_mean"] for o in op), 4),
            "seconds_median": statistics.median(o["seconds"] for o in op), "rows": op}
    store.close()

    lines = [f"# Answer quality: {Path(args.db).name}", "",
             f"Code: `{result['code']}`; model {model.name}; all-MiniLM-L6-v2 embeddings. {args.note}", ""]
    g = result.get("global")
    if g:
        lines += ["## Global search, extractive (level 0; quoted sentences of the 10 on-topic answers)", "",
                  "| figure | value |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in g.items()]
        lines += ["", "## First two answers", ""]
        for r in rows[:2]:
            lines += ["```", r["answer"], "```", ""]
    if result.get("named_off_topic"):
        lines += ["## Named off-topic questions (people, organisations, places the corpus never mentions)", "",
                  "| method | refused |", "|---|---|"]
        lines += [f"| {m} | {v['refused']} / {v['questions']} |" for m, v in result["named_off_topic"].items()]
        lines += ["", "Questions: " + "; ".join(NAMED_OFF), ""]
    lines += ["## Prose", "", "Bullets quoting Markdown (table row, backslash escape, heading or emphasis mark), "
              "over all questions: " + ", ".join(f"{m} {v}" for m, v in result["markup_leaks"].items()), ""]
    for m in ("basic", "local", "drift", "lazy"):
        if m in result:
            v = result[m]
            lines += [f"## {m} search", "", f"- on-topic answered: {v['on_topic_answered']} / {v['on_topic']}",
                      f"- off-topic refused: {v['off_topic_refused']} / {v['off_topic']}",
                      f"- answers with a repeated sentence or looped phrase: {v['answers_with_repetition']}",
                      f"- seconds per query (median): {v['seconds_median']}", "",
                      "| # | on-topic | answered | best | floor | question |", "|---|---|---|---|---|---|"]
            lines += [f"| {i} | {'yes' if r['on_topic'] else 'no'} | {'yes' if r['answered'] else 'refused'} | "
                      f"{r['best']} | {r['floor']} | {r['question']} |" for i, r in enumerate(v["questions"], 1)]
            lines.append("")
    o = result.get("opening")
    if o:
        lines += ["## Opening sentence (global search, model-written)", "",
                  f"- kept: {o['kept']} / {o['questions']}",
                  f"- share of its content words in the points (mean, kept or not): {o['grounded_share_mean']}",
                  f"- cosine with the question: opening {o['q_cos_opening_mean']}, points (mean) "
                  f"{o['q_cos_points_mean']}",
                  f"- seconds per query with it (median): {o['seconds_median']}", "",
                  "| kept | grounded | s | model's text |", "|---|---|---|---|"]
        lines += [f"| {'yes' if r['kept'] else 'no'} | {r['grounded_share']} | {r['seconds']} | "
                  f"{(r['raw'] or '').replace('|', '/').replace(chr(10), ' ')[:160]} |" for r in o["rows"]]
        lines.append("")
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out}.md").write_text(text, encoding="utf-8")
    result["global_questions"] = rows
    result["named_questions"] = named_rows
    result["global_sentences"] = sent_rows
    (RESULTS / f"{args.out}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                                               encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
