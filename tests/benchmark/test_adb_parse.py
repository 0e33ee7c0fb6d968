"""Parsing real-format output: dumpsys across Android versions, wm, settings, UI dumps."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmark.devices.adb.parse import (
    command_failed,
    explain_adb_error,
    extract_dump,
    parse_current_display,
    parse_foreground,
    parse_night_mode,
    parse_packages,
    parse_sdk,
    parse_setting,
    parse_wm_density,
    parse_wm_size,
)
from ttir.core.types import Observation

ADB = Path(__file__).resolve().parents[1] / "fixtures" / "adb"


def read(name: str) -> str:
    return (ADB / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "fixture,expected",
    [
        ("dumpsys_window_android9.txt", "com.android.settings/com.android.settings.Settings"),
        ("dumpsys_window_android12.txt",
         "com.google.android.apps.nexuslauncher/com.google.android.apps.nexuslauncher.NexusLauncherActivity"),
        ("dumpsys_window_android14.txt",
         "com.simplemobiletools.smsmessenger/com.simplemobiletools.smsmessenger.activities.NewConversationActivity"),
        # the focused window is an ANR dialog (no activity): the focused app is reported
        ("dumpsys_window_anr_android13.txt", "com.example.slowapp/com.example.slowapp.MainActivity"),
    ],
)
def test_foreground_from_dumpsys_window(fixture, expected):
    assert parse_foreground(read(fixture)) == expected


def test_foreground_from_grepped_lines_and_relative_activities():
    grepped = "  mFocusedApp=AppWindowToken{9d0f7e8 token=Token{3c1a2b7 ActivityRecord{e4f1c46 u0 com.android.settings/.Settings t12}}}"
    assert parse_foreground(grepped) == "com.android.settings/com.android.settings.Settings"


def test_foreground_falls_back_to_dumpsys_activity():
    window = read("dumpsys_window_transition.txt")
    assert parse_foreground(window) is None
    assert parse_foreground(window, read("dumpsys_activity_android11.txt")) == (
        "com.android.chrome/com.google.android.apps.chrome.Main"
    )
    android10 = "  topResumedActivity=ActivityRecord{4c1d2e3 u0 com.android.settings/.SubSettings t8}"
    assert parse_foreground("", android10) == "com.android.settings/com.android.settings.SubSettings"
    assert parse_foreground("", "") is None


def test_wm_output():
    assert parse_wm_size("Physical size: 1080x2400") == ((1080, 2400), None)
    assert parse_wm_size("Physical size: 1080x2400\nOverride size: 950x2112") == ((1080, 2400), (950, 2112))
    assert parse_wm_density("Physical density: 420\nOverride density: 319") == (420, 319)
    assert parse_wm_density("Physical density: 440") == (440, None)
    with pytest.raises(ValueError, match="Physical size"):
        parse_wm_size("Error: no display")
    assert parse_current_display("  init=1080x2400 420dpi cur=2400x1080 app=2274x1080 rng=1080x1017-2274x2211") == (
        2400, 1080)
    assert parse_current_display("nothing") is None


def test_settings_night_sdk_packages():
    assert parse_setting("1.35") == "1.35"
    assert parse_setting("null") is None
    assert parse_setting("") is None
    with pytest.raises(ValueError, match="settings get"):
        parse_setting("java.lang.SecurityException: Permission denial\n\tat ...")
    assert parse_night_mode("Night mode: yes") == "yes"
    with pytest.raises(ValueError, match="uimode"):
        parse_night_mode("cmd: Can't find service: uimode")
    assert parse_sdk("34\n") == 34
    with pytest.raises(ValueError, match="API level"):
        parse_sdk("")
    assert parse_packages("package:com.a.b\npackage:com.c.d\n") == {"com.a.b", "com.c.d"}


@pytest.mark.parametrize("name", ["permission_dialog", "anr_dialog", "keyboard_form", "landscape_settings"])
def test_recorded_dumps_survive_the_dump_command_output(dump, name):
    xml = dump(name)
    raw = f"UI hierchary dumped to: /data/local/tmp/ttir_window_dump.xml\n{xml}"
    extracted = extract_dump(raw)
    assert extracted is not None and extracted.startswith("<?xml")
    obs = Observation.from_xml(extracted)
    assert obs.elements and [e.model_dump() for e in obs.elements] == [
        e.model_dump() for e in Observation.from_xml(xml).elements
    ]


def test_failed_dumps_are_recognised():
    assert extract_dump("ERROR: could not get idle state.") is None
    assert extract_dump("cat: /data/local/tmp/x.xml: No such file or directory") is None
    assert extract_dump("<?xml version='1.0'?><hierarchy rotation=\"0\"><node") is None  # truncated


def test_landscape_dump_orientation(dump):
    obs = Observation.from_xml(extract_dump(dump("landscape_settings")))
    assert obs.orientation == "landscape" and obs.screen_size == (2400, 1080)


def test_command_failures_are_recognised():
    assert command_failed("") is None
    assert command_failed("Starting: Intent { cmp=com.android.settings/.Settings }") is None
    assert command_failed("Events injected: 1") is None
    assert command_failed("** No activities found to run, monkey aborted.")
    assert command_failed("Error: Activity class {a.b/.C} does not exist.")
    assert command_failed("Exception occurred while executing 'put':\njava.lang.SecurityException")
    assert command_failed("/system/bin/sh: cmd: not found")


def test_adb_errors_are_explained():
    text, retry = explain_adb_error("device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set", "R58M")
    assert "R58M is unauthorised" in text and "Allow USB debugging" in text and retry is False
    text, retry = explain_adb_error("device offline", "emulator-5554")
    assert "offline" in text and "replug" in text and retry is True
    text, _ = explain_adb_error("device 'XYZ' not found", "XYZ")
    assert "not attached" in text and "adb connect" in text
    assert explain_adb_error("connection reset", "X") is None
