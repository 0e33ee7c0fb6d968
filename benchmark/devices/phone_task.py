"""Run a benchmark task on a ttir served phone over adb (``ttir serve-adb``).

The tasks seed simulated app data and verify app state, which a phone driven
over adb holds on its side. :func:`for_device` wraps a task for an AdbDevice
whose phone offers the ``cmd ttir`` task service (benchmark/devices/adbd/
tools/ttir_service.py): ``setup`` asks the phone to set the task up, ``verify``
reads the phone's verdict. Any other device gets the task unchanged.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from typing import Any

from benchmark.device import DeviceError
from benchmark.devices.adb import commands as cmd

_SERVED: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()


def params_digest(params: dict[str, Any]) -> str:
    """A short fingerprint of a task's parameters (the same on runner and phone)."""
    blob = json.dumps(params, sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def serves_tasks(device: Any) -> bool:
    """Whether ``device`` is an AdbDevice on a ttir served phone (asked once per device).

    A served phone's app names (the simulator's labels and aliases, which the tasks' plans
    use: "Messages" is its SMS app) then join the device's app table, ahead of the
    real-phone names, so ``open_app`` opens what it opens in the simulator."""
    shell = getattr(device, "shell", None)
    if not callable(shell):
        return False
    if device not in _SERVED:
        try:
            served = shell(cmd.TTIR_VERSION).strip().startswith("ttir-served-phone")
            if served and hasattr(getattr(device, "apps", None), "add"):
                device.apps.add(json.loads(shell(cmd.TTIR_APPS)))
        except (DeviceError, ValueError):
            served = False
        _SERVED[device] = served
    return _SERVED[device]


class PhoneTask:
    """``task`` with its setup and verdict on the served phone; everything else is the task's."""

    supports_real_device = True

    def __init__(self, task: Any):
        self.task = task

    def __getattr__(self, name: str) -> Any:
        if name == "task":  # not set yet (copy, unpickling): do not recurse
            raise AttributeError(name)
        return getattr(self.task, name)

    def __repr__(self) -> str:
        return f"PhoneTask({self.task!r})"

    def setup(self, device: Any) -> None:
        out = device.shell(cmd.ttir_task_setup(self.task.name, self.task.seed, params_digest(self.task.params)))
        try:
            info = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise DeviceError(f"adb {getattr(device, 'serial', '')}: the phone could not set up task "
                              f"{self.task.name}: {out.strip()[:300]!r}") from None
        if info.get("task") != self.task.name:
            raise DeviceError(f"the phone set up {info.get('task')!r}, not {self.task.name!r}")
        forget = getattr(device, "forget_screen", None)
        if callable(forget):
            forget()  # the phone was factory-reset: nothing observed before holds

    def verify(self, device: Any) -> bool:
        out = device.shell(cmd.TTIR_TASK_VERIFY)
        try:
            verdict = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise DeviceError(f"adb {getattr(device, 'serial', '')}: no verdict for task {self.task.name}: "
                              f"{out.strip()[:300]!r}") from None
        if verdict.get("task") != self.task.name:
            raise DeviceError(f"the phone's verdict is for {verdict.get('task')!r}, not {self.task.name!r}")
        return bool(verdict.get("success"))


def for_device(task: Any, device: Any) -> Any:
    """``task`` as ``device`` can run it: wrapped for a served phone when it needs the simulator."""
    if getattr(task, "supports_real_device", False) or not serves_tasks(device):
        return task
    return PhoneTask(task)
