"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def dump():
    """Read a recorded uiautomator dump by name."""

    def read(name: str) -> str:
        return (FIXTURES / "dumps" / f"{name}.xml").read_text(encoding="utf-8")

    return read


@pytest.fixture
def device():
    from benchmark import SimDevice

    d = SimDevice()
    yield d
    d.close()


@pytest.fixture
def vlm_server():
    """A scripted OpenAI-compatible server on 127.0.0.1 (ttir.testing.VLMTestServer).

    Script it with ``vlm_server.enqueue(Reply.json({...}), ...)``; point a client at it
    with ``VLMClient(vlm_server.config(timeout_s=..., max_retries=...))``; inspect
    ``vlm_server.requests`` afterwards.
    """
    from ttir.testing import VLMTestServer

    with VLMTestServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _reliability_leaves_nothing_running(request):
    """Tests of the `reliability` group must leave no thread or child process behind."""
    if request.node.get_closest_marker("reliability") is None:
        yield
        return
    import os
    import threading

    from reliability_support import LINUX, alive, children, wait_until

    threads = set(threading.enumerate())
    kids = children(os.getpid()) if LINUX else set()
    yield
    new_threads = [t for t in threading.enumerate() if t not in threads]
    for t in new_threads:
        t.join(timeout=5)
    assert not [t.name for t in new_threads if t.is_alive()], "threads left running"
    if LINUX:
        wait_until(lambda: not (children(os.getpid()) - kids), 5)
        left = [p for p in children(os.getpid()) - kids if alive(p)]
        assert not left, f"child processes left running: {left}"
