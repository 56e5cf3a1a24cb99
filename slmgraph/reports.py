"""Community reports, written bottom-up (paper sec. 3.1.5; ARCHITECTURE.md stage 6).

Context of a community, within ``report_context_tokens``:

* Leaf level (or any community whose elements fit): its relationships ranked
  by combined degree deg(u)+deg(v) (the paper's prominence), each added with
  its source and target entity descriptions until the budget is full.
* Higher levels whose elements do not fit: the (shorter) reports of its
  sub-communities, largest first, then as many top-ranked elements as still fit.
* With claims on (``Settings.claims``; :mod:`slmgraph.claims`), a "Claims"
  section after entities and relationships: the claims whose subject is a
  member, ranked by the degrees of subject and object, in what the budget
  leaves (ARCHITECTURE.md stage 6: "source/target/claims/description"). A community
  whose members have no claims gets the same context as with claims off.

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
the findings are :func:`text_findings`. Measured: the 135M model's titles
were fragments of the context or file names ("Canada,Vancouver,And then when
I was 16,...", "<episode>.txt"), its summaries were replaced by the grounding
fallback, and the report stage took 39 % of the podcast build's wall-clock
(benchmarks/results/podcast_index_stats.txt); data reports separate on-topic
from off-topic questions in global search (benchmarks/results/global_answers.md).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Callable

from tqdm import tqdm

from .claims import load_claims
from .config import Settings
from .errors import UserError
from .client import DEADLINE_REPORT_S, ModelClient
from .extract import model_writes, use_model_descriptions
from .names import STOP, content_words, cut, is_grounded
from .prompting import Prompts
from .store import CommunityRow, EntityRow, RelationshipRow, ReportRow, Store, dumps, rows
from .text import addressed_to_assistant, degenerate, markdown_structure, parse_json, plain_sentence, sentences

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
#: (:func:`slmgraph.search.extractive.report_points`), so a sentence a finding holds whole is quoted whole.
FINDING_MAX_CHARS = 400


def whole_sentences(sents: list[str], max_chars: int) -> list[str]:
    """The first sentence of ``sents`` and those after it, in order, that fit ``max_chars`` characters
    together (joined by one space): a later sentence that would overflow is skipped and a shorter one
    after it may still fit. A first sentence longer than ``max_chars`` is the only one, cut at a word
    boundary with an ellipsis (:func:`slmgraph.names.cut`): only a single sentence longer than the
    limit is ever cut, and the first (the description's own first mention) is always there. (Cutting
    the joined text at the limit cut 29 % of the quoted sentences of the podcast sample's global
    answers, benchmarks/results/answer_quality_after.md.)"""
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
    top entities' descriptions; at most ``n``. Descriptions come from the text
    or the extractor. Sentences that give orders to an assistant, and elements
    whose name is one ("PWNED"), are left out
    (:func:`slmgraph.text.addressed_to_assistant`); so is Markdown structure (a table
    row, a heading: :func:`slmgraph.text.markdown_structure`), and inline Markdown is
    rendered as plain text (:func:`slmgraph.text.plain_sentence`). An explanation is
    the whole sentences that fit ``max_chars`` characters (:func:`whole_sentences`).

    Args:
        claims: claims of the members as from :func:`slmgraph.claims.load_claims`
            (None or empty: no claim findings).
    """
    by_id = {e.entity_id: e for e in e_rows}
    out: list[dict] = []
    used: set[str] = set()

    def fresh(desc: str) -> str:
        new = [p for p in _statements(desc) if p not in used]
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


def ground_report(d: dict, context: str, e_rows: list[EntityRow], r_rows: list[RelationshipRow]) -> int:
    """Replace a title or summary that is not grounded in the report's context, in place.

    A 135M model writes titles like "The Power of Unity" for any community
    (measured on dulce.txt); such text shares few words with the context
    (:func:`slmgraph.names.is_grounded`). Title fallback: the three
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
    assistant (:func:`slmgraph.text.addressed_to_assistant`: "PWNED"), one-word names in
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
                max_size: int = 1, common: set[str] | frozenset = frozenset()) -> "Report":
    """A community report built from the data, no model call (models under 1B parameters).

    * title: :func:`title_entities` joined as a noun phrase ("Alex Mercer, Jordan Hayes and Dulce base");
    * summary: what the community is about -- its main entities, the most
      common entity types, its size -- then the first sentence of its top
      relationship (by combined degree) as evidence;
    * findings: :func:`text_findings` (relationships, claims, entity descriptions);
    * rating: 10 x log(1 + size) / log(1 + largest size of the index), one
      decimal: a data proxy of the paper's importance rating (larger
      communities cover more of the corpus).

    Args:
        e_rows: the members.
        r_rows: the relationships inside the community.
        max_size: the largest community's size (for the rating).
        common: ordinary words (see :func:`title_entities`).
    """
    import math

    names = title_entities(e_rows, common=common)
    title = join_names(names)
    types: dict[str, int] = {}
    for e in e_rows:
        t = str(e.type or "").strip().lower()
        if t and t not in ("unknown", "none"):
            types[t] = types.get(t, 0) + 1
    kinds = sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))[:2]
    kind_txt = (" (mostly " + " and ".join(f"{k}s" if not k.endswith("s") else k for k, _ in kinds) + ")"
                if kinds else "")
    if len(e_rows) == 1 and not r_rows:
        summary = f"This community is about {title} alone."
    else:
        summary = (f"This community is about {title}: {len(e_rows)} entities{kind_txt} linked by {len(r_rows)} "
                   f"relationship{'' if len(r_rows) == 1 else 's'}.")
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


def _entity_line(e: EntityRow) -> str:
    return f"{e.name},{e.type},{e.description}"


def _rel_line(r: RelationshipRow, by_id: dict[int, EntityRow]) -> str:
    return f"{by_id[r.source_id].name},{by_id[r.target_id].name},{r.description},{r.weight:g}"


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


def element_context(client: ModelClient, entities: list[EntityRow], rels: list[RelationshipRow], budget: int,
                    claims: list[dict] | None = None) -> tuple[str, int, bool]:
    """Context text of a community's elements within ``budget`` tokens.

    Args:
        entities: the members (``name``, ``type``, ``description``, ``degree`` read).
        rels: the relationships inside the community.
        claims: claims whose subject is a member (dicts of
            :func:`slmgraph.claims.load_claims`); they fill what the budget
            leaves after entities and relationships, under
            :data:`CLAIMS_HEADER` (omitted when none fit). None or empty: no
            claims section.

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
    head_e = "-----Entities-----\nentity,type,description"
    head_r = "-----Relationships-----\nsource,target,description,weight"
    used_e: list[int] = []
    used_r: list[RelationshipRow] = []
    tokens = client.count(head_e + "\n" + head_r + "\n")
    complete = True
    for r in ranked:
        add = [by_id[x] for x in (r.source_id, r.target_id) if x not in used_e]
        cost = client.count(_rel_line(r, by_id) + "\n")
        cost += sum(client.count(_entity_line(e) + "\n") for e in add)
        if tokens + cost > budget:
            complete = False
            break
        tokens += cost
        used_r.append(r)
        used_e.extend(e.entity_id for e in add)
    # Entities without edges in the community (or when no edge fits), by degree.
    for e in sorted(entities, key=_entity_rank):
        if e.entity_id in used_e:
            continue
        cost = client.count(_entity_line(e) + "\n")
        if tokens + cost > budget:
            complete = False
            break
        tokens += cost
        used_e.append(e.entity_id)
    lines = [head_e] + [_entity_line(by_id[i]) for i in used_e] + [head_r]
    lines += [_rel_line(r, by_id) for r in used_r]
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
    Markdown structure (:func:`slmgraph.text.markdown_structure`), inline Markdown rendered
    (:func:`slmgraph.text.plain_sentence`)."""
    out = []
    for x in sentences(text or ""):
        if not addressed_to_assistant(x) and markdown_structure(x) is None:
            p = plain_sentence(x)
            if p:
                out.append(p)
    return out


def without_orders(rep: "Report", e_rows: list[EntityRow]) -> "Report":
    """``rep`` with no title, summary sentence or finding that gives orders to an
    assistant (:func:`slmgraph.text.addressed_to_assistant`; prompt injection,
    issue 13 item 10): such a title is replaced by :func:`title_entities`, such
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
    """What a report worker does per community (:class:`slmgraph.batch.WorkerSpec` ``make_job``).

    Returns ``user prompt -> model output text``: the same call as the serial
    path (:func:`_write`), so the cache key, the ledger row and the output do
    not depend on where the report is written. The system prompt (the fixed
    prefix) is evaluated once per worker and its KV state reused.
    """
    with_findings = use_model_descriptions(settings, model.n_params)
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
    ``reason`` under ``--no-reports``, when ``removed`` counts the reports of an earlier run deleted."""
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


def run_reports(store: Store, client: ModelClient, prompts: Prompts, settings: Settings, progress: bool = True,
                model_factory: Callable | None = None, say: Callable[[str], None] | None = None) -> ReportsResult:
    """Write a report for every community, level by level from the deepest, and store them.

    The communities of one level are independent (a parent reads only its
    children's reports, one level deeper), so each level is one round of
    tasks: with more than one worker in the thread plan
    (:func:`slmgraph.batch.stage_plan`) or ``--executor ray``, the model calls
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
        say: ``str -> None`` for the thread-plan note and warnings.

    Returns:
        :class:`ReportsResult` (``written_by`` is ``data`` with ``settings.reports`` = data, or auto
        and a model under 1B parameters).

    Raises:
        UserError: the window leaves no room for a report's context.
        WorkerError: a worker process crashed (re-run to resume from the cache).
    """
    from .batch import WorkerSpec, stage_plan
    from .raypool import open_pool
    from .threads import update_claim

    con = store.con
    comms = rows(con, CommunityRow, "SELECT community_id, level, parent_id, size, carried_from FROM communities "
                 "ORDER BY level DESC, community_id")
    members: dict[int, list[int]] = {}
    for cid, eid in con.execute("SELECT community_id, entity_id FROM community_members ORDER BY 1, 2").fetchall():
        members.setdefault(cid, []).append(eid)
    ents = {e.entity_id: e for e in rows(con, EntityRow, "SELECT entity_id, name, type, description, degree "
                                                         "FROM entities")}
    rels = rows(con, RelationshipRow, "SELECT rel_id, source_id, target_id, description, weight, combined_degree "
                                      "FROM relationships")
    claims_of: dict[int, list[dict]] = {}
    for c in load_claims(store) if settings.claims else []:
        claims_of.setdefault(c["subject_id"], []).append(c)
    children: dict[int, list[int]] = {}
    for c in comms:
        if c.parent_id is not None:
            children.setdefault(c.parent_id, []).append(c.community_id)
    model = client.model
    n_params = getattr(model, "n_params", None)
    by_model = model_writes(settings.reports, n_params)
    with_findings = use_model_descriptions(settings, n_params)
    max_size = max((len(m) for m in members.values()), default=1)
    common = set() if by_model else lowercase_words(
        r[0] for r in con.execute("SELECT text FROM text_units").fetchall())
    system, budget = "", 0
    if by_model:
        system = prompts.text("report_system" if with_findings else "report_system_short")
        overhead = client.overhead(system, prompts.fill("report_user", context=""))
        budget = min(settings.report_context_tokens, client.n_ctx - settings.report_max_tokens) - overhead
        if budget < MIN_REPORT_CONTEXT_TOKENS:
            raise UserError(f"the {client.n_ctx}-token window leaves no room for a community report's context: "
                            "raise --n-ctx")
    reports: dict[int, Report] = {}
    stats = {"reports": 0, "carried": 0, "single": 0,
             "written_by": "model" if by_model else "data",
             "findings": "model" if by_model and with_findings else "text",
             "ungrounded_fields_replaced": 0, "workers": 1, "threads": 0, "startup_seconds": 0.0}
    calls0, hits0 = client.calls, client.cache_hits
    with store.transaction():
        store.clear("reports")
    written = [c for c in comms if c.carried_from is None]
    levels = sorted({c.level for c in written}, reverse=True)
    looped = {r.source_id for r in rels if r.source_id == r.target_id}
    n_calls = sum(1 for c in written
                  if len(members.get(c.community_id, [])) > 1 or set(members.get(c.community_id, [])) & looped) \
        if by_model else 0
    plan = None
    if n_calls and (model_factory is not None or model.path is not None):
        plan = stage_plan(model, settings, n_calls, say)
        if plan.workers == 1 and settings.executor != "ray":
            plan = None
    bar = tqdm(total=len(written), desc="reports", unit="report", disable=not progress or not written,
               dynamic_ncols=True)

    def commit(rep: Report, calls=(), puts=()) -> None:
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

    def rounds(pool):
        for level in levels:
            tasks, pending = [], {}
            for com in written:
                cid = com.community_id
                if com.level != level:
                    continue
                mem = members.get(cid, [])
                mset = set(mem)
                e_rows = [ents[e] for e in mem]
                r_rows = [r for r in rels if r.source_id in mset and r.target_id in mset]
                c_rows = [c for e in mem for c in claims_of.get(e, [])]
                if not by_model:
                    commit(without_orders(data_report(cid, level, e_rows, r_rows, c_rows, max_size, common),
                                          e_rows))
                    stats["single"] += len(mem) == 1 and not r_rows
                    continue
                if len(mem) == 1 and not r_rows:
                    e = e_rows[0]
                    commit(without_orders(Report(
                        cid, level, e.name, e.description or f"{e.name} ({e.type}) is mentioned in the documents.",
                        text_findings([], [], claims=c_rows) if c_rows else [],
                        0.0, "A single entity with no relationships.", 0, "entity"), e_rows))
                    stats["single"] += 1
                    continue
                ctx, ntok, complete = element_context(client, e_rows, r_rows, budget, c_rows)
                kind = "elements"
                if not complete and children.get(cid):
                    ctx, ntok = _subreport_context(client, cid, children, reports, members, e_rows, r_rows,
                                                   budget, c_rows)
                    kind = "sub-reports"
                pending[cid] = (cid, level, e_rows, r_rows, c_rows, ctx, ntok, kind)
                tasks.append((cid, prompts.fill("report_user", context=ctx), None))
            if pool is None:
                for cid, user, _ in tasks:
                    commit(finish(pending[cid], _write(client, system, user, settings, with_findings)))
            else:
                for cid, _key, text, calls, puts, _worker in pool.results(tasks):
                    remote["calls"] += len(calls)
                    remote["hits"] += not calls
                    commit(finish(pending.pop(cid), text), calls, puts)

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
                         src.context_tokens, "carried")
            reports[c.community_id] = rep
            carried_rows.append(rep)
    with store.transaction():
        for rep in carried_rows:
            _store_report(store, client, rep)
    stats["carried"] = len(carried_rows)
    stats["model_calls"] = client.calls - calls0 + remote["calls"]
    stats["cache_hits"] = client.cache_hits - hits0 + remote["hits"]
    return ReportsResult(**stats)


def _subreport_context(client, cid, children, reports, members, e_rows, r_rows, budget,
                       claims=None) -> tuple[str, int]:
    """Sub-community reports (largest first), then top elements (and claims), within ``budget``."""
    kids = sorted(children[cid], key=lambda k: (-len(members.get(k, [])), k))
    parts = ["-----Sub-community reports-----"]
    used = client.count(parts[0] + "\n")
    for k in kids:
        rep = reports.get(k)
        if rep is None:
            continue
        text = f"Sub-report: {rep.title}\n{rep.summary}"
        n = client.count(text + "\n")
        if used + n > budget * 3 // 4:
            break
        parts.append(text)
        used += n
    rest, n_rest, _ = element_context(client, e_rows, r_rows, budget - used, claims)
    return "\n".join(parts) + "\n" + rest, used + n_rest


def _store_report(store: Store, client: ModelClient, rep: Report) -> None:
    text = rep.full_text()
    store.con.execute("INSERT OR REPLACE INTO community_reports VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      [rep.community_id, rep.level, rep.title, rep.summary, dumps(rep.findings), rep.rating,
                       rep.rating_explanation, text, client.count(text), rep.context_tokens, rep.context_kind])


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
    (slmgraph.search.extractive.report_points)."""
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
