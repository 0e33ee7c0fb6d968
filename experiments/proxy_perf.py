"""``python -m experiments.perf proxy``: what ``ttir proxy`` adds to an agent's ``input tap``.

A ``ttir serve-adb`` process serves a phone; ``ttir proxy`` (a process of its own, as a user
runs it) serves that phone behind the guard; adbutils' bundled adb server connects both. The
phone shows Settings > Network & internet, and every tap toggles Wi-Fi (each tap changes the
screen, so no tap looks like one without effect). Each round, interleaved so both see the
same machine:

- *direct*: the agent pulls a dump from the phone (not timed), then taps it (timed);
- *fresh*: the agent pulls a dump through the proxy (not timed), then taps through it (timed):
  the guard reads the agent's own dump;
- *stale*: the agent taps through the proxy again without pulling (timed): the guard dumps.

Added latency = the median of the proxied taps minus the median of the direct ones (and the
median of the per-round differences). The proxy's own figures (its guard's median time per
step, its dumps and the screens it took from the agent) come from the summary it prints on
exit.
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import time
from typing import Any

ROUNDS = 40
WARMUP = 5  # first rounds left out (imports, the screen model's first load)
TAP = "input tap 540 337"  # Network & internet's Wi-Fi switch


def _med(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else 0.0


def measure_proxy(rounds: int = ROUNDS) -> dict[str, Any]:
    import adbutils
    from adbutils import adb_path

    from benchmark.devices.adbd.spawn import spawn
    from experiments.adb_perf import _free_port

    adb, server_port, phone_port, proxy_port = adb_path(), _free_port(), _free_port(), _free_port()
    subprocess.run([adb, "-P", str(server_port), "start-server"], check=True, capture_output=True, timeout=60)
    phone, _ = spawn(phone_port)
    serial, proxied = f"127.0.0.1:{phone_port}", f"127.0.0.1:{proxy_port}"
    code = "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))"
    proxy = None
    try:
        subprocess.run([adb, "-P", str(server_port), "connect", serial], check=True, capture_output=True, timeout=60)
        proxy = subprocess.Popen([sys.executable, "-c", code, "proxy", "--serial", serial, "--port", str(proxy_port),
                                  "--adb-port", str(server_port), "--log", "/dev/null"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert proxy.stderr is not None
        while "Ctrl-C stops." not in proxy.stderr.readline():
            if proxy.poll() is not None:
                raise RuntimeError(f"ttir proxy did not start: {proxy.stderr.read()[-2000:]}")
        subprocess.run([adb, "-P", str(server_port), "connect", proxied], check=True, capture_output=True, timeout=60)
        client = adbutils.AdbClient(port=server_port)
        direct, through = client.device(serial), client.device(proxied)
        direct.shell("monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
        direct.shell("input tap 613 312")  # Network & internet
        times: dict[str, list[float]] = {"direct": [], "fresh": [], "stale": []}
        for i in range(rounds + WARMUP):
            row = {}
            direct.shell("uiautomator dump /dev/tty")
            t0 = time.perf_counter()
            direct.shell(TAP)
            row["direct"] = (time.perf_counter() - t0) * 1000
            through.shell("uiautomator dump /dev/tty")  # the agent's own look, through the proxy
            t0 = time.perf_counter()
            through.shell(TAP)
            row["fresh"] = (time.perf_counter() - t0) * 1000
            t0 = time.perf_counter()
            through.shell(TAP)
            row["stale"] = (time.perf_counter() - t0) * 1000
            if i >= WARMUP:
                for k, v in row.items():
                    times[k].append(v)
    finally:
        summary: dict[str, Any] = {}
        if proxy is not None:
            proxy.send_signal(signal.SIGINT)
            _, rest = proxy.communicate(timeout=60)
            last = [line for line in rest.splitlines() if line.startswith("ttir proxy: {")]
            summary = json.loads(last[-1].split("ttir proxy: ", 1)[1]) if last else {}
        subprocess.run([adb, "-P", str(server_port), "disconnect"], capture_output=True, timeout=60)
        phone.terminate()
        phone.communicate(timeout=30)
        subprocess.run([adb, "-P", str(server_port), "kill-server"], capture_output=True, timeout=60)
    diffs = {k: [t - d for t, d in zip(times[k], times["direct"])] for k in ("fresh", "stale")}
    return {
        "rounds": len(times["direct"]),
        "tap_direct_median_ms": _med(times["direct"]),
        "tap_fresh_median_ms": _med(times["fresh"]),
        "tap_stale_median_ms": _med(times["stale"]),
        "added_fresh_median_ms": round(_med(times["fresh"]) - _med(times["direct"]), 2),
        "added_stale_median_ms": round(_med(times["stale"]) - _med(times["direct"]), 2),
        "added_fresh_paired_median_ms": _med(diffs["fresh"]),
        "added_stale_paired_median_ms": _med(diffs["stale"]),
        "proxy_summary": summary,
    }


__all__ = ["measure_proxy"]
