"""What the embed stage costs on a first build and on an incremental add (issue 12).

One run (``--label L``) measures, with the default settings (no model call under 1B parameters):

1. **First build**: the first ``--first`` files of CORPUS (sorted by name) copied into a fresh
   folder and indexed into a fresh DuckDB file; every stage's wall-clock and the embed stage's
   vectors computed / kept / reused per kind (kind: entity, text unit, report).
2. **Profile** (``--profile``): on the first build's items, per kind: count, word pieces the
   embedder reads (mean, median, 90th percentile, share cut at ``max_seq_length``), characters,
   seconds per vector for a sample encoded alone; the tokenizer's time over every item (what
   computing the content keys costs); torch's intra-op threads and the batch size.
3. **Incremental add**: the next ``--add`` files copied beside them and the same index run again;
   the same figures, plus what changed per kind between the two builds: items with the same id
   whose full text changed, and of those how many changed inside the embedder's window; new ids
   whose window some item already had (reusable by content); windows new to the index.

Run it once on main (``--label before``, with main's ``slmgraph`` first on ``PYTHONPATH``) and
once on the branch (``--label after``): each label's figures are merged into
``benchmarks/results/NAME.json`` and the markdown shows every label present.

Usage::

    python benchmarks/embed_incremental.py [CORPUS] --label after [--first 120] [--add 40] [--profile]
        [--work DIR] [--name embed_incremental]

CORPUS defaults to ``podcast_large/input`` of the benchmark data (``benchkit.DATA``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import time
from pathlib import Path

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store

KINDS = ("entity", "text_unit", "report")


def items(db: Path) -> dict[str, dict[str, str]]:
    """``kind -> {item_id: embedded text}`` of an index, as the embed stage builds them."""
    from slmgraph.indexing.stages.embed import entity_text

    store = Store(db, read_only=True)
    try:
        q = store.con.execute
        return {"entity": {n: entity_text(a, t, d or "") for n, a, t, d in
                           q("SELECT norm, name, type, description FROM entities").fetchall()},
                "text_unit": dict(q("SELECT chunk_id, text FROM text_units").fetchall()),
                "report": {str(c): t or "" for c, t in q("SELECT community_id, full_text FROM community_reports").fetchall()}}
    finally:
        store.close()


def windows(emb, texts: list[str]) -> list[tuple[int, ...]]:
    """Word-piece ids the embedder reads of each text (its own preprocessing, padding left out)."""
    out = []
    for i in range(0, len(texts), 512):
        f = emb.model.preprocess(texts[i:i + 512])
        out += [tuple(t for t, m in zip(r, k) if m) for r, k in zip(f["input_ids"].tolist(),
                                                                  f["attention_mask"].tolist())]
    return out


def key(ids: tuple[int, ...]) -> str:
    return hashlib.sha256(repr(ids).encode()).hexdigest()[:16]


def build(folder: Path, db: Path) -> dict:
    """One ``slmgraph index FOLDER --db DB`` with the default settings: wall-clock and stage figures."""
    t0 = time.perf_counter()
    out = run_index(folder, db, Settings(), progress=False, say=lambda m: print(m, flush=True))
    wall = time.perf_counter() - t0
    stages = {k: v for k, v in out.items() if isinstance(v, dict)}
    return {"wall_seconds": round(wall, 1), "stages": {k: v.get("seconds") for k, v in stages.items()},
            "embed": stages.get("embed", {})}


def profile(emb, its: dict[str, dict[str, str]], sample: int) -> dict:
    """Per kind: counts, word pieces, characters, seconds per vector of a sample; tokenizer time."""
    import torch

    out = {"torch_threads": torch.get_num_threads(), "torch_interop_threads": torch.get_num_interop_threads(),
           "batch_size": emb.batch_size, "max_seq_length": int(emb.model.max_seq_length), "kinds": {}}
    t_tok = 0.0
    for kind in KINDS:
        texts = list(its[kind].values())
        if not texts:
            continue
        t0 = time.perf_counter()
        ws = windows(emb, texts)
        t_tok += time.perf_counter() - t0
        lens = [len(w) for w in ws]
        full = [len(emb.model.tokenizer(t, add_special_tokens=True, truncation=False)["input_ids"])
                for t in texts[:400]]
        pick = texts[::max(1, len(texts) // sample)][:sample]
        emb.encode(pick[:4])  # warm-up
        t0 = time.perf_counter()
        emb.encode(pick)
        dt = time.perf_counter() - t0
        out["kinds"][kind] = {
            "items": len(texts), "word_pieces_mean": round(statistics.mean(lens), 1),
            "word_pieces_median": statistics.median(lens),
            "word_pieces_p90": sorted(lens)[int(0.9 * (len(lens) - 1))],
            "cut_at_window": round(sum(n >= emb.model.max_seq_length for n in lens) / len(lens), 3),
            "untruncated_word_pieces_mean": round(statistics.mean(full), 1),
            "chars_mean": round(statistics.mean(len(t) for t in texts), 1),
            "sample": len(pick), "seconds_per_vector": round(dt / len(pick), 4),
            "vectors_per_second": round(len(pick) / dt, 2)}
    out["tokenize_seconds_all_items"] = round(t_tok, 2)
    return out


def changes(emb, before: dict, after: dict) -> dict:
    """Per kind, what changed between two builds (see the module doc, step 3)."""
    out = {}
    for kind in KINDS:
        b, a = before[kind], after[kind]
        ids_b = list(b)
        ids_a = list(a)
        win_b = windows(emb, [b[i] for i in ids_b])
        win_a = windows(emb, [a[i] for i in ids_a])
        wb = dict(zip(ids_b, (key(w) for w in win_b)))
        wa = dict(zip(ids_a, (key(w) for w in win_a)))
        len_a = dict(zip(ids_a, (len(w) for w in win_a)))
        all_b = set(wb.values())
        same = [i for i in ids_a if i in b]
        text_changed = [i for i in same if a[i] != b[i]]
        new = [i for i in ids_a if i not in b]
        out[kind] = {"before": len(b), "after": len(a), "same_id": len(same),
                     "same_id_text_changed": len(text_changed),
                     "same_id_window_changed": sum(wa[i] != wb[i] for i in text_changed),
                     "new_id": len(new), "new_id_window_known": sum(wa[i] in all_b for i in new),
                     "windows_new_to_the_index": len(set(wa.values()) - all_b),
                     # What keying by item id encodes: every new or changed item, whole window each.
                     "word_pieces_first_build": sum(len(w) for w in win_b),
                     "word_pieces_new_or_changed": sum(len_a[i] for i in new + text_changed)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", type=Path, default=benchkit.DATA / "corpora" / "podcast_large" / "input")
    ap.add_argument("--label", required=True, help="this run's name in the results (e.g. before, after)")
    ap.add_argument("--first", type=int, default=120, help="files of the first build")
    ap.add_argument("--add", type=int, default=40, help="files added on top")
    ap.add_argument("--profile", action="store_true", help="profile the embedder on the first build's items")
    ap.add_argument("--sample", type=int, default=64, help="vectors timed per kind in the profile")
    ap.add_argument("--work", type=Path, default=Path("/tmp/embed_incremental"))
    ap.add_argument("--name", default="embed_incremental")
    args = ap.parse_args()
    files = sorted(p for p in args.corpus.iterdir() if p.is_file())
    work = args.work / args.label
    shutil.rmtree(work, ignore_errors=True)
    folder, db = work / "input", work / "index.duckdb"
    folder.mkdir(parents=True)
    for f in files[:args.first]:
        shutil.copy(f, folder / f.name)
    cond = benchkit.start()
    print(f"[{args.label}] first build: {args.first} files", flush=True)
    first = build(folder, db)
    its1 = items(db)
    from slmgraph.indexing.stages.embed import Embedder

    emb = Embedder()
    prof = profile(emb, its1, args.sample) if args.profile else None
    for f in files[args.first:args.first + args.add]:
        shutil.copy(f, folder / f.name)
    print(f"[{args.label}] incremental: {args.add} files added", flush=True)
    add = build(folder, db)
    its2 = items(db)
    diff = changes(emb, its1, its2)
    cond = benchkit.finish(cond)
    import slmgraph

    run = {"label": args.label, "slmgraph": str(Path(slmgraph.__file__).parent), "corpus": str(args.corpus),
           "files_first": args.first, "files_added": args.add, "conditions": cond, "first_build": first,
           "incremental": add, "changes_at_add": diff, "profile": prof}
    js = benchkit.RESULTS / f"{args.name}.json"
    data = json.loads(js.read_text()) if js.exists() else {"runs": {}}
    data["runs"][args.label] = run
    benchkit.write_results(args.name, render(data), data)
    print(json.dumps(run, indent=1))


def _embed_cell(e: dict, kind: str | None = None) -> str:
    if kind is None:
        return (f"{e.get('embedded', '?')} computed, {e.get('kept', '?')} kept, "
                f"{e.get('reused', 0)} reused")
    k = (e.get("per_kind") or {}).get(kind)
    return f"{k['embedded']} / {k['kept']} / {k['reused']}" if k else "(not recorded)"


def render(data: dict) -> list[str]:
    """The markdown of every label in ``data['runs']``."""
    runs = data["runs"]
    any_run = next(iter(runs.values()))
    lines = [f"# Embed stage: first build and incremental add ({Path(any_run['corpus']).parent.name})", "",
             f"First build: the first {any_run['files_first']} files of `{any_run['corpus']}` (sorted by name); "
             f"then the next {any_run['files_added']} added and the same `slmgraph index` run again. Default "
             "settings (SmolLM2-135M: no model call; all-MiniLM-L6-v2 embeddings). Written by "
             "`benchmarks/embed_incremental.py`.", ""]
    lines += ["| run | build | wall s | embed s | embed share | vectors (computed, kept, reused) | "
              "word pieces encoded |", "|---|---|---|---|---|---|---|"]
    for label, r in runs.items():
        for name in ("first_build", "incremental"):
            b = r[name]
            e, st = b["embed"], b["stages"]
            lines.append(f"| {label} | {name.replace('_', ' ')} | {b['wall_seconds']} | {st.get('embed')} | "
                         f"{st.get('embed', 0) / max(b['wall_seconds'], 1e-9):.0%} | {_embed_cell(e)} | "
                         f"{e.get('word_pieces', '(not recorded)')} |")
    lines += ["", "Per kind (computed / kept / reused):", "",
              "| run | build | entity | text unit | report |", "|---|---|---|---|---|"]
    for label, r in runs.items():
        for name in ("first_build", "incremental"):
            e = r[name]["embed"]
            lines.append(f"| {label} | {name.replace('_', ' ')} | " + " | ".join(_embed_cell(e, k) for k in KINDS)
                         + " |")
    lines += ["", "Word pieces encoded by the embedder, against what encoding every new or changed item "
              "(by item id, as before) reads:", "",
              "| run | build | encoded | by item id |", "|---|---|---|---|"]
    for label, r in runs.items():
        c = r["changes_at_add"]
        for name, field in (("first_build", "word_pieces_first_build"), ("incremental", "word_pieces_new_or_changed")):
            by_id = sum(c[k].get(field, 0) for k in c)
            lines.append(f"| {label} | {name.replace('_', ' ')} | {r[name]['embed'].get('word_pieces', by_id)} | "
                         f"{by_id} |")
    lines += ["", "What changed between the two builds, per kind (windows = the first 256 word pieces the "
              "embedder reads):", "",
              "| run | kind | before | after | same id | same id, text changed | of those, window changed | "
              "new id | new id, window already in the index | windows new to the index |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for label, r in runs.items():
        for kind, c in r["changes_at_add"].items():
            lines.append(f"| {label} | {kind} | {c['before']} | {c['after']} | {c['same_id']} | "
                         f"{c['same_id_text_changed']} | {c['same_id_window_changed']} | {c['new_id']} | "
                         f"{c['new_id_window_known']} | {c['windows_new_to_the_index']} |")
    for label, r in runs.items():
        p = r.get("profile")
        if not p:
            continue
        lines += ["", f"Profile ({label}, first build's items): torch intra-op threads {p['torch_threads']}, "
                      f"inter-op {p['torch_interop_threads']}, batch size {p['batch_size']}, window "
                      f"{p['max_seq_length']} word pieces; tokenizing every item took "
                      f"{p['tokenize_seconds_all_items']} s.", "",
                  "| kind | items | word pieces read: mean / median / p90 | cut at the window | word pieces "
                  "uncut (mean) | chars (mean) | s per vector | vectors/s |", "|---|---|---|---|---|---|---|---|"]
        for kind, k in p["kinds"].items():
            lines.append(f"| {kind} | {k['items']} | {k['word_pieces_mean']} / {k['word_pieces_median']} / "
                         f"{k['word_pieces_p90']} | {k['cut_at_window']:.0%} | {k['untruncated_word_pieces_mean']} | "
                         f"{k['chars_mean']} | {k['seconds_per_vector']} | {k['vectors_per_second']} |")
    lines.append("")
    for label, r in runs.items():
        lines.append(f"- {label}: code from `{r['slmgraph']}`. {benchkit.sentence(r['conditions'])}")
    return lines


if __name__ == "__main__":
    main()
