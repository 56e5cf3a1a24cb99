"""The context a community report's prompt shows: element rows (entities, relationships, claims) within
a token budget (:func:`element_context`) and, for a parent, its children's reports standing for their
elements (:func:`subreport_context`; paper sec. 3.1.5).

* A community none of whose children has a report (a leaf, or a community whose only child is its
  carried-down copy): its relationships ranked by combined degree deg(u)+deg(v) (the paper's
  prominence), each added with its source and target entity lines, until the budget is full. Each
  description is shown without sentences already in the context and cut to the budget's description cap.
* A parent whose children have reports: each child's report (title and summary) stands for the
  child's members and inner relationships where it is shorter than they are, then the relationships
  between children and the elements of children without a report. Every element is then read once,
  at the deepest level that contains it, instead of again at every level above.
* With claims on (``Settings.claims``; :mod:`slmgraph.indexing.stages.claims`), a "Claims" section after
  entities and relationships: the claims whose subject is a member, ranked by the degrees of subject
  and object, in what the budget leaves (ARCHITECTURE.md stage 6: "source/target/claims/description").
  A community whose members have no claims gets the same context as with claims off.
"""

from __future__ import annotations

from slmgraph.indexing.stages.report_data import Report, edge_rank, entity_rank, ranked_claims
from slmgraph.model.client import ModelClient
from slmgraph.store.rows import EntityRow, RelationshipRow
from slmgraph.text.prose import sentences

#: Header of the claims section of report and local search contexts.
CLAIMS_HEADER = "-----Claims-----\nsubject,object,type,status,dates,description"

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
    ranked = sorted(rels, key=edge_rank)
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
    for e in sorted(entities, key=entity_rank):
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
    for c in ranked_claims(claims or [], by_id):
        line = claim_line(c)
        cost = client.count(line + "\n") + (0 if used_c else head_c)
        if tokens + cost > budget:
            continue  # this claim does not fit; a shorter one further down may
        tokens += cost
        used_c.append(line)
    if used_c:
        lines += [CLAIMS_HEADER] + used_c
    return "\n".join(lines), tokens, complete

def subreport_context(client: ModelClient, cid: int, children: dict[int, list[int]], reports: dict[int, "Report"],
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
