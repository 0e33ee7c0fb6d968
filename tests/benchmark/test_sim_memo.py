"""SimDevice(frame_memo=...) (benchmark/sim/memo.py) changes nothing an observation holds:
the same pixels, elements, dump and the rest, step after step, whether a screen comes
from the memo or is laid out, exported, drawn and serialised afresh."""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Optional

import pytest
from PIL import ImageDraw

import perturb
from benchmark import SimDevice, make_task, run_episode
from benchmark.agents import OracleAgent
from benchmark.sim.memo import FrameMemo
from benchmark.ui.layout import Node
from benchmark.ui.widgets import Widget
from ttir.core.types import Action, Observation

HALF = {"size": (540, 1200), "dpi": 210}  # the solvability test's device


def _seen(obs: Observation) -> tuple:
    """Everything an observation holds (the screenshot by its pixels)."""
    shot = obs.screenshot
    return (hashlib.sha256(shot.tobytes()).hexdigest(), shot.size, shot.mode, obs.xml,
            [e.model_dump() for e in obs.elements], obs.foreground, obs.screen_size, obs.orientation, obs.step,
            obs.time, obs.source, obs.tree_error)


# -- a scripted walk through the phone: apps, forms and the keyboard, lists, the shade, recents, settings
def _tap(d: SimDevice, **match: Any) -> None:
    e = d.observe().find(**match)[0]
    d.execute(Action(action_type="click", x=e.center[0], y=e.center[1]))


def _slide_brightness(d: SimDevice) -> None:
    s = d.observe().find(content_desc="Display brightness")[0]
    d.execute(Action(action_type="swipe", x=s.center[0], y=s.center[1], x2=s.bounds[2] - 1, y2=s.center[1]))


SCRIPT: list[Callable[[SimDevice], Any]] = [
    lambda d: d.reset(make_task("ContactsAddContact")),
    lambda d: d.launch("Contacts"),
    lambda d: _tap(d, content_desc="Create contact"),
    lambda d: _tap(d, resource_id="phone"),
    lambda d: d.execute(Action(action_type="input_text", text="+1 555")),
    lambda d: d.execute(Action(action_type="input_text", text="0100")),
    lambda d: d.execute(Action(action_type="keyboard_enter")),
    lambda d: d.execute(Action(action_type="navigate_back")),
    lambda d: d.execute(Action(action_type="navigate_back")),
    lambda d: d.execute(Action(action_type="navigate_home")),
    lambda d: d.launch("Settings"),
    lambda d: d.execute(Action(action_type="scroll", direction="down")),
    lambda d: d.execute(Action(action_type="swipe", x=270, y=400, x2=270, y2=1000)),
    lambda d: d.execute(Action(action_type="swipe", x=270, y=2, x2=270, y2=750)),  # the shade
    _slide_brightness,
    lambda d: _tap(d, text="Bluetooth"),
    lambda d: d.execute(Action(action_type="navigate_back")),
    lambda d: d.execute(Action(action_type="app_switch")),  # recents
    lambda d: _tap(d, content_desc="Contacts"),
    lambda d: d.execute(Action(action_type="wait", seconds=70)),  # the clock moves on
    lambda d: d.configure(dark_theme=True, font_scale=1.3),
    lambda d: d.configure(orientation="landscape"),
    lambda d: d.configure(orientation="portrait", locale="de-DE"),
    lambda d: d.launch("Contacts"),
]


def _walk(memo: Optional[FrameMemo]) -> list[tuple]:
    d = SimDevice(**HALF, frame_memo=memo)
    out = []
    for step in SCRIPT:
        step(d)
        out.append(_seen(d.observe()))
    return out


@pytest.mark.parametrize("max_frames", [64, 2])
def test_scripted_walk_observes_the_same_with_a_memo(max_frames):
    plain = _walk(None)
    memo = FrameMemo(max_frames=max_frames)
    assert _walk(memo) == plain  # the first walk fills the memo
    misses = memo.misses
    assert _walk(memo) == plain  # the second is served from it (when it holds enough)
    assert len(memo) <= max_frames
    if max_frames == 64:
        assert memo.misses == misses and memo.hits >= len(SCRIPT) and memo.layout_hits > 0
    assert memo.unkeyed == memo.layout_unkeyed == 0


# -- episodes under perturbations: overlays, pixel traps, settings changes, the keyboard, web pages
EPISODES = [
    ("ExpenseAddSingle", "popup_permission"),
    ("BrowserMaze", "trap_visual_hallucination"),
    ("SystemBrightnessMax", "ui_theme_dark"),
    ("MarkorCreateNote", "ui_language"),
    ("ContactsAddContact", "orientation_landscape"),
    ("SimpleSmsSend", "execution_delay_loading"),
]


def _episode(task_name: str, perturbation: str, memo: Optional[FrameMemo]) -> tuple:
    task = make_task(task_name)
    env = perturb.PerturbedDevice(SimDevice(**HALF, frame_memo=memo), [perturb.make(perturbation)], seed=0)
    seen: list[tuple] = []
    with env:
        result = run_episode(env, task, OracleAgent.for_task(task), on_observation=lambda i, obs: seen.append(_seen(obs)))
        events = env.event_log()
    record = result.to_json_dict()
    record.pop("timing_s")
    for step in record["trajectory"]:
        step.pop("timing_ms")
    return seen, record, events


@pytest.mark.parametrize("task_name,perturbation", EPISODES)
def test_episodes_are_the_same_with_a_memo(task_name, perturbation):
    plain = _episode(task_name, perturbation, None)
    memo = FrameMemo()
    assert _episode(task_name, perturbation, memo) == plain
    hits = memo.hits
    assert _episode(task_name, perturbation, memo) == plain
    assert memo.hits > hits and memo.unkeyed == 0


def test_the_screenshot_is_a_read_only_view_of_the_kept_one():
    memo = FrameMemo()
    first = SimDevice(**HALF, frame_memo=memo).observe()
    pixels = first.screenshot.tobytes()
    ImageDraw.Draw(first.screenshot).rectangle((0, 0, 99, 99), fill=(255, 0, 0))  # a perturbation drawing into it
    first.screenshot.paste((0, 0, 255), (100, 100, 200, 200))
    assert first.screenshot.getpixel((5, 5)) == (255, 0, 0) and first.screenshot.getpixel((150, 150)) == (0, 0, 255)
    again = SimDevice(**HALF, frame_memo=memo).observe()  # the same screen, from the memo
    assert memo.hits == 1 and again.screenshot.tobytes() == pixels
    assert SimDevice(**HALF).observe().screenshot.tobytes() == pixels


def test_trees_with_other_than_plain_values_are_not_memoised():
    memo = FrameMemo()
    odd = Widget("text", text="x", style={"size": 14, "painter": object()})
    laid: list[Node] = []

    def compute() -> Node:
        laid.append(Node(odd, (0, 0, 10, 10)))
        return laid[-1]

    args = ({"width": 10}, 0, 0, 10)
    assert memo.lay("lay", [odd], args, compute) is laid[0]
    assert memo.lay("lay", [odd], args, compute) is laid[1]  # laid out again: no key, nothing kept
    assert memo.layout_unkeyed == 2 and memo.layout_hits == 0
    assert memo.key([], [laid[0]], ()) is None and memo.unkeyed == 1

    plain = Widget("text", text="x", style={"size": 14})
    memo.begin_frame()
    first = memo.lay("lay", [plain], args, lambda: Node(plain, (0, 0, 10, 10), lines=("x",), font_px=14))
    memo.begin_frame()
    again = memo.lay("lay", [plain], args, lambda: pytest.fail("a kept layout is not laid out again"))
    assert again is not first and again.widget is plain and (again.bounds, again.lines, again.font_px) == (
        first.bounds, first.lines, first.font_px)
    # 1, 1.0 and True are equal in Python but not the same style
    for size in (1, 1.0, True):
        memo.begin_frame()
        memo.lay("lay", [Widget("text", text="x", style={"size": size})], args, lambda: Node(plain, (0, 0, 1, 1)))
    assert memo.layout_misses == 4


def test_frame_memo_is_checked():
    with pytest.raises(TypeError, match="FrameMemo"):
        SimDevice(frame_memo={})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_frames"):
        FrameMemo(max_frames=0)
    assert SimDevice(**HALF).frame_memo is None
