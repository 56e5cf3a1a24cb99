"""Graph merge and hierarchical Leiden."""

import itertools

from conftest import FakeModel, super_groups

from slmgraph.indexing.stages.communities import hierarchical_leiden, run_communities
from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.graph import build_graph, join_descriptions
from slmgraph.store.db import Store


def _mentions(store):
    con = store.con
    con.executemany("INSERT INTO entity_mentions VALUES (?, ?, ?, ?, ?)", [
        ["c1", "Microsoft", "microsoft", "organization", "Maker of Windows."],
        ["c2", "MICROSOFT", "microsoft", "organization", "Maker of Windows."],
        ["c2", "Microsoft", "microsoft", "unknown", "Software company."],
        ["c1", "Bill Gates", "bill gates", "person", "Founder."],
        ["c3", "Seattle", "seattle", "location", ""],
    ])
    con.executemany("INSERT INTO relationship_mentions VALUES (?, ?, ?, ?, ?)", [
        ["c1", "bill gates", "microsoft", "Founded it.", 8],
        ["c2", "microsoft", "bill gates", "Led by him.", 6],
        ["c3", "seattle", "seattle", "self loop", 5],
        ["c3", "seattle", "nobody", "dangling", 5],
    ])


def test_merge_by_normalised_name_with_provenance_and_weight(tmp_path):
    store = Store(tmp_path / "g.duckdb", create=True)
    _mentions(store)
    model = FakeModel()
    r = build_graph(store, lambda t: len(model.tokenize(t)), 100)
    assert {k: getattr(r, k) for k in ("entities", "relationships", "isolated")} == {"entities": 3, "relationships": 1,
                                                                           "isolated": 1}
    assert r.merges == {"compound": 0, "plural": 0, "title": 0, "name-subset": 0, "short-form": 0, "of-place": 0, "acronym": 0,
                        "embedding": 0}
    ms = store.con.execute("SELECT name, type, description, n_mentions, degree FROM entities WHERE norm='microsoft'").fetchone()
    assert ms == ("Microsoft", "organization", "Maker of Windows. Software company.", 2, 1)
    rel = store.con.execute("SELECT weight, strength, description FROM relationships").fetchone()
    assert rel == (2.0, 7.0, "Founded it. Led by him.")
    prov = store.con.execute("""SELECT e.norm, list(t.chunk_id ORDER BY t.chunk_id) FROM entities e
                                JOIN entity_text_units t USING (entity_id) GROUP BY e.norm ORDER BY 1""").fetchall()
    assert prov == [("bill gates", ["c1"]), ("microsoft", ["c1", "c2"]), ("seattle", ["c3"])]
    assert store.con.execute("SELECT list(chunk_id ORDER BY chunk_id) FROM relationship_text_units").fetchone()[0] == ["c1", "c2"]


def test_join_descriptions_respects_token_limit():
    out = join_descriptions(["one two three", "four five", "six"], 5, lambda t: len(t.split()))
    assert out == "one two three."


def _cliques(k, size, bridge=True):
    ents, edges = [], []
    for c in range(k):
        members = list(range(c * size + 1, (c + 1) * size + 1))
        ents += members
        edges += [(a, b, 1.0) for a, b in itertools.combinations(members, 2)]
        if bridge and c:
            edges.append((members[0], members[0] - 1, 0.1))
    return ents, edges


def _check_hierarchy(ents, comms):
    levels = sorted({c.level for c in comms})
    by_id = {c.community_id: c for c in comms}
    for lv in levels:
        members = [e for c in comms if c.level == lv for e in c.members]
        assert sorted(members) == sorted(ents), f"level {lv} must cover every entity exactly once"
    for c in comms:
        if c.level == 0:
            assert c.parent_id is None
        else:
            parent = by_id[c.parent_id]
            assert parent.level == c.level - 1 and set(c.members) <= set(parent.members)
    for c in comms:
        kids = [k for k in comms if k.parent_id == c.community_id]
        if kids:
            assert sorted(e for k in kids for e in k.members) == sorted(c.members)


def test_hierarchy_nests_covers_every_entity_and_is_seeded():
    ents, edges = _cliques(4, 6)
    ents.append(99)  # an isolated entity
    comms = hierarchical_leiden(ents, edges, seed=7, min_size=3)
    _check_hierarchy(ents, comms)
    level0 = [c for c in comms if c.level == 0]
    assert len(level0) >= 4, "level 0 is Leiden's root partition, not one community holding everything"
    assert [c.members for c in hierarchical_leiden(ents, edges, seed=7, min_size=3)] == [c.members for c in comms]


def test_unsplittable_communities_are_carried_down():
    ents, edges = super_groups()
    comms = hierarchical_leiden(ents, edges, seed=1, min_size=3)
    _check_hierarchy(ents, comms)
    assert max(c.level for c in comms) == 1
    assert any(c.level == 1 and c.carried_from is None for c in comms), "some community was split"
    carried = [c for c in comms if c.carried_from is not None]
    assert carried, "an unsplittable community is carried down"
    for c in carried:
        orig = next(o for o in comms if o.community_id == c.carried_from)
        assert orig.members == c.members and orig.level == c.level - 1
    assert any(c.members == [99] and c.level == 1 for c in carried)


def test_run_communities_stores_levels(tmp_path):
    store = Store(tmp_path / "c.duckdb", create=True)
    ents, edges = _cliques(3, 5)
    store.con.executemany("INSERT INTO entities VALUES (?, ?, ?, 'person', '', 1, 0)", [[e, f"e{e}", f"E{e}"] for e in ents])
    store.con.executemany("INSERT INTO relationships VALUES (?, ?, ?, '', ?, 5, 0)",
                          [[i + 1, a, b, w] for i, (a, b, w) in enumerate(edges)])
    r = run_communities(store, Settings(min_community_size=3))
    assert r.per_level[0] >= 3
    n = store.con.execute("SELECT count(*) FROM community_members m JOIN communities c USING (community_id) WHERE level = 0").fetchone()[0]
    assert n == len(ents)
