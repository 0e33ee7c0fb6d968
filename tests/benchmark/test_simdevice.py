"""The simulated phone: settings knobs move pixels and bounds, every action type works."""

from __future__ import annotations

import hashlib

import pytest

from benchmark import ActionError, SimDevice, make_task
from ttir.core.types import Action, Observation


def _open_contacts_form(d: SimDevice) -> Observation:
    d.reset(make_task("ContactsAddContact"))
    d.launch("Contacts")
    fab = d.observe().find(content_desc="Create contact")[0]
    d.execute(Action(action_type="click", x=fab.center[0], y=fab.center[1]))
    return d.observe()


def _bounds(obs: Observation, rid: str):
    return obs.find(resource_id=rid)[0].bounds


def test_default_screen_and_dump(device):
    obs = device.observe()
    assert obs.screenshot.size == (1080, 2400) == obs.screen_size
    assert obs.foreground.startswith("com.google.android.apps.nexuslauncher")
    # the dump is real uiautomator XML that parses back to the same nodes
    again = Observation.from_xml(obs.xml)
    assert [e.model_dump() for e in again.elements] == [e.model_dump() for e in obs.elements]
    icons = [e for e in obs.elements if e.text == "Contacts"]
    assert icons and icons[0].clickable and icons[0].package == "com.google.android.apps.nexuslauncher"
    assert obs.find(resource_id="com.android.systemui:id/clock")[0].text == "3:34"


def test_font_and_density_move_elements(device):
    base = _bounds(_open_contacts_form(device), "phone")
    device.configure(font_scale=1.35)
    big = _bounds(device.observe(), "phone")
    assert big != base and (big[3] - big[1]) > (base[3] - base[1])
    device.configure(font_scale=1.0, density_scale=0.76)
    dense = _bounds(device.observe(), "phone")
    assert dense != base and dense[1] < base[1]


def test_size_scale_and_orientation_change_the_screen(device):
    device.configure(size_scale=0.88)
    assert device.observe().screen_size == (950, 2112)
    device.configure(size_scale=1.0, orientation="landscape")
    obs = device.observe()
    assert obs.screen_size == (2400, 1080) and obs.screenshot.size == (2400, 1080) and obs.orientation == "landscape"
    assert 'rotation="1"' in obs.xml


def test_dark_theme_changes_pixels(device):
    light = device.observe().screenshot
    device.configure(dark_theme=True)
    dark = device.observe().screenshot
    assert light.tobytes() != dark.tobytes()
    # the app background really is dark
    assert sum(dark.getpixel((540, 1200))) < sum(light.getpixel((540, 1200)))


def test_time_format_changes_clock_text(device):
    device.clock.advance(3600 * 3)  # 18:34
    assert device.observe().find(resource_id="com.android.systemui:id/clock")[0].text == "6:34"
    device.configure(time_format=24)
    assert device.observe().find(resource_id="com.android.systemui:id/clock")[0].text == "18:34"
    device.configure(date_format="EU")
    assert device.observe().find(resource_id="date")[0].text == "Sun 15 Oct"


def test_typing_focus_keyboard_and_enter(device):
    obs = _open_contacts_form(device)
    with pytest.raises(ActionError, match="no text field is focused"):
        device.execute(Action(action_type="input_text", text="x"))
    phone = obs.find(resource_id="phone")[0]
    device.execute(Action(action_type="click", x=phone.center[0], y=phone.center[1]))
    obs = device.observe()
    assert obs.find(resource_id="phone")[0].focused
    assert any(e.package == "com.google.android.inputmethod.latin" for e in obs.elements)
    device.execute(Action(action_type="input_text", text="+1 555"))
    device.execute(Action(action_type="input_text", text="0100"))
    assert device.observe().find(resource_id="phone")[0].text == "+1 5550100"
    device.execute(Action(action_type="input_text", text="42", clear_text=True))
    assert device.observe().find(resource_id="phone")[0].text == "42"
    device.execute(Action(action_type="keyboard_enter"))  # single-line: hides the keyboard
    assert not any(e.package == "com.google.android.inputmethod.latin" for e in device.observe().elements)


def test_back_closes_keyboard_first_then_pops(device):
    obs = _open_contacts_form(device)
    first = obs.find(resource_id="first_name")[0]
    device.execute(Action(action_type="input_text", text="Ana", x=first.center[0], y=first.center[1]))
    device.execute(Action(action_type="navigate_back"))
    assert device.observe().find(resource_id="first_name")  # still on the form
    device.execute(Action(action_type="navigate_back"))
    assert device.observe().find(content_desc="Create contact")  # back on the list
    device.execute(Action(action_type="navigate_back"))
    assert "nexuslauncher" in device.observe().foreground


def test_invalid_actions_leave_state_unchanged(device):
    before = device.observe().xml
    with pytest.raises(ActionError, match="off-screen"):
        device.execute(Action(action_type="click", x=5000, y=10))
    with pytest.raises(ActionError, match="not installed"):
        device.execute(Action(action_type="open_app", app_name="Snapchat"))
    with pytest.raises(ActionError, match="out of range"):
        device.execute(Action(action_type="click", index=999))
    assert device.observe().xml == before


def test_scroll_and_swipe_move_lists(device):
    device.launch("Settings")
    obs = device.observe()
    assert not obs.find("About phone") or obs.find(resource_id="recycler_view")[0].scrollable
    first = [e.text for e in obs.elements if e.short_id == "title" and e.package == "com.android.settings"]
    device.execute(Action(action_type="scroll", direction="down"))
    after = [e.text for e in device.observe().elements if e.short_id == "title" and e.package == "com.android.settings"]
    assert after != first and "About phone" in after
    device.execute(Action(action_type="swipe", x=540, y=800, x2=540, y2=2000))  # finger down: back to the top
    top = [e.text for e in device.observe().elements if e.short_id == "title" and e.package == "com.android.settings"]
    assert top[0] == "Network & internet"


def test_shade_brightness_and_tiles(device):
    device.configure(brightness=100)
    device.execute(Action(action_type="swipe", x=540, y=5, x2=540, y2=1500))
    obs = device.observe()
    slider = obs.find(content_desc="Display brightness")[0]
    device.execute(Action(action_type="swipe", x=slider.center[0], y=slider.center[1], x2=slider.bounds[2] - 1, y2=slider.center[1]))
    assert device.settings.brightness == 255
    bt = device.observe().find("Bluetooth")[0]
    assert bt.checkable and not bt.checked
    device.execute(Action(action_type="click", x=bt.center[0], y=bt.center[1]))
    assert device.system.bluetooth
    device.execute(Action(action_type="navigate_back"))
    assert not device.observe().find(content_desc="Display brightness")


def test_home_recents_and_app_switch(device):
    device.launch("Contacts")
    device.launch("Settings")
    device.execute(Action(action_type="app_switch"))
    obs = device.observe()
    cards = [e.content_desc for e in obs.elements if e.short_id == "snapshot"]
    assert cards == ["Settings", "Contacts"]
    c = obs.find(content_desc="Contacts")[0]
    device.execute(Action(action_type="click", x=c.center[0], y=c.center[1]))
    assert device.observe().package == "com.google.android.contacts"
    device.execute(Action(action_type="navigate_home"))
    assert device.observe().package == "com.google.android.apps.nexuslauncher"
    device.execute(Action(action_type="open_app", app_name="settings"))
    assert device.observe().package == "com.android.settings"


def test_long_press_double_tap_and_wait(device):
    device.launch("Settings")
    t0 = device.clock.elapsed
    device.execute(Action(action_type="wait", seconds=3))
    assert device.clock.elapsed - t0 == pytest.approx(5.0)
    row = device.observe().find("Display")[0]
    device.execute(Action(action_type="long_press", x=row.center[0], y=row.center[1]))  # no long-click handler: a click
    assert device.observe().find("Brightness level")
    device.execute(Action(action_type="navigate_back"))
    dark = device.observe().find("Display")[0]
    device.execute(Action(action_type="click", x=dark.center[0], y=dark.center[1]))
    sw = device.observe().find("Dark theme")[0]
    device.execute(Action(action_type="double_tap", x=sw.center[0], y=sw.center[1]))  # toggled twice
    assert device.settings.dark_theme is False


def test_same_state_same_screenshot():
    def run() -> str:
        d = SimDevice()
        d.reset(make_task("ContactsAddContact", seed=3))
        d.launch("Contacts")
        return hashlib.sha256(d.observe().screenshot.tobytes()).hexdigest()

    assert run() == run()


def test_configure_rejects_unknown_and_bad_values(device):
    with pytest.raises(ValueError, match="unknown device setting.*font_scale"):
        device.configure(fontscale=1.2)
    with pytest.raises(ValueError, match="orientation"):
        device.configure(orientation="sideways")
    device.configure(font_scale=1.35)
    device.close()
    assert device.settings.font_scale == 1.0
