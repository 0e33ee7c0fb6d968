"""Helpers of the `reliability` test group (hostile inputs and faults): run a call under a
time and memory bound in a forked child, and list the processes a test leaves behind.
Linux only (/proc, fork, RLIMIT_AS)."""

from __future__ import annotations

import multiprocessing as mp
import os
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import pytest

LINUX = sys.platform.startswith("linux")
needs_linux = pytest.mark.skipif(not LINUX, reason="needs /proc, fork and RLIMIT_AS (Linux)")


def _child(conn: Any, fn: Callable[..., Any], args: tuple, extra_memory: int) -> None:
    if extra_memory:
        limit = _vm_bytes() + extra_memory
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        conn.send((True, fn(*args)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, whatever it is
        conn.send((False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}", type(exc).__name__))


def _vm_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


class Raised(Exception):
    """The bounded call raised: ``kind`` is the exception's class name, ``message`` its text."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


def bounded(seconds: float, fn: Callable[..., Any], *args: Any, extra_memory: int = 1 << 30) -> Any:
    """``fn(*args)`` in a forked child allowed ``seconds`` of wall time and ``extra_memory`` more
    bytes of address space; its return value, or :class:`Raised` with what it raised. A child
    that runs over is killed and the test fails: nothing is left running either way."""
    ctx = mp.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args, extra_memory), daemon=True)
    proc.start()
    send.close()
    try:
        if not receive.poll(seconds):
            raise AssertionError(f"{getattr(fn, '__name__', fn)} did not finish within {seconds} s")
        try:
            reply = receive.recv()
        except EOFError:
            raise AssertionError(f"{getattr(fn, '__name__', fn)} died (exit code {proc.exitcode})") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        receive.close()
    if reply[0]:
        return reply[1]
    raise Raised(reply[2], reply[1])


def children(pid: int) -> set[int]:
    """Live (non-zombie) processes whose parent is ``pid``."""
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.add(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(predicate: Callable[[], bool], timeout_s: float, interval_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return predicate()


def ttir_command(*args: str) -> tuple[list[str], Path]:
    """The ``ttir`` CLI as a command line running the code under test, and the folder to run it in."""
    import ttir

    root = Path(ttir.__file__).resolve().parents[1]
    return [sys.executable, "-c", "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))", *args], root
