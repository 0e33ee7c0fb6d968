"""AdbDevice against a recording fake of the adbutils device: observe, every action,
every setting, snapshot/restore, retries and error messages."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout
from loguru import logger

from tests.support.adb_fake import FIXTURES, FakePhone
from benchmark.device import ActionError, Device, DeviceError, DeviceSettings
from benchmark.devices import AdbDevice
from benchmark.devices.adb import cleanup as adb_cleanup
from benchmark.devices.adb import commands as cmd
from ttir.core.types import Action


@pytest.fixture
def phone() -> FakePhone:
    return FakePhone()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make(phone, sleeps, tmp_path):
    made: list[AdbDevice] = []

    def build(p: FakePhone = phone, **kw) -> AdbDevice:
        kw.setdefault("settle_seconds", 0)
        kw.setdefault("action_settle_seconds", 0)
        kw.setdefault("journal_dir", tmp_path / "journal")
        d = AdbDevice(adb_device=p, sleep=sleeps.append, **kw)
        made.append(d)
        return d

    yield build
    for d in made:
        adb_cleanup.unregister(id(d))


def test_is_a_device(make):
    assert isinstance(make(), Device)


# ---------------------------------------------------------------- observe


def test_observe_reads_screen_tree_and_foreground(make, phone):
    records: list[str] = []
    logger.enable("benchmark")
    sink = logger.add(lambda m: records.append(str(m)), level="DEBUG")
    try:
        obs = make().observe()
    finally:
        logger.remove(sink)
        logger.disable("benchmark")
    assert phone.calls == [cmd.SCREENCAP, cmd.UI_DUMP, cmd.FOREGROUND_WINDOW]
    assert obs.screenshot.size == (1080, 2400) == obs.screen_size
    assert obs.orientation == "portrait"
    assert len(obs.elements) == 6 and obs.elements[2].editable and obs.elements[2].focused
    assert obs.xml.startswith("<?xml") and "hierchary" not in obs.xml
    assert obs.foreground == (
        "com.simplemobiletools.smsmessenger/com.simplemobiletools.smsmessenger.activities.NewConversationActivity"
    )
    cost = [r for r in records if "observe:" in r]
    assert cost and "screencap" in cost[0] and "uiautomator dump" in cost[0] and "6 nodes" in cost[0]


def test_observe_retries_a_busy_uiautomator(make, phone, sleeps):
    phone.dump_failures = 2
    obs = make().observe()
    assert len(obs.elements) == 6
    assert phone.calls.count(cmd.UI_DUMP) == 3 and sleeps.count(0.5) == 2


def test_observe_falls_back_to_the_screenshot_alone(make, phone):
    phone.dump_failures = 99
    obs = make().observe()
    assert obs.elements == [] and obs.xml is None and obs.screenshot is not None


def test_foreground_falls_back_to_dumpsys_activity(make, phone):
    phone.window = (FIXTURES / "adb" / "dumpsys_window_transition.txt").read_text()
    phone.activity = (FIXTURES / "adb" / "dumpsys_activity_android11.txt").read_text()
    assert make().observe().foreground == "com.android.chrome/com.google.android.apps.chrome.Main"
    assert phone.calls[-1] == cmd.FOREGROUND_ACTIVITY


def test_landscape_observation(make, phone):
    d = make()
    d.configure(orientation="landscape")
    obs = d.observe()
    assert obs.screen_size == (2400, 1080) and obs.orientation == "landscape"


# ---------------------------------------------------------------- actions


def _inputs(phone: FakePhone, since: int) -> list[str]:
    return phone.calls[since:]


@pytest.mark.parametrize(
    "action,expected",
    [
        (Action(action_type="click", index=3), ["input tap 996 326"]),
        (Action(action_type="click", x=10, y=20), ["input tap 10 20"]),
        (Action(action_type="long_press", index=3), ["input swipe 996 326 996 326 1000"]),
        (Action(action_type="double_tap", x=5, y=6), ["input tap 5 6 && input tap 5 6"]),
        (Action(action_type="swipe", x=540, y=2000, x2=540, y2=500, duration_ms=250),
         ["input swipe 540 2000 540 500 250"]),
        (Action(action_type="scroll", direction="down"), ["input swipe 540 1920 540 480 400"]),
        (Action(action_type="navigate_back"), ["input keyevent KEYCODE_BACK"]),
        (Action(action_type="navigate_home"), ["input keyevent KEYCODE_HOME"]),
        (Action(action_type="app_switch"), ["input keyevent KEYCODE_APP_SWITCH"]),
        (Action(action_type="keyboard_enter"), ["input keyevent KEYCODE_ENTER"]),
        (Action(action_type="input_text", text="Ann O'Neil"), ["input text 'Ann%sO'\"'\"'Neil'"]),
        (Action(action_type="input_text", text="x", index=2, clear_text=True),
         ["getprop ro.build.version.sdk", "input tap 477 326", "input keycombination KEYCODE_CTRL_LEFT KEYCODE_A", "input keyevent KEYCODE_DEL",
          "input text x"]),
        (Action(action_type="open_app", app_name="Settings"),
         ["monkey -p com.android.settings -c android.intent.category.LAUNCHER 1"]),
        (Action(action_type="open_app", app_name="contacts"),
         ["pm list packages", "monkey -p com.google.android.contacts -c android.intent.category.LAUNCHER 1"]),
        (Action(action_type="open_app", app_name="com.android.chrome"),
         ["monkey -p com.android.chrome -c android.intent.category.LAUNCHER 1"]),
        (Action(action_type="wait", seconds=2.5), []),
        (Action(action_type="status", goal_status="complete"), []),
        (Action(action_type="answer", text="42"), []),
    ],
)
def test_every_action_as_exact_commands(make, phone, action, expected):
    d = make()
    d.observe()
    since = len(phone.calls)
    d.execute(action)
    assert _inputs(phone, since) == expected
    assert d.actions == 1


def test_wait_answer_and_settle(make, phone, sleeps):
    d = make(action_settle_seconds=0.25)
    d.observe()
    d.execute(Action(action_type="wait", seconds=2.5))
    d.execute(Action(action_type="answer", text="42"))
    d.execute(Action(action_type="navigate_back"))
    assert sleeps == [2.5, 0.25] and d.answers == ["42"]


def test_text_the_input_command_cannot_type_is_refused_and_nothing_is_sent(make, phone):
    d = make()
    d.observe()
    since = len(phone.calls)
    with pytest.raises(ActionError, match="'é' \\(U\\+00E9\\)"):
        d.execute(Action(action_type="input_text", text="Zoë 👋 é", index=2))
    assert phone.calls[since:] == [] and d.actions == 0


def test_impossible_touches_are_refused_and_nothing_is_sent(make, phone):
    d = make()
    d.observe()
    since = len(phone.calls)
    with pytest.raises(ActionError, match="off-screen; the screen is 1080x2400"):
        d.execute(Action(action_type="click", x=2000, y=10))
    with pytest.raises(ActionError, match="index=40 is out of range"):
        d.execute(Action(action_type="long_press", index=40))
    assert phone.calls[since:] == []


def test_actions_before_any_observation_use_the_current_display(make, phone):
    d = make()
    d.configure(orientation="landscape")
    since = len(phone.calls)
    d.execute(Action(action_type="click", x=2300, y=1000))
    assert phone.calls[since:] == [cmd.DISPLAY_CURRENT, "input tap 2300 1000"]
    with pytest.raises(ActionError, match="observe\\(\\) first"):
        d.execute(Action(action_type="click", index=1))


def test_open_app_errors_and_user_extensions(make, phone):
    d = make(apps={"notes": "com.example.notes/.MainActivity", "Work Mail": ["com.x.mail", "com.y.mail"]})
    with pytest.raises(ActionError, match="app_name='Frobnicator' is not a known app or package; known apps: notes"):
        d.execute(Action(action_type="open_app", app_name="Frobnicator"))
    with pytest.raises(ActionError, match="is it installed"):
        d.execute(Action(action_type="open_app", app_name="Markor"))
    with pytest.raises(ActionError, match="none of its packages"):
        d.execute(Action(action_type="open_app", app_name="work mail"))
    phone.packages.add("com.example.notes")
    d.launch("Notes")
    assert phone.calls[-1] == "am start -n com.example.notes/.MainActivity"
    with pytest.raises(ValueError, match="apps\\['bad'\\]"):
        AdbDevice(adb_device=phone, apps={"bad": "not a package; reboot"}, journal_dir=None)


def test_refused_input_commands_raise(make, phone):
    d = make(apps=None)
    phone.responses["input keyevent KEYCODE_BACK"] = "Exception occurred while executing 'keyevent':\njava.lang.SecurityException: Injecting input events requires INJECT_EVENTS"
    with pytest.raises(ActionError, match="INJECT_EVENTS"):
        d.execute(Action(action_type="navigate_back"))


# ---------------------------------------------------------------- settings


def test_configure_snapshots_before_changing(make, phone):
    d = make()
    d.configure(font_scale=1.35, orientation="landscape", dark_theme=True)
    writes = [i for i, c in enumerate(phone.calls) if c.startswith(("settings put", "wm density ", "cmd uimode night "))]
    for state_read in ("settings get system font_scale", "settings get system user_rotation",
                       "settings get system accelerometer_rotation", "cmd uimode night"):
        i = phone.calls.index(state_read)
        assert i < min(w for w in writes if w > i - 1), state_read
    assert "settings put system font_scale 1.35" in phone.calls
    assert phone.system["font_scale"] == "1.35" and phone.system["user_rotation"] == "1"
    assert phone.system["accelerometer_rotation"] == "0" and phone.night == "yes"
    assert d.settings.font_scale == 1.35 and d.settings.orientation == "landscape"


def test_scale_knobs_multiply_the_physical_screen(make, phone):
    phone.density_override = 480  # the user's own override: not the base
    d = make()
    d.configure(density_scale=0.76, size_scale=0.88)
    assert "wm density 319" in phone.calls and "wm size 950x2112" in phone.calls
    d.close()
    assert phone.density_override == 480 and phone.size_override is None
    assert phone.calls[-2:] == ["wm size reset", "wm density 480"]


def test_every_knob_is_restored_on_close(make, phone):
    before = phone.state()
    d = make()
    d.configure(font_scale=1.35, density_scale=1.2, size_scale=0.8, dark_theme=True, orientation="landscape",
                time_format=24, date_format="EU", brightness=250)
    assert phone.state() != before
    d.close()
    assert phone.state() == before
    restore = phone.calls[phone.calls.index("settings put system screen_brightness 250") + 1:]
    assert set(restore) == {
        "settings put system font_scale 1.0", "wm density reset", "wm size reset", "cmd uimode night no",
        "settings put system accelerometer_rotation 1", "settings put system user_rotation 0",
        "settings delete system time_12_24", "settings delete system date_format",
        "settings put system screen_brightness_mode 1", "settings put system screen_brightness 102",
    }
    assert d.closed and adb_cleanup.registered() == 0
    n = len(phone.calls)
    d.close()  # nothing left to restore: no commands
    assert len(phone.calls) == n


def test_originals_are_kept_across_several_changes(make, phone):
    d = make()
    d.configure(font_scale=1.2)
    d.configure(font_scale=1.35)
    assert phone.calls.count("settings get system font_scale") == 1
    d.close()
    assert phone.system["font_scale"] == "1.0"


def test_reset_goes_home_and_restores(make, phone):
    d = make()
    d.configure(font_scale=1.35)
    obs = d.reset()
    assert "input keyevent KEYCODE_HOME" in phone.calls and phone.system["font_scale"] == "1.0"
    assert obs.elements and d.actions == 0


def test_reset_with_a_simulator_only_task_says_so(make, phone):
    from benchmark import make_task

    d = make()
    with pytest.raises(DeviceError, match="ContactsAddContact is simulator-only"):
        d.reset(make_task("ContactsAddContact"))
    assert phone.calls == []

    class SmokeTask:
        name = "Smoke"
        supports_real_device = True
        seen = None

        def setup(self, device):
            SmokeTask.seen = device

    assert d.reset(SmokeTask()).elements and SmokeTask.seen is d


def test_settings_are_read_from_the_phone(make, phone):
    phone.system.update(font_scale="1.15", accelerometer_rotation="0", user_rotation="1", time_12_24="24",
                        screen_brightness="200")
    phone.night = "yes"
    phone.size_override = (972, 2160)
    assert make().settings == DeviceSettings(font_scale=1.15, size_scale=0.9, dark_theme=True,
                                             orientation="landscape", time_format=24, brightness=200)


def test_bad_settings_are_refused_before_anything_is_sent(make, phone):
    d = make()
    with pytest.raises(ValueError, match="unknown device setting"):
        d.configure(volume=3)
    with pytest.raises(ValueError, match="font_scale"):
        d.configure(font_scale=9)
    assert phone.calls == []


def test_a_state_that_cannot_be_read_is_not_changed(make, phone):
    phone.responses["cmd uimode night"] = "cmd: Can't find service: uimode"
    d = make()
    with pytest.raises(DeviceError, match="cannot read night_mode.*Android 10"):
        d.configure(dark_theme=True)
    assert not any(c.startswith("cmd uimode night ") for c in phone.calls)


def test_a_failed_write_still_restores_what_was_captured(make, phone):
    phone.responses["settings put system user_rotation 1"] = "Exception occurred while executing 'put'"
    d = make()
    with pytest.raises(DeviceError, match="user_rotation"):
        d.configure(orientation="landscape")
    assert phone.system["accelerometer_rotation"] == "0"
    d.close()
    assert phone.system["accelerometer_rotation"] == "1"


def test_with_block_restores_when_an_exception_escapes(make, phone):
    before = phone.state()
    with pytest.raises(RuntimeError, match="agent crashed"):
        with make() as d:
            d.configure(font_scale=1.35, orientation="landscape")
            raise RuntimeError("agent crashed")
    assert phone.state() == before and d.closed


def test_restore_problems_are_reported_with_manual_commands(make, phone):
    d = make()
    d.configure(font_scale=1.35)
    phone.responses["settings put system font_scale 1.0"] = "Exception occurred while executing 'put'"
    with pytest.raises(DeviceError, match="could not restore font_scale.*adb -s FAKE0001 shell settings put system font_scale 1.0"):
        d.close()
    assert adb_cleanup.registered() == 1  # still registered: exit handlers try again
    del phone.responses["settings put system font_scale 1.0"]
    d.close()
    assert phone.system["font_scale"] == "1.0" and adb_cleanup.registered() == 0


def test_settle_time_after_changes(make, phone, sleeps):
    d = make(settle_seconds=1.5)
    d.configure(font_scale=1.2)
    assert sleeps == [1.5]
    d.restore_settings()
    assert sleeps == [1.5, 1.5]


# ---------------------------------------------------------------- journal


def test_journal_mirrors_the_snapshot(make, phone, tmp_path):
    d = make()
    d.configure(font_scale=1.35)
    files = list((tmp_path / "journal").glob("FAKE0001.*.json"))
    assert len(files) == 1
    assert json.loads(files[0].read_text())["originals"] == {"font_scale": "1.0"}
    d.close()
    assert not list((tmp_path / "journal").glob("*.json"))


def test_settings_left_by_a_killed_run_are_restored_by_the_next(make, phone, tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    jdir = tmp_path / "journal"
    jdir.mkdir()
    (jdir / f"FAKE0001.{pid}.json").write_text(json.dumps(
        {"serial": "FAKE0001", "pid": pid, "written": 1.0,
         "originals": {"font_scale": "1.0", "user_rotation": "0", "wm_size": None}}))
    phone.system.update(font_scale="1.35", user_rotation="1")
    phone.size_override = (864, 1920)
    make()
    assert phone.system["font_scale"] == "1.0" and phone.system["user_rotation"] == "0"
    assert phone.size_override is None
    assert not list(jdir.glob("*.json"))


# ---------------------------------------------------------------- transport


def test_transient_adb_errors_are_retried_with_backoff(make, phone, sleeps):
    d = make(backoff_seconds=0.5)
    phone.errors = [AdbTimeout("adb read timeout"), AdbConnectionError("connect to adb server failed")]
    assert d.observe().elements
    assert sleeps[:2] == [0.5, 1.0]


def test_persistent_errors_become_device_errors(make, phone):
    d = make(attempts=2, backoff_seconds=0)
    phone.errors = [AdbError("closed")] * 2
    with pytest.raises(DeviceError, match="failed after 2 attempt"):
        d.observe()


def test_unauthorised_is_explained_and_not_retried(make, phone):
    d = make()
    phone.errors = [AdbError("device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set")]
    with pytest.raises(DeviceError, match="FAKE0001 is unauthorised.*Allow USB debugging"):
        d.execute(Action(action_type="navigate_home"))
    assert len(phone.calls) == 1


def test_a_device_that_went_away_is_explained(make, phone):
    d = make(attempts=3, backoff_seconds=0)
    phone.errors = [AdbError("device 'FAKE0001' not found")] * 3
    with pytest.raises(DeviceError, match="FAKE0001 is not attached"):
        d.observe()
    assert len(phone.calls) == 3


@pytest.mark.parametrize("serial", [3, {}, ["emulator-5554"]])
def test_a_serial_that_is_not_text_is_refused_before_any_adb_call(serial):
    # {} was read as "no serial" (the one phone attached), 3 as a phone named "3"
    from benchmark import AdbDevice

    with pytest.raises(TypeError, match=r"expected the phone's serial as `adb devices` lists it"):
        AdbDevice(serial)
