"""What a text unit's sentences say about its names, with no model call: same-sentence co-occurrence as
relationships (:func:`cooccurrence`, :func:`add_cooccurrence`) and descriptions grounded in the text
(:func:`text_descriptions`: a model's sentences the text does not support are replaced by the text's own).
"""

from __future__ import annotations

from slmgraph.names.forms import content_words, cut, is_grounded, mentions, normalize_name, quoted_sentence
from slmgraph.names.kinds import furniture, list_spans, names_only
from slmgraph.text.prose import sentence_spans, sentences

def says_more(sentence: str, names) -> bool:
    """True when ``sentence`` has a content word beyond ``names`` (a heading such as "Acme Robotics." or
    "Chapter 3." describes nothing, so it is never taken as a description)."""
    own = {w for n in names for w in content_words(n)}
    return any(w not in own for w in content_words(sentence))


def cooccurrence(text: str, names: list[str], max_chars: int) -> tuple[dict[str, str], dict[tuple[str, str], list[str]]]:
    """Sentence-level co-occurrence of ``names`` in ``text``; list lines (attendance, signature, distribution
    and "cc" lines, comma lists of names: :func:`slmgraph.names.kinds.list_spans`, :func:`slmgraph.names.kinds.names_only`)
    and a letter's furniture (:func:`slmgraph.names.kinds.furniture`) give no pair and no description.

    Returns:
        ``(first_sentence, pairs)``: normalised name -> first sentence that
        mentions it; sorted normalised pair -> the sentences mentioning both.
    """
    keys = {normalize_name(n): n for n in names}
    first_sentence: dict[str, str] = {}
    pairs: dict[tuple[str, str], list[str]] = {}
    listed = list_spans(text)
    for a0, b0 in sentence_spans(text):
        sent = text[a0:b0]
        found = [k for k in keys if mentions(sent, keys[k])]
        # a salutation or a sign-off ("Dear Chair Okafor and members of the Board,") addresses, states nothing
        in_list = any(a0 < b and a < b0 for a, b in listed) or furniture(sent)
        for k in found:
            if says_more(sent, [keys[k]]) and not in_list:  # who was there describes no one
                first_sentence.setdefault(k, cut(sent, max_chars))
        if len(found) > 1 and (in_list or names_only(sent, list(keys.values()))):
            continue  # "Present: ...", "cc: ...", a signature, a comma list of names: no relationship stated
        for i, a in enumerate(found):
            for b in found[i + 1:]:
                pairs.setdefault((min(a, b), max(a, b)), []).append(cut(sent, max_chars))
    return first_sentence, pairs

def add_cooccurrence(text: str, ents: list[dict], rels: list[dict], max_chars: int) -> int:
    """Add a relationship for each pair of extracted entities named in one
    sentence that the model did not relate (strength = number of such
    sentences, at most 10; description = the first such sentence).

    A 135M model relates few pairs and most are self-loops (ARCHITECTURE.md "Extraction quality"); the
    text's co-occurrence keeps the graph connected. Returns how many were added.
    """
    have = {(min(normalize_name(r["source"]), normalize_name(r["target"])),
             max(normalize_name(r["source"]), normalize_name(r["target"]))) for r in rels}
    names = {normalize_name(e["name"]): e["name"] for e in ents}
    _, pairs = cooccurrence(text, list(names.values()), max_chars)
    added = 0
    for (a, b), sents in sorted(pairs.items()):
        if (a, b) in have:
            continue
        rels.append({"source": names[a], "target": names[b], "description": sents[0],
                     "strength": min(10, len(sents))})
        added += 1
    return added

#: Share of a description sentence's content words (the record's own names left out) that must occur in
#: the text unit for the sentence to be kept: a sentence copied from the prompt's few-shot example
#: ("Took over a chair at the Sorbonne in 1906.") shares few, a faithful one most.
SENTENCE_GROUNDING = 0.5


def grounded_sentences(description: str, words: set[str], names: list[str]) -> str:
    """The sentences of a model-written ``description`` that are grounded in the text unit, joined: each
    keeps at least :data:`SENTENCE_GROUNDING` of its content words other than ``names``' (the record's own
    names, which the description may repeat) among ``words`` (the text unit's content words); a sentence
    with no such word says nothing and is dropped too. Empty when no sentence is grounded."""
    own = {w for n in names for w in content_words(n)}
    kept = []
    for snt in sentences(description or ""):
        told = [w for w in content_words(snt) if w not in own]
        if told and sum(w in words for w in told) >= SENTENCE_GROUNDING * len(told):
            kept.append(snt)
    return " ".join(kept)


def text_descriptions(text: str, ents: list[dict], rels: list[dict], max_chars: int) -> int:
    """Ground descriptions in the text unit, in place.

    Each sentence of a description that is not grounded in the text unit (:func:`grounded_sentences`: an
    invented sentence, or one copied from the few-shot example) is dropped, as invented names are. An
    entity whose description is then empty, or shares less than a third of its
    content words with the text, gets the
    first sentence of the text that mentions it; a relationship likewise gets
    the first sentence mentioning both ends, else the two first-mention
    sentences. Returns the number of descriptions replaced.
    """
    sents = sentences(text)
    words = set(content_words(text))
    replaced = 0
    for e in ents:
        if e.get("description"):
            e["description"] = grounded_sentences(e["description"], words, [e["name"]])
    for r in rels:
        if r.get("description"):
            r["description"] = grounded_sentences(r["description"], words, [r["source"], r["target"]])

    def grounded(d: str) -> bool:
        return is_grounded(d, words)

    persons = {e["name"]: e["name"] for e in ents if e.get("type") == "person"}

    def first(*names: str) -> str:
        alone = ""  # a last resort: the sentence as it is when no quote of it can say who "she" is
        for k, snt in enumerate(sents):
            if all(mentions(snt, n) for n in names):
                quote = quoted_sentence(sents, k, persons, max_chars)
                if quote is not None:
                    return quote
                alone = alone or cut(snt, max_chars)
        return alone

    for e in ents:
        if not grounded(e.get("description", "")):
            e["description"] = first(e["name"])
            replaced += 1
    for r in rels:
        if not grounded(r.get("description", "")):
            both = first(r["source"], r["target"])
            if not both:
                a, b = first(r["source"]), first(r["target"])
                both = cut(a + (" " + b if b and b != a else ""), max_chars)
            r["description"] = both
            replaced += 1
    return replaced
