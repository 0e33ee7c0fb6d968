"""``ttir checkpoints RUN_DIR --out CK_DIR``: checkpoints around every placed first error.

Positions (AndroidFlux §3, §C.2): ``t-k`` — the state in which the source agent decided step
``t-k`` (``t-k`` recorded actions replayed); ``t`` — the erroneous action already taken
(``t+1`` actions); ``t+1`` — one more step of the source agent (``t+2`` actions); ``t+1+`` — that
step replaced by an injected correct action, the oracle's next action at ``t`` (:func:`inject`;
AndroidFlux's injection gain compares ``t+1+`` with ``t+1``). A position is
admitted when its prefix lies inside the recorded trajectory, contains no status action, and the
recorded screen after it was stored (failed episodes keep their screenshots; ``save_xml`` keeps
dumps). Every admitted checkpoint is replayed (``replay``) and kept only when the replayed screen
matches the recorded one (``ScreenDigest.matches``: JPEG hash and dump hash); the others are
dropped and counted. An injected position is verified up to the injection (the recorded screen
before it); the screen after it has no recording and is the replayed one.

CK_DIR holds ``checkpoints.jsonl`` (one :class:`Checkpoint` a line), ``placements.jsonl`` (every
failed episode, placed or not, ``placement.FirstError``), ``screens/<id>.jpg|.xml`` (the restored
screens) and ``summary.json`` (:class:`BuildSummary`: the counts).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

from loguru import logger
from pydantic import BaseModel, Field

from experiments.checkpoints.history import history_step
from experiments.checkpoints.model import (CHECKPOINTS, Checkpoint, is_injected, load,  # noqa: F401 - re-exported
                                          parse_position, prefix_length)
from experiments.checkpoints.placement import FirstError, place_run
from experiments.checkpoints.propose import open_env  # noqa: F401 - re-exported
from experiments.checkpoints.replay import ScreenDigest, replay_prefix, screen_digest, sha256
from ttir.core.types import ENDING_TYPES

DEFAULT_POSITIONS = ("t-3", "t-1", "t", "t+1", "t+1+")
PLACEMENTS = "placements.jsonl"
SUMMARY = "summary.json"


class PositionCounts(BaseModel):
    admitted: int = 0
    not_admitted: int = 0  # the prefix would start before the episode or run past it (or past a status)
    unverifiable: int = 0  # the recorded screen was not stored
    not_injected: int = 0  # t+K+: the oracle's next action ends the episode (nothing to inject)
    injected_as_source: int = 0  # t+K+: the injected action equals the source's own (the same state as t+K)
    reproduced: int = 0
    not_reproduced: int = 0  # dropped


class BuildSummary(BaseModel):
    source_run: str
    positions: list[str]
    failed_episodes: int = 0
    placed: int = 0
    unplaced: int = 0
    unplaced_reasons: dict[str, int] = Field(default_factory=dict)
    classes: dict[str, int] = Field(default_factory=dict)
    by_position: dict[str, PositionCounts] = Field(default_factory=dict)
    checkpoints: int = 0

    @property
    def reproduced_rate(self) -> Optional[float]:
        tried = sum(p.reproduced + p.not_reproduced for p in self.by_position.values())
        return sum(p.reproduced for p in self.by_position.values()) / tried if tried else None


def _recorded(ep_dir: Path, n: int) -> ScreenDigest:
    jpg, xml = ep_dir / f"step_{n:03d}.jpg", ep_dir / f"step_{n:03d}.xml"
    return ScreenDigest(jpeg_sha256=sha256(jpg.read_bytes()) if jpg.exists() else None,
                        xml_sha256=sha256(xml.read_bytes()) if xml.exists() else None)


def _drop_stale_screens(screens: Path, kept: list[Checkpoint]) -> None:
    """Remove the screens of an earlier build of the same folder that this build did not keep."""
    ids = {ck.id for ck in kept}
    for f in screens.iterdir():
        if f.suffix in (".jpg", ".xml") and f.stem not in ids:
            f.unlink()


def build(run_dir: Path | str, out: Path | str, positions: tuple[str, ...] = DEFAULT_POSITIONS) -> BuildSummary:
    """Place the first errors of ``run_dir``'s failed episodes and write their checkpoints to ``out``.

    Args:
        run_dir: a finished run (simulated phones; its failed episodes keep their screenshots).
        out: the checkpoint folder: a new one, or one an earlier build wrote (rewritten, its
            screens that this build does not keep removed).
        positions: ``t-K`` / ``t`` / ``t+K`` labels.

    Returns:
        The counts (also ``out/summary.json``).

    Raises:
        ConfigError: ``out`` is the run folder, a file, or a folder of other things
            (``experiments.store.check_derived_folder``).
    """
    from experiments.spec import EpisodeSpec
    from experiments.store import RunStore, check_derived_folder, read_json

    offsets = {p: parse_position(p) for p in positions}
    run_dir, out = Path(run_dir), Path(out)
    check_derived_folder(out, run_dir, CHECKPOINTS, "the checkpoints")
    store = RunStore(run_dir)
    spec = read_json(run_dir / "spec.json") if (run_dir / "spec.json").exists() else {}
    if (spec.get("devices") or {}).get("kind", "sim") != "sim":
        raise ValueError(f"{run_dir}: devices.kind={spec['devices']['kind']!r}; checkpoints replay on simulated "
                         "phones only (devices.kind='sim')")
    width = int(spec.get("screenshot_width") or 360)
    (out / "screens").mkdir(parents=True, exist_ok=True)
    placements = place_run(run_dir)
    summary = BuildSummary(source_run=str(run_dir.resolve()), positions=list(positions),
                           by_position={p: PositionCounts() for p in positions})
    records = {r.id: r for r in store.episode_records()}
    kept: list[Checkpoint] = []
    for fe in placements:
        summary.failed_episodes += 1
        if not fe.placed:
            summary.unplaced += 1
            key = re.sub(r"\s*\(.*\)$", "", fe.reason)
            summary.unplaced_reasons[key] = summary.unplaced_reasons.get(key, 0) + 1
            continue
        summary.placed += 1
        summary.classes[fe.error_class or "?"] = summary.classes.get(fe.error_class or "?", 0) + 1
        kept += _episode_checkpoints(fe, store, records[fe.id], offsets, width, summary, EpisodeSpec, out / "screens")
    with (out / PLACEMENTS).open("w", encoding="utf-8") as fh:
        for fe in placements:
            fh.write(fe.model_dump_json() + "\n")
    with (out / CHECKPOINTS).open("w", encoding="utf-8") as fh:
        for ck in kept:
            fh.write(ck.model_dump_json() + "\n")
    _drop_stale_screens(out / "screens", kept)
    summary.checkpoints = len(kept)
    (out / SUMMARY).write_text(summary.model_dump_json(indent=2), encoding="utf-8")
    return summary


def _episode_checkpoints(fe: FirstError, store: Any, rec: Any, offsets: dict[str, int], width: int,
                         summary: BuildSummary, spec_cls: Any, screens: Path) -> list[Checkpoint]:
    traj = store.trajectory(fe.id) or {}
    steps = traj.get("trajectory") or []
    ep = spec_cls.model_validate(traj["spec"])
    ep_dir = store.episode_dir(fe.id)
    assert fe.step is not None
    todo: dict[str, int] = {}  # label -> recorded actions replayed (t+K+: before the injected one)
    for label, off in offsets.items():
        n = prefix_length(fe.step, off) - (1 if is_injected(label) else 0)
        counts = summary.by_position[label]
        if n < 0 or n >= len(steps) or any((steps[i].get("agent_step") or {}).get("action", {}).get("action_type")
                                           in ("status", None) for i in range(n)):
            counts.not_admitted += 1
            continue
        counts.admitted += 1
        if _recorded(ep_dir, n).jpeg_sha256 is None and _recorded(ep_dir, n).xml_sha256 is None:
            counts.unverifiable += 1
            continue
        todo[label] = n
    if not todo:
        return []
    actions = [dict(steps[i]["agent_step"]["action"]) for i in range(max(todo.values()))]
    env, shown, task, budget = open_env(ep)
    try:
        seen = replay_prefix(shown, shown.reset(task), actions)
    finally:
        env.close()
    from experiments.worker import _jpeg

    out: list[Checkpoint] = []
    for label, n in todo.items():
        digest, jpg, xml = screen_digest(seen[n], width, _jpeg)
        counts = summary.by_position[label]
        if not digest.matches(_recorded(ep_dir, n)):
            counts.not_reproduced += 1
            logger.warning("{} at {}: the replayed screen differs from the recorded one; dropped", fe.id, label)
            continue
        counts.reproduced += 1
        ck = Checkpoint(
            id=f"{fe.id}__at_{label}", source_id=fe.id, source_run=summary.source_run, position=label,
            offset=offsets[label], first_error_step=fe.step, error_class=fe.error_class or "?",
            ttir_category=fe.ttir_category, steps_taken=fe.step, prefix_steps=n, goal=traj.get("goal") or task.goal,
            task=ep.task, instance=ep.instance, task_seed=ep.task_seed, perturbation=ep.perturbation,
            overrides=ep.overrides, under=ep.under, dump=ep.dump, budget_multiplier=ep.budget_multiplier,
            trap_budget_factor=ep.trap_budget_factor, episode_seed=ep.episode_seed, budget=budget,
            source_agent=rec.agent, source_agent_kind=rec.agent_kind, source_seed=rec.seed, screenshot_width=width,
            actions=actions[:n], history=[history_step(i, actions[i], (steps[i].get("agent_step") or {}).get("summary"))
                                          for i in range(n)],
            screen=digest)
        if is_injected(label):
            made = inject(ck, ep)
            if made is None:
                counts.not_injected += 1
                continue
            ck, jpg, xml = made
            counts.injected_as_source += ck.injected == (steps[n].get("agent_step") or {}).get("action")
        out.append(ck)
        if jpg is not None:
            (screens / f"{ck.id}.jpg").write_bytes(jpg)
        (screens / f"{ck.id}.xml").write_bytes(xml)
    return out


def inject(base: Checkpoint, ep: Any) -> Optional[tuple[Checkpoint, Optional[bytes], bytes]]:
    """The injected checkpoint ``t+K+`` from the verified state ``base`` before its last action.

    The oracle (the robust plan-follower, primed with ``base``'s history) proposes the next action at
    ``base``; it is executed after ``base``'s prefix and the screen it leads to becomes the checkpoint's
    screen (replay is deterministic: a resumed episode checks it again). The history gets a neutral
    entry for it, as for any recorded step.

    Returns:
        (checkpoint, JPEG bytes, dump bytes), or None when the oracle's next action ends the episode
        (a status or answer action: nothing to inject).
    """
    from experiments.checkpoints.propose import agent_spec, next_action
    from experiments.worker import _jpeg

    action, _ = next_action(base, agent_spec("oracle", "oracle", {}), 0)
    if action.get("action_type") in ENDING_TYPES:
        logger.warning("{}: the oracle's next action is {}; nothing to inject", base.id, action.get("action_type"))
        return None
    actions = [*base.actions, action]
    env, shown, task, _ = open_env(ep)
    try:
        seen = replay_prefix(shown, shown.reset(task), actions)
    finally:
        env.close()
    digest, jpg, xml = screen_digest(seen[-1], base.screenshot_width, _jpeg)
    ck = base.model_copy(update={"actions": actions, "prefix_steps": len(actions), "screen": digest,
                                 "history": [*base.history, history_step(len(base.actions), action, None)],
                                 "injected": action, "injected_by": "oracle"})
    return ck, jpg, xml
