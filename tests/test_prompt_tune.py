"""slmgraph prompt-tune: a prompts folder whose few-shot example comes from the user's corpus."""

import json

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.cli.main import main
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.model.client import ModelClient
from slmgraph.indexing.pipeline import run_index
from slmgraph.tools.prompt_tune import pick_passage, prompt_tune
from slmgraph.config.prompting import Prompts

PEOPLE = {"Alice Smith", "Bob Jones", "Carol White", "Dan Brown", "Eve Black"}


def typing_script(system, user, options):
    """Persons are persons, "Acme Corporation" an organization, anything else "other"."""
    name = user.split("Name: ", 1)[1].split("\n", 1)[0]
    want = " person" if name in PEOPLE else " organization" if "Corporation" in name else " other"
    return [3.0 if o == want else 1.0 for o in options]


def test_the_passage_with_the_most_recurring_names_is_chosen():
    texts = ["Zed Quill met Yan Ovo at Xeno Hall. It rained.",
             "Alice Smith met Bob Jones in Paris. Alice Smith and Bob Jones liked Paris.",
             "Alice Smith wrote to Bob Jones from Paris. Nothing else happened."]
    passage, names = pick_passage(texts)
    assert "Alice Smith" in passage and set(names) == {"Alice Smith", "Bob Jones", "Paris"}
    assert pick_passage(["no names here at all. none."]) is None


def test_prompt_tune_writes_a_checked_folder_from_the_corpus(tmp_path, corpus):
    client = ModelClient(FakeModel(choice_script=typing_script), None, "t")
    res = prompt_tune(corpus, tmp_path / "p", client, Settings())
    out = tmp_path / "p"
    Prompts(out).check()
    system = (out / "extract_system.txt").read_text()
    assert res["passage"] in system and "Marie Curie" not in system
    assert "Marie Curie" not in (out / "extract_free_system.txt").read_text()
    ex = json.loads((out / "extract_example_model.txt").read_text())
    types = {n: e["type"] for n, e in ex["entities"].items()}
    assert types and all(types[n] == "person" for n in types if n in PEOPLE)
    for n, e in ex["entities"].items():
        assert n in res["passage"] and (e["description"] in res["passage"])  # sentence-based descriptions
    for r in ex["relationships"]:
        assert r["source"] in types and r["target"] in types and r["description"] in res["passage"]
    free = json.loads((out / "extract_example_free_text.txt").read_text())
    assert all(e["type"] != "other" for e in free["entities"])
    with pytest.raises(UserError, match="--force"):
        prompt_tune(corpus, out, client, Settings())


def test_tuned_prompts_are_used_by_index(tmp_path, corpus):
    client = ModelClient(FakeModel(choice_script=typing_script), None, "t")
    res = prompt_tune(corpus, tmp_path / "p", client, Settings())
    model = FakeModel()
    # tuned few-shot examples serve the JSON extraction route (the < 1B default route calls no model)
    run_index(corpus, tmp_path / "i.duckdb", Settings(prompts_dir=str(tmp_path / "p"), min_community_size=2,
                                                      extract_mode="json"),
              progress=False, model=model, embedder_factory=FakeEmbedder, say=lambda m: None)
    systems = {c[0] for c in model.calls}
    assert any(res["passage"] in s for s in systems)


def test_prompt_tune_mistakes_are_one_line(tmp_path, corpus, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["prompt-tune", str(tmp_path / "empty"), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("slmgraph: error: ") and "\n" not in err
    (tmp_path / "flat.txt").write_text("there are no names in this text. none at all.\n")
    client = ModelClient(FakeModel(), None, "t")
    with pytest.raises(UserError, match="3 or more"):
        prompt_tune(tmp_path / "flat.txt", tmp_path / "p", client, Settings())
    assert main(["prompt-tune", str(corpus), "--out", str(tmp_path / "p"), "--entity-types", "!!"]) == 2
    assert "--entity-types" in capsys.readouterr().err
