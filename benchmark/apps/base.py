"""The simulated-app framework: routes (a back stack per app), a UI context for
handlers, and the :class:`App` base class every simulated app extends.

An app keeps its user data in a plain model (``app.data``) that task verifiers
read, and builds a fresh :class:`~benchmark.ui.widgets.Screen` per frame from
its current route.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional

from benchmark.ui.widgets import Screen, Widget, button, dialog

if TYPE_CHECKING:  # pragma: no cover
    from benchmark.sim.device import SimDevice

_route_ids = itertools.count(1)


@dataclass(eq=False)
class Route:
    """One screen on an app's back stack. ``state`` holds form values, scroll
    offsets and an open dialog; ``params`` what the screen was opened with."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    uid: int = field(default_factory=lambda: next(_route_ids))


class UI:
    """What screen builders and handlers use to navigate and read the system."""

    def __init__(self, app: "App", route: Route):
        self.app = app
        self.route = route

    # -- navigation ---------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        return self.route.state

    @property
    def params(self) -> dict[str, Any]:
        return self.route.params

    def push(self, name: str, state: Optional[dict[str, Any]] = None, **params: Any) -> Route:
        r = Route(name, params=params, state=dict(state or {}))
        self.app.stack.append(r)
        return r

    def pop(self) -> None:
        if len(self.app.stack) > 1:
            self.app.stack.pop()
        else:
            self.app.device.go_home()

    def pop_to(self, name: str) -> None:
        while len(self.app.stack) > 1 and self.app.stack[-1].name != name:
            self.app.stack.pop()

    def replace(self, name: str, state: Optional[dict[str, Any]] = None, **params: Any) -> Route:
        self.app.stack.pop()
        return self.push(name, state, **params)

    def set(self, key: str, value: Any) -> None:
        self.route.state[key] = value

    def get(self, key: str, default: Any = "") -> Any:
        return self.route.state.get(key, default)

    def open_dialog(self, kind: str, **info: Any) -> None:
        self.route.state["dialog"] = {"kind": kind, **info}

    def close_dialog(self) -> None:
        self.route.state.pop("dialog", None)

    @property
    def dialog_info(self) -> Optional[dict[str, Any]]:
        return self.route.state.get("dialog")

    # -- system ---------------------------------------------------------------------
    @property
    def device(self) -> "SimDevice":
        return self.app.device

    def now(self) -> dt.datetime:
        return self.app.device.clock.now()

    def fmt_time(self, t: dt.datetime) -> str:
        return self.app.device.clock.fmt_time(t)

    def fmt_date(self, d: dt.date, short: bool = False) -> str:
        return self.app.device.clock.fmt_date(d, short=short)

    def toast(self, message: str) -> None:
        self.app.device.toast(message)

    # -- small builders shared by apps --------------------------------------------------
    def confirm(self, title: str, message: str, confirm_label: str, on_confirm: Callable[[], Any],
                cancel_label: str = "Cancel") -> Widget:
        """A framework AlertDialog (``android:id/button1`` positive, ``button2`` negative)."""

        def do_confirm() -> None:
            self.close_dialog()
            on_confirm()

        return dialog(title, message, [
            button(cancel_label, self.close_dialog, id="android:id/button2", variant="text"),
            button(confirm_label, do_confirm, id="android:id/button1", variant="text"),
        ])


class App:
    """Base class of every simulated app.

    Subclasses set ``package``, ``label`` (launcher name), ``icon``, ``accent``,
    ``start`` (first route), ``data_model`` (or ``default_data()``) and one
    ``screen_<route name>(ui)`` method per screen.
    """

    package: ClassVar[str] = ""
    label: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    icon: ClassVar[str] = "circle"
    accent: ClassVar[tuple[int, int, int]] = (103, 80, 164)
    start: ClassVar[str] = "main"
    in_launcher: ClassVar[bool] = True
    order: ClassVar[int] = 50  # launcher position (lower first)
    data_model: ClassVar[Optional[type]] = None  # the user-data model; default_data() builds an empty one

    def __init__(self, device: "SimDevice"):
        self.device = device
        self.data: Any = self.default_data()
        self.stack: list[Route] = []

    # -- to override ---------------------------------------------------------------------
    def default_data(self) -> Any:
        return self.data_model() if self.data_model is not None else None

    def on_back(self, ui: UI) -> bool:
        """Handle the back key on the current route; return True if consumed.

        Default: close an open dialog."""
        if ui.dialog_info is not None:
            ui.close_dialog()
            return True
        return False

    def dialog_cancelable(self, ui: UI) -> bool:
        return True

    # -- framework ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return bool(self.stack)

    def launch(self) -> None:
        """Bring to front: a fresh start route if not running, else where the user left."""
        if not self.stack:
            self.stack = [Route(self.start)]

    def stop(self) -> None:
        self.stack = []

    @property
    def route(self) -> Route:
        if not self.stack:
            self.launch()
        return self.stack[-1]

    def ui(self) -> UI:
        return UI(self, self.route)

    def build(self) -> Screen:
        ui = self.ui()
        fn = getattr(self, f"screen_{ui.route.name}", None)
        if fn is None:
            raise RuntimeError(f"{type(self).__name__} has no screen_{ui.route.name}() for route {ui.route.name!r}")
        screen = fn(ui)
        if not screen.activity or screen.activity == ".MainActivity":
            screen.activity = f".{ui.route.name.title().replace('_', '')}Activity"
        return screen

    def back(self) -> None:
        ui = self.ui()
        if self.on_back(ui):
            return
        ui.pop()

    def snapshot(self) -> Any:
        """A deep copy of the user data, for verifiers and determinism checks."""
        data = self.data
        if hasattr(data, "model_copy"):
            return data.model_copy(deep=True)
        import copy

        return copy.deepcopy(data)
