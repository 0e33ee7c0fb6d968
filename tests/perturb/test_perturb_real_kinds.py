"""The kinds the simulator learnt from the real-screen corpus (issue 12, item 5): the
framework ANR dialog laid out like real dumps of it, System UI not responding, the
app's own what's-new dialogs and first-run gates, pop-ups in other languages behind a
``language`` parameter that leaves English draws alone, and the focus-only dump style.

Real dumps used here come from the corpus's dev split only."""

from __future__ import annotations

import random
import re

import pytest

import perturb
from benchmark import SimDevice, make_task, run_episode
from benchmark.agents import OracleAgent
from experiments.real_screens.corpus import load_corpus
from experiments.spec import DeviceSpec, ExperimentSpec
from experiments.store import record_problem
from tests.support.overlay_helpers import act, events, find, last, make_env, open_contacts, raw, tap
from perturb.dump_style import FocusedWindowDump, focused_window
from perturb.overlay.content import choose_variant, load_pool, pool_names, variants_in
from ttir.core.types import Action, Observation

DEV = {s.id: s for s in load_corpus("dev")}
TRANSLATED = ("popup_permission", "rate_dialog", "update_app_sheet", "bottom_sheet_consent", "whats_new_dialog",
              "first_run_gate")
CJK = re.compile(r"[\u4e00-\u9fff]")
APP = "com.google.android.contacts"


def _chain(obs: Observation, rid_suffix: str) -> list[str]:
    """Class and short id of every ancestor of the node whose id ends with ``rid_suffix``, root first."""
    i = next(k for k, e in enumerate(obs.elements) if e.resource_id.endswith(rid_suffix))
    out = []
    while i is not None:
        e = obs.elements[i]
        out.append(f"{e.class_name.rsplit('.', 1)[-1]}#{e.resource_id.rsplit('/', 1)[-1] if e.resource_id else ''}")
        i = e.parent
    return out[::-1]


def _focused(env: perturb.PerturbedDevice) -> FocusedWindowDump:
    return FocusedWindowDump(env)


# ------------------------------------------------------------------ the ANR dialog, as real dumps show it


@pytest.mark.parametrize("real_id,perturbation,steps", [
    ("d9d8d1560ddf", "app_hang_restart_required", 2),  # "Jobnest isn't responding" (the task's own app)
    ("0381990abcc5", "system_ui_not_responding", 2),   # "System UI isn't responding"
])
def test_the_anr_dialog_has_the_real_framework_layout(real_id, perturbation, steps):
    real = DEV[real_id].observation()
    profile = {"profile_pool": ["system_ui"]} if perturbation == "system_ui_not_responding" else {}
    env, _ = make_env(perturbation, **profile)
    open_contacts(env)
    while env.ctx.step < steps:
        act(env, "wait")
    sim = _focused(env).observe()  # real ANR dumps hold only the dialog's window
    for rid in ("android:id/aerr_wait", "android:id/aerr_close", "android:id/alertTitle"):
        assert _chain(sim, rid) == _chain(real, rid), rid
    assert {e.package for e in sim.elements} == {"android"}
    title = next(e.text for e in sim.elements if e.resource_id == "android:id/alertTitle")
    assert title.endswith("isn't responding")


def test_system_ui_not_responding_recovers_only_by_waiting():
    env, _ = make_env("system_ui_not_responding", profile_pool=["system_ui"], waits_to_recover=2)
    open_contacts(env)
    obs = act(env, "wait")
    assert find(obs, "System UI isn't responding")
    before = raw(env).xml
    obs = act(env, "click", x=10, y=obs.screen_size[1] // 2)  # outside: absorbed
    assert last(env, "blocked_action") and raw(env).xml == before
    obs = act(env, "navigate_back")
    assert find(obs, "System UI isn't responding"), "back does not close it"
    obs = tap(env, "Wait")
    assert not find(obs, "System UI isn't responding") and "hang_recovered" not in events(env)
    obs = act(env, "wait")
    assert find(obs, "System UI isn't responding"), "it comes back after one wait of two"
    obs = tap(env, "Wait")
    assert not find(obs, "System UI isn't responding") and "hang_recovered" in events(env)
    assert raw(env).package == APP, "waiting kept the task's app where it was"
    act(env, "wait")
    assert not env.overlays.active


@pytest.mark.parametrize("variant,stopped", [("system_ui", False), ("process_system", True)])
def test_close_app_on_system_ui_restarts_the_phones_ui(variant, stopped):
    env, _ = make_env("system_ui_not_responding", profile_pool=[variant])
    open_contacts(env)
    act(env, "wait")
    tap(env, "Close app")
    assert raw(env).package.endswith("launcher"), "the phone drops to its home screen"
    assert ("app_closed" in events(env)) == stopped  # the system process takes every app with it
    assert "hang_restarted" in events(env) and not env.overlays.active


# ------------------------------------------------------------------ the app's own dialogs and gates


def test_whats_new_is_the_apps_own_dialog_and_try_it_is_a_tour():
    env, _ = make_env("whats_new_dialog", profile_pool=["introducing_feature"])
    obs = open_contacts(env)
    close = next(e for e in obs.elements if e.content_desc == "Close")
    assert close.package == APP and close.resource_id == f"{APP}:id/closeButton" and close.clickable
    assert find(obs, "Introducing") and find(obs, "Try it now")
    obs = tap(env, "Try it now")
    assert find(obs, "Quick actions") and find(obs, "Skip tour") and "overlay_engaged" in events(env)
    for _ in range(2):
        obs = tap(env, "Next")
    obs = tap(env, "Done")
    assert not env.overlays.active and raw(env).package == APP


def test_the_first_run_carousel_has_page_dots_skip_and_next():
    env, _ = make_env("first_run_gate", profile_pool=["onboarding_carousel"])
    obs = open_contacts(env)
    assert obs.foreground == f"{APP}/{APP}.onboarding.WalkthroughActivity"  # the gate is the app's own activity
    dots = next(e for e in obs.elements if e.resource_id.endswith(":id/page_indicator"))
    assert dots.content_desc == "Page 1 of 3"
    skip, nxt = find(obs, "Skip"), find(obs, "Next")
    assert skip.bounds[0] < dots.bounds[0] < nxt.bounds[0], "Skip on the left, the dots, Next on the right"
    obs = tap(env, "Next")
    assert next(e for e in obs.elements if e.resource_id.endswith(":id/page_indicator")).content_desc == "Page 2 of 3"
    obs = tap(env, "Skip")
    assert not env.overlays.active and obs.package == APP


def test_the_intro_slider_writes_its_dots_as_bullets_and_the_guard_takes_skip():
    """The intro-slider layout of real dumps (dev: Open Food Facts' layoutDots of '•'
    TextViews): the interference rules know it as a carousel, the recovery takes SKIP."""
    from diagnosers import DiagnosisContext, InterferenceDiagnoser
    from recoveries import DismissInterference
    from ttir.core.recovery import RecoveryContext

    real = DEV["3db93f8975a4"].observation()
    assert sum(e.text == "•" for e in real.elements) == 4  # what the simulator copies
    env, _ = make_env("first_run_gate", profile_pool=["intro_slider"])
    obs = open_contacts(env)
    bullets = [e for e in obs.elements if e.text == "•"]
    assert len(bullets) == 3 and len({e.bounds[1] for e in bullets}) == 1  # one row, one per page
    goal = "Add a contact named Ana"
    f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=goal, observation=obs, history=[]))
    assert f.problem and "carousel" in f.details["features"]
    step = DismissInterference().next_step(RecoveryContext(goal=goal, observation=obs, history=[], finding=f))
    assert step is not None and step.action.point() == find(obs, "SKIP").center
    x, y = step.action.point()
    obs = act(env, "click", x=x, y=y)
    assert not env.overlays.active and obs.package == APP


def test_a_welcome_page_with_two_ways_on_is_reported_and_neither_is_tapped():
    """K-9 Mail's first page as real dumps show it (dev 18f40a86bc92): a toolbar titled
    "Welcome to …" and Import settings | Next sharing the bottom bar. The rules call it a
    gate, as they call the real one, and the recovery taps neither way on."""
    from diagnosers import DiagnosisContext, InterferenceDiagnoser
    from recoveries import DismissInterference
    from ttir.core.recovery import RecoveryContext

    real = DEV["18f40a86bc92"].observation()
    assert find(real, "Welcome to K-9 Mail") and find(real, "Import settings") and find(real, "Next")
    env, _ = make_env("first_run_gate", profile_pool=["welcome_toolbar"])
    obs = open_contacts(env)
    imp, nxt = find(obs, "Import settings"), find(obs, "Next")
    assert find(obs, "Welcome to Contacts") and imp.bounds[1] == nxt.bounds[1]  # one bar
    assert abs((imp.bounds[2] - imp.bounds[0]) - (nxt.bounds[2] - nxt.bounds[0])) <= 2  # equal shares
    goal = "Add a contact named Ana"
    for screen in (real, obs):
        f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=goal, observation=screen, history=[]))
        assert f.problem and f.details["kind"] == "takeover"
        assert DismissInterference().next_step(RecoveryContext(goal=goal, observation=screen, history=[], finding=f)) is None
    obs = tap(env, "Next")  # the agent's own choice gets past it
    assert not env.overlays.active and obs.package == APP


def test_signing_in_at_the_gate_is_a_detour_with_its_own_fields():
    env, _ = make_env("first_run_gate", profile_pool=["welcome_sign_in"])
    obs = open_contacts(env)
    assert find(obs, "Use without an account") and find(obs, "Welcome to Contacts")
    obs = tap(env, "Sign in")
    field = next(e for e in obs.elements if e.editable)
    act(env, "click", x=field.center[0], y=field.center[1])
    obs = act(env, "input_text", text="ann@example.com")
    assert "overlay_text_entered" in events(env) and not any("ann@" in e.text for e in raw(env).elements)


# ------------------------------------------------------------------ other languages


def test_default_language_draws_exactly_the_english_variants():
    """Translated and opt-in variants never change what a default seed draws: the default
    draw is the same as a draw from the pool's English, not opt-in variants alone, for every pool."""
    for name in pool_names():
        pool = load_pool(name)
        english = [v for v in pool.variants if v.language == "en" and not v.opt_in]
        for seed in range(40):
            got = choose_variant(pool, random.Random(seed), None, name)
            want = english[random.Random(seed).randrange(len(english))]
            assert got.id == want.id, (name, seed)


def test_an_opt_in_variant_is_drawn_only_when_a_spec_names_it():
    pool = load_pool("first_run_gate")
    assert any(v.id == "intro_slider" and v.opt_in for v in pool.variants)
    assert all(choose_variant(pool, random.Random(s), None, "first_run_gate").id != "intro_slider" for s in range(200))
    assert choose_variant(pool, random.Random(0), ["intro_slider"], "first_run_gate").id == "intro_slider"


@pytest.mark.parametrize("name", TRANSLATED)
def test_each_pool_has_spanish_chinese_and_german_variants(name):
    pool = load_pool(name)
    for lang in ("es", "zh", "de"):
        variants = variants_in(pool, lang, name)
        assert variants and all(v.language == lang for v in variants)
        for v in variants:  # every one can be declined and engaged with, as the English ones
            roles = {b.role for p in v.pages for b in [*p.buttons, *([p.close_button] if p.close_button else [])]}
            assert {"dismiss", "engage"} <= roles, (name, v.id, roles)


@pytest.mark.parametrize("name,language,wording", [
    ("popup_permission", "es", "¿Permitir que Contacts acceda"),
    ("popup_permission", "de", "Contacts den Zugriff auf"),
    ("popup_permission", "zh", "“Contacts”"),
    ("rate_dialog", "zh", None),
    ("whats_new_dialog", "de", None),
])
def test_a_spec_can_ask_for_pop_ups_in_another_language(name, language, wording):
    env, _ = make_env(name, language=language)
    obs = open_contacts(env)
    while not env.overlays.active:
        obs = act(env, "wait")
    title = last(env, "overlay_shown")["details"]["title"]
    assert title in obs.xml
    if wording:
        assert wording in title
    if language == "zh":
        assert CJK.search(title)
    assert load_pool(name).variants[0].language == "en"


def test_language_errors_name_the_field_and_the_choices():
    with pytest.raises(ValueError, match=r"language='fr'.*expected one of en, es, zh, de"):
        perturb.make("rate_dialog", language="fr")
    with pytest.raises(ValueError, match="language"):
        perturb.make("rate_dialog", language="Chinese!")
    with pytest.raises(ValueError, match=r"enjoying_stars_zh is in language 'zh'"):
        perturb.make("rate_dialog", profile_pool=["enjoying_stars_zh"])
    perturb.make("rate_dialog", profile_pool=["enjoying_stars_zh"], language="zh")
    perturb.make("rate_dialog", language="any")


# ------------------------------------------------------------------ the focus-only dump style


def _focused_env(name: str = "clean", **overrides):
    perts = [] if name == "clean" else [perturb.make(name, **overrides)]
    env = FocusedWindowDump(perturb.PerturbedDevice(SimDevice(), perts, seed=0))
    return env


def _run_plan(env, task_name: str, steps: int) -> Observation:
    task = make_task(task_name)
    obs = env.reset(task)
    agent = OracleAgent.for_task(task)
    agent.reset(task.goal)
    for _ in range(steps):
        env.execute(agent.step(obs).action)
        obs = env.observe()
    return obs


def _windows(obs: Observation) -> list[str]:
    return [e.package for e in obs.elements if e.parent is None]


def test_focus_only_dump_of_the_apps_own_dialog_is_that_dialog_alone():
    env = _focused_env()
    obs = _run_plan(env, "ContactsDeleteContact", 3)  # the delete confirmation is up
    assert _windows(obs) == [APP]
    assert find(obs, "Delete contact?") and find(obs, "Cancel")
    assert not find(obs, "Contacts"), "the list underneath is not in the dump"
    everything = env.env.observe()
    assert find(everything, "Delete contact?") and len(_windows(everything)) > 1, "what PerturbedDevice shows is untouched"
    assert obs.screenshot is everything.screenshot, "the screenshot still shows everything"


@pytest.mark.parametrize("name,package", [
    ("popup_permission", "com.android.permissioncontroller"),
    ("whats_new_dialog", APP),
    ("app_hang_restart_required", "android"),
])
def test_focus_only_dump_of_a_pop_up_holds_only_its_window(name, package):
    env = _focused_env(name)
    obs = _run_plan(env, "ContactsAddContact", 1)
    while not env.overlays.active or not any(getattr(x, "dialog_box", lambda: None)() for x in env.overlays.active):
        env.execute(Action(action_type="wait"))
        obs = env.observe()
    assert _windows(obs) == [package]
    assert not any(e.package == "com.android.systemui" for e in obs.elements), "no status or navigation bar"
    title = last(env.env, "overlay_shown")["details"]["title"]
    assert title in obs.xml


def test_focus_only_dump_leaves_out_bars_keyboard_and_heads_up_banners():
    env = _focused_env("notification_message")
    obs = _run_plan(env, "ContactsAddContact", 3)  # typing into the first name: the keyboard is up
    full = env.env.observe()
    assert any("inputmethod" in e.package for e in full.elements)
    assert any(e.resource_id.endswith("expandableNotificationRow") for e in full.elements)
    assert _windows(obs) == [APP]
    assert env.inner.observe().elements, "the device's own dump (ground truth) keeps every window"


def test_focused_window_without_dialog_boxes_keeps_the_topmost_focusable_window():
    env = _focused_env()
    _run_plan(env, "ContactsDeleteContact", 3)
    full = env.env.observe()
    assert _windows(focused_window(full)) == [APP]
    assert len(focused_window(full).elements) > len(env.observe().elements), "without the box: the whole app window"


@pytest.mark.parametrize("name", ["whats_new_dialog", "first_run_gate", "popup_permission", "app_hang_restart_required",
                                  "system_ui_not_responding", "rate_dialog"])
def test_the_oracle_solves_tasks_on_focus_only_dumps(name):
    for task_name in ("ContactsAddContact", "SimpleSmsSend"):
        task = make_task(task_name)
        env = FocusedWindowDump(perturb.PerturbedDevice(SimDevice(size=(540, 1200), dpi=210), [perturb.make(name)], seed=0))
        with env:
            result = run_episode(env, task, OracleAgent.for_task(task))
        assert result.success, (name, task_name, result.termination)


def test_specs_sweep_dump_styles_and_keep_default_ids():
    base = dict(tasks=["ContactsAddContact"], perturbations=["clean", "rate_dialog", {"rate_dialog": {"language": "zh"}}],
                agents=[{"name": "planner", "kind": "planner"}], guard=["off"])
    plain = ExperimentSpec.model_validate(base).episodes()
    both = ExperimentSpec.model_validate({**base, "devices": {"kind": "sim", "dump": ["all_windows", "focused_window"]}}).episodes()
    assert len(plain) == 3 and len(both) == 6
    assert [e.id for e in plain] == [e.id for e in both if e.dump == "all_windows"]
    assert plain[0].id == "ContactsAddContact-i0__clean__planner__off__s0r0"
    focused = [e for e in both if e.dump == "focused_window"]
    assert all("+focused_window" in e.id for e in focused) and len({e.id for e in both}) == 6
    assert all(record_problem({"id": e.id}) is None for e in both), "the run store reads every id back"
    assert focused[0].episode_seed == plain[0].episode_seed, "the same perturbed MDP under either dump style"
    with pytest.raises(ValueError, match="devices.dump"):
        DeviceSpec(kind="adb", dump="focused_window")
    with pytest.raises(ValueError):
        DeviceSpec(kind="sim", dump="some_windows")


def test_ttir_perturbations_lists_them_beyond_the_paper(capsys):
    import argparse

    from ttir.cli.perturbations import run

    assert run(argparse.Namespace(component=None, params=True)) == 0
    out = capsys.readouterr().out
    beyond = out[out.index("Beyond the paper"):]
    for name in ("whats_new_dialog", "first_run_gate", "system_ui_not_responding"):
        assert name in beyond and name not in perturb.ANDROIDREALITY
    assert "AndroidReality perturbations (24)" in out
