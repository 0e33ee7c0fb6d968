"""Simulated apps. ``APP_CLASSES`` is what a fresh SimDevice installs."""

from __future__ import annotations

from benchmark.apps.base import App, Route, UI
from benchmark.apps.contacts import ContactsApp
from benchmark.apps.settings import SettingsApp

APP_CLASSES: list[type[App]] = [
    ContactsApp,
    SettingsApp,
]

__all__ = ["APP_CLASSES", "App", "ContactsApp", "Route", "SettingsApp", "UI"]
