"""``python -m experiments.perf adbd_limits``: what one hostile client can make a served phone
hold, and whether the other phones and a well-behaved client are still served meanwhile.

A ``ttir serve-adb --phones 2`` process serves two phones (another process, so its memory
and threads are its own: read from ``/proc/PID/status``). Each probe is what a careless or
hostile client does over a raw socket (:class:`benchmark.devices.adbd.host.RawHost`):

- ``shell_v2_4gb_packet``: a ``shell,v2`` stdin packet declaring 4 GB, then 256 MB sent at it;
- ``parallel_pushes``: eight 60 MB pushes in flight at once on one connection;
- ``settings_values``: 2,000 ``settings put`` of 100 KB values;
- ``idle_connections``: 2,000 connections that never say a word;
- ``runaway_grep``: ``echo aaaa…! | grep -E '(a+)+$'`` on one phone while the other echoes.

Each reports the server's resident memory before, at its peak during, and after the
hostile connection closed (MB), and what a well-behaved client saw meanwhile.
"""

from __future__ import annotations

import resource
import socket
import struct
import subprocess
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

from benchmark.devices.adbd import wire
from benchmark.devices.adbd.host import RawHost
from benchmark.devices.adbd.spawn import spawn

MB = 1024 * 1024


def _free_port() -> int:
    # two phones on PORT and PORT+1: pick a pair that is free now
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            try:
                with socket.socket() as b:
                    b.bind(("127.0.0.1", port + 1))
                    return port
            except OSError:
                continue
    raise RuntimeError("no two free consecutive ports on 127.0.0.1")


def _status(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def _rss_mb(pid: int) -> float:
    return _status(pid, "VmRSS") / 1024


class _Peak:
    """The server's resident memory and threads, sampled every 10 ms while a probe runs."""

    def __init__(self, pid: int):
        self.pid, self.rss_mb, self.threads = pid, _rss_mb(pid), _status(pid, "Threads")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            self.rss_mb = max(self.rss_mb, _rss_mb(self.pid))
            self.threads = max(self.threads, _status(self.pid, "Threads"))

    def __enter__(self) -> "_Peak":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def _memory(pid: int, out: dict[str, Any]) -> Iterator[_Peak]:
    out["rss_before_mb"] = round(_rss_mb(pid), 1)
    with _Peak(pid) as peak:
        yield peak
    time.sleep(1.0)  # the server notices the close and drops what the connection held
    out["rss_peak_mb"] = round(peak.rss_mb, 1)
    out["rss_after_close_mb"] = round(_rss_mb(pid), 1)
    out["growth_at_peak_mb"] = round(peak.rss_mb - out["rss_before_mb"], 1)
    out["threads_peak"] = peak.threads


def _echo_ms(port: int) -> float:
    t0 = time.perf_counter()
    host = RawHost(port, timeout=30)
    try:
        host.connect()
        assert host.run("shell:echo ok") == b"ok\n"
    finally:
        host.close()
    return (time.perf_counter() - t0) * 1000


def _drain(host: RawHost, stop: threading.Event, seen: list[wire.Message]) -> None:
    host.sock.settimeout(0.2)
    while not stop.is_set():
        try:
            msg = host.recv()
        except (socket.timeout, TimeoutError):
            continue
        except (EOFError, OSError):
            return
        seen.append(msg)
        if msg.command == wire.A_WRTE:
            try:
                host.send(wire.A_OKAY, msg.arg1, msg.arg0)
            except OSError:
                return


def probe_shell_v2_packet(pid: int, port: int) -> dict[str, Any]:
    """A stdin packet declaring 4 GB, then 256 MB sent at it without waiting for acknowledgements."""
    out: dict[str, Any] = {}
    with _memory(pid, out):
        host = RawHost(port)
        host.connect()
        host.send(wire.A_OPEN, 5, 0, b"shell,v2,raw:\0")
        opened = host.recv()
        seen: list[wire.Message] = []
        stop = threading.Event()
        reader = threading.Thread(target=_drain, args=(host, stop, seen), daemon=True)
        reader.start()
        chunk = b"x" * (MB - 64)
        sent = 0
        try:
            host.send(wire.A_WRTE, 5, opened.arg0, struct.pack("<BI", 0, 0xFFFFFFF0) + chunk)
            sent = len(chunk)
            while sent < 256 * MB:
                host.send(wire.A_WRTE, 5, opened.arg0, chunk)
                sent += len(chunk)
        except OSError:
            pass  # the phone hung up: nothing more to send
        out["sent_mb"] = round(sent / MB)
        out["echo_meanwhile_ms"] = round(_echo_ms(port), 1)
        stop.set()
        reader.join()
        out["refused"] = any(b"a packet of" in m.payload for m in seen if m.command == wire.A_WRTE)
        host.close()
    return out


def probe_parallel_pushes(pid: int, port: int, streams: int = 8, size: int = 60 * MB) -> dict[str, Any]:
    """Eight pushes of 60 MB in flight on one connection, each WRTE waiting for its OKAY (as adb does)."""
    out: dict[str, Any] = {}
    data = b"y" * 65536
    body = (b"DATA" + struct.pack("<I", len(data)) + data) * 15  # just under one 1 MB message
    with _memory(pid, out):
        host = RawHost(port, timeout=30)
        host.connect()
        remote: dict[int, int] = {}
        for i in range(streams):
            local = 100 + i
            host.send(wire.A_OPEN, local, 0, b"sync:\0")
            msg = host.recv()
            remote[local] = msg.arg0
        sent = {local: 0 for local in remote}
        failed: set[int] = set()
        first = True
        while any(sent[s] < size for s in remote if s not in failed):
            waiting = set()
            for local, rid in remote.items():
                if local in failed or sent[local] >= size:
                    continue
                spec = f"/sdcard/push{local}.bin,0644".encode()
                head = b"SEND" + struct.pack("<I", len(spec)) + spec if first else b""
                host.send(wire.A_WRTE, local, rid, head + body)
                sent[local] += len(body)
                waiting.add(local)
            first = False
            while waiting:
                msg = host.recv()
                if msg.command == wire.A_OKAY:
                    waiting.discard(msg.arg1)
                elif msg.command == wire.A_WRTE:
                    host.send(wire.A_OKAY, msg.arg1, msg.arg0)
                    if msg.payload.startswith(b"FAIL"):
                        failed.add(msg.arg1)
                elif msg.command == wire.A_CLSE:
                    failed.add(msg.arg1)
                    waiting.discard(msg.arg1)
        out["pushes_refused"] = len(failed)
        out["received_mb_before_refusals"] = round(sum(sent.values()) / MB)
        out["echo_meanwhile_ms"] = round(_echo_ms(port), 1)
        host.close()
    return out


def probe_settings(pid: int, port: int, count: int = 2000, size: int = 100_000) -> dict[str, Any]:
    """2,000 ``settings put`` of 100 KB values, then as many 16 KiB ones (the largest allowed)."""
    out: dict[str, Any] = {}
    with _memory(pid, out):
        host = RawHost(port, timeout=30)
        host.connect()
        refused = kept = 0
        for i in range(count):
            reply = host.run(f"shell:settings put global probe_big_{i} " + "v" * size + "; echo rc=$?", local_id=7)
            refused += reply.rstrip().endswith(b"rc=1")
        for i in range(count):
            reply = host.run(f"shell:settings put global probe_{i} " + "v" * 16_000 + "; echo rc=$?", local_id=7)
            kept += reply.rstrip().endswith(b"rc=0")
        out["big_values_refused"] = refused
        out["largest_values_kept"] = kept
        host.close()
    return out


def probe_idle_connections(pid: int, port: int, count: int = 2000) -> dict[str, Any]:
    """2,000 connections that never send a byte, held for 12 s (the handshake timeout is 10 s)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 256), hard))
    out: dict[str, Any] = {}
    socks: list[socket.socket] = []
    with _memory(pid, out):
        for _ in range(count):
            try:
                socks.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            except OSError:
                out["connect_refused"] = out.get("connect_refused", 0) + 1
        t0 = time.monotonic()
        out["echo_meanwhile_ms"] = round(_echo_ms(port), 1)
        time.sleep(0.5)
        out["closed_at_once"] = sum(1 for s in socks if _closed(s, 0.001))
        time.sleep(max(0.0, 12 - (time.monotonic() - t0)))
        out["closed_after_12_s"] = sum(1 for s in socks if _closed(s, 0.05))
        out["echo_after_ms"] = round(_echo_ms(port), 1)
        for s in socks:
            s.close()
    return out


def _closed(sock: socket.socket, within_s: float) -> bool:
    sock.settimeout(within_s)
    try:
        return sock.recv(1) == b""
    except (socket.timeout, TimeoutError):
        return False
    except OSError:
        return True


def probe_runaway_grep(pid: int, port: int) -> dict[str, Any]:
    """A catastrophic regex on phone 1 while phone 2 answers ``echo`` every 50 ms."""
    out: dict[str, Any] = {}
    echoes: list[float] = []
    done = threading.Event()

    def other_phone() -> None:
        while not done.is_set():
            echoes.append(_echo_ms(port + 1))
            time.sleep(0.05)

    with _memory(pid, out):
        watcher = threading.Thread(target=other_phone, daemon=True)
        watcher.start()
        host = RawHost(port, timeout=60)
        host.connect()
        t0 = time.perf_counter()
        reply = host.run("shell:echo " + "a" * 28 + "! | grep -E '(a+)+$'; echo rc=$?")
        out["grep_s"] = round(time.perf_counter() - t0, 2)
        out["grep_reply"] = reply.decode(errors="replace").strip()[-120:]
        done.set()
        watcher.join()
        host.close()
    out["other_phone_echoes"] = len(echoes)
    out["other_phone_echo_max_ms"] = round(max(echoes), 1) if echoes else None
    return out


PROBES = {
    "shell_v2_4gb_packet": probe_shell_v2_packet,
    "parallel_pushes": probe_parallel_pushes,
    "settings_values": probe_settings,
    "idle_connections": probe_idle_connections,
    "runaway_grep": probe_runaway_grep,
}


def measure_adbd_limits(probes: tuple[str, ...] = tuple(PROBES)) -> dict[str, Any]:
    """Each probe against a ``ttir serve-adb --phones 2`` process of its own (what one probe
    left behind does not blur the next one's figures)."""
    results: dict[str, Any] = {}
    for name in probes:
        port = _free_port()
        proc, _ = spawn(port, "--phones", "2")
        try:
            results[name] = {"rss_at_start_mb": round(_rss_mb(proc.pid), 1), **PROBES[name](proc.pid, port)}
            results[name]["still_serving_ms"] = round(_echo_ms(port), 1)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    return results


__all__ = ["PROBES", "measure_adbd_limits"]
