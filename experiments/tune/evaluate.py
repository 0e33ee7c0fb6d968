"""Run the diagnosers on a step dataset and score them (``ttir tune eval``).

A *variant* is one way of diagnosing: a tier (``rules`` / ``vlm`` / ``cascade``)
under one config. For every row the evaluator builds the DiagnosisContext the
live guard would have built, asks every diagnoser of every variant, and keeps a
small *outcome* per row (verdicts, costs, labels); :mod:`metrics` scores them.

Rows of one episode are evaluated in order and share their observations, as in
a live episode. The rule tier runs in worker processes (rows split by episode);
the model tiers run in this process, one shared model call per step and tier.
"""

from __future__ import annotations

import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from loguru import logger

from diagnosers import DIAGNOSER_CLASSES, DiagnosisContext, Diagnoser, Finding
from diagnosers.signals.cache import CACHE
from experiments.tune.loader import ObservationLoader, is_claim
from experiments.tune.schema import HistoryEntry, StepRow, dataset_file, read_rows
from ttir.core.config import DIAGNOSERS, TTIRConfig
from ttir.core.config import TIERS as ALL_TIERS
from ttir.guarded.middleware import HISTORY_LIMIT  # the steps of history the live guard keeps

TIERS = tuple(t for t in ALL_TIERS if t != "off")

ASKED_KEY = "tune.model_asked"
VERDICT_KEY = "interference.verdict"  # the interference diagnoser's per-screen memory (see diagnosers/interference.py)


@dataclass
class Variant:
    """One set of diagnosers to evaluate: ``name`` (e.g. ``rules`` or a sweep point)."""

    name: str
    tier: str
    config: TTIRConfig
    diagnosers: tuple[str, ...] = DIAGNOSERS
    judge: Any = None

    def build(self) -> dict[str, Diagnoser]:
        judge = _AskRecorder(self.judge) if self.judge is not None else None
        return {d: DIAGNOSER_CLASSES[d](getattr(self.config, d), mode=self.tier, judge=judge)  # type: ignore[arg-type]
                for d in self.diagnosers}


class _AskRecorder:
    """Wraps a VLMJudge: remembers on the context that the model was consulted."""

    def __init__(self, judge: Any):
        self.inner = judge

    def judge(self, ctx: DiagnosisContext) -> Any:
        ctx.cache[ASKED_KEY] = True
        return self.inner.judge(ctx)

    def scheduled(self, ctx: DiagnosisContext) -> bool:
        return self.inner.scheduled(ctx)


# ----------------------------------------------------------------------- selection


def keep_row(row: StepRow, *, fraction: Optional[float] = None, seed: int = 0,
             perturbations: Optional[set[str]] = None, agents: Optional[set[str]] = None,
             splits: Optional[set[str]] = None) -> bool:
    """Row filter: perturbation / agent names, a split (``meta.split``, the real-screen
    steps), and a seeded share of episodes."""
    if splits and str(row.meta.get("split")) not in splits:
        return False
    if perturbations and row.perturbation not in perturbations:
        return False
    if agents and str(row.meta.get("agent")) not in agents:
        return False
    if fraction is not None and fraction < 1.0:
        h = zlib.crc32(f"{seed}:{row.group}".encode()) % 100000
        return h < fraction * 100000
    return True


# ---------------------------------------------------------------------- one step


def _finding(d: Diagnoser, ctx: DiagnosisContext, claim_ctx: Optional[DiagnosisContext]) -> Finding:
    use = claim_ctx if (claim_ctx is not None and d.name == "task_alignment") else ctx
    return d.diagnose(use)


def _call_cost(ctx: DiagnosisContext) -> dict[str, float]:
    from diagnosers.vlm_judge import CACHE_KEY

    out = ctx.cache.get(CACHE_KEY)
    cost = getattr(out, "cost", None)
    if cost is None:
        return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    return {"calls": cost.model_calls or 1, "prompt_tokens": cost.prompt_tokens,
            "completion_tokens": cost.completion_tokens}


def _scheduled(config: TTIRConfig, row: StepRow) -> bool:
    n = config.cascade.every_n_steps
    steps = int(row.meta.get("step", len(row.history)))
    return n > 0 and steps > 0 and steps % n == 0


def evaluate_row(row: StepRow, loader: ObservationLoader, variants: list[tuple[Variant, dict[str, Diagnoser]]],
                 history: Optional[list[HistoryEntry]] = None) -> dict[str, Any]:
    """One row's outcome: per variant, per diagnoser ``verdict`` / ``problem``; the
    model calls and tokens the variant spent; whether a cascade would call the model."""
    ctx = loader.context(row, with_pending=False, history=history)
    claim_ctx = loader.context(row, history=history) if is_claim(row) else None
    contexts = {"main": ctx, "claim": claim_ctx}
    results: dict[str, Any] = {}
    costs: dict[str, Any] = {}
    for variant, ds in variants:
        # model tiers get contexts of their own (the rules tier must not see a cached
        # judgment); tiers sharing one judge share its one call per step, as the four
        # diagnosers do in the guard, and each is charged for it when it consulted it
        if variant.tier == "rules":
            c, cc = ctx, claim_ctx
        else:
            key = f"model:{id(variant.judge)}"
            if key not in contexts:
                contexts[key] = DiagnosisContext(goal=ctx.goal, observation=ctx.observation, history=ctx.history)
                contexts[key + ":claim"] = (DiagnosisContext(goal=ctx.goal, observation=ctx.observation,
                                                             history=ctx.history, pending=claim_ctx.pending)
                                            if claim_ctx is not None else None)
            c, cc = contexts[key], contexts[key + ":claim"]
            for x in (c, cc):
                if x is not None:
                    x.cache.pop(ASKED_KEY, None)
        res: dict[str, Any] = {}
        for name, d in ds.items():
            try:
                f = _finding(d, c, cc)
                res[name] = {"verdict": f.verdict, "problem": bool(f.problem)}
            except Exception as exc:  # noqa: BLE001 - like the guard: the rule tier answers instead
                f = d.rules(cc if (cc is not None and name == "task_alignment") else c)
                res[name] = {"verdict": f.verdict, "problem": bool(f.problem), "error": f"{type(exc).__name__}: {exc}"}
        if variant.tier != "rules":
            spent = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
            for x in (c, cc):
                if x is None or (variant.tier == "cascade" and not x.cache.get(ASKED_KEY)):
                    continue
                for k, v in _call_cost(x).items():
                    spent[k] += v
            costs[variant.name] = spent
        results[variant.name] = res
    rule_variant = next((v for v, _ in variants if v.tier == "rules"), None)
    needs_model = None
    if rule_variant is not None:
        needs_model = any(r["verdict"] == "uncertain" for r in results[rule_variant.name].values()) \
            or _scheduled(rule_variant.config, row)
    return {
        "id": row.id, "perturbation": row.perturbation, "component": row.meta.get("component"),
        "agent": row.meta.get("agent"), "clean": row.is_clean, "labels": row.labels.model_dump(),
        "reasons": row.meta.get("label_reasons") or {}, "results": results, "costs": costs,
        "cascade_would_call": needs_model,
    }


# ------------------------------------------------------------------------ a dataset


def _forget_interference_memory() -> None:
    """Variants must not read each other's interference verdicts (kept per screen)."""
    for _, slot in list(CACHE._entries.values()):
        slot.pop(VERDICT_KEY, None)


def _continues(running: list[HistoryEntry], row: StepRow, prev: Optional[StepRow]) -> bool:
    """Row ``row`` is the step after ``prev`` of the same episode."""
    if prev is None or not row.history or row.history[-1].observation != prev.observation:
        return False
    k = len(row.history) - 1
    return k == 0 or running[-k:] == row.history[:-1]


def stitched_histories(group: list[StepRow], limit: int = HISTORY_LIMIT) -> list[Optional[list[HistoryEntry]]]:
    """Longer histories for consecutive rows of one episode: row ``t``'s last
    history entry is the step taken on row ``t-1``'s screen, so the rows together
    hold the whole episode. Each row gets up to ``limit`` past steps (what the live
    guard keeps), or None to keep its own history."""
    out: list[Optional[list[HistoryEntry]]] = []
    running: list[HistoryEntry] = []
    prev: Optional[StepRow] = None
    for row in group:
        if _continues(running, row, prev):
            running = (running + [row.history[-1]])[-limit:]
        else:
            running = list(row.history)[-limit:]
        out.append(list(running) if len(running) > len(row.history) else None)
        prev = row
    return out


def evaluate_rows(rows: Iterable[StepRow], base: Path, variants: list[Variant],
                  progress: Optional[Callable[[int], None]] = None, *, history_limit: int = HISTORY_LIMIT
                  ) -> list[dict[str, Any]]:
    """Outcomes of ``rows`` (in this process), one episode at a time."""
    loader = ObservationLoader(base)
    built = [(v, v.build()) for v in variants]
    out: list[dict[str, Any]] = []
    group: list[StepRow] = []

    def flush() -> None:
        if not group:
            return
        longer = stitched_histories(group, history_limit)
        if len(built) == 1 or all(v.tier != "rules" for v, _ in built):
            for row, hist in zip(group, longer):
                out.append(evaluate_row(row, loader, built, hist))
        else:
            # variant after variant over the episode, so that each variant's
            # per-screen memory is its own (and the rows still go in order)
            partial: list[dict[str, Any]] = []
            for k, vb in enumerate(built):
                _forget_interference_memory()
                for i, (row, hist) in enumerate(zip(group, longer)):
                    o = evaluate_row(row, loader, [vb], hist)
                    if k == 0:
                        partial.append(o)
                    else:
                        partial[i]["results"].update(o["results"])
                        partial[i]["costs"].update(o["costs"])
                        if partial[i]["cascade_would_call"] is None:
                            partial[i]["cascade_would_call"] = o["cascade_would_call"]
            out.extend(partial)
        if progress is not None:
            progress(len(group))
        group.clear()

    current = None
    for row in rows:
        if row.group != current:
            flush()
            current = row.group
        group.append(row)
    flush()
    return out


def _worker(args: tuple[str, int, int, list[Variant], dict[str, Any]]) -> list[dict[str, Any]]:
    path, k, n, variants, select = args
    f = dataset_file(path)
    rows = (r for r in read_rows(f) if keep_row(r, **select) and zlib.crc32(r.group.encode()) % n == k)
    return evaluate_rows(rows, f.parent, variants)


def evaluate_dataset(path: Path | str, variants: list[Variant], *, workers: int = 1,
                     select: Optional[dict[str, Any]] = None, progress: bool = False) -> list[dict[str, Any]]:
    """Outcomes for every selected row of the dataset at ``path``."""
    f = dataset_file(path)
    select = select or {}
    model = any(v.tier != "rules" for v in variants)
    if workers <= 1 or model:
        if model and workers > 1:
            logger.info("model tiers run in one process (one endpoint); --workers ignored")
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(unit="step", dynamic_ncols=True, desc="evaluating")
        rows = (r for r in read_rows(f) if keep_row(r, **select))
        out = evaluate_rows(rows, f.parent, variants, progress=bar.update if bar is not None else None)
        if bar is not None:
            bar.close()
        return out
    import multiprocessing as mp
    import os

    from experiments.process_lifetime import die_with_parent

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=die_with_parent,
                             initargs=(os.getpid(),)) as pool:
        parts = list(pool.map(_worker, [(str(f), k, workers, variants, select) for k in range(workers)]))
    out = [o for part in parts for o in part]
    order = {}
    for i, r in enumerate(read_rows(f)):  # back in file order, for stable output
        order[r.id] = i
    out.sort(key=lambda o: order.get(o["id"], 0))
    return out


# ----------------------------------------------------------------------- reports


def summarise(outcomes: list[dict[str, Any]], variants: list[Variant], *, targets: Optional[dict[str, float]] = None
              ) -> dict[str, Any]:
    """The report of ``ttir tune eval``: per variant, per diagnoser scores; costs."""
    from experiments.tune.metrics import meets, score_outcomes

    targets = targets or {"precision": 0.95, "recall": 0.90, "clean_fpr": 0.01}
    n = len(outcomes)
    report: dict[str, Any] = {"steps": n, "clean_steps": sum(o["clean"] for o in outcomes), "targets": targets,
                              "variants": {}}
    for v in variants:
        scores = score_outcomes(outcomes, v.name, v.diagnosers)
        diag = {}
        for d, s in scores.items():
            sd = s.to_dict()
            sd["meets"] = meets(sd, **targets)
            diag[d] = sd
        entry: dict[str, Any] = {"tier": v.tier, "diagnosers": diag}
        calls = sum(o["costs"].get(v.name, {}).get("calls", 0) for o in outcomes)
        pt = sum(o["costs"].get(v.name, {}).get("prompt_tokens", 0) for o in outcomes)
        ct = sum(o["costs"].get(v.name, {}).get("completion_tokens", 0) for o in outcomes)
        entry["cost"] = {"model_calls": calls, "model_calls_per_step": round(calls / n, 4) if n else None,
                         "prompt_tokens_per_step": round(pt / n, 1) if n else None,
                         "completion_tokens_per_step": round(ct / n, 1) if n else None,
                         "steps_with_a_call": sum(1 for o in outcomes if o["costs"].get(v.name, {}).get("calls"))}
        report["variants"][v.name] = entry
    would = [o["cascade_would_call"] for o in outcomes if o.get("cascade_would_call") is not None]
    if would:
        report["cascade_call_share"] = {
            "steps": len(would), "would_call": sum(would), "share": round(sum(would) / len(would), 4),
            "by_perturbation": _share_by(outcomes, "perturbation"),
            "paper_every_step_share": 1.0,
        }
    return report


def _share_by(outcomes: list[dict[str, Any]], key: str) -> dict[str, float]:
    tot: dict[str, list[int]] = {}
    for o in outcomes:
        w = o.get("cascade_would_call")
        if w is None:
            continue
        t = tot.setdefault(str(o.get(key)), [0, 0])
        t[0] += int(w)
        t[1] += 1
    return {k: round(a / b, 4) for k, (a, b) in sorted(tot.items())}


__all__ = ["TIERS", "Variant", "evaluate_dataset", "evaluate_row", "evaluate_rows", "keep_row", "summarise"]
