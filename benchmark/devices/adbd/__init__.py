"""A simulated phone served over the adb protocol (``ttir serve-adb``).

``AdbDaemon(ServedPhone(device), port=5555).start()`` makes ``device`` (a
SimDevice, or one wrapped by perturbations) an adb device: the real adb
server lists it after ``adb connect 127.0.0.1:5555``, and ``adb shell``,
``adb exec-out``, ``adb pull`` / ``push`` and adbutils work on it.

Layout: wire.py (message format) → transport.py (one connection: handshake,
streams, flow control) → services.py (shell, shell v2, exec, sync) → sh.py
(the command language) → tools/ (input, screencap, uiautomator, dumpsys, am,
monkey, pm, settings, wm, cmd, getprop, coreutils) → phone.py (the phone's
state: device, files, settings, properties, its task).
"""

from benchmark.devices.adbd.daemon import AdbDaemon
from benchmark.devices.adbd.phone import ServedPhone

__all__ = ["AdbDaemon", "ServedPhone"]
