"""Broccoli (modelled on com.flauschcode.broccoli, the recipe app AndroidWorld uses).

The recipe list opens a recipe's details; the details' overflow menu ("More
options") has Share, Edit and Delete, and Delete asks "Delete this recipe?" in the
app's AlertDialog. The "New Recipe" button opens the create/edit form: title,
description, source, servings, preparation time, ingredients and directions.
"""

from __future__ import annotations

from typing import Callable, Optional

from pydantic import BaseModel, Field

from benchmark.apps.base import App, UI
from benchmark.ui.widgets import (
    Screen,
    Widget,
    button,
    card,
    column,
    field_,
    icon_button,
    image,
    popup_menu,
    row,
    scroll,
    spacer,
    text,
    top_bar,
)

# (state key, hint, resource id, multi-line) — the form's EditTexts, top to bottom
FORM_FIELDS: tuple[tuple[str, str, str, bool], ...] = (
    ("title", "Title", "new_title", False),
    ("description", "Description", "new_description", True),
    ("source", "Source", "new_source", False),
    ("servings", "Servings", "new_servings", False),
    ("preparation_time", "Preparation time", "new_preparation_time", False),
    ("ingredients", "Ingredients", "new_ingredients", True),
    ("directions", "Directions", "new_directions", True),
)


class Recipe(BaseModel):
    id: int
    title: str
    description: str = ""
    source: str = ""
    servings: str = ""
    preparation_time: str = ""
    ingredients: str = ""
    directions: str = ""
    favorite: bool = False


class RecipesData(BaseModel):
    recipes: list[Recipe] = Field(default_factory=list)
    next_id: int = 1

    def add(self, title: str, **fields: str) -> Recipe:
        r = Recipe(id=self.next_id, title=title, **fields)
        self.next_id += 1
        self.recipes.append(r)
        return r

    def by_id(self, rid: int) -> Optional[Recipe]:
        return next((r for r in self.recipes if r.id == rid), None)

    def find(self, title: str) -> list[Recipe]:
        return [r for r in self.recipes if r.title.strip().lower() == title.strip().lower()]

    def delete(self, rid: int) -> bool:
        before = len(self.recipes)
        self.recipes = [r for r in self.recipes if r.id != rid]
        return len(self.recipes) < before

    def ordered(self) -> list[Recipe]:
        """The list order: alphabetical by title, then by creation (Broccoli sorts by title)."""
        return sorted(self.recipes, key=lambda r: (r.title.casefold(), r.id))


class RecipesApp(App):
    package = "com.flauschcode.broccoli"
    label = "Broccoli"
    aliases = ("broccoli app", "broccoli recipe app", "recipes")
    icon = "recipe"
    accent = (104, 159, 56)
    order = 45
    data_model = RecipesData
    data: RecipesData

    # -- list ---------------------------------------------------------------------------
    def screen_main(self, ui: UI) -> Screen:
        searching = bool(ui.get("searching", False))
        query = str(ui.get("query", "")).strip().casefold() if searching else ""
        shown = [r for r in self.data.ordered()
                 if not query or any(query in x.casefold() for x in (r.title, r.description, r.ingredients))]
        cards: list[Widget] = []
        for r in shown:
            cards.append(card(
                row(
                    _photo("card_image", 40, pad=12),
                    column(
                        text(r.title, id="card_text_view_title", size=18, max_lines=2),
                        text(r.description, id="card_text_view_description", size=14, color="muted", max_lines=2)
                        if r.description else None,
                        gap=4, weight=1,
                    ),
                    gap=12, align="center",
                ),
                id="recipe_card", on_click=(lambda rid=r.id: ui.push("detail", rid=rid)), pad=8,
            ))
        if not cards:
            cards.append(column(
                spacer(48),
                text("No recipes found.", id="recipes_empty", size=20, text_align="center"),
                None if searching else text("Create your first recipe and start your collection!", size=14,
                                            color="muted", text_align="center"),
                pad=24, gap=8,
            ))
        cards.append(spacer(72))  # room above the FAB
        if searching:
            bar = Widget("top_bar", id="toolbar_recipes", style={"pad": 4, "gap": 4, "min_h": 64, "align": "center"},
                         children=[icon_button("back", "Collapse", lambda: self._close_search(ui), id="navigate_up"),
                                   field_("query", "Search", id="search_src_text", weight=1, ime_action="search")])
        else:
            bar = top_bar("All recipes", id="toolbar_recipes",
                          actions=[icon_button("search", "Search", lambda: ui.set("searching", True), id="action_search")])
        return Screen(
            top=bar,
            body=scroll(*cards, id="recycler_view", pad=8, gap=8),
            fab=Widget("icon_button", id="fab_recipes", desc="New Recipe", on_click=lambda: ui.push("edit", rid=None),
                       style={"icon": "add"}),
            activity=".MainActivity",
        )

    # -- details ---------------------------------------------------------------------------
    def screen_detail(self, ui: UI) -> Screen:
        r = self.data.by_id(ui.params["rid"])
        if r is None:
            return Screen(top=top_bar("Recipe", back=ui.pop), body=text("No recipes found.", id="recipes_empty"))

        def delete() -> None:
            self.data.delete(r.id)
            ui.pop()
            ui.toast("The recipe has been deleted.")

        def toggle_favorite() -> None:
            r.favorite = not r.favorite

        def menu_action(action: Callable[[], object]) -> Callable[[], None]:
            def run() -> None:
                ui.close_dialog()
                action()
            return run

        overlay: Optional[Widget] = None
        info = ui.dialog_info
        if info is not None and info["kind"] == "menu":
            overlay = popup_menu([
                ("Share", menu_action(lambda: None)),
                ("Share as file", menu_action(lambda: None)),
                ("Edit", menu_action(lambda: ui.push("edit", rid=r.id))),
                ("Delete", menu_action(lambda: ui.open_dialog("delete"))),
            ])
        elif info is not None and info["kind"] == "delete":
            overlay = ui.confirm("", "Delete this recipe?", "Delete", delete)

        meta = [x for x in (r.servings, r.preparation_time) if x]
        body: list[Optional[Widget]] = [
            _photo("details_image", 64, pad=40, desc="Recipe photo"),
            text(r.title, id="details_title", size=24),
            row(*[text(x, size=14, color="muted") for x in meta], gap=24, id="details_meta") if meta else None,
            text(r.description, id="details_description", size=15) if r.description else None,
            text(r.source, id="details_source", size=14, color="accent") if r.source else None,
        ]
        if r.ingredients:
            body.append(text("Ingredients", size=18, bold=True))
            body.append(column(*[text("·  " + line.strip(), size=15) for line in _lines(r.ingredients)],
                               id="details_ingredients", gap=4))
        if r.directions:
            body.append(text("Directions", size=18, bold=True))
            body.append(column(*[text(f"{i}.  {line.strip()}", size=15) for i, line in enumerate(_lines(r.directions), 1)],
                               id="details_directions", gap=6))
        return Screen(
            top=top_bar("", back=ui.pop, id="toolbar", actions=[
                icon_button("star", "Remove from favorites" if r.favorite else "Mark as favorite", toggle_favorite,
                            id="action_details_like"),
                icon_button("more", "More options", lambda: ui.open_dialog("menu"), id="overflow"),
            ]),
            body=scroll(*body, id="scroll_view", pad=16, gap=12),
            dialog=overlay,
            activity=".recipe.details.RecipeDetailsActivity",
        )

    # -- create / edit ------------------------------------------------------------------------
    def screen_edit(self, ui: UI) -> Screen:
        rid = ui.params.get("rid")
        editing = self.data.by_id(rid) if rid is not None else None
        if editing is not None and not ui.get("_loaded", False):
            for key, *_ in FORM_FIELDS:
                ui.set(key, getattr(editing, key))
            ui.set("_loaded", True)

        def save() -> None:
            values = {key: str(ui.get(key, "")).strip() for key, *_ in FORM_FIELDS}
            if not values["title"]:
                ui.toast("Please add a title.")
                return
            if editing is not None:
                for k, v in values.items():
                    setattr(editing, k, v)
                ui.pop()
            else:
                r = self.data.add(**values)
                ui.replace("detail", rid=r.id)
            ui.toast("The recipe has been saved.")

        overlay = None
        if ui.dialog_info is not None and ui.dialog_info["kind"] == "discard":
            overlay = ui.confirm("", "Discard changes?", "Discard", ui.pop)
        return Screen(
            top=top_bar("Edit Recipe" if editing else "New Recipe", back=lambda: self._leave_form(ui), id="toolbar",
                        actions=[button("Save", save, id="button_save_recipe", variant="text")]),
            body=scroll(
                _photo("new_image", 48, pad=24, desc="Recipe photo"),
                *[field_(key, hint, id=rid_, multiline=multi, min_lines=2) for key, hint, rid_, multi in FORM_FIELDS],
                id="edit_scroll_view", pad=16, gap=14,
            ),
            dialog=overlay,
            activity=".recipe.crud.CreateAndEditRecipeActivity",
        )

    def _dirty(self, ui: UI) -> bool:
        editing = self.data.by_id(ui.params["rid"]) if ui.params.get("rid") is not None else None
        for key, *_ in FORM_FIELDS:
            now = str(ui.get(key, "")).strip()
            if now != (getattr(editing, key) if editing else ""):
                return True
        return False

    def _leave_form(self, ui: UI) -> None:
        if self._dirty(ui):
            ui.open_dialog("discard")
        else:
            ui.pop()

    @staticmethod
    def _close_search(ui: UI) -> None:
        ui.set("searching", False)
        ui.set("query", "")

    def on_back(self, ui: UI) -> bool:
        if super().on_back(ui):
            return True
        if ui.route.name == "main" and ui.get("searching", False):
            self._close_search(ui)
            return True
        if ui.route.name == "edit" and self._dirty(ui):
            ui.open_dialog("discard")
            return True
        return False


def _photo(wid: str, icon_size: float, *, pad: float, desc: str = "") -> Widget:
    """The recipe-photo placeholder Broccoli shows when a recipe has no image."""
    return column(image("recipe", size=icon_size, color="muted"), id=wid, desc=desc, pad=pad, align="center",
                  bg="surface2", radius=8)


def _lines(value: str) -> list[str]:
    return [ln for ln in value.splitlines() if ln.strip()] or [value]
