"""Lazy search's extractive answer groups its sentences under their community's title (README's methods
table: "relevance-tested text units grouped by community"), each filed under the community whose members
it names, with its citations as before."""

import re

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.model.client import ModelClient
from slmgraph.query.engines.lazy_search import lazy_search
from slmgraph.store.db import Store


@pytest.fixture
def lazy_store(tmp_path, corpus):
    """--extractor nlp --no-reports: communities without reports, so titles come from their members."""
    db = tmp_path / "lazy.duckdb"
    s = Settings(min_community_size=2, extractor="nlp", reports="none")
    run_index(corpus, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    s.helpfulness_floor, s.helpfulness_probes = 0.0, False  # the fake embedder's cosines are not calibrated
    store = Store(db)
    yield store, s
    store.close()


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """``[(heading, [bullet lines])]`` of an answer's body; bullets before any heading go under ``None``."""
    out: list = []
    for ln in text.split("\n\nSources:")[0].splitlines():
        if ln.startswith("### "):
            out.append((ln[4:], []))
        elif ln.startswith("- "):
            if not out:
                out.append((None, []))
            out[-1][1].append(ln)
    return out


@pytest.mark.parametrize("question", ["What are the main themes across these documents?",
                                      "Who built rockets at Acme Corporation with Alice Smith?",
                                      "Where did Carol White study physics?"])
def test_lazy_answer_groups_its_sentences_under_community_titles(lazy_store, question):
    store, s = lazy_store
    ans = lazy_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, question, FakeEmbedder())
    sections = _sections(ans.text)
    assert sections and all(head for head, _ in sections), ans.text  # every sentence is under a heading
    assert len({head for head, _ in sections}) == len(sections), ans.text  # one heading per community
    cited = [int(n) for _, bullets in sections for b in bullets
             for n in re.search(r"\[Sources: ([\d, ]+)\]$", b).group(1).split(", ")]
    assert set(cited) == set(ans.citations["sources"]), ans.text  # the citations are those of the points
    assert [g["title"] for g in ans.details["groups"]] == [h for h, _ in sections]
    for head, bullets in sections:
        # a heading made of names names someone its sentences name: the community they are filed under
        names = [n for n in re.split(r", | and ", head) if n[:1].isupper()]
        assert any(n in b for n in names for b in bullets), (head, bullets)


def test_a_question_about_change_over_time_is_answered_in_document_date_order(tmp_path):
    corpus = tmp_path / "notes"
    corpus.mkdir()
    texts = {"2024-01-10 notes.md": "Anna Berg said the bridge repair was delayed by the flood. Tom Reed agreed.",
             "2024-05-14 notes.md": "Tom Reed reported that the bridge repair started in May. Anna Berg visited.",
             # the latest notes share the most words with the question: nearest first, they led the answer
             "2024-09-17 notes.md": "Over time the bridge repair did change: the bridge repair was finished "
                                    "over the summer, said Anna Berg and Tom Reed."}
    for name, text in texts.items():
        (corpus / name).write_text(text + "\n", encoding="utf-8")
    db = tmp_path / "lazy.duckdb"
    s = Settings(min_community_size=2, extractor="nlp", reports="none")
    run_index(corpus, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    s.helpfulness_floor, s.helpfulness_probes, s.helpfulness_relative = 0.0, False, 0.0
    store = Store(db)
    try:
        ans = lazy_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s,
                          "How did the bridge repair change over time?", FakeEmbedder())
    finally:
        store.close()
    body = ans.text.split("\n\nSources:")[0]
    dates = re.findall(r"^- \*(\d{4}-\d\d-\d\d) notes\*: ", body, flags=re.M)
    assert len(dates) == len([ln for ln in body.splitlines() if ln.startswith("- ")]) >= 3, ans.text
    assert dates == sorted(dates) and len(set(dates)) == 3, ans.text  # one timeline, earliest first
    assert "### " not in body and ans.details["order"] == "documents"  # no community heading splits it
