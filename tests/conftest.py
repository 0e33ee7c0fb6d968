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
