"""Local, DRIFT, basic and lazy answers: points off the question, status lines that agree with the answer, and a
document that is no prose (a dumped table) indexed beside real ones."""

import random
import re

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.indexing.stages.ingest_read import read_input
from slmgraph.model.client import ModelClient
from slmgraph.query.engines.basic_search import basic_search
from slmgraph.query.engines.lazy_search import lazy_search
from slmgraph.query.extractive import sentence_points
from slmgraph.query.scoring import probe_questions
from slmgraph.store.db import Store
from slmgraph.text.shape import no_prose_passage, not_prose


def _dump(n_rows: int = 2500, seed: int = 3) -> str:
    """A sailing log dumped onto one line: dates, vessel codes, figures and base64-like keys, no sentence."""
    rnd = random.Random(seed)
    rows = []
    for _ in range(n_rows):
        key = "".join(rnd.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(12))
        rows.append(f"20{rnd.randint(19, 25)}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d} MV_{rnd.choice('ABC')} "
                    f"{rnd.randint(10, 400)} {key} fuel {rnd.uniform(100, 900):.1f}")
    return " | ".join(rows)


PROSE = ("The board met in March to discuss the ferry timetable. Members asked about the winter sailings, and the "
         "manager said the timetable would stay as it is.\n") * 40


# ---- the prose test ----

def test_a_dumped_table_on_one_line_is_not_prose_and_real_text_is():
    why = not_prose(_dump())
    assert why is not None and "no line break or sentence end" in why
    assert not_prose(PROSE) is None
    assert not_prose("a short note without any full stop " * 5) is None  # under the words a test needs


def test_a_table_of_codes_with_line_breaks_is_not_prose_by_its_share_of_words():
    table = _dump().replace(" | ", "\n")
    why = not_prose(table)
    assert why is not None and "are words" in why


@pytest.mark.parametrize("sentence", [
    "Совет директоров обсудил бюджет на следующий год и утвердил план развития.",
    "Το συμβούλιο συζήτησε τον προϋπολογισμό του επόμενου έτους και ενέκρινε το σχέδιο.",
    "परिषद ने अगले वर्ष के बजट पर चर्चा की और योजना को मंजूरी दी।",
    "ناقش المجلس ميزانية العام المقبل ووافق على الخطة الجديدة للنقل؟",
    "董事会讨论了明年的预算并批准了计划。我们 公司 年度 报告 交通 计划",
])
def test_prose_in_another_script_is_prose(sentence):
    text = " ".join([sentence] * 60)
    assert not_prose(text) is None
    assert not no_prose_passage(" ".join([sentence] * 10))


def test_tagged_names_are_passed_over_by_searches_but_still_give_the_graph_its_names():
    from slmgraph.text.shape import junk_passage

    text = " ".join(f"Person{j} Name{j} met Acme{j} Corp in Paris{j}." for j in range(40))
    assert no_prose_passage(text) and not junk_passage(text)
    assert junk_passage(_dump(200)) and no_prose_passage(_dump(200))


def test_a_passage_of_the_dump_holds_no_prose_and_a_passage_of_text_does():
    assert no_prose_passage(_dump(60)) and not no_prose_passage(PROSE[:2000])


# ---- ingest ----

def test_ingest_warns_once_naming_a_file_that_is_no_prose_and_still_indexes_it(tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    (root / "minutes.txt").write_text(PROSE, encoding="utf-8")
    (root / "log_dump.txt").write_text(_dump(), encoding="utf-8")
    reading = read_input(root)
    assert sorted(d.path for d in reading.documents) == ["log_dump.txt", "minutes.txt"]
    said = [w for w in reading.warnings if "log_dump.txt" in w]
    assert len(said) == 1 and len(reading.warnings) == 1
    assert "indexed" in said[0] and "move it out of the input folder" in said[0] and "\n" not in said[0]


# ---- sentences quoted ----

def test_a_statement_longer_than_a_sentence_is_never_quoted():
    emb = FakeEmbedder()
    question = "What fuel did the ferry use?"
    run_on = " ".join(["ferry fuel use"] * 80)  # 240 words, no sentence end: a table's run of text
    pts = sentence_points([(1, run_on + "\n"), (2, "The ferry used diesel fuel until the electric vessel came.")],
                          emb.encode([question])[0], emb)
    assert [p.ids for p in pts] == [[2]]


def test_sentences_off_the_question_are_left_out_of_the_points():
    emb = FakeEmbedder()
    question = "What did the board decide about the ferry timetable?"
    passages = [(1, "The board decided to keep the ferry timetable for the winter. "
                    "Isla sailed across the Sound in eleven minutes, in near silence."),
                (2, "Weather tomorrow: rain in the north, sun later. The board agreed the ferry timetable changes.")]
    qv = emb.encode([question])[0]
    every = sentence_points(passages, qv, emb)
    kept = sentence_points(passages, qv, emb, probes=probe_questions(Prompts()))
    assert any("Isla" in p.text for p in every)  # without the probes, the off-topic sentence fills a slot
    assert kept and all("timetable" in p.text for p in kept)


def test_when_no_sentence_is_on_the_question_one_point_is_quoted_not_five():
    emb = FakeEmbedder()
    passages = [(1, "Isla sailed across the Sound in near silence. Gulls followed the boat. Rain fell all day.")]
    pts = sentence_points(passages, emb.encode(["What did the board decide?"])[0], emb,
                          probes=probe_questions(Prompts()))
    assert len(pts) == 1


def test_a_sentence_naming_whom_the_question_asks_about_is_kept_whatever_its_cosine():
    emb = FakeEmbedder()
    passages = [(1, "Priya Nair argued that residents must not pay for the fuel crisis. "
                    "Master Isla Morrison took her across the Sound in eleven minutes.")]
    pts = sentence_points(passages, emb.encode(["Who is Priya Nair?"])[0], emb, names=["Priya Nair", "Nair"],
                          probes=probe_questions(Prompts()))
    assert [p.text for p in pts] == ["Priya Nair argued that residents must not pay for the fuel crisis."]


# ---- the searches on an index holding a dump ----

@pytest.fixture
def dumped(tmp_path, corpus):
    (corpus / "zz_log_dump.txt").write_text(_dump(1500), encoding="utf-8")
    db = tmp_path / "idx.duckdb"
    s = Settings(min_community_size=2, extractor="nlp", reports="none")
    said = []
    run_index(corpus, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=said.append)
    return db, s, said


def _dump_units(store) -> set[int]:
    from slmgraph.query.answer import unit_numbers

    num = unit_numbers(store)
    return {num[c] for c, t in store.con.execute("SELECT chunk_id, text FROM text_units").fetchall()
            if "MV_" in t}


def test_the_index_warns_about_the_dump_and_lazy_spends_no_test_on_it(dumped):
    db, s, said = dumped
    assert sum("zz_log_dump.txt" in line and line.startswith("warning:") for line in said) == 1
    store = Store(db)
    try:
        dump = _dump_units(store)
        assert len(dump) > 10  # nothing indexed is lost
        ans = lazy_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s,
                          "Which fuel did the rockets of Acme Corporation use?", FakeEmbedder())
        tested = {t["source"] for t in ans.details["tested"]}
        assert tested and not tested & dump
        assert not set(ans.citations.get("sources", [])) & dump
    finally:
        store.close()


def test_the_dump_gives_no_entity_and_no_concept(dumped):
    db, _, _ = dumped
    store = Store(db)
    try:
        dump = {c for c, t in store.con.execute("SELECT chunk_id, text FROM text_units").fetchall() if "MV_" in t}
        status = dict(store.con.execute("SELECT chunk_id, status FROM extractions").fetchall())
        assert dump and all(status[c] == "no_prose" for c in dump)
        assert all(status[c] != "no_prose" for c in status if c not in dump)
        for table in ("entity_mentions", "concept_mentions"):
            n = store.con.execute(f"SELECT count(*) FROM {table} WHERE chunk_id IN (SELECT unnest(?))",
                                  [sorted(dump)]).fetchone()[0]
            assert n == 0, table
        assert store.count("entities") > 0
    finally:
        store.close()


def test_basic_search_ranks_no_unit_of_the_dump(dumped):
    db, s, _ = dumped
    store = Store(db)
    try:
        dump = {c for c, t in store.con.execute("SELECT chunk_id, text FROM text_units").fetchall() if "MV_" in t}
        ans = basic_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s,
                           "Which fuel did the rockets of Acme Corporation use?", FakeEmbedder())
        assert not ans.details.get("refused") and ans.context
        assert not {c["id"] for c in ans.context} & dump
    finally:
        store.close()


# ---- lazy's status line ----

def test_lazy_status_line_agrees_with_the_units_it_quotes(tmp_path, corpus):
    db = tmp_path / "idx.duckdb"
    s = Settings(min_community_size=2, extractor="nlp", reports="none", helpfulness_floor=99.0,
                 helpfulness_probes=False)  # no unit passes: the units naming Alice Smith answer
    run_index(corpus, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    store = Store(db)
    try:
        ans = lazy_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, "Who is Alice Smith?",
                          FakeEmbedder())
    finally:
        store.close()
    assert ans.citations["sources"] and ans.details["relevant"] == []
    line = next(ln for ln in ans.text.split("\n") if ln.startswith("Sources:"))
    assert not re.search(r"\b0 relevant\b", line)
    assert "none of the" in line and "'Alice Smith'" in line
    assert "quoted because they name 'Alice Smith'" in line and "scored under" not in line


def test_drift_points_off_the_question_are_dropped_and_one_naming_the_person_kept():
    from slmgraph.query.extractive import Point, points_on_question

    emb = FakeEmbedder()
    probes = probe_questions(Prompts())
    qv = emb.encode(["What did the board decide about the ferry timetable?"])[0]
    pts = [Point("Timetable", "The board did decide about the ferry timetable.", [1]),
           Point("Weather", "Rain tomorrow in the north, and sun later in the week.", [2]),
           Point("", "Grace Hopper joined the Navy.", [3])]
    assert [p.ids for p in points_on_question(pts, qv, emb, probes)] == [[1]]
    assert [p.ids for p in points_on_question(pts, qv, emb, probes, names=["Grace Hopper"])] == [[1], [3]]
    assert points_on_question(pts, qv, emb, None) == pts  # the probes off: nothing dropped
