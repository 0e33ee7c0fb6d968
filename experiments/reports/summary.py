"""The three lines a run's report opens with (report.md and viewer.html's header):

1. episodes — how many, how many raised, the agents, guard modes and perturbation settings;
2. success — clean vs perturbed (perturbed: episodes where the perturbation fired), per guard mode;
3. guard effect — failed episodes without → with the guard, over the same episodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from experiments.metrics.success import SuccessRow
    from experiments.report import RunMetrics


def _rate(rows: list["SuccessRow"]) -> Optional[str]:
    scored = sum(r.scored for r in rows)
    if not scored:
        return None
    won = sum(r.successes for r in rows)
    return f"{100 * won / scored:.1f} % ({won}/{scored})"


def summary_lines(m: "RunMetrics") -> list[str]:
    """Three plain-text lines: episodes, success clean vs perturbed, the guard's effect.

    Args:
        m: the run's metrics (``experiments.report.compute_metrics``).

    Returns:
        The three lines, without markup (callers escape or format them).
    """
    settings = len({r.perturbation for r in m.success})
    raised = f", {m.errors} raised" if m.errors else ""
    episodes = (f"Episodes: {m.episodes}{raised} — {len(m.agents)} agent(s) × {len(m.guards)} guard mode(s) "
                f"× {settings} perturbation setting(s).")
    parts = []
    for guard in m.guards:
        rows = [r for r in m.success if r.guard == guard]
        clean = _rate([r for r in rows if r.fired is None])
        perturbed = _rate([r for r in rows if r.fired is not None])
        said = [f"clean {clean}" if clean else "", f"perturbed {perturbed}" if perturbed else ""]
        if any(said):
            parts.append(f"guard {guard}: " + ", ".join(s for s in said if s))
    success = "Success: " + ("; ".join(parts) if parts else "no scored episode") + \
        " (done-gated; perturbed counts episodes where the perturbation fired)."
    effects = []
    for guard in dict.fromkeys(f.guard for f in m.failures):
        for condition in ("perturbed", "clean"):
            rows = [f for f in m.failures if f.guard == guard and f.condition == condition]
            if not rows:
                continue
            off, on = sum(f.failed_without for f in rows), sum(f.failed_with for f in rows)
            change = f" ({100 * (on - off) / off:+.0f} %)" if off else ""
            effects.append(f"{condition} {off} → {on}{change} with guard {guard}")
    guard = ("Guard effect: failed episodes without → with the guard, same episodes: " + "; ".join(effects) + "."
             if effects else "Guard effect: not measured (the run has no guard-off episodes to compare with).")
    return [episodes, success, guard]
