"""Served phones and adb servers in processes of their own, for tools, examples, benchmarks and tests:

- :func:`spawn` — start ``ttir serve-adb`` and wait until its phones listen;
- :func:`start_adb_server` — start a private adb server (adbutils' binary) on a free port;
- :func:`free_port` — a free TCP port outside the range adb scans for emulators.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time

READY = "Ctrl-C stops."  # the last line `ttir serve-adb` prints once every phone listens


EMULATOR_PORTS = range(5554, 5587)  # adb probes these for emulators: a server or phone there confuses it


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, outside :data:`EMULATOR_PORTS`.

    Returns:
        The port (free when returned; another process may still take it first).
    """
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in EMULATOR_PORTS:
            return port


def start_adb_server(adb: str, attempts: int = 5) -> int:
    """Start a private adb server on a free port, trying another port when one is taken between the
    choice and the start (parallel tests race for ports).

    Args:
        adb: the adb binary (``adbutils.adb_path()``).
        attempts: ports to try.

    Returns:
        The server's port (``adb -P PORT …``; adbutils reads ``ANDROID_ADB_SERVER_PORT``).

    Raises:
        RuntimeError: no attempt started a server (adb's own message included).
    """
    error = ""
    for _ in range(attempts):
        port = free_port()
        done = subprocess.run([adb, "-P", str(port), "start-server"], capture_output=True, text=True, timeout=60)
        if done.returncode == 0:
            return port
        error = (done.stderr or done.stdout).strip()[-500:]
    raise RuntimeError(f"adb start-server failed on {attempts} free ports: {error}")


def spawn(port: int, *args: str, timeout: float = 120) -> tuple["subprocess.Popen[str]", list[str]]:
    """Start ``ttir serve-adb --port PORT ARGS…`` in its own process; return it, once its phones
    listen, with what it printed (for tools and tests that need a phone in another process)."""
    code = "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))"
    log = tempfile.TemporaryFile(mode="w+")  # its log, never a pipe nobody reads (that could stall it)
    proc = subprocess.Popen([sys.executable, "-c", code, "serve-adb", "--port", str(port), *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, text=True)
    printed: list[str] = []
    end = time.monotonic() + timeout
    assert proc.stdout is not None
    while READY not in printed:
        line = proc.stdout.readline()
        if not line or time.monotonic() > end:
            proc.kill()
            proc.wait()
            log.seek(0)
            raise RuntimeError(f"ttir serve-adb did not start (exit {proc.returncode}): {log.read().strip()[-2000:]}")
        printed.append(line.strip())
    return proc, printed


__all__ = ["EMULATOR_PORTS", "READY", "free_port", "spawn", "start_adb_server"]
