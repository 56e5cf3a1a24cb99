"""Names and types that a ``--prompts DIR`` folder gives the LLM-free candidate pass.

The candidate pass (:func:`slmgraph.indexing.stages.ner.find_candidates`) types names from spaCy's labels, so a type
such as ``weapon`` that no label maps onto would reach no entity. A prompts folder steers it two ways:

* its extraction examples (``extract_example_*.txt``, as ``slmgraph prompt-tune`` writes them: JSON
  with ``entities`` as ``{name: type}``, ``{name: {"type": ...}}`` or ``[{"name", "type"}]``) give each
  named entity its type (``other`` is no entity type and is skipped);
* ``entity_patterns.jsonl``, spaCy's EntityRuler phrase patterns (one ``{"label": "WEAPON", "pattern":
  "Excalibur"}`` a line; the label lower-cased is the type).

A name of the map that the text unit writes (case-sensitive, whole words) gets the map's type, and is
added as a candidate when the pass missed it. Only types among the configured ``entity_types`` act (the
model route keeps no other type either); :func:`unused_types` names the rest for a warning. Only the
user's folder counts: the bundled example steers nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

from slmgraph.errors import UserError
from slmgraph.names.forms import normalize_name
from slmgraph.indexing.stages.ner import Candidate, CandidatePass

#: Example files of a prompts folder read for names and types.
EXAMPLE_GLOB = "extract_example_*.txt"
#: EntityRuler phrase patterns of a prompts folder.
PATTERNS_FILE = "entity_patterns.jsonl"


def _example_entities(data) -> list[tuple[str, str]]:
    ents = data.get("entities") if isinstance(data, dict) else None
    out = []
    if isinstance(ents, dict):
        for name, v in ents.items():
            t = v.get("type") if isinstance(v, dict) else v
            out.append((name, t))
    elif isinstance(ents, list):
        out = [(e.get("name"), e.get("type")) for e in ents if isinstance(e, dict)]
    return [(n, t) for n, t in out if isinstance(n, str) and isinstance(t, str)]


@lru_cache(maxsize=8)
def _read(folder: str, stamp: tuple) -> tuple[tuple[str, str, str], ...]:
    """``((key, name, type), ...)`` of ``folder`` (``stamp`` = the files' sizes and mtimes, so an edit is read)."""
    found: dict[str, tuple[str, str]] = {}
    d = Path(folder)
    for f in sorted(d.glob(EXAMPLE_GLOB)):
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # not JSON: the prompt check of the model route judges the file, the map skips it
        for name, t in _example_entities(data):
            t = t.strip().lower()
            if name.strip() and t and t != "other":
                found.setdefault(normalize_name(name), (" ".join(name.split()), t))
    p = d / PATTERNS_FILE
    if p.is_file():
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                raise UserError(f"{p} line {i} is not JSON: write one {{\"label\": ..., \"pattern\": ...}} a line") from None
            pat, label = (row.get("pattern"), row.get("label")) if isinstance(row, dict) else (None, None)
            if not isinstance(pat, str) or not isinstance(label, str) or not pat.strip() or not label.strip():
                raise UserError(f"{p} line {i}: only phrase patterns are read, a string \"pattern\" and a "
                                "\"label\", e.g. {\"label\": \"WEAPON\", \"pattern\": \"Excalibur\"}")
            found[normalize_name(pat)] = (" ".join(pat.split()), label.strip().lower())
    return tuple((k, n, t) for k, (n, t) in found.items() if k)


def type_map(prompts_dir: str | None) -> dict[str, tuple[str, str]]:
    """``{normalised name: (name, type)}`` from the user's prompts folder; ``{}`` without one.

    Raises:
        UserError: a malformed line of ``entity_patterns.jsonl``.
    """
    if not prompts_dir:
        return {}
    d = Path(prompts_dir).expanduser()
    if not d.is_dir():
        return {}
    files = sorted(d.glob(EXAMPLE_GLOB)) + ([d / PATTERNS_FILE] if (d / PATTERNS_FILE).is_file() else [])
    stamp = tuple((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    return {k: (n, t) for k, n, t in _read(str(d.resolve()), stamp)}


def fingerprint(prompts_dir: str | None, entity_types: tuple[str, ...]) -> str:
    """sha256 (16 hex) of the map's entries whose type acts, "" when none does (extraction keys stay as they were)."""
    acting = sorted((k, n, t) for k, (n, t) in type_map(prompts_dir).items() if t in entity_types)
    return hashlib.sha256(json.dumps(acting).encode()).hexdigest()[:16] if acting else ""


def unused_types(prompts_dir: str | None, entity_types: tuple[str, ...]) -> list[str]:
    """Types the folder gives names that are not among ``entity_types`` (they act on nothing)."""
    return sorted({t for _, t in type_map(prompts_dir).values() if t not in entity_types})


def steered_types(prompts_dir: str | None, entity_types: tuple[str, ...]) -> set[str]:
    """Types among ``entity_types`` that the folder gives at least one name."""
    return {t for _, t in type_map(prompts_dir).values() if t in entity_types}


def _pattern(name: str) -> re.Pattern:
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in name.split()) + r"(?!\w)")


def apply(cp: CandidatePass, prompts_dir: str | None, entity_types: tuple[str, ...], budget: int) -> CandidatePass:
    """``cp`` with the map's names typed as the map says, and those the pass missed added (first in the
    text order they occur, within ``budget``, the rest left out). Returns ``cp`` itself, changed in place."""
    tmap = {k: v for k, v in type_map(prompts_dir).items() if v[1] in entity_types}
    if not tmap:
        return cp
    seen = set()
    for c in cp.candidates + cp.left_out:
        key = normalize_name(c.name)
        seen.add(key)
        if key in tmap:
            c.type = tmap[key][1]
    for key, (name, t) in tmap.items():
        if key in seen:
            continue
        hits = list(_pattern(name).finditer(cp.masked))
        if not hits:
            continue
        c = Candidate(" ".join(hits[0].group(0).split()), t, "rule", len(hits), hits[0].start())
        (cp.candidates if len(cp.candidates) < budget else cp.left_out).append(c)
    return cp
