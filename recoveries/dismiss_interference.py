"""Dismiss-interference recovery: close, decline or navigate past an off-task overlay;
never engage with its content (AndroidReality App. D.1 ③)."""

from __future__ import annotations

from typing import Optional

from recoveries.base import Recovery, RecoveryContext, recovery_step
from recoveries.ui import dismiss_rank, label, role_of
from ttir.types import Action, AgentStep, Observation, UIElement

LOADING_HINTS = ("loading", "please wait", "progress", "isn't responding", "not responding")


class DismissInterference(Recovery):
    name = "dismiss_interference"
    handles = ("interference",)

    def rules(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        obs = ctx.observation
        details = ctx.finding.details
        if details.get("dismiss_hint") == "report":
            return None  # a lock screen: only the user can unlock it; report, never press Back at it
        region = details.get("bounds")
        if details.get("dismiss_hint") == "swipe_up" and region and not ctx.taken:
            # a heads-up notification: swipe it away (back would leave the app underneath)
            x1, y1, x2, y2 = region
            cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
            return recovery_step(Action(action_type="swipe", x=cx, y=cy, x2=cx, y2=max(0, y1 - (y2 - y1)), duration_ms=200),
                                 "A notification banner covers the top of the screen; swipe it away without opening it.",
                                 "Swipe the notification away")
        if details.get("dismiss_hint") == "wait" and len(ctx.taken) < 2:
            return recovery_step(Action(action_type="wait", seconds=2.0),
                                 "The screen is loading; wait for it rather than tapping through.", "Wait for the screen")
        tried = {tuple(s.action.point() or ()) for s in ctx.taken if s.action.is_touch}
        candidates = self._buttons(obs, region)
        dismiss = sorted((e for e in candidates if role_of(e) == "dismiss"), key=dismiss_rank)
        for e in dismiss:
            if e.center in tried:
                continue
            x, y = e.center
            return recovery_step(
                Action(action_type="click", x=x, y=y),
                f"An off-task {ctx.finding.details.get('kind', 'overlay')} covers the task UI; decline it with "
                f"'{label(e)}' rather than engaging with its content.",
                f'Tap "{label(e)}" to dismiss the interruption',
            )
        if self._is_waiting_screen(obs, candidates):
            return recovery_step(Action(action_type="wait", seconds=2.0),
                                 "The screen is loading or frozen; waiting is the only safe way past it.", "Wait for the screen")
        if not any(s.action.action_type == "navigate_back" for s in ctx.taken[-1:]):
            return recovery_step(Action(action_type="navigate_back"),
                                 "No decline or close button is available; go back to leave the interruption.",
                                 "Press back to leave the interruption")
        return None

    def allowed(self, step: AgentStep, ctx: RecoveryContext) -> bool:
        if not super().allowed(step, ctx):
            return False
        p = step.action.point(ctx.observation.elements) if step.action.is_touch else None
        if p is None:
            return True
        hit = ctx.observation.element_at(*p, clickable_only=True)
        return hit is None or role_of(hit) not in ("engage", "destructive")  # never engage, never destroy the task

    @staticmethod
    def _buttons(obs: Observation, region: Optional[list[int]]) -> list[UIElement]:
        out = []
        for e in obs.elements:
            if not (e.clickable and e.enabled and e.area > 0 and label(e)):
                continue
            if region:
                x, y = e.center
                if not (region[0] <= x < region[2] and region[1] <= y < region[3]):
                    continue
            out.append(e)
        # the overlay is drawn last: later nodes first
        return list(reversed(out))

    @staticmethod
    def _is_waiting_screen(obs: Observation, buttons: list[UIElement]) -> bool:
        if buttons:
            return False
        text = " ".join(f"{e.text} {e.content_desc}" for e in obs.elements).lower()
        return any(h in text for h in LOADING_HINTS) or any("ProgressBar" in e.class_name for e in obs.elements)
