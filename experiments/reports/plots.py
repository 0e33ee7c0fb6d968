"""PNG plots of a RunMetrics (matplotlib, the optional ``plots`` extra).

- ``fig4_failed_<agent>.png``  failed episodes with and without the guard, clean and perturbed (Figure 4)
- ``per_type_<agent>.png``  clean → perturbed success per perturbation type, every guard mode in one chart (Figures 6/7)
- ``components_delta.png``  Δc per component (and AnTrap layer, when the run has traps) for every agent × guard mode (Table 2)
- ``plot_real_screens``  the real-screen report: recall per collection round, the guard's actions

Importing this module raises ImportError when matplotlib is missing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

if TYPE_CHECKING:
    from experiments.report import RunMetrics

from experiments.reports.palette import (ACTIONS, AGENT_HATCHES, CLEAN, GUARD_OFF, REFERENCE, STYLE, guard_colour,
                                         integer_ticks, mark_zeros)



def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def plot_failures(m: "RunMetrics", out: Path) -> list[Path]:
    paths = []
    for agent in dict.fromkeys(r.agent for r in m.failures):
        rows = [r for r in m.failures if r.agent == agent]
        modes = list(dict.fromkeys(r.guard for r in rows))
        fig, axes = plt.subplots(1, len(modes), figsize=(4.8 * len(modes), 3.8), squeeze=False)
        for ax, mode in zip(axes[0], modes):
            sub = {r.condition: r for r in rows if r.guard == mode}
            conds = [c for c in ("clean", "perturbed") if c in sub]
            xs = range(len(conds))
            w = 0.38
            b1 = ax.bar([x - w / 2 for x in xs], [sub[c].failed_without for c in conds], w, label="guard off",
                        color=GUARD_OFF)
            b2 = ax.bar([x + w / 2 for x in xs], [sub[c].failed_with for c in conds], w, label=f"guard {mode}",
                        color=guard_colour(mode, m.guards))
            ax.bar_label(b1)
            ax.bar_label(b2)
            mark_zeros(ax, b1, GUARD_OFF)
            mark_zeros(ax, b2, guard_colour(mode, m.guards))
            integer_ticks(ax.yaxis)
            ax.set_xticks(list(xs), [f"{c.capitalize()}\n(n={sub[c].episodes})" +
                                     ("" if sub[c].reduction is None else f"\n−{100 * sub[c].reduction:.0f} %")
                                     for c in conds])
            ax.set_ylabel("failed episodes")
            ax.set_title(f"off vs {mode}")
            ax.legend()
            ax.margins(y=0.15)
            ax.set_ylim(bottom=0, top=max(1.0, ax.get_ylim()[1]))
        fig.suptitle(f"Failed episodes with and without the guard — {m.label(agent)}")
        fig.tight_layout()
        p = out / f"fig4_failed_{_safe(agent)}.png"
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)
    return paths


def plot_per_type(m: "RunMetrics", out: Path) -> list[Path]:
    """Per agent, one figure: per perturbation type the clean success rate (guard off) and the
    perturbed one under every guard mode side by side, so the guard's effect reads off one chart."""
    paths = []
    for agent in dict.fromkeys(r.agent for r in m.per_type):
        rows = [r for r in m.per_type if r.agent == agent]
        groups = list(dict.fromkeys(c.group for r in rows for c in r.cells if c.pairs))
        if not groups:
            continue
        base = next((r for r in rows if r.guard == "off"), rows[0])
        series = [(f"clean (guard {base.guard})", CLEAN, {g: base.cell(g) for g in groups}, "clean_sr")]
        for r in rows:
            series.append((f"perturbed, guard {r.guard}", guard_colour(r.guard, m.guards), {g: r.cell(g) for g in groups},
                           "pert_sr"))
        fig, ax = plt.subplots(figsize=(8.5, (0.2 * len(series) + 0.18) * len(groups) + 1.8))
        ys = list(range(len(groups)))[::-1]
        h = 0.8 / len(series)
        for k, (label, colour, cells, field) in enumerate(series):
            off = (len(series) - 1) / 2 - k
            vals = [100 * (getattr(cells[g], field) or 0) if cells[g] is not None else 0 for g in groups]
            bars = ax.barh([y + off * h for y in ys], vals, h, label=label, color=colour)
            mark_zeros(ax, [b for b, g in zip(bars, groups) if cells[g] is not None and cells[g].pairs], colour,
                       horizontal=True)
            for y, v, g in zip(ys, vals, groups):
                if cells[g] is not None and cells[g].pairs:
                    ax.text(v + 1, y + off * h, f"{v:.0f}", va="center", fontsize=8)
        names = []
        for g in groups:
            cell = base.cell(g) or next(r.cell(g) for r in rows if r.cell(g) is not None)
            name = g.replace("{", "\n{", 1) if len(g) > 28 else g  # long labels (overrides) wrap
            names.append(f"{name}\n(n={cell.pairs}" + (f", +{cell.not_reached} not reached" if cell.not_reached else "") + ")")
        ax.set_yticks(ys, names, fontsize=8)
        ax.set_xlim(0, 112)
        ax.set_xlabel("success rate (%, done-gated)")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.5 / len(groups)),
                  ncol=min(3, len(series)), frameon=False)
        ax.set_title(f"Clean vs perturbed per type, guard off and on — {m.label(agent)}")
        fig.tight_layout()
        p = out / f"per_type_{_safe(agent)}.png"
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)
    return paths


def plot_components(m: "RunMetrics", out: Path) -> list[Path]:
    groups: list[str] = []
    for rows, prefix in ((m.components, ""), (m.layers, "AnTrap ")):
        for r in rows:
            for c in r.cells:
                if c.pairs and c.group != "overall" and prefix + c.group not in groups:
                    groups.append(prefix + c.group)
    settings = list(dict.fromkeys([(r.agent, r.guard) for r in m.components] + [(r.agent, r.guard) for r in m.layers]))
    if not groups or not settings:
        return []
    fig, ax = plt.subplots(figsize=(min(12.0, max(6.0, 0.35 * len(groups) * len(settings) + 2)), 4.4))
    w = 0.8 / len(settings)
    agents = list(dict.fromkeys(a for a, _ in settings))
    for i, (agent, guard) in enumerate(settings):
        vals = []
        for g in groups:
            src = m.layers if g.startswith("AnTrap ") else m.components
            row = next((r for r in src if (r.agent, r.guard) == (agent, guard)), None)
            cell = row.cell(g.removeprefix("AnTrap ")) if row is not None else None
            vals.append(100 * cell.delta_c if cell is not None and cell.delta_c is not None else 0.0)
        colour = guard_colour(guard, m.guards)  # colour: the guard mode, as in every figure; hatching: the agent
        bars = ax.bar([x + (i - (len(settings) - 1) / 2) * w for x in range(len(groups))], vals, w,
                      label=f"{m.label(agent)} · guard {guard}", color=colour,
                      hatch=AGENT_HATCHES[agents.index(agent) % len(AGENT_HATCHES)] or None, edgecolor="white",
                      linewidth=0.5)
        ax.bar_label(bars, fmt="%.0f", fontsize=8)
        mark_zeros(ax, bars, colour)
    ax.axhline(0, color=REFERENCE, linewidth=0.6)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel("Δc = SR clean − SR perturbed (points)")
    what = " and ".join(x for x, present in (("component", any(not g.startswith("AnTrap ") for g in groups)),
                                             ("AnTrap layer", any(g.startswith("AnTrap ") for g in groups))) if present)
    ax.set_title(f"Success-rate drop per {what} (orange: guard off, green: guard on)")
    ax.legend(ncol=min(3, len(settings)), loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
    fig.tight_layout()
    p = out / "components_delta.png"
    fig.savefig(p)
    plt.close(fig)
    return [p]


def write_plots(m: "RunMetrics", out: Path) -> list[Path]:
    """Every figure of a run's report into ``out``, in the shared style and palette."""
    out.mkdir(parents=True, exist_ok=True)
    with plt.rc_context(STYLE):
        return plot_failures(m, out) + plot_per_type(m, out) + plot_components(m, out)


FREE_TIER_RECALL_TARGET = 75  # % of a split's pop-ups the guard without a model should find


def plot_real_screens(report: dict, out: Path) -> Path:
    """The real-screen report (``ttir tune eval --real --plot``): pop-ups found per
    collection round with their 95 % intervals over repositories (every round after
    the first was a fresh check), and what a guarded wait-only agent did on each
    category of screen."""
    with plt.rc_context(STYLE):
        return _plot_real_screens(report, out)


def _plot_real_screens(report: dict, out: Path) -> Path:
    rounds = {k: h for k, h in report["by_round"].items() if h["interference"]}
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [1.4, 1]})
    names = [f"{k if k != '0' else '?'}\n{h['detected']}/{h['interference']}" for k, h in rounds.items()]
    recall = [h["detected"] / h["interference"] for h in rounds.values()]
    lo = [r - (h.get("recall_interval") or (r, r))[0] for r, h in zip(recall, rounds.values())]
    hi = [(h.get("recall_interval") or (r, r))[1] - r for r, h in zip(recall, rounds.values())]
    left.bar(names, [100 * r for r in recall], color=guard_colour("rules"), yerr=[[100 * v for v in lo], [100 * v for v in hi]],
                    capsize=3)
    # the free tier's bar (issue 30); the 90 % of the paper's mode belongs to the guard with a capable model
    left.axhline(FREE_TIER_RECALL_TARGET, color=REFERENCE, linestyle="--", linewidth=1,
                 label=f"free-tier target {FREE_TIER_RECALL_TARGET} %")
    left.set_ylim(0, 110)
    left.set_ylabel("pop-ups found (%)")
    left.set_xlabel("collection round, found / pop-ups", fontsize=8)
    left.set_title("interference recall per collection round", fontsize=10)
    left.legend(fontsize=8, loc="lower right")
    left.tick_params(axis="x", labelsize=8)
    acts = report["guard"]["actions"]
    cats = [c for c in ("interference", "wanted", "ordinary") if sum(acts.get(c, {}).values())]
    colours = ACTIONS  # "none" is the rest of each bar
    bottom = [0.0] * len(cats)
    for cls, colour in colours.items():
        share = [100 * acts[c].get(cls, 0) / max(1, sum(acts[c].values())) for c in cats]
        right.bar(cats, share, bottom=bottom, color=colour, label=cls)
        bottom = [b + v for b, v in zip(bottom, share)]
    right.set_xticks(range(len(cats)), [f"{c}\n(n={sum(acts[c].values())})" for c in cats])
    right.set_ylabel("screens acted on (%)")
    right.set_title("the guard's first action (the rest: none)", fontsize=10)
    right.legend(fontsize=8, ncol=2, loc="upper right")
    right.set_ylim(0, 1.35 * max(bottom + [1.0]))  # room for the legend above the tallest bar
    fig.suptitle(f"Real screens, {report.get('split', '?')} split: {report['screens']} screens from "
                 f"{report['repos']} repositories "
                 + ("(free tier: rules + screen model)" if report.get("screen_model") else "(free tier: rules alone)"),
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out
