"""Answers and data-built reports read as prose: no Markdown table row or heading is quoted, inline
Markdown is rendered (no "\\*", no "**"), a finding quotes whole sentences (only a single sentence longer
than the limit is cut), and a report whose only finding is a short speaker turn does not win a quote."""

import numpy as np
from conftest import FakeEmbedder, ent_rows, rel_rows

from slmgraph.indexing.stages.report_data import data_report, text_findings
from slmgraph.query.extractive import report_points, sentence_points

MARKDOWN = """# The Lake Varrin Water Project

The Lake Varrin Water Project is a plan to clean the polluted lake beside the town of Holmfirth Bay.

| Partner | Role | Funding (EUR) |
|---|---|---|
| Bluewater Trust | project lead | 200,000 |
| Ostrava Filtration GmbH | filter supplier | 450,000 |

The main themes of the project are clean water, public health, and **trust** between the fishermen and the council.
Each filter removes 5 \\* 3 kilograms of phosphates, says the [Trust](https://example.org/trust).
"""


def test_markdown_structure_and_inline_markup():
    from slmgraph.text.prose import markdown_structure, plain_sentence

    assert markdown_structure("| Bluewater Trust | project lead | 200,000 |") == "table"
    assert markdown_structure("|---|:--:|") == "table"
    assert markdown_structure("## History of Holmfirth Bay") == "heading"
    assert markdown_structure("```python") == "code"
    assert markdown_structure("The council paid for half of it.") is None
    assert plain_sentence("Each filter removes 5 \\* 3 kg, says the **[Trust](https://x.org)**.") == \
        "Each filter removes 5 * 3 kg, says the Trust."
    assert plain_sentence("- The filters arrive in June.") == "The filters arrive in June."
    for text in ("KEVIN SCOTT: Yes, 5 * 3 is 15.", "a snake_case_name here", "AT&T and R&D"):
        assert plain_sentence(text) == text  # plain text comes back as it was


def test_extractive_sentences_of_a_markdown_text_unit_are_prose():
    emb = FakeEmbedder()
    q = "What are the main themes of the project?"
    points = sentence_points([(1, MARKDOWN)], emb.encode([q])[0], emb, max_points=10, min_words=3)
    texts = [p.text for p in points]
    assert texts and not any("|" in t or t.startswith("#") or "\\" in t or "**" in t for t in texts), texts
    assert any(t.startswith("The main themes of the project are clean water") for t in texts)
    assert any("5 * 3 kilograms" in t and t.endswith("says the Trust.") for t in texts)


def test_a_finding_quotes_whole_sentences_and_cuts_only_one_longer_than_the_limit():
    s1 = "Alice Smith founded Acme Corporation in Paris in the spring of a year nobody remembers well. "
    long_desc = " ".join([s1.strip()] * 1 + [f"Sentence number {i} adds another plain fact about Acme." for i in
                                             range(12)])
    ents = ent_rows([(1, "Alice Smith", "person", "", 1), (2, "Acme Corporation", "organization", "", 1)])
    rels = rel_rows([(1, 1, 2, long_desc, 1.0, 2)])
    f = text_findings(ents, rels, max_chars=400)[0]["explanation"]
    assert len(f) <= 400 and f.endswith(".") and "\u2026" not in f and f.startswith("Alice Smith founded")
    giant = "Alice Smith " + "and her many friends " * 40 + "founded Acme Corporation."
    g = text_findings(ents, rel_rows([(1, 1, 2, giant + " Then it grew.", 1.0, 2)]),
                      max_chars=400)[0]["explanation"]
    assert g.endswith("\u2026") and len(g) <= 400  # one sentence longer than the limit: the only cut


def test_whole_sentences_skips_one_that_overflows_and_keeps_the_first():
    from slmgraph.indexing.stages.report_data import whole_sentences

    assert whole_sentences(["aaaa.", "b" * 20 + ".", "cc."], 10) == ["aaaa.", "cc."]
    assert whole_sentences(["b" * 20 + ".", "cc."], 10) == ["b" * 9 + "\u2026"]


def test_a_data_report_quotes_no_table_row():
    ents = ent_rows([(1, "Bluewater Trust", "organization", "", 1), (2, "Marta Kellen", "person", "", 1)])
    desc = "| Bluewater Trust | project lead | 200,000 |\nIt is run by **Bluewater Trust**, a charity founded by Marta Kellen."
    rep = data_report(0, 0, ents, rel_rows([(1, 1, 2, desc, 1.0, 2)]))
    text = rep.full_text()
    assert "|" not in text and "**" not in text
    assert "It is run by Bluewater Trust, a charity founded by Marta Kellen." in text


def test_a_short_speaker_turn_does_not_win_over_a_report_that_states_something():
    emb = FakeEmbedder()
    q = "What are the main themes?"
    turn = {"community_id": 2, "title": "Councillor Reyes", "summary": "", "entities": ["Councillor Reyes"],
            "findings": [{"summary": "Councillor Reyes", "explanation": "COUNCILLOR REYES: That is correct."}]}
    themes = {"community_id": 6, "title": "Lake Varrin Water Project", "summary": "", "entities": [],
              "findings": [{"summary": "Lake Varrin Water Project",
                            "explanation": "The main themes of the project are clean water, public health, and "
                                           "trust between the fishermen and the council."}]}
    points = report_points([turn, themes], {2: 40.0, 6: 30.0}, emb.encode([q])[0], emb)
    assert [p.ids for p in points] == [[6]], [(p.ids, p.text) for p in points]
    alone = report_points([turn], {2: 40.0}, emb.encode([q])[0], emb)
    assert [p.ids for p in alone] == [[2]]  # with nothing better, the turn is still quoted
    assert np.isfinite(alone[0].rank)


def test_the_tail_of_a_sentence_cut_at_a_text_unit_start_is_a_fragment():
    from slmgraph.query.extractive import sentence_kinds

    assert "fragment" in sentence_kinds("clearly ruffled but not conceding any ground.")
    assert "fragment" not in sentence_kinds("Cruz squared their shoulders, clearly ruffled.")


def test_pysbd_compiles_its_abbreviation_patterns_once(monkeypatch):
    """A second split of a text with many abbreviations recompiles none of pysbd's patterns, even after
    ``re``'s own cache was emptied, and splits as before."""
    import re

    from slmgraph.text import prose

    abbrs = ["Dr.", "Mr.", "Mrs.", "Prof.", "Gen.", "Capt.", "Sen.", "Rep.", "Gov.", "Lt.", "Col.", "Sgt.", "Jan.",
             "Feb.", "Aug.", "Sept.", "Oct.", "Nov.", "Dec.", "approx.", "dept.", "est.", "vs.", "etc.", "no."]
    text = " ".join(f"Then {a} Smith {i} arrived." for i, a in enumerate(abbrs * 4))
    prose._spans.cache_clear()
    first = prose.sentence_spans(text)
    prose._spans.cache_clear()
    re.purge()
    calls = []
    real = re._compile
    monkeypatch.setattr(re, "_compile", lambda *a: calls.append(a[0]) or real(*a))
    assert prose.sentence_spans(text) == first
    assert len(first) > 50
    assert calls == []


def test_sentences_are_found_in_the_text_by_string_search_with_pysbd_offsets(monkeypatch):
    """pysbd finds each sentence of a split in the text with a pattern made of it; the splitter finds them by
    string search, so no such pattern is compiled, and the sentences and offsets are pysbd's own, also where a
    sentence recurs, overlaps itself, is followed by unusual whitespace or is the whole text."""
    import re

    import pysbd

    from slmgraph.text import prose

    texts = ["Yes. Yes. Yes.", "No. No.No.  No.\n\nNo.", "aaa. aa. a. aa. aaa.", "Hi.\u00a0\u2003Hi.\u2028Hi.\rHi.",
             "Mr. Smith came. Mr. Smith came.\nMr. Smith came.", "   \n  ", "One sentence without a stop",
             "He said \u201cgo.\u201d Then he went. Then he went."]
    theirs = pysbd.Segmenter(language="en", clean=False, char_span=True)
    ours = prose._Segmenter(language="en", clean=False, char_span=True)
    for text in texts:
        assert ([(s.sent, s.start, s.end) for s in ours.segment(text)]
                == [(s.sent, s.start, s.end) for s in theirs.segment(text)]), text
    text = " ".join(f"The {w} report was filed late again." for w in ("first", "second", "third", "fourth"))
    prose._spans.cache_clear()
    calls = []
    real = re._compile
    monkeypatch.setattr(re, "_compile", lambda *a: calls.append(str(a[0])) or real(*a))
    assert len(prose.sentence_spans(text)) == 4
    assert not [p for p in calls if "filed" in p]
