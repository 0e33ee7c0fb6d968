"""Simple SMS Messenger tasks (AndroidWorld: SimpleSmsSend, SimpleSmsReply,
SimpleSmsReplyMostRecent, SimpleSmsResend, SimpleSmsSendReceivedAddress, …).

Verifiers read the app's SMS table: a sent row to the right number whose body
matches the goal message (case and spacing ignored, like AndroidWorld's fuzzy match)."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from benchmark import data
from benchmark.apps.contacts import ContactsApp, ContactsData
from benchmark.apps.sms import SmsData, SmsMessengerApp, same_number
from benchmark.plan import PlanStep, T, back, open_app, tap, type_into
from benchmark.tasks.base import Task
from benchmark.tasks.contacts import random_name, random_phone

APP_NAME = "Simple SMS Messenger"


def _sms(device: Any) -> SmsData:
    return device.app(SmsMessengerApp.package).data


def _contacts(device: Any) -> ContactsData:
    return device.app(ContactsApp.package).data


def _norm(body: str) -> str:
    return " ".join(body.split()).strip().lower().rstrip(".!?")


def was_sent(device: Any, number: str, message: str) -> bool:
    return any(same_number(m.address, number) and _norm(m.body) == _norm(message) for m in _sms(device).sent())


def _messages(rng: random.Random, k: int, exclude: str = "") -> list[str]:
    pool = [m for m in data.lines("sms_messages") if m != exclude]
    return rng.sample(pool, k)


def _deliver(device: Any, number: str, body: str, minutes_ago: float) -> None:
    """The newest incoming text: stored unread and announced in the notification shade."""
    device.app(SmsMessengerApp.package).deliver(number, body, _ago(device, minutes_ago))


def _ago(device: Any, minutes: float) -> dt.datetime:
    return device.clock.now() - dt.timedelta(minutes=minutes)


def _fresh_number(rng: random.Random, taken: set[str]) -> str:
    while True:
        n = random_phone(rng)
        if n not in taken:
            taken.add(n)
            return n


def seed_distractors(device: Any, rng: random.Random, n: int, taken: set[str], *, named: int = 1,
                     exclude_message: str = "", newest_minutes: float = 30) -> None:
    """``n`` other conversations (``named`` of them with saved contacts), each one or
    two messages, all older than ``newest_minutes`` ago."""
    sms, book = _sms(device), _contacts(device)
    names = {c.name for c in book.contacts}
    for i in range(n):
        number = _fresh_number(rng, taken)
        if i < named:
            first, last = random_name(rng)
            while f"{first} {last}" in names:
                first, last = random_name(rng)
            names.add(f"{first} {last}")
            book.add(first=first, last=last, phone=number)
        when = newest_minutes + rng.uniform(5, 60 * 30)
        texts = _messages(rng, 2, exclude_message)
        sms.receive(number, texts[0], _ago(device, when), read=True)
        if rng.random() < 0.5:
            sms.send(number, texts[1], _ago(device, when - rng.uniform(1, 4)))


def _send_steps(recipient: str, message: str, confirm: bool = True) -> list[PlanStep]:
    """From the conversation list: start a new conversation and send."""
    steps = [tap(T(desc="New conversation")), type_into(T(id="new_conversation_address"), recipient)]
    if confirm:
        steps.append(tap(T(id="new_conversation_confirm")))
    return steps + _reply_steps(message)


def _reply_steps(message: str) -> list[PlanStep]:
    return [type_into(T(id="thread_type_message"), message), tap(T(id="thread_send_message"))]


class SimpleSmsSend(Task):
    template = "Send a text message using Simple SMS Messenger to {number} with message: {message}"
    apps = (SmsMessengerApp.package,)
    reference_steps = 6
    tags = ("form", "messaging")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"number": random_phone(rng), "message": rng.choice(data.lines("sms_messages"))}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        seed_distractors(device, rng, rng.randint(2, 4), {self.params["number"]}, named=1,
                         exclude_message=self.params["message"])

    def verify(self, device: Any) -> bool:
        return was_sent(device, self.params["number"], self.params["message"])

    def reference_solution(self) -> list[PlanStep]:
        return [open_app(APP_NAME), *_send_steps(self.params["number"], self.params["message"])]


class SimpleSmsSendToContact(SimpleSmsSend):
    template = "Send a text message using Simple SMS Messenger to {name} with message: {message}"
    apps = (SmsMessengerApp.package, ContactsApp.package)
    tags = ("form", "messaging", "contacts")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        first, last = random_name(rng)
        p = super().generate_params(rng)
        return {"name": f"{first} {last}", "first": first, "last": last, **p}

    def setup(self, device: Any) -> None:
        _contacts(device).add(first=self.params["first"], last=self.params["last"], phone=self.params["number"])
        super().setup(device)

    def reference_solution(self) -> list[PlanStep]:
        return [open_app(APP_NAME), *_send_steps(self.params["name"], self.params["message"])]


class SimpleSmsReply(Task):
    template = "Reply to {number} with message: {message} in Simple SMS Messenger"
    apps = (SmsMessengerApp.package,)
    reference_steps = 4
    tags = ("messaging",)

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"number": random_phone(rng), "message": rng.choice(data.lines("sms_messages"))}

    def setup(self, device: Any) -> None:
        # the goal sender's texts sit somewhere among 1-5 other conversations
        rng = random.Random(self.seed)
        taken = {self.params["number"]}
        others = rng.randint(1, 5)
        seed_distractors(device, rng, others, taken, named=rng.randint(0, 1), exclude_message=self.params["message"],
                         newest_minutes=0)
        sms = _sms(device)
        minutes = rng.uniform(1, 60 * 6)
        for k, body in enumerate(_messages(rng, rng.randint(1, 2), self.params["message"])):
            sms.receive(self.params["number"], body, _ago(device, minutes - k))

    def verify(self, device: Any) -> bool:
        return was_sent(device, self.params["number"], self.params["message"])

    def reference_solution(self) -> list[PlanStep]:
        return [open_app(APP_NAME), tap(T(self.params["number"], id="conversation_address")),
                *_reply_steps(self.params["message"])]


class SimpleSmsReplyMostRecent(Task):
    template = "Reply to the most recent text message using Simple SMS Messenger with message: {message}"
    apps = (SmsMessengerApp.package,)
    reference_steps = 4
    tags = ("messaging",)

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"number": random_phone(rng), "message": rng.choice(data.lines("sms_messages"))}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        seed_distractors(device, rng, rng.randint(1, 5), {self.params["number"]}, named=rng.randint(0, 2),
                         exclude_message=self.params["message"], newest_minutes=3)
        _deliver(device, self.params["number"], _messages(rng, 1, self.params["message"])[0], 1)

    def verify(self, device: Any) -> bool:
        return was_sent(device, self.params["number"], self.params["message"])

    def reference_solution(self) -> list[PlanStep]:
        return [open_app(APP_NAME), tap(T(id="conversation_frame", nth=0)), *_reply_steps(self.params["message"])]


class SimpleSmsResend(Task):
    template = "Resend the message I just sent to {name} in Simple SMS Messenger"
    apps = (SmsMessengerApp.package, ContactsApp.package)
    reference_steps = 4
    tags = ("messaging", "contacts", "memory")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        first, last = random_name(rng)
        return {"name": f"{first} {last}", "first": first, "last": last, "number": random_phone(rng),
                "message": rng.choice(data.lines("sms_messages"))}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        _contacts(device).add(first=self.params["first"], last=self.params["last"], phone=self.params["number"])
        seed_distractors(device, rng, rng.randint(2, 4), {self.params["number"]}, named=1,
                         exclude_message=self.params["message"], newest_minutes=10)
        sms = _sms(device)
        older = _messages(rng, 2, self.params["message"])
        sms.receive(self.params["number"], older[0], _ago(device, 60 * 26))
        sms.send(self.params["number"], older[1], _ago(device, 60 * 25))
        sms.send(self.params["number"], self.params["message"], _ago(device, 4))
        _deliver(device, self.params["number"], rng.choice(data.lines("sms_resend_requests")), 2)

    def verify(self, device: Any) -> bool:
        # exactly one message sent since the request to resend, and it is the same text to the same person
        sms = _sms(device)
        asked = max(m.date for m in sms.inbox() if same_number(m.address, self.params["number"]))
        new = [m for m in sms.sent() if m.date > asked]
        return (len(new) == 1 and same_number(new[0].address, self.params["number"])
                and _norm(new[0].body) == _norm(self.params["message"]))

    def reference_solution(self) -> list[PlanStep]:
        return [open_app(APP_NAME), tap(T(self.params["name"], id="conversation_address")),
                *_reply_steps(self.params["message"])]


class SimpleSmsSendReceivedAddress(Task):
    template = "Text the address of the event to {name1} that {name2} just sent me in Simple SMS Messenger"
    apps = (SmsMessengerApp.package, ContactsApp.package)
    reference_steps = 8
    tags = ("messaging", "contacts", "memory")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        (f1, l1) = random_name(rng)
        (f2, l2) = random_name(rng)
        while f"{f2} {l2}" == f"{f1} {l1}":
            f2, l2 = random_name(rng)
        return {"name1": f"{f1} {l1}", "name2": f"{f2} {l2}", "number": random_phone(rng),
                "message": rng.choice(data.lines("event_addresses"))}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        book = _contacts(device)
        taken = {self.params["number"]}
        number2 = _fresh_number(rng, taken)
        f1, l1 = self.params["name1"].split(" ", 1)
        f2, l2 = self.params["name2"].split(" ", 1)
        book.add(first=f1, last=l1, phone=self.params["number"])
        book.add(first=f2, last=l2, phone=number2)
        seed_distractors(device, rng, rng.randint(1, 3), taken, named=1, newest_minutes=10)
        _deliver(device, number2, self.params["message"], 2)

    def verify(self, device: Any) -> bool:
        return was_sent(device, self.params["number"], self.params["message"])

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app(APP_NAME),
            tap(T(self.params["name2"], id="conversation_address")),  # read the address
            back(),
            *_send_steps(self.params["name1"], self.params["message"]),
        ]


class SimpleSmsDeleteConversation(Task):
    template = "Delete the conversation with {name} in Simple SMS Messenger."
    apps = (SmsMessengerApp.package, ContactsApp.package)
    reference_steps = 4
    tags = ("messaging", "deletion")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        first, last = random_name(rng)
        return {"name": f"{first} {last}", "first": first, "last": last, "number": random_phone(rng)}

    def _other_conversations(self) -> int:
        return random.Random(self.seed).randint(2, 4)  # setup's first draw

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        others = rng.randint(2, 4)  # the same draw as _other_conversations()
        _contacts(device).add(first=self.params["first"], last=self.params["last"], phone=self.params["number"])
        seed_distractors(device, rng, others, {self.params["number"]}, named=2, newest_minutes=0)
        sms = _sms(device)
        texts = _messages(rng, 3)
        minutes = rng.uniform(5, 600)
        sms.receive(self.params["number"], texts[0], _ago(device, minutes + 3), read=True)
        sms.send(self.params["number"], texts[1], _ago(device, minutes + 2))
        sms.receive(self.params["number"], texts[2], _ago(device, minutes))

    def verify(self, device: Any) -> bool:
        # the conversation is gone and every other one is still there
        sms = _sms(device)
        return not sms.thread(self.params["number"]) and len(sms.conversations()) == self._other_conversations()

    def reference_solution(self) -> list[PlanStep]:
        return [open_app(APP_NAME), tap(T(self.params["name"], id="conversation_address")),
                tap(T(desc="Delete")), tap(T("Yes", id="android:id/button1"))]
