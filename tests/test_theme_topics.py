"""Topics across works: the noun phrases many works share, grouped by meaning, are a corpus-wide answer's
themes in a corpus of many works."""

from __future__ import annotations

import hashlib
import re

import numpy as np
from conftest import theme_index

from slmgraph.query.theme_topics import corpus_topics, topic_label, topic_themes

LEARNING = {"machine", "learning", "neural", "network", "networks", "training"}
SCHOOL = {"school", "college", "student", "students", "teacher", "teachers"}


class TopicEmbedder:
    """Phrases about learning machines point one way, about school another, anything else a word hash."""

    name, dim = "topic-fake", 32

    def encode(self, texts, progress=False):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            words = set(re.findall(r"\w+", t.lower()))
            if words & LEARNING:
                out[i, 0] = 1.0
            elif words & SCHOOL:
                out[i, 1] = 1.0
            for w in words:
                out[i, 2 + int(hashlib.md5(w.encode()).hexdigest(), 16) % (self.dim - 2)] += 0.2
            out[i] /= np.linalg.norm(out[i])
        return out


def _corpus(n=6):
    """``n`` one-unit works: machine learning and neural networks in works 0-3, school and college students in
    2-5, and one phrase of its own in each."""
    units, mentions = [], []
    for i in range(n):
        said = []
        if i <= 3:
            said += ["machine learning", "neural networks"]
        if i >= 2:
            said += ["school", "college students"]
        own = f"harbour{i} lighthouse{i}"
        # each said often: a topic's words cluster in the units discussing it (residual IDF over chance)
        text = " ".join(f"We spoke about {p} again and {p} once more, then {p} and {p}." for p in said) + \
            f" The {own} was fine."
        units.append((f"u{i}", f"w{i}", 0, text))
        mentions += [(f"u{i}", p, p) for p in said] + [(f"u{i}", own, own)]
    return theme_index(units, mentions=mentions)


def test_topics_group_the_phrases_works_share_by_meaning():
    ix = _corpus()
    topics = corpus_topics(ix, TopicEmbedder())
    got = {frozenset(t.phrases): t for t in topics}
    learning = got[frozenset({"machine learning", "neural networks", "learning", "networks"})]
    school = got[frozenset({"school", "college students", "students"})]
    assert learning.works == {"w0", "w1", "w2", "w3"} and school.works == {"w2", "w3", "w4", "w5"}
    # one work's own phrase is in no topic
    assert not any("harbour" in p for t in topics for p in t.phrases)
    assert topic_label(learning.phrases) in ("machine learning and neural networks", "neural networks and machine learning")


def test_a_corpus_of_few_works_has_no_topics():
    assert corpus_topics(_corpus(4), TopicEmbedder()) == []
    assert corpus_topics(_corpus(), None) == []


def test_one_phrase_and_its_compounds_are_no_topic():
    units, mentions = [], []
    for i in range(6):
        units.append((f"u{i}", f"w{i}", 0, "The training systems and training systems again. " * 2))
        mentions += [(f"u{i}", "training systems", "training systems")]
    ix = theme_index(units, mentions=mentions)
    # "training systems" and its head "systems" share a word: one concept, not a topic
    assert corpus_topics(ix, TopicEmbedder()) == []


def test_label_skips_a_phrase_of_the_same_stem():
    assert topic_label(["engineer", "engineering", "engineering discipline", "math"]) == "engineer and math"


def test_topic_themes_carry_their_phrases_and_documents():
    ix = _corpus()
    ix.store.con.execute("INSERT INTO entities VALUES (1, 'Ada')")
    ix.store.con.execute("INSERT INTO community_members VALUES (7, 1)")
    for i in range(6):
        ix.store.con.execute("INSERT INTO entity_text_units VALUES (1, ?)", [f"u{i}"])
    out = topic_themes(ix, [{"community_id": 7, "entities": ["Ada"]}], {7: 50.0}, TopicEmbedder(), 6)
    assert out and all(t.report == 7 for t, _, _ in out)
    t, units, phrases = next(x for x in out if "school" in x[2])
    assert t.doc_ids == ["w2", "w3", "w4", "w5"] and t.coverage["documents"] == 4
    assert {u.chunk_id for u in units} == {"u2", "u3", "u4", "u5"}


def test_label_gives_a_lone_word_as_its_compound():
    assert topic_label(["fiction", "science book", "science fiction", "nonfiction"]) == "science fiction and nonfiction"
    # a compound sharing a word with the label so far is not taken
    assert topic_label(["college", "student", "college students"]) == "college and student"


def test_forms_of_one_word_are_no_topic():
    from slmgraph.query.theme_topics import _distinct

    assert not _distinct(["engineer", "engineering", "engineering discipline"])
    assert _distinct(["engineer", "biology"])


def _ai_corpus(uses: int = 3):
    """Six one-unit works: "artificial intelligence" and "human intelligence" said in works 0-1 (work 0 also
    writing "AI" beside it), "AI" alone in works 2-3, and "academic institution" (the same initials) in 4-5."""
    units, mentions = [], []
    for i in range(6):
        said = ["artificial intelligence", "human intelligence"] if i <= 1 else \
            ["academic institution"] if i >= 4 else []
        text = " ".join(f"We spoke about {p} again and {p} once more, then {p} and {p}." for p in said)
        if i in (0, 2, 3):
            text += " " + " ".join(["The AI was there."] * uses)
        units.append((f"u{i}", f"w{i}", 0, text + f" The harbour{i} was fine."))
        mentions += [(f"u{i}", p, p) for p in said]
    return theme_index(units, mentions=mentions)


class IntelligenceEmbedder(TopicEmbedder):
    """As :class:`TopicEmbedder`, intelligence of any kind pointing one way."""

    def encode(self, texts, progress=False):
        out = super().encode(texts)
        for i, t in enumerate(texts):
            if "intelligence" in t.lower():
                out[i, 0] += 3.0
                out[i] /= np.linalg.norm(out[i])
        return out


def test_an_acronym_the_corpus_writes_beside_its_phrase_is_that_phrase():
    from slmgraph.query.theme_topics import _acronyms

    ix = _ai_corpus()
    # "academic institution" has the same initials but is never written beside "AI"
    assert _acronyms(ix, ["artificial intelligence", "academic institution", "human intelligence"]) == {
        "artificial intelligence": "AI"}
    # written in capitals under three times, an acronym is nobody's
    assert _acronyms(_ai_corpus(uses=0), ["artificial intelligence"]) == {}


def test_an_abbreviated_phrase_counts_its_acronym_and_is_a_topic_with_its_own_compounds():
    ix = _ai_corpus()
    topics = corpus_topics(ix, IntelligenceEmbedder())
    ai = next(t for t in topics if "artificial intelligence" in t.phrases)
    # "AI" alone in works 2 and 3 counts as the phrase; one phrase and its compounds make a topic here
    assert ai.works >= {"w0", "w1", "w2", "w3"} and ai.acronyms == ["AI"]
    assert {"u2", "u3"} <= ai.chunks
    # the same cluster without an acronym is one concept's forms, no topic
    plain = corpus_topics(_ai_corpus(uses=0), IntelligenceEmbedder())
    assert not any("artificial intelligence" in t.phrases for t in plain)


def test_a_phrase_written_in_lower_case_is_a_concept_whatever_an_entity_of_its_name():
    ix = _corpus()
    ix.store.con.execute("INSERT INTO entities VALUES (1, 'Machine Learning')")
    topics = corpus_topics(ix, TopicEmbedder())
    assert any("machine learning" in t.phrases for t in topics)
