"""The ledger explains an answer: each model call's key and output are in ``llm_calls``, query calls included."""

from __future__ import annotations

import json

import duckdb
import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.model.client import SAMPLER_VERSION, ModelClient, call_key
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.query.engines.global_search import global_search
from slmgraph.query.engines.local_search import local_search
from slmgraph.store.db import Store


class TokenRecordingModel(FakeModel):
    """The fake, also keeping the token ids, schema and cap of every completion it was asked for."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.prompts: list[tuple[list[int], list[int], dict | None, int]] = []

    def complete(self, fixed, rest, *, schema, max_tokens, deadline_s=None, on_text=None):
        self.prompts.append((list(fixed), list(rest), schema, max_tokens))
        return super().complete(fixed, rest, schema=schema, max_tokens=max_tokens, deadline_s=deadline_s,
                                on_text=on_text)


@pytest.fixture
def index(tmp_path, corpus):
    db = tmp_path / "idx.duckdb"
    s = Settings(min_community_size=2, extract_mode="json", reports="model")  # model calls at index time
    run_index(corpus, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    return db, s


def test_a_global_answer_traces_back_to_its_prompts(index):
    db, s = index
    model = TokenRecordingModel()
    model.n_params = 2_000_000_000  # a model that writes the map and reduce (under 1B answers are extractive)
    store = Store(db)
    client = ModelClient(model, store, "query-1")
    ans = global_search(store, client, Prompts(), s, "What did Alice Smith build?", level=0, progress=False,
                        embedder=FakeEmbedder())
    assert ans.model_calls >= 2 and len(ans.call_keys) == ans.model_calls == len(model.calls)
    rows = store.con.execute("SELECT stage, key, output, prompt_tokens FROM llm_calls WHERE run_id = 'query-1' "
                             "ORDER BY call_id").fetchall()
    # One ledger row per call of the answer, in order, with the answer's keys.
    assert [r[1] for r in rows] == ans.call_keys
    assert [r[0] for r in rows] == ["map"] * (len(rows) - 1) + ["reduce"]
    # Each key is the content key of the prompt the model was given; each output is what it generated.
    for (stage, key, output, n_prompt), (fixed, rest, schema, max_tokens), (system, user, _) in zip(
            rows, model.prompts, model.calls):
        assert n_prompt == len(fixed) + len(rest)
        assert max_tokens == min(s.map_max_tokens if stage == "map" else s.reduce_max_tokens, model.n_ctx - n_prompt)
        assert key == call_key([SAMPLER_VERSION, model.fingerprint, fixed, rest, schema, max_tokens])
        assert output == model.script(system, user, schema)
    # Query calls are ledgered but not cached.
    cached = store.con.execute("SELECT count(*) FROM llm_cache WHERE key IN (SELECT key FROM llm_calls "
                               "WHERE run_id = 'query-1')").fetchone()[0]
    assert cached == 0
    # The reduce row's output is the answer before its citations were checked.
    assert ans.text.startswith(rows[-1][2].strip().split("[")[0].strip())


def test_local_answer_and_index_calls_are_ledgered_with_key_and_output(index):
    db, s = index
    store = Store(db)
    # Index calls: every row has a key and an output, and a cached call's output is the cache's.
    missing = store.con.execute("SELECT count(*) FROM llm_calls WHERE key IS NULL OR output IS NULL").fetchone()[0]
    assert missing == 0
    same = store.con.execute("SELECT count(*), count(*) FILTER (WHERE c.output = l.output) FROM llm_calls l "
                             "JOIN llm_cache c ON c.key = l.key").fetchone()
    assert same[0] > 0 and same[0] == same[1]
    big = FakeModel()
    big.n_params = 2_000_000_000  # the model writes the local answer
    client = ModelClient(big, store, "query-2")
    ans = local_search(store, client, Prompts(), s, "Who is Carol White?", FakeEmbedder())
    rows = store.con.execute("SELECT stage, key FROM llm_calls WHERE run_id = 'query-2'").fetchall()
    assert rows == [("local", ans.call_keys[0])]


def test_a_choice_is_ledgered_with_its_option_logprobs(tmp_path):
    store = Store(tmp_path / "x.duckdb", create=True)
    client = ModelClient(FakeModel(choice_script=lambda s, u, o: [0.25, 0.75, 0.0]), store, "run")
    ch = client.choose("rate", "Question: q", "is it relevant?", [" yes", " no", " maybe"])
    key, output = store.con.execute("SELECT key, output FROM llm_calls").fetchone()
    assert key == ch.key
    logged = json.loads(output)
    assert logged["options"] == [" yes", " no", " maybe"]
    assert logged["logprobs"][:2] == pytest.approx(ch.logprobs[:2]) and logged["logprobs"][2] == -1e30


def test_an_old_ledger_gains_key_and_output_columns(tmp_path):
    db = tmp_path / "old.duckdb"
    Store(db, create=True).close()
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE llm_calls DROP COLUMN key")
    con.execute("ALTER TABLE llm_calls DROP COLUMN output")
    con.execute("DROP TABLE migrations")  # an index of that age recorded no migration steps
    con.execute("INSERT INTO llm_calls (run_id, stage) VALUES ('old', 'extract')")
    con.close()
    store = Store(db)
    store.record_call("new", "map", 0, "m", 10, 0, 2, 0.1, "stop", 0.05, "k1", "text")
    rows = store.con.execute("SELECT run_id, key, output FROM llm_calls ORDER BY run_id").fetchall()
    assert rows == [("new", "k1", "text"), ("old", None, None)]
