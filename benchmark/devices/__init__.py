"""Real devices: :class:`AdbDevice` drives a phone or emulator over adb (adbutils).

``from benchmark.devices import AdbDevice``; ``ttir doctor`` checks a setup.
"""

from benchmark.devices.adb import AdbDevice
from benchmark.devices.adb_apps import AppTable

__all__ = ["AdbDevice", "AppTable"]
