"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for tests and offline demos.

Stdlib only (``http.server`` in a background thread, ephemeral port). It serves
``POST /v1/chat/completions`` from a queue of scripted :class:`Reply` objects
(or a ``responder`` callable once the queue is empty) and ``GET /v1/models``,
and records every request it receives (:class:`RecordedRequest`) so tests can
assert what the real ``openai`` client sent over real HTTP.

    with VLMTestServer() as server:
        server.enqueue(Reply.error(500), Reply.json({"ok": True}))
        client = VLMClient(server.config(max_retries=2))
        ...
        server.requests[-1].images   # the data URLs the client sent
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Optional, Union

from loguru import logger

from ttir.core.validation import read_text_file

Responder = Callable[["RecordedRequest"], "Reply"]
MAX_REPLY_FILE_BYTES = 1 << 20  # main's --reply: a model's reply is a few KB


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``content`` is the assistant text (None = no content);
    ``status`` != 200 sends an OpenAI-style error body; ``delay_s`` sleeps first."""

    content: Optional[str] = ""
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    prompt_tokens: Optional[int] = None  # None = estimated from the request
    completion_tokens: Optional[int] = None  # None = estimated from the content
    finish_reason: str = "stop"
    raw_body: Optional[bytes] = None  # send exactly these bytes instead of a completion
    content_type: str = "application/json"
    hold_until: int = 0  # first wait until this many chat requests have arrived (concurrency tests) …
    hold_timeout_s: float = 5.0  # … but no longer than this
    trickle_s: float = 0.0  # > 0: the headers at once, then the body one byte every trickle_s (a drip)

    # -- builders --------------------------------------------------------------------
    @classmethod
    def json(cls, obj: Any, **kw: Any) -> "Reply":
        """The reply is exactly ``json.dumps(obj)``."""
        return cls(content=json.dumps(obj), **kw)

    @classmethod
    def fenced(cls, obj: Any, **kw: Any) -> "Reply":
        """JSON inside a ```json fence, as many chat models answer."""
        return cls(content="```json\n" + json.dumps(obj, indent=2) + "\n```", **kw)

    @classmethod
    def chatty(cls, obj: Any, **kw: Any) -> "Reply":
        """JSON embedded in prose ("Sure! Here is …{…} Let me know …")."""
        return cls(content="Sure! Here is my assessment of the screen: " + json.dumps(obj)
                   + "\nLet me know if you need anything else.", **kw)

    @classmethod
    def text(cls, text: str, **kw: Any) -> "Reply":
        """The reply is exactly ``text`` (prose, broken JSON, anything)."""
        return cls(content=text, **kw)

    @classmethod
    def garbage(cls, **kw: Any) -> "Reply":
        """A plain-prose reply with no JSON in it (what a model that ignores the format says)."""
        return cls(content="I looked at the screen and it seems fine, nothing unusual here.", **kw)

    @classmethod
    def empty(cls, **kw: Any) -> "Reply":
        """A completion whose content is the empty string."""
        return cls(content="", **kw)

    @classmethod
    def slow(cls, delay_s: float, reply: Optional["Reply"] = None) -> "Reply":
        """``reply`` (default: an empty JSON object) after ``delay_s`` seconds."""
        return dataclasses.replace(reply or cls.json({}), delay_s=delay_s)

    @classmethod
    def trickle(cls, seconds_per_byte: float, reply: Optional["Reply"] = None) -> "Reply":
        """``reply`` (default: an empty JSON object) whose body drips one byte every
        ``seconds_per_byte`` after the headers, as a stalling proxy's keep-alive does."""
        return dataclasses.replace(reply or cls.json({}), trickle_s=seconds_per_byte)

    @classmethod
    def held(cls, n_requests: int, reply: Optional["Reply"] = None, *, timeout_s: float = 5.0) -> "Reply":
        """``reply`` sent only once ``n_requests`` chat requests have arrived (or after
        ``timeout_s``): proves requests were in flight together without timing them."""
        return dataclasses.replace(reply or cls.json({}), hold_until=n_requests, hold_timeout_s=timeout_s)

    @classmethod
    def body(cls, raw: bytes, content_type: str = "application/json", **kw: Any) -> "Reply":
        """HTTP 200 with exactly these bytes (an HTML error page, a blank body, a broken JSON)."""
        return cls(content=None, raw_body=raw, content_type=content_type, **kw)

    @classmethod
    def error(cls, status: int = 500, message: str = "internal server error", *,
              retry_after: Optional[Union[float, str]] = None, **kw: Any) -> "Reply":
        """An HTTP error with an OpenAI-style error body.

        Args:
            status: the HTTP status (429, 500, 503 …).
            message: the error's message.
            retry_after: a ``Retry-After`` header (seconds, or an HTTP date), if any.
            **kw: other :class:`Reply` fields (``delay_s`` …).
        """
        headers = (("Retry-After", _fmt(retry_after)),) if retry_after is not None else ()
        body = json.dumps({"error": {"message": message, "type": "server_error" if status >= 500 else "invalid_request_error",
                                     "code": status}}).encode()
        return cls(content=None, status=status, headers=headers, raw_body=body, **kw)

    @classmethod
    def rate_limited(cls, retry_after: Optional[Union[float, str]] = None, **kw: Any) -> "Reply":
        """HTTP 429, with a ``Retry-After`` header when given."""
        return cls.error(429, "rate limit reached for requests", retry_after=retry_after, **kw)

    @classmethod
    def storm(cls, n: int, retry_after: Optional[Union[float, str]] = None) -> list["Reply"]:
        """``n`` consecutive 429s."""
        return [cls.rate_limited(retry_after) for _ in range(n)]


def _fmt(v: Union[float, str]) -> str:
    return v if isinstance(v, str) else (str(int(v)) if float(v).is_integer() else repr(float(v)))


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON (None when the body was empty or not JSON)
    received_at: float  # time.monotonic() when the request line arrived
    responded_at: Optional[float] = None  # time.monotonic() when the reply started to be written
    status: Optional[int] = None
    client_gone: bool = False  # the client hung up before the reply (a timeout, say)

    @property
    def model(self) -> Optional[str]:
        """The ``model`` the request named, or None."""
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request's chat messages (empty when the body was not a chat request)."""
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []

    def _parts(self) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for m in self.messages:
            c = m.get("content")
            if isinstance(c, str):
                parts.append({"type": "text", "text": c})
            elif isinstance(c, list):
                parts.extend(p for p in c if isinstance(p, dict))
        return parts

    @property
    def text(self) -> str:
        """Every text part of every message, joined by newlines."""
        return "\n".join(p.get("text", "") for p in self._parts() if p.get("type") == "text")

    @property
    def images(self) -> list[str]:
        """The image URLs sent (data URLs when the client encodes screenshots)."""
        return [p["image_url"]["url"] for p in self._parts()
                if p.get("type") == "image_url" and isinstance(p.get("image_url"), dict)]


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # socketserver's default backlog of 5 resets a burst of connections, as no real server does


class VLMTestServer:
    """A scripted chat-completions endpoint on ``127.0.0.1:<ephemeral port>``."""

    def __init__(self, *, model: str = "ttir-test-model", responder: Optional[Responder] = None,
                 host: str = "127.0.0.1", port: int = 0):
        self.model = model
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._arrived = threading.Condition(self._lock)
        self._connections: set[socket.socket] = set()  # open keep-alive connections, closed on stop()
        self._httpd = _Server((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle -------------------------------------------------------------------
    @property
    def port(self) -> int:
        """The port the server listens on (an ephemeral one unless ``port=`` was given)."""
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url`` (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "VLMTestServer":
        """Serve in a background thread (idempotent); returns the server, so ``VLMTestServer().start()`` chains."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name=f"vlm-test-server:{self.port}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: wake sleeping handlers, close open connections and the socket."""
        self._stopping.set()  # wakes handlers sleeping on a slow reply
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        with self._lock:  # handlers waiting on an idle keep-alive connection end now, not when the client goes
            for conn in list(self._connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._httpd.server_close()

    def __enter__(self) -> "VLMTestServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- scripting -------------------------------------------------------------------
    def enqueue(self, *replies: Union[Reply, Iterable[Reply]]) -> "VLMTestServer":
        """Append replies (or lists of replies) to the script, served in order."""
        with self._lock:
            for r in replies:
                if isinstance(r, Reply):
                    self._queue.append(r)
                else:
                    self._queue.extend(r)
        return self

    @property
    def pending(self) -> int:
        """Scripted replies not served yet."""
        return len(self._queue)

    def clear(self) -> None:
        """Forget the script and the request log."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    def completions(self) -> list[RecordedRequest]:
        """The chat-completion requests received, in arrival order."""
        return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def config(self, **overrides: Any) -> Any:
        """A :class:`ttir.core.config.VLMConfig` pointing here, with test-friendly short
        timeout and backoff (override any field)."""
        from ttir.core.config import VLMConfig

        settings: dict[str, Any] = {"base_url": self.base_url, "model": self.model, "api_key": "test-key",
                                    "timeout_s": 2.0, "max_retries": 2, "backoff_s": 0.01, "backoff_max_s": 0.05}
        settings.update(overrides)
        return VLMConfig(**settings)

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(request)
        return Reply.error(400, f"ttir test server: no scripted reply left for request #{request.index}")

    def _hold(self, n_requests: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        with self._arrived:
            while len(self.completions()) < n_requests and not self._stopping.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._arrived.wait(min(left, 0.1))

    # -- HTTP ------------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                super().finish()

            def log_message(self, fmt: str, *args: Any) -> None:  # route to loguru, quietly
                logger.trace("vlm-test-server: " + fmt, *args)

            def _record(self, body: Any) -> RecordedRequest:
                with server._lock:
                    rec = RecordedRequest(index=len(server.requests), method=self.command, path=self.path,
                                          headers={k.lower(): v for k, v in self.headers.items()},
                                          body=body, received_at=time.monotonic())
                    server.requests.append(rec)
                    server._arrived.notify_all()
                return rec

            def _read_body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return None

            def _send(self, rec: RecordedRequest, status: int, body: bytes,
                      headers: Iterable[tuple[str, str]] = (), content_type: str = "application/json",
                      trickle_s: float = 0.0) -> None:
                # Stamped before writing: the client may act on the reply before this
                # thread runs again, and tests read the record as soon as the call returns.
                rec.status = status
                rec.responded_at = time.monotonic()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in headers:
                        self.send_header(k, v)
                    self.end_headers()
                    if trickle_s > 0:
                        self.wfile.flush()
                        for i in range(len(body)):
                            if server._stopping.wait(trickle_s):
                                return
                            self.wfile.write(body[i:i + 1])
                            self.wfile.flush()
                    else:
                        self.wfile.write(body)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                    rec.client_gone = True

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                rec = self._record(None)
                if self.path.rstrip("/").endswith("/models"):
                    body = {"object": "list", "data": [{"id": server.model, "object": "model", "created": 0,
                                                        "owned_by": "ttir"}]}
                    self._send(rec, 200, json.dumps(body).encode())
                else:
                    self._not_found(rec)

            def do_POST(self) -> None:  # noqa: N802
                body = self._read_body()
                rec = self._record(body)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._not_found(rec)
                    return
                reply = server._next_reply(rec)
                if reply.hold_until:
                    server._hold(reply.hold_until, reply.hold_timeout_s)
                if reply.delay_s > 0 and server._stopping.wait(reply.delay_s):
                    return  # server stopping: drop the connection
                if reply.raw_body is not None or reply.status != 200:
                    self._send(rec, reply.status, b"{}" if reply.raw_body is None else reply.raw_body, reply.headers,
                               reply.content_type)
                    return
                self._send(rec, 200, json.dumps(_completion(rec, reply, server.model)).encode(), reply.headers,
                           trickle_s=reply.trickle_s)

            def _not_found(self, rec: RecordedRequest) -> None:
                body = {"error": {"message": f"ttir test server: no route {self.command} {self.path}", "code": 404}}
                self._send(rec, 404, json.dumps(body).encode())

        return Handler


def _completion(rec: RecordedRequest, reply: Reply, default_model: str) -> dict[str, Any]:
    content = reply.content
    prompt_tokens = reply.prompt_tokens
    if prompt_tokens is None:  # a rough, deterministic count: words plus a flat rate per image
        prompt_tokens = len(rec.text.split()) + 85 * len(rec.images)
    completion_tokens = reply.completion_tokens
    if completion_tokens is None:
        completion_tokens = len((content or "").split())
    return {
        "id": f"chatcmpl-ttir-{rec.index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": rec.model or default_model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": reply.finish_reason}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def main(argv: Optional[list[str]] = None) -> None:
    """``python -m ttir.testing --port 8000 --reply reply.json``: serve one fixed reply forever."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m ttir.testing", description="A local OpenAI-compatible endpoint that answers with a fixed reply.")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    parser.add_argument("--model", default="ttir-test-model")
    parser.add_argument("--reply", type=Path, help="file whose text is sent as every reply (default: an empty JSON object)")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port}: expected a TCP port, 1 to 65535 (or 0: any free port)")
    try:  # a user's file: bounded (a reply is a few KB), and its problem named without a traceback
        text = read_text_file(args.reply, "reply", max_bytes=MAX_REPLY_FILE_BYTES) if args.reply else "{}"
    except (OSError, ValueError) as exc:
        parser.error(f"--reply: {exc}")
    import ttir

    ttir.enable_logging("INFO")
    try:
        server = VLMTestServer(model=args.model, port=args.port, responder=lambda _req: Reply.text(text))
    except OSError as exc:
        parser.error(f"--port {args.port}: cannot serve on 127.0.0.1:{args.port} ({exc.strerror or exc}); choose "
                     "another port, or 0 for any free one")
    with server:
        logger.info("serving {} (model {!r}); Ctrl-C stops", server.base_url, server.model)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
