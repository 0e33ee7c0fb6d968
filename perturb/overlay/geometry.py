"""Where overlays go: screen metrics, the app area between the status and
navigation bars, the theme — read from the observation and, when the device
exposes them, from its ``metrics()`` and ``settings``. Works for any device."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from PIL import ImageStat

from benchmark.ui import tokens
from benchmark.ui.layout import Box
from benchmark.ui.metrics import Metrics
from ttir.core.types import Observation

SYSTEMUI = "com.android.systemui"
PHONE_WIDTH_DP = 411.0  # a typical phone's short side, to estimate density when the device cannot say
BAR_SHARE = 0.12  # a system bar is thinner than this share of the screen


@dataclass(frozen=True)
class Geometry:
    metrics: Metrics
    size: tuple[int, int]
    area: Box  # below the status bar, beside (above, or left of) the navigation bar
    dark: bool

    @property
    def key(self) -> tuple[Any, ...]:
        m = self.metrics
        return (self.size, m.dpi, m.font_scale, self.area, self.dark)


def is_launcher(package: Optional[str]) -> bool:
    return bool(package) and "launcher" in package.lower()  # type: ignore[union-attr]


def is_app(package: Optional[str]) -> bool:
    """An app a user works in (not the launcher, system UI or the keyboard)."""
    if not package:
        return False
    return not (is_launcher(package) or package == SYSTEMUI or "inputmethod" in package)


def _metrics(obs: Observation, device: Any) -> Metrics:
    w, h = obs.screen_size
    fn = getattr(device, "metrics", None)
    if callable(fn):
        try:
            m = fn()
            if isinstance(m, Metrics) and (m.width, m.height) == (w, h):
                return m
        except Exception:  # noqa: BLE001 - fall back to an estimate
            pass
    font_scale, density_scale = 1.0, 1.0
    settings = _settings(device)
    if settings is not None:
        font_scale = float(getattr(settings, "font_scale", 1.0) or 1.0)
        density_scale = float(getattr(settings, "density_scale", 1.0) or 1.0)
    dpi = min(w, h) / PHONE_WIDTH_DP * 160.0
    try:  # a real phone reports its physical density (AdbDevice.display)
        physical = getattr(getattr(device, "display", None), "density", None)
        if isinstance(physical, (int, float)) and physical > 0:
            dpi = float(physical) * density_scale
    except Exception:  # noqa: BLE001 - keep the estimate
        pass
    return Metrics(width=w, height=h, dpi=dpi, font_scale=font_scale)


def _settings(device: Any) -> Any:
    try:
        return getattr(device, "settings", None)
    except Exception:  # noqa: BLE001 - a device that cannot report its settings
        return None


def _dark(obs: Observation, device: Any, area: Box) -> bool:
    settings = _settings(device)
    if settings is not None and hasattr(settings, "dark_theme"):
        return bool(settings.dark_theme)
    img = obs.screenshot
    if img is None:
        return False
    x1, y1, x2, y2 = area
    thumb = img.crop((x1, y1, x2, y2)).convert("L").resize((16, 16))
    return ImageStat.Stat(thumb).mean[0] < 96


def geometry(obs: Observation, device: Any) -> Geometry:
    m = _metrics(obs, device)
    w, h = obs.screen_size
    top, right, bottom = m.dp(tokens.STATUS_BAR), w, h - m.dp(tokens.NAV_BAR)
    roots = [e for e in obs.elements if e.parent is None and e.package == SYSTEMUI]
    status = [e for e in roots if e.bounds[1] == 0 and 0 < e.height < h * 0.1]
    nav = [e for e in roots if e.bounds[3] == h and 0 < e.height < h * BAR_SHARE]
    side = [e for e in roots if e.bounds[2] == w and 0 < e.width < w * BAR_SHARE and e.height > h / 2]
    if status:
        top = max(e.bounds[3] for e in status)
    if side:  # three-button navigation on the side of a phone in landscape
        right, bottom = min(e.bounds[0] for e in side), h
    elif nav:
        bottom = min(e.bounds[1] for e in nav)
    elif obs.elements and obs.source == "tree":  # no navigation bar in the dump: gesture navigation (its strip, or the keyboard's)
        bottom = h - m.dp(tokens.NAV_BAR_GESTURE)
    area = (0, top, right, bottom)
    return Geometry(metrics=m, size=(w, h), area=area, dark=_dark(obs, device, area))


def app_label(device: Any, package: Optional[str]) -> str:
    """The launcher label of ``package`` (device's own when it knows it)."""
    if not package:
        return ""
    fn = getattr(device, "app", None)
    if callable(fn):
        try:
            return str(fn(package).label)
        except Exception:  # noqa: BLE001 - not an installed simulated app
            pass
    # a real phone's app table (AdbDevice.apps): its first name for the package
    for entry in getattr(getattr(device, "apps", None), "entries", None) or ():
        if package in getattr(entry, "packages", ()) and getattr(entry, "names", ()):
            return " ".join(w[:1].upper() + w[1:] for w in str(entry.names[0]).split())
    tail = package.rsplit(".", 1)[-1]
    return tail[:1].upper() + tail[1:]


def app_accent(device: Any, package: Optional[str]) -> Optional[tuple[int, int, int]]:
    fn = getattr(device, "app", None)
    if package and callable(fn):
        try:
            accent = getattr(fn(package), "accent", None)
            return tuple(accent) if accent else None  # type: ignore[return-value]
        except Exception:  # noqa: BLE001
            return None
    return None
