"""Entity resolution (title, name-subset, acronym, embedding rules), merge_log,
resolution inside build_graph, and element summaries."""

import json
import math
from collections import Counter

import numpy as np
import pytest
from conftest import FakeModel, default_script

from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.graph import build_graph
from slmgraph.model.client import ModelClient
from slmgraph.names.forms import normalize_name
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.resolve import (
    MergeRow, acronym_of, initials, person_shaped, resolve_entities, strip_titles,
)
from slmgraph.store.db import Store


def _inputs(entities):
    """``[(surface, type, mentions)]`` -> the counters resolve_entities takes."""
    names, types, mentions = {}, {}, {}
    for surface, etype, n in entities:
        key = normalize_name(surface)
        names.setdefault(key, Counter())[surface] += n
        types.setdefault(key, Counter())[etype] += n
        mentions[key] = mentions.get(key, 0) + n
    return names, types, mentions


def _resolve(entities, **kw):
    kw.setdefault("threshold", None)
    return resolve_entities(*_inputs(entities), **kw)


def _merged(res):
    """Only the keys that were merged away: ``{key: entity key}``."""
    return {k: v for k, v in res.mapping.items() if k != v}


def _unit(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


class DesignedEmbedder:
    """Name -> designed 2-d direction (padded); any other name gets its own
    orthogonal axis. Records every batch it is asked for."""

    def __init__(self, angles: dict[str, float], dim: int = 32):
        self.angles = angles
        self.dim = dim
        self.batches: list[list[str]] = []
        self._axis: dict[str, int] = {}

    def __call__(self, texts):
        self.batches.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            if t in self.angles:
                out[i, :2] = _unit(self.angles[t])
            else:
                out[i, 2 + self._axis.setdefault(t, len(self._axis))] = 1.0
        return out


# --- helpers -------------------------------------------------------------------------------------

def test_helpers():
    assert strip_titles("lt col john smith") == ("john smith", ["lt", "col"])
    assert strip_titles("general") == ("general", [])
    assert acronym_of("IBM") == "ibm" and acronym_of("U.S.") == "us"
    assert acronym_of("Ibm") is None and acronym_of("NEW YORK") is None and acronym_of("X") is None
    assert initials("international business machines") == {"ibm"}
    assert initials("bank of america") == {"ba"}
    assert initials("non-governmental organization") == {"no", "ngo"}
    assert initials("microsoft") == set()
    assert initials("apple ii", ["Apple II"]) == set() and initials("machine learning", ["machine learning"]) == set()
    assert initials("united states", ["United States"]) == {"us"}
    assert person_shaped(("alex", "mercer"), ["Alex Mercer"]) and person_shaped(("sam", "altman"), ["SAM ALTMAN"])
    assert person_shaped(("ludwig", "van", "beethoven"), ["Ludwig van Beethoven"])
    assert not person_shaped(("dartmouth", "college"), ["Dartmouth College"])
    assert not person_shaped(("university", "of", "north", "carolina"), ["University of North Carolina"])
    assert not person_shaped(("thor", "hammer"), ["Thor's Hammer"])
    assert not person_shaped(("cto", "cisco"), ["CTO Cisco"])
    assert not person_shaped(("alex",), ["Alex"])


# --- rules ---------------------------------------------------------------------------------------

def test_normalisation_already_merges_corporate_and_case_variants():
    ents = [("Microsoft", "organization", 3), ("Microsoft Corp.", "organization", 1), ("MICROSOFT", "organization", 1)]
    names, _, mentions = _inputs(ents)
    assert list(names) == ["microsoft"] and mentions == {"microsoft": 5}
    res = _resolve(ents)
    assert res.mapping == {"microsoft": "microsoft"} and res.log == []


def test_title_rule_merges_into_the_untitled_entity():
    res = _resolve([("Agent Alex Mercer", "person", 1), ("Alex Mercer", "person", 4),
                    ("Dr. Chen", "person", 1), ("Chen", "unknown", 2),
                    ("Captain Nemo", "person", 1)])          # "Nemo" is no entity: kept as it is
    assert _merged(res) == {"agent alex mercer": "alex mercer", "dr chen": "chen"}
    assert res.log[0] == MergeRow("agent alex mercer", "alex mercer", "title", None,
                                  "'Agent Alex Mercer' is 'Alex Mercer' with the title 'agent' (both typed person)")
    assert [r.rule for r in res.log] == ["title", "title"] and res.merges["title"] == 2


def test_title_rule_does_not_strip_organisations():
    res = _resolve([("General Electric", "organization", 2), ("Electric", "unknown", 1)])
    assert _merged(res) == {}


def test_name_subset_merges_first_and_last_name_and_titled_form():
    res = _resolve([("Alex", "person", 5), ("Mercer", "unknown", 1), ("Alex Mercer", "person", 2),
                    ("Agent Alex Mercer", "person", 1)])
    assert _merged(res) == {"alex": "alex mercer", "mercer": "alex mercer", "agent alex mercer": "alex mercer"}
    rules = {r.norm: (r.rule, r.into_norm, r.score) for r in res.log}
    assert rules == {"agent alex mercer": ("title", "alex mercer", None),
                     "alex": ("name-subset", "alex mercer", None),
                     "mercer": ("name-subset", "alex mercer", None)}
    assert res.merges == {"compound": 0, "plural": 0, "title": 1, "name-subset": 2, "short-form": 0,
                          "of-place": 0, "acronym": 0,
                          "embedding": 0}


def test_name_subset_with_two_longer_candidates_is_not_merged():
    res = _resolve([("Alex", "person", 3), ("Alex Mercer", "person", 1), ("Alex Smith", "person", 1),
                    ("Mercer", "person", 1)])
    assert _merged(res) == {"mercer": "alex mercer"}       # "alex" is ambiguous, "mercer" is not


def test_name_subset_is_never_applied_to_organisations_or_locations():
    res = _resolve([("Microsoft", "organization", 3), ("Microsoft Research", "organization", 1),
                    ("Paris", "location", 2), ("Paris Hilton", "person", 1),
                    ("Berlin", "unknown", 1), ("Berlin Institute", "organization", 1)])
    # "Paris" (location) is incompatible with the person; "Berlin Institute" is no person
    assert _merged(res) == {}


def test_name_subset_distrusts_person_types_on_names_not_shaped_like_persons():
    # a small model typed everything "person"
    res = _resolve([("Microsoft", "person", 3), ("Microsoft Research", "person", 1),
                    ("Soviet", "person", 1), ("Soviet Union", "person", 2),
                    ("CTO", "person", 1), ("CTO Cisco", "person", 1),
                    ("Carolina", "person", 1), ("University of North Carolina", "person", 1),
                    ("Sagan", "person", 1), ("Carl Sagan", "person", 1)])
    assert _merged(res) == {"sagan": "carl sagan"}


def test_name_subset_for_untyped_entities_needs_a_title_as_person_evidence():
    plain = _resolve([("Paris", "unknown", 2), ("Paris Hilton", "unknown", 1)])
    assert _merged(plain) == {}
    titled = _resolve([("Hayes", "unknown", 2), ("Jordan Hayes", "unknown", 1), ("Dr. Jordan Hayes", "unknown", 1)])
    assert _merged(titled) == {"dr jordan hayes": "jordan hayes", "hayes": "jordan hayes"}
    # a titled name whose untitled form is no entity still merges by its title-stripped words
    core = _resolve([("Dr. Chen", "unknown", 1), ("Wei Chen", "person", 3)])
    assert _merged(core) == {"dr chen": "wei chen"} and core.log[0].rule == "name-subset"


def test_acronym_rule():
    res = _resolve([("IBM", "organization", 4), ("International Business Machines", "organization", 1),
                    ("NGO", "unknown", 1), ("Non-Governmental Organization", "concept", 1),
                    ("UN", "organization", 1), ("United Nations", "organization", 1),
                    ("Universal Networks", "organization", 1),
                    ("AI", "person", 1), ("Artificial Intelligence", "concept", 1)])
    assert _merged(res) == {"ibm": "international business machines", "ngo": "non governmental organization"}
    row = next(r for r in res.log if r.norm == "ibm")
    assert (row.rule, row.into_norm, row.score) == ("acronym", "international business machines", None)
    assert "initials" in row.detail


def test_embedding_rule_merges_into_the_entity_with_more_mentions():
    emb = DesignedEmbedder({"Dulce Base": 0, "Dulce Military Base": 18})   # cos 18 deg = 0.951
    res = _resolve([("Dulce Base", "location", 2), ("Dulce Military Base", "location", 5)], threshold=0.9, embed=emb)
    assert _merged(res) == {"dulce base": "dulce military base"}
    (row,) = res.log
    assert row.rule == "embedding" and row.into_norm == "dulce military base"
    assert row.score == pytest.approx(math.cos(math.radians(18)), abs=1e-4)
    assert res.embedded == 2 and emb.batches == [["Dulce Base", "Dulce Military Base"]]


def test_embedding_rule_threshold_and_tie():
    angles = {"Alpha Site": 0, "Alpha Station": 25.84}   # cos = 0.9000
    res = _resolve([("Alpha Site", "location", 1), ("Alpha Station", "location", 1)], threshold=0.9,
                   embed=DesignedEmbedder(angles))
    assert _merged(res) == {"alpha site": "alpha station"}   # same mentions: the longer key wins
    res = _resolve([("Alpha Site", "location", 1), ("Alpha Station", "location", 1)], threshold=0.91,
                   embed=DesignedEmbedder(angles))
    assert _merged(res) == {}


def test_embedding_rule_respects_types():
    angles = {"Washington": 0, "Washington DC": 8, "Washington Post": 20}
    pair = _resolve([("Washington", "location", 5), ("Washington Post", "organization", 1)], threshold=0.9,
                    embed=DesignedEmbedder(angles))
    assert _merged(pair) == {}                            # cos 0.94, but location vs organization
    res = _resolve([("Washington", "location", 5), ("Washington Post", "organization", 1),
                    ("Washington DC", "unknown", 1)], threshold=0.9, embed=DesignedEmbedder(angles))
    # the untyped one merges into the location; the organisation stays out of the cluster
    assert _merged(res) == {"washington dc": "washington"}
    # pairs go in descending similarity: here the untyped name is closest to the organisation
    angles = {"Washington": 0, "Washington DC": 14, "Washington Post": 16}
    res = _resolve([("Washington", "location", 5), ("Washington Post", "organization", 1),
                    ("Washington DC", "unknown", 1)], threshold=0.9, embed=DesignedEmbedder(angles))
    assert _merged(res) == {"washington dc": "washington post"}


def test_embedding_rule_does_not_chain_dissimilar_ends():
    # A~B 0.951, B~C 0.934, A~C 0.777: A and B merge, C would stretch the cluster
    angles = {"Site A": 0, "Site B": 18, "Site C": 39}
    res = _resolve([("Site A", "location", 3), ("Site B", "location", 1), ("Site C", "location", 1)],
                   threshold=0.9, embed=DesignedEmbedder(angles))
    assert _merged(res) == {"site b": "site a"}
    # an untyped bridge cannot join two incompatible types either
    angles = {"Orion": 0, "Orion Group": 5, "Orion Nebula": 10}
    res = _resolve([("Orion", "unknown", 3), ("Orion Group", "organization", 1), ("Orion Nebula", "location", 1)],
                   threshold=0.9, embed=DesignedEmbedder(angles))
    assert _merged(res) == {"orion group": "orion"}
    assert len(set(res.mapping.values())) == 2


def test_threshold_none_turns_off_only_the_embedding_rule():
    ents = [("Agent Alex Mercer", "person", 1), ("Alex Mercer", "person", 2), ("Alex", "person", 1),
            ("IBM", "organization", 1), ("International Business Machines", "organization", 1),
            ("Dulce Base", "location", 2), ("Dulce Military Base", "location", 1)]
    angles = {"Dulce Base": 0, "Dulce Military Base": 10}
    on = _resolve(ents, threshold=0.9, embed=DesignedEmbedder(angles))
    emb = DesignedEmbedder(angles)
    off = _resolve(ents, threshold=None, embed=emb)
    assert on.merges == {"compound": 0, "plural": 0, "title": 1, "name-subset": 1, "short-form": 0,
                          "of-place": 0, "acronym": 1,
                         "embedding": 1}
    assert off.merges == {"compound": 0, "plural": 0, "title": 1, "name-subset": 1, "short-form": 0,
                          "of-place": 0, "acronym": 1,
                         "embedding": 0}
    assert _merged(on) == dict(_merged(off), **{"dulce military base": "dulce base"})
    assert emb.batches == [] and off.embedded == 0


def test_embedder_is_not_called_with_fewer_than_two_entities():
    def boom(texts):
        raise AssertionError("embed called")

    res = _resolve([("Alex", "person", 1), ("Alex Mercer", "person", 1)], threshold=0.9, embed=boom)
    assert _merged(res) == {"alex": "alex mercer"} and res.embedded == 0


def test_log_names_the_final_entity_of_a_chain():
    res = _resolve([("Dr. Chen", "person", 1), ("Chen", "person", 1), ("Wei Chen", "person", 2)])
    assert _merged(res) == {"dr chen": "wei chen", "chen": "wei chen"}
    first = res.log[0]
    assert (first.norm, first.into_norm, first.rule) == ("dr chen", "wei chen", "title")
    assert "'Chen' was merged into 'Wei Chen'" in first.detail


def test_wrong_embedding_shape_is_an_error():
    with pytest.raises(ValueError, match="shape"):
        _resolve([("Site A", "location", 1), ("Site B", "location", 1)], threshold=0.9,
                 embed=lambda texts: np.zeros((1, 4)))


# --- build_graph with resolution -----------------------------------------------------------------

def _store_with_variants(tmp_path):
    store = Store(tmp_path / "g.duckdb", create=True)
    store.con.executemany("INSERT INTO entity_mentions VALUES (?, ?, ?, ?, ?)", [
        ["c1", "Agent Alex Mercer", "agent alex mercer", "person", "Agent Alex Mercer leads the team."],
        ["c1", "Jordan Hayes", "jordan hayes", "person", "Jordan Hayes is a scientist."],
        ["c2", "Alex", "alex", "person", "Alex doubts the protocol."],
        ["c2", "Jordan Hayes", "jordan hayes", "person", "Jordan Hayes is a scientist."],
        ["c3", "Alex Mercer", "alex mercer", "person", "Alex Mercer leads the team."],
        ["c3", "Dulce Base", "dulce base", "location", "Dulce Base is underground."],
    ])
    store.con.executemany("INSERT INTO relationship_mentions VALUES (?, ?, ?, ?, ?)", [
        ["c1", "agent alex mercer", "jordan hayes", "Alex Mercer works with Jordan Hayes.", 8],
        ["c2", "alex", "jordan hayes", "Alex and Jordan Hayes argue about the protocol.", 6],
        ["c2", "alex", "alex mercer", "becomes a self-loop", 5],
        ["c3", "alex mercer", "dulce base", "Alex Mercer enters Dulce Base.", 7],
    ])
    return store


def test_build_graph_resolves_and_remaps_relationships(tmp_path):
    store = _store_with_variants(tmp_path)
    count = lambda t: len(t.split())  # noqa: E731
    r = build_graph(store, count, 100, settings=Settings(summaries="join"))
    assert {k: getattr(r, k) for k in ("entities", "relationships", "isolated", "self_loops_dropped")} == {
        "entities": 3, "relationships": 2, "isolated": 0, "self_loops_dropped": 1}
    assert r.merges == {"compound": 0, "plural": 0, "title": 1, "name-subset": 1, "short-form": 0,
                          "of-place": 0, "acronym": 0,
                        "embedding": 0}
    q = store.con.execute
    assert q("SELECT entity_id, norm, name, n_mentions, degree FROM entities ORDER BY entity_id").fetchall() == [
        (1, "alex mercer", "Alex Mercer", 3, 2), (2, "dulce base", "Dulce Base", 1, 1),
        (3, "jordan hayes", "Jordan Hayes", 2, 1)]
    assert q("SELECT description FROM entities WHERE norm = 'alex mercer'").fetchone()[0] == (
        "Agent Alex Mercer leads the team. Alex doubts the protocol. Alex Mercer leads the team.")
    assert q("SELECT source_id, target_id, weight FROM relationships ORDER BY 1, 2").fetchall() == [
        (1, 2, 1.0), (1, 3, 2.0)]
    assert q("SELECT list(chunk_id ORDER BY chunk_id) FROM entity_text_units WHERE entity_id = 1").fetchone()[0] == [
        "c1", "c2", "c3"]
    assert q("SELECT norm, into_norm, rule, score FROM merge_log ORDER BY norm").fetchall() == [
        ("agent alex mercer", "alex mercer", "title", None), ("alex", "alex mercer", "name-subset", None)]
    # a rebuild keeps the ids and rewrites (not appends) merge_log
    build_graph(store, count, 100, settings=Settings(summaries="join"))
    assert store.count("merge_log") == 2
    assert q("SELECT entity_id FROM entities WHERE norm = 'jordan hayes'").fetchone()[0] == 3
    store.close()


def test_build_graph_embedding_rule_and_lazy_embedder(tmp_path):
    store = _store_with_variants(tmp_path)
    store.con.execute("INSERT INTO entity_mentions VALUES ('c4', 'Dulce', 'dulce', 'location', 'Dulce is remote.')")
    emb = DesignedEmbedder({"Dulce Base": 0, "Dulce": 10})
    r = build_graph(store, lambda t: len(t.split()), 100, settings=Settings(summaries="join"), embed=emb)
    assert r.merges["embedding"] == 1 and len(emb.batches) == 1
    row = store.con.execute("SELECT norm, into_norm, rule, round(score, 3) FROM merge_log WHERE rule = 'embedding'"
                            ).fetchone()
    assert row == ("dulce", "dulce base", "embedding", round(math.cos(math.radians(10)), 3))
    emb2 = DesignedEmbedder({})
    r = build_graph(store, lambda t: len(t.split()), 100,
                    settings=Settings(summaries="join", resolution_threshold=None), embed=emb2)
    assert r.merges["embedding"] == 0 and emb2.batches == []
    store.close()


# --- element summaries ---------------------------------------------------------------------------

def summary_script(system, user, schema):
    """Summaries made of the first two descriptions' words; other stages as usual."""
    if system.startswith("You write one summary"):
        lines = [ln[2:] for ln in user.splitlines() if ln.startswith("- ")]
        return "Summary: " + " ".join(lines[:2])
    return default_script(system, user, schema)


class RecordingModel(FakeModel):
    """FakeModel that also records each completion's ``max_tokens``."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.caps: list[int] = []

    def complete(self, fixed, rest, *, schema, max_tokens, deadline_s=None, on_text=None):
        self.caps.append(max_tokens)
        return super().complete(fixed, rest, schema=schema, max_tokens=max_tokens, deadline_s=deadline_s,
                                on_text=on_text)


def _summarise(store, model, **settings):
    client = ModelClient(model, store, "run")
    s = Settings(**settings)
    return build_graph(store, client.count, s.entity_description_max_tokens, settings=s, client=client,
                       prompts=Prompts()), client


def test_summaries_only_for_elements_with_several_descriptions(tmp_path):
    store = _store_with_variants(tmp_path)
    model = RecordingModel(summary_script)
    r, _ = _summarise(store, model, summaries="model", entity_description_max_tokens=50)
    # alex mercer: 3 distinct descriptions; jordan hayes: 2 equal ones; alex mercer -- jordan hayes: 2 distinct;
    # alex mercer -- dulce base: 1
    assert (r.summaries, r.summarized, r.summary_calls, r.summaries_rejected) == ("model", 2, 2, 0)
    assert len(model.calls) == 2 and model.caps == [50, 50]
    assert "Element: Alex Mercer (person)" in model.calls[0][1]
    assert "Element: the relationship between Alex Mercer and Jordan Hayes" in model.calls[1][1]
    q = store.con.execute
    assert q("SELECT description FROM entities WHERE norm = 'alex mercer'").fetchone()[0] == (
        "Agent Alex Mercer leads the team. Alex doubts the protocol.")
    assert q("SELECT description FROM entities WHERE norm = 'jordan hayes'").fetchone()[0] == (
        "Jordan Hayes is a scientist.")
    assert q("""SELECT r.description FROM relationships r JOIN entities t ON t.entity_id = r.target_id
                WHERE t.norm = 'jordan hayes'""").fetchone()[0] == (
        "Alex Mercer works with Jordan Hayes. Alex and Jordan Hayes argue about the protocol.")
    assert q("SELECT count(*) FROM llm_calls WHERE stage = 'summarize'").fetchone()[0] == 2
    # a re-run asks the cache, not the model
    r2, _ = _summarise(store, model, summaries="model", entity_description_max_tokens=50)
    assert len(model.calls) == 2 and (r2.summary_calls, r2.summary_cache_hits) == (0, 2)
    store.close()


def test_join_mode_and_auto_with_a_small_model_make_no_calls(tmp_path):
    store = _store_with_variants(tmp_path)
    big = FakeModel(summary_script)
    big.n_params = 3_000_000_000
    r, _ = _summarise(store, big, summaries="join")
    assert big.calls == [] and r.summaries == "join"
    joined = store.con.execute("SELECT description FROM entities WHERE norm = 'alex mercer'").fetchone()[0]
    assert joined.startswith("Agent Alex Mercer leads the team. Alex doubts the protocol.")
    small = FakeModel(summary_script)          # 1M parameters
    r, _ = _summarise(store, small, summaries="auto")
    assert small.calls == [] and r.summaries == "join"
    r, _ = _summarise(store, big, summaries="auto")
    assert len(big.calls) == 2 and r.summaries == "model"
    store.close()


def test_ungrounded_summary_falls_back_to_the_join(tmp_path):
    store = _store_with_variants(tmp_path)
    model = FakeModel(lambda system, user, schema: "Bananas ripen quickly in tropical orchards every summer.")
    r, _ = _summarise(store, model, summaries="model")
    assert r.summary_calls == 2 and r.summaries_rejected == 2
    assert store.con.execute("SELECT description FROM entities WHERE norm = 'alex mercer'").fetchone()[0] == (
        "Agent Alex Mercer leads the team. Alex doubts the protocol. Alex Mercer leads the team.")
    store.close()


def test_summary_input_is_budgeted_to_the_window(tmp_path):
    store = Store(tmp_path / "g.duckdb", create=True)
    rows = [[f"c{i}", "Alex Mercer", "alex mercer", "person",
             f"Alex Mercer did thing number {i} " + "with great care " * 25] for i in range(60)]
    store.con.executemany("INSERT INTO entity_mentions VALUES (?, ?, ?, ?, ?)", rows)
    model = FakeModel(summary_script, n_ctx=1024)   # asserts prompt + cap <= window
    r, _ = _summarise(store, model, summaries="model")
    assert r.summary_calls == 1
    user = model.calls[0][1]
    assert "thing number 0 " in user and "thing number 59 " not in user
    store.close()


def test_summarize_prompt_placeholders_are_required(tmp_path):
    (tmp_path / "summarize_user.txt").write_text("Element: $element\nSummary:", encoding="utf-8")
    with pytest.raises(Exception, match="descriptions"):
        Prompts(tmp_path).fill("summarize_user", element="x", descriptions="y")


def test_pipeline_reports_merges_and_shares_one_embedder(tmp_path, corpus):
    from conftest import FakeEmbedder

    from slmgraph.indexing.pipeline import run_index

    made = []

    def factory():
        made.append(FakeEmbedder())
        return made[-1]

    notes = []
    out = run_index(corpus, tmp_path / "p.duckdb", Settings(min_community_size=2), progress=False,
                    model=FakeModel(), embedder_factory=factory, say=notes.append)
    assert len(made) == 1
    assert set(out["graph"]["merges"]) == {"compound", "plural", "title", "name-subset", "short-form", "of-place",
                                           "acronym", "embedding"}
    line = next(n for n in notes if n.startswith("graph:"))
    assert "entity resolution merges:" in line and "descriptions joined" in line
    store = Store(tmp_path / "p.duckdb", read_only=True)
    stage = json.loads(store.con.execute("SELECT note FROM stage_runs WHERE stage = 'graph'").fetchone()[0])
    assert "merges" in stage
    store.close()


def test_rules_off_and_threshold_none_merge_on_the_normalised_name_only():
    ents = [("Alex Mercer", "person", 3), ("Alex", "person", 1), ("Agent Alex Mercer", "person", 1),
            ("IBM", "organization", 1), ("International Business Machines", "organization", 1)]
    assert _merged(_resolve(ents)) != {}  # the rules merge these
    res = _resolve(ents, rules=False)
    assert _merged(res) == {} and res.log == []


def test_cli_resolution_modes():
    from slmgraph.cli.flags import settings_from_args as _settings
    from slmgraph.cli.parser import build_parser

    def s(*extra):
        return _settings(build_parser().parse_args(["index", "in", "--db", "x.duckdb", *extra]))
    assert (s().resolution_threshold, s().resolution_rules) == (0.9, True)
    assert (s("--resolution", "rules").resolution_threshold, s("--resolution", "rules").resolution_rules) == (None, True)
    assert (s("--resolution", "off").resolution_threshold, s("--resolution", "off").resolution_rules) == (None, False)
    assert s("--resolution", "0.8").resolution_threshold == 0.8


def test_embedding_rule_never_merges_names_whose_numbers_differ():
    ents = [("World War I", "event", 2), ("World War II", "event", 3), ("Apollo 11", "event", 1),
            ("Apollo Eleven", "event", 1)]
    emb = DesignedEmbedder({"World War I": 10.0, "World War II": 10.0, "Apollo 11": 50.0, "Apollo Eleven": 50.0})
    merged = _merged(_resolve(ents, threshold=0.9, embed=emb))
    assert "world war i" not in merged and "world war ii" not in merged
    assert merged == {"apollo eleven": "apollo 11"} or merged == {"apollo 11": "apollo eleven"} or merged == {}


def test_untyped_title_rule_needs_a_personal_name_left():
    # LLM-free entities are untyped: "General Motors" must not become "Motors" with a title
    merged = _merged(_resolve([("General Motors", "unknown", 2), ("Motors", "unknown", 1),
                               ("Agent Alex Mercer", "unknown", 1), ("Alex Mercer", "unknown", 2)]))
    assert "general motors" not in merged
    assert merged.get("agent alex mercer") == "alex mercer"


def test_short_form_rule_merges_the_last_words_of_one_organisation_or_place_only():
    res = _resolve([("Philippine Commission", "organization", 2), ("Commission", "unknown", 1),
                    ("Johns Hopkins Carey Business School", "organization", 1),
                    ("Carey Business School", "organization", 1), ("Business School", "unknown", 1),
                    ("Aberlow", "location", 2), ("Aberlow Fish Market", "organization", 1),
                    ("Harvard University", "organization", 1), ("Yale University", "organization", 1),
                    ("University", "unknown", 1), ("Germany", "location", 1), ("East Germany", "location", 1)],
                   types_reliable=False)
    m = _merged(res)
    assert m["commission"] == "philippine commission"
    assert m["carey business school"] == m["business school"] == "johns hopkins carey business school"
    # first words never merge (a town is not its market); two names ending so block it; a head word is needed
    assert "aberlow" not in m and "university" not in m and "germany" not in m
    assert res.merges["short-form"] == 3
    assert all(r.rule == "short-form" for r in res.log if r.norm in ("commission", "carey business school"))


def test_short_form_rule_never_merges_a_proper_name_into_a_phrase_that_only_contains_it():
    # a meeting "of" the association, and a span opening with a lower-case word, are no fuller names of it
    res = _resolve([("Millbrook Allotment Association", "organization", 3),
                    ("fourteenth AGM of the Millbrook Allotment Association", "organization", 1),
                    ("Rotary Club", "organization", 2), ("local Rotary Club", "organization", 1),
                    ("Town Council", "organization", 1), ("Chair of the Town Council", "organization", 1),
                    ("Millbrook Town Council", "organization", 2),
                    ("Commission", "unknown", 1), ("the Philippine Commission", "organization", 1)],
                   types_reliable=False)
    m = _merged(res)
    assert "millbrook allotment association" not in m and "rotary club" not in m
    # the phrase is no rival either: the short name still merges into the one proper name ending so
    assert m["town council"] == "millbrook town council" and m["commission"] == "philippine commission"
    assert res.merges["short-form"] == 2


def test_plural_rule_merges_a_name_with_its_plural_form_across_kinds():
    # NER typed the apple variety a place by its first word and its plural an organisation: apart kinds;
    # the merge goes into the form named more often, the singular on a tie
    res = _resolve([("Kingston Black", "location", 2), ("Kingston Blacks", "organization", 1),
                    ("City Bus", "location", 1), ("City Buses", "organization", 1),
                    ("Hawthorn Berry", "concept", 1), ("Hawthorn Berries", "location", 3),
                    ("Tomato Heroes", "organization", 1), ("Tomato Hero", "concept", 1)])
    assert _merged(res) == {"kingston blacks": "kingston black", "city buses": "city bus",
                            "hawthorn berry": "hawthorn berries", "tomato heroes": "tomato hero"}
    assert res.merges["plural"] == 4
    row = next(r for r in res.log if r.norm == "kingston blacks")
    assert (row.rule, row.into_norm, row.score) == ("plural", "kingston black", None)
    assert "plural of 'Kingston Black'" in row.detail and "organization and location" in row.detail


def test_plural_rule_never_makes_up_a_singular_nor_merges_a_person_or_one_word():
    res = _resolve([("Henry James", "person", 3), ("Henry Jame", "location", 1),
                    ("Tom Williams", "location", 1), ("Tom William", "person", 1),
                    ("Falkland Islands", "location", 2), ("Harbor Lane", "location", 1),
                    ("Leeds", "location", 1), ("Leed", "organization", 1)])
    assert res.merges["plural"] == 0 and _merged(res) == {}


def test_a_name_of_a_place_merges_into_the_name_alone_only_beside_that_place():
    ents = [("Harrowgate Marine Engineering of Ardmore", "organization", 1),
            ("Harrowgate Marine Engineering", "unknown", 1), ("Ardmore", "location", 3),
            ("University of Oslo", "organization", 1), ("University", "organization", 1), ("Oslo", "location", 1),
            ("Microsoft", "organization", 2), ("Microsoft Research", "organization", 2),
            ("Clearpath", "organization", 1), ("Clearpath Access", "organization", 1)]
    units = {"harrowgate marine engineering of ardmore": {"u1"}, "harrowgate marine engineering": {"u2"},
             "ardmore": {"u2", "u3"}, "university of oslo": {"u4"}, "university": {"u4"}, "oslo": {"u4"},
             "microsoft": {"u5"}, "microsoft research": {"u5"}, "clearpath": {"u6"}, "clearpath access": {"u6"}}
    res = _resolve(ents, units=units)
    assert _merged(res) == {"harrowgate marine engineering of ardmore": "harrowgate marine engineering"}
    assert res.merges["of-place"] == 1
    row = next(r for r in res.log if r.rule == "of-place")
    assert "'Ardmore'" in row.detail
    # the place named in no text unit of either name: "of" may say something else, no merge
    far = dict(units, ardmore={"u9"})
    assert _merged(_resolve(ents, units=far)) == {}
    # a place that is no place of the index (typed otherwise) merges nothing either
    assert _merged(_resolve([(n, "organization" if n == "Ardmore" else t, k) for n, t, k in ents], units=units)) == {}
