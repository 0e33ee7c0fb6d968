"""Every perturbation preserves solvability: for every task x perturbation pair, the
robust oracle (reference solution re-grounded each step, declining pop-ups, waiting out
loading, re-opening a closed or left app, retrying actions that had no effect) still
succeeds. One parametrised test over all pairs.

The device runs at half resolution (540x1200 at 210 dpi: the same 411x914 dp screen, so
identical layouts in dp) to keep the 2,000-odd episodes affordable in CI. The devices share
one FrameMemo (benchmark/sim/memo.py): a task run under 39 perturbations shows mostly the
same screens, and a screen seen before is neither laid out, exported, drawn nor serialised
again (observations are identical with or without it; tests/benchmark/test_sim_memo.py
checks that). The cases run task by task, and one task's cases on one test worker
(``xdist_group``), so that its screens are still in that worker's memo.
"""

from __future__ import annotations

import pytest

import perturb
from benchmark import SimDevice, make_task, run_episode, task_names
from benchmark.agents import OracleAgent
from benchmark.sim.memo import FrameMemo

# Pairs the oracle does not solve yet, each with the reason we found.
# strict xfail: when one starts passing, the test fails so the entry is removed.
_IRREVERSIBLE = "the trap moves a tap onto another list item or menu entry; the oracle does not read the confirmation it opens"
_NO_STATE = "the offset tap hits a neighbouring control whose effect the oracle cannot tell from the intended one"
_TIMED = "a running timer/recorder keeps changing while the trap costs steps; the oracle's effect check misreads it"
_LANDSCAPE = ("in landscape the folder picker dialog the plan opened must be scrolled to show Movies; the oracle "
              "takes it for a pop-up and cancels it")
KNOWN_UNSOLVED = {
    ("ClockTimerEntry", "trap_intent_deviation"): _IRREVERSIBLE,
    ("ContactsDeleteContact", "trap_intent_deviation"): _IRREVERSIBLE,
    ("ExpenseDeleteMultiple", "trap_intent_deviation"): _IRREVERSIBLE,
    ("MarkorCreateFolder", "trap_intent_deviation"): _IRREVERSIBLE,
    ("MarkorDeleteNewestNote", "trap_intent_deviation"): _IRREVERSIBLE,
    ("MarkorDeleteNote", "trap_intent_deviation"): _IRREVERSIBLE,
    ("SimpleSmsDeleteConversation", "trap_intent_deviation"): _IRREVERSIBLE,
    ("ClockStopWatchPausedVerify", "trap_grounding_error"): _NO_STATE,
    ("ClockTimerEntry", "trap_grounding_error"): _NO_STATE,
    ("ExpenseAddMultiple", "trap_grounding_error"): _NO_STATE,
    ("SystemWifiTurnOff", "trap_grounding_error"): _NO_STATE,
    ("SystemWifiTurnOn", "trap_grounding_error"): _NO_STATE,  # verified, but toggling until the budget ran out
    ("RecipeAddSingleRecipe", "trap_grounding_error"): _NO_STATE,
    ("AudioRecorderRecordAudio", "trap_loop"): _TIMED,
    ("AudioRecorderRecordAudio", "trap_temporal_conflict"): _TIMED,
    ("ClockTimerEntry", "trap_loop"): _TIMED,
    ("ClockTimerEntry", "trap_temporal_conflict"): _TIMED,
    ("FilesMoveFile", "orientation_landscape"): _LANDSCAPE,
    ("RecipeDeleteMultipleRecipes", "trap_state_deadlock"): "the deadlock swallows the confirmation; the oracle gives up on that recipe",
}

# a11y_tree_empty takes away the tree this oracle grounds on (ids, descriptions, switches): what it keeps
# solvable is a screenshot agent's task — tests/test_perturb_a11y.py replays tasks through it
NOT_FOR_A_TREE_AGENT = ("a11y_tree_empty",)


def _same_worker(task_name: str) -> pytest.MarkDecorator:
    """One task's cases on one test worker (``--dist loadgroup``): its screens are in that
    worker's memo after the first of them."""
    return pytest.mark.xdist_group(f"solvability-{task_name}")


# task by task, every perturbation for each
PAIRS = [
    pytest.param(t, p, id=f"{t}-{p}",
                 marks=[_same_worker(t), *([pytest.mark.xfail(reason=KNOWN_UNSOLVED[(t, p)], strict=True)]
                                           if (t, p) in KNOWN_UNSOLVED else [])])
    for t in task_names() for p in perturb.REGISTRY if p not in NOT_FOR_A_TREE_AGENT
]

# the screens one process has shown lately (a few tasks' worth), shared by all its devices
FRAMES = FrameMemo(max_frames=96)


def _device() -> SimDevice:
    return SimDevice(size=(540, 1200), dpi=210, frame_memo=FRAMES)


@pytest.fixture(autouse=True, scope="module")
def _free_the_frames():
    yield
    FRAMES.clear()  # the rest of the session's tests on this worker need not hold them


@pytest.mark.parametrize("task_name,perturbation", PAIRS)
def test_oracle_solves_every_task_under_every_perturbation(task_name, perturbation):
    task = make_task(task_name)
    env = perturb.PerturbedDevice(_device(), [perturb.make(perturbation)], seed=0)
    with env:
        result = run_episode(env, task, OracleAgent.for_task(task))
        events = env.event_log()
    assert result.success, (
        f"{task_name} under {perturbation}: {result.termination} after {result.steps} steps; "
        f"events: {[(e['step'], e['event']) for e in events][:12]}; "
        f"last steps: {[s.agent_step.get('summary') for s in result.trajectory[-6:]]}"
    )


# The same oracle on focus-only dumps (devices.dump: focused_window — the agent sees only the
# focused window: a dialog alone when one is up) and on pop-ups in other languages: a subset
# of tasks (one or two per app), every interrupting perturbation.
FOCUS_TASKS = ["ContactsDeleteContact", "ClockAlarmCreate", "ExpenseAddSingle", "FilesMoveFile", "MarkorCreateNote",
               "RecipeDeleteSingleRecipe", "SimpleSmsSend", "AudioRecorderRecordAudio", "BrowserMaze",
               "SystemBrightnessMax"]
FOCUS_PERTURBATIONS = ["clean", "app_hang_restart_required", "execution_delay_loading",
                       *[n for n in perturb.REGISTRY if perturb.REGISTRY[n].component == "transition"
                         and perturb.REGISTRY[n].layer is None]]
TRANSLATED = ["popup_permission", "rate_dialog", "update_app_sheet", "bottom_sheet_consent", "whats_new_dialog",
              "first_run_gate"]
# Focus-only pairs the oracle does not solve, with the reason (strict xfail, as above).
FOCUS_UNSOLVED = {
    ("ContactsDeleteContact", "rate_dialog"): (
        "the rating prompt opens over the task's own delete confirmation; a focus-only dump shows the prompt alone, "
        "and the oracle's by-id match takes its positive button (android:id/button1, 'Yes!') for 'Delete'"),
}
LANGUAGE_PAIRS = sorted([pytest.param(t, p, lang, id=f"{t}-{p}-{lang}", marks=[_same_worker(t)])
                         for k, (p, lang) in enumerate((p, lang) for p in TRANSLATED for lang in ("es", "zh", "de"))
                         for t in task_names()[k % 3::16]],
                        key=lambda param: task_names().index(param.values[0]))  # task by task, as PAIRS


def _solve(task_name: str, perturbations: list, focused: bool) -> tuple:
    from perturb.dump_style import FocusedWindowDump

    task = make_task(task_name)
    env = perturb.PerturbedDevice(_device(), perturbations, seed=0)
    shown = FocusedWindowDump(env) if focused else env
    with shown:
        result = run_episode(shown, task, OracleAgent.for_task(task))
        events = env.event_log()
    return result, events


@pytest.mark.parametrize("task_name,perturbation", [
    pytest.param(t, p, id=f"{t}-{p}",
                 marks=[_same_worker(t), *([pytest.mark.xfail(reason=FOCUS_UNSOLVED[(t, p)], strict=True)]
                                           if (t, p) in FOCUS_UNSOLVED else [])])
    for t in FOCUS_TASKS for p in FOCUS_PERTURBATIONS])
def test_oracle_solves_on_focus_only_dumps(task_name, perturbation):
    result, events = _solve(task_name, [] if perturbation == "clean" else [perturb.make(perturbation)], focused=True)
    assert result.success, (f"{task_name} under {perturbation} (focus-only dump): {result.termination}; "
                            f"events: {[(e['step'], e['event']) for e in events][:12]}")


@pytest.mark.parametrize("task_name,perturbation,language", LANGUAGE_PAIRS)
def test_oracle_solves_with_pop_ups_in_other_languages(task_name, perturbation, language):
    result, events = _solve(task_name, [perturb.make(perturbation, language=language)], focused=False)
    assert result.success, (f"{task_name} under {perturbation} in {language}: {result.termination}; "
                            f"events: {[(e['step'], e['event']) for e in events][:12]}")
