"""Community reports, written bottom-up (paper sec. 3.1.5; ARCHITECTURE.md stage 6).

Context of a community, within ``report_context_tokens`` and the per-build
report budget (:func:`plan_report_budget`):

* A community none of whose children has a report (a leaf, or a community
  whose only child is its carried-down copy): its relationships ranked by
  combined degree deg(u)+deg(v) (the paper's prominence), each added with its
  source and target entity lines, until the budget is full
  (:func:`element_context`). Each description is shown without sentences
  already in the context and cut to the budget's description cap.
* A parent whose children have reports: each child's report (title and
  summary) stands for the child's members and inner relationships where it is
  shorter than they are (paper sec. 3.1.5, sub-community summaries substitute
  for element summaries), then the relationships between children and the
  elements of children without a report (:func:`_subreport_context`). Every
  element is then read once, at the deepest level that contains it, instead
  of again at every level above.
* With claims on (``Settings.claims``; :mod:`slmgraph.indexing.stages.claims`), a "Claims"
  section after entities and relationships: the claims whose subject is a
  member, ranked by the degrees of subject and object, in what the budget
  leaves (ARCHITECTURE.md stage 6: "source/target/claims/description"). A community
  whose members have no claims gets the same context as with claims off.

The per-build budget (``Settings.report_budget`` prompt tokens per corpus
token, beyond the fixed prefix) ties the report stage's cost to the corpus,
since whole descriptions made the reports cost more than the extraction
(docs/decisions.md: report budget per corpus token).

The model writes JSON (title, summary, findings, rating, rating_explanation)
under a schema. A community carried down unchanged from the level above
reuses that report (no model call), and a community of one entity with no
relationships gets a report made from that entity's description (no model
call): there is nothing to summarise.

With models under 1B parameters (``Settings.reports`` = ``auto``, the
default; ``data`` forces it) reports are built from the data with no model
call (:func:`data_report`): the title is a noun phrase of the community's
most-connected entities, the summary says what the community is about (its
main entities, their types, its size) before quoting its top relationship, and
the findings are :func:`text_findings`. A small model's titles and summaries
are unusable and slow to write, while data reports separate on-topic from
off-topic questions (docs/decisions.md: data-built reports under 1B).
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass
from typing import Callable

from tqdm import tqdm

from slmgraph.indexing.stages.claims import load_claims
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.model.client import DEADLINE_REPORT_S, ModelClient
from slmgraph.indexing.stages.extract import model_writes, use_model_descriptions
from slmgraph.names.forms import STOP, content_words, cut, is_grounded
from slmgraph.config.prompting import Prompts
from slmgraph.store.db import CommunityRow, EntityRow, RelationshipRow, ReportRow, Store, dumps, rows
from slmgraph.text.prose import (
    addressed_to_assistant, degenerate, markdown_structure, parse_json, plain_sentence, sentences,
)
from slmgraph.indexing.stages.concepts import concept_ids
from slmgraph.indexing.stages.topics import Topic, community_topics, corpus_documents, coverage_sentence

#: Fewest context tokens a report prompt must have room for (a few entity and relationship rows);
#: a smaller window is a user error (raise --n-ctx).
MIN_REPORT_CONTEXT_TOKENS = 100
REPORT_SCHEMA_LIMITS = {"title": 80, "summary": 500, "rating_explanation": 200, "finding_summary": 120,
                        "finding_explanation": 400, "findings": 5}


def report_schema(with_findings: bool = True) -> dict:
    """JSON schema of a community report (flat, capped strings, rating enum 0..10).

    Without findings the model writes only title, summary and rating; the
    findings are then taken from the community's top relationships (see
    :func:`text_findings`).
    """
    L = REPORT_SCHEMA_LIMITS
    props = {
        "title": {"type": "string", "maxLength": L["title"]},
        "summary": {"type": "string", "maxLength": L["summary"]},
        "rating": {"type": "integer", "enum": list(range(0, 11))},
        "rating_explanation": {"type": "string", "maxLength": L["rating_explanation"]},
    }
    if with_findings:
        props["findings"] = {"type": "array", "maxItems": L["findings"], "items": {
            "type": "object", "properties": {
                "summary": {"type": "string", "maxLength": L["finding_summary"]},
                "explanation": {"type": "string", "maxLength": L["finding_explanation"]}},
            "required": ["summary", "explanation"]}}
    return {"type": "object", "properties": props, "required": list(props)}


#: Characters of a data-built finding's explanation (whole sentences, :func:`whole_sentences`); an
#: extractive answer quotes a finding's sentences up to the same length
#: (:func:`slmgraph.query.extractive.report_points`), so a sentence a finding holds whole is quoted whole.
FINDING_MAX_CHARS = 400


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
    :func:`_ranked_claims` order (summary "Subject: TYPE (STATUS)"), then the
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

    for r in sorted(r_rows, key=_edge_rank):
        if len(out) >= n:
            break
        if order(r.source_id) or order(r.target_id):
            continue
        text = fresh(r.description)
        if text:
            out.append({"summary": f"{by_id[r.source_id].name} and {by_id[r.target_id].name}", "explanation": text})
    for c in _ranked_claims(claims or [], by_id):
        if len(out) >= n:
            break
        text = fresh(c["description"])
        if text:
            out.append({"summary": f"{c['subject']}: {c['type']} ({c['status']})", "explanation": text})
    for e in sorted(e_rows, key=_entity_rank):
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
    top = [e.name for e in sorted(e_rows, key=_entity_rank)[:3]]
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
    ranked = sorted(e_rows, key=_entity_rank)
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
    top = sorted(r_rows, key=_edge_rank)
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
        lone = next((e for e in sorted(e_rows, key=_entity_rank) if _statements(e.description)), None)
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


def _entity_rank(e: EntityRow) -> tuple:
    """Sort key of a community's entities: degree descending, then id."""
    return -e.degree, e.entity_id


def _edge_rank(r: RelationshipRow) -> tuple:
    """Sort key of a community's relationships: combined degree (the paper's edge rank, sec. 3.1.5)
    descending, then weight descending, then id."""
    return -r.combined_degree, -r.weight, r.rel_id


#: Header of the claims section of report and local search contexts.
CLAIMS_HEADER = "-----Claims-----\nsubject,object,type,status,dates,description"


def _ranked_claims(claims: list[dict], by_id: dict) -> list[dict]:
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


def claim_line(c: dict) -> str:
    """One claim as a context row: ``subject,object,type,status,dates,description``
    (dates ``start..end``, one of them, or empty)."""
    start, end = c.get("start_date") or "", c.get("end_date") or ""
    dates = f"{start}..{end}" if start and end and start != end else start or end
    return f"{c['subject']},{c['object'] or ''},{c['type']},{c['status']},{dates},{c['description']}"


#: Header lines of a community's element context (GraphRAG's report context tables).
HEAD_ENTITIES = "-----Entities-----\nentity,type,description"
HEAD_RELATIONSHIPS = "-----Relationships-----\nsource,target,description,weight"
HEAD_SUBREPORTS = "-----Sub-community reports-----"
#: Tokens of a sub-community report's title in its parent's context: the schema caps a title at 80
#: characters, about 23 tokens at client.CHARS_PER_TOKEN (3.5 characters per token).
SUBREPORT_TITLE_TOKENS = 24
#: Tokens of a sub-community report's summary in its parent's context when no description cap
#: applies: the schema's 500 characters at 3.5 characters per token.
SUBREPORT_SUMMARY_TOKENS = 144
#: Description caps (tokens of each entity or relationship description, and of each sub-community
#: report's summary, in a report context) that the per-build report budget chooses among, most
#: generous first; None keeps whole descriptions. A ladder rather than a continuous value, so that
#: an incremental update that changes the corpus a little keeps the same cap and the index cache
#: still answers the reports of unchanged communities. It stops at 24 tokens, roughly one sentence (a
#: judgement, not a measurement): a shorter cut leaves a fragment, so below it the budget keeps
#: fewer lines instead (the lowest-ranked relationships go first, as when a
#: context is full in GraphRAG; paper sec. 3.1.5).
DESCRIPTION_CAPS = (None, 256, 128, 96, 64, 48, 32, 24)
#: Fewest context tokens a report gets when the per-build budget has to scale contexts down beyond
#: the smallest description cap: the section headers (24 tokens) and a line.
MIN_SCALED_CONTEXT = 48


def short_description(client: ModelClient, text: str | None, cap: int | None, seen: set[str]) -> tuple[str, list[str]]:
    """A description as shown in a report context: its sentences not in ``seen`` (the sentences
    already shown in the same context: descriptions copy the text's sentences, and an entity's
    often repeats its relationships'), joined, then cut to ``cap`` tokens (None: whole).

    Returns:
        ``(text, new sentences)``; the caller adds the new sentences to ``seen`` when it uses the line.
    """
    parts = sentences(text or "") or ([text.strip()] if text and text.strip() else [])
    new = [x for x in dict.fromkeys(parts) if x not in seen]
    out = " ".join(" ".join(x.split()) for x in new)
    if cap is not None and out:
        out = client.truncate(out, cap)
    return out, new


def subreport_line(client: ModelClient, rep: "Report", cap: int | None) -> str:
    """A sub-community's report as one entry of its parent's context: ``Sub-report: TITLE`` and the
    summary on the next line, the title cut to :data:`SUBREPORT_TITLE_TOKENS` and the summary to
    ``cap`` tokens (None: :data:`SUBREPORT_SUMMARY_TOKENS`)."""
    title = client.truncate(" ".join(rep.title.split()), SUBREPORT_TITLE_TOKENS)
    summary = client.truncate(" ".join(rep.summary.split()), SUBREPORT_SUMMARY_TOKENS if cap is None else cap)
    return f"Sub-report: {title}\n{summary}"


def element_context(client: ModelClient, entities: list[EntityRow], rels: list[RelationshipRow], budget: int,
                    claims: list[dict] | None = None, desc_tokens: int | None = None,
                    covered: set[int] | frozenset = frozenset()) -> tuple[str, int, bool]:
    """Context text of a community's elements within ``budget`` tokens.

    Relationships are ranked by combined degree (the paper's prominence,
    sec. 3.1.5), each added with the lines of its source and target entities,
    then the entities left, by degree. Each description is shown without the
    sentences already shown in the context and cut to ``desc_tokens`` tokens
    (:func:`short_description`); relationship lines carry names, not the
    entities' descriptions.

    Args:
        entities: the members (``name``, ``type``, ``description``, ``degree`` read).
        rels: the relationships to show (those inside the community, or those
            not inside a sub-community whose report stands for them).
        claims: claims whose subject is a member (dicts of
            :func:`slmgraph.indexing.stages.claims.load_claims`); they fill what the budget
            leaves after entities and relationships, under
            :data:`CLAIMS_HEADER` (omitted when none fit). None or empty: no
            claims section.
        desc_tokens: cap of each description, tokens (None: whole descriptions).
        covered: ids of members whose entity lines are left out (a
            sub-community report in the same context stands for them); their
            names still label relationship lines.

    Returns:
        ``(text, tokens, complete)``; ``complete`` is False when some entities
        or relationships did not fit (claims left out do not count: they are
        supporting detail, and the sub-report contexts that replace an
        incomplete one carry their own claims).
    """
    by_id = {e.entity_id: e for e in entities}
    ranked = sorted(rels, key=_edge_rank)
    # Names, not ids, label the rows: ids change when the graph is rebuilt, and
    # a context that depends only on content lets the index cache answer an
    # unchanged community's report after an incremental update.
    seen: set[str] = set()
    e_lines: list[str] = []
    r_lines: list[str] = []
    used_e: set[int] = set(covered)
    tokens = client.count(HEAD_ENTITIES + "\n" + HEAD_RELATIONSHIPS + "\n")
    complete = True

    def entity_line(e: EntityRow, new_seen: set[str]) -> tuple[str, list[str]]:
        desc, new = short_description(client, e.description, desc_tokens, seen | new_seen)
        return f"{e.name},{e.type},{desc}", new

    for r in ranked:
        desc, new = short_description(client, r.description, desc_tokens, seen)
        lines = [f"{by_id[r.source_id].name},{by_id[r.target_id].name},{desc},{r.weight:g}"]
        new_seen = set(new)
        add: list[tuple[int, str]] = []
        for x in dict.fromkeys((r.source_id, r.target_id)):
            if x in used_e:
                continue
            line, new_e = entity_line(by_id[x], new_seen)
            new_seen.update(new_e)
            add.append((x, line))
        cost = sum(client.count(line + "\n") for line in lines + [a for _, a in add])
        if tokens + cost > budget:
            complete = False
            break
        tokens += cost
        r_lines += lines
        for x, line in add:
            e_lines.append(line)
            used_e.add(x)
        seen |= new_seen
    # Entities without edges in the community (or when no edge fits), by degree.
    for e in sorted(entities, key=_entity_rank):
        if e.entity_id in used_e:
            continue
        line, new = entity_line(e, set())
        cost = client.count(line + "\n")
        if tokens + cost > budget:
            complete = False
            break
        tokens += cost
        e_lines.append(line)
        used_e.add(e.entity_id)
        seen.update(new)
    lines = [HEAD_ENTITIES] + e_lines + [HEAD_RELATIONSHIPS] + r_lines
    used_c: list[str] = []
    head_c = client.count(CLAIMS_HEADER + "\n")
    for c in _ranked_claims(claims or [], by_id):
        line = claim_line(c)
        cost = client.count(line + "\n") + (0 if used_c else head_c)
        if tokens + cost > budget:
            continue  # this claim does not fit; a shorter one further down may
        tokens += cost
        used_c.append(line)
    if used_c:
        lines += [CLAIMS_HEADER] + used_c
    return "\n".join(lines), tokens, complete


def _statements(text: str | None) -> list[str]:
    """The sentences of ``text`` that are prose and not orders to an assistant, as plain text: no
    Markdown structure (:func:`slmgraph.text.prose.markdown_structure`), inline Markdown rendered
    (:func:`slmgraph.text.prose.plain_sentence`)."""
    out = []
    for x in sentences(text or ""):
        if not addressed_to_assistant(x) and markdown_structure(x) is None:
            p = plain_sentence(x)
            if p:
                out.append(p)
    return out


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


def _parse_report(text: str) -> dict:
    data, status = parse_json(text)
    if not isinstance(data, dict):
        data = {}
    findings = data.get("findings") if isinstance(data.get("findings"), list) else []
    findings = [f for f in findings if isinstance(f, dict) and (f.get("summary") or f.get("explanation"))]
    try:
        rating = float(data.get("rating", 0))
    except (TypeError, ValueError):
        rating = 0.0
    return {"title": str(data.get("title") or "").strip(), "summary": str(data.get("summary") or "").strip(),
            "findings": findings, "rating": max(0.0, min(10.0, rating)),
            "rating_explanation": str(data.get("rating_explanation") or "").strip(), "status": status}


def worker_job(client: ModelClient, prompts: Prompts, settings: Settings, model) -> Callable[[str], str]:
    """What a report worker does per community (:class:`slmgraph.indexing.executors.batch.WorkerSpec` ``make_job``).

    Returns ``user prompt -> model output text``: the same call as the serial
    path (:func:`_write`), so the cache key, the ledger row and the output do
    not depend on where the report is written. The system prompt (the fixed
    prefix) is evaluated once per worker and its KV state reused.
    """
    with_findings = use_model_descriptions(settings, model)
    system = prompts.text("report_system" if with_findings else "report_system_short")
    return lambda user: _write(client, system, user, settings, with_findings)


def _write(client: ModelClient, system: str, user: str, settings: Settings, with_findings: bool) -> str:
    """One report call: JSON under :func:`report_schema`, capped at ``report_max_tokens``, 180 s deadline."""
    return client.call("report", system, user, schema=report_schema(with_findings),
                       max_tokens=settings.report_max_tokens, deadline_s=DEADLINE_REPORT_S).text


@dataclass
class ReportsResult:
    """What stage 6 did: ``reports`` written (``single`` of them for one entity without
    relationships, ``carried`` copied down from an unsplittable ancestor), ``model_calls`` and
    ``cache_hits`` (worker processes included), ``written_by`` (``model`` or ``data``:
    :func:`data_report`), ``findings`` (``model`` or ``text``), ``ungrounded_fields_replaced``,
    the thread plan (``workers``, ``threads``, ``startup_seconds``); ``skipped`` with
    ``reason`` under ``--no-reports``, when ``removed`` counts the reports of an earlier run deleted;
    the per-build report budget (:class:`ReportBudget`): ``budget_tokens`` (0: none),
    ``planned_tokens`` (prompt tokens beyond the fixed prefix the model-written reports were planned
    to evaluate), ``description_tokens`` (the description cap; None: whole) and ``budget_scale``."""
    reports: int = 0
    carried: int = 0
    single: int = 0
    written_by: str = "data"
    findings: str = "text"
    ungrounded_fields_replaced: int = 0
    workers: int = 1
    threads: int = 0
    startup_seconds: float = 0.0
    model_calls: int = 0
    cache_hits: int = 0
    skipped: bool = False
    reason: str = ""
    removed: int = 0
    budget_tokens: int = 0
    planned_tokens: int = 0
    description_tokens: int | None = None
    budget_scale: float = 1.0

    def summary(self, settings: Settings) -> list[str]:
        """The progress lines ``index`` prints (``settings``: the run's, for ``--report-budget``)."""
        if self.skipped:
            removed = f"; {self.removed} reports of an earlier run removed" if self.removed else ""
            return [f"reports: skipped (--no-reports){removed}: answer global questions with --method lazy"]
        out = [f"reports: {self.reports} written ({self.model_calls} model calls, {self.cache_hits} from cache, "
               f"{self.single} single-entity), {self.carried} carried down"]
        if self.budget_tokens:
            cut = ("whole descriptions" if self.description_tokens is None else
                   f"descriptions cut to {self.description_tokens} tokens")
            scaled = f", contexts scaled to {self.budget_scale:.0%}" if self.budget_scale < 1 else ""
            out.append(f"reports: budget {self.budget_tokens:,} prompt tokens (--report-budget "
                       f"{settings.report_budget:g} x corpus tokens), planned {self.planned_tokens:,}: {cut}{scaled}")
        return out


def largest_communities(store: Store, limit: int | None) -> list[int]:
    """Ids of the communities a model would write a report for (not carried; two or more members, or one
    with a relationship to itself), the ``limit`` largest by member count (ties: lower id first), in that
    order; ``limit`` None = all of them."""
    con = store.con
    members: dict[int, int] = dict(con.execute(
        "SELECT community_id, count(*) FROM community_members GROUP BY 1").fetchall())
    looped = {cid for (cid,) in con.execute("""
        SELECT DISTINCT m.community_id FROM community_members m JOIN relationships r
        ON r.source_id = m.entity_id AND r.target_id = m.entity_id""").fetchall()}
    ids = [cid for (cid,) in con.execute(
        "SELECT community_id FROM communities WHERE carried_from IS NULL ORDER BY community_id").fetchall()
        if members.get(cid, 0) > 1 or cid in looped]
    ids.sort(key=lambda c: -members[c])
    return ids if limit is None else ids[:limit]


def run_reports(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, progress: bool = True,
                model_factory: Callable | None = None, say: Callable[[str], None] | None = None,
                limit: int | None = None) -> ReportsResult:
    """Write a report for every community, level by level from the deepest, and store them.

    The communities of one level are independent (a parent reads only its
    children's reports, one level deeper), so each level is one round of
    tasks: with more than one worker in the thread plan
    (:func:`slmgraph.indexing.executors.batch.stage_plan`) or ``--executor ray``, the model calls
    run on the batch engine's workers (:func:`worker_job`), and this process,
    the single writer, parses, grounds and commits each report with its ledger
    row and cache entry as it arrives; otherwise in this process. The contexts
    are built here, so the reports do not depend on the number of workers.
    A rerun after an interruption finds the model outputs in the index cache.
    With ``settings.claims`` the members' claims join the context
    (:func:`element_context`) and, when findings come from the data, the
    findings (:func:`text_findings`); a single entity with no relationships
    gets its claims as findings.

    Args:
        model_factory: ``threads -> Model`` for worker processes (tests); None
            = each worker loads ``client.model.path``.
        limit: with a model writing, only the ``limit`` largest communities get a model call
            (:func:`largest_communities`; the stage bench's cap), the others a data report; None = all.
        say: ``str -> None`` for the thread-plan note and warnings.

    Returns:
        :class:`ReportsResult` (``written_by`` is ``data`` with ``settings.reports`` = data, or auto
        and a model under 1B parameters).

    Raises:
        UserError: the window leaves no room for a report's context.
        WorkerError: a worker process crashed (re-run to resume from the cache).
    """
    from slmgraph.indexing.executors.batch import WorkerSpec, stage_plan
    from slmgraph.indexing.executors.raypool import open_pool
    from slmgraph.model.threads import update_claim

    con = store.con
    comms = rows(con, CommunityRow, "SELECT community_id, level, parent_id, size, carried_from FROM communities "
                 "ORDER BY level DESC, community_id")
    members: dict[int, list[int]] = {}
    for cid, eid in con.execute("SELECT community_id, entity_id FROM community_members ORDER BY 1, 2").fetchall():
        members.setdefault(cid, []).append(eid)
    ents = {e.entity_id: e for e in rows(con, EntityRow, "SELECT entity_id, name, type, description, degree "
                                                         "FROM entities")}
    rels = rows(con, RelationshipRow, "SELECT rel_id, source_id, target_id, description, weight, combined_degree "
                                      "FROM relationships ORDER BY rel_id")
    out_of: dict[int, list[RelationshipRow]] = {}
    for r in rels:
        out_of.setdefault(r.source_id, []).append(r)

    def inner_rels(mem: list[int]) -> list[RelationshipRow]:
        mset = set(mem)
        return sorted((r for e in mset for r in out_of.get(e, []) if r.target_id in mset), key=lambda r: r.rel_id)

    claims_of: dict[int, list[dict]] = {}
    for c in load_claims(store) if settings.claims else []:
        claims_of.setdefault(c["subject_id"], []).append(c)
    children: dict[int, list[int]] = {}
    for c in comms:
        if c.parent_id is not None:
            children.setdefault(c.parent_id, []).append(c.community_id)
    model = client.model
    n_params = model  # the policy reads the model's capability record
    by_model = model_writes(settings.reports, n_params, "reports")
    with_findings = use_model_descriptions(settings, n_params)
    max_size = max((len(m) for m in members.values()), default=1)
    common = set() if by_model else lowercase_words(
        r[0] for r in con.execute("SELECT text FROM text_units").fetchall())
    system, budget, call_overhead = "", 0, 0
    if by_model:
        system = prompts.text("report_system" if with_findings else "report_system_short")
        empty = prompts.fill("report_user", context="")
        overhead = client.overhead(system, empty)
        budget = min(settings.report_context_tokens, client.n_ctx - settings.report_max_tokens) - overhead
        if budget < MIN_REPORT_CONTEXT_TOKENS:
            raise UserError(f"the {client.n_ctx}-token window leaves no room for a community report's context: "
                            "raise --n-ctx")
        call_overhead = len(model.prompt_tokens(model.render(system, empty))[1])
    reports: dict[int, Report] = {}
    topics = community_topics(store, common)
    doc_titles = dict(corpus_documents(store))
    concept_set = concept_ids(store)
    stats = {"reports": 0, "carried": 0, "single": 0,
             "written_by": "model" if by_model else "data",
             "findings": "model" if by_model and with_findings else "text",
             "ungrounded_fields_replaced": 0, "workers": 1, "threads": 0, "startup_seconds": 0.0}
    calls0, hits0 = client.calls, client.cache_hits
    with store.transaction():
        store.clear("reports")
    written = [c for c in comms if c.carried_from is None]
    looped = {r.source_id for r in rels if r.source_id == r.target_id}
    call_ids = [c.community_id for c in written
                if len(members.get(c.community_id, [])) > 1 or set(members.get(c.community_id, [])) & looped] \
        if by_model else []
    data_ids: set[int] = set()  # communities past ``limit``: a data report instead of a model call
    if by_model and limit is not None:
        chosen = set(largest_communities(store, limit))
        data_ids = {c for c in call_ids if c not in chosen}
        call_ids = [c for c in call_ids if c in chosen]
    data_common = lowercase_words(r[0] for r in con.execute("SELECT text FROM text_units").fetchall()) \
        if data_ids else common
    n_calls = len(call_ids)
    inner = {c.community_id: inner_rels(members.get(c.community_id, [])) for c in comms}
    corpus_tokens = int(con.execute("SELECT coalesce(sum(n_tokens), 0) FROM documents").fetchone()[0])
    plan_b = plan_report_budget(client, call_ids, members, children, {c.community_id for c in written}, ents, inner,
                                budget, call_overhead, round(settings.report_budget * corpus_tokens))
    stats.update(budget_tokens=plan_b.budget_tokens, planned_tokens=plan_b.planned_tokens,
                 description_tokens=plan_b.desc_tokens, budget_scale=plan_b.scale)
    plan = None
    if n_calls and (model_factory is not None or model.path is not None):
        plan = stage_plan(model, settings, n_calls, say)
        if plan.workers == 1 and settings.executor != "ray":
            plan = None
    bar = tqdm(total=len(written), desc="reports", unit="report", disable=not progress or not written,
               dynamic_ncols=True)

    def commit(rep: Report, calls=(), puts=()) -> None:
        t = topics.get(rep.community_id)
        if t is not None and not rep.topic:
            rep.topic, rep.doc_ids = t.label, list(t.doc_ids)
        reports[rep.community_id] = rep
        with store.transaction():
            _store_report(store, client, rep)
            for row in calls:
                store.record_call(*row)
            for put in puts:
                store.cache_put(*put)
        stats["reports"] += 1
        bar.update(1)

    def finish(pending_item, text: str) -> Report:
        cid, level, e_rows, r_rows, c_rows, ctx, ntok, kind = pending_item
        d = _parse_report(text)
        stats["ungrounded_fields_replaced"] += ground_report(d, ctx, e_rows, r_rows)
        findings = d["findings"] if with_findings else text_findings(e_rows, r_rows, claims=c_rows)
        return without_orders(Report(cid, level, d["title"], d["summary"], findings, d["rating"],
                                     d["rating_explanation"], ntok, kind), e_rows)

    remote = {"calls": 0, "hits": 0}  # model calls and cache hits in worker processes

    # A community is ready once its children's reports are committed (a parent reads only its own
    # children's reports), so a parent is written as soon as its last child is, not after the whole
    # level: no worker waits at a level's end while another finishes that level's last report.
    parent_of = {c.community_id: c.parent_id for c in comms}
    level_of = {c.community_id: c.level for c in comms}
    need = {c.community_id: 0 for c in written}
    for c in written:
        if c.parent_id in need:
            need[c.parent_id] += 1
    ready = deque(cid for cid in (c.community_id for c in written) if not need[cid])
    tasks: list[tuple] = []
    pending: dict[int, tuple] = {}

    def done(cid: int) -> None:
        p = parent_of.get(cid)
        if p in need:
            need[p] -= 1
            if not need[p]:
                ready.append(p)

    def release() -> None:
        """Build the context of every ready community: commit those that need no model call, queue
        the others' prompts in ``tasks``."""
        while ready:
            cid = ready.popleft()
            level = level_of[cid]
            mem = members.get(cid, [])
            e_rows = [ents[e] for e in mem]
            r_rows = inner[cid]
            c_rows = [c for e in mem for c in claims_of.get(e, [])]
            if not by_model or cid in data_ids:
                t = topics.get(cid)
                cover = coverage_sentence(t.doc_ids, doc_titles, len(doc_titles)) if t is not None else ""
                commit(without_orders(data_report(cid, level, e_rows, r_rows, c_rows, max_size, data_common, t,
                                                  cover, concept_set), e_rows))
                stats["single"] += len(mem) == 1 and not r_rows
                done(cid)
                continue
            if len(mem) == 1 and not r_rows:
                e = e_rows[0]
                commit(without_orders(Report(
                    cid, level, e.name, e.description or f"{e.name} ({e.type}) is mentioned in the documents.",
                    text_findings([], [], claims=c_rows) if c_rows else [],
                    0.0, "A single entity with no relationships.", 0, "entity"), e_rows))
                stats["single"] += 1
                done(cid)
                continue
            b, cap = plan_b.context[cid], plan_b.desc_tokens
            sub = _subreport_context(client, cid, children, reports, members, e_rows, r_rows, b, c_rows, cap) \
                if children.get(cid) else None
            if sub is not None:
                ctx, ntok, _ = sub
                kind = "sub-reports"
            else:
                ctx, ntok, _ = element_context(client, e_rows, r_rows, b, c_rows, cap)
                kind = "elements"
            pending[cid] = (cid, level, e_rows, r_rows, c_rows, ctx, ntok, kind)
            tasks.append((cid, prompts.fill("report_user", context=ctx), None))

    def rounds(pool):
        release()
        if pool is None:
            i = 0
            while i < len(tasks):
                cid, user, _ = tasks[i]
                i += 1
                commit(finish(pending.pop(cid), _write(client, system, user, settings, with_findings)))
                done(cid)
                release()
        else:
            # The pool sends the tasks release() appends while this loop runs.
            for cid, _key, text, calls, puts, _worker in pool.results(tasks):
                remote["calls"] += len(calls)
                remote["hits"] += not calls
                commit(finish(pending.pop(cid), text), calls, puts)
                done(cid)
                release()

    try:
        if plan is None:
            rounds(None)
        else:
            cache = {k: (o, f, t) for k, o, f, t in store.con.execute(
                "SELECT key, output, finish_reason, tokens FROM llm_cache WHERE stage = 'report'").fetchall()}

            def spec_for(worker: int) -> WorkerSpec:
                return WorkerSpec(str(model.path) if model.path is not None else None, model.n_ctx, settings.seed,
                                  plan.threads, settings, client.run_id, worker_job, cache, model_factory)

            if say:
                where = "Ray actors" if settings.executor == "ray" else "worker processes"
                say(f"reports: {plan.workers} {where} x {plan.threads} llama.cpp thread(s) on {plan.cores} cores")
            stats["workers"], stats["threads"] = plan.workers, plan.threads
            update_claim(max(plan.total_threads, model.n_threads or 1))
            try:
                with open_pool(spec_for, plan, settings, "reports") as pool:
                    rounds(pool)
            finally:
                update_claim(model.n_threads or settings.n_threads)
            stats["startup_seconds"] = round(pool.startup_seconds, 2)
    finally:
        bar.close()
    # Carried communities point to an ancestor, which is written after them
    # (levels are processed deepest first): write them in a second pass.
    carried_rows = []
    for c in comms:
        if c.carried_from is not None:
            src = reports[c.carried_from]
            rep = Report(c.community_id, c.level, src.title, src.summary, src.findings, src.rating, src.rating_explanation,
                         src.context_tokens, "carried", src.topic, src.doc_ids)
            reports[c.community_id] = rep
            carried_rows.append(rep)
    with store.transaction():
        for rep in carried_rows:
            _store_report(store, client, rep)
    stats["carried"] = len(carried_rows)
    stats["model_calls"] = client.calls - calls0 + remote["calls"]
    stats["cache_hits"] = client.cache_hits - hits0 + remote["hits"]
    return ReportsResult(**stats)


def _subreport_context(client: ModelClient, cid: int, children: dict[int, list[int]], reports: dict[int, "Report"],
                       members: dict[int, list[int]], e_rows: list[EntityRow], r_rows: list[RelationshipRow],
                       budget: int, claims: list[dict] | None = None,
                       desc_tokens: int | None = None) -> tuple[str, int, bool] | None:
    """A parent community's context with its children's reports standing for their elements.

    GraphRAG paper sec. 3.1.5: sub-community summaries substitute for the
    element summaries they cover. A child's report (:func:`subreport_line`)
    replaces the child's members and inner relationships when it is shorter
    in tokens than their lines (with the same ``desc_tokens`` cap); children
    are taken largest first while they fit ``budget``. Then the elements no
    report stands for (:func:`element_context` with the covered members'
    lines left out): the relationships between children, the members of
    children without a report (a child carried down from this community is
    written after it) and the claims.

    Returns:
        ``(text, tokens, complete)``, or None when no child's report replaced
        its elements (the caller uses the element context).
    """
    kids = sorted(children.get(cid, []), key=lambda k: (-len(members.get(k, [])), k))
    used = client.count(HEAD_SUBREPORTS + "\n")
    parts = [HEAD_SUBREPORTS]
    head = client.count(HEAD_ENTITIES + "\n" + HEAD_RELATIONSHIPS + "\n")
    covered: set[int] = set()
    inside: list[set[int]] = []
    complete = True
    for k in kids:
        rep = reports.get(k)
        if rep is None:
            continue
        kset = set(members.get(k, []))
        line = subreport_line(client, rep, desc_tokens)
        n = client.count(line + "\n")
        k_e = [e for e in e_rows if e.entity_id in kset]
        k_r = [r for r in r_rows if r.source_id in kset and r.target_id in kset]
        _, n_el, _ = element_context(client, k_e, k_r, 1 << 30, None, desc_tokens)
        if n >= n_el - head:
            continue  # the child's elements are as short as its report: they stay
        if used + n > budget:
            complete = False
            continue
        parts.append(line)
        used += n
        covered |= kset
        inside.append(kset)
    if not covered:
        return None
    rest_r = [r for r in r_rows if not any(r.source_id in ks and r.target_id in ks for ks in inside)]
    rest, n_rest, done = element_context(client, e_rows, rest_r, budget - used, claims, desc_tokens, covered)
    return "\n".join(parts) + "\n" + rest, used + n_rest, complete and done


@dataclass
class ReportBudget:
    """The per-build report budget's decision (:func:`plan_report_budget`).

    ``budget_tokens``: prompt tokens the report calls may evaluate beyond the
    fixed prefix (``Settings.report_budget`` x corpus tokens; 0 = no per-build
    budget); ``planned_tokens``: what the plan expects them to evaluate;
    ``desc_tokens``: the description cap chosen (None: whole descriptions);
    ``scale``: share of each report's planned context it gets (1.0 unless the
    smallest cap is still over budget); ``context``: ``community_id -> context
    budget`` in tokens of each model-written report.
    """
    budget_tokens: int = 0
    planned_tokens: int = 0
    desc_tokens: int | None = None
    scale: float = 1.0
    context: dict | None = None


def plan_report_budget(client: ModelClient, calls: list[int], members: dict[int, list[int]],
                       children: dict[int, list[int]], reported: set[int], ents: dict[int, EntityRow],
                       inner: dict[int, list[RelationshipRow]], window_budget: int, call_overhead: int,
                       budget_tokens: int) -> ReportBudget:
    """Choose the description cap (and, if need be, a scale) that keeps the report calls within
    ``budget_tokens`` evaluated prompt tokens.

    The plan counts, for each model-written report, the per-call prompt tokens
    beyond the fixed prefix (``call_overhead``: template and instructions
    around an empty context) and its context: the lines of its elements with
    descriptions cut to the cap, a child's report line
    (:data:`SUBREPORT_TITLE_TOKENS` + the summary at the cap) instead of its
    elements where that is shorter, capped by ``window_budget``. Line costs are
    added per line (tokenization across line ends may differ by a token) and
    without sentence de-duplication, so the plan is an upper bound within that
    rounding, for which each context is allowed 1/16 + 4 tokens more than its
    plan (and counted so). The first cap of :data:`DESCRIPTION_CAPS` whose plan fits is
    taken; when even the smallest does not, every report keeps a floor (its
    headers and one line: :data:`MIN_SCALED_CONTEXT` tokens, or for a parent
    one child's report line) and what its plan holds above the floor is scaled
    by the same share (in 1/32 steps) to fit, keeping its top-ranked lines;
    the floors alone may exceed the budget. The plan depends only on the data,
    never on the number of workers.

    Args:
        calls: community ids of the reports the model writes.
        reported: ids of every community that gets a report before its parent
            (model-written or single-entity; not carried-down copies).
        inner: ``community_id -> relationships inside it``.
        budget_tokens: 0 = no per-build budget (whole descriptions, ``window_budget`` each).

    Returns:
        :class:`ReportBudget`.
    """
    if not calls:
        return ReportBudget(budget_tokens, 0, None, 1.0, {})
    head = client.count(HEAD_ENTITIES + "\n" + HEAD_RELATIONSHIPS + "\n")
    head_sub = client.count(HEAD_SUBREPORTS + "\n")
    e_cost = {eid: (client.count(f"{e.name},{e.type},\n"), client.count(e.description or "")) for eid, e in ents.items()}
    r_cost: dict[int, tuple[int, int]] = {}
    for rs in inner.values():
        for r in rs:
            if r.rel_id not in r_cost:
                r_cost[r.rel_id] = (client.count(f"{ents[r.source_id].name},{ents[r.target_id].name},,{r.weight:g}\n"),
                                    client.count(r.description or ""))

    def lines(eids, rels, cap) -> int:
        c = cap if cap is not None else 1 << 30
        return (sum(e_cost[e][0] + min(e_cost[e][1], c) for e in eids)
                + sum(r_cost[r.rel_id][0] + min(r_cost[r.rel_id][1], c) for r in rels))

    floor: dict[int, int] = {}

    def planned(cid: int, cap: int | None) -> int:
        mem = members.get(cid, [])
        summary = SUBREPORT_SUMMARY_TOKENS if cap is None else min(cap, SUBREPORT_SUMMARY_TOKENS)
        covered: set[int] = set()
        inside: list[set[int]] = []
        subs = 0
        for k in children.get(cid, []):
            if k not in reported:
                continue
            rep = 4 + SUBREPORT_TITLE_TOKENS + summary
            if rep < lines(members.get(k, []), inner.get(k, []), cap):
                subs += rep
                kset = set(members.get(k, []))
                covered |= kset
                inside.append(kset)
        rels = [r for r in inner.get(cid, []) if not any(r.source_id in ks and r.target_id in ks for ks in inside)]
        n = head + lines([e for e in mem if e not in covered], rels, cap) + (head_sub + subs if subs else 0)
        # Fewest tokens this context is scaled down to: the headers and one line (a parent: one
        # child's report, else it would read its child's top line and repeat the child's prompt).
        floor[cid] = min(n, max(MIN_SCALED_CONTEXT, head + head_sub + 4 + SUBREPORT_TITLE_TOKENS + summary
                                if subs else MIN_SCALED_CONTEXT))
        return min(window_budget, n)

    for cap in DESCRIPTION_CAPS:
        plan = {cid: planned(cid, cap) for cid in calls}
        if not budget_tokens:
            return ReportBudget(0, sum(plan.values()) + call_overhead * len(calls), cap, 1.0,
                                {cid: window_budget for cid in calls})
        # Each context may use a little more than its plan (tokenization across line ends); that room
        # is part of the plan, and the contexts never exceed it, so the calls stay within the budget.
        context = {cid: min(window_budget, n + n // 16 + 4) for cid, n in plan.items()}
        total = sum(context.values()) + call_overhead * len(calls)
        if total <= budget_tokens:
            return ReportBudget(budget_tokens, total, cap, 1.0, context)
    room = budget_tokens - call_overhead * len(calls) - sum(floor[cid] for cid in plan)
    above = sum(n - floor[cid] for cid, n in plan.items())
    scale = max(0, int(32 * room / max(1, above))) / 32
    context = {cid: min(window_budget, floor[cid] + int((n - floor[cid]) * scale)) for cid, n in plan.items()}
    return ReportBudget(budget_tokens, sum(context.values()) + call_overhead * len(calls), cap, scale, context)


def _store_report(store: Store, client: ModelClient, rep: Report) -> None:
    text = rep.full_text()
    store.con.execute("INSERT OR REPLACE INTO community_reports (community_id, level, title, summary, findings, "
                      "rating, rating_explanation, full_text, n_tokens, context_tokens, context_kind, topic, doc_ids) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      [rep.community_id, rep.level, rep.title, rep.summary, dumps(rep.findings), rep.rating,
                       rep.rating_explanation, text, client.count(text), rep.context_tokens, rep.context_kind,
                       rep.topic, dumps(rep.doc_ids or [])])


def load_reports(store: Store, level: int) -> list[dict]:
    """Reports of one level as dicts (community_id, title, summary, findings, rating, full_text, n_tokens)."""
    got = rows(store, ReportRow, "SELECT community_id, title, summary, findings, rating, full_text, n_tokens "
                                 "FROM community_reports WHERE level = ? ORDER BY community_id", [level])
    return [{"community_id": r.community_id, "title": r.title, "summary": r.summary,
             "findings": json.loads(r.findings or "[]"), "rating": r.rating, "full_text": r.full_text,
             "n_tokens": r.n_tokens} for r in got]


def member_names(store: Store, community_ids: list[int], n: int = 10) -> dict[int, list[str]]:
    """``community_id -> up to n member names``, most connected first (entity degree, then id): the
    community's central entities, which an extractive answer prefers its quoted sentences to name
    (slmgraph.query.extractive.report_points)."""
    if not community_ids:
        return {}
    q = ",".join("?" * len(community_ids))
    rows = store.con.execute(f"""
        SELECT m.community_id, e.name FROM community_members m JOIN entities e USING (entity_id)
        WHERE m.community_id IN ({q}) ORDER BY m.community_id, e.degree DESC, e.entity_id""",
                             list(community_ids)).fetchall()
    out: dict[int, list[str]] = {}
    for cid, name in rows:
        if len(out.setdefault(cid, [])) < n:
            out[cid].append(name)
    return out
