"""The Device protocol every environment implements (simulated, ADB, perturbed)."""

from __future__ import annotations

from typing import Any, Literal, Optional, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ttir.core.errors import TTIRError
from ttir.core.types import Action, Observation


class DeviceError(TTIRError, RuntimeError):
    """The device cannot do what was asked (offline, unsupported, misconfigured)."""


class ActionError(ValueError):
    """An action that cannot be executed on the current screen; device state is unchanged."""

    def __init__(self, action: Optional[Action], message: str):
        self.action = action
        where = f"{action.describe()}: " if action is not None else ""
        super().__init__(f"{where}{message}")


class DeviceSettings(BaseModel):
    """The knobs the state perturbations turn (and ``brightness``)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    font_scale: float = Field(1.0, gt=0.3, le=3.0, description="Text size multiplier (Android font_scale).")
    density_scale: float = Field(1.0, gt=0.3, le=3.0, description="Multiplier on the physical density (wm density).")
    size_scale: float = Field(1.0, gt=0.3, le=1.5, description="Multiplier on the logical screen size (wm size).")
    dark_theme: bool = Field(False, description="System dark theme (cmd uimode night).")
    orientation: Literal["portrait", "landscape"] = Field("portrait", description="Screen rotation.")
    time_format: Literal[12, 24] = Field(12, description="Clock format (settings time_12_24).")
    date_format: Literal["US", "EU"] = Field("US", description="US: 'Sun, Oct 15' / 10/15/2023; EU: 'Sun 15 Oct' / 15/10/2023.")
    brightness: int = Field(102, ge=0, le=255, description="Screen brightness 0..255 (settings screen_brightness).")
    navigation_mode: Literal["three_button", "gesture"] = Field(
        "three_button", description="System navigation: three buttons, or gestures with the pill (the navbar overlay).")
    locale: str = Field("en-US", pattern=r"^[a-z]{2,3}(-[A-Z]{2})?$",
                        description="System language of the UI strings, a BCP 47 tag like 'es-ES' (system_locales).")


SETTING_NAMES: tuple[str, ...] = tuple(DeviceSettings.model_fields)

# What `scroll` means on every device: the content moves this fraction of the scrolling area
# (SimDevice scrolls its list by it; AdbDevice swipes that far), so a plan scrolls alike everywhere.
SCROLL_FRACTION = 0.6


EPISODE_METHODS = ("reset", "execute", "observe")  # what an episode calls on a device (run_episode, PerturbedDevice)


def missing_episode_methods(device: Any) -> list[str]:
    """The :data:`EPISODE_METHODS` ``device`` does not have (empty for a device).

    Args:
        device: what a caller passed as the device.

    Returns:
        The names of the missing methods, in :data:`EPISODE_METHODS` order.
    """
    return [m for m in EPISODE_METHODS if not callable(getattr(device, m, None))]


def check_reset_task(task: Any) -> None:
    """Refuse what is not a task (or None) as ``reset``'s argument, naming the call that makes one.

    A task's name passed instead of the task failed inside the device ("'str' object has no
    attribute 'setup'", or on a real phone "task X is simulator-only").

    Args:
        task: what a caller passed to ``reset``.

    Raises:
        TypeError: ``task`` is neither None nor an object with a ``setup`` method.
    """
    if task is None or callable(getattr(task, "setup", None)):
        return
    hint = f"benchmark.make_task({task!r})" if isinstance(task, str) else "benchmark.make_task(NAME)"
    raise TypeError(f"reset(task={str(task)[:80]!r} ({type(task).__name__})): expected a task made by {hint}, "
                    "or None for the home screen alone")


def check_action(action: Any) -> None:
    """Refuse what is not an :class:`~ttir.core.types.Action` as ``execute``'s argument.

    Args:
        action: what a caller passed to ``execute``.

    Raises:
        ActionError: ``action`` is not an Action (a dict is named with the call that converts it).
    """
    if isinstance(action, Action):
        return
    hint = "; convert an action dict with ttir.Action.from_json(d)" if isinstance(action, dict) else ""
    raise ActionError(None, f"action must be an Action, got {type(action).__name__}{hint}")


@runtime_checkable
class Device(Protocol):
    """What the episode loop, the perturbation layer and the CLI need from a device."""

    @property
    def settings(self) -> DeviceSettings:
        """The device's current settings (font scale, orientation, locale …)."""
        ...

    def observe(self) -> Observation:
        """The current screen.

        Raises:
            DeviceError: the device cannot read its screen.
        """
        ...

    def execute(self, action: Action) -> None:
        """Perform ``action`` on the device.

        Raises:
            ActionError: the action cannot be executed on the current screen (state unchanged).
        """
        ...

    def reset(self, task: Any = None) -> Observation:
        """Back to a clean home screen; if ``task`` is given, run ``task.setup(self)``."""
        ...

    def launch(self, app: str) -> None:
        """Bring ``app`` (a label or a package) to the front."""
        ...

    def configure(self, **settings: Any) -> None:
        """Change settings by name (``font_scale=1.3``, ``orientation="landscape"`` …).

        Raises:
            ValueError: an unknown setting or an invalid value (the message lists the valid ones).
        """
        ...

    def close(self) -> None:
        """Release the device (restore the settings it changed)."""
        ...


def check_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Validate a partial settings update; unknown names list the valid ones."""
    unknown = sorted(set(values) - set(SETTING_NAMES))
    if unknown:
        raise ValueError(
            f"unknown device setting(s) {', '.join(unknown)}; valid settings: {', '.join(SETTING_NAMES)}"
        )
    merged = DeviceSettings().model_dump()
    merged.update(values)
    DeviceSettings(**merged)  # raises a pydantic error naming the field and value
    return values
