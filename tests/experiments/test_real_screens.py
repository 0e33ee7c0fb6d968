"""The real-screen corpus: kept byte for byte with provenance, split by repository,
never holding a reserved file; and the guard's rules on real dumps of the dev split."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from diagnosers import ActionEffectDiagnoser, DiagnosisContext, InterferenceDiagnoser
from experiments.real_screens.corpus import CORPUS_DIR, load_corpus, load_splits
from experiments.real_screens.evaluate import RULES_ALONE_TIER, WaitOnlyAgent, classify, evaluate, summarize, tapped_names
from experiments.real_screens.reserved import LOCAL_LIST, extra_list, git_blob_id, load_reserved, parse_list
from ttir import guard
from ttir.core.types import Action, AgentStep, Observation, StepRecord

SCREENS = load_corpus("all")
BY_ID = {s.id: s for s in SCREENS}


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (CORPUS_DIR / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def dev(screen_id: str):
    s = BY_ID[screen_id]
    assert s.split == "dev", f"{screen_id} must come from the dev split (tests tune nothing on test)"
    return s


# ------------------------------------------------------------------ the corpus


def test_every_file_is_kept_byte_for_byte_with_its_provenance():
    for m in rows("manifest.jsonl"):
        data = (CORPUS_DIR / m["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == m["sha256"], m["file"]
        assert git_blob_id(data) == m["blob"], m["file"]
        assert m["repo"].count("/") == 1 and len(m["commit"]) == 40 and m["path"], m
        assert m["format"] in ("uiautomator", "appium")


def test_every_file_parses_or_is_labelled_malformed_with_its_reason():
    for s in SCREENS:
        if s.label.malformed:
            with pytest.raises(ValueError):
                s.observation()
        else:
            obs = s.observation()
            assert obs.elements, f"{s.id} parsed to an empty screen"


def test_every_file_has_exactly_one_label():
    manifest = [m["id"] for m in rows("manifest.jsonl")]
    labels = [r["id"] for r in rows("labels.jsonl")]
    assert len(set(manifest)) == len(manifest) and sorted(manifest) == sorted(labels)


def test_no_reserved_file_is_in_the_corpus():
    reserved = load_reserved()
    assert reserved.blobs and reserved.sha256s
    for m in rows("manifest.jsonl"):
        assert not reserved.is_reserved(m["blob"], m["sha256"]), m["file"]
    extra = extra_list()
    if extra is not None and extra.exists():  # the in-repository copy of the list is complete
        blobs, shas = parse_list(extra.read_text(encoding="utf-8"))
        local = parse_list(LOCAL_LIST.read_text(encoding="utf-8"))
        assert blobs <= local[0] and shas <= local[1]


def test_the_split_is_by_repository():
    splits = load_splits()
    repos = {m["repo"] for m in rows("manifest.jsonl")}
    assert repos == set(splits)
    assert set(splits.values()) == {"dev", "test"}
    for s in SCREENS:
        assert s.split == splits[s.repo]
    steps = {r["meta"]["split"] for r in rows("steps.jsonl")}
    assert steps <= {"dev", "test"}


def test_every_repository_belongs_to_one_collection_round():
    from experiments.real_screens.corpus import load_rounds

    rounds = load_rounds()
    assert set(rounds) == set(load_splits())
    assert all(s.round == rounds[s.repo] for s in SCREENS)


def test_a_new_repository_needs_its_collection_round(tmp_path):
    from experiments.real_screens.ingest import ingest

    corpus, staging = tmp_path / "corpus", tmp_path / "staging"
    corpus.mkdir(), staging.mkdir()
    (staging / "manifest.jsonl").write_text(json.dumps({"file": "files/x.xml", "repo": "someone/new-repo"}) + "\n")
    with pytest.raises(ValueError, match=r"round=None.*someone/new-repo.*--round N"):
        ingest([staging], corpus=corpus)
    assert not (corpus / "manifest.jsonl").exists()  # nothing was written


def test_the_figures_by_round_add_up_to_the_split():
    results = evaluate([s for s in load_corpus("dev") if s.round in (2, 3)][::4])
    report = summarize(results, ["rules"])
    rounds = report["by_round"].values()
    assert sum(h["screens"] for h in rounds) == report["screens"]
    assert sum(h["detected"] for h in rounds) == report["tiers"]["rules"]["interference"]["detected"]
    assert sum(h["engage_or_destructive_taps"] for h in rounds) == report["guard"]["engage_or_destructive_taps"]
    recall = report["tiers"]["rules"]["interference"]["recall"]
    lo, hi = report["intervals"]["recall"]  # repositories resampled, seeded: the same report every run
    assert lo <= recall <= hi and report["intervals"] == summarize(results, ["rules"])["intervals"]


def test_the_report_draws_recall_per_round_and_the_guards_actions(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    from experiments.reports.plots import plot_real_screens

    results = evaluate([s for s in load_corpus("dev") if s.round in (2, 3)][::4], session_steps=1)
    report = summarize(results, ["rules"])
    assert all(h["interference"] == 0 or h["recall_interval"] for h in report["by_round"].values())
    png = plot_real_screens(report, tmp_path / "real.png")
    with Image.open(png) as im:
        assert im.format == "PNG" and im.width > 600


def test_back_where_the_label_says_back_harms_is_counted():
    from experiments.real_screens.evaluate import ScreenResult

    def result(i, action, back_dismisses, session=()):
        return ScreenResult(id=i, repo=f"r/{i}", split="dev", category="interference", kind="first_run",
                            round=1, back_dismisses=back_dismisses, verdicts={"rules": "true"}, action_class=action,
                            session=list(session))

    rs = [result("a", "back", False), result("b", "back", True), result("c", "back", None),
          result("d", "dismiss", False, session=["back", "none"])]
    report = summarize(rs, ["rules"])
    assert report["guard"]["back_where_back_harms"] == 1  # a: the first step
    assert report["session"]["back_where_back_harms"] == 2  # a, and d's fallback


def test_the_corpus_is_as_broad_as_promised():
    ok = [s for s in SCREENS if not s.label.malformed]
    cats = Counter(s.label.category for s in ok)
    assert len(SCREENS) >= 300 and len({s.repo for s in SCREENS}) >= 40
    assert cats["ordinary"] + cats["wanted"] >= 150 and cats["wanted"] >= 60
    assert len({s.label.language for s in ok}) >= 4
    assert sum(s.manifest["format"] == "appium" for s in SCREENS) >= 20


# ------------------------------------------------------------------ the rules on real dumps (dev split)


def first_guarded_step(screen, history=(), screen_model=True):
    from ttir import TTIRConfig

    agent = guard(WaitOnlyAgent(), TTIRConfig().override({"interference.screen_model": screen_model}))
    agent.reset(screen.label.goal)
    obs = screen.observation()
    for rec in history:
        agent.step(rec.observation)
    step = agent.step(obs)
    source = agent.report.usage[-1].source
    return obs, step, source


def test_system_ui_anr_is_answered_with_wait_and_never_closed():
    s = dev("0381990abcc5")  # "System UI isn't responding"
    obs, step, source = first_guarded_step(s)
    assert source == "recovery" and classify(s, obs, step, source) == "dismiss"
    assert "wait" in tapped_names(obs, step.action)
    # the same dialog after two waits: still never "Close app" on System UI
    f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=s.label.goal, observation=obs, history=[]))
    from recoveries import DismissInterference
    from ttir.core.recovery import RecoveryContext

    wait = AgentStep(action=step.action, summary=step.summary)
    history = [StepRecord(observation=obs, step=wait, source="recovery")] * 3
    nxt = DismissInterference().next_step(RecoveryContext(goal=s.label.goal, observation=obs, history=history,
                                                           finding=f))
    assert nxt is None or "close app" not in tapped_names(obs, nxt.action)


def test_another_apps_anr_is_waited_on_first():
    s = dev("5f7a197e95c9")  # "Pixel Launcher isn't responding"
    obs, step, source = first_guarded_step(s)
    assert "wait" in tapped_names(obs, step.action)


def test_a_crash_dialog_is_closed_the_app_is_already_gone():
    s = dev("c4c748fd412b")  # "KindleVibe Reader keeps stopping"
    f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[]))
    assert f.problem and f.details["kind"] == "crash"
    obs, step, source = first_guarded_step(s)
    assert classify(s, obs, step, source) == "dismiss"


def test_a_permission_prompt_is_declined_never_allowed():
    s = dev("fdb74a5cfc9d")  # storage permission, goal unrelated
    obs, step, source = first_guarded_step(s)
    assert classify(s, obs, step, source) == "dismiss"
    assert not tapped_names(obs, step.action) & {"allow", "permission_allow_button"}


def test_a_permission_the_goal_needs_is_left_alone():
    s = dev("7c0d00c35a59")  # location permission; the goal is to find restaurants near me
    f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[]))
    assert not f.problem and "goal_needs_it" in f.details["features"]
    obs, step, source = first_guarded_step(s)
    assert source == "agent"  # declining it would break the task


@pytest.mark.parametrize("screen_id", ["4a00f8f19425", "0d8c9d6b5b3e", "b2ce12c82889"])
def test_a_lock_screen_is_reported_and_never_dismissed_with_back(screen_id):
    s = dev(screen_id)
    f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[]))
    assert f.problem and f.details["kind"] == "lock_screen"
    _, step, source = first_guarded_step(s)
    assert source == "agent"


def test_an_appium_page_source_reads_like_a_dump():
    s = dev("5e3c95fda58b")
    assert s.manifest["format"] == "appium"
    obs = s.observation()
    assert any(e.class_name == "android.widget.Button" for e in obs.elements)
    f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=s.label.goal, observation=obs, history=[]))
    assert f.problem and f.details["kind"] == "permission"


def test_text_typed_into_the_wrong_field_of_a_real_form_without_ids():
    before, after = dev("d875b4ef123b").observation(), dev("78af7a289579").observation()
    assert not any(e.resource_id for e in before.elements if e.editable)
    goal = "Log in to the remote MT5 trading account 7400048"

    def effect(action: Action, summary: str) -> str:
        rec = StepRecord(observation=before, step=AgentStep(action=action, summary=summary))
        return ActionEffectDiagnoser().diagnose(DiagnosisContext(goal=goal, observation=after, history=[rec])).verdict

    typed = dict(action_type="input_text", text="7400048")
    assert effect(Action(**typed, x=632, y=993), 'Type "7400048" into "账户名称"') == "yes"
    assert effect(Action(**typed, x=632, y=1154), 'Type "7400048" into "账户密码"') == "no"
    assert effect(Action(**typed, x=632, y=1154), 'Type "7400048"') == "no"  # by position alone


def test_the_guard_never_engages_or_destroys_on_the_dev_split():
    results = evaluate(load_corpus("dev"))
    report = summarize(results, ["rules"])
    assert report["guard"]["engage_or_destructive_taps"] == 0
    assert report["guard"]["actions_on_non_interference_rate"] <= 0.01
    assert not report["errors"]
    # nor when its actions have no effect and it falls back, step after step
    assert report["session"]["steps"] == 3 and report["session"]["engage_or_destructive_taps"] == 0


def test_the_task_apps_own_hang_is_waited_on_then_closed_and_that_is_told_apart():
    s = dev("d9d8d1560ddf")  # "Jobnest isn't responding", the task's own app
    (r,) = evaluate([s], session_steps=4)
    assert r.action_class == "dismiss" and r.session[0] == "dismiss"  # Wait, Wait
    assert r.session[1] == "close_hung_app"  # then Close app, which re-orientation follows by opening it again
    assert summarize([r], ["rules"])["session"]["closed_hung_task_app"] == 1


# ------------------------------------------------------------------ an app's own pop-ups (second round, dev)


def diagnose(s, screen_model=True):
    """The free tier's finding on a screen (rules and screen model; ``screen_model=False``: the rules alone)."""
    from ttir.core.config import InterferenceConfig

    d = InterferenceDiagnoser(InterferenceConfig(screen_model=screen_model))
    return d.diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[]))


def test_a_promo_sheet_over_a_feed_is_the_interruption_not_the_feed():
    s = dev("4e034cd93101")  # Meta Verified upsell sheet over an Instagram reel
    f = diagnose(s)
    assert f.problem and f.details["kind"] == "dialog"
    obs, step, source = first_guarded_step(s)
    assert classify(s, obs, step, source) not in ("engage", "destructive")  # never "Get started"


@pytest.mark.parametrize("screen_id", ["4c4b0e2dd815", "7766576d5926", "44f58fc6ef23", "738c5c79b969", "718d4c1ee3d2"])
def test_the_apps_own_content_pages_are_not_pop_ups(screen_id):
    # Safety Center drawn by the permission controller (a toolbar with an up arrow);
    # a sponsored reel in a feed with the app's tab bar; an in-list promo banner of a chat
    # list (it scrolls away); a backup settings page with a titled toolbar; a guest's profile
    # tab ("Sign in to manage your account") above a Flutter tab bar that has no ids
    s = dev(screen_id)
    assert not diagnose(s).problem
    _, _, source = first_guarded_step(s)
    assert source == "agent"


def test_a_dialog_with_obfuscated_ids_is_found_by_its_geometry():
    s = dev("2f0295826b8b")  # TikTok's contacts prompt: a centred box over a full-screen backdrop
    f = diagnose(s)
    assert f.problem and f.details["kind"] == "dialog"
    obs, step, source = first_guarded_step(s)
    assert classify(s, obs, step, source) == "dismiss"


@pytest.mark.parametrize("screen_id", ["f912fbe7c77a", "b9564c3b1707"])
def test_an_account_checkpoint_is_reported_not_answered(screen_id):
    s = dev(screen_id)  # "Confirm you're human" (a code to enter), "Upload your ID" (Submit)
    assert diagnose(s).problem
    obs, step, source = first_guarded_step(s)
    assert classify(s, obs, step, source) not in ("engage", "destructive")


def test_a_lone_ok_that_means_agree_is_not_tapped():
    s = dev("ea558712c420")  # "You need to agree to the terms ... Please agree to all terms." [OK]
    f = diagnose(s)
    assert f.problem and [b["role"] for b in f.details["buttons"]] == ["engage"]
    obs, step, source = first_guarded_step(s)
    assert classify(s, obs, step, source) != "engage"


# ------------------------------------------------------------------ the cascade on real dumps (dev split)
# A model that calls everything interference (what SmolLM2-135M does) over real HTTP: the
# cascade asks it where the rules are unsure, and it must not overrule what the rules know.


def cascade_step(screen, vlm_server, mode="cascade"):
    from ttir import TTIRConfig
    from ttir.core.config import DIAGNOSERS
    from ttir.testing import Reply
    from ttir.model.client import VLMClient

    says_interference = {"repeat_failure_detected": False, "previous_intended_effect_satisfied": "yes",
                         "interference_present": True, "task_alignment": "on_track", "reason": "a pop-up"}
    vlm_server.responder = lambda request: Reply.json(says_interference)
    cfg = TTIRConfig().override({f"{d}.mode": mode for d in DIAGNOSERS})
    cfg = TTIRConfig.from_dict({**cfg.model_dump(), "vlm": vlm_server.config(max_retries=0).model_dump()})
    agent = guard(WaitOnlyAgent(), cfg, vlm=VLMClient(cfg.vlm))
    agent.reset(screen.label.goal)
    obs = screen.observation()
    step = agent.step(obs)
    return obs, step, agent.report.usage[-1].source, agent


@pytest.mark.parametrize("screen_id", ["7c0d00c35a59", "19c2edd2dfe3"])
def test_a_model_does_not_overrule_a_permission_the_goal_needs(screen_id, vlm_server):
    s = dev(screen_id)  # location permission; the goal is to find something near my current location
    obs, step, source, _ = cascade_step(s, vlm_server)
    assert vlm_server.completions(), "the rules are unsure here: the cascade asks the model"
    assert source == "agent" and classify(s, obs, step, source) == "none"  # Deny would break the task
    from diagnosers.vlm_judge import VLMJudge
    from ttir.model.client import VLMClient

    d = InterferenceDiagnoser(mode="cascade", judge=VLMJudge(VLMClient(vlm_server.config(max_retries=0))))
    f = d.diagnose(DiagnosisContext(goal=s.label.goal, observation=obs, history=[]))
    assert f.verdict == "uncertain" and f.details["held"] == ["goal_needs_it"] and f.cost.model_calls == 1


def test_the_model_is_not_asked_about_a_screen_with_nothing_to_read(vlm_server):
    s = dev("f42daa3cec2a")  # a bank app whose dump is a bare window: no labelled node, no screenshot
    obs, step, source, _ = cascade_step(s, vlm_server)
    assert not vlm_server.completions()
    assert source == "agent" and step.action.action_type == "wait"


# In the model-only tier (the paper's diagnoser) the model decides; the rules locate what it
# sees, so that the recovery treats a lock screen, an ANR and a page of the app as what they are.


def test_a_model_only_guard_reports_a_lock_screen_the_model_calls_interference(vlm_server):
    s = dev("4a00f8f19425")
    d = InterferenceDiagnoser(mode="vlm", judge=_judge(vlm_server, interference=True))
    f = d.diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[]))
    assert f.tier == "vlm" and f.problem and f.details["kind"] == "lock_screen" and f.details["source"] == "model"
    obs, step, source, _ = cascade_step(s, vlm_server, mode="vlm")
    assert source == "agent"  # reported: a PIN cannot be dismissed, and Back does not close a keyguard


def test_a_model_only_guard_waits_on_system_uis_anr_rather_than_closing_it(vlm_server):
    s = dev("0381990abcc5")  # "System UI isn't responding"
    obs, step, source, _ = cascade_step(s, vlm_server, mode="vlm")
    assert source == "recovery" and "wait" in tapped_names(obs, step.action)


def test_a_model_only_guard_never_presses_back_on_a_page_where_the_rules_locate_no_overlay(vlm_server):
    s = dev("0b624be763c2")  # Twitter's "Verify your identity" page in a WebView: no overlay structure
    f = diagnose(s, screen_model=False)
    assert not f.problem and f.evidence == ["no overlay candidate"]
    obs, step, source, _ = cascade_step(s, vlm_server, mode="vlm")
    assert step.action.action_type != "navigate_back"  # Back would leave the app the task is in


def test_a_backdrop_over_the_whole_page_is_no_dismiss_control(vlm_server):
    s = dev("915ec2d6513e")  # Firefox Focus: a search-suggestions opt-in card over a page-wide "Dismiss" backdrop
    obs, step, source, _ = cascade_step(s, vlm_server, mode="vlm")
    assert source == "recovery" and "no" in tapped_names(obs, step.action)  # the card's own decline
    assert classify(s, obs, step, source) == "dismiss"


@pytest.mark.parametrize("screen_id", ["62a3fa6c89f8", "b4fece707800"])
def test_a_bare_page_the_rules_cannot_tell_is_uncertain_and_the_cascade_asks_the_model(screen_id, vlm_server):
    # "Start SAFAR →" alone on a page; Zeon's Flutter welcome ("СТАРТУЕМ", "Я уже имею аккаунт"): a gate or content?
    s = dev(screen_id)
    f = diagnose(s, screen_model=False)
    assert f.verdict == "uncertain" and "bare_page" in f.details["features"]
    _, _, source = first_guarded_step(s, screen_model=False)
    assert source == "agent"  # the rule tier does not act on uncertain
    from ttir import TTIRConfig
    from ttir.core.config import DIAGNOSERS
    from ttir.model.client import VLMClient

    judge = _judge(vlm_server, interference=True)
    cfg = TTIRConfig().override({**{f"{d}.mode": "cascade" for d in DIAGNOSERS}, "cascade.probe": False,
                                 "interference.screen_model": False})
    agent = guard(WaitOnlyAgent(), cfg, vlm=judge.client)
    agent.reset(s.label.goal)
    obs = s.observation()
    step = agent.step(obs)
    assert vlm_server.completions(), "the cascade asks the model about the page"
    assert step.action.action_type != "navigate_back"  # a page of the app: Back would leave it
    assert classify(s, obs, step, agent.report.usage[-1].source) not in ("engage", "destructive")


def test_a_page_of_many_controls_is_no_bare_page():
    from diagnosers.signals.overlays import bare_page

    s = dev("30b4676a70f6")  # a WeCom group chat
    assert bare_page(s.observation()) is None and diagnose(s).verdict == "false"


def test_a_model_only_verdict_of_no_interference_is_the_verdict(vlm_server):
    s = dev("4a00f8f19425")  # a lock screen the rules know; the model alone decides in this tier
    d = InterferenceDiagnoser(mode="vlm", judge=_judge(vlm_server, interference=False))
    f = d.diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[]))
    assert not f.problem and "kind" not in f.details


def _judge(vlm_server, interference):
    from diagnosers.vlm_judge import VLMJudge
    from ttir.testing import Reply
    from ttir.model.client import VLMClient

    vlm_server.responder = lambda request: Reply.json({
        "repeat_failure_detected": False, "previous_intended_effect_satisfied": "yes",
        "interference_present": interference, "task_alignment": "on_track", "reason": "a pop-up"})
    return VLMJudge(VLMClient(vlm_server.config(max_retries=0)))


def test_a_sign_up_page_the_goal_asks_for_is_the_tasks_own():
    s = dev("4242c535dffd")  # Sign Up tab; goal: "Create a BookMyJuice account with a phone number"
    assert not diagnose(s).problem
    _, _, source = first_guarded_step(s)
    assert source == "agent"


def test_an_onboarding_page_is_known_by_its_get_started_button_id():
    s = dev("548d339f0e44")  # logo, title, blurb and one wide "Начать" (id btnGetStarted)
    f = diagnose(s)
    assert f.problem and f.details["kind"] == "takeover" and "gate_ids" in f.details["features"]
    obs, step, source = first_guarded_step(s)
    assert classify(s, obs, step, source) == "dismiss"


def test_an_onboarding_carousel_is_left_by_its_skip_never_paged_through():
    s = dev("4653d661b3be")  # "ONBOARDING · 01/03" with SKIP ALL and NEXT ▸
    obs, step, source = first_guarded_step(s)
    assert source == "recovery" and tapped_names(obs, step.action) & {"skip all"}
    s = dev("e9de468fedf7")  # a carousel page whose only way on is Next: its next page is the carousel still
    f = diagnose(s, screen_model=False)
    assert f.problem and [b["next_page"] for b in f.details["buttons"] if b["label"] == "Next"] == [True]
    obs, step, source = first_guarded_step(s, screen_model=False)
    assert source == "agent"  # the rules never page through
    # the label calls that Next the way past it (dismiss), and the control model learnt so: it may tap it,
    # never anything the label calls engage or destructive
    obs, step, source = first_guarded_step(s)
    assert classify(s, obs, step, source) in ("dismiss", "none")


@pytest.mark.parametrize("screen_id", [
    "37b8f56d52de",  # "make and manage phone calls"; goal: set up a call manager to screen incoming calls
    "8638f43e6a8a",  # GPSTest's "Choose language" list; goal: switch GPSTest to German
    "0eb2cb511c89",  # the system's Ringtones picker; goal: set QKSMS's notification sound
])
def test_a_dialog_the_goal_names_is_the_tasks_own(screen_id):
    s = dev(screen_id)
    assert not diagnose(s).problem
    _, _, source = first_guarded_step(s)
    assert source == "agent"  # declining or cancelling it would break the task


def test_a_welcome_pager_whose_dots_are_one_view_is_left_by_skip_tutorial():
    s = dev("149d58323c75")  # Commons: welcomePager, "Skip Tutorial", welcomePagerIndicator draws its dots
    f = diagnose(s)
    assert f.problem and "carousel" in f.details["features"]
    obs, step, source = first_guarded_step(s)
    assert source == "recovery" and tapped_names(obs, step.action) & {"skip tutorial"}


def test_an_intro_slider_whose_dots_are_bullet_texts_is_a_carousel():
    s = dev("3db93f8975a4")  # Open Food Facts: view_pager, layoutDots of four '•' TextViews, SKIP | NEXT
    f = diagnose(s)
    assert f.problem and "carousel" in f.details["features"]
    obs, step, source = first_guarded_step(s)
    assert source == "recovery" and tapped_names(obs, step.action) & {"skip"}  # never NEXT: a page of the carousel


def test_an_onboarding_carousel_that_names_the_goals_words_is_still_a_gate():
    s = dev("3ef56a279485")  # Firefox Focus "Your search, your way" page 2; the goal is to find a word on a page
    f = diagnose(s)
    assert f.problem and "carousel" in f.details["features"] and "goal_overlap" not in f.details["features"]
    obs, step, source = first_guarded_step(s)
    assert source == "recovery" and tapped_names(obs, step.action) & {"skip"}


def test_the_home_screens_pages_and_dots_are_not_a_gate():
    s = dev("84b788e21929")  # Pixel launcher home: a pager of home pages with its dots
    assert diagnose(s).verdict == "false"


def test_a_toolbars_row_of_icon_buttons_is_not_a_carousels_dots():
    s = dev("eb4e2d44a359")  # a TV app's home: a tab rail, a header of icon buttons (search, filter …), a pager
    assert diagnose(s).verdict == "false"


def test_a_permissions_talk_of_your_account_does_not_make_a_sign_up_goal_need_it():
    s = dev("c65e15cd2fa7")  # Instagram asks for the contacts "to recover your account"; the goal is to sign up
    obs, step, source = first_guarded_step(s)
    assert diagnose(s).problem and "goal_needs_it" not in diagnose(s).details["features"]
    assert source == "recovery" and classify(s, obs, step, source) == "dismiss"


def test_a_welcome_page_whose_one_control_is_a_small_continue_is_a_gate():
    s = dev("9cef7efe77f6")  # "Welcome to Syncthing for Android", a text, [Continue] in the bottom corner
    f = diagnose(s)
    assert f.problem and f.details["kind"] == "takeover" and "forward_button" in f.details["features"]
    _, _, source = first_guarded_step(s)
    assert source == "agent"  # its one way on is the app's own Continue: reported, not tapped


def test_the_file_pickers_folder_grant_serving_the_app_is_the_tasks_own():
    from diagnosers.signals.overlays import overlay_candidates

    s = dev("1e202afeab1a")  # DocumentsUI: "Allow Untrusted Translations to access files in FolderImportTest?"
    assert diagnose(s).verdict == "false"
    _, _, source = first_guarded_step(s)
    assert source == "agent"
    # in front (the Files app is DocumentsUI too) its dialogs stay candidates
    files_app = Observation.from_xml(s.data, foreground="com.android.documentsui")
    assert overlay_candidates(files_app)


def test_an_account_menu_with_a_sign_in_card_is_no_sign_in_wall():
    s = dev("bfb85cfdc6f5")  # YouTube signed out: "Do more with YouTube / Sign in", then Settings, Help & feedback …
    assert diagnose(s).verdict == "false"
    _, _, source = first_guarded_step(s)
    assert source == "agent"


def test_another_apps_save_password_dialog_alone_in_a_focus_only_dump_is_dismissed():
    s = dev("30e37ef37f6e")  # Honor's keychain "Enregistrer … mots de passe" over the app the goal signs in to
    f = diagnose(s)
    assert f.problem and "foreign_package" in f.details["features"] and "goal_needs_it" not in f.details["features"]
    obs, step, source = first_guarded_step(s)
    assert source == "recovery" and classify(s, obs, step, source) == "dismiss"  # Annuler, not Enregistrer


def test_a_full_screen_picker_of_another_app_alone_in_the_dump_is_no_interruption():
    s = dev("82176082f636")  # the app opened another app's picker for the user (wanted, save_as)
    assert diagnose(s).verdict == "false"


def test_a_modal_on_a_layer_of_its_own_over_a_scrolling_page_is_a_dialog():
    s = dev("23b91525c6d5")  # a React Native update modal: a centred box, alone on a full-screen layer in the page's ScrollView
    f = diagnose(s)
    assert f.problem and f.details["kind"] == "dialog"


def test_a_required_update_is_reported_never_backed_out_of():
    s = dev("b4d65ec6b2d0")  # a mandatory ("إجباري") update modal: only Update now and the release history
    f = diagnose(s)
    assert f.problem and f.details["dismiss_hint"] == "report"
    _, _, source = first_guarded_step(s)
    assert source == "agent"


def test_a_vietnamese_welcome_page_with_log_in_and_sign_up_is_a_sign_in_wall():
    s = dev("834b44c1416d")  # "Chào mừng đến với DDMoney", Đăng nhập | Đăng ký
    f = diagnose(s)
    assert f.problem and "sign_in_wall" in f.details["features"]


def test_a_page_that_sets_a_password_is_no_sign_in_wall():
    s = dev("04cba6d2d9df")  # a vault's "Crie sua senha mestra": two password fields, no way in
    assert diagnose(s).verdict == "false"


def test_a_vaults_unlock_page_is_the_goals_own_when_the_goal_names_the_master_password():
    s = dev("35385b4ac875")  # "Unlock Lyvox Vault with the master password"
    assert diagnose(s).verdict == "false"


def test_a_landing_page_of_sign_in_links_is_a_sign_in_wall():
    s = dev("15cac97efccf")  # Instagram: "Log in with Facebook", "Sign up with email …", "Already have an account? Log in."
    f = diagnose(s)
    assert f.problem and f.details["kind"] == "takeover" and "sign_in_wall" in f.details["features"]


@pytest.mark.parametrize("screen_id", [
    "b6fa4e50165e",  # AnkiDroid's empty deck list: a toolbar icon "Sync (log in)"
    "963a0175f15b",  # a settings tab with "Sign in with Google"; its selected tab is not clickable
])
def test_a_sign_in_control_on_a_content_page_is_no_wall(screen_id):
    assert diagnose(dev(screen_id)).verdict == "false"


def test_a_coach_mark_librarys_overlay_is_an_interruption_and_got_it_closes_it():
    s = dev("be6164b96495")  # MaterialShowcaseView's tip over a photo gallery: its text and GOT IT
    f = diagnose(s)
    assert f.problem and f.details["features"].get("coach_mark")
    obs, step, source = first_guarded_step(s)
    assert source == "recovery" and classify(s, obs, step, source) == "dismiss"


def test_a_coach_mark_needs_every_id_its_library_inflates():
    from diagnosers.signals.overlays import overlay_candidates

    s = dev("be6164b96495")
    obs = Observation.from_xml(s.data.replace(b"tv_dismiss", b"tv_later"), foreground=s.label.task_app)
    assert not any("coach_mark" in c.features for c in overlay_candidates(obs))


def test_a_welcome_title_in_a_toolbar_does_not_make_the_page_content():
    s = dev("18f40a86bc92")  # action bar "Welcome to K-9 Mail", Import settings | Next
    f = diagnose(s)
    assert f.problem and f.details["kind"] == "takeover"
    _, _, source = first_guarded_step(s)
    assert source == "agent"  # its only ways on are Next and Import settings: reported, not tapped


def next_recovery_after_tapping(s, label):
    """The dismiss recovery's next step once the finding's ``label`` button was tapped
    and the screen stayed as it was."""
    from recoveries import DismissInterference
    from ttir.core.recovery import RecoveryContext

    obs = s.observation()
    f = diagnose(s)
    b = next(b for b in f.details["buttons"] if b["label"] == label)
    tapped = AgentStep(action=Action(action_type="click", x=b["center"][0], y=b["center"][1]), summary=f"Tap {label}")
    ctx = RecoveryContext(goal=s.label.goal, observation=obs, history=[], finding=f, taken=[tapped])
    return obs, DismissInterference().next_step(ctx)


def test_a_gate_with_two_ways_on_is_not_tapped_through():
    s = dev("3290ebad2c5a")  # a paywall: Fermer, and "Commencer — 3 jours gratuits →" (labelled engage), Restaurer …
    # the close was tried and the page stayed: what is left is the paywall's own ways on
    _, nxt = next_recovery_after_tapping(s, "Fermer")
    assert nxt is None or nxt.action.action_type != "click"


def test_a_skip_that_another_control_covers_is_not_tapped():
    """Firefox Focus's tour lies under its URL bar in the dump: a tap on Skip's centre would
    land in the search field, which the guard had tapped "to dismiss the interruption"."""
    s = dev("d43d3a4965bc")
    f = diagnose(s)
    assert f.problem and any(b["label"] == "Skip" for b in f.details["buttons"])
    obs, step, source = first_guarded_step(s)
    assert "search or enter address" not in tapped_names(obs, step.action)
    assert source == "agent"  # Skip cannot be reached; the tour is reported, not tapped through


def test_a_control_with_no_area_on_the_screen_is_never_tapped():
    """A car controller's main page lists its window and sunroof "Close" buttons laid out at
    0,0,0,0 (nothing draws them): a tap at their "centre" lands on the status bar's corner.
    Read as a takeover, the guard had tapped (0, 0) "to dismiss the interruption"."""
    from recoveries import DismissInterference
    from ttir.core.recovery import RecoveryContext

    s = dev("a5f49402c6d9")
    obs = s.observation()
    f = diagnose(s, screen_model=False)
    empty = [b for b in f.details["buttons"] if b["role"] == "dismiss" and b["bounds"] == [0, 0, 0, 0]]
    assert len(empty) == 2  # the finding reads them as ways out; the recovery must not reach for them
    problem = f.model_copy(update={"problem": True, "verdict": "true"})  # as a screen model that calls it one would
    taken: list[AgentStep] = []
    for _ in range(3):
        step = DismissInterference().next_step(RecoveryContext(goal=s.label.goal, observation=obs, history=[],
                                                               finding=problem, taken=list(taken)))
        if step is None:
            break
        assert step.action.point() != (0, 0), step.summary
        taken.append(step)


def test_a_bottom_button_below_the_dumps_own_screen_size_is_still_tapped():
    """A dump's screen size can be its app window's (2254 px tall here, the navigation bar left
    out), and a sheet's bottom button reaches below it: "Ahora no" (centre at y = 2266) is
    the way out, and a tap there reaches it."""
    s = dev("c05a29effa02")  # a Facebook "save your login" sheet: Guardar / Ahora no
    obs, step, source = first_guarded_step(s)
    assert obs.screen_size[1] < step.action.y
    assert source == "recovery" and classify(s, obs, step, source) == "dismiss"


def test_back_is_pressed_only_on_an_overlay_the_rules_call_a_pop_up():
    """Instagram's "turn on Storage" hint after its own picker (a dialog the task needs): the rules
    locate a window and leave it uncertain; a screen model that called it a pop-up had the
    recovery press Back, a guess on a guess. Only the rules' own "yes" lets Back through."""
    from recoveries import DismissInterference
    from ttir.core.recovery import RecoveryContext

    s = dev("142c13bd3640")
    obs = s.observation()
    f = diagnose(s)
    assert f.details["kind"] == "window" and f.details["rules_verdict"] == "uncertain"
    assert not any(b["role"] == "dismiss" for b in f.details["buttons"])  # no named way out

    def first_step(rules_verdict):
        finding = f.model_copy(update={"problem": True, "verdict": "true",
                                       "details": {**f.details, "rules_verdict": rules_verdict}})
        return DismissInterference().next_step(RecoveryContext(goal=s.label.goal, observation=obs, history=[],
                                                               finding=finding, taken=[]))

    assert first_step("uncertain") is None  # the screen model alone: reported, not pressed Back at
    assert first_step("true").action.action_type == "navigate_back"  # the rules' own verdict: as before
    assert first_step(None).action.action_type == "navigate_back"  # no screen model (rules only, a user's check)


def test_a_checkbox_is_never_tapped_to_dismiss():
    """A permission prompt whose DENY was tapped and stayed: its "Don't ask again" is a
    checkbox (ticking it turns the next Deny into a permanent one), not a way out."""
    s = dev("fdb74a5cfc9d")  # storage permission 3 of 3: Don't ask again (CheckBox), DENY, ALLOW
    obs, nxt = next_recovery_after_tapping(s, "DENY")
    assert nxt is None or "don't ask again" not in tapped_names(obs, nxt.action)


def test_the_agent_run_steps_are_what_their_runs_and_logs_give():
    """The appagent-* and guiagent-* rows of steps.jsonl follow from the runs' dumps and the
    agents' own logs (experiments.real_screens.run_steps): a label edited by hand would show here."""
    from experiments.real_screens.run_steps import build_rows

    kept = {r["id"]: r for r in rows("steps.jsonl") if r["id"].startswith(("appagent-", "guiagent-"))}
    built = {r["id"]: r for r in build_rows()}
    assert built and kept == built
    assert sum(r["labels"]["repeat_failure_detected"] for r in built.values()) >= 3


@pytest.mark.parametrize("probe_answer,acted", [(True, False), (False, True)])
def test_a_model_that_calls_a_home_screen_interference_is_not_acted_on(probe_answer, acted, vlm_server):
    """cascade.probe: before the model's first "interference" is acted on, it is asked about
    a plain home screen. One that says "interference" there too (SmolLM2-135M does) is held
    as uncertain; one that tells them apart decides as before."""
    from ttir import TTIRConfig
    from ttir.core.config import DIAGNOSERS
    from ttir.testing import Reply
    from ttir.model.client import VLMClient

    def reply(request):
        probed = "Create an alarm for 7:00 AM in the Clock app." in request.text
        return Reply.json({"repeat_failure_detected": False, "previous_intended_effect_satisfied": "yes",
                           "interference_present": probe_answer if probed else True,
                           "task_alignment": "on_track", "reason": "a pop-up"})

    vlm_server.responder = reply
    s = dev("22f36b2d41d7")  # a reminder dialog the task set: the rules are unsure, nothing says it is the task's
    # the rules alone (the screen model says "no" here, so nothing would reach the model to probe)
    cfg = TTIRConfig().override({**{f"{d}.mode": "cascade" for d in DIAGNOSERS}, "interference.screen_model": False})
    cfg = TTIRConfig.from_dict({**cfg.model_dump(), "vlm": vlm_server.config(max_retries=0).model_dump()})
    agent = guard(WaitOnlyAgent(), cfg, vlm=VLMClient(cfg.vlm))
    agent.reset(s.label.goal)
    agent.step(s.observation())
    assert (agent.report.usage[-1].source == "recovery") is acted
    texts = [r.text for r in vlm_server.completions()]
    assert sum("Create an alarm for 7:00 AM in the Clock app." in t for t in texts) == 1  # probed once
    assert agent.report.model_calls == len(texts)  # the probe is billed like any call


def test_an_async_guard_probes_off_the_event_loop_and_bills_it_once(vlm_server):
    import asyncio

    from ttir import TTIRConfig
    from ttir.core.config import DIAGNOSERS
    from ttir.testing import Reply
    from ttir.model.client import VLMClient

    vlm_server.responder = lambda request: Reply.json({
        "repeat_failure_detected": False, "previous_intended_effect_satisfied": "yes", "interference_present": True,
        "task_alignment": "on_track", "reason": "a pop-up"})

    class AsyncWaitOnly(WaitOnlyAgent):
        async def step(self, obs):  # noqa: D401 - an async agent gets the async guard
            return WaitOnlyAgent.step(self, obs)

    s = dev("22f36b2d41d7")
    cfg = TTIRConfig().override({**{f"{d}.mode": "cascade" for d in DIAGNOSERS}, "interference.screen_model": False})
    cfg = TTIRConfig.from_dict({**cfg.model_dump(), "vlm": vlm_server.config(max_retries=0).model_dump()})
    agent = guard(AsyncWaitOnly(), cfg, vlm=VLMClient(cfg.vlm))
    agent.reset(s.label.goal)
    asyncio.run(agent.step(s.observation()))
    assert agent.report.usage[-1].source == "agent"  # the model failed the probe: its "interference" is not acted on
    texts = [r.text for r in vlm_server.completions()]
    assert sum("Create an alarm for 7:00 AM in the Clock app." in t for t in texts) == 1
    assert agent.report.model_calls == len(texts)


# ------------------------------------------------------------------ the oracle ablation and the misses


def test_the_oracle_answers_from_the_label_and_its_guard_runs_the_recoveries():
    from experiments.real_screens.oracle import ORACLE_TIER

    picks = [dev("4a00f8f19425"), dev("0381990abcc5"), dev("0b624be763c2"), dev("7c0d00c35a59")]
    ordinary = next(s for s in SCREENS if s.split == "dev" and s.label.category == "ordinary" and not s.label.malformed
                    and s.observation().elements)
    results = evaluate([*picks, ordinary], tiers=["rules", ORACLE_TIER], session_steps=1)
    by_id = {r.id: r for r in results}
    for s in [*picks, ordinary]:
        want = "true" if s.label.category == "interference" else "false"
        assert by_id[s.id].verdicts[ORACLE_TIER] == want, s.id
    # the screen model finds what the rules alone miss (a what's-new sheet; the model retrained with round 16's dev
    # half no longer reaches the Twitter page below, which the oracle's guard must still treat safely)
    found = evaluate([dev("ddc1c6e0ea8f")], tiers=["rules", RULES_ALONE_TIER], session_steps=1)[0]
    assert found.verdicts["rules"] == "true" and found.verdicts[RULES_ALONE_TIER] == "false"
    assert evaluate([dev("0b624be763c2")], tiers=[RULES_ALONE_TIER], session_steps=1)[0].verdicts[RULES_ALONE_TIER] \
        == "false"  # the rules alone miss it; the oracle's guard still acts safely
    assert by_id["0b624be763c2"].action_class != "back"
    assert by_id["0381990abcc5"].action_class == "dismiss"  # Wait
    assert by_id["4a00f8f19425"].action_class == "none"  # reported
    assert by_id[ordinary.id].action_class == "none"
    report = summarize(results, ["rules", ORACLE_TIER])
    assert report["guard"]["tier"] == ORACLE_TIER


def test_the_oracle_answers_only_the_diagnose_prompt():
    from experiments.real_screens.oracle import LabelOracle, oracle_overrides

    with pytest.raises(TypeError, match="Judgment"):
        LabelOracle(True).ask(lambda vision: ("", []), dict)
    with pytest.raises(ValueError, match="oracle mode 'rules'"):
        oracle_overrides("rules")


def test_the_misses_are_told_apart_by_what_the_rules_located():
    picks = [s for s in SCREENS if s.split == "dev" and s.label.category == "interference"][:60]
    report = summarize(evaluate(picks, session_steps=1), ["rules"])
    i = report["tiers"]["rules"]["interference"]
    m = i["misses"]
    assert sum(m.values()) == i["n"] - i["detected"]
    assert m["uncertain"] == sum(k["uncertain"] for k in i["per_kind"].values())


def test_the_evaluation_keeps_the_guards_per_episode_notes_out_of_its_progress_but_not_warnings(capfd):
    """Each real screen is a one-screen guarded episode; the guard's note for a lock screen it has nothing
    to try on (INFO, once per episode) is what the report counts, and a thousand of them buried the
    progress bar. Warnings still reach stderr, and outside the evaluation the note is written."""
    import ttir
    from loguru import logger

    from ttir import QUIET

    locks = [s for s in load_corpus("dev") if s.label.kind == "lock_screen" and not s.label.malformed][:3]
    assert locks
    ttir.enable_logging("INFO")
    try:
        capfd.readouterr()
        results = evaluate(locks)
        assert all(r.detected("rules") for r in results)
        assert "nothing to try" not in capfd.readouterr().err
        with logger.contextualize(**{QUIET: True}):
            logger.warning("a warning inside the quiet loop")
        assert "a warning inside the quiet loop" in capfd.readouterr().err
        alone = guard(WaitOnlyAgent())
        alone.reset(locks[0].label.goal)
        alone.step(locks[0].observation())
        assert "nothing to try" in capfd.readouterr().err  # the note itself is still written outside it
    finally:  # as a library leaves loguru: its default stderr sink, ttir's packages quiet
        import sys

        logger.remove()
        logger.add(sys.stderr)
        for package in ttir.LOGGED_PACKAGES:
            logger.disable(package)


def test_the_report_prints_each_share_rounded_once():
    from experiments.real_screens.evaluate import ScreenResult, render

    def result(i, category, verdict):
        return ScreenResult(id=i, repo=f"r/{i}", split="dev", category=category, kind=None, round=1,
                            verdicts={"rules": verdict})

    # 11 false alarms on 301 wanted dialogs: 3.654 %, which a share rounded to four places first prints as 3.6 %
    rs = [result(f"w{i}", "wanted", "true" if i < 11 else "false") for i in range(301)]
    report = summarize(rs, ["rules"])
    assert report["tiers"]["rules"]["false_alarms"]["wanted"]["rate"] == pytest.approx(11 / 301, abs=1e-6)
    assert "| wanted | 301 | 11 | 3.7 % |" in render(report, rs, "dev")


def test_the_later_rounds_split_needs_screens_on_both_sides_and_says_which_rounds_exist():
    from experiments.real_screens.later_rounds import later_rounds, render

    with pytest.raises(ValueError, match=r"upto=999: \d+ dev screens up to it and 0 after it; .*rounds 1 to \d+"):
        later_rounds(upto=999)
    rows = [{"weights": {"rule": 0.5}, "C": 4.0, "threshold": 0.757, "recall": "47/70", "fa_ordinary": "3/510"},
            {"weights": {}, "C": 4.0, "threshold": 0.587, "recall": "49/73", "fa_ordinary": "11/534"},
            {"weights": None, "C": None, "threshold": None, "recall": "44/70", "fa_ordinary": "8/510"}]
    table = render(rows, 14).splitlines()
    assert table[0] == "dev rounds after 14, the free tier trained on dev rounds up to 14"
    assert table[4].startswith("| rules + model, rule=0.5 | 4 | 0.757 | 47/70 |")
    assert table[5].startswith("| rules + model, shipped weights | 4 | 0.587 | 49/73 |")
    assert table[6].startswith("| rules alone |  |  | 44/70 |")


def test_the_rules_alone_get_their_detection_figures_not_the_guarded_steps():
    """Beside the free tier, the rules alone are scored for detection only: the guard stepped
    with the free tier, and its taps are not the rules' (later_rounds printed them as theirs)."""
    from experiments.real_screens.crossval import headline
    from experiments.real_screens.evaluate import RULES_ALONE_TIER, ScreenResult

    rs = [ScreenResult(id="o", repo="r/o", split="dev", category="ordinary", kind=None, round=1,
                       verdicts={"rules": "true", RULES_ALONE_TIER: "false"}, action_class="back")]
    report = summarize(rs, ["rules", RULES_ALONE_TIER])
    assert headline(report)["actions_on_non_interference"] == "1/1" and headline(report)["fa_ordinary"] == "1/1"
    alone = headline(report, RULES_ALONE_TIER)
    assert alone["fa_ordinary"] == "0/1" and "actions_on_non_interference" not in alone
    assert "first_action_clears" not in alone and "engage_or_destructive_taps" not in alone


def test_a_weights_setting_names_screen_feature_groups_and_norms_or_says_what_is_expected(capsys):
    from experiments.real_screens.later_rounds import main, parse_weights

    assert parse_weights("rule=0.6, pkg=0") == {"rule": 0.6, "pkg": 0.0}
    assert parse_weights("shipped") == {}
    with pytest.raises(ValueError, match=r"'clabel=1' is not group=norm with a group of all, top, click, ids, pkg, rule"):
        parse_weights("clabel=1")  # a control-model group: screen_features never reads it
    with pytest.raises(ValueError, match=r"'rule' is not group=norm"):
        parse_weights("rule")
    for bad in ("rule=-1", "rule=nan", "rule=x"):
        with pytest.raises(ValueError, match=r"the norm of rule is .*expected a number >= 0, e\.g\. rule=0\.5"):
            parse_weights(bad)
    with pytest.raises(SystemExit):
        main(["--weights", "pkg=2,top"])  # argparse's usage error, before any corpus is read
    assert "--weights 'pkg=2,top': 'top' is not group=norm" in capsys.readouterr().err
