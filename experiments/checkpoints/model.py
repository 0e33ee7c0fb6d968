"""What a checkpoint is (:class:`Checkpoint`, one line of ``CK_DIR/checkpoints.jsonl``) and its positions.

Positions (AndroidFlux §3, §C.2, §C.6.2) are written ``t-K``, ``t``, ``t+K`` around the first error
``t``, and ``t+K+`` for an injected position: the state of ``t+K`` with its last action (the source
agent's own) replaced by a correct one (the oracle's next action), so that ``t+1+`` against ``t+1``
is AndroidFlux's injection gain (``t+1+`` vs ``t+1−``). :func:`parse_position` reads a position's
offset, :func:`is_injected` its injection mark, :func:`position_key` orders them,
:func:`prefix_length` says how many actions a checkpoint replays, :func:`steps_bucket` is
AndroidFlux's bucket of steps taken before the error.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, Optional, get_args

from pydantic import BaseModel, ConfigDict, Field

from experiments.checkpoints.history import HistoryStep
from experiments.checkpoints.replay import ScreenDigest

StepsBucket = Literal["<=3", "4-6", ">=7"]  # AndroidFlux's buckets of steps taken before the first error
BUCKETS: tuple[str, ...] = get_args(StepsBucket)
POSITION = re.compile(r"t(?:([+-])(\d{1,2}))?(\+)?")
CHECKPOINTS = "checkpoints.jsonl"


def _match(text: str) -> "re.Match[str]":
    m = POSITION.fullmatch(text.strip())
    if m is None or (m.group(3) and (m.group(1) != "+" or int(m.group(2)) < 1)):
        raise ValueError(f"position {text!r}: expected t, t-K, t+K or t+K+ (K >= 1 for t+K+, the injected "
                         "position; e.g. t-3,t-1,t,t+1,t+1+)")
    return m


def parse_position(text: str) -> int:
    """``t-3`` -> -3, ``t`` -> 0, ``t+1`` -> 1, ``t+1+`` -> 1.

    Raises:
        ValueError: not of the form t, t-K, t+K or t+K+ (K up to 99; K >= 1 for t+K+).
    """
    m = _match(text)
    return 0 if m.group(1) is None else int(m.group(2)) * (1 if m.group(1) == "+" else -1)


def is_injected(text: str) -> bool:
    """``t+K+``: the last action of the ``t+K`` prefix is an injected correct action, not the source's."""
    return bool(_match(text).group(3))


def position_key(text: str) -> tuple[int, bool]:
    """Sort key of a position: by offset, the injected position right after its plain one."""
    return parse_position(text), is_injected(text)


def position_label(offset: int) -> str:
    return "t" if offset == 0 else f"t{offset:+d}"


def prefix_length(step: int, offset: int) -> int:
    """Recorded actions replayed for a checkpoint at ``offset`` from a first error at ``step``."""
    return step + offset + (1 if offset >= 0 else 0)


def steps_bucket(steps_taken: int) -> str:
    """AndroidFlux's buckets of steps already taken before the first error."""
    return BUCKETS[0] if steps_taken <= 3 else (BUCKETS[1] if steps_taken <= 6 else BUCKETS[2])


class Checkpoint(BaseModel):
    """One restored state: how to rebuild it, what the agent is told, and the screen it shows."""

    model_config = ConfigDict(extra="forbid")

    id: str
    source_id: str  # the failed episode of the source run
    source_run: str
    position: str  # t-3, t-1, t, t+1 ...
    offset: int
    first_error_step: int
    error_class: str
    ttir_category: str
    steps_taken: int  # actions before the first error (AndroidFlux's buckets: <=3, 4-6, >=7)
    prefix_steps: int  # recorded actions replayed to reach this state
    goal: str
    task: str
    instance: int = 0
    task_seed: int = 0
    perturbation: str = "clean"
    overrides: dict[str, Any] = Field(default_factory=dict)
    under: list[dict[str, dict[str, Any]]] = Field(default_factory=list)
    dump: str = "all_windows"
    budget_multiplier: float = 20.0
    trap_budget_factor: float = 1.15
    episode_seed: int
    budget: int  # the task's step budget; a resumed agent gets budget - prefix_steps
    source_agent: str
    source_agent_kind: str
    source_seed: int
    screenshot_width: int = 360
    actions: list[dict[str, Any]]  # the recorded prefix
    history: list[HistoryStep]  # what the resumed agent is told (history.py)
    screen: ScreenDigest  # the restored screen (equal to the recorded one; at t+K+ the replayed one after the injection)
    injected: Optional[dict[str, Any]] = None  # t+K+: the correct action that replaced the source's (actions[-1])
    injected_by: Optional[str] = None  # the agent that proposed it (oracle)

    @property
    def remaining_budget(self) -> int:
        return max(1, self.budget - self.prefix_steps)


def load(ck_dir: Path | str) -> list[Checkpoint]:
    """The checkpoints of a folder written by :func:`build`.

    Raises:
        FileNotFoundError: ``ck_dir`` holds no checkpoints.jsonl (with the command that writes one).
    """
    path = Path(ck_dir) / CHECKPOINTS
    if not path.exists():
        raise FileNotFoundError(f"{ck_dir}: no {CHECKPOINTS}; build one with `ttir checkpoints RUN_DIR --out {ck_dir}`")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(Checkpoint.model_validate_json(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{n}: not a checkpoint ({str(exc).splitlines()[0]})") from None
    return out
