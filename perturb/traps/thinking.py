"""Thinking-layer traps (T): the observation at decision time misleads; the device
and its raw history keep the true screen.

- ``trap_temporal_conflict`` — the frame from N = 3 steps earlier is served instead
  of the current one.
- ``trap_visual_hallucination`` — text labels are replaced (24-pair antonym
  dictionary, else a character permutation) in BOTH the screenshot (background by
  median sampling along the box edges, region overwritten, replacement drawn in the
  contrast-inverted colour) and the UI dump given to the agent.
"""

from __future__ import annotations

import random
from typing import Any, Optional

from pydantic import Field

from perturb.base import Magnitude
from perturb.device import PerturbationContext
from perturb.traps import pixels
from perturb.traps.base import Trap
from perturb.traps.lexicon import hallucinate
from ttir.core.types import Observation, UIElement


class TemporalMagnitude(Magnitude):
    age_steps: int = Field(3, ge=1, le=10, description="N: the served frame is the one captured N steps earlier.")


class TemporalConflict(Trap):
    """T: a stale frame (N steps old) is served at decision time."""

    layer = "T"
    component = "state"
    magnitude_model = TemporalMagnitude

    def transform(self, obs: Observation, ctx: PerturbationContext) -> Observation:
        n = self.magnitude.age_steps
        frames: dict[int, Observation] = ctx.state.setdefault(self.key("frames"), {})
        frames[ctx.step] = obs  # the true frame of this step (the last one, if re-observed)
        for s in [s for s in frames if s < ctx.step - n]:
            del frames[s]
        active: Optional[int] = ctx.state.get(self.key("from_step"))
        if active is None:
            stale = frames.get(ctx.step - n)
            if not self.try_fire(ctx, obs, eligible=lambda: stale is not None and _differs(stale, obs)):
                return obs
            active = ctx.step
            ctx.state[self.key("from_step")] = active
            self.emit_fired(ctx, age_steps=n, duration_steps=self.persistence.duration_steps)
        duration = self.persistence.duration_steps
        if ctx.step < active or (duration is not None and ctx.step >= active + duration):
            return obs
        stale = frames.get(ctx.step - n)
        if stale is None:
            return obs
        self.emit_once(ctx, "frame_stale", age_steps=n, served_step=ctx.step - n,
                       served_digest=pixels.digest(stale.screenshot), true_digest=pixels.digest(obs.screenshot),
                       served_foreground=stale.foreground, true_foreground=obs.foreground)
        # delivered now: only the content is old
        return stale.replace(step=obs.step, time=obs.time)


def _differs(a: Observation, b: Observation) -> bool:
    return a.xml != b.xml or not pixels.same_pixels(a.screenshot, b.screenshot)


class HallucinationMagnitude(Magnitude):
    max_labels: Optional[int] = Field(None, ge=1, description="Most labels to replace (None: every visible text label); "
                                                              "labels with a dictionary antonym are taken first.")


class VisualHallucination(Trap):
    """T: the agent is shown misleading labels (pixels and dump agree)."""

    layer = "T"
    component = "state"
    magnitude_model = HallucinationMagnitude

    def transform(self, obs: Observation, ctx: PerturbationContext) -> Observation:
        active: Optional[dict[str, Any]] = ctx.state.get(self.key("active"))
        if active is None:
            if not self.try_fire(ctx, obs, eligible=lambda: bool(_candidates(obs, first_only=True))):
                return obs
            active = {"from_step": ctx.step, "seed": self.rng.getrandbits(64)}
            ctx.state[self.key("active")] = active
            self.emit_fired(ctx, duration_steps=self.persistence.duration_steps)
        duration = self.persistence.duration_steps
        if ctx.step < active["from_step"] or (duration is not None and ctx.step >= active["from_step"] + duration):
            return obs
        # the same seed on a re-observed screen gives the same replacements
        out, swaps = self.apply(obs, random.Random(active["seed"]))
        if swaps:
            self.emit_once(ctx, "labels_swapped", swaps=swaps)
        return out

    def apply(self, obs: Observation, rng: random.Random) -> tuple[Observation, list[dict[str, Any]]]:
        """``obs`` with its labels replaced, and the log of what was replaced where."""
        plan: list[tuple[int, str, str]] = []
        for i in _candidates(obs):
            old = obs.elements[i].text
            new, how = hallucinate(old, rng)
            if new != old:
                plan.append((i, new, how))
        limit = self.magnitude.max_labels
        if limit is not None and len(plan) > limit:
            antonyms = [p for p in plan if p[2] == "antonym"]
            others = [p for p in plan if p[2] != "antonym"]
            rng.shuffle(antonyms)
            rng.shuffle(others)
            keep = {p[0] for p in (antonyms + others)[:limit]}
            plan = [p for p in plan if p[0] in keep]
        if not plan:
            return obs, []
        img = obs.screenshot.copy() if obs.screenshot is not None else None
        elements = list(obs.elements)
        swaps: list[dict[str, Any]] = []
        for i, new, how in plan:
            e = elements[i]
            entry: dict[str, Any] = {"index": i, "resource_id": e.resource_id, "bounds": list(e.bounds),
                                     "original": e.text, "replacement": new, "how": how}
            if img is not None:
                box = pixels.clip(e.bounds, img.size)
                found = pixels.locate_label(img, box) if box is not None else None
                if box is not None and found is not None:
                    ink, bg = found
                    entry["region"] = list(pixels.draw_label(img, box, ink, new, e.text, bg))
                    entry["background"] = list(bg)
                    entry["color"] = list(pixels.contrast_color(bg))
            elements[i] = e.model_copy(update={"text": new})
            swaps.append(entry)
        return obs.replace(elements=elements, screenshot=img), swaps


def _candidates(obs: Observation, first_only: bool = False) -> list[int]:
    """Visible text labels of the app in front: leaf nodes with text, on screen, not
    covered by a node drawn later (a dialog over a list). ``first_only`` stops at the
    first one (the per-step eligibility check)."""
    els = obs.elements
    size = obs.screen_size if obs.screenshot is None else obs.screenshot.size
    parents = {e.parent for e in els if e.parent is not None}

    def scan(package: Optional[str]) -> list[int]:
        out = []
        for i, e in enumerate(els):
            if not e.text.strip() or i in parents or (package and e.package != package):
                continue
            if pixels.clip(e.bounds, size) is None or _covered(els, i):
                continue
            out.append(i)
            if first_only:
                break
        return out

    # the app in front first; only system UI on screen (e.g. the launcher's dock): any window
    return scan(obs.package) or (scan(None) if obs.package else [])


def _ancestors(els: list[UIElement], i: int) -> set[int]:
    out = set()
    p = els[i].parent
    while p is not None and p not in out:
        out.add(p)
        p = els[p].parent
    return out


def _covered(els: list[UIElement], i: int) -> bool:
    x1, y1, x2, y2 = els[i].bounds
    anc = _ancestors(els, i)
    for j in range(i + 1, len(els)):
        if j in anc:
            continue
        a1, b1, a2, b2 = els[j].bounds
        if min(x2, a2) - max(x1, a1) > 0 and min(y2, b2) - max(y1, b1) > 0:
            return True
    return False
