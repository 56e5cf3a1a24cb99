"""Text helpers shared by the stages and the query engines (the lowest layer: imports no slmgraph module).

* :func:`parse_json`: model output to JSON, repaired with the json-repair library.
* :func:`degenerate`: model text that is a copied list or a loop rather than prose.
"""

from __future__ import annotations

import json
import re

import json_repair


def parse_json(text: str) -> tuple[object, str]:
    """Parse model output as JSON, repairing it if needed (json-repair library).

    Returns:
        ``(value, status)``: status ``ok`` (valid as generated), ``repaired``
        (e.g. a record cut by ``max_tokens``, closed by json-repair) or
        ``failed`` (value None).
    """
    try:
        return json.loads(text), "ok"
    except (json.JSONDecodeError, ValueError):
        pass
    try:
        value = json_repair.loads(text)
    except Exception:  # json-repair raises assorted errors on garbage
        return None, "failed"
    if value in ("", None, [], {}):
        return None, "failed"
    return value, "repaired"



def degenerate(text: str) -> bool:
    """True for model text that is a copied list or a loop rather than prose:
    a comma-separated part or a word repeated 3+ times, or a run of 6+ digits
    ("Gordon,Gordon,Gordon", "10.1012303010101")."""
    parts = [p.strip().casefold() for p in text.split(",") if p.strip()]
    if parts and max(parts.count(p) for p in parts) >= 3:
        return True
    if re.search(r"\d{6,}", text):
        return True
    words = re.findall(r"\w+", text.casefold())
    long_words = [w for w in words if len(w) > 3]
    return bool(long_words) and max(long_words.count(w) for w in long_words) >= max(3, len(long_words) // 3)
