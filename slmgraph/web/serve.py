"""``slmgraph serve``: a local web app over one index -- ask, follow each citation to its passage, browse the
graph -- with the model, the embedder and spaCy loaded once for the life of the process.

Built on Starlette (ASGI routing, streaming responses) served by uvicorn, both from the ``serve`` extra;
the pages are plain HTML and JavaScript from ``slmgraph/web`` with cytoscape.js vendored beside them, so
the browser fetches nothing but this server (the pages' Content-Security-Policy forbids any other origin).

Binding: the loopback only (``127.0.0.1``, ``::1`` or ``localhost``); any other host is refused, and
requests naming another ``Host`` are refused too (a web page elsewhere cannot reach the server through
DNS rebinding). The index is opened read-only for each request and closed after it, so ``slmgraph index``
can write it between requests; while an index run holds the file, requests answer 503 "index busy".

Every JSON endpoint is a method of :class:`slmgraph.api.Index` (one query path):

========================================  ==========================================================
``GET /api/info``                          path, levels, model, counts
``GET /api/ask?q=&method=&level=``         the answer as Server-Sent Events: ``route``, ``text`` (chunks),
                                           ``answer`` (the :func:`answer_json` dict) or ``failure``
``POST /api/query`` (JSON q/method/level)  the :func:`answer_json` dict
``GET /api/entities?q=&limit=``            :meth:`Index.browse_entities`
``GET /api/entities/{key}``                :meth:`Index.entity` (id or name)
``GET /api/entities/{key}/neighbours``     :meth:`Index.neighbours`
``GET /api/reports?level=``                :meth:`Index.browse_reports`
``GET /api/reports/{id}``                  :meth:`Index.report`
``GET /api/documents``                     :meth:`Index.browse_documents`
``GET /api/documents/{doc_id}``            :meth:`Index.document`
``GET /api/units/{n}?support=``            :meth:`Index.text_unit`
``GET /api/citation?kind=&id=&support=``   :meth:`Index.citation`
========================================  ==========================================================
"""

from __future__ import annotations

import ipaddress
import json
import queue
import socket
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from slmgraph.config.settings import Settings
from slmgraph.errors import IndexBusy, UserError, echo, echo_repr

WEB_DIR = Path(__file__).resolve().parent
LOOPBACK_NAMES = ("localhost",)
#: No origin but this server's: scripts, styles, images and fetches alike. Inline styles are allowed because
#: cytoscape.js sets its canvases' styles inline; inline scripts are not.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def loopback_host(host: str) -> str:
    """``host`` as the address to bind, if it is a loopback address or ``localhost`` (-> ``127.0.0.1``).

    Raises:
        UserError: any other host (one line naming it and the remedy).
    """
    h = host.strip().strip("[]")
    if h.lower() in LOOPBACK_NAMES:
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(h).is_loopback:
            return h
    except ValueError:
        pass
    raise UserError(f"--host {host} is not a loopback address: slmgraph serve binds only 127.0.0.1, ::1 or "
                    "localhost (the index is not for other machines); leave --host out")


def import_web():
    """Starlette and uvicorn, or one line naming the extra that installs them."""
    import importlib.util

    if importlib.util.find_spec("starlette") is None or importlib.util.find_spec("uvicorn") is None:
        raise UserError("slmgraph serve needs the serve extra: pip install 'slmgraph[serve]' "
                        "(Starlette and uvicorn)")


class MemoEmbedder:
    """An embedder that encodes each distinct text once for the life of the server (the off-topic probe
    questions every query scores, a question asked again); vectors are the wrapped embedder's own.

    Args:
        embedder: has ``encode(list[str]) -> (n, dim)`` float32 array.
        size: texts kept (least recently used dropped first).
    """

    def __init__(self, embedder, size: int = 4096):
        from collections import OrderedDict

        self.inner = embedder
        self.size = size
        self._memo: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def encode(self, texts: list[str], progress: bool = False):
        import numpy as np

        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
            if todo:
                for t, v in zip(todo, self.inner.encode(todo)):
                    self._memo[t] = np.asarray(v, dtype=np.float32)
            for t in texts:
                self._memo.move_to_end(t)
            out = np.stack([self._memo[t] for t in texts]) if texts else np.zeros((0, self.inner.dim), np.float32)
            while len(self._memo) > self.size:
                self._memo.popitem(last=False)
        return out


class MemoTokens:
    """A model whose ``tokenize`` remembers the ids of texts it has tokenized (the report batches global
    search packs are the same for every question at a level); everything else is the wrapped model's.

    Args:
        model: a loaded model (:class:`slmgraph.model.backend.LlamaModel` or a test fake).
        size: texts kept (least recently used dropped first).
    """

    def __init__(self, model, size: int = 8192):
        from collections import OrderedDict

        self.inner = model
        self.size = size
        self._memo: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def tokenize(self, text: str) -> list[int]:
        with self._lock:
            ids = self._memo.get(text)
            if ids is None:
                ids = self._memo[text] = tuple(self.inner.tokenize(text))
                if len(self._memo) > self.size:
                    self._memo.popitem(last=False)
            else:
                self._memo.move_to_end(text)
        return list(ids)


class Resources:
    """What the server loads once: the model, the embedder, the NER pipeline (spaCy), and the settings.

    Args:
        db: the index file.
        settings: query settings.
        model: a loaded model (tests pass the scripted fake); None = the GGUF that built the index.
        embedder_factory: ``() -> Embedder``; None = the bundled one. Called once.
        on_loading: called with one line once the index is checked, before the slow loading starts.
    """

    def __init__(self, db: str | Path, settings: Settings, model=None, embedder_factory: Callable | None = None,
                 on_loading: Callable[[str], None] | None = None):
        self.db = Path(db)
        self.settings = settings
        self.lock = threading.Lock()  #: one query at a time: llama.cpp and the embedder are not thread-safe
        model_path, self.model_name, self.note = settings.model_path, None, ""
        try:
            with self.index() as idx:  # checks the index before anything slow is loaded
                model_path = settings.model_path or idx.store.get_meta("model_path") or None
                self.model_name = idx.store.get_meta("model_name")
        except UserError as exc:
            if not busy(exc):
                raise
            # An index run holds the file or has not finished it: serve anyway; pages say "index busy" until then.
            self.note = (f"index busy now ({getattr(exc, 'what', exc)}); the pages will read it when the run has "
                         "finished")
        if on_loading is not None:  # loading can take most of a minute: say so at once, not only when done
            on_loading(f"slmgraph serve: loading the model, the embedder and spaCy for index {db}; the address "
                       "follows when they are ready")
        if model is None:
            from slmgraph.model.backend import load_model

            if model_path and not Path(model_path).is_file() and not settings.model_path:
                raise UserError(f"model {model_path} that built index {db} is missing: pass --model PATH.gguf")
            model = load_model(model_path, settings.n_ctx, settings.n_threads, settings.seed,
                               settings.threads_explicit)
        self.model = MemoTokens(model)
        if embedder_factory is None:
            from slmgraph.query.question_embed import question_embedder

            embedder = question_embedder(batch_size=settings.embed_batch_size, threads=settings.n_threads)
        else:
            embedder = embedder_factory()
        self.embedder = MemoEmbedder(embedder)
        if settings.helpfulness_probes:  # every query scores them: embedded now, not at the first question
            from slmgraph.config.prompting import Prompts
            from slmgraph.query.scoring import probe_questions

            self.embedder.encode(probe_questions(Prompts(settings.prompts_dir)))
        from slmgraph.indexing.stages.ner import pipeline_for

        try:
            pipeline_for(getattr(settings, "ner_model", "auto"))  # cached per process: the named-entity gate's
        except UserError:
            pass  # the gate falls back to capitalised runs, as in `slmgraph query`

    @contextmanager
    def index(self):
        """The index, opened read-only for one request (so `slmgraph index` may write between requests)."""
        from slmgraph.api import Index

        idx = Index(self.db, self.settings, {}, model=getattr(self, "model", None),
                    embedder_factory=lambda: self.embedder, read_only=True)
        try:
            yield idx
        finally:
            idx.close()


def busy(exc: UserError) -> bool:
    """True when ``exc`` says another process is writing the index or has not finished building it."""
    return isinstance(exc, IndexBusy) or "is not complete" in str(exc)


def answer_json(idx, ans) -> dict:
    """An answer for the page and for scripts: :meth:`Answer.to_dict` plus ``points`` (``[{head, text,
    citations: {kind: [ids]}}]``, :func:`slmgraph.query.browse.answer_points`), ``units`` (each cited text
    unit's document and position, :meth:`Index.unit_documents`), ``report_titles`` (``{id: title}`` of the cited
    reports) and each report read in ``context`` with its ``title``."""
    from slmgraph.query.browse import answer_points

    out = ans.to_dict()
    out["points"] = answer_points(ans)
    units = set(ans.citations.get("sources", []))
    for p in out["points"]:
        units.update(p["citations"].get("sources", []))
    out["units"] = {str(k): v for k, v in idx.unit_documents(sorted(units)).items()}
    reports = set(ans.citations.get("reports", []))
    for p in out["points"]:
        reports.update(p["citations"].get("reports", []))
    out["report_titles"] = {str(k): v for k, v in idx.report_titles(sorted(reports)).items()}
    read = [c["id"] for c in out["context"] if isinstance(c, dict) and c.get("kind") == "report"]
    titles = idx.report_titles(read)
    for c in out["context"]:
        if isinstance(c, dict) and c.get("kind") == "report" and c.get("id") in titles:
            c.setdefault("title", titles[c["id"]])
    return out


def unexpected(path: str, exc: Exception) -> str:
    """The one line a JSON client gets for an exception that is no user error (a bug): the route, the
    exception's type and message (whitespace folded, at most 200 characters) and where the traceback is."""
    detail = " ".join(str(exc).split())[:200]
    return (f"{path} failed on an unexpected {type(exc).__name__}" + (f" ({detail})" if detail else "")
            + ": a fault in slmgraph, not in the request; the server's stderr has the traceback and the server "
            "goes on serving")


def _level(value) -> int | None:
    if isinstance(value, str) and value in ("", "auto") or value is None:
        return None
    from slmgraph.api import as_level

    try:
        return as_level(value)
    except UserError:
        raise UserError(f"level {echo_repr(value)} is not a whole number: pass 0 for the root level, or auto") from None


def make_app(res: Resources):
    """The Starlette application over ``res`` (see the module doc for its routes)."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, StreamingResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    def fail(exc: Exception) -> JSONResponse:
        msg = str(exc)
        if busy(exc):
            # the command line's remedy ("pass --wait SECONDS") means nothing to an HTTP client
            what = getattr(exc, "what", msg)
            return JSONResponse({"error": f"index busy: {what}; retry when the index run has finished", "busy": True},
                                status_code=503)
        return JSONResponse({"error": msg}, status_code=404 if "is not in this index" in msg or " is not in index " in msg else 400)

    def server_error(request, exc: Exception):
        """Starlette's handler of any exception a route lets through (its server-error middleware sends this
        response, then raises the exception again for uvicorn to log with its traceback on stderr): the /api
        routes answer one JSON line, as their user errors do; the page and static files, Starlette's text."""
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": unexpected(request.url.path, exc)}, status_code=500)
        return PlainTextResponse("Internal Server Error", status_code=500)

    def endpoint(fn):
        """A JSON endpoint: ``fn(request, idx) -> JSON-able``; user errors become ``{"error": ...}``."""
        def handler(request):
            try:
                with res.index() as idx:
                    return JSONResponse(fn(request, idx))
            except UserError as exc:
                return fail(exc)
        return handler

    def page(request):
        resp = FileResponse(WEB_DIR / "app.html", media_type="text/html")
        resp.headers["Content-Security-Policy"] = CSP
        return resp

    def info(request, idx):
        from slmgraph.tools.stats import finished_counts

        counts = {t: idx.store.count(t) for t in ("entities", "relationships", "communities", "community_reports")}
        counts["documents"], counts["text_units"] = finished_counts(idx.store)  # an edited file once, as stats
        return {"db": str(res.db), "levels": idx.levels(), "model": res.model_name, "counts": counts,
                "reports": idx.store.get_meta("reports") != "skipped",
                "methods": ["auto", "global", "local", "basic", "drift", "lazy", "ts"]}

    def run_query(idx, q: str, method: str, level, on_text=None, on_route=None) -> dict:
        with res.lock:  # one model, one question at a time
            ans = idx.query(q, method=method, level=level, on_text=on_text, on_route=on_route)
        return answer_json(idx, ans)

    def ask(request):
        q = request.query_params.get("q", "")
        method = request.query_params.get("method", "auto") or "auto"
        events: queue.Queue = queue.Queue()

        def work():
            try:
                level = _level(request.query_params.get("level"))
                with res.index() as idx:
                    out = run_query(idx, q, method, level,
                                    on_text=lambda t: events.put(("text", t)),
                                    on_route=lambda m, why: events.put(("route", {"method": m, "because": why})))
                events.put(("answer", out))
            except UserError as exc:
                body = json.loads(fail(exc).body)
                events.put(("error", body))
            except Exception as exc:  # the page shows one line; the server log keeps the traceback
                import logging

                logging.getLogger("slmgraph.web.serve").exception("query failed")
                events.put(("error", {"error": unexpected(request.url.path, exc)}))
            events.put(None)

        threading.Thread(target=work, daemon=True).start()

        def stream():
            while True:
                item = events.get()
                if item is None:
                    return
                kind, data = item
                yield f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def query(request):
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON: send {\"q\": \"...\", \"method\": \"auto\"}"},
                                status_code=400)
        if not isinstance(body, dict) or "q" not in body:  # e.g. {"question": ...}: say which key is read
            return JSONResponse({"error": "the body has no \"q\": send {\"q\": \"...\", \"method\": \"auto\"}"},
                                status_code=400)
        from starlette.concurrency import run_in_threadpool

        def work():
            with res.index() as idx:
                return run_query(idx, str(body.get("q", "")), str(body.get("method", "auto")),
                                 _level(body.get("level")))
        try:
            return JSONResponse(await run_in_threadpool(work))
        except UserError as exc:
            return fail(exc)

    def int_param(request, name: str, default: int) -> int | str:
        """The query parameter as given (the look-up checks its range and says which), else ``default``."""
        v = request.query_params.get(name)
        return default if v in (None, "") else v

    routes = [
        Route("/", page),
        Route("/api/info", endpoint(info)),
        Route("/api/ask", ask),
        Route("/api/query", query, methods=["POST"]),
        Route("/api/entities", endpoint(lambda r, i: i.browse_entities(r.query_params.get("q", ""),
                                                                          int_param(r, "limit", 50)))),
        Route("/api/entities/{key}", endpoint(lambda r, i: i.entity(r.path_params["key"]))),
        Route("/api/entities/{key}/neighbours",
              endpoint(lambda r, i: i.neighbours(r.path_params["key"], int_param(r, "limit", 30)))),
        Route("/api/reports", endpoint(lambda r, i: i.browse_reports(int_param(r, "level", 0)))),
        Route("/api/reports/{cid:int}", endpoint(lambda r, i: i.report(r.path_params["cid"]))),
        Route("/api/documents", endpoint(lambda r, i: i.browse_documents())),
        Route("/api/documents/{doc_id}", endpoint(lambda r, i: i.document(r.path_params["doc_id"]))),
        Route("/api/units/{n:int}", endpoint(lambda r, i: i.text_unit(r.path_params["n"],
                                                                       r.query_params.get("support") or None))),
        Route("/api/citation", endpoint(lambda r, i: i.citation(r.query_params.get("kind", ""),
                                                                int_param(r, "id", -1),
                                                                r.query_params.get("support", "")))),
        # any other /api/ path (a report id that is no number, a typo) answers in JSON like the routes above
        Route("/api/{rest:path}", lambda r: JSONResponse(
            {"error": f"no such API path: {echo(r.url.path)} (report and text unit ids are whole numbers; the routes "
                      "are listed in docs/usage.md)"}, status_code=404)),
        Mount("/static", StaticFiles(directory=WEB_DIR)),
    ]
    hosts = ["127.0.0.1", "localhost", "[::1]", "::1"]
    return Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts),
                                                Middleware(_SafeHeaders)],
                     exception_handlers={Exception: server_error})


class _SafeHeaders:
    """ASGI middleware: every response forbids other origins (CSP), MIME sniffing and referrers."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        from starlette.datastructures import MutableHeaders

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", CSP)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", "no-referrer")
            await send(message)

        await self.app(scope, receive, send_with_headers)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on the loopback ``host`` and ``port`` (0 = any free port).

    Raises:
        UserError: ``host`` is not a loopback address, or the port is taken or not allowed.
    """
    addr = loopback_host(host)
    if not 0 <= port <= 65535:
        raise UserError(f"--port {port} must be between 1 and 65535 (0 = any free port)")
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((addr, port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {addr} port {port} ({exc.strerror}): pass another --port") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _stderr(msg: str) -> None:
    """Print ``msg`` as a line on stderr at once."""
    print(msg, file=sys.stderr, flush=True)


def serve(db: str | Path, settings: Settings, host: str = "127.0.0.1", port: int = 8765, model=None,
          embedder_factory: Callable | None = None, say: Callable[[str], None] = print,
          note: Callable[[str], None] = _stderr) -> None:
    """Run the web app on ``host:port`` (the loopback only) until interrupted. ``say`` gets the address once
    everything is loaded; ``note`` (default: a line on stderr) gets one line before the loading starts.

    Raises:
        UserError: a non-loopback host, a port in use, a missing extra, or a bad index.
    """
    import_web()
    loopback_host(host)
    t0 = time.perf_counter()
    res = Resources(db, settings, model=model, embedder_factory=embedder_factory, on_loading=note)
    sock = bind(host, port)
    import uvicorn

    addr, real_port = sock.getsockname()[:2]
    shown = f"[{addr}]" if ":" in addr else addr
    say(f"slmgraph serve: http://{shown}:{real_port}/ (index {db}; loaded in {time.perf_counter() - t0:.1f} s; "
        "Ctrl-C stops)")
    if res.note:
        say(f"slmgraph serve: {res.note}")
    config = uvicorn.Config(make_app(res), log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
