"""Dump styles: which windows the UI dump the agent sees holds.

``all_windows`` (the default) is what ``uiautomator dump`` writes on current Android:
every window — the app's, a dialog's, the keyboard, the status and navigation bars.
``focused_window`` is what older uiautomator versions (and tools built on
``getRootInActiveWindow``) write: only the window with input focus. When a dialog is
up — an injected pop-up, an "isn't responding" dialog, a permission prompt, the
app's own alert, sheet or menu — that is the dialog's window alone; otherwise the
app's (or the launcher's, the notification shade's) window, without the bars and
the keyboard. Real corpora hold many such dumps (experiments/real_screens/, label
``focus_only``).

:class:`FocusedWindowDump` applies the style to what a :class:`~perturb.PerturbedDevice`
shows — after the overlay engine composited its nodes — so the agent and the guard
see it; the harness's ground truth (the device, the event log, the verifier) does
not. The screenshot is unchanged: the screen still shows everything.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Literal, Optional, Sequence

from perturb.overlay.geometry import SYSTEMUI
from perturb.overlay.tree import TNode, flatten, forest
from ttir.core.types import Action, Observation, UIElement

DumpStyle = Literal["all_windows", "focused_window"]
DUMP_STYLES: tuple[str, ...] = ("all_windows", "focused_window")
DEFAULT_DUMP_STYLE = "all_windows"
Box = tuple[int, int, int, int]
FOCUSABLE_SYSTEMUI_SHARE = 0.5  # a System UI window this large takes focus (the shade, the keyguard); bars do not
_CACHED_FRAMES = 16  # old frames a perturbation may serve again (a frozen or deadlocked screen)


def takes_focus(root: UIElement, screen: tuple[int, int]) -> bool:
    """Whether a window can hold input focus: not the keyboard, not a status bar,
    navigation bar or heads-up notification (small System UI windows)."""
    if "inputmethod" in root.package:
        return False
    if root.package == SYSTEMUI:
        w, h = screen
        return root.area >= FOCUSABLE_SYSTEMUI_SHARE * w * h
    return True


def focused_window(obs: Observation, dialogs: Sequence[Box] = ()) -> Observation:
    """``obs`` with only its focused window. ``dialogs``: the boxes of dialogs the
    device knows are windows of their own although the dump nests them in the app's
    window (the app's own alerts, sheets and menus; in-app pop-ups), topmost last;
    the topmost one inside the focused window becomes the focused window."""
    roots = forest(obs.elements)
    candidates = [r for r in roots if takes_focus(r.el, obs.screen_size)]
    if not candidates:
        return obs
    top = candidates[-1]
    window = _nested_dialog(top, dialogs) or top
    return obs.replace(elements=flatten([window]))


def _nested_dialog(root: TNode, dialogs: Sequence[Box]) -> Optional[TNode]:
    """The dialog nested in ``root`` as a window of its own: the child of ``root`` that
    holds the topmost known dialog box, when ``root`` holds more than that child."""
    for box in reversed(dialogs):
        for child in root.children:
            if any(n.el.bounds == tuple(box) for n in child.walk()):
                if len(root.children) == 1:
                    return None  # the dialog's own window already (a permission prompt, an ANR)
                el = child.el
                frame = UIElement.unchecked(class_name="android.widget.FrameLayout", package=el.package,
                                            bounds=el.bounds)
                return TNode(frame, [child])
    return None


class FocusedWindowDump:
    """A Device that shows ``env``'s observations in the ``focused_window`` dump style
    (everything else — actions, settings, the event log — passes through)."""

    def __init__(self, env: Any):
        self.env = env
        self._frames: "OrderedDict[int, tuple[list[UIElement], Observation]]" = OrderedDict()

    def __getattr__(self, name: str) -> Any:  # ctx, overlays, inner, event_log, pop_events ...
        return getattr(self.env, name)

    @property
    def unwrapped(self) -> Any:
        return getattr(self.env, "unwrapped", self.env)

    def reset(self, task: Any = None, **kwargs: Any) -> Observation:
        self._frames.clear()
        self.env.reset(task, **kwargs)
        return self.observe()

    def execute(self, action: Action) -> None:
        self.env.execute(action)

    def observe(self) -> Observation:
        obs = self.env.observe()
        key = id(obs.elements)
        hit = self._frames.get(key)
        if hit is not None and hit[0] is obs.elements:
            return hit[1]  # the same frame shown again is the same dump (identity matters to ground truth)
        out = focused_window(obs, self._dialogs(obs))
        self._frames[key] = (obs.elements, out)
        while len(self._frames) > _CACHED_FRAMES:
            self._frames.popitem(last=False)
        return out

    def _dialogs(self, obs: Observation) -> list[Box]:
        """Dialog boxes, bottom to top: the app's own (the device knows it), then the overlays'."""
        out: list[Box] = []
        bounds = getattr(self.unwrapped, "dialog_bounds", None)
        if callable(bounds):
            own = bounds()
            if own is not None:
                out.append(tuple(own))
        overlays = getattr(self.env, "overlays", None)
        for layer in (overlays.visible(obs.package) if overlays is not None else []):
            box = layer.dialog_box()
            if box is not None:
                out.append(box)
        return out

    def close(self) -> None:
        self.env.close()

    def __enter__(self) -> "FocusedWindowDump":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def with_dump_style(env: Any, style: str) -> Any:
    """``env`` as a device whose dumps have ``style`` (``all_windows``: ``env`` itself)."""
    if style == DEFAULT_DUMP_STYLE:
        return env
    if style == "focused_window":
        return FocusedWindowDump(env)
    raise ValueError(f"dump={style!r} is not a dump style; expected one of {', '.join(DUMP_STYLES)}")
