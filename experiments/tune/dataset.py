"""``ttir tune build``: recorded trajectories -> a labelled step dataset.

    DATASET/steps.jsonl        one row per decision step (experiments.tune.schema)
    DATASET/files/eNNNNN/      the steps' screenshots and XML dumps (hard links, or copies)
    DATASET/build.json         where it came from and what it holds

Labels come from the harness's per-step ground truth (experiments.tune.labels);
episodes recorded without it (runs older than the truth recorder) are skipped and
counted.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, Optional

from loguru import logger

from experiments.store import EPISODES, RunStore, check_derived_folder
from experiments.tune.labels import LABEL_KEYS, label_episode

DEFAULT_HISTORY = 16  # steps of history per row; rows of an episode chain to the guard's 64 (tune/README.md)


def _episode_records(run_dir: Path) -> list[dict[str, Any]]:
    """The run's finished episodes (status ok), read the way every run reader reads them (RunStore:
    a cut last line, a line that is not JSON or not a record is skipped with a warning)."""
    if not (run_dir / EPISODES).exists():
        raise FileNotFoundError(f"{run_dir} is not a run directory: {run_dir / EPISODES} does not exist "
                                "(make one with `ttir run SPEC`)")
    seen: set[str] = set()
    unique = []
    for r in RunStore(run_dir).records():  # a resumed run never duplicates, but be safe
        if r.get("status") == "ok" and r["id"] not in seen:
            seen.add(r["id"])
            unique.append(r)
    return unique


def select_episodes(records: list[dict[str, Any]], *, per_perturbation: Optional[int] = None, seed: int = 0,
                    agents: Optional[Iterable[str]] = None, perturbations: Optional[Iterable[str]] = None,
                    guard: Optional[Iterable[str]] = ("off",)) -> list[dict[str, Any]]:
    """Filter the run's episodes; ``per_perturbation`` keeps a seeded sample of that
    many episodes per perturbation (every agent of a chosen task/perturbation pair)."""
    agents = set(agents) if agents else None
    perts = set(perturbations) if perturbations else None
    guards = set(guard) if guard else None
    keep = [r for r in records
            if (agents is None or r.get("agent") in agents)
            and (perts is None or r.get("perturbation") in perts)
            and (guards is None or r.get("guard") in guards)]
    keep.sort(key=lambda r: r["id"])
    if per_perturbation is None:
        return keep
    rng = random.Random(seed)
    by_pert: dict[str, dict[tuple[str, int], list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in keep:
        by_pert[r["perturbation"]][(r["task"], r.get("instance", 0))].append(r)
    out = []
    for pert in sorted(by_pert):
        pairs = sorted(by_pert[pert])
        for pair in sorted(rng.sample(pairs, min(per_perturbation, len(pairs)))):
            out.extend(by_pert[pert][pair])
    return out


def _link(src: Path, dst: Path, mode: str) -> None:
    if dst.exists():
        return
    if mode == "copy":
        shutil.copy2(src, dst)
        return
    if mode == "symlink":
        os.symlink(src.resolve(), dst)
        return
    try:
        os.link(src, dst)
    except OSError:  # another filesystem: copy
        shutil.copy2(src, dst)


def _ref(step: dict[str, Any], src_dir: Path, dst_dir: Path, rel: str, mode: str) -> dict[str, Any]:
    idx = step["index"]
    ref: dict[str, Any] = {}
    for kind, name in (("screenshot", f"step_{idx:03d}.jpg"), ("xml", f"step_{idx:03d}.xml")):
        src = src_dir / name
        if src.exists():
            dst_dir.mkdir(parents=True, exist_ok=True)
            _link(src, dst_dir / name, mode)
            ref[kind] = f"{rel}/{name}"
    fg = (step.get("observation") or {}).get("foreground")
    if fg:
        ref["foreground"] = fg
    return ref


def episode_rows(traj: dict[str, Any], record: dict[str, Any], src_dir: Path, out: Path, short: str, *,
                 history: int = DEFAULT_HISTORY, link: str = "hard") -> list[dict[str, Any]]:
    """The rows of one recorded episode (files are linked into ``out/files/<short>``)."""
    steps = [s for s in traj.get("trajectory", []) if s.get("agent_step")]
    labelled = label_episode(traj)
    rel = f"files/{short}"
    dst = out / "files" / short
    refs: dict[int, dict[str, Any]] = {}

    def ref(t: int) -> dict[str, Any]:
        if t not in refs:
            refs[t] = _ref(steps[t], src_dir, dst, rel, link)
        return refs[t]

    rows = []
    for t, step in enumerate(steps):
        labels, reasons = labelled[t]
        hist = []
        for k in range(max(0, t - history), t):
            s = steps[k]
            a = s["agent_step"]
            hist.append({"observation": ref(k), "action": a["action"], "thought": a.get("thought", ""),
                         "summary": a.get("summary", ""), "source": "agent"})
        a = step["agent_step"]
        pending = None
        if a["action"].get("action_type") == "status" and a["action"].get("goal_status") == "complete":
            pending = {"action": a["action"], "thought": a.get("thought", ""), "summary": a.get("summary", "")}
        truth = step.get("truth") or {}
        prev_truth = (steps[t - 1].get("truth") or {}) if t else {}
        meta = {
            "episode": record["id"], "task": record.get("task"), "step": step["index"],
            "perturbation": record.get("perturbation"), "component": record.get("component"),
            "layer": record.get("layer"), "agent": record.get("agent"), "agent_kind": record.get("agent_kind"),
            "guard": record.get("guard"), "clean": record.get("perturbation") == "clean",
            "episode_success": traj.get("success"),
            "label_reasons": reasons,
            "overlays": sorted({o.get("kind", "?") for o in truth.get("overlays", [])}),
            "previous_fate": prev_truth.get("action_fate", []) if t else [],
        }
        rows.append({"id": f"{record['id']}#{step['index']:03d}", "goal": traj.get("goal", ""),
                     "observation": ref(t), "history": hist, "pending": pending,
                     "labels": {k: labels.get(k) for k in LABEL_KEYS}, "meta": meta})
    return rows


def build(run_dir: Path | str, out: Path | str, *, history: int = DEFAULT_HISTORY, link: str = "hard",
          per_perturbation: Optional[int] = None, seed: int = 0, agents: Optional[Iterable[str]] = None,
          perturbations: Optional[Iterable[str]] = None, guard: Optional[Iterable[str]] = ("off",),
          force: bool = False) -> dict[str, Any]:
    """Build ``out`` from ``run_dir``; returns the summary written to ``build.json``.

    ``out`` is a new folder or a dataset built before (kept unless ``force``); the run folder
    itself, a file or a folder of other things is refused (``ConfigError``) before any work.
    """
    run_dir, out = Path(run_dir), Path(out)
    check_derived_folder(out, run_dir, "steps.jsonl", "the dataset")
    if history < 0:
        raise ValueError(f"history={history}: expected the number of past steps per row (>= 0)")
    if link not in ("hard", "copy", "symlink"):
        raise ValueError(f"link={link!r}: expected hard, copy or symlink")
    records = select_episodes(_episode_records(run_dir), per_perturbation=per_perturbation, seed=seed,
                              agents=agents, perturbations=perturbations, guard=guard)
    store = RunStore(run_dir)  # after the check above: opening a store makes its folder
    if (out / "steps.jsonl").exists():
        if not force:
            raise ValueError(f"{out} already holds a dataset (steps.jsonl); pass --force to rebuild it")
        shutil.rmtree(out / "files", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "steps.jsonl.tmp"
    stats: dict[str, Counter] = {k: Counter() for k in LABEL_KEYS}
    per_pert: Counter = Counter()
    n_rows = 0
    skipped: list[str] = []
    with tmp.open("w", encoding="utf-8") as fh:
        for n, rec in enumerate(records):
            src = store.episode_dir(rec["id"])
            traj = store.trajectory(rec["id"])
            if traj is None:
                skipped.append(rec["id"])
                continue
            if not any("truth" in s for s in traj.get("trajectory", [])):
                skipped.append(rec["id"])
                continue
            for row in episode_rows(traj, rec, src, out, f"e{n:05d}", history=history, link=link):
                fh.write(json.dumps(row, separators=(",", ":")) + "\n")
                n_rows += 1
                per_pert[row["meta"]["perturbation"]] += 1
                for k in LABEL_KEYS:
                    stats[k][str(row["labels"][k])] += 1
    os.replace(tmp, out / "steps.jsonl")
    if skipped:
        logger.warning("{} episode(s) have no ground truth (recorded before the truth recorder?) and were skipped",
                       len(skipped))
    summary = {
        "source": str(run_dir.resolve()), "episodes": len(records) - len(skipped), "skipped_without_truth": skipped,
        "rows": n_rows, "history": history, "per_perturbation": per_perturbation, "seed": seed,
        "labels": {k: dict(v) for k, v in stats.items()}, "rows_per_perturbation": dict(sorted(per_pert.items())),
    }
    (out / "build.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


__all__ = ["DEFAULT_HISTORY", "build", "episode_rows", "select_episodes"]
