"""Simple SMS Messenger (com.simplemobiletools.smsmessenger): conversation list,
thread view with a compose bar, new conversation by number or contact name.

Messages live in ``app.data`` (an inbox / sent table like Android's
``content://sms``); every send is stamped with the simulated time.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable, Literal, Optional

from pydantic import BaseModel, Field

from benchmark.apps.base import App, UI
from benchmark.apps.contacts import Contact
from benchmark.sim.system import Notification
from benchmark.ui.widgets import (
    Screen,
    Widget,
    card,
    column,
    field_,
    icon_button,
    image,
    row,
    scroll,
    spacer,
    text,
    top_bar,
)

CONTACTS_PACKAGE = "com.google.android.contacts"


def digits(number: str) -> str:
    return "".join(ch for ch in number if ch.isdigit())


def number_key(number: str) -> str:
    """What identifies a phone number: its last 10 digits (so +1 555… equals 555…)."""
    d = digits(number)
    return d[-10:] if len(d) >= 10 else d


def same_number(a: str, b: str) -> bool:
    ka, kb = number_key(a), number_key(b)
    return bool(ka) and ka == kb


class Sms(BaseModel):
    """One row of the SMS table: ``kind`` is inbox (received) or sent."""

    id: int
    address: str
    body: str
    date: dt.datetime
    kind: Literal["inbox", "sent"]
    read: bool = True


class Conversation(BaseModel):
    key: str
    address: str
    last: Sms
    unread: int


class SmsData(BaseModel):
    messages: list[Sms] = Field(default_factory=list)
    next_id: int = 1

    def _add(self, address: str, body: str, date: dt.datetime, kind: Literal["inbox", "sent"], read: bool) -> Sms:
        if not address.strip():
            raise ValueError(f"address={address!r} is empty; expected a phone number")
        m = Sms(id=self.next_id, address=address.strip(), body=body, date=date, kind=kind, read=read)
        self.next_id += 1
        self.messages.append(m)
        return m

    def receive(self, address: str, body: str, date: dt.datetime, read: bool = False) -> Sms:
        return self._add(address, body, date, "inbox", read)

    def send(self, address: str, body: str, date: dt.datetime) -> Sms:
        return self._add(address, body, date, "sent", True)

    def sent(self, to: Optional[str] = None) -> list[Sms]:
        """Sent messages, newest first (like ``content://sms/sent``)."""
        rows = [m for m in self.messages if m.kind == "sent" and (to is None or same_number(m.address, to))]
        return sorted(rows, key=lambda m: (m.date, m.id), reverse=True)

    def inbox(self) -> list[Sms]:
        rows = [m for m in self.messages if m.kind == "inbox"]
        return sorted(rows, key=lambda m: (m.date, m.id), reverse=True)

    def thread(self, address: str) -> list[Sms]:
        """A conversation's messages, oldest first."""
        rows = [m for m in self.messages if same_number(m.address, address)]
        return sorted(rows, key=lambda m: (m.date, m.id))

    def conversations(self) -> list[Conversation]:
        """One entry per correspondent, most recent activity first."""
        groups: dict[str, list[Sms]] = {}
        for m in self.messages:
            groups.setdefault(number_key(m.address), []).append(m)
        out = []
        for key, rows in groups.items():
            last = max(rows, key=lambda m: (m.date, m.id))
            out.append(Conversation(key=key, address=last.address, last=last,
                                    unread=sum(1 for m in rows if m.kind == "inbox" and not m.read)))
        return sorted(out, key=lambda c: (c.last.date, c.last.id), reverse=True)

    def delete_thread(self, address: str) -> int:
        before = len(self.messages)
        self.messages = [m for m in self.messages if not same_number(m.address, address)]
        return before - len(self.messages)

    def mark_read(self, address: str) -> None:
        for m in self.messages:
            if m.kind == "inbox" and same_number(m.address, address):
                m.read = True


class SmsMessengerApp(App):
    package = "com.simplemobiletools.smsmessenger"
    label = "SMS Messenger"
    aliases = ("Simple SMS Messenger", "Messages")
    icon = "message"
    accent = (33, 150, 243)
    order = 20
    data_model = SmsData
    data: SmsData

    def on_back(self, ui: UI) -> bool:
        if super().on_back(ui):
            return True
        if ui.get("selected", None) is not None:  # leave selection mode first
            ui.set("selected", None)
            return True
        return False

    # -- contacts (read from the Contacts app, when installed) ----------------------------
    def _contacts(self) -> list[Contact]:
        app = self.device.apps.get(CONTACTS_PACKAGE)
        return list(getattr(app.data, "contacts", [])) if app is not None else []

    def contact_for_number(self, number: str) -> Optional[Contact]:
        return next((c for c in self._contacts() if c.phone and same_number(c.phone, number)), None)

    def contact_named(self, name: str) -> Optional[Contact]:
        wanted = " ".join(name.split()).lower()
        return next((c for c in self._contacts() if c.name.lower() == wanted), None)

    def display_name(self, address: str) -> str:
        c = self.contact_for_number(address)
        return c.name if c is not None else address

    def resolve_recipient(self, typed: str) -> Optional[str]:
        """A typed contact name becomes that contact's number; a number stays itself."""
        typed = typed.strip()
        if not typed:
            return None
        c = self.contact_named(typed)
        if c is not None and c.phone:
            return c.phone
        if digits(typed) and all(ch.isdigit() or ch in "+-() ." for ch in typed):
            return "".join(ch for ch in typed if ch.isdigit() or ch == "+")
        return None

    # -- incoming messages ----------------------------------------------------------------
    def deliver(self, address: str, body: str, date: Optional[dt.datetime] = None, *, notify: bool = True) -> Sms:
        """An incoming SMS: stored unread and, like on a phone, announced in the shade."""
        m = self.data.receive(address, body, date or self.device.clock.now())
        if notify:
            self.device.post_notification(Notification(
                title=self.display_name(address), body=body, app_label=self.label, target=self.package,
                time=self.device.clock.fmt_time(m.date)))
        return m

    # -- formatting ---------------------------------------------------------------------
    def _when(self, ui: UI, t: dt.datetime) -> str:
        """Today: the time (12/24h per the device); earlier: the date."""
        if t.date() == ui.now().date():
            return ui.fmt_time(t)
        return ui.fmt_date(t.date())

    # -- screens ------------------------------------------------------------------------
    def screen_main(self, ui: UI) -> Screen:
        selected: Optional[str] = ui.get("selected", None)
        rows: list[Widget] = []
        for conv in self.data.conversations():
            name = self.display_name(conv.address)
            unread = conv.unread > 0
            snippet = conv.last.body
            rows.append(row(
                image("person", size=48, circle=True, id="conversation_image", desc=name),
                column(
                    text(name, id="conversation_address", size=17, bold=unread, max_lines=1),
                    text(snippet, id="conversation_body_short", size=14, color="text" if unread else "muted",
                         bold=unread, max_lines=2),
                    weight=1, gap=2,
                ),
                text(self._when(ui, conv.last.date), id="conversation_date", size=13, color="muted"),
                id="conversation_frame", pad=16, gap=16, min_h=72, align="center",
                on_click=(lambda a=conv.address: self._open_thread(ui, a)),
                on_long_click=(lambda k=conv.key: ui.set("selected", k)),
            ))
            rows[-1].state["selected"] = selected == conv.key
        if not rows:
            start = text("Start a conversation", id="no_conversations_placeholder_2", size=18, color="accent",
                         text_align="center")
            start.on_click = lambda: ui.push("new")
            rows.append(column(
                spacer(48),
                text("No stored conversations have been found", id="no_conversations_placeholder", size=18,
                     color="muted", text_align="center"),
                start,
                pad=24, gap=12,
            ))
        dialog = None
        if selected is not None:
            conv = next((c for c in self.data.conversations() if c.key == selected), None)
            if conv is None:
                selected = None  # the selected conversation is gone
            else:
                top = top_bar("1 selected", back=lambda: ui.set("selected", None), actions=[
                    icon_button("delete", "Delete", lambda: ui.open_dialog("delete"), id="cab_delete"),
                ])
                if ui.dialog_info is not None and ui.dialog_info["kind"] == "delete":
                    dialog = self._delete_dialog(ui, conv.address, after=lambda: ui.set("selected", None))
        if selected is None:
            top = top_bar("SMS Messenger", actions=[
                icon_button("search", "Search", lambda: None, id="search"),
                icon_button("more", "More options", lambda: None, id="more_options"),
            ])
        return Screen(
            top=top,
            body=scroll(*rows, id="conversations_list"),
            fab=Widget("icon_button", id="conversations_fab", desc="New conversation",
                       on_click=lambda: ui.push("new"), style={"icon": "add"}),
            dialog=dialog,
            activity=".activities.MainActivity",
        )

    def _open_thread(self, ui: UI, address: str) -> None:
        ui.set("selected", None)
        self.data.mark_read(address)
        ui.push("thread", address=address)

    def _delete_dialog(self, ui: UI, address: str, after: Callable[[], Any]) -> Widget:
        def delete() -> None:
            self.data.delete_thread(address)
            after()

        return ui.confirm("", "Are you sure you want to delete all messages of this conversation?", "Yes", delete,
                          cancel_label="No")

    def screen_new(self, ui: UI) -> Screen:
        typed = str(ui.get("address", ""))

        def confirm() -> None:
            number = self.resolve_recipient(str(ui.get("address", "")))
            if number is None:
                ui.toast("Invalid number")
                return
            ui.replace("thread", address=number)

        query = typed.strip().lower()
        qdigits = digits(typed)
        people = sorted(self._contacts(), key=lambda c: c.name.lower())
        if query:
            people = [c for c in people if query in c.name.lower() or (qdigits and qdigits in digits(c.phone))]
        items: list[Widget] = []
        for c in people:
            if not c.phone:
                continue
            items.append(row(
                image("person", size=40, circle=True, id="item_contact_image"),
                column(text(c.name, id="item_contact_name", size=17, max_lines=1),
                       text(c.phone, id="item_contact_number", size=14, color="muted"), weight=1, gap=2),
                id="item_contact_frame", pad=16, gap=16, min_h=64, align="center",
                on_click=(lambda p=c.phone: ui.replace("thread", address=p)),
            ))
        if not self._contacts():
            items.append(text("No contacts found", id="no_contacts_placeholder", size=16, color="muted",
                              text_align="center", vpad=24))
        address_row = row(
            field_("address", "Add Contact or Number…", id="new_conversation_address", on_submit=confirm, weight=1),
            icon_button("check", "Confirm", confirm, id="new_conversation_confirm") if typed.strip() else None,
            pad=12, gap=8,
        )
        return Screen(
            top=top_bar("New conversation", back=ui.pop, id="new_conversation_toolbar"),
            body=scroll(address_row, *items, id="contacts_list"),
            activity=".activities.NewConversationActivity",
        )

    def screen_thread(self, ui: UI) -> Screen:
        address: str = ui.params["address"]
        name = self.display_name(address)
        if "scroll" not in ui.state:
            ui.set("scroll", 1e9)  # a chat opens at its newest message (the offset is clamped)

        def send() -> None:
            body = str(ui.get("draft", "")).strip()
            if not body:
                return
            self.data.send(address, body, ui.now())
            ui.set("draft", "")
            ui.set("scroll", 1e9)

        def delete_done() -> None:
            ui.pop_to("main")

        items: list[Widget] = []
        last_header: Optional[dt.datetime] = None
        for m in self.data.thread(address):
            # a date/time header when more than an hour passed since the previous one
            if last_header is None or (m.date - last_header) > dt.timedelta(hours=1):
                when = ui.fmt_time(m.date) if m.date.date() == ui.now().date() else f"{ui.fmt_date(m.date.date())}, {ui.fmt_time(m.date)}"
                items.append(text(when, id="thread_date_time", size=13, color="muted", text_align="center", vpad=4))
                last_header = m.date
            sent = m.kind == "sent"
            bubble = card(
                text(m.body, id="thread_message_body", size=16, color="on_accent" if sent else "text"),
                pad=12, bg="accent" if sent else "surface2", radius=18,
            )
            items.append(row(bubble, justify="end" if sent else "start", pad=4, gap=0, id="thread_message_holder"))
        if not items:
            items.append(spacer(8))
        send_button = Widget(
            "column", id="thread_send_message", text="SMS", desc="", cls="android.widget.Button",
            on_click=send,
            children=[image("forward", size=24, color="accent" if str(ui.get("draft", "")).strip() else "muted", a11y=False),
                      text("SMS", size=11, color="muted", text_align="center", a11y=False)],
            style={"align": "center", "pad": 4, "gap": 0},
        )
        compose = row(
            icon_button("add", "Attachment", lambda: ui.toast("Attachments are not supported"), id="thread_add_attachment"),
            field_("draft", "Type a message…", id="thread_type_message", multiline=True, min_lines=1, weight=1),
            send_button,
            id="thread_send_message_holder", pad=8, gap=4, bg="surface",
        )
        dialog = None
        if ui.dialog_info is not None and ui.dialog_info["kind"] == "delete":
            dialog = self._delete_dialog(ui, address, after=delete_done)
        return Screen(
            top=top_bar(name, back=ui.pop, id="thread_toolbar", actions=[
                icon_button("phone", "Dial number", lambda: None, id="dial_number"),
                icon_button("delete", "Delete", lambda: ui.open_dialog("delete"), id="delete"),
            ]),
            body=scroll(*items, id="thread_messages_list", pad=8, gap=4),
            bottom=compose,
            dialog=dialog,
            activity=".activities.ThreadActivity",
        )
