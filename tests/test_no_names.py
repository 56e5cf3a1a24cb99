"""Issue 13 items 2 and 13: a corpus with no names is no false "nothing to do" — a warning at index time
that says why, remedies that work (``--method basic``), and no invented rates in ``estimate``."""

import pytest
from conftest import FakeEmbedder, FakeModel

import slmgraph.cli.main as cli
import slmgraph.indexing.pipeline as pipeline
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.tools.estimate import estimate, render
from slmgraph.model.client import ModelClient
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.query.engines.basic_search import basic_search
from slmgraph.query.engines.global_search import global_search
from slmgraph.query.engines.local_search import local_search
from slmgraph.store.db import Store


@pytest.fixture
def nameless(tmp_path):
    root = tmp_path / "nameless"
    root.mkdir()
    (root / "prose.txt").write_text("the river rose all night and the bridge closed at dawn. "
                                    "the farmers moved their animals to the hills. " * 20)
    (root / "numbers.txt").write_text(" ".join(str(i * 37 % 1000) for i in range(400)))
    return root


@pytest.mark.parametrize("extractor", ["llm", "nlp"])
def test_indexing_a_corpus_without_names_warns_why_and_offers_basic_search(tmp_path, nameless, extractor):
    notes = []
    db = tmp_path / "x.duckdb"
    run_index(nameless, db, Settings(min_community_size=2, extractor=extractor), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=notes.append)
    warning = [n for n in notes if n.startswith("warning: no entity")]
    assert len(warning) == 1
    assert "no entity was found in the 2 text units" in warning[0] and "capitalised" in warning[0]
    assert "--method basic" in warning[0]
    assert "communities: none (no entities)" in notes
    assert not any("0 levels" in n for n in notes)

    store = Store(db)
    model, s, prompts = FakeModel(), Settings(), Prompts()
    client = ModelClient(model, store, "q")
    with pytest.raises(UserError) as g:
        global_search(store, client, prompts, s, "What happened?", level=0, progress=False)
    with pytest.raises(UserError) as loc:
        local_search(store, client, prompts, s, "What happened?", FakeEmbedder())
    for exc in (g, loc):
        msg = str(exc.value)
        assert "--method basic" in msg
        assert "--extractor nlp" not in msg and "slmgraph index" not in msg  # remedies that do not work
    ans = basic_search(store, client, prompts, s, "What happened to the bridge?", FakeEmbedder())
    assert ans.method == "basic" and ans.context and ans.text  # the remedy answers from the text units
    store.close()


def test_the_cli_closing_line_points_to_basic_search(tmp_path, nameless, capsys, monkeypatch):
    real = pipeline.run_index
    monkeypatch.setattr(pipeline, "run_index", lambda i, d, s, **kw: real(
        i, d, s, model=FakeModel(), embedder_factory=FakeEmbedder, **kw))
    assert cli.main(["index", str(nameless), "--db", str(tmp_path / "x.duckdb")]) == 0
    out = capsys.readouterr()
    assert "--method basic" in out.out and "warning: no entity was found" in out.err


def test_estimate_on_a_corpus_without_names_invents_no_rates(nameless):
    est = estimate(nameless, Settings(min_community_size=2, workers=1, descriptions="model"), FakeModel(), sample=2, progress=False,
                   embedder_factory=FakeEmbedder, say=lambda m: None)
    assert est["stages"]["extract"]["calls"] == 0 and est["stages"]["extract"]["seconds"] == 0
    assert est["calibration"]["extract"]["units"] == 0
    text = render(est)
    assert "thread(s)" not in text and "tok/s" not in text
    assert "no text unit has candidate names" in text and "--method basic" in text
