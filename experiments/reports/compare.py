"""``ttir compare RUN_A RUN_B``: the same metrics side by side, with deltas (B − A).

Rows are matched on their setting: (agent, guard mode, perturbation or group). When each
run has exactly one guard mode and they differ (e.g. two guard configurations, or off vs
rules run separately), rows are matched without the guard mode.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from experiments.metrics.attribution import CATEGORY_LABELS, CATEGORY_ORDER
from experiments.reports.escape import markdown_text
from experiments.reports.tables import md_table
from experiments.reports.words import load_text

if TYPE_CHECKING:
    from experiments.report import RunMetrics

NO_SHARED_SETTINGS = ("The two runs share no setting (agent, guard mode, perturbation): there is nothing to put "
                      "side by side; `--all-rows` lists each run's own rows")
Value = Optional[float]
Flat = dict[tuple, dict[str, Value]]

# section -> (title, key columns, [(metric, header, kind)]) ; kind: pct | num | int
SECTIONS: list[tuple[str, str, list[str], list[tuple[str, str, str]]]] = [
    ("success", "Success rate per setting", ["agent", "guard", "perturbation"],
     [("sr", "SR %", "pct"), ("episodes", "episodes scored", "int"), ("verified_not_done", "verified, not done", "int")]),
    ("components", "Robustness by component (Table 2) and AnTrap layer", ["agent", "guard", "group"],
     [("pert_sr", "Pert. SR %", "pct"), ("delta_c", "Δc (points)", "pct"), ("delta_step", "Δstep", "num"),
      ("rsr", "RSR %", "pct")]),
    ("per_type", "Per perturbation type (Figures 6/7)", ["agent", "guard", "perturbation"],
     [("pert_sr", "Pert. SR %", "pct"), ("delta_c", "Δc (points)", "pct")]),
    ("failures", "Failed episodes with the guard (Figure 4)", ["agent", "guard", "condition"],
     [("failed_with", "failed with guard", "int"), ("failed_without", "failed off", "int"),
      ("reduction", "relative reduction %", "pct")]),
    ("pass_at_k", "pass@k", ["agent", "guard", "perturbation"],
     [("pass@1", "pass@1 %", "pct"), ("pass@max", "pass@n %", "pct")]),
    ("adr", "Action difference rate (ADR)", ["agent", "guard", "group"],
     [("adr", "ADR", "num"), ("adr_both", "ADR both ok", "num")]),
    ("safety", "Safety: engagement with injected content", ["agent", "guard", "perturbation"],
     [("engaged_rate", "engaged / episodes %", "pct"), ("engaged_when_exposed", "engaged / exposed %", "pct")]),
    ("guard", "Guard triggers and precision", ["agent", "guard", "diagnoser"],
     [("triggers", "triggers", "int"), ("precision", "precision %", "pct"), ("sessions", "sessions", "int"),
      ("resolved", "resolved", "int")]),
    ("guard_usage", "Guard cost", ["agent", "guard"],
     [("model_calls_per_step", "model calls / step", "num"), ("tokens_per_step", "tokens / step", "num"),
      ("guard_ms_median", "guard ms median", "num"), ("recovery_steps", "recovery steps", "int")]),
    ("attribution", "Failed episodes by error category", ["agent", "guard", "category"],
     [("count", "failed episodes", "int")]),
]


def flatten(m: "RunMetrics", drop_guard: bool = False) -> dict[str, Flat]:
    """section -> setting key -> metric -> value."""
    g: Callable[[str], str] = (lambda guard: "*") if drop_guard else (lambda guard: guard)
    names = {x.name: x.label for x in m.agents}

    def ag(agent: str) -> str:  # every row says which agent produced it (and that it has no model)
        return names.get(agent, agent)

    out: dict[str, Flat] = {name: {} for name, *_ in SECTIONS}
    for r in m.success:
        out["success"][(ag(r.agent), g(r.guard), r.perturbation)] = {
            "sr": r.success_rate, "episodes": r.scored, "verified_not_done": r.verified_not_done}
    for rows, prefix in ((m.components, ""), (m.layers, "AnTrap ")):
        for row in rows:
            for c in row.cells:
                if c.pairs:
                    out["components"][(ag(row.agent), g(row.guard), prefix + c.group)] = {
                        "pert_sr": c.pert_sr, "delta_c": c.delta_c, "delta_step": c.delta_step, "rsr": c.rsr}
    for row in m.per_type:
        for c in row.cells:
            if c.pairs:
                out["per_type"][(ag(row.agent), g(row.guard), c.group)] = {"pert_sr": c.pert_sr, "delta_c": c.delta_c}
    for f in m.failures:
        out["failures"][(ag(f.agent), g(f.guard), f.condition)] = {
            "failed_with": f.failed_with, "failed_without": f.failed_without, "reduction": f.reduction}
    for p in m.pass_at_k:
        kmax = max(p.pass_at) if p.pass_at else None
        out["pass_at_k"][(ag(p.agent), g(p.guard), p.perturbation)] = {
            "pass@1": p.pass_at.get(1), "pass@max": p.pass_at.get(kmax) if kmax else None}
    for a in m.adr:
        out["adr"][(ag(a.agent), g(a.guard), a.group)] = {"adr": a.adr, "adr_both": a.adr_both_succeeded}
    for s in m.safety:
        out["safety"][(ag(s.agent), g(s.guard), s.perturbation)] = {
            "engaged_rate": s.engaged_rate, "engaged_when_exposed": s.engaged_when_exposed}
    for row in m.guard:
        for d in row.diagnosers:
            out["guard"][(ag(row.agent), g(row.guard), d.diagnoser)] = {
                "triggers": d.triggers, "precision": d.precision, "sessions": d.sessions,
                "resolved": d.outcomes.get("resolved", 0)}
        out["guard_usage"][(ag(row.agent), g(row.guard))] = {
            "model_calls_per_step": row.model_calls_per_step, "tokens_per_step": row.tokens_per_step,
            "guard_ms_median": row.guard_ms_median, "recovery_steps": row.recovery_steps}
    for agent in dict.fromkeys(x.agent for x in m.attribution):
        for guard in dict.fromkeys(x.guard for x in m.attribution if x.agent == agent):
            for cat in CATEGORY_ORDER:
                n = sum(1 for x in m.attribution if x.agent == agent and x.guard == guard and x.category == cat)
                out["attribution"][(ag(agent), g(guard), CATEGORY_LABELS[cat])] = {"count": n}
    return out


def _fmt(v: Value, kind: str) -> str:
    if v is None:
        return "–"
    if kind == "pct":
        return f"{100 * v:.1f}"
    if kind == "int":
        return str(int(v))
    return f"{v:.2f}"


def _delta(a: Value, b: Value, kind: str) -> str:
    if a is None or b is None:
        return "–"
    d = b - a
    if kind == "pct":
        return f"{100 * d:+.1f}"
    if kind == "int":
        return f"{int(d):+d}"
    return f"{d:+.2f}"


def should_drop_guard(a: "RunMetrics", b: "RunMetrics") -> bool:
    return len(a.guards) == 1 and len(b.guards) == 1 and a.guards != b.guards


def comparison(a: "RunMetrics", b: "RunMetrics", name_a: str = "A", name_b: str = "B",
               all_rows: bool = False) -> tuple[str, dict[str, Any]]:
    """(markdown, JSON-able data) of the side-by-side comparison; only the settings both runs have
    unless ``all_rows``."""
    drop = should_drop_guard(a, b)
    fa, fb = flatten(a, drop), flatten(b, drop)
    text = load_text()
    esc = markdown_text  # run names, paths and labels are text, never markup
    lines = [f"# Comparison: {esc(name_a)} vs {esc(name_b)}\n",
             f"- {esc(name_a)}: {esc(a.root)} — run {esc(a.run)}, {a.episodes} episodes, guard modes "
             f"{esc(', '.join(a.guards))}",
             f"- {esc(name_b)}: {esc(b.root)} — run {esc(b.run)}, {b.episodes} episodes, guard modes "
             f"{esc(', '.join(b.guards))}",
             "- agents: " + esc(", ".join(dict.fromkeys([x.label for x in a.agents] + [x.label for x in b.agents]))),
             "", f"> {text['compare_note']}", ""]
    if drop:
        lines.append(f"Matched without the guard mode: {name_a} ran guard {a.guards[0]}, {name_b} ran guard "
                     f"{b.guards[0]} (shown as `*`).\n")
    data: dict[str, Any] = {"a": name_a, "b": name_b, "matched_without_guard": drop, "sections": {}}
    shared = sum(1 for section, *_ in SECTIONS for k in fa[section] if k in fb[section])
    data["shared_settings"] = shared
    if not shared:
        lines.append(f"**{NO_SHARED_SETTINGS}**\n")
    for section, title, key_cols, metrics in SECTIONS:
        keys = list(dict.fromkeys(list(fa[section]) + list(fb[section])))
        only = [k for k in keys if (k in fa[section]) != (k in fb[section])]
        if not all_rows:
            keys = [k for k in keys if k not in only]
        if not keys:
            continue
        headers = list(key_cols)
        for _, h, _ in metrics:
            headers += [f"{h} {name_a}", f"{h} {name_b}", f"Δ {h}"]
        rows, jrows = [], []
        for k in keys:
            va, vb = fa[section].get(k, {}), fb[section].get(k, {})
            line: list = list(k)
            for metric, _, kind in metrics:
                x, y = va.get(metric), vb.get(metric)
                line += [_fmt(x, kind) if k in fa[section] else "", _fmt(y, kind) if k in fb[section] else "",
                         _delta(x, y, kind)]
            rows.append(line)
            jrows.append({"key": list(k), "a": va or None, "b": vb or None})
        lines.append(f"## {title}\n")
        lines.append(md_table(headers, rows, "l" * len(key_cols) + "r" * (len(headers) - len(key_cols))))
        if only and not all_rows:
            n_a = sum(k in fa[section] for k in only)
            lines.append(f"_{n_a} setting(s) only in {name_a} and {len(only) - n_a} only in {name_b} are not shown "
                         "(`--all-rows` shows them)._\n")
        data["sections"][section] = jrows
    return "\n".join(lines), data


def write_comparison(run_a: Path | str, run_b: Path | str, out_dir: Path | str, *,
                     name_a: Optional[str] = None, name_b: Optional[str] = None, all_rows: bool = False) -> list[Path]:
    from experiments.report import compute_metrics

    a, b = compute_metrics(run_a), compute_metrics(run_b)
    na = name_a or Path(run_a).name or "A"
    nb = name_b or Path(run_b).name or "B"
    if na == nb:
        na, nb = f"A:{na}", f"B:{nb}"
    md, data = comparison(a, b, na, nb, all_rows=all_rows)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p_md, p_js = out / "compare.md", out / "compare.json"
    p_md.write_text(md, encoding="utf-8")
    p_js.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    return [p_md, p_js]
