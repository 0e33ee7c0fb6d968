"""The served phone's ``settings`` provider, ``wm`` overrides and night mode, kept
in step with the simulated phone's knobs (DeviceSettings).

The raw values live here, as Android stores them (strings; ``None`` = unset /
no override). The knob-bound ones are the same states AdbDevice reads and
writes (benchmark/devices/adb/settings.py), translated by the same functions:
writing ``settings put system font_scale 1.35`` configures the phone, and a
knob changed on the phone itself (a perturbation served with it) shows
through ``settings get``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from benchmark.device import SETTING_NAMES
from benchmark.devices.adb.settings import (
    KNOB_STATES,
    SECURE_SETTINGS,
    STATES,
    Display,
    knob_targets,
    settings_from_states,
)

NAMESPACES = ("system", "secure", "global")
OVERRIDES = ("wm_density", "wm_size", "night_mode")
# secure settings that only mirror what the system does (navigation_mode mirrors the navbar overlay):
# writing them changes nothing, the phone puts them back
MIRRORS = SECURE_SETTINGS
_KNOB_OF = {state: knob for knob, states in KNOB_STATES.items() for state in states}


class PhoneSettings:
    """``device`` is the phone's Device (its ``settings`` and ``configure``)."""

    def __init__(self, device: Any, display: Display, defaults: Mapping[str, Mapping[str, str]]):
        self.device = device
        self.display = display
        self.defaults = {ns: dict(defaults.get(ns, {})) for ns in NAMESPACES}
        self.reset()

    def reset(self) -> None:
        self.values: dict[str, dict[str, Optional[str]]] = {ns: dict(self.defaults[ns]) for ns in NAMESPACES}
        self.overrides: dict[str, Optional[str]] = {"wm_density": None, "wm_size": None, "night_mode": "no"}

    # -- the adb_settings view: one raw value per device state ---------------------------------
    @staticmethod
    def _namespace(state: str) -> Optional[str]:
        """Where a device state is stored: a settings namespace, or None for the wm / uimode overrides."""
        return None if state in OVERRIDES else ("secure" if state in SECURE_SETTINGS else "system")

    def _state(self, state: str) -> Optional[str]:
        ns = self._namespace(state)
        return self.overrides[state] if ns is None else self.values[ns].get(state)

    def _set_state(self, state: str, raw: Optional[str]) -> None:
        ns = self._namespace(state)
        if ns is None:
            self.overrides[state] = raw
        else:
            self.values[ns][state] = raw

    def _implied(self) -> Any:
        return settings_from_states({s: self._state(s) for s in STATES}, self.display)

    def sync(self) -> None:
        """Rewrite the raw values of every knob the phone changed by itself."""
        current, implied = self.device.settings, self._implied()
        for knob in SETTING_NAMES:
            if getattr(implied, knob) != getattr(current, knob):
                for state, raw in knob_targets(knob, getattr(current, knob), self.display).items():
                    self._set_state(state, raw)

    def _push(self, state: str) -> None:
        """After a raw write: configure the knob that state belongs to, if its meaning changed."""
        knob = _KNOB_OF.get(state)
        if knob is None:
            return
        wanted = getattr(self._implied(), knob)
        if getattr(self.device.settings, knob) != wanted:
            self.device.configure(**{knob: wanted})

    # -- what the tools call --------------------------------------------------------------------
    def count(self, namespace: str) -> int:
        """How many keys ``namespace`` holds."""
        self.sync()
        return len(self.values[namespace])

    def get(self, namespace: str, key: str) -> Optional[str]:
        self.sync()
        return self.values[namespace].get(key)

    def put(self, namespace: str, key: str, value: str) -> None:
        self.sync()
        self.values[namespace][key] = value
        if self._namespace(key) == namespace and key not in MIRRORS:
            self._push(key)

    def delete(self, namespace: str, key: str) -> bool:
        self.sync()
        existed = self.values[namespace].pop(key, None) is not None
        if self._namespace(key) == namespace and key not in MIRRORS:
            self._push(key)
        return existed

    def set_knob(self, knob: str, value: Any) -> None:
        """What a system service changes directly (``cmd overlay`` switching the navigation bar)."""
        if getattr(self.device.settings, knob) != value:
            self.device.configure(**{knob: value})
        self.sync()

    def listing(self, namespace: str) -> dict[str, str]:
        self.sync()
        return {k: v for k, v in sorted(self.values[namespace].items()) if v is not None}

    def override(self, state: str) -> Optional[str]:
        self.sync()
        return self.overrides[state]

    def set_override(self, state: str, raw: Optional[str]) -> None:
        self.sync()
        self.overrides[state] = raw
        self._push(state)
