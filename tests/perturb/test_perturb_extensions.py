"""The perturbations beyond the paper: ui_language and gesture_navigation (device settings),
a11y_tree_empty (tests/test_perturb_a11y.py). The settings two: registered
with Table-4-style parameters apart from the paper's 24, listed by `ttir perturbations`,
in the sweep spec, applied through the device's settings (a real phone too) and restored."""

from __future__ import annotations

from pathlib import Path

from tests.support.adb_fake import FakePhone

import perturb
from benchmark import SimDevice, make_task
from benchmark.devices.adb import cleanup as adb_cleanup
from benchmark.devices.adb.device import AdbDevice
from experiments.spec import ExperimentSpec
from ttir.cli import main
from ttir.core.types import Action

SPECS = Path(__file__).resolve().parents[2] / "experiments" / "specs"
NEW = ("ui_language", "gesture_navigation")


def test_registered_as_state_perturbations_apart_from_the_papers_24():
    assert set(NEW) <= set(perturb.EXTENSIONS)  # the real kinds (tests/perturb/test_perturb_real_kinds.py) join them
    assert "a11y_tree_empty" in perturb.EXTENSIONS
    assert len(perturb.ANDROIDREALITY) == 24 and not set(NEW) & set(perturb.ANDROIDREALITY)
    for name in NEW:
        prof = perturb.REGISTRY[name]
        assert prof.component == "state" and prof.layer is None and prof.family == "extensions"
        assert prof.description.startswith("Beyond the paper.")
    assert perturb.make("ui_language").magnitude.locale_choices == ["es-ES", "de-DE", "zh-CN"]
    assert perturb.make("gesture_navigation").magnitude.navigation_mode == "gesture"


def test_listed_by_ttir_perturbations_with_their_parameters(capsys):
    assert main(["perturbations", "--params"]) == 0
    out = capsys.readouterr().out
    for name in NEW:
        assert name in out
    assert "locale_choices=['es-ES', 'de-DE', 'zh-CN']" in out and "navigation_mode=gesture" in out


def test_in_the_sweep_spec_and_out_of_the_papers_pairing():
    sweep = [n for n, _ in ExperimentSpec.from_yaml(SPECS / "androidreality_sweep.yaml").perturbation_list()]
    # a11y_tree_empty has a sweep of its own (tree_loss.yaml: it needs the ttir[ocr] extra)
    assert "a11y_tree_empty" not in sweep
    assert set(NEW) <= set(sweep) and len(sweep) == 1 + 24 + len(perturb.EXTENSIONS) - 1
    paper = [n for n, _ in ExperimentSpec.from_yaml(SPECS / "androidreality.yaml").perturbation_list()]
    assert not set(NEW) & set(paper)  # the paper's round-robin over its 24 is unchanged


def test_gesture_navigation_applies_and_restores_and_back_still_works():
    env = perturb.PerturbedDevice(SimDevice(), [perturb.make("gesture_navigation")], seed=0)
    with env:
        env.reset(make_task("SystemWifiTurnOff"))
        assert env.settings.navigation_mode == "gesture"
        obs = env.observe()
        assert obs.find(resource_id="com.android.systemui:id/home_handle") and not obs.find(content_desc="Back")
        env.execute(Action(action_type="open_app", app_name="Settings"))
        env.execute(Action(action_type="navigate_back"))
        assert "launcher" in env.observe().package
    assert env.inner.settings.navigation_mode == "three_button"


def test_on_a_real_phone_both_go_through_settings_and_are_put_back(tmp_path):
    phone = FakePhone()
    d = AdbDevice(adb_device=phone, sleep=lambda s: None, settle_seconds=0, action_settle_seconds=0,
                  journal_dir=tmp_path)
    try:
        before = phone.state()
        d.configure(navigation_mode="gesture", locale="de-DE")
        assert phone.secure["navigation_mode"] == "2" and phone.system["system_locales"] == "de-DE"
        assert "cmd overlay enable-exclusive --category com.android.internal.systemui.navbar.gestural" in phone.calls
        assert d.settings.navigation_mode == "gesture" and d.settings.locale == "de-DE"
        d.restore_settings()
        assert phone.state() == before
    finally:
        adb_cleanup.unregister(id(d))
