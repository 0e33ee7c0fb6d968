"""The served phone's shell, tools, settings and sync service, without a network:
what `adb shell` would print, and that each command really changes the phone."""

from __future__ import annotations

import io
import struct

import pytest
from PIL import Image

from benchmark import SimDevice, make_task
from benchmark.devices.adb import commands as cmd
from benchmark.devices.adb.parse import (
    extract_dump,
    parse_current_display,
    parse_foreground,
    parse_night_mode,
    parse_packages,
    parse_wm_density,
    parse_wm_size,
)
from benchmark.devices.adbd import ServedPhone
from benchmark.devices.adbd.sh import ShellSyntaxError, parse
from benchmark.devices.adbd.sync import SyncError, SyncQuit, SyncSession
from ttir.core.types import Observation


@pytest.fixture
def phone() -> ServedPhone:
    return ServedPhone(SimDevice())


def out(phone: ServedPhone, line: str) -> str:
    return phone.run(line).merged.decode()


def centre(phone: ServedPhone, label: str) -> tuple[int, int]:
    el = next(e for e in phone.observe().elements if e.text == label or e.content_desc == label)
    return el.center


# ------------------------------------------------------------------ the shell language


def test_lists_pipes_and_exit_statuses(phone):
    assert out(phone, "echo a; echo b") == "a\nb\n"
    assert out(phone, "false && echo no; true && echo yes") == "yes\n"
    assert out(phone, "false || echo fallback") == "fallback\n"
    assert out(phone, "echo 'one two' \"three $?\" four\\ five") == "one two three 0 four five\n"
    assert out(phone, "printf x; echo $?") == "/system/bin/sh: printf: not found\n127\n"
    res = phone.run("nosuchtool --flag")
    assert (res.status, res.stderr, res.stdout) == (127, b"/system/bin/sh: nosuchtool: not found\n", b"")
    assert out(phone, "getprop | grep -E 'ro.build.version.(sdk|release)'") == (
        "[ro.build.version.release]: [14]\n[ro.build.version.sdk]: [34]\n")
    assert phone.run("echo hi | grep -q nothing").status == 1


def test_redirections_write_the_phone_files(phone):
    assert out(phone, "echo hello > /sdcard/a.txt; echo more >> /sdcard/a.txt; cat /sdcard/a.txt") == "hello\nmore\n"
    assert out(phone, "cat /sdcard/nope 2>/dev/null; echo $?") == "1\n"
    assert out(phone, "cat /sdcard/nope > /sdcard/log 2>&1; cat /sdcard/log") == (
        "cat: /sdcard/nope: No such file or directory\n")
    assert out(phone, "ls /storage/emulated/0") == "Download\nPictures\na.txt\nlog\n"  # the same folder as /sdcard


@pytest.mark.parametrize("line", ["echo 'open", "echo \"open", "a && ", "| grep x", "echo $(id)", "echo `id`"])
def test_syntax_errors_are_shell_errors(phone, line):
    with pytest.raises(ShellSyntaxError):
        parse(line)
    res = phone.run(line)
    assert res.status == 2 and res.stderr.startswith(b"/system/bin/sh: syntax error")


# ------------------------------------------------------------------ input


def test_tap_opens_the_app_under_the_finger(phone):
    x, y = centre(phone, "Contacts")
    assert phone.run(cmd.tap(x, y)).status == 0
    assert phone.observe().package == "com.google.android.contacts"
    assert phone.run(cmd.keyevent("KEYCODE_HOME")).merged == b""
    assert phone.observe().package == "com.google.android.apps.nexuslauncher"


def test_typing_select_all_and_delete(phone):
    sim = phone.sim
    sim.reset(make_task("ContactsAddContact"))
    phone.run(cmd.launch_package("com.google.android.contacts"))
    field = None
    for _ in range(3):  # open the new-contact form: the first button whose label suggests creation
        obs = phone.observe()
        field = next((e for e in obs.elements if e.editable), None)
        if field is not None:
            break
        target = next(e for e in obs.elements if e.clickable and ("create" in (e.content_desc + e.text).lower()
                                                                   or "add" in (e.content_desc + e.text).lower()))
        phone.run(cmd.tap(*target.center))
    assert field is not None, "the contact form has a text field"
    phone.run(cmd.tap(*field.center))
    for c in cmd.text_commands("Ada Lovelace"):
        phone.run(c)
    assert "Ada Lovelace" in phone.observe().texts()
    phone.run(cmd.keyevent("KEYCODE_DEL"))
    assert "Ada Lovelac" in phone.observe().texts()
    for c in cmd.clear_text_commands(34):  # Ctrl+A, Delete
        phone.run(c)
    assert not any("Ada" in t for t in phone.observe().texts())


def test_bad_input_is_reported_like_android(phone):
    res = phone.run("input tap 10")
    assert res.status == 1 and res.stderr.startswith(b"Error: Invalid arguments for command: tap")
    assert phone.run("input frobnicate").stderr.startswith(b"Error: Unknown command: frobnicate")
    assert phone.run("input keyevent KEYCODE_NOT_A_KEY").status == 1
    assert phone.run("input tap 99999 99999").status == 0  # off-screen: nothing happens, as on a phone


# ------------------------------------------------------------------ the screen


def test_screencap_is_the_observed_screenshot(phone):
    png = phone.run("screencap -p").stdout
    img = Image.open(io.BytesIO(png))
    assert img.size == (1080, 2400)
    assert img.convert("RGB").tobytes() == SimDevice().observe().screenshot.tobytes()
    raw = phone.run("screencap").stdout
    assert struct.unpack("<4I", raw[:16])[:3] == (1080, 2400, 1) and len(raw) == 16 + 1080 * 2400 * 4
    assert phone.run("screencap -p /sdcard/s.png && ls /sdcard").stdout == b"Download\nPictures\ns.png\n"
    assert phone.files.read("/sdcard/s.png") == png


def test_uiautomator_dump_parses_to_the_observation(phone):
    res = phone.run(cmd.UI_DUMP)
    text = res.stdout.decode()
    assert text.startswith(f"UI hierchary dumped to: {cmd.DUMP_PATH}\n")
    obs = Observation.from_xml(extract_dump(text))
    assert obs.elements == SimDevice().observe().elements
    assert out(phone, "uiautomator dump") == "UI hierchary dumped to: /sdcard/window_dump.xml\n"
    tty = out(phone, "uiautomator dump /dev/tty")
    assert tty.startswith("<?xml") and tty.endswith("</hierarchy>UI hierchary dumped to: /dev/tty\n")


def test_dumpsys_names_the_foreground_as_parsers_read_it(phone):
    phone.run(cmd.launch_package("com.android.settings"))
    expected = phone.observe().foreground
    assert parse_foreground(out(phone, cmd.FOREGROUND_WINDOW)) == expected
    assert parse_foreground("", out(phone, cmd.FOREGROUND_ACTIVITY)) == expected
    assert "topResumedActivity=ActivityRecord{" in out(phone, "dumpsys activity activities")
    assert parse_current_display(out(phone, cmd.DISPLAY_CURRENT)) == (1080, 2400)


# ------------------------------------------------------------------ apps


def test_am_monkey_and_pm(phone):
    assert "package:com.arduia.expense" in out(phone, "pm list packages").splitlines()
    assert parse_packages(out(phone, cmd.LIST_PACKAGES)) >= set(phone.sim.apps)
    res = phone.run(cmd.launch_package("net.gsantner.markor"))
    assert res.status == 0 and b"Events injected: 1" in res.stdout
    assert phone.observe().package == "net.gsantner.markor"
    res = phone.run(cmd.launch_package("com.example.notinstalled"))
    assert res.status == 252 and b"No activities found to run, monkey aborted." in res.stdout
    assert out(phone, cmd.launch_component("com.android.settings/.Settings")).startswith(
        "Starting: Intent { cmp=com.android.settings/.Settings }")
    assert phone.observe().package == "com.android.settings"
    assert "does not exist" in out(phone, "am start -n com.example.x/.Main")
    phone.run("am force-stop com.android.settings")
    assert phone.observe().package == "com.google.android.apps.nexuslauncher"


# ------------------------------------------------------------------ settings


def test_settings_drive_the_phone_knobs(phone):
    sim = phone.sim
    assert out(phone, cmd.settings_get("system", "font_scale")) == "1.0\n"
    phone.run(cmd.settings_put("system", "font_scale", "1.35"))
    assert sim.settings.font_scale == 1.35
    phone.run("settings put system accelerometer_rotation 0; settings put system user_rotation 1")
    assert sim.settings.orientation == "landscape" and phone.observe().screen_size == (2400, 1080)
    phone.run(cmd.wm_density(357) + "; " + cmd.wm_size((1015, 2256)) + "; " + cmd.night_mode("yes"))
    assert (sim.settings.density_scale, sim.settings.dark_theme) == (357 / 420, True)
    assert parse_wm_size(out(phone, cmd.WM_SIZE)) == ((1080, 2400), (1015, 2256))
    assert parse_wm_density(out(phone, cmd.WM_DENSITY)) == (420, 357)
    assert parse_night_mode(out(phone, cmd.NIGHT_MODE)) == "yes"
    phone.run("wm size reset; wm density reset; settings delete system user_rotation")
    assert sim.settings.size_scale == 1.0 and sim.settings.density_scale == 1.0
    assert out(phone, "settings get secure no_such_key") == "null\n"
    assert out(phone, "settings put global window_animation_scale 0; settings get global window_animation_scale") == "0\n"
    assert phone.run("settings get nonsense key").status == 1


def test_a_knob_changed_on_the_phone_shows_in_settings_get(phone):
    phone.sim.configure(font_scale=0.82, time_format=24)  # what a perturbation served with the phone does
    assert out(phone, "settings get system font_scale") == "0.82\n"
    assert out(phone, "settings get system time_12_24") == "24\n"


# ------------------------------------------------------------------ the phone-side task


def test_cmd_ttir_sets_up_a_task_and_gives_its_verdict(phone):
    from benchmark.devices.phone_task import params_digest

    task = make_task("SystemWifiTurnOn", seed=3)
    assert out(phone, cmd.TTIR_VERSION).startswith("ttir-served-phone")
    assert phone.run(cmd.TTIR_TASK_VERIFY).status == 1  # no task yet
    res = phone.run(cmd.ttir_task_setup(task.name, task.seed, params_digest(task.params)))
    assert res.status == 0 and b'"task": "SystemWifiTurnOn"' in res.stdout
    assert '"success": false' in out(phone, cmd.TTIR_TASK_VERIFY)
    phone.sim.system.wifi = True  # what the agent would have done in Settings
    assert '"success": true' in out(phone, cmd.TTIR_TASK_VERIFY)
    bad = phone.run(cmd.ttir_task_setup(task.name, task.seed, "0" * 16))
    assert bad.status == 1 and b"other parameters" in bad.stderr
    assert phone.run("cmd nosuchservice").stderr == b"cmd: Can't find service: nosuchservice\n"


def test_a_phone_served_with_a_perturbation_and_no_task_gives_a_verdict_without_one():
    # `ttir serve-adb --perturb P` without --task: the final verdicts, printed on Ctrl-C, raised
    # AttributeError on the task-less phone and the --out file was never written
    from ttir.cli.serve_adb import build_device

    served = ServedPhone(build_device(None, ["popup_permission"], 0), serial="ttir-sim-5555")
    served.start_task(None)
    verdict = served.verdict()
    assert verdict["task"] is None and verdict["success"] is None and verdict["actions"] == 0
    assert served.run(cmd.TTIR_TASK_VERIFY).status == 1  # "no task is set up on this phone"


# ------------------------------------------------------------------ sync


def req(ident: bytes, body: bytes) -> bytes:
    return ident + struct.pack("<I", len(body)) + body


def test_sync_stat_list_recv_send_split_anywhere(phone):
    s = SyncSession(phone.files, phone.lock)
    data = b"x" * 70000  # more than one DATA chunk
    stream = req(b"SEND", b"/sdcard/Download/f.bin,33188") + req(b"DATA", data[:65536]) + req(b"DATA", data[65536:])
    stream += b"DONE" + struct.pack("<I", 1700000000)
    replies = b"".join(s.feed(stream[i:i + 7]) for i in range(0, len(stream), 7))
    assert replies == b"OKAY\0\0\0\0"
    assert phone.files.read("/sdcard/Download/f.bin") == data
    st = s.feed(req(b"STAT", b"/sdcard/Download/f.bin"))
    assert struct.unpack("<4s3I", st) == (b"STAT", 0o100644, 70000, 1700000000)
    assert struct.unpack("<4s3I", s.feed(req(b"STAT", b"/nope"))) == (b"STAT", 0, 0, 0)
    listing = s.feed(req(b"LIST", b"/sdcard/Download"))
    assert listing.startswith(b"DENT") and b"f.bin" in listing and listing.endswith(b"DONE" + bytes(16))
    got = s.feed(req(b"RECV", b"/sdcard/Download/f.bin"))
    assert got.startswith(b"DATA" + struct.pack("<I", 65536)) and got.endswith(b"DONE\0\0\0\0")
    assert s.feed(req(b"RECV", b"/nope")).startswith(b"FAIL")
    with pytest.raises(SyncQuit):
        s.feed(req(b"QUIT", b""))


@pytest.mark.parametrize("bad", [req(b"NOPE", b"x"), req(b"STAT", b"p" * 2000),
                                 req(b"SEND", b"/sdcard/x,420") + req(b"LIST", b"/")])
def test_malformed_sync_requests_are_refused(phone, bad):
    with pytest.raises(SyncError):
        SyncSession(phone.files, phone.lock).feed(bad)


def test_cmd_ttir_apps_names_the_apps_as_the_plans_do(phone):
    import json

    from benchmark.devices.adb.apps import AppTable

    names = json.loads(out(phone, cmd.TTIR_APPS))
    assert names["SMS Messenger"] == names["Messages"] == "com.simplemobiletools.smsmessenger"
    assert list(names)[:2] == ["Contacts", "SMS Messenger"]  # labels first, then aliases
    table = AppTable()
    assert table.candidates("messages") == ("com.google.android.apps.messaging", "com.android.messaging")
    table.add(names)
    assert table.candidates("messages") == ("com.simplemobiletools.smsmessenger",)  # the phone's own names win


def test_png_encoder_reuses_unchanged_bands_and_stays_exact(phone):
    import zlib

    from benchmark.devices.adbd.png import PngEncoder

    enc = PngEncoder()
    frames = [phone.observe().screenshot]
    phone.run(cmd.launch_package("com.android.settings"))
    frames.append(phone.observe().screenshot)
    phone.run(cmd.keyevent("KEYCODE_HOME"))
    frames.append(phone.observe().screenshot)
    for img in frames + frames[::-1]:
        png = enc.encode(img)
        back = Image.open(io.BytesIO(png))
        assert back.convert("RGB").tobytes() == img.tobytes()
        idat = png[png.index(b"IDAT") + 4:png.index(b"IEND") - 8]
        assert zlib.decompress(idat)  # a valid zlib stream: its adler32 checks out


def test_typing_over_adb_matches_typing_in_one_action():
    """AdbDevice types with a tap, Ctrl+A, Delete and `input text`; the field is revealed once,
    with its new text, exactly as when the simulator types in one action (font 1.35: the
    suggestion strip's height moves the form when the text arrives)."""
    from benchmark.devices.adb.actions import Pause, Screen, plan
    from ttir.core.types import Action

    task = make_task("ContactsAddContact")
    sim, phone = SimDevice(), ServedPhone(SimDevice())
    for d in (sim, phone.sim):
        d.reset(task)
        d.configure(font_scale=1.35)
    actions = [Action(action_type="open_app", app_name="Contacts"), Action(action_type="click", x=964, y=2158),
               Action(action_type="input_text", x=540, y=1132, text="Diego", clear_text=True),
               Action(action_type="input_text", x=540, y=1465, text="Fernandes", clear_text=True)]
    for a in actions:
        obs = phone.observe()
        commands = ([cmd.launch_package("com.google.android.contacts")] if a.action_type == "open_app" else
                    [s for s in plan(a, Screen(obs.screen_size, obs.elements), sdk=34) if not isinstance(s, Pause)])
        for c in commands:
            assert phone.run(c).status == 0
        sim.execute(a)
        assert phone.observe().elements == sim.observe().elements, a.describe()
    assert phone.observe().screenshot.tobytes() == sim.observe().screenshot.tobytes()


def test_a_task_name_or_an_action_dict_handed_to_a_device_is_named_with_the_call_that_makes_the_real_thing():
    # a task's name reached `task.setup` ("'str' object has no attribute 'setup'")
    from benchmark.device import ActionError

    sim = SimDevice()
    with pytest.raises(TypeError, match=r"expected a task made by benchmark.make_task\('ContactsAddContact'\)"):
        sim.reset("ContactsAddContact")
    with pytest.raises(ActionError, match=r"got dict; convert an action dict with ttir.Action.from_json\(d\)"):
        sim.execute({"action_type": "click", "x": 5, "y": 5})
    assert sim.reset(make_task("ContactsAddContact")).elements  # the real thing still works


def test_simdevice_settings_may_be_a_mapping_and_anything_else_is_named():
    # a dict raised "'dict' object has no attribute 'model_copy'", or an empty one was taken as the defaults
    assert SimDevice(settings={"font_scale": 1.3}).settings.font_scale == pytest.approx(1.3)
    with pytest.raises(ValueError, match="unknown device setting"):
        SimDevice(settings={"fontscale": 1.3})
    with pytest.raises(TypeError, match=r"expected benchmark.DeviceSettings or a mapping of its fields"):
        SimDevice(settings="large")
    with pytest.raises(TypeError, match="expected a list of app classes"):
        SimDevice(apps="Contacts")
