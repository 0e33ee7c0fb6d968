"""Pro Expense tasks (AndroidWorld: ExpenseAddSingle, ExpenseAddMultiple,
ExpenseDeleteSingle, ExpenseDeleteMultiple, ExpenseDeleteDuplicates).

Rows are dicts (name, amount_cents, category, note, days_ago) so parameters stay
plain data; the verifiers compare the app's rows before and after, as
AndroidWorld's SQLite validators do (exactly the right rows added or removed,
everything else untouched).
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any, ClassVar, Collection

from benchmark import data
from benchmark.apps.expense import CATEGORIES, ExpenseApp, ExpenseData, format_amount
from benchmark.plan import PlanStep, T, enter, long_press, open_app, tap, type_into
from benchmark.tasks._rows import rows_as_text, norm
from benchmark.tasks.base import Task

APP_NAME = "pro expense"  # as AndroidWorld's goals spell it
MAX_DAYS_AGO = 14  # entries fall in the first half of the (pinned) month, as in AndroidWorld


def _expenses(device: Any) -> ExpenseData:
    return device.app(ExpenseApp.package).data


def random_expense(rng: random.Random, exclude: Collection[str] = ()) -> dict[str, Any]:
    """One realistic entry whose name is not in ``exclude``."""
    pool = data.table("expense_items")
    while True:
        category = rng.choice(CATEGORIES)
        name = rng.choice(pool["names"][category])
        if name not in exclude:
            return {"name": name, "amount_cents": rng.randint(1000, 50000), "category": category,
                    "note": rng.choice(pool["notes"]), "days_ago": rng.randint(0, MAX_DAYS_AGO)}


def random_expenses(rng: random.Random, n: int, exclude: Collection[str] = ()) -> list[dict[str, Any]]:
    taken = set(exclude)
    rows = []
    for _ in range(n):
        r = random_expense(rng, taken)
        taken.add(r["name"])
        rows.append(r)
    return rows


def _add_rows(device: Any, rows: list[dict[str, Any]]) -> list[int]:
    book = _expenses(device)
    today = device.clock.now().date()
    ids = []
    for r in rows:
        e = book.add(r["name"], r["amount_cents"], r["category"], today - dt.timedelta(days=r["days_ago"]),
                     note=r["note"], created=-3600.0 * (r["days_ago"] * 24 + 1))
        ids.append(e.id)
    return ids


def _snapshot(device: Any) -> dict[int, tuple[Any, ...]]:
    return {e.id: (e.name, e.amount_cents, e.category, e.note, e.date) for e in _expenses(device).expenses}


def _list_order(rows: list[dict[str, Any]]) -> list[int]:
    """Indexes of ``rows`` (in insertion order) as Expense Logs lists them: newest day first,
    later entries first within a day."""
    return sorted(range(len(rows)), key=lambda i: (-rows[i]["days_ago"], i), reverse=True)


class _ExpenseTask(Task):
    abstract = True
    apps = (ExpenseApp.package,)
    tags: ClassVar[tuple[str, ...]] = ("expense",)

    def __init__(self, params: dict[str, Any], seed: int = 0):
        super().__init__(params, seed)
        self._before: dict[int, tuple[Any, ...]] = {}


# ---------------------------------------------------------------- deletion


class _ExpenseDeleteMultiple(_ExpenseTask):
    """Delete the named entries; every other entry stays. Multi-select (long press) in
    Expense Logs is the short path; one by one through the detail works too."""

    abstract = True
    template = "Delete the following expenses from " + APP_NAME + ": {expense_names}."
    n_rows: ClassVar[int] = 3
    n_noise: ClassVar[int] = 8
    tags = ("expense", "deletion", "multi_select")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        targets = random_expenses(rng, cls.n_rows)
        return {"targets": targets, "expense_names": ", ".join(r["name"] for r in targets)}

    def _rows(self) -> list[dict[str, Any]]:
        """Targets and distractors in the order setup enters them (a function of the seed)."""
        rng = random.Random(self.seed)
        targets = self.params["targets"]
        noise = random_expenses(rng, self.n_noise, {r["name"] for r in targets})
        rows = targets + noise
        rng.shuffle(rows)
        return rows

    def setup(self, device: Any) -> None:
        rows = self._rows()
        ids = _add_rows(device, rows)
        names = {r["name"] for r in self.params["targets"]}
        self._target_ids = {i for i, r in zip(ids, rows) if r["name"] in names}
        self._before = _snapshot(device)

    def verify(self, device: Any) -> bool:
        after = _snapshot(device)
        expected = {k: v for k, v in self._before.items() if k not in self._target_ids}
        return after == expected

    def _targets_in_list_order(self) -> list[str]:
        rows = self._rows()
        names = {r["name"] for r in self.params["targets"]}
        return [rows[i]["name"] for i in _list_order(rows) if rows[i]["name"] in names]

    def reference_solution(self) -> list[PlanStep]:
        first, *rest = self._targets_in_list_order()
        return [
            open_app("Pro Expense"),
            tap(T("More", id="btn_recent_more")),
            long_press(T(first, id="tv_name")),
            *[tap(T(name, id="tv_name")) for name in rest],
            tap(T(desc="Delete")),
            tap(T("Confirm", id="btn_confirm")),
        ]


class ExpenseDeleteSingle(_ExpenseDeleteMultiple):
    n_rows = 1
    reference_steps = 5
    tags = ("expense", "deletion")

    def reference_solution(self) -> list[PlanStep]:
        name = self.params["targets"][0]["name"]
        return [
            open_app("Pro Expense"),
            tap(T("More", id="btn_recent_more")),
            tap(T(name, id="tv_name")),
            tap(T(desc="Delete")),
            tap(T("Confirm", id="btn_confirm")),
        ]


class ExpenseDeleteMultiple(_ExpenseDeleteMultiple):
    n_rows = 3
    reference_steps = 7


class ExpenseDeleteDuplicates(_ExpenseTask):
    """One entry appears twice (identical in every field); exactly one copy must go."""

    template = ("Delete all but one of any expenses in " + APP_NAME + " that are exact duplicates, "
                "ensuring at least one instance of each unique expense remains.")
    n_noise: ClassVar[int] = 5
    reference_steps = 5
    tags = ("expense", "deletion", "duplicates")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        target = random_expense(rng)
        return {"target": target, "noise": random_expenses(rng, cls.n_noise, {target["name"]})}

    def setup(self, device: Any) -> None:
        rows = [self.params["target"], *self.params["noise"]]
        random.Random(self.seed).shuffle(rows)
        rows.insert(rows.index(self.params["target"]) + 1, dict(self.params["target"]))
        ids = _add_rows(device, rows)
        self._duplicate_ids = [i for i, r in zip(ids, rows) if r["name"] == self.params["target"]["name"]]
        self._before = _snapshot(device)

    def verify(self, device: Any) -> bool:
        after = _snapshot(device)
        return any(after == {k: v for k, v in self._before.items() if k != dup} for dup in self._duplicate_ids)

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Pro Expense"),
            tap(T("More", id="btn_recent_more")),
            tap(T(self.params["target"]["name"], id="tv_name")),
            tap(T(desc="Delete")),
            tap(T("Confirm", id="btn_confirm")),
        ]


# ---------------------------------------------------------------- addition

_GOAL_FIELDS = (("name", "name"), ("amount", "amount_dollars"), ("category", "category_name"), ("note", "note"))
_GOAL_FIELDS_TEXT = (("name", "Name"), ("amount", "Amount"), ("category", "Category"), ("note", "Note"))


class _ExpenseAddMultiple(_ExpenseTask):
    """Enter the given expenses through the Expense Entry form; nothing else changes."""

    abstract = True
    template = "Add the following expenses into the " + APP_NAME + ":\n{rows_text}"
    n_rows: ClassVar[int] = 3
    n_noise: ClassVar[int] = 10
    tags = ("expense", "form")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        targets = random_expenses(rng, cls.n_rows)
        style = rng.choice(["csv", "text_block"])
        shown = [{**r, "amount": f"{r['amount_cents'] / 100:.2f}" if style == "csv" else format_amount(r["amount_cents"])}
                 for r in targets]
        text = rows_as_text(shown, _GOAL_FIELDS if style == "csv" else _GOAL_FIELDS_TEXT, style)  # type: ignore[arg-type]
        return {"targets": targets, "text_style": style, "rows_text": text}

    def setup(self, device: Any) -> None:
        names = {r["name"] for r in self.params["targets"]}
        _add_rows(device, random_expenses(random.Random(self.seed), self.n_noise, names))
        self._before = _snapshot(device)

    def verify(self, device: Any) -> bool:
        after = _snapshot(device)
        if any(after.get(k) != v for k, v in self._before.items()):
            return False  # an existing entry was changed or removed
        added = [v for k, v in after.items() if k not in self._before]
        if len(added) != len(self.params["targets"]):
            return False
        unmatched = list(added)
        for r in self.params["targets"]:
            hit = next((a for a in unmatched if norm(a[0]) == norm(r["name"]) and a[1] == r["amount_cents"]
                        and a[2] == r["category"] and norm(a[3]) == norm(r["note"])), None)
            if hit is None:
                return False
            unmatched.remove(hit)
        return True

    def reference_solution(self) -> list[PlanStep]:
        steps: list[PlanStep] = [open_app("Pro Expense")]
        for r in self.params["targets"]:
            # enter (the IME action) hides the keyboard so the next field is reachable in landscape
            steps += [
                tap(T(desc="Add expense")),
                type_into(T(id="edt_name"), r["name"]), enter(),
                type_into(T(id="edt_amount"), f"{r['amount_cents'] / 100:.2f}"), enter(),
                tap(T(r["category"], id="tv_category")),
                type_into(T(id="edt_note"), r["note"]), enter(),
                tap(T("Save", id="btn_save")),
            ]
        return steps


class ExpenseAddSingle(_ExpenseAddMultiple):
    n_rows = 1
    reference_steps = 10


class ExpenseAddMultiple(_ExpenseAddMultiple):
    n_rows = 3
    reference_steps = 28
