"""What each stored vector kind costs the embed stage, and whether shorter embedded texts keep what queries read.

Readers of each kind (from the code): ``entity`` -- local and DRIFT search (nearest entities to the question);
``text_unit`` -- basic, lazy, local, global text-unit route, themes (a unit's first window); ``text_unit_window``
-- basic and lazy (a unit's later windows); ``report`` -- global search's helpfulness score and DRIFT (its
primer). Every kind has a reader, so none is dropped; the candidates shorten what is embedded:

* report: title + summary + the first two findings (today: the whole report, cut at the window);
* entity: ``"name (type): "`` + the description's first sentence (today: the whole description).

Per variant: the distinct windows' word pieces in ``--db`` (what the embed stage encodes), and on ``--sample-db``
(the podcast sample): the helpfulness AUC (each question's best report cosine, the 10 on-topic global questions
against the 10 off-topic ones; level 0 and all levels) and, per on-topic question, the overlap of the 10 nearest
items with today's 10 nearest (the order global search and local search pick from). Vectors by the bundled
embedder at the build's precision; questions by the query-time embedder.

Usage:
    PYTHONPATH=. python benchmarks/embed_reads.py --db PODCAST_LARGE.duckdb --sample-db PODCAST_SAMPLE.duckdb
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402


def report_short(title: str, summary: str, findings: str) -> str:
    """Title, summary and the first two findings of a report, in its own markdown shape."""
    fs = json.loads(findings or "[]")[:2]
    lines = [f"# {title or ''}", "", summary or ""]
    if fs:
        lines += ["", "Findings:"] + [f"- {f.get('summary', '')}: {f.get('explanation', '')}" for f in fs]
    return "\n".join(lines).strip()


def entity_short(name: str, etype: str, description: str) -> str:
    """``name (type): `` and the description's first sentence."""
    from slmgraph.indexing.stages.embed import entity_text
    from slmgraph.text.prose import sentence_spans

    d = description or ""
    sp = sentence_spans(d)
    return entity_text(name, etype, d[sp[0][0]:sp[0][1]] if sp else d)


def variants(con) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """kind -> variant -> ``[(item id, text)]``."""
    from slmgraph.indexing.stages.embed import entity_text

    reps = con.execute("SELECT community_id, level, title, summary, findings, full_text FROM community_reports "
                       "ORDER BY community_id").fetchall()
    ents = con.execute("SELECT norm, name, type, description FROM entities ORDER BY norm").fetchall()
    return {"report": {"whole report (today)": [(f"{c}:{lv}", t or "") for c, lv, _, _, _, t in reps],
                       "title + summary + 2 findings": [(f"{c}:{lv}", report_short(ti, s, f))
                                                        for c, lv, ti, s, f, _ in reps]},
            "entity": {"name (type): description (today)": [(n, entity_text(a, b, d or "")) for n, a, b, d in ents],
                       "name (type): first sentence": [(n, entity_short(a, b, d or "")) for n, a, b, d in ents]}}


def pieces(embedder, texts: list[str]) -> int:
    """Word pieces the embed stage encodes for ``texts``: distinct windows only."""
    from slmgraph.indexing.stages.embed import window_keys

    keys, lens = window_keys(embedder, texts)
    return sum(dict(zip(keys, lens)).values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True, help="an index of the corpus whose build cost is measured")
    ap.add_argument("--sample-db", required=True, help="an index of the podcast sample (quality)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--name", default="embed_reads_s8")
    args = ap.parse_args()

    import duckdb

    from global_answers import OFF_TOPIC, SHARED, load_questions
    from slmgraph.indexing.stages.embed import Embedder, embed_items, window_keys
    from slmgraph.query.question_embed import question_embedder
    from slmgraph.query.scoring import roc_auc

    cond = benchkit.start()
    emb = Embedder(threads=args.threads, precision="auto")
    big = duckdb.connect(args.db, read_only=True)
    cost = {k: {v: pieces(emb, [t for _, t in items]) for v, items in vs.items()} for k, vs in variants(big).items()}
    kinds = dict(big.execute("SELECT kind, count(*) FROM embeddings GROUP BY kind").fetchall())
    big.close()
    con = duckdb.connect(args.sample_db, read_only=True)
    small = variants(con)
    con.close()
    on_topic = load_questions(SHARED / "global_questions_sample.csv")
    q = question_embedder().encode(on_topic + OFF_TOPIC)
    rows = []
    for kind, vs in small.items():
        ref_top = None
        for v, items in vs.items():
            texts = [t for _, t in items]
            _, lens = window_keys(emb, texts)
            c0 = time.process_time()
            mat = embed_items(emb, texts, lens)
            cpu = time.process_time() - c0
            sims = q @ mat.T
            top = np.argsort(-sims[:len(on_topic)], axis=1)[:, :10]
            ref_top = top if ref_top is None else ref_top
            overlap = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(top, ref_top)]))
            row = {"kind": kind, "variant": v, "word_pieces_db": cost[kind][v], "sample_cpu_s": round(cpu, 2),
                   "top10_overlap": round(overlap, 3)}
            if kind == "report":
                best = sims.max(1)
                lvl0 = [i for i, (iid, _) in enumerate(items) if iid.endswith(":0")]
                best0 = sims[:, lvl0].max(1)
                n = len(on_topic)
                row["auc_all_levels"] = round(roc_auc(list(best[:n]), list(best[n:])), 3)
                row["auc_level0"] = round(roc_auc(list(best0[:n]), list(best0[n:])), 3)
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
    cond = benchkit.finish(cond)
    data = {**cond, "db": args.db, "sample_db": args.sample_db, "vectors_db": kinds, "rows": rows,
            "questions": {"on_topic": len(on_topic), "off_topic": len(OFF_TOPIC)}, "precision": emb.precision}
    md = ["# Shorter embedded texts: word pieces saved against what queries read", "",
          benchkit.sentence(cond), "",
          f"Word pieces: distinct windows of `{args.db}` ({kinds}); quality on `{args.sample_db}`, "
          f"{len(on_topic)} on-topic and {len(OFF_TOPIC)} off-topic questions; embedder in {emb.precision}. "
          "top-10 overlap: share of today's 10 nearest items (on-topic questions) that the variant also puts in "
          "its 10 nearest. CPU s: encoding the sample's items, this process (under contention).", "",
          "| kind | variant | word pieces (--db) | AUC level 0 | AUC all levels | top-10 overlap | sample CPU s |",
          "|---|---|---|---|---|---|---|"]
    md += [f"| {r['kind']} | {r['variant']} | {r['word_pieces_db']:,} | {r.get('auc_level0', '-')} | "
           f"{r.get('auc_all_levels', '-')} | {r['top10_overlap']} | {r['sample_cpu_s']} |" for r in rows]
    benchkit.write_results(args.name, md, data)


if __name__ == "__main__":
    main()
