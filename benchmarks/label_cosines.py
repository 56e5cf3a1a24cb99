"""Label-to-label cosines with the index's embedder (all-MiniLM-L6-v2): the figures behind
``slmgraph.query.theme_labels.SAME_THEME``. Prints ``cosine  a | b  kind`` per pair.

Run: ``PYTHONPATH=$PWD python benchmarks/label_cosines.py``.
"""

from __future__ import annotations

from slmgraph.query.extractive import _embed
from slmgraph.query.question_embed import question_embedder
from slmgraph.query.theme_labels import SAME_THEME

PAIRS = [
    ("virtual worlds", "virtual reality", "overlapping"), ("machine learning", "artificial intelligence", "overlapping"),
    ("neural networks", "machine learning", "overlapping"), ("mixed reality", "virtual reality", "overlapping"),
    ("mixed reality", "virtual worlds", "overlapping"), ("tech world", "computer scientist", "distinct"),
    ("computer scientist", "artificial intelligence", "distinct"), ("virtual reality", "video games", "distinct"),
    ("computer scientist", "computer games", "distinct"), ("tech world", "virtual worlds", "distinct"),
    ("machine learning", "unsupervised learning", "related"), ("Alex Mercer", "Jordan Hayes", "names"),
    ("pace", "protocols", "demo"), ("thoughts", "device", "demo"),
    ("artificial intelligence", "robots", "invented"), ("programming languages", "software engineering", "invented"),
    ("startup founders", "venture capital", "invented"), ("social media", "privacy", "invented"),
]


def main() -> None:
    e = question_embedder()
    for a, b, kind in PAIRS:
        v = _embed([a, b], e)
        c = float(v[0] @ v[1])
        print(f"{c:.3f}  {a} | {b}  {kind}{'  (same theme)' if c >= SAME_THEME else ''}")


if __name__ == "__main__":
    main()
