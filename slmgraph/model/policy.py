"""Who does the work of each ``auto`` setting: the model or the LLM-free route.

One rule decides every ``auto`` setting (``descriptions``, ``summaries``, ``reports``, ``answers``,
``opening``, ``helpfulness``; :data:`SETTINGS`):

1. A setting that is not ``auto`` is obeyed (``--reports model`` forces the model on).
2. With a **capability record** for the model (:class:`Record`, written by ``slmgraph bench`` and
   ``slmgraph calibrate MODEL``), the model does a stage's work when the record says it measured at
   least as good as the LLM-free route on the bench workload (``beats``).
3. Without one, the **size rule** (:data:`SIZE_RULE_PARAMS`, :data:`SIZE_RULE`): models of 1B
   parameters or more write, smaller ones do not; the helpfulness signal is the embedding for
   every size.

A record is keyed by the GGUF's sha256 (:func:`model_key`; the hash of a path is cached by path, size
and modification time, :func:`file_sha256`) and by :func:`policy_version` (the bundled prompts and the
sampler version): a record of other prompts or another sampler is stale and ignored. Records live in
:func:`records_dir` (``$SLMGRAPH_RECORDS``, else ``$XDG_DATA_HOME/slmgraph/records``, else
``~/.local/share/slmgraph/records``), one JSON file per model.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from slmgraph import models as models_package
from slmgraph.model.protocol import SAMPLER_VERSION
from slmgraph.config.prompting import bundled_dir

#: Parameter count from which the size rule lets a model write.
SIZE_RULE_PARAMS = 1_000_000_000

#: ``auto`` setting -> the bench stage whose measurement decides it.
SETTINGS = {
    "descriptions": "extract",   # JSON extraction with model-written descriptions (and gleaning)
    "summaries": "summarize",    # one model call per element with several descriptions
    "reports": "report",         # model-written community reports
    "answers": "answer",         # map and reduce of a model-written global answer
    "opening": "opening",        # the one model sentence of an extractive answer
    "helpfulness": "help",       # the model's P(yes) as the helpfulness signal
}

#: What the size rule gives a model of at least :data:`SIZE_RULE_PARAMS` parameters per setting (a
#: smaller model gets False everywhere); the helpfulness signal is the embedding for every size.
SIZE_RULE = {"descriptions": True, "summaries": True, "reports": True, "answers": True, "opening": True,
             "helpfulness": False}

#: Environment variable naming the records folder (tests point it at a temporary folder).
RECORDS_ENV = "SLMGRAPH_RECORDS"
#: Records of the bundled models from the stage bench (docs/decisions.md: capability records shipped), read when
#: the records folder has none for a model (the user's own measurement comes first).
SHIPPED_RECORDS = Path(models_package.__file__).resolve().parent / "records"


def records_dir() -> Path:
    """Folder of the capability records (not created here): ``$SLMGRAPH_RECORDS``, else
    ``$XDG_DATA_HOME/slmgraph/records``, else ``~/.local/share/slmgraph/records``."""
    if os.environ.get(RECORDS_ENV):
        return Path(os.environ[RECORDS_ENV]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "slmgraph" / "records"


def policy_version() -> str:
    """The prompt and sampler version a record was measured with: sha256 (16 hex) of every bundled
    prompt file's name and bytes (``.txt``, ``.json``; the folder's README is documentation, so editing it
    leaves every record current), then ``-s`` and the sampler version."""
    h = hashlib.sha256()
    for f in sorted(bundled_dir().iterdir()):
        if f.is_file() and f.suffix in (".txt", ".json"):
            h.update(f.name.encode("utf-8") + b"\0" + f.read_bytes())
    return f"{h.hexdigest()[:16]}-s{SAMPLER_VERSION}"


def file_sha256(path: str | Path) -> str:
    """sha256 (hex) of a file's bytes, cached in ``hashes.json`` of :func:`records_dir` by resolved path,
    size and modification time (hashing a 100+ MB GGUF on every run is slow). An unwritable cache is
    skipped."""
    p = Path(path).resolve()
    st = p.stat()
    cache_file = records_dir() / "hashes.json"
    try:
        cache = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = {}
    hit = cache.get(str(p))
    if hit and hit.get("size") == st.st_size and hit.get("mtime_ns") == st.st_mtime_ns:
        return hit["sha256"]
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    cache[str(p)] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": h.hexdigest()}
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache, indent=1), encoding="utf-8")
        tmp.replace(cache_file)
    except OSError:
        pass
    return h.hexdigest()


def model_key(model) -> str | None:
    """The record key of a loaded model: the sha256 of its GGUF (``model.path``); for a model with no
    file (a test fake), ``fingerprint-`` and its ``fingerprint``; None for no model or a bare
    parameter count."""
    if model is None or isinstance(model, int):
        return None
    path = getattr(model, "path", None)
    if path is not None and Path(path).is_file():
        return file_sha256(path)
    fp = getattr(model, "fingerprint", None)
    return f"fingerprint-{fp}" if fp else None


@dataclass
class Record:
    """A model's measured capability on the bench workload.

    Attributes:
        key: :func:`model_key` of the model.
        model: its file name.
        version: :func:`policy_version` at measurement.
        n_params: parameter count.
        stages: ``{stage: {"beats": bool, "measure": str, "model": float, "llm_free": float,
            "figures": {...}}}`` (stages of :data:`SETTINGS` values and ``claims``; quality 0..1).
        date: UTC date of the measurement; source: ``bench`` or ``calibrate``.
    """

    key: str
    model: str
    version: str
    n_params: int = 0
    stages: dict = field(default_factory=dict)
    date: str = ""
    source: str = "bench"

    def beats(self, stage: str) -> bool | None:
        """Whether the model measured at least as good as the LLM-free route at ``stage``; None when
        the stage was not measured."""
        s = self.stages.get(stage)
        return None if s is None else bool(s.get("beats"))


def record_path(key: str) -> Path:
    """The record file of a model key."""
    return records_dir() / f"{key[:40]}.json"


def write_record(rec: Record) -> Path:
    """Write ``rec`` to :func:`record_path` (folders created; an earlier record replaced).

    Raises:
        OSError: the records folder cannot be written.
    """
    path = record_path(rec.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(rec.__dict__, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    _CACHE.clear()
    return path


_CACHE: dict[tuple[str, str], tuple[Record | None, str]] = {}


def lookup(model) -> tuple[Record | None, str]:
    """``(record, why)`` for a loaded model: the current record, or None and why there is none
    (``no record``, ``stale record``, ``no model``, ``unreadable record``)."""
    key = model_key(model)
    if key is None:
        return None, "no model"
    ck = (str(records_dir()), key)
    if ck in _CACHE:
        return _CACHE[ck]
    path = record_path(key)
    if not path.is_file():  # the bundled models' records ship with slmgraph
        path = SHIPPED_RECORDS / path.name
    out: tuple[Record | None, str]
    if not path.is_file():
        out = (None, "no record")
    else:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            rec = Record(**{k: data[k] for k in Record.__dataclass_fields__ if k in data})
        except (OSError, ValueError, TypeError, KeyError):
            out = (None, f"unreadable record {path}")
        else:
            out = (rec, "record") if rec.version == policy_version() else (None, "stale record")
    _CACHE[ck] = out
    return out


@dataclass(frozen=True)
class Route:
    """A decision: ``model`` (the model does the stage's work) and ``reason`` (one clause, for the
    ledger and ``stats``)."""

    model: bool
    reason: str


def _params_text(n: int | None) -> str:
    if not n:
        return "unknown size"
    return f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"


def route(setting: str, mode: str, model) -> Route:
    """Who does ``setting``'s work for ``mode`` with ``model`` (a loaded model, its parameter count, or
    None).

    Args:
        setting: a key of :data:`SETTINGS`.
        mode: the setting's value; "auto" is decided here, "model" forces the model on, any other value
            ("text", "join", "data", "extractive", "off", "embedding", "none") keeps it off.

    Raises:
        KeyError: an unknown setting.
    """
    stage = SETTINGS[setting]
    if mode != "auto":
        return Route(mode == "model", f"--{setting} {mode}")
    if model is None:
        return Route(False, "no model")
    rec, why = lookup(model)
    if rec is not None:
        st = rec.stages.get(stage)
        if st is None:
            return Route(False, f"capability record: {stage} not measured")
        m, f = st.get("model"), st.get("llm_free")
        # a stage of quality 0 loses a tie at 0 (slmgraph.eval.calibrate.record_of): not "worse than"
        verdict = "at least as good as" if st.get("beats") else (
            "no better than" if m is not None and f is not None and m >= f else "worse than")
        return Route(bool(st.get("beats")), f"capability record: model {st.get('model')} {verdict} LLM-free "
                                             f"{st.get('llm_free')} ({st.get('measure')})")
    n = model if isinstance(model, int) else getattr(model, "n_params", None)
    big = bool(n and n >= SIZE_RULE_PARAMS)
    on = big and SIZE_RULE[setting]
    return Route(on, f"size rule ({why}): {_params_text(n)} {'>=' if big else '<'} 1B parameters")


def model_does(setting: str, mode: str, model) -> bool:
    """:func:`route`'s ``model`` flag."""
    return route(setting, mode, model).model


def helpfulness(mode: str, model) -> str:
    """The helpfulness signal for ``Settings.helpfulness`` = ``mode``: the mode itself unless auto;
    auto -> ``model`` when the record says the model's P(yes) separates on- from off-topic questions
    at least as well as the embedding, else ``embedding``."""
    if mode != "auto":
        return mode
    return "model" if route("helpfulness", "auto", model).model else "embedding"


def routes(settings, model) -> dict[str, dict]:
    """``{setting: {"route": "model" | "llm-free", "reason": ...}}`` of every :data:`SETTINGS` key for
    ``settings`` and ``model`` (written to the index's meta for ``stats``)."""
    out = {}
    for s in SETTINGS:
        r = route(s, getattr(settings, s, "auto"), model)
        out[s] = {"route": "model" if r.model else "llm-free", "reason": r.reason}
    return out


def notice(settings, model) -> str | None:
    """One line for ``index``/``query`` when an ``auto`` setting is decided by the size rule (no current
    record for the model), naming the command that measures it; None otherwise."""
    if model is None or not any(getattr(settings, s, "auto") == "auto" for s in SETTINGS):
        return None
    rec, why = lookup(model)
    if rec is not None:
        return None
    target = getattr(model, "path", None) or getattr(model, "name", "MODEL")
    n = getattr(model, "n_params", None)
    return (f"{why} for {getattr(model, 'name', 'this model')}: auto settings follow the size rule "
            f"({_params_text(n)}: {'the model writes' if n and n >= SIZE_RULE_PARAMS else 'LLM-free routes'}); "
            f"measure it with: slmgraph calibrate {target}")


def today() -> str:
    """UTC date and time for a record."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
