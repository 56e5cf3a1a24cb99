"""A coarse language of a text for the candidate pass (script share, then function words per sentence), and
what a warning says about a language the pass reads poorly.
"""

from __future__ import annotations

import functools
import re

from slmgraph.text.prose import SPECIAL_TOKEN, sentences

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_GERMAN = frozenset("der die das und ist nicht ein eine einen dem den des mit von zu auf für sich auch wird wurde "
                    "im bei nach aus über wie noch sind hat haben werden dass oder".split())
_ENGLISH = frozenset("the and is of to in that it was for with as on be by at this are from have has not".split())


def script_language(text: str) -> str | None:
    """``zh``, ``ja`` (with kana) or ``ko`` (Hangul) when CJK characters (Unicode blocks: kana, CJK
    ideographs and extension A, Hangul syllables) are over 30 % of the letters of ``text``; else None."""
    letters = sum(c.isalpha() for c in text)
    if not letters or len(_CJK.findall(text)) <= 0.3 * letters:
        return None
    if re.search(r"[\u3040-\u30ff]", text):
        return "ja"
    if re.search(r"[\uac00-\ud7af]", text):
        return "ko"
    return "zh"


def _sentence_language(words: list[str]) -> tuple[str | None, int]:
    """``(language, German function words)`` of one sentence's casefolded words: ``de`` or ``en`` by
    which language's function words it has more of, None on a tie (a list of names, a heading)."""
    de = sum(w in _GERMAN for w in words)
    en = sum(w in _ENGLISH for w in words)
    return ("de" if de > en else "en" if en > de else None), de


def text_language(text: str) -> str:
    """A coarse language of ``text`` for the candidate pass: ``zh`` (Chinese script), ``ja`` (with kana),
    ``ko`` (Hangul), ``de`` (German), else ``en``.

    Script share: CJK characters over 30 % of the letters. German or English is decided per sentence
    (:func:`slmgraph.text.prose.sentences`) by function words -- the 20-30 most frequent words of each
    language (any word list of the language agrees on them) -- and the text is German only when its
    German sentences hold more words than its English ones: one German quotation in an English text
    leaves it English. Special-token strings ("<|im_end|>") are not words; a text with neither
    language's function words counts as English.
    """
    text = SPECIAL_TOKEN.sub(" ", text)  # "<|im_end|>": markup, and "im" is a German function word
    script = script_language(text)
    if script is not None:
        return script
    share = {"de": 0, "en": 0}
    german = 0
    for sentence in sentences(text):
        words = re.findall(r"[^\W\d_]+", sentence.casefold())
        lang, de = _sentence_language(words)
        if lang is not None:
            share[lang] += len(words)
            german += de if lang == "de" else 0
    return "de" if share["de"] > share["en"] and german >= 2 else "en"


#: Language codes of :func:`text_language` -> names in warnings.
LANGUAGE_NAMES = {"zh": "Chinese", "ja": "Japanese", "ko": "Korean", "de": "German", "en": "English"}

#: Why a language gets no (or fewer) candidates, for the one warning per language and run.
LANGUAGE_NOTES = {
    "zh": "Chinese text has no capital letters, so the capitalised-run pass finds no names in it, and the English "
          "NER pipeline does not read it: pass --ner-model with an installed Chinese spaCy pipeline "
          "(e.g. zh_core_web_sm)",
    "ja": "Japanese text has no capital letters, so the capitalised-run pass finds no names in it, and the English "
          "NER pipeline does not read it: pass --ner-model with an installed Japanese spaCy pipeline "
          "(e.g. ja_core_news_sm)",
    "ko": "Korean text has no capital letters, so the capitalised-run pass finds no names in it, and the English "
          "NER pipeline does not read it: pass --ner-model with an installed Korean spaCy pipeline "
          "(e.g. ko_core_news_sm)",
    "de": "German capitalises every noun: only multi-word capitalised names are candidates in German text and the "
          "English NER pipeline is not run on it; pass --ner-model with an installed German spaCy pipeline "
          "(e.g. de_core_news_sm) for single-word names",
}


#: Languages :func:`stopword_language` tells apart by spaCy's stop-word lists (``spacy.lang.<code>.stop_words``,
#: shipped with spaCy itself, no pipeline needed).
STOPWORD_LANGUAGES = {"en": "English", "de": "German", "es": "Spanish", "fr": "French", "it": "Italian",
                      "pt": "Portuguese", "nl": "Dutch"}


@functools.lru_cache(maxsize=None)
def stop_words(lang: str) -> frozenset[str]:
    """spaCy's stop words of language ``lang`` (a key of :data:`STOPWORD_LANGUAGES`), casefolded."""
    import importlib

    return frozenset(w.casefold() for w in importlib.import_module(f"spacy.lang.{lang}.stop_words").STOP_WORDS)


def stopword_language(text: str) -> str | None:
    """The language (a key of :data:`STOPWORD_LANGUAGES`) of whose stop words ``text`` holds the most, when that
    is two words at least and no other language has as many; else None (a list of names, or too few words to
    tell). "Was sind die wichtigsten Themen?" -> ``de`` (3 German stop words, 1 English); "Die Hard trivia?" ->
    None (one German stop word is no evidence)."""
    words = re.findall(r"[^\W\d_]+", text.casefold())
    counts = {lang: sum(w in stop_words(lang) for w in words) for lang in STOPWORD_LANGUAGES}
    top = max(counts.values())
    best = [lang for lang, n in counts.items() if n == top]
    return best[0] if top >= 2 and len(best) == 1 else None


#: Language names of :func:`question_language`'s codes.
QUESTION_LANGUAGES = {**STOPWORD_LANGUAGES, "zh": "Chinese", "ja": "Japanese", "ko": "Korean"}


def question_language(text: str) -> str | None:
    """The language of a question or a sample of documents (a key of :data:`QUESTION_LANGUAGES`): its script
    (:func:`script_language`: Chinese, Japanese, Korean, which have no stop words spaced apart), else
    :func:`stopword_language`; None when neither tells."""
    return script_language(text) or stopword_language(text)


def _words(text: str) -> list[str]:
    """The casefolded words of ``text``; a run of CJK characters is a word of its own, apart from Latin
    letters written against it ("Luis是谁" -> "luis", "是谁")."""
    return re.findall(r"[^\W\d_]+", _CJK_RUN.sub(lambda m: f" {m.group()} ", text.casefold()))


_CJK_RUN = re.compile(_CJK.pattern + "+")


def foreign_question_note(question: str, documents_sample: str, in_index) -> str | None:
    """One line saying why an index cannot answer ``question``: it is in another language than the indexed
    documents (:func:`question_language` of each; ``documents_sample``: some of their text) and none of its
    words but that language's stop words occur in them (``in_index(word) -> bool``; a CJK question's words are
    its runs of CJK characters and of other letters). None otherwise: either language unknown, the same
    language, or a word of the question in the index."""
    lang = question_language(question)
    if lang is None:
        return None
    docs = question_language(documents_sample)
    if docs is None or lang == docs:
        return None
    stops = stop_words(lang) if lang in STOPWORD_LANGUAGES else frozenset()
    words = sorted({w for w in _words(question) if w not in stops})
    if any(in_index(w) for w in words):
        return None
    return (f"The indexed documents are in {QUESTION_LANGUAGES[docs]} and the question seems to be in "
            f"{QUESTION_LANGUAGES[lang]}: none of its words occur in them; ask in {QUESTION_LANGUAGES[docs]}.")
