"""A corpus-wide answer's themes: a topic that runs through every document is one of them (document-frequency
weights give it none), a title word is not, and each theme's "in N of M documents" counts the documents its
label is in, the themes in the order of that figure."""

from __future__ import annotations

from conftest import FakeEmbedder, theme_index

from slmgraph.query.documents import reach
from slmgraph.query.theme_labels import label_documents, running_words
from slmgraph.query.themes import build_themes

HEAD = "# Committee meeting, {} 2020\n\nPresent: Ann Lee, Bo Chan, Cy Dunn.\n\n"
MONTHS = ["January", "March", "May", "July", "September", "November"]
BODIES = [
    "The water bill rose again after the long dry summer. Volunteers rebuilt the compost bays with mesh floors. "
    "Rats were seen near the compost bays by the north gate.",
    "The old water main under the eastern plots burst in the frost. The compost bays were emptied onto the new "
    "beds in spring.",
    "Members asked the council to repair the water meter before the spring sowing. The orchard fence along the "
    "lane was mended by the contractors.",
    "The water main was replaced by the council contractors in October. Volunteers planted twelve orchard trees "
    "along the railway fence.",
    "Treasurer Bo Chan paid the water bill from the reserve fund this year. The orchard trees gave their first "
    "crop of apples in autumn.",
    "Standpipes on the new water supply were fitted beside every plot. The orchard trees were pruned by "
    "volunteers in February.",
]
# the noun phrases the concept pass finds in each unit
PHRASES = [
    ["committee meeting", "water bill", "summer", "volunteer", "compost bay", "mesh floor", "rat", "north gate"],
    ["committee meeting", "water main", "eastern plot", "frost", "compost bay", "bed", "spring"],
    ["committee meeting", "member", "council", "water meter", "spring sowing", "orchard fence", "lane", "contractor"],
    ["committee meeting", "water main", "council contractor", "volunteer", "orchard tree", "railway fence"],
    ["committee meeting", "treasurer", "water bill", "reserve fund", "year", "orchard tree", "crop", "apple"],
    ["committee meeting", "standpipe", "water supply", "plot", "orchard tree", "volunteer"],
]


def _minutes(orchard_units=(3, 4, 5), stored=None):
    """Six one-unit minutes: water in each, compost bays in the first two, orchard trees in the last three; the
    community of "orchard trees" is behind the units ``orchard_units`` (0-based), and with ``stored``
    (``community_id -> [doc_id]``) the reports hold their documents as an index does."""
    units = [(f"u{i}", f"d{i}", 0, HEAD.format(MONTHS[i]) + body) for i, body in enumerate(BODIES)]
    emb = FakeEmbedder()
    mentions = [(f"u{i}", p, p) for i, ps in enumerate(PHRASES) for p in ps]
    ix = theme_index(units, embedder=emb, entities=[(1, "compost bays"), (2, "orchard trees")],
                     members=[(0, 1), (1, 2)],
                     entity_units=[(1, "u0"), (1, "u1")] + [(2, f"u{i}") for i in orchard_units],
                     reports=[(0, "compost bays"), (1, "orchard trees")], mentions=mentions)
    ix.store.con.execute("INSERT INTO concepts VALUES (1), (2)")
    if stored:
        ix.store.con.execute("ALTER TABLE community_reports ADD COLUMN doc_ids VARCHAR")
        for cid, docs in stored.items():
            ix.store.con.execute("UPDATE community_reports SET doc_ids = ? WHERE community_id = ?",
                                 [str(docs).replace("'", '"'), cid])
    reports = [{"community_id": 0, "entities": ["compost bays"], "title": "compost bays", "summary": ""},
               {"community_id": 1, "entities": ["orchard trees"], "title": "orchard trees", "summary": ""}]
    return ix, emb, reports


def _wide(ix, emb, reports):
    q = "What are the main themes across these minutes?"
    return build_themes(ix, reports, {}, emb.encode([q])[0], emb, wide=True, question=q)


def test_a_topic_discussed_in_every_document_is_a_theme_and_a_title_word_is_not():
    ix, emb, reports = _minutes()
    words = running_words(ix)
    # water modifies four compounds and every document's sentences name it; "meeting" is in every title only
    assert [w for w, _, _ in words] == ["water"]
    assert set(words[0][1]) == {"water bill", "water main", "water meter", "water supply"} and len(words[0][2]) == 6
    themes = _wide(ix, emb, reports)
    topics = [t.topic for t in themes]
    assert topics[0] == "water" and themes[0].coverage["documents"] == 6
    assert all("water" in s.text.casefold() for s in themes[0].statements) and themes[0].statements
    assert not any("meeting" in t.casefold() or "committee" in t.casefold() for t in topics)
    ix.store.con.close()


def test_a_themes_count_is_the_documents_its_label_is_in():
    # the community of "orchard trees" is behind a document whose text never says orchard trees (d2: "orchard fence")
    ix, emb, reports = _minutes(orchard_units=(2, 3, 4, 5))
    themes = _wide(ix, emb, reports)
    orchard = next(t for t in themes if "orchard" in t.topic)
    assert orchard.coverage["documents"] == len(label_documents(ix, ["orchard trees"])) == 3
    assert {s.doc_id for s in orchard.statements} <= {"d3", "d4", "d5"}
    ix.store.con.close()


def test_themes_are_listed_in_the_order_of_the_figure_shown():
    # a report's stored documents can be fewer than those its theme is quoted from: the figure shown is what
    # orders the themes
    ix, emb, reports = _minutes(stored={0: ["d0", "d1"], 1: ["d2"]})
    themes = _wide(ix, emb, reports)
    shown = [reach(t.coverage) for t in themes]
    assert len(themes) >= 3 and shown == sorted(shown, reverse=True)
    ix.store.con.close()


def test_a_corpus_of_two_documents_has_no_running_topic():
    units = [("u0", "a", 0, "The water bill rose. The water main burst. The water supply failed in May."),
             ("u1", "b", 0, "The water bill fell. The water main held. The water supply came back in June.")]
    ix = theme_index(units, mentions=[("u0", "water bill", "water bill"), ("u0", "water main", "water main"),
                                      ("u1", "water supply", "water supply")])
    assert running_words(ix) == []
    ix.store.con.close()


def test_a_label_is_counted_where_the_prose_holds_it_not_in_titles_or_attendance_lists():
    units = [("u0", "a", 0, "# Plot holders meeting, May 2020\n\nThe hedge was cut back by the contractors."),
             ("u1", "b", 0, "Present: Ann Lee (Chair), Bo Chan, 40 plot holders.\n\nThe gate lock was replaced."),
             ("u2", "c", 0, "# Minutes, June 2020\n\nSeveral plot holders gave up their plots in August.")]
    ix = theme_index(units, mentions=[("u0", "plot holder", "plot holders"), ("u1", "plot holder", "plot holders"),
                                      ("u2", "plot holder", "plot holders")])
    assert label_documents(ix, ["plot holders"]) == ["c"] and label_documents(ix, ["plot holder"]) == ["c"]
    ix.store.con.close()


def test_a_label_is_not_counted_in_a_sentence_every_episode_repeats():
    intro = "We talk with the people who have made our modern tech world possible."
    units = [(f"u{i}", f"ep{i}", 0, f"{intro} Today my guest grows {crop} on the hill farm.")
             for i, crop in enumerate(["barley", "apples", "hops", "pears"])]
    units.append(("u9", "ep9", 0, "My guest left the tech world to grow plums by the river."))
    ix = theme_index(units)
    # the intro is in four episodes: only the guest who speaks of it discusses the tech world
    assert label_documents(ix, ["tech world"]) == ["ep9"]
    assert sorted(label_documents(ix, ["hill farm"])) == ["ep0", "ep1", "ep2", "ep3"]
    ix.store.con.close()


def test_names_tied_to_a_theme_are_those_its_label_sentences_name():
    from slmgraph.query.theme_model import Theme
    from slmgraph.query.themes import names_beside

    ix, _, _ = _minutes()
    t = Theme(0, "water bill", {}, ["d0", "d4"], ["Ann Lee", "Cy Dunn"])
    # Ann Lee and Cy Dunn are only in the attendance lines; Bo Chan pays the water bill in d4
    assert names_beside(t, ix, ["Ann Lee", "Cy Dunn", "Bo Chan"]) == ["Bo Chan"]
    assert names_beside(t, ix, ["Ann Lee", "Cy Dunn"]) == []
    # a document outside the theme's is not read: the orchard sentence of d4 names no one anyway
    assert names_beside(Theme(1, "water bill", {}, ["d0"], []), ix, ["Bo Chan"]) == []


def test_a_name_held_by_one_already_tied_is_not_named_again():
    from slmgraph.query.theme_model import Theme
    from slmgraph.query.themes import names_beside

    ix, _, _ = _minutes()
    t = Theme(0, "water bill", {}, ["d4"], [])
    assert names_beside(t, ix, ["Bo Chan", "Chan"]) == ["Bo Chan"]


SERIES = [
    "MAYA ROSS: Tonight we talk about the Clean Air Zone and the vans on Quay Road.\n"
    "TOM BECKETT: I worry the Clean Air Zone will push small firms like mine out of business.",
    "MAYA ROSS: The cameras on the seafront went up in March.\n"
    "NADIA KARIM: The Clean Air Zone will charge the coach operators who bring the visitors.",
    "MAYA ROSS: The marina drawings were published last week.\n"
    "GRACE MILLER: The clean air zone is the best news the children's lungs have had in years.",
    "MAYA ROSS: The bakery on Fore Street opens at dawn.\n"
    "AMIR HADDAD: Give small traders time on the clean air charge and I will bake for everybody.",
]


def test_a_named_subject_discussed_in_half_the_documents_is_a_running_theme_and_the_series_name_is_not():
    from slmgraph.query.theme_labels import running_names

    units = [(f"u{i}", f"d{i}", 0, f"# The Harbour Hour, Episode {i + 1}\n\n{body}") for i, body in enumerate(SERIES)]
    ix = theme_index(units, entities=[(1, "Clean Air Zone"), (2, "Harbour Hour"), (3, "Maya Ross"), (4, "clean air")],
                     entity_units=[(e, f"u{i}") for e in (1, 2, 3, 4) for i in range(4)])
    con = ix.store.con
    con.execute("ALTER TABLE entities ADD COLUMN type VARCHAR")
    con.execute("UPDATE entities SET type = CASE entity_id WHEN 3 THEN 'person' ELSE 'concept' END")
    got = running_names(ix)
    # named in statements of 3 of the 4 episodes, in any case; the series' name is its headings', the host a
    # person, and a concept in lower case is a word
    assert [(name, docs) for name, _, docs in got] == [("Clean Air Zone", ["d0", "d1", "d2"])]
    con.execute("UPDATE entities SET type = 'organization' WHERE entity_id = 1")
    assert running_names(ix) == []
    con.close()


def test_a_label_few_documents_name_is_no_theme_of_the_whole_corpus(monkeypatch):
    import slmgraph.query.themes as themes

    ix, emb, reports = _minutes()
    assert any("compost" in t.topic for t in _wide(ix, emb, reports))
    # compost bays are named in two of the six minutes: under a floor of 40 %, not a theme of them all
    monkeypatch.setattr(themes, "WIDE_FLOOR_DOCS", 5)
    monkeypatch.setattr(themes, "WIDE_FLOOR_SHARE", 0.4)
    topics = [t.topic for t in _wide(ix, emb, reports)]
    assert not any("compost" in t for t in topics) and any("orchard" in t for t in topics)
    ix.store.con.close()


def test_a_series_themes_quote_its_guests_not_its_host():
    guests = [("RUTH OKAFOR", "plums", "Leeds"), ("SAM DIAZ", "cherries", "Porto"), ("LIN WU", "apples", "Oslo"),
              ("OMAR HALE", "pears", "Quito"), ("PIA KERR", "quinces", "Perth"), ("TOM BYRNE", "figs", "Cork")]
    units = []
    for i, (g, fruit, town) in enumerate(guests):
        # the host's line names the label too, and is nearer it than the guest's
        units.append((f"u{i}", f"ep{i}", 0, f"ANNA PARK: {town} has orchard trees, {g.title()} says.\n"
                                             f"{g}: My first orchard trees in {town} gave {fruit} after {i + 3} "
                                             f"summers of pruning and grafting by hand."))
    emb = FakeEmbedder()
    ix = theme_index(units, embedder=emb, entities=[(2, "orchard trees")], members=[(1, 2)],
                     entity_units=[(2, f"u{i}") for i in range(6)], reports=[(1, "orchard trees")],
                     mentions=[(f"u{i}", "orchard tree", "orchard trees") for i in range(6)])
    ix.store.con.execute("INSERT INTO concepts VALUES (2)")
    reports = [{"community_id": 1, "entities": ["orchard trees"], "title": "orchard trees", "summary": ""}]
    themes = _wide(ix, emb, reports)
    said = [s.speaker for t in themes for s in t.statements]
    # the host frames each episode: the theme is quoted in the guests' words only
    assert said and "Anna Park" not in said, said
    ix.store.con.close()


def test_a_focused_question_about_the_guests_quotes_them_and_not_the_host():
    guests = [("RUTH OKAFOR", "plums"), ("SAM DIAZ", "cherries"), ("LIN WU", "apples"), ("OMAR HALE", "pears"),
              ("PIA KERR", "quinces"), ("TOM BYRNE", "figs")]
    units = []
    for i, (g, fruit) in enumerate(guests):
        # the host speaks in every episode; her line in the first is the one nearest the question
        host = "People talk about pruning orchard trees all winter long." if i == 0 else f"Welcome to show {i + 1}."
        units.append((f"u{i}", f"ep{i}", 0, f"ANNA PARK: {host}\n{g}: My {fruit} needed pruning of the orchard "
                                             f"trees every winter for {i + 3} years."))
    emb = FakeEmbedder()
    ix = theme_index(units, embedder=emb, entities=[(2, "orchard trees")], members=[(1, 2)],
                     entity_units=[(2, f"u{i}") for i in range(6)], reports=[(1, "orchard trees")])
    pool = [{"community_id": 1, "entities": ["orchard trees"], "title": "orchard trees", "summary": ""}]

    def said(question):
        themes = build_themes(ix, pool, {1: 50.0}, emb.encode([question])[0], emb, question=question, pool=pool)
        return [s.speaker for t in themes for s in t.statements]

    guests_said = said("Which guests talk about pruning orchard trees?")
    assert guests_said and "Anna Park" not in guests_said
    # a question not about the guests may quote anyone
    assert "Anna Park" in said("What do people talk about pruning orchard trees?")
    ix.store.con.close()


def test_breadth_puts_the_themes_of_most_works_first_and_among_them_the_most_discussed():
    from slmgraph.query.documents import breadth_key

    ai = {"works": 16, "works_of": 24, "documents": 176, "of": 665}
    software = {"works": 24, "works_of": 24, "documents": 167, "of": 665}
    games = {"works": 11, "works_of": 24, "documents": 300, "of": 665}
    assert sorted([games, software, ai], key=breadth_key, reverse=True) == [ai, software, games]
    # documents that are no parts of works: by how many documents, as before
    wide, narrow = {"documents": 9, "of": 12}, {"documents": 3, "of": 12}
    assert breadth_key(wide) > breadth_key(narrow)


def test_an_acronym_the_corpus_defines_runs_through_it_whatever_type_the_entity_pass_gave_it():
    from slmgraph.query.theme_labels import defined_acronyms, running_names

    bodies = ["MAYA OKAFOR: Tonight, carbon capture and storage (CCS) and the coal plant.\n"
              "LENA VARGA: CCS grabs carbon dioxide before it reaches the air.",
              "MAYA OKAFOR: Welcome back to the show.\nTOMAS REYES: I doubt CCS will ever pay for itself.",
              "MAYA OKAFOR: The farm is wet this spring.\nPRIYA SANDHU: Soil carbon is no CCS, but it helps farms.",
              "MAYA OKAFOR: The bakery opens at dawn.\nAMIR HADDAD: I bake bread and know nothing of storage."]
    units = [(f"u{i}", f"d{i}", 0, body) for i, body in enumerate(bodies)]
    ix = theme_index(units, entities=[(1, "CCS"), (2, "MAYA OKAFOR")],
                     entity_units=[(e, f"u{i}") for e in (1, 2) for i in range(4)])
    con = ix.store.con
    con.execute("ALTER TABLE entities ADD COLUMN type VARCHAR")
    con.execute("UPDATE entities SET type = CASE entity_id WHEN 1 THEN 'location' ELSE 'person' END")
    assert defined_acronyms(ix) == {"CCS": "carbon capture and storage"}
    # statements name it in three of the four episodes; the host's label in capitals is no subject
    assert [(name, docs) for name, _, docs in running_names(ix)] == [("CCS", ["d0", "d1", "d2"])]
    con.close()
