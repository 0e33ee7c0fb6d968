"""An adb script the guard cannot wrap, kept on track by `ttir.watching` beside it.

    python examples/watch/adb_script.py [--alone]

The script is what many adb agents and QA scripts are: fixed commands with a pause,
never looking at the screen. Here it runs on a served simulated phone
(`ttir serve-adb --task SystemWifiTurnOn --perturb popup_permission`, no emulator needed);
on your own phone, give `watching()` its serial (`adb devices`) and run your own script
inside the `with` block. `watch.yaml` beside this file holds an example rule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import ttir
from benchmark.devices.adbd.spawn import free_port, spawn, start_adb_server

HERE = Path(__file__).resolve().parent
SCRIPT = [  # the clean taps of SystemWifiTurnOn: open Settings, Network & internet, the Wi-Fi switch
    "monkey -p com.android.settings -c android.intent.category.LAUNCHER 1",
    "input tap 613 312",
    "input tap 540 337",
]



def main(alone: bool = False) -> int:
    from adbutils import adb_path

    # a private adb server (adbutils, and so ttir.watching, reach it through this variable) and phone port
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(start_adb_server(adb_path()))
    adb, port = [adb_path(), "-P", os.environ["ANDROID_ADB_SERVER_PORT"]], free_port()
    phone, _ = spawn(port, "--task", "SystemWifiTurnOn", "--perturb", "popup_permission")
    serial = f"127.0.0.1:{port}"
    try:
        subprocess.run([*adb, "connect", serial], check=True, capture_output=True)

        def script() -> None:
            for command in SCRIPT:
                subprocess.run([*adb, "-s", serial, "shell", command], check=True, capture_output=True)
                time.sleep(1.5)

        if alone:
            script()
        else:
            config = ttir.TTIRConfig.from_yaml(HERE / "watch.yaml")
            with ttir.watching(serial, config) as watcher:  # its own adb connection, on its own thread
                script()
            for item in watcher.interventions:
                print(f"  watch: {item.kind} on {item.package}: {item.title!r} -> {item.action}")
            print("  watch:", watcher.summary())
        out = subprocess.run([*adb, "-s", serial, "shell", "cmd ttir task verify"], capture_output=True, check=True)
        success = bool(json.loads(out.stdout)["success"])
        print(f"SystemWifiTurnOn under popup_permission, {'alone' if alone else 'beside ttir.watching'}: "
              f"success={success}")
        return 0 if success else 1
    finally:
        subprocess.run([*adb, "disconnect", serial], capture_output=True)
        phone.terminate()
        phone.communicate(timeout=30)
        subprocess.run([*adb, "kill-server"], capture_output=True)


if __name__ == "__main__":
    sys.exit(main(alone="--alone" in sys.argv[1:]))
