"""Alternative-action recovery: reach the same sub-goal by another route — re-ground
the intended target in the current UI (text / description / id), scroll to reveal
it, clear and retype into the right field — never the failed coordinate again
(AndroidReality App. D.1 ① and ②)."""

from __future__ import annotations

from typing import ClassVar, Optional

from ttir.core.config import RecoveryName
from diagnosers.signals.change import compare
from ttir.core.diagnosis import ActionEffectDetails, StepDetails
from ttir.core.recovery import Recovery, RecoveryContext, recovery_step
from recoveries.ui import distinct_point, find_target, label, target_words
from ttir.core.types import TOUCH_TYPES, Action, AgentStep, StepRecord, UIElement

TOLERANCE_PX = 24
MAX_REVEAL = 2


class AlternativeAction(Recovery):
    """The recovery of the stuck-loop and action-effect checks: reach the same sub-goal by
    another route — re-ground the intended target in the current UI (by text, description or
    id), scroll to reveal it, clear and retype into the right field — never the failed
    coordinate again (AndroidReality App. D.1 ① and ②).
    
    Args:
        mode: ``rules`` or ``vlm`` (the recovery model proposes; the rules answer when it fails
            or proposes what :meth:`allowed` refuses).
        client: the recovery model; None: the rules.
        prompt: the recovery prompt (a name in ``prompts/`` or a path); None: ``alternative_action``.
        settings: the guard's :class:`~ttir.core.config.RecoveryConfig`; None: the defaults.
    """

    name: ClassVar[RecoveryName] = "alternative_action"
    handles = ("stuck_loop", "action_effect")

    def _failed(self, ctx: RecoveryContext) -> Optional[StepRecord]:
        """The agent step that failed (the last one the agent itself took)."""
        for rec in reversed(ctx.history):
            if rec.source == "agent":
                return rec
        return None

    def rules(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        """The deterministic tier: the failed step's target found again on the current screen
        (a fresh position, an index), revealed by a scroll, or the text retyped into the field the summary names.

        Args:
            ctx: the goal, the screen, the history, the finding and the steps taken so far.

        Returns:
            The next corrective step, or None when there is nothing (left) to try.
        """
        failed = self._failed(ctx)
        if failed is None:
            return None
        a = failed.step.action
        obs = ctx.observation
        if self._wait_first(ctx, failed):
            return recovery_step(Action(action_type="wait"),
                                 f"The last {a.action_type} changed nothing yet. A slow app may still apply it, and "
                                 "a second tap would then count twice: wait once and look again before retrying.",
                                 f"Wait for the {a.action_type.replace('_', ' ')} to take effect")
        if a.action_type == "input_text":
            return self._retype(ctx, failed)
        if not a.is_touch:
            return None
        words = ctx.finding.details_as(StepDetails).intended_targets or target_words(failed.step)
        try:
            old_point = a.point(failed.observation.elements)
        except IndexError:
            old_point = None
        if not words and old_point is not None:
            hit = failed.observation.element_at(*old_point, clickable_only=True)
            if hit is not None and label(hit):
                words = [label(hit)]
        target = find_target(obs, words)
        tried = [s.action.point(obs.elements) for s in ctx.taken if s.action.is_touch]
        if target is not None:
            avoid = old_point
            x, y = distinct_point(target, avoid, TOLERANCE_PX)
            if (x, y) in tried or (avoid is not None and abs(x - avoid[0]) + abs(y - avoid[1]) <= TOLERANCE_PX and target.area < 4 * TOLERANCE_PX ** 2):
                # same spot again would repeat the failure: address the element by index instead
                idx = obs.elements.index(target)
                act = Action(action_type=a.action_type, index=idx)
            else:
                act = Action(action_type=a.action_type, x=x, y=y)
            name = label(target) or target.short_id or "the target"
            return recovery_step(
                act,
                f"The previous {a.action_type} did not take effect (it targeted a stale position). "
                f"Re-ground '{name}' in the current screen instead of repeating the failed coordinate.",
                f'{a.action_type.replace("_", " ").capitalize()} "{name}" at its current position',
            )
        if words and self._went_elsewhere(ctx, failed) and not any(s.action.action_type == "navigate_back" for s in ctx.taken):
            # the tap opened the wrong screen and the intended target is not here: undo it first
            return recovery_step(Action(action_type="navigate_back"),
                                 f"The last {a.action_type} opened a different screen and '{words[0]}' is not on it; "
                                 "go back and take the intended target from there.", "Go back to undo the wrong tap")
        reveals = sum(1 for s in ctx.taken if s.action.action_type == "scroll")
        if words and reveals < MAX_REVEAL and any(e.scrollable for e in obs.elements):
            direction = "down" if reveals == 0 else "up"
            return recovery_step(Action(action_type="scroll", direction=direction),
                                 f"'{words[0]}' is not visible; scroll to reveal it.", f"Scroll {direction} to find {words[0]}")
        return None

    @staticmethod
    def _wait_first(ctx: RecoveryContext, failed: StepRecord) -> bool:
        """A first, single tap that changed nothing at all (not a loop, not a tap on the
        wrong control): it may be delayed rather than dropped (AndroidReality's
        realistic action delay), so the session waits once before tapping again."""
        details = ctx.finding.typed_details
        return (not ctx.taken and isinstance(details, ActionEffectDetails) and details.no_change
                and failed.step.action.action_type in TOUCH_TYPES)

    @staticmethod
    def _went_elsewhere(ctx: RecoveryContext, failed: StepRecord) -> bool:
        """Whether the failed step moved to another screen (vs. changing nothing)."""
        before, now = failed.observation, ctx.observation
        if before.package != now.package:
            return True
        ids_before = {e.resource_id for e in before.elements if e.resource_id}
        ids_now = {e.resource_id for e in now.elements if e.resource_id}
        union = ids_before | ids_now
        return bool(union) and len(ids_before & ids_now) / len(union) < 0.6

    def _retype(self, ctx: RecoveryContext, failed: StepRecord) -> Optional[AgentStep]:
        """Text landed in the wrong field (or nowhere): type it into the field the step named,
        then clear the misplaced copy."""
        a = failed.step.action
        text = a.text or ""
        obs = ctx.observation
        field = self._intended_field(ctx, failed)
        done_right = field is not None and text and text in field.text
        if field is not None and not done_right and not any(s.action.action_type == "input_text" and s.action.text == text for s in ctx.taken):
            x, y = field.center
            return recovery_step(
                Action(action_type="input_text", text=text, x=x, y=y, clear_text=True),
                f"The typed text did not land in the {label(field) or 'intended'} field; clear that field and type it there.",
                f'Type "{text}" into {label(field) or field.short_id}',
            )
        wrong = self._misplaced(obs, text, field)
        if wrong is not None and not any(s.action.action_type == "input_text" and s.action.text == "" and s.action.clear_text for s in ctx.taken):
            x, y = wrong.center
            return recovery_step(
                Action(action_type="input_text", text="", x=x, y=y, clear_text=True),
                f"'{text}' was typed into the wrong field ({wrong.hint or wrong.short_id}); clear it.",
                f"Clear the misplaced text from {wrong.hint or wrong.short_id}",
            )
        return None

    @staticmethod
    def _intended_field(ctx: RecoveryContext, failed: StepRecord) -> Optional[UIElement]:
        """The field the step meant to type into: as the diagnoser resolved it, else by the step's words."""
        obs = ctx.observation
        info = ctx.finding.details_as(ActionEffectDetails).intended_field
        rid = info.resource_id if info is not None else ""
        if rid:
            for e in obs.elements:
                if e.editable and e.resource_id == rid:
                    return e
        text = failed.step.action.text or ""
        words = [w for w in target_words(failed.step) if w != text]
        return find_target(obs, words, editable=True)

    def target_met(self, ctx: "object", finding: "object") -> Optional[bool]:
        """For typing: the text is in the intended field and nowhere else; otherwise let
        the diagnoser judge (None)."""
        history = getattr(ctx, "history", [])
        failed = next((r for r in reversed(history) if r.source == "agent"), None)
        if failed is None:
            return None
        last = history[-1] if history else None
        if failed.step.action.is_touch and last is not None and last.source == "recovery":
            if last.step.action.action_type == "wait":
                return compare(failed.observation, ctx.observation).changed  # the late effect arrived, or retry
            if last.step.action.action_type in ("scroll", "navigate_back", "swipe"):
                return False  # only revealed or undid something: the intended touch is still to come
            return None  # a touch: the diagnoser judges whether it took effect
        if failed.step.action.action_type != "input_text":
            return None
        text = failed.step.action.text or ""
        if not text:
            return None
        rctx = RecoveryContext(goal="", observation=ctx.observation, history=history, finding=finding)  # type: ignore[attr-defined]
        field = self._intended_field(rctx, failed)
        if field is None:
            return None
        return text in field.text and self._misplaced(ctx.observation, text, field) is None  # type: ignore[attr-defined]

    @staticmethod
    def _misplaced(obs, text: str, right: Optional[UIElement]) -> Optional[UIElement]:
        if not text:
            return None
        for e in obs.elements:
            if e.editable and text in e.text and (right is None or e.bounds != right.bounds):
                return e
        return None

    def allowed(self, step: AgentStep, ctx: RecoveryContext) -> bool:
        """Whether the recovery model's proposed ``step`` may be taken: no ending action, and no touch
        within ``TOLERANCE_PX`` of the failed one.

        Args:
            step: the proposal.
            ctx: the recovery's inputs.

        Returns:
            False to refuse it (the rules answer instead).
        """
        if not super().allowed(step, ctx):
            return False
        failed = self._failed(ctx)
        if failed is None or not step.action.is_touch or not failed.step.action.is_touch:
            return True
        p, q = step.action.point(ctx.observation.elements), failed.step.action.point(failed.observation.elements)
        return p is None or q is None or abs(p[0] - q[0]) + abs(p[1] - q[1]) > TOLERANCE_PX
