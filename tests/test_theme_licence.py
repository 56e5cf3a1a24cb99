"""An edition's legal matter is no theme: an e-book's header and licence (around its ``*** START OF`` and ``*** END
OF`` lines) and paragraphs dense in licence terms are kept out of a global answer's themes, labels and counts (the
index keeps them); and a theme discussed in one long document states its reach by that document's passages."""

from __future__ import annotations

from conftest import FakeEmbedder, theme_index

from slmgraph.query.theme_model import Statement, Theme, story_text
from slmgraph.query.theme_render import overview, reach_text
from slmgraph.query.themes import build_themes, cover_passages

STORY = [
    "The orchard trees on the hill gave apples every autumn. Old Tom pruned the orchard trees in the frost.",
    "Tom's daughter Ann carried the apples to the market by cart. The orchard trees were the family's living.",
    "A storm broke three of the orchard trees in March. Ann and Tom planted young trees along the lane.",
    "The young orchard trees bore their first apples after four summers. The market paid well that year.",
    "Tom grew old, and Ann kept the orchard trees as he had taught her. The village praised her cider.",
    "The cider of the orchard trees won a prize at the county fair. Ann gave the prize money to the school.",
]
HEADER = ("The Project Gutenberg eBook of The Orchard\n\nThis ebook is for the use of anyone anywhere. You may copy it "
          "under the terms of the Project Gutenberg License included with this ebook.\n\n"
          "*** START OF THE PROJECT GUTENBERG EBOOK THE ORCHARD ***\n\n")
END = "\n\n*** END OF THE PROJECT GUTENBERG EBOOK THE ORCHARD ***\n\nUpdated editions will replace the previous one."
LICENCE = [
    "The person or entity that provided you with the defective work may elect to provide a replacement copy in lieu "
    "of a refund. If the second copy is also defective, you may demand a refund in writing.",
    "Copyright laws in most countries are in a constant state of change. The copyright laws of the place where you "
    "are located also govern what you can do with this work.",
]


def _book():
    """One long e-book: its header and first chapter in unit 0, five more chapters, the last ending on the END line,
    then two units of licence; the orchard's community is behind the story, the licence's behind its last units."""
    texts = [HEADER + STORY[0]] + STORY[1:-1] + [STORY[-1] + END] + LICENCE
    units = [(f"u{i}", "book", i, t) for i, t in enumerate(texts)]
    emb = FakeEmbedder()
    mentions = [(f"u{i}", "orchard tree", "orchard trees") for i in range(6)] + \
        [(f"u{i}", p, p) for i, ps in ((6, ["replacement copy", "refund"]), (7, ["copyright law", "state"]))
         for p in ps]
    ix = theme_index(units, embedder=emb, entities=[(1, "orchard trees"), (2, "copyright laws"), (3, "refund")],
                     members=[(0, 1), (1, 2), (1, 3)],
                     entity_units=[(1, f"u{i}") for i in range(6)] + [(2, "u7"), (3, "u6")],
                     reports=[(0, "orchard trees"), (1, "copyright laws, refund")], mentions=mentions)
    ix.store.con.execute("INSERT INTO concepts VALUES (1), (2), (3)")
    reports = [{"community_id": 0, "entities": ["orchard trees"], "title": "orchard trees", "summary": ""},
               {"community_id": 1, "entities": ["copyright laws", "refund"], "title": "copyright laws, refund",
                "summary": ""}]
    return ix, emb, reports


def test_an_ebooks_header_and_licence_and_a_dense_legal_paragraph_are_no_story():
    units = [("a0", "a", 0, HEADER + STORY[0]), ("a1", "a", 1, STORY[1]), ("a2", "a", 2, STORY[2] + END),
             ("a3", "a", 3, LICENCE[0]),
             ("b0", "b", 0, "Ann renewed her licence to sell cider at the market.\n\nThe orchard trees flowered."),
             ("c0", "c", 0, "The orchard trees flowered.\n\nCopyright 2024 Orchard Press. All rights reserved. "
                            "No warranty is given and no liability is accepted.")]
    kept = story_text(units)
    assert kept["a0"].strip() == STORY[0]  # the header and the START line are gone, the first chapter stays
    assert kept["a2"].strip() == STORY[2]  # the END line and what follows it are gone
    assert kept["a3"] == ""  # the licence after the END line, wholly
    assert "a1" not in kept  # a unit of story alone loses nothing
    assert "b0" not in kept  # one "licence" in a story is no licence text
    assert kept["c0"].strip() == "The orchard trees flowered."  # a notice dense in legal terms is


def test_a_licence_after_an_ebooks_end_line_gives_no_theme_statement_or_label():
    ix, emb, reports = _book()
    q = "What are the main themes across these documents?"
    themes = build_themes(ix, reports, {}, emb.encode([q])[0], emb, wide=True, question=q)
    said = " ".join([t.topic for t in themes] + [s.text for t in themes for s in t.statements]).casefold()
    assert themes and "orchard" in said
    for word in ("copyright", "refund", "replacement copy", "gutenberg", "licen"):
        assert word not in said
    assert all(s.unit <= 6 for t in themes for s in t.statements)
    # the index keeps the licence: a search asking about it still reads it
    assert ix.store.con.execute("SELECT count(*) FROM text_units WHERE text LIKE '%refund%'").fetchone()[0] == 1
    ix.store.con.close()


def test_a_theme_of_one_long_document_states_its_reach_by_passages():
    ix, emb, reports = _book()
    q = "What are the main themes across these documents?"
    themes = build_themes(ix, reports, {}, emb.encode([q])[0], emb, wide=True, question=q)
    orchard = next(t for t in themes if "orchard" in t.topic)
    cov = orchard.coverage
    assert (cov["passages"], cov["passages_of"], cov["from"], cov["to"]) == (6, 8, 1, 6)
    assert reach_text(cov) == "6 of 8 passages (75 %), from its opening to its fourth fifth"
    text = overview(themes, ix, wide=True)
    assert text.startswith("In its one document, the corpus's main theme")
    assert "orchard trees (in 6 of 8 passages, from its opening to its fourth fifth)" in text
    ix.store.con.close()
    # documents of one unit each keep their document counts
    units = [(f"u{i}", f"d{i}", 0, s) for i, s in enumerate(STORY)]
    ix = theme_index(units)
    t = Theme(0, "orchard trees", {"documents": 1, "of": 6, "share": 0.167, "first": "d2", "last": "d2"},
              ["d2"], [], statements=[Statement(STORY[2], 3, "d2", 1, 1)], community_docs=["d2"])
    cover_passages([t], ix)
    assert "passages" not in t.coverage and reach_text(t.coverage) == "1 of 6 documents"
    ix.store.con.close()


def test_passages_are_told_where_a_theme_lies_in_one_long_document_of_several():
    ix, emb, _ = _book()
    ix.store.con.execute("INSERT INTO documents VALUES ('note', 'note.txt', 'note')")
    ix.store.con.execute("INSERT INTO text_units VALUES ('n0', 'note', 0, 'A short note on the edition.')")
    from slmgraph.query.theme_model import ThemeIndex

    ix = ThemeIndex(ix.store)
    sts = [Statement(STORY[2], 3, "book", 3, 8), Statement(STORY[4], 5, "book", 5, 8)]
    t = Theme(0, "orchard trees", {"documents": 1, "of": 2, "share": 0.5, "first": "book", "last": "book"},
              ["book"], [], statements=sts, community_docs=["book"], passages=["u2", "u4"])
    other = Theme(0, "cider", {"documents": 1, "of": 2, "share": 0.5, "first": "book", "last": "book"},
                  ["book"], [], statements=[sts[1]], community_docs=["book"], passages=["u4", "u5"])
    cover_passages([t, other], ix)
    assert (t.coverage["passages"], t.coverage["from"], t.coverage["to"]) == (2, 3, 5)
    assert reach_text(t.coverage) == "2 of 8 passages of \u201cbook\u201d (25 %), from its second fifth to its middle fifth"
    text = overview([t, other], ix, wide=True)
    # after the sentence saying what the corpus is (query.theme_ident)
    assert text[text.index("Across"):].startswith("Across the 2 documents, the corpus's main themes, all from \u201cbook\u201d (8 passages), are "
                           "orchard trees (in 2 of 8 passages, from its second fifth to its middle fifth); and cider "
                           "(in 2, from its middle fifth to its fourth fifth)")
    ix.store.con.close()

