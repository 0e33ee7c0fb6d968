"""The "Recovery from checkpoints" section of a run started ``from_checkpoints`` (``ttir report``).

Read from the run's own records: an episode with a ``checkpoint`` key started at a checkpoint
(its ``position``, ``error_class``, ``steps_taken``); one without started at the task's start
(clean-start success, under the same perturbation). Success is done-gated, as everywhere.

- :func:`recovery_metrics` — success counts by agent x guard and position, first-error class
  (at ``t``), bucket of steps taken before the error (``<=3``, ``4-6``, ``>=7``); AndroidFlux's
  rewinding gain (success at ``t-1`` minus at ``t``, overall and per bucket); AndroidFlux's injection
  gain (success at ``t+1+`` — the error, then an injected correct action — minus at ``t+1`` — the
  error, then the source's own next action; overall and per bucket) when the checkpoints have both;
  clean-start success; and the Pearson correlation between clean-start success and recovery (all
  positions but the injected ones) across agent x guard x task cells.
- :func:`recovery_section` — the markdown (None for a run without checkpoint episodes).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from pydantic import BaseModel, Field

from experiments.checkpoints.model import BUCKETS, is_injected, position_key, steps_bucket
from experiments.metrics.episodes import RunData, succeeded



class Cell(BaseModel):
    k: int = 0
    n: int = 0

    @property
    def rate(self) -> Optional[float]:
        return self.k / self.n if self.n else None

    def add(self, ok: bool) -> None:
        self.k += int(ok)
        self.n += 1

    def show(self) -> str:
        return "–" if not self.n else f"{100 * self.k / self.n:.0f}% ({self.k}/{self.n})"


class RecoveryRow(BaseModel):
    agent: str
    guard: str
    clean_start: Cell = Field(default_factory=Cell)
    positions: dict[str, Cell] = Field(default_factory=dict)
    classes: dict[str, Cell] = Field(default_factory=dict)  # at t
    buckets: dict[str, dict[str, Cell]] = Field(default_factory=dict)  # bucket -> position -> cell

    def _diff(self, a_pos: str, b_pos: str, bucket: Optional[str]) -> Optional[float]:
        cells = self.positions if bucket is None else self.buckets.get(bucket, {})
        a, b = cells.get(a_pos), cells.get(b_pos)
        if a is None or b is None or a.rate is None or b.rate is None:
            return None
        return 100 * (a.rate - b.rate)

    def gain(self, bucket: Optional[str] = None) -> Optional[float]:
        """Rewinding gain: success at t-1 minus success at t (percentage points)."""
        return self._diff("t-1", "t", bucket)

    def injection_gain(self, bucket: Optional[str] = None) -> Optional[float]:
        """Injection gain: success at t+1+ (an injected correct action after the error) minus at t+1
        (the source's own next action after it), in percentage points."""
        return self._diff("t+1+", "t+1", bucket)


class RecoveryMetrics(BaseModel):
    rows: list[RecoveryRow]
    positions: list[str]
    classes: list[str]
    correlation: Optional[float] = None  # clean start vs recovery across agent x guard x task cells
    correlation_cells: int = 0
    checkpoint_episodes: int = 0
    clean_start_episodes: int = 0
    mismatched: int = 0  # checkpoint episodes whose prefix did not restore the screen (recorded as errors)


def _order(labels: Sequence[str]) -> list[str]:
    return sorted(set(labels), key=position_key)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> Optional[float]:
    """Pearson's r (None with fewer than 3 points or no spread)."""
    if len(xs) < 3:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if sx == 0 or sy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy)


def recovery_metrics(run: RunData) -> Optional[RecoveryMetrics]:
    """The section's numbers (None: no episode of the run started at a checkpoint)."""
    rows: dict[tuple[str, str], RecoveryRow] = {}
    cells: dict[tuple[str, str, str], tuple[Cell, Cell]] = {}
    positions: list[str] = []
    classes: list[str] = []
    n_ck = n_clean = mismatched = 0
    for r in run.records:
        row = rows.setdefault((r.agent, r.guard), RecoveryRow(agent=r.agent, guard=r.guard))
        ck: Any = (r.model_extra or {}).get("checkpoint")
        clean, rec = cells.setdefault((r.agent, r.guard, r.task), (Cell(), Cell()))
        ok = succeeded(r)
        if not isinstance(ck, dict):
            n_clean += 1
            row.clean_start.add(ok)
            clean.add(ok)
            continue
        n_ck += 1
        mismatched += bool(r.status == "error" and "did not restore" in (r.error or ""))
        pos, cls = str(ck.get("position")), str(ck.get("error_class"))
        positions.append(pos)
        row.positions.setdefault(pos, Cell()).add(ok)
        bucket = steps_bucket(int(ck.get("steps_taken") or 0))
        row.buckets.setdefault(bucket, {}).setdefault(pos, Cell()).add(ok)
        if pos == "t":
            classes.append(cls)
            row.classes.setdefault(cls, Cell()).add(ok)
        if not is_injected(pos):  # recovery from the source's own states (an injected one is not)
            rec.add(ok)
    if not n_ck:
        return None
    pairs = [(c.rate, k.rate) for c, k in cells.values() if c.rate is not None and k.rate is not None]
    return RecoveryMetrics(rows=list(rows.values()), positions=_order(positions), classes=sorted(set(classes)),
                           correlation=pearson([p[0] for p in pairs], [p[1] for p in pairs]),
                           correlation_cells=len(pairs), checkpoint_episodes=n_ck, clean_start_episodes=n_clean,
                           mismatched=mismatched)


def _table(head: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines) + "\n"


def _pp(v: Optional[float]) -> str:
    return "–" if v is None else f"{v:+.1f} pp"


def recovery_section(run: RunData) -> Optional[str]:
    """The markdown section (None when the run has no checkpoint episodes)."""
    m = recovery_metrics(run)
    if m is None:
        return None
    inject = "t+1+" in m.positions and "t+1" in m.positions
    out = ["\n## Recovery from checkpoints\n",
           f"{m.checkpoint_episodes} episodes started at a first-error checkpoint (AndroidFlux positions: `t-k` before "
           "the first error, `t` with the erroneous action taken, `t+1` one source step later, `t+1+` the error then "
           "an injected correct action, the oracle's next action) and "
           f"{m.clean_start_episodes} from the task's start under the same perturbations (clean start). Success is "
           "done-gated; a resumed agent has the task's budget minus the replayed prefix"
           + (f"; {m.mismatched} checkpoint episode(s) did not restore the checkpoint's screen (errors)" if m.mismatched else "")
           + ".\n", "\n### By position\n",
           _table(["agent", "guard", "clean start", *m.positions, "rewinding gain (t-1 − t)",
                   *(["injection gain (t+1+ − t+1)"] if inject else [])],
                  [[r.agent, r.guard, r.clean_start.show(), *(r.positions.get(p, Cell()).show() for p in m.positions),
                    _pp(r.gain()), *([_pp(r.injection_gain())] if inject else [])] for r in m.rows])]
    if m.classes:
        out += ["\n### By first-error class (at t)\n",
                _table(["agent", "guard", *m.classes], [[r.agent, r.guard, *(r.classes.get(c, Cell()).show()
                                                                            for c in m.classes)] for r in m.rows])]
    out += ["\n### By steps taken before the first error\n",
            _table(["agent", "guard", *(f"{b}: t-1 / t" for b in BUCKETS), "gain ≤3", "gain ≥7", "≥7 − ≤3"],
                   [[r.agent, r.guard,
                     *(f"{r.buckets.get(b, {}).get('t-1', Cell()).show()} / {r.buckets.get(b, {}).get('t', Cell()).show()}"
                       for b in BUCKETS),
                     _pp(r.gain("<=3")), _pp(r.gain(">=7")),
                     _pp(None if r.gain("<=3") is None or r.gain(">=7") is None else r.gain(">=7") - r.gain("<=3"))]
                    for r in m.rows])]
    if inject:
        out += ["\n### Rewinding vs injection by steps taken before the first error\n",
                "AndroidFlux's timing contrast: rewinding gain (t-1 − t) and injection gain (t+1+ − t+1) for early "
                "(≤3) and late (≥7) first errors.\n\n",
                _table(["agent", "guard", *(f"{b}: t+1+ / t+1" for b in BUCKETS), "rewind ≤3", "inject ≤3",
                        "rewind ≥7", "inject ≥7"],
                       [[r.agent, r.guard,
                         *(f"{r.buckets.get(b, {}).get('t+1+', Cell()).show()} / "
                           f"{r.buckets.get(b, {}).get('t+1', Cell()).show()}" for b in BUCKETS),
                         _pp(r.gain("<=3")), _pp(r.injection_gain("<=3")), _pp(r.gain(">=7")),
                         _pp(r.injection_gain(">=7"))] for r in m.rows])]
    guards = sorted({r.guard for r in m.rows})
    if "off" in guards and len(guards) > 1:
        body = []
        for r in m.rows:
            if r.guard == "off":
                continue
            base = next((b for b in m.rows if b.agent == r.agent and b.guard == "off"), None)
            if base is None:
                continue
            body.append([r.agent, r.guard, *(_pp(None if base.positions.get(p, Cell()).rate is None
                                                     or r.positions.get(p, Cell()).rate is None else
                                                     100 * (r.positions[p].rate - base.positions[p].rate))  # type: ignore[operator]
                                             for p in m.positions)])
        out += ["\n### Guard on − off, by position\n", _table(["agent", "guard", *m.positions], body)]
    corr = "–" if m.correlation is None else f"{m.correlation:+.2f}"
    out += [f"\nClean-start success vs recovery (all positions but the injected one), Pearson r across {m.correlation_cells} agent × guard "
            f"× task cells: **{corr}**.\n"]
    if not inject:
        out += ["\nInjection gain (AndroidFlux: `t+1+`, an injected correct action after the error, vs `t+1`, the "
                "source's own next action) needs checkpoints at both; build them with "
                "`ttir checkpoints RUN_DIR --out CK_DIR --positions t-1,t,t+1,t+1+`.\n"]
    return "".join(out)
