"""The index's schema: every table's DDL in its current shape, and the names other modules use for its parts.

One DuckDB file holds the whole index: documents, text units, extraction records,
entities, relationships and their provenance, optional claims (covariates),
communities, community reports, embeddings, the LLM-output cache, the ledger of
every model call, and the migration steps applied to the file. A file written by
an older version is brought to this shape by :mod:`slmgraph.store.migrations`.
"""

from __future__ import annotations

import re

APP_ID = "slmgraph"
#: Meta ``schema_version`` of a current index: the highest ``version`` of :data:`slmgraph.store.migrations.MIGRATIONS`.
#: "2": ``text_units.unit_no``, the index-wide citation number, stored at ingestion (an index of version "1" is
#: migrated when opened for writing; opened read-only, :func:`slmgraph.query.answer.unit_numbers` numbers it as
#: version 1 did). An index of a higher version is refused.
SCHEMA_VERSION = "2"

DDL = """
CREATE TABLE IF NOT EXISTS meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id VARCHAR PRIMARY KEY,     -- sha256 of the file's bytes, first 16 hex
    path VARCHAR,                   -- path relative to the indexed folder
    n_chars INTEGER,
    n_tokens INTEGER,
    added_at TIMESTAMP,
    title VARCHAR,                  -- a leading file-name line, else the file's stem
    chunking VARCHAR                -- what its text units were cut with
                                    -- (slmgraph.indexing.stages.ingest.chunking_key)
);
CREATE TABLE IF NOT EXISTS text_units (
    chunk_id VARCHAR PRIMARY KEY,   -- sha256(doc_id, token span, text), first 16 hex
    doc_id VARCHAR,
    ord INTEGER,                    -- position of the chunk in its document
    tok_start INTEGER,
    tok_end INTEGER,
    n_tokens INTEGER,
    text VARCHAR,
    char_start INTEGER,             -- text = document text[char_start:char_end]
    char_end INTEGER,
    unit_no INTEGER,                -- index-wide citation number 1.., given once at ingestion,
                                    -- never reused (meta next_unit_no)
    no_prose BOOLEAN                -- holds no sentence to quote (slmgraph.text.shape.no_prose_passage),
                                    -- so no search ranks it; NULL: not judged yet (written by an older slmgraph)
);
CREATE TABLE IF NOT EXISTS extractions (
    chunk_id VARCHAR PRIMARY KEY,
    cache_key VARCHAR,              -- sha256(text, model, prompt, settings)
    status VARCHAR,                 -- ok | repaired | failed
    n_candidates INTEGER,
    n_entities INTEGER,
    n_relationships INTEGER,
    n_dropped INTEGER,              -- records dropped by validation (dupes, self-loops, ungrounded)
    raw VARCHAR,                    -- the model's output as generated
    n_ungrounded INTEGER,           -- entities dropped by grounding
    gleanings INTEGER,              -- gleaning rounds that added records
    evaluated_tokens INTEGER,       -- prompt tokens the model evaluated
    completion_tokens INTEGER,      -- tokens the model generated
    n_left_out INTEGER,             -- candidates past --max-candidates, not offered
    n_choices INTEGER,              -- model choices by token probability
    n_rejected INTEGER              -- candidates/pairs the model's choices dropped
);
CREATE TABLE IF NOT EXISTS merge_log (
    norm VARCHAR,                   -- merged-away normalised name
    into_norm VARCHAR,              -- the entity it was merged into
    rule VARCHAR,                   -- e.g. name-subset | acronym | embedding
    score DOUBLE,                   -- similarity for the embedding rule, else NULL
    detail VARCHAR                  -- human-readable reason
);
CREATE TABLE IF NOT EXISTS claims (
    claim_id INTEGER,
    chunk_id VARCHAR,               -- the text unit whose source_quote it is
    subject_norm VARCHAR,           -- mention key (= entity_mentions.norm); see claims.load_claims
    object_norm VARCHAR,            -- NULL when the claim has no object entity
    type VARCHAR,
    status VARCHAR,                 -- TRUE | FALSE | SUSPECTED
    start_date VARCHAR,
    end_date VARCHAR,
    description VARCHAR,
    source_quote VARCHAR
);
CREATE TABLE IF NOT EXISTS claim_extractions (
    chunk_id VARCHAR PRIMARY KEY,   -- one marker per text unit once claims ran on it
    cache_key VARCHAR,              -- sha256(text, model, prompts, claim settings, entity names); NULL = redo
    status VARCHAR,                 -- ok | repaired | truncated | failed | no_entities
    n_claims INTEGER,
    n_dropped INTEGER,              -- claims dropped by validation (ungrounded quote, self-claim, duplicate)
    n_ungrounded INTEGER,           -- of which: source quote not in the text unit
    raw VARCHAR                     -- the model's output as generated
);
CREATE TABLE IF NOT EXISTS entity_mentions (
    chunk_id VARCHAR,
    name VARCHAR,
    norm VARCHAR,                   -- normalised name: the merge key
    type VARCHAR,
    description VARCHAR
);
CREATE TABLE IF NOT EXISTS relationship_mentions (
    chunk_id VARCHAR,
    source_norm VARCHAR,
    target_norm VARCHAR,
    description VARCHAR,
    strength INTEGER                -- 1..10
);
CREATE TABLE IF NOT EXISTS concept_mentions (
    chunk_id VARCHAR,
    norm VARCHAR,                   -- lower-case noun phrase, head lemmatised: the concept's key (slmgraph.indexing.stages.concepts)
    name VARCHAR,                   -- the phrase as written in the text unit (lower case)
    description VARCHAR             -- the first sentence of the text unit that holds it
);
CREATE TABLE IF NOT EXISTS concept_links (
    chunk_id VARCHAR,
    concept_norm VARCHAR,           -- concept_mentions.norm
    other_norm VARCHAR,             -- another concept's key, or a name's mention key (entity_mentions.norm)
    other_kind VARCHAR,             -- concept | name
    description VARCHAR,            -- the first sentence of the text unit naming both
    sentences INTEGER               -- sentences of the text unit naming both
);
CREATE TABLE IF NOT EXISTS entities (
    entity_id INTEGER PRIMARY KEY,
    norm VARCHAR UNIQUE,
    name VARCHAR,
    type VARCHAR,
    description VARCHAR,
    n_mentions INTEGER,
    degree INTEGER
);
CREATE TABLE IF NOT EXISTS entity_text_units (
    entity_id INTEGER,
    chunk_id VARCHAR
);
CREATE TABLE IF NOT EXISTS relationships (
    rel_id INTEGER PRIMARY KEY,
    source_id INTEGER,              -- source_id < target_id: the graph is undirected
    target_id INTEGER,
    description VARCHAR,
    weight DOUBLE,                  -- number of instances across text units
    strength DOUBLE,                -- mean model-assigned strength, 1..10
    combined_degree INTEGER         -- deg(source) + deg(target), the paper's edge rank
);
CREATE TABLE IF NOT EXISTS relationship_text_units (
    rel_id INTEGER,
    chunk_id VARCHAR
);
CREATE TABLE IF NOT EXISTS concepts (
    entity_id INTEGER PRIMARY KEY,  -- an entities row (type concept) that is a noun phrase, not a name
    n_units INTEGER                 -- text units holding it
);
CREATE TABLE IF NOT EXISTS corpus_terms (
    kind VARCHAR,                   -- word | stem | suffix | total (slmgraph.store.corpus_stats)
    term VARCHAR,                   -- word key, word stem, noun-phrase suffix; for total: units | mentions
    units INTEGER,                  -- text units holding it (word, suffix), documents (stem)
    occurrences BIGINT              -- occurrences of a word; for total: the rows counted
);
CREATE TABLE IF NOT EXISTS communities (
    community_id INTEGER PRIMARY KEY,
    level INTEGER,                  -- 0 = root level (coarsest Leiden partition)
    parent_id INTEGER,              -- NULL at level 0
    size INTEGER,                   -- number of member entities
    carried_from INTEGER            -- set when an unsplittable community is carried down
);
CREATE TABLE IF NOT EXISTS community_members (
    community_id INTEGER,
    entity_id INTEGER
);
CREATE TABLE IF NOT EXISTS community_reports (
    community_id INTEGER PRIMARY KEY,
    level INTEGER,
    title VARCHAR,
    summary VARCHAR,
    findings VARCHAR,               -- JSON list of {summary, explanation}
    rating DOUBLE,                  -- impact 0..10
    rating_explanation VARCHAR,
    full_text VARCHAR,              -- the report as packed into query contexts
    n_tokens INTEGER,               -- tokens of full_text in the index model's tokenizer
    context_tokens INTEGER,         -- tokens of the context the report was written from
    context_kind VARCHAR,           -- elements | sub-reports | carried
    topic VARCHAR,                  -- distinctive terms of the community, e.g. "budget shortfall, library, council tax"
    doc_ids VARCHAR                 -- JSON list of the documents behind the community, in corpus order
);
CREATE TABLE IF NOT EXISTS embeddings (
    kind VARCHAR,                   -- entity | text_unit | report
    item_id VARCHAR,
    model VARCHAR,                  -- embedder name : sha256 of the full embedded text (16 hex)
    vector FLOAT[],
    window_key VARCHAR,             -- embedder name : sha256 of the word-piece ids the embedder reads (its
                                    -- max_seq_length window): the content key by which a vector is reused
                                    -- (slmgraph.indexing.stages.embed.run_embeddings); NULL in older indexes
    PRIMARY KEY (kind, item_id)
);
CREATE TABLE IF NOT EXISTS llm_cache (
    key VARCHAR PRIMARY KEY,        -- sha256(model fingerprint, prompt tokens, grammar, limits)
    stage VARCHAR,
    output VARCHAR,
    finish_reason VARCHAR,
    tokens VARCHAR                  -- generated token ids (JSON), for follow-ups
);
CREATE SEQUENCE IF NOT EXISTS llm_call_seq;
CREATE TABLE IF NOT EXISTS llm_calls (
    call_id BIGINT DEFAULT nextval('llm_call_seq'),
    run_id VARCHAR,
    stage VARCHAR,                  -- extract | claims | report | map | reduce | local | basic ...
    worker INTEGER,
    model VARCHAR,
    prompt_tokens INTEGER,          -- all prompt tokens of the call
    cached_tokens INTEGER,          -- of which reused from the KV cache (not evaluated)
    completion_tokens INTEGER,
    seconds DOUBLE,                 -- wall-clock of the call
    finish_reason VARCHAR,          -- stop | length | deadline | repetition
    created_at TIMESTAMP DEFAULT current_timestamp,
    prompt_seconds DOUBLE,          -- of seconds, prompt evaluation
    key VARCHAR,                    -- the call's cache key (llm_cache.key), also for uncached calls
    output VARCHAR                  -- generated text, or JSON {"options", "logprobs"} of a choice
);
CREATE TABLE IF NOT EXISTS stage_runs (
    run_id VARCHAR,
    stage VARCHAR,                  -- ingest | extract | claims | graph | communities | reports | embed | query
    seconds DOUBLE,
    items INTEGER,
    note VARCHAR,
    created_at TIMESTAMP DEFAULT current_timestamp
);
CREATE TABLE IF NOT EXISTS migrations (
    name VARCHAR PRIMARY KEY,       -- a step of slmgraph.store.migrations.MIGRATIONS applied to this file
    applied_at TIMESTAMP
);
"""

#: The tables :data:`DDL` creates: a file holding only these, all empty, is an interrupted creation.
OWN_TABLES = frozenset(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", DDL))

#: Tables cleared and rebuilt by each derived stage, in pipeline order.
DERIVED_TABLES = {
    "graph": ("entities", "entity_text_units", "relationships", "relationship_text_units", "merge_log", "concepts"),
    "communities": ("communities", "community_members"),
    "reports": ("community_reports", "corpus_terms"),
}

#: The tables holding a text unit's extraction records (rows keyed by ``chunk_id``).
UNIT_RECORDS = ("extractions", "entity_mentions", "relationship_mentions", "claims", "claim_extractions",
                "concept_mentions", "concept_links")

#: The schema an index run builds the derived tables and the embeddings in (:meth:`slmgraph.store.db.Store.stage_derived`);
#: queries read ``main``, the last complete build's tables, until the run swaps them in.
BUILDING = "building"


def table_ddl(table: str, schema: str) -> str:
    """The ``CREATE TABLE`` statement of :data:`DDL` for ``table``, creating it in ``schema``."""
    m = re.search(rf"CREATE TABLE IF NOT EXISTS {table} \(.*?\n\);", DDL, re.S)
    if m is None:
        raise KeyError(table)
    return m.group(0).replace(f"EXISTS {table} (", f"EXISTS {schema}.{table} (", 1)
