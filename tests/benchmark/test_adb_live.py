"""Smoke test on a real phone or emulator. Runs only when TTIR_ADB_SERIAL is set:

    TTIR_ADB_SERIAL=emulator-5554 python -m pytest tests/benchmark/test_adb_live.py -q

It taps and types in the Settings app and turns every state knob (restoring each
one); the phone is left as it was. Keep the screen on and unlocked.
"""

from __future__ import annotations

import os

import pytest

from benchmark.device import SETTING_NAMES
from benchmark.devices import AdbDevice
from benchmark.devices.adb.doctor import probe_value
from benchmark.devices.adb.settings import KNOB_STATES, STATES, knob_targets, same_value
from ttir.core.types import Action

SERIAL = os.environ.get("TTIR_ADB_SERIAL")
pytestmark = pytest.mark.skipif(not SERIAL, reason="set TTIR_ADB_SERIAL to run the real-device smoke test")


@pytest.fixture(scope="module")
def device():
    with AdbDevice(SERIAL, settle_seconds=1.5, action_settle_seconds=1.0) as d:
        yield d


def _states(d: AdbDevice) -> dict:
    out = {}
    for s in STATES:
        try:
            out[s] = d.read_state(s)
        except Exception:  # noqa: BLE001 - a state this phone cannot report is left out
            out[s] = "<unreadable>"
    return out


def test_observe(device):
    obs = device.observe()
    assert obs.screenshot is not None and obs.elements
    assert obs.screen_size == obs.screenshot.size
    assert obs.foreground and "/" in obs.foreground


def test_tap_and_type_in_settings_search(device):
    device.execute(Action(action_type="navigate_home"))
    device.execute(Action(action_type="open_app", app_name="settings"))
    obs = device.observe()
    assert obs.package == "com.android.settings"
    search = [i for i, e in enumerate(obs.elements)
              if "search" in (e.text + e.content_desc + e.resource_id).lower() and (e.clickable or e.editable)]
    if not search:
        pytest.skip("this Settings app shows no search box to type into")
    device.execute(Action(action_type="click", index=search[0]))
    obs = device.observe()
    fields = [i for i, e in enumerate(obs.elements) if e.editable]
    assert fields, "tapping search should show a text field"
    device.execute(Action(action_type="input_text", text="wi fi", index=fields[0], clear_text=True))
    obs = device.observe()
    assert any(e.editable and e.text == "wi fi" for e in obs.elements)
    device.execute(Action(action_type="navigate_back"))
    device.execute(Action(action_type="navigate_home"))


@pytest.mark.parametrize("knob", SETTING_NAMES)
def test_each_setting_is_set_and_restored(device, knob):
    before = _states(device)
    value = probe_value(knob, device.settings)
    device.configure(**{knob: value})
    wanted = knob_targets(knob, value, device.display)
    for state in KNOB_STATES[knob]:
        assert same_value(state, device.read_state(state), wanted[state]), state
    device.restore_settings()
    after = _states(device)
    assert all(same_value(s, after[s], before[s]) for s in STATES), (before, after)
