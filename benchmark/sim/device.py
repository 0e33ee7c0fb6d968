"""SimDevice: an embedded simulated Android phone (pure Python + Pillow).

Each frame the foreground app (or launcher / recents / shade) builds a widget
tree, which is laid out in dp for the current settings, drawn into a real
screenshot and exported as a uiautomator dump. Actions are hit-tested against
the same nodes, so what the agent sees is exactly what it can touch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional

from loguru import logger
from PIL import Image

from benchmark.apps.base import App
from benchmark.device import SCROLL_FRACTION, ActionError, DeviceSettings, check_action, check_reset_task, check_settings
from benchmark.sim import system
from benchmark.sim.clock import SimClock
from benchmark.sim.keyboard import SoftKeyboard
from benchmark.sim.launcher import launcher
from benchmark.sim.memo import FrameMemo, MemoEntry, shared_view
from benchmark.sim.storage import Storage
from benchmark.sim.system import LAUNCHER, SYSTEMUI, IME, Notification, SystemState
from benchmark.ui import tokens
from benchmark.ui.a11y import export
from benchmark.ui.i18n import DEFAULT_LANGUAGE, language_of, languages, localize, localize_screen, translate
from benchmark.ui.layout import Box, Node, _shift, lay, lay_screen, lay_scroll
from benchmark.ui.metrics import Metrics
from benchmark.ui.render import Painter, draw_toast, slider_track, wallpaper
from benchmark.ui.theme import palette
from benchmark.ui.widgets import Screen, Widget
from ttir.core.types import TOUCH_TYPES, Action, Observation, UIElement

BASE_SIZE = (1080, 2400)
BASE_DPI = 420
ACTION_SECONDS = 2.0  # simulated time one action takes


@dataclass(eq=False)
class Window:
    name: str
    package: str
    root: Node
    bg: Any = None
    modal: bool = False
    activity: str = ""
    on_outside: Optional[Callable[[], Any]] = None
    accent: Optional[tuple[int, int, int]] = None
    wallpaper: bool = False  # drawn over the wallpaper, which also shows through the system bars
    bar: bool = False  # a transparent system bar: shows the colour of the window beside it


@dataclass(eq=False)
class Frame:
    windows: list[Window]
    elements: list[UIElement]
    nodes: list[Node]
    metrics: Metrics
    size: tuple[int, int]
    foreground: str
    bars: system.Bars
    area: Box  # the app window (above the keyboard, between the system bars)
    memo: Optional[MemoEntry] = None  # where this frame's elements, screenshot and dump are kept (frame_memo)


@dataclass
class _Focus:
    store: dict[str, Any]
    key: str
    multiline: bool = False
    on_submit: Optional[Callable[[], Any]] = None
    input_type: str = "text"
    ime_action: str = ""
    password: bool = False


@dataclass
class _Stores:
    recents: dict[str, Any] = field(default_factory=dict)
    shade: dict[str, Any] = field(default_factory=dict)
    launcher: dict[str, Any] = field(default_factory=dict)


class SimDevice:
    """The embedded default device. See docs/architecture.md § Device protocol.

    ``frame_memo`` (optional, a :class:`~benchmark.sim.memo.FrameMemo`, which several
    devices may share): reuse the elements, screenshot and dump of a screen already seen
    instead of exporting, drawing and serialising it again. Observations are identical
    with and without it; it only saves time when many episodes revisit the same screens
    (tests/benchmark/test_solvability.py)."""

    def __init__(
        self,
        *,
        size: tuple[int, int] = BASE_SIZE,
        dpi: int = BASE_DPI,
        apps: Optional[Iterable[type[App]]] = None,
        settings: Optional[DeviceSettings] = None,
        frame_memo: Optional[FrameMemo] = None,
    ):
        from benchmark.apps import APP_CLASSES

        if frame_memo is not None and not isinstance(frame_memo, FrameMemo):
            raise TypeError(f"frame_memo must be a FrameMemo or None, got {type(frame_memo).__name__}")
        self.frame_memo = frame_memo
        self.base_size = size
        self.base_dpi = dpi
        if isinstance(settings, Mapping):  # {"font_scale": 1.3}, validated as the settings are
            settings = DeviceSettings.model_validate(check_settings(dict(settings)))
        elif settings is not None and not isinstance(settings, DeviceSettings):
            raise TypeError(f"SimDevice(settings={settings!r:.80} ({type(settings).__name__})): expected "
                            "benchmark.DeviceSettings or a mapping of its fields, e.g. {'font_scale': 1.3}")
        if isinstance(apps, (str, bytes)):
            raise TypeError(f"SimDevice(apps={apps!r:.80}): expected a list of app classes (benchmark.apps)")
        self._initial_settings = (settings or DeviceSettings()).model_copy()
        self._settings = self._initial_settings.model_copy()
        self._app_classes = list(apps) if apps is not None else list(APP_CLASSES)
        self.clock = SimClock(lambda: self._settings)
        self.closed = False
        self._factory_reset()

    # ------------------------------------------------------------------ state
    def _factory_reset(self) -> None:
        self.clock.reset()
        self.system = SystemState()
        self.storage = Storage()
        self.apps: dict[str, App] = {cls.package: cls(self) for cls in self._app_classes}
        self.foreground_pkg: Optional[str] = None
        self.recents: list[str] = []
        self.overlay: Optional[str] = None  # "shade" | "recents"
        self.focus: Optional[_Focus] = None
        self.keyboard = SoftKeyboard(self)
        self._reveal_focus = False
        self.stores = _Stores()
        self.actions = 0
        self.answers: list[str] = []
        self._toast: Optional[str] = None
        self._invalidate()

    def _invalidate(self) -> None:
        self._frame_cache: Optional[Frame] = None
        self._obs_cache: Optional[Observation] = None

    @property
    def settings(self) -> DeviceSettings:
        """A copy of the current settings (change them with :meth:`configure`)."""
        return self._settings.model_copy()

    @property
    def orientation(self) -> str:
        """``portrait`` or ``landscape``, from the settings."""
        return self._settings.orientation

    def configure(self, **settings: Any) -> None:
        """Change device settings (font_scale, density_scale, size_scale, dark_theme,
        orientation, time_format, date_format, brightness)."""
        check_settings(settings)
        if "locale" in settings and language_of(settings["locale"]) not in languages():
            raise ValueError(f"locale={settings['locale']!r}: the simulated phone has no strings in that language; "
                             f"languages: {', '.join(languages())} (benchmark/data/locale/)")
        data = self._settings.model_dump()
        data.update(settings)
        self._settings = DeviceSettings(**data)
        self._invalidate()

    def reset(self, task: Any = None) -> Observation:
        """Factory-fresh phone on the home screen with the construction-time settings;
        then ``task.setup(self)`` if a task is given."""
        check_reset_task(task)
        self._settings = self._initial_settings.model_copy()
        self._factory_reset()
        if task is not None:
            task.setup(self)
            self._invalidate()
        return self.observe()

    def close(self) -> None:
        """Restore the construction-time settings and mark the device closed (also on leaving a ``with`` block)."""
        self._settings = self._initial_settings.model_copy()
        self._invalidate()
        self.closed = True

    def __enter__(self) -> "SimDevice":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ apps
    def app(self, name: str) -> App:
        """An app by package, label or alias (case-insensitive)."""
        pkg = self.resolve_app(name)
        if pkg is None:
            raise KeyError(f"unknown app {name!r}; installed apps: {', '.join(self.app_labels())}")
        return self.apps[pkg]

    def app_labels(self) -> list[str]:
        """The labels of the installed apps, e.g. ``['Contacts', 'Settings', …]``."""
        return [a.label for a in self.apps.values()]

    def resolve_app(self, name: str) -> Optional[str]:
        """The package of the app called ``name`` (package, label or alias, case-insensitive), or None."""
        key = (name or "").strip().lower()
        for pkg, a in self.apps.items():
            if key in (pkg.lower(), a.label.lower(), *(x.lower() for x in a.aliases)):
                return pkg
        return None

    def launcher_apps(self) -> list[App]:
        """The apps the launcher shows."""
        return [a for a in self.apps.values() if a.in_launcher]

    def launch(self, app: str) -> None:
        """Bring ``app`` (package, label or alias) to the front, as the launcher would.

        Raises:
            ActionError: no installed app is called ``app`` (the message lists them).
        """
        pkg = self.resolve_app(app)
        if pkg is None:
            raise ActionError(None, f"app_name={app!r} is not installed; installed apps: {', '.join(self.app_labels())}")
        self._clear_focus()
        self.overlay = None
        a = self.apps[pkg]
        a.launch()
        self.foreground_pkg = pkg
        if pkg in self.recents:
            self.recents.remove(pkg)
        self.recents.insert(0, pkg)
        self._invalidate()

    def force_stop(self, app: str) -> None:
        """Stop ``app`` and drop it from recents (``am force-stop``); an unknown name is ignored."""
        pkg = self.resolve_app(app)
        if pkg is None:
            return
        self.apps[pkg].stop()
        if pkg in self.recents:
            self.recents.remove(pkg)
        if self.foreground_pkg == pkg:
            self.foreground_pkg = None
            self._clear_focus()
        self._invalidate()

    def switch_to(self, pkg: str) -> None:
        """Bring the app ``pkg`` to the front (what choosing it in recents does)."""
        self.launch(pkg)

    def go_home(self) -> None:
        """Show the home screen (closes the shade, recents and the keyboard)."""
        self._clear_focus()
        self.overlay = None
        self.foreground_pkg = None
        self._invalidate()

    def open_recents(self) -> None:
        """Open the recents screen; pressed again on it, switch to the previous app."""
        self._clear_focus()
        if self.overlay == "recents" and len(self.recents) > 1:
            self.launch(self.recents[1])
            return
        self.overlay = "recents"
        self.stores.recents.clear()
        self._invalidate()

    def clear_recents(self) -> None:
        """Stop every app in recents, empty it and go home."""
        for pkg in list(self.recents):
            self.apps[pkg].stop()
        self.recents = []
        self.go_home()

    def press_back(self) -> None:
        """Back: hide the keyboard, else close an overlay, else the foreground app's own Back."""
        if self.focus is not None:
            self._clear_focus()
        elif self.overlay is not None:
            self.overlay = None
        elif self.foreground_pkg is not None:
            self.apps[self.foreground_pkg].back()
        self._invalidate()

    def open_shade(self) -> None:
        """Pull down the notification shade."""
        self._clear_focus()
        self.overlay = "shade"
        self.stores.shade.clear()
        self._invalidate()

    def toggle_system(self, attr: str) -> None:
        """Flip a boolean of the system state (``wifi``, ``bluetooth`` …), as its quick setting does.

        Args:
            attr: the name of the :class:`~benchmark.sim.system.SystemState` attribute.
        """
        setattr(self.system, attr, not getattr(self.system, attr))
        self._invalidate()

    def set_brightness_fraction(self, frac: float) -> None:
        """Set the brightness from a fraction 0..1 of its range (clamped)."""
        self.configure(brightness=int(round(max(0.0, min(1.0, frac)) * 255)))

    def post_notification(self, note: Notification) -> None:
        """Post ``note`` at the top of the notification list."""
        self.system.notifications.insert(0, note)
        self._invalidate()

    def open_notification(self, k: int) -> None:
        """Open (and remove) the ``k``-th notification; its target app comes to the front."""
        note = self.system.notifications.pop(k)
        self.overlay = None
        if note.target:
            self.launch(note.target)
        self._invalidate()

    def clear_notifications(self) -> None:
        """Remove every notification."""
        self.system.notifications.clear()
        self._invalidate()

    def open_url(self, url: str) -> None:
        """Open a URL or file in the browser app (what tapping an .html file does)."""
        browser = next((a for a in self.apps.values() if hasattr(a, "open_url")), None)
        if browser is None:
            raise ActionError(None, "no browser app is installed")
        self.launch(browser.package)
        browser.open_url(url)  # type: ignore[attr-defined]
        self._invalidate()

    def toast(self, message: str) -> None:
        """Show ``message`` as a toast until the next action."""
        self._toast = message

    # ------------------------------------------------------------------ text input
    def _clear_focus(self) -> None:
        self.focus = None

    def type_text(self, value: str) -> None:
        """Append ``value`` to the focused field (newlines become spaces in a one-line field).

        Raises:
            ActionError: no text field is focused.
        """
        if self.focus is None:
            raise ActionError(None, "input_text: no text field is focused; tap a field first or give index/x,y of one")
        if not self.focus.multiline:
            value = value.replace("\n", " ")
        self.focus.store[self.focus.key] = str(self.focus.store.get(self.focus.key, "")) + value
        self._reveal_focus = True
        self._invalidate()

    def delete_char(self) -> None:
        """Delete the last character of the focused field (nothing without focus)."""
        if self.focus is not None:
            cur = str(self.focus.store.get(self.focus.key, ""))
            self.focus.store[self.focus.key] = cur[:-1]
            self._invalidate()

    def clear_text(self) -> None:
        """Empty the focused field (what select-all + Delete does)."""
        if self.focus is not None:
            self.focus.store[self.focus.key] = ""
            self._invalidate()

    def keyboard_enter(self) -> None:
        """The keyboard's Enter: submit the focused field, add a line to a multi-line one, else hide the keyboard."""
        f = self.focus
        if f is None:
            return
        if f.on_submit is not None:
            self._clear_focus()
            f.on_submit()
        elif f.multiline:
            f.store[f.key] = str(f.store.get(f.key, "")) + "\n"
        else:
            self._clear_focus()
        self._invalidate()

    # ------------------------------------------------------------------ frames
    def metrics(self) -> Metrics:
        """The screen's current size, density and font scale, settings applied."""
        s = self._settings
        w, h = (int(round(v * s.size_scale)) for v in self.base_size)
        if s.orientation == "landscape":
            w, h = h, w
        return Metrics(width=w, height=h, dpi=self.base_dpi * s.density_scale, font_scale=s.font_scale)

    def dialog_bounds(self) -> Optional[Box]:
        """Where the foreground app's own dialog, sheet or menu is, if one is open. The dump
        nests it in the app's window; a real phone gives it a window of its own (the one
        window a focus-only dump then holds)."""
        main = self._frame().windows[0]
        last = main.root.children[-1] if main.name == "app" and main.root.children else None
        return last.vis if last is not None and last.meta.get("dialog") else None

    def _prepare_fields(self, widgets: Iterable[Optional[Widget]], store: dict[str, Any]) -> bool:
        """Fill EditText values from their store and mark the focused one; return
        whether the focused field is on this screen."""
        found = False
        stack = [w for w in widgets if w is not None]
        while stack:
            w = stack.pop()
            if w.kind == "field":
                key = w.state["key"]
                w.state["store"] = store
                w.text = str(store.get(key, ""))
                if self.focus is not None and self.focus.store is store and self.focus.key == key:
                    w.state["focused"] = True
                    found = True
            stack.extend(w.children)
        return found

    def _frame(self) -> Frame:
        if self._frame_cache is not None:
            return self._frame_cache
        if self.frame_memo is not None:
            self.frame_memo.begin_frame()
        m = self.metrics()
        W, H = m.width, m.height
        bars = system.bars(m, self._settings.orientation, self._settings.navigation_mode)
        lang = language_of(self._settings.locale)
        app_area = bars.app
        x0, sb, x1, app_bottom = app_area
        windows: list[Window] = []

        # the main window's widgets first: they decide whether the keyboard shows
        main_kind: str
        screen: Optional[Screen] = None
        app: Optional[App] = None
        if self.overlay == "recents":
            main_kind = "recents"
            focus_here = False
        elif self.foreground_pkg is not None:
            main_kind = "app"
            app = self.apps[self.foreground_pkg]
            screen = app.build()
            focus_here = self._prepare_fields((screen.top, screen.body, screen.bottom, screen.dialog), app.route.state)
            localize_screen(screen, lang)
        else:
            main_kind = "launcher"
            focus_here = False
        if self.focus is not None and not focus_here:
            self.focus = None  # the focused field left the screen: the keyboard hides
        kb_node = None
        area: Box = app_area
        ime_nav = bars.gesture  # with gesture navigation the IME draws its own Back / switcher bar
        if self.focus is not None and self.overlay is None:
            kb_node = self._lay(self._localized(self.keyboard.widget(with_nav=ime_nav), lang), m, x0, 0, x1 - x0)
            kb_h = kb_node.bounds[3] - kb_node.bounds[1]
            kb_bottom = H if ime_nav else app_bottom
            _shift(kb_node, 0, kb_bottom - kb_h)
            area = (x0, sb, x1, kb_bottom - kb_h)
        root_w = Widget("column", cls="android.widget.FrameLayout")
        if main_kind == "app" and screen is not None and app is not None:
            root = self._lay_screen(screen, m, area, app.route.state, root_w)
            if self._reveal_focus and self.focus is not None and _reveal(root, app.route.state, m):
                root = lay_screen(screen, m, area, app.route.state, root_w)
            self._reveal_focus = False
            on_outside = None
            if screen.dialog is not None:
                ui = app.ui()
                on_outside = (lambda a=app, u=ui: a.dialog_cancelable(u) and u.close_dialog())
            windows.append(Window("app", app.package, root, bg=screen.bg, activity=screen.activity,
                                  on_outside=on_outside, accent=app.accent))
        elif main_kind == "recents":
            widget = self._localized(system.recents(self), lang)
            root = Node(root_w, area)
            sc = lay_scroll(widget.children[0], m, (x0, sb, x1, app_bottom - m.dp(72)), self.stores.recents)
            actions = lay(widget.children[1], m, x0, app_bottom - m.dp(64), x1 - x0)
            root.children = [sc, actions]
            windows.append(Window("recents", LAUNCHER, root, activity=".NexusLauncherActivity", wallpaper=True))
        else:
            root = Node(root_w, area)
            home = self._lay(self._localized(launcher(self, area, m), lang), m, x0, sb, x1 - x0)
            home.bounds = area
            root.children = [home]
            windows.append(Window("launcher", LAUNCHER, root, activity=".NexusLauncherActivity", wallpaper=True))
        if kb_node is not None:
            kroot = Node(Widget("column", cls="android.widget.FrameLayout"), kb_node.bounds, children=[kb_node])
            windows.append(Window("keyboard", IME, kroot))
        if self.overlay == "shade":
            sw = self._localized(system.shade(self), lang)
            sroot = Node(Widget("column", cls="android.widget.FrameLayout"), app_area)
            sroot.children = [lay_scroll(sw.children[0], m, app_area, self.stores.shade)]
            windows.append(Window("shade", SYSTEMUI, sroot, bg="shade_bg", modal=True, on_outside=self._close_overlay))
        status = self._lay(self._localized(system.status_bar(self), lang), m, bars.status[0], 0, bars.status[2] - bars.status[0])
        status.bounds = bars.status
        windows.append(Window("status", SYSTEMUI, Node(Widget("column", cls="android.widget.FrameLayout"), bars.status,
                                                       children=[status]), bar=True))
        if not (kb_node is not None and ime_nav):  # else the keyboard's own bar covers it
            nx1, ny1, nx2, ny2 = bars.nav
            nav = self._lay(self._localized(system.nav_bar(self, bars, m, kb_node is not None), lang), m, nx1, ny1, nx2 - nx1)
            nav.bounds = bars.nav
            windows.append(Window("nav", SYSTEMUI, Node(Widget("column", cls="android.widget.FrameLayout"), bars.nav,
                                                        children=[nav]), bar=True))

        memo, entry = self.frame_memo, None
        if memo is not None:
            flat = memo.walk(w.root for w in windows)
            key = memo.key(windows, flat, (vars(m), vars(bars), area, vars(self._settings), self._toast))
            entry = memo.get(key) if key is not None else None
            if entry is not None:
                elements, nodes = list(entry.elements), [flat[i] for i in entry.node_index]
            else:
                elements, nodes = export([(w.root, w.package) for w in windows])
                if key is not None:
                    entry = memo.put(key, elements, nodes, flat)
        else:
            elements, nodes = export([(w.root, w.package) for w in windows])
        if main_kind == "app" and app is not None:
            act = windows[0].activity  # relative (".Foo") or fully qualified, as in a manifest
            fg = f"{app.package}/{app.package + act if act.startswith('.') else act}"
        else:
            fg = f"{LAUNCHER}/com.android.launcher3.uioverrides.QuickstepLauncher"
        # (the app stays foreground under the shade, as on Android)
        self._frame_cache = Frame(windows, elements, nodes, m, (W, H), fg, bars, area, memo=entry)
        return self._frame_cache

    def _lay(self, widget: Widget, m: Metrics, x: int, y: int, width: int) -> Node:
        """``lay(widget, m, x, y, width)``, through the frame memo when there is one."""
        if self.frame_memo is None:
            return lay(widget, m, x, y, width)
        return self.frame_memo.lay("lay", [widget], (vars(m), x, y, width), lambda: lay(widget, m, x, y, width))

    def _lay_screen(self, screen: Screen, m: Metrics, area: Box, state: dict[str, Any], root: Widget) -> Node:
        """``lay_screen(...)``, through the frame memo when there is one (not when the focused
        field is to be revealed: that scrolls by the layout just made)."""
        if self.frame_memo is None or self._reveal_focus:
            return lay_screen(screen, m, area, state, root)
        return self.frame_memo.lay(
            "lay_screen", [root, screen.body, screen.top, screen.bottom, screen.fab, screen.dialog],
            (vars(m), area, state, screen.activity, screen.bg), lambda: lay_screen(screen, m, area, state, root))

    @staticmethod
    def _localized(widget: Widget, language: str) -> Widget:
        """``widget`` with its strings in the UI language (see benchmark/ui/i18n.py)."""
        if language != DEFAULT_LANGUAGE:
            localize(widget, language)
        return widget

    def _close_overlay(self) -> None:
        self.overlay = None
        self._invalidate()

    # ------------------------------------------------------------------ observe
    def observe(self) -> Observation:
        """The current screen: screenshot, elements and dump (cached until the state changes)."""
        if self._obs_cache is not None:
            return self._obs_cache
        frame = self._frame()
        entry = frame.memo
        if entry is None:
            img = self.render(frame)
        else:  # frame_memo: a read-only view of the kept screenshot (copied by Pillow when written to)
            if entry.screenshot is None:
                entry.screenshot = self.render(frame)
            img = shared_view(entry.screenshot)
        obs = Observation.model_construct(
            screenshot=img,
            elements=frame.elements,
            xml=None,
            foreground=frame.foreground,
            screen_size=frame.size,
            orientation=self._settings.orientation,
            step=self.actions,
            time=self.clock.elapsed,
        )
        if entry is not None and entry.xml is not None:
            obs.xml = entry.xml
        else:
            obs.xml = obs.to_xml()
            if entry is not None:
                entry.xml = obs.xml
        self._obs_cache = obs
        return obs

    def render(self, frame: Optional[Frame] = None) -> Image.Image:
        """Draw ``frame`` (default: the current screen) as a PIL image.

        Args:
            frame: a laid-out screen; None: the current one.

        Returns:
            The screenshot, in the screen's size.
        """
        frame = frame or self._frame()
        dark = self._settings.dark_theme
        # the frame starts as the first window's background (a full-screen fill saved per frame)
        first = frame.windows[0]
        if first.wallpaper:
            img = wallpaper(frame.size, dark).copy()
        elif first.bg:
            img = Image.new("RGB", frame.size, Painter.color(palette(dark, first.accent), first.bg))
        else:
            img = Image.new("RGB", frame.size, palette(dark)["bg"])
        on_wallpaper = False
        for k, win in enumerate(frame.windows):
            pal = palette(dark, win.accent)
            p = Painter(img, frame.metrics, pal)
            if win.wallpaper:
                if k:
                    img.paste(wallpaper(frame.size, dark))
                on_wallpaper = True
            if win.bar and not on_wallpaper:
                p.d.rectangle(win.root.bounds, fill=img.getpixel(_beside(win.root.bounds, frame.size)))
            if win.bg:
                if k:
                    p.d.rectangle(win.root.bounds, fill=p.c(win.bg))
                on_wallpaper = False  # an opaque window (the shade) now shows through the bars
            p.node(win.root)
        if self._toast:
            draw_toast(img, frame.metrics, translate(self._settings.locale, self._toast), frame.area[3])
        return img

    # ------------------------------------------------------------------ execute
    def execute(self, action: Action) -> None:
        """Perform one action; raises :class:`ActionError` (state unchanged) if impossible."""
        check_action(action)
        frame = self._frame()
        t = action.action_type
        seconds = ACTION_SECONDS
        if t != "wait":
            self._toast = None  # a toast lasts until the next action (which may post a new one)
        if t in TOUCH_TYPES:
            x, y = self._point(action, frame)
            node = self._hit(frame, x, y)
            if t == "long_press":
                self._activate(node, frame, x, y, long=True)
            else:
                self._activate(node, frame, x, y)
                if t == "double_tap":
                    self._invalidate()
                    frame2 = self._frame()
                    self._activate(self._hit(frame2, x, y), frame2, x, y)
        elif t == "input_text":
            if action.index is not None or action.x is not None:
                x, y = self._point(action, frame)
                node = self._hit(frame, x, y)
                target = node[1] if node else None
                if target is None or target.widget.kind != "field":
                    raise ActionError(action, f"input_text target at ({x}, {y}) is not a text field")
                self._activate(node, frame, x, y)
            elif self.focus is None:
                raise ActionError(action, "input_text: no text field is focused; tap a field first or give index/x,y of one")
            if action.clear_text and self.focus is not None:
                self.focus.store[self.focus.key] = ""
            self.type_text(action.text or "")
        elif t == "scroll":
            self._scroll(action, frame)
        elif t == "swipe":
            self._swipe(action, frame)
        elif t == "navigate_back":
            self.press_back()
        elif t == "navigate_home":
            self.go_home()
        elif t == "keyboard_enter":
            self.keyboard_enter()
        elif t == "app_switch":
            self.open_recents()
        elif t == "open_app":
            if self.resolve_app(action.app_name or "") is None:
                raise ActionError(action, f"app_name={action.app_name!r} is not installed; installed apps: {', '.join(self.app_labels())}")
            self.launch(action.app_name or "")
        elif t == "wait":
            seconds += float(action.seconds if action.seconds is not None else 1.0)
        elif t == "answer":
            self.answers.append(action.text or "")
        elif t == "status":
            pass
        self.actions += 1
        self.clock.advance(seconds)
        self._invalidate()

    def _gesture(self, frame: Frame, x: int, y: int, dx: int, dy: int, duration_ms: Optional[int]) -> bool:
        """Gesture navigation: an inward swipe from a side edge is Back; a swipe up from
        the bottom edge goes home (held, it opens recents). Returns whether it was one."""
        m = frame.metrics
        W, H = frame.size
        inset = m.dp(tokens.BACK_GESTURE_INSET)
        if abs(dx) > abs(dy) and abs(dx) >= m.dp(tokens.TOUCH) and ((x <= inset and dx > 0) or (x >= W - inset and dx < 0)):
            self.press_back()
            return True
        if y >= frame.bars.nav[1] - m.dp(8) and -dy >= m.dp(tokens.TOUCH) and abs(dy) > abs(dx):
            if (duration_ms or 0) >= 600:
                self.open_recents()
            else:
                self.go_home()
            return True
        return False

    def idle(self, action: Optional[Action] = None) -> None:
        """Let the time ``action`` takes pass without performing it (what a perturbation
        layer calls for an action it swallowed: the clock keeps running)."""
        seconds = ACTION_SECONDS
        if action is not None and action.action_type == "wait":
            seconds += float(action.seconds if action.seconds is not None else 1.0)
        self.clock.advance(seconds)
        self._invalidate()

    def _point(self, action: Action, frame: Frame) -> tuple[int, int]:
        W, H = frame.size
        if action.index is not None:
            if action.index >= len(frame.elements):
                raise ActionError(action, f"index={action.index} is out of range: the screen has {len(frame.elements)} elements (0..{len(frame.elements) - 1})")
            return frame.elements[action.index].center
        x, y = action.x, action.y
        assert x is not None and y is not None
        if not (0 <= x < W and 0 <= y < H):
            raise ActionError(action, f"point ({x}, {y}) is off-screen; the screen is {W}x{H} (x in 0..{W - 1}, y in 0..{H - 1})")
        return x, y

    def _hit(self, frame: Frame, x: int, y: int) -> Optional[tuple[Window, Node]]:
        """The window and the deepest handler-bearing node under the point (topmost first)."""
        for win in reversed(frame.windows):
            x1, y1, x2, y2 = win.root.vis
            if not (x1 <= x < x2 and y1 <= y < y2):
                continue
            dialog = win.root.children[-1] if win.root.children and win.root.children[-1].meta.get("dialog") else None
            if dialog is not None:
                hit = _hit_node(dialog, x, y)
                if hit is not None:
                    return (win, hit)
                dx1, dy1, dx2, dy2 = dialog.vis
                if not (dx1 <= x < dx2 and dy1 <= y < dy2):
                    return (win, Node(Widget("column", on_click=win.on_outside or (lambda: None)), dialog.vis))
                return None
            hit = _hit_node(win.root, x, y)
            if hit is not None:
                return (win, hit)
            if win.modal:
                return (win, Node(Widget("column", on_click=win.on_outside or (lambda: None)), win.root.vis))
            return None
        return None

    def _activate(self, hit: Optional[tuple[Window, Node]], frame: Frame, x: int, y: int, long: bool = False) -> None:
        if hit is None:
            return  # a tap on nothing does nothing, as on a phone
        win, node = hit
        w = node.widget
        if long and w.on_long_click is not None:
            w.on_long_click()
        elif w.kind == "field":
            store = w.state.get("store")
            if store is None:
                return
            self.focus = _Focus(store, w.state["key"], bool(w.style.get("multiline")), w.on_submit,
                                input_type=str(w.state.get("input_type") or "text"),
                                ime_action=str(w.state.get("ime_action") or ""), password=bool(w.state.get("password")))
            self.keyboard.reset(self.focus.input_type)
            self._reveal_focus = True
        elif w.kind == "slider":
            lo, hi = float(w.state.get("lo", 0)), float(w.state.get("hi", 1))
            a, b = slider_track(node, frame.metrics)
            frac = min(1.0, max(0.0, (x - a) / max(1, b - a)))
            if w.on_change is not None:
                w.on_change(lo + frac * (hi - lo))
        elif w.kind == "checkbox" and w.on_change is not None:
            w.on_change(not w.state.get("checked"))
        elif w.on_click is not None:
            w.on_click()
        elif w.on_change is not None and "checked" in w.state:
            w.on_change(not w.state.get("checked"))
        self._invalidate()

    def _scroll_target(self, frame: Frame, point: Optional[tuple[int, int]]) -> Optional[Node]:
        scrollables = [n for win in reversed(frame.windows) for n in win.root.walk() if n.widget.kind == "scroll"]
        if point is not None:
            for n in scrollables:
                x1, y1, x2, y2 = n.vis
                if x1 <= point[0] < x2 and y1 <= point[1] < y2:
                    return n
            return None
        movable = [n for n in scrollables if n.meta.get("can_scroll")]
        pool = movable or scrollables
        if not pool:
            return None
        return max(pool, key=lambda n: (n.vis[2] - n.vis[0]) * (n.vis[3] - n.vis[1]))

    def _scroll_by(self, node: Node, delta_dp: float) -> None:
        key = node.meta.get("scroll_key", "scroll")
        store = self._store_of(node)
        if store is None:
            return
        max_off = max(0.0, node.meta.get("content_h_dp", 0.0) - node.meta.get("view_h_dp", 0.0))
        cur = float(node.meta.get("offset_dp", 0.0))
        store[key] = max(0.0, min(max_off, cur + delta_dp))
        self._invalidate()

    def _store_of(self, node: Node) -> Optional[dict[str, Any]]:
        frame = self._frame()
        for win in frame.windows:
            if any(n is node for n in win.root.walk()):
                if win.name == "app" and self.foreground_pkg:
                    return self.apps[self.foreground_pkg].route.state
                if win.name == "recents":
                    return self.stores.recents
                if win.name == "shade":
                    return self.stores.shade
                return self.stores.launcher
        return None

    def _scroll(self, action: Action, frame: Frame) -> None:
        point = self._point(action, frame) if (action.index is not None or action.x is not None) else None
        node = self._scroll_target(frame, point)
        if node is None:
            return
        step = node.meta.get("view_h_dp", 0.0) * SCROLL_FRACTION
        if action.direction == "down":
            self._scroll_by(node, step)
        elif action.direction == "up":
            self._scroll_by(node, -step)
        # horizontal scrolling: no horizontal pagers on the simulated phone

    def _swipe(self, action: Action, frame: Frame) -> None:
        W, H = frame.size
        pts = [(action.x, action.y), (action.x2, action.y2)]
        for px, py in pts:
            assert px is not None and py is not None
            if not (0 <= px < W and 0 <= py < H):
                raise ActionError(action, f"swipe point ({px}, {py}) is off-screen; the screen is {W}x{H}")
        (x1, y1), (x2, y2) = pts  # type: ignore[misc]
        dx, dy = x2 - x1, y2 - y1  # type: ignore[operator]
        m = frame.metrics
        sb = m.dp(tokens.STATUS_BAR)
        if frame.bars.gesture and self._gesture(frame, x1, y1, dx, dy, action.duration_ms):  # type: ignore[arg-type]
            return
        if y1 <= sb * 2 and dy > H * 0.15 and self.overlay != "shade":  # type: ignore[operator]
            self.open_shade()
            return
        if self.overlay == "shade" and dy < -H * 0.25:
            hit = self._hit(frame, x1, y1)  # type: ignore[arg-type]
            if not (hit and hit[1].widget.kind == "slider"):
                self._close_overlay()
                return
        hit = self._hit(frame, x1, y1)  # type: ignore[arg-type]
        if hit is not None and hit[1].widget.kind == "slider":
            self._activate(hit, frame, max(0, min(W - 1, x2)), y1)  # type: ignore[arg-type]
            return
        node = self._scroll_target(frame, (x1, y1))  # type: ignore[arg-type]
        if node is not None and abs(dy) > abs(x2 - x1):  # type: ignore[operator]
            self._scroll_by(node, -dy / m.px_per_dp)


def _beside(bar: Box, size: tuple[int, int]) -> tuple[int, int]:
    """A pixel of the window next to a system bar (what shows through it)."""
    x1, y1, x2, y2 = bar
    w, h = size
    if y1 <= 0 and y2 < h:  # the status bar: the app's top edge
        return (min(w - 1, x1 + 2), min(h - 1, y2))
    if x1 > 0:  # a side navigation bar: the app's right edge, low down
        return (x1 - 1, h - 2)
    return (min(w - 1, x1 + 2), max(0, y1 - 1))  # a bottom navigation bar: the app's bottom edge


def _reveal(root: Node, state: dict[str, Any], m: Metrics) -> bool:
    """Scroll the focused field into view, as Android does when an EditText gains
    focus or receives text; return whether an offset changed."""

    sc = next((n for n in root.walk() if n.widget.kind == "scroll" and n.meta.get("focused_bounds")), None)
    if sc is None:
        return False
    vy1, vy2 = sc.vis[1], sc.vis[3]
    fy1, fy2 = sc.meta["focused_bounds"][1], sc.meta["focused_bounds"][3]
    margin = m.dp(8)
    if fy1 >= vy1 and fy2 <= vy2:
        return False
    delta = (fy2 + margin - vy2) if fy2 > vy2 and (fy2 - fy1) < (vy2 - vy1) else (fy1 - margin - vy1)
    key = sc.meta.get("scroll_key", "scroll")
    max_off = max(0.0, sc.meta.get("content_h_dp", 0.0) - sc.meta.get("view_h_dp", 0.0))
    new = max(0.0, min(max_off, float(sc.meta.get("offset_dp", 0.0)) + delta / m.px_per_dp))
    if abs(new - float(state.get(key, 0.0) or 0.0)) < 0.5:
        return False
    state[key] = new
    return True


def _hit_node(n: Node, x: int, y: int) -> Optional[Node]:
    x1, y1, x2, y2 = n.vis
    if not (x1 <= x < x2 and y1 <= y < y2):
        return None
    for c in reversed(n.children):
        r = _hit_node(c, x, y)
        if r is not None:
            return r
    w = n.widget
    if w.on_click is not None or w.on_long_click is not None or w.kind in ("field", "slider") or (w.on_change is not None):
        if w.state.get("enabled", True):
            return n
    return None
