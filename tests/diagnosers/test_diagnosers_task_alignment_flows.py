"""Task alignment on simulated screens, step by step as the guard asks: the pages of an
interruption's own flow (a trial offer's sign-up, an update's download) are off track
however the agent moves through them, and an app reached through an interruption stays
off track after the history handed to the diagnoser no longer shows how it got there."""

from __future__ import annotations

from typing import Any, Optional

from diagnosers import Finding, TaskAlignmentDiagnoser
from ttir.core.diagnosis import DiagnosisContext
from tests.support.overlay_helpers import find, make_env
from ttir.guarded.middleware import HISTORY_LIMIT
from ttir.core.types import Action, AgentStep, Observation, StepRecord

CONTACT_GOAL = "Create a new contact for Diego Fernandes."
RECIPE_GOAL = "Add the recipe Zucchini Soup in the Broccoli app."


class Walk:
    """A simulated phone under one perturbation and the diagnoser judging every screen,
    with the last ``HISTORY_LIMIT`` steps as history (what the live guard keeps)."""

    def __init__(self, perturbation: str, task: str, goal: str, **overrides: Any):
        self.env, self.obs = make_env(perturbation, task=task, **overrides)
        self.goal = goal
        self.hist: list[StepRecord] = []
        self.diagnoser = TaskAlignmentDiagnoser(mode="rules")
        self.finding = self.judge()

    def judge(self) -> Finding:
        return self.diagnoser.diagnose(DiagnosisContext(goal=self.goal, observation=self.obs,
                                                        history=self.hist[-HISTORY_LIMIT:]))

    def do(self, action: Action, summary: str = "") -> Finding:
        self.hist.append(StepRecord(observation=self.obs, step=AgentStep(action=action, summary=summary)))
        self.env.execute(action)
        self.obs = self.env.observe()
        self.finding = self.judge()
        return self.finding

    def tap(self, label: str, obs: Optional[Observation] = None) -> Finding:
        e = find(obs or self.obs, label)
        assert e is not None, f"{label!r} not on screen: {[x.label for x in self.obs.elements if x.label]}"
        return self.do(Action(action_type="click", x=e.center[0], y=e.center[1]), f'Tap "{label}"')

    def labels(self) -> list[str]:
        return [e.label for e in self.obs.elements if e.label]


def test_a_trial_offers_signup_page_entered_a_second_time_is_off_track():
    w = Walk("ad_trial_offer", "ContactsAddContact", CONTACT_GOAL, seed=0)
    w.do(Action(action_type="open_app", app_name="Contacts"))
    assert "Start free trial" in w.labels()
    for _ in range(2):
        assert w.tap("Start free trial").verdict == "off_track"
        # waiting on the sign-up page: the agent is still in the offer's flow
        assert w.do(Action(action_type="wait", seconds=1.0)).verdict == "off_track", w.finding.evidence
        # back leaves the sign-up form for the offer itself, which is not a page of the flow
        w.do(Action(action_type="navigate_back"))
        assert "Start free trial" in w.labels() and not w.finding.problem


def test_a_declined_trial_offer_leaves_the_app_on_track():
    w = Walk("ad_trial_offer", "ContactsAddContact", CONTACT_GOAL, seed=0)
    w.do(Action(action_type="open_app", app_name="Contacts"))
    dismiss = next(lab for lab in ("No thanks", "Not now", "Maybe later", "Continue with ads") if lab in w.labels())
    assert w.tap(dismiss).verdict == "on_track"
    assert w.do(Action(action_type="wait", seconds=1.0)).verdict == "on_track"


def test_an_updates_download_pages_are_off_track_while_taps_miss_them():
    w = Walk("update_app_sheet", "ContactsAddContact", CONTACT_GOAL, seed=0, profile_pool=["play_recommended"])
    w.do(Action(action_type="open_app", app_name="Contacts"))
    sheet = w.obs
    assert w.tap("Update").verdict == "off_track"
    assert any("Downloading" in lab for lab in w.labels())
    # taps meant for the app land on the progress page: no press on the update any more,
    # and the page has none of a consent's or a paywall's words — still the update's flow
    for _ in range(2):
        w.do(Action(action_type="click", x=540, y=600), 'Tap "Create contact"')
        if not any("Updating" in lab or "Installing" in lab for lab in w.labels()):
            break
        assert w.finding.verdict == "off_track", w.finding.evidence
    assert sheet is not w.obs


def test_an_app_reached_from_a_notification_stays_off_track_past_the_history():
    w = Walk("notification_message", "RecipeAddMultipleRecipes", RECIPE_GOAL, seed=0, profile_pool=["dinner"])
    w.do(Action(action_type="open_app", app_name="Broccoli"))
    for _ in range(3):
        if "Reply" in w.labels():
            break
        w.do(Action(action_type="wait", seconds=1.0))
    assert w.tap("Reply").verdict == "off_track"
    sms = w.obs.package
    assert sms != "com.flauschcode.broccoli"
    # the agent wanders in the messages app for longer than the history the guard keeps
    for k in range(HISTORY_LIMIT + 6):
        f = w.do(Action(action_type="wait", seconds=1.0))
        assert w.obs.package == sms
        assert f.verdict == "off_track", (k, f.evidence)
    # the agent's own choice of an app still counts, however old the history
    assert w.do(Action(action_type="open_app", app_name="Broccoli")).verdict == "on_track"


def test_a_star_ticked_on_a_rating_dialog_is_not_a_page_of_its_flow():
    # the tick brings up the dialog's Rate button: the same dialog in another state, not a
    # page the press led to, however long the agent keeps ticking stars (a replayed tap
    # landing on them) — longer than the screens looked back on for the app's own
    w = Walk("rate_dialog", "ContactsAddContact", CONTACT_GOAL, seed=0, profile_pool=["how_likely"], trigger_step=1)
    w.do(Action(action_type="open_app", app_name="Contacts"))
    for _ in range(3):
        if "3 stars" in w.labels():
            break
        w.do(Action(action_type="wait", seconds=1.0))
    w.tap("3 stars")
    assert "Rate" in w.labels()
    for k in range(16):
        f = w.tap(("3 stars", "4 stars")[k % 2])
        assert "Rate" in w.labels() and not f.problem, (k, f.evidence)


def test_back_on_the_offer_after_many_entries_into_its_signup_is_not_its_flow():
    # the offer the agent pressed on is where back leads, however long ago it was last
    # shown outside the flow (the later times were inside it: back from its sign-up page)
    w = Walk("ad_trial_offer", "ContactsAddContact", CONTACT_GOAL, seed=0)
    w.do(Action(action_type="open_app", app_name="Contacts"))
    for k in range(6):
        assert w.tap("Start free trial").verdict == "off_track"
        for _ in range(2):
            assert w.do(Action(action_type="wait", seconds=1.0)).verdict == "off_track"
        w.do(Action(action_type="navigate_back"))
        assert "Start free trial" in w.labels() and not w.finding.problem, (k, w.finding.evidence)
