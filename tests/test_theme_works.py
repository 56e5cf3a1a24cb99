"""Work by work: a corpus-wide answer over a corpus of distinct works lists what each discusses on its own."""

from __future__ import annotations

import hashlib
from collections import Counter
import re

import numpy as np
from conftest import theme_index

from slmgraph.query.theme_works import corpus_works, works_overview, works_section
from slmgraph.query.themes import with_works

GUESTS = ["ADA LOVELACE", "BORIS KARLOV", "CLARA OSWIN", "DORA MILAJE", "EMIL ZOLAR", "FIONA GALLAGHER"]
OWN = ["harbour lights", "glacier ice", "steam engines", "coral reefs", "tax policy", "jazz chords"]


class HashEmbedder:
    """A phrase's vector is the sum of its words' hashed directions: texts sharing words are near."""

    name, dim = "hash-fake", 64

    def encode(self, texts, progress=False):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
            out[i] /= max(np.linalg.norm(out[i]), 1e-9)
        return out


def _corpus(n=6, review=False, bracketed=False):
    """``n`` works of two units: the host speaks in all, each work's guest speaks of the work's own phrase, and
    every work mentions "computer science". With ``review``, a last work replays the first guest briefly;
    with ``bracketed``, each work also notes "(studio applause)" in both units."""
    units, mentions = [], []
    for i in range(n):
        own = OWN[i]
        for j in range(2):
            text = (f"KEVIN SCOTT: Welcome back, we talk computer science today.\n"
                    f"{GUESTS[i]}: I love {own}, and {own} again, and {own} once more, with {own}.")
            if bracketed:
                text += "\n(studio applause) (studio applause) (studio applause)"
            c = f"u{i}-{j}"
            units.append((c, f"w{i}", j, text))
            mentions += [(c, own, own), (c, "computer science", "computer science")]
            if bracketed:
                mentions.append((c, "studio applause", "studio applause"))
    if review:
        for j in range(2):
            c = f"r-{j}"
            # the first guest speaks in one of the review's units, against two of their own work's
            guest = f"{GUESTS[0]}: Briefly, {OWN[0]} and {OWN[0]} and {OWN[0]}.\n" if j == 0 else ""
            units.append((c, "review", j, f"KEVIN SCOTT: A look back.\n{guest}GUS REVIEWER: Then wind farms and "
                                          f"wind farms."))
            mentions += [(c, OWN[0], OWN[0]), (c, "wind farms", "wind farms")]
    return theme_index(units, mentions=mentions, embedder=HashEmbedder())


def test_each_work_is_listed_with_its_own_subject_and_voice():
    works = corpus_works(_corpus(), HashEmbedder())
    assert [w.title for w in works] == [f"w{i}" for i in range(6)]
    for i, w in enumerate(works):
        assert w.subjects[0] == (OWN[i], 2)  # in both its passages
        # the host speaks in every work: no work's own voice
        assert w.voices == [GUESTS[i].title()]
        assert all(s != "computer science" for s, _ in w.subjects)
    text = works_section(works)
    # one-document works are documents, each told by its passages
    assert text.startswith("### Document by document")
    assert "- **Ada Lovelace** (“w0”, 2 passages): harbour lights (in 2 passages)." in text
    # the host speaks in every work, each work has a guest of its own: a series of conversations
    assert works[0].hosts == [("Kevin Scott", 6)]
    lead = works_overview(works)
    assert lead.startswith("It is a series of conversations, each document with a guest of its own")
    assert "Ada Lovelace on harbour lights" in lead


def test_a_replaying_work_does_not_take_another_works_guest():
    works = corpus_works(_corpus(review=True), HashEmbedder())
    review = next(w for w in works if w.title == "review")
    # Ada Lovelace speaks more in her own work; the reviewer is the review's own voice
    assert review.voices == ["Gus Reviewer"]


def test_a_bracketed_note_is_no_subject():
    works = corpus_works(_corpus(bracketed=True), HashEmbedder())
    assert works and all(s != "studio applause" for w in works for s, _ in w.subjects)


def test_few_works_or_no_embedder_give_no_list():
    assert corpus_works(_corpus(n=4), HashEmbedder()) == []
    assert corpus_works(_corpus(), None) == []
    assert with_works("Opening.\n\nDocuments cited:\n- [1] a", []) == "Opening.\n\nDocuments cited:\n- [1] a"


def test_the_list_goes_after_the_opening_and_before_the_documents_cited():
    works = corpus_works(_corpus(), HashEmbedder())
    text = with_works("Opening.\n\n### 1. theme\n- quote\n\nDocuments cited:\n- [1] a\n\nSources: x.", works)
    first, rest = text.split("\n\n", 1)
    assert first.startswith("Opening. It is a series of conversations")
    # after what the corpus is, when the answer opens on it
    text = with_works("These 6 documents. The themes are x.\n\nDocuments cited:", works, "These 6 documents.")
    assert text.startswith("These 6 documents. It is a series of conversations") and text.index("The themes are x") > 40
    assert rest.index("### 1. theme") < rest.index("### Document by document") < rest.index("Documents cited:")


def test_works_of_several_parts_count_their_parts():
    units, mentions = [], []
    for i in range(6):
        for j in (1, 2):
            c = f"u{i}-{j}"
            units.append((c, f"show{i}-part{j}", 0, f"KEVIN SCOTT: Hello.\n{GUESTS[i]}: {OWN[i]} and {OWN[i]}, "
                                                    f"then {OWN[i]} again."))
            mentions.append((c, OWN[i], OWN[i]))
    works = corpus_works(theme_index(units, mentions=mentions, embedder=HashEmbedder()), HashEmbedder())
    assert [(w.parts, w.subjects[0]) for w in works] == [(2, (OWN[i], 2)) for i in range(6)]
    text = works_section(works)
    assert text.startswith("### Work by work") and f"**Ada Lovelace** (“{works[0].title}”, 2 parts): harbour lights (in 2 parts)." in text
    assert works_overview(works).startswith("It is a series of conversations, each work with a guest of its own")


def test_works_without_a_host_have_subjects_of_their_own():
    units, mentions = [], []
    for i in range(6):
        for j in range(2):
            units.append((f"u{i}-{j}", f"w{i}", j, f"{OWN[i]} and {OWN[i]}, then {OWN[i]} again."))
            mentions.append((f"u{i}-{j}", OWN[i], OWN[i]))
    works = corpus_works(theme_index(units, mentions=mentions, embedder=HashEmbedder()), HashEmbedder())
    assert works and not works[0].hosts
    assert works_overview(works).startswith("Each document also has subjects of its own (listed document by document")


def test_a_compilation_names_no_voice():
    units, mentions = [], []
    for i in range(6):
        for j in range(4):
            # the work's own speaker speaks in one of its four units, the host in all
            guest = f"{GUESTS[i]}: A word.\n" if j == 0 else ""
            units.append((f"u{i}-{j}", f"w{i}", j, f"KEVIN SCOTT: {OWN[i]}, {OWN[i]} and {OWN[i]}.\n{guest}"))
            mentions.append((f"u{i}-{j}", OWN[i], OWN[i]))
    works = corpus_works(theme_index(units, mentions=mentions, embedder=HashEmbedder()), HashEmbedder())
    assert works and all(w.voices == [] for w in works)
    assert works_overview(works).startswith("Each document also has subjects of its own")


def test_no_list_when_few_works_have_subjects_of_their_own():
    units, mentions = [], []
    for i in range(6):
        # only the first two works say their phrase in two units; the others once
        for j in range(2 if i < 2 else 1):
            units.append((f"u{i}-{j}", f"w{i}", j, f"KEVIN SCOTT: Hi.\n{GUESTS[i]}: {OWN[i]}, {OWN[i]} and {OWN[i]}."))
            mentions.append((f"u{i}-{j}", OWN[i], OWN[i]))
    assert corpus_works(theme_index(units, mentions=mentions, embedder=HashEmbedder()), HashEmbedder()) == []


def test_who_the_guests_are_work_by_work():
    from slmgraph.query.theme_works import cast_answer

    ix = _corpus(review=True)
    text, points, cited = cast_answer(ix, "Who are the guests on the show?")
    lines = text.split("\n")
    assert lines[0] == "Kevin Scott hosts all 7 documents; the guests, document by document (7 in all):"
    assert "- **Ada Lovelace**: “w0” [Sources: " in text
    assert "- **Gus Reviewer**: “review”" in text and len(cited) == len(points) == 7
    assert cast_answer(ix, "What are the main themes?") is None
    assert cast_answer(ix, "Which guests were interviewed in these episodes?") is not None
    # a question about what some guests say or think is no question of who the guests are
    for q in ("Which guests are against the harbour plan?", "Which guests are in favour of the plan?",
              "Who are the guests that worry about drones?", "Which guests are from medicine?"):
        assert cast_answer(ix, q) is None, q
    # without speaker labels there is no cast to tell
    plain = theme_index([("a", "d1", 0, "A plain text."), ("b", "d2", 0, "Another one.")])
    assert cast_answer(plain, "Who are the speakers?") is None


def test_a_compilation_names_the_voices_it_replays():
    from slmgraph.query.theme_works import cast_answer

    units = []
    for i in range(5):
        units.append((f"u{i}", f"w{i}", 0, f"KEVIN SCOTT: Hi.\n{GUESTS[i]}: My own words here."))
    clips = "\n".join(f"{g}: A clip." for g in GUESTS[:3])
    units += [(f"r{j}", "review", j, f"KEVIN SCOTT: Looking back.\n{clips}" if j == 0 else "KEVIN SCOTT: More.")
              for j in range(4)]
    text, _, _ = cast_answer(theme_index(units), "Who were the guests?")
    assert "- “review”: no guest of its own; it replays Ada Lovelace, Boris Karlov and Clara Oswin [Sources: " in text


def test_a_co_host_beside_the_guests_is_no_guest_and_a_guest_filed_in_parts_is():
    from slmgraph.query.theme_works import co_hosts

    order = ["e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9", "e10"]
    spoke = {w: Counter({"HOST": 2, f"GUEST {w.upper()}": 2}) for w in order}
    for w in ("e2", "e5", "e7", "e10"):
        spoke[w]["CO HOST"] = 1
    assert co_hosts(spoke, order) == {"HOST", "CO HOST"}
    # a guest whose interview is filed in three parts speaks beside no one but the host
    parts = {w: Counter({"HOST": 2, "LONG GUEST": 2}) for w in ("p1", "p2", "p3")}
    parts.update({w: Counter({"HOST": 2, f"GUEST {w}": 2}) for w in ("q1", "q2", "q3", "q4", "q5", "q6")})
    assert co_hosts(parts, list(parts)) == {"HOST"}


def test_who_the_guests_are_and_what_they_do_quotes_how_each_work_introduces_them():
    from slmgraph.query.theme_works import cast_answer

    units = [(f"u{i}", f"w{i}", 0, f"KEVIN SCOTT: Welcome. My guest today is {g.title()}, a {job} from the coast.\n"
                                   f"{g}: I was a shy child, and I still am.\n{g}: Thanks for having me.")
             for i, (g, job) in enumerate(zip(GUESTS[:4], ("baker", "pilot", "nurse", "judge")))]
    ix = theme_index(units)
    text, _, _ = cast_answer(ix, "Who are the guests and what fields do they come from?")
    first = GUESTS[0].title()
    assert f"- **{first}**: “w0”: “My guest today is {first}, a baker from the coast.” [Sources: 1]" in text, text
    # the guest's own "I was a shy child" introduces no one
    assert "shy child" not in text
    plain, _, _ = cast_answer(ix, "Who are the guests?")
    assert "baker" not in plain


def test_a_guest_is_introduced_by_first_name_in_their_own_conversation_and_only_as_the_subject():
    from slmgraph.query.theme_works import _introduced

    text = ("KEVIN SCOTT: I met Tom when I was a young engineer, and the rest is history. Yeah, so Tom is a carpenter who "
            "builds boats.\nTOM BROOK: Thanks for having me.")
    ix = theme_index([("u0", "w0", 0, text), ("u1", "w1", 0, "KEVIN SCOTT: Welcome.\nADA PIKE: Hello.")])
    of = {d.doc_id: d.doc_id for d in ix.docs}
    # "I was a young engineer" says who the host was, not the guest
    assert _introduced(ix, of, "w0", ["Tom Brook"]) == "“Tom is a carpenter who builds boats.”"
    assert _introduced(ix, of, "w1", ["Ada Pike"]) == ""


def test_a_speaker_introduced_as_a_co_host_is_a_host_however_few_works_they_speak_in():
    from slmgraph.query.theme_works import cast_answer

    units = [(f"u{i}", f"w{i}", 0, f"KEVIN SCOTT: Welcome. My guest today is {g.title()}, a baker.\n"
                                   f"{g}: I bake bread every morning.\n")
             for i, g in enumerate(GUESTS[:4])]
    units[3] = ("u3", "w3", 0, f"KEVIN SCOTT: With me in the studio is my co-host and producer, Jonah Reed. My guest "
                               f"today is {GUESTS[3].title()}, a baker.\nJONAH REED: Glad to be here.\n"
                               f"{GUESTS[3]}: I bake bread every morning.\n")
    text, _, _ = cast_answer(theme_index(units), "Who are the guests?")
    assert "with Jonah Reed in 1" in text, text
    assert "**Jonah Reed" not in text and f"**{GUESTS[3].title()}**" in text
