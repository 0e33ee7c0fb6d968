"""System tasks (AndroidWorld: SystemBrightnessMax, SystemWifiTurnOn, …)."""

from __future__ import annotations

import random
from typing import Any

from benchmark.apps.settings import SettingsApp
from benchmark.plan import PlanStep, T, open_app, open_shade, set_slider, tap
from benchmark.tasks.base import Task


class SystemBrightnessMax(Task):
    template = "Turn brightness to the max value."
    apps = (SettingsApp.package,)
    reference_steps = 3
    tags = ("settings", "case_study_4")

    def setup(self, device: Any) -> None:
        device.configure(brightness=random.Random(self.seed).randint(40, 180))

    def verify(self, device: Any) -> bool:
        return device.settings.brightness == 255

    def reference_solution(self) -> list[PlanStep]:
        return [open_shade(), set_slider(T(desc="Display brightness"), 1.0)]


class SystemBrightnessMin(SystemBrightnessMax):
    template = "Turn brightness to the min value."
    tags = ("settings",)

    def verify(self, device: Any) -> bool:
        return device.settings.brightness == 0

    def reference_solution(self) -> list[PlanStep]:
        return [open_shade(), set_slider(T(desc="Display brightness"), 0.0)]


class SystemBrightnessMaxSettings(SystemBrightnessMax):
    template = "Open Settings and set the brightness level to 100%."
    reference_steps = 4
    tags = ("settings",)

    def reference_solution(self) -> list[PlanStep]:
        return [open_app("Settings"), tap("Display"), tap("Brightness level"), set_slider(T(desc="Brightness level"), 1.0)]


class _Toggle(Task):
    abstract = True
    attr = "wifi"
    want = True
    page = "Network & internet"
    switch_id = "wifi_switch"
    apps = (SettingsApp.package,)
    reference_steps = 3
    tags = ("settings",)

    def setup(self, device: Any) -> None:
        setattr(device.system, self.attr, not self.want)

    def verify(self, device: Any) -> bool:
        return getattr(device.system, self.attr) is self.want

    def reference_solution(self) -> list[PlanStep]:
        return [open_app("Settings"), tap(self.page), tap(T(id=self.switch_id))]


class SystemWifiTurnOn(_Toggle):
    template = "Turn on WiFi."


class SystemWifiTurnOff(_Toggle):
    template = "Turn off WiFi."
    want = False


class SystemBluetoothTurnOn(_Toggle):
    template = "Turn bluetooth on."
    attr = "bluetooth"
    page = "Connected devices"
    switch_id = "bluetooth_switch"


class SystemBluetoothTurnOff(SystemBluetoothTurnOn):
    template = "Turn bluetooth off."
    want = False
