"""Basic search answers: no passage labels leak into the text."""

from conftest import FakeEmbedder, FakeModel

from slmgraph.model.client import ModelClient
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.store.db import Store


def test_a_basic_answer_does_not_leak_passage_labels(tmp_path, corpus):
    from conftest import default_script, stage_of

    from slmgraph.query.engines.basic_search import basic_search

    db = tmp_path / "x.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)

    def script(system, user, schema):
        if stage_of(schema, system) == "answer":
            return "Passage 4: Alice Smith founded Acme Corporation [Sources: 1]. Passage 2:\nIt is in Paris."
        return default_script(system, user, schema)

    store = Store(db, read_only=True)
    ans = basic_search(store, ModelClient(FakeModel(script), store, "q"), Prompts(), Settings(answers="model"),
                       "Who founded Acme Corporation?", FakeEmbedder())  # the model writes the whole answer
    store.close()
    assert "Passage" not in ans.text.split("\n\nSources:")[0]
    assert ans.text.startswith("Alice Smith founded Acme Corporation [Sources: 1].")


JAPANESE = ("# 姉妹灯台訪問記\n\n2023年4月、保存協会の会員六名が日本の犬吠埼灯台を訪れました。犬吠埼灯台は千葉県銚子市にあり、"
            "明治七年に点灯した歴史ある灯台です。\n\n特に、初代の第一等フレネルレンズが今も資料館に展示されていることに会員一同"
            "感銘を受けました。\n")


def test_a_japanese_question_finds_the_japanese_passage_sharing_its_words(tmp_path, corpus):
    """An embedder of English text scores a Japanese question under the floor even beside the passage it asks
    about; the Han and katakana words they share (character bigrams) vouch for that passage."""
    from slmgraph.query.engines.basic_search import basic_search

    (corpus / "japan.md").write_text(JAPANESE, encoding="utf-8")
    db = tmp_path / "ja.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db, read_only=True)
    try:
        japan = store.con.execute("SELECT t.unit_no FROM text_units t JOIN documents d USING (doc_id) "
                                  "WHERE d.path = 'japan.md'").fetchone()[0]
        client = ModelClient(FakeModel(), store, "q")
        ans = basic_search(store, client, Prompts(), Settings(), "フレネルレンズはどこに展示されていますか？",
                           FakeEmbedder())
        assert not ans.details.get("refused") and ans.citations["sources"] == [japan], ans.text
        assert ans.details["cjk_matches"] == 1 and [c["source"] for c in ans.context] == [japan]
        # A Japanese question about what no passage holds is refused as before.
        off = basic_search(store, client, Prompts(), Settings(), "東京タワーの高さは何メートルですか？", FakeEmbedder())
        assert off.details["refused"] and not off.details.get("cjk_matches"), off.text
    finally:
        store.close()


def test_cjk_bigrams_are_the_han_and_katakana_words_of_a_text():
    from slmgraph.text.prose import cjk_bigrams

    assert cjk_bigrams("霧笛の保存") == {"霧笛", "保存"}
    assert cjk_bigrams("フレネルレンズ、展示") == {"フレ", "レネ", "ネル", "ルレ", "レン", "ンズ", "展示"}
    assert cjk_bigrams("灯台の色は？") == {"灯台", "色"}
    assert cjk_bigrams("The lamp was lit in 1874.") == frozenset()


def test_a_question_about_something_no_passage_names_says_so(tmp_path, corpus):
    from slmgraph.query.engines.basic_search import basic_search
    from slmgraph.query.engines.global_search import unnamed_words

    db = tmp_path / "x.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db, read_only=True)
    assert unnamed_words(store, "Which guests talk about cryptocurrency?") == "\u201ccryptocurrency\u201d"
    assert unnamed_words(store, "Who founded Acme Corporation?") == ""
    # the floor at 0: the nearest passages are given, after the line saying none is on the question
    ans = basic_search(store, ModelClient(FakeModel(), store, "q"), Prompts(),
                       Settings(helpfulness_floor=0.0, helpfulness_probes=False),
                       "Which guests talk about cryptocurrency?", FakeEmbedder())
    store.close()
    assert ans.text.startswith("No passage of the corpus names \u201ccryptocurrency\u201d; the passages nearest the "
                               "question follow, none of them on it."), ans.text


def test_global_search_answers_a_subject_no_passage_names_in_one_line_however_helpful_its_reports(tmp_path, corpus):
    from slmgraph.api import answer

    db = tmp_path / "x.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db, read_only=True)
    # the floor at 0: every report passes, yet no passage names the subject, so none is quoted as if on it
    settings = Settings(helpfulness_floor=0.0, helpfulness_probes=False)
    ans = answer(store, ModelClient(FakeModel(), store, "q"), Prompts(), settings,
                 "What do the guests say about cryptocurrency?", method="global", embedder_factory=FakeEmbedder)
    named = answer(store, ModelClient(FakeModel(), store, "q"), Prompts(), settings,
                   "What does the corpus say about Acme Corporation?", method="global", embedder_factory=FakeEmbedder)
    store.close()
    assert ans.text == "No passage of the corpus names \u201ccryptocurrency\u201d.", ans.text
    assert not ans.citations.get("sources") and ans.details["unnamed"] == "\u201ccryptocurrency\u201d"
    assert "No passage of the corpus names" not in named.text


def test_a_phrase_the_corpus_defines_once_and_then_abbreviates_is_asked_by_its_acronym():
    from conftest import theme_index

    from slmgraph.query.engines.global_search import abbreviated, by_acronym
    from slmgraph.query.theme_facets import Facet
    from slmgraph.query.theme_model import word_stem

    ix = theme_index([("u0", "d0", 0, "Carbon capture and storage (CCS) grabs carbon dioxide. I doubt CCS."),
                      ("u1", "d1", 0, "CCS is a pipe dream. Nuclear power works."),
                      ("u2", "d2", 0, "We argued about CCS again, and about nuclear power, and nuclear power.")])
    store = ix.store
    assert by_acronym(store, "What do guests think about carbon capture and storage?") == \
        "What do guests think about CCS?"
    # a phrase the speakers write themselves is asked as written; so is one whose acronym is rare
    assert by_acronym(store, "What do guests think about nuclear power?") == "What do guests think about nuclear power?"
    assert by_acronym(store, "What about carbon dioxide?") == "What about carbon dioxide?"

    def facet(label):
        return Facet(label, tuple((w, word_stem(w)) for w in label.split()), label)

    # listed by "and", the phrase is still one term
    assert abbreviated(store, [facet("carbon capture"), facet("storage")])
    assert not abbreviated(store, [facet("nuclear power"), facet("storage")])
    store.con.close()
