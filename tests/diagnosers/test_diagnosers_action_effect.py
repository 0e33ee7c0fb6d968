"""Action-effect rules: taps that changed nothing, taps on the wrong element, text
in the wrong field (Figure 10), legitimate no-change cases, tree-only and
screenshot-only observations."""

from __future__ import annotations

import pytest

from diagnosers import ActionEffectDiagnoser
from tests.support.diagnosers_support import (
    FakeJudge,
    ctx,
    dump,
    element,
    judgment,
    rec,
    retext,
    screenshot_only,
    tap,
    with_screenshot,
)
from ttir.core.config import ActionEffectConfig
from ttir.core.types import Action

GOAL = "Open the recipe Zucchini Soup in Broccoli."
PHONE = "+13920741751"


def diagnose(before, action, after, summary="", thought="", history=(), **kw):
    hist = list(history) + [rec(before, action, summary, thought)]
    return ActionEffectDiagnoser(**kw).diagnose(ctx(GOAL, after, hist))


def test_first_step_has_nothing_to_verify():
    f = ActionEffectDiagnoser().diagnose(ctx(GOAL, dump("recipe_list")))
    assert f.verdict == "yes" and not f.problem


@pytest.mark.parametrize("action", [Action(action_type="wait", seconds=2.0), Action(action_type="answer", text="42")])
def test_actions_without_visible_effect_are_satisfied(action):
    lst = dump("recipe_list")
    assert diagnose(lst, action, dump("recipe_list")).verdict == "yes"


def test_tap_that_changed_nothing_is_not_satisfied():
    lst = dump("recipe_list")
    x, y = element(lst, text="Zucchini Soup").center
    f = diagnose(lst, tap(x, y), dump("recipe_list"), 'Tap "Zucchini Soup"')
    assert f.problem and f.verdict == "no"
    assert f.details["target_element"]["resource_id"].endswith("recipe_card")
    assert f.details["intended_targets"] == ["zucchini soup"]


def test_tap_that_opened_the_recipe_is_satisfied():
    lst = dump("recipe_list")
    x, y = element(lst, text="Zucchini Soup").center
    f = diagnose(lst, tap(x, y), dump("recipe_detail"), 'Tap "Zucchini Soup"')
    assert f.verdict == "yes" and not f.problem


def test_tap_on_empty_space_that_changed_nothing():
    home = dump("home_screen")
    f = diagnose(home, tap(540, 1600), dump("home_screen"), 'Tap "Broccoli"')
    assert f.verdict == "no" and "empty space" in f.evidence[0]


def test_tap_that_hit_a_neighbour_of_the_named_target():
    # a stale coordinate: the summary names Garlic Bread, the tap opened Zucchini Soup
    lst = dump("recipe_list")
    x, y = element(lst, text="Zucchini Soup").center
    f = diagnose(lst, tap(x, y), dump("recipe_detail"), 'Tap "Garlic Bread"')
    assert f.verdict == "no" and f.details["missed_target"]["text"] == "Garlic Bread"


def test_tap_on_an_already_selected_tab_is_uncertain():
    lst = dump("recipe_list")
    els = [e.model_copy(update={"selected": True}) if e.text == "Tomato Salad" else e for e in lst.elements]
    tabbed = lst.replace(elements=els)
    x, y = element(tabbed, text="Tomato Salad").center
    f = diagnose(tabbed, tap(x, y), tabbed.replace(), 'Tap "Tomato Salad"')
    assert f.verdict == "uncertain" and not f.problem


def test_a_save_icon_that_changes_nothing_is_uncertain():
    det = dump("recipe_detail")
    edit = element(det, desc="Edit")
    els = [e.model_copy(update={"content_desc": "Save"}) if e is edit else e for e in det.elements]
    screen = det.replace(elements=els)
    f = diagnose(screen, tap(*edit.center), screen.replace(), 'Tap "Save"')
    assert f.verdict == "uncertain"


def test_a_repeated_press_whose_first_press_worked_is_uncertain():
    a = dump("recipe_list")
    b = retext(dump("recipe_list"), "4 servings", "5 servings")
    b2 = retext(dump("recipe_list"), "4 servings", "5 servings")
    x, y = element(a, text="Lentil Curry").center
    first = rec(a, tap(x, y), 'Tap "Lentil Curry"')
    f = diagnose(b, tap(x, y), b2, 'Tap "Lentil Curry"', history=[first])
    assert f.verdict == "uncertain"


# -- typing (Figure 10) ---------------------------------------------------------------


def type_phone(before, field: str):
    x, y = element(before, rid=field).center
    return Action(action_type="input_text", text=PHONE, x=x, y=y)


def test_phone_number_typed_into_company_is_detected():
    before = dump("contact_form_filled_names")
    f = diagnose(before, type_phone(before, "company"), dump("contact_form_phone_in_company"),
                 f"Enter the phone number {PHONE} in the Phone field")
    assert f.problem and f.verdict == "no"
    assert "company" in f.details["landed_in"]["names"]
    assert "phone" in f.details["intended_field"]["names"]
    assert f.details["intended_field"]["center"]  # where the recovery should type


def test_phone_number_in_the_phone_field_is_satisfied():
    before = dump("contact_form_filled_names")
    f = diagnose(before, type_phone(before, "phone"), dump("contact_form_phone_ok"),
                 f"Enter the phone number {PHONE} in the Phone field")
    assert f.verdict == "yes"


def test_wrong_field_check_can_be_turned_off():
    before = dump("contact_form_filled_names")
    f = diagnose(before, type_phone(before, "company"), dump("contact_form_phone_in_company"),
                 f"Enter the phone number {PHONE} in the Phone field",
                 config=ActionEffectConfig(check_text_fields=False))
    assert f.verdict == "yes"


def test_summary_without_a_field_name_accepts_any_field():
    before = dump("contact_form_filled_names")
    f = diagnose(before, type_phone(before, "company"), dump("contact_form_phone_in_company"), "Type the number")
    assert f.verdict == "yes"


def test_typed_text_in_no_field_is_not_satisfied():
    before = dump("contact_form_filled_names")
    f = diagnose(before, type_phone(before, "phone"), dump("contact_form_filled_names"),
                 f"Enter {PHONE} in the Phone field")
    assert f.verdict == "no" and "not in any text field" in f.evidence[0]


# -- other actions ----------------------------------------------------------------------


def test_scroll_without_change_is_uncertain_and_with_change_satisfied():
    lst = dump("recipe_list")
    down = Action(action_type="scroll", direction="down")
    assert diagnose(lst, down, dump("recipe_list")).verdict == "uncertain"
    assert diagnose(lst, down, retext(dump("recipe_list"), "Zucchini Soup", "Pumpkin Pie")).verdict == "yes"


def test_open_app():
    home = dump("home_screen")
    go = Action(action_type="open_app", app_name="Broccoli")
    assert diagnose(home, go, dump("recipe_list", foreground="com.flauschcode.broccoli/.MainActivity")).verdict == "yes"
    assert diagnose(home, go, dump("home_screen")).verdict == "no"


def test_back_and_home():
    det = dump("recipe_detail")
    back = Action(action_type="navigate_back")
    assert diagnose(det, back, dump("recipe_list")).verdict == "yes"
    assert diagnose(det, back, dump("recipe_detail")).verdict == "no"
    assert diagnose(dump("home_screen"), back, dump("home_screen")).verdict == "uncertain"
    home = Action(action_type="navigate_home")
    assert diagnose(det, home, dump("home_screen")).verdict == "yes"


def test_pulling_the_shade_down():
    home = dump("home_screen")
    pull = Action(action_type="swipe", x=540, y=5, x2=540, y2=1400, duration_ms=300)
    assert diagnose(home, pull, dump("shade_open")).verdict == "yes"
    assert diagnose(home, pull, dump("home_screen")).verdict == "no"


# -- observation kinds -------------------------------------------------------------------


def test_screenshot_only_observations():
    lst = with_screenshot(dump("recipe_list"))
    x, y = element(lst, text="Zucchini Soup").center
    same = screenshot_only(with_screenshot(dump("recipe_list")))
    moved = screenshot_only(with_screenshot(dump("recipe_detail")))
    assert diagnose(screenshot_only(lst), tap(x, y), same, 'Tap "Zucchini Soup"').verdict == "no"
    assert diagnose(screenshot_only(lst), tap(x, y), moved, 'Tap "Zucchini Soup"').verdict == "yes"


def test_screenshot_only_typing_cannot_read_the_fields():
    before = with_screenshot(dump("contact_form_filled_names"))
    after = screenshot_only(with_screenshot(dump("contact_form_phone_in_company")))
    f = diagnose(screenshot_only(before), type_phone(before, "company"), after, "Enter the number in the Phone field")
    assert f.verdict == "uncertain"


def test_a_small_change_in_the_tapped_region_counts():
    # a checkbox ticked: only its pixels (and checked flag) change
    lst = dump("recipe_list")
    card = element(lst, text="Tomato Salad")
    ticked = lst.replace(elements=[e.model_copy(update={"checked": True, "checkable": True}) if e is card else e
                                   for e in lst.elements])
    before, after = with_screenshot(lst), with_screenshot(ticked)
    assert diagnose(before, tap(*card.center), after, "Tick Tomato Salad").verdict == "yes"
    assert diagnose(screenshot_only(before), tap(*card.center), screenshot_only(after), "Tick").verdict == "yes"


def test_model_tier_maps_the_judgment_and_the_cascade_asks_only_when_unsure():
    lst = dump("recipe_list")
    down = Action(action_type="scroll", direction="down")
    judge = FakeJudge(judgment(previous_intended_effect_satisfied="no", reason="the list did not move"))
    f = diagnose(lst, down, dump("recipe_list"), mode="cascade", judge=judge)
    assert f.verdict == "no" and f.problem and f.tier == "cascade" and judge.calls == 1
    assert f.details["action"]["action_type"] == "scroll"  # the rule's facts survive the merge
    x, y = element(lst, text="Zucchini Soup").center
    f = diagnose(lst, tap(x, y), dump("recipe_detail"), mode="cascade", judge=judge)
    assert f.verdict == "yes" and judge.calls == 1  # the rules were sure: no model call


def test_figure_10_on_the_simulator():
    """A coordinate taken from the normal layout lands in Company once the font is smaller."""
    from benchmark import SimDevice, make_task
    from ttir.core.types import AgentStep, StepRecord

    from diagnosers import DiagnosisContext

    def open_form(device):
        device.execute(Action(action_type="open_app", app_name="Contacts"))
        fab = element(device.observe(), desc="Create contact")
        device.execute(tap(*fab.center))
        return device.observe()

    task = make_task("ContactsAddContact", seed=0)
    normal = SimDevice()
    normal.reset(task)
    phone = element(open_form(normal), rid=":id/phone")
    small = SimDevice()
    small.reset(task)
    small.configure(font_scale=0.82)
    before = open_form(small)
    typed = Action(action_type="input_text", text=task.params["number"], x=phone.center[0], y=phone.center[1],
                   clear_text=True)
    small.execute(typed)
    after = small.observe()
    step = AgentStep(action=typed, summary=f"Type the phone number {task.params['number']} into the Phone field")
    f = ActionEffectDiagnoser().diagnose(DiagnosisContext(goal=task.goal, observation=after,
                                                          history=[StepRecord(observation=before, step=step)]))
    assert f.problem and f.details["landed_in"]["resource_id"].endswith(":id/company")
    assert f.details["intended_field"]["resource_id"].endswith(":id/phone")


def test_a_name_missing_from_a_translated_screen_is_no_missed_tap_when_the_tap_worked():
    """An agent narrating in English on a phone in Spanish names "Pause" over "Pausar": when the tap changed
    the screen and no earlier step's named target was on its screen either, the missing name is no evidence."""
    from diagnosers import ActionEffectDiagnoser

    home = dump("home_screen")
    opened = dump("recipe_list")
    contacts = next(e for e in home.elements if e.text == "Contacts")
    translated = [e.model_copy(update={"text": "Contactos", "content_desc": "Contactos"}) if e.text == "Contacts" else e
                  for e in home.elements]
    screen = home.replace(elements=translated)
    step = rec(screen, tap(*contacts.center), 'Tap "Contacts"')
    f = ActionEffectDiagnoser().diagnose(ctx("Open Contacts", opened, [step]))
    assert "nowhere on the screen" not in f.evidence[0]
    # ... while an agent whose earlier named target was on its screen is held to its words
    earlier = rec(home, tap(*contacts.center), 'Tap "Contacts"')
    f = ActionEffectDiagnoser().diagnose(ctx("Open Contacts", opened, [earlier, step]))
    assert f.verdict == "no" and "nowhere on the screen" in f.evidence[0]
