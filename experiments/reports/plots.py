"""PNG plots of a RunMetrics (matplotlib, the optional ``plots`` extra).

- ``fig4_failed_<agent>.png``  failed episodes with and without the guard, clean and perturbed (Figure 4)
- ``per_type_<agent>_<guard>.png``  clean → perturbed success per perturbation type (Figures 6/7)
- ``components_delta.png``  Δc per component and AnTrap layer for every agent × guard mode (Table 2)

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

CLEAN_COLOUR, PERT_COLOUR, GUARD_COLOUR = "#4C72B0", "#DD8452", "#55A868"


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
                        color=PERT_COLOUR)
            b2 = ax.bar([x + w / 2 for x in xs], [sub[c].failed_with for c in conds], w, label=f"guard {mode}",
                        color=GUARD_COLOUR)
            ax.bar_label(b1)
            ax.bar_label(b2)
            ax.set_xticks(list(xs), [f"{c.capitalize()}\n(n={sub[c].episodes})" +
                                     ("" if sub[c].reduction is None else f"\n−{100 * sub[c].reduction:.0f} %")
                                     for c in conds])
            ax.set_ylabel("failed episodes")
            ax.set_title(f"off vs {mode}")
            ax.legend(fontsize=8)
            ax.margins(y=0.15)
        fig.suptitle(f"Failed episodes with and without the guard — {m.label(agent)}", fontsize=10)
        fig.tight_layout()
        p = out / f"fig4_failed_{_safe(agent)}.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    return paths


def plot_per_type(m: "RunMetrics", out: Path) -> list[Path]:
    paths = []
    for row in m.per_type:
        cells = [c for c in row.cells if c.pairs]
        if not cells:
            continue
        fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(cells) + 1.4))
        ys = list(range(len(cells)))[::-1]
        h = 0.38
        ax.barh([y + h / 2 for y in ys], [100 * (c.clean_sr or 0) for c in cells], h, label="clean (before)",
                color=CLEAN_COLOUR)
        ax.barh([y - h / 2 for y in ys], [100 * (c.pert_sr or 0) for c in cells], h, label="perturbed (after)",
                color=PERT_COLOUR)
        ax.set_yticks(ys, [f"{c.group} (n={c.pairs})" for c in cells], fontsize=8)
        ax.set_xlim(0, 112)
        ax.set_xlabel("success rate (%)")
        for y, c in zip(ys, cells):
            ax.text(100 * (c.pert_sr or 0) + 1, y - h / 2, f"{100 * (c.pert_sr or 0):.0f}", va="center", fontsize=7)
            ax.text(100 * (c.clean_sr or 0) + 1, y + h / 2, f"{100 * (c.clean_sr or 0):.0f}", va="center", fontsize=7)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16 - 0.6 / len(cells)), ncol=2,
                  frameon=False)
        ax.set_title(f"Clean → perturbed per type — {m.label(row.agent)} · guard {row.guard}", fontsize=9)
        fig.tight_layout()
        p = out / f"per_type_{_safe(row.agent)}_{_safe(row.guard)}.png"
        fig.savefig(p, dpi=110)
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
    colours = plt.get_cmap("tab10")
    for i, (agent, guard) in enumerate(settings):
        vals = []
        for g in groups:
            src = m.layers if g.startswith("AnTrap ") else m.components
            row = next((r for r in src if (r.agent, r.guard) == (agent, guard)), None)
            cell = row.cell(g.removeprefix("AnTrap ")) if row is not None else None
            vals.append(100 * cell.delta_c if cell is not None and cell.delta_c is not None else 0.0)
        bars = ax.bar([x + (i - (len(settings) - 1) / 2) * w for x in range(len(groups))], vals, w,
                      label=f"{agent} · guard {guard}", color=colours(agents.index(agent) % 10),
                      hatch=None if guard == "off" else "//", edgecolor="white" if guard == "off" else "black",
                      linewidth=0.5)
        ax.bar_label(bars, fmt="%.0f", fontsize=6)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel("Δc = SR clean − SR perturbed (points)")
    ax.set_title("Success-rate drop per component and AnTrap layer (hatched: guard on)", fontsize=9)
    ax.legend(fontsize=7, ncol=min(3, len(settings)), loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
    fig.tight_layout()
    p = out / "components_delta.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return [p]


def write_plots(m: "RunMetrics", out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    return plot_failures(m, out) + plot_per_type(m, out) + plot_components(m, out)
