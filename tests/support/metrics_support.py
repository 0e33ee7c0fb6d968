"""Builders of hand-made episode records and trajectories for the metrics tests."""

from __future__ import annotations

from typing import Any, Iterable, Optional

from experiments.metrics.episodes import RunData

APP = "com.example.notes"
LAUNCHER = "com.google.android.apps.nexuslauncher"


def rec(task: str = "T", perturbation: str = "clean", agent: str = "planner", guard: str = "off", seed: int = 0,
        repeat: int = 0, success: bool = True, steps: int = 5, component: Optional[str] = None,
        layer: Optional[str] = None, kind: str = "planner", status: str = "ok", termination: str = "done",
        instance: int = 0, fired: Optional[bool] = None, verified: Optional[bool] = None,
        **extra: Any) -> dict[str, Any]:
    """One episode record; a perturbed one fired at step 0 unless ``fired=False``; ``verified``
    defaults to ``success`` (done-gated: pass termination="budget" for a verified, unfinished one)."""
    if component is None:
        component = "clean" if perturbation == "clean" else "state"
    clean = perturbation == "clean"
    fired = None if clean else (True if fired is None else fired)
    return {"id": f"{task}-i{instance}__{perturbation}__{agent}__{guard}__s{seed}r{repeat}", "task": task,
            "instance": instance, "perturbation": perturbation, "component": component, "layer": layer,
            "overrides": {}, "agent": agent, "agent_kind": kind, "guard": guard, "seed": seed, "repeat": repeat,
            "status": status, "success": success and termination in ("done", "infeasible"),
            "verified": success if verified is None else verified, "steps": steps, "budget": 40,
            "termination": termination, "events": {}, "fired": fired, "fired_step": 0 if fired else None, **extra}


def action(action_type: str, **fields: Any) -> dict[str, Any]:
    return {"action_type": action_type, **fields}


def click(x: int, y: int) -> dict[str, Any]:
    return action("click", x=x, y=y)


def step(i: int, act: dict[str, Any], summary: str = "", fg: str = APP, n_elements: int = 10,
         events: Iterable[dict[str, Any]] = (), guard_events: Iterable[dict[str, Any]] = (),
         error: Optional[str] = None, thought: str = "") -> dict[str, Any]:
    return {"index": i, "observation": {"step": i, "foreground": f"{fg}/.Main", "screen_size": [1080, 2400],
                                        "orientation": "portrait", "n_elements": n_elements},
            "agent_step": {"action": act, "thought": thought, "summary": summary}, "action_error": error,
            "perturbation_events": list(events), "guard_events": list(guard_events)}


def ev(s: int, event: str, perturbation: str = "p", **details: Any) -> dict[str, Any]:
    return {"step": s, "perturbation": perturbation, "event": event, "details": details}


def recovery() -> dict[str, Any]:
    return {"event": "recovery_step", "session": 1, "recovery": "alternative_action"}


def traj(steps: list[dict[str, Any]], events: Iterable[dict[str, Any]] = (), final_pkg: str = APP,
         guard: Optional[dict[str, Any]] = None, termination: str = "done") -> dict[str, Any]:
    return {"trajectory": steps, "events": list(events), "final_screen": {"foreground": f"{final_pkg}/.Main",
                                                                          "package": final_pkg},
            "guard": guard, "termination": termination}


def finding(s: int, diagnoser: str, claim: bool = False) -> dict[str, Any]:
    f = {"step": s, "diagnoser": diagnoser, "problem": True, "verdict": "x", "confidence": 1.0, "evidence": []}
    if claim:
        f["claim"] = True
    return f


def run_of(records: list[dict[str, Any]], trajectories: Optional[dict[str, dict[str, Any]]] = None) -> RunData:
    return RunData(records, trajectories=trajectories or {})
