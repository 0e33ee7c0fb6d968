"""AnTrap's trigger policy (p = 0.16 per step, once, first 80 % of the budget, budget
×1.15), the per-episode trap mixture, the registry entries, and determinism."""

from __future__ import annotations

from typing import Any

import pytest

from benchmark import SimDevice
from benchmark.tasks import TASKS
from perturb import ANDROIDREALITY, ANTRAP, REGISTRY, PerturbedDevice, make
from perturb.traps import TrapSchedule, attempt_seed, extended_budget, pixels, trap_events
from ttir.core.types import Action, Observation

TASK = TASKS["ContactsEditNumber"].create(seed=3)
TRAPS = {
    "trap_external_interruption": "S", "trap_visual_obscuration": "S",
    "trap_temporal_conflict": "T", "trap_visual_hallucination": "T",
    "trap_grounding_error": "A", "trap_type_mismatch": "A", "trap_intent_deviation": "A",
    "trap_state_deadlock": "R", "trap_context_disruption": "R", "trap_loop": "R",
}
# external interruption needs the transition perturbations (built by another module)
RUNNABLE = [t for t in TRAPS if t != "trap_external_interruption" or "popup_permission" in REGISTRY]


class Wanderer:
    """A cheap scripted agent that keeps touching, typing, scrolling and swiping in
    Contacts, so every trap finds an eligible step."""

    def __init__(self) -> None:
        self.i = 0

    def step(self, obs: Observation) -> Action:
        self.i += 1
        if obs.package != "com.google.android.contacts":
            return Action(action_type="open_app", app_name="Contacts")
        field = next((e for e in obs.elements if e.editable), None)
        if field is not None and self.i % 3 == 0:
            return Action(action_type="input_text", text="Ada", x=field.center[0], y=field.center[1], clear_text=True)
        if self.i % 5 == 0:
            return Action(action_type="swipe", x=540, y=1600, x2=540, y2=900, duration_ms=300)
        if self.i % 7 == 0:
            return Action(action_type="navigate_back")
        touch = [e for e in obs.elements if e.clickable and e.package == "com.google.android.contacts"]
        e = touch[self.i % len(touch)] if touch else None
        if e is None:
            return Action(action_type="scroll", direction="down")
        return Action(action_type="click", x=e.center[0], y=e.center[1])


def episode(perturbation: Any, seed: int, steps: int = 10, budget: int = 20,
            hashes: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """Run the wanderer; return the event log and (``hashes``) the digests of the screens shown."""
    env = PerturbedDevice(SimDevice(), [perturbation], seed=seed, budget=budget)
    obs = env.reset(TASK)
    agent = Wanderer()
    digests = [pixels.digest(obs.screenshot)] if hashes else []
    for _ in range(steps):
        try:
            env.execute(agent.step(obs))
        except Exception:  # noqa: BLE001 - an action the screen cannot take; the episode goes on
            pass
        obs = env.observe()
        if hashes:
            digests.append(pixels.digest(obs.screenshot))
    log = env.event_log()
    env.close()
    return log, digests


def test_the_ten_traps_are_registered_with_their_star_layer_and_antrap_timing():
    assert set(ANTRAP) == set(TRAPS)
    assert not set(ANTRAP) & set(ANDROIDREALITY)
    for name, layer in TRAPS.items():
        prof = REGISTRY[name]
        assert prof.layer == layer and prof.family == "antrap"
        p = make(name)
        assert p.layer == layer
        t = p.timing
        assert (t.probability, t.window_fraction, t.max_triggers) == (0.16, 0.8, 1)
    assert make("trap_grounding_error").magnitude.offset_px == (20, 50)
    assert make("trap_visual_obscuration").magnitude.radius == 15
    assert make("trap_temporal_conflict").magnitude.age_steps == 3
    assert make("trap_loop").magnitude.every_steps == 2
    with pytest.raises(ValueError, match="offset_px"):
        make("trap_grounding_error", offset_px=(50, 20))


def test_budget_extension_and_retry_seeds():
    assert extended_budget(100) == 115
    assert extended_budget(60) == 69  # 60 × 1.15 is 68.99999… in floating point
    assert extended_budget(7) == 9
    with pytest.raises(ValueError, match="budget=0"):
        extended_budget(0)
    assert attempt_seed(42, 0) == 42
    assert len({attempt_seed(42, a) for a in range(10)}) == 10


@pytest.mark.parametrize("name", RUNNABLE)
def test_same_seed_same_log_and_screens_different_seed_different_choices(name):
    forced = {"probability": 0.35}  # seeded draws: the step (and every choice) follows the seed
    log_a, shots_a = episode(make(name, **forced), seed=7, hashes=True)
    log_b, shots_b = episode(make(name, **forced), seed=7, hashes=True)
    assert trap_events(log_a), f"{name} did not fire"
    assert log_a == log_b and shots_a == shots_b
    others = [episode(make(name, **forced), seed=s) for s in (8, 9, 10)]
    assert any(log != log_a for log, _ in others), f"{name}: every seed made the same choices"


def test_default_timing_fires_at_most_once_within_the_first_80_percent():
    steps_fired = []
    for seed in range(10):
        log, _ = episode(make("trap_type_mismatch"), seed=seed, steps=12, budget=10)
        fired = trap_events(log)
        assert len(fired) <= 1
        steps_fired += [e["step"] for e in fired]
    assert steps_fired and all(s < 8 for s in steps_fired)
    assert len(set(steps_fired)) >= 3  # the seeded draws spread the trap over the episode


def test_schedule_picks_one_trap_per_episode_by_seed():
    chosen = []
    for seed in range(12):
        schedule = TrapSchedule(RUNNABLE, overrides={"probability": 1.0})
        log, _ = episode(schedule, seed=seed, steps=5)
        (selected,) = [e for e in log if e["event"] == "trap_selected"]
        assert selected["perturbation"] == "antrap_schedule"
        trap = selected["details"]["trap"]
        assert selected["details"]["layer"] == TRAPS[trap]
        fired = trap_events(log)
        assert len(fired) == 1 and fired[0]["perturbation"] == trap
        assert {e["perturbation"] for e in log} <= {"antrap_schedule", trap}
        chosen.append(trap)
    assert len(set(chosen)) >= 5
    first = episode(TrapSchedule(RUNNABLE, overrides={"probability": 1.0}), seed=3, steps=5, hashes=True)
    again = episode(TrapSchedule(RUNNABLE, overrides={"probability": 1.0}), seed=3, steps=5, hashes=True)
    assert again == first


def test_schedule_rejects_unknown_traps_and_honours_weights():
    with pytest.raises(ValueError, match="action_drop_random"):
        TrapSchedule(["trap_loop", "action_drop_random"])
    with pytest.raises(ValueError, match="weights"):
        TrapSchedule(["trap_loop"], weights=[1.0, 2.0])
    only = TrapSchedule(["trap_loop", "trap_type_mismatch"], weights=[0.0, 1.0])
    for seed in range(4):
        log, _ = episode(only, seed=seed, steps=1)
        assert log[0]["details"]["trap"] == "trap_type_mismatch"
