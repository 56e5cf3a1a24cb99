"""Prompt tokens of model-written community reports (issue 12): parents read their children's
reports instead of re-reading their elements, and a per-build budget ties the report stage's
evaluated prompt tokens to the corpus size. Scripted fake model; token counts, never timings."""

import zlib

from conftest import FakeEmbedder, FakeModel, fake_model_factory, super_groups

from slmgraph.model.client import ModelClient
from slmgraph.indexing.stages.communities import run_communities
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.reports import run_reports
from slmgraph.store.db import Store

WORDS = ("harbour lantern copper meadow falcon ember quartz willow signal orchard basalt thistle "
         "cobalt marble juniper anchor saffron glacier tundra violet").split()


def _store(path, corpus_tokens: int) -> Store:
    """super_groups' graph (3 groups of 3 five-cliques) with long, distinct descriptions: every
    entity's and relationship's description is its own sentence of 80 words."""
    store = Store(path, create=True)
    ents, wedges = super_groups()
    ents.remove(99)
    edges = [(a, b) for a, b, _ in wedges]

    def sentence(tag: str) -> str:
        return f"{tag} " + " ".join(WORDS[(zlib.crc32(tag.encode()) + i) % len(WORDS)] for i in range(80)) + "."

    store.con.executemany("INSERT INTO entities VALUES (?, ?, ?, 'person', ?, 1, 0)",
                          [[e, f"e{e}", f"Entity{e}", sentence(f"Entity{e} is")] for e in ents])
    store.con.executemany("INSERT INTO relationships VALUES (?, ?, ?, ?, 1, 5, 2)",
                          [[i + 1, a, b, sentence(f"Link{i + 1} joins")] for i, (a, b) in enumerate(edges)])
    store.con.execute("INSERT INTO documents (doc_id, path, n_chars, n_tokens) VALUES ('d', 'd.txt', 1, ?)",
                      [corpus_tokens])
    run_communities(store, Settings(min_community_size=3, seed=1))
    return store


def _evaluated(store: Store) -> int:
    """Prompt tokens the report calls evaluated (the ledger: prompt minus KV-cache reuse)."""
    return int(store.con.execute("SELECT sum(prompt_tokens - cached_tokens) FROM llm_calls "
                                 "WHERE stage = 'report'").fetchone()[0])


def _run(store: Store, **kw):
    model = FakeModel()
    out = run_reports(store, ModelClient(model, store, "r"), Prompts(),
                      Settings(min_community_size=3, seed=1, reports="model", **kw), progress=False)
    return model, out


def test_a_parent_reads_its_childrens_reports_instead_of_their_elements(tmp_path):
    store = _store(tmp_path / "p.duckdb", 10_000)
    model, out = _run(store, report_budget=0)  # no budget: whole descriptions, and every element fits
    assert out.budget_tokens == 0 and out.description_tokens is None
    q = store.con.execute
    parent = q("SELECT community_id FROM community_reports WHERE context_kind = 'sub-reports' "
               "ORDER BY community_id LIMIT 1").fetchone()
    assert parent is not None
    kids = [r[0] for r in q("SELECT community_id FROM communities WHERE parent_id = ? AND carried_from IS NULL",
                            [parent[0]]).fetchall()]
    assert len(kids) >= 2
    titles = [r[0] for r in q("SELECT title FROM community_reports WHERE community_id IN (SELECT unnest(?))",
                              [kids]).fetchall()]
    members = {k: {r[0] for r in q("SELECT e.name FROM community_members m JOIN entities e USING (entity_id) "
                                   "WHERE community_id = ?", [k]).fetchall()} for k in kids}
    prompt = next(u for _, u, _ in model.calls if "Sub-community reports" in u
                  and all(f"Sub-report: {t}" in u for t in titles))
    lines = prompt.split("-----Relationships-----\n", 1)[1].split("\n")[1:]
    rel_lines = [ln for ln in lines if ln.startswith("Entity")]
    assert rel_lines  # the relationships between children are read at the parent
    for ln in rel_lines:
        src, dst = ln.split(",")[:2]
        assert not any(src in m and dst in m for m in members.values())  # none inside a child: its report stands
    ent_block = prompt.split("-----Entities-----\n", 1)[1].split("-----Relationships-----")[0]
    assert not any(n in ent_block.split("\n", 1)[1] for m in members.values() for n in m)


def test_the_report_budget_bounds_and_lowers_the_evaluated_prompt_tokens(tmp_path):
    whole = _store(tmp_path / "w.duckdb", 10_000)
    _, out0 = _run(whole, report_budget=0)
    n_whole = _evaluated(whole)
    fixed = len(FakeModel().tokenize("<system> " + Prompts().text("report_system_short") + "\n"))
    budget = n_whole // 2
    for corpus_tokens, ratio in ((10_000, budget / 10_000), (1_000, budget / 1_000)):
        store = _store(tmp_path / f"b{corpus_tokens}.duckdb", corpus_tokens)
        model, out = _run(store, report_budget=ratio)
        assert out.budget_tokens == budget and out.planned_tokens <= budget
        assert out.description_tokens is not None and out.budget_scale == 1.0
        assert out.model_calls == out0.model_calls
        n = _evaluated(store)
        assert n <= budget + fixed  # the fixed prefix is evaluated once per process, outside the budget
        assert n < n_whole
        # the descriptions were cut: no report prompt holds a whole 80-word description
        assert all(len(line.split(",")[2].split()) < 81 for _, u, _ in model.calls
                   for line in u.splitlines() if line.startswith("Entity") and line.count(",") >= 2)


def test_a_budget_below_the_smallest_cap_scales_every_context(tmp_path):
    store = _store(tmp_path / "s.duckdb", 1_000)
    _, out = _run(store, report_budget=0.5)  # 500 tokens for all the reports
    assert out.description_tokens == 24 and 0 <= out.budget_scale < 1
    per_call = store.con.execute("SELECT max(context_tokens) FROM community_reports "
                                 "WHERE context_kind IN ('elements', 'sub-reports')").fetchone()[0]
    assert per_call <= max(48, 500)


def _corpus(root):
    """Three groups of four people with long sentences, each group tied to the next by one sentence."""
    import itertools

    root.mkdir(parents=True)
    first = ["Alice", "Bruno", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kira", "Lars"]
    last = ["Smith", "Weber", "Rossi"]
    for g, ln in enumerate(last):
        names = [f"{f} {ln}" for f in first[g * 4:(g + 1) * 4]]
        lines = [f"{a} worked with {b} at {ln} Labs in {ln}ville on the {w} project for many long years together."
                 for (a, b), w in zip(itertools.combinations(names, 2), WORDS)]
        lines.append(f"{names[0]} once met {first[((g + 1) % 3) * 4]} {last[(g + 1) % 3]} in Geneva.")
        (root / f"g{g}.txt").write_text("\n".join(lines) + "\n")
    return root


def test_same_reports_with_one_and_two_workers_under_the_budget(tmp_path):
    corpus = _corpus(tmp_path / "c")
    settings = dict(extract_mode="json", reports="model", min_community_size=2, report_budget=0.2)
    dbs = []
    for workers in (1, 2):
        db = tmp_path / f"w{workers}.duckdb"
        out = run_index(corpus, db, Settings(workers=workers, **settings), progress=False, model=FakeModel(),
                        embedder_factory=FakeEmbedder, say=lambda m: None,
                        model_factory=fake_model_factory if workers > 1 else None)
        assert out["reports"]["workers"] == workers and out["reports"]["model_calls"] > 0
        assert out["reports"]["description_tokens"] is not None
        dbs.append(db)

    def reports(db):
        st = Store(db, read_only=True)
        got = st.con.execute("SELECT community_id, level, title, summary, findings, full_text, context_tokens, "
                             "context_kind FROM community_reports ORDER BY 1").fetchall()
        st.close()
        return got

    assert reports(dbs[0]) == reports(dbs[1])
