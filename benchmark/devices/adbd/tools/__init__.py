"""The served phone's commands. Each module maps command names to functions
``fn(phone, call) -> exit status``; :func:`bind` ties them to one phone."""

from __future__ import annotations

import functools
from typing import Any, Callable

from benchmark.devices.adbd.tools import apps, coreutils, dumpsys, input, screen, system

MODULES = (coreutils, input, screen, dumpsys, apps, system)


def bind(phone: Any) -> dict[str, Callable[..., int]]:
    tools: dict[str, Callable[..., int]] = {}
    for module in MODULES:
        for name, fn in module.TOOLS.items():
            tools[name] = functools.partial(fn, phone)
    return tools
