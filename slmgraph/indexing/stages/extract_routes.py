"""Which route each model-dependent step takes for a model: whether the model writes descriptions, summaries
or reports (:func:`model_writes`), which choices it makes during extraction (:func:`model_choices`), whether
extraction generates JSON records (:func:`json_extraction`) or calls the model at all (:func:`uses_model`),
and whether entity types may block resolution merges (:func:`types_reliable`).
"""

from __future__ import annotations

from slmgraph.config.settings import Settings
from slmgraph.model.policy import model_does

#: The decisions ``--choices auto`` turns on for a model under 1e9 parameters: those that beat their
#: LLM-free alternative (spaCy's type, keeping every candidate, plain co-occurrence); none did
#: (docs/decisions.md: no model choices under 1B).
SMALL_MODEL_CHOICES: frozenset[str] = frozenset()

def model_writes(mode: str, n_params, setting: str = "descriptions") -> bool:
    """Whether the model writes a text for ``setting`` (``descriptions``, ``summaries`` or ``reports``) set
    to ``mode``: "model" yes; "auto" as :func:`slmgraph.model.policy.route` decides for ``n_params`` (a loaded
    model, whose capability record decides, or a bare parameter count: the size rule); any other mode
    ("text", "join", "data") no."""
    return model_does(setting, mode, n_params)


def use_model_descriptions(settings: Settings, n_params) -> bool:
    """Whether the model writes descriptions (``descriptions`` = model, or auto and :mod:`slmgraph.model.policy`
    says so for ``n_params``: a loaded model or its parameter count)."""
    return model_writes(settings.descriptions, n_params, "descriptions")

def model_choices(settings: Settings, n_params: int | None) -> frozenset[str]:
    """The model decisions of the choice extraction for ``settings.choices``: ``auto`` ->
    :data:`SMALL_MODEL_CHOICES` (measured with the 135M model; no larger model was measured, so the
    same set applies to any size), ``none`` -> none, else the comma list given (checked by the CLI)."""
    v = settings.choices  # canonical: slmgraph.config.settings.parse_choices
    if v == "auto":
        return SMALL_MODEL_CHOICES
    if v == "none":
        return frozenset()
    return frozenset(v.split(","))


def json_extraction(settings: Settings, n_params: int | None) -> bool:
    """Whether the llm extractor generates JSON records (:func:`extract_llm`) rather than extracting by
    the candidate pass and choices (:func:`extract_choices`): ``extract_mode`` json, or auto when the
    model writes descriptions (>= 1e9 parameters, or ``--descriptions model``) or names (``--free-names``).
    A < 1B model's JSON added nothing measurable over the LLM-free pass and generated more tokens than
    it read (docs/decisions.md: no model choices under 1B)."""
    if settings.extract_mode == "json":
        return True
    if settings.extract_mode == "choices":
        return False
    return not settings.constrain_names or use_model_descriptions(settings, n_params)

#: Type accuracy at or above which a type source may block resolution merges (share of matched gold
#: entities typed right; a source below it is wrong on more than one entity in five).
RELIABLE_TYPE_ACCURACY = 0.8

#: Type accuracy of each type source (share of matched gold entities typed right on the 100 Re-DocRED dev
#: documents): ``ner`` the NER pipeline's, ``model`` the model's chosen or JSON types, whose 0.0 keeps them
#: from blocking merges (docs/decisions.md: type accuracy of each source).
TYPE_ACCURACY = {"ner": 0.77, "model": 0.0}


def types_reliable(settings: Settings, n_params: int | None) -> bool:
    """Whether entity types may block resolution merges: when their source's measured accuracy
    (:data:`TYPE_ACCURACY`: the NER pipeline's, or the model's when it chooses or writes types) reaches
    :data:`RELIABLE_TYPE_ACCURACY`. Neither does today, so types block only what
    :mod:`slmgraph.indexing.stages.resolve` blocks whatever their source (a place with another kind, a name subset of another
    type); other merges go by the names' shapes."""
    source = "ner"
    if settings.extractor != "nlp" and (json_extraction(settings, n_params)
                                        or "type" in model_choices(settings, n_params)):
        source = "model"
    return TYPE_ACCURACY[source] >= RELIABLE_TYPE_ACCURACY


def uses_model(settings: Settings, n_params: int | None) -> bool:
    """Whether extraction with ``settings`` calls the model at all (False: the LLM-free route)."""
    if settings.extractor == "nlp":
        return False
    return json_extraction(settings, n_params) or bool(model_choices(settings, n_params))
