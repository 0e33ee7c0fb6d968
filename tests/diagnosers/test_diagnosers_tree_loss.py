"""Diagnosers that know what they do not know: a missing or bare tree is "unknown",
never an empty screen. Without a tree, stuck loop and action effect compare the
screenshots, interference reads the screenshot's text and layout (OCR), task
alignment looks for the goal in that text; every rule finding says what it read."""

from __future__ import annotations

import pytest

from benchmark import SimDevice, make_task
from diagnosers import ActionEffectDiagnoser, InterferenceDiagnoser, StuckLoopDiagnoser, TaskAlignmentDiagnoser
from tests.support.diagnosers_support import ctx, dump, rec, tap, with_screenshot
from perturb import PerturbedDevice, make
from ttir.core import ocr
from ttir.core.types import Action, AgentStep, Observation, UIElement

needs_ocr = pytest.mark.skipif(not ocr.available(), reason="needs the ttir[ocr] extra")
GOAL = "Create a new contact for Diego Fernandes"
BARE_XML = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.tencent.mm" '
    'content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" '
    'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
    'bounds="[0,0][1080,2400]" /></hierarchy>'
)


def bare(screenshot=None) -> Observation:
    """A dump that holds only the window root (WeChat, a game), as a phone returns it."""
    return Observation.from_xml(BARE_XML, screenshot=screenshot, foreground="com.tencent.mm/.ui.LauncherUI")


def _all_rule_findings(goal, obs, history):
    c = ctx(goal, obs, history)
    return {cls.name: cls().diagnose(c) for cls in
            (StuckLoopDiagnoser, ActionEffectDiagnoser, InterferenceDiagnoser, TaskAlignmentDiagnoser)}


def test_no_diagnoser_reports_no_change_from_an_empty_tree():
    """The same bare root before and after three identical taps, no screenshots: nothing
    can be compared, so nothing may be concluded from the trees being 'equal'."""
    hist = [rec(bare(), tap(540, 1200), "Tap \"Send\"") for _ in range(3)]
    found = _all_rule_findings(GOAL, bare(), hist)
    assert found["action_effect"].verdict == "uncertain" and not found["action_effect"].problem
    assert not found["action_effect"].details.get("no_change")
    assert found["stuck_loop"].verdict == "uncertain" and not found["stuck_loop"].problem
    assert not any(f.problem for f in found.values())
    for f in found.values():
        assert "changed nothing" not in " ".join(f.evidence)
        assert f.source is None  # nothing could be read: neither a tree nor a screenshot


def test_the_same_bare_root_over_unchanged_screenshots_is_a_loop_by_its_pixels():
    img = with_screenshot(dump("contacts_list")).screenshot
    hist = [rec(bare(img), tap(540, 1200), "Tap \"Send\"") for _ in range(3)]
    found = _all_rule_findings(GOAL, bare(img), hist)
    assert found["action_effect"].verdict == "no" and found["action_effect"].source in ("ocr", "pixels")
    assert found["action_effect"].details["tree_similarity"] is None  # read from the image, not the tree
    assert found["stuck_loop"].problem and found["stuck_loop"].source in ("ocr", "pixels")
    assert found["stuck_loop"].details["has_tree"] is False


def test_a_bare_root_over_a_changed_screenshot_is_an_effect_not_a_loop():
    before = with_screenshot(dump("contacts_list")).screenshot
    after = with_screenshot(dump("contact_form")).screenshot
    hist = [rec(bare(before), tap(540, 1200), "Tap \"Create contact\"")]
    found = _all_rule_findings(GOAL, bare(after), hist)
    assert found["action_effect"].verdict == "yes" and not found["stuck_loop"].problem


def test_before_this_a_bare_root_compared_equal_and_now_its_tree_is_unknown():
    from diagnosers.signals.change import compare
    from diagnosers.signals.tree import screen_tree

    a, b = bare(), bare()
    assert not screen_tree(a).has_tree
    ch = compare(a, b)
    assert ch.tree_similarity is None and not ch.known and ch.same_screen(0) is None


def test_rule_findings_on_a_tree_say_tree():
    obs = dump("contacts_list", foreground="com.google.android.contacts/.Main")
    for f in _all_rule_findings(GOAL, obs, [rec(dump("home_screen"), Action(action_type="open_app",
                                                                           app_name="Contacts"))]).values():
        assert f.source == "tree"


def _sim(perts, steps):
    """Observations of a simulated episode (the history the guard would have)."""
    env = PerturbedDevice(SimDevice(), perts, seed=0)
    with env:
        obs = env.reset(make_task("ContactsAddContact", seed=0))
        hist = []
        for action, summary in steps:
            hist.append(rec(obs, action, summary))
            env.execute(action)
            obs = env.observe()
        return obs, hist, env.event_log()


@needs_ocr
def test_interference_reads_a_popup_from_the_screenshots_text_when_the_tree_is_lost():
    obs, hist, log = _sim([make("a11y_tree_empty"), make("popup_permission", trigger_step=1)],
                          [(Action(action_type="open_app", app_name="Contacts"), "Open Contacts")])
    assert any(e["event"] == "overlay_shown" for e in log) and obs.source == "ocr"
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, obs, hist))
    assert f.problem and f.source == "ocr"
    assert any("screenshot's text" in e for e in f.evidence)
    assert f.details.get("buttons")  # what to press to dismiss it, with its place on screen


@needs_ocr
def test_interference_finds_nothing_on_a_clean_tree_less_screen():
    obs, hist, _ = _sim([make("a11y_tree_empty")], [(Action(action_type="open_app", app_name="Contacts"), "Open Contacts")])
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, obs, hist))
    assert not f.problem and f.source == "ocr"


@needs_ocr
def test_a_completion_claim_is_checked_against_the_screenshots_text():
    obs, hist, _ = _sim([make("a11y_tree_empty")], [(Action(action_type="open_app", app_name="Contacts"), "Open Contacts")])
    claim = AgentStep(action=Action(action_type="status", goal_status="complete"), summary="done")
    ta = TaskAlignmentDiagnoser()
    shown = ta.diagnose(ctx("Open the contact Ines Mendes in Contacts", obs, hist, pending=claim))
    assert shown.verdict == "on_track" and shown.source == "ocr"
    assert {"contact", "mend"} <= set(shown.details["shared_words"])  # stems of the goal's words, read on screen
    absent = ta.diagnose(ctx("Send the invoice PDF to the accountant", obs, hist, pending=claim))
    assert absent.verdict in ("off_track", "uncertain") and absent.verdict != "on_track"


def test_a_completion_claim_without_tree_or_text_is_uncertain():
    obs = bare()
    claim = AgentStep(action=Action(action_type="status", goal_status="complete"), summary="done")
    f = TaskAlignmentDiagnoser().diagnose(ctx(GOAL, obs, [rec(obs, tap(1, 1))], pending=claim))
    assert f.verdict == "uncertain"


def test_ocr_lines_are_never_window_roots():
    lines = [UIElement.model_construct(text="Allow", bounds=(100, 1200, 300, 1260), source="ocr")]
    obs = Observation.model_construct(screenshot=None, elements=lines, xml=None, foreground=None,
                                      screen_size=(1080, 2400), orientation="portrait", step=0, time=0.0,
                                      source="ocr", tree_error="x")
    from diagnosers.signals.tree import screen_tree

    assert not screen_tree(obs).has_tree and screen_tree(obs).roots == []
