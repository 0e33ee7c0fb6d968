"""Broccoli recipe tasks (AndroidWorld: RecipeAddSingleRecipe, RecipeAddMultipleRecipes,
RecipeDeleteSingleRecipe, RecipeDeleteMultipleRecipes, RecipeDeleteDuplicateRecipes).

RecipeDeleteMultipleRecipes is the paper's case study 3 (Figure 11): delete three
recipes through each recipe's overflow menu and the app's "Delete this recipe?"
dialog. Rows are plain dicts; verifiers compare the app's recipes before and after.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar, Collection

from benchmark import data
from benchmark.apps.recipes import RecipesApp, RecipesData
from benchmark.plan import PlanStep, T, back, enter, open_app, tap, type_into
from benchmark.tasks._rows import norm, rows_as_text
from benchmark.tasks.base import Task

FIELDS = ("title", "description", "servings", "preparation_time", "ingredients", "directions")


def _recipes(device: Any) -> RecipesData:
    return device.app(RecipesApp.package).data


def random_recipe(rng: random.Random, exclude: Collection[str] = ()) -> dict[str, str]:
    """A recipe from the pool (title not in ``exclude``) with a random description,
    servings and preparation time, as AndroidWorld varies them."""
    pool = data.table("recipe_pool")
    while True:
        base = rng.choice(pool["recipes"])
        if base["title"] not in exclude:
            return {
                "title": base["title"],
                "description": rng.choice(pool["descriptions"]),
                "servings": rng.choice(pool["servings"]),
                "preparation_time": rng.choice(pool["prep_times"]),
                "ingredients": ", ".join(base["ingredients"]),
                "directions": base["directions"],
            }


def random_recipes(rng: random.Random, n: int, exclude: Collection[str] = ()) -> list[dict[str, str]]:
    taken = set(exclude)
    rows = []
    for _ in range(n):
        r = random_recipe(rng, taken)
        taken.add(r["title"])
        rows.append(r)
    return rows


def _add_rows(device: Any, rows: list[dict[str, str]]) -> list[int]:
    book = _recipes(device)
    return [book.add(**r).id for r in rows]


def _snapshot(device: Any) -> dict[int, tuple[str, ...]]:
    return {r.id: tuple(getattr(r, f) for f in FIELDS) for r in _recipes(device).recipes}


def _list_position(title: str, index: int) -> tuple[str, int]:
    """Where the recipe list puts a recipe (alphabetical, then creation order)."""
    return (title.casefold(), index)


def _delete_via_menu(title: str) -> list[PlanStep]:
    """Open the recipe, then More options > Delete > confirm (the app's own dialog)."""
    return [
        tap(T(title, id="card_text_view_title")),
        tap(T(desc="More options")),
        tap(T("Delete", id="android:id/title")),
        tap(T("Delete", id="android:id/button1")),
    ]


class _RecipeTask(Task):
    abstract = True
    apps = (RecipesApp.package,)

    def __init__(self, params: dict[str, Any], seed: int = 0):
        super().__init__(params, seed)
        self._before: dict[int, tuple[str, ...]] = {}


# ---------------------------------------------------------------- deletion


class _RecipeDeleteMultipleRecipes(_RecipeTask):
    abstract = True
    template = "Delete the following recipes from Broccoli app: {titles}."
    n_rows: ClassVar[int] = 3
    n_noise: ClassVar[int] = 7
    tags: ClassVar[tuple[str, ...]] = ("recipes", "deletion")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        targets = random_recipes(rng, cls.n_rows)
        return {"targets": targets, "titles": ", ".join(r["title"] for r in targets)}

    def _rows(self) -> list[dict[str, str]]:
        rng = random.Random(self.seed)
        targets = self.params["targets"]
        rows = targets + random_recipes(rng, self.n_noise, {r["title"] for r in targets})
        rng.shuffle(rows)
        return rows

    def setup(self, device: Any) -> None:
        rows = self._rows()
        ids = _add_rows(device, rows)
        titles = {r["title"] for r in self.params["targets"]}
        self._target_ids = {i for i, r in zip(ids, rows) if r["title"] in titles}
        self._before = _snapshot(device)

    def verify(self, device: Any) -> bool:
        return _snapshot(device) == {k: v for k, v in self._before.items() if k not in self._target_ids}

    def reference_solution(self) -> list[PlanStep]:
        rows = self._rows()
        titles = {r["title"] for r in self.params["targets"]}
        # in list order, so each next target is further down the (scroll-preserving) list
        ordered = sorted((_list_position(r["title"], i), r["title"]) for i, r in enumerate(rows) if r["title"] in titles)
        steps: list[PlanStep] = [open_app("Broccoli")]
        for _, title in ordered:
            steps += _delete_via_menu(title)
        return steps


class RecipeDeleteSingleRecipe(_RecipeDeleteMultipleRecipes):
    n_rows = 1
    n_noise = 5
    reference_steps = 5


class RecipeDeleteMultipleRecipes(_RecipeDeleteMultipleRecipes):
    n_rows = 3
    n_noise = 7
    reference_steps = 13
    tags = ("recipes", "deletion", "case_study_3")


class RecipeDeleteDuplicateRecipes(_RecipeTask):
    """One recipe appears twice with identical fields; exactly one copy must go."""

    template = ("Delete all but one of any recipes in the Broccoli app that are exact duplicates, "
                "ensuring at least one instance of each unique recipe remains")
    n_noise: ClassVar[int] = 5
    reference_steps = 5
    tags = ("recipes", "deletion", "duplicates")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        target = random_recipe(rng)
        return {"target": target, "noise": random_recipes(rng, cls.n_noise, {target["title"]})}

    def setup(self, device: Any) -> None:
        rows = [self.params["target"], *self.params["noise"]]
        random.Random(self.seed).shuffle(rows)
        rows.append(dict(self.params["target"]))  # the copy is created later
        ids = _add_rows(device, rows)
        self._duplicate_ids = [i for i, r in zip(ids, rows) if r["title"] == self.params["target"]["title"]]
        self._before = _snapshot(device)

    def verify(self, device: Any) -> bool:
        after = _snapshot(device)
        return any(after == {k: v for k, v in self._before.items() if k != dup} for dup in self._duplicate_ids)

    def reference_solution(self) -> list[PlanStep]:
        return [open_app("Broccoli"), *_delete_via_menu(self.params["target"]["title"])]


# ---------------------------------------------------------------- addition

_GOAL_FIELDS_CSV = (("title", "title"), ("description", "description"), ("servings", "servings"),
                    ("preparation_time", "preparationTime"), ("ingredients", "ingredients"),
                    ("directions", "directions"))
_GOAL_FIELDS_TEXT = (("title", "Title"), ("description", "Description"), ("servings", "Servings"),
                     ("preparation_time", "Preparation time"), ("ingredients", "Ingredients"),
                     ("directions", "Directions"))


class _RecipeAddMultipleRecipes(_RecipeTask):
    """Create the given recipes through the New Recipe form; nothing else changes."""

    abstract = True
    template = "Add the following recipes into the Broccoli app:\n{rows_text}"
    n_rows: ClassVar[int] = 3
    n_noise: ClassVar[int] = 10
    tags: ClassVar[tuple[str, ...]] = ("recipes", "form")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        targets = random_recipes(rng, cls.n_rows)
        style = rng.choice(["csv", "text_block"])
        text = rows_as_text(targets, _GOAL_FIELDS_CSV if style == "csv" else _GOAL_FIELDS_TEXT, style)  # type: ignore[arg-type]
        return {"targets": targets, "text_style": style, "rows_text": text}

    def setup(self, device: Any) -> None:
        titles = {r["title"] for r in self.params["targets"]}
        _add_rows(device, random_recipes(random.Random(self.seed), self.n_noise, titles))
        self._before = _snapshot(device)

    def verify(self, device: Any) -> bool:
        after = _snapshot(device)
        if any(after.get(k) != v for k, v in self._before.items()):
            return False
        added = [v for k, v in after.items() if k not in self._before]
        if len(added) != len(self.params["targets"]):
            return False
        unmatched = list(added)
        for r in self.params["targets"]:
            want = tuple(norm(r[f]) for f in FIELDS)
            hit = next((a for a in unmatched if tuple(norm(x) for x in a) == want), None)
            if hit is None:
                return False
            unmatched.remove(hit)
        return True

    def reference_solution(self) -> list[PlanStep]:
        steps: list[PlanStep] = [open_app("Broccoli")]
        for r in self.params["targets"]:
            # hide the keyboard after each field (enter on single-line, back on multi-line ones)
            # so the next field can be reached even in landscape
            steps += [
                tap(T(desc="New Recipe")),
                type_into(T(id="new_title"), r["title"]), enter(),
                type_into(T(id="new_description"), r["description"]), back(),
                type_into(T(id="new_servings"), r["servings"]), enter(),
                type_into(T(id="new_preparation_time"), r["preparation_time"]), enter(),
                type_into(T(id="new_ingredients"), r["ingredients"]), back(),
                type_into(T(id="new_directions"), r["directions"]),
                tap(T("Save", id="button_save_recipe")),
            ]
            if r is not self.params["targets"][-1]:
                steps.append(back())  # saving opens the new recipe's details; return to the list
        return steps


class RecipeAddSingleRecipe(_RecipeAddMultipleRecipes):
    n_rows = 1
    reference_steps = 14


class RecipeAddMultipleRecipes(_RecipeAddMultipleRecipes):
    n_rows = 3
    reference_steps = 42
