"""Headless Chromium driven over its DevTools protocol (one websocket, websocket-client), for the browser tests
of ``slmgraph serve`` and the screenshots in docs/.

Chromium is Debian's package (``.ci/run`` installs it); nothing is downloaded. Its own background fetches
resolve no host (``--host-resolver-rules``), and every request a page makes is recorded
(``Network.requestWillBeSent``), so a test can check that none leaves the loopback.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--no-pings", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]


class Browser:
    """One headless Chromium with one page. ``requests``: URLs the page requested; ``errors``: script
    exceptions, console errors and browser log errors (CSP violations among them)."""

    def __init__(self, profile: Path, size: tuple[int, int] = (1280, 900)):
        import websocket

        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0",
                                      f"--window-size={size[0]},{size[1]}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            page = next(t for t in json.load(r) if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=120, suppress_origin=True)
        self._id = 0
        self.requests: list[str] = []
        self.errors: list[str] = []
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable")

    def _event(self, msg: dict) -> None:
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(p["request"]["url"])
        elif method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append("exception: " + (d.get("exception", {}).get("description") or d.get("text", "")))
        elif method == "Runtime.consoleAPICalled" and p.get("type") == "error":
            self.errors.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            self.errors.append(f"log ({p['entry'].get('source')}): {p['entry']['text']}")

    def call(self, method: str, **params) -> dict:
        """Send one command; return its result (events that arrive meanwhile are recorded)."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def evaluate(self, expression: str):
        """The JSON value of a JavaScript expression in the page (a promise is awaited)."""
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails'].get('text')}")
        return r["result"].get("value")

    def go(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def wait_for(self, expression: str, timeout: float = 60.0):
        """Poll ``expression`` until it is truthy; return its value. Raises TimeoutError with the page's errors."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                v = self.evaluate(expression)
            except RuntimeError as exc:  # e.g. the page is still navigating, or the element is not there yet
                v = str(exc)
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{expression} raised {v}; page errors: {self.errors}") from None
                time.sleep(0.1)
                continue
            if v:
                return v
            if time.monotonic() > deadline:
                raise TimeoutError(f"{expression} stayed {v!r}; page errors: {self.errors}")
            time.sleep(0.1)

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
