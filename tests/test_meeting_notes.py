"""Markdown meeting notes: no method quotes a section title ("## Next steps") as a point, and none quotes filler
("Yes.", "See above.", "They agreed.") while the notes hold a statement to quote."""

import re

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.model.client import ModelClient
from slmgraph.query.engines.basic_search import basic_search
from slmgraph.query.engines.drift_search import drift_search
from slmgraph.query.engines.global_search import global_search
from slmgraph.query.engines.lazy_search import lazy_search
from slmgraph.query.engines.local_search import local_search
from slmgraph.query.extractive import filler, heading_keys, report_points, sentence_points
from slmgraph.store.db import Store

WEEKS = [
    ("Marta Ruiz set the launch of the Atlas app for 15 March.",
     "Tom Berg proposed Northwind Cloud as the hosting vendor for the Atlas app."),
    ("Marta Ruiz moved the launch of the Atlas app from 15 March to 12 April.",
     "Tom Berg reported two outages of Northwind Cloud during the Atlas tests."),
    ("Marta Ruiz moved the launch of the Atlas app again, from 12 April to 3 May.",
     "Tom Berg signed the Skyline Hosting contract to replace Northwind Cloud."),
    ("The Atlas app launched on 3 May with four thousand sign-ups.",
     "Tom Berg planned the Skyline Hosting move for June."),
]
HEADINGS = {"Week 1 sync", "Week 2 sync", "Week 3 sync", "Week 4 sync", "Discussion", "Decisions", "Action items",
            "Next steps"}


def _note(n: int, a: str, b: str) -> str:
    return (f"# Week {n} sync\n\n## Discussion\n\n{a} {b}\n\n## Decisions\n\n- Yes.\n- Good point.\n- They agreed.\n\n"
            f"## Action items\n\n- Tom Berg to follow up with Marta Ruiz.\n- TBD\n\n## Next steps\n\nSee above.\n")


@pytest.fixture(scope="module")
def notes(tmp_path_factory):
    root = tmp_path_factory.mktemp("notes")
    for n, (a, b) in enumerate(WEEKS, start=1):
        (root / f"week{n:02d}.md").write_text(_note(n, a, b), encoding="utf-8")
    db = root.parent / "notes.duckdb"
    s = Settings(min_community_size=2, extractor="nlp")
    run_index(root, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    return db, s


def _points(text: str) -> list[str]:
    """The quoted sentences of an extractive answer's points (a report point's bold head set aside)."""
    out = []
    for line in text.split("\n"):
        m = re.match(r"\s*- (?:\*\*(.+?)\*\*: )?(?:\*[^*]+\*: )?(.+?) \[(?:Sources|Reports)", line)
        if m:
            out += [x for x in re.split(r"(?<=[.!?])\s+", m.group(2)) if x]
    return out


def _bare(s: str) -> str:
    return " ".join(re.findall(r"\w+", s)).casefold()


@pytest.mark.parametrize("method", ["basic", "local", "drift", "global", "lazy"])
@pytest.mark.parametrize("question", ["What are the next steps?", "What was discussed and decided?",
                                      "What did the team decide about the hosting vendor?"])
def test_no_method_quotes_a_section_title_or_filler(notes, method, question):
    db, s = notes
    store = Store(db)
    try:
        client = ModelClient(FakeModel(), store, "q")
        run = {"basic": basic_search, "local": local_search, "drift": drift_search, "lazy": lazy_search}.get(method)
        if run is None:
            ans = global_search(store, client, Prompts(), s, question, embedder=FakeEmbedder())
        else:
            ans = run(store, client, Prompts(), s, question, FakeEmbedder())
    finally:
        store.close()
    points = _points(ans.text)
    headings = {_bare(h) for h in HEADINGS}
    assert not [p for p in points if _bare(p) in headings], ans.text
    assert not [p for p in points if filler(p)], ans.text


def test_a_section_title_carried_into_a_report_finding_is_no_point():
    # An entity named by a heading ("Next") gets the heading line as its description, so its report's finding
    # is "Next steps.": a report point quoting it would quote a heading.
    keys = heading_keys(["# Week 14 sync\n\n## Next steps\n\nTom Berg will sign the contract.\n"])
    reports = [{"community_id": 1, "title": "Next", "findings": [{"summary": "Next", "explanation": "Next steps."}]},
               {"community_id": 2, "title": "Week", "findings": [{"summary": "Week", "explanation": "Week 14 sync."}]},
               {"community_id": 3, "title": "Tom Berg", "findings": [
                   {"summary": "Tom Berg", "explanation": "Tom Berg will sign the hosting contract in June."}]}]
    emb = FakeEmbedder()
    points = report_points(reports, {1: 90, 2: 80, 3: 50}, emb.encode(["next steps week sync"])[0], emb,
                           headings=keys)
    assert [p.ids for p in points] == [[3]]


def test_filler_is_quoted_only_when_nothing_else_is_there():
    emb = FakeEmbedder()
    qv = emb.encode(["What did they agree about the launch?"])[0]
    text = "They agreed. Yes. See above. Good point. Marta Ruiz moved the launch from 15 March to 12 April."
    points = sentence_points([(1, text)], qv, emb)
    assert [p.text for p in points] == ["Marta Ruiz moved the launch from 15 March to 12 April."]
    assert [p.text for p in sentence_points([(1, "They agreed.")], qv, emb)] == ["They agreed."]
    assert filler("This is risky.") and filler("Lena Okafor.") and filler("TBD")
    assert not filler("It was deferred to 3 May because the ledger rewrite took longer than planned.")


def test_drift_answers_a_change_over_time_in_the_order_of_the_notes_naming_each(notes):
    db, s = notes
    store = Store(db)
    try:
        ans = drift_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s,
                           "How did the launch of the Atlas app change between the early and the late notes?",
                           FakeEmbedder())
    finally:
        store.close()
    weeks = [int(m) for m in re.findall(r"(?m)^- \*week(\d+)\*: ", ans.text)]
    assert len(weeks) >= 2 and weeks == sorted(weeks) and len(set(weeks)) >= 2, ans.text
    assert ans.details["order"] == "documents"


def test_a_question_about_a_development_asks_no_change():
    from slmgraph.query.route import asks_change

    assert asks_change("How did the team's plans for the launch change between the early and the late notes?")
    assert not asks_change("How do guests generally perceive the impact of privacy laws on technology development?")
