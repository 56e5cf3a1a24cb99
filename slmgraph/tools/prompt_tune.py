"""``slmgraph prompt-tune INPUT --out DIR``: a prompts folder whose extraction few-shot example
comes from the user's own corpus (GraphRAG's auto-tuning idea, microsoft/graphrag
``prompt-tune``, without a large model writing the example).

The example is built, not written:

1. **A representative passage**: every window of two consecutive sentences (``text.sentences``)
   of at most :data:`MAX_EXAMPLE_CHARS` characters with 3 to :data:`MAX_NAMES` candidate names
   (the candidate pass, ``names.candidate_names``), each sentence naming one of them; the window
   whose names recur most across the corpus (sum of log(1 + corpus count)), less a small
   penalty per character (1 per 400), wins (ties: more names, then the earlier window). Its
   candidates are the example's candidate names.
2. **Types by choice**: the model types each candidate by comparing the probabilities of the
   entity types and "other" after the passage (``ModelClient.choose``; the passage and the types
   are the shared prefix), the small model's strong suit (a chooser, not a writer).
3. **Relationships and descriptions from the text**: entities named in one sentence are related
   (strength 5 + 2 per further shared sentence, at most 10; at most :data:`MAX_RELATIONSHIPS`);
   each entity's description is the first sentence naming it, each relationship's the first
   sentence naming both (the ``--descriptions text`` rule of extraction).

The folder holds every bundled prompt; the extraction system prompts (candidate and free-name
modes) get the passage and its names in place of the bundled Marie Curie example, and the four
example outputs are rewritten to match. The placeholder check of :class:`slmgraph.config.prompting.Prompts`
runs on the result, so ``slmgraph index --prompts DIR`` accepts it.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections import Counter
from pathlib import Path

from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.outputs import output_folder
from slmgraph.config.prompting import DATA_RULE, quote_data
from slmgraph.names.forms import candidate_names, cut, mentions, normalize_name
from slmgraph.text.prose import sentences

MAX_EXAMPLE_CHARS = 420  #: longest passage used as the example (the fixed prefix is paid once per process)
MAX_NAMES = 6  #: most candidate names in the example
MAX_RELATIONSHIPS = 3  #: relationships in the example output (the bundled example has 3)
_EXAMPLE_BLOCK = re.compile(r"(Example\n)(?:Candidate names: [^\n]*\n)?Text:\n.*?\n(Output:\n\$example)", re.S)


def pick_passage(texts: list[str]) -> tuple[str, list[str]] | None:
    """The most representative short passage of ``texts`` and its candidate names (see module doc).

    Returns:
        ``(passage, candidates)``, or None when no passage has 3 or more candidate names.
    """
    corpus: Counter[str] = Counter()
    for t in texts:
        corpus.update(normalize_name(c) for c in candidate_names(t, 500))
    best, best_key = None, None
    pos = 0
    for t in texts:
        sents = sentences(t)
        for i in range(len(sents) - 1):
            window = " ".join(sents[i:i + 2])
            pos += 1
            if len(window) > MAX_EXAMPLE_CHARS:
                continue
            cands = candidate_names(window, MAX_NAMES)
            if len(cands) < 3 or not all(any(mentions(s, c) for c in cands) for s in sents[i:i + 2]):
                continue  # too few names, or one sentence names none (nothing to relate across it)
            score = sum(math.log1p(corpus[normalize_name(c)]) for c in cands) - len(window) / 400
            key = (round(score, 6), len(cands), -pos)
            if best_key is None or key > best_key:
                best, best_key = (window, cands), key
    return best


def type_candidates(client, passage: str, candidates: list[str], types: tuple[str, ...]) -> dict[str, str]:
    """``{candidate: type}`` chosen by the model among ``types`` and "other" by token probability."""
    options = [f" {t}" for t in types] + [" other"]
    system = ("You classify the names in a text by entity type. Entity types: " + ", ".join(types) +
              ", other (not the name of an entity). " + DATA_RULE + "\nText:\n\"\"\"\n" + quote_data(passage) + "\n\"\"\"")
    out = {}
    for c in candidates:
        ch = client.choose("prompt_tune", system, f"Name: {c}\nType:", options)
        out[c] = options[ch.best].strip()
    return out


def build_example(passage: str, typed: dict[str, str], max_chars: int) -> dict:
    """The example's records: entities (typed, described by their first sentence) and relationships
    (same-sentence pairs of non-"other" entities) as plain dicts."""
    sents = sentences(passage)
    ents = []
    for name, typ in typed.items():
        first = next((s for s in sents if mentions(s, name)), "")
        ents.append({"name": name, "type": typ, "description": cut(first, max_chars) if typ != "other" else ""})
    real = [e["name"] for e in ents if e["type"] != "other"]
    pairs = []
    for i, a in enumerate(real):
        for b in real[i + 1:]:
            shared = [s for s in sents if mentions(s, a) and mentions(s, b)]
            if shared:
                pairs.append({"source": a, "target": b, "description": cut(shared[0], max_chars),
                              "strength": min(10, 5 + 2 * (len(shared) - 1))})
    pairs.sort(key=lambda r: -r["strength"])
    return {"entities": ents, "relationships": pairs[:MAX_RELATIONSHIPS]}


def example_outputs(ex: dict) -> dict[str, str]:
    """The four example output files (candidate / free-name mode x with / without descriptions)."""
    ents, rels = ex["entities"], ex["relationships"]
    plain_rels = [{k: r[k] for k in ("source", "target", "strength")} for r in rels]
    real = [e for e in ents if e["type"] != "other"]
    dump = lambda o: json.dumps(o, ensure_ascii=False)  # noqa: E731
    return {
        "extract_example_text": dump({"entities": {e["name"]: e["type"] for e in ents},
                                      "relationships": plain_rels}),
        "extract_example_model": dump({"entities": {e["name"]: {"type": e["type"], "description": e["description"]}
                                                    for e in ents}, "relationships": rels}),
        "extract_example_free_text": dump({"entities": [{"name": e["name"], "type": e["type"]} for e in real],
                                           "relationships": plain_rels}),
        "extract_example_free_model": dump({"entities": [{"name": e["name"], "type": e["type"],
                                                          "description": e["description"]} for e in real],
                                            "relationships": rels}),
    }


def prompt_tune(input_path: str | Path, out: str | Path, client, settings: Settings,
                force: bool = False) -> dict:
    """Write a prompts folder tuned to the corpus at ``input_path`` into ``out``.

    Args:
        client: a :class:`slmgraph.model.client.ModelClient` (types are chosen by the model).
        force: overwrite prompt files already in ``out``.

    Returns:
        ``{"out", "passage", "entities", "relationships", "files"}``.

    Raises:
        UserError: unreadable input; no passage with 3+ candidate names; ``out`` is a file, cannot be
            created (a missing one is created with its parents) or already holds prompt files (without
            ``force``: :mod:`slmgraph.outputs`); the result fails the placeholder check.
    """
    from slmgraph.indexing.stages.ingest_read import read_documents
    from slmgraph.config.prompting import Prompts, bundled_dir

    docs, _ = read_documents(input_path)
    found = pick_passage([d.text for d in docs])
    if found is None:
        raise UserError(f"no passage of {input_path} names 3 or more capitalised names: prompt-tune needs a corpus "
                        "with named entities (keep the bundled prompts)")
    passage, cands = found
    out = Path(out).expanduser()
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file: pass a folder for the prompts")
    if out.is_dir() and any(out.glob("*.txt")) and not force:
        raise UserError(f"--out {out} already holds prompt files: pass --force to overwrite them, or another folder")
    typed = type_candidates(client, passage, cands, settings.entity_types)
    ex = build_example(passage, typed, settings.description_max_chars)
    out = output_folder(out)  # created with its parents (slmgraph.outputs); edited files need --force (above)
    for f in bundled_dir().iterdir():
        if f.suffix in (".txt", ".md"):
            shutil.copyfile(f, out / f.name)
    quoted = quote_data(passage)
    block = {"extract_system": f"Candidate names: {'; '.join(cands)}\nText:\n\"\"\"\n{quoted}\n\"\"\"\n",
             "extract_free_system": f"Text:\n\"\"\"\n{quoted}\n\"\"\"\n"}
    for name, body in block.items():
        text = (out / f"{name}.txt").read_text(encoding="utf-8")
        new, n = _EXAMPLE_BLOCK.subn(lambda m: m.group(1) + body + m.group(2), text)
        if n != 1:
            raise UserError(f"bundled prompt {name}.txt has no example block to replace: update slmgraph")
        (out / f"{name}.txt").write_text(new.replace("$", "$$").replace("$$example", "$example")
                                         .replace("$$entity_types", "$entity_types"), encoding="utf-8")
    for name, text in example_outputs(ex).items():
        (out / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
    Prompts(out).check()
    return {"out": str(out), "passage": passage, "entities": ex["entities"], "relationships": ex["relationships"],
            "files": sorted(str(p) for p in out.glob("*.txt"))}
