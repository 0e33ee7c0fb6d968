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
