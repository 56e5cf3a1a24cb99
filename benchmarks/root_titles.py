"""Root-community titles of an index: is any a lone common word ("Momentum", "Stories", "Bye-bye")?

A title is a *lone common word* when it is one word, not an acronym, and either a stop word
(:data:`slmgraph.names.forms.STOP`), an interjection or a document-part word (:mod:`slmgraph.names.kinds`), or an
ordinary word capitalised only because it opens sentences: written in lower case somewhere in the corpus,
and every occurrence of it capitalised opens a sentence, line or bracket. A one-word name used as a
name mid-sentence ("Word" in "specific versions of Word", "Fusion" in "design it in Fusion") is a
name, not a common word. Root communities are those of level 0.

Usage::

    python benchmarks/root_titles.py INDEX.duckdb --name root_titles_podcast_large

Writes ``benchmarks/results/NAME.md`` and ``.json``; exits 1 when a root title is a lone common word.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from slmgraph.names.kinds import DOCUMENT_PARTS, INTERJECTIONS
from slmgraph.names.forms import STOP
from slmgraph.store.db import Store

RESULTS = Path(__file__).resolve().parent / "results"


def _opens(text: str, pos: int) -> bool:
    i = pos - 1
    while i >= 0 and text[i] in " \t\"'\u201c\u2018(*#-_\u2014":
        i -= 1
    return i < 0 or text[i] in ".!?:\n\u2026"


def lone_common(title: str, lower: set[str], texts: list[str]) -> bool:
    """True when ``title`` is a lone common word of the corpus ``texts`` (module docstring); ``lower``: the
    words written in lower case in them."""
    t = title.strip()
    if not t or " " in t or "," in t or (t.isupper() and len(t) > 1):
        return False
    w = t.casefold()
    if w in STOP or w in INTERJECTIONS or w in DOCUMENT_PARTS:
        return True
    if w not in lower:
        return False
    pat = re.compile(rf"(?<![\w'\u2019-]){re.escape(t)}(?![\w'\u2019-])")
    return all(_opens(x, m.start()) for x in texts for m in pat.finditer(x))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db", type=Path, help="an index (DuckDB file)")
    ap.add_argument("--name", default="root_titles", help="results file name (benchmarks/results/NAME.md)")
    ap.add_argument("--corpus", default="", help="what the index holds, for the results file")
    args = ap.parse_args(argv)
    store = Store(args.db, read_only=True)
    try:
        lower: set[str] = set()
        texts = [t or "" for (t,) in store.con.execute("SELECT text FROM text_units").fetchall()]
        for text in texts:
            lower.update(re.findall(r"\b[a-z][a-z'-]+\b", text))
        rows = store.con.execute("SELECT community_id, title FROM community_reports WHERE level = 0 "
                                 "ORDER BY community_id").fetchall()
        n_entities = store.count("entities")
    finally:
        store.close()
    bad = [(cid, t) for cid, t in rows if lone_common(t, lower, texts)]
    single = [(cid, t) for cid, t in rows if " " not in t.strip()]
    out = {"index": str(args.db), "corpus": args.corpus, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "root_communities": len(rows), "entities": n_entities, "one_word_titles": [t for _, t in single],
           "lone_common_word_titles": [t for _, t in bad]}
    md = [f"# Root-community titles: {args.corpus or args.db}", "",
          f"{out['when']}; index {args.db.name}: {len(rows)} root communities (level 0), {n_entities} entities.", "",
          "Check (benchmarks/root_titles.py): a root title is a *lone common word* when it is one word, not an "
          "acronym, and a stop word, interjection or document-part word, or a word written in lower case in the "
          "corpus whose every capitalised occurrence opens a sentence, line or bracket.", "",
          f"- one-word root titles: {len(single)}" + (f" ({', '.join(t for _, t in single)})" if single else ""),
          f"- lone common words among them: **{len(bad)}**" + (f" ({', '.join(t for _, t in bad)})" if bad else ""),
          ""]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    (RESULTS / f"{args.name}.md").write_text("\n".join(md), encoding="utf-8")
    print("\n".join(md))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
