"""The episodes of a spec with ``from_checkpoints: CK_DIR`` (``ExperimentSpec.episodes``).

For every checkpoint of CK_DIR and every agent x guard mode x seed x repeat: one episode that
starts at the checkpoint (``EpisodeSpec.checkpoint``; its id is the checkpoint's id, then the
agent, guard, seed and repeat). And for every distinct task / perturbation setting of the
checkpoints, the same agents x guard modes x seeds x repeats from the task's start: the
clean-start success the report sets beside recovery. Checkpoint episodes keep their source's
episode seed, task seed, instance, perturbation overrides, ``under`` list, dump style and budget
factors, so the replayed prefix meets the same perturbation realisation.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from experiments.checkpoints.model import load

if TYPE_CHECKING:  # pragma: no cover - the spec imports this module: type names only
    from experiments.spec import EpisodeSpec, ExperimentSpec


def checkpoint_episodes(spec: "ExperimentSpec", episode_spec: type["EpisodeSpec"]) -> list["EpisodeSpec"]:
    """Checkpoint episodes first, then the clean-start ones (see the module docstring).

    Args:
        spec: a spec with ``from_checkpoints`` set.
        episode_spec: ``experiments.spec.EpisodeSpec`` (passed in: the spec module calls this one).
    """
    EpisodeSpec: Any = episode_spec
    assert spec.from_checkpoints is not None
    cks = load(spec.from_checkpoints)
    combos = list(itertools.product(spec.seeds, range(spec.repeats), spec.agents, spec.guard))
    out: list[EpisodeSpec] = []
    settings: dict[str, dict] = {}
    for ck in cks:
        base = dict(task=ck.task, instance=ck.instance, task_seed=ck.task_seed, perturbation=ck.perturbation,
                    overrides=ck.overrides, under=ck.under, dump=ck.dump, budget_multiplier=ck.budget_multiplier,
                    trap_budget_factor=ck.trap_budget_factor, guard_config=spec.guard_config)
        settings.setdefault(repr(sorted((k, repr(v)) for k, v in base.items())), base)
        for seed, rep, agent, mode in combos:
            out.append(EpisodeSpec(**base, agent=agent, guard=mode, seed=seed, repeat=rep,
                                   checkpoint=ck.model_dump(mode="json")))
    seen = {e.id for e in out}
    for base in settings.values():
        for seed, rep, agent, mode in combos:
            ep = EpisodeSpec(**base, agent=agent, guard=mode, seed=seed, repeat=rep)
            if ep.id not in seen:
                seen.add(ep.id)
                out.append(ep)
    return out
