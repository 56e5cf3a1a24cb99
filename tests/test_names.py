"""The candidate pass and name normalisation."""

from slmgraph.names import candidate_names, cut, is_grounded, normalize_name, sentences


def test_normalize_name_rules():
    assert normalize_name("The Sorbonne’s") == "sorbonne"          # article, curly possessive
    assert normalize_name("  ALICE   smith ") == "alice smith"       # case, whitespace
    assert normalize_name("Microsoft Corp.") == "microsoft"           # corporate suffix
    assert normalize_name("Acme, Inc.") == "acme"
    assert normalize_name("Landing.AI") == "landing ai"               # punctuation
    assert normalize_name("Jean-Luc Picard") == "jean-luc picard"     # inner hyphen kept
    assert normalize_name("Ｆｕｌｌｗｉｄｔｈ") == "fullwidth"          # NFKC
    assert normalize_name("The") == "the"                              # never emptied by the article rule


def test_candidates_are_spans_of_the_text():
    text = ("Alice Smith works at the Bank of America in New York. Today she met Bob. "
            "\"Exactly,\" said Bob. We'll see. The NASA team called Alice Smith.")
    c = candidate_names(text)
    assert c[0] == "Alice Smith"                      # most frequent first
    assert "Bank of America" in c and "New York" in c and "NASA" in c
    assert "Today" not in c and "Exactly" not in c    # only ever sentence-initial
    assert "We'll" not in c and "The" not in c        # contraction, stop word
    for name in c:
        assert name in text


def test_candidates_limit_and_dedupe():
    text = "Paris. Paris is big. I like PARIS and Rome. Rome too. " + " ".join(f"Then City{i} Town grew." for i in range(50))
    c = candidate_names(text, limit=5)
    assert len(c) == 5
    assert sum(1 for x in c if normalize_name(x) == "paris") == 1
    assert candidate_names("We met " + " ".join(["Big"] * 8) + " today.") == []  # a heading, not a name


def test_grounding_and_cut():
    words = {"alice", "founded", "acme", "paris"}
    assert is_grounded("Alice founded Acme", words)
    assert not is_grounded("Marie Curie studied radioactivity at the Sorbonne", words)
    assert not is_grounded("", words)
    assert cut("a " * 100, 20).endswith("\u2026") and len(cut("a " * 100, 20)) <= 20
    assert sentences("One. Two! Three?\n\nFour") == ["One.", "Two!", "Three?", "Four"]


def test_candidates_never_span_lines_and_occur_verbatim(corpus):
    assert candidate_names("# Notes\n\nCarol White met Dan Brown.") == ["Carol White", "Dan Brown"]
    assert candidate_names("Alice Smith\nBob Jones\nCarol White") == ["Alice Smith", "Bob Jones", "Carol White"]
    for f in corpus.rglob("*.*"):
        text = f.read_text(encoding="utf-8")
        for name in candidate_names(text):
            assert name in text, (f.name, name)


def test_candidates_beyond_latin1():
    c = candidate_names("Łukasz Nowak met Žofie Dvořák in Ōsaka. Later Путин left.")
    assert {"Łukasz Nowak", "Žofie Dvořák", "Ōsaka", "Путин"} <= set(c)
