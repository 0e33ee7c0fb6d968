"""Command construction for every action and every setting, as exact shell strings."""

from __future__ import annotations

import shlex

import pytest

from benchmark.device import ActionError
from benchmark.devices.adb import commands as cmd
from benchmark.devices.adb.actions import FOCUS_PAUSE_SECONDS, Pause, Screen, plan
from benchmark.devices.adb.settings import Display, STATES, knob_commands, write_command
from ttir.core.types import Action, Observation

SCREEN = Screen((1080, 2400))
DISPLAY = Display((1080, 2400), 420)


def typed_by_phone(commands: list[str]) -> str:
    """What the phone types for these commands: the device shell's word splitting,
    then `input text`'s own rule (``%s`` is a space), Enter/Tab key presses."""
    out = ""
    for c in commands:
        argv = shlex.split(c)
        if argv[:2] == ["input", "text"]:
            assert len(argv) == 3, f"text must reach input as ONE argument: {c!r} -> {argv}"
            buf: list[str] = []
            escape = False
            for ch in argv[2]:  # mirrors InputShellCommand.sendText: "%s" becomes a space
                if escape:
                    escape = False
                    if ch == "s":
                        buf[-1] = " "
                        continue
                buf.append(ch)
                escape = ch == "%"
            out += "".join(buf)
        elif argv[:3] == ["input", "keyevent", "KEYCODE_ENTER"]:
            out += "\n"
        elif argv[:3] == ["input", "keyevent", "KEYCODE_TAB"]:
            out += "\t"
        else:
            raise AssertionError(f"unexpected command while typing: {c!r}")
    return out


@pytest.mark.parametrize(
    "text",
    [
        "Hello world",
        "it's \"quoted\" & <tagged> | piped; $HOME `whoami` (sub) #hash \\back*star?~!",
        "100%sure, 50% off, %%s and % s",
        "  leading and trailing  ",
        "line one\nline two\tcolumn",
        "x" * 100 + " " + "y" * 40,
        "-n looks like an option",
        "",
    ],
)
def test_text_reaches_the_phone_exactly(text):
    assert typed_by_phone(cmd.text_commands(text)) == text


def test_text_exact_strings():
    assert cmd.text_commands("Hello world") == ["input text Hello%sworld"]
    assert cmd.text_commands("it's") == ["input text 'it'\"'\"'s'"]
    assert cmd.text_commands("a;b && c") == ["input text 'a;b%s&&%sc'"]
    # a literal "%s" cannot be typed in one go: split after the '%'
    assert cmd.text_commands("5%s") == ["input text 5%", "input text s"]
    assert cmd.text_commands("a\nb") == ["input text a", "input keyevent KEYCODE_ENTER", "input text b"]
    pieces = cmd.text_commands("z" * (cmd.TEXT_CHUNK + 1))
    assert pieces == [f"input text {'z' * cmd.TEXT_CHUNK}", "input text z"]


@pytest.mark.parametrize("text,bad", [("café", "é"), ("hi 👋", "👋"), ("日本", "日"), ("a\x07b", "\x07")])
def test_untypeable_text_is_refused_with_the_characters_named(text, bad):
    with pytest.raises(cmd.UntypeableText) as err:
        cmd.text_commands(text)
    assert bad in err.value.bad
    assert f"U+{ord(bad):04X}" in str(err.value) and "printable ASCII" in str(err.value)


def test_touch_and_key_commands():
    assert cmd.tap(540, 1200) == "input tap 540 1200"
    assert cmd.swipe(1, 2, 3, 4, 500) == "input swipe 1 2 3 4 500"
    assert cmd.long_press(10, 20) == "input swipe 10 20 10 20 1000"
    assert cmd.double_tap(5, 6) == "input tap 5 6 && input tap 5 6"
    assert cmd.keyevent("KEYCODE_BACK") == "input keyevent KEYCODE_BACK"
    assert cmd.keycombination("KEYCODE_CTRL_LEFT", "KEYCODE_A") == "input keycombination KEYCODE_CTRL_LEFT KEYCODE_A"
    for bad in ("KEYCODE_A; reboot", "enter", "", "KEYCODE_A KEYCODE_B"):
        with pytest.raises(ValueError, match="keycode="):
            cmd.keyevent(bad)
    with pytest.raises(ValueError, match="x=-1"):
        cmd.tap(-1, 3)


def test_clear_text_depends_on_android_version():
    assert cmd.clear_text_commands(34) == ["input keycombination KEYCODE_CTRL_LEFT KEYCODE_A", "input keyevent KEYCODE_DEL"]
    old = cmd.clear_text_commands(30, known_length=3)
    assert old == ["input keyevent KEYCODE_MOVE_END" + " KEYCODE_DEL" * 7]
    assert cmd.clear_text_commands(28)[0].count("KEYCODE_DEL") == cmd.CLEAR_FALLBACK_DELETES


def test_app_launch_commands_validate_names():
    assert cmd.launch_package("com.android.settings") == (
        "monkey -p com.android.settings -c android.intent.category.LAUNCHER 1"
    )
    assert cmd.launch_component("com.android.settings/.Settings") == "am start -n com.android.settings/.Settings"
    assert cmd.launch_component("com.x.y/com.x.y.A$Inner") == "am start -n 'com.x.y/com.x.y.A$Inner'"
    for bad in ("settings", "com.x; reboot", "com.x.y && rm -rf /"):
        with pytest.raises(ValueError, match="package="):
            cmd.launch_package(bad)
    with pytest.raises(ValueError, match="component="):
        cmd.launch_component("com.x.y/;reboot")


def test_settings_and_wm_commands():
    assert cmd.settings_get("system", "font_scale") == "settings get system font_scale"
    assert cmd.settings_put("system", "font_scale", "1.35") == "settings put system font_scale 1.35"
    assert cmd.settings_delete("system", "time_12_24") == "settings delete system time_12_24"
    assert cmd.wm_size((950, 2112)) == "wm size 950x2112"
    assert cmd.wm_size(None) == "wm size reset"
    assert cmd.wm_density(319) == "wm density 319"
    assert cmd.wm_density(None) == "wm density reset"
    assert cmd.night_mode("yes") == "cmd uimode night yes"
    with pytest.raises(ValueError, match="value='1; reboot'"):
        cmd.settings_put("system", "font_scale", "1; reboot")
    with pytest.raises(ValueError, match="namespace="):
        cmd.settings_get("vendor", "x")


@pytest.mark.parametrize(
    "knob,value,expected",
    [
        ("font_scale", 1.35, ["settings put system font_scale 1.35"]),
        ("font_scale", 1, ["settings put system font_scale 1.0"]),
        ("density_scale", 0.76, ["wm density 319"]),
        ("density_scale", 1.0, ["wm density reset"]),
        ("size_scale", 0.88, ["wm size 950x2112"]),
        ("size_scale", 1.0, ["wm size reset"]),
        ("dark_theme", True, ["cmd uimode night yes"]),
        ("dark_theme", False, ["cmd uimode night no"]),
        ("orientation", "landscape",
         ["settings put system accelerometer_rotation 0", "settings put system user_rotation 1"]),
        ("orientation", "portrait",
         ["settings put system accelerometer_rotation 0", "settings put system user_rotation 0"]),
        ("time_format", 24, ["settings put system time_12_24 24"]),
        ("time_format", 12, ["settings put system time_12_24 12"]),
        ("date_format", "EU", ["settings put system date_format dd/MM/yyyy"]),
        ("date_format", "US", ["settings put system date_format MM/dd/yyyy"]),
        ("brightness", 200, ["settings put system screen_brightness_mode 0", "settings put system screen_brightness 200"]),
        ("navigation_mode", "gesture", ["cmd overlay enable-exclusive --category com.android.internal.systemui.navbar.gestural"]),
        ("navigation_mode", "three_button",
         ["cmd overlay enable-exclusive --category com.android.internal.systemui.navbar.threebutton"]),
        ("locale", "de-DE", ["settings put system system_locales de-DE"]),
    ],
)
def test_knob_commands(knob, value, expected):
    assert knob_commands(knob, value, DISPLAY) == expected


def test_orientation_on_a_naturally_landscape_tablet():
    tablet = Display((2560, 1600), 320)
    assert knob_commands("orientation", "portrait", tablet)[1] == "settings put system user_rotation 1"
    assert knob_commands("orientation", "landscape", tablet)[1] == "settings put system user_rotation 0"


def test_restore_commands_for_unset_originals():
    assert {s: write_command(s, None) for s in STATES if s != "night_mode"} == {
        "font_scale": "settings delete system font_scale",
        "accelerometer_rotation": "settings delete system accelerometer_rotation",
        "user_rotation": "settings delete system user_rotation",
        "time_12_24": "settings delete system time_12_24",
        "date_format": "settings delete system date_format",
        "screen_brightness_mode": "settings delete system screen_brightness_mode",
        "screen_brightness": "settings delete system screen_brightness",
        "system_locales": "settings delete system system_locales",
        "navigation_mode": "cmd overlay enable-exclusive --category com.android.internal.systemui.navbar.threebutton",
        "wm_density": "wm density reset",
        "wm_size": "wm size reset",
    }
    assert write_command("wm_size", "720x1600") == "wm size 720x1600"
    assert write_command("night_mode", "auto") == "cmd uimode night auto"
    # navigation_mode reads as a secure setting but is restored by switching the overlay back
    assert write_command("navigation_mode", "2") == "cmd overlay enable-exclusive --category com.android.internal.systemui.navbar.gestural"
    with pytest.raises(ValueError, match="navigation_mode='7'"):
        write_command("navigation_mode", "7")


# ---------------------------------------------------------------- actions → commands


def _obs(dump) -> Observation:
    return Observation.from_xml(dump("keyboard_form"))


def test_plan_touch_actions():
    assert plan(Action(action_type="click", x=540, y=1200), SCREEN, sdk=34) == ["input tap 540 1200"]
    assert plan(Action(action_type="double_tap", x=1, y=2), SCREEN, sdk=34) == ["input tap 1 2 && input tap 1 2"]
    assert plan(Action(action_type="long_press", x=7, y=8), SCREEN, sdk=34) == ["input swipe 7 8 7 8 1000"]
    assert plan(Action(action_type="long_press", x=7, y=8, duration_ms=2500), SCREEN, sdk=34) == [
        "input swipe 7 8 7 8 2500"
    ]
    assert plan(Action(action_type="swipe", x=500, y=2000, x2=500, y2=400), SCREEN, sdk=34) == [
        "input swipe 500 2000 500 400 300"
    ]


def test_plan_keys():
    assert plan(Action(action_type="navigate_back"), SCREEN, sdk=34) == ["input keyevent KEYCODE_BACK"]
    assert plan(Action(action_type="navigate_home"), SCREEN, sdk=34) == ["input keyevent KEYCODE_HOME"]
    assert plan(Action(action_type="app_switch"), SCREEN, sdk=34) == ["input keyevent KEYCODE_APP_SWITCH"]
    assert plan(Action(action_type="keyboard_enter"), SCREEN, sdk=34) == ["input keyevent KEYCODE_ENTER"]
    assert plan(Action(action_type="keyboard_enter", keycode="KEYCODE_SEARCH"), SCREEN, sdk=34) == [
        "input keyevent KEYCODE_SEARCH"
    ]
    with pytest.raises(ActionError, match="keycode="):
        plan(Action(action_type="keyboard_enter", keycode="66; reboot"), SCREEN, sdk=34)


@pytest.mark.parametrize(
    "direction,expected",
    [
        ("down", "input swipe 540 1920 540 480 400"),  # 60 % of the screen, centred: as SimDevice scrolls
        ("up", "input swipe 540 480 540 1920 400"),
        ("right", "input swipe 864 1200 216 1200 400"),
        ("left", "input swipe 216 1200 864 1200 400"),
    ],
)
def test_plan_scroll_whole_screen(direction, expected):
    assert plan(Action(action_type="scroll", direction=direction), SCREEN, sdk=34) == [expected]


def test_plan_scroll_inside_an_element(dump):
    obs = Observation.from_xml(dump("landscape_settings"))
    screen = Screen(obs.screen_size, obs.elements)
    i = next(k for k, e in enumerate(obs.elements) if e.scrollable)  # recycler [0,242][2274,1080]
    assert plan(Action(action_type="scroll", direction="down", index=i), screen, sdk=34) == [
        "input swipe 1137 912 1137 409 400"
    ]
    # no target: the largest scrollable list on screen, not the whole screen
    assert plan(Action(action_type="scroll", direction="down"), screen, sdk=34) == plan(
        Action(action_type="scroll", direction="down", index=i), screen, sdk=34)


def test_plan_resolves_index_targets_against_the_last_observation(dump):
    obs = _obs(dump)
    screen = Screen(obs.screen_size, obs.elements)
    i = next(k for k, e in enumerate(obs.elements) if e.content_desc == "Confirm")  # [933,263][1059,389]
    assert plan(Action(action_type="click", index=i), screen, sdk=34) == ["input tap 996 326"]
    with pytest.raises(ActionError, match="index=99 is out of range: the screen has 6 elements"):
        plan(Action(action_type="click", index=99), screen, sdk=34)
    with pytest.raises(ActionError, match="call observe\\(\\) first"):
        plan(Action(action_type="click", index=0), SCREEN, sdk=34)


def test_plan_refuses_off_screen_points():
    with pytest.raises(ActionError, match=r"\(1080, 5\) is off-screen; the screen is 1080x2400"):
        plan(Action(action_type="click", x=1080, y=5), SCREEN, sdk=34)
    with pytest.raises(ActionError, match="swipe end"):
        plan(Action(action_type="swipe", x=1, y=1, x2=5, y2=2400), SCREEN, sdk=34)
    landscape = Screen((2400, 1080))
    with pytest.raises(ActionError, match="off-screen"):
        plan(Action(action_type="click", x=500, y=2000), landscape, sdk=34)


def test_plan_input_text(dump):
    obs = _obs(dump)
    screen = Screen(obs.screen_size, obs.elements)
    field = next(k for k, e in enumerate(obs.elements) if e.editable)  # [42,263][912,389], focused
    # typing into the focused field
    assert plan(Action(action_type="input_text", text="Bob Lee"), screen, sdk=34) == ["input text Bob%sLee"]
    # with a target: tap it, wait for the keyboard, clear, type
    steps = plan(Action(action_type="input_text", text="hi", index=field, clear_text=True), screen, sdk=34)
    assert steps == [
        "input tap 477 326",
        Pause(FOCUS_PAUSE_SECONDS),
        "input keycombination KEYCODE_CTRL_LEFT KEYCODE_A",
        "input keyevent KEYCODE_DEL",
        "input text hi",
    ]
    # Android < 13: delete the (known) text character by character
    steps = plan(Action(action_type="input_text", text="hi", index=field, clear_text=True), screen, sdk=30)
    assert steps[2] == "input keyevent KEYCODE_MOVE_END" + " KEYCODE_DEL" * (len("Add Contact or Number…") + 4)


def test_plan_input_text_refuses_before_doing_anything(dump):
    obs = _obs(dump)
    nothing_focused = [e.model_copy(update={"focused": False}) for e in obs.elements]
    with pytest.raises(ActionError, match="no text field is focused"):
        plan(Action(action_type="input_text", text="x"), Screen(obs.screen_size, nothing_focused), sdk=34)
    with pytest.raises(ActionError, match="U\\+00E9"):
        plan(Action(action_type="input_text", text="José", x=100, y=300), Screen(obs.screen_size, obs.elements), sdk=34)
