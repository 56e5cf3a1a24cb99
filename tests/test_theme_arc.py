"""The arc of a dated corpus: periods in date order, each named by the phrases it discusses most distinctively."""

from types import SimpleNamespace

from slmgraph.query.theme_arc import period_topics, periods


def _docs(n):
    return [SimpleNamespace(doc_id=f"d{i}", date=f"2020-{i + 1:02d}", title=f"2020-{i + 1:02d} minutes") for i in range(n)]


def test_periods_cut_in_order_and_never_under_two_documents():
    assert [[d.doc_id for d in r] for r in periods(_docs(6))] == [["d0", "d1"], ["d2", "d3"], ["d4", "d5"]]
    assert len(periods(_docs(13))) == 4
    assert [len(r) for r in periods(_docs(5))] == [2, 3]  # 3 periods would leave one of a single document
    assert periods(_docs(3)) == []


def test_period_named_by_its_own_recurring_phrase_not_the_corpus_wide_one():
    docs = _docs(6)
    held = {"d0": {"water main", "compost bay"}, "d1": {"water main", "compost bay"},
            "d2": {"water main", "apple sale"}, "d3": {"water main", "apple sale", "orchard"},
            "d4": {"water main", "hardship discount"}, "d5": {"water main", "hardship discount", "lease"}}
    got = period_topics(periods(docs), held, 6)
    # every period holds the running "water main" but it names none: it tells no period from another
    assert [[k for k, _ in p][0] for p in got] == ["compost bay", "apple sale", "hardship discount"]
    # a phrase in one document of its period ("orchard", "lease") never names it
    assert all(k not in ("orchard", "lease") for p in got for k, _ in p)
    assert got[0][0] == ("compost bay", 2)


def test_period_skips_a_phrase_sharing_a_word_with_one_taken():
    docs = _docs(4)
    held = {"d0": {"equipment money", "emergency equipment money", "tube"},
            "d1": {"equipment money", "emergency equipment money", "tube"},
            "d2": {"redox band"}, "d3": {"redox band"}}
    got = period_topics(periods(docs, 2), held, 4)
    keys = [k for k, _ in got[0]]
    assert len([k for k in keys if "money" in k]) == 1 and "tube" in keys


def test_wide_answer_of_dated_minutes_traces_the_arc():
    from test_theme_running import _minutes

    from slmgraph.query.theme_arc import arc_sentence

    ix, _, _ = _minutes()
    arc = arc_sentence(ix)
    assert arc.startswith("Over time, the documents turn from compost bay (2 of 2 documents)")
    assert arc.index("compost bay") < arc.index("orchard tree")
    assert "water" not in arc  # in every period: no period's own topic
    assert "committee meeting" not in arc.casefold()  # a title names the document, not what it discusses


def test_no_arc_when_few_documents_are_dated_or_periods_share_a_date():
    from types import SimpleNamespace as N

    from slmgraph.query.theme_arc import arc_sentence

    # 39 of 665 transcript parts carry a year found in their text: no dated corpus
    docs = [N(doc_id=f"p{i}", date="2021" if i < 39 else None, title=f"part {i}", work=f"ep{i // 28}", part=i % 28)
            for i in range(665)]
    assert arc_sentence(N(docs=docs, store=None)) == ""
    # every part dated, but most in one year: two periods would meet on "2021"
    docs = [N(doc_id=f"w{i}", date="2021" if i > 1 else "2019", title=f"w{i}", work=None, part=None) for i in range(8)]
    assert arc_sentence(N(docs=docs, store=None)) == ""
