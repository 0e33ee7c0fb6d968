"""The real adb server for tests: adbutils' bundled ``adb`` on a private port,
and simulated phones served to it (benchmark.devices.adbd) — no stand-in:
the adb binary and adbutils speak the wire protocol to the served phone."""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from typing import Iterator

import pytest

from benchmark.devices.adbd import AdbDaemon, ServedPhone


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_ports(n: int) -> int:
    """The first of ``n`` consecutive free ports (outside adb's emulator range 5555-5585)."""
    for _ in range(200):
        base = free_port()
        if base + n > 65535 or 5554 <= base <= 5586:
            continue
        socks = []
        try:
            for k in range(n):
                s = socket.socket()
                s.bind(("127.0.0.1", base + k))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free TCP ports")


@dataclass
class AdbServer:
    binary: str
    port: int

    def adb(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, "-P", str(self.port), *args], capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def connect(self, address: str) -> None:
        res = self.adb("connect", address)
        assert b"connected to" in res.stdout, (res.stdout, res.stderr)

    @property
    def env(self) -> dict[str, str]:
        """Environment that points adb clients (adbutils, the adb binary) at this server."""
        return {**os.environ, "ANDROID_ADB_SERVER_PORT": str(self.port)}


@pytest.fixture(scope="module")
def adb_server() -> Iterator[AdbServer]:
    from adbutils import adb_path

    server = AdbServer(adb_path(), free_port())
    started = server.adb("start-server")
    assert started.returncode == 0, started.stderr
    try:
        yield server
    finally:
        server.adb("kill-server")


@pytest.fixture
def served(adb_server) -> Iterator[AdbDaemon]:
    """A fresh simulated phone served on a free port and connected to the adb server."""
    daemon = AdbDaemon(ServedPhone(), port=free_port()).start()
    try:
        adb_server.connect(daemon.address)
        yield daemon
    finally:
        adb_server.adb("disconnect", daemon.address)
        daemon.close()
