"""The simulated phone's system UI and spacing, pixel by pixel: the status bar (signal,
Wi-Fi and battery drawn where SystemUI puts them, transparent over the window beneath,
a clock that follows the simulated clock), the navigation bar per orientation and
navigation mode, the Pixel-style launcher, Material's margins, the overflow menu."""

from __future__ import annotations

import pytest
from PIL import Image

import perturb
from benchmark import SimDevice, make_task
from benchmark.ui import tokens
from benchmark.ui.metrics import wrap
from ttir.core.types import Action, Observation, UIElement

DP = 420 / 160  # px per dp on the default 1080x2400 phone


def dp(v: float) -> int:
    return int(round(v * DP))


def one(obs: Observation, short_id: str, package: str = "") -> UIElement:
    hits = [e for e in obs.elements if e.short_id == short_id and (not package or e.package == package)]
    assert hits, f"no :id/{short_id} on screen; ids: {sorted({e.short_id for e in obs.elements if e.short_id})}"
    return hits[0]


def ink(img: Image.Image, box: tuple[int, int, int, int], against: tuple[int, int, int]) -> int:
    """How many pixels inside ``box`` differ clearly from the colour ``against``."""
    raw = img.crop(box).convert("RGB").tobytes()
    return sum(1 for i in range(0, len(raw), 3) if sum(abs(raw[i + k] - against[k]) for k in range(3)) > 90)


def tap(d: SimDevice, e: UIElement) -> None:
    d.execute(Action(action_type="click", x=e.center[0], y=e.center[1]))


# ---------------------------------------------------------------- status bar


def test_status_bar_has_clock_signal_wifi_and_battery_where_systemui_puts_them(device):
    obs = device.observe()
    img = obs.screenshot
    bar = one(obs, "status_bar")
    assert bar.bounds == (0, 0, 1080, dp(tokens.STATUS_BAR))
    clock = one(obs, "clock")
    assert clock.bounds[0] == dp(tokens.STATUS_BAR_PAD)  # 16 dp in from the rounded corner
    battery = one(obs, "battery")
    assert battery.bounds[2] == 1080 - dp(tokens.STATUS_BAR_PAD)
    assert battery.content_desc == "Battery 100 percent."
    signal, wifi = one(obs, "mobile_signal"), one(obs, "wifi_signal")
    assert one(obs, "mobile_combo").content_desc.endswith("signal full.") and wifi.content_desc == "Wifi signal full."
    assert signal.bounds[2] <= wifi.bounds[0] <= wifi.bounds[2] <= battery.bounds[0]  # left to right, as on a Pixel
    background = img.getpixel((540, 5))
    for icon in (signal, wifi, battery, clock):
        assert icon.height == dp(tokens.STATUS_ICON) or icon is clock
        assert ink(img, icon.bounds, background) > 20, f"{icon.short_id} is not drawn"


def test_status_bar_is_transparent_over_the_window_beneath(device):
    home = device.observe().screenshot
    assert home.getpixel((540, 10)) != (254, 251, 255)  # not an opaque white strip: the wallpaper shows
    device.launch("Contacts")
    obs = device.observe()
    below = obs.screenshot.getpixel((540, one(obs, "toolbar").bounds[1] + 2))
    assert obs.screenshot.getpixel((300, 6)) == below  # the top app bar's colour runs up under the status bar
    device.configure(dark_theme=True)
    assert sum(device.observe().screenshot.getpixel((300, 6))) < 200


def test_airplane_mode_swaps_the_signal_for_a_plane(device):
    device.system.airplane = True
    device._invalidate()
    obs = device.observe()
    ids = {e.short_id for e in obs.elements}
    assert "airplane" in ids and "mobile_signal" not in ids and "wifi_signal" not in ids


def test_the_clock_follows_the_simulated_clock(device):
    obs = device.observe()
    box = one(obs, "clock").bounds
    before = obs.screenshot.crop(box).tobytes()
    for _ in range(30):  # 30 actions x 2 s: a minute later
        device.execute(Action(action_type="wait", seconds=1))
    obs = device.observe()
    assert one(obs, "clock").text == "3:35"
    assert obs.screenshot.crop(box).tobytes() != before


def test_time_passes_while_a_perturbation_swallows_the_actions():
    """A loading screen blocks every tap, but the phone's clock keeps running."""
    env = perturb.PerturbedDevice(SimDevice(), [perturb.make("action_drop_random", **{"magnitude.probability": 1.0})])
    with env:
        env.reset(make_task("ContactsAddContact"))
        start = env.inner.clock.elapsed
        for _ in range(20):
            env.execute(Action(action_type="click", x=540, y=1200))
        assert env.inner.actions == 0  # none reached the phone ...
        assert env.inner.clock.elapsed - start >= 40  # ... yet 20 actions' worth of time went by


# ---------------------------------------------------------------- navigation bar


def test_three_button_navigation_at_the_bottom_in_portrait(device):
    obs = device.observe()
    frame = one(obs, "navigation_bar_frame")
    assert frame.bounds == (0, 2400 - dp(tokens.NAV_BAR), 1080, 2400)
    back, home, overview = (one(obs, i) for i in ("back", "home", "recent_apps"))
    assert back.center[0] < home.center[0] == 540 < overview.center[0]
    assert home.center[0] - back.center[0] == dp(tokens.NAV_BUTTON_GAP + tokens.TOUCH)


def test_three_button_navigation_moves_to_the_side_in_landscape(device):
    device.configure(orientation="landscape")
    obs = device.observe()
    frame = one(obs, "navigation_bar_frame")
    assert frame.bounds == (2400 - dp(tokens.NAV_BAR_SIDE), 0, 2400, 1080)
    back, home, overview = (one(obs, i) for i in ("back", "home", "recent_apps"))
    assert overview.center[1] < home.center[1] < back.center[1]  # Back stays nearest the phone's bottom
    assert one(obs, "status_bar").bounds[2] == 2400 - dp(tokens.NAV_BAR_SIDE)
    # the app area stops at the bar: nothing of the launcher lies under it
    launcher = [e for e in obs.elements if "launcher" in e.package]
    assert max(e.bounds[2] for e in launcher) <= frame.bounds[0]
    tap(device, back)
    device.launch("Settings")
    tap(device, one(device.observe(), "home"))
    assert "launcher" in device.observe().package


def test_gesture_navigation_shows_the_pill_and_back_is_an_edge_swipe(device):
    device.configure(navigation_mode="gesture")
    obs = device.observe()
    frame = one(obs, "navigation_bar_frame")
    assert frame.bounds == (0, 2400 - dp(tokens.NAV_BAR_GESTURE), 1080, 2400)
    assert not obs.find(content_desc="Back") and not obs.find(content_desc="Home")
    handle = one(obs, "home_handle")
    assert handle.width == dp(tokens.GESTURE_HANDLE_W) and handle.center[0] == 540
    assert ink(obs.screenshot, handle.bounds, obs.screenshot.getpixel((5, 2398))) > 50  # the pill is drawn
    device.launch("Settings")
    row = obs = device.observe()
    tap(device, device.observe().find("Display")[0])
    assert device.observe().find("Brightness level")
    device.execute(Action(action_type="swipe", x=5, y=1200, x2=400, y2=1210, duration_ms=200))  # from the left edge
    assert device.observe().find("Network & internet")  # Back
    tap(device, device.observe().find("Display")[0])
    device.execute(Action(action_type="swipe", x=1075, y=1200, x2=700, y2=1190, duration_ms=200))  # the right edge too
    assert device.observe().find("Network & internet")
    device.execute(Action(action_type="navigate_back"))  # the key event still works, as on a phone
    assert "launcher" in device.observe().package
    device.launch("Settings")
    device.execute(Action(action_type="swipe", x=540, y=2395, x2=540, y2=1500, duration_ms=200))  # up from the bottom
    assert "launcher" in device.observe().package
    del row


def test_a_swipe_away_from_the_edges_is_no_back_gesture(device):
    device.configure(navigation_mode="gesture")
    device.launch("Settings")
    tap(device, device.observe().find("Display")[0])
    device.execute(Action(action_type="swipe", x=300, y=1200, x2=800, y2=1200, duration_ms=200))
    assert device.observe().find("Brightness level")


def test_three_button_mode_turns_back_into_a_down_arrow_while_the_keyboard_is_up(device):
    device.reset(make_task("ContactsAddContact"))
    device.launch("Contacts")
    tap(device, device.observe().find(content_desc="Create contact")[0])
    before = device.observe()
    back_px = before.screenshot.crop(one(before, "back").bounds).tobytes()
    tap(device, one(before, "first_name"))
    obs = device.observe()
    assert one(obs, "ime_switcher").content_desc == "Switch input method"
    assert obs.screenshot.crop(one(obs, "back").bounds).tobytes() != back_px


# ---------------------------------------------------------------- launcher


def test_launcher_has_a_dock_and_the_search_bar_at_the_bottom(device):
    obs = device.observe()
    qsb = one(obs, "search_container_hotseat")
    nav_top = 2400 - dp(tokens.NAV_BAR)
    assert abs(qsb.bounds[3] - (nav_top - dp(16))) <= 2 and qsb.height == dp(tokens.LAUNCHER_QSB_H)  # dp rounding
    assert qsb.bounds[0] == dp(tokens.EDGE) and qsb.bounds[2] == 1080 - dp(tokens.EDGE)
    hotseat = one(obs, "hotseat")
    docked = [e for e in obs.elements if e.short_id == "icon" and hotseat.bounds[1] <= e.center[1] <= hotseat.bounds[3]]
    assert [e.text for e in docked] == ["Contacts", "SMS Messenger", "Chrome", "Settings"]
    assert hotseat.bounds[3] <= qsb.bounds[1]
    workspace = [e for e in obs.elements if e.short_id == "icon" and e not in docked]
    assert workspace and max(e.bounds[3] for e in workspace) < hotseat.bounds[1]
    img = obs.screenshot
    for e in docked + workspace:  # each icon is drawn (an adaptive disc), not an empty cell
        x1, y1, x2, _ = e.bounds
        assert ink(img, (x1, y1, x2, y1 + dp(tokens.LAUNCHER_ICON)), img.getpixel((x1 + 2, y1 + 2))) > 500, e.text


def test_launcher_labels_are_whole_or_end_in_a_proper_ellipsis():
    # the old cut kept only the words that fitted ("SMS…"); Android keeps characters up to the ellipsis
    px = dp(tokens.LAUNCHER_LABEL_SP)
    short = wrap("SMS Messenger", px, 160, 1)
    assert short[0].startswith("SMS M") and short[0].endswith("…")
    assert wrap("Files", px, 160, 1) == ("Files",)


def test_landscape_launcher_fits_its_search_bar_and_dock(device):
    device.configure(orientation="landscape")
    obs = device.observe()
    qsb = one(obs, "search_container_hotseat")
    assert qsb.bounds[3] <= 1080 and qsb.height == dp(tokens.LAUNCHER_QSB_H)  # not cut off
    hotseat = one(obs, "hotseat")
    assert hotseat.bounds[0] > qsb.bounds[2]  # the dock stands on the right
    icons = [e for e in obs.elements if e.short_id == "icon"]
    assert len(icons) == len(device.launcher_apps()) and all(e.bounds[3] <= 1080 for e in icons)


# ---------------------------------------------------------------- Material spacing


def test_toolbar_titles_sit_16_dp_from_the_edge_and_56_after_a_navigation_icon(device):
    device.reset(make_task("ContactsAddContact"))
    device.launch("Contacts")
    obs = device.observe()
    assert one(obs, "title").bounds[0] == dp(tokens.TITLE_INSET)
    tap(device, obs.find(content_desc="Create contact")[0])
    obs = device.observe()
    # 56 dp: the bar's padding, the 48 dp icon and the gap, each rounded to pixels as Android does
    assert one(obs, "title").bounds[0] == dp(tokens.TOOLBAR_PAD) + dp(tokens.TOUCH) + dp(tokens.TOOLBAR_GAP)
    save = one(obs, "menu_save")
    assert save.bounds[2] == 1080 - dp(tokens.EDGE)  # the pill keeps off the edge


def test_browser_toolbar_is_compact_in_landscape_and_slides_away_on_scroll(device):
    device.reset(make_task("BrowserMaze"))
    device.configure(orientation="landscape")
    device.open_url("file:///sdcard/Download/task.html")
    obs = device.observe()
    bar = one(obs, "toolbar", "com.android.chrome")
    assert bar.height <= 0.15 * 1080 * 0.95  # 56 dp: 13.6 % of the height
    device.execute(Action(action_type="scroll", direction="down"))
    obs = device.observe()
    assert not [e for e in obs.elements if e.short_id == "url_bar"]  # Chrome hides it while scrolling down
    device.execute(Action(action_type="scroll", direction="up"))
    assert [e for e in device.observe().elements if e.short_id == "url_bar"]


# ---------------------------------------------------------------- smaller items


def test_overflow_menu_drops_from_under_the_overflow_button_with_a_shadow(device):
    device.reset(make_task("RecipeDeleteSingleRecipe"))
    device.launch("Broccoli")
    card = [e for e in device.observe().elements if e.short_id == "recipe_card"][0]
    tap(device, card)
    overflow = one(device.observe(), "overflow")
    tap(device, overflow)
    obs = device.observe()
    menu = next(e for e in obs.elements if e.class_name == "android.widget.ListView")
    bar = one(obs, "toolbar")
    assert abs(menu.bounds[1] - bar.bounds[3]) <= dp(4) and menu.bounds[2] == 1080 - dp(8)
    assert overflow.bounds[3] <= menu.bounds[1] + dp(4)  # the ⋮ stays visible above it
    img = obs.screenshot
    under = img.getpixel((menu.center[0], menu.bounds[3] + dp(3)))
    page = img.getpixel((menu.center[0], menu.bounds[3] + dp(30)))
    assert sum(under) < sum(page)  # the shadow darkens the page just under the menu


def test_do_not_disturb_and_dark_theme_have_their_own_icons(device):
    device.open_shade()
    obs = device.observe()
    img = obs.screenshot

    def icon(tile_id: str) -> bytes:
        t = one(obs, tile_id)
        x1, y1 = t.bounds[0] + dp(14), t.center[1] - dp(11)
        return img.crop((x1, y1, x1 + dp(22), y1 + dp(22))).tobytes()

    assert icon("dnd_tile") != icon("dark_tile")


def test_markor_editor_is_a_page_of_text_not_an_outlined_box(device):
    device.reset(make_task("MarkorEditNote"))
    device.launch("Markor")
    tap(device, [e for e in device.observe().elements if e.text.endswith((".md", ".txt"))][0])
    obs = device.observe()
    editor = one(obs, "document__fragment__edit__highlighting_editor")
    img = obs.screenshot
    bg = img.getpixel((editor.center[0], editor.bounds[3] - 5))
    assert img.getpixel((editor.bounds[0] + 1, editor.center[1])) == bg  # no outline down its side
    assert ink(img, (editor.bounds[0], editor.bounds[1], editor.bounds[2], editor.bounds[1] + dp(40)), bg) > 100
    assert one(obs, "document__fragment__edit__text_actions_bar").bounds[3] == 2400 - dp(tokens.NAV_BAR)


def test_consent_sheet_bullets_sit_on_their_first_line():
    env = perturb.PerturbedDevice(SimDevice(), [perturb.make("bottom_sheet_consent")], seed=0)
    with env:
        env.reset(make_task("RecipeDeleteSingleRecipe"))
        env.execute(Action(action_type="open_app", app_name="Broccoli"))
        for _ in range(4):
            env.execute(Action(action_type="wait", seconds=1))
        obs = env.observe()
        rows = [e for e in obs.elements if e.short_id == "summary"]
        assert rows, "the consent sheet has no bullet rows"
        img = obs.screenshot
        for r in rows:
            line = img.crop((r.bounds[0] - dp(24), r.bounds[1], r.bounds[0] - dp(2), r.bounds[1] + dp(20)))
            sheet = img.getpixel((r.bounds[0] - dp(22), r.bounds[3] - 2))
            assert ink(line, (0, 0) + line.size, sheet) > 0  # the dot is beside the first line ...
            if r.height > dp(30):  # ... not lower down beside a wrapped one
                rest = img.crop((r.bounds[0] - dp(24), r.bounds[1] + dp(22), r.bounds[0] - dp(2), r.bounds[3]))
                assert ink(rest, (0, 0) + rest.size, sheet) == 0
        assert any(r.height > dp(30) for r in rows)  # a wrapped bullet was checked


@pytest.mark.parametrize("settings", [{}, {"orientation": "landscape"}, {"navigation_mode": "gesture"},
                                      {"orientation": "landscape", "navigation_mode": "gesture"}])
def test_every_element_lies_inside_the_screen_and_off_the_bars(settings):
    d = SimDevice()
    d.reset(make_task("ContactsAddContact"))
    d.configure(**settings)
    d.launch("Contacts")
    obs = d.observe()
    w, h = obs.screen_size
    bars = [e for e in obs.elements if e.short_id in ("status_bar", "navigation_bar_frame")]
    app = [e for e in obs.elements if e.package == "com.google.android.contacts" and e.area > 0]
    for e in app:
        assert 0 <= e.bounds[0] and e.bounds[2] <= w and e.bounds[3] <= h
        for b in bars:
            x1, y1, x2, y2 = (max(e.bounds[0], b.bounds[0]), max(e.bounds[1], b.bounds[1]),
                              min(e.bounds[2], b.bounds[2]), min(e.bounds[3], b.bounds[3]))
            assert x2 <= x1 or y2 <= y1, f"{e.short_id or e.class_name} lies under the {b.short_id}"
