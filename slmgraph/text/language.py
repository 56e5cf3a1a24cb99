"""A coarse language of a text for the candidate pass (script share, then function words per sentence), and
what a warning says about a language the pass reads poorly.
"""

from __future__ import annotations

import re

from slmgraph.text.prose import SPECIAL_TOKEN, sentences

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_GERMAN = frozenset("der die das und ist nicht ein eine einen dem den des mit von zu auf für sich auch wird wurde "
                    "im bei nach aus über wie noch sind hat haben werden dass oder".split())
_ENGLISH = frozenset("the and is of to in that it was for with as on be by at this are from have has not".split())


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
    letters = [c for c in text if c.isalpha()]
    if letters:
        cjk = _CJK.findall(text)
        if len(cjk) > 0.3 * len(letters):
            if re.search(r"[\u3040-\u30ff]", text):
                return "ja"
            if re.search(r"[\uac00-\ud7af]", text):
                return "ko"
            return "zh"
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
