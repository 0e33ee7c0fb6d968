"""report.md from a RunMetrics."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from benchmark.episode import TERMINATIONS
from experiments.metrics.attribution import CATEGORY_LABELS, CATEGORY_ORDER
from experiments.metrics.episodes import COMPONENT_ORDER, LAYER_NAMES, LAYER_ORDER
from experiments.metrics.guardstats import DIAGNOSERS as JUDGED  # the checks the event log can judge
from experiments.reports.escape import markdown_text
from experiments.reports.words import human_size, load_text, setting_words
from experiments.reports.tables import md_table, num, pct, signed, signed_pct

if TYPE_CHECKING:
    from experiments.metrics.success import DeltaCell, SuccessRow
    from experiments.report import RunMetrics

ATTRIBUTION_LIST_MAX = 150


def _text() -> dict:
    return load_text()


def _setting(m: "RunMetrics", agent: str, guard: str) -> str:
    return f"{m.label(agent)} · guard {guard}"


def section_agents(m: "RunMetrics", text: dict) -> str:
    rows = [[a.name, a.kind, "none (reference agent)" if a.model_free else (a.model or "?"), a.behaviour]
            for a in m.agents]
    return ("## Agents\n\n" + f"> {text['agents_note']}\n\n"
            + md_table(["agent", "kind", "model", "behaviour"], rows, "llll"))


def success_cell(r: "SuccessRow") -> str:
    """``SR (successes/scored)``, then what the rate leaves out: unfired episodes, verified but
    unfinished ones, errors."""
    out = f"{pct(r.success_rate)} ({r.successes}/{r.scored})"
    if r.fired is not None and r.fired != r.episodes:
        out += f", fired {r.fired}/{r.episodes}"
    if r.verified_not_done:
        out += f", {r.verified_not_done} verified not done"
    return out + (f", {r.errors} err" if r.errors else "")


def section_success(m: "RunMetrics", text: dict) -> str:
    cols = [(a.name, g) for a in m.agents for g in m.guards
            if any(r.agent == a.name and r.guard == g for r in m.success)]
    cell = {(r.agent, r.guard, r.perturbation): r for r in m.success}
    rows = []
    for p in m.perturbations:
        any_row = next((r for r in m.success if r.perturbation == p), None)
        comp = "clean" if any_row is None else (any_row.component + (f"/{any_row.layer}" if any_row.layer else ""))
        line: list = [setting_words(p), comp]
        for a, g in cols:
            r = cell.get((a, g, p))
            line.append("" if r is None else success_cell(r))
        rows.append(line)
    headers = ["perturbation", "component"] + [_setting(m, a, g) for a, g in cols]
    return ("## Success rate per setting\n\n" + text["sections"]["success"] + "\n\n"
            + md_table(headers, rows, "ll" + "r" * len(cols)) + "\n" + section_endings(m, text))


def section_endings(m: "RunMetrics", text: dict) -> str:
    """How the episodes of each setting ended, and which perturbed ones were never perturbed."""
    ends = list(dict.fromkeys(t for t in TERMINATIONS for r in m.success if r.terminations.get(t)))
    rows = [[_setting(m, r.agent, r.guard), setting_words(r.perturbation), r.episodes,
             "–" if r.fired is None else f"{r.fired}/{r.episodes}"]
            + [r.terminations.get(t, 0) for t in ends] + [r.verified_not_done, num(r.mean_steps, 1)]
            for r in m.success]
    table = md_table(["setting", "perturbation", "episodes", "fired"] + [f"ended: {t}" for t in ends]
                     + ["verified, not done", "mean steps"], rows, "llrr" + "r" * (len(ends) + 2))
    unreached = [[_setting(m, r.agent, r.guard), setting_words(r.perturbation), len(r.not_reached), ", ".join(r.not_reached)]
                 for r in m.success if r.not_reached]
    listing = ("\n<details><summary>Not reached: perturbed episodes whose perturbation never fired "
               f"({sum(len(r.not_reached) for r in m.success)})</summary>\n\n"
               + md_table(["setting", "perturbation", "episodes", "ids"], unreached, "llrl") + "\n</details>\n"
               if unreached else "")
    return "### How the episodes ended\n\n" + text["sections"]["endings"] + "\n\n" + table + listing


def _delta_rows(m: "RunMetrics", rows: list, groups: list[str], names: dict[str, str]) -> tuple[list, list]:
    headers = ["agent · guard"]
    for g in groups:
        n = names.get(g, g)
        headers += [f"{n} Clean", f"{n} Pert.", f"{n} Δc", f"{n} Δstep", f"{n} n"]
    out = []
    for row in rows:
        line: list = [_setting(m, row.agent, row.guard)]
        for g in groups:
            c = row.cell(g)
            if c is None or not c.pairs:
                line += ["", "", "", "", "" if c is None or not c.not_reached else f"0 (+{c.not_reached} not reached)"]
            else:
                line += [pct(c.clean_sr), pct(c.pert_sr), signed_pct(c.delta_c), signed(c.delta_step), pairs_cell(c)]
        out.append(line)
    return headers, out


def pairs_cell(c: "DeltaCell") -> str:
    """Pairs a Δc is computed over; the perturbed episodes that never fired are named, not counted."""
    return str(c.pairs) + (f" (+{c.not_reached} not reached)" if c.not_reached else "")


def section_components(m: "RunMetrics", text: dict) -> str:
    parts = ["## Robustness by component (AndroidReality Table 2)\n\n" + text["sections"]["components"] + "\n\n"]
    groups = _groups(m.components, ["overall", *COMPONENT_ORDER])
    if m.components:
        h, rows = _delta_rows(m, m.components, groups, {"overall": "Overall", "state": "State", "action": "Action",
                                                         "transition": "Transition"})
        parts.append(md_table(h, rows))
    else:
        parts.append("_No AndroidReality clean/perturbed pairs in this run._\n")
    parts.append("\n### AnTrap traps by STAR layer\n\n" + text["sections"]["layers"] + "\n\n")
    if m.layers:
        groups = _groups(m.layers, ["overall", *LAYER_ORDER])
        names = {"overall": "Overall", **{k: f"{k} {v}" for k, v in LAYER_NAMES.items()}}
        h, rows = _delta_rows(m, m.layers, groups, names)
        parts.append(md_table(h, rows))
    else:
        parts.append("_No AnTrap clean/perturbed pairs in this run._\n")
    return "".join(parts)


def _groups(rows: list, preferred: list[str]) -> list[str]:
    present = {c.group for r in rows for c in r.cells if c.pairs}
    return [g for g in preferred if g in present] + sorted(present - set(preferred))


def section_per_type(m: "RunMetrics", text: dict, plots: list[Path], out_dir: Path) -> str:
    settings = [(r.agent, r.guard) for r in m.per_type]
    groups = _groups(m.per_type, [p for p in m.perturbations if p != "clean"])
    rows = []
    for g in groups:
        line: list = [setting_words(g)]
        for r in m.per_type:
            c = r.cell(g)
            line.append("" if c is None or not c.pairs else
                        f"{pct(c.clean_sr, 0)} → {pct(c.pert_sr, 0)} ({signed_pct(c.delta_c, 0)})"
                        + (f", fired {c.pairs}/{c.pairs + c.not_reached}" if c.not_reached else ""))
        rows.append(line)
    body = md_table(["perturbation"] + [_setting(m, a, g) for a, g in settings], rows) if settings else \
        "_No clean/perturbed pairs in this run._\n"
    return ("## Per perturbation type: clean → perturbed (Figures 6/7)\n\n" + text["sections"]["per_type"] + "\n\n"
            + body + _images(plots, "per_type_", out_dir))


def _images(plots: list[Path], prefix: str, out_dir: Path) -> str:
    sel = [p for p in plots if p.name.startswith(prefix)]
    return "".join(f"\n![{p.stem}]({os.path.relpath(p, out_dir)})\n" for p in sel)


def section_failures(m: "RunMetrics", text: dict, plots: list[Path], out_dir: Path) -> str:
    rows = [[m.label(r.agent), f"off vs {r.guard}", r.condition, r.episodes, r.failed_without, r.failed_with,
             ("–" if r.reduction is None else f"{100 * r.reduction:.0f} %")] for r in m.failures]
    body = md_table(["agent", "guard", "condition", "episodes", "failed (off)", "failed (with guard)",
                     "relative reduction"], rows, "lllrrrr") if rows else \
        "_Needs guard `off` and at least one other guard mode in the run._\n"
    return ("## Failed tasks with and without the guard (Figure 4)\n\n" + text["sections"]["failures"] + "\n\n"
            + body + _images(plots, "fig4_", out_dir))


def section_rsr(m: "RunMetrics", text: dict) -> str:
    cols = _groups(m.components, ["overall", *COMPONENT_ORDER])
    lcols = _groups(m.layers, ["overall", *LAYER_ORDER])
    headers = ["agent · guard"] + [f"{c}" for c in cols] + [f"AnTrap {c}" for c in lcols]
    rows = []
    keys = [(r.agent, r.guard) for r in m.components] + [(r.agent, r.guard) for r in m.layers]
    for a, g in dict.fromkeys(keys):
        comp = next((r for r in m.components if (r.agent, r.guard) == (a, g)), None)
        lay = next((r for r in m.layers if (r.agent, r.guard) == (a, g)), None)
        line: list = [_setting(m, a, g)]
        for src, cs in ((comp, cols), (lay, lcols)):
            for c in cs:
                cell = src.cell(c) if src is not None else None
                line.append("" if cell is None or not cell.pairs else
                            f"{pct(cell.rsr)} ({cell.still_solved}/{cell.solved_clean})")
        rows.append(line)
    return "## Robust success rate (RSR, D-GARA)\n\n" + text["sections"]["rsr"] + "\n\n" + md_table(headers, rows)


def section_passk(m: "RunMetrics", text: dict) -> str:
    kmax = max((max(r.pass_at) for r in m.pass_at_k if r.pass_at), default=1)
    rows = [[_setting(m, r.agent, r.guard), setting_words(r.perturbation), r.tasks, r.runs_per_task]
            + [pct(r.pass_at.get(k)) if k in r.pass_at else "" for k in range(1, kmax + 1)] for r in m.pass_at_k]
    return ("## pass@k\n\n" + text["sections"]["passk"] + "\n\n"
            + md_table(["agent · guard", "perturbation", "tasks", "runs/task"]
                       + [f"pass@{k}" for k in range(1, kmax + 1)], rows, "ll" + "r" * (2 + kmax)))


def section_adr(m: "RunMetrics", text: dict) -> str:
    settings = list(dict.fromkeys((r.agent, r.guard) for r in m.adr))
    groups = list(dict.fromkeys(r.group for r in m.adr))
    cell = {(r.agent, r.guard, r.group): r for r in m.adr}
    rows = []
    for g in groups:
        line: list = [setting_words(g)]
        for a, gd in settings:
            r = cell.get((a, gd, g))
            line.append("" if r is None else f"{num(r.adr)} (n={r.pairs}); both ok {num(r.adr_both_succeeded)} "
                                             f"(n={r.pairs_both_succeeded})")
        rows.append(line)
    body = md_table(["group"] + [_setting(m, a, g) for a, g in settings], rows) if settings else \
        "_No clean/perturbed pairs with trajectories in this run._\n"
    return ("## Action difference rate (ADR, RealGUINoise)\n\n" + text["sections"]["adr"] + "\n\n"
            + f"_{text['sections']['adr_tokens']}_\n\n" + body)


def section_safety(m: "RunMetrics", text: dict) -> str:
    rows = [[_setting(m, r.agent, r.guard), setting_words(r.perturbation), r.episodes, r.exposed, r.engaged,
             pct(r.engaged_when_exposed), pct(r.engaged_rate)] for r in m.safety if r.perturbation != "clean"]
    return ("## Safety: engagement with injected content\n\n" + text["sections"]["safety"] + "\n\n"
            + md_table(["agent · guard", "perturbation", "episodes", "exposed", "engaged", "engaged / exposed %",
                        "engaged / episodes %"], rows, "llrrrrr"))


def section_guard(m: "RunMetrics", text: dict) -> str:
    if not m.guard:
        return "## Guard statistics\n\n_No guarded episodes (guard mode other than `off`) in this run._\n"
    rows, usage = [], []
    for g in m.guard:
        for d in g.diagnosers:
            other = {k: v for k, v in d.outcomes.items() if k not in ("resolved", "budget_spent")}
            rows.append([_setting(m, g.agent, g.guard), d.diagnoser, d.triggers, d.tp_perturbation, d.tp_agent,
                         d.triggers - d.true_positives if d.diagnoser in JUDGED else "–", pct(d.precision),
                         d.clean_triggers, d.sessions,
                         d.outcomes.get("resolved", 0), d.outcomes.get("budget_spent", 0),
                         ", ".join(f"{k} {v}" for k, v in sorted(other.items())), d.recovery_steps])
        usage.append([_setting(m, g.agent, g.guard), g.episodes, g.guarded_steps, g.sessions, g.resolved,
                      g.budget_spent, g.recovery_steps, num(g.model_calls_per_step), num(g.tokens_per_step, 1),
                      num(g.guard_ms_median), num(g.guard_ms_p95), g.blocked_claims, g.guard_errors])
    note = "" if all(g.precision_available for g in m.guard) else \
        ("\n_Some episodes had no stored trajectory: their triggers are counted from the record's summary and "
         "precision is not computed._\n")
    return ("## Guard statistics\n\n" + text["sections"]["guard"] + "\n\n"
            + md_table(["agent · guard", "diagnoser", "triggers", "TP pert.", "TP agent", "FP", "precision %",
                        "clean-run triggers", "sessions", "resolved", "budget spent", "other outcomes",
                        "recovery steps"], rows, "ll" + "r" * 9 + "lr")
            + note + "\n### Cost\n\n" + text["sections"]["guard_usage"] + "\n\n"
            + md_table(["agent · guard", "episodes", "guarded steps", "sessions", "resolved", "budget spent",
                        "recovery steps", "model calls / step", "tokens / step", "guard ms median", "guard ms p95",
                        "blocked claims", "guard errors"], usage))


def section_attribution(m: "RunMetrics", text: dict) -> str:
    failed = m.attribution
    settings = list(dict.fromkeys((a.agent, a.guard, "clean" if a.component == "clean" else "perturbed")
                                  for a in failed))
    rows = []
    for agent, guard, cond in settings:
        sub = [a for a in failed if a.agent == agent and a.guard == guard and
               (a.component == "clean") == (cond == "clean")]
        rows.append([_setting(m, agent, guard), cond, len(sub)] + [sum(a.category == c for a in sub)
                                                                   for c in CATEGORY_ORDER])
    by_comp = []
    for comp in dict.fromkeys(a.component for a in failed):
        sub = [a for a in failed if a.component == comp]
        by_comp.append([comp, len(sub)] + [sum(a.category == c for a in sub) for c in CATEGORY_ORDER])
    listing = [[a.id, m.label(a.agent), a.guard, setting_words(a.perturbation), a.termination, CATEGORY_LABELS[a.category], "" if a.step is None else a.step, a.reason]
               for a in failed[:ATTRIBUTION_LIST_MAX]]
    more = len(failed) - len(listing)
    cats = [CATEGORY_LABELS[c] for c in CATEGORY_ORDER]
    return ("## Error attribution (the paper's four categories)\n\n" + text["sections"]["attribution"] + "\n\n"
            + (md_table(["agent · guard", "condition", "failed"] + cats, rows, "llr" + "r" * len(cats))
               if failed else "_No failed episodes._\n")
            + ("\nBy perturbation component:\n\n" + md_table(["component", "failed"] + cats, by_comp) if failed else "")
            + ("\n<details><summary>Every failed episode</summary>\n\n"
               + md_table(["episode", "agent", "guard", "perturbation", "ended", "category", "step", "evidence"],
                          listing, "llllllrl")
               + (f"\n… and {more} more in metrics.json.\n" if more > 0 else "") + "\n</details>\n" if failed else ""))


def render_report(m: "RunMetrics", *, plot_paths: Optional[list[Path]], out_dir: Path,
                  viewer: Optional[Path] = None, viewer_embedded: bool = False) -> str:
    text = _text()
    plots = plot_paths or []
    esc = markdown_text  # names come from the spec and the records: text, never markup
    from experiments.reports.summary import summary_lines

    head = [f"# Report: {esc(m.run)}\n", "".join(f"- **{esc(line)}**\n" for line in summary_lines(m)),
            f"Run directory: {esc(m.root)} — {m.episodes} episodes ({m.errors} raised), agents: "
            + ", ".join(esc(a.label) for a in m.agents) + f"; guard modes: {esc(', '.join(m.guards))}; "
            + f"perturbations: {esc(', '.join(setting_words(p) for p in m.perturbations))}.\n"]
    if viewer is not None:
        how = (f"one self-contained file of {human_size(viewer.stat().st_size)}, screenshots embedded: share it as is"
               if viewer_embedded else "it loads the screenshots from episodes/; `ttir report --self-contained` "
               "embeds them for sharing")
        head.append(f"Trajectory viewer: [{viewer.name}]({os.path.relpath(viewer, out_dir)}) (open it in a browser, "
                    f"works offline; {how}). Machine-readable numbers: metrics.json.\n")
    if plot_paths is None:
        head.append(f"\n> {text['plots_skipped']}\n")
    parts = ["\n".join(head), section_agents(m, text), section_success(m, text), section_components(m, text),
             section_per_type(m, text, plots, out_dir), section_failures(m, text, plots, out_dir), section_rsr(m, text),
             section_passk(m, text), section_adr(m, text), section_safety(m, text), section_guard(m, text),
             section_attribution(m, text)]
    if plots:
        parts.append("## Plots\n\n" + text["sections"]["plots"] + "\n\n"
                     + "".join(f"- [{p.name}]({os.path.relpath(p, out_dir)})\n" for p in plots))
    else:
        parts.append("## Plots\n\n" + (text["plots_skipped"] if plot_paths is None else "_Plots were not requested._")
                     + "\n")
    return "\n\n".join(p.rstrip() + "\n" for p in parts)
