"""An adb script the guard cannot wrap, put behind `ttir proxy` without changing a line of it.

    python examples/proxy/adb_script.py [--alone]

The script is what many adb agents and QA scripts are: fixed commands with a pause, never
looking at the screen. Here it runs on a served simulated phone (`ttir serve-adb --task
SystemWifiTurnOn --perturb popup_permission`, no emulator needed), alone on the phone's
serial or on the serial of `ttir proxy --serial PHONE --port P` (started here as you would
start it: a command of its own). On your own phone: `ttir proxy --serial emulator-5554
--port 6555 &`, `adb connect 127.0.0.1:6555`, and point your agent at 127.0.0.1:6555.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from benchmark.devices.adbd.spawn import free_port, spawn, start_adb_server

SCRIPT = [  # the clean taps of SystemWifiTurnOn: open Settings, Network & internet, the Wi-Fi switch
    "monkey -p com.android.settings -c android.intent.category.LAUNCHER 1",
    "input tap 613 312",
    "input tap 540 337",
]



def main(alone: bool = False) -> int:
    from adbutils import adb_path

    server_port = str(start_adb_server(adb_path()))  # a private adb server
    adb = [adb_path(), "-P", server_port]
    port, proxy_port = free_port(), free_port()
    while proxy_port == port:
        proxy_port = free_port()
    phone, _ = spawn(port, "--task", "SystemWifiTurnOn", "--perturb", "popup_permission")
    serial, proxied = f"127.0.0.1:{port}", f"127.0.0.1:{proxy_port}"
    proxy = None
    try:
        subprocess.run([*adb, "connect", serial], check=True, capture_output=True)
        target = serial
        if not alone:
            proxy = subprocess.Popen(
                [sys.executable, "-c", "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))",
                 "proxy", "--serial", serial, "--port", str(proxy_port), "--adb-port", server_port],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env={**os.environ, "TTIR_LOG": "WARNING"})
            assert proxy.stderr is not None
            while "Ctrl-C stops." not in proxy.stderr.readline():  # it listens
                if proxy.poll() is not None:
                    raise RuntimeError(f"ttir proxy did not start: {proxy.stderr.read()[-2000:]}")
            subprocess.run([*adb, "connect", proxied], check=True, capture_output=True)
            target = proxied
        for command in SCRIPT:  # the script, unchanged: only its serial differs
            subprocess.run([*adb, "-s", target, "shell", command], check=True, capture_output=True)
            time.sleep(1.5)
        out = subprocess.run([*adb, "-s", serial, "shell", "cmd ttir task verify"], capture_output=True, check=True)
        success = bool(json.loads(out.stdout)["success"])
    finally:
        if proxy is not None:
            proxy.terminate()  # SIGTERM, as Ctrl-C: it prints its summary
            lines, rest = proxy.communicate(timeout=30)
            for line in lines.splitlines():  # the interventions, one JSON line each
                item = json.loads(line)
                print(f"  proxy: {item['fate']} {item['command']!r} after {item['did']} "
                      f"({item['saw'][0]['package'] if item['saw'] else '-'})")
            print("  " + rest.strip().splitlines()[-1])
        subprocess.run([*adb, "disconnect"], capture_output=True)
        phone.terminate()
        phone.communicate(timeout=30)
        subprocess.run([*adb, "kill-server"], capture_output=True)
    print(f"SystemWifiTurnOn under popup_permission, {'alone' if alone else 'through ttir proxy'}: success={success}")
    return 0 if success else 1


if __name__ == "__main__":
    sys.exit(main(alone="--alone" in sys.argv[1:]))
