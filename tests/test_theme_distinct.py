"""A corpus-wide answer lists distinct themes: a theme whose label says what a more widely discussed theme's
label says gives way to the next candidate."""

from __future__ import annotations

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.model.client import ModelClient
from slmgraph.query.engines.global_search import global_search
from slmgraph.query.question_embed import question_embedder
from slmgraph.query.theme_labels import SAME_THEME, label_phrases, same_theme
from slmgraph.store.db import Store

MEETINGS = {
    "meeting-1.txt": "Mayor Lena Ortiz opened the budget session at Riverton Hall. The Riverton Library faced a budget "
                     "shortfall of two million dollars that spring.",
    "meeting-2.txt": "Mayor Lena Ortiz proposed closing the Riverton Library on Sundays to cover the shortfall. "
                     "Councillor Omar Reyes objected to closing the Riverton Library at all.",
    "meeting-3.txt": "The Harbor Bridge repairs were delayed by Councillor Omar Reyes for another year. "
                     "Engineers from Delta Works inspected the Harbor Bridge cables in the autumn.",
    "meeting-4.txt": "Councillor Omar Reyes and Mayor Lena Ortiz agreed a council tax rise of three percent. "
                     "The Riverton Library kept its Sunday hours after the council tax rise.",
    "meeting-5.txt": "Delta Works finished the Harbor Bridge repairs ahead of the winter storms. "
                     "Mayor Lena Ortiz thanked Delta Works for the Harbor Bridge work in public.",
    "meeting-6.txt": "The Greenway Park flood defence held during the storms. Engineers of Delta Works raised the "
                     "Greenway Park flood defence wall by a metre.",
}


@pytest.fixture
def council(tmp_path):
    root = tmp_path / "council"
    root.mkdir()
    for name, text in MEETINGS.items():
        (root / name).write_text(text + "\n", encoding="utf-8")
    db = tmp_path / "council.duckdb"
    s = Settings(min_community_size=2)
    run_index(root, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db)
    yield store, ModelClient(FakeModel(), store, "q"), s
    store.close()


def _topics(council, embedder):
    store, client, s = council
    ans = global_search(store, client, Prompts(), s, "What are the main themes across these documents?", level=1,
                        progress=False, embedder=embedder)
    return [t["topic"] for t in ans.details["themes"]]


class Words(FakeEmbedder):
    """The fake hashing embedder reading some words as others: ``same`` says "repairs" means "engineers"."""

    def __init__(self, same: dict[str, str]):
        self.same = same

    def encode(self, texts, progress=False):
        return super().encode([" ".join(self.same.get(w, w) for w in t.split()) for t in texts], progress)


def test_a_corpus_wide_answer_leaves_out_a_theme_whose_label_says_what_a_wider_themes_label_says(council):
    # three distinct themes, the most widely discussed first
    distinct = _topics(council, Words({"repairs": "upkeep"}))
    assert distinct == ["Riverton Library, Lena Ortiz, Omar Reyes", "engineers, Delta Works, Greenway Park",
                        "repairs, Harbor Bridge"]
    # the narrowest one's label now says what the engineers' label says: it is not a theme of its own
    assert _topics(council, Words({"repairs": "engineers"})) == distinct[:2]


def test_label_pairs_measured_on_real_answers_are_told_apart_by_the_threshold():
    e = question_embedder()
    assert same_theme(["virtual worlds"], [["mixed reality"]], e)
    assert same_theme(["artificial intelligence"], [["machine learning"], ["tech world", "computer scientist"]], e)
    assert not same_theme(["computer scientist"], [["tech world"]], e)
    assert not same_theme(["video games"], [["machine learning"], ["mixed reality"], ["vehicle technology"]], e)
    assert same_theme(["Computer scientists"], [["computer scientist"]], None)  # the same phrase key
    assert not same_theme(["virtual worlds"], [], e) and 0.5 < SAME_THEME < 0.7
    assert label_phrases("neural networks and machine learning") == ["neural networks", "machine learning"]
    assert label_phrases("engineers, Delta Works, Greenway Park") == ["engineers", "Delta Works", "Greenway Park"]
