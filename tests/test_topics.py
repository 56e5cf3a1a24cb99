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
