"""Task-alignment check (AndroidReality §5.1 ④, App. D.1):
``task_alignment`` = on_track / off_track / uncertain; a problem when off_track.

Rules:
- the foreground app against the apps the agent used while on track (the app it
  started in, apps it opened itself, apps the goal names, apps reached from an
  on-task screen) — an app reached through an interruption (a tapped banner, an
  ad's "Install") is off track;
- the bare home screen after an app or the shade was in use, when the agent did
  not press home itself and an interruption was on screen recently (goal
  drift after a dismissal);
- a ``status: complete`` claim (``ctx.pending``) on the home screen, or on a screen
  showing none of the goal's words (the paper's Figure 12: "done" on the home
  screen of a brightness task).
"""

from __future__ import annotations

from typing import Any, Optional

from diagnosers.base import Cost, DiagnosisContext, Diagnoser, Finding
from diagnosers.signals.context import goal_mentions, goal_words, is_recents, shade_owned, track
from diagnosers.signals.findings import as_judgment, model_finding
from diagnosers.signals.system import interrupter_kind, is_app_package, is_launcher, knowledge, package_tokens
from diagnosers.signals.text import content_words, stem
from diagnosers.signals.tree import foreground_package, screen_tree
from ttir.config import TaskAlignmentConfig


class TaskAlignmentDiagnoser(Diagnoser):
    """Does the current screen still belong to the task's path?"""

    name = "task_alignment"

    @classmethod
    def default_config(cls) -> TaskAlignmentConfig:
        return TaskAlignmentConfig()

    # -- the rule tier ------------------------------------------------------------------
    def rules(self, ctx: DiagnosisContext) -> Finding:
        obs = ctx.observation
        fg = foreground_package(obs)
        tree = screen_tree(obs)
        tr = track(ctx)
        info = {"foreground": fg, "on_task_apps": sorted(tr.on_task), "off_task_apps": sorted(tr.off_task),
                "interruption_recent": tr.interruption_recent, "last_on_task": self._last_on_task(ctx)}
        claim = ctx.pending is not None and ctx.pending.action.action_type == "status" \
            and ctx.pending.action.goal_status == "complete"
        if claim and self.config.check_completion_claims:
            return self._claim(ctx, fg, info)
        if not tree.has_tree and not fg:
            return self._f("uncertain", 0.3, "no UI tree and no foreground app to judge by", info)
        if tree.shade_open:
            if shade_owned(ctx):
                return self._f("on_track", 0.7, "the agent pulled the notification shade down itself", info)
            return self._f("uncertain", 0.4, "the notification shade is open, not by the agent's own swipe", info)
        if is_launcher(fg):
            return self._home(ctx, info)
        if is_app_package(fg):
            if fg in tr.on_task:
                return self._f("on_track", 0.8, f"{fg} is an app of the task", info)
            if fg in tr.via_overlay or tr.interruption_recent:
                how = "through a tap on an interruption" if fg in tr.via_overlay else "after an interruption"
                return self._f("off_track", 0.8, f"{fg} is not an app of the task; it came up {how}", info)
            return self._f("uncertain", 0.5, f"{fg} is not an app the task used so far", info)
        if interrupter_kind(fg) is not None:
            return self._f("uncertain", 0.4, f"{fg} (a system dialog) is in front", info)
        return self._f("uncertain", 0.3, f"{fg or 'an unknown app'} is in front", info)

    def _home(self, ctx: DiagnosisContext, info: dict[str, Any]) -> Finding:
        tr = track(ctx)
        if is_recents(ctx.observation):
            last = ctx.last_action
            if last is not None and last.action_type == "app_switch":
                return self._f("on_track", 0.6, "the agent opened the overview itself", info)
            return self._f("uncertain", 0.4, "the overview of recent apps is open", info)
        if not tr.ever_in_app and not tr.shade_used:
            return self._f("on_track", 0.7, "the task has not left the home screen yet", info)
        if goal_mentions(ctx.goal, knowledge().home_goal_words):
            return self._f("on_track", 0.6, "the goal is about the home screen", info)
        last = ctx.last_action
        if last is not None and last.action_type == "navigate_home":
            return self._f("on_track", 0.5, "the agent pressed home itself (to open another app?)", info)
        prev = ctx.previous_observation
        if prev is not None and is_launcher(foreground_package(prev)) and not screen_tree(prev).shade_open:
            return self._f("uncertain", 0.4, "on the home screen since the step before (looking for an app?)", info)
        if tr.interruption_recent:
            return self._f("off_track", 0.85, "back on the home screen after an interruption, with the task's app "
                                              "or shade gone", info)
        if last is not None and last.action_type not in ("navigate_back", "app_switch"):
            return self._f("off_track", 0.75, f"back on the home screen after a {last.action_type}, which does not "
                                              "leave an app by itself (a crash or a reset?)", info)
        return self._f("uncertain", 0.5, "back on the home screen after pressing back", info)

    def _claim(self, ctx: DiagnosisContext, fg: str, info: dict[str, Any]) -> Finding:
        """A `status: complete` claim: the screen must show a trace of the task."""
        tree = screen_tree(ctx.observation)
        goal = set(goal_words(ctx.goal))
        if is_launcher(fg) and not tree.shade_open and not is_recents(ctx.observation):
            if not goal_mentions(ctx.goal, knowledge().home_goal_words):
                return self._f("off_track", 0.9, "a completion claim on the home screen, which shows nothing of the task",
                               {**info, "claim": True})
        if not tree.has_tree:
            return self._f("uncertain", 0.3, "a completion claim, but no UI tree to look for the task in",
                           {**info, "claim": True})
        screen_words = set()
        for s in tree.texts:
            screen_words |= content_words(s)
        for p in tree.packages | ({fg} if fg else set()):
            screen_words |= {stem(t) for t in package_tokens(p)} | package_tokens(p)
        shared = self._overlap(goal, screen_words)
        share = len(shared) / len(goal) if goal else 1.0
        info = {**info, "claim": True, "goal_words": sorted(goal), "shared_words": sorted(shared),
                "goal_overlap": round(share, 3)}
        if share >= self.config.min_goal_overlap and shared:
            return self._f("on_track", 0.7, f"the screen shows {len(shared)} of the goal's {len(goal)} words", info)
        if shared and is_app_package(fg) and fg in track(ctx).on_task:
            return self._f("uncertain", 0.5, "a completion claim in the task's app, on a screen that shows too few "
                                             "of the goal's words", info)
        return self._f("off_track", 0.8, "a completion claim on a screen with no trace of the task"
                       + ("" if shared else " (none of the goal's words)"), info)

    @staticmethod
    def _overlap(goal: set[str], screen: set[str]) -> set[str]:
        out = set()
        for g in goal:
            if g in screen or (len(g) >= 4 and any(len(s) >= 4 and (g in s or s in g) for s in screen)):
                out.add(g)
        return out

    @staticmethod
    def _last_on_task(ctx: DiagnosisContext) -> Optional[str]:
        """The most recent summary the agent wrote on an on-task app (for re-orientation)."""
        on_task = track(ctx).on_task
        for rec in reversed(ctx.history):
            if rec.source == "agent" and foreground_package(rec.observation) in on_task and rec.step.summary:
                return rec.step.summary
        return None

    # -- findings -----------------------------------------------------------------------
    def _f(self, verdict: str, confidence: float, why: str, details: dict[str, Any]) -> Finding:
        return Finding(diagnoser=self.name, problem=verdict == "off_track", verdict=verdict, confidence=confidence,
                       evidence=[why], details=details)

    def from_judgment(self, judgment: Any, cost: Cost) -> Finding:
        j = as_judgment(judgment)
        v = j.task_alignment
        return model_finding(self.name, v, v == "off_track", j, cost, "task_alignment")

    def merge(self, rule: Finding, model: Finding) -> Finding:
        model.details = {**rule.details, **model.details}
        return model
