"""Clauses read from a dependency parse: what a sentence says its subject does, in its own words.

A clause whose subject is a given word ("AI and computation holds so much potential to help") is the usual open
relation extraction (Fader et al. 2011, ReVerb: a subject, then its verb's phrase); the parse is spaCy's. Used by
the faceted answers (what the facets' sentences say the focus does, what a field's guests say they do) and by the
trends of hopes and worries (what each half says the topic does).
"""

from __future__ import annotations

import re

from slmgraph.query.theme_model import word_stem

#: The fewest and most words of a clause kept.
ROLE_MIN_WORDS = 6
ROLE_WORDS = 16
#: A transcript's fillers: a clause holding one is a speaker searching for words.
_FILLER = re.compile(r"(?i)\b(you know|i mean|kind of|sort of|or whatever)\b|,\s*like,|\b(um|uh)\b")


def subject_clause(doc, alternatives: list[frozenset], least: int = 0) -> str:
    """The first clause of ``doc`` (a parsed sentence) whose subject holds every stem of one of ``alternatives``:
    the subject's words through its verb's phrase, trimmed of a trailing comma or conjunction; "" without one, or
    one outside ``least`` (default :data:`ROLE_MIN_WORDS`) to :data:`ROLE_WORDS` words."""
    least = least or ROLE_MIN_WORDS
    for tok in doc:
        if not any(word_stem(tok.lower_) in a for a in alternatives):
            continue
        head = tok
        while head.dep_ in ("compound", "amod", "conj", "appos", "nmod") and head.head is not head:
            head = head.head
        verb = head.head
        # a finite verb states what the focus does; "for AI to reach its potential" states nothing
        if head.dep_ not in ("nsubj", "nsubjpass") or verb.pos_ not in ("VERB", "AUX") or not (
                "Fin" in verb.morph.get("VerbForm")
                or any(c.dep_ in ("aux", "auxpass") and c.lower_ != "to" for c in verb.children)):
            continue
        held = {word_stem(x.lower_) for x in head.subtree}
        if not any(a <= held for a in alternatives):
            continue
        words = [x for x in doc[head.left_edge.i: verb.right_edge.i + 1] if not x.is_space]
        while words and (words[-1].is_punct or words[-1].dep_ in ("cc", "mark")):
            words.pop()
        while words and words[0].is_punct:
            words.pop(0)
        text = "".join(x.text_with_ws for x in words).strip()
        # a speaker still searching for words ("AI is, you know, planning ...") states no role
        if least <= sum(1 for x in words if not x.is_punct) <= ROLE_WORDS and not _FILLER.search(text):
            return text
    return ""


def topic_clause(doc, alternatives: list[frozenset], least: int = 0) -> str:
    """The smallest clause of ``doc`` (a parsed sentence) holding every stem of one of ``alternatives`` anywhere in
    it, not only in its subject ("it's a profoundly dangerous thing to just sign over to an AI"): the subtree of a
    finite verb above a word of the topic, from its subject on, a leading "that", "but", "so" or "and" dropped; none
    whose subject is "that" or "this" (it points back); "" without one of ``least`` (default
    :data:`ROLE_MIN_WORDS`) to :data:`ROLE_WORDS` words, or holding a filler."""
    least = least or ROLE_MIN_WORDS
    for tok in doc:
        if not any(word_stem(tok.lower_) in a for a in alternatives):
            continue
        verb = tok
        while verb.head is not verb:
            verb = verb.head
            if verb.pos_ in ("VERB", "AUX") and ("Fin" in verb.morph.get("VerbForm") or any(
                    c.dep_ in ("aux", "auxpass") and c.lower_ != "to" for c in verb.children)):
                break
        else:
            continue
        words = [x for x in doc[verb.left_edge.i: verb.right_edge.i + 1] if not x.is_space]
        while words and (words[0].is_punct or words[0].dep_ in ("mark", "cc", "advmod", "intj")):
            words.pop(0)
        while words and (words[-1].is_punct or words[-1].dep_ in ("cc", "mark")):
            words.pop()
        held = {word_stem(x.lower_) for x in words}
        text = "".join(x.text_with_ws for x in words).strip()
        # a clause whose subject is "that" or "this" says what something before it is: alone it points at nothing
        if words and words[0].lower_ in ("that", "this", "these", "those") and words[0].dep_.startswith("nsubj"):
            continue
        if (any(a <= held for a in alternatives) and least <= sum(1 for x in words if not x.is_punct) <= ROLE_WORDS
                and not _FILLER.search(text)):
            return text
    return ""
