"""slmgraph bench's quality figures: the shared gold scorer (slmgraph.eval.gold), the helpfulness AUC on a
question set, question files, and one-line errors for bad --gold / question files (fake model)."""

import json

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.eval import bench
from slmgraph.cli.main import main
from slmgraph.eval.gold import Counts, Prediction, load_gold, score_document
from slmgraph.query.scoring import roc_auc

TINY_GOLD = [{
    "title": "Tiny",
    "sents": [["Alice", "Smith", "met", "Bob", "Jones", "in", "Paris", "in", "1990", "."],
              ["Smith", "founded", "Acme", "Corp", "there", "."]],
    "vertexSet": [[{"name": "Alice Smith", "type": "PER"}, {"name": "Smith", "type": "PER"}],
                  [{"name": "Bob Jones", "type": "PER"}], [{"name": "Paris", "type": "LOC"}],
                  [{"name": "1990", "type": "TIME"}], [{"name": "Acme Corp", "type": "ORG"}]],
    "labels": [{"h": 0, "t": 1, "r": "P1"}, {"h": 4, "t": 2, "r": "P2"}],
}]


def _write(path, obj):
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def test_gold_scorer_on_a_tiny_gold_file_gives_known_prf_and_type_accuracy(tmp_path):
    doc = load_gold(_write(tmp_path / "gold.json", TINY_GOLD), 10)[0]
    pred = Prediction(aliases={1: {"Alice Smith"}, 2: {"Smith"}, 3: {"Bob Jones"}, 4: {"Paris"}, 5: {"Berlin"}},
                      relationships=[(1, 3), (4, 3)],
                      types={1: "person", 2: "person", 3: "organization", 4: "location", 5: "location"})
    s, matching = score_document(pred, doc)
    assert matching == {1: 0, 3: 1, 4: 2}
    # scored gold: Alice Smith, Bob Jones, Paris, Acme Corp (1990 excluded); the fragment "Smith" and Berlin are FPs
    assert s.entities.prf() == {"tp": 3, "fp": 2, "fn": 1, "p": 0.6, "r": 0.75, "f1": 0.667}
    # lenient: the fragment counts as right
    assert s.lenient.prf() == {"tp": 4, "fp": 1, "fn": 1, "p": 0.8, "r": 0.8, "f1": 0.8}
    # gold pairs {0,1}, {4,2}: (1,3) hits {0,1}; (4,3) is no gold pair
    assert s.pairs.prf() == {"tp": 1, "fp": 1, "fn": 1, "p": 0.5, "r": 0.5, "f1": 0.5}
    # types of the matched: Alice person (right), Bob organization (wrong), Paris location (right)
    assert (s.typed_right, s.typed, s.matched) == (2, 3, 3)
    total = Counts()
    total.add(s.entities)
    total.add(s.entities)
    assert total.prf()["f1"] == 0.667  # micro average over documents


def test_roc_auc_of_a_known_ranking():
    assert roc_auc([3, 2, 1], [2.5, 0]) == pytest.approx(4 / 6)
    assert roc_auc([1.0], [1.0]) == 0.5  # ties count half
    assert bench.roc_auc_or_none([5], []) is None


def test_read_questions_from_text_and_csv(tmp_path):
    t = tmp_path / "q.txt"
    t.write_text("# comment\nFirst question?\n\n  Second question?  \n", encoding="utf-8")
    assert bench.read_questions(t) == ["First question?", "Second question?"]
    c = tmp_path / "q.csv"
    c.write_text("id,question_text\n1,What is A?\n2,What is B?\n", encoding="utf-8")
    assert bench.read_questions(c) == ["What is A?", "What is B?"]
    assert len(bench.read_questions(bench.DULCE_QUESTIONS)) == 10
    assert len(bench.read_questions(bench.OFFTOPIC_QUESTIONS)) == 10


def test_bundled_offtopic_questions_are_not_the_floor_probes():
    from slmgraph.config.prompting import Prompts
    from slmgraph.query.scoring import probe_questions

    probes = set(probe_questions(Prompts()))
    assert probes and not probes & set(bench.read_questions(bench.OFFTOPIC_QUESTIONS))


def test_question_file_beside_the_corpus_or_flag(tmp_path, corpus):
    with pytest.raises(Exception, match="no question set for --corpus"):
        bench.question_file(corpus, None)
    (tmp_path / "questions.txt").write_text("Q?\n")
    assert bench.question_file(corpus, None) == (tmp_path / "questions.txt").resolve()
    assert bench.question_file(corpus, tmp_path / "x.txt") == tmp_path / "x.txt"
    assert bench.question_file(None, None) == bench.DULCE_QUESTIONS


def _script(yes_for: tuple[str, ...]):
    """P(yes) 0.9 when the question holds a word of ``yes_for``, 0.1 otherwise; 0.5 for the content-free "N/A"."""
    def script(system, user, options):
        if "N/A" in system:
            p = 0.5
        else:
            p = 0.9 if any(w.lower() in system.lower() for w in yes_for) else 0.1
        return [p if o.lower() == "yes" else 1 - p for o in options]
    return script


@pytest.mark.parametrize("yes_for, auc", [(("Acme", "Berlin"), 1.0), (("orchid", "salmon"), 0.0)])
def test_answer_quality_measures_the_models_p_yes_auc_and_answers(tmp_path, corpus, yes_for, auc):
    from slmgraph.config.settings import Settings
    from slmgraph.indexing.pipeline import run_index
    from slmgraph.store.db import Store

    db = tmp_path / "i.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    on = ["What did Alice Smith and Bob Jones build at Acme Corporation?", "Who studied physics with Dan Brown "
          "in Berlin?"]
    off = ["Orchid watering schedule?", "Grilled salmon wine pairing?"]  # no word of the corpus
    st = Store(db)
    try:
        res = bench.answer_quality(st, FakeModel(choice_script=_script(yes_for)), Settings(), on, off,
                                   FakeEmbedder(), "bench-test")
        n_help = st.con.execute("SELECT count(*) FROM llm_calls WHERE run_id = 'bench-test' AND stage = 'help'"
                                ).fetchone()[0]
    finally:
        st.close()
    assert res["signal"] == "embedding"  # the < 1B default: what global search used
    assert res["auc_model_p_yes"] == auc  # the model's own signal, whatever the embedding does
    assert res["auc_signal_in_use"] == 1.0  # bag-of-words: corpus words vs none
    assert res["on_topic"] == {"questions": 2, "answered": 2} and res["off_topic"] == {"questions": 2, "answered": 0}
    assert n_help >= res["model_signal_reports"] * 4  # one P(yes) per report and question, ledgered
    assert [q["on_topic"] for q in res["questions"]] == [True, True, False, False]


@pytest.fixture
def fake_everything(monkeypatch):
    import slmgraph.model.backend

    monkeypatch.setattr(slmgraph.model.backend, "load_model", lambda *a, **k: FakeModel())
    monkeypatch.setattr("slmgraph.indexing.stages.embed.Embedder", lambda *a, **k: FakeEmbedder())
    monkeypatch.setattr("slmgraph.query.question_embed.question_embedder", lambda *a, **k: FakeEmbedder())


def test_bench_with_gold_and_questions_reports_both_per_model(tmp_path, corpus, capsys, fake_everything):
    (tmp_path / "questions.txt").write_text("What did Alice Smith build at Acme Corporation?\n"
                                            "Who met Dan Brown in Berlin?\n", encoding="utf-8")
    gold = _write(tmp_path / "gold.json", TINY_GOLD * 3)
    code = main(["bench", "--corpus", str(corpus), "--out", str(tmp_path / "b"), "--workers", "1",
                 "--gold", str(gold), "--gold-docs", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "AUC P(yes)" in out and "entity F1 strict" in out
    res = json.loads((tmp_path / "b" / "bench.json").read_text())
    m = res["models"][0]
    assert m["gold"]["documents"] == 2 and 0 < m["gold"]["entities_strict_f1"] <= 1
    assert m["gold"]["model_calls"] == 0  # < 1B default extraction is LLM-free
    assert m["answers"]["on_topic"]["questions"] == 2 and m["answers"]["off_topic"]["questions"] == 10
    assert m["answers"]["auc_signal_in_use"] is not None and "help" in m["stages"]
    assert res["questions"] == str((tmp_path / "questions.txt").resolve()) and res["gold_docs"] == 2


@pytest.mark.parametrize("content, what", [
    (None, "not found"),
    ("{not json", "is not Re-DocRED JSON"),
    (json.dumps({"title": "x"}), "is not Re-DocRED JSON"),
    (json.dumps([{"title": "x", "sents": [["A"]]}]), "is not Re-DocRED JSON"),
    ("[]", "holds no documents"),
])
def test_bad_gold_file_is_a_one_line_error_naming_it_before_any_model_loads(tmp_path, capsys, monkeypatch,
                                                                            content, what):
    import slmgraph.model.backend

    def no_load(*a, **k):
        raise AssertionError("a model was loaded before the gold file was checked")

    monkeypatch.setattr(slmgraph.model.backend, "load_model", no_load)
    gold = tmp_path / "bad gold.json"
    if content is not None:
        gold.write_text(content, encoding="utf-8")
    assert main(["bench", "--gold", str(gold), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("slmgraph: error: ") and str(gold) in err and what in err and "\n" not in err
    assert not (tmp_path / "b").exists()  # nothing written


def test_question_set_mistakes_are_one_line(tmp_path, corpus, capsys, fake_everything):
    assert main(["bench", "--corpus", str(corpus), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip()
    assert "no question set for --corpus" in err and "--questions FILE" in err and "\n" not in err
    empty = tmp_path / "empty.txt"
    empty.write_text("# only a comment\n")
    assert main(["bench", "--questions", str(empty), "--out", str(tmp_path / "b")]) == 2
    assert f"--questions {empty} holds no question" in capsys.readouterr().err
    assert main(["bench", "--offtopic", str(tmp_path / "none.txt"), "--out", str(tmp_path / "b")]) == 2
    assert "--offtopic" in capsys.readouterr().err
    assert main(["bench", "--gold-docs", "0", "--gold", str(_write(tmp_path / "g.json", TINY_GOLD)),
                 "--out", str(tmp_path / "b")]) == 2
    assert "--gold-docs 0 must be at least 1" in capsys.readouterr().err
