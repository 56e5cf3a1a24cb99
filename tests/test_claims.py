"""Claims (covariates) with the scripted fake model: off by default, grounded
and validated when on, resumable, removed with their text units or when
turned off, and in community report and local search contexts."""

import json

import pytest
from conftest import (FakeEmbedder, FakeModel, claims_prompt, default_script, ent_rows, numbered_sentences, rel_rows,
                      stage_of)

from slmgraph.indexing.stages.claims import (
    claims_key, claims_schema, claims_token_cap, clear_claims, load_claims, quote_in_text, validate_claims,
)
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.text.prose import fold
from slmgraph.model.client import ModelClient
from slmgraph.indexing.pipeline import run_index
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.report_context import CLAIMS_HEADER, element_context
from slmgraph.query.engines.local_search import build_local_context
from slmgraph.tools.stats import collect, render
from slmgraph.store.db import Store


def _index(corpus, db, model=None, **kw):
    model = model or FakeModel()
    s = Settings(**{"extract_mode": "json", "min_community_size": 2, "reports": "model", **kw})
    notes = []
    out = run_index(corpus, db, s, progress=False, model=model, embedder_factory=FakeEmbedder, say=notes.append)
    return model, out, notes


def _calls(model, stage):
    return [c for c in model.calls if stage_of(c[2], c[0]) == stage]


def _rows(db, sql, params=()):
    store = Store(db, read_only=True)
    try:
        return store.con.execute(sql, list(params)).fetchall()
    finally:
        store.close()


def test_claims_are_off_by_default_no_call_no_rows(tmp_path, corpus):
    db = tmp_path / "a.duckdb"
    model, out, notes = _index(corpus, db)
    assert _calls(model, "extract"), "the run did call the model"
    assert _calls(model, "claims") == []
    assert "claims" not in out and not any(n.startswith("claims") for n in notes)
    assert _rows(db, "SELECT count(*) FROM claims")[0][0] == 0
    assert _rows(db, "SELECT count(*) FROM claim_extractions")[0][0] == 0
    assert _rows(db, "SELECT count(*) FROM llm_calls WHERE stage = 'claims'")[0][0] == 0
    for c in _calls(model, "report"):
        assert "-----Claims-----" not in c[1]


def test_claims_on_stores_grounded_claims_with_subject_object_and_text_unit(tmp_path, corpus):
    db = tmp_path / "a.duckdb"
    model, out, notes = _index(corpus, db, claims=True)
    n_units = _rows(db, "SELECT count(*) FROM text_units")[0][0]
    calls = _calls(model, "claims")
    assert len(calls) == n_units == out["claims"]["extracted"]
    assert _rows(db, "SELECT count(*) FROM llm_calls WHERE stage = 'claims'")[0][0] == n_units
    # the call offers the unit's extracted entities as enums; object adds NONE
    names, text = claims_prompt(calls[0][1])
    item = calls[0][2]["properties"]["claims"]["items"]["properties"]
    assert item["subject"]["enum"] == names and item["object"]["enum"] == names + ["NONE"]
    # the quote is chosen, not written: a sentence number, no source_quote field
    assert item["sentence"]["enum"][0] == 1 and "source_quote" not in item and "description" not in item
    assert calls[0][2]["properties"]["claims"]["maxItems"] == Settings().max_claims
    rows = _rows(db, """SELECT c.subject_norm, c.object_norm, c.chunk_id, c.source_quote, t.text FROM claims c
                        JOIN text_units t USING (chunk_id) ORDER BY c.claim_id""")
    assert rows and len(rows) == out["claims"]["claims"] == out["claims"]["total"]
    mentions = set(_rows(db, "SELECT chunk_id, norm FROM entity_mentions"))
    for subj, obj, chunk, quote, unit in rows:
        assert (chunk, subj) in mentions and (chunk, obj) in mentions and subj != obj
        assert fold(quote) in fold(unit)
    assert ("alice smith", "acme") in {(r[0], r[1]) for r in rows if "Alice Smith founded" in r[3]}
    founded = [r for r in rows if r[3] == "Alice Smith founded Acme Corporation in Paris."]
    assert len(founded) == 1 and "Alice Smith founded" in founded[0][4]
    assert any(n.startswith(f"claims: {n_units} text units read") for n in notes)


def _scripted(system, user, schema):
    """Claims for the Acme unit: one good, one whose sentence does not name its subject, one self-claim,
    one copied date and unknown status, one sentence out of range."""
    if stage_of(schema, system) != "claims":
        return default_script(system, user, schema)
    names, text = claims_prompt(user)
    if "Alice Smith founded" not in text:
        return json.dumps({"claims": []})
    sents = numbered_sentences(user)
    founded = next(i for i, x in enumerate(sents, 1) if "Alice Smith founded" in x)
    joined = next(i for i, x in enumerate(sents, 1) if "Bob Jones joined" in x)
    base = {"type": "founding", "status": "TRUE", "start_date": "NONE", "end_date": "NONE"}
    return json.dumps({"claims": [
        dict(base, sentence=founded, subject="Alice Smith", object="Acme Corporation"),
        dict(base, sentence=founded, subject="Bob Jones", object="NONE"),
        dict(base, sentence=joined, subject="Bob Jones", object="Bob Jones"),
        dict(base, sentence=joined, subject="Bob Jones", object="Acme Corporation", start_date="2021-03",
             status="maybe"),
        dict(base, sentence=len(sents) + 1, subject="Bob Jones", object="NONE"),
    ]})


def test_a_sentence_not_naming_the_subject_is_dropped_and_a_self_claim_loses_its_object(tmp_path, corpus):
    db = tmp_path / "a.duckdb"
    model, out, _ = _index(corpus, db, model=FakeModel(_scripted), claims=True)
    r = out["claims"]
    assert (r["claims"], r["dropped"], r["ungrounded"], r["self"], r["invalid"]) == (3, 2, 1, 1, 1)
    acme = _rows(db, "SELECT chunk_id FROM text_units WHERE text LIKE '%Alice Smith founded%'")[0][0]
    marker = _rows(db, "SELECT status, n_claims, n_dropped, n_ungrounded FROM claim_extractions WHERE chunk_id = ?",
                   [acme])
    assert marker == [("ok", 3, 2, 1)]
    rows = _rows(db, "SELECT subject_norm, object_norm, type, status, start_date, description, source_quote, chunk_id "
                     "FROM claims ORDER BY claim_id")
    founded = "Alice Smith founded Acme Corporation in Paris."
    assert rows[0] == ("alice smith", "acme", "FOUNDING", "TRUE", None, founded, founded, acme)
    # a self-claim is kept without its object; the example's date (year not in the text) is dropped and
    # an unknown status becomes SUSPECTED; the quote and description are the sentence, verbatim
    joined = "Bob Jones joined Acme Corporation later."
    assert rows[1] == ("bob jones", None, "FOUNDING", "TRUE", None, joined, joined, acme)
    assert rows[2] == ("bob jones", "acme", "FOUNDING", "SUSPECTED", None, joined, joined, acme)
    other = _rows(db, "SELECT status, n_claims FROM claim_extractions WHERE chunk_id <> ?", [acme])
    assert other and all(o == ("ok", 0) for o in other)
    figs = collect(Store(db, read_only=True))
    assert figs["tables"]["claims"] == 3
    assert "claims status" in render(figs, "a")


def test_conflicting_claims_in_two_documents_are_both_kept_with_their_sources(tmp_path):
    """Issue 13 item 9: a bribe reported in one document and denied in another: both claims are stored."""
    root = tmp_path / "news"
    root.mkdir()
    (root / "report.txt").write_text("Mayor Karl Lind accepted a bribe from Halvorsen Construction in 2023. "
                                     "The payment was made in cash.")
    (root / "denial.txt").write_text("The city of Bergen denies that Mayor Karl Lind accepted money from "
                                     "Halvorsen Construction. Officials called the report false.")

    def script(system, user, schema):
        if stage_of(schema, system) != "claims":
            return default_script(system, user, schema)
        sents = numbered_sentences(user)
        i = next((k for k, x in enumerate(sents, 1) if "Karl Lind" in x and "Halvorsen Construction" in x), None)
        if i is None:
            return json.dumps({"claims": []})
        status = "FALSE" if "denies" in sents[i - 1] else "TRUE"
        names, _ = claims_prompt(user)
        mayor = next(n for n in names if "Lind" in n)
        firm = next(n for n in names if "Halvorsen" in n)
        return json.dumps({"claims": [{"sentence": i, "subject": mayor, "object": firm,
                                       "type": "BRIBERY", "status": status, "start_date": "2023",
                                       "end_date": "NONE"}]})

    db = tmp_path / "a.duckdb"
    _, out, _ = _index(root, db, model=FakeModel(script), claims=True)
    assert out["claims"]["dropped"] == 0
    rows = _rows(db, "SELECT c.status, c.source_quote, d.path FROM claims c JOIN text_units t USING (chunk_id) "
                     "JOIN documents d USING (doc_id) ORDER BY d.path")
    assert [(st, path) for st, _, path in rows] == [("FALSE", "denial.txt"), ("TRUE", "report.txt")]
    assert rows[0][1].startswith("The city of Bergen denies") and rows[1][1].startswith("Mayor Karl Lind accepted")


def test_rerun_makes_no_claims_call_and_a_deadline_is_redone(tmp_path, corpus):
    db = tmp_path / "a.duckdb"
    model, first, _ = _index(corpus, db, claims=True)
    before = _rows(db, "SELECT * FROM claims ORDER BY claim_id")
    model.calls.clear()
    _, out, _ = _index(corpus, db, model=model, claims=True)
    assert model.calls == []
    assert out["claims"]["extracted"] == 0 and out["claims"]["reused"] == first["claims"]["extracted"]
    assert _rows(db, "SELECT * FROM claims ORDER BY claim_id") == before
    # a new claim prompt (another max_claims) redoes every unit
    _, out, _ = _index(corpus, db, model=model, claims=True, max_claims=2)
    assert out["claims"]["extracted"] == first["claims"]["extracted"] and len(_calls(model, "claims")) > 0
    # an output cut by the wall-clock deadline is kept but marked for redoing
    slow = FakeModel()
    slow.finish = "deadline"
    db2 = tmp_path / "b.duckdb"
    _index(corpus, db2, model=slow, claims=True)
    assert _rows(db2, "SELECT count(*) FROM claim_extractions WHERE cache_key IS NULL")[0][0] > 0
    slow.calls.clear()
    _index(corpus, db2, model=slow, claims=True)
    assert _calls(slow, "claims")


def test_removed_document_loses_its_claims_and_turning_claims_off_removes_them(tmp_path, corpus):
    db = tmp_path / "a.duckdb"
    model, _, _ = _index(corpus, db, claims=True)
    assert _rows(db, "SELECT count(*) FROM claims c JOIN text_units t USING (chunk_id) "
                     "WHERE t.text LIKE '%Eve Black%'")[0][0]
    (corpus / "gamma.txt").unlink()
    _index(corpus, db, model=model, claims=True)
    assert _rows(db, "SELECT count(*) FROM claims WHERE chunk_id NOT IN (SELECT chunk_id FROM text_units)")[0][0] == 0
    assert _rows(db, "SELECT count(*) FROM claim_extractions WHERE chunk_id NOT IN "
                     "(SELECT chunk_id FROM text_units)")[0][0] == 0
    assert _rows(db, "SELECT count(*) FROM claims WHERE subject_norm = 'eve black'")[0][0] == 0
    assert _rows(db, "SELECT count(*) FROM claims")[0][0] > 0
    model.calls.clear()
    _, out, notes = _index(corpus, db, model=model)
    assert _calls(model, "claims") == [] and any("claims of an earlier run removed" in n for n in notes)
    assert _rows(db, "SELECT count(*) FROM claims")[0][0] == 0
    assert _rows(db, "SELECT count(*) FROM claim_extractions")[0][0] == 0
    store = Store(db, read_only=True)
    assert "claims" not in collect(store)["tables"]
    store.close()
    # back on: the model outputs are still in the index's cache
    model.calls.clear()
    _, out, _ = _index(corpus, db, model=model, claims=True)
    assert _calls(model, "claims") == [] and out["claims"]["claims"] > 0


def test_report_context_has_claims_section_only_when_on(tmp_path, corpus):
    on, off = tmp_path / "on.duckdb", tmp_path / "off.duckdb"
    m_on, _, _ = _index(corpus, on, claims=True)
    m_off, _, _ = _index(corpus, off)
    with_claims = [c[1] for c in _calls(m_on, "report") if "-----Claims-----" in c[1]]
    assert with_claims, "some report context has claims"
    section = with_claims[0].split("-----Claims-----\n", 1)[1]
    assert section.startswith("subject,object,type,status,dates,description\n")
    assert ",FACT,TRUE," in section.splitlines()[1]
    assert all("-----Claims-----" not in c[1] for c in _calls(m_off, "report"))
    # claims come after entities and relationships
    ctx = with_claims[0]
    assert ctx.index("-----Entities-----") < ctx.index("-----Relationships-----") < ctx.index("-----Claims-----")


def _claim(subject, sid, obj=None, oid=None, desc="Something happened there.", ctype="EVENT"):
    return {"claim_id": sid * 10, "chunk_id": "c", "subject_id": sid, "subject": subject, "object_id": oid,
            "object": obj, "type": ctype, "status": "TRUE", "start_date": "1999", "end_date": None,
            "description": desc, "source_quote": desc}


def test_report_claims_fit_the_budget_rank_by_degree_and_do_not_make_the_context_incomplete():
    client = ModelClient(FakeModel(), None, "r")
    ents = ent_rows([(1, "Ann", "person", "A person.", 3), (2, "Bo", "person", "Another person.", 1)])
    rels = rel_rows([(10, 1, 2, "Ann knows Bo.", 1.0, 4)])
    claims = [_claim("Bo", 2, desc="Bo left."), _claim("Ann", 1, "Bo", 2, desc="Ann hired Bo."),
              _claim("Ann", 1, "Bo", 2, desc="Ann hired Bo.")]
    base, n_base, complete = element_context(client, ents, rels, 10_000)
    text, n, complete_c = element_context(client, ents, rels, 10_000, claims)
    assert complete and complete_c and text.startswith(base) and n > n_base
    rows = text.split(CLAIMS_HEADER + "\n", 1)[1].splitlines()
    assert rows == ["Ann,Bo,EVENT,TRUE,1999,Ann hired Bo.", "Bo,,EVENT,TRUE,1999,Bo left."]  # deduplicated, ranked
    tight, n_tight, complete_t = element_context(client, ents, rels, n_base + 3, claims)
    assert n_tight <= n_base + 3 and complete_t and "-----Claims-----" not in tight
    assert element_context(client, ents, rels, 10_000, [])[0] == base


def test_load_claims_follows_entity_resolution_through_merge_log(tmp_path):
    store = Store(tmp_path / "m.duckdb", create=True)
    store.con.execute("INSERT INTO entities VALUES (1, 'microsoft', 'Microsoft', 'organization', '', 2, 1), "
                      "(2, 'bill gates', 'Bill Gates', 'person', '', 1, 1)")
    store.con.execute("INSERT INTO merge_log VALUES ('microsoft corp', 'microsoft', 'name-subset', NULL, '')")
    store.con.execute("INSERT INTO claims VALUES (1, 'c1', 'microsoft corp', 'bill gates', 'X', 'TRUE', NULL, NULL, "
                      "'d', 'q'), (2, 'c1', 'nobody', NULL, 'X', 'TRUE', NULL, NULL, 'd', 'q'), "
                      "(3, 'c1', 'bill gates', 'microsoft corp', 'Y', 'TRUE', NULL, NULL, 'd', 'q')")
    got = [(c["claim_id"], c["subject_id"], c["subject"], c["object_id"]) for c in load_claims(store)]
    assert got == [(1, 1, "Microsoft", 2), (3, 2, "Bill Gates", 1)]
    assert clear_claims(store) == 3 and store.count("claims") == 0
    store.close()


def test_local_search_context_includes_the_selected_entities_claims(tmp_path, corpus):
    db = tmp_path / "a.duckdb"
    _index(corpus, db, claims=True)
    store = Store(db, read_only=True)
    client = ModelClient(FakeModel(), None, "q")
    text, used, _ = build_local_context(store, client, ["alice smith"], 3000)
    assert "-----Claims-----" in text and used["claims"]
    assert "Alice Smith,Acme Corporation,FACT,TRUE,,Alice Smith founded Acme Corporation in Paris." in text
    text, used, _ = build_local_context(store, client, ["paris"], 3000)
    assert "-----Claims-----" not in text and used["claims"] == []
    store.close()


def test_validation_rules_and_schema_limits():
    s = Settings()
    names = {"Alice Smith": "alice smith", "Acme Corporation": "acme"}
    text = "In 1999 Alice Smith founded \u201cAcme Corporation\u201d in Paris. It grew fast."
    assert quote_in_text('Alice  SMITH founded "Acme Corporation"', fold(text))
    assert not quote_in_text("Alice Smith", fold(text))  # too short to be evidence
    out = validate_claims({"claims": [
        {"sentence": 1, "subject": "alice smith", "object": "NONE", "type": "x", "status": "FALSE",
         "start_date": "1999", "end_date": "June"},
        {"sentence": 1, "subject": "Alice Smith", "object": "none", "type": "x", "status": "FALSE",
         "start_date": "1999", "end_date": "NONE"},                  # the same claim again
        {"sentence": 1, "subject": "Zed", "object": "NONE"},         # not an entity of the unit
        {"sentence": 7, "subject": "Alice Smith", "object": "NONE"},  # no such sentence
        {"sentence": 2, "subject": "Alice Smith", "object": "NONE"},  # the sentence does not name her
        "junk",
    ]}, names, text, s)
    assert [(c["subject_norm"], c["object_norm"], c["status"], c["start_date"], c["end_date"], c["source_quote"])
            for c in out.claims] == [("alice smith", None, "FALSE", "1999", None,
                                      "In 1999 Alice Smith founded \u201cAcme Corporation\u201d in Paris.")]
    assert (out.n_invalid, out.n_ungrounded, out.n_dropped) == (4, 1, 5)
    schema = claims_schema(["A", "B"], 3, s)
    item = schema["properties"]["claims"]["items"]["properties"]
    assert item["sentence"]["enum"] == [1, 2, 3] and list(item)[0] == "sentence" and "description" not in item
    with_desc = claims_schema(["A", "B"], 3, s, with_description=True)["properties"]["claims"]["items"]
    assert with_desc["properties"]["description"]["maxLength"] == s.description_max_chars
    assert claims_token_cap([2, 3], s) <= s.extract_max_tokens
    assert claims_token_cap([2, 3], Settings(max_claims=1)) < claims_token_cap([2, 3], s)
    assert claims_token_cap([2, 3], s) < claims_token_cap([2, 3], s, with_description=True)
    k = claims_key("t", "m", "p", names, s)
    assert k != claims_key("t", "m", "p", {"Alice Smith": "alice smith"}, s)
    assert k != claims_key("t", "m", "p", names, Settings(max_claims=2))
    assert "max_claims" in s.index_fingerprint()


def test_a_user_claims_prompt_without_text_is_refused(tmp_path, corpus):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "claims_user.txt").write_text("Entity names: $entities\nOutput:\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"\$text"):
        Prompts(tmp_path / "p").fill("claims_user", entities="A", text="t")


def test_stats_says_when_claims_come_from_a_model_under_1b_parameters(tmp_path, corpus):
    db = tmp_path / "a.duckdb"
    _index(corpus, db, claims=True)  # the fake model has 1M parameters
    st = Store(db, read_only=True)
    figs = collect(st)
    st.close()
    assert figs["claims_note"] and "under 1B parameters" in render(figs, "a")
    big = FakeModel()
    big.n_params = 2 * 10**9
    db2 = tmp_path / "b.duckdb"
    _index(corpus, db2, model=big, claims=True)
    st = Store(db2, read_only=True)
    assert collect(st)["claims_note"] is None
    st.close()
