"""Real devices: :class:`AdbDevice` drives a phone or emulator over adb (adbutils).

``from benchmark.devices import AdbDevice``; ``ttir doctor`` checks a setup.
The other way round, ``benchmark.devices.adbd`` serves a simulated phone AS an adb
device (``ttir serve-adb``), and ``phone_task`` runs the benchmark's tasks on it.
"""

from benchmark.devices.adb.device import AdbDevice
from benchmark.devices.adb.apps import AppTable

__all__ = ["AdbDevice", "AppTable"]
