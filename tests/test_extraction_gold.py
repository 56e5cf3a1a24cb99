"""benchmarks/extraction_gold.py: detokenising, the scorer on a hand-made document, reading resolved
entities, and whole configurations with the fake model (no real model is loaded)."""

import json
import sys
from pathlib import Path

from conftest import FakeEmbedder, FakeModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import extraction_gold as eg  # noqa: E402

from slmgraph.store.db import Store


def test_detokenize_spaces_like_prose():
    toks = ['Wilfried', '"', 'Willi', '"', 'Schneider', '(', 'born', '1963', 'in', 'Mediaș', ',', 'Transylvania', ')',
            'won', 'the', 'men', "'s", 'two', '-', 'year', 'race', 'in', '1997', '–', '8', '\xa0', 'at', 'Sons', "'",
            'club', ';', 'it', 'cost', '$', '5', '(', '10', '%', ')', '.']
    assert eg.detokenize(toks) == ('Wilfried "Willi" Schneider (born 1963 in Mediaș, Transylvania) won the men\'s '
                                   "two-year race in 1997–8 at Sons' club; it cost $5 (10%).")
    assert eg.detokenize(["a", "-", "(", "b", ")"]) == "a - (b)"   # a hyphen joins only alphanumerics


def _gold(tmp_path, docs):
    p = tmp_path / "gold.json"
    p.write_text(json.dumps(docs), encoding="utf-8")
    return p


def _vertex(*names, type_="PER"):
    return [{"name": n, "type": type_, "pos": [0, 1], "sent_id": 0} for n in names]


HAND_MADE = {
    "title": "Hand made",
    "sents": [["Alice", "Smith", "met", "Bob", "Jones", "in", "Paris", "in", "1990", "."],
              ["Smith", "founded", "Acme", "Corp", "there", "with", "two", "friends", "."]],
    "vertexSet": [_vertex("Alice Smith", "Smith"), _vertex("Bob Jones"), _vertex("Paris", type_="LOC"),
                  _vertex("1990", type_="TIME"), _vertex("Acme Corp", type_="ORG"), _vertex("two", type_="NUM")],
    "labels": [{"h": 0, "t": 1, "r": "P1"}, {"h": 0, "t": 2, "r": "P2"}, {"h": 2, "t": 0, "r": "P3"},
               {"h": 4, "t": 2, "r": "P4"}, {"h": 0, "t": 3, "r": "P5"}, {"h": 1, "t": 1, "r": "P6"}],
}


def test_scorer_one_to_one_fragments_exclusions_and_pairs(tmp_path):
    doc = eg.load_gold(_gold(tmp_path, [HAND_MADE]), 100)[0]
    assert doc.text == "Alice Smith met Bob Jones in Paris in 1990. Smith founded Acme Corp there with two friends."
    pred = eg.Prediction(
        aliases={1: {"Alice Smith"}, 2: {"Smith"},                # 2 is a fragment of gold 0
                 3: {"the Bob Jones"},                              # article ignored
                 4: {"PARIS"}, 5: {"1990"},                          # 5 matches only a date: neutral
                 6: {"Marie Curie"}},                                # matches nothing
        relationships=[(1, 3), (3, 1), (1, 4), (2, 4), (1, 5), (4, 6), (3, 4)])
    s, matching = eg.score_document(pred, doc)
    assert matching == {1: 0, 3: 1, 4: 2}
    # gold scored: Alice Smith, Bob Jones, Paris, Acme Corp (1990 and two excluded)
    assert (s.entities.tp, s.entities.fp, s.entities.fn) == (3, 2, 1)   # fragment 2 and Marie Curie are FPs
    assert (s.lenient.tp, s.lenient.fp, s.lenient.fn) == (4, 1, 1)      # many-to-one: the fragment counts as right
    assert s.neutral == 1
    # gold pairs (no self-pair, none with 1990): {0,1}, {0,2}, {4,2}
    # (1,3) TP; (3,1) same pair again: FP; (1,4) TP; (2,4) fragment endpoint: FP; (1,5) neutral: skipped;
    # (4,6) unmatched endpoint: FP; (3,4) not a gold pair: FP
    assert (s.pairs.tp, s.pairs.fp, s.pairs.fn) == (2, 4, 1)
    assert s.entities.prf() == {"tp": 3, "fp": 2, "fn": 1, "p": 0.6, "r": 0.75, "f1": 0.667}


def test_matching_is_maximal_not_greedy(tmp_path):
    doc = eg.load_gold(_gold(tmp_path, [dict(HAND_MADE, vertexSet=[_vertex("Smith", "John Smith"),
                                                                      _vertex("Smith", "Alice Smith")],
                                             labels=[])]), 1)[0]
    # entity 1 ("Smith") could take either gold entity, a greedy pass would give it the first; entity 2 can
    # only take the first: the maximum matching uses both
    pred = eg.Prediction({1: {"Smith"}, 2: {"John Smith"}}, [])
    s, matching = eg.score_document(pred, doc)
    assert matching == {1: 1, 2: 0} and s.entities.tp == 2 and s.entities.fp == 0


def test_read_prediction_collects_aliases_through_merges(tmp_path):
    store = Store(tmp_path / "x.duckdb", create=True)
    con = store.con
    con.execute("INSERT INTO entities VALUES (1, 'alice smith', 'Alice Smith', 'person', '', 3, 1), "
                "(2, 'paris', 'Paris', 'location', '', 1, 1)")
    con.execute("INSERT INTO entity_mentions VALUES ('c1', 'Alice Smith', 'alice smith', 'person', ''), "
                "('c1', 'Smith', 'smith', 'person', ''), ('c2', 'A. Smith', 'a smith', 'person', ''), "
                "('c2', 'Paris', 'paris', 'location', ''), ('c2', 'Gone', 'gone', 'unknown', '')")
    con.execute("INSERT INTO merge_log VALUES ('smith', 'alice smith', 'name-subset', NULL, ''), "
                "('a smith', 'smith', 'embedding', 0.95, '')")  # a chain of two merges
    con.execute("INSERT INTO relationships VALUES (1, 1, 2, '', 1.0, 5.0, 2)")
    pred = eg.read_prediction(store)
    store.close()
    assert pred.aliases == {1: {"Alice Smith", "Smith", "A. Smith"}, 2: {"Paris"}}
    assert pred.relationships == [(1, 2)]


def _two_docs(tmp_path):
    second = {"title": "Second", "sents": [["Carol", "White", "visited", "Berlin", "with", "Dan", "Brown", "."]],
              "vertexSet": [_vertex("Carol White"), _vertex("Berlin", type_="LOC"), _vertex("Dan Brown")],
              "labels": [{"h": 0, "t": 1, "r": "P1"}, {"h": 0, "t": 2, "r": "P2"}]}
    return _gold(tmp_path, [HAND_MADE, second])


def test_nlp_config_end_to_end_and_per_document_isolation(tmp_path):
    docs = eg.load_gold(_two_docs(tmp_path), 100)
    res = eg.run_config("nlp", eg.config_settings("nlp", None), docs, eg.WordTokenizer(), say=lambda m: None)
    assert res["documents"] == 2 and res["cost"]["text_units"] == 2 and res["cost"]["model_calls"] == 0
    assert res["gold_entities"] == 7 and res["gold_pairs"] == 5
    # every gold name is a capitalised span: all found, nothing matched twice across documents
    assert res["entities"]["r"] == 1.0 and res["entities"]["tp"] == 7
    assert res["extraction"]["grounding_drop_rate"] == 0.0


def test_free_names_config_with_the_fake_model_grounds_invented_names(tmp_path):
    def inventive(system, user, schema):
        if "choices" in schema:
            return "N"  # the gleaning check
        assert schema["properties"]["entities"]["type"] == "array"
        return json.dumps({"entities": [{"name": "Alice Smith", "type": "person"}, {"name": "Marie Curie", "type": "person"},
                                        {"name": "Carol White", "type": "person"}],
                           "relationships": [{"source": "Alice Smith", "target": "Marie Curie", "strength": 5}]})

    docs = eg.load_gold(_two_docs(tmp_path), 100)
    s = eg.config_settings("free-names", "fake.gguf")
    s.resolution_threshold, s.cooccurrence = None, False
    res = eg.run_config("free-names", s, docs, FakeModel(script=inventive), say=lambda m: None)
    x = res["extraction"]
    # doc 1: Marie Curie and Carol White are not in the text; doc 2: Alice Smith and Marie Curie
    assert x["ungrounded"] == 4 and x["entities_before_grounding"] == 6 and x["grounding_drop_rate"] == 0.6667
    assert res["entities"]["tp"] == 2 and res["entities"]["fp"] == 0
    assert res["cost"]["model_calls"] == 4 and res["cost"]["prompt_tokens"] > 0  # 2 documents x (extraction + check)
    s.grounding = False
    res2 = eg.run_config("free-names-no-grounding", s, docs, FakeModel(script=inventive), say=lambda m: None)
    assert res2["extraction"]["ungrounded"] == 0 and res2["entities"]["fp"] == 4
    assert res2["pairs"]["fp"] >= 1


def test_resolution_configs_build_one_embedder_and_only_when_on(tmp_path):
    docs = eg.load_gold(_two_docs(tmp_path), 1)
    s = eg.config_settings("default", "fake.gguf")
    assert s.resolution_threshold is not None
    made = []

    def factory():
        made.append(1)
        return FakeEmbedder()

    res = eg.run_config("default", s, docs, FakeModel(), embedder_factory=factory, say=lambda m: None)
    assert made == [1] and res["documents"] == 1
    s.resolution_threshold = None
    eg.run_config("no-resolution", s, docs, FakeModel(), embedder_factory=factory, say=lambda m: None)
    assert len(made) <= 1   # never built when resolution is off


def test_main_merges_results_and_reports_user_errors(tmp_path, capsys):
    out = tmp_path / "results"
    out.mkdir()
    (out / "extraction_gold.json").write_text(json.dumps({"configs": {"default": json.loads(json.dumps(
        {"documents": 1, "model": "m.gguf", "entities": {"p": 1, "r": 1, "f1": 1}, "entities_lenient": {"p": 1, "r": 1, "f1": 1},
         "pairs": {"p": 0, "r": 0, "f1": 0}, "cost": {"text_units": 1, "model_calls": 2, "prompt_tokens_evaluated": 3,
                                                     "prompt_tokens_reused": 4, "completion_tokens": 5,
                                                     "model_seconds": 6, "wall_seconds": 7},
         "extraction": {"validation_dropped": 0, "grounding_drop_rate": 0.0, "unparsed_or_truncated_share": 0.0},
         "date": "d", "machine": "m", "tokenizer": "t", "description": "x", "gold_entities": 1,
         "gold_entities_excluded": 0, "gold_pairs": 0}))}}))
    gold = _two_docs(tmp_path)
    assert eg.main(["--configs", "nlp", "--gold", str(gold), "--results", str(out)]) == 0
    data = json.loads((out / "extraction_gold.json").read_text())
    assert set(data["configs"]) == {"default", "nlp"}
    assert data["configs"]["nlp"]["settings"]["extractor"] == "nlp" and data["configs"]["nlp"]["model"] is None
    md = (out / "extraction_gold.md").read_text()
    assert "| nlp | none | 2 |" in md and "| default | m.gguf | 1 |" in md
    capsys.readouterr()
    assert eg.main(["--gold", str(tmp_path / "missing.json"), "--results", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("extraction_gold: error: gold file") and "missing.json" in err and "\n" not in err
    assert eg.main(["--configs", "nlp,bogus", "--gold", str(gold), "--results", str(out)]) == 2
    assert "unknown config 'bogus'" in capsys.readouterr().err
    # --label: one configuration's row under another name (the LLM-free row on a model row's documents)
    assert eg.main(["--configs", "nlp", "--docs", "1", "--label", "nlp (first 1 docs)", "--gold", str(gold),
                    "--results", str(out)]) == 0
    data = json.loads((out / "extraction_gold.json").read_text())
    assert set(data["configs"]) == {"default", "nlp", "nlp (first 1 docs)"}
    assert data["configs"]["nlp (first 1 docs)"]["documents"] == 1 and data["configs"]["nlp"]["documents"] == 2
    capsys.readouterr()
    assert eg.main(["--configs", "nlp,nlp-ner", "--label", "x", "--gold", str(gold), "--results", str(out)]) == 2
    assert "--label names the row of one configuration" in capsys.readouterr().err


def test_main_runs_model_configs_with_their_model_and_keys_overrides(tmp_path, monkeypatch, capsys):
    import slmgraph.model.backend
    import slmgraph.model.gguf
    import slmgraph.models

    loaded = []

    def fake_load(path, n_ctx, n_threads, seed, threads_explicit=False):
        loaded.append(path)
        m = FakeModel()
        m.chat_template = None if "gemma" in path else "{{ messages }}"
        return m

    monkeypatch.setattr(slmgraph.model.backend, "load_model", fake_load)
    monkeypatch.setattr(slmgraph.model.gguf, "default_model_path", lambda: tmp_path / "SmolLM2.gguf")
    monkeypatch.setattr(slmgraph.models, "find_gemma_model", lambda cache_dir=None: tmp_path / "gemma-3-270m.gguf")
    monkeypatch.setitem(eg.CONFIGS, "gemma-nores", ("test", {"resolution_threshold": None, "extract_mode": "json"},
                                                        "gemma"))
    gold, out = _two_docs(tmp_path), tmp_path / "res"
    args = ["--configs", "no-resolution,gemma-nores", "--gold", str(gold), "--results", str(out), "--docs", "1"]
    assert eg.main(args) == 0
    assert loaded == [str(tmp_path / "SmolLM2.gguf"), str(tmp_path / "gemma-3-270m.gguf")]
    data = json.loads((out / "extraction_gold.json").read_text())["configs"]
    assert data["no-resolution"]["model_path"].endswith("SmolLM2.gguf") and data["no-resolution"]["chat_template"]
    assert data["gemma-nores"]["chat_template"] is False and data["gemma-nores"]["cost"]["model_calls"] == 1  # one extraction; no further names, no gleaning check
    assert "(no chat template: plain prompts)" in (out / "extraction_gold.md").read_text()
    assert eg.main(args[:1] + ["no-resolution", "--model", str(tmp_path / "Other.gguf")] + args[2:]) == 0
    assert "no-resolution@Other" in json.loads((out / "extraction_gold.json").read_text())["configs"]
    assert loaded[-1] == str(tmp_path / "Other.gguf")


def test_extraction_errors_prints_each_documents_false_positives_negatives_and_types(tmp_path, capsys):
    import extraction_errors

    doc = {"title": "Errors", "sents": [["Carol", "White", "visited", "Berlin", "and", "Acme", "Robotics", "with",
                                         "the", "old", "ferryman", "."]],
           "vertexSet": [_vertex("Carol White"), _vertex("Berlin", type_="ORG"), _vertex("old ferryman")],
           "labels": []}
    assert extraction_errors.main(["--docs", "1", "--gold", str(_gold(tmp_path, [doc]))]) == 0
    out = capsys.readouterr().out
    assert "== doc 0: Errors  (strict tp 2 fp 1 fn 1)" in out
    assert "  FP  Acme Robotics [" in out and "  FN  old ferryman [PER]" in out
    assert "  TY  Berlin [location] != gold ORG" in out and "location/ORG 1" in out
    assert extraction_errors.main(["--config", "default", "--gold", str(tmp_path / "gold.json")]) == 2
    assert "loads a model" in capsys.readouterr().err
