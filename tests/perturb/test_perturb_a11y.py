"""a11y_tree_empty: the simulated phone loses its accessibility tree like a real one
(a bare window root, or "could not get idle state"), for some apps or all, and the
agent gets what AdbDevice gives then: the screenshot, its text read by OCR. Seeded,
parameterised like the others, and clear about the OCR extra it needs."""

from __future__ import annotations

import hashlib
import sys

import pytest

import perturb
from benchmark import SimDevice, make_task
from perturb import PerturbedDevice, make
from ttir.core import ocr
from ttir.core.types import Action

needs_ocr = pytest.mark.skipif(not ocr.available(), reason="needs the ttir[ocr] extra")


def _run(seed: int, *perts, task: str = "ContactsAddContact") -> tuple[list, list]:
    """Open Contacts and tap the first contact: the event log and what was seen."""
    seen = []
    with PerturbedDevice(SimDevice(), list(perts), seed=seed) as env:
        obs = env.reset(make_task(task, seed=0))
        seen.append(obs)
        env.execute(Action(action_type="open_app", app_name="Contacts"))
        seen.append(env.observe())
        env.execute(Action(action_type="click", index=2))  # an index into the lines the agent was shown
        seen.append(env.observe())
        return env.event_log(), seen


def _fingerprint(obs) -> tuple:
    return (obs.source, obs.tree_error, hashlib.sha256(obs.screenshot.tobytes()).hexdigest(),
            [(e.text, e.bounds, e.source) for e in obs.elements])


def test_registered_beyond_the_paper_with_its_parameters():
    assert "a11y_tree_empty" in perturb.EXTENSIONS and "a11y_tree_empty" not in perturb.ANDROIDREALITY
    prof = perturb.REGISTRY["a11y_tree_empty"]
    assert prof.component == "state" and prof.description.startswith("Beyond the paper.")
    p = make("a11y_tree_empty", dump="fail", apps=["Contacts"], recover_probability=0.5, read_text=False)
    assert (p.magnitude.dump, p.magnitude.apps, p.magnitude.recover_probability) == ("fail", ["Contacts"], 0.5)


def test_bad_parameters_are_refused_naming_them():
    with pytest.raises(ValueError, match="dump"):
        make("a11y_tree_empty", dump="sometimes", read_text=False)
    with pytest.raises(ValueError, match="recover_probability"):
        make("a11y_tree_empty", recover_probability=2, read_text=False)


@needs_ocr
def test_same_seed_same_events_and_screens_and_the_agent_sees_text_not_nodes():
    a_log, a_seen = _run(7, make("a11y_tree_empty", recover_probability=0.5))
    b_log, b_seen = _run(7, make("a11y_tree_empty", recover_probability=0.5))
    assert a_log == b_log and [_fingerprint(o) for o in a_seen] == [_fingerprint(o) for o in b_seen]
    assert [e["event"] for e in a_log if e["perturbation"] == "a11y_tree_empty"] == ["applied"]
    contacts = a_seen[1]
    if contacts.source == "ocr":  # the retry did not recover this screen
        assert "Contacts" in [e.text for e in contacts.elements] and contacts.xml is None
        assert "window root" in contacts.tree_error


@needs_ocr
def test_recovery_is_a_seeded_draw():
    sources = {tuple(o.source for o in _run(s, make("a11y_tree_empty", recover_probability=0.5))[1])
               for s in range(6)}
    assert len(sources) > 1  # some retries recovered the tree, some did not


@needs_ocr
def test_a_failing_dump_and_only_the_chosen_apps():
    log, seen = _run(0, make("a11y_tree_empty", dump="fail", apps=["Contacts"]))
    home, contacts = seen[0], seen[1]
    assert home.source == "tree" and len(home.elements) > 5  # the launcher keeps its tree
    assert contacts.source == "ocr" and "could not get idle state" in contacts.tree_error
    applied = [e for e in log if e["event"] == "applied"]
    assert applied and applied[0]["details"]["package"] == "com.google.android.contacts"


@needs_ocr
def test_a_tap_by_index_lands_on_the_line_of_text_the_agent_was_shown():
    log, seen = _run(0, make("a11y_tree_empty"))
    line = seen[1].elements[2]
    assert line.text == "Ines Mendes"  # the first contact of the list, as read from the screenshot
    assert seen[2].package == "com.google.android.contacts" and seen[2].source == "ocr"
    # the device received a tap at that line's centre: the contact it names opened (its details page)
    after = [e.text for e in seen[2].elements]
    assert "Ines Mendes" in after and "Iris Mendes" not in after and "Call" in after


@needs_ocr
def test_a_popup_over_a_tree_less_screen_is_in_the_pixels_and_read_from_them():
    with PerturbedDevice(SimDevice(), [make("a11y_tree_empty"), make("popup_permission", trigger_step=1)],
                         seed=0) as env:
        env.reset(make_task("ContactsAddContact", seed=0))
        env.execute(Action(action_type="open_app", app_name="Contacts"))
        obs = env.observe()
        assert any(e["event"] == "overlay_shown" for e in env.event_log())
        assert obs.source == "ocr" and all(e.source == "ocr" for e in obs.elements)
        assert any(w in " ".join(e.text for e in obs.elements) for w in ("Allow", "Don't allow"))


def test_pixels_only_needs_no_extra_and_the_default_says_the_extra_is_needed(monkeypatch):
    monkeypatch.setitem(sys.modules, ocr.ENGINE_PACKAGE, None)  # as if ttir[ocr] were not installed
    with pytest.raises(ValueError, match=r"a11y_tree_empty.*ttir\[ocr\].*read_text: false"):
        make("a11y_tree_empty")
    _, seen = _run(0, make("a11y_tree_empty", read_text=False))
    assert seen[1].source == "pixels" and seen[1].elements == [] and seen[1].screenshot is not None


@needs_ocr  # the spec reads text from pixels: without the extra it is refused at load, by design
def test_a_spec_runs_its_grid_under_a_perturbation():
    from pathlib import Path

    from experiments.spec import ExperimentSpec

    spec = ExperimentSpec.from_yaml(Path(__file__).resolve().parents[2] / "experiments" / "specs" / "tree_loss.yaml")
    eps = spec.episodes()
    assert {n for n, _ in spec.perturbation_list()} >= {"clean", "popup_permission", "update_system"}
    assert all(ep.under == [{"a11y_tree_empty": {}}] and "+under-" in ep.id for ep in eps)
    plain = ExperimentSpec(tasks=["SystemWifiTurnOn"], perturbations=["clean"])
    assert "+under-" not in plain.episodes()[0].id  # the ids of runs without `under` are unchanged
    with pytest.raises(ValueError, match=r"under.0: unknown perturbation 'tree_gone'"):
        ExperimentSpec(tasks=["SystemWifiTurnOn"], under=["tree_gone"]).check()


@needs_ocr
@pytest.mark.parametrize("task_name", ["SystemWifiTurnOn", "ContactsAddContact"])
def test_a_screenshot_agent_still_solves_the_task(task_name):
    """The perturbation keeps tasks solvable for an agent that acts on what it sees
    (the replay agent's recorded taps); the app state is verified, not the claim."""
    from benchmark import run_episode
    from benchmark.agents import ReplayAgent

    task = make_task(task_name, seed=0)
    with PerturbedDevice(SimDevice(), [make("a11y_tree_empty")], seed=0) as env:
        result = run_episode(env, task, ReplayAgent.from_task(task), budget=3 * task.reference_steps)
        assert any(e["event"] == "applied" for e in env.event_log())
    assert result.success and result.termination == "done"
