"""The real adb server for tests: adbutils' bundled ``adb`` on a private port,
and simulated phones served to it (benchmark.devices.adbd) — no stand-in:
the adb binary and adbutils speak the wire protocol to the served phone."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

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


def closed_by_peer(sock: socket.socket, within_s: float) -> bool:
    """Whether the other end hangs up ``sock`` within ``within_s`` seconds."""
    sock.settimeout(within_s)
    try:
        return sock.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def scripted_agent(adb_server: AdbServer, serial: str, script: Sequence[str], pause_s: float) -> None:
    """A scripted adb agent: ``script``'s shell commands through the adb binary, ``pause_s`` of think
    time after each, never looking at the screen."""
    for command in script:
        res = adb_server.adb("-s", serial, "shell", command)
        assert res.returncode == 0, res.stderr
        time.sleep(pause_s)


def served_verdict(adb_server: AdbServer, serial: str) -> dict[str, Any]:
    """A served phone's verdict on its task (``cmd ttir task verify``), from app state."""
    return json.loads(adb_server.adb("-s", serial, "shell", "cmd ttir task verify").stdout.decode())


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
