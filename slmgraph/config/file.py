"""The settings file ``slmgraph.toml``: written by ``slmgraph init``, read by
``index``, ``estimate`` and ``query`` (and by :func:`slmgraph.index`).

Every key is a field of :class:`slmgraph.config.settings.Settings` with the same name;
:data:`SPEC` gives each one a section, a type, a one-line help text and the
command-line flag that overrides it. The file ``init`` writes is generated from
``Settings()`` and :data:`SPEC`, so its defaults cannot drift from the code
(``tests/test_settings_file.py`` checks that every settable field has a spec
and that the generated file reads back as the defaults).

Precedence: a command-line flag the user typed > the settings file > the
default. :func:`resolve` also returns where each value came from; ``index``
records that in the index's ``meta`` table (key ``settings_sources``) and
``stats`` shows it.

The file is TOML, read with the standard library's ``tomllib`` (Python 3.11+;
the ``tomli`` backport on 3.10, the same parser).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from dataclasses import dataclass
from pathlib import Path

from slmgraph.config.settings import (
    Answers, Descriptions, EmbedPrecision, Executor, ExtractMode, Extractor, Helpfulness, Opening, Reports, Settings, Summaries,
    parse_choices, physical_cores,
)
from slmgraph.errors import UserError, echo_repr
from slmgraph.outputs import output_folder

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

FILE_NAME = "slmgraph.toml"


@dataclass(frozen=True)
class Key:
    """One settable key: ``kind`` is int | float | bool | str | choice | strlist | shares;
    ``optional`` keys default to unset (written commented out); ``flag`` is the CLI option
    that overrides it (None: settable only in the file); ``path`` values are resolved
    relative to the settings file's folder."""

    name: str
    section: str
    kind: str
    help: str
    flag: str | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False
    path: bool = False
    minimum: float | None = None


#: Settings fields the file does not set: derived from another key.
NOT_IN_FILE = {"threads_explicit"}

#: Keys a settings file may still hold that no code reads: ``{key: why}``; :func:`load` drops them with a
#: one-line notice.
DEPRECATED = {"temperature": "decoding is always greedy, so the same input gives the same index"}

#: Flags that set a key besides its own flag: ``{argparse dest: [fields]}``
#: (``--no-reports`` sets ``reports`` = none).
EXTRA_FLAGS = {"no_reports": ["reports"]}

def _values(mode) -> tuple[str, ...]:
    return tuple(m.value for m in mode)


#: Every key of the settings file, in file order.
SPEC: tuple[Key, ...] = (
    Key("model_path", "model", "str", "GGUF model file; unset = the bundled SmolLM2-135M-Instruct Q4_1",
        "--model", optional=True, path=True),
    Key("n_ctx", "model", "int", "context window packed for, in tokens (SmolLM2's trained window is 8k)",
        "--n-ctx", minimum=2048),
    Key("n_threads", "model", "int", "llama.cpp threads per process; unset = the thread plan over the physical "
        "cores", "--threads", optional=True, minimum=1),
    Key("workers", "model", "int", "extraction worker processes; unset = the thread plan (workers x threads <= "
        "cores)", "--workers", optional=True, minimum=1),
    Key("executor", "model", "choice", "where extraction and report writing run: local worker processes or Ray "
        "actors (pip install 'slmgraph[ray]')", "--executor", choices=_values(Executor)),
    Key("ray_address", "model", "str", "with executor = ray: the Ray cluster to join (HEAD:6379 or auto); unset = "
        "a local Ray instance", "--ray-address", optional=True),
    Key("seed", "model", "int", "sampler and shuffle seed", "--seed"),
    Key("chunk_size", "chunking", "int", "text unit size in model tokens (paper sec. 3.1.1: 600)", "--chunk-size",
        minimum=50),
    Key("chunk_overlap", "chunking", "int", "overlap of consecutive text units in tokens", "--chunk-overlap",
        minimum=0),
    Key("extractor", "extraction", "choice", "llm: the model types and relates candidate names; nlp: no model "
        "calls (baseline)", "--extractor", choices=_values(Extractor)),
    Key("entity_types", "extraction", "strlist", "entity types offered to the extractor", "--entity-types"),
    Key("descriptions", "extraction", "choice", "who writes entity/relationship descriptions: model, text "
        "(sentences of the text unit) or auto (model if >= 1B parameters)", "--descriptions",
        choices=_values(Descriptions)),
    Key("cooccurrence", "extraction", "bool", "also relate extracted entities named in one sentence",
        "--no-cooccurrence"),
    Key("max_candidates", "extraction", "int", "candidate names per text unit; more are ranked, left out and "
        "counted; unset = 20 when the model reads them, 60 without model calls", "--max-candidates", optional=True,
        minimum=1),
    Key("ner_model", "extraction", "str", "spaCy NER pipeline of the candidate pass: auto, none, or a pipeline "
        "name or path", "--ner-model"),
    Key("caps_union", "extraction", "bool", "add capitalised runs that no NER span covers to the candidates"),
    Key("concepts", "extraction", "bool", "noun-phrase concepts beside names as graph nodes of type concept",
        "--no-concepts"),
    Key("extract_mode", "extraction", "choice", "llm extractor route: auto, json (the model writes records) or "
        "choices (candidate pass with model choices)", choices=_values(ExtractMode)),
    Key("choices", "extraction", "str", "model decisions by token probability: auto, none, or a comma list of "
        "keep, type, relate", "--choices"),
    Key("max_relationships", "extraction", "int", "relationships per text unit (JSON-schema maxItems)", minimum=0),
    Key("extract_max_tokens", "extraction", "int", "upper bound of one extraction call's completion, in tokens",
        minimum=1),
    Key("description_max_chars", "extraction", "int", "cap of one description, in characters", minimum=1),
    Key("constrain_names", "extraction", "bool", "entity names must be candidate spans of the text (JSON-schema "
        "enum)", "--free-names"),
    Key("grounding", "extraction", "bool", "drop entities whose names do not occur in their text unit",
        "--no-grounding"),
    Key("max_gleanings", "extraction", "int", "gleaning rounds (paper sec. 3.1.2); 0 = off", "--gleanings",
        minimum=0),
    Key("claims", "extraction", "bool", "also extract claims (covariates): one more call per text unit", "--claims"),
    Key("max_claims", "extraction", "int", "claims per text unit (JSON-schema maxItems)", minimum=0),
    Key("resolution_threshold", "entity resolution", "float", "name-embedding cosine at which entities of "
        "compatible types merge; \"off\" = embedding rule off", "--resolution", optional=False),
    Key("resolution_rules", "entity resolution", "bool", "title / first-last-name / acronym merge rules",
        "--resolution"),
    Key("summaries", "entity resolution", "choice", "who summarises several descriptions: model, join, or auto "
        "(model if >= 1B parameters)", "--summaries", choices=_values(Summaries)),
    Key("entity_description_max_tokens", "graph", "int", "merged description cap per entity, in tokens",
        minimum=1),
    Key("leiden_resolution", "communities", "float", "Leiden modularity resolution (gamma)", minimum=0),
    Key("max_levels", "communities", "int", "recursion depth limit of hierarchical Leiden", minimum=1),
    Key("min_community_size", "communities", "int", "a community smaller than this is not split again", minimum=1),
    Key("report_context_tokens", "community reports", "int", "context budget of one report prompt, in tokens",
        minimum=100),
    Key("report_max_tokens", "community reports", "int", "completion cap of one report, in tokens", minimum=1),
    Key("report_budget", "community reports", "float", "model-written reports' prompt tokens (beyond the fixed "
        "prefix) per corpus token for the whole build; the description cap that fits is chosen; 0 = no budget",
        "--report-budget", minimum=0),
    Key("reports", "community reports", "choice", "who writes community reports: model, data (no model call), "
        "auto (model if >= 1B parameters) or none (the stage is skipped: --no-reports; only lazy, local, basic "
        "and ts search answer)", "--reports", choices=_values(Reports)),
    Key("map_max_tokens", "queries", "int", "completion cap of one global-search map call, in tokens", minimum=1),
    Key("reduce_max_tokens", "queries", "int", "completion cap of the reduce call, in tokens", minimum=1),
    Key("local_context_tokens", "queries", "int", "local search context budget, in tokens", "--local-tokens",
        minimum=200),
    Key("local_shares", "queries", "shares", "local search budget shares: reports, entities, relationships, "
        "text units", "--local-shares"),
    Key("local_top_k_entities", "queries", "int", "entities nearest to the question in local search", minimum=1),
    Key("basic_top_k", "queries", "int", "text units nearest to the question in basic search", minimum=1),
    Key("embed_batch_size", "queries", "int", "texts per embedding batch", minimum=1),
    Key("embed_precision", "queries", "choice", "arithmetic of the index embedder: fp32, bf16 (torch autocast, "
        "vectors within cosine 0.9999 of fp32) or auto (bf16 where the CPU multiplies bf16 natively: AMX or "
        "AVX512-BF16)",
        choices=_values(EmbedPrecision)),
    Key("helpfulness", "queries", "choice", "helpfulness score of reports and text units: embedding (question "
        "cosine), model (calibrated P(yes)), combined, or auto (the embedding: measured best)", "--helpfulness",
        choices=_values(Helpfulness)),
    Key("helpfulness_floor", "queries", "float", "score 0-100 the best report must reach for an answer "
        "(benchmarks/results/global_answers.md)", minimum=0),
    Key("helpfulness_relative", "queries", "float", "a report reaches the answer when it scores at least this "
        "share of the best report's score", minimum=0),
    Key("helpfulness_probes", "queries", "bool", "lower an index's floor to what off-topic probe questions reach "
        "on it plus a margin (prompts/offtopic_probes.txt)"),
    Key("answers", "queries", "choice", "who writes answers: extractive (the data's points with citations and at "
        "most one grounded model sentence), model, or auto (extractive under 1B parameters)", "--answers",
        choices=_values(Answers)),
    Key("opening", "queries", "choice", "the model-written opening sentence of an extractive answer: model, off, "
        "or auto (off under 1B parameters: the 135M model's did not help on the podcast questions)", "--opening",
        choices=_values(Opening)),
    Key("drift_primer_k", "queries", "int", "DRIFT: community reports in the primer (top-k by embedding)",
        minimum=1),
    Key("drift_followups", "queries", "int", "DRIFT: follow-up questions per round, each a local search",
        "--followups", minimum=0),
    Key("drift_depth", "queries", "int", "DRIFT: follow-up rounds", "--depth", minimum=1),
    Key("drift_tokens", "queries", "int", "DRIFT: no follow-up starts once tokens read plus model tokens reach "
        "this", "--drift-tokens", minimum=1),
    Key("lazy_budget", "queries", "int", "lazy search: relevance tests per query", "--budget", minimum=1),
    Key("lazy_test_tokens", "queries", "int", "lazy search: tokens of a text unit a model relevance test reads",
        minimum=1),
    Key("lazy_answer_tokens", "queries", "int", "lazy search: tokens of relevant text units the answer is built "
        "from", minimum=1),
    Key("prompts_dir", "prompts", "str", "folder of prompt files overriding the bundled ones; unset = bundled",
        "--prompts", optional=True, path=True),
)

KEYS = {k.name: k for k in SPEC}

#: CLI flag -> argparse dest, for telling which flags the user typed.
def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _toml(value) -> str:
    """``value`` as a TOML literal (str, int, float, bool, or a list of them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    s = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'


def render_default(prompts_dir: str | None = None) -> str:
    """The text of a commented ``slmgraph.toml`` with every key at its default.

    Args:
        prompts_dir: written as ``prompts_dir`` (uncommented) when given.

    Returns:
        TOML text; keys that default to "unset" are written commented out.
    """
    d = Settings()
    lines = [
        "# slmgraph settings. 'slmgraph index', 'estimate' and 'query' read this file when it is in the",
        "# working directory, or with --config FILE. A command-line flag overrides the value here;",
        "# 'slmgraph stats' shows where each value of an index run came from.",
        "# Every key is shown with its default; relative paths are relative to this file's folder.",
        "# Generated from slmgraph.config.settings.Settings by 'slmgraph init'.",
    ]
    section = None
    for k in SPEC:
        if k.section != section:
            section = k.section
            lines += ["", f"# --- {section} ---"]
        flag = f" (flag {k.flag})" if k.flag else ""
        lines.append(f"# {k.help}{flag}")
        value = getattr(d, k.name)
        if k.name == "prompts_dir" and prompts_dir:
            lines.append(f"{k.name} = {_toml(prompts_dir)}")
        elif k.optional:  # unset by default (n_threads: the thread plan decides)
            example = {"model_path": "path/to/model.gguf", "n_threads": physical_cores(), "workers": 1,
                       "prompts_dir": "prompts", "ray_address": "HEAD_IP:6379", "max_candidates": 20}[k.name]
            lines.append(f"# {k.name} = {_toml(example)}")
        else:
            lines.append(f"{k.name} = {_toml(value)}")
    return "\n".join(lines) + "\n"


def write_default(folder: str | Path, force: bool = False, with_prompts: bool = False) -> Path:
    """``slmgraph init``: write ``FOLDER/slmgraph.toml`` (and ``FOLDER/prompts/`` with ``with_prompts``).

    Returns:
        The path of the settings file written.

    Raises:
        UserError: the folder is a file or cannot be created (a missing one is created with its
            parents), or the settings file (or the prompts folder) exists and ``force`` is False
            (files you edit are never overwritten without it: :mod:`slmgraph.outputs`).
    """
    import shutil

    from slmgraph.config.prompting import bundled_dir

    folder = output_folder(folder, "folder")  # created with its parents (slmgraph.outputs)
    path = folder / FILE_NAME
    if path.exists() and not force:
        raise UserError(f"{path} exists: edit it, or pass --force to overwrite it with the defaults")
    if with_prompts:
        pdir = folder / "prompts"
        if pdir.exists() and not force:
            raise UserError(f"{pdir} exists: edit it, or pass --force to overwrite it with the bundled prompts")
        pdir.mkdir(exist_ok=True)
        for f in bundled_dir().iterdir():
            if f.suffix in (".txt", ".md"):
                shutil.copyfile(f, pdir / f.name)
    path.write_text(render_default("prompts" if with_prompts else None), encoding="utf-8")
    return path


def find(config: str | None, cwd: str | Path | None = None) -> Path | None:
    """The settings file to read: ``config`` if given, else ``./slmgraph.toml`` if present, else None.

    Raises:
        UserError: ``config`` is given but is not a file.
    """
    if config is not None:
        p = Path(config).expanduser()
        if not str(config).strip() or not p.is_file():
            raise UserError(f"settings file {config!r} does not exist: pass --config FILE, or run 'slmgraph init'")
        return p.resolve()
    p = Path(cwd or ".") / FILE_NAME
    return p.resolve() if p.is_file() else None


def load(path: str | Path) -> dict:
    """Read and check a settings file.

    Returns:
        ``{field name: value}`` with values converted to the :class:`Settings`
        field's type (lists to tuples, relative paths resolved against the file's folder,
        ``resolution_threshold = "off"`` to None).

    Raises:
        UserError: the file is not valid TOML, has an unknown key, or a value of the
            wrong type or out of range; the one-line message names the key and the file.
    """
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"settings file {path} is not valid TOML ({exc}): fix it or run 'slmgraph init --force'") \
            from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read settings file {path} ({exc}): check the path") from None
    out: dict = {}
    for name, value in raw.items():
        if name in DEPRECATED:
            import sys

            print(f"slmgraph: notice: settings file {path}: {name!r} is no longer read ({DEPRECATED[name]}); "
                  "remove it", file=sys.stderr)
            continue
        k = KEYS.get(name)
        if k is None:
            raise UserError(unknown_name(f"settings file {path}", "key", name, KEYS,
                                         "see 'slmgraph init' for the keys"))
        out[name] = _convert(k, value, path)
    return out


def nearest_name(name: str, names) -> str | None:
    """The valid name closest in spelling to ``name`` (difflib's ratio, at least 0.6), else one whose
    underscore-separated words contain all of ``name``'s; None when nothing is close."""
    names = list(names)
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    if close:
        return close[0]
    words = set(name.lower().split("_"))
    within = [n for n in names if words <= set(n.split("_"))]
    return within[0] if len(within) == 1 else None


def unknown_name(where: str, what: str, name: str, names, remedy: str) -> str:
    """The one-line message for an unknown setting or option: ``where: unknown WHAT 'NAME' (did you mean
    NEAREST?): REMEDY``; the hint is left out when no valid name is close (see :func:`nearest_name`)."""
    near = nearest_name(name, names)
    hint = f" (did you mean {near}?)" if near else ""
    return f"{where}: unknown {what} {echo_repr(name)}{hint}: {remedy}"


def _bad(k: Key, path: Path | str, what: str) -> UserError:
    where = path if isinstance(path, str) else f"settings file {path}"
    return UserError(f"{where}: {k.name} {what}")


def convert_argument(name: str, value, where: str = "slmgraph.index()"):
    """Check one setting given as a Python keyword argument (relative paths: to the working directory).

    Raises:
        UserError: unknown setting name, or a value of the wrong type or out of range.
    """
    k = KEYS.get(name)
    if k is None:
        raise UserError(unknown_name(where, "setting", name, KEYS, "the settings are the keys of 'slmgraph init'"))
    if k.kind == "strlist" and isinstance(value, (tuple, str)):
        value = list(value) if isinstance(value, tuple) else [t for t in value.split(",")]
    if k.kind == "shares" and isinstance(value, tuple):
        value = list(value)
    if k.path and isinstance(value, Path):
        value = str(value)
    return _convert(k, value, Path.cwd() / FILE_NAME, where)


def _convert(k: Key, v, path: Path, where: str | None = None):
    if where is not None:
        path_for_msg: Path | str = where
    else:
        path_for_msg = path
    try:
        return _convert_checked(k, v, path)
    except _Bad as exc:
        raise _bad(k, path_for_msg, str(exc)) from None


class _Bad(Exception):
    pass


def _convert_checked(k: Key, v, path: Path):
    if k.name == "resolution_threshold" and isinstance(v, str) and v.strip().lower() in ("off", "none", "no"):
        return None
    if k.name == "choices":
        if not isinstance(v, str):
            raise _Bad(f"= {echo_repr(v)}: use auto, none, or a comma list of keep, type, relate")
        try:
            return parse_choices(v)
        except UserError:
            raise _Bad(f"= {echo_repr(v)}: use auto, none, or a comma list of keep, type, relate") from None
    if k.kind == "bool":
        if not isinstance(v, bool):
            raise _Bad(f"= {echo_repr(v)} must be true or false")
        return v
    if k.kind == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Bad(f"= {echo_repr(v)} must be a whole number")
    elif k.kind == "float":
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise _Bad(f"= {echo_repr(v)} must be a number")
        v = float(v)
    elif k.kind in ("str", "choice"):
        if not isinstance(v, str) or not v.strip():
            raise _Bad(f"= {echo_repr(v)} must be a non-empty string")
        if k.choices and v not in k.choices:
            raise _Bad(f"= {echo_repr(v)} must be one of {', '.join(k.choices)}")
        if k.path:
            p = Path(v).expanduser()
            v = str(p if p.is_absolute() else (path.parent / p))
        return v
    elif k.kind == "strlist":
        if not isinstance(v, list) or not v or not all(isinstance(t, str) for t in v):
            raise _Bad(f"= {echo_repr(v)} must be a non-empty list of strings, e.g. [\"person\", \"location\"]")
        types = tuple(dict.fromkeys(t.strip().lower() for t in v if t.strip()))
        bad = [t for t in types if not re.fullmatch(r"[\w][\w \-/&]*", t)]
        if bad or not types:
            raise _Bad(f"has {echo_repr(bad[0] if bad else '(empty)')}: use letters, digits, spaces or hyphens")
        return types
    elif k.kind == "shares":
        if (not isinstance(v, list) or len(v) != 4
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
                           for x in v) or not sum(v)):
            raise _Bad(f"= {echo_repr(v)} must be four non-negative numbers, e.g. [0.1, 0.2, 0.2, 0.5]")
        return tuple(float(x) for x in v)
    if k.minimum is not None and v < k.minimum:
        raise _Bad(f"= {echo_repr(v)} must be at least {k.minimum:g}")
    if k.name == "resolution_threshold" and not 0.0 < v <= 1.0:
        raise _Bad(f"= {echo_repr(v)} must be a similarity in (0, 1], or \"off\"")
    return v


def check(s: Settings, origin: dict[str, str]) -> None:
    """Cross-key checks on the final settings (what one key alone cannot tell).

    Args:
        origin: ``{field: source}`` as returned by :func:`resolve`, to name the culprit.

    Raises:
        UserError: chunk size vs window, overlap vs chunk size, a Ray address without the Ray
            executor, local budget vs window.
    """
    def who(name: str) -> str:
        src = origin.get(name, "default")
        return f"{name} ({src})"

    if s.chunk_size > s.n_ctx // 3:
        raise UserError(f"{who('chunk_size')} = {s.chunk_size} must be at most a third of the window "
                        f"({s.n_ctx // 3} tokens with n_ctx {s.n_ctx})")
    if not 0 <= s.chunk_overlap < s.chunk_size:
        raise UserError(f"{who('chunk_overlap')} = {s.chunk_overlap} must be >= 0 and smaller than chunk_size "
                        f"{s.chunk_size}")
    if s.ray_address is not None and s.executor != "ray":
        raise UserError(f"{who('ray_address')} = {echo_repr(s.ray_address)} needs executor = \"ray\" "
                        f"({who('executor')} is {s.executor!r})")
    if s.local_context_tokens > s.n_ctx - 500:
        raise UserError(f"{who('local_context_tokens')} = {s.local_context_tokens} does not fit the {s.n_ctx}-token "
                        f"window with the question and answer: use at most {s.n_ctx - 500}")


def flag_dests() -> dict[str, list[str]]:
    """``{argparse dest: [Settings fields it sets]}`` for every key with a flag."""
    out: dict[str, list[str]] = {}
    for k in SPEC:
        if k.flag:
            out.setdefault(_dest(k.flag), []).append(k.name)
    return out


def typed_from_flags(dests: set[str]) -> dict[str, str]:
    """``{field: "flag --x"}`` for the Settings fields set by the argparse dests the user typed."""
    by_dest = flag_dests()
    by_dest.update(EXTRA_FLAGS)
    return {f: f"flag --{d.replace('_', '-')}" if d in EXTRA_FLAGS else f"flag {KEYS[f].flag}"
            for d in dests for f in by_dest.get(d, [])}


def resolve(base: Settings, file_values: dict, file_path: Path | None,
            typed: dict[str, str]) -> tuple[Settings, dict[str, str]]:
    """Merge settings given explicitly (flags or API arguments) with a settings file.

    Args:
        base: settings holding the explicitly given values (the others at their defaults).
        file_values: :func:`load`'s result ({} without a file).
        typed: ``{field: source label}`` of the explicitly given fields (they win over the file).

    Returns:
        ``(settings, sources)``: ``sources[field]`` is the label from ``typed``, ``"file PATH"``
        or ``"default"`` for every key of :data:`SPEC`.

    Raises:
        UserError: see :func:`check`.
    """
    s = dataclasses.replace(base)
    sources: dict[str, str] = {}
    for k in SPEC:
        if k.name in typed:
            sources[k.name] = typed[k.name]
        elif k.name in file_values:
            setattr(s, k.name, file_values[k.name])
            sources[k.name] = f"file {file_path}"
        else:
            sources[k.name] = "default"
    if "n_threads" in file_values and "n_threads" not in typed:
        s.threads_explicit = True
    check(s, sources)
    return s, sources


def report(s: Settings, sources: dict[str, str]) -> dict[str, dict]:
    """``{field: {"value": v, "source": src}}`` (JSON-serialisable) for the index's ``meta``."""
    out = {}
    for k in SPEC:
        v = getattr(s, k.name)
        out[k.name] = {"value": list(v) if isinstance(v, tuple) else v, "source": sources.get(k.name, "default")}
    return out
