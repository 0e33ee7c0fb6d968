"""Behaviour of the Pro Expense, Broccoli and Markor apps, their verifiers, and their
tasks' robustness to the state perturbations (font, density, orientation, theme)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from benchmark import SimDevice, make_task, run_episode, task_names
from benchmark.agents import ReferenceAgent
from benchmark.apps.expense import ExpenseApp, parse_amount
from benchmark.apps.markor import EDITOR_ID, NOTEBOOK, note_filename
from benchmark.apps.recipes import RecipesApp
from benchmark.plan import T, Target, find
from ttir.core.types import Action

MY_TASKS = [n for n in task_names() if n.startswith(("Expense", "Recipe", "Markor"))]


# ---------------------------------------------------------------- helpers


def _el(device: SimDevice, target: Target):
    e = find(device.observe(), target)
    assert e is not None, f"{target} is not on screen: {[x.text or x.content_desc for x in device.observe().elements]}"
    return e


def tap(device: SimDevice, target: Target) -> None:
    x, y = _el(device, target).center
    device.execute(Action(action_type="click", x=x, y=y))


def long_press(device: SimDevice, target: Target) -> None:
    x, y = _el(device, target).center
    device.execute(Action(action_type="long_press", x=x, y=y))


def type_into(device: SimDevice, target: Target, value: str) -> None:
    x, y = _el(device, target).center
    device.execute(Action(action_type="input_text", text=value, x=x, y=y, clear_text=True))


def back(device: SimDevice) -> None:
    device.execute(Action(action_type="navigate_back"))


def visible(device: SimDevice, target: Target) -> bool:
    return find(device.observe(), target) is not None


@pytest.fixture
def expense_device(device: SimDevice) -> SimDevice:
    book = device.app(ExpenseApp.package).data
    today = device.clock.now().date()
    for k, (name, cents, cat) in enumerate([("Coffee", 450, "Food"), ("Taxi Fare", 2300, "Transportation"),
                                            ("Rent Payment", 120000, "Housing"), ("Movie Night", 1800, "Entertainment"),
                                            ("Groceries", 6420, "Food")]):
        book.add(name, cents, cat, today - dt.timedelta(days=k))
    device.launch("Pro Expense")
    return device


@pytest.fixture
def recipe_device(device: SimDevice) -> SimDevice:
    book = device.app(RecipesApp.package).data
    for title in ("Lentil Soup", "Garlic Butter Shrimp", "Zucchini Noodles with Pesto"):
        book.add(title, description="Quick.", ingredients="lentils\ncarrots", directions="Simmer.")
    device.launch("Broccoli")
    return device


# ---------------------------------------------------------------- Pro Expense


def test_expense_long_press_selection_deletes_exactly_the_selected(expense_device: SimDevice) -> None:
    d = expense_device
    book = d.app(ExpenseApp.package).data
    tap(d, T("More"))
    long_press(d, T("Taxi Fare"))
    tap(d, T("Movie Night"))
    tap(d, T("Coffee"))
    tap(d, T("Coffee"))  # a second tap unselects
    assert visible(d, T("2 selected"))
    tap(d, T(desc="Delete"))
    assert visible(d, T("2 items will be deleted!"))
    tap(d, T("Cancel"))
    assert len(book.expenses) == 5  # cancelling the sheet deletes nothing
    tap(d, T(desc="Delete"))
    tap(d, T("Confirm"))
    assert sorted(e.name for e in book.expenses) == ["Coffee", "Groceries", "Rent Payment"]
    assert visible(d, T("Expense Logs"))  # selection mode ended


def test_expense_back_leaves_selection_mode_before_the_screen(expense_device: SimDevice) -> None:
    d = expense_device
    tap(d, T("More"))
    long_press(d, T("Groceries"))
    back(d)
    assert visible(d, T("Expense Logs")) and not visible(d, T(desc="Delete"))
    tap(d, T("Groceries"))  # a plain tap opens the detail again
    assert visible(d, T("Expense Detail"))


def test_expense_detail_delete_removes_only_that_entry(expense_device: SimDevice) -> None:
    d = expense_device
    book = d.app(ExpenseApp.package).data
    tap(d, T("Rent Payment"))
    assert visible(d, T("$1,200.00"))
    tap(d, T(desc="Delete"))
    tap(d, T("Confirm"))
    assert [e.name for e in book.find("Rent Payment")] == [] and len(book.expenses) == 4


def test_expense_entry_form_saves_amount_category_and_note(expense_device: SimDevice) -> None:
    d = expense_device
    book = d.app(ExpenseApp.package).data
    tap(d, T(desc="Add expense"))
    type_into(d, T(id="edt_name"), "Dentist")
    back(d)  # the keyboard covers the form's end
    tap(d, T("Save"))
    assert len(book.expenses) == 5  # "Cost is Empty": nothing saved without an amount
    type_into(d, T(id="edt_amount"), "85.5")
    d.execute(Action(action_type="keyboard_enter"))
    tap(d, T("Health Care"))
    type_into(d, T(id="edt_note"), "Paid by card")
    d.execute(Action(action_type="keyboard_enter"))
    tap(d, T("Save"))
    (e,) = book.find("Dentist")
    assert (e.amount_cents, e.category, e.note) == (8550, "Health Care", "Paid by card")


@pytest.mark.parametrize("raw,cents", [("12", 1200), ("$1,200.50", 120050), ("12,5", 1250), ("0", None), ("abc", None)])
def test_parse_amount(raw: str, cents: Any) -> None:
    assert parse_amount(raw) == cents


# ---------------------------------------------------------------- Broccoli


def test_recipe_delete_dialog_cancel_keeps_and_delete_removes(recipe_device: SimDevice) -> None:
    d = recipe_device
    book = d.app(RecipesApp.package).data
    tap(d, T("Garlic Butter Shrimp"))
    tap(d, T(desc="More options"))
    menu_item = _el(d, T("Delete", id="android:id/title"))
    assert menu_item.package == RecipesApp.package  # the app's own PopupMenu, not an overlay
    tap(d, T("Delete", id="android:id/title"))
    assert visible(d, T("Delete this recipe?"))
    tap(d, T("Cancel"))
    assert book.find("Garlic Butter Shrimp") and not visible(d, T("Delete this recipe?"))
    tap(d, T(desc="More options"))
    tap(d, T("Delete", id="android:id/title"))
    tap(d, T("Delete", id="android:id/button1"))
    assert not book.find("Garlic Butter Shrimp") and len(book.recipes) == 2
    assert visible(d, T("All recipes"))  # back on the list


def test_recipe_tapping_outside_the_menu_closes_it(recipe_device: SimDevice) -> None:
    d = recipe_device
    tap(d, T("Lentil Soup"))
    tap(d, T(desc="More options"))
    w, h = d.observe().screen_size
    d.execute(Action(action_type="click", x=w // 4, y=h // 2))
    assert not visible(d, T("Share as file")) and len(d.app(RecipesApp.package).data.recipes) == 3


def test_recipe_form_requires_title_and_asks_before_discarding(recipe_device: SimDevice) -> None:
    d = recipe_device
    book = d.app(RecipesApp.package).data
    tap(d, T(desc="New Recipe"))
    type_into(d, T(id="new_servings"), "2 servings")
    tap(d, T("Save"))
    assert len(book.recipes) == 3  # "Please add a title."
    back(d)  # hides the keyboard
    back(d)
    assert visible(d, T("Discard changes?"))
    tap(d, T("Discard"))
    assert visible(d, T("All recipes")) and len(book.recipes) == 3


def test_recipe_form_creates_a_recipe_and_opens_it(recipe_device: SimDevice) -> None:
    d = recipe_device
    book = d.app(RecipesApp.package).data
    tap(d, T(desc="New Recipe"))
    type_into(d, T(id="new_title"), "Tomato Soup")
    d.execute(Action(action_type="keyboard_enter"))
    type_into(d, T(id="new_ingredients"), "tomatoes, onion")
    tap(d, T("Save"))
    (r,) = book.find("Tomato Soup")
    assert r.ingredients == "tomatoes, onion" and visible(d, T("Tomato Soup", id="details_title"))


# ---------------------------------------------------------------- Markor


def test_markor_note_written_in_the_editor_lands_in_storage(device: SimDevice) -> None:
    device.launch("Markor")
    tap(device, T(desc="Create new document"))
    type_into(device, T(id="new_file_dialog__name"), "groceries")
    device.execute(Action(action_type="keyboard_enter"))
    tap(device, T("OK"))
    assert device.storage.read(f"{NOTEBOOK}/groceries.md") is not None  # created with the default extension
    type_into(device, T(id=EDITOR_ID), "milk\neggs")
    tap(device, T(desc="Save"))
    assert device.storage.read(f"{NOTEBOOK}/groceries.md").content == "milk\neggs"
    type_into(device, T(id=EDITOR_ID), "bread")
    back(device)  # hides the keyboard
    back(device)  # leaving the editor saves
    assert device.storage.read(f"{NOTEBOOK}/groceries.md").content == "bread"
    assert visible(device, T("groceries.md"))


def test_markor_folder_button_creates_a_folder_and_browses_into_it(device: SimDevice) -> None:
    device.launch("Markor")
    tap(device, T(desc="Create new document"))
    type_into(device, T(id="new_file_dialog__name"), "Trips")
    device.execute(Action(action_type="keyboard_enter"))
    tap(device, T("Folder"))
    assert f"{NOTEBOOK}/Trips" in device.storage.folders and not device.storage.files
    tap(device, T("Trips"))
    assert visible(device, T("Empty directory"))
    back(device)
    assert visible(device, T("Markor"))


def test_markor_long_press_delete_asks_and_deletes_only_the_selection(device: SimDevice) -> None:
    for name in ("a.md", "b.md", "c.txt"):
        device.storage.write(f"{NOTEBOOK}/{name}", name)
    device.launch("Markor")
    long_press(device, T("b.md"))
    assert visible(device, T("One item selected"))
    tap(device, T(desc="Delete"))
    tap(device, T("Cancel"))
    assert len(device.storage.files) == 3
    tap(device, T("c.txt"))  # selection mode: a tap adds to the selection
    tap(device, T(desc="Delete"))
    assert visible(device, T("Do you really want to delete these 2 items?"))
    tap(device, T("OK"))
    assert sorted(device.storage.files) == [f"{NOTEBOOK}/a.md"]


@pytest.mark.parametrize("name,ext,expected", [("todo", ".md", "todo.md"), ("todo.txt", ".md", "todo.txt"),
                                               ("plan", "txt", "plan.txt"), ("plan", "", "plan.md")])
def test_markor_file_name_from_the_dialog(name: str, ext: str, expected: str) -> None:
    assert note_filename(name, ext) == expected


# ---------------------------------------------------------------- verifiers


def test_deletion_verifiers_reject_wrong_or_extra_deletions() -> None:
    for name in ("ExpenseDeleteMultiple", "RecipeDeleteMultipleRecipes"):
        task = make_task(name, seed=3)
        d = SimDevice()
        d.reset(task)
        pkg = task.apps[0]
        book = d.app(pkg).data
        rows = book.expenses if pkg == ExpenseApp.package else book.recipes
        key = "name" if pkg == ExpenseApp.package else "title"
        targets = {r[key] for r in task.params["targets"]}
        keep = [r for r in rows if getattr(r, key) not in targets]
        victims = [r for r in rows if getattr(r, key) in targets]
        # all targets but one: not done
        setattr(book, "expenses" if pkg == ExpenseApp.package else "recipes", keep + victims[:1])
        assert task.verify(d) is False
        # all targets plus a distractor: too much
        setattr(book, "expenses" if pkg == ExpenseApp.package else "recipes", keep[1:])
        assert task.verify(d) is False
        setattr(book, "expenses" if pkg == ExpenseApp.package else "recipes", keep)
        assert task.verify(d) is True


def test_add_verifier_rejects_a_wrong_amount() -> None:
    task = make_task("ExpenseAddSingle", seed=2)
    d = SimDevice()
    d.reset(task)
    r = task.params["targets"][0]
    book = d.app(ExpenseApp.package).data
    e = book.add(r["name"], r["amount_cents"] + 100, r["category"], d.clock.now().date(), note=r["note"])
    assert task.verify(d) is False
    e.amount_cents = r["amount_cents"]
    assert task.verify(d) is True


def test_markor_edit_verifier_checks_the_expected_text() -> None:
    task = make_task("MarkorEditNote", seed=4)
    d = SimDevice()
    d.reset(task)
    path = f"{NOTEBOOK}/{task.params['file_name']}"
    d.storage.write(path, "something else")
    assert task.verify(d) is False
    d.storage.write(path, "  " + task.expected().upper() + "\n")  # case and whitespace are forgiven
    assert task.verify(d) is True


# ---------------------------------------------------------------- perturbation robustness


class _ConfiguredDevice:
    """Resets the SimDevice for a task, then applies a state perturbation's settings."""

    def __init__(self, device: SimDevice, settings: dict[str, Any]):
        self.unwrapped = device
        self.settings = settings

    def reset(self, task: Any = None):
        self.unwrapped.reset(task)
        self.unwrapped.configure(**self.settings)
        return self.unwrapped.observe()

    def observe(self):
        return self.unwrapped.observe()

    def execute(self, action: Action) -> None:
        self.unwrapped.execute(action)


PERTURBED_SETTINGS = {
    "font_large": {"font_scale": 1.35},
    "zoomed_out": {"density_scale": 0.76, "size_scale": 0.88},
    "landscape": {"orientation": "landscape"},
    "dark": {"dark_theme": True},
}


@pytest.mark.parametrize("settings", list(PERTURBED_SETTINGS), ids=list(PERTURBED_SETTINGS))
@pytest.mark.parametrize("name", MY_TASKS)
def test_reference_solution_survives_state_perturbations(name: str, settings: str) -> None:
    task = make_task(name, seed=0)
    result = run_episode(_ConfiguredDevice(SimDevice(), PERTURBED_SETTINGS[settings]), task,
                         ReferenceAgent(task.reference_solution()))
    assert result.success, f"{name} under {settings}: {[s.agent_step.get('summary') for s in result.trajectory]}"
    assert not [s.action_error for s in result.trajectory if s.action_error]


def test_my_tasks_are_registered() -> None:
    assert len(MY_TASKS) >= 12
    assert {"ExpenseDeleteMultiple", "RecipeDeleteMultipleRecipes", "MarkorCreateNote"} <= set(MY_TASKS)
