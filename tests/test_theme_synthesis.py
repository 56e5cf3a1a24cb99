"""The synthesis of a global answer by theme: overview paragraph, a sentence per theme consistent with its
quotes, statements that carry content (figures for questions about amounts), the documents-cited list, and a
query's progress kept out of its answer."""

from __future__ import annotations

import re

import pytest
from conftest import FakeEmbedder, FakeModel, theme_index

from slmgraph.cli.main import main
from slmgraph.model.client import ModelClient
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.query.engines.global_search import global_search
from slmgraph.query.theme_model import asks_figures, content_weight
from slmgraph.store.db import Store

MINUTES = {
    "minutes-2024-01.txt": "Councillor Omar Reyes asked the Environment Agency to review the flood defences on the "
                           "River Wend. The River Wend flooded 42 homes on Mill Lane. It was noted by the clerk today.",
    "minutes-2024-02.txt": "Treasurer Priya Nair put the budget shortfall at 2.3 million pounds after the flood. "
                           "Treasurer Priya Nair proposed a council tax rise to close the budget shortfall.",
    "minutes-2024-03.txt": "The council closed the budget shortfall with a council tax rise of 4.9 percent. "
                           "The Environment Agency agreed to fund the flood defences on the River Wend.",
    "minutes-2024-04.txt": "The Riverton Library will close on Sundays to help the budget shortfall. "
                           "Librarian Grace Okafor opposed the Riverton Library Sunday closure.",
    "minutes-2024-05.txt": "The River Wend rose again, but the flood defences held on Mill Lane. "
                           "Councillor Omar Reyes thanked the Environment Agency for the flood defences.",
}


@pytest.fixture
def minutes(tmp_path):
    root = tmp_path / "minutes"
    root.mkdir()
    for name, text in MINUTES.items():
        (root / name).write_text(text + "\n", encoding="utf-8")
    db = tmp_path / "minutes.duckdb"
    s = Settings(min_community_size=2)
    run_index(root, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db)
    yield store, ModelClient(FakeModel(), store, "q"), s
    store.close()


def _global(ctx, q):
    store, client, s = ctx
    return global_search(store, client, Prompts(), s, q, level=0, progress=False, embedder=FakeEmbedder())


def test_a_corpus_wide_answer_opens_with_its_themes_ranked_by_coverage(minutes):
    ans = _global(minutes, "What are the main themes?")
    first = ans.text.split("\n\n")[0]
    assert first.startswith("These 5 documents, dated 2024-01 to 2024-05, have \u201cminutes\u201d in the titles or "
                            "headings of all 5. Across the 5 documents, the corpus's main theme"), first
    themes = ans.details["themes"]
    assert [t["documents"] for t in themes] == sorted((t["documents"] for t in themes), reverse=True)
    for t in themes:
        assert t["topic"] in first
    assert re.search(r"\(in (all 5 documents|\d of 5 documents)\)", first)


def test_each_theme_sentence_names_the_documents_of_its_statements(minutes):
    ans = _global(minutes, "What are the main themes?")
    secs = [s for s in ans.text.split("\n\n") if s.startswith("### ")]
    assert secs
    for sec in secs:
        _, sentence, *statements = sec.split("\n")
        docs = [re.match(r"- \*([^*,]+)", ln).group(1) for ln in statements]
        quoted = re.search(r"Quoted below from (.+)\.$", sentence).group(1)
        assert sorted(re.findall("\u201c([^\u201d]+)\u201d", quoted)) == sorted(set(docs))
        n = int(re.search(r"discussed in (?:all )?(\d+)", sentence).group(1))
        assert n >= len(docs)


def test_a_global_answer_ends_with_the_documents_it_cites(minutes):
    ans = _global(minutes, "How did the council deal with its budget shortfall?")
    assert "\n\nDocuments cited:\n" in ans.text
    listed = dict(re.findall(r"^- \[(\d+)\] (minutes-2024-\d\d)", ans.text.split("Documents cited:")[1], re.M))
    cited = {str(n) for n in ans.citations["sources"]}
    assert set(listed) == cited and cited
    for n, doc in listed.items():  # each statement's document is the one the list names for its source
        assert re.search(rf"- \*{doc}\*: .+ \[Sources: {n}\]", ans.text)


def test_a_question_about_amounts_prefers_statements_with_figures_and_filler_loses():
    assert asks_figures("How did the council deal with its budget shortfall?")
    assert asks_figures("How have revenue targets evolved?") and not asks_figures("Who is Omar Reyes?")
    plain = "The council discussed the budget shortfall with the treasurer."
    figure = "The council put the budget shortfall at 2.3 million pounds."
    assert content_weight(figure, ["budget shortfall"], figures=True) > content_weight(plain, ["budget shortfall"],
                                                                                        figures=True)
    assert content_weight("It was deferred by the council again.", []) < content_weight(
        "The council deferred the library motion again.", [])
    assert content_weight("The budget shortfall grew.", ["budget shortfall"]) > content_weight("The gap grew.", [])


def test_a_budget_question_quotes_the_figures(minutes):
    ans = _global(minutes, "How did the council deal with its budget shortfall?")
    statements = [ln for ln in ans.text.split("\n") if ln.startswith("- *")]
    assert any(re.search(r"\d", ln) for ln in statements)
    assert not any("It was noted" in ln for ln in statements)


def test_query_progress_never_lands_in_the_answer_output(tmp_path, corpus, capsys, fake_cli, monkeypatch):
    import slmgraph.model.backend

    monkeypatch.setattr(slmgraph.model.backend, "load_model", lambda *a, **k: FakeModel())
    monkeypatch.setattr("slmgraph.query.question_embed.question_embedder", lambda *a, **k: FakeEmbedder())
    db = str(tmp_path / "x.duckdb")
    assert main(["index", str(corpus), "--db", db, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["query", "--db", db, "--method", "global", "What are the main themes?"]) == 0
    out = capsys.readouterr()
    assert "Documents cited" in out.out or "Sources" in out.out
    for stream in (out.out, out.err):
        assert "score:" not in stream and "item/s" not in stream and "\r" not in stream


def _competent_script(system, user, schema):
    """A model that writes a grounded sentence from the first point it is shown (other stages: the default)."""
    from conftest import default_script

    if user.rstrip().endswith("Opening sentence:"):
        line = next(ln for ln in user.splitlines() if ln.startswith("- "))
        words = line.split(": ", 1)[-1].split()[:8]
        return "The minutes say that " + " ".join(words).rstrip(".,") + " in the end."
    return default_script(system, user, schema)


def test_theme_sentences_are_the_models_only_where_its_capability_record_says_it_writes(minutes, monkeypatch):
    from slmgraph.model import policy

    store, _, s = minutes
    q = "How did the council deal with its budget shortfall?"
    small = FakeModel(_competent_script)  # no record: the size rule keeps a small model's answer LLM-free
    policy._CACHE.clear()
    ans = _global((store, ModelClient(small, store, "q"), s), q)
    assert ans.details["theme_sentences"] == "template" and not small.calls
    competent = FakeModel(_competent_script)
    policy.write_record(policy.Record(key=policy.model_key(competent), model=competent.name,
                                      version=policy.policy_version(), n_params=competent.n_params,
                                      stages={"opening": {"beats": True, "model": 0.9, "llm_free": 0.5,
                                                          "measure": "grade"}}))
    policy._CACHE.clear()
    ans = _global((store, ModelClient(competent, store, "q"), s), q)
    assert ans.details["theme_sentences"] == "model" and competent.calls
    secs = [sec for sec in ans.text.split("\n\n") if sec.startswith("### ")]
    assert secs and all(sec.split("\n")[1].startswith("The minutes say that ") for sec in secs)
    assert all(sec.split("\n")[1].count("discussed in") == 1 for sec in secs)  # the data's sentence follows


def test_a_theme_labelled_by_names_alone_quotes_only_sentences_naming_them():
    from slmgraph.query.theme_model import Theme
    from slmgraph.query.themes import build_themes

    ix = theme_index([("u1", "a", 0, "Lex Fridman hosts a long podcast about science. "
                                     "The weather was very pleasant that whole afternoon."),
                      ("u2", "b", 0, "The guests talked about their early careers in great detail.")],
                     entities=[(1, "Lex Fridman")], members=[(7, 1)], entity_units=[(1, "u1"), (1, "u2")],
                     reports=[(7, "Lex Fridman")])
    themes = build_themes(ix, [{"community_id": 7, "entities": ["Lex Fridman"], "summary": ""}], {7: 50.0},
                          None, None)
    assert themes and isinstance(themes[0], Theme)
    assert [s.text for s in themes[0].statements] == ["Lex Fridman hosts a long podcast about science."]


def test_an_overview_of_topics_holding_commas_separates_them_with_semicolons():
    from slmgraph.query.theme_render import _join_topics

    assert _join_topics(["flood wall, barriers (in 4)", "budget, savings (in 3)", "library (in 2)"]) == \
        "flood wall, barriers (in 4); budget, savings (in 3); and library (in 2)"
    assert _join_topics(["flood (in 4)", "budget (in 3)"]) == "flood (in 4) and budget (in 3)"
    assert _join_topics(["brief nod and analytical mind", "comfortable silence and cosmic secrets"]) == \
        "brief nod and analytical mind; and comfortable silence and cosmic secrets"


def test_a_theme_reach_rounds_its_share_from_the_counts():
    from slmgraph.query.theme_render import reach_text

    assert reach_text({"documents": 5, "of": 11, "share": 0.455}) == "5 of 11 documents (45 %)"
