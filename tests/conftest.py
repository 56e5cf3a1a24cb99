"""Shared test fixtures: a scripted fake model and a fake embedder.

The fake model has the same methods as :class:`slmgraph.model.backend.LlamaModel`
(tokenize, detokenize, render, prompt_tokens, complete) with a word-level
tokenizer that round-trips text exactly, and answers each stage from a
script: a function ``(system, user, schema) -> str``. The default script
answers every stage with valid, content-dependent JSON.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import os
import re
import sys
import zlib
from importlib.util import spec_from_file_location
from pathlib import Path

import numpy as np
import pytest

_ROOT = Path(__file__).resolve().parent.parent


class _ThisCheckoutFinder:
    """Maps ``slmgraph.prompts`` and ``slmgraph.models`` to this checkout's ``prompts/`` and ``models/``.

    They live outside the ``slmgraph/`` folder (pyproject's package-dir), so
    with an editable install made from another checkout -- e.g. git worktrees
    sharing one venv, tests run with ``PYTHONPATH=<this checkout>`` -- they
    would be imported from that other checkout while ``slmgraph`` is this one.
    """

    dirs = {"slmgraph.prompts": _ROOT / "prompts", "slmgraph.models": _ROOT / "models"}

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        d = cls.dirs.get(fullname)
        if d is None:
            return None
        return spec_from_file_location(fullname, d / "__init__.py", submodule_search_locations=[str(d)])


_spec = importlib.util.find_spec("slmgraph")
if _spec is not None and _spec.origin and Path(_spec.origin).resolve().is_relative_to(_ROOT):
    sys.meta_path.insert(0, _ThisCheckoutFinder)

from slmgraph.model.client import Choice, Generation, Prompt
from slmgraph.store.rows import EntityRow, RelationshipRow

_TOKEN = re.compile(r"\S+\s*|\s+")


class FakeModel:
    """Scripted stand-in for LlamaModel. ``calls`` records (system, user, schema) per completion."""

    name = "fake-model.gguf"
    fingerprint = "fake0001"
    n_params = 1_000_000
    path = None  #: no file: extraction runs in-process unless a test passes a model_factory
    n_threads = 0  #: runs no llama.cpp threads: the settings' thread budget applies

    def __init__(self, script=None, n_ctx: int = 4096, choice_script=None, n_ctx_train: int = 0):
        self.n_ctx = n_ctx
        self.n_ctx_train = n_ctx_train  #: 0 = unknown, as a GGUF without the metadata
        self.script = script or default_script
        #: ``(system, user, options) -> probabilities`` (one per option, any
        #: non-negative numbers; 0 means the option has no mass) for score_options.
        self.choice_script = choice_script or default_choice_script
        self.calls: list[tuple[str, str, dict | None]] = []
        self.finish = "stop"  #: finish_reason reported by every completion
        self._vocab: dict[str, int] = {}
        self._inv: dict[int, str] = {}
        self._kv: list[int] = []

    def reserve_threads(self) -> int:
        return self.n_threads

    def tokenize(self, text: str) -> list[int]:
        # A token's id depends on its text only (not on what this instance saw
        # before), so a fresh fake in a rerun or a worker gives the same cache keys.
        out = []
        for piece in _TOKEN.findall(text):
            if piece not in self._vocab:
                self._vocab[piece] = zlib.crc32(piece.encode("utf-8"))
                self._inv[self._vocab[piece]] = piece
            out.append(self._vocab[piece])
        return out

    def detokenize(self, tokens) -> str:
        return "".join(self._inv[t] for t in tokens)

    def render(self, system: str, user: str) -> Prompt:
        return Prompt(fixed=f"<system> {system}\n", lead="<user> ", content=user, tail="\n<assistant> ")

    def prompt_tokens(self, prompt: Prompt):
        return self.tokenize(prompt.fixed), self.tokenize(prompt.lead + prompt.content + prompt.tail)

    def _evaluate(self, fixed, rest) -> tuple[list[int], int, str, str]:
        """``(tokens, cached, system, user)`` of a prompt: the tokens shared with the KV state are
        cached (as llama.cpp's prefix reuse), and the prompt becomes the KV state."""
        tokens = list(fixed) + list(rest)
        cached = 0
        for a, b in zip(self._kv, tokens):
            if a != b:
                break
            cached += 1
        self._kv = tokens
        system = self.detokenize(fixed)[len("<system> "):].rstrip("\n")
        user = self.detokenize(rest)[len("<user> "):-len("\n<assistant> ")]
        return tokens, cached, system, user

    def complete(self, fixed, rest, *, schema, max_tokens, deadline_s=None, on_text=None) -> Generation:
        assert len(fixed) + len(rest) + max_tokens <= self.n_ctx, "prompt + max_tokens over the window"
        tokens, cached, system, user = self._evaluate(fixed, rest)
        self.calls.append((system, user, schema))
        text = self.script(system, user, schema)
        if on_text:
            on_text(text)
        self._kv = tokens + self.tokenize(text)
        return Generation(text, len(tokens), min(cached, len(tokens) - 1), len(self.tokenize(text)), 0.001,
                          self.finish)

    def score_options(self, fixed, rest, options) -> Choice:
        if len(options) < 2:
            raise ValueError("score_options needs two or more options")
        assert len(fixed) + len(rest) + 1 <= self.n_ctx, "prompt over the window"
        tokens, cached, system, user = self._evaluate(fixed, rest)
        self.calls.append((system, user, {"options": list(options)}))
        probs = [float(p) for p in self.choice_script(system, user, list(options))]
        lps = [float(np.log(p)) if p > 0 else float("-inf") for p in probs]
        return Choice(options=list(options), logprobs=lps, prompt_tokens=len(tokens),
                      cached_tokens=min(cached, len(tokens) - 1), seconds=0.001)

    def continuation(self, user: str) -> list[int]:
        return self.tokenize(f"\n<user> {user}\n<assistant> ")

    def follow_up(self, history, extra, *, schema=None, choices=None, max_tokens=1, deadline_s=None) -> Generation:
        full = [t for toks, _ in history for t in toks]
        assert len(full) + len(extra) + (1 if choices else max_tokens) <= self.n_ctx, "follow-up over the window"
        reused = len(full) if self._kv == full else 0
        system = self.detokenize(history[0][0])[len("<system> "):].rstrip("\n")
        user = self.detokenize(extra)[len("\n<user> "):-len("\n<assistant> ")]
        sch = schema if schema is not None else {"choices": list(choices or [])}
        self.calls.append((system, user, sch))
        text = self.script(system, user, sch)
        if choices and text not in choices:
            text = choices[-1]
        self._kv = full + list(extra) + self.tokenize(text)
        return Generation(text, len(full) + len(extra), reused, len(self.tokenize(text)), 0.001, "stop")


def descendants(root: int) -> dict[int, str]:
    """``pid -> command line`` (arguments joined by spaces) of the processes descending from ``root``
    (read from /proc)."""
    parent, names = {}, {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                parent[int(d)] = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
                names[int(d)] = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except (OSError, IndexError, ValueError):
                pass

    def descends(pid):
        for _ in range(20):
            pid = parent.get(pid, 0)
            if pid == root:
                return True
            if pid <= 1:
                return False
        return False

    return {p: n for p, n in names.items() if descends(p)}


def actor_pids(root: int) -> list[int]:
    """Ray actor processes (``ray::ModelActor``) descending from process ``root``."""
    return [p for p, n in descendants(root).items() if "ModelActor" in n]


def ent_rows(items) -> list[EntityRow]:
    """Entity rows of a community from ``(entity_id, name, type, description, degree)`` tuples."""
    return [EntityRow(entity_id=i, name=n, type=t, description=d, degree=g) for i, n, t, d, g in items]


def rel_rows(items) -> list[RelationshipRow]:
    """Relationship rows from ``(rel_id, source_id, target_id, description, weight, combined_degree)`` tuples."""
    return [RelationshipRow(rel_id=r, source_id=a, target_id=b, description=d, weight=w, combined_degree=c)
            for r, a, b, d, w, c in items]


def stage_of(schema: dict | None, system: str) -> str:
    """Which stage a call belongs to, from its schema (or system prompt)."""
    if schema is None:
        if "analysts" in system.lower():
            return "reduce"
        return "answer"
    if "choices" in schema:
        return "choice"
    props = schema.get("properties", {})
    if "entities" in props:
        return "extract"
    if "claims" in props:
        return "claims"
    if "title" in props:
        return "report"
    if "points" in props:
        return "map"
    if "relevant" in props:
        return "rate"
    return "other"


def default_script(system: str, user: str, schema: dict | None) -> str:
    stage = stage_of(schema, system)
    if stage == "choice":
        return schema["choices"][-1]  # "N": nothing was missed
    if stage == "extract" and schema["properties"]["entities"]["type"] == "array":  # free names
        from slmgraph.names.forms import candidate_names

        text = user.split("Text:\n", 1)[-1].rsplit("\nOutput:", 1)[0].strip('"\n')
        names = candidate_names(text)
        with_desc = "description" in schema["properties"]["entities"]["items"]["properties"]
        ents = [dict({"name": n, "type": "person"}, **({"description": f"{n} appears."} if with_desc else {}))
                for n in names]
        rels = [{"source": names[0], "target": names[1], "strength": 5}] if len(names) > 1 else []
        return json.dumps({"entities": ents, "relationships": rels})
    if stage == "extract":
        props = schema["properties"]["entities"]["properties"]
        names = list(props)
        if names and props[names[0]].get("type") == "object":  # the model writes descriptions
            ents = {n: {"type": "person", "description": f"{n} appears in the text."} for n in names}
        else:
            ents = {n: "person" for n in names}
        rels = [{"source": names[0], "target": names[1], "strength": 5}] if len(names) > 1 else []
        return json.dumps({"entities": ents, "relationships": rels})
    if stage == "claims":
        return json.dumps({"claims": sentence_claims(user)})
    if stage == "report":
        first = re.search(r"entity,type,description\n([^,\n]+),", user)
        title = first.group(1) if first else "Community"
        report = {"title": title, "summary": f"{title} and related entities.", "rating": 5,
                  "rating_explanation": "test"}
        if "findings" in schema["properties"]:
            report["findings"] = [{"summary": f"About {title}", "explanation": f"{title} is in the data."}]
        return json.dumps(report)
    if stage == "map":
        item = schema["properties"]["points"]["items"]["properties"]
        field = "reports" if "reports" in item else "passages"
        ids = item[field]["items"]["enum"]
        q = re.search(r"Question: (.*)", user).group(1)
        words = [w for w in re.findall(r"\w{4,}", q.lower())]
        hit = any(w in user.split("\n\n", 1)[1].lower() for w in words)
        return json.dumps({"points": [{"answer": f"Point about {q}", field: [ids[0]], "score": 60 if hit else 0}]})
    if stage == "rate":
        q = re.search(r"Question: (.*)", user).group(1)
        words = [w for w in re.findall(r"\w{4,}", q.lower())]
        body = user.split("\n\n", 1)[1].lower()
        return json.dumps({"relevant": "yes" if any(w in body for w in words) else "no"})
    if stage == "reduce":
        m = re.search(r"\[(Reports|Sources): ([\d, ]+)\]", user)
        return f"Final answer. [{m.group(1)}: {m.group(2)}]" if m else "Final answer."
    return "An answer. [Sources: 1] [Entities: 1]"


def default_choice_script(system: str, user: str, options: list[str]) -> list[float]:
    """Default probabilities for score_options: the last option (e.g. "no") twice as likely as each other."""
    return [1.0] * (len(options) - 1) + [2.0]


def claims_prompt(user: str) -> tuple[list[str], str]:
    """``(entity names, text unit as its numbered sentences joined by spaces)`` of a claims prompt."""
    m = re.search(r"Entity names: (.*)\nSentences:\n(.*)\nOutput:", user, re.S)
    return m.group(1).split("; "), " ".join(numbered_sentences(user))


def numbered_sentences(user: str) -> list[str]:
    """The numbered sentences of a claims prompt, in order (sentence i is item i - 1)."""
    block = re.search(r"\nSentences:\n(.*)\nOutput:", user, re.S).group(1)
    return [re.sub(r"^\[\d+\] ", "", line) for line in block.strip('"\n').split("\n")]


def sentence_claims(user: str) -> list[dict]:
    """Claims of a claims prompt: for each sentence naming two of the entities,
    the first named is the subject, the second the object (at most 4)."""
    names, _ = claims_prompt(user)
    out = []
    for i, sent in enumerate(numbered_sentences(user), start=1):
        found = sorted((n for n in names if n in sent), key=sent.index)
        if len(found) >= 2 and len(out) < 4:
            out.append({"sentence": i, "subject": found[0], "object": found[1], "type": "FACT", "status": "TRUE",
                        "start_date": "NONE", "end_date": "NONE"})
    return out


class FakeEmbedder:
    """Deterministic bag-of-words hashing embedder (64-d, L2-normalised)."""

    name = "fake-embedder"
    dim = 64

    def encode(self, texts, progress=False):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out


_THEME_TABLES = (
    "documents (doc_id VARCHAR, path VARCHAR, title VARCHAR)",
    "text_units (chunk_id VARCHAR, doc_id VARCHAR, ord INT, text VARCHAR)",
    "entities (entity_id INT, name VARCHAR)",
    "concepts (entity_id INT)",
    "community_members (community_id INT, entity_id INT)",
    "entity_text_units (entity_id INT, chunk_id VARCHAR)",
    "community_reports (community_id INT, topic VARCHAR)",
    "embeddings (kind VARCHAR, item_id VARCHAR, vector FLOAT[])",
    "concept_mentions (chunk_id VARCHAR, norm VARCHAR, name VARCHAR, description VARCHAR)",
)


class _ThemeStore:
    """The least of a Store a ThemeIndex reads: ``con`` and no unit numbers."""

    def __init__(self, con):
        self.con = con

    def has_unit_numbers(self):
        return False


def small_index(tmp_path, folder: str, docs) -> tuple:
    """``(Store, Settings)`` of ``docs`` (``{file name: text}`` or ``[(file name, text)]``) written to
    ``tmp_path/folder`` and indexed into ``tmp_path/idx.duckdb`` with the fake model and embedder; the settings
    keep every community of two and turn the helpfulness floor and probes off (the fake embedder's cosines
    are not calibrated). Close the store when done."""
    from slmgraph.config.settings import Settings
    from slmgraph.indexing.pipeline import run_index
    from slmgraph.store.db import Store

    root = tmp_path / folder
    root.mkdir()
    for name, text in (docs.items() if isinstance(docs, dict) else docs):
        (root / name).write_text(text, encoding="utf-8")
    db = tmp_path / "idx.duckdb"
    s = Settings(min_community_size=2)
    run_index(root, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    s.helpfulness_floor, s.helpfulness_probes = 0.0, False
    return Store(db), s


def theme_index(units, *, embedder=None, entities=(), members=(), entity_units=(), reports=(), mentions=()):
    """A ThemeIndex over an in-memory DuckDB holding the nine tables it reads, filled in the order given.

    ``units``: ``[(chunk_id, doc_id, ord, text)]``; each doc id, when first seen, adds the document
    ``(doc_id, "<doc_id>.txt", doc_id)``. ``embedder``: when given, each unit's ``encode([text])[0]`` is
    stored as its ``text_unit`` embedding. ``entities``: ``[(entity_id, name)]``; ``members``:
    ``[(community_id, entity_id)]``; ``entity_units``: ``[(entity_id, chunk_id)]``; ``reports``:
    ``[(community_id, topic)]``; ``mentions``: ``[(chunk_id, norm, name)]`` (no description).
    Close it with ``ix.store.con.close()``.
    """
    import duckdb

    from slmgraph.query.theme_model import ThemeIndex

    con = duckdb.connect()
    for table in _THEME_TABLES:
        con.execute(f"CREATE TABLE {table}")
    seen: set[str] = set()
    for c, d, o, text in units:
        if d not in seen:
            seen.add(d)
            con.execute("INSERT INTO documents VALUES (?, ?, ?)", [d, f"{d}.txt", d])
        con.execute("INSERT INTO text_units VALUES (?, ?, ?, ?)", [c, d, o, text])
        if embedder is not None:
            con.execute("INSERT INTO embeddings VALUES ('text_unit', ?, ?)", [c, embedder.encode([text])[0].tolist()])
    for table, rows in (("entities", entities), ("community_members", members), ("entity_text_units", entity_units),
                        ("community_reports", reports)):
        for row in rows:
            con.execute(f"INSERT INTO {table} VALUES (?, ?)", list(row))
    for c, k, n in mentions:
        con.execute("INSERT INTO concept_mentions VALUES (?, ?, ?, '')", [c, k, n])
    return ThemeIndex(_ThemeStore(con))


def super_groups():
    """A graph with a two-level community structure: 3 groups of 3 five-cliques (cliques inside a group joined by 3 edges each),
    groups joined by one edge, plus an isolated entity: Leiden keeps most groups
    whole at level 0 and splits them into cliques at level 1."""
    ents, edges, nid = [], [], 1
    for g in range(3):
        cl = []
        for _ in range(3):
            m = list(range(nid, nid + 5))
            nid += 5
            cl.append(m)
            ents += m
            edges += [(a, b, 1.0) for a, b in itertools.combinations(m, 2)]
        for x, y in itertools.combinations(range(3), 2):
            edges += [(cl[x][k], cl[y][k], 1.0) for k in range(3)]
        if g:
            edges.append((cl[0][4], cl[0][4] - 15, 1.0))
    return ents + [99], edges


@pytest.fixture
def fake_model():
    return FakeModel()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A small corpus with nested folders, spaces and non-ASCII names."""
    root = tmp_path / "corpus"
    (root / "sub dir").mkdir(parents=True)
    (root / "alpha.txt").write_text(
        "Alice Smith founded Acme Corporation in Paris. Bob Jones joined Acme Corporation later.\n\n"
        "Alice Smith and Bob Jones built rockets at Acme Corporation. Paris was their home.\n", encoding="utf-8")
    (root / "sub dir" / "béta notes.md").write_text(
        "# Notes\n\nCarol White met Dan Brown in Berlin. Carol White studied physics with Dan Brown.\n"
        "Berlin Institute hired Carol White. Dan Brown visited Berlin Institute often.\n", encoding="utf-8")
    (root / "gamma.txt").write_text(
        "Eve Black wrote about Acme Corporation. Eve Black interviewed Alice Smith in Paris.\n", encoding="utf-8")
    return root


def fake_model_factory(threads: int) -> FakeModel:
    """``threads -> FakeModel`` for extraction worker processes (picklable: a module-level function)."""
    return FakeModel()


@pytest.fixture(autouse=True)
def _own_records(tmp_path_factory, monkeypatch):
    """Every test reads and writes capability records in a folder of its own (never the user's), so a
    record written on this machine cannot change which route a test's ``auto`` setting takes."""
    monkeypatch.setenv("SLMGRAPH_RECORDS", str(tmp_path_factory.mktemp("records")))


@pytest.fixture
def fake_cli(monkeypatch):
    """``slmgraph index`` with the scripted fake model and embedder instead of the GGUF."""
    import slmgraph.indexing.pipeline as pipeline

    real = pipeline.run_index

    def run_index(input_path, db_path, settings, **kw):
        settings.min_community_size = 2
        return real(input_path, db_path, settings, model=FakeModel(), embedder_factory=FakeEmbedder,
                    **{k: v for k, v in kw.items() if k not in ("model", "embedder_factory")})

    monkeypatch.setattr(pipeline, "run_index", run_index)


def people_corpus(root, n_docs=12, report_on="Geneva"):
    """``n_docs`` short documents of eight people meeting in Geneva and founding Acme Labs, for runs compared
    across executors (the same names recur, so units share entities)."""
    root.mkdir(parents=True)
    first = ["Alice", "Bruno", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hiro"]
    for i in range(n_docs):
        a, b, c = first[i % 8], first[(i + 3) % 8], first[(i + 5) % 8]
        (root / f"d{i:02d}.txt").write_text(
            f"{a} Weber met {b} Rossi in Geneva on day {i}. {b} Rossi founded Acme Labs with {c} Tanaka.\n"
            f"{c} Tanaka and {a} Weber wrote a report on {report_on} for Acme Labs.\n")
    return root
