"""The text of a community report made from the data: titles, summaries and findings built from a
community's elements (:func:`data_report`, :func:`text_findings`), the :class:`Report` record, and the
checks that replace a model's ungrounded or order-giving text with such text (:func:`ground_report`,
:func:`without_orders`).

With models under 1B parameters (``Settings.reports`` = ``auto``, the default; ``data`` forces it)
reports are built from the data with no model call (:func:`data_report`): the title is a noun phrase
of the community's most-connected entities, the summary says what the community is about (its main
entities, their types, its size) before quoting its top relationship, and the findings are
:func:`text_findings`. A small model's titles and summaries are unusable and slow to write, while data
reports separate on-topic from off-topic questions (docs/decisions.md: data-built reports under 1B).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from slmgraph.indexing.stages.topics import Topic
from slmgraph.names.forms import STOP, content_words, cut, is_grounded
from slmgraph.store.rows import EntityRow, RelationshipRow
from slmgraph.text.prose import addressed_to_assistant, degenerate, markdown_structure, plain_sentence, sentences

#: Characters of a data-built finding's explanation (whole sentences, :func:`whole_sentences`); an
#: extractive answer quotes a finding's sentences up to the same length
#: (:func:`slmgraph.query.extractive.report_points`), so a sentence a finding holds whole is quoted whole.
FINDING_MAX_CHARS = 400
#: Distinct descriptions whose statements are kept split (:func:`_statements`): more than a 400k-token
#: corpus's entities and relationships hold, some tens of MB of text at most.
STATEMENTS_CACHE = 32768


def whole_sentences(sents: list[str], max_chars: int) -> list[str]:
    """The first sentence of ``sents`` and those after it, in order, that fit ``max_chars`` characters
    together (joined by one space): a later sentence that would overflow is skipped and a shorter one
    after it may still fit. A first sentence longer than ``max_chars`` is the only one, cut at a word
    boundary with an ellipsis (:func:`slmgraph.names.forms.cut`): only a single sentence longer than the
    limit is ever cut, and the first (the description's own first mention) is always there. (Cutting
    the joined text at the limit cut many quoted sentences; docs/decisions.md: whole sentences in
    findings.)"""
    if not sents:
        return []
    if len(sents[0]) > max_chars:
        return [cut(sents[0], max_chars)]
    out = [sents[0]]
    used = len(sents[0])
    for s in sents[1:]:
        if used + 1 + len(s) <= max_chars:
            out.append(s)
            used += 1 + len(s)
    return out

def text_findings(e_rows: list[EntityRow], r_rows: list[RelationshipRow], n: int = 5,
                  max_chars: int = FINDING_MAX_CHARS,
                  claims: list[dict] | None = None) -> list[dict]:
    """Findings taken from the data: the top relationships by combined degree
    (summary "A and B", explanation = the sentences of its description not
    already used by a higher finding), then the top claims in
    :func:`ranked_claims` order (summary "Subject: TYPE (STATUS)"), then the
    top entities' descriptions; at most ``n``. A bare speaker turn (:func:`bare_turn`) is never a finding's
    sentence. Descriptions come from the text
    or the extractor. Sentences that give orders to an assistant, and elements
    whose name is one ("PWNED"), are left out
    (:func:`slmgraph.text.prose.addressed_to_assistant`); so is Markdown structure (a table
    row, a heading: :func:`slmgraph.text.prose.markdown_structure`), and inline Markdown is
    rendered as plain text (:func:`slmgraph.text.prose.plain_sentence`). An explanation is
    the whole sentences that fit ``max_chars`` characters (:func:`whole_sentences`).

    Args:
        claims: claims of the members as from :func:`slmgraph.indexing.stages.claims.load_claims`
            (None or empty: no claim findings).
    """
    by_id = {e.entity_id: e for e in e_rows}
    out: list[dict] = []
    used: set[str] = set()

    def fresh(desc: str) -> str:
        new = [p for p in _statements(desc) if p not in used and not bare_turn(p)]
        kept = whole_sentences(new, max_chars)
        used.update(p for p in new if p in kept)
        if kept and kept[0] not in new:  # the first sentence, cut: used all the same
            used.add(new[0])
        return " ".join(kept)

    def order(eid) -> bool:  # an entity "named" by an injected order ("PWNED")
        return eid in by_id and addressed_to_assistant(str(by_id[eid].name))

    for r in sorted(r_rows, key=edge_rank):
        if len(out) >= n:
            break
        if order(r.source_id) or order(r.target_id):
            continue
        text = fresh(r.description)
        if text:
            out.append({"summary": f"{by_id[r.source_id].name} and {by_id[r.target_id].name}", "explanation": text})
    for c in ranked_claims(claims or [], by_id):
        if len(out) >= n:
            break
        text = fresh(c["description"])
        if text:
            out.append({"summary": f"{c['subject']}: {c['type']} ({c['status']})", "explanation": text})
    for e in sorted(e_rows, key=entity_rank):
        if len(out) >= n:
            break
        if order(e.entity_id):
            continue
        text = fresh(e.description)
        if text:
            out.append({"summary": e.name, "explanation": text})
    return out

#: A speaker turn: a label in capitals and a colon opening the sentence ("DR. SMITH: Thank you, Mayor.").
_TURN = re.compile(r"^[^\W\d_a-z][^\Wa-z\d_]*(?:[ .'\u2019&/-]+[^\W\d_a-z]+)*\.?[ \t]*:[ \t]*(.*)$", re.S)
#: Fewest words after the label of a speaker turn that states something (a bare turn thanks or agrees).
TURN_MIN_WORDS = 5


def bare_turn(sentence: str) -> bool:
    """True for a speaker turn that states nothing: a label in capitals and a colon, then fewer than
    :data:`TURN_MIN_WORDS` words ("DR. SMITH: Thank you, Mayor.", "COUNCILLOR REYES: That is correct."): never
    a finding."""
    m = _TURN.match(sentence.strip())
    return bool(m) and len(m.group(1).split()) < TURN_MIN_WORDS

def ground_report(d: dict, context: str, e_rows: list[EntityRow], r_rows: list[RelationshipRow]) -> int:
    """Replace a title or summary that is not grounded in the report's context, in place.

    A 135M model writes titles like "The Power of Unity" for any community
    (measured on dulce.txt); such text shares few words with the context
    (:func:`slmgraph.names.forms.is_grounded`). Title fallback: the three
    most-connected entities; summary fallback: their names and the top
    relationship. Returns the number of fields replaced.
    """
    words = set(content_words(context))
    top = [e.name for e in sorted(e_rows, key=entity_rank)[:3]]
    names = ", ".join(top[:-1]) + (" and " if len(top) > 1 else "") + top[-1] if top else "Community"
    n = 0
    if not is_grounded(d["title"], words, 0.5) or degenerate(d["title"]) or d["title"].count(",") > 3:
        d["title"] = names
        n += 1
    if degenerate(d.get("rating_explanation", "")):
        d["rating_explanation"] = ""
    if not is_grounded(d["summary"], words, 0.5) or degenerate(d["summary"]):
        facts = text_findings(e_rows, r_rows, 1)
        d["summary"] = (f"A community of {len(e_rows)} entities, most connected {names}."
                        + (f" {facts[0]['explanation']}" if facts else ""))
        n += 1
    return n

_FILE_NAME = re.compile(r"(?i)\.(txt|md|json|csv|html?|pdf|docx?)$")


def display_name(name: str) -> str:
    """A name as shown in a title: ALL-CAPS names of several letters title-cased
    ("KEVIN SCOTT" -> "Kevin Scott"; transcripts write speakers in capitals),
    acronyms ("NASA", "K-12") and mixed-case names kept."""
    words = name.split()
    if len(words) > 1 and name.isupper():
        return " ".join(w.capitalize() if len(w) > 3 or w.isalpha() and len(w) > 2 else w for w in words)
    return name


def lowercase_words(texts) -> set[str]:
    """Words that occur in lower case somewhere in ``texts`` (an iterable of
    strings): a one-word name among them is an ordinary word the candidate
    pass took for a name at a sentence start ("Behind", "Hey")."""
    out: set[str] = set()
    for t in texts:
        out.update(re.findall(r"\b[a-z][a-z'-]+\b", t or ""))
    return out


def title_entities(e_rows: list[EntityRow], n: int = 3, common: set[str] | frozenset = frozenset()) -> list[str]:
    """Up to ``n`` names for a community's title: its entities by degree, then id,
    skipping file names ("episode.txt"), stop words, names that are orders to an
    assistant (:func:`slmgraph.text.prose.addressed_to_assistant`: "PWNED"), one-word names in
    ``common`` (:func:`lowercase_words` of the corpus), names of one or two
    characters, and names whose words are all in a name already chosen
    ("Scott" after "Kevin Scott"). Falls back to the top entity when every
    name is skipped.

    Args:
        e_rows: the members (``entity_id``, ``name``, ``degree`` read).
    """
    chosen: list[str] = []
    words_used: set[str] = set()
    ranked = sorted(e_rows, key=entity_rank)
    for e in ranked:
        name = display_name(str(e.name).strip())
        words = set(re.findall(r"\w+", name.casefold()))
        if (not words or _FILE_NAME.search(name) or len(name) <= 2 or name.casefold() in STOP
                or addressed_to_assistant(name)
                or (len(words) == 1 and name.casefold() in common) or words <= words_used):
            continue
        chosen.append(name)
        words_used |= words
        if len(chosen) >= n:
            break
    if not chosen and ranked:
        chosen = [display_name(str(ranked[0].name))]
    return chosen


def join_names(names: list[str]) -> str:
    """``"A, B and C"`` (``"A"``, ``"A and B"``); ``"Community"`` for none."""
    if not names:
        return "Community"
    return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]

def data_report(cid: int, level: int, e_rows: list[EntityRow], r_rows: list[RelationshipRow], claims: list[dict] | None = None,
                max_size: int = 1, common: set[str] | frozenset = frozenset(), topic: Topic | None = None,
                coverage: str = "", concepts: set[int] | frozenset = frozenset()) -> "Report":
    """A community report built from the data, no model call (models under 1B parameters).

    * title: the topic label (``topic``, :mod:`slmgraph.indexing.stages.topics`) joined as a noun phrase, then up to two
      of its most connected names not in the label ("Budget shortfall, library and council tax: Harlow
      Council"); without a topic, :func:`title_entities` joined ("Alex Mercer, Jordan Hayes and Dulce base");
    * summary: what the community is about -- its topic (else its main entities), the most
      common entity types, its size, and ``coverage`` (:func:`slmgraph.indexing.stages.topics.coverage_sentence`) --
      then the first sentence of its top relationship (by combined degree) as evidence;
    * findings: :func:`text_findings` (relationships, claims, entity descriptions);
    * rating: 10 x log(1 + size) / log(1 + largest size of the index), one
      decimal: a data proxy of the paper's importance rating (larger
      communities cover more of the corpus).

    Args:
        e_rows: the members.
        r_rows: the relationships inside the community.
        max_size: the largest community's size (for the rating).
        common: ordinary words (see :func:`title_entities`).
        topic: the community's :class:`slmgraph.indexing.stages.topics.Topic` (its ``terms`` lead the title), or None.
        coverage: the phrase saying which documents it is in ("in 3 of 8 documents, from ...").
        concepts: entity ids that are concepts (the names after the label are names, not concepts).
    """
    import math

    names = title_entities(e_rows, common=common)
    title = join_names(names)
    about = title
    if topic is not None and topic.terms:
        about = join_names(topic.terms)
        in_label = {w for t in topic.terms for w in re.findall(r"\w+", t.casefold())}
        extra = [n for n in title_entities([e for e in e_rows if e.entity_id not in concepts], common=common)
                 if not set(re.findall(r"\w+", n.casefold())) <= in_label][:2]
        title = about[:1].upper() + about[1:] + (f": {join_names(extra)}" if extra else "")
    where = f", {coverage}" if coverage else ""
    types: dict[str, int] = {}
    for e in e_rows:
        t = str(e.type or "").strip().lower()
        if t and t not in ("unknown", "none"):
            types[t] = types.get(t, 0) + 1
    kinds = sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))[:2]
    kind_txt = (" (mostly " + " and ".join(f"{k}s" if not k.endswith("s") else k for k, _ in kinds) + ")"
                if kinds else "")
    if len(e_rows) == 1 and not r_rows:
        summary = f"This community is about {about} alone{where}."
    else:
        summary = (f"This community is about {about}: {len(e_rows)} entities{kind_txt} linked by {len(r_rows)} "
                   f"relationship{'' if len(r_rows) == 1 else 's'}{where}.")
    top = sorted(r_rows, key=edge_rank)
    by_id = {e.entity_id: e for e in e_rows}
    for r in top:
        src, dst = by_id[r.source_id].name, by_id[r.target_id].name
        if addressed_to_assistant(str(src)) or addressed_to_assistant(str(dst)):
            continue
        # Evidence: the first sentence of six or more words ("KEVIN SCOTT: Yeah." says nothing).
        first = [x for x in _statements(r.description) if len(x.split()) >= 6]
        if first:
            summary += (f" For example, on {display_name(src)} and {display_name(dst)}: "
                        f"\"{cut(first[0], 240)}\"")
            break
    else:
        lone = next((e for e in sorted(e_rows, key=entity_rank) if _statements(e.description)), None)
        if lone is not None:
            summary += f" {cut(_statements(lone.description)[0], 240)}"
    rating = round(10 * math.log1p(len(e_rows)) / math.log1p(max(max_size, len(e_rows), 1)), 1)
    findings = text_findings(e_rows, r_rows, claims=claims)
    for f in findings:
        f["summary"] = " and ".join(display_name(x) for x in f["summary"].split(" and ")) \
            if " and " in f["summary"] else display_name(f["summary"])
    return Report(cid, level, title, summary, findings, rating,
                  "Data-built report: rating from the community's size.", 0, "data")

@dataclass
class Report:
    """A community report (findings: list of {summary, explanation})."""

    community_id: int
    level: int
    title: str
    summary: str
    findings: list[dict]
    rating: float
    rating_explanation: str
    context_tokens: int
    context_kind: str
    topic: str = ""  #: the topic label (slmgraph.indexing.stages.topics), stored in ``community_reports.topic``
    doc_ids: list[str] | None = None  #: the community's documents in corpus order (``community_reports.doc_ids``)

    def full_text(self) -> str:
        """The report as packed into query contexts (markdown)."""
        lines = [f"# {self.title}", "", self.summary]
        if self.findings:
            lines += ["", "Findings:"]
            lines += [f"- {f.get('summary', '')}: {f.get('explanation', '')}".rstrip(": ") for f in self.findings]
        return "\n".join(lines).strip()

def entity_rank(e: EntityRow) -> tuple:
    """Sort key of a community's entities: degree descending, then id."""
    return -e.degree, e.entity_id


def edge_rank(r: RelationshipRow) -> tuple:
    """Sort key of a community's relationships: combined degree (the paper's edge rank, sec. 3.1.5)
    descending, then weight descending, then id."""
    return -r.combined_degree, -r.weight, r.rel_id

def ranked_claims(claims: list[dict], by_id: dict) -> list[dict]:
    """Claims, one per distinct (subject, object, type, status, description),
    ranked by deg(subject) + deg(object) (0 for an entity not in ``by_id``),
    then by how many text units state them, then by content (no ids: the
    order must not change when the graph is renumbered)."""
    groups: dict[tuple, list[dict]] = {}
    for c in claims:
        groups.setdefault((c["subject"], c["object"] or "", c["type"], c["status"], c["description"]), []).append(c)

    def degree(eid) -> int:
        return by_id[eid].degree if eid in by_id else 0

    ranked = sorted(groups.items(), key=lambda kv: (-(degree(kv[1][0]["subject_id"]) + degree(kv[1][0]["object_id"])),
                                                    -len(kv[1]), kv[0]))
    return [g[0] for _, g in ranked]

def _statements(text: str | None) -> list[str]:
    """The sentences of ``text`` that are prose and not orders to an assistant, as plain text: no
    Markdown structure (:func:`slmgraph.text.prose.markdown_structure`), inline Markdown rendered
    (:func:`slmgraph.text.prose.plain_sentence`)."""
    return list(_statements_of(text or ""))


@functools.lru_cache(maxsize=STATEMENTS_CACHE)
def _statements_of(text: str) -> tuple[str, ...]:
    # A description is read again by every community above its own, at each level: split once.
    out = []
    for x in sentences(text):
        if not addressed_to_assistant(x) and markdown_structure(x) is None:
            p = plain_sentence(x)
            if p:
                out.append(p)
    return tuple(out)


def without_orders(rep: "Report", e_rows: list[EntityRow]) -> "Report":
    """``rep`` with no title, summary sentence or finding that gives orders to an
    assistant (:func:`slmgraph.text.prose.addressed_to_assistant`; docs/decisions.md:
    documents' orders are data): such a title is replaced by :func:`title_entities`, such
    sentences are dropped from the summary and the findings' explanations, and a
    finding left empty (or whose summary is an order) is dropped. A summary left
    empty says what the community is about. Returns a new Report (or ``rep``
    unchanged when nothing matched)."""
    title = rep.title
    if addressed_to_assistant(title):
        title = join_names(title_entities(e_rows))
    summary = " ".join(_statements(rep.summary)) if addressed_to_assistant(rep.summary) else rep.summary
    if not summary.strip():
        summary = f"This community is about {title}."
    findings = []
    for f in rep.findings:
        fs, fx = str(f.get("summary") or ""), str(f.get("explanation") or "")
        if addressed_to_assistant(fs):
            continue
        if addressed_to_assistant(fx):
            fx = " ".join(_statements(fx))
            if not fx:
                continue
        findings.append({**f, "summary": fs, "explanation": fx})
    if (title, summary, findings) == (rep.title, rep.summary, rep.findings):
        return rep
    import dataclasses

    return dataclasses.replace(rep, title=title, summary=summary, findings=findings)
