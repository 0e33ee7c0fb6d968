"""Start ``ttir serve-adb`` in a process of its own and wait until its phones listen (for tools,
benchmarks and tests that need a served phone in another process)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

READY = "Ctrl-C stops."  # the last line `ttir serve-adb` prints once every phone listens


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


__all__ = ["READY", "spawn"]
