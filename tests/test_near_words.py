"""The corpus's other words for a term: the noun phrases the embed stage stores, nearest the term first."""

import numpy as np
from conftest import theme_index

from slmgraph.query.theme_mentions import mentions_answer
from slmgraph.query.theme_model import NEAR_COSINE, near_words

#: Fixed directions: "partnership" near "collaboration", "team" farther off, every other text on its own axis.
_AXES = {"collaboration": [1, 0, 0], "partnership": [0.8, 0.6, 0], "joint partnership": [0.79, 0.61, 0],
         "team": [0.5, 0, 0.866], "collaborations": [1, 0, 0]}


class AxisEmbedder:
    name, dim = "axis-fake", 8

    def encode(self, texts, progress=False):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            v = _AXES.get(t.lower())
            if v is not None:
                out[i, :3] = v
            else:  # a sentence: the sum of its known words, else an axis of its own
                for w, vec in _AXES.items():
                    if w in t.lower():
                        out[i, :3] += vec
                if not out[i].any():
                    out[i, 3 + hash(t) % 5] = 1.0
            out[i] /= max(np.linalg.norm(out[i]), 1e-9)
        return out


def _index():
    units = [("u0", "ep1", 0, "HOST: What came next?\nADA KING: We formed a partnership with Norfolk Mills."),
             ("u1", "ep2", 0, "HOST: And then?\nBO LIN: Our partnership with Delta Farms lasted ten years."),
             ("u2", "ep3", 0, "HOST: Tell us more.\nCY ROSS: A collaboration with the county paid for the boats."),
             ("u3", "ep4", 0, "HOST: Anything else?\nDI VOSS: Our team rowed every morning.")]
    ix = theme_index(units)
    emb = AxisEmbedder()
    for key in ("partnership", "joint partnership", "team"):
        ix.store.con.execute("INSERT INTO embeddings VALUES ('phrase', ?, ?)", [key, emb.encode([key])[0].tolist()])
    return ix, emb


def test_a_term_gets_the_stored_phrases_near_it_and_not_those_holding_a_nearer_one():
    ix, emb = _index()
    # "team" is at cosine 0.5, under the threshold; "joint partnership" holds the nearer "partnership"
    assert NEAR_COSINE > 0.5
    assert near_words("collaboration", ix, emb) == ["partnership"]
    # a name, an acronym, a phrase: their own words only
    assert near_words("Norfolk", ix, emb) == [] and near_words("AI", ix, emb) == []
    assert near_words("joint venture", ix, emb) == [] and near_words("collaboration", ix, None) == []


def test_an_index_without_phrase_vectors_finds_no_other_word():
    ix, emb = _index()
    ix.store.con.execute("DELETE FROM embeddings WHERE kind = 'phrase'")
    ix._phrase_vecs = None
    assert near_words("collaboration", ix, emb) == []


def test_how_often_counts_the_other_word_and_says_so():
    ix, emb = _index()
    text, _, _ = mentions_answer(ix, "How often do guests mention collaboration?", emb)
    head = text.split("\n\n")[0]
    assert head.startswith("“collaboration” (also “partnership”) is named in 3 of the 4 text units")
    assert "Ada King" in text and "Bo Lin" in text and "Cy Ross" in text and "Di Voss" not in text
