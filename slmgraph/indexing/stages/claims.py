"""Claims (covariates): optional statements about entities, per text unit
(paper sec. 3.1.2 "covariates"; GraphRAG docs, "extract_claims").

Off by default (``Settings.claims``, CLI ``slmgraph index --claims``). When on,
every text unit with at least one extracted entity (``entity_mentions``) gets
one more model call, after extraction and before the graph is built. The text
unit is shown as numbered sentences (:func:`slmgraph.text.prose.sentences`), and the
model *chooses* rather than writes: under a JSON schema it cannot break, each
claim's ``sentence`` is an ``enum`` of the sentence numbers, subject and object
are ``enum``s of the unit's entity names (the object may be ``NONE``), status an
``enum`` TRUE / FALSE / SUSPECTED, type and dates short capped strings. The
claim's source quote is the chosen sentence, verbatim, so it is always in the
text (a small model's written quotes gain invented text; docs/decisions.md:
claims quote a chosen sentence). With models under 1B parameters (``--descriptions auto``)
the description is the sentence too; larger models write it. Each claim is
then validated, because a small model still chooses badly:

* the chosen sentence must name the subject (tolerant match,
  :func:`slmgraph.names.forms.name_occurs`), otherwise the claim is dropped and
  counted (``ungrounded``);
* subject == object: the object is cleared (the claim is kept, counted ``self``);
* a repeated claim, a sentence number or a subject/object outside the enums
  (possible only in output repaired after a cut), is dropped and counted
  (``invalid``);
* a date that is not ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, or whose year
  is not in the text unit (copied from the few-shot example), is stored as
  NULL; a date more precise than the text states it is cut to what it states
  ("June 2022" gives ``2022-06``, never ``2022-06-28``); a status outside the enum (possible only in repaired output) becomes
  SUSPECTED; a model-written description sharing under a third of its content
  words with the text unit is replaced by the sentence.

Claims are stored in ``claims`` keyed by text unit (``chunk_id``) and by the
*mention* keys of their entities (``subject_norm`` / ``object_norm`` =
:func:`slmgraph.names.forms.normalize_name` of the names, the same keys as
``entity_mentions.norm``). Entity resolution may merge a mention key into
another entity; :func:`load_claims` maps keys to entities through
``entities.norm`` and, for merged-away keys, ``merge_log.into_norm``.

Resumable and content-keyed like extraction: each text unit gets a
``claim_extractions`` marker whose key is sha256(text, model, prompts, claim
settings, entity names), committed with its claims in one transaction. A unit
whose key is unchanged costs nothing on a re-run; ``ingest`` deletes the
claims and markers of removed text units. Turning claims off again deletes
every claim row and marker (:func:`clear_claims`), so reports and local
search never see stale claims; the model outputs stay in the index's cache,
so turning claims back on costs no model call for unchanged text.

One concern, over 500 lines: the claims stage (its schema, call, checks and rows).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from tqdm import tqdm

from slmgraph.config.settings import Settings
from slmgraph.errors import GrammarError
from slmgraph.model.client import CHARS_PER_TOKEN, DEADLINE_UNIT_S, SAMPLER_VERSION, ModelClient
from slmgraph.indexing.stages.extract_routes import use_model_descriptions
from slmgraph.names.forms import content_words, cut, is_grounded, name_occurs, normalize_name
from slmgraph.config.prompting import Prompts
from slmgraph.store.db import Store, dumps
from slmgraph.text.prose import fold, parse_json, sentences

#: Part of every claim key: bump it when a change to this module changes what
#: a claim extraction yields, so indexes re-extract claims.
CLAIMS_VERSION = "2"  # 2: the quote is a chosen sentence

STATUSES = ("TRUE", "FALSE", "SUSPECTED")
NONE = "NONE"  #: the schema's "no object" / "no date" value
TYPE_MAX_CHARS = 40  #: grammar maxLength of a claim type
DATE_MAX_CHARS = 10  #: grammar maxLength of a date (YYYY-MM-DD)
MIN_QUOTE_WORDS = 3  #: a shorter source quote (e.g. only a name) is no evidence
_DATE = re.compile(r"^(\d{4})(?:-(0[1-9]|1[0-2])(?:-(0[1-9]|[12]\d|3[01]))?)?$")
_QUOTE_EDGES = " \t\n.,;:!?\"'`\u2026()[]"


@dataclass
class ClaimExtraction:
    """Validated claims of one text unit.

    Attributes:
        claims: ``{subject_norm, object_norm (None = no object), type, status,
            start_date, end_date (None = unknown), description, source_quote}``.
        n_dropped: claims dropped by validation (``n_ungrounded + n_invalid``).
        n_ungrounded / n_invalid: dropped because the chosen sentence does not
            name the subject / duplicate or unknown name or sentence.
        n_self: claims whose object was the subject (object cleared, claim kept).
        n_replaced: descriptions replaced by the source quote.
        status: ``ok`` | ``repaired`` | ``truncated`` | ``failed`` | ``no_entities``.
        raw: the model's output as generated.
        finish_reason: of the model call (``deadline``: redone on the next run).
    """

    claims: list[dict] = field(default_factory=list)
    n_dropped: int = 0
    n_ungrounded: int = 0
    n_self: int = 0
    n_invalid: int = 0
    n_replaced: int = 0
    status: str = "ok"
    raw: str = ""
    finish_reason: str = "stop"


def claims_schema(names: list[str], n_sentences: int, settings: Settings, with_description: bool = False) -> dict:
    """JSON schema of one text unit's claims: ``{"claims": [claim, ...]}``.

    Args:
        names: the text unit's entity names (surface forms), the subject enum;
            the object enum adds ``NONE``.
        n_sentences: the unit's numbered sentences; ``sentence`` is an enum of ``1..n_sentences``.
        with_description: the model writes a description (models of 1B
            parameters or more); else the sentence is the description.

    ``claims`` has at most ``settings.max_claims`` items; each has every field
    required, ``sentence`` first (the subject and object are then chosen
    knowing the sentence), status an enum of :data:`STATUSES`, type at most
    :data:`TYPE_MAX_CHARS` characters, dates :data:`DATE_MAX_CHARS`. Flat,
    like the extraction schema: grammar sampling cost grows with the schema
    (ARCHITECTURE.md "Running the model on a CPU").
    """
    date = {"type": "string", "maxLength": DATE_MAX_CHARS}
    props = {
        "sentence": {"type": "integer", "enum": list(range(1, max(1, n_sentences) + 1))},
        "subject": {"type": "string", "enum": list(names)},
        "object": {"type": "string", "enum": list(names) + [NONE]},
        "type": {"type": "string", "maxLength": TYPE_MAX_CHARS},
        "status": {"type": "string", "enum": list(STATUSES)},
        "start_date": date,
        "end_date": date,
    }
    if with_description:
        props["description"] = {"type": "string", "maxLength": settings.description_max_chars}
    return {
        "type": "object",
        "properties": {"claims": {"type": "array", "maxItems": settings.max_claims,
                                  "items": {"type": "object", "properties": props, "required": list(props)}}},
        "required": ["claims"],
    }


def numbered(text: str) -> tuple[list[str], str]:
    """``(sentences, block)``: the text unit's sentences and the block shown to the model,
    one ``[i] sentence`` line each (i from 1, whitespace folded)."""
    sents = [" ".join(x.split()) for x in sentences(text)]
    return sents, "\n".join(f"[{i}] {x}" for i, x in enumerate(sents, start=1))


def claims_token_cap(name_tokens: list[int], settings: Settings, with_description: bool = False) -> int:
    """Completion cap of one claims call (tokens): room for ``max_claims``
    full claims, at most ``extract_max_tokens``.

    Args:
        name_tokens: tokens of each entity name in the model's tokenizer.
        with_description: the schema has a description (see :func:`claims_schema`).

    Per claim: two names, ~45 tokens of JSON keys and punctuation, the
    sentence number ~2, the type (:data:`TYPE_MAX_CHARS` / 3.5), status ~3,
    two dates ~6 each, a description ``description_max_chars`` / 3.5 (~1
    token per 3.5 characters of English BPE) when the model writes one; then
    25 % headroom for the spacing the grammar allows, as in
    :func:`slmgraph.indexing.stages.extract_methods.extract_token_cap`. Runaway output is stopped
    earlier by the loop guard.
    """
    avg = sum(name_tokens) / len(name_tokens) if name_tokens else 4
    per = 2 * avg + 45 + 2 + TYPE_MAX_CHARS / CHARS_PER_TOKEN + 3 + 12
    if with_description:
        per += settings.description_max_chars / CHARS_PER_TOKEN
    return int(min(settings.extract_max_tokens, 1.25 * (15 + settings.max_claims * per)))


def quote_in_text(quote: str, folded_text: str) -> bool:
    """True when ``quote`` (ends' punctuation and quote marks stripped) occurs in
    the text unit and has at least :data:`MIN_QUOTE_WORDS` words.

    Args:
        folded_text: the text unit passed through :func:`fold`.
    """
    q = fold(quote).strip(_QUOTE_EDGES)
    return len(q.split()) >= MIN_QUOTE_WORDS and q in folded_text


_MONTHS = {m: i for i, ms in enumerate(("jan january", "feb february", "mar march", "apr april", "may",
                                        "jun june", "jul july", "aug august", "sep sept september",
                                        "oct october", "nov november", "dec december"), start=1)
           for m in ms.split()}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR4 = r"(\d{4})"
#: Date mentions in text, each with the order of its (year, month, day) groups; a numeric d/m/y or m/d/y
#: date is read both ways.
_TEXT_DATES = [
    (re.compile(rf"(?<!\d){_YEAR4}-(\d{{1,2}})(?:-(\d{{1,2}}))?(?!\d)"), (1, 2, 3)),
    (re.compile(rf"(?<!\w){_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR4}(?!\d)", re.I), (3, 2, 1)),
    (re.compile(rf"(?<!\w){_MONTH}\s+{_DAY},?\s+{_YEAR4}(?!\d)", re.I), (3, 1, 2)),
    (re.compile(rf"(?<!\w){_MONTH},?\s+(?:of\s+)?{_YEAR4}(?!\d)", re.I), (2, 1, None)),
    (re.compile(rf"(?<!\d)(\d{{1,2}})[./](\d{{1,2}})[./]{_YEAR4}(?!\d)"), (3, 2, 1)),
    (re.compile(rf"(?<!\d)(\d{{1,2}})[./](\d{{1,2}})[./]{_YEAR4}(?!\d)"), (3, 1, 2)),
    (re.compile(rf"(?<!\d)(\d{{1,2}})/{_YEAR4}(?!\d)"), (2, 1, None)),
    (re.compile(rf"(?<!\d){_YEAR4}(?!\d)"), (1, None, None)),
]


def stated_dates(text: str) -> set[tuple[int, ...]]:
    """The dates ``text`` states, each at the precision it states it and every coarser one:
    ``(year,)``, ``(year, month)``, ``(year, month, day)``. Read: ISO dates, "28 June 2022",
    "June 28, 2022", "June 2022", "28.06.2022" / "06/28/2022" (both readings), "06/2022", a bare year."""
    out: set[tuple[int, ...]] = set()
    for rx, (yi, mi, di) in _TEXT_DATES:
        for m in rx.finditer(text):
            y = int(m.group(yi))
            mo = m.group(mi) if mi else None
            mo = (_MONTHS.get(mo.lower().rstrip(".")) if mo and not mo.isdigit() else int(mo)) if mo else None
            d = int(m.group(di)) if di and m.group(di) else None
            out.add((y,))
            if mo and 1 <= mo <= 12:
                out.add((y, mo))
                if d and 1 <= d <= 31:
                    out.add((y, mo, d))
    return out


def clean_date(value: object, text: str) -> str | None:
    """An ISO date (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``) cut to the precision at which ``text`` states
    it (:func:`stated_dates`: "2022-06-28" for a text saying only "June 2022" is ``2022-06``), else None
    (``NONE``, free text, or a year the model did not read in the text unit)."""
    s = str(value or "").strip()
    m = _DATE.match(s)
    if not m:
        return None
    parts = tuple(int(g) for g in m.groups() if g)
    stated = stated_dates(text)
    while parts and parts not in stated:
        parts = parts[:-1]
    if not parts:
        return None
    return "-".join([f"{parts[0]:04d}"] + [f"{p:02d}" for p in parts[1:]])


def validate_claims(data: object, names: dict[str, str], text: str, settings: Settings,
                    sents: list[str] | None = None) -> ClaimExtraction:
    """Keep the well-formed, grounded, non-duplicate claims of a model output.

    Args:
        data: parsed output, ``{"claims": [...]}`` (a bare list is accepted).
        names: the unit's entity names -> mention key (``entity_mentions``
            name -> norm); a model name is looked up as written, then by
            :func:`slmgraph.names.forms.normalize_name`.
        text: the text unit.
        sents: its numbered sentences (:func:`numbered`); None = split ``text``.

    Returns:
        A :class:`ClaimExtraction` (status left ``ok``; the caller sets it).
        Each claim's ``source_quote`` is its chosen sentence, verbatim.
    """
    out = ClaimExtraction()
    if sents is None:
        sents, _ = numbered(text)
    lookup = dict(names)
    for name, norm in names.items():
        lookup.setdefault(normalize_name(name), norm)
    words = set(content_words(text))
    raw = data.get("claims") if isinstance(data, dict) else data
    seen: set[tuple] = set()
    for c in raw if isinstance(raw, list) else []:
        if not isinstance(c, dict):
            out.n_invalid += 1
            continue
        subj_name, obj_name = str(c.get("subject") or ""), str(c.get("object") or NONE)
        no_object = obj_name.strip().upper() == NONE
        subj = lookup.get(subj_name) or lookup.get(normalize_name(subj_name))
        obj = None if no_object else (lookup.get(obj_name) or lookup.get(normalize_name(obj_name)))
        try:
            idx = int(c.get("sentence"))
        except (TypeError, ValueError):
            idx = 0
        if subj is None or (obj is None and not no_object) or not 1 <= idx <= len(sents):
            out.n_invalid += 1
            continue
        quote = sents[idx - 1]
        if not name_occurs(subj_name, quote) and not any(
                name_occurs(n, quote) for n, k in names.items() if k == subj):
            out.n_ungrounded += 1
            continue
        if subj == obj:
            obj = None  # a claim about its subject alone
            out.n_self += 1
        status = str(c.get("status") or "").strip().upper()
        ctype = " ".join(str(c.get("type") or "").split()).upper()[:TYPE_MAX_CHARS] or "UNKNOWN"
        desc = cut(str(c.get("description") or ""), settings.description_max_chars) if "description" in c else ""
        if not desc or not is_grounded(desc, words):
            if desc:
                out.n_replaced += 1
            desc = cut(quote, settings.description_max_chars)
        key = (subj, obj, ctype, idx)
        if key in seen:
            out.n_invalid += 1
            continue
        seen.add(key)
        out.claims.append({"subject_norm": subj, "object_norm": obj, "type": ctype,
                           "status": status if status in STATUSES else "SUSPECTED",
                           "start_date": clean_date(c.get("start_date"), text),
                           "end_date": clean_date(c.get("end_date"), text),
                           "description": desc, "source_quote": quote})
    out.n_dropped = out.n_ungrounded + out.n_invalid
    return out


def extract_claims(client: ModelClient, prompts: Prompts, system: str, text: str, names: dict[str, str],
                   settings: Settings) -> ClaimExtraction:
    """Claims of one text unit: one model call (ledger stage ``claims``).

    Args:
        system: the filled ``claims_system`` prompt (identical for every unit,
            so its KV state is reused).
        names: entity name -> mention key of the unit's extracted entities.

    No names: no call, status ``no_entities``. The text goes to the model as
    numbered sentences (:func:`numbered`). The call is capped by
    :func:`claims_token_cap` and stopped on a loop or after 120 s like
    extraction; output cut short is repaired with json-repair (status
    ``truncated``).
    """
    if not names:
        return ClaimExtraction(status="no_entities")
    ordered = sorted(names)
    sents, block = numbered(text)
    with_desc = use_model_descriptions(settings, client.model)
    user = prompts.fill("claims_user", entities="; ".join(ordered), text=block)
    try:
        gen = client.call("claims", system, user, schema=claims_schema(ordered, len(sents), settings, with_desc),
                          max_tokens=claims_token_cap([client.count(n) for n in ordered], settings, with_desc),
                          deadline_s=DEADLINE_UNIT_S)
    except GrammarError as exc:  # this unit's schema cannot be served: recorded as failed, the run goes on
        return ClaimExtraction(status="failed", raw=f"grammar: {exc}")
    data, status = parse_json(gen.text)
    if status == "repaired" and gen.finish_reason in ("length", "repetition", "deadline"):
        status = "truncated"
    out = validate_claims(data, names, text, settings, sents)
    out.status, out.raw, out.finish_reason = status, gen.text, gen.finish_reason
    return out


def claims_key(text: str, model_fp: str, prompt_fp: str, names: dict[str, str], settings: Settings) -> str:
    """Content key of a text unit's claims: sha256(text, model, prompts, the settings whose field metadata puts
    them in the ``claims`` key, entity names and keys), 32 hex."""
    parts = [CLAIMS_VERSION, SAMPLER_VERSION, text, model_fp, prompt_fp, sorted(names.items()),
             sorted(settings.key_values("claims").items())]
    return hashlib.sha256(dumps(parts).encode()).hexdigest()[:32]


def clear_claims(store: Store) -> int:
    """Delete every claim and claim marker (claims turned off). Returns the claims deleted."""
    n = store.count("claims")
    if n or store.count("claim_extractions"):
        with store.transaction() as con:
            con.execute("DELETE FROM claims")
            con.execute("DELETE FROM claim_extractions")
    return n


@dataclass
class ClaimsResult:
    """What the claims stage did: ``extracted`` (units given a model call now), ``reused`` (units already up to
    date), ``no_entities`` (units without entities: no call), ``claims`` (stored now), ``dropped`` (of which
    ``ungrounded``: the sentence does not name the subject; ``invalid``: duplicates, unknown names or
    sentences), ``self`` (subject = object, kept without an object), ``descriptions_replaced``, ``status``
    (status -> units) and ``total`` (claims in the index)."""
    extracted: int = 0
    reused: int = 0
    no_entities: int = 0
    claims: int = 0
    dropped: int = 0
    ungrounded: int = 0
    self: int = 0
    invalid: int = 0
    descriptions_replaced: int = 0
    status: dict[str, int] = field(default_factory=dict)
    total: int = 0

    def summary(self, settings: Settings) -> list[str]:
        """The progress line ``index`` prints."""
        return [f"claims: {self.extracted} text units read, {self.reused} reused, {self.no_entities} without "
                f"entities; {self.claims} claims stored ({self.self} with subject = object kept without an object), "
                f"{self.dropped} dropped ({self.ungrounded} whose sentence does not name the subject, {self.invalid} "
                f"duplicates or unknown names or sentences); {self.total} claims in the index"]


@dataclass
class ClaimsRemoved:
    """The claims stage under claims off: ``removed`` claims of an earlier run deleted (:func:`clear_claims`)."""
    removed: int

    def summary(self, settings: Settings) -> list[str]:
        """The progress line ``index`` prints (none when nothing was removed)."""
        return [f"claims: off; {self.removed} claims of an earlier run removed"] if self.removed else []


def run_claims(store: Store, client: ModelClient, prompts: Prompts, settings: Settings,
               progress: bool = True) -> ClaimsResult:
    """Extract the claims of every text unit that has no up-to-date marker.

    Each unit's claims and marker are committed in one transaction as soon as
    they are made, so a killed run loses at most the unit in flight. Claims
    and markers of text units no longer in ``text_units`` are deleted first.

    Returns:
        :class:`ClaimsResult`.
    """
    con = store.con
    gone = con.execute("SELECT count(*) FROM claim_extractions WHERE chunk_id NOT IN "
                       "(SELECT chunk_id FROM text_units)").fetchone()[0] + con.execute(
        "SELECT count(*) FROM claims WHERE chunk_id NOT IN (SELECT chunk_id FROM text_units)").fetchone()[0]
    if gone:  # (nothing is written when nothing is gone: a no-op re-run leaves the file as it is)
        with store.transaction():
            for table in ("claims", "claim_extractions"):
                con.execute(f"DELETE FROM {table} WHERE chunk_id NOT IN (SELECT chunk_id FROM text_units)")
    prompt_fp = prompts.digest("claims_system", "claims_user", "claims_example")
    model_fp = client.model.fingerprint
    names: dict[str, dict[str, str]] = {}
    for chunk_id, name, norm in con.execute("SELECT chunk_id, name, norm FROM entity_mentions WHERE norm <> '' "
                                            "ORDER BY chunk_id, norm, name").fetchall():
        names.setdefault(chunk_id, {}).setdefault(name, norm)
    rows = con.execute("SELECT t.chunk_id, t.text, c.cache_key FROM text_units t LEFT JOIN claim_extractions c "
                       "USING (chunk_id) ORDER BY t.doc_id, t.ord").fetchall()
    todo, reused = [], 0
    for chunk_id, text, have in rows:
        key = claims_key(text, model_fp, prompt_fp, names.get(chunk_id, {}), settings)
        if have == key:
            reused += 1
        else:
            todo.append((chunk_id, text, key))
    system = prompts.fill("claims_system", example=prompts.text("claims_example").strip())
    stats = {"extracted": 0, "reused": reused, "no_entities": 0, "claims": 0, "dropped": 0, "ungrounded": 0,
             "self": 0, "invalid": 0, "descriptions_replaced": 0, "status": {}}
    next_id = (con.execute("SELECT max(claim_id) FROM claims").fetchone()[0] or 0) + 1
    bar = tqdm(todo, desc="claims", unit="unit", disable=not progress or not todo, dynamic_ncols=True)
    for chunk_id, text, key in bar:
        ex = extract_claims(client, prompts, system, text, names.get(chunk_id, {}), settings)
        with store.transaction():
            con.execute("DELETE FROM claims WHERE chunk_id = ?", [chunk_id])
            # A call cut by the wall-clock deadline depends on machine load: keep
            # its claims for now, but leave the key empty so the next run redoes it.
            con.execute("INSERT OR REPLACE INTO claim_extractions (chunk_id, cache_key, status, n_claims, n_dropped, "
                        "n_ungrounded, raw) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [chunk_id, None if ex.finish_reason == "deadline" else key, ex.status, len(ex.claims),
                         ex.n_dropped, ex.n_ungrounded, ex.raw])
            if ex.claims:
                con.executemany("INSERT INTO claims (claim_id, chunk_id, subject_norm, object_norm, type, status, "
                                "start_date, end_date, description, source_quote) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                [[next_id + i, chunk_id, c["subject_norm"], c["object_norm"], c["type"], c["status"],
                                  c["start_date"], c["end_date"], c["description"], c["source_quote"]]
                                 for i, c in enumerate(ex.claims)])
        next_id += len(ex.claims)
        if ex.status == "no_entities":
            stats["no_entities"] += 1
        else:
            stats["extracted"] += 1
        stats["claims"] += len(ex.claims)
        stats["dropped"] += ex.n_dropped
        stats["ungrounded"] += ex.n_ungrounded
        stats["self"] += ex.n_self
        stats["invalid"] += ex.n_invalid
        stats["descriptions_replaced"] += ex.n_replaced
        stats["status"][ex.status] = stats["status"].get(ex.status, 0) + 1
        bar.set_postfix(claims=stats["claims"], dropped=stats["dropped"], refresh=False)
    stats["total"] = store.count("claims")
    return ClaimsResult(**stats)


def resolve_norm(norm: str | None, merged: dict[str, str], known: dict[str, int]) -> int | None:
    """Entity id of a mention key: ``norm`` itself if it is an entity's
    ``norm``, else the entity it was merged into (``merge_log``, followed
    through chains), else None."""
    seen = set()
    while norm is not None and norm not in known and norm in merged and norm not in seen:
        seen.add(norm)
        norm = merged[norm]
    return known.get(norm) if norm is not None else None


def load_claims(store: Store) -> list[dict]:
    """Every claim whose subject is an entity of the current graph.

    Subject and object keys are mapped to entities through ``entities.norm``
    and, for keys merged away by entity resolution, ``merge_log.into_norm``
    (:func:`resolve_norm`). A claim whose subject has no entity is left out;
    an object with no entity becomes None.

    Returns:
        list of ``{claim_id, chunk_id, subject_id, subject, object_id, object,
        type, status, start_date, end_date, description, source_quote}``
        (``subject``/``object``: entity names), ordered by claim id.
    """
    con = store.con
    if not store.has_table("claims"):
        return []  # an index written before claims existed (opened read-only by a query)
    known: dict[str, int] = {}
    name_of: dict[int, str] = {}
    for eid, norm, name in con.execute("SELECT entity_id, norm, name FROM entities").fetchall():
        known[norm] = eid
        name_of[eid] = name
    merged = {n: into for n, into in con.execute(
        "SELECT norm, into_norm FROM merge_log WHERE into_norm IS NOT NULL ORDER BY norm, into_norm").fetchall()} \
        if store.has_table("merge_log") else {}
    out = []
    for row in con.execute("SELECT claim_id, chunk_id, subject_norm, object_norm, type, status, start_date, end_date, "
                           "description, source_quote FROM claims ORDER BY claim_id").fetchall():
        sid = resolve_norm(row[2], merged, known)
        if sid is None:
            continue
        oid = resolve_norm(row[3], merged, known)
        if oid == sid:
            oid = None  # subject and object merged into one entity
        out.append({"claim_id": row[0], "chunk_id": row[1], "subject_id": sid, "subject": name_of[sid],
                    "object_id": oid, "object": name_of[oid] if oid is not None else None, "type": row[4],
                    "status": row[5], "start_date": row[6], "end_date": row[7], "description": row[8],
                    "source_quote": row[9]})
    return out
