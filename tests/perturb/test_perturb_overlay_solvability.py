"""Every overlay perturbation preserves solvability, and the same seed gives the
same run (event log and screenshots) while different seeds vary the content."""

from __future__ import annotations

import pytest

import perturb
from benchmark import SimDevice, make_task, run_episode
from tests.support.overlay_helpers import ALL, TRANSITIONS, DismissFirstAgent, act, img_hash, make_env
from perturb import PerturbedDevice

TASKS = ("ContactsAddContact", "SystemBrightnessMax", "SystemBrightnessMaxSettings", "SystemWifiTurnOn")
# shown on the 2-step shade-only brightness task too (popup_security: by its last reference step, before_reference_end)
SHADE_ONLY_SHOWN = {"notification_message", "notification_delivery", "update_system", "popup_security"}


def _episode(name: str, task_name: str, seed: int = 0, **overrides):
    task = make_task(task_name)
    env = PerturbedDevice(SimDevice(), [perturb.make(name, **overrides)], seed=seed)
    result = run_episode(env, task, DismissFirstAgent(task))
    log = [e["event"] for e in result.reset_events] + [e["event"] for s in result.trajectory for e in s.perturbation_events]
    return result, log, env


@pytest.mark.parametrize("task_name", TASKS)
@pytest.mark.parametrize("name", TRANSITIONS)
def test_reference_solution_still_succeeds_after_dismissing(name, task_name):
    result, log, env = _episode(name, task_name)
    assert result.success, (name, task_name, log, [s.agent_step["summary"] for s in result.trajectory])
    assert result.steps <= 2 * make_task(task_name).reference_steps + 4
    # the interruption really happened — except in-app ones on the 2-step shade-only brightness task,
    # which never opens an app
    expected = task_name != "SystemBrightnessMax" or name in SHADE_ONLY_SHOWN
    assert ("overlay_shown" in log) == expected, log
    assert "overlay_engaged" not in log
    assert env.inner.settings.model_dump(exclude={"brightness"}) == env.inner._initial_settings.model_dump(exclude={"brightness"})


def test_brightness_case_study_notification_over_the_shade():
    # case study 4: a message notification arrives while Quick Settings is open
    result, log, _ = _episode("notification_message", "SystemBrightnessMax")
    assert result.success and log[:2] == ["overlay_shown", "overlay_dismissed"]


@pytest.mark.parametrize("name", ["execution_delay_loading", "execution_delay_frozen", "partial_loading_skeleton",
                                  "app_hang_restart_required"])
@pytest.mark.parametrize("task_name", ["ContactsAddContact", "SystemBrightnessMaxSettings", "SimpleSmsSendReceivedAddress"])
def test_waiting_out_loading_and_restarting_a_hung_app_still_succeeds(name, task_name):
    result, log, _ = _episode(name, task_name)
    assert result.success, (name, task_name, log)
    assert "overlay_shown" in log


@pytest.mark.parametrize("name", ALL)
def test_same_seed_same_run_different_seed_different_content(name):
    extra = {"show_text": True} if name == "execution_delay_frozen" else {}  # else it has no content to vary

    def run(seed: int, frames: bool = True):
        env, obs = make_env(name, seed=seed, **extra)
        hashes = [img_hash(obs)] if frames else []
        for a in (dict(action_type="open_app", app_name="Contacts"), dict(action_type="wait"),
                  dict(action_type="wait"), dict(action_type="wait"), dict(action_type="click", x=540, y=1700)):
            obs = act(env, **a)
            if frames:
                hashes.append(img_hash(obs))
        return env.event_log(), hashes

    log, hashes = run(5)
    assert (log, hashes) == run(5)
    shown = [e for e in log if e["event"] == "overlay_shown"]
    assert shown
    first = str(shown[0]["details"])
    for seed in range(6):
        other = [e for e in run(seed, frames=False)[0] if e["event"] == "overlay_shown"]
        if str(other[0]["details"]) != first:
            break
    else:
        pytest.fail("different seeds draw different content from the pool")
