"""Plain-text tables for the ``ttir tune`` reports (the CLI prints them)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ttir.core.config import DIAGNOSERS


def _f(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[_f(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([line(list(headers)), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _mark(ok: Optional[bool]) -> str:
    return "-" if ok is None else ("ok" if ok else "MISS")


def eval_text(report: dict[str, Any], *, breakdown: bool = True) -> str:
    t = report["targets"]
    out = [f"{report['steps']} steps ({report['clean_steps']} from clean episodes); targets: precision >= "
           f"{t['precision']}, recall >= {t['recall']}, false-positive rate on clean steps <= {t['clean_fpr']}"]
    for name, v in report["variants"].items():
        c = v["cost"]
        out.append("")
        out.append(f"== {name} (tier {v['tier']}): model calls/step {_f(c['model_calls_per_step'])}, "
                   f"prompt tokens/step {_f(c['prompt_tokens_per_step'], 1)}, "
                   f"completion tokens/step {_f(c['completion_tokens_per_step'], 1)}")
        rows = []
        for d, s in v["diagnosers"].items():
            m = s["meets"]
            rows.append([d, s["n"], s["tp"], s["fp"], s["fn"], s["tn"],
                         s["uncertain_on_positive"] + s["uncertain_on_negative"], s["precision"], s["recall"],
                         s["f1"], s["clean"]["fpr"], s["clean"]["alarm_rate"], s["errors"],
                         f"P {_mark(m['precision'])} R {_mark(m['recall'])} FP {_mark(m['clean_fpr'])}"])
        out.append(table(["diagnoser", "n", "TP", "FP", "FN", "TN", "uncertain", "precision", "recall", "F1",
                          "clean FPR", "clean alarms", "errors", "targets"], rows))
        for d, s in v["diagnosers"].items():
            un = s.get("unlabelled_by_reason") or {}
            if un:
                out.append(f"  {d}: not scored (no label): " + ", ".join(
                    f"{k} {x['n']} ({x['alarms']} reported)" for k, x in un.items()))
        if breakdown:
            for d, s in v["diagnosers"].items():
                out.append("")
                out.append(f"-- {name} / {d}: by perturbation")
                out.append(_breakdown(s["by_perturbation"]))
                out.append(f"-- {name} / {d}: by label reason")
                out.append(_breakdown(s["by_reason"], first="reason"))
    share = report.get("cascade_call_share")
    if share:
        out.append("")
        out.append(f"cascade: the model would be called on {share['would_call']} of {share['steps']} steps "
                   f"({100 * share['share']:.1f} %; the paper's every-step diagnoser: 100 %)")
        if breakdown:
            rows = [[k, v] for k, v in share["by_perturbation"].items()]
            out.append(table(["perturbation", "call share"], rows))
    return "\n".join(out)


def _breakdown(groups: dict[str, Any], first: str = "perturbation") -> str:
    rows = []
    for k, s in groups.items():
        rows.append([k, s["n"], s["tp"] + s["fn"], s["tp"], s["fp"], s["fn"], s["precision"], s["recall"], s["f1"]])
    return table([first, "n", "positives", "TP", "FP", "FN", "precision", "recall", "F1"], rows)


def sweep_text(result: dict[str, Any]) -> str:
    out = [f"{result['steps']} steps; best = highest F1 with false-positive rate <= {result['max_fpr']} "
           "(on clean steps; on all negatives when there are none)"]
    for d in DIAGNOSERS:
        pts = [p for p in result["points"] if p["diagnoser"] == d]
        if not pts:
            continue
        out.append("")
        out.append(f"== {d}")
        rows = [[", ".join(f"{k.split('.', 1)[1]}={v}" for k, v in p["params"].items()), p["tp"], p["fp"], p["fn"],
                 p["precision"], p["recall"], p["f1"], p["clean_fpr"], p["fpr"],
                 "BEST" if p["best"] else ("" if p["feasible"] else "over FP ceiling")] for p in pts]
        out.append(table(["setting", "TP", "FP", "FN", "precision", "recall", "F1", "clean FPR", "FPR", ""], rows))
        if result["best"].get(d) is None:
            out.append("no setting stays under the false-positive ceiling: the base settings are kept")
        if result.get("notes", {}).get(d):
            out.append("note: " + result["notes"][d])
    return "\n".join(out)


def prompts_text(report: dict[str, Any]) -> str:
    out = [f"{report['steps']} steps; prompts: " + ", ".join(f"{k} = {v}" for k, v in report["prompts"].items())]
    rows = []
    for name, v in report["variants"].items():
        c = v["cost"]
        for d, s in v["diagnosers"].items():
            rows.append([name, d, s["precision"], s["recall"], s["f1"], s["clean"]["fpr"], s["errors"],
                         c["model_calls_per_step"], c["prompt_tokens_per_step"], c["completion_tokens_per_step"]])
    out.append(table(["variant", "diagnoser", "precision", "recall", "F1", "clean FPR", "bad replies", "calls/step",
                      "prompt tok/step", "compl. tok/step"], rows))
    out.append("")
    out.append("best prompt per diagnoser (F1): " + ", ".join(f"{d}: {w or '-'}" for d, w in report["winners"].items()))
    return "\n".join(out)


__all__ = ["eval_text", "prompts_text", "sweep_text", "table"]
