"""``--method auto``: route a question to global (or lazy) or local search.

A cheap rule, no model call: a question that contains one of the phrases in
``prompts/auto_global.txt`` (themes, trends, "across", "overall", ...) asks
about the whole corpus and goes to global search -- to lazy search on an
index built with ``--no-reports``, which has no reports to map over; any
other question is taken to be about named things and goes to local search.
DRIFT is not chosen automatically (see :func:`route`). Users tailor the
phrases by copying the file into their ``--prompts`` folder.
"""

from __future__ import annotations

from ..prompting import Prompts


def global_phrases(prompts: Prompts) -> list[str]:
    """The routing phrases (lower case), comments and blank lines skipped."""
    return [ln.strip().lower() for ln in prompts.text("auto_global").splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]


def corpus_wide_phrase(question: str, prompts: Prompts) -> str | None:
    """The first routing phrase in ``question`` (it asks about the whole corpus), or None.

    Such a question has an answer in any non-empty index, so global and DRIFT
    search do not refuse it by the helpfulness floor (which exists to refuse
    questions the corpus cannot answer)."""
    q = question.lower()
    return next((ph for ph in global_phrases(prompts) if ph in q), None)


def route(question: str, prompts: Prompts, reports: bool = True) -> tuple[str, str]:
    """``(method, reason)``: ``global`` (``lazy`` when the index has no community
    reports, ``reports`` False: built with ``--no-reports``) or ``local``, and why, in words.

    DRIFT is never chosen: it costs a global primer plus local searches, and
    no measurement yet shows which questions it answers better (it is asked for
    with ``--method drift``)."""
    q = question.lower()
    for phrase in global_phrases(prompts):
        if phrase in q:
            if not reports:
                return "lazy", (f'the question mentions "{phrase}", which asks about the whole corpus, and the '
                                "index has no community reports (--no-reports)")
            return "global", f'the question mentions "{phrase}", which asks about the whole corpus'
    return "local", "the question names no corpus-wide theme, so it is answered from the nearest entities"
