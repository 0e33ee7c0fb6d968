"""Contacts (modelled on com.google.android.contacts): list, detail, create/edit form."""

from __future__ import annotations

from pydantic import BaseModel, Field

from benchmark.apps.base import App, UI
from benchmark.ui.widgets import (
    Screen,
    Widget,
    button,
    column,
    field_,
    icon_button,
    image,
    list_item,
    row,
    scroll,
    spacer,
    text,
    top_bar,
)


class Contact(BaseModel):
    id: int
    first: str = ""
    last: str = ""
    phone: str = ""
    company: str = ""
    email: str = ""

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}".strip() or self.phone or "(No name)"


class ContactsData(BaseModel):
    contacts: list[Contact] = Field(default_factory=list)
    next_id: int = 1

    def add(self, **fields: str) -> Contact:
        c = Contact(id=self.next_id, **fields)
        self.next_id += 1
        self.contacts.append(c)
        return c

    def by_id(self, cid: int) -> Contact | None:
        return next((c for c in self.contacts if c.id == cid), None)

    def find(self, name: str) -> list[Contact]:
        return [c for c in self.contacts if c.name.lower() == name.strip().lower()]


FORM_FIELDS = (
    ("first", "First name"),
    ("last", "Last name"),
    ("phone", "Phone"),
    ("company", "Company"),
    ("email", "Email"),
)
INPUT_TYPES = {"phone": "phone", "email": "email"}  # the keyboard each field opens


class ContactsApp(App):
    package = "com.google.android.contacts"
    label = "Contacts"
    icon = "person"
    accent = (26, 115, 232)
    order = 10
    data_model = ContactsData
    data: ContactsData

    # -- screens ----------------------------------------------------------------------
    def screen_main(self, ui: UI) -> Screen:
        people = sorted(self.data.contacts, key=lambda c: c.name.lower())
        items: list[Widget] = []
        for c in people:
            items.append(list_item(c.name, on_click=(lambda cid=c.id: ui.push("detail", cid=cid)),
                                   icon="person", id="contact_row", title_id="cliv_name_textview"))
        if not items:
            items.append(column(spacer(48), text("No contacts yet", id="empty_title", size=20, text_align="center"),
                                text("Tap + to create your first contact.", size=14, color="muted", text_align="center"), pad=24))
        return Screen(
            top=top_bar("Contacts", actions=[icon_button("search", "Search contacts", lambda: None, id="search")]),
            body=scroll(*items, id="contacts_list"),
            fab=Widget("icon_button", id="floating_action_button", desc="Create contact",
                       on_click=lambda: ui.push("edit", cid=None), style={"icon": "add"}),
            activity=".activities.PeopleActivity",
        )

    def screen_edit(self, ui: UI) -> Screen:
        cid = ui.params.get("cid")
        editing = self.data.by_id(cid) if cid is not None else None
        if editing is not None and not ui.get("_loaded", False):
            for key, _ in FORM_FIELDS:
                ui.set(key, getattr(editing, key))
            ui.set("_loaded", True)

        def save() -> None:
            values = {key: str(ui.get(key, "")).strip() for key, _ in FORM_FIELDS}
            if not any(values.values()):
                ui.toast("Contact is empty")
                ui.pop()
                return
            if editing is not None:
                for k, v in values.items():
                    setattr(editing, k, v)
                ui.pop()
            else:
                c = self.data.add(**values)
                ui.replace("detail", cid=c.id)
            ui.toast("Contact saved")

        fields = [field_(key, hint, id=f"{key}_name" if key in ("first", "last") else key, label_space=True,
                         input_type=INPUT_TYPES.get(key, "text"))
                  for key, hint in FORM_FIELDS]
        return Screen(
            top=top_bar(
                "Edit contact" if editing else "Create contact",
                back=ui.pop,
                actions=[button("Save", save, id="menu_save", variant="filled")],
            ),
            body=scroll(
                column(image("person", size=96, circle=True, id="photo", desc="Add contact photo"),
                       button("Add picture", lambda: None, id="add_photo", variant="text"), align="center", pad=4, gap=4),
                row(image("phone", size=24, color="muted"),
                    column(text("Saving to", size=13, color="muted"), text("Device", id="account_name", size=16), weight=1),
                    id="account_container", pad=8, gap=16),
                text("Contacts are saved to this device only. Sign in to an account to back up your contacts, keep them in sync and restore them later.",
                     id="account_banner", size=14, color="muted"),
                *fields,
                id="editor_list", pad=16, gap=8,
            ),
            activity=".activities.ContactEditorActivity",
        )

    def screen_detail(self, ui: UI) -> Screen:
        c = self.data.by_id(ui.params["cid"])
        if c is None:
            return Screen(top=top_bar("Contact", back=ui.pop), body=text("Contact not found", id="empty"))

        def delete() -> None:
            self.data.contacts = [x for x in self.data.contacts if x.id != c.id]
            ui.pop_to("main")
            ui.toast("Contact deleted")

        info: list[Widget] = []
        if c.phone:
            info.append(list_item(c.phone, "Mobile", icon="phone", id="phone_row", title_id="header"))
        if c.email:
            info.append(list_item(c.email, "Email", icon="message", id="email_row", title_id="header"))
        if c.company:
            info.append(list_item(c.company, "Company", icon="info", id="company_row", title_id="header"))
        dialog = None
        if ui.dialog_info is not None and ui.dialog_info["kind"] == "delete":
            dialog = ui.confirm("Delete contact?", f"{c.name} will be permanently deleted from this device.", "Delete", delete)
        return Screen(
            top=top_bar("", back=ui.pop, actions=[
                icon_button("edit", "Edit contact", lambda: ui.push("edit", cid=c.id), id="menu_edit"),
                icon_button("delete", "Delete", lambda: ui.open_dialog("delete"), id="menu_delete"),
            ]),
            body=scroll(
                column(image("person", size=96, circle=True, desc="Contact photo"), align="center", pad=8),
                text(c.name, id="large_title", size=28, text_align="center"),
                row(button("Call", None, variant="tonal", id="call"), button("Text", None, variant="tonal", id="text"),
                    justify="center"),
                *info,
                id="detail_list", pad=16, gap=12,
            ),
            dialog=dialog,
            activity=".activities.QuickContactActivity",
        )
