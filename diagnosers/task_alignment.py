"""Task-alignment check (AndroidReality §5.1 ④, App. D.1):
``task_alignment`` = on_track / off_track / uncertain; a problem when off_track.

Rules:
- the foreground app against the apps the agent used while on track (the app it
  started in, apps it opened itself, apps the goal names, apps reached from an
  on-task screen) — an app reached through an interruption (a tapped banner, an
  ad's "Install") is off track; what was known about the apps is kept per screen, so
  an app the agent wandered into stays off track after the history handed to the
  check (the guard's last 64 steps) no longer shows how it got there;
- the pages of an interruption's own flow (a trial offer's sign-up, an update's
  download) after a press on its engage / neutral button, until the app's own screen
  is back — also when the agent waits, taps past them, or leaves and enters again;
- the bare home screen after an app or the shade was in use, when the agent did
  not press home itself and an interruption was on screen recently (goal
  drift after a dismissal);
- a ``status: complete`` claim (``ctx.pending``) on the home screen, or on a screen
  showing none of the goal's words (the paper's Figure 12: "done" on the home
  screen of a brightness task).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from ttir.core.diagnosis import Cost, DiagnosisContext, Diagnoser, Finding
from diagnosers.signals.actions import point_of
from diagnosers.signals.cache import CACHE, cached
from diagnosers.signals.context import (
    INTERRUPTION_SCORE,
    TaskTrack,
    app_named_in_goal,
    goal_mentions,
    goal_words,
    interruption_score,
    is_recents,
    shade_owned,
    tapped_into_interruption,
    track,
)
from diagnosers.signals.findings import as_judgment, model_finding
from diagnosers.signals.lexicon import load_lexicon
from diagnosers.signals.overlays import make_candidate, overlay_candidates, score_text
from diagnosers.signals.system import interrupter_kind, is_app_package, is_launcher, knowledge, package_tokens
from diagnosers.signals.text import content_words, stem
from diagnosers.signals.screen_text import content_lines
from diagnosers.signals.tree import foreground_package, screen_tree
from ttir.core.config import TaskAlignmentConfig


FLOW_LOOKBACK = 12  # screens before the press that entered an interruption's pages, to recognise the app's own
FLOW_PAGE_LEXICON = 0.3  # interruption-lexicon score of a page that still belongs to the interruption
SHOWN_AGAIN = 0.6  # share of a screen's labels already on an earlier screen: the same screen again
HOME_SWITCH_STEPS = 2  # home-screen steps after the agent's own HOME that still look like switching apps
APPS_KEY = "task_alignment.apps"  # -> AppMemory, kept per screen in the observation cache
TRACK_KEY = "task_alignment.track"  # -> the carried TaskTrack of a step, in ctx.cache


@dataclass(frozen=True)
class AppMemory:
    """What the task's apps were when a screen was judged: the history handed to a later
    step stops 64 steps back, and without this the app the agent wandered into back then
    becomes "the app it started in", an app of the task."""

    on_task: frozenset[str]
    off_task: frozenset[str]
    via_overlay: frozenset[str]


def carried_track(ctx: DiagnosisContext) -> TaskTrack:
    """``track(ctx)``, with what was known about the apps when the oldest remembered screen
    was judged, when the history no longer reaches the episode's start. The result is
    kept on the current screen for the steps that will remember it as their oldest."""
    hit = ctx.cache.get(TRACK_KEY)
    if hit is not None:
        return hit
    tr = track(ctx)
    obs = ctx.observations()
    first = obs[0]
    mem = CACHE.slot(first).get(APPS_KEY) if first.step > 0 else None
    if mem is not None:
        pkg0 = foreground_package(first)
        on = set(tr.on_task) | mem.on_task
        reopened = any(r.step.action.action_type == "open_app" and foreground_package(o) == pkg0
                       for r, o in zip(ctx.history, obs[1:]))
        if pkg0 in mem.off_task and pkg0 not in mem.on_task and not reopened and not app_named_in_goal(pkg0, ctx.goal):
            on.discard(pkg0)  # first in the window, but it was off the task when the agent got there
        tr = replace(tr, on_task=on, off_task=(set(tr.off_task) | mem.off_task) - on,
                     via_overlay=(set(tr.via_overlay) | mem.via_overlay) - on)
    CACHE.slot(ctx.observation)[APPS_KEY] = AppMemory(frozenset(tr.on_task), frozenset(tr.off_task),
                                                      frozenset(tr.via_overlay))
    ctx.cache[TRACK_KEY] = tr
    return tr


@cached("page_lexicon")  # the same history screens are asked about at every step
def _page_lexicon(obs: Any) -> float:
    """The interruption-lexicon score of the screen's main window (consent, trial,
    verification vocabulary), as if it were one big dialog."""
    t = screen_tree(obs)
    main = t.main_root()
    if main is None:
        return 0.0
    return score_text(make_candidate(obs, main, "flow", True), load_lexicon(None))[0]


@cached("overlay_pages")
def _overlay_pages(obs: Any) -> frozenset:
    """The overlay candidates on a screen (the notification shade aside), by kind, window
    and title: the page an overlay shows, not its state (a star ticked on a rating dialog
    brings up its Submit button, and it is still the same dialog)."""
    return frozenset((c.kind, c.package, c.title) for c in overlay_candidates(obs) if c.kind != "shade")


def _new_interruption(obs: Any, pressed: frozenset) -> bool:
    """An interruption is on ``obs`` that is not one of the overlays pressed on (``pressed``):
    the next page of its flow (a download's progress page after "Update"), whatever its words."""
    return interruption_score(obs) >= INTERRUPTION_SCORE and not _overlay_pages(obs) <= pressed


def _flow_pages(ctx: DiagnosisContext, upto: int) -> set[int]:
    """Indices of the observations up to ``upto`` shown inside an interruption's flow: from
    a press on an interruption's engage / neutral button that brought up another page, for
    as long as an interruption stayed on screen."""
    obs, hist = ctx.observations(), ctx.history
    out: set[int] = set()
    inside = False
    for k in range(1, upto + 1):
        a = hist[k - 1].step.action
        if a.is_touch and not inside:
            prev = hist[k - 1].observation
            role = tapped_into_interruption(prev, point_of(a, prev))
            # a press that left the same interruption in place led nowhere
            inside = role in ("engage", "neutral") and _new_interruption(obs[k], _overlay_pages(prev))
        inside = inside and interruption_score(obs[k]) >= INTERRUPTION_SCORE
        if inside:
            out.add(k)
    return out


def _state(obs: Any) -> frozenset:
    """What a screen shows (bars and banners aside): its labels and what is ticked."""
    els = obs.elements
    return frozenset((els[i].text, els[i].content_desc, els[i].checked, els[i].selected)
                     for i in screen_tree(obs).content)


def _shows_again(earlier: Any, now: Any) -> bool:
    """Most labelled nodes of ``now`` were already on ``earlier``."""
    a, b = screen_tree(now).labels, screen_tree(earlier).labels
    return bool(a) and len(a & b) / len(a) >= SHOWN_AGAIN


class TaskAlignmentDiagnoser(Diagnoser):
    """Does the current screen still belong to the task's path?"""

    name = "task_alignment"

    @classmethod
    def default_config(cls) -> TaskAlignmentConfig:
        """The defaults of the ``task_alignment`` section of :class:`ttir.TTIRConfig`."""
        return TaskAlignmentConfig()

    # -- the rule tier ------------------------------------------------------------------
    def rules(self, ctx: DiagnosisContext) -> Finding:
        """The deterministic tier: the foreground app against the apps the agent used while on track, the
        pages of an interruption's own flow, an unexplained return home, and a ``status: complete``
        claim (``ctx.pending``) on a screen that shows none of the goal.

        Args:
            ctx: the goal, the current screen and the history.

        Returns:
            The finding: verdict ``on_track``, ``off_track`` (a problem) or ``uncertain``.
        """
        obs = ctx.observation
        fg = foreground_package(obs)
        tree = screen_tree(obs)
        tr = carried_track(ctx)
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
        flow = self._interruption_flow(ctx)
        if flow is not None:
            return self._f("off_track", 0.65, flow, info)
        if is_app_package(fg):
            in_flow = self._inside_app_flow(ctx)
            if in_flow is not None:
                return self._f("off_track", 0.6, in_flow, info)
            if fg in tr.on_task:
                return self._f("on_track", 0.8, f"{fg} is an app of the task", info)
            if fg in tr.via_overlay or tr.interruption_recent:
                how = "through a tap on an interruption" if fg in tr.via_overlay else "after an interruption"
                return self._f("off_track", 0.8, f"{fg} is not an app of the task; it came up {how}", info)
            if self._from_lost_home(ctx):
                return self._f("off_track", 0.7, f"{fg} is not an app of the task; it was opened from the home screen "
                                                 "the task had been thrown out to", info)
            return self._f("uncertain", 0.5, f"{fg} is not an app the task used so far", info)
        if interrupter_kind(fg) is not None:
            if self._entered_by_engaging(ctx):
                return self._f("off_track", 0.65, f"{fg} came up when the agent pressed an interruption's "
                                                  "engage / neutral button, and the agent is still in it", info)
            return self._f("uncertain", 0.4, f"{fg} (a system dialog) is in front", info)
        return self._f("uncertain", 0.3, f"{fg or 'an unknown app'} is in front", info)

    # -- how the agent got here ---------------------------------------------------------
    @staticmethod
    def _home_stay(ctx: DiagnosisContext, end: int) -> tuple[int, Optional[str], bool]:
        """For the run of home-screen observations ending at observation ``end``: its
        first index, the action that led into it (None at the episode start) and
        whether the task had started before it (an app or the shade in use)."""
        obs = ctx.observations()
        k = end
        while k > 0 and is_launcher(foreground_package(obs[k - 1])) and not screen_tree(obs[k - 1]).shade_open:
            k -= 1
        entry = ctx.history[k - 1].step.action.action_type if k > 0 else None
        started = any(is_app_package(foreground_package(o)) or screen_tree(o).shade_open for o in obs[:k])
        return k, entry, started

    def _from_lost_home(self, ctx: DiagnosisContext) -> bool:
        """The app in front was opened from a home screen the agent did not go to by
        itself (a reset, a crash, an interruption) after the task had started."""
        obs = ctx.observations()
        fg = foreground_package(obs[-1])
        k = len(obs) - 1
        while k > 0 and foreground_package(obs[k - 1]) == fg:
            k -= 1
        if k == 0 or not is_launcher(foreground_package(obs[k - 1])):
            return False
        _, entry, started = self._home_stay(ctx, k - 1)
        return started and entry not in (None, "navigate_home", "app_switch")

    @staticmethod
    def _entered_by_engaging(ctx: DiagnosisContext) -> bool:
        """The system window in front (a wizard's pages) was entered by a touch on an
        interruption's engage / neutral button, and the agent has not left it since."""
        obs = ctx.observations()
        fg = foreground_package(obs[-1])
        k = len(obs) - 1
        while k > 0 and foreground_package(obs[k - 1]) == fg:
            k -= 1
        if k == 0:
            # in it for the whole remembered history, which does not reach the episode's start,
            # moving through its pages (not stuck in front of one dialog)
            return obs[0].step > 0 and len({_state(o) for o in obs}) > 1
        entry = ctx.history[k - 1]
        if not entry.step.action.is_touch:
            return False
        role = tapped_into_interruption(entry.observation, point_of(entry.step.action, entry.observation))
        return role in ("engage", "neutral")

    @staticmethod
    def _inside_app_flow(ctx: DiagnosisContext) -> Optional[str]:
        """A few steps ago the agent pressed an interruption's engage / neutral button
        ("Manage options" on a consent sheet) and every screen since is a page the app
        did not show before it: the agent is following the interruption's pages."""
        obs = ctx.observations()
        hist = ctx.history
        fg = foreground_package(obs[-1])
        for j in range(len(hist) - 1, -1, -1):
            rec = hist[j]
            a = rec.step.action
            if foreground_package(rec.observation) != fg or a.action_type in ("navigate_home", "open_app", "app_switch"):
                return None
            if not a.is_touch:
                continue
            role = tapped_into_interruption(rec.observation, point_of(a, rec.observation))
            if role == "dismiss":
                return None
            if role not in ("engage", "neutral"):
                continue
            # the app's screens before the press, less the pages of an earlier entry into the
            # flow (after a back and a second press, the flow's first page is "shown again"),
            # and the screen pressed on: back on it, the press is undone
            inside = _flow_pages(ctx, j)
            earlier = [obs[k] for k in range(max(0, j - FLOW_LOOKBACK), j + 1) if k not in inside or k == j]
            pressed = _overlay_pages(obs[j])
            for o in obs[j + 1:]:
                if any(_shows_again(e, o) for e in earlier):
                    return None  # back on a screen of the app: the interruption is over
                if _page_lexicon(o) < FLOW_PAGE_LEXICON and not _new_interruption(o, pressed):
                    return None  # a page without the interruption's vocabulary or window: the app's own
            return (f"{len(obs) - 1 - j} step(s) ago the agent pressed an interruption's {role} button, and every "
                    "screen since is a page the app did not show before: it is following the interruption")
        if obs[0].step > 0 and all(_page_lexicon(o) >= FLOW_PAGE_LEXICON and interruption_score(o) < INTERRUPTION_SCORE
                                   for o in obs):
            # the press is older than the remembered history, which is all pages of an
            # interruption (whole windows in its vocabulary, not a pop-up over the app)
            return "every screen of the remembered history is an interruption's page"
        return None

    @staticmethod
    def _interruption_flow(ctx: DiagnosisContext) -> Optional[str]:
        """The last touch pressed an interruption's engage / neutral button and an
        interruption is still on screen: the agent is inside its flow (Figure 11)."""
        prev = ctx.previous
        if prev is None or not prev.step.action.is_touch:
            return None
        role = tapped_into_interruption(prev.observation, point_of(prev.step.action, prev.observation))
        if role not in ("engage", "neutral") or interruption_score(ctx.observation) < INTERRUPTION_SCORE:
            return None
        before = {c.signature() for c in overlay_candidates(prev.observation)}
        if {c.signature() for c in overlay_candidates(ctx.observation)} <= before:
            return None  # the same interruption, unchanged: the tap did not lead anywhere
        return (f"the last tap pressed an interruption's {role} button and an interruption is still on screen: "
                "the agent is following its flow, not the task")

    def _home(self, ctx: DiagnosisContext, info: dict[str, Any]) -> Finding:
        tr = carried_track(ctx)
        # the task has started when an app or the shade was used — or when the remembered
        # history no longer reaches back to the episode's first step (a long stay)
        started = tr.ever_in_app or tr.shade_used or ctx.observations()[0].step > 0
        last = ctx.last_action
        if is_recents(ctx.observation):
            if last is not None and last.action_type == "app_switch":
                return self._f("on_track", 0.6, "the agent opened the overview itself", info)
            if started:
                return self._f("off_track", 0.6, "the overview of recent apps is open and the task's app is not in "
                                                 "front", info)
            return self._f("uncertain", 0.4, "the overview of recent apps is open", info)
        if not started:
            return self._f("on_track", 0.7, "the task has not left the home screen yet", info)
        if goal_mentions(ctx.goal, knowledge().home_goal_words):
            return self._f("on_track", 0.6, "the goal is about the home screen", info)
        first, entry, _ = self._home_stay(ctx, len(ctx.history))
        stay = len(ctx.history) - first + 1  # home-screen observations in a row, this one included
        if entry in ("navigate_home", "app_switch"):
            if stay <= HOME_SWITCH_STEPS:
                return self._f("on_track", 0.5, "the agent pressed home itself (to open another app?)", info)
            return self._f("off_track", 0.6, f"on the home screen for {stay} steps since the agent pressed home, "
                                             "with no app of the task in front", info)
        if tr.interruption_recent:
            return self._f("off_track", 0.85, "back on the home screen after an interruption, with the task's app "
                                              "or shade gone", info)
        if entry == "navigate_back":
            return self._f("off_track", 0.6, "back left the task's app for the home screen", info)
        return self._f("off_track", 0.75, f"back on the home screen after a {entry or 'step'}, which does not "
                                          "leave an app by itself (a crash or a reset?)", info)

    def _claim(self, ctx: DiagnosisContext, fg: str, info: dict[str, Any]) -> Finding:
        """A `status: complete` claim: the screen must show a trace of the task."""
        tree = screen_tree(ctx.observation)
        goal = set(goal_words(ctx.goal))
        if is_launcher(fg) and not tree.shade_open and not is_recents(ctx.observation):
            if not goal_mentions(ctx.goal, knowledge().home_goal_words):
                return self._f("off_track", 0.9, "a completion claim on the home screen, which shows nothing of the task",
                               {**info, "claim": True})
        # no tree: the screenshot's text (OCR) is where to look for the task's trace
        texts = tree.texts if tree.has_tree else [e.text for e in content_lines(ctx.observation)]
        if not texts:
            return self._f("uncertain", 0.3, "a completion claim, but no UI tree and no text read from the screenshot "
                                             "to look for the task in", {**info, "claim": True})
        screen_words = set()
        for s in texts:
            screen_words |= content_words(s)
        for p in tree.packages | ({fg} if fg else set()):
            screen_words |= {stem(t) for t in package_tokens(p)} | package_tokens(p)
        shared = self._overlap(goal, screen_words)
        share = len(shared) / len(goal) if goal else 1.0
        info = {**info, "claim": True, "goal_words": sorted(goal), "shared_words": sorted(shared),
                "goal_overlap": round(share, 3)}
        if share >= self.config.min_goal_overlap and shared:
            return self._f("on_track", 0.7, f"the screen shows {len(shared)} of the goal's {len(goal)} words", info)
        if shared and is_app_package(fg) and fg in carried_track(ctx).on_task:
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
        on_task = carried_track(ctx).on_task
        for rec in reversed(ctx.history):
            if rec.source == "agent" and foreground_package(rec.observation) in on_task and rec.step.summary:
                return rec.step.summary
        return None

    # -- findings -----------------------------------------------------------------------
    def _f(self, verdict: str, confidence: float, why: str, details: dict[str, Any]) -> Finding:
        return Finding(diagnoser=self.name, problem=verdict == "off_track", verdict=verdict, confidence=confidence,
                       evidence=[why], details=details)

    def from_judgment(self, judgment: Any, cost: Cost) -> Finding:
        """Read the shared VLM judgment's ``task_alignment`` as this diagnoser's finding.

        Args:
            judgment: the step's :class:`diagnosers.judgment.Judgment` (or its dict).
            cost: what the judgment cost.

        Returns:
            The finding: on_track / off_track / uncertain, a problem when off_track.
        """
        j = as_judgment(judgment)
        v = j.task_alignment
        return model_finding(self.name, v, v == "off_track", j, cost, "task_alignment")

    def merge(self, rule: Finding, model: Finding) -> Finding:
        """The model decides; what the rules knew of the task's apps is kept in ``details``."""
        model.details = {**rule.details, **model.details}
        return model
