"""Settings for every stage, their defaults, and where each default comes from.

A :class:`Settings` object is built once by the CLI and passed down explicitly;
no stage reads global state. Values that change what the index *contains*
(chunking, extraction, community and report settings) are recorded in the
index's ``meta`` table so that a later run can tell whether its cache applies.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from slmgraph.errors import UserError, echo_repr

#: Entity types offered to the extractor. GraphRAG's default prompt uses
#: organization, person, geo and event (microsoft/graphrag, ``defaults``);
#: "concept" is added because podcast and essay corpora are mostly about ideas.
DEFAULT_ENTITY_TYPES = ("person", "organization", "location", "event", "concept")


def physical_cores() -> int:
    """Number of physical CPU cores usable by this process (int >= 1).

    llama.cpp's OpenMP threads spin-wait, so threads are planned per *physical*
    core (ARCHITECTURE.md, "Running the model on a CPU"). Reads the affinity mask and
    ``/proc/cpuinfo`` core ids; falls back to ``os.cpu_count()``.
    """
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    cores: set[tuple[str, str]] = set()
    try:
        phys = core = None
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("physical id"):
                phys = line.split(":", 1)[1].strip()
            elif line.startswith("core id"):
                core = line.split(":", 1)[1].strip()
            elif not line.strip() and core is not None:
                cores.add((phys or "0", core))
                phys = core = None
        if core is not None:
            cores.add((phys or "0", core))
    except OSError:
        pass
    n = len(cores) if cores else usable
    return max(1, min(n, usable))


#: Candidate budget per text unit when a model reads the candidates (a JSON-schema enum, or one choice call
#: per candidate): the prompt and the calls grow with it (docs/decisions.md: candidate budgets).
MODEL_CANDIDATES = 20

#: Candidate budget per text unit when no model reads them (the LLM-free route): it only guards the graph
#: against a unit that is a list of names, and a smaller one leaves gold entities out (docs/decisions.md:
#: candidate budgets).
LLM_FREE_CANDIDATES = 60


class Mode(str, Enum):
    """A setting with a fixed set of string values: compares, hashes, prints and serialises as its value,
    so settings files, flags and stored fingerprints keep their strings."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __repr__(self) -> str:  # messages quote settings with !r
        return repr(self.value)


class Executor(Mode):
    LOCAL = "local"
    RAY = "ray"


class Extractor(Mode):
    LLM = "llm"
    NLP = "nlp"


class Descriptions(Mode):
    AUTO = "auto"
    MODEL = "model"
    TEXT = "text"


class ExtractMode(Mode):
    AUTO = "auto"
    JSON = "json"
    CHOICES = "choices"


class Summaries(Mode):
    AUTO = "auto"
    MODEL = "model"
    JOIN = "join"


class Reports(Mode):
    AUTO = "auto"
    MODEL = "model"
    DATA = "data"
    NONE = "none"


class Helpfulness(Mode):
    AUTO = "auto"
    EMBEDDING = "embedding"
    MODEL = "model"
    COMBINED = "combined"


class EmbedPrecision(Mode):
    AUTO = "auto"
    FP32 = "fp32"
    BF16 = "bf16"


class Answers(Mode):
    AUTO = "auto"
    EXTRACTIVE = "extractive"
    MODEL = "model"


class Opening(Mode):
    AUTO = "auto"
    MODEL = "model"
    OFF = "off"


class Method(Mode):
    """A query method (``slmgraph.api.answer``); not a setting: each query names its own."""
    GLOBAL = "global"
    LOCAL = "local"
    BASIC = "basic"
    TS = "ts"
    DRIFT = "drift"
    LAZY = "lazy"
    AUTO = "auto"


#: Model decisions by token probability during extraction (``choices``; slmgraph.indexing.stages.extract_methods.extract_choices).
CHOICES = ("keep", "type", "relate")


def parse_choices(value: str) -> str:
    """``choices`` in its one canonical form: ``auto``, ``none`` or the decisions of :data:`CHOICES` given,
    comma-joined in that order (``"type, keep"`` -> ``"keep,type"``).

    Raises:
        UserError: a word that is none of these.
    """
    picked = {c.strip().lower() for c in str(value).split(",") if c.strip()}
    if not picked or picked == {"auto"}:
        return "auto"
    if picked == {"none"}:
        return "none"
    if picked - set(CHOICES):
        raise UserError(f"choices {echo_repr(value)}: use auto, none, or a comma list of {', '.join(CHOICES)}")
    return ",".join(c for c in CHOICES if c in picked)


#: Cache keys of one text unit a setting may be part of (field metadata ``{"keys": (...)}``), besides the
#: index fingerprint that holds every setting but :data:`NOT_IN_INDEX`: ``extraction``
#: (slmgraph.indexing.stages.extract.extraction_key), ``extraction_model`` (part of it only when a model makes the calls) and
#: ``claims`` (slmgraph.indexing.stages.claims.claims_key). tests/test_settings_keys.py fails when a stage reads a setting that
#: is in none of its keys.
UNIT_KEYS = ("extraction", "extraction_model", "claims")


def _keyed(*keys: str, **kw):
    """A dataclass field that is part of the per-unit cache ``keys`` (see :data:`UNIT_KEYS`)."""
    return field(metadata={"keys": keys}, **kw)


def _mode(kind: type[Mode], default: str, *keys: str):
    """A dataclass field holding a :class:`Mode` of ``kind`` (strings given are converted on assignment)."""
    return field(default=kind(default), metadata={"keys": keys, "mode": kind})


#: Settings that do not change what an index holds, left out of :meth:`Settings.index_fingerprint`: where
#: and how fast the model runs (the model file and the prompts folder are part of the build key on their
#: own, ``slmgraph.indexing.pipeline.run_index``) and the query-time settings. Every other field is part of it.
NOT_IN_INDEX = frozenset({
    "model_path", "n_threads", "threads_explicit", "workers", "executor", "ray_address", "embed_batch_size",
    "embed_precision", "prompts_dir",
    "map_max_tokens", "reduce_max_tokens", "helpfulness", "helpfulness_floor", "helpfulness_relative",
    "helpfulness_probes", "answers", "opening", "drift_primer_k", "drift_followups", "drift_depth",
    "drift_tokens", "lazy_budget", "lazy_test_tokens", "lazy_answer_tokens", "local_context_tokens",
    "local_shares", "local_top_k_entities", "basic_top_k",
})


@dataclass
class Settings:
    """All tunable settings of an index and its queries.

    Token counts are in the model's own tokens; times in seconds.
    """

    # --- model (ARCHITECTURE.md "Running the model on a CPU") ---
    model_path: str | None = None  #: GGUF file; None = bundled SmolLM2-135M-Instruct
    n_ctx: int = _keyed("extraction_model", default=8192)  #: context window we pack for (SmolLM2's trained window is 8k)
    n_threads: int = field(default_factory=physical_cores)  #: threads <= physical cores
    threads_explicit: bool = False  #: the user set --threads (kept even if it oversubscribes)
    #: Extraction worker processes; None = the thread plan (slmgraph.indexing.executors.batch.plan_threads).
    workers: int | None = None
    #: Where the model stages' tasks run: "local" (spawned worker processes,
    #: slmgraph.indexing.executors.batch) or "ray" (Ray actors, slmgraph.indexing.executors.raypool; the optional extra).
    executor: Executor = _mode(Executor, "local")
    #: Ray cluster to join ("auto", "HOST:PORT"); None starts a local Ray instance.
    ray_address: str | None = None
    seed: int = 42  #: sampler seed and shuffle seed (decoding is greedy: the same input gives the same index)

    # --- chunking (paper sec. 3.1.1 / GraphRAG default: 600 tokens, 100 overlap) ---
    chunk_size: int = 600
    chunk_overlap: int = 100

    # --- extraction (paper sec. 3.1.2) ---
    extractor: Extractor = _mode(Extractor, "llm", "extraction")  #: "llm" (model types/relates candidate spans) or "nlp" (no model)
    entity_types: tuple[str, ...] = _keyed("extraction", default=DEFAULT_ENTITY_TYPES)
    #: Who writes entity/relationship descriptions: "model", "text" (the
    #: sentences of the text unit that mention them) or "auto" (slmgraph.model.policy: the model's capability
    #: record, else model from 1e9 parameters; a 135M model copies its few-shot example instead of
    #: describing, ARCHITECTURE.md "Extraction quality").
    descriptions: Descriptions = _mode(Descriptions, "auto", "extraction", "claims")
    #: Also relate extracted entities named in one sentence (llm extractor);
    #: the 135M model relates few pairs, most of them self-loops (ARCHITECTURE.md "Extraction quality").
    cooccurrence: bool = _keyed("extraction", default=True)
    #: Candidate budget per text unit (spans offered to the model or kept by the LLM-free route); those past
    #: it are ranked last, left out and counted (slmgraph.indexing.stages.ner). None: :meth:`candidate_budget` decides
    #: (MODEL_CANDIDATES when a model reads the candidates, LLM_FREE_CANDIDATES when none does).
    max_candidates: int | None = _keyed("extraction", default=None)
    #: spaCy NER pipeline of the candidate pass: "auto" (the installed English small pipeline, else the
    #: capitalised-run pass with a warning), "none" (capitalised runs only), or a pipeline name or path.
    ner_model: str = _keyed("extraction", default="auto")
    #: Add capitalised runs that no NER span covers (multi-word or proper-noun ones) to the NER candidates,
    #: which lifts recall (docs/decisions.md: NER and capitalised runs).
    caps_union: bool = _keyed("extraction", default=True)
    #: llm extractor route: "auto" (JSON records when the model writes descriptions or names, else the
    #: candidate pass with model choices), "json" or "choices" (slmgraph.indexing.stages.extract_routes.json_extraction).
    extract_mode: ExtractMode = _mode(ExtractMode, "auto", "extraction_model")
    #: Model decisions by token probability in the choices route: "auto" (those measured to beat the
    #: LLM-free alternative, slmgraph.indexing.stages.extract_routes.SMALL_MODEL_CHOICES), "none", or a comma list of
    #: keep, type, relate.
    choices: str = _keyed("extraction_model", default="auto")
    #: Noun-phrase concepts beside names as graph nodes of type ``concept`` (slmgraph.indexing.stages.concepts), from the
    #: candidate pass's spaCy parse; off: names only.
    concepts: bool = _keyed("extraction", default=True)
    max_relationships: int = _keyed("extraction", default=6)  #: JSON-schema maxItems for relationships per text unit
    extract_max_tokens: int = _keyed("extraction", "claims", default=2000)  #: upper bound of the per-call cap (see extract.extract_token_cap)
    description_max_chars: int = _keyed("extraction", "claims", default=200)  #: cap of one description (grammar maxLength / text cut)
    #: Candidate constraints: entity names in the schema are an ``enum`` of the
    #: candidate pass's spans (True) or free strings (False, for measurement).
    constrain_names: bool = _keyed("extraction", default=True)
    #: Grounding: drop (and count) entities whose names do not occur in the
    #: text unit under the tolerant match, and relationships to them.
    grounding: bool = _keyed("extraction", default=True)
    #: Gleaning rounds (paper sec. 3.1.2): after extraction, a forced yes/no
    #: "were entities missed?" and, on yes, one more extraction. 0 = off.
    max_gleanings: int = _keyed("extraction_model", default=1)
    #: Claims (covariates) extraction, one extra call per text unit; off by default.
    claims: bool = False
    #: JSON-schema maxItems of claims per text unit (slmgraph.indexing.stages.claims).
    max_claims: int = _keyed("claims", default=4)

    # --- entity resolution (graph merge) ---
    #: Cosine similarity of name embeddings at or above which two entities of
    #: compatible types merge; None = embedding resolution off (rule-based
    #: resolution still applies).
    resolution_threshold: float | None = 0.9
    #: Rule-based resolution (titles, first/last names of one person, acronyms;
    #: slmgraph.indexing.stages.resolve). False with resolution_threshold None: merge on the
    #: normalised name only.
    resolution_rules: bool = True
    #: Who writes the summary of an entity/relationship with several
    #: descriptions: "model" (one call each, within entity_description_max_tokens),
    #: "join" (distinct descriptions joined) or "auto" (slmgraph.model.policy: capability record, else >= 1e9 parameters).
    summaries: Summaries = _mode(Summaries, "auto")

    # --- graph merge (paper sec. 3.1.3) ---
    entity_description_max_tokens: int = 200  #: merged description cap per entity

    # --- communities (paper sec. 3.1.4; Traag et al. 2019, leidenalg docs) ---
    leiden_resolution: float = 1.0
    max_levels: int = 4  #: recursion depth limit of hierarchical Leiden
    min_community_size: int = 4  #: a community smaller than this is not split again

    # --- community reports (paper sec. 3.1.5) ---
    report_context_tokens: int = 2500  #: context budget of one report prompt
    report_max_tokens: int = 600  #: completion cap of one report
    #: Per-build budget of model-written reports: prompt tokens the report calls may evaluate
    #: beyond their fixed prefix, per corpus token (0 = none: each report reads whole descriptions
    #: up to report_context_tokens), so the whole build keeps within its prompt tokens per corpus token
    #: (docs/decisions.md: report budget per corpus token). The description cap that fits is chosen
    #: by slmgraph.indexing.stages.report_budget.plan_report_budget.
    report_budget: float = 0.3
    #: Who writes community reports: "none" (``--no-reports``: the stage is
    #: skipped, only ``--method lazy`` and the local/basic/ts methods answer), "model", "data" (no model call:
    #: slmgraph.indexing.stages.report_data.data_report) or "auto" (slmgraph.model.policy: capability record, else >= 1e9
    #: parameters; docs/decisions.md: data-built reports under 1B).
    reports: Reports = _mode(Reports, "auto")

    # --- queries (paper sec. 3.1.6; ARCHITECTURE.md stages 7-9) ---
    map_max_tokens: int = 400  #: completion cap of one map call (answer reserve)
    reduce_max_tokens: int = 500  #: completion cap of the reduce call
    #: Helpfulness signal of global search, --dynamic and TS: "embedding",
    #: "model", "combined" or "auto" (slmgraph.query.scoring.default_signal:
    #: the embedding; docs/decisions.md: helpfulness by embedding).
    helpfulness: Helpfulness = _mode(Helpfulness, "auto")
    #: Selection rule: a report reaches the answer with a score >= the floor
    #: and >= relative x the best (slmgraph.query.scoring.FLOOR / RELATIVE,
    #: where their measurement is documented).
    helpfulness_floor: float = 22.0
    helpfulness_relative: float = 0.7
    #: Lower the floor of an index to what off-topic probe questions reach on it
    #: plus a margin (slmgraph.query.scoring.index_floor; embedding signal only).
    helpfulness_probes: bool = True
    #: Who writes answers: "extractive" (points copied from the data with
    #: citations, plus at most one grounded model sentence), "model", or
    #: "auto" (slmgraph.model.policy: capability record, else extractive under 1B parameters).
    answers: Answers = _mode(Answers, "auto")
    #: The one model-written opening sentence of an extractive answer: "model", "off", or "auto" (off
    #: under 1B parameters, where it was rarely supported and cost most of a query's time;
    #: docs/decisions.md: no opening sentence under 1B; slmgraph.query.extractive.opening_on).
    opening: Opening = _mode(Opening, "auto")
    # --- DRIFT search (slmgraph.query.engines.drift_search) ---
    #: Community reports (any level) in the primer, top-k by question embedding.
    drift_primer_k: int = 5
    #: Follow-up questions per round, each a local search; 3 per round and 2 rounds keep a
    #: query with the bundled model under the 2-minute target (docs/decisions.md: DRIFT rounds).
    drift_followups: int = 3
    drift_depth: int = 2  #: follow-up rounds (1: only the primer's follow-ups)
    #: No follow-up starts once the tokens read (primer reports, local
    #: contexts) plus the model's prompt and completion tokens reach this.
    drift_tokens: int = 20000

    # --- lazy search (slmgraph.query.engines.lazy_search) ---
    #: Relevance tests per query (LazyGraphRAG's relevance-test budget; its
    #: blog post compares budgets of 100, 500 and 1,500).
    lazy_budget: int = 100
    #: Tokens of a text unit a model relevance test reads (--helpfulness
    #: model|combined); the embedding test reads the stored vector instead.
    lazy_test_tokens: int = 150
    #: Tokens of relevant text units the answer is built from, best first.
    lazy_answer_tokens: int = 3000

    local_context_tokens: int = 3000  #: token budget of local search context
    #: Shares of the local search budget: community reports, entities,
    #: relationships, text units (GraphRAG local search uses 10 % community,
    #: 50 % text units, the rest entities/relationships). Unused share passes on.
    local_shares: tuple[float, float, float, float] = (0.10, 0.20, 0.20, 0.50)
    local_top_k_entities: int = 10
    basic_top_k: int = 5
    embed_batch_size: int = 32
    #: Arithmetic of the index embedder's forward pass: "fp32", "bf16" (torch autocast; vectors
    #: differ from fp32's by rounding, stored as float32) or "auto" (bf16 where the CPU has native bf16 matrix
    #: units, slmgraph.indexing.stages.embed.resolve_precision; docs/decisions.md: the index embedder's precision).
    embed_precision: EmbedPrecision = _mode(EmbedPrecision, "auto")

    #: Folder with prompt templates; None = the bundled ``prompts/``.
    prompts_dir: str | None = None

    def __setattr__(self, name: str, value) -> None:
        # Modes are converted on every assignment (constructor, flags, settings file), so a stage compares
        # members whatever set them; ``choices`` is parsed here once.
        f = _FIELDS.get(name)
        if f is not None and "mode" in f.metadata and value is not None and not isinstance(value, f.metadata["mode"]):
            try:
                value = f.metadata["mode"](str(value).strip().lower())
            except ValueError:
                allowed = ", ".join(m.value for m in f.metadata["mode"])
                raise UserError(f"{name} {echo_repr(value)} is not one of {allowed}") from None
        elif name == "choices" and value is not None:
            value = parse_choices(value)
        object.__setattr__(self, name, value)

    def key_values(self, key: str) -> dict:
        """``{field: value}`` (JSON-serialisable) of the settings whose field metadata puts them in cache
        ``key`` (one of :data:`UNIT_KEYS`)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)
                if key in f.metadata.get("keys", ())}

    def scale_to_window(self) -> None:
        """Scale the window-bound query budgets from their 8,192-token defaults to ``n_ctx``.

        ``local_context_tokens`` (3,000 at 8,192) becomes ``3000 * n_ctx / 8192``
        (750 at 2,048), so every default fits any accepted window; values the
        user gives are set afterwards and checked, not scaled.
        """
        if self.n_ctx != 8192:
            self.local_context_tokens = max(200, round(3000 * self.n_ctx / 8192))

    def candidate_budget(self, model_reads: bool) -> int:
        """Candidates kept per text unit: ``max_candidates`` when set, else :data:`MODEL_CANDIDATES` when a model
        reads the candidates (``model_reads``) and :data:`LLM_FREE_CANDIDATES` when none does."""
        if self.max_candidates is not None:
            return self.max_candidates
        return MODEL_CANDIDATES if model_reads else LLM_FREE_CANDIDATES

    def index_fingerprint(self) -> dict:
        """Settings that determine index content (JSON-serialisable dict): every field but those in
        :data:`NOT_IN_INDEX`, so a new setting is part of it unless it is declared not to change the index."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name not in NOT_IN_INDEX}

    def to_json(self) -> str:
        """The whole settings object as a JSON string."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True, default=list)


def _plain(value):
    """A setting's value as JSON holds it: tuples as lists, modes as their strings."""
    if isinstance(value, tuple):
        return list(value)
    return value.value if isinstance(value, Mode) else value


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
