"""Entity resolution: the title, name-subset, acronym and embedding rules and their log rows."""

import math
from collections import Counter

import numpy as np
import pytest

from slmgraph.names import normalize_name
from slmgraph.resolve import MergeRow, acronym_of, initials, person_shaped, resolve_entities, strip_titles


def _inputs(entities):
    """``[(surface, type, mentions)]`` -> the counters resolve_entities takes."""
    names, types, mentions = {}, {}, {}
    for surface, etype, n in entities:
        key = normalize_name(surface)
        names.setdefault(key, Counter())[surface] += n
        types.setdefault(key, Counter())[etype] += n
        mentions[key] = mentions.get(key, 0) + n
    return names, types, mentions


def _resolve(entities, **kw):
    kw.setdefault("threshold", None)
    return resolve_entities(*_inputs(entities), **kw)


def _merged(res):
    """Only the keys that were merged away: ``{key: entity key}``."""
    return {k: v for k, v in res.mapping.items() if k != v}


def _unit(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


class DesignedEmbedder:
    """Name -> designed 2-d direction (padded); any other name gets its own
    orthogonal axis. Records every batch it is asked for."""

    def __init__(self, angles: dict[str, float], dim: int = 32):
        self.angles = angles
        self.dim = dim
        self.batches: list[list[str]] = []
        self._axis: dict[str, int] = {}

    def __call__(self, texts):
        self.batches.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            if t in self.angles:
                out[i, :2] = _unit(self.angles[t])
            else:
                out[i, 2 + self._axis.setdefault(t, len(self._axis))] = 1.0
        return out


# --- helpers -------------------------------------------------------------------------------------

def test_helpers():
    assert strip_titles("lt col john smith") == ("john smith", ["lt", "col"])
    assert strip_titles("general") == ("general", [])
    assert acronym_of("IBM") == "ibm" and acronym_of("U.S.") == "us"
    assert acronym_of("Ibm") is None and acronym_of("NEW YORK") is None and acronym_of("X") is None
    assert initials("international business machines") == {"ibm"}
    assert initials("bank of america") == {"ba"}
    assert initials("non-governmental organization") == {"no", "ngo"}
    assert initials("microsoft") == set()
    assert initials("apple ii", ["Apple II"]) == set() and initials("machine learning", ["machine learning"]) == set()
    assert initials("united states", ["United States"]) == {"us"}
    assert person_shaped(("alex", "mercer"), ["Alex Mercer"]) and person_shaped(("sam", "altman"), ["SAM ALTMAN"])
    assert person_shaped(("ludwig", "van", "beethoven"), ["Ludwig van Beethoven"])
    assert not person_shaped(("dartmouth", "college"), ["Dartmouth College"])
    assert not person_shaped(("university", "of", "north", "carolina"), ["University of North Carolina"])
    assert not person_shaped(("thor", "hammer"), ["Thor's Hammer"])
    assert not person_shaped(("cto", "cisco"), ["CTO Cisco"])
    assert not person_shaped(("alex",), ["Alex"])


# --- rules ---------------------------------------------------------------------------------------

def test_normalisation_already_merges_corporate_and_case_variants():
    ents = [("Microsoft", "organization", 3), ("Microsoft Corp.", "organization", 1), ("MICROSOFT", "organization", 1)]
    names, _, mentions = _inputs(ents)
    assert list(names) == ["microsoft"] and mentions == {"microsoft": 5}
    res = _resolve(ents)
    assert res.mapping == {"microsoft": "microsoft"} and res.log == []


def test_title_rule_merges_into_the_untitled_entity():
    res = _resolve([("Agent Alex Mercer", "person", 1), ("Alex Mercer", "person", 4),
                    ("Dr. Chen", "person", 1), ("Chen", "unknown", 2),
                    ("Captain Nemo", "person", 1)])          # "Nemo" is no entity: kept as it is
    assert _merged(res) == {"agent alex mercer": "alex mercer", "dr chen": "chen"}
    assert res.log[0] == MergeRow("agent alex mercer", "alex mercer", "title", None,
                                  "'Agent Alex Mercer' is 'Alex Mercer' with the title 'agent'")
    assert [r.rule for r in res.log] == ["title", "title"] and res.merges["title"] == 2


def test_title_rule_does_not_strip_organisations():
    res = _resolve([("General Electric", "organization", 2), ("Electric", "unknown", 1)])
    assert _merged(res) == {}


def test_name_subset_merges_first_and_last_name_and_titled_form():
    res = _resolve([("Alex", "person", 5), ("Mercer", "unknown", 1), ("Alex Mercer", "person", 2),
                    ("Agent Alex Mercer", "person", 1)])
    assert _merged(res) == {"alex": "alex mercer", "mercer": "alex mercer", "agent alex mercer": "alex mercer"}
    rules = {r.norm: (r.rule, r.into_norm, r.score) for r in res.log}
    assert rules == {"agent alex mercer": ("title", "alex mercer", None),
                     "alex": ("name-subset", "alex mercer", None),
                     "mercer": ("name-subset", "alex mercer", None)}
    assert res.merges == {"title": 1, "name-subset": 2, "acronym": 0, "embedding": 0}


def test_name_subset_with_two_longer_candidates_is_not_merged():
    res = _resolve([("Alex", "person", 3), ("Alex Mercer", "person", 1), ("Alex Smith", "person", 1),
                    ("Mercer", "person", 1)])
    assert _merged(res) == {"mercer": "alex mercer"}       # "alex" is ambiguous, "mercer" is not


def test_name_subset_is_never_applied_to_organisations_or_locations():
    res = _resolve([("Microsoft", "organization", 3), ("Microsoft Research", "organization", 1),
                    ("Paris", "location", 2), ("Paris Hilton", "person", 1),
                    ("Berlin", "unknown", 1), ("Berlin Institute", "organization", 1)])
    # "Paris" (location) is incompatible with the person; "Berlin Institute" is no person
    assert _merged(res) == {}


def test_name_subset_distrusts_person_types_on_names_not_shaped_like_persons():
    # a small model typed everything "person"
    res = _resolve([("Microsoft", "person", 3), ("Microsoft Research", "person", 1),
                    ("Soviet", "person", 1), ("Soviet Union", "person", 2),
                    ("CTO", "person", 1), ("CTO Cisco", "person", 1),
                    ("Carolina", "person", 1), ("University of North Carolina", "person", 1),
                    ("Sagan", "person", 1), ("Carl Sagan", "person", 1)])
    assert _merged(res) == {"sagan": "carl sagan"}


def test_name_subset_for_untyped_entities_needs_a_title_as_person_evidence():
    plain = _resolve([("Paris", "unknown", 2), ("Paris Hilton", "unknown", 1)])
    assert _merged(plain) == {}
    titled = _resolve([("Hayes", "unknown", 2), ("Jordan Hayes", "unknown", 1), ("Dr. Jordan Hayes", "unknown", 1)])
    assert _merged(titled) == {"dr jordan hayes": "jordan hayes", "hayes": "jordan hayes"}
    # a titled name whose untitled form is no entity still merges by its title-stripped words
    core = _resolve([("Dr. Chen", "unknown", 1), ("Wei Chen", "person", 3)])
    assert _merged(core) == {"dr chen": "wei chen"} and core.log[0].rule == "name-subset"


def test_acronym_rule():
    res = _resolve([("IBM", "organization", 4), ("International Business Machines", "organization", 1),
                    ("NGO", "unknown", 1), ("Non-Governmental Organization", "concept", 1),
                    ("UN", "organization", 1), ("United Nations", "organization", 1),
                    ("Universal Networks", "organization", 1),
                    ("AI", "person", 1), ("Artificial Intelligence", "concept", 1)])
    assert _merged(res) == {"ibm": "international business machines", "ngo": "non-governmental organization"}
    row = next(r for r in res.log if r.norm == "ibm")
    assert (row.rule, row.into_norm, row.score) == ("acronym", "international business machines", None)
    assert "initials" in row.detail


def test_embedding_rule_merges_into_the_entity_with_more_mentions():
    emb = DesignedEmbedder({"Dulce Base": 0, "Dulce Military Base": 18})   # cos 18 deg = 0.951
    res = _resolve([("Dulce Base", "location", 2), ("Dulce Military Base", "location", 5)], threshold=0.9, embed=emb)
    assert _merged(res) == {"dulce base": "dulce military base"}
    (row,) = res.log
    assert row.rule == "embedding" and row.into_norm == "dulce military base"
    assert row.score == pytest.approx(math.cos(math.radians(18)), abs=1e-4)
    assert res.embedded == 2 and emb.batches == [["Dulce Base", "Dulce Military Base"]]


def test_embedding_rule_threshold_and_tie():
    angles = {"Alpha Site": 0, "Alpha Station": 25.84}   # cos = 0.9000
    res = _resolve([("Alpha Site", "location", 1), ("Alpha Station", "location", 1)], threshold=0.9,
                   embed=DesignedEmbedder(angles))
    assert _merged(res) == {"alpha site": "alpha station"}   # same mentions: the longer key wins
    res = _resolve([("Alpha Site", "location", 1), ("Alpha Station", "location", 1)], threshold=0.91,
                   embed=DesignedEmbedder(angles))
    assert _merged(res) == {}


def test_embedding_rule_respects_types():
    angles = {"Washington": 0, "Washington DC": 8, "Washington Post": 20}
    pair = _resolve([("Washington", "location", 5), ("Washington Post", "organization", 1)], threshold=0.9,
                    embed=DesignedEmbedder(angles))
    assert _merged(pair) == {}                            # cos 0.94, but location vs organization
    res = _resolve([("Washington", "location", 5), ("Washington Post", "organization", 1),
                    ("Washington DC", "unknown", 1)], threshold=0.9, embed=DesignedEmbedder(angles))
    # the untyped one merges into the location; the organisation stays out of the cluster
    assert _merged(res) == {"washington dc": "washington"}
    # pairs go in descending similarity: here the untyped name is closest to the organisation
    angles = {"Washington": 0, "Washington DC": 14, "Washington Post": 16}
    res = _resolve([("Washington", "location", 5), ("Washington Post", "organization", 1),
                    ("Washington DC", "unknown", 1)], threshold=0.9, embed=DesignedEmbedder(angles))
    assert _merged(res) == {"washington dc": "washington post"}


def test_embedding_rule_does_not_chain_dissimilar_ends():
    # A~B 0.951, B~C 0.934, A~C 0.777: A and B merge, C would stretch the cluster
    angles = {"Site A": 0, "Site B": 18, "Site C": 39}
    res = _resolve([("Site A", "location", 3), ("Site B", "location", 1), ("Site C", "location", 1)],
                   threshold=0.9, embed=DesignedEmbedder(angles))
    assert _merged(res) == {"site b": "site a"}
    # an untyped bridge cannot join two incompatible types either
    angles = {"Orion": 0, "Orion Group": 5, "Orion Nebula": 10}
    res = _resolve([("Orion", "unknown", 3), ("Orion Group", "organization", 1), ("Orion Nebula", "location", 1)],
                   threshold=0.9, embed=DesignedEmbedder(angles))
    assert _merged(res) == {"orion group": "orion"}
    assert len(set(res.mapping.values())) == 2


def test_threshold_none_turns_off_only_the_embedding_rule():
    ents = [("Agent Alex Mercer", "person", 1), ("Alex Mercer", "person", 2), ("Alex", "person", 1),
            ("IBM", "organization", 1), ("International Business Machines", "organization", 1),
            ("Dulce Base", "location", 2), ("Dulce Military Base", "location", 1)]
    angles = {"Dulce Base": 0, "Dulce Military Base": 10}
    on = _resolve(ents, threshold=0.9, embed=DesignedEmbedder(angles))
    emb = DesignedEmbedder(angles)
    off = _resolve(ents, threshold=None, embed=emb)
    assert on.merges == {"title": 1, "name-subset": 1, "acronym": 1, "embedding": 1}
    assert off.merges == {"title": 1, "name-subset": 1, "acronym": 1, "embedding": 0}
    assert _merged(on) == dict(_merged(off), **{"dulce military base": "dulce base"})
    assert emb.batches == [] and off.embedded == 0


def test_embedder_is_not_called_with_fewer_than_two_entities():
    def boom(texts):
        raise AssertionError("embed called")

    res = _resolve([("Alex", "person", 1), ("Alex Mercer", "person", 1)], threshold=0.9, embed=boom)
    assert _merged(res) == {"alex": "alex mercer"} and res.embedded == 0


def test_log_names_the_final_entity_of_a_chain():
    res = _resolve([("Dr. Chen", "person", 1), ("Chen", "person", 1), ("Wei Chen", "person", 2)])
    assert _merged(res) == {"dr chen": "wei chen", "chen": "wei chen"}
    first = res.log[0]
    assert (first.norm, first.into_norm, first.rule) == ("dr chen", "wei chen", "title")
    assert "'Chen' was merged into 'Wei Chen'" in first.detail


def test_wrong_embedding_shape_is_an_error():
    with pytest.raises(ValueError, match="shape"):
        _resolve([("Site A", "location", 1), ("Site B", "location", 1)], threshold=0.9,
                 embed=lambda texts: np.zeros((1, 4)))
