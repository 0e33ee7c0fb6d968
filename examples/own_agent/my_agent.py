"""A complete own agent for `ttir run`: a greedy goal-word matcher.

It opens the task's app, then taps the control whose words best match the goal
(each control once), and claims the task complete when nothing on screen matches
any more. Crude on purpose: it needs no model, so the example runs anywhere, and
it fails some tasks — which is what an evaluation is for. Swap `step` for your
model call and keep the rest.

The spec (spec.yaml beside this file) names the factory: `my_agent:make_agent`.
"""

from __future__ import annotations

import re
from typing import Optional

from ttir import Action, AgentStep, Observation

WORD = re.compile(r"[a-z0-9]+")
IGNORED = {"the", "and", "for", "with", "app", "using", "into", "from", "turn", "off", "on", "my", "in", "to", "a"}


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower().replace("-", "")) if w not in IGNORED and len(w) > 1}


def label_of(obs: Observation, i: int) -> str:
    """A control's words: its own text and description, and the texts drawn inside it."""
    e = obs.elements[i]
    x1, y1, x2, y2 = e.bounds
    inside = [c.text or c.content_desc for c in obs.elements[i + 1:i + 12]
              if c.bounds[0] >= x1 and c.bounds[1] >= y1 and c.bounds[2] <= x2 and c.bounds[3] <= y2]
    return " ".join(t for t in [e.text, e.content_desc, *inside] if t)


class GoalWordsAgent:
    """``reset(goal)`` then ``step(obs)``: the Agent protocol of ttir (and AndroidWorld's base agent)."""

    def __init__(self, app: Optional[str], max_taps: int = 8):
        self.app = app
        self.max_taps = max_taps
        self.reset("")

    def reset(self, goal: str) -> None:
        self.goal_words = words(goal)
        self.tapped: set[str] = set()
        self.opened = False

    def step(self, obs: Observation) -> AgentStep:
        if self.app and not self.opened:
            self.opened = True
            return AgentStep(action=Action(action_type="open_app", app_name=self.app),
                             thought=f"The task uses {self.app}.", summary=f"Open {self.app}")
        best, best_score = None, 0
        for i, e in enumerate(obs.elements):
            if not (e.clickable or e.checkable) or (e.package and e.package != obs.package):
                continue  # only the app's own controls (not the status or navigation bar)
            label = label_of(obs, i)
            key = f"{obs.package}|{e.resource_id}|{e.bounds}"  # the same control, whatever it shows now
            if not label or key in self.tapped:
                continue
            score = len(words(label) & self.goal_words)
            if score > best_score:
                best, best_score = (i, label, key), score
        if best is None or len(self.tapped) >= self.max_taps:
            return AgentStep(action=Action(action_type="status", goal_status="complete"),
                             thought="Nothing on screen matches the goal any more.", summary="Done")
        i, label, key = best
        self.tapped.add(key)
        return AgentStep(action=Action(action_type="click", index=i), thought=f"{label!r} matches the goal.",
                         summary=f"Tap {label!r}")


def make_agent(facts, max_taps: int = 8) -> GoalWordsAgent:
    """The factory: ``facts`` is the episode's EpisodeFacts (goal, task, apps, screen_size, seed, budget);
    the keyword arguments are the spec's ``params``."""
    return GoalWordsAgent(facts.apps[0] if facts.apps else None, max_taps=max_taps)
