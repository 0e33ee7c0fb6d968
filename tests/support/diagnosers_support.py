"""Helpers for the diagnoser tests: fixture dumps, hand-built histories, simple
screenshots drawn from a UI tree, and a fake VLM judge."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any, Optional

from PIL import Image, ImageDraw

from diagnosers import Cost, DiagnosisContext, Judgment
from ttir.core.types import Action, AgentStep, Observation, StepRecord, UIElement

DUMPS = Path(__file__).resolve().parents[1] / "fixtures" / "dumps"
BROCCOLI = "com.flauschcode.broccoli"


def dump(name: str, foreground: Optional[str] = None) -> Observation:
    """A fixture dump as a fresh Observation (tree only, no screenshot)."""
    return Observation.from_xml((DUMPS / f"{name}.xml").read_text(encoding="utf-8"), foreground=foreground)


def draw(obs: Observation) -> Image.Image:
    """A deterministic screenshot of ``obs``: every node a filled box whose shade
    depends on its text, description and state (so any UI change changes pixels)."""
    w, h = obs.screen_size
    img = Image.new("RGB", (w, h), (250, 250, 250))
    d = ImageDraw.Draw(img)
    for e in obs.elements:
        key = f"{e.text}|{e.content_desc}|{e.checked}|{e.selected}|{e.focused}"
        c = zlib.crc32(key.encode()) % 200
        x1, y1, x2, y2 = e.bounds
        if e.text or e.content_desc:
            d.rectangle((x1 + 4, y1 + 4, max(x1 + 4, x2 - 4), max(y1 + 4, y2 - 4)), fill=(c, 255 - c, (c * 7) % 255))
        else:
            d.rectangle((x1, y1, x2, y2), outline=(120, 120, 120), width=3)
    return img


def with_screenshot(obs: Observation) -> Observation:
    return obs.replace(screenshot=draw(obs))


def screenshot_only(obs: Observation) -> Observation:
    """The same screen without a UI tree (what a screenshot-only agent sees)."""
    img = obs.screenshot if obs.screenshot is not None else draw(obs)
    return Observation.model_construct(screenshot=img, elements=[], xml=None, foreground=None,
                                       screen_size=obs.screen_size, orientation=obs.orientation, step=0, time=0.0)


def tap(x: int, y: int) -> Action:
    return Action(action_type="click", x=x, y=y)


def rec(obs: Observation, action: Action, summary: str = "", thought: str = "", source: str = "agent") -> StepRecord:
    return StepRecord(observation=obs, step=AgentStep(action=action, summary=summary, thought=thought), source=source)  # type: ignore[arg-type]


def ctx(goal: str, obs: Observation, history: Optional[list[StepRecord]] = None,
        pending: Optional[AgentStep] = None) -> DiagnosisContext:
    return DiagnosisContext(goal=goal, observation=obs, history=list(history or []), pending=pending)


def complete() -> AgentStep:
    return AgentStep(action=Action(action_type="status", goal_status="complete"), summary="The task is done")


def element(obs: Observation, text: str = "", desc: str = "", rid: str = "") -> UIElement:
    for e in obs.elements:
        if (text and e.text == text) or (desc and e.content_desc == desc) or (rid and e.resource_id.endswith(rid)):
            return e
    raise AssertionError(f"no element text={text!r} desc={desc!r} id={rid!r}")


def retext(obs: Observation, old: str, new: str) -> Observation:
    """A copy of ``obs`` with one element's text changed."""
    els = [e.model_copy(update={"text": new}) if e.text == old else e for e in obs.elements]
    return obs.replace(elements=els)


class FakeJudge:
    """Stands in for diagnosers.vlm_judge.VLMJudge: a fixed judgment, counted calls."""

    def __init__(self, judgment: dict[str, Any], scheduled: bool = False):
        self.judgment = Judgment.model_validate(judgment)
        self.calls = 0
        self._scheduled = scheduled

    def judge(self, ctx: DiagnosisContext) -> tuple[Judgment, Cost]:
        self.calls += 1
        return self.judgment, Cost(model_calls=1, prompt_tokens=100, completion_tokens=20, latency_s=0.5)

    def scheduled(self, ctx: DiagnosisContext) -> bool:
        return self._scheduled


def judgment(**over: Any) -> dict[str, Any]:
    base = {"repeat_failure_detected": False, "previous_intended_effect_satisfied": "yes",
            "interference_present": False, "task_alignment": "on_track", "reason": "looks fine"}
    base.update(over)
    return base
