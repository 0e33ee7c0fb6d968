"""Stuck-loop detection (AndroidReality §5.1 ①, App. D.1): ``repeat_failure_detected``.

Rules:
- the hard rule: the last N steps (``StuckLoopConfig.window``) have the same action
  (same element, or coordinates within ``tolerance_px``), the same summary and
  thought, and none of them changed the screen (perceptual hash within
  ``screen_hash_distance`` and the same UI-tree content). It wins over the model
  in every mode (the paper's deterministic safety net);
- the same action N times without any screen change, even if the agent reworded
  its thought (the stale-coordinate loop of Figure 9);
- an A-B-A-B oscillation of screens with the same action at the same phase (a
  loop through an app switch counts: the foreground is part of the screen).
"""

from __future__ import annotations

from typing import Any, Optional

from ttir.core.diagnosis import Cost, DiagnosisContext, Diagnoser, Finding
from diagnosers.signals.actions import (
    describe_element,
    intended_targets,
    intended_words,
    point_of,
    same_action,
    same_step_text,
    target_element,
)
from diagnosers.signals.change import compare
from diagnosers.signals.findings import as_judgment, model_finding
from diagnosers.signals.image import MIN_CHANGED_PIXELS
from diagnosers.signals.tree import foreground_package, screen_tree
from ttir.core.config import StuckLoopConfig
from ttir.core.types import Observation


class StuckLoopDiagnoser(Diagnoser):
    """Is the agent repeating an attempt that does not work?"""

    name = "stuck_loop"

    @classmethod
    def default_config(cls) -> StuckLoopConfig:
        """The defaults of the ``stuck_loop`` section of :class:`ttir.TTIRConfig`."""
        return StuckLoopConfig()

    # -- screens ------------------------------------------------------------------------
    def same_screen(self, a: Observation, b: Observation) -> Optional[bool]:
        """Unchanged: hash within the configured distance and identical tree content;
        without trees, few changed pixels stand in for the tree. None = unknown."""
        ch = compare(a, b)
        same = ch.same_screen(self.config.screen_hash_distance)
        if same and ch.tree_similarity is None and ch.pixels is not None:
            return ch.pixels < 2 * MIN_CHANGED_PIXELS
        return same

    # -- the rule tier ------------------------------------------------------------------
    def rules(self, ctx: DiagnosisContext) -> Finding:
        """The deterministic tier: the last ``window`` steps repeat one action (and its summary and
        thought) without any screen change, or the screens oscillate A-B-A-B with the same action.

        Args:
            ctx: the goal, the current screen and the history.

        Returns:
            The finding: verdict ``true`` (a problem) or ``false``.
        """
        cfg = self.config
        hist = ctx.history
        if not hist:
            return self._no("no previous step", confidence=1.0)
        obs = ctx.observations()
        last = hist[-1]
        action_streak = text_streak = 0
        unknown = False
        for k in range(len(hist) - 1, -1, -1):
            rec = hist[k]
            if not same_action(rec, last, cfg.tolerance_px):
                break
            same = self.same_screen(rec.observation, obs[k + 1])
            if same is False:
                break
            unknown = unknown or same is None
            action_streak += 1
            if text_streak == action_streak - 1 and same_step_text(rec.step, last.step):
                text_streak += 1
        n = cfg.window
        if text_streak >= n and not unknown:
            return self._loop(ctx, text_streak, hard=True, confidence=1.0,
                              why=f"the last {text_streak} steps have the same action, summary and thought "
                                  f"and the screen did not change (N={n})")
        if action_streak >= n:
            if unknown:  # no tree and no screenshot: "unchanged" cannot be told from "unknown"
                return Finding(diagnoser=self.name, problem=False, verdict="uncertain", confidence=0.4,
                               evidence=[f"the same action {action_streak} times, but the screens cannot be compared"],
                               details=self._loop_details(ctx, action_streak, "same_action_unknown_effect"))
            return self._loop(ctx, action_streak, hard=False, confidence=0.85,
                              why=f"the same action {action_streak} times in a row without any screen change "
                                  "(the agent reworded its reasoning but retried the same target)")
        osc = self._oscillation(ctx)
        if osc is not None:
            return osc
        repeats = self._repeats_with_progress(ctx)
        if repeats >= n:
            return self._no(f"the same action {repeats} times, but each changed the screen (progress, not a loop)",
                            confidence=0.8)
        return self._no("no repeated unresolved attempt", confidence=0.9)

    def _repeats_with_progress(self, ctx: DiagnosisContext) -> int:
        hist = ctx.history
        last = hist[-1]
        count = 0
        for rec in reversed(hist):
            if not same_action(rec, last, self.config.tolerance_px):
                break
            count += 1
        return count

    def _oscillation(self, ctx: DiagnosisContext) -> Optional[Finding]:
        """Screens A-B-A-B (period P, R repeats) with the same action at the same phase."""
        cfg = self.config
        p, r = cfg.oscillation_period, cfg.oscillation_repeats
        obs = ctx.observations()
        length = p * r
        if len(obs) < length:
            return None
        window = obs[-length:]
        recs = ctx.history[-(length - 1):]
        for i in range(length - p):
            if self.same_screen(window[i], window[i + p]) is not True:
                return None
        for i in range(length - 1):
            if self.same_screen(window[i], window[i + 1]) is not False:
                return None  # consecutive screens must differ, or it is a plain repeat
        for j in range(len(recs) - p):
            if not same_action(recs[j], recs[j + p], cfg.tolerance_px):
                return None
        cycle = [rec.step.action.to_dict() for rec in recs[-p:]]
        apps = [foreground_package(o) for o in window[-p:]]
        details = self._loop_details(ctx, length - 1, "oscillation")
        details.update({"cycle": cycle, "cycle_apps": apps, "period": p, "repeats": r,
                        "spans_apps": len(set(apps)) > 1})
        return Finding(diagnoser=self.name, problem=True, verdict="true", confidence=0.8,
                       evidence=[f"the screens alternate with period {p} over the last {length} observations "
                                 f"(apps: {' -> '.join(apps)}) and the same actions repeat"],
                       details=details)

    # -- findings -----------------------------------------------------------------------
    def _no(self, why: str, confidence: float) -> Finding:
        return Finding(diagnoser=self.name, problem=False, verdict="false", confidence=confidence, evidence=[why])

    def _loop_details(self, ctx: DiagnosisContext, streak: int, kind: str) -> dict[str, Any]:
        last = ctx.history[-1]
        first = ctx.history[-streak] if streak <= len(ctx.history) else ctx.history[0]
        action = last.step.action
        points = [point_of(r.step.action, r.observation) for r in ctx.history[-streak:]]
        return {
            "kind": kind,
            "streak": streak,
            "hard_rule": False,
            "repeated_action": action.to_dict(),
            "repeated_summary": last.step.summary,
            "repeated_thought": last.step.thought,
            "target_element": describe_element(target_element(action, first.observation)),
            "intended_targets": intended_targets(last.step),
            "intended_words": intended_words(last.step),
            "failed_points": [list(p) for p in points if p is not None],
            "has_tree": screen_tree(ctx.observation).has_tree,
        }

    def _loop(self, ctx: DiagnosisContext, streak: int, *, hard: bool, confidence: float, why: str) -> Finding:
        kind = "identical_steps" if hard else "same_action_no_effect"
        details = self._loop_details(ctx, streak, kind)
        details["hard_rule"] = hard
        return Finding(diagnoser=self.name, problem=True, verdict="true", confidence=confidence,
                       evidence=[why], details=details)

    # -- the model tier -----------------------------------------------------------------
    def from_judgment(self, judgment: Any, cost: Cost) -> Finding:
        """Read the shared VLM judgment's ``repeat_failure_detected`` as this diagnoser's finding.

        Args:
            judgment: the step's :class:`diagnosers.judgment.Judgment` (or its dict).
            cost: what the judgment cost.

        Returns:
            The finding: true (a problem) or false.
        """
        j = as_judgment(judgment)
        v = bool(j.repeat_failure_detected)
        return model_finding(self.name, "true" if v else "false", v, j, cost, "repeat_failure_detected")

    def diagnose(self, ctx: DiagnosisContext) -> Finding:
        """The hard rule (N identical steps on an unchanged screen) wins whatever the mode."""
        if self.mode == "vlm" or (self.mode == "cascade" and self.judge is not None):
            rule = self.rules(ctx)
            if rule.problem and rule.details.get("hard_rule"):
                rule.tier = self.mode
                rule.evidence.append("deterministic hard rule: overrides the model")
                return rule
        return super().diagnose(ctx)

    def merge(self, rule: Finding, model: Finding) -> Finding:
        """Either signal alone is enough (App. D.1): a rule loop stands even if the model disagrees."""
        if rule.problem:
            rule.tier = "cascade"
            rule.evidence = rule.evidence + [e for e in model.evidence if e not in rule.evidence]
            rule.cost = model.cost
            return rule
        model.details = {**rule.details, **model.details}
        return model
