"""Core types: parsing real uiautomator dumps, XML round trips, action validation."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ttir.core.types import Action, AgentStep, Observation, UIElement, as_agent, as_step


def test_list_screen_dump_parses(dump):
    obs = Observation.from_xml(dump("contacts_list"))
    assert obs.foreground == "com.google.android.contacts"
    assert obs.screen_size == (1080, 2400) and obs.orientation == "portrait"
    names = [e.text for e in obs.elements if e.short_id == "cliv_name_textview"]
    assert names == ["Amara Okafor", "Hugo Pereira", "Sofia Rossi & Co"]  # entity decoded
    rows = [e for e in obs.elements if e.short_id == "contact_row"]
    assert all(r.clickable and r.long_clickable for r in rows)
    lst = obs.find(resource_id="contacts_list")[0]
    assert lst.scrollable and lst.class_name.endswith("RecyclerView")
    fab = obs.find(content_desc="Create contact")[0]
    assert fab.center == (954, 2211) and fab.bounds == (870, 2127, 1038, 2295)
    # the tree survives the flat list
    first_name = obs.elements.index(obs.find("Amara Okafor")[0])
    parent = obs.elements[obs.elements[first_name].parent]
    assert parent.short_id == "contact_row"


def test_form_dump_marks_edit_texts(dump):
    obs = Observation.from_xml(dump("contact_form"))
    fields = [e for e in obs.elements if e.editable]
    assert [f.short_id for f in fields] == ["first_name", "last_name", "company", "phone", "password"]
    company = obs.find(resource_id="company")[0]
    assert company.focused and company.text == "+13920741751" and company.hint == "Company"
    assert obs.find(resource_id="password")[0].password
    assert obs.element_at(500, 950).short_id == "company"


def test_permission_dialog_dump_with_trailing_status_line(dump):
    obs = Observation.from_xml(dump("permission_dialog"))
    assert obs.package == "com.android.permissioncontroller"
    buttons = [e.text for e in obs.elements if e.class_name == "android.widget.Button"]
    assert buttons == ["While using the app", "Only this time", "Don’t allow"]
    assert obs.find("Allow Audio Recorder to record audio?")[0].focusable


def test_landscape_dump_orientation(dump):
    obs = Observation.from_xml(dump("landscape_settings"))
    assert obs.orientation == "landscape" and obs.screen_size == (2400, 1080)
    switch = obs.find(resource_id="android:id/switch_widget")[0]
    assert switch.checkable and switch.checked and switch.text == "ON"


@pytest.mark.parametrize("name", ["contacts_list", "contact_form", "permission_dialog", "anr_dialog", "keyboard_form", "landscape_settings"])
def test_round_trip(dump, name):
    obs = Observation.from_xml(dump(name))
    again = Observation.from_xml(obs.to_xml())
    assert [e.model_dump() for e in again.elements] == [e.model_dump() for e in obs.elements]
    assert again.orientation == obs.orientation
    assert again.to_xml() == obs.to_xml()


def test_bad_xml_names_the_problem():
    with pytest.raises(ValueError, match="hierarchy"):
        Observation.from_xml("<html></html>")
    with pytest.raises(ValueError, match="bounds"):
        Observation.from_xml('<hierarchy><node bounds="oops" /></hierarchy>')
    with pytest.raises(ValueError, match="non-empty"):
        Observation.from_xml("")


def test_replace_regenerates_xml(dump):
    obs = Observation.from_xml(dump("contacts_list"))
    extra = UIElement(text="Update available", class_name="android.widget.TextView", package="com.android.vending",
                      bounds=(0, 0, 100, 100))
    new = obs.replace(elements=obs.elements + [extra])
    assert "Update available" in new.xml and "Update available" not in obs.xml


def test_action_vocabulary_and_validation():
    a = Action(action_type="click", x=540, y=1200)
    assert a.point() == (540, 1200) and a.is_touch
    assert Action(action_type="click", x=540.4, y="1200").x == 540
    assert Action.from_json('{"action_type": "open_app", "app_name": "Contacts"}').app_name == "Contacts"
    assert Action(action_type="scroll", direction="down").to_dict() == {"action_type": "scroll", "direction": "down"}
    cases = [
        (dict(action_type="tap", x=1, y=2), "action_type='tap' is not a known action"),
        (dict(action_type="click"), "needs a target"),
        (dict(action_type="click", x=1), "x and y must be given together"),
        (dict(action_type="click", x=1, y=2, index=3), "either index or x/y"),
        (dict(action_type="click", x=-5, y=2), "x=-5 must be >= 0"),
        (dict(action_type="input_text"), "needs text"),
        (dict(action_type="scroll"), "needs direction"),
        (dict(action_type="scroll", direction="sideways"), "direction"),
        (dict(action_type="swipe", x=1, y=2), "missing x2, y2"),
        (dict(action_type="open_app"), "needs app_name"),
        (dict(action_type="status", goal_status="done"), "goal_status"),
        (dict(action_type="navigate_back", x=3), "does not take x"),
        (dict(action_type="click", x=1, y=2, colour="red"), "colour"),
        (dict(action_type="wait", seconds=-1), "seconds=-1"),
    ]
    for kwargs, message in cases:
        with pytest.raises((ValidationError, ValueError)) as info:
            Action(**kwargs)
        assert message in str(info.value), (kwargs, str(info.value))


def test_agent_adapters():
    def fn(obs):
        return Action(action_type="navigate_back")

    agent = as_agent(fn)
    agent.reset("goal")
    step = agent.step(Observation())
    assert isinstance(step, AgentStep) and step.action.action_type == "navigate_back"
    assert as_step({"action_type": "wait"}).action.action_type == "wait"
    with pytest.raises(TypeError, match="not an agent"):
        as_agent(42)


def test_bounds_is_a_tuple_with_its_geometry_in_one_place():
    from ttir.core.types import Bounds, UIElement

    b = Bounds(100, 200, 300, 260)
    x1, y1, x2, y2 = b  # still unpacks as the 4-tuple every caller knows
    assert (x1, y1, x2, y2) == (100, 200, 300, 260) and b == (100, 200, 300, 260)
    assert b.width == 200 and b.height == 60 and b.area == 12000 and b.center == (200, 230)
    assert b.contains(100, 200) and not b.contains(300, 230)  # right and bottom edges are outside
    assert b.intersection((250, 0, 400, 230)) == Bounds(250, 200, 300, 230)
    assert b.intersection((300, 0, 400, 100)) is None
    e = UIElement(bounds=[1, 2, 11, 22])
    assert isinstance(e.bounds, Bounds) and e.center == (6, 12) and e.model_dump()["bounds"] == (1, 2, 11, 22)
    fast = UIElement.model_construct(bounds=(0, 0, 10, 10))  # fast paths skip validation
    assert fast.center == (5, 5) and fast.contains(9, 9) and fast.area == 100


def test_describe_cuts_a_long_text_so_that_messages_about_the_action_stay_short():
    from benchmark import SimDevice
    from benchmark.device import ActionError

    text = "x" * 100_000  # a model's runaway input_text: every error message about it was 100 KB
    described = Action(action_type="input_text", text=text).describe()
    assert described == f"input_text(text={'x' * 80!r}… (100,000 characters))"
    assert Action(action_type="input_text", text="hello").describe() == "input_text(text='hello')"
    with pytest.raises(ActionError) as info:
        SimDevice().execute(Action(action_type="input_text", text=text))
    assert len(str(info.value)) < 300 and "no text field is focused" in str(info.value)
