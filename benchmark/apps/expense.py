"""Pro Expense (modelled on com.arduia.expense, the expense tracker AndroidWorld uses).

Home shows this month's total and the recent entries; "More" opens the Expense
Logs (every entry, grouped by day) where a long press starts multi-selection with
a delete action in the top bar. Tapping an entry opens its detail with Edit and
Delete (both deletions ask for confirmation in the app's own sheet). The "+"
button opens the Expense Entry form: name, amount, a category picker, note, date.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable, Optional

from pydantic import BaseModel, Field

from benchmark.apps.base import App, UI
from benchmark.ui.widgets import (
    Screen,
    Widget,
    button,
    card,
    column,
    dialog,
    field_,
    grid,
    icon_button,
    image,
    list_item,
    row,
    scroll,
    spacer,
    text,
    top_bar,
)

# The app's built-in categories, in the order its picker shows them.
CATEGORIES: tuple[str, ...] = (
    "Others", "Income", "Food", "Housing", "Social", "Entertainment",
    "Transportation", "Clothes", "Health Care", "Education", "Donation",
)
CATEGORY_ICONS: dict[str, str] = {
    "Others": "apps", "Income": "wallet", "Food": "recipe", "Housing": "home", "Social": "person",
    "Entertainment": "star", "Transportation": "plane", "Clothes": "shield", "Health Care": "info",
    "Education": "note", "Donation": "share",
}
RECENT_COUNT = 5


class Expense(BaseModel):
    id: int
    name: str
    amount_cents: int
    category: str = "Others"
    note: str = ""
    date: dt.date
    created: float = 0.0  # simulated seconds since the clock's epoch

    @property
    def amount(self) -> str:
        return format_amount(self.amount_cents)


class ExpenseData(BaseModel):
    expenses: list[Expense] = Field(default_factory=list)
    next_id: int = 1

    def add(self, name: str, amount_cents: int, category: str, date: dt.date, note: str = "", created: float = 0.0) -> Expense:
        if category not in CATEGORIES:
            raise ValueError(f"category={category!r} is not a Pro Expense category; expected one of {', '.join(CATEGORIES)}")
        e = Expense(id=self.next_id, name=name, amount_cents=amount_cents, category=category, note=note, date=date, created=created)
        self.next_id += 1
        self.expenses.append(e)
        return e

    def by_id(self, eid: int) -> Optional[Expense]:
        return next((e for e in self.expenses if e.id == eid), None)

    def find(self, name: str) -> list[Expense]:
        return [e for e in self.expenses if e.name.strip().lower() == name.strip().lower()]

    def delete(self, ids: set[int]) -> int:
        before = len(self.expenses)
        self.expenses = [e for e in self.expenses if e.id not in ids]
        return before - len(self.expenses)

    def ordered(self) -> list[Expense]:
        """Newest first: by date, then by entry order (what the lists show)."""
        return sorted(self.expenses, key=lambda e: (e.date, e.id), reverse=True)


def format_amount(cents: int) -> str:
    return f"${cents / 100:,.2f}"


def parse_amount(value: str) -> Optional[int]:
    """'12.5', '$1,200.00', '12,50' -> cents; None if it is not a positive amount."""
    s = value.strip().replace("$", "").replace(" ", "")
    if "," in s and "." not in s and len(s.rsplit(",", 1)[1]) in (1, 2):
        s = s.replace(",", ".")  # decimal comma
    s = s.replace(",", "")
    try:
        cents = round(float(s) * 100)
    except ValueError:
        return None
    return cents if cents > 0 else None


class ExpenseApp(App):
    package = "com.arduia.expense"
    label = "Pro Expense"
    aliases = ("pro expense", "expense", "expenses")
    icon = "wallet"
    accent = (0, 121, 107)
    order = 40
    data_model = ExpenseData
    data: ExpenseData

    # -- helpers ----------------------------------------------------------------------
    def _day_label(self, ui: UI, d: dt.date) -> str:
        today = ui.now().date()
        if d == today:
            return "Today"
        if d == today - dt.timedelta(days=1):
            return "Yesterday"
        return ui.fmt_date(d)

    def _row(self, ui: UI, e: Expense, *, on_click: Callable[[], Any],
             on_long_click: Optional[Callable[[], Any]] = None, selected: bool = False) -> Widget:
        return list_item(
            e.name, self._day_label(ui, e.date) + (f" · {e.category}" if e.category else ""),
            on_click=on_click, on_long_click=on_long_click, id="cd_expense",
            icon="check" if selected else CATEGORY_ICONS.get(e.category, "circle"),
            trailing=text(e.amount, id="tv_amount", size=16, bold=True), selected=selected,
            title_id="tv_name", subtitle_id="tv_date",
        )

    @staticmethod
    def _sheet(title: str, message: str, buttons: list[Widget]) -> Widget:
        """The app's own confirmation sheet (DeleteConfirmFragment): not a framework AlertDialog."""
        return Widget(
            "card", id="design_bottom_sheet", cls="android.widget.FrameLayout",
            children=[text(title, id="tv_delete_item", size=20),
                      card(text(message, id="tv_delete_description", size=16), id="cv_description_bg", bg="surface2"),
                      row(*buttons, gap=8, justify="end")],
            style={"pad": 24, "gap": 16, "surface": "dialog", "placement": "bottom", "scrim": True},
        )

    def _delete_sheet(self, ui: UI, ids: set[int], after: Callable[[], Any]) -> Widget:
        n = len(ids)

        def confirm() -> None:
            ui.close_dialog()
            self.data.delete(ids)
            ui.toast("Item Deleted" if n == 1 else "Items Deleted")
            after()

        return self._sheet("Delete Items", f"{n} item{'' if n == 1 else 's'} will be deleted!", [
            button("Cancel", ui.close_dialog, id="btn_cancel", variant="text"),
            button("Confirm", confirm, id="btn_confirm"),
        ])

    @staticmethod
    def _date_dialog(ui: UI) -> Widget:
        """A compact day picker (fits a landscape screen): previous / next day, OK."""
        info = ui.dialog_info or {}
        picked = dt.date.fromisoformat(info["value"])

        def shift(days: int) -> None:
            ui.open_dialog("date", value=(picked + dt.timedelta(days=days)).isoformat())

        def ok() -> None:
            ui.set("date", picked.isoformat())
            ui.close_dialog()

        return dialog("Date", "", [
            button("Cancel", ui.close_dialog, id="android:id/button2", variant="text"),
            button("OK", ok, id="android:id/button1", variant="text"),
        ], body=[row(icon_button("left", "Previous day", lambda: shift(-1), id="btn_prev_day"),
                     text(ui.fmt_date(picked), id="tv_picked_date", size=18, weight=1, text_align="center"),
                     icon_button("right", "Next day", lambda: shift(1), id="btn_next_day"), align="center")])

    # -- screens ----------------------------------------------------------------------
    def screen_main(self, ui: UI) -> Screen:
        today = ui.now().date()
        month = [e for e in self.data.expenses if (e.date.year, e.date.month) == (today.year, today.month)]
        total = sum(e.amount_cents for e in month if e.category != "Income")
        recent = self.data.ordered()[:RECENT_COUNT]
        summary = card(
            text("Expenses this month", id="tv_total_label", size=14, color="on_accent"),
            text(format_amount(total), id="tv_value", size=32, color="on_accent"),
            text(f"{len(month)} entries in {today.strftime('%B %Y')}", id="tv_entries", size=14, color="on_accent"),
            id="cd_value", bg="accent", radius=16, gap=4,
        )
        rows: list[Widget] = [self._row(ui, e, on_click=(lambda eid=e.id: ui.push("detail", eid=eid))) for e in recent]
        if not rows:
            rows.append(text("No spending logged yet this month", id="tv_no_data", size=16, color="muted", text_align="center", vpad=24))
        return Screen(
            top=top_bar("Pro Expense", id="tb_home"),
            body=scroll(
                column(summary, pad=16),
                row(text("Recent", id="tv_recent", size=18, weight=1),
                    button("More", lambda: ui.push("logs"), id="btn_recent_more", variant="text"),
                    pad=8, align="center"),
                *rows,
                spacer(80),
                id="rv_recent",
            ),
            fab=Widget("icon_button", id="fb_main_add", desc="Add expense", on_click=lambda: ui.push("entry", eid=None),
                       style={"icon": "add"}),
            activity=".ui.MainActivity",
        )

    def screen_logs(self, ui: UI) -> Screen:
        selected: list[int] = list(ui.get("selected", []))
        selecting = bool(selected)

        def toggle(eid: int) -> None:
            cur = list(ui.get("selected", []))
            if eid in cur:
                cur.remove(eid)
            else:
                cur.append(eid)
            ui.set("selected", cur)

        def open_or_toggle(eid: int) -> None:
            if ui.get("selected", []):
                toggle(eid)
            else:
                ui.push("detail", eid=eid)

        def start_selection(eid: int) -> None:
            if eid not in ui.get("selected", []):
                toggle(eid)

        items: list[Widget] = []
        ordered = self.data.ordered()
        total = sum(e.amount_cents for e in ordered if e.category != "Income")
        items.append(column(text(f"{len(ordered)} entries · Total {format_amount(total)}", id="tv_total", size=14,
                                 color="muted"), pad=16))
        day: Optional[dt.date] = None
        for e in ordered:
            if e.date != day:
                day = e.date
                items.append(column(text(self._day_label(ui, day), id="tv_date_header", size=14, color="accent", bold=True),
                                    pad=12))
            items.append(self._row(ui, e, on_click=(lambda eid=e.id: open_or_toggle(eid)),
                                   on_long_click=(lambda eid=e.id: start_selection(eid)), selected=e.id in selected))
        if not ordered:
            items.append(text("No Data", id="tv_no_data", size=16, color="muted", text_align="center", vpad=48))
        items.append(spacer(80))

        overlay = None
        if ui.dialog_info is not None and ui.dialog_info["kind"] == "delete":
            overlay = self._delete_sheet(ui, set(selected), lambda: ui.set("selected", []))
        if selecting:
            bar = top_bar(
                f"{len(selected)} selected", back=lambda: ui.set("selected", []), id="tb_expense",
                actions=[icon_button("check", "Select All", lambda: ui.set("selected", [e.id for e in ordered]), id="select"),
                         icon_button("delete", "Delete", lambda: ui.open_dialog("delete"), id="delete")],
            )
        else:
            bar = top_bar("Expense Logs", back=ui.pop, id="tb_expense")
        return Screen(top=bar, body=scroll(*items, id="rv_expense"), dialog=overlay, activity=".ui.MainActivity")

    def on_back(self, ui: UI) -> bool:
        if super().on_back(ui):
            return True
        if ui.route.name == "logs" and ui.get("selected", []):
            ui.set("selected", [])  # back leaves selection mode first
            return True
        return False

    def screen_detail(self, ui: UI) -> Screen:
        e = self.data.by_id(ui.params["eid"])
        if e is None:
            return Screen(top=top_bar("Expense Detail", back=ui.pop), body=text("No Data", id="tv_no_data"))

        def info(label: str, value: str, vid: str) -> Widget:
            return column(text(label, size=13, color="muted"), text(value or "-", id=vid, size=16), pad=4, gap=2)

        overlay = None
        if ui.dialog_info is not None and ui.dialog_info["kind"] == "delete":
            overlay = self._delete_sheet(ui, {e.id}, ui.pop)
        return Screen(
            top=top_bar("Expense Detail", back=ui.pop, id="tb_detail", actions=[
                icon_button("edit", "Edit", lambda: ui.push("entry", eid=e.id), id="btn_edit_menu"),
                icon_button("delete", "Delete", lambda: ui.open_dialog("delete"), id="btn_delete"),
            ]),
            body=scroll(
                card(
                    row(image(CATEGORY_ICONS.get(e.category, "circle"), size=48, circle=True, id="imv_category"),
                        text(e.name, id="tv_name_value", size=20, weight=1), gap=16, align="center"),
                    info("Amount", e.amount, "tv_amount_value"),
                    info("Category", e.category, "tv_category_value"),
                    info("Date", ui.fmt_date(e.date), "tv_date_value"),
                    info("Note", e.note, "tv_note_value"),
                    id="cd_info", gap=4,
                ),
                button("Edit", lambda: ui.push("entry", eid=e.id), id="btn_edit", fill=True),
                id="sv_detail", pad=16, gap=16,
            ),
            dialog=overlay,
            activity=".ui.MainActivity",
        )

    def screen_entry(self, ui: UI) -> Screen:
        eid = ui.params.get("eid")
        editing = self.data.by_id(eid) if eid is not None else None
        if not ui.get("_loaded", False):
            if editing is not None:
                ui.set("name", editing.name)
                ui.set("amount", f"{editing.amount_cents / 100:.2f}")
                ui.set("note", editing.note)
                ui.set("category", editing.category)
                ui.set("date", editing.date.isoformat())
            else:
                ui.set("category", "Others")
                ui.set("date", ui.now().date().isoformat())
            ui.set("_loaded", True)
        chosen = ui.get("category", "Others")
        date = dt.date.fromisoformat(ui.get("date"))

        def save() -> None:
            name = str(ui.get("name", "")).strip()
            if not name:
                ui.toast("Name is Empty")
                return
            raw = str(ui.get("amount", "")).strip()
            if not raw:
                ui.toast("Cost is Empty")
                return
            cents = parse_amount(raw)
            if cents is None:
                ui.toast("Invalid Amount")
                return
            note = str(ui.get("note", "")).strip()
            if editing is not None:
                editing.name, editing.amount_cents, editing.category, editing.note, editing.date = name, cents, chosen, note, date
                ui.toast("Data Updated!")
            else:
                self.data.add(name, cents, chosen, date, note=note, created=self.device.clock.elapsed)
                ui.toast("Saved")
            ui.pop()

        columns = max(3, min(6, int(self.device.metrics().width_dp // 100)))
        cells = [
            column(
                image(CATEGORY_ICONS.get(c, "circle"), size=28, color="on_accent" if c == chosen else "accent"),
                text(c, id="tv_category", size=12, max_lines=1, text_align="center",
                     color="on_accent" if c == chosen else "text"),
                id="category_item", on_click=(lambda c=c: ui.set("category", c)), pad=6, gap=4, align="center",
                bg="accent" if c == chosen else "surface", radius=12,
            )
            for c in CATEGORIES
        ]
        for cell, c in zip(cells, CATEGORIES):
            cell.state["selected"] = c == chosen

        overlay = self._date_dialog(ui) if ui.dialog_info is not None and ui.dialog_info["kind"] == "date" else None

        return Screen(
            top=top_bar("Expense Entry", id="tb_entry",
                        actions=[icon_button("close", "Close", ui.pop, id="btn_entry_close")]),
            body=scroll(
                field_("name", "Name", id="edt_name"),
                field_("amount", "Amount", id="edt_amount", input_type="number"),
                text("Category", id="tv_category_label", size=14, color="muted"),
                grid(cells, columns, id="rv_category", cell_h=72, gap=8),
                field_("note", "Note", id="edt_note"),
                row(image("calendar", size=24, color="muted"), text(ui.fmt_date(date), id="tv_date", size=16, weight=1),
                    id="btn_date", on_click=lambda: ui.open_dialog("date", value=date.isoformat()), pad=12, gap=16,
                    align="center"),
                button("Update" if editing else "Save", save, id="btn_save", fill=True),
                id="sv_entry", pad=16, gap=14,
            ),
            dialog=overlay,
            activity=".ui.MainActivity",
        )
