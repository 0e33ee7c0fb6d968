"""Task context read from a DiagnosisContext: the goal's words, the apps the agent
used while on track, whether the shade is the agent's own doing, whether an
interruption was on screen recently."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Optional

from diagnosers.signals.actions import is_shade_pull, point_of
from diagnosers.signals.cache import cached
from diagnosers.signals.lexicon import load_lexicon
from diagnosers.signals.overlays import overlay_candidates, score_text
from diagnosers.signals.system import is_app_package, is_launcher, knowledge, package_tokens
from diagnosers.signals.text import content_words, normalize, stem
from diagnosers.signals.tree import foreground_package, screen_tree
from ttir.core.types import Observation

if TYPE_CHECKING:  # pragma: no cover
    from ttir.core.diagnosis import DiagnosisContext

CLOSING_KINDS = ("permission", "anr", "crash", "heads_up")  # interruptions that every answer closes
INTERRUPTION_SCORE = 0.6  # context-free overlay score that counts as "an interruption was shown"
RECENT_STEPS = 4


@lru_cache(maxsize=256)
def goal_words(goal: str) -> frozenset[str]:
    return frozenset(content_words(goal))


def goal_mentions(goal: str, phrases: frozenset[str]) -> bool:
    """Whether the goal contains one of ``phrases`` as whole words (or their plural);
    hyphens are ignored ("Wi-Fi" = "wifi")."""
    g = " " + " ".join(re.findall(r"[a-z0-9]+", normalize(goal).replace("-", ""))) + " "
    for p in phrases:
        q = " ".join(re.findall(r"[a-z0-9]+", p.replace("-", "")))
        if q and (f" {q} " in g or f" {q}s " in g):
            return True
    return False


def app_named_in_goal(pkg: str, goal: str) -> bool:
    """A goal word names the package (contacts ~ com.google.android.contacts,
    sms ~ com.simplemobiletools.smsmessenger)."""
    tokens = {stem(t) for t in package_tokens(pkg)} | package_tokens(pkg)
    for w in goal_words(goal):
        if len(w) < 3:
            continue
        for t in tokens:
            if w == t or (len(w) >= 3 and w in t) or (len(t) >= 4 and t in w):
                return True
    return False


def overlay_score(obs: Observation, skip_kinds: tuple[str, ...] = ("shade",)) -> float:
    """The strongest context-free overlay score on screen (built-in lexicon),
    overlays of ``skip_kinds`` aside."""
    lex = load_lexicon(None)
    best = 0.0
    for c in overlay_candidates(obs):
        if c.kind in skip_kinds:
            continue
        best = max(best, c.structural_score + score_text(c, lex)[0])
    return best


interruption_score = cached("interruption_score")(overlay_score)


def in_overlay(obs: Observation, point: Optional[tuple[int, int]]) -> bool:
    """Whether a touch landed on an overlay candidate (not the app's plain screen)."""
    if point is None:
        return False
    x, y = point
    for c in overlay_candidates(obs):
        if c.kind == "shade":
            continue
        x1, y1, x2, y2 = c.bounds
        if x1 <= x < x2 and y1 <= y < y2 and interruption_score(obs) >= INTERRUPTION_SCORE:
            return True
    return False


@dataclass
class TaskTrack:
    """The apps the agent used on track, and how it got to the current screen."""

    on_task: set[str] = field(default_factory=set)
    off_task: set[str] = field(default_factory=set)
    ever_in_app: bool = False
    shade_used: bool = False
    interruption_recent: bool = False
    via_overlay: set[str] = field(default_factory=set)  # apps first reached by tapping an interruption


def track(ctx: "DiagnosisContext") -> TaskTrack:
    """One forward pass over the history (cached per step in ``ctx.cache``)."""
    hit = ctx.cache.get("signals.track")
    if hit is not None:
        return hit
    obs = ctx.observations()
    records = ctx.history
    t = TaskTrack()
    for i, o in enumerate(obs):
        pkg = foreground_package(o)
        if screen_tree(o).shade_open:
            t.shade_used = True
        if not is_app_package(pkg):
            continue
        t.ever_in_app = True
        if pkg in t.on_task:
            continue
        if i == 0 or app_named_in_goal(pkg, ctx.goal):
            t.on_task.add(pkg)
            continue
        prev = records[i - 1]
        a = prev.step.action
        if a.action_type == "open_app":
            t.on_task.add(pkg)  # the agent chose this app (also promotes an app once reached by accident)
            t.off_task.discard(pkg)
            t.via_overlay.discard(pkg)
            continue
        came_by_overlay = a.is_touch and in_overlay(prev.observation, point_of(a, prev.observation))
        if came_by_overlay and _opened_under_interruptions(obs, records, i):
            t.on_task.add(pkg)  # the agent opened this app; an interruption came up over it first
            continue
        if (not came_by_overlay and foreground_package(prev.observation) in t.on_task
                and interruption_score(prev.observation) < INTERRUPTION_SCORE):
            t.on_task.add(pkg)  # a cross-app flow from an on-task screen (Contacts -> Messages)
        else:
            t.off_task.add(pkg)
            if came_by_overlay:
                t.via_overlay.add(pkg)
    recent = obs[-(RECENT_STEPS + 1):]
    t.interruption_recent = any(interruption_score(o) >= INTERRUPTION_SCORE for o in recent)
    ctx.cache["signals.track"] = t
    return t


def _opened_under_interruptions(obs: list[Observation], records: list, i: int) -> bool:
    """Screens ``i-1, i-2, …`` were interruptions covering what the agent had just
    launched with its own ``open_app``: the app now in front is the one it opened."""
    k = i - 1
    while k >= 1 and interruption_score(obs[k]) >= INTERRUPTION_SCORE:
        k -= 1
    if k == i - 1 or records[k].step.action.action_type != "open_app":
        return False
    # the interruption covered what the agent launched: a window of its own, or this very app
    first = foreground_package(obs[k + 1])
    return first == foreground_package(obs[i]) or not is_app_package(first)


def app_names(ctx: "DiagnosisContext") -> set[str]:
    """What the agent's apps are called: the names it opened them by (``open_app``) and
    the packages it used on track, and the foreground package."""
    names = {r.step.action.app_name for r in ctx.history if r.step.action.action_type == "open_app"}
    names |= set(track(ctx).on_task) | {foreground_package(ctx.observation)}
    return {n for n in names if n}


def tapped_into_interruption(prev_obs: Observation, point: Optional[tuple[int, int]]) -> Optional[str]:
    """The role (engage / neutral / dismiss) of the interruption button a touch at
    ``point`` hit on ``prev_obs``; None when it hit no interruption's button."""
    if point is None or interruption_score(prev_obs) < INTERRUPTION_SCORE:
        return None
    from diagnosers.signals.overlays import button_roles

    lex = load_lexicon(None)
    x, y = point
    for c in overlay_candidates(prev_obs):
        if c.kind == "shade":
            continue
        x1, y1, x2, y2 = c.bounds
        if not (x1 <= x < x2 and y1 <= y < y2):
            continue
        if c.kind in CLOSING_KINDS:
            return "dismiss"  # any answer closes a permission request or an "isn't responding" dialog
        for b, role in zip(c.buttons, button_roles(c.buttons, lex, c.kind, c.texts)):
            bx1, by1, bx2, by2 = b.bounds
            if bx1 <= x < bx2 and by1 <= y < by2:
                return role
    return None


def shade_owned(ctx: "DiagnosisContext") -> bool:
    """The shade on screen now was pulled down by a step of the history (and stayed
    open since), or the goal is about something the shade holds."""
    obs = ctx.observations()
    if not screen_tree(obs[-1]).shade_open:
        return False
    k = len(obs) - 1
    while k > 0 and screen_tree(obs[k - 1]).shade_open:
        k -= 1
    if k == 0:
        return goal_mentions(ctx.goal, knowledge().shade_goal_words)
    rec = ctx.history[k - 1]
    return is_shade_pull(rec.step.action, rec.observation.screen_size)


def is_recents(obs: Observation) -> bool:
    """The overview (recent apps) screen of the launcher."""
    if not is_launcher(foreground_package(obs)):
        return False
    ids = {e.resource_id.split("/", 1)[-1].lower() for e in obs.elements if e.resource_id}
    return bool(ids & {"overview_panel", "snapshot", "clear_all", "recents_view", "overview_actions_view"})
