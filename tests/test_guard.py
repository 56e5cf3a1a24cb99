"""slmgraph.model.guard: the runaway guard judges streamed text sentence by sentence."""

from __future__ import annotations

from slmgraph.model.guard import RunawayGuard


def test_streamed_text_loops_on_the_third_near_copy_of_a_sentence_split_across_pieces():
    g = RunawayGuard(None)
    pieces = ["Success comes from a ", "growth mindset. Success comes", " from a growth mindset",
              " always. Success comes from ", "a growth mindset"]
    assert not any(g.text_loops(p) for p in pieces)  # the third copy is not finished yet
    assert g.text_loops("!\n")


def test_one_paragraph_of_different_sentences_does_not_loop():
    g = RunawayGuard(None)
    text = "Alice met Bob at the harbour. They talked about the storm. Then the ferry left for the island.\n"
    assert not any(g.text_loops(text[i:i + 7]) for i in range(0, len(text), 7))
