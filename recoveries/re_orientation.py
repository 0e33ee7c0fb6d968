"""Re-orientation recovery: the shortest action that restores the task context —
back out of a detour, re-open the on-task app, or replay how the agent entered the
last on-task screen (e.g. pull the shade down again). It does not try to finish the
task (AndroidReality App. D.1 ④)."""

from __future__ import annotations

from typing import ClassVar, Optional

from ttir.core.config import RecoveryName
from ttir.core.diagnosis import TaskAlignmentDetails
from ttir.core.recovery import Recovery, RecoveryContext, recovery_step
from recoveries.ui import label
from ttir.core.types import Action, AgentStep, Observation, StepRecord

SYSTEM_PACKAGES = ("com.android.systemui", "com.google.android.inputmethod.latin", "android")


def is_launcher(obs: Observation) -> bool:
    pkg = obs.package or ""
    return "launcher" in pkg


class ReOrientation(Recovery):
    """The recovery of the task-alignment check: the shortest action that restores the task's
    context — back out of a detour, re-open the on-task app, or replay how the agent entered
    the last on-task screen. It does not try to finish the task (AndroidReality App. D.1 ④).
    
    Args:
        mode: ``rules`` or ``vlm`` (the recovery model proposes; the rules answer when it fails
            or proposes what :meth:`allowed` refuses).
        client: the recovery model; None: the rules.
        prompt: the recovery prompt (a name in ``prompts/`` or a path); None: ``re_orientation``.
        settings: the guard's :class:`~ttir.core.config.RecoveryConfig`; None: the defaults.
    """

    name: ClassVar[RecoveryName] = "re_orientation"
    handles = ("task_alignment",)

    def rules(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        """The deterministic tier: Back out of a detour, re-open the on-task app, or
        replay how the agent entered the last on-task screen.

        Args:
            ctx: the goal, the screen, the history, the finding and the steps taken so far.

        Returns:
            The next corrective step, or None when there is nothing (left) to try.
        """
        obs = ctx.observation
        entry = self._entry(ctx.history)
        on_task_pkg = ctx.finding.details_as(TaskAlignmentDetails).on_task_package or (entry[0] if entry else None)
        cur = obs.package
        taken_types = [s.action.action_type for s in ctx.taken]
        # 1. a detour inside another (non-launcher) app: back usually returns to where we came from
        if cur and on_task_pkg and cur != on_task_pkg and not is_launcher(obs) and "navigate_back" not in taken_types:
            return recovery_step(Action(action_type="navigate_back"),
                                 f"The screen belongs to {cur}, not the task's app; go back to where the task was.",
                                 "Go back to the task's app")
        # 2. replay how the agent entered the last on-task context
        if entry is not None and (cur != on_task_pkg or is_launcher(obs)):
            pkg, how, name = entry
            if how == "shade":
                w, h = obs.screen_size
                return recovery_step(Action(action_type="swipe", x=w // 2, y=5, x2=w // 2, y2=int(h * 0.6), duration_ms=300),
                                     "The task was being done in the quick settings panel; pull it down again.",
                                     "Re-open the quick settings panel")
            if name and "open_app" not in taken_types:
                return recovery_step(Action(action_type="open_app", app_name=name),
                                     f"The task's app ({name}) is no longer in front; re-open it and resume: {ctx.goal}",
                                     f"Re-open {name}")
        if "navigate_back" not in taken_types and not is_launcher(obs):
            return recovery_step(Action(action_type="navigate_back"),
                                 "This screen is off the task's path; go back one step.", "Go back")
        return None

    @staticmethod
    def _entry(history: list[StepRecord]) -> Optional[tuple[str, str, str]]:
        """(package, how it was entered, app name) of the last context the agent worked in."""
        names: dict[str, str] = {}
        last: Optional[tuple[str, str, str]] = None
        for i, rec in enumerate(history):
            a = rec.step.action
            nxt = history[i + 1].observation if i + 1 < len(history) else None
            if nxt is None:
                continue
            pkg = nxt.package or ""
            if a.action_type == "open_app" and a.app_name:
                names[pkg] = a.app_name
            elif a.is_touch and is_launcher(rec.observation):
                p = a.point(rec.observation.elements)
                hit = rec.observation.element_at(*p, clickable_only=True) if p else None
                if hit is not None and label(hit):
                    names[pkg] = label(hit)
            if rec.source != "agent":
                continue
            h = rec.observation.screen_size[1]
            if a.action_type == "swipe" and (a.y or 0) < h * 0.05 and (a.y2 or 0) > (a.y or 0) + h * 0.15:
                last = ("com.android.systemui", "shade", "")  # pulled the notification shade down
            elif pkg and not is_launcher(nxt) and pkg not in SYSTEM_PACKAGES:
                last = (pkg, "app", names.get(pkg, ""))
        if last is not None and last[1] == "app" and not last[2]:
            last = (last[0], "app", names.get(last[0], ""))
        return last

    def allowed(self, step: AgentStep, ctx: RecoveryContext) -> bool:
        """Whether the recovery model's proposed ``step`` may be taken: no ending action (re-orientation
        restores context; it never claims the task is done).

        Args:
            step: the proposal.
            ctx: the recovery's inputs.

        Returns:
            False to refuse it (the rules answer instead).
        """
        # re-orientation restores context; it must not claim the task is done
        return super().allowed(step, ctx)
