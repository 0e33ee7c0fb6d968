"""The home screen, laid out as Pixel Launcher does: the date ("At a glance") at the
top, the workspace grid, the dock (hotseat) and the Google search bar at the bottom
in portrait; in landscape the dock stands on the right and the search bar closes the
workspace. Icons are adaptive-icon discs with full labels (ellipsised when too long).
The dock's apps are data: ``benchmark/data/launcher.yaml``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from benchmark.apps.base import App
from benchmark.data import table
from benchmark.ui import tokens
from benchmark.ui.layout import Box
from benchmark.ui.metrics import Metrics
from benchmark.ui.widgets import Widget, column, grid, image, row, spacer, text

if TYPE_CHECKING:  # pragma: no cover
    from benchmark.sim.device import SimDevice

PORTRAIT_COLUMNS = 4
LANDSCAPE_COLUMNS = 6


def _icon(dev: "SimDevice", app: App) -> Widget:
    """One app icon: a TextView in the dump (text and description = the label), as
    Launcher3's BubbleTextView reports itself."""
    return Widget(
        "column", cls="android.widget.TextView", id="icon", text=app.label, desc=app.label,
        on_click=(lambda a=app: dev.launch(a.package)),
        children=[
            image(app.icon, size=tokens.LAUNCHER_ICON, adaptive=True, bg=app.accent, a11y=False),
            text(app.label, size=tokens.LAUNCHER_LABEL_SP, text_align="center", max_lines=1, a11y=False,
                 color="launcher_text"),
        ],
        style={"gap": 6, "align": "center", "pad": 4},
    )


def _search_bar() -> Widget:
    return row(
        image("google", size=28, a11y=False),
        text("Search", size=16, color="muted", weight=1, a11y=False),
        image("mic", size=24, color="text", a11y=False),
        image("lens", size=24, color="text", a11y=False),
        id="search_container_hotseat", desc="Search", on_click=lambda: None, pad=12, hpad=tokens.EDGE, gap=12,
        bg="qsb_bg", radius=tokens.LAUNCHER_QSB_H / 2, min_h=tokens.LAUNCHER_QSB_H,
    )


def _glance(dev: "SimDevice") -> Widget:
    today = dev.clock.now().date()
    return row(text(dev.clock.fmt_weekday(today), id="date", size=22, color="launcher_text"),
               id="smartspace_card_pager", hpad=tokens.EDGE + 8, min_h=48)


def launcher(dev: "SimDevice", area: Box, m: Metrics) -> Widget:
    """The home screen's widgets, sized to fill ``area`` (the window between the bars)."""
    apps = dev.launcher_apps()
    dock_pkgs = [p for p in table("launcher")["hotseat"] if any(a.package == p for a in apps)]
    dock = [a for p in dock_pkgs for a in apps if a.package == p]
    workspace = [a for a in apps if a.package not in dock_pkgs]
    height = (area[3] - area[1]) / m.px_per_dp
    if dev.orientation == "landscape":
        return _landscape(dev, workspace, dock, height)
    cells = grid([_icon(dev, a) for a in workspace], columns=PORTRAIT_COLUMNS, id="workspace",
                 cell_h=tokens.LAUNCHER_CELL_H, gap=8)
    rows = math.ceil(len(workspace) / PORTRAIT_COLUMNS)
    grid_h = rows * tokens.LAUNCHER_CELL_H + max(0, rows - 1) * 8
    used = 16 + 48 + 24 + grid_h + tokens.LAUNCHER_HOTSEAT_H + 8 + tokens.LAUNCHER_QSB_H + 16
    return column(
        spacer(16),
        _glance(dev),
        spacer(24),
        cells,
        spacer(max(0.0, height - used)),
        grid([_icon(dev, a) for a in dock], columns=PORTRAIT_COLUMNS, id="hotseat", cell_h=tokens.LAUNCHER_HOTSEAT_H, gap=8),
        spacer(8),
        _search_bar(),
        spacer(16),
        id="launcher", pad=0, hpad=tokens.EDGE,
    )


def _landscape(dev: "SimDevice", workspace: list[App], dock: list[App], height: float) -> Widget:
    rows = math.ceil(len(workspace) / LANDSCAPE_COLUMNS)
    cell_h = min(tokens.LAUNCHER_CELL_H, 88)
    used = 8 + 48 + 8 + rows * cell_h + max(0, rows - 1) * 8 + tokens.LAUNCHER_QSB_H + 12
    left = column(
        spacer(8),
        _glance(dev),
        spacer(8),
        grid([_icon(dev, a) for a in workspace], columns=LANDSCAPE_COLUMNS, id="workspace", cell_h=cell_h, gap=8),
        spacer(max(0.0, height - used)),
        _search_bar(),
        spacer(12),
        weight=1,
    )
    dock_h = max(56.0, (height - 16) / max(1, len(dock)) - 8)
    hotseat = column(spacer(8), *[column(_icon(dev, a), min_h=dock_h) for a in dock], id="hotseat", gap=8, w=104)
    return row(left, hotseat, id="launcher", gap=tokens.EDGE, hpad=tokens.EDGE, align="start")
