"""The simulated Gboard: layouts per field type, shift, ?123, the suggestion strip,
the dial pad, and a window that reports itself like a real Gboard's — which the
diagnosers and the reference agents must treat as the keyboard, never as a pop-up."""

from __future__ import annotations

import pytest

from benchmark import SimDevice, make_task
from benchmark.agents import OracleAgent, PlannerAgent
from benchmark.sim.keyboard import IME, suggestions
from benchmark.ui import tokens
from diagnosers import DiagnosisContext, InterferenceDiagnoser
from diagnosers.signals.tree import screen_tree
from ttir.core.types import Action, Observation, UIElement

DP = 420 / 160


def ime(obs: Observation) -> list[UIElement]:
    return [e for e in obs.elements if e.package == IME]


def key(obs: Observation, desc: str) -> UIElement:
    hits = [e for e in ime(obs) if e.content_desc == desc and e.clickable]
    assert hits, f"no key {desc!r}; keys: {[e.content_desc for e in ime(obs) if e.clickable]}"
    return hits[0]


def tap(d: SimDevice, e: UIElement) -> None:
    d.execute(Action(action_type="click", x=e.center[0], y=e.center[1]))


def field(d: SimDevice, rid: str) -> UIElement:
    return d.observe().find(resource_id=rid)[0]


@pytest.fixture
def form(device: SimDevice) -> SimDevice:
    device.reset(make_task("ContactsAddContact"))
    device.launch("Contacts")
    tap(device, device.observe().find(content_desc="Create contact")[0])
    return device


def test_the_keyboard_window_reports_itself_like_gboard(form):
    tap(form, field(form, "first_name"))
    obs = form.observe()
    nodes = ime(obs)
    roots = [e for e in nodes if e.parent is None]
    assert len(roots) == 1 and roots[0].class_name == "android.widget.FrameLayout"
    ids = {e.short_id for e in nodes}
    assert {"keyboard_holder", "keyboard_header_view_holder", "input_area", "key_pos_0_0", "key_pos_shift",
            "key_pos_del", "key_pos_space", "key_pos_ime_action", "key_pos_header_power_key"} <= ids
    q = next(e for e in nodes if e.short_id == "key_pos_0_0")
    assert q.class_name == "android.widget.FrameLayout" and q.clickable and q.content_desc.lower() == "q"
    kids = [e.text for i, e in enumerate(obs.elements) if e.parent == obs.elements.index(q)]
    assert kids[0].lower() == "q" and kids[1] == "1"  # the letter and its long-press digit, as TextViews
    assert key(obs, "Delete").short_id == "key_pos_del"
    # the keyboard sits right above the navigation bar and the app area shrinks above it
    top = roots[0].bounds[1]
    assert roots[0].bounds[3] == 2400 - round(tokens.NAV_BAR * DP)
    assert max(e.bounds[3] for e in obs.elements if e.package == "com.google.android.contacts" and e.area) <= top


def test_letter_keys_type_and_shift_capitalises_the_first_letter(form):
    tap(form, field(form, "first_name"))
    obs = form.observe()
    assert key(obs, "A")  # an empty name field starts with shift on (Gboard's auto-capitalisation)
    tap(form, key(obs, "A"))
    obs = form.observe()
    tap(form, key(obs, "n"))
    tap(form, key(form.observe(), "a"))
    assert field(form, "first_name").text == "Ana"
    tap(form, key(form.observe(), "Shift"))
    tap(form, key(form.observe(), "B"))
    tap(form, key(form.observe(), "b"))  # shift applies to one letter
    assert field(form, "first_name").text == "AnaBb"
    tap(form, key(form.observe(), "Delete"))
    tap(form, key(form.observe(), "Space"))
    assert field(form, "first_name").text == "AnaB "


def test_symbols_layers_and_back(form):
    tap(form, field(form, "email"))
    obs = form.observe()
    tap(form, key(obs, "Symbols"))
    obs = form.observe()
    tap(form, key(obs, "@"))
    tap(form, key(form.observe(), "More symbols"))
    obs = form.observe()
    assert key(obs, "€") and key(obs, "Symbols")
    tap(form, key(obs, "Letters"))
    tap(form, key(form.observe(), "x"))
    assert field(form, "email").text == "@x"


def test_phone_fields_open_the_dial_pad(form):
    tap(form, field(form, "phone"))
    obs = form.observe()
    digits = [e for e in ime(obs) if e.clickable and e.content_desc.isdigit()]
    assert sorted(e.content_desc for e in digits) == list("0123456789")
    assert not [e for e in ime(obs) if e.content_desc == "q"]
    two = key(obs, "2")
    assert "ABC" in [e.text for e in obs.elements if e.parent == obs.elements.index(two)]
    for d in "555":
        tap(form, key(form.observe(), d))
    tap(form, key(form.observe(), "Delete"))
    assert field(form, "phone").text == "55"
    # its action key is Done: the field loses focus and the keyboard goes
    tap(form, key(form.observe(), "Done"))
    assert not ime(form.observe())


def test_the_suggestion_strip_completes_the_word_being_typed(form):
    assert suggestions("tom")[:1] == ["tomorrow"] and suggestions("") == []
    tap(form, field(form, "company"))
    form.execute(Action(action_type="input_text", text="Big tom"))
    obs = form.observe()
    strip = [e for e in ime(obs) if e.short_id == "softkey_holder_fixed_candidates"]
    assert strip, "no suggestions while typing"
    words = [e.content_desc for e in ime(obs) if e.parent == obs.elements.index(strip[0])]
    assert words[0] == "tom" and "tomorrow" in words
    tap(form, key(obs, "tomorrow"))
    assert field(form, "company").text == "Big tomorrow "


def test_the_backspace_key_draws_gboards_glyph_not_an_arrow(form):
    tap(form, field(form, "first_name"))
    obs = form.observe()
    delete = key(obs, "Delete")
    img = obs.screenshot
    crop = img.crop(delete.bounds)
    bg = crop.getpixel((2, 2))
    inked = [(x, y) for x in range(crop.width) for y in range(crop.height)
             if sum(abs(a - b) for a, b in zip(crop.getpixel((x, y)), bg)) > 150]
    xs = [x for x, _ in inked]
    # a tag with an x: ink spans most of the key's icon box and is closed on both sides
    assert inked and max(xs) - min(xs) >= round(18 * DP)


def test_the_diagnosers_see_the_keyboard_as_the_keyboard(form):
    tap(form, field(form, "first_name"))
    obs = form.observe()
    tree = screen_tree(obs)
    assert tree.keyboard_open
    assert not any(t in ("q", "x", "Delete") for t in tree.texts)  # keys are not the app's words
    f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal="Create a contact named Ana", observation=obs, history=[]))
    assert not f.problem and f.details.get("candidates") == [], f.evidence


@pytest.mark.parametrize("agent", ["oracle", "planner"])
def test_reference_agents_never_take_a_key_for_a_close_button(agent):
    """Gboard's "x" key is labelled like a close button; an agent must leave it alone."""
    task = make_task("ContactsAddContact")
    d = SimDevice()
    d.reset(task)
    a = OracleAgent.for_task(task) if agent == "oracle" else PlannerAgent(task.reference_solution(), seed=0)
    a.reset(task.goal)
    for _ in range(40):
        obs = d.observe()
        step = a.step(obs)
        if step.action.action_type == "status":
            break
        if step.action.is_touch:
            hit = obs.element_at(*step.action.point(obs.elements), clickable_only=True)
            assert hit is None or hit.package != IME, f"{agent} tapped the keyboard's {hit.content_desc!r}"
        d.execute(step.action)
    assert task.verify(d)
