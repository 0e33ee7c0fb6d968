"""The records and trajectories of a run directory, and the keys that pair them.

A *setting* is (agent, guard, perturbation): one cell of the paper's tables. A
*pair key* is (task, instance, agent, guard, seed, repeat): a perturbed episode and
the clean episode with the same pair key form a clean/perturbed pair (same agent,
same guard mode, same task parameters, same seed and repeat), which is what Δc,
Δstep, RSR and ADR compare.

Records and trajectories are typed (``experiments.records``: ``EpisodeRecord``,
``Trajectory``): :meth:`RunData.load` builds them once, and the metrics read attributes.
Every function here also takes a record's plain dict (a hand-built record, a line read
elsewhere), checked the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from benchmark.episode import LEGACY_TERMINATIONS, gated_success
from experiments.records import (EpisodeLike, EpisodeRecord, Trajectory, TrajectoryLike, as_episode, as_episodes,
                                 as_trajectory)
from experiments.store import EPISODES, RunStore, read_json
from perturb.base import COMPONENTS, STAR_LAYERS
from perturb.firing import fired_from_counts
from ttir.core.config import Tier

Record = EpisodeRecord  # the typed record (experiments.records); every function here also takes its dict

GUARD_ORDER: tuple[Tier, ...] = ("off", "rules", "cascade", "vlm")  # the reports' order of the tiers
COMPONENT_ORDER = COMPONENTS
LAYER_ORDER = STAR_LAYERS
LAYER_NAMES = {"S": "Spatial", "T": "Thinking", "A": "Action", "R": "Reliability"}
MODEL_FREE_KINDS = ("replay", "planner", "oracle", "reference")


def perturbation_label(rec: EpisodeLike) -> str:
    """The perturbation's name, with its parameter overrides when it has any and the
    dump style when it is not the default (``clean@focused_window``)."""
    rec = as_episode(rec)
    name = rec.perturbation
    ov = rec.overrides
    if ov:
        name += "{" + ",".join(f"{k}={ov[k]}" for k in sorted(ov)) + "}"
    return name + (f"@{rec.dump}" if rec.dump else "")


def is_clean(rec: EpisodeLike) -> bool:
    return as_episode(rec).is_clean


def termination_of(rec: EpisodeLike) -> str:
    """How the episode ended: done, infeasible, budget or error (older records' names mapped)."""
    rec = as_episode(rec)
    if rec.status != "ok":
        return "error"
    t = str(rec.termination or "budget")
    return LEGACY_TERMINATIONS.get(t, t)


def verified(rec: EpisodeLike) -> bool:
    """The task's verifier said yes at the end of the episode, whoever ended it."""
    rec = as_episode(rec)
    return rec.status == "ok" and bool(rec.verified)


def succeeded(rec: EpisodeLike) -> bool:
    """Done-gated success (AndroidWorld): verified AND ended by the agent (benchmark.episode.gated_success).
    An episode that raised counts as a failure (the paper counts null runs as failures)."""
    return gated_success(verified(rec), termination_of(rec))


def verified_not_done(rec: EpisodeLike) -> bool:
    """The state was right but the agent never declared it: budget ran out (or it raised)."""
    return verified(rec) and not succeeded(rec)


def fired(rec: EpisodeLike) -> bool:
    """Did the episode's perturbation take effect? True for clean episodes (nothing to reach) and
    for episodes that raised before recording it (they stay in the figures, as failures)."""
    rec = as_episode(rec)
    if rec.is_clean:
        return True
    if rec.fired is not None:
        return rec.fired
    if rec.events is not None:  # records written before `fired` existed
        return fired_from_counts(rec.events)
    return True


def reached(records: Iterable[EpisodeLike]) -> list[Record]:
    """Clean episodes and the perturbed ones whose perturbation fired: what the perturbed figures use."""
    return [r for r in as_episodes(records) if fired(r)]


def not_reached(records: Iterable[EpisodeLike]) -> list[Record]:
    """Perturbed episodes whose perturbation never fired (left out of the perturbed figures)."""
    return [r for r in as_episodes(records) if not fired(r)]


def pair_key(rec: EpisodeLike) -> tuple[Any, ...]:
    rec = as_episode(rec)
    return (rec.task, rec.instance, rec.agent, rec.guard, rec.seed, rec.repeat, rec.dump)


def setting_key(rec: EpisodeLike) -> tuple[str, str, str]:
    rec = as_episode(rec)
    return (rec.agent, rec.guard, perturbation_label(rec))


def ordered(values: Iterable[Any], preferred: Sequence[Any] = ()) -> list[Any]:
    """Unique values: the preferred ones first (in that order), then the others in order of appearance."""
    seen: list[Any] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    head = [p for p in preferred if p in seen]
    return head + [v for v in seen if v not in head]


class RunData:
    """Records of ``RUN_DIR/episodes.jsonl`` (typed: ``experiments.records.EpisodeRecord``) plus
    lazily loaded trajectories (``experiments.records.Trajectory``)."""

    def __init__(self, records: Sequence[EpisodeLike], root: Optional[Path] = None,
                 trajectories: Optional[Mapping[str, Optional[TrajectoryLike]]] = None,
                 spec: Optional[dict[str, Any]] = None):
        self.records: list[Record] = as_episodes(records)
        self.root = Path(root) if root is not None else None
        self._trajectories: dict[str, Optional[Trajectory]] = {
            eid: as_trajectory(t, f"trajectory of {eid}") for eid, t in (trajectories or {}).items()}
        self.spec = spec

    @classmethod
    def load(cls, run_dir: Path | str) -> "RunData":
        root = Path(run_dir)
        if not root.exists():
            raise FileNotFoundError(f"run folder {str(root)!r} does not exist; expected a folder written by `ttir run`")
        if not root.is_dir():
            raise FileNotFoundError(f"run_dir={str(root)!r} is a file, not a folder; expected a folder written by `ttir run`")
        if not (root / EPISODES).exists():
            raise FileNotFoundError(f"run_dir={str(root)!r} has no {EPISODES}; expected a folder written by `ttir run`")
        records = RunStore(root).episode_records()
        spec_path = root / "spec.json"
        spec = read_json(spec_path) if spec_path.exists() else None
        return cls(records, root=root, spec=spec)

    @property
    def name(self) -> str:
        if self.spec and self.spec.get("name"):
            return str(self.spec["name"])
        return self.root.name if self.root is not None else "run"

    def trajectory(self, rec: EpisodeLike) -> Optional[Trajectory]:
        eid = as_episode(rec).id
        if eid not in self._trajectories:
            path = self.episode_dir(rec) / "trajectory.json" if self.root is not None else None
            self._trajectories[eid] = (as_trajectory(read_json(path), str(path))
                                       if path is not None and path.exists() else None)
        return self._trajectories[eid]

    def episode_dir(self, rec: EpisodeLike) -> Path:
        eid = as_episode(rec).id
        if self.root is None:
            return Path("episodes") / eid
        return self.root / "episodes" / eid

    # -- groupings ---------------------------------------------------------------------------
    def agents(self) -> list[str]:
        return ordered(r.agent for r in self.records)

    def guards(self) -> list[str]:
        return ordered((r.guard for r in self.records), GUARD_ORDER)

    def perturbations(self) -> list[str]:
        return ordered((perturbation_label(r) for r in self.records), ("clean",))

    def agent_kind(self, agent: str) -> str:
        return next((r.agent_kind for r in self.records if r.agent == agent), "?")

    def pairs(self) -> list[tuple[Record, Record]]:
        """(perturbed, clean) pairs with the same pair key, perturbed episodes that fired only."""
        return make_pairs(self.records)


def make_pairs(records: Iterable[EpisodeLike]) -> list[tuple[Record, Record]]:
    """(perturbed, clean) pairs with the same pair key, over the perturbed episodes whose
    perturbation fired (an unfired one is a clean run: it says nothing about the perturbation)."""
    recs = as_episodes(records)
    clean = {pair_key(r): r for r in recs if r.is_clean}
    out = []
    for r in recs:
        if not r.is_clean and fired(r):
            partner = clean.get(pair_key(r))
            if partner is not None:
                out.append((r, partner))
    return out


def group_by(records: Iterable[Record], key: Any) -> dict[Any, list[Record]]:
    out: dict[Any, list[Record]] = {}
    for r in records:
        out.setdefault(key(r), []).append(r)
    return out


def mean(values: Sequence[float]) -> Optional[float]:
    return sum(values) / len(values) if values else None
