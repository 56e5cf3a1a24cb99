"""Global answers by theme (topic, coverage, statements, citations naming documents), documents in every
method's citations, and corpus-wide questions in dynamic, lazy and TS search."""

from __future__ import annotations

import json
import re

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.api import answer
from slmgraph.model.client import ModelClient
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.query.documents import corpus_documents, coverage_text, date_key, document_date, natural_key
from slmgraph.query.engines.global_search import global_search
from slmgraph.query.theme_model import Boilerplate, is_temporal
from slmgraph.store.db import Store

SAFE = "These statements are based on current expectations and assumptions of the council staff."
MEETINGS = {
    "meeting-1.txt": "Mayor Lena Ortiz opened the budget session at Riverton Hall. The Riverton Library faced a budget "
                     "shortfall of two million dollars that spring. " + SAFE,
    "meeting-2.txt": "Mayor Lena Ortiz proposed closing the Riverton Library on Sundays to cover the shortfall. "
                     "Councillor Omar Reyes objected to closing the Riverton Library at all. " + SAFE,
    "meeting-10.txt": "The Harbor Bridge repairs were delayed by Councillor Omar Reyes for another year. "
                      "Engineers from Delta Works inspected the Harbor Bridge cables in the autumn. " + SAFE,
    "meeting-3.txt": "Councillor Omar Reyes and Mayor Lena Ortiz agreed a council tax rise of three percent. "
                     "The Riverton Library kept its Sunday hours after the council tax rise. " + SAFE,
    "meeting-4.txt": "Delta Works finished the Harbor Bridge repairs ahead of the winter storms. "
                     "Mayor Lena Ortiz thanked Delta Works for the Harbor Bridge work in public. " + SAFE,
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


def _global(council, q, **kw):
    store, client, s = council
    return global_search(store, client, Prompts(), s, q, level=0, progress=False, embedder=FakeEmbedder(), **kw)


def _sections(text):
    return [sec for sec in text.split("\n\n") if sec.startswith("### ")]


def test_boilerplate_is_a_sentence_in_many_documents_and_never_a_statement(council):
    units = [(f"d{i}", f"Fact number {i} about the river and the bridge today. {SAFE}") for i in range(6)]
    units += [("d0", "A sentence that two neighbouring units share word for word here."),
              ("d1", "A sentence that two neighbouring units share word for word here.")]
    bp = Boilerplate(units)
    assert SAFE in bp and SAFE.replace("council", "city") in bp  # near-verbatim: same opening words
    assert "A sentence that two neighbouring units share word for word here." not in bp
    assert "Fact number 3 about the river and the bridge today." not in bp
    ans = _global(council, "What happened to the Riverton Library budget shortfall?")
    assert ans.details.get("by_theme") and _sections(ans.text)
    assert "current expectations" not in ans.text
    assert all("current expectations" not in p["text"] for p in ans.points)


def test_each_theme_has_topic_coverage_statements_and_citations_naming_documents(council):
    store = council[0]
    ans = _global(council, "What happened to the Riverton Library budget shortfall?")
    names = {d.name for d in corpus_documents(store)}
    for sec in _sections(ans.text):
        head, opening, *statements = sec.split("\n")
        assert re.match(r"### \d+\. .+ \[Reports: \d+\]$", head)
        m = re.match(r".+: discussed in (all 5 documents|\d+ of 5 documents( \(\d+ %\))?)\. Quoted below from (.+)\.$",
                     opening)
        assert m and statements
        docs = []
        for line in statements:
            s = re.match(r"- \*([^*,]+)(, unit \d+ of \d+)?\*: (.+) \[Sources: (\d+)\]$", line)
            assert s and s.group(1) in names
            docs.append(s.group(1))
        # the theme's sentence names exactly the documents its statements come from, each once
        assert len(set(docs)) == len(docs)
        assert re.findall("\u201c([^\u201d]+)\u201d", m.group(3)) == sorted(docs, key=lambda d: int(d.split("-")[1]))
    for p in ans.points:
        assert p["topic"] and p["coverage"]["documents"] >= 1 and p["sources"]
        assert p["documents"] and all(d["document"] in names and d["path"].endswith(".txt") for d in p["documents"])


def test_a_corpus_wide_question_lists_the_themes_by_coverage(council):
    ans = _global(council, "What are the main themes across these documents?")
    reach = [t["documents"] for t in ans.details["themes"]]
    assert len(reach) >= 2 and reach == sorted(reach, reverse=True)
    first = ans.text.split("\n\n")[0]
    # what the corpus is (every title says "meeting"; who is in most), then its themes
    assert first.startswith("These 5 documents have \u201cmeeting\u201d in the titles or headings of all 5. Lena "
                            "Ortiz appears in 4 of them and Omar Reyes in 3. Across the 5 documents, the corpus's main themes are "), first
    # the overview names every theme with its reach, in the order of the sections (broadest first)
    topics = [t["topic"] for t in ans.details["themes"]]
    assert [first.index(t) for t in topics] == sorted(first.index(t) for t in topics)
    assert f"{topics[0]} (in " in first


def test_a_question_about_change_over_time_gets_its_statements_in_document_order(council):
    store = council[0]
    assert is_temporal("How has the library budget evolved over the years?") and not is_temporal("Who is Omar?")
    pos = {d.name: d.pos for d in corpus_documents(store)}
    ans = _global(council, "How has the Riverton Library budget evolved?")
    secs = _sections(ans.text)
    assert secs
    for sec in secs:
        docs = [re.match(r"- \*([^*,]+)(, unit \d+ of \d+)?\*: ", ln).group(1) for ln in sec.split("\n")[2:]]
        assert docs and [pos[d] for d in docs] == sorted(pos[d] for d in docs) and len(set(docs)) == len(docs)


def test_documents_are_in_natural_order_and_named_by_title_or_path():
    assert sorted(["m-10.txt", "m-2.txt", "m-1.txt"], key=natural_key) == ["m-1.txt", "m-2.txt", "m-10.txt"]
    cov = {"documents": 2, "of": 5, "share": 0.4, "first": "a", "last": "b"}
    assert coverage_text(cov) == "in 2 of 5 documents, a \u2013 b"


@pytest.mark.parametrize("method", ["global", "basic", "local", "ts", "lazy"])
def test_every_method_names_the_document_of_each_citation(council, method):
    store, client, s = council
    q = "What did Mayor Lena Ortiz say about the Riverton Library?"
    ans = answer(store, client, Prompts(), s, q, method=method, embedder_factory=FakeEmbedder)
    cited = json.loads(json.dumps(ans.to_dict()))["cited_documents"]
    sources = ans.citations.get("sources") or []
    assert sources, ans.text
    assert {int(k) for k in cited["sources"]} == set(sources)
    for info in cited["sources"].values():
        assert re.fullmatch(r"meeting-\d+", info["document"]) and 1 <= info["unit"] <= info["of"]
    for n in sources:  # the text names each cited unit's document too
        doc = cited["sources"][str(n)]["document"]
        assert re.search(rf"(\[{n}\] {doc}|\*{doc}(, unit \d+ of \d+)?\*: .*\[Sources: {n}\])",
                         ans.text), ans.text
    assert ans.points and all(p["documents"] for p in ans.points if p["sources"])


def test_dynamic_selection_answers_a_corpus_wide_question_that_plain_global_search_answers(council):
    store, client, s = council
    q = "What are the main themes across these documents?"
    plain = _global(council, q)
    dyn = global_search(store, client, Prompts(), s, q, dynamic=True, progress=False, embedder=FakeEmbedder())
    assert plain.citations.get("reports") and dyn.citations.get("reports")
    assert "nothing relevant" not in dyn.text and dyn.details["dynamic"]["fallback"] == "level 0"


@pytest.mark.parametrize("method", ["lazy", "ts"])
def test_lazy_and_ts_spread_a_corpus_wide_question_across_documents(council, method):
    store, client, s = council
    ans = answer(store, client, Prompts(), s, "What are the main themes across these documents?", method=method,
                 embedder_factory=FakeEmbedder)
    docs = {info["doc_id"] for info in ans.cited_documents["sources"].values()}
    assert len(docs) >= 3, ans.text


def test_global_search_points_to_basic_search_when_no_report_passes_but_text_units_do(tmp_path):
    root = tmp_path / "c"
    root.mkdir()
    (root / "a.txt").write_text("Alice Smith founded Acme Corporation in Paris. Bob Jones joined Acme Corporation.\n")
    (root / "b.txt").write_text("Carol White met Dan Brown in Berlin. The sourdough starter needs rye flour, warm "
                                "water and patience every single morning.\n")
    db = tmp_path / "c.duckdb"
    s = Settings(min_community_size=2, helpfulness_probes=False)
    run_index(root, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db)
    try:
        client = ModelClient(FakeModel(), store, "q")
        q = "sourdough starter rye flour warm water patience morning"
        ans = global_search(store, client, Prompts(), s, q, level=0, progress=False, embedder=FakeEmbedder())
        assert ans.details["selected"] == [] and ans.details["fallback"] == "basic"
        assert "nothing relevant" in ans.text and "basic search (--method basic) answers from them" in ans.text
        basic = answer(store, client, Prompts(), s, q, method="basic", embedder_factory=FakeEmbedder)
        assert "rye flour" in basic.text  # the search it points to does answer
        off = global_search(store, client, Prompts(), s, "quantum chromodynamics gluon", level=0, progress=False,
                            embedder=FakeEmbedder())
        assert "nothing relevant" in off.text and "fallback" not in off.details and off.citations == {}
    finally:
        store.close()


def test_dynamic_selection_falls_back_to_level_0_when_its_descent_selects_nothing(tmp_path):
    from test_search import _report_tree

    store = _report_tree(tmp_path)
    try:
        s = Settings(helpfulness_floor=95.0)  # the descent's floor; level 0's is lowered by the off-topic probes
        client = ModelClient(FakeModel(), store, "q")
        plain = global_search(store, client, Prompts(), s, "apple", level=0, progress=False,
                              embedder=FakeEmbedder())
        dyn = global_search(store, client, Prompts(), s, "apple", dynamic=True, progress=False,
                            embedder=FakeEmbedder())
        assert plain.citations.get("reports")
        assert dyn.details["dynamic"]["fallback"] == "level 0" and dyn.details["dynamic"]["selected"] == 0
        assert dyn.citations == plain.citations and dyn.text == plain.text
    finally:
        store.close()


DATED_HEADS = {
    "meeting-1.txt": "Minutes, 3 March 2024\n\nThe Riverton Library budget grew to four million dollars this year.",
    "meeting-2.txt": "Minutes, 9 May 2021\n\nThe Riverton Library budget was cut by a quarter after the shortfall.",
    "meeting-3.txt": "Minutes, June 2019\n\nThe Riverton Library budget stood at three million dollars that year.",
    "meeting-4.txt": "Minutes of 2018-01-15\n\nThe Riverton Library budget was two million dollars in its first year."}


@pytest.fixture
def dated_council(tmp_path):
    root = tmp_path / "dated"
    root.mkdir()
    for name, text in MEETINGS.items():
        head = DATED_HEADS.get(name)
        (root / name).write_text((f"{head}\n\n" if head else "") + text + "\n", encoding="utf-8")
    db = tmp_path / "dated.duckdb"
    s = Settings(min_community_size=2)
    run_index(root, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db)
    yield store, ModelClient(FakeModel(), store, "q"), s
    store.close()


def test_dated_documents_are_in_date_order_and_the_change_over_time_answer_names_the_dates(dated_council):
    store = dated_council[0]
    docs = corpus_documents(store)
    assert [(d.name, d.date) for d in docs] == [
        ("meeting-4", "2018-01-15"), ("meeting-3", "June 2019"), ("meeting-2", "9 May 2021"),
        ("meeting-1", "3 March 2024"), ("meeting-10", None)]  # undated after, in path order
    assert [d.pos for d in docs] == [1, 2, 3, 4, 5]
    pos = {d.name: d.pos for d in docs}
    ans = _global(dated_council, "How has the Riverton Library budget evolved?")
    secs = _sections(ans.text)
    assert secs
    for sec in secs:
        names = [re.match(r"- \*([^*,]+)(, unit \d+ of \d+)?\*: ", ln).group(1) for ln in sec.split("\n")[2:]]
        assert names and [pos[d] for d in names] == sorted(pos[d] for d in names)
    m = re.search(r"follow the documents' dates, from \u201c([^\u201d]+)\u201d \(([^)]+)\) to "
                  r"\u201c([^\u201d]+)\u201d \(([^)]+)\)\.", ans.text)
    assert m, ans.text.split("\n\n")[0]
    assert pos[m.group(1)] < pos[m.group(3)] and date_key(m.group(2)) < date_key(m.group(4))


def test_document_dates_from_title_file_name_or_first_lines():
    assert document_date("agm_minutes_2024_06", "agm_minutes_2024_06.md") == ("2024-06", (2024, 6, 0))
    assert document_date("Notes", "notes.txt", "Letter to members, 2 June 2021\n\nDear Members,")[1] == (2021, 6, 2)
    assert document_date("Q3 2021 earnings call", "call.txt")[1] == (2021, 7, 0)
    assert document_date("FY16 results", "r.txt")[1] == (2016, 0, 0)
    assert document_date("Notes", "notes.txt", "one\ntwo\nthree\nIn 2019 we began.") is None  # past the head
    assert date_key("14 September 2019") == (2019, 9, 14) and date_key("Part 12") is None


def test_the_order_sentence_names_dates_a_name_does_not_show():
    from slmgraph.query.documents import Doc, order_sentence

    a = Doc("a", "board_minutes_2019_09.md", "board_minutes_2019_09", "board_minutes_2019_09", 1, 1, "2019-09")
    b = Doc("b", "letter.txt", "letter", "letter", 2, 1, "2 June 2021")
    c = Doc("c", "notes.txt", "notes", "notes", 3, 1, None)
    assert order_sentence(a, b) == ("Each theme's statements follow the documents' dates, from \u201cboard_minutes_2019_09"
                                    "\u201d to \u201cletter\u201d (2 June 2021).")
    assert order_sentence(b, c) == "Each theme's statements follow the documents' order, from \u201cletter\u201d to \u201cnotes\u201d."


def test_an_answer_given_from_the_text_units_gets_no_pointer_to_basic_search(tmp_path, monkeypatch):
    import slmgraph.query.engines.global_search as gs

    root = tmp_path / "t"
    root.mkdir()
    for i, guest in enumerate(("ADA LOVE", "BEN ODE", "CY DIX")):
        (root / f"ep{i}.txt").write_text(f"JO BAKER: Welcome to the show, my guest is {guest.title()}.\n\n"
                                         f"{guest}: Thank you, Jo. I grew up by the harbour in Leith.\n\n"
                                         f"JO BAKER: And the ferries?\n\n{guest}: The ferries run every hour.\n")
    db = tmp_path / "t.duckdb"
    s = Settings(min_community_size=2, helpfulness_probes=False, helpfulness_floor=100.0)
    run_index(root, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db)
    pointed = []
    monkeypatch.setattr(gs, "_unit_fallback", lambda *a, **k: pointed.append(a))
    try:
        client = ModelClient(FakeModel(), store, "q")
        # no report passes a floor of 100, yet the guests are answered from the speaker labels
        ans = gs.global_search(store, client, Prompts(), s, "Who are the guests?", level=0, progress=False,
                               embedder=FakeEmbedder())
        assert ans.details["selected"] == [] and "Ada Love" in ans.text and ans.points, ans.text
        assert pointed == []
        off = gs.global_search(store, client, Prompts(), s, "quantum chromodynamics gluon", level=0, progress=False,
                               embedder=FakeEmbedder())
        assert not off.points and len(pointed) == 1  # no answer: the units are tried
    finally:
        store.close()
