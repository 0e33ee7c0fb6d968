"""ServedPhone: one simulated phone as the adb daemon sees it — its screen (any
Device: a SimDevice, or one wrapped by perturbations), its shell and tools, its
files, ``settings`` and properties, and the phone-side task (``cmd ttir``).

Everything a client does goes through :meth:`run` (one command line) under the
phone's lock, so several adb connections can share one phone.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from loguru import logger

from benchmark.device import ActionError
from benchmark.devices.adb.settings import Display
from benchmark.devices.adbd import wire
from benchmark.devices.adbd.files import FileStore
from benchmark.devices.adbd.png import PngEncoder
from benchmark.devices.adbd.settings import PhoneSettings
from benchmark.devices.adbd.sh import Output, Shell
from ttir.core.types import Action, Observation
from ttir.core.validation import load_package_yaml

DATA = Path(__file__).with_name("data")


@dataclass(frozen=True)
class PhoneData:
    """The served phone's fixed facts (data/phone.yaml, data/keycodes.yaml)."""

    properties: dict[str, str]
    banner_properties: list[str]
    features: list[str]
    system_packages: list[str]
    settings: dict[str, dict[str, str]]
    directories: list[str]
    keycodes: dict[str, int]

    @classmethod
    @functools.lru_cache(maxsize=1)
    def load(cls) -> "PhoneData":
        raw = load_package_yaml((DATA / "phone.yaml").read_text(encoding="utf-8"))
        keys = load_package_yaml((DATA / "keycodes.yaml").read_text(encoding="utf-8"))
        return cls(
            properties={str(k): str(v) for k, v in raw["properties"].items()},
            banner_properties=list(raw["banner_properties"]),
            features=list(raw["features"]),
            system_packages=list(raw["system_packages"]),
            settings={ns: {str(k): str(v) for k, v in (vals or {}).items()} for ns, vals in raw["settings"].items()},
            directories=list(raw["directories"]),
            keycodes={str(k): int(v) for k, v in keys.items()},
        )


@dataclass
class Keyboard:
    """Key state between ``input`` commands: Ctrl+A selects the focused field's text."""

    selected_all: bool = False


@dataclass
class PhoneTask:
    """The task the phone was set up for (``cmd ttir task setup`` or ``ttir serve-adb --task``)."""

    task: Any
    started: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class ServedPhone:
    """``device``: what the phone shows and does (default: a fresh SimDevice).
    ``serial``: what ``getprop ro.serialno`` says (the adb server names TCP devices by address)."""

    def __init__(self, device: Any = None, *, serial: str = "ttir-sim", data: Optional[PhoneData] = None):
        if device is None:
            from benchmark.sim.device import SimDevice

            device = SimDevice()
        self.device = device
        self.sim = getattr(device, "unwrapped", device)
        self.data = data or PhoneData.load()
        self.serial = serial
        self.lock = threading.RLock()
        self.files = FileStore(self.data.directories)
        self.display = Display(tuple(self.sim.base_size), int(self.sim.base_dpi))
        self.settings = PhoneSettings(device, self.display, self.data.settings)
        self.keyboard = Keyboard()
        self.task: Optional[PhoneTask] = None
        self.env = {"HOME": "/", "PATH": "/system/bin", "EXTERNAL_STORAGE": "/sdcard", "ANDROID_DATA": "/data",
                    "USER": "shell", "HOSTNAME": self.data.properties.get("ro.product.device", "phone")}
        self._png: tuple[Any, bytes] = (None, b"")  # (the image, its PNG): the image is kept so it is not reused
        self._encoder = PngEncoder()
        self._tools: Optional[Mapping[str, Any]] = None

    def __repr__(self) -> str:
        return f"ServedPhone(serial={self.serial!r}, device={type(self.device).__name__})"

    # -- identity -----------------------------------------------------------------------------
    @property
    def properties(self) -> dict[str, str]:
        return {**self.data.properties, "ro.serialno": self.serial}

    def banner(self) -> bytes:
        props = self.properties
        return wire.banner({k: props[k] for k in self.data.banner_properties}, self.data.features)

    def packages(self) -> list[str]:
        return sorted(set(self.sim.apps) | set(self.data.system_packages))

    # -- the shell ----------------------------------------------------------------------------
    @property
    def tools(self) -> Mapping[str, Any]:
        if self._tools is None:
            from benchmark.devices.adbd.tools import bind

            self._tools = bind(self)
        return self._tools

    def run(self, line: str) -> Output:
        """Run one command line as ``sh -c`` would (a fresh shell each time)."""
        with self.lock:
            return Shell(self.tools, self.files, self.env).run(line)

    def shell(self) -> Shell:
        """A shell that keeps ``$?`` across lines (for an interactive session); run it under :attr:`lock`."""
        return Shell(self.tools, self.files, self.env)

    # -- the screen ---------------------------------------------------------------------------
    def observe(self) -> Observation:
        return self.device.observe()

    def screenshot_png(self) -> bytes:
        shot = self.observe().screenshot
        if self._png[0] is not shot:
            self._png = (shot, self._encoder.encode(shot))
        return self._png[1]

    def dump_xml(self) -> str:
        obs = self.observe()
        return obs.xml or obs.to_xml()

    def act(self, action: Action) -> bool:
        """Perform an action as the touchscreen / keys would: what cannot be done does nothing."""
        try:
            self.device.execute(action)
            return True
        except ActionError as exc:
            logger.debug("served phone {}: {} did nothing: {}", self.serial, action.describe(), exc)
            return False

    # -- the phone-side task ------------------------------------------------------------------
    def start_task(self, task: Any) -> Observation:
        """Factory-reset the phone and set it up for ``task`` (with whatever wraps the device)."""
        with self.lock:
            obs = self.device.reset(task)
            self.settings.reset()
            self.keyboard = Keyboard()
            self.task = PhoneTask(task, started=float(getattr(self.sim.clock, "elapsed", 0.0)))
            return obs

    def verdict(self) -> dict[str, Any]:
        """The task's verdict from the phone's state (as every task is verified)."""
        with self.lock:
            out: dict[str, Any] = {"serial": self.serial, "task": None, "success": None}
            if self.task is not None and self.task.task is not None:  # a perturbation without a task has none
                task = self.task.task
                out.update(task=task.name, goal=task.goal, seed=task.seed, params=task.params,
                           success=bool(task.verify(self.sim)), **self.task.extra)
            log = getattr(self.device, "event_log", None)
            out["events"] = log() if callable(log) else []
            out["actions"] = int(getattr(self.sim, "actions", 0))
            return out
