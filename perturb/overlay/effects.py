"""The device-side consequences of overlay buttons (a real detour, not a fake
screen): open Settings, go home, launch an app, open a web page, force-stop the
app. Only the Device protocol is required; optional device methods
(``open_url``, ``force_stop``, ``shell``) are used when present."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from loguru import logger

from ttir.core.types import Action

if TYPE_CHECKING:  # pragma: no cover
    from perturb.device import PerturbationContext

SETTINGS_PACKAGE = "com.android.settings"
BROWSER_PACKAGE = "com.android.chrome"


def settle(device: Any, seconds: float) -> None:
    """Give a real phone time to finish (the simulator, which has a clock, needs none)."""
    if seconds and not hasattr(device, "clock"):
        time.sleep(seconds)


def go_home(ctx: "PerturbationContext") -> str:
    ctx.device.execute(Action(action_type="navigate_home"))
    return "went_home"


def launch(ctx: "PerturbationContext", app: str) -> bool:
    try:
        ctx.device.launch(app)
        return True
    except Exception as exc:  # noqa: BLE001 - the app is not installed: the user just lands nowhere new
        logger.debug("overlay could not launch {}: {}", app, exc)
        return False


def open_url(ctx: "PerturbationContext", url: str) -> bool:
    fn = getattr(ctx.device, "open_url", None)
    if callable(fn):
        try:
            fn(url)
            return True
        except Exception as exc:  # noqa: BLE001
            logger.debug("overlay could not open {}: {}", url, exc)
    return launch(ctx, BROWSER_PACKAGE)


def force_stop(ctx: "PerturbationContext", package: str) -> None:
    device = ctx.device
    fn = getattr(device, "force_stop", None)
    if callable(fn):
        fn(package)
        return
    shell = getattr(device, "shell", None)
    if callable(shell):
        try:
            shell(f"am force-stop {package}")
        except Exception as exc:  # noqa: BLE001
            logger.warning("am force-stop {} failed: {}", package, exc)
    device.execute(Action(action_type="navigate_home"))


def app_running(device: Any, package: str) -> bool:
    """Whether ``package`` still has a live task (simulator: a non-empty back stack);
    True when the device cannot tell."""
    apps = getattr(device, "apps", None)
    if isinstance(apps, dict) and package in apps:
        return bool(getattr(apps[package], "running", True))
    return True
