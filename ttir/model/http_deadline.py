"""A wall-clock limit on a whole HTTP exchange, for the model client.

The HTTP library's ``read`` timeout bounds the wait for *each* chunk, and restarts with every
byte: an endpoint (or a proxy sending keep-alive whitespace) that answers 200 and then drips
its body a byte a second keeps a call alive for as long as it drips, whatever the step's
deadline. The transports here wrap the library's own and treat the request's ``read``
timeout as a limit on the whole exchange, from sending the request to the body's last byte:
past it, the next chunk raises the library's ``ReadTimeout`` (which the ``openai`` client
reports as a timeout), so a drip ends at most one chunk late.

The ``openai`` client brings its HTTP library (``httpx``, or ``httpx2`` in its newer
releases); the transports are built on whichever it uses, when the client is first made.

What it holds:

- :func:`sync_http_client` / :func:`async_http_client`: the ``openai`` default HTTP clients
  with the deadline transports in place;
- :func:`deadline_transports`: the two transport classes for one HTTP library.
"""

from __future__ import annotations

import importlib
import time
from functools import lru_cache
from typing import Any, AsyncIterator, Iterator, Optional

MAX_CONNECTIONS, MAX_KEEPALIVE = 1000, 100  # what the openai client's default pool allows


def _limit_s(request: Any) -> Optional[float]:
    """The request's whole-exchange limit: its ``read`` timeout (None: no limit)."""
    timeout = request.extensions.get("timeout") or {}
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return float(read) if isinstance(read, (int, float)) and read > 0 else None


@lru_cache(maxsize=4)
def deadline_transports(http_name: str) -> tuple[type, type]:
    """The sync and async deadline transports, built on the HTTP library ``http_name``.

    Args:
        http_name: ``httpx`` or ``httpx2`` (what the ``openai`` client uses).

    Returns:
        ``(DeadlineTransport, AsyncDeadlineTransport)``: each wraps the library's own
        transport (``inner``, default: a new one) and bounds the whole exchange.
    """
    http = importlib.import_module(http_name)
    limits = http.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_KEEPALIVE)

    def late(request: Any, limit: float) -> Exception:
        return http.ReadTimeout(f"the reply took longer than {limit:.1f}s in all (a body sent too slowly)",
                                request=request)

    class Stream(http.SyncByteStream):
        def __init__(self, inner: Any, request: Any, at: float, limit: float):
            self.inner, self.request, self.at, self.limit = inner, request, at, limit

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self.inner:
                if time.monotonic() > self.at:
                    raise late(self.request, self.limit)
                yield chunk

        def close(self) -> None:
            self.inner.close()

    class AsyncStream(http.AsyncByteStream):
        def __init__(self, inner: Any, request: Any, at: float, limit: float):
            self.inner, self.request, self.at, self.limit = inner, request, at, limit

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.inner:
                if time.monotonic() > self.at:
                    raise late(self.request, self.limit)
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    class DeadlineTransport(http.BaseTransport):
        """The library's transport, with the request's ``read`` timeout as a limit on the whole exchange."""

        def __init__(self, inner: Any = None):
            self.inner = inner or http.HTTPTransport(limits=limits)

        def handle_request(self, request: Any) -> Any:
            limit = _limit_s(request)
            started = time.monotonic()
            response = self.inner.handle_request(request)
            if limit is not None:
                response.stream = Stream(response.stream, request, started + limit, limit)
            return response

        def close(self) -> None:
            self.inner.close()

    class AsyncDeadlineTransport(http.AsyncBaseTransport):
        """The async twin of ``DeadlineTransport``."""

        def __init__(self, inner: Any = None):
            self.inner = inner or http.AsyncHTTPTransport(limits=limits)

        async def handle_async_request(self, request: Any) -> Any:
            limit = _limit_s(request)
            started = time.monotonic()
            response = await self.inner.handle_async_request(request)
            if limit is not None:
                response.stream = AsyncStream(response.stream, request, started + limit, limit)
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    return DeadlineTransport, AsyncDeadlineTransport


def _http_name(openai_module: Any) -> str:
    """The HTTP library the ``openai`` client is built on (its default client's base class)."""
    for base in openai_module.DefaultHttpxClient.__mro__[1:]:
        name = base.__module__.split(".")[0]
        if name != "openai":
            return name
    return "httpx"


def _environment_proxies(http: Any) -> dict[str, Optional[str]]:
    """The proxies the environment names (``HTTPS_PROXY``, ``NO_PROXY`` …), read as the HTTP
    library itself reads them: a client given its own transport no longer reads them."""
    read = getattr(getattr(http, "_utils", None), "get_environment_proxies", None)
    if callable(read):
        return dict(read())
    from urllib.request import getproxies  # the library moved its reader: the schemes alone, as curl does

    found = getproxies()
    if "*" in (h.strip() for h in found.get("no", "").split(",")):
        return {}
    return {f"{scheme}://": url if "://" in url else f"http://{url}"
            for scheme in ("http", "https", "all") if (url := found.get(scheme))}


def _mounts(http_name: str, asynchronous: bool) -> dict[str, Any]:
    """A deadline transport through each proxy the environment names (None: that pattern goes direct)."""
    http = importlib.import_module(http_name)
    sync_transport, async_transport = deadline_transports(http_name)
    wrap, inner = (async_transport, http.AsyncHTTPTransport) if asynchronous else (sync_transport, http.HTTPTransport)
    limits = http.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_KEEPALIVE)
    return {pattern: None if proxy is None else wrap(inner(proxy=proxy, limits=limits))
            for pattern, proxy in _environment_proxies(http).items()}


def sync_http_client(openai_module: Any, timeout_s: float) -> Any:
    """The ``openai`` client's default HTTP client, with the deadline transport (and through
    the proxies that ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``ALL_PROXY`` name, ``NO_PROXY`` excepted).

    Args:
        openai_module: the imported ``openai`` package (imported lazily by the caller).
        timeout_s: the default timeout (each call passes its own).

    Returns:
        A client for ``openai.OpenAI(http_client=...)``.
    """
    name = _http_name(openai_module)
    sync_transport, _ = deadline_transports(name)
    return openai_module.DefaultHttpxClient(transport=sync_transport(), mounts=_mounts(name, False), timeout=timeout_s)


def async_http_client(openai_module: Any, timeout_s: float) -> Any:
    """The async twin of :func:`sync_http_client`, for ``openai.AsyncOpenAI(http_client=...)``."""
    name = _http_name(openai_module)
    _, async_transport = deadline_transports(name)
    return openai_module.DefaultAsyncHttpxClient(transport=async_transport(), mounts=_mounts(name, True),
                                                 timeout=timeout_s)
