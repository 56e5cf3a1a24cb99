"""slmgraph serve: the JSON endpoints, the loopback-only binding, "index busy" while another process writes,
and the pages in headless Chromium (ask, open a citation's passage, open an entity and see its
neighbourhood drawn, no request off the loopback)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.cli.main import main
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.indexing.pipeline import run_index

pytest.importorskip("starlette", reason="the [serve] extra (starlette, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the [serve] extra (starlette, uvicorn) is not installed")

from slmgraph.web.serve import Resources, bind, loopback_host, make_app

QUESTION = "What are the main themes of Acme Corporation and Carol White?"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    corpus = root / "corpus"
    corpus.mkdir()
    (corpus / "alpha.txt").write_text(
        "Alice Smith founded Acme Corporation in Paris. Bob Jones joined Acme Corporation later.\n\n"
        "Alice Smith and Bob Jones built rockets at Acme Corporation. Paris was their home.\n", encoding="utf-8")
    (corpus / "béta notes.md").write_text(
        "# Notes\n\nCarol White met Dan Brown in Berlin. Carol White studied physics with Dan Brown.\n"
        "Berlin Institute hired Carol White. Dan Brown visited Berlin Institute often.\n", encoding="utf-8")
    (corpus / "gamma.txt").write_text(
        "Eve Black wrote about Acme Corporation. Eve Black interviewed Alice Smith in Paris.\n", encoding="utf-8")
    db = root / "i.duckdb"
    run_index(corpus, db, Settings(min_community_size=2, max_gleanings=0), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    return db


@pytest.fixture(scope="module")
def server(db):
    """``http://127.0.0.1:PORT`` of a running server over ``db`` (the fake model and embedder), and its socket."""
    import uvicorn

    res = Resources(db, Settings(), model=FakeModel(), embedder_factory=FakeEmbedder)
    sock = bind("127.0.0.1", 0)
    srv = uvicorn.Server(uvicorn.Config(make_app(res), log_level="warning", lifespan="off"))
    t = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline and t.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", sock
    srv.should_exit = True
    t.join(timeout=30)
    sock.close()


def get(url: str, headers: dict | None = None) -> tuple[int, dict | str]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            body, status, kind = r.read().decode(), r.status, r.headers.get("content-type", "")
    except urllib.error.HTTPError as e:
        body, status, kind = e.read().decode(), e.code, e.headers.get("content-type", "")
    return status, json.loads(body) if kind.startswith("application/json") else body


def post(url: str, data: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(data).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_other_hosts_are_refused_with_one_line(db, capsys):
    for host in ("0.0.0.0", "192.168.1.5", "example.org", "::"):
        assert main(["serve", "--db", str(db), "--host", host, "--port", "0"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("slmgraph: error: --host ") and "loopback" in err and "\n" not in err
    assert loopback_host("localhost") == "127.0.0.1" and loopback_host("::1") == "::1"
    with pytest.raises(UserError, match="not a loopback"):
        bind("10.0.0.1", 0)


def test_a_taken_port_is_one_line(db, server, capsys):
    port = server[1].getsockname()[1]
    assert main(["serve", "--db", str(db), "--port", str(port)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("slmgraph: error: cannot listen on 127.0.0.1 port") and "--port" in err


def _other_addresses() -> list[str]:
    """The machine's non-loopback IPv4 addresses (from the routing table's source address and the host name)."""
    found = set()
    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.connect(("192.0.2.1", 9))  # UDP connect sends nothing; it picks the outgoing interface's address
        found.add(probe.getsockname()[0])
        probe.close()
    except OSError:
        pass
    try:
        found.update(socket.gethostbyname_ex(socket.gethostname())[2])
    except OSError:
        pass
    return sorted(a for a in found if not a.startswith("127.") and a != "0.0.0.0")


def test_the_server_listens_on_the_loopback_only(server):
    url, sock = server
    assert sock.getsockname()[0] == "127.0.0.1"
    port = sock.getsockname()[1]
    for addr in _other_addresses():
        with pytest.raises(OSError):
            socket.create_connection((addr, port), timeout=3).close()
    # A page elsewhere that rebinds its name to 127.0.0.1 still sends its own Host: refused.
    status, _ = get(url + "/api/info", headers={"Host": f"evil.example:{port}"})
    assert status == 400
    status, info = get(url + "/api/info")
    assert status == 200 and info["levels"] and info["counts"]["entities"] > 0


def test_the_page_forbids_other_origins(server):
    url, _ = server
    with urllib.request.urlopen(url + "/", timeout=30) as r:
        csp = r.headers["Content-Security-Policy"]
        page = r.read().decode()
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp and "script-src 'self'" in csp
    assert "http://" not in page and "https://" not in page  # everything from this server
    with urllib.request.urlopen(url + "/static/vendor/cytoscape.min.js", timeout=30) as r:
        assert r.status == 200 and b"cytoscape" in r.read(4000).lower()


def test_browse_endpoints_mirror_the_api(server, db):
    import slmgraph

    url, _ = server
    status, ents = get(url + "/api/entities?q=acme")
    assert status == 200 and ents and all("acme" in e["name"].lower() for e in ents)
    acme = ents[0]
    status, ent = get(f"{url}/api/entities/{acme['id']}")
    assert status == 200 and ent["name"] == acme["name"] and ent["passages"]
    p = ent["passages"][0]
    assert p["document"]["title"] and 1 <= p["position"] <= p["of"] and p["highlight"]
    assert all(p["text"][a:b].lower() == acme["name"].lower() for a, b in p["highlight"])
    nodes = ent["neighbourhood"]["nodes"]
    assert nodes[0]["id"] == acme["id"] and nodes[0]["center"] and len(nodes) > 1
    assert ent["neighbourhood"]["edges"] and ent["communities"]
    status, by_name = get(f"{url}/api/entities/{urllib.parse.quote(acme['name'])}")
    assert status == 200 and by_name["id"] == acme["id"]
    status, reps = get(url + "/api/reports?level=0")
    assert status == 200 and reps and all(r["level"] == 0 for r in reps)
    assert reps[0]["title"] and reps[0]["coverage"]["text_units"] >= 1 and reps[0]["coverage"]["documents"] >= 1
    status, docs = get(url + "/api/documents")
    assert status == 200 and len(docs) == 3 and all(d["title"] and d["units"] >= 1 for d in docs)
    status, doc = get(f"{url}/api/documents/{docs[0]['doc_id']}")
    assert status == 200 and doc["units"] and doc["units"][0]["unit"] >= 1
    n = doc["units"][0]["unit"]
    status, unit = get(f"{url}/api/units/{n}?support=" + urllib.parse.quote(doc["units"][0]["text"][:80]))
    assert status == 200 and unit["document"]["doc_id"] == docs[0]["doc_id"] and unit["highlight"]
    with slmgraph.open(db, model=FakeModel(), embedder_factory=FakeEmbedder, read_only=True) as ix:
        assert ix.entity(acme["id"])["neighbourhood"] == ent["neighbourhood"]
        assert ix.text_unit(n)["text"] == unit["text"]
    assert get(url + "/api/entities/no-such-thing-here")[0] == 404
    assert get(url + "/api/units/99999")[0] == 404
    assert get(url + "/api/reports?level=abc")[0] == 400
    for path in ("/api/reports/abc", "/api/no-such-route"):
        status, body = get(url + path)
        assert status == 404 and isinstance(body, dict) and "no such API path" in body["error"], (path, body)


def test_query_answers_with_points_that_cite_documents(server):
    url, _ = server
    status, a = post(url + "/api/query", {"q": "Who founded Acme Corporation?", "method": "basic"})
    assert status == 200 and a["method"] == "basic" and a["points"]
    cited = [i for p in a["points"] for i in p["citations"].get("sources", [])]
    assert cited and all(str(i) in a["units"] and a["units"][str(i)]["title"] for i in cited)
    status, c = get(f"{url}/api/citation?kind=sources&id={cited[0]}&support="
                    + urllib.parse.quote(a["points"][0]["text"]))
    assert status == 200 and c["passage"]["unit"] == cited[0] and c["passage"]["highlight"]
    status, a = post(url + "/api/query", {"q": QUESTION, "method": "global", "level": 0})
    assert status == 200 and a["points"] and a["report_titles"]
    assert a["context"] and all(c["title"] for c in a["context"] if c["kind"] == "report")
    assert a["details"]["scores"]  # the helpfulness of each report read, for "Why this answer"
    rid = next(i for p in a["points"] for i in p["citations"].get("reports", []))
    status, c = get(f"{url}/api/citation?kind=reports&id={rid}&support=" + urllib.parse.quote(a["points"][0]["text"]))
    assert status == 200 and c["report"]["community_id"] == rid
    assert post(url + "/api/query", {"q": "  "})[0] == 400
    status, err = post(url + "/api/query", {"question": "Who founded Acme Corporation?"})
    assert status == 400 and '"q"' in err["error"], err


def test_the_answer_streams_as_server_sent_events(server):
    url, _ = server
    q = urllib.parse.urlencode({"q": QUESTION, "method": "auto"})
    with urllib.request.urlopen(f"{url}/api/ask?{q}", timeout=120) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        body = r.read().decode()
    kinds = [line.split(": ", 1)[1] for line in body.splitlines() if line.startswith("event: ")]
    assert kinds[0] == "route" and kinds[-1] == "answer"
    final = json.loads(body.rsplit("data: ", 1)[1])
    assert final["details"]["route"]["chose"] in ("global", "local") and final["points"]


def _holder(db):
    """A separate process that holds ``db`` open for writing, as `slmgraph index` does, until its stdin closes."""
    code = ("import sys, duckdb; c = duckdb.connect(sys.argv[1]); print('held', flush=True); sys.stdin.read()")
    p = subprocess.Popen([sys.executable, "-c", code, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_index_busy_while_another_process_writes_and_the_writer_is_never_blocked(server, db):
    url, _ = server
    assert get(url + "/api/info")[0] == 200  # the server has read the file ...
    p = _holder(db)  # ... and holds nothing between requests, so a writer gets the file
    try:
        status, body = get(url + "/api/entities?q=a")
        assert status == 503 and body["busy"] and body["error"].startswith("index busy: ")
        assert "--wait" not in body["error"] and "retry when" in body["error"]
        status, body = post(url + "/api/query", {"q": "Who founded Acme Corporation?", "method": "basic"})
        assert status == 503 and body["busy"]
        # A server started while the run holds the file starts all the same, and says so.
        late = Resources(db, Settings(), model=FakeModel(), embedder_factory=FakeEmbedder)
        assert late.note.startswith("index busy now")
    finally:
        p.stdin.close()
        p.wait(timeout=30)
    assert get(url + "/api/entities?q=a")[0] == 200


# --- in a real browser ------------------------------------------------------------------------------------

def _browser(tmp_path):
    from cdp import CHROMIUM, Browser

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run does)")
    pytest.importorskip("websocket", reason="websocket-client (the test extra) is not installed")
    return Browser(tmp_path / "profile")


def test_ask_open_a_citation_and_an_entity_in_headless_chromium(server, tmp_path):
    url, _ = server
    b = _browser(tmp_path)
    try:
        b.go(url + "/#/ask")
        b.wait_for("document.body.dataset.ready === '1'")
        b.evaluate(f"document.getElementById('question').value = {json.dumps(QUESTION)}; "
                   "document.getElementById('method').value = 'global'; "
                   "document.getElementById('ask-button').click(); true")
        assert b.wait_for("document.getElementById('points').dataset.done") == "1"
        assert b.evaluate("document.querySelectorAll('#points li.point').length") >= 1
        assert b.evaluate("document.querySelectorAll('#points .cite').length") >= 1
        assert "model calls" in b.evaluate("document.getElementById('why-body').textContent")
        # A text-unit citation (basic search) opens the passage with its document and the supporting sentence marked.
        b.evaluate("document.getElementById('method').value = 'basic'; "
                   "document.getElementById('question').value = 'Who founded Acme Corporation?'; "
                   "document.getElementById('ask-button').click(); true")
        assert b.wait_for("document.getElementById('points').dataset.done") == "1"
        b.evaluate("document.querySelector('#points .cite[data-kind=sources]').click(); true")
        loaded = b.wait_for("document.getElementById('passage').dataset.loaded")
        assert loaded.startswith("sources:")
        passage = b.evaluate("document.getElementById('passage').textContent")
        assert "text unit " + loaded.split(":")[1] in passage and "part " in passage
        assert b.evaluate("document.querySelectorAll('#passage mark').length") >= 1
        # An entity page draws the neighbourhood (cytoscape's canvases, one node per neighbour).
        ent = json.loads(urllib.request.urlopen(url + "/api/entities?q=acme", timeout=30).read())[0]
        b.evaluate(f"location.hash = '#/entity/{ent['id']}'; true")
        nodes = int(b.wait_for("document.getElementById('graph').dataset.nodes"))
        assert nodes == len(json.loads(urllib.request.urlopen(f"{url}/api/entities/{ent['id']}/neighbours",
                                                              timeout=30).read())["nodes"]) and nodes > 1
        assert b.evaluate("document.querySelectorAll('#graph canvas').length") >= 1
        assert b.evaluate("document.getElementById('entity-name').textContent") == ent["name"]
        assert b.evaluate("document.querySelectorAll('#entity-mentions mark').length") >= 1
        b.evaluate("location.hash = '#/communities/0'; true")
        assert b.wait_for("document.querySelectorAll('#community-list .card').length") >= 1
        b.evaluate("location.hash = '#/documents'; true")
        assert b.wait_for("document.querySelectorAll('#document-list li').length") == 3
        assert b.errors == []
        origin = url + "/"
        assert b.requests and [u for u in b.requests if not u.startswith((origin, "data:", "blob:"))] == []
    finally:
        b.close()


def test_a_repeated_question_embeds_and_tokenizes_nothing_again(db):
    from slmgraph.api import answer

    class CountingEmbedder(FakeEmbedder):
        texts: list = []

        def encode(self, texts, progress=False):
            CountingEmbedder.texts.extend(texts)
            return super().encode(texts, progress)

    class CountingModel(FakeModel):
        tokenized: list = []

        def tokenize(self, text):
            CountingModel.tokenized.append(text)
            return super().tokenize(text)

    res = Resources(db, Settings(), model=CountingModel(), embedder_factory=CountingEmbedder)
    assert CountingEmbedder.texts  # the off-topic probes, embedded at start-up

    def ask():
        with res.index() as idx:
            client, prompts = idx._client_for_query()
            return answer(idx.store, client, prompts, idx.settings, QUESTION, method="global", level=0,
                          embedder_factory=lambda: res.embedder)

    first = ask()
    seen, tokenized = len(CountingEmbedder.texts), len(CountingModel.tokenized)
    assert QUESTION in CountingEmbedder.texts
    again = ask()
    assert again.text == first.text and again.citations == first.citations
    assert len(CountingEmbedder.texts) == seen
    # Only the model's own rendered prompts (the question in an empty template) are tokenized again, no report text.
    assert all(t.startswith(("<system>", "<user>")) for t in CountingModel.tokenized[tokenized:]), CountingModel.tokenized[tokenized:]


@pytest.mark.parametrize("path, name", [
    ("/api/entities?q=a&limit=-3", "limit"),
    ("/api/entities?q=a&limit=99999999999999999999", "limit"),
    ("/api/entities?q=a&limit=2.5", "limit"),
    ("/api/entities/Acme%20Corporation/neighbours?limit=-1", "limit"),
    ("/api/entities/Acme%20Corporation/neighbours?limit=99999999999999999999", "limit"),
    ("/api/entities/-5", None),
    ("/api/reports/99999999999999999999", "community id"),
    ("/api/units/99999999999999999999", "text unit"),
    ("/api/citation?kind=sources&id=-1", "id"),
    ("/api/citation?kind=reports&id=99999999999999999999", "id"),
    ("/api/citation?kind=entities&id=abc", "id"),
    ("/api/reports?level=99999999999999999999", "level"),
    ("/api/reports?level=-1", "level"),
    ("/api/ask?q=x&level=1.5", None),
])
def test_bad_numbers_are_a_400_naming_the_parameter_and_its_range(server, path, name):
    url, _ = server
    if path.startswith("/api/ask"):
        with urllib.request.urlopen(url + path, timeout=60) as r:
            body = r.read().decode()
        assert "event: error" in body and "level" in body and "Traceback" not in body, body
        return
    status, err = get(url + path)
    assert status in (400, 404), (path, status, err)
    assert isinstance(err, dict) and "\n" not in err["error"], err
    if name:
        assert err["error"].startswith(name), err
    if name in ("limit", "community id", "text unit", "id"):
        assert "from 0 to" in err["error"], err


def test_bad_numbers_through_the_api_are_user_errors(db):
    import slmgraph
    from slmgraph.query.browse import MAX_LIMIT

    with slmgraph.open(db, model=FakeModel(), embedder_factory=FakeEmbedder, read_only=True) as ix:
        for call in (lambda: ix.browse_entities("a", -3), lambda: ix.browse_entities("a", 10**20),
                     lambda: ix.browse_entities("a", 1.5), lambda: ix.browse_entities("a", True),
                     lambda: ix.neighbours("Acme Corporation", -1), lambda: ix.report(10**20),
                     lambda: ix.text_unit(10**20), lambda: ix.citation("entities", 10**20),
                     lambda: ix.report_titles([10**20])):
            with pytest.raises(UserError, match=r"must be a whole number from 0 to \d+"):
                call()
        with pytest.raises(UserError, match="is not in this index"):
            ix.entity(str(10**20))
        assert len(ix.browse_entities("", MAX_LIMIT)) <= MAX_LIMIT
        assert ix.browse_entities("acme", "2") and ix.browse_entities("acme", 0) == []


def test_a_text_unit_an_update_removed_is_a_404_saying_so(tmp_path):
    from starlette.testclient import TestClient

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("Alice Smith founded Acme Corporation in Paris.\n", encoding="utf-8")
    (corpus / "b.txt").write_text("Carol White met Dan Brown in Berlin.\n", encoding="utf-8")
    (corpus / "c.txt").write_text("Eve Black wrote about Acme Corporation.\n", encoding="utf-8")
    db = tmp_path / "u.duckdb"

    def index():
        run_index(corpus, db, Settings(min_community_size=2, max_gleanings=0), progress=False, model=FakeModel(),
                  embedder_factory=FakeEmbedder, say=lambda m: None)

    index()
    (corpus / "b.txt").write_text("Carol White met Dan Brown in Munich.\n", encoding="utf-8")
    index()  # b.txt's text unit 2 is replaced by unit 4
    client = TestClient(make_app(Resources(db, Settings(), model=FakeModel(), embedder_factory=FakeEmbedder)),
                        base_url="http://127.0.0.1")
    assert [client.get(f"/api/units/{n}").status_code for n in (1, 3, 4)] == [200, 200, 200]
    removed, never = client.get("/api/units/2"), client.get("/api/units/99")
    assert removed.status_code == never.status_code == 404
    held = "the index holds text units 1..4, with gaps where updates removed some"
    assert removed.json() == {"error": "text unit 2 is not in this index: an update removed it (its document was "
                                       f"edited or deleted); {held}"}
    assert never.json() == {"error": f"text unit 99 is not in this index: {held}"}


def test_serve_says_at_once_what_it_loads_and_that_the_address_follows(db, capsys):
    from slmgraph.web.serve import serve

    seen = []

    def embedder():  # called while loading: what was printed by then
        seen.append(capsys.readouterr())
        raise UserError("stopped while loading")

    with pytest.raises(UserError, match="stopped while loading"):
        serve(db, Settings(), port=0, model=FakeModel(), embedder_factory=embedder)
    assert seen[0].out == ""  # the address comes once everything is loaded
    assert seen[0].err == (f"slmgraph serve: loading the model, the embedder and spaCy for index {db}; the address "
                           "follows when they are ready\n")


@pytest.mark.parametrize("method, path, patched", [
    ("POST", "/api/query", "query"),
    ("GET", "/api/entities/Acme%20Corporation", "entity"),
    ("GET", "/api/documents", "browse_documents"),
])
def test_an_unexpected_error_in_any_api_route_is_one_json_line_and_the_server_goes_on(db, monkeypatch, method,
                                                                                       path, patched):
    from starlette.testclient import TestClient

    from slmgraph.api import Index

    def broken(self, *args, **kwargs):
        raise IndexError("list index out of range")

    res = Resources(db, Settings(), model=FakeModel(), embedder_factory=FakeEmbedder)
    client = TestClient(make_app(res), base_url="http://127.0.0.1", raise_server_exceptions=False)
    monkeypatch.setattr(Index, patched, broken)
    resp = client.request(method, path, json={"q": QUESTION, "method": "global"} if method == "POST" else None)
    assert resp.status_code == 500 and resp.headers["content-type"].startswith("application/json")
    err = resp.json()["error"]
    assert "\n" not in err and "IndexError" in err and path.split("%")[0] in err and "Traceback" not in err, err
    monkeypatch.undo()  # the same server answers the next request
    assert client.get("/api/info").status_code == 200
    assert client.get("/api/entities/Acme%20Corporation").json()["name"] == "Acme Corporation"
    # The known errors keep their own status and message.
    missing = client.get("/api/entities/nobody-at-all")
    assert missing.status_code == 404
    assert missing.json() == {"error": "entity 'nobody-at-all' is not in this index: search for it by part of its name"}


def test_an_unexpected_error_while_asking_is_the_same_json_line(db, monkeypatch):
    from starlette.testclient import TestClient

    from slmgraph.api import Index

    def broken(self, *args, **kwargs):
        raise KeyError("level")

    res = Resources(db, Settings(), model=FakeModel(), embedder_factory=FakeEmbedder)
    client = TestClient(make_app(res), base_url="http://127.0.0.1")
    monkeypatch.setattr(Index, "query", broken)
    body = client.get("/api/ask", params={"q": QUESTION}).text
    events = [chunk.split("\n") for chunk in body.strip().split("\n\n")]
    assert [e[0] for e in events] == ["event: error"], body
    err = json.loads(events[0][1][len("data: "):])["error"]
    assert "\n" not in err and "KeyError" in err and "/api/ask" in err, err
