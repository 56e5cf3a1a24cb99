"""The Python API: ``slmgraph.index(...)`` and ``slmgraph.open(db)``.

The command line calls the same functions: ``slmgraph index`` runs
:func:`slmgraph.indexing.pipeline.run_index` with settings merged by
:func:`settings_for`, ``slmgraph query`` answers through :func:`answer`,
``slmgraph stats`` reads :func:`slmgraph.tools.stats.collect`, ``slmgraph export``
writes through :func:`slmgraph.tools.export.export`.

Example (see docs/python-api.md)::

    import slmgraph

    slmgraph.index("notes/", "notes.duckdb", chunk_size=300)
    with slmgraph.open("notes.duckdb") as ix:
        a = ix.query("What are the main themes?", method="global", level=0)
        print(a.text, a.citations, a.prompt_tokens + a.completion_tokens, a.seconds)
        print(ix.stats()["tables"]["entities"])
        print(ix.entities().head())          # pandas DataFrames: pip install 'slmgraph[frames]'
        ix.export("out/", format="parquet")

Settings are the fields of :class:`slmgraph.config.settings.Settings` (the keys of the
``slmgraph.toml`` that ``slmgraph init`` writes), passed as keyword arguments;
they override a settings file (``config=PATH``, or ``./slmgraph.toml`` when
present), which overrides the defaults.

One concern, over 500 lines: the Python API, the front door the command line and the web app share.
"""

from __future__ import annotations

import numbers
import os
import re
from pathlib import Path
from typing import Callable

from slmgraph.config.settings import Method, Settings
from slmgraph.errors import UserError, echo_repr
from slmgraph.query.answer import Answer

__all__ = ["Answer", "Index", "answer", "index", "open", "settings_for"]

#: The tables every query, browse and stats call reads: an index without one of them is damaged (or was made by
#: another program that wrote slmgraph's meta) and is refused when opened, not at the first query that reads it.
QUERY_TABLES = ("documents", "text_units", "entities", "relationships", "communities", "community_reports",
                "embeddings")


def as_path(value, what: str) -> Path:
    """``value`` (a ``str`` or ``os.PathLike``) as a :class:`Path`.

    Raises:
        UserError: anything else (None, a number), naming ``what`` and the value.
    """
    if isinstance(value, (str, os.PathLike)):
        return Path(value)
    raise UserError(f"{what} must be a path (a str or pathlib.Path), got {echo_repr(value)}")


def check_text(question) -> None:
    """Refuse a question that is not a non-empty string holding a word.

    Raises:
        UserError: one line naming what was passed and the remedy.
    """
    if not isinstance(question, str):
        raise UserError(f"the question is not text ({type(question).__name__}): pass a question string")
    if not question.strip():
        raise UserError("the question is empty: pass a question in quotes")
    if not re.search(r"\w", question):  # "   ?" asks nothing every method would answer anyway
        raise UserError(f"the question {question.strip()!r} has no words: pass a question in quotes")


def settings_for(config: str | Path | None = None, where: str = "slmgraph", **overrides) -> tuple[Settings, dict]:
    """Settings from keyword arguments over a settings file over the defaults.

    Args:
        config: a settings file; None = ``./slmgraph.toml`` when present.
        overrides: :class:`Settings` field names and values (checked like the file's keys).

    Returns:
        ``(settings, sources)`` with ``sources[key]`` = ``"argument"``, ``"file PATH"`` or ``"default"``.

    Raises:
        UserError: unknown setting, bad value, unreadable or invalid settings file.
    """
    from slmgraph.config import file as sf

    base = Settings()
    for name in [n for n in overrides if n in sf.DEPRECATED]:
        import sys

        print(f"slmgraph: notice: {where}: {name!r} is no longer read ({sf.DEPRECATED[name]}); remove it",
              file=sys.stderr)
        overrides = {k: v for k, v in overrides.items() if k != name}
    for name, value in overrides.items():
        setattr(base, name, sf.convert_argument(name, value, where))
    if "n_threads" in overrides:
        base.threads_explicit = True
    path = sf.find(str(config) if config is not None else None)
    values = sf.load(path) if path else {}
    return sf.resolve(base, values, path, {k: "argument" for k in overrides})


def index(input: str | Path, db: str | Path, *, config: str | Path | None = None, replace: bool = False,
          follow_links: bool = False, progress: bool = False, say: Callable[[str], None] | None = None, model=None,
          embedder_factory: Callable | None = None, **settings) -> dict:
    """Index the ``.txt``/``.md`` files of ``input`` (a folder or one file) into the DuckDB file ``db``.

    Incremental and resumable like ``slmgraph index`` (the same function runs).

    Args:
        config: settings file (default ``./slmgraph.toml`` when present).
        replace: allow re-indexing an index built from another input.
        follow_links: read what symbolic links under ``input`` lead to outside it (``--follow-links``).
        progress: show progress bars; ``say`` receives one-line stage notes (default: none).
        model: an already loaded model (tests pass the scripted fake); None loads ``model_path``.
        embedder_factory: ``() -> Embedder`` (tests pass a fake); None = the bundled all-MiniLM-L6-v2.
        settings: :class:`Settings` fields, e.g. ``chunk_size=300, claims=True``.

    Returns:
        Per-stage figures (dict: ``run_id``, then one dict per stage with its ``seconds``).

    Raises:
        UserError: bad input, settings, model or ``db`` (``input`` or ``db`` no path: None, a number; nothing
            already indexed is lost).
    """
    from slmgraph.indexing.pipeline import run_index

    input, db = as_path(input, "slmgraph.index() input"), as_path(db, "slmgraph.index() db")
    s, sources = settings_for(config, "slmgraph.index()", **settings)
    return run_index(input, db, s, replace=replace, follow_links=follow_links, progress=progress, model=model,
                     embedder_factory=embedder_factory, say=say or (lambda m: None), sources=sources)


def answer(store, client, prompts, settings: Settings, question: str, method: str = "global",
           level: int | None = None, dynamic: bool = False, progress: bool = False,
           on_text: Callable[[str], None] | None = None, embedder_factory: Callable | None = None,
           on_route: Callable[[str, str], None] | None = None) -> Answer:
    """Answer ``question`` from an open index with one search method (the paper's sec. 3.1.6 and baselines).

    Args:
        method: ``global`` (map-reduce over the reports of ``level``, default 0), ``local``, ``basic``,
            ``ts`` (map-reduce over text units), ``drift`` (report primer and local-search follow-ups,
            :mod:`slmgraph.query.engines.drift_search`), ``lazy`` (budgeted relevance tests of text units, no
            reports needed, :mod:`slmgraph.query.engines.lazy_search`) or ``auto`` (global -- lazy on an index
            built with ``--no-reports`` -- or local by the question's wording, reported to
            ``on_route(method, reason)`` and in ``details["route"]``).
        embedder_factory: ``() -> Embedder`` (every method embeds the question); None = the bundled one, run
            without torch (:func:`slmgraph.query.question_embed.question_embedder`).

    Returns:
        :class:`slmgraph.query.answer.Answer`: ``text``, ``citations``, ``context``, ``prompt_tokens``,
        ``completion_tokens``, ``seconds``, ``model_calls``, ``details``; ``points`` and
        ``cited_documents`` name the document of every citation, and the text names them too
        (:func:`slmgraph.query.documents.attach_documents`).

    Raises:
        UserError: empty question, unknown method or level, missing embeddings.
    """
    check_text(question)
    if method not in METHODS:
        raise UserError(f"method {echo_repr(method)} is not one of {', '.join(METHODS)}")
    route_reason = None
    if method == "auto":
        from slmgraph.query.named import check_names
        from slmgraph.query.route import route

        # the names every method's named-entity gate finds: a question naming one is about it, not the corpus
        method, route_reason = route(question, prompts, reports=store.get_meta("reports") != "skipped",
                                     named=lambda q: check_names(store, q, settings, in_index=True)["named"])
        if on_route:
            on_route(method, route_reason)
    # Every method embeds the question: global and TS for the helpfulness score
    # (slmgraph.query.scoring), local and basic to find the nearest items.
    if embedder_factory is None:
        from slmgraph.query.question_embed import question_embedder

        emb = question_embedder(batch_size=settings.embed_batch_size, threads=settings.n_threads)
    else:
        emb = embedder_factory()
    if method == "global":
        from slmgraph.query.engines.global_search import global_search

        ans = global_search(store, client, prompts, settings, question, level=0 if level is None else level,
                            dynamic=dynamic, progress=progress, on_text=on_text, embedder=emb)
        if route_reason and ans.details.get("fallback") == "basic":
            ans, route_reason = _basic_after_global(store, client, prompts, settings, question, emb, ans,
                                                    on_text, route_reason)
    elif method == "ts":
        from slmgraph.query.engines.global_search import text_unit_search

        ans = text_unit_search(store, client, prompts, settings, question, progress=progress, on_text=on_text,
                               embedder=emb)
    else:
        if method == "local":
            from slmgraph.query.engines.local_search import local_search

            ans = local_search(store, client, prompts, settings, question, emb, level=level, on_text=on_text)
        elif method == "drift":
            from slmgraph.query.engines.drift_search import drift_search

            ans = drift_search(store, client, prompts, settings, question, emb, on_text=on_text)
        elif method == "lazy":
            from slmgraph.query.engines.lazy_search import lazy_search

            ans = lazy_search(store, client, prompts, settings, question, emb, on_text=on_text)
        else:
            from slmgraph.query.engines.basic_search import basic_search

            ans = basic_search(store, client, prompts, settings, question, emb, on_text=on_text)
    if route_reason:
        ans.details["route"] = {"chose": method, "because": route_reason}
    if ans.details.get("refused") or not any(ans.citations.values()):
        note = _language_note(store, question)
        if note:  # a refusal alone does not say that the question's language is why
            ans.text = ans.text.rstrip() + "\n" + note
            ans.details["language_note"] = note
            if on_text:
                on_text("\n" + note)
        elif method == "global" and route_reason is None:
            hint = _local_hint(store, prompts, settings, question)
            if hint:  # the default method refuses a question about one entity that local search answers
                ans.text = ans.text.rstrip() + "\n" + hint
                ans.details["method_hint"] = hint
                if on_text:
                    on_text("\n" + hint)
    misspelt = _misspelt_note(store, settings, question, ans)
    if misspelt:  # a name the index does not hold beside one it does: the answer is of the others
        ans.text = misspelt + "\n\n" + ans.text
        ans.details["misspelt_note"] = misspelt
    from slmgraph.query.documents import attach_documents

    attach_documents(store, ans)
    return ans


def _misspelt_note(store, settings: Settings, question: str, ans: Answer) -> str | None:
    """"The index holds no “Henryk Dal”; the nearest name it holds is “Henrik Dahl”." for each name of the question
    the index does not hold and one of its names is near (:func:`slmgraph.query.named.close_names`), when the
    answer did not already offer it (a refusal asks "Did you mean ...?"); None otherwise."""
    from slmgraph.query.named import check_names, close_names

    if "Did you mean" in (ans.text or ""):
        return None
    # the method's own name check, when it kept it, spares a second NER pass over the question
    unknown = (ans.details["unknown_names"] if "unknown_names" in ans.details
               else check_names(store, question, settings).get("unknown_names", []))
    notes = []
    for name in unknown:
        near = close_names(store, [name])
        if near and near[0].casefold() != name.casefold():
            notes.append(f"The index holds no \u201c{name}\u201d; the nearest name it holds is \u201c{near[0]}\u201d.")
    return " ".join(notes) or None


def _local_hint(store, prompts, settings: Settings, question: str) -> str | None:
    """The line pointing a question that global search refused to local search, when ``question`` names
    entities the index holds (:func:`slmgraph.query.named.check_names` with the index's names) and
    ``--method auto`` would route it to local search (:func:`slmgraph.query.route.route`: "Who is Luis
    Ferreira?"); None otherwise."""
    from slmgraph.errors import echo
    from slmgraph.query.named import check_names, known_of
    from slmgraph.query.route import route

    named = check_names(store, question, settings, in_index=True)
    known = known_of(named)
    if not known:
        return None
    chose, _ = route(question, prompts, reports=store.get_meta("reports") != "skipped",
                     named=lambda q: named["named"])
    if chose != "local":
        return None
    names = " and ".join(f"'{echo(n)}'" for n in known[:3])
    return (f"The question names {names}, which the index holds: ask with --method local (or --method auto), "
            "which answers questions about one entity from its own text.")


def _language_note(store, question: str) -> str | None:
    """The line :func:`slmgraph.text.language.foreign_question_note` writes when ``question`` is in another
    language than the indexed text (judged on its first 20 text units) and none of its words occur in any text
    unit (case-insensitive, whole words); None otherwise, before reading the index when the question's own
    language is unknown (:func:`slmgraph.text.language.question_language`)."""
    from slmgraph.text.language import foreign_question_note, question_language

    if question_language(question) is None:
        return None
    sample = "\n".join(t or "" for (t,) in store.con.execute(
        "SELECT text FROM text_units ORDER BY doc_id, ord LIMIT 20").fetchall())

    def in_index(word: str) -> bool:
        pattern = r"(^|[^\pL\pN])" + re.escape(word) + r"([^\pL\pN]|$)"
        return bool(store.con.execute("SELECT count(*) FROM text_units WHERE regexp_matches(text, ?, 'i')",
                                      [pattern]).fetchone()[0])

    return foreign_question_note(question, sample, in_index)


def _basic_after_global(store, client, prompts, settings: Settings, question: str, emb, refused: Answer,
                        on_text, route_reason: str) -> tuple[Answer, str]:
    """``(answer, route reason)`` for a question ``auto`` sent to global search that no report answered
    but whose text units pass basic search's floor (``refused.details["fallback"] == "basic"``): basic
    search's answer, opened by global search's notice, so the user is not left to ask again (a new user's
    "What happened with the fireblight?": no report built around it, 7 of 12 documents naming it). When
    basic search refuses after all, ``refused`` as it was."""
    from slmgraph.query.engines.basic_search import basic_search

    ans = basic_search(store, client, prompts, settings, question, emb,
                       on_text=None if on_text is None else (lambda t: on_text("\n\n" + t)))
    if ans.details.get("refused"):
        return refused, route_reason
    ans.text = refused.text.rstrip() + "\n\n" + ans.text
    ans.details["global_refusal"] = {k: refused.details.get(k) for k in ("best_score", "floor", "fallback_gate")}
    ans.seconds += refused.seconds
    return ans, route_reason + "; no community report was helpful, so basic search answered from the text units"


def max_question_tokens(n_ctx: int) -> int:
    """The longest question, in tokens, a query accepts: an eighth of the window (1,024 of 8,192), so that
    the context and the answer keep the rest; a longer one is refused before any model call."""
    return n_ctx // 8


def question_too_long(n_q: int, n_ctx: int, n_ctx_train: int) -> str:
    """The message refusing a question of ``n_q`` tokens in an ``n_ctx``-token window (one line).

    The remedy is a window the model accepts: the smallest multiple of 1,024 tokens whose eighth holds
    the question, when that is within ``n_ctx_train`` (the window the model was trained for; 0 =
    unknown, no upper bound); else only shortening the question, to what the trained window allows.
    """
    limit = max_question_tokens(n_ctx)
    head = (f"the question is {n_q} tokens long; at most {limit} (an eighth of the {n_ctx}-token window) leave "
            "room for the context and the answer")
    need = -(-8 * n_q // 1024) * 1024
    if not n_ctx_train or need <= n_ctx_train:
        return f"{head}: shorten it, or pass --n-ctx {need}"
    most = max_question_tokens(n_ctx_train)
    if most <= limit:
        return f"{head}: shorten it to at most {limit} tokens (the model's trained window is {n_ctx_train} tokens)"
    return (f"{head}: shorten it to at most {most} tokens with --n-ctx {n_ctx_train} (the model's trained "
            f"window), or to {limit} as it is")


#: Query methods (:func:`answer`).
METHODS = tuple(m.value for m in Method)


#: ``Index.query``'s per-query options (the names of ``slmgraph query``'s flags) -> the Settings field each sets.
QUERY_OPTIONS = {"budget": "lazy_budget", "followups": "drift_followups", "depth": "drift_depth",
                 "drift_tokens": "drift_tokens", "answers": "answers", "opening": "opening",
                 "helpfulness": "helpfulness", "local_tokens": "local_context_tokens", "local_shares": "local_shares"}


def as_level(level) -> int | None:
    """``level`` as an int: None stays None, an int or an int-like string (``"1"``) is converted.

    Raises:
        UserError: anything else (a bool, a float, ``"one"``), with the value.
    """
    if level is None:
        return None
    if isinstance(level, str) and level.strip().lstrip("+-").isdigit():
        return int(level)
    if isinstance(level, numbers.Integral) and not isinstance(level, bool):
        return int(level)
    raise UserError(f"level must be an integer, got {echo_repr(level)}")


def interrupted_note(db: str | Path, input_root: str | None) -> str:
    """The one line a query of an index whose last update was interrupted says: what it answers from and
    the command that finishes the update."""
    import shlex

    src = shlex.quote(input_root) if input_root else "INPUT"
    return (f"the last update of index {db} was interrupted: answers come from the tables of its last complete "
            f"build, and text added or edited since may be missing from them; re-run 'slmgraph index {src} --db {shlex.quote(str(db))}' "
            "to finish it (with the options it was run with)")


class Index:
    """An open slmgraph index; use :func:`open`. A context manager (closes the file on exit).

    The one query path: ``slmgraph query``, ``slmgraph serve`` and Python scripts answer through
    :meth:`query`. The file is opened read-only by default, so any number of readers (scripts, queries,
    ``slmgraph serve``) share it; ``slmgraph index`` waits until they close it. The model is loaded on the
    first :meth:`query` (``stats``, ``export`` and the tables need none).

    Attributes:
        path: the ``.duckdb`` file.
        settings: the :class:`Settings` queries use; ``sources`` where each came from.
        interrupted: None, or the one line (:func:`interrupted_note`) saying the index's last update was
            interrupted: queries answer from its last complete build (each answer's ``details["interrupted"]``).
    """

    def __init__(self, db: str | Path, settings: Settings, sources: dict, model=None,
                 embedder_factory: Callable | None = None, read_only: bool = True, wait: float = 0.0,
                 on_wait: Callable[[str], None] | None = None):
        self.path = as_path(db, "the index")
        if not isinstance(wait, numbers.Real) or isinstance(wait, bool) or not wait >= 0:
            raise UserError(f"wait={echo_repr(wait)} must be a number of seconds >= 0 (0: refuse at once while another "
                            "process writes the index)")
        self.settings, self.sources = settings, sources
        self._model = model
        self._embedder_factory = embedder_factory
        self._embedder = None
        self._client = None
        self._prompts = None
        self._read_only, self._wait, self._on_wait = read_only, wait, on_wait
        self._open()

    def _open(self) -> None:
        from slmgraph.store.db import Store

        self.store = Store(self.path, read_only=self._read_only, wait=self._wait, on_wait=self._on_wait)
        self.interrupted = None
        try:
            if self.store.get_meta("complete") != "1":
                if not self.store.get_meta("build_key"):  # no build ever finished: there is nothing to read
                    raise UserError(f"index {self.path} is not complete: re-run 'slmgraph index' on its input to "
                                    "finish it")
                self.interrupted = interrupted_note(self.path, self.store.get_meta("input_root"))
            held = {t for t, in self.store.con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
                "AND database_name = current_database()").fetchall()}
            missing = [t for t in QUERY_TABLES if t not in held]
            if missing:
                tables = f"{', '.join(missing)} table{'s' if len(missing) > 1 else ''}"
                raise UserError(f"index {self.path} has no {tables}: the file is damaged or was not written by "
                                "'slmgraph index'; index its input again into a new --db")
        except UserError:
            self.store.close()
            raise

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the index file (idempotent); the index's methods then raise :class:`UserError`."""
        store = self.__dict__.get("_store")
        if store is not None:
            store.close()
        self._closed = True

    @property
    def store(self):
        """The open :class:`slmgraph.store.db.Store` of the index.

        Raises:
            UserError: the index was closed (:meth:`close`, or the end of its ``with`` block)."""
        if self.__dict__.get("_closed"):
            raise UserError(f"index {self.path} is closed (its 'with' block ended or close() was called): open it "
                            "again with slmgraph.open()")
        return self._store

    @store.setter
    def store(self, value) -> None:
        self._store, self._closed = value, False

    def levels(self) -> list[int]:
        """The community levels of the index, root (0) first."""
        return [r[0] for r in self.store.con.execute("SELECT DISTINCT level FROM communities ORDER BY 1").fetchall()]

    def _client_for_query(self):
        from slmgraph.model.backend import load_model
        from slmgraph.model.client import ModelClient
        from slmgraph.config.prompting import Prompts
        from slmgraph.store.db import new_run_id

        if self._client is None:
            self._prompts = Prompts(self.settings.prompts_dir)
            if self._model is None:
                s = self.settings
                model_path = s.model_path or self.store.get_meta("model_path") or None
                if model_path and not Path(model_path).is_file() and not s.model_path:
                    raise UserError(f"model {model_path} that built index {self.path} is missing: pass --model "
                                    "PATH.gguf (Python: model_path=...)")
                self._model = load_model(model_path, s.n_ctx, s.n_threads, s.seed, s.threads_explicit)
            self._client = ModelClient(self._model, self.store, new_run_id())
        return self._client, self._prompts

    def check_level(self, level: int | str | None) -> int | None:
        """``level`` as an int (None = the default); an int-like string such as ``"1"`` is accepted.

        Raises:
            UserError: ``level`` is not an integer, or not a community level of the index.
        """
        level = as_level(level)
        if level is not None and level not in self.levels():
            raise UserError(f"level {level} is not in index {self.path}: its levels are "
                            f"{', '.join(map(str, self.levels())) or 'none'}")
        return level

    def check_question(self, question: str, method: str = "global", level: int | None = None) -> None:
        """Every check a question passes before the model loads: not empty, a known ``method``, a ``level``
        the index has, reports for the methods that read them.

        Raises:
            UserError: one line naming the value and the remedy.
        """
        check_text(question)
        if method not in METHODS:
            raise UserError(f"method {echo_repr(method)} is not one of {', '.join(METHODS)}")
        self.check_level(level)
        if method in ("global", "drift") and self.store.get_meta("reports") == "skipped":
            raise UserError(f"index {self.path} was built with --no-reports: ask with --method lazy, or re-index "
                            f"without --no-reports for --method {method}")

    def _embedder_once(self):
        if self._embedder is None:
            if self._embedder_factory is not None:
                self._embedder = self._embedder_factory()
            else:
                from slmgraph.query.question_embed import question_embedder

                self._embedder = question_embedder(threads=self.settings.n_threads)
        return self._embedder

    def query_settings(self, **options) -> Settings:
        """A copy of the index's settings with the per-query ``options`` of :meth:`query` (the names of
        ``slmgraph query``'s flags: ``budget``, ``followups``, ``depth``, ``drift_tokens``, ``answers``,
        ``opening``, ``helpfulness``, ``local_tokens``, ``local_shares``); None leaves a setting as it is.

        Raises:
            UserError: an unknown option, or a value of the wrong type or out of range, naming both.
        """
        import copy

        from slmgraph.config import file as sf

        unknown = sorted(set(options) - set(QUERY_OPTIONS))
        if unknown:
            raise UserError(sf.unknown_name("Index.query()", "option", unknown[0], QUERY_OPTIONS,
                                            f"the options are {', '.join(QUERY_OPTIONS)}"))
        s = copy.copy(self.settings)
        for opt, value in options.items():
            if value is not None:
                setattr(s, QUERY_OPTIONS[opt], sf.convert_argument(QUERY_OPTIONS[opt], value,
                                                                   f"Index.query({opt}={echo_repr(value)})"))
        if s.local_context_tokens > s.n_ctx - 500:
            raise UserError(f"Index.query(local_tokens={s.local_context_tokens}) does not fit the {s.n_ctx}-token "
                            f"window with the question and answer: use at most {s.n_ctx - 500}")
        return s

    def query(self, question: str, method: str = "global", level: int | None = None, dynamic: bool = False,
              progress: bool = False, on_text: Callable[[str], None] | None = None,
              on_route: Callable[[str, str], None] | None = None,
              on_note: Callable[[str], None] | None = None, *, budget: int | None = None,
              followups: int | None = None, depth: int | None = None, drift_tokens: int | None = None,
              answers: str | None = None, opening: str | None = None, helpfulness: str | None = None,
              local_tokens: int | None = None, local_shares=None, **unknown) -> Answer:
        """Answer ``question``; see :func:`answer` for the methods.

        The keyword options are those of ``slmgraph query``, for this question only (None: the index's
        settings, from :func:`open`'s arguments, the settings file or the defaults):

        Args:
            budget: lazy search: relevance tests at most (>= 1; default 100).
            followups: drift search: follow-up questions per round (>= 0; default 3).
            depth: drift search: follow-up rounds (>= 1; default 2).
            drift_tokens: drift search: no follow-up starts once tokens read plus model tokens reach this.
            answers: who writes the answer: ``"extractive"``, ``"model"`` or ``"auto"``.
            opening: extractive answers' model-written opening sentence: ``"model"``, ``"off"`` or ``"auto"``.
            helpfulness: score of reports and text units: ``"embedding"``, ``"model"``, ``"combined"``,
                ``"auto"``.
            local_tokens: local search context budget in tokens (200 to the window less 500).
            local_shares: local search budget shares (reports, entities, relationships, text units): four
                non-negative numbers, e.g. ``(0.1, 0.2, 0.2, 0.5)``.
            on_text: receives the answer's text as the model writes it.
            on_route: ``(method, reason)`` of ``method="auto"``.
            on_note: the one-line notice of what the model's size turned on or off, when the model loads, and
                :attr:`interrupted`.

        Returns:
            :class:`slmgraph.query.answer.Answer` (``text``, ``citations``, ``context``, ``prompt_tokens``,
            ``completion_tokens``, ``seconds``, ``points`` with their sources and documents, ...).

        Raises:
            UserError: empty or overlong question, unknown method, a level the index does not have, an unknown
                option (with the nearest valid name) or one out of range, an index built without reports for
                global or drift search, missing model.
        """
        if unknown:  # a misspelt keyword ("lvl=1") gets the nearest valid name, as a settings file's key does
            from slmgraph.config import file as sf

            valid = ["method", "level", "dynamic", "progress", "on_text", "on_route", "on_note", *QUERY_OPTIONS]
            raise UserError(sf.unknown_name("Index.query()", "option", sorted(unknown)[0], valid,
                                            f"the options are {', '.join(valid)}"))
        settings = self.query_settings(budget=budget, followups=followups, depth=depth, drift_tokens=drift_tokens,
                                       answers=answers, opening=opening, helpfulness=helpfulness,
                                       local_tokens=local_tokens, local_shares=local_shares)
        level = as_level(level)
        self.check_question(question, method, level)
        new_model = self._client is None
        client, prompts = self._client_for_query()
        n_q = len(self._model.tokenize(question))
        if n_q > max_question_tokens(self.settings.n_ctx):
            raise UserError(question_too_long(n_q, self.settings.n_ctx, getattr(self._model, "n_ctx_train", 0)))
        if new_model and on_note:
            from slmgraph.model.policy import notice

            note = notice(self.settings, self._model)
            if note:
                on_note(note)
            if self.interrupted:
                on_note(self.interrupted)
        ans = answer(self.store, client, prompts, settings, question, method=method, level=level,
                     dynamic=dynamic, progress=progress, on_text=on_text, embedder_factory=self._embedder_once,
                     on_route=on_route)
        if self.interrupted:
            ans.details["interrupted"] = self.interrupted
        return ans

    def stats(self) -> dict:
        """The figures ``slmgraph stats --json`` prints (:func:`slmgraph.tools.stats.collect`)."""
        from slmgraph.tools.stats import collect

        return collect(self.store)

    def export(self, out: str | Path, format: str = "parquet") -> list[Path]:
        """Write the index as ``graphml``, ``parquet`` or ``csv`` into folder ``out``
        (:func:`slmgraph.tools.export.export`); returns the files written."""
        from slmgraph.tools.export import export

        return export(self.store, as_path(out, "export() out"), format)

    # Tables as pandas DataFrames, shaped like graphrag's output tables (slmgraph.tools.export.TABLES).
    def _frame(self, table: str):
        import importlib.util

        if importlib.util.find_spec("pandas") is None:  # DuckDB's .df() needs it
            raise UserError("the DataFrame methods need pandas: pip install 'slmgraph[frames]'")
        from slmgraph.tools.export import table_queries

        return self.store.con.execute(table_queries(self.store)[table]).df()

    def entities(self):
        """Entities as a pandas DataFrame: ``id``, ``human_readable_id`` (the id answers cite), ``title`` (the
        name), ``type``, ``description``, ``text_unit_ids``, ``frequency``, ``degree``, ... (graphrag's columns).

        Raises:
            UserError: pandas is not installed (``pip install 'slmgraph[frames]'``).
        """
        return self._frame("entities")

    def relationships(self):
        """Relationships as a DataFrame: ``source``, ``target`` (entity names), ``description``, ``weight``,
        ``combined_degree``, ``text_unit_ids``, ``strength``, ..."""
        return self._frame("relationships")

    def reports(self, level: int | None = None):
        """Community reports as a DataFrame (``level`` None: every level): ``community``, ``level``, ``title``,
        ``summary``, ``full_content``, ``rank``, ``findings``, ...

        Raises:
            UserError: a level the index does not have.
        """
        level = self.check_level(level)
        df = self._frame("community_reports")
        return df if level is None else df[df["level"] == level].reset_index(drop=True)

    def text_units(self):
        """Text units as a DataFrame: ``id``, ``human_readable_id`` (the number answers cite), ``text``,
        ``n_tokens``, ``document_ids``, ``entity_ids``, ``relationship_ids``, ..."""
        return self._frame("text_units")

    def documents(self):
        """Documents as a DataFrame: ``id``, ``title`` (the path), ``text_unit_ids``, ``n_chars``,
        ``n_tokens``, ..."""
        return self._frame("documents")

    def insert(self, texts, progress: bool = False, say: Callable[[str], None] | None = None) -> dict:
        """Index more texts into this index, incrementally (only the new text is extracted).

        Each text is written as a UTF-8 file ``slmgraph-inserted/<sha256 prefix>.txt`` in the folder the index
        was built from, so a later ``slmgraph index`` of that folder keeps it; the index is rebuilt with the
        settings it was built with (the stored fingerprint), then opened again.

        Args:
            texts: a string or an iterable of strings.

        Returns:
            :func:`slmgraph.indexing.pipeline.run_index`'s per-stage figures, plus ``inserted`` (the files written;
            a text already inserted is written once).

        Raises:
            UserError: an empty text, an index built from one file (not a folder), a folder that cannot be
                written, another process holding the index.
        """
        import hashlib
        import json

        from slmgraph.indexing.pipeline import run_index

        try:
            texts = [texts] if isinstance(texts, str) else list(texts)
        except TypeError:  # None, a number: not texts at all
            raise UserError(f"insert(texts): pass one or more non-empty strings, got {echo_repr(texts)}") from None
        if not texts or any(not isinstance(t, str) or not t.strip() for t in texts):
            raise UserError("insert(texts): pass one or more non-empty strings")
        root = Path(self.store.get_meta("input_root") or "")
        if not root.is_dir():
            raise UserError(f"index {self.path} was built from {root}, not a folder: insert() adds files to the "
                            "folder an index was built from; re-index a folder holding that file first")
        build = self._build_settings(json.loads(self.store.get_meta("settings") or "{}"))
        follow = self.store.get_meta("follow_links") == "1"  # the input is read as the last run read it
        folder = root / "slmgraph-inserted"
        written = []
        try:
            folder.mkdir(exist_ok=True)
            for text in texts:
                f = folder / f"{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}.txt"
                if not f.exists():
                    f.write_text(text, encoding="utf-8")
                    written.append(f)
        except OSError as exc:
            raise UserError(f"insert(): cannot write {folder} ({exc.strerror or exc}): make the folder the index "
                            "was built from writable") from None
        self.close()
        try:
            out = run_index(root, self.path, build, follow_links=follow,
                            progress=progress, model=self._model,
                            embedder_factory=self._embedder_factory, say=say or (lambda m: None), wait=self._wait)
        finally:
            self._client = None  # its ledger belonged to the closed store
            self._open()
        out["inserted"] = [str(f) for f in written]
        return out

    def _build_settings(self, stored: dict) -> Settings:
        """The settings the index was built with: its stored fingerprint over this object's runtime settings."""
        import dataclasses

        s = dataclasses.replace(self.settings)
        fields = {f.name for f in dataclasses.fields(Settings)}
        for name, value in stored.items():
            if name in fields:
                setattr(s, name, tuple(value) if isinstance(value, list) else value)
        if not s.model_path:
            s.model_path = self.store.get_meta("model_path") or None
        return s

    # Browsing (slmgraph.query.browse): plain dicts and lists, as `slmgraph serve` returns them as JSON.
    def browse_entities(self, query: str = "", limit: int = 50) -> list[dict]:
        """Entities whose name contains ``query``, best connected first (:func:`slmgraph.query.browse.entities`)."""
        from slmgraph.query import browse

        return browse.entities(self.store, query, limit)

    def entity(self, key: int | str) -> dict:
        """One entity by id or name: type, description, mentions with passages, communities, neighbourhood
        (:func:`slmgraph.query.browse.entity`). Raises UserError for an unknown entity."""
        from slmgraph.query import browse

        return browse.entity(self.store, key)

    def neighbours(self, key: int | str, limit: int = 30) -> dict:
        """``{nodes, edges}``: an entity and its strongest neighbours (:func:`slmgraph.query.browse.neighbours`)."""
        from slmgraph.query import browse

        return browse.neighbours(self.store, key, limit)

    def browse_reports(self, level: int = 0) -> list[dict]:
        """Community reports of ``level`` with coverage (:func:`slmgraph.query.browse.reports`)."""
        from slmgraph.query import browse

        level = self.check_level(level)
        return browse.reports(self.store, level)

    def report(self, community_id: int) -> dict:
        """One community's report and member entities (:func:`slmgraph.query.browse.report`)."""
        from slmgraph.query import browse

        return browse.report(self.store, community_id)

    def report_titles(self, ids) -> dict[int, str]:
        """``{community id: its report's title}`` for the given ids (unknown ones left out)."""
        from slmgraph.query import browse

        return browse.report_titles(self.store, ids)

    def browse_documents(self) -> list[dict]:
        """The indexed documents, path order (:func:`slmgraph.query.browse.documents`)."""
        from slmgraph.query import browse

        return browse.documents(self.store)

    def document(self, doc_id: str) -> dict:
        """One document with its text units (:func:`slmgraph.query.browse.document`)."""
        from slmgraph.query import browse

        return browse.document(self.store, doc_id)

    def text_unit(self, number: int, support: str | None = None) -> dict:
        """Text unit ``number`` (as answers cite it) with its document, title and position, the sentences
        supporting ``support`` located (:func:`slmgraph.query.browse.text_unit`)."""
        from slmgraph.query import browse

        return browse.text_unit(self.store, number, _support(support))

    def unit_documents(self, numbers) -> dict[int, dict]:
        """``{text-unit number: its document's doc_id, title, path and the unit's position}``."""
        from slmgraph.query import browse

        return browse.unit_documents(self.store, numbers)

    def citation(self, kind: str, cid: int, support: str = "") -> dict:
        """What an answer's citation points at and the passage supporting ``support``
        (:func:`slmgraph.query.browse.citation`)."""
        from slmgraph.query import browse

        return browse.citation(self.store, kind, cid, _support(support) or "")


def _support(support) -> str | None:
    """``support`` (the answer's text a passage should support) as given, None or a string.

    Raises:
        UserError: anything else, with the value.
    """
    if support is None or isinstance(support, str):
        return support
    raise UserError(f"support must be text, got {echo_repr(support)}: pass the point's text, or None")


def open(db: str | Path, *, config: str | Path | None = None, model=None, embedder_factory: Callable | None = None,
         read_only: bool = True, wait: float = 0.0, **settings) -> Index:
    """Open an index built by ``slmgraph index`` (or :func:`index`) for queries, stats and export.

    Args:
        config: settings file (default ``./slmgraph.toml`` when present).
        model: a loaded model (tests pass the scripted fake); None = the GGUF that built the index,
            or ``model_path``.
        embedder_factory: ``() -> Embedder`` for local/basic search (tests pass a fake).
        read_only: open the file read-only (the default), so other readers (queries, ``slmgraph serve``) may
            hold it too; the query ledger rows are kept aside and merged by the next writer
            (:class:`slmgraph.store.db.Store`). :meth:`Index.insert` writes with the file closed here.
        wait: seconds to wait while another process writes ``db`` (0: refuse at once).
        settings: :class:`Settings` fields for queries, e.g. ``local_context_tokens=2000``.

    Raises:
        UserError: ``db`` is no path, is missing, not a slmgraph index, incomplete or lacks a table queries read
            (:data:`QUERY_TABLES`); ``wait`` is no number >= 0; bad settings.
        IndexBusy: (a UserError) another process is writing ``db``.
    """
    s, sources = settings_for(config, "slmgraph.open()", **settings)
    return Index(db, s, sources, model=model, embedder_factory=embedder_factory, read_only=read_only, wait=wait)

