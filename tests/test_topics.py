"""Topic labels (slmgraph.indexing.stages.topics.label_terms): concept phrases first, names only as a complement, no junk."""

from slmgraph.indexing.stages.topics import glued, label_terms


def test_glued_words_are_never_a_label_term():
    assert glued("thatI'd") and glued("costsThe", is_concept=True) and glued("andThe")
    assert not glued("DeepMind") and not glued("iPhone") and not glued("flood defence", is_concept=True)
    assert label_terms([("thatI'd", False), ("flood defence", True), ("budget shortfall", True)]) == \
        ["flood defence", "budget shortfall"]


def test_labels_are_concept_phrases_with_names_only_as_a_complement():
    ranked = [("Bill Gates", False), ("code", True), ("Edisonian", False), ("intersection", True),
              ("software engineering", True), ("open source project", True)]
    # the phrases of several words lead; the lone one-word name never appears beside concepts
    assert label_terms(ranked) == ["software engineering", "open source project", "code"]
    # fewer than two concepts: a name of several words complements the one concept
    assert label_terms([("Edisonian", False), ("Bill Gates", False), ("code", True)]) == ["code", "Bill Gates"]


def test_a_label_skips_terms_a_chosen_term_holds():
    assert label_terms([("council tax", True), ("council", True), ("tax rise", True), ("library", True)]) == \
        ["council tax", "tax rise", "library"]


def _index(mentions: dict[str, list[str]], communities: dict[int, list[str]]):
    """An in-memory index of concept ``mentions`` (name -> text units, unit "dN-k" in document "dN")."""
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE entities (entity_id INT, name VARCHAR)")
    con.execute("CREATE TABLE concepts (entity_id INT)")
    con.execute("CREATE TABLE text_units (chunk_id VARCHAR, doc_id VARCHAR)")
    con.execute("CREATE TABLE documents (doc_id VARCHAR, path VARCHAR, added_at TIMESTAMP)")
    con.execute("CREATE TABLE entity_text_units (entity_id INT, chunk_id VARCHAR)")
    con.execute("CREATE TABLE communities (community_id INT, level INT)")
    con.execute("CREATE TABLE community_members (community_id INT, entity_id INT)")
    units = sorted({u for us in mentions.values() for u in us})
    for d in sorted({u.split("-")[0] for u in units}):
        con.execute("INSERT INTO documents VALUES (?, ?, NULL)", [d, f"{d}.txt"])
    for u in units:
        con.execute("INSERT INTO text_units VALUES (?, ?)", [u, u.split("-")[0]])
    ids = {}
    for i, (name, us) in enumerate(mentions.items()):
        ids[name] = i
        con.execute("INSERT INTO entities VALUES (?, ?)", [i, name])
        con.execute("INSERT INTO concepts VALUES (?)", [i])
        for u in us:
            con.execute("INSERT INTO entity_text_units VALUES (?, ?)", [i, u])
    for cid, names in communities.items():
        con.execute("INSERT INTO communities VALUES (?, 0)", [cid])
        for n in names:
            con.execute("INSERT INTO community_members VALUES (?, ?)", [cid, ids[n]])
    return con


def test_a_topic_is_made_of_the_terms_that_recur_across_the_communitys_units_and_documents():
    from slmgraph.indexing.stages.topics import community_topics

    # "mission" is also said in the 30 units of another community, so its class-based TF-IDF is low
    other = [f"d{i}-0" for i in range(5, 35)]
    con = _index({"mission": ["d1-0", "d2-0", "d3-0", "d4-0"] + other, "secrets": ["d1-0", "d3-0", "d4-1"],
                  "gaze": ["d2-1"], "enormity": ["d4-1"], "briefing": other, "radio": other},
                 {0: ["mission", "secrets", "gaze", "enormity"], 1: ["briefing", "radio"]})
    terms = community_topics(con)[0].terms
    # the terms mentioned once ("gaze", "enormity") are distinctive but passing: the recurring ones lead
    assert sorted(terms[:2]) == ["mission", "secrets"]
