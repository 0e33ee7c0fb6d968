"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
NUL-separated JSON on file descriptors 3 and 4), with nothing but the standard library.

Debian's ``chromium`` package; ``.ci/run`` installs it when it is missing. ``find_chromium()``
returns None where no browser can be had (the browser tests then skip, saying why).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe"]
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> Optional[str]:
    explicit = os.environ.get("TTIR_CHROMIUM")
    if explicit:
        return explicit
    return next((p for p in (shutil.which(c) for c in CANDIDATES) if p), None)


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One headless browser with one page; ``open(url, width, height)`` then ``evaluate(js)``.
    ``problems`` collects console errors, uncaught exceptions and error log entries."""

    def __init__(self, binary: str, timeout_s: float = 60.0):
        self.timeout_s = timeout_s
        self.profile = tempfile.mkdtemp(prefix="ttir-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire() -> None:  # in the child: commands on fd 3, replies on fd 4 (the only fds it inherits)
            r, w = os.dup(to_child_r), os.dup(from_child_w)  # out of the way first: either may be 3 or 4
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=wire, close_fds=False)  # Python's own fds are close-on-exec
        os.close(to_child_r)
        os.close(from_child_w)
        self._inbox: "queue.Queue[dict[str, Any]]" = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 0
        self.problems: list[str] = []
        self.session: Optional[str] = None

    # -- protocol ---------------------------------------------------------------------------
    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_child, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                self._inbox.put(json.loads(raw))

    def send(self, method: str, params: Optional[dict[str, Any]] = None, *, page: bool = True) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if page and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            reply = self._next(deadline, method)
            if reply.get("id") == msg["id"]:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._note(reply)

    def wait_for(self, event: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        while True:
            msg = self._next(deadline, event)
            self._note(msg)
            if msg.get("method") == event:
                return msg.get("params", {})

    def _next(self, deadline: float, what: str) -> dict[str, Any]:
        try:
            return self._inbox.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            raise BrowserError(f"no answer to {what} within {self.timeout_s} s") from None

    def _note(self, msg: dict[str, Any]) -> None:
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.problems.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description")))
                                                                           for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.problems.append("uncaught: " + str((d.get("exception") or {}).get("description") or d.get("text")))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            self.problems.append(f"log: {e.get('text')} ({e.get('url', '')})")

    # -- page -------------------------------------------------------------------------------
    def open(self, url: str, width: int = 800, height: int = 900) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, page=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, page=False)["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False})
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JS expression (awaited if it is a promise)."""
        out = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in out:
            raise BrowserError(f"{expression[:60]}…: {out['exceptionDetails'].get('text')}")
        return out.get("result", {}).get("value")

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", page=False)
                except (BrowserError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        finally:
            for fd in (self._to_child, self._from_child):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def file_url(path: Path) -> str:
    return path.resolve().as_uri()
