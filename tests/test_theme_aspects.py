"""A focused global answer gathers its on-topic statements from every community and organises them into
labelled aspects (clusters of the statements' embeddings, labels by class-based TF-IDF over the aspects)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from slmgraph.query.question_embed import question_embedder
from slmgraph.query.theme_aspects import OTHER, cluster
from slmgraph.query.themes import theme_answer
from slmgraph.store.db import Store

QUESTION = "How do guests describe the role of robots in hospitals?"
# Two aspects of robots in hospitals, each said in three documents: surgical robots and delivery robots; then
# units off the question.
UNITS = [
    ("d0", "Surgical robots let a surgeon operate through tiny incisions in the hospital. "
           "Surgical robots steady the surgeon's hand during long heart operations."),
    ("d1", "With surgical robots, patients in our hospital recover from surgery in days rather than weeks. "
           "The surgical robots also record every movement for training new surgeons."),
    ("d2", "Surgical robots cost the hospital millions, yet surgeons trust them for delicate work. "
           "The weather in the valley was warm that spring."),
    ("d3", "Delivery robots carry medicines and meals along the hospital corridors at night. "
           "Delivery robots free nurses from pushing heavy carts between the wards."),
    ("d4", "The hospital's delivery robots take blood samples from the wards to the laboratory. "
           "Delivery robots ride the lifts on their own and announce themselves to the nurses."),
    ("d5", "Nurses say the delivery robots in the hospital save them hours of walking every shift. "
           "The cafeteria served soup and bread for lunch."),
    ("d6", "The band played three songs at the festival and the crowd sang along to every chorus."),
    ("d7", "Our garden grew tomatoes, beans and squash during the long and sunny summer months."),
]
PHRASES = {0: ["surgical robot"], 1: ["surgical robot"], 2: ["surgical robot"],
           3: ["delivery robot"], 4: ["delivery robot"], 5: ["delivery robot"]}


@pytest.fixture(scope="module")
def embedder():
    return question_embedder()


@pytest.fixture
def store(tmp_path, embedder):
    s = Store(tmp_path / "i.duckdb", create=True)
    con = s.con
    for d in sorted({d for d, _ in UNITS}):
        con.execute("INSERT INTO documents (doc_id, path, title) VALUES (?, ?, ?)", [d, f"{d}.txt", d])
    vecs = embedder.encode([t for _, t in UNITS])
    for i, (d, text) in enumerate(UNITS):
        c = f"u{i}"
        con.execute("INSERT INTO text_units (chunk_id, doc_id, ord, text) VALUES (?, ?, 0, ?)", [c, d, text])
        con.execute("INSERT INTO embeddings (kind, item_id, model, vector) VALUES ('text_unit', ?, 'm', ?)",
                    [c, vecs[i].tolist()])
        for p in PHRASES.get(i, []):
            con.execute("INSERT INTO concept_mentions VALUES (?, ?, ?, '')", [c, p, p + "s"])
        con.execute("INSERT INTO concept_mentions VALUES (?, 'hospital', 'hospital', '')", [c])
    # one community over every unit: the root level's large community, as on a real corpus
    con.execute("INSERT INTO entities (entity_id, norm, name, type) VALUES (1, 'city hospital', 'City Hospital', 'ORG')")
    con.execute("INSERT INTO communities VALUES (1, 0, NULL, 1, NULL)")
    con.execute("INSERT INTO community_members VALUES (1, 1)")
    for i in range(len(UNITS)):
        con.execute("INSERT INTO entity_text_units VALUES (1, ?)", [f"u{i}"])
    con.execute("INSERT INTO community_reports (community_id, level, title, summary, findings, rating, topic, doc_ids) "
                "VALUES (1, 0, 'City Hospital', '', '[]', 5.0, 'hospital', ?)",
                [json.dumps(sorted({d for d, _ in UNITS}))])
    yield s
    s.con.close()


POOL = [{"community_id": 1, "entities": ["City Hospital"], "summary": ""}]
PROBES = ["What music did the band play?", "What grows in the garden?"]


def _answer(store, embedder):
    qv = embedder.encode([QUESTION])[0]
    return theme_answer(store, QUESTION, POOL, {1: 50.0}, qv, embedder, pool=POOL, probes=PROBES)


def test_a_focused_answer_gathers_more_statements_than_one_community_gave(store, embedder):
    text, themes, _ = _answer(store, embedder)
    quoted = [s for t in themes for s in t.statements]
    # one community held every statement: it quoted three of them
    assert len(quoted) >= 5
    assert {s.doc_id for s in quoted} >= {"d0", "d1", "d3", "d4"}
    assert not any("weather" in s.text or "cafeteria" in s.text or "band" in s.text for s in quoted)


def test_its_statements_are_organised_into_aspects_labelled_by_what_tells_them_apart(store, embedder):
    text, themes, _ = _answer(store, embedder)
    labelled = [t for t in themes if t.topic != OTHER]
    assert len(labelled) == 2
    by_label = {t.topic.casefold(): t for t in labelled}
    assert set(by_label) == {"surgical robots", "delivery robots"}
    for label, t in by_label.items():
        # each aspect quotes only statements about its own label, from two or more documents
        assert all(label.split()[0] in s.text.casefold() for s in t.statements)
        assert len({s.doc_id for s in t.statements}) >= 2
    # the answer opens with one sentence stating the aspects with their statements and documents
    first = text.split("\n\n")[0]
    assert "in two aspects" in first
    assert "surgical robots (" in first.casefold() and "delivery robots (" in first.casefold()
    assert "statements from" in first


def test_cluster_cuts_where_the_silhouette_is_best_and_folds_a_lone_row_into_the_nearest():
    rng = np.random.default_rng(0)
    a, b = np.eye(8)[0], np.eye(8)[1]
    rows = [a + 0.05 * rng.standard_normal(8) for _ in range(3)] + [b + 0.05 * rng.standard_normal(8) for _ in range(3)]
    rows.append(a + 0.6 * b)  # nearer a's group
    x = np.array([r / np.linalg.norm(r) for r in rows])
    assert cluster(x) == [[0, 1, 2, 6], [3, 4, 5]]
    assert cluster(x[:3]) == [[0, 1, 2]]
