"""Contacts tasks (AndroidWorld: ContactsAddContact, ContactsNewContactDraft, …)."""

from __future__ import annotations

import random
from typing import Any

from benchmark import data
from benchmark.apps.contacts import ContactsApp, ContactsData
from benchmark.plan import PlanStep, T, open_app, tap, type_into
from benchmark.tasks.base import Task


def random_name(rng: random.Random) -> tuple[str, str]:
    return rng.choice(data.lines("first_names")), rng.choice(data.lines("last_names"))


def random_phone(rng: random.Random) -> str:
    return "+1" + "".join(str(rng.randint(0, 9)) for _ in range(10))


def _contacts(device: Any) -> ContactsData:
    return device.app(ContactsApp.package).data


def _seed_contacts(device: Any, rng: random.Random, n: int, exclude: set[str]) -> None:
    book = _contacts(device)
    while len(book.contacts) < n:
        first, last = random_name(rng)
        if f"{first} {last}" in exclude or book.find(f"{first} {last}"):
            continue
        book.add(first=first, last=last, phone=random_phone(rng))


class ContactsAddContact(Task):
    template = "Create a new contact for {name}. Their number is {number}."
    apps = (ContactsApp.package,)
    reference_steps = 6
    tags = ("form", "case_study_2")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        first, last = random_name(rng)
        return {"first": first, "last": last, "name": f"{first} {last}", "number": random_phone(rng)}

    def setup(self, device: Any) -> None:
        _seed_contacts(device, random.Random(self.seed), 4, {self.params["name"]})

    def verify(self, device: Any) -> bool:
        matches = _contacts(device).find(self.params["name"])
        return any(_digits(c.phone) == _digits(self.params["number"]) for c in matches)

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Contacts"),
            tap(T(desc="Create contact")),
            type_into(T(id="first_name"), self.params["first"]),
            type_into(T(id="last_name"), self.params["last"]),
            type_into(T(id="phone"), self.params["number"]),
            tap(T("Save", id="menu_save")),
        ]


class ContactsAddContactWithCompany(ContactsAddContact):
    template = "Create a new contact for {name} who works at {company}. Their number is {number}."
    reference_steps = 7
    tags = ("form",)

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        p = super().generate_params(rng)
        p["company"] = rng.choice(data.lines("companies"))
        return p

    def verify(self, device: Any) -> bool:
        return super().verify(device) and any(
            c.company.strip().lower() == self.params["company"].lower() for c in _contacts(device).find(self.params["name"])
        )

    def reference_solution(self) -> list[PlanStep]:
        steps = super().reference_solution()
        return steps[:-1] + [type_into(T(id="company"), self.params["company"]), steps[-1]]


class ContactsDeleteContact(Task):
    template = "Delete the contact {name} from my contacts."
    apps = (ContactsApp.package,)
    reference_steps = 4
    tags = ("deletion",)

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        first, last = random_name(rng)
        return {"name": f"{first} {last}", "first": first, "last": last, "number": random_phone(rng)}

    def setup(self, device: Any) -> None:
        _seed_contacts(device, random.Random(self.seed), 5, {self.params["name"]})
        _contacts(device).add(first=self.params["first"], last=self.params["last"], phone=self.params["number"])

    def verify(self, device: Any) -> bool:
        book = _contacts(device)
        return not book.find(self.params["name"]) and len(book.contacts) == 5

    def reference_solution(self) -> list[PlanStep]:
        return [open_app("Contacts"), tap(T(self.params["name"])), tap(T(desc="Delete")), tap(T("Delete", id="android:id/button1"))]


class ContactsEditNumber(Task):
    template = "Change the phone number of {name} to {number}."
    apps = (ContactsApp.package,)
    reference_steps = 5
    tags = ("form",)

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        first, last = random_name(rng)
        return {"name": f"{first} {last}", "first": first, "last": last, "old": random_phone(rng), "number": random_phone(rng)}

    def setup(self, device: Any) -> None:
        _seed_contacts(device, random.Random(self.seed), 3, {self.params["name"]})
        _contacts(device).add(first=self.params["first"], last=self.params["last"], phone=self.params["old"])

    def verify(self, device: Any) -> bool:
        return any(_digits(c.phone) == _digits(self.params["number"]) for c in _contacts(device).find(self.params["name"]))

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Contacts"),
            tap(T(self.params["name"])),
            tap(T(desc="Edit contact")),
            type_into(T(id="phone"), self.params["number"]),
            tap(T("Save", id="menu_save")),
        ]


def _digits(s: str) -> str:
    return "".join(ch for ch in s if ch.isdigit())
