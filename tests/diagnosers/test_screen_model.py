"""The learned screen model: its file, its inference without scikit-learn, its regeneration, and
the safety rules the free tier keeps around it (each on a real ``dev`` dump)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from diagnosers import DiagnosisContext, InterferenceDiagnoser
from diagnosers.signals.screen_model import (
    DEFAULT_MODEL,
    FEATURE_GROUPS,
    GROUP_WEIGHT,
    HASH_SIZE,
    ScreenModelError,
    load_screen_model,
    save_screen_model,
    screen_features,
)
from experiments.real_screens.corpus import load_corpus
from experiments.real_screens.evaluate import WaitOnlyAgent, classify
from ttir import TTIRConfig, guard
from ttir.core.config import InterferenceConfig

BY_ID = {s.id: s for s in load_corpus("dev")}


def dev(screen_id: str):
    return BY_ID[screen_id]  # KeyError: not a dev screen (tests tune nothing on test)


def finding(s, screen_model=True):
    d = InterferenceDiagnoser(InterferenceConfig(screen_model=screen_model))
    return d.diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[]))


def first_step(s, screen_model=True):
    agent = guard(WaitOnlyAgent(), TTIRConfig().override({"interference.screen_model": screen_model}))
    agent.reset(s.label.goal)
    obs = s.observation()
    step = agent.step(obs)
    return obs, step, agent.report.usage[-1].source


def test_the_shipped_model_is_small_and_names_its_training_data():
    assert DEFAULT_MODEL.stat().st_size <= 2 * 1024 * 1024
    m = load_screen_model()
    assert m.screen.hashed.shape == (HASH_SIZE,) and 0 < m.uncertain <= m.threshold < 1
    assert "dev screens" in m.trained_on and "repositories" in m.trained_on
    report = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text(encoding="utf-8"))
    assert report["split"] == "dev" and report["threshold"] == pytest.approx(m.threshold)


def test_inference_imports_no_scikit_learn():
    code = ("import sys; from experiments.real_screens.corpus import load_corpus; "
            "from diagnosers import DiagnosisContext, InterferenceDiagnoser; "
            "s = next(x for x in load_corpus('dev') if x.label.category == 'interference' and not x.label.malformed); "
            "f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), "
            "history=[])); assert 'screen_model' in f.details or f.details.get('kind'), f.details; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'scipy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_model_file_that_cannot_be_read_is_a_clear_error(tmp_path):
    bad = tmp_path / "model.npz"
    bad.write_bytes(b"not a model")
    with pytest.raises(ScreenModelError, match="screen_model_file=.*ttir tune train --real"):
        InterferenceDiagnoser(InterferenceConfig(screen_model_file=str(bad)))
    np.savez(bad, version=np.array(99), numeric_names=np.array(["x"]), hashed=np.zeros(3))
    load_screen_model.cache_clear()
    with pytest.raises(ScreenModelError, match="feature version 99"):
        load_screen_model(str(bad))


def test_the_features_are_bounded_on_a_hostile_dump():
    from ttir.core.types import Observation, UIElement

    huge = [UIElement(text="A" * 50_000 + str(i), bounds=(0, i, 10, i + 1), clickable=True, parent=None)
            for i in range(500)]
    f = screen_features(Observation(elements=huge, screen_size=(1080, 2400)), "goal " * 10_000)
    assert len(f.indices) < 50_000 and np.isfinite(f.values).all() and np.isfinite(f.numeric).all()


def test_the_thresholds_are_the_median_over_the_fold_shuffles():
    import math

    from experiments.real_screens.train import THRESHOLD_FOLD_SEEDS

    report = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text(encoding="utf-8"))
    by_seed = report["cross_validation"][str(report["C"])]["threshold_by_fold_seed"]
    assert len(by_seed) == THRESHOLD_FOLD_SEEDS and len(set(by_seed)) > 1  # the shuffles disagree
    assert report["threshold"] == math.ceil(float(np.median(by_seed)) * 1e4) / 1e4
    assert min(by_seed) <= report["threshold"] <= max(by_seed) + 1e-4


def test_the_shipped_model_is_what_the_train_command_writes(tmp_path):
    pytest.importorskip("sklearn")
    from experiments.real_screens.train import train

    out = tmp_path / "model.npz"
    train(out, seed=0)
    mine, shipped = load_screen_model(str(out)), load_screen_model()
    for name in ("threshold", "uncertain", "control_threshold", "control_veto"):
        assert getattr(mine, name) == pytest.approx(getattr(shipped, name)), name
    screens = [s for s in load_corpus("all") if not s.label.malformed][::7]
    for s in screens:
        obs = s.observation()
        if not obs.elements:
            continue
        f = screen_features(obs, s.label.goal, {"verdict": "false", "details": {}})
        assert mine.probability(f) == pytest.approx(shipped.probability(f), abs=1e-5), s.id


def test_the_rule_evidence_weighs_what_the_group_weight_says():
    s = dev("0381990abcc5")
    obs = s.observation()
    rule = {"verdict": "true", "details": {"kind": "anr", "features": {"scrim": 1}, "lexicon_hits": ["not responding"]}}

    def vector(weights):
        f = screen_features(obs, s.label.goal, rule, weights)
        v = np.zeros(HASH_SIZE)
        v[f.indices] = f.values
        return v

    without = vector({"rule": 0.0})
    # the rule group alone is what the weight adds, whatever it shares buckets with
    assert np.linalg.norm(vector(None) - without) == pytest.approx(GROUP_WEIGHT.get("rule", 1.0))
    assert np.linalg.norm(vector({"rule": 0.5}) - without) == pytest.approx(0.5)
    assert np.array_equal(vector(None), vector(dict(GROUP_WEIGHT)))


def test_the_model_file_carries_the_group_weights_inference_reads(tmp_path):
    shipped = load_screen_model()
    assert shipped.group_weight == {g: GROUP_WEIGHT.get(g, 1.0) for g in FEATURE_GROUPS}
    s = dev("0381990abcc5")
    obs, rule = s.observation(), {"verdict": "uncertain", "details": {"kind": "takeover"}}
    path = tmp_path / "model.npz"
    t = {"threshold": 0.7, "uncertain": 0.2, "control_threshold": 0.7, "control_veto": 0.0}
    save_screen_model(path, shipped.screen, shipped.control, t, "a test", {"rule": 0.25})
    mine = load_screen_model(str(path))
    assert mine.group_weight["rule"] == 0.25 and mine.group_weight["all"] == 1.0
    f = mine.features(obs, s.label.goal, rule)
    assert np.array_equal(f.values, screen_features(obs, s.label.goal, rule, {"rule": 0.25}).values)
    assert not np.array_equal(f.values, shipped.features(obs, s.label.goal, rule).values)
    with np.load(path) as z:
        parts = dict(z)
    older = tmp_path / "older.npz"  # written before the norms were recorded: trained with them all at 1
    np.savez(older, **{k: v for k, v in parts.items() if k != "group_weight"})
    assert set(load_screen_model(str(older)).group_weight.values()) == {1.0}
    np.savez(path, **{**parts, "group_weight": np.array([1.0, float("nan")])})
    load_screen_model.cache_clear()
    with pytest.raises(ScreenModelError, match="group_weight=.*one norm in"):
        load_screen_model(str(path))


# -- the safety rules the free tier keeps around the model -----------------------------------


def test_system_dialogs_stay_the_rules_verdict():
    s = dev("0381990abcc5")  # "System UI isn't responding": the rules' ANR, waited on, never closed
    f = finding(s)
    assert f.problem and f.details["kind"] == "anr" and "screen_model" not in f.details
    obs, step, source = first_step(s)
    assert source == "recovery" and classify(s, obs, step, source) == "dismiss"


def test_a_lock_screen_is_reported_never_dismissed():
    s = dev("4a00f8f19425")
    f = finding(s)
    assert f.problem and f.details["kind"] == "lock_screen" and f.details["dismiss_hint"] == "report"
    _, _, source = first_step(s)
    assert source == "agent"


def test_an_always_on_display_is_a_lock_screen_reported_never_dismissed():
    s = dev("dca4d309cb03")  # Samsung's always-on display (clock, date, notification icons): a locked phone
    f = finding(s)
    assert f.problem and f.details["kind"] == "lock_screen" and f.details["dismiss_hint"] == "report"
    _, _, source = first_step(s)
    assert source == "agent"


@pytest.mark.parametrize("screen_id", ["6fe670a7f410", "de974455e5a3"])
def test_a_vendor_keyguard_apps_lock_screen_is_reported_and_back_is_never_pressed(screen_id):
    s = dev(screen_id)  # MIUI's own keyguard app (com.android.keyguard, not System UI): its lock screen, its pattern
    f = finding(s)
    assert f.problem and f.details["kind"] == "lock_screen" and f.details["dismiss_hint"] == "report"
    obs, step, source = first_step(s)
    assert source == "agent" and classify(s, obs, step, source) == "none"  # was: Back, as from a foreign window


@pytest.mark.parametrize("screen_id", ["553fbad52fe8", "231050ccbd5a"])
def test_a_vendors_app_lock_is_a_lock_screen_and_its_cancel_is_never_tapped(screen_id):
    s = dev(screen_id)  # ColorOS's app lock (fingerprint, then the privacy-password keypad): "Cancel" gives up the app
    f = finding(s)
    assert f.problem and f.details["kind"] == "lock_screen" and f.details["dismiss_hint"] == "report"
    obs, step, source = first_step(s)
    assert source == "agent" and classify(s, obs, step, source) == "none"


@pytest.mark.parametrize("screen_id", ["37b8f56d52de", "0eb2cb511c89", "df20058c9f48", "ae242f8f84a1"])
def test_a_dialog_the_goal_needs_is_never_dismissed(screen_id):
    s = dev(screen_id)  # "make and manage phone calls" for a call-screening goal; a ringtone picker for a sound
    # goal; "Allow YouTube to record audio?" for a goal that searches by voice; "Allow Instagram to access
    # more photos and videos?" for a profile picture chosen from the photo album
    assert finding(s).verdict != "true"
    _, _, source = first_step(s)
    assert source == "agent"


def test_an_alert_dialogs_positive_button_with_a_label_of_its_own_is_its_action_not_a_way_out():
    s = dev("03a344b58a35")  # "Não é possível salvar o contato": [OK] (button2) and [Salvar no celular] (button1)
    f = finding(s)
    roles = {b["label"]: b["role"] for b in f.details["buttons"]}
    assert roles == {"OK": "dismiss", "Salvar no celular": "engage"}  # button1's id alone made it a dismiss


def test_a_positive_button_under_a_label_no_phrase_knows_is_never_tapped_as_a_way_out():
    """A VPN app's plan ad: [NOT NOW] (button2) and [VIEW PLANS] (button1). The positive button's id
    does not say it closes anything; its label is what it does. The recovery's fallback, which reads
    the screen's controls one by one (a check of the user's own names no buttons), taps NOT NOW."""
    from recoveries import DismissInterference
    from ttir.core.diagnosis import Finding
    from ttir.core.lexicon import role_of
    from ttir.core.recovery import RecoveryContext

    s = dev("7f1f27a91fe7")
    obs = s.observation()
    view = next(e for e in obs.elements if e.text == "VIEW PLANS")
    not_now = next(e for e in obs.elements if e.text == "NOT NOW")
    assert view.resource_id.endswith(":id/button1") and role_of(view) == "neutral"  # its id alone made it a dismiss
    assert role_of(not_now) == "dismiss"
    roles = {b["label"]: b["role"] for b in finding(s).details["buttons"]}
    assert roles["VIEW PLANS"] != "dismiss" and roles["NOT NOW"] == "dismiss"
    own = Finding(diagnoser="my_ads", problem=True, verdict="true", confidence=1.0, evidence=["an ad"],
                  details={"kind": "dialog", "bounds": (0, 0, *obs.screen_size)})
    step = DismissInterference().next_step(RecoveryContext(goal=s.label.goal, observation=obs, history=[], finding=own))
    assert step is not None and step.action.point() == not_now.center


def test_the_permission_controllers_settings_page_is_no_prompt():
    s = dev("7e12d8ff92d7")  # Settings > Instagram > Photos and videos: the controller's ids and radio buttons
    # ("Allow limited access", "Don't allow") under an up arrow, a page the user navigated into
    assert finding(s).verdict == "false"
    _, _, source = first_step(s)
    assert source == "agent"


def test_a_licence_gate_whose_decline_quits_is_reported_as_blocking():
    """No ``dev`` dump holds a licence gate with a decline, so the real WPS Office "Privacy &
    License Reminder" (AGREE only) gets one more control beside AGREE: EXIT. Declining quits the
    app and agreeing is the user's call, so the gate is reported, neither tapped nor backed out of."""
    s = dev("164a462016b4")
    obs = s.observation()
    agree = next(i for i, e in enumerate(obs.elements) if e.text == "AGREE")
    x1, y1, x2, y2 = obs.elements[agree].bounds
    exit_ = obs.elements[agree].model_copy(update={"text": "EXIT", "resource_id": "cn.wps.moffice_eng:id/btnExit",
                                                    "bounds": (x1, y2 + 10, x2, y2 + 10 + (y2 - y1))})
    gate = obs.model_copy(update={"elements": [*obs.elements, exit_]})
    assert finding(s).details["dismiss_hint"] != "report"  # AGREE alone: no decline that quits
    d = InterferenceDiagnoser(InterferenceConfig())
    f = d.diagnose(DiagnosisContext(goal=s.label.goal, observation=gate, history=[]))
    assert f.problem and f.details["dismiss_hint"] == "report"
    agent = guard(WaitOnlyAgent(), TTIRConfig())
    agent.reset(s.label.goal)
    agent.step(gate)
    assert agent.report.usage[-1].source == "agent"  # neither EXIT (quits the app) nor AGREE (the user's call)


def test_a_sign_in_control_is_never_learnt_as_a_dismiss():
    s = dev("f8de141b6ecf")  # "Welcome to Sikshalaya … Sign In": the wall's one way on, labelled engage
    f = finding(s)
    sign_in = next(b for b in f.details["buttons"] if b["label"] == "Sign In")
    assert sign_in["role"] != "dismiss" and not sign_in.get("learned")
    obs, step, source = first_step(s)
    assert classify(s, obs, step, source) not in ("engage", "destructive")


def test_the_control_model_never_makes_an_engage_control_a_tap():
    """Over every dev pop-up the free tier finds, the guard's first tap is never on a control the
    label calls engage or destructive, learned roles included."""
    bad = []
    for s in BY_ID.values():
        if s.label.category != "interference" or s.label.malformed or not (s.label.engage or s.label.destructive):
            continue
        obs, step, source = first_step(s)
        if classify(s, obs, step, source) in ("engage", "destructive") and s.label.kind not in ("anr", "crash"):
            bad.append(s.id)
    assert bad == []


def test_a_control_of_no_known_role_is_tapped_only_when_the_model_learnt_it_dismisses():
    s = dev("e9de468fedf7")  # a carousel page whose only way on is Next (the label: Next dismisses)
    alone = finding(s, screen_model=False)
    assert all(not b.get("learned") for b in alone.details["buttons"])
    f = finding(s)
    learned = [b for b in f.details["buttons"] if b.get("learned")]
    model = load_screen_model()
    assert all(b["dismiss_p"] >= model.control_threshold and b["role"] == "dismiss" for b in learned)


def _eager_control_model(d):
    """``d``'s screen model with a control model that calls every control a dismiss (p ~ 1)."""
    import dataclasses

    from diagnosers.signals.screen_model import LinearModel

    m = d.screen_model
    eager = LinearModel(np.zeros_like(m.control.hashed), np.zeros_like(m.control.numeric), 10.0)
    d.screen_model = dataclasses.replace(m, control=eager, control_veto=0.0)
    return d


def test_no_control_is_learnt_as_a_dismiss_beside_a_known_one():
    """Firefox Focus's onboarding carousel: Skip closes it, Next (labelled engage) pages on. Even a
    control model that calls every control a dismiss does not make Next one: beside a known
    dismiss the guard would fall back to it when Skip seemed to do nothing."""
    s = dev("6ec7c87653bf")
    d = _eager_control_model(InterferenceDiagnoser(InterferenceConfig()))
    f = d.diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[]))
    roles = {b["label"]: b["role"] for b in f.details["buttons"]}
    assert roles["Skip"] == "dismiss" and roles["Next"] != "dismiss"
    assert not any(b.get("learned") for b in f.details["buttons"])
    assert "Next" in s.label.engage


def test_an_eager_control_model_still_never_learns_engage_or_sign_in_controls():
    s = dev("f8de141b6ecf")  # "Welcome to Sikshalaya … Sign In": the wall's one way on, labelled engage
    d = _eager_control_model(InterferenceDiagnoser(InterferenceConfig()))
    f = d.diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[]))
    assert all(b["role"] != "dismiss" for b in f.details.get("buttons", []) if b["label"] == "Sign In")


def test_the_screen_model_can_be_switched_off():
    s = dev("0b624be763c2")  # Twitter's identity check in a WebView: no overlay structure the rules read
    assert finding(s, screen_model=False).verdict == "false"
    f = finding(s)
    assert "screen_model" in f.details and f.evidence[-1].startswith("screen model: p=")


def _screens(categories):
    from types import SimpleNamespace

    return [SimpleNamespace(label=SimpleNamespace(category=c, kind=None)) for c in categories]


def test_the_thresholds_count_the_verdict_the_free_tier_gives():
    """A wanted dialog a goal-aware veto holds cannot be a false alarm, whatever its probability:
    the threshold is set on the screens the model decides, and rounded up, so that the screen it
    was set just above stays below it."""
    from experiments.real_screens.train import MAX_WANTED_FA, decided, thresholds

    n = 200
    p = np.concatenate([np.linspace(0.0, 0.4, n), np.linspace(0.1, 0.912345, n)])
    cats = ["ordinary"] * n + ["wanted"] * n
    free = np.zeros(2 * n, dtype=int)
    t_free, _ = thresholds(p, _screens(cats), free)
    vetoed = free.copy()
    vetoed[-3:] = -1  # the three likeliest wanted dialogs: the goal needs them
    t_vetoed, _ = thresholds(p, _screens(cats), vetoed)
    assert t_vetoed < t_free
    for t, fixed in ((t_free, free), (t_vetoed, vetoed)):
        alarms = int(np.sum(decided(p, fixed)[n:] >= t))
        assert alarms <= int(MAX_WANTED_FA * n)
        assert round(t, 4) == t  # four decimals, as the model file keeps it


def test_rule_fixed_follows_the_free_tiers_own_conditions():
    from experiments.real_screens.train import rule_fixed

    assert rule_fixed({"verdict": "true", "details": {"kind": "permission"}}) == 1
    assert rule_fixed({"verdict": "uncertain", "details": {"kind": "permission", "features": {"goal_needs_it": -0.7}}}) == -1
    assert rule_fixed({"verdict": "true", "details": {"kind": "dialog", "features": {"opened_by_last_action": -0.45}}}) == -1
    assert rule_fixed({"verdict": "true", "details": {"kind": "dialog", "features": {"lexicon": 0.45}}}) == 0
    assert rule_fixed({"verdict": "false", "details": {"kind": "anr"}}) == 0


def test_a_pop_up_the_model_alone_finds_is_not_left_by_a_control_it_learnt():
    """A camera app's own page (ordinary: RETRY re-takes the photo) that the rules cannot tell
    (a bare page: at most uncertain). A screen model sure it is a pop-up and a control model that
    calls RETRY a dismiss do not make one tap: where the model alone finds the pop-up, no learnt
    control is its way out."""
    import dataclasses

    from diagnosers.signals.screen_model import LinearModel

    s = dev("3cdc13e63718")
    ctx = DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[])
    assert finding(s, screen_model=False).verdict != "true"
    d = _eager_control_model(InterferenceDiagnoser(InterferenceConfig()))
    m = d.screen_model
    d.screen_model = dataclasses.replace(m, screen=LinearModel(np.zeros_like(m.screen.hashed),
                                                               np.zeros_like(m.screen.numeric), 10.0))
    f = d.diagnose(ctx)
    assert f.verdict == "true"
    assert all(b["role"] != "dismiss" for b in f.details["buttons"])
    assert f.details["dismiss_hint"] != "button"
