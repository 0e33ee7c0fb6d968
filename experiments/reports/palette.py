"""One colour per meaning, shared by every figure ttir draws, and the style they are drawn in.

- :data:`CLEAN` — clean episodes (no perturbation), whatever the guard;
- :data:`GUARD_OFF` — perturbed episodes, or failures, with the guard off;
- :func:`guard_on` — the guard on (green; several modes are shades of it);
- :data:`REFERENCE` — targets and zero lines;
- :data:`ACTIONS` — what the guard did on a real screen (``ttir tune eval --real --plot``);
- :data:`STYLE` — matplotlib settings (readable font sizes, no top/right frame);
- :func:`integer_ticks`, :func:`mark_zeros` — counts get whole-number ticks and zero bars stay visible.

Importing this module needs matplotlib only for the helpers that take an Axes.
"""

from __future__ import annotations

from typing import Any, Sequence

CLEAN = "#4C72B0"  # blue
GUARD_OFF = "#DD8452"  # orange
GUARD_ON = "#55A868"  # green
GUARD_ON_SHADES = ("#55A868", "#2E7D46", "#8FCB9B", "#1B5E32")  # one per guard mode, when a run has several
REFERENCE = "#6E7781"  # grey
ACTIONS = {"dismiss": GUARD_ON, "engage": "#C44E52", "destructive": "#8C1C13", "back": "#8172B2",
           "other": "#937860", "wait": "#DA8BC3"}  # "none" is the rest of each bar
AGENT_HATCHES = ("", "//", "..", "xx", "\\\\", "++")  # agents are told apart by hatching: colour means guard

STYLE: dict[str, Any] = {
    "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "xtick.labelsize": 9, "ytick.labelsize": 9,
    "legend.fontsize": 9, "figure.titlesize": 11, "axes.spines.top": False, "axes.spines.right": False,
    "savefig.dpi": 130, "savefig.bbox": "tight",
}


def guard_colour(guard: str, modes: Sequence[str] = ()) -> str:
    """The colour of guard mode ``guard``: :data:`GUARD_OFF` for ``off``, else a shade of green
    (its place among the run's other on-modes ``modes``)."""
    if guard == "off":
        return GUARD_OFF
    on = [m for m in modes if m != "off"] or [guard]
    return GUARD_ON_SHADES[on.index(guard) % len(GUARD_ON_SHADES)] if guard in on else GUARD_ON


def integer_ticks(axis: Any) -> None:
    """Whole-number ticks on ``axis`` (``ax.yaxis``): counts are never 2.5."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def mark_zeros(ax: Any, bars: Any, colour: str, horizontal: bool = False) -> int:
    """A thick stroke on the baseline where a bar of ``bars`` is zero, so a zero reads as a
    measured zero, not a missing bar. Returns how many were marked."""
    n = 0
    for bar in bars:
        if horizontal:
            if bar.get_width() == 0:
                y0 = bar.get_y()
                ax.plot([0, 0], [y0, y0 + bar.get_height()], color=colour, linewidth=3, solid_capstyle="butt",
                        clip_on=False)
                n += 1
        elif bar.get_height() == 0:
            x0 = bar.get_x()
            ax.plot([x0, x0 + bar.get_width()], [0, 0], color=colour, linewidth=3, solid_capstyle="butt",
                    clip_on=False)
            n += 1
    return n
