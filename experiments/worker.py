"""Run one episode of a spec inside a worker process (one simulated device per process)."""

from __future__ import annotations

import io
import math
import time
import traceback
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Optional, Union

from experiments.spec import EpisodeSpec
from experiments.store import RunStore

_DEVICE: Any = None
WORKER_FRAMES = 16  # frames a worker's phone remembers (8 gave most of the gain on the quick start, 24 and 64 no more)
SHOTS_IN_FLIGHT = 4  # full-size frames handed to the encoder thread at once (8 MB each at 1080x2400)


def sim_device() -> Any:
    """A simulated phone as a worker runs its episodes on: with a small memo of recent frames.

    A worker's episodes show the same screens again and again (a task's first screens under every
    perturbation and agent, a screen an agent is stuck on); a screen seen before is not laid out,
    drawn and serialised again. Observations are the same with or without it (the records and
    every kept screenshot and dump of ``quickstart.yaml`` are byte-identical; the memo's own test,
    tests/benchmark/test_sim_memo.py); the quick start takes 51 instead of 74 CPU-seconds with one
    worker. ``WORKER_FRAMES`` full-size frames are at most ~8 MB each.

    Returns:
        A :class:`~benchmark.sim.device.SimDevice`.
    """
    from benchmark import SimDevice
    from benchmark.sim.memo import FrameMemo

    return SimDevice(frame_memo=FrameMemo(WORKER_FRAMES))


def device() -> Any:
    """This process's device (created once, reset for every episode)."""
    global _DEVICE
    if _DEVICE is None:
        _DEVICE = sim_device()
    return _DEVICE


def _jpeg(img: Any, width: int) -> bytes:
    if img.width > width:
        # reduced by whole factors first (a box average: 1080 -> 360 is 3x3 pixels each), then resampled:
        # a bicubic pass over the full frame cost ~18 ms, most of a kept episode's CPU time; this ~3 ms
        # (mean pixel difference 0.2 of 255)
        img = img.resize((width, max(1, round(img.height * width / img.width))), reducing_gap=1.0)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=72)
    return buf.getvalue()


class _Encoder:
    """Screenshots downscaled and JPEG-encoded on a helper thread while the episode goes on.

    Both release the GIL, and they were half of a screenshot-keeping episode's time: an episode that
    runs to its budget (840 steps) took 29 s, 13 s of it without screenshots. In a run's last
    minutes, when fewer episodes than cores are left, the longest of them set the run's length; the
    helper thread uses a core that would idle. The bytes are those :func:`_jpeg` makes in line (the
    same call, on the same image: a screenshot is never drawn on once observed). At most
    ``SHOTS_IN_FLIGHT`` frames wait for it, so memory stays bounded when the cores are all busy."""

    def __init__(self, width: int):
        self.width = width
        self._pool: Optional[ThreadPoolExecutor] = None
        self._queued: deque[Future] = deque()

    def submit(self, img: Any) -> Future:
        if self._pool is None:  # one per episode: no thread outlives it (workers fork from a process that ran episodes)
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ttir-jpeg")
        while len(self._queued) >= SHOTS_IN_FLIGHT:
            self._queued.popleft().result()
        img.load()  # a lazily decoded image is decoded here, not on two threads at once (a no-op once loaded)
        fut = self._pool.submit(_jpeg, img, self.width)
        self._queued.append(fut)
        return fut

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _collect(images: dict[str, Union[bytes, Future]]) -> dict[str, bytes]:
    return {k: v.result() if isinstance(v, Future) else v for k, v in images.items()}


def budget_for(ep: EpisodeSpec, task: Any) -> int:
    from perturb import REGISTRY

    factor = ep.budget_multiplier
    prof = REGISTRY.get(ep.perturbation)
    if prof is not None and prof.layer is not None:
        factor *= ep.trap_budget_factor  # AnTrap: budget x1.15 for trap episodes
    return max(1, math.ceil(factor * task.reference_steps))


def run_one(ep: EpisodeSpec, root: str, screenshots: str = "failures", width: int = 360,
            save_xml: bool = False, factories: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """Run ``ep``, write its trajectory under ``root`` and return its record.
    ``factories``: python agents' factories handed over from Python (Ray ships them with each episode)."""
    global _DEVICE
    if factories:
        from experiments.python_agents import register_all

        register_all(factories)
    from benchmark import make_task, run_episode
    from benchmark.devices.phone_task import for_device
    from perturb import REGISTRY, PerturbedDevice, make
    from perturb.dump_style import with_dump_style

    store = RunStore(root)
    prof = REGISTRY.get(ep.perturbation)
    record: dict[str, Any] = {
        "id": ep.id, "task": ep.task, "instance": ep.instance, "perturbation": ep.perturbation,
        "component": prof.component if prof else "clean", "layer": prof.layer if prof else None,
        "overrides": ep.overrides, "agent": ep.agent.name, "agent_kind": ep.agent.kind, "guard": ep.guard,
        "seed": ep.seed, "repeat": ep.repeat, "episode_seed": ep.episode_seed,
        **({"dump": ep.dump} if ep.dump != "all_windows" else {}),  # records of the default style stay as they were
    }
    images: dict[str, Union[bytes, Future]] = {}  # a screenshot's bytes come from the encoder thread
    encoder = _Encoder(width)
    t0 = time.perf_counter()
    env: Optional[Any] = None
    try:
        task = make_task(ep.task, seed=ep.task_seed, i=ep.instance)
        budget = budget_for(ep, task)
        perts = [make(name, **ov) for u in ep.under for name, ov in u.items()]  # beneath the episode's own
        perts += [] if ep.perturbation == "clean" else [make(ep.perturbation, **ep.overrides)]
        env = PerturbedDevice(device(), perts, seed=ep.episode_seed, budget=budget)
        shown = with_dump_style(env, ep.dump)  # what the agent and the guard see; the verifier reads the device
        agent = _build(ep, task, device(), budget)
        if ep.checkpoint is not None:  # start at a checkpoint: the prefix replayed, the agent primed (docs/checkpoints.md)
            from experiments.checkpoints.resume import at_checkpoint

            shown, agent, budget, record["checkpoint"] = at_checkpoint(ep.checkpoint, shown, agent, _jpeg)
        truth = _recorder(shown, task) if save_xml else None  # ground truth only for tuning data

        def keep(i: int, obs: Any) -> Optional[str]:
            if truth is not None:
                truth.at_decision(i, obs)
            if save_xml:
                images[f"step_{i:03d}.xml"] = (obs.xml or obs.to_xml()).encode("utf-8")
            if screenshots == "none" or obs.screenshot is None:
                return None
            name = f"step_{i:03d}.jpg"
            images[name] = encoder.submit(obs.screenshot)
            return name

        here = for_device(task, env.unwrapped)  # a served phone sets the task up and gives the verdict
        result = run_episode(truth.device if truth is not None else shown, here, agent, budget, on_observation=keep)
        final = env.observe()
        if screenshots != "none" and final.screenshot is not None:
            images["final.jpg"] = encoder.submit(final.screenshot)
        report = getattr(agent, "report", None)
        traj = result.to_json_dict()
        traj["spec"] = ep.model_dump(mode="json")
        if truth is not None:  # per-step ground truth for `ttir tune build` (experiments/tune/truth.py)
            truth.attach(traj["trajectory"])
            traj["task_info"] = truth.task_info()
        traj["events"] = env.event_log()
        traj["guard"] = report.to_dict() if report is not None else None
        traj["final_screen"] = final.summary() | {"package": final.package}
        summary = report.summary() if report is not None else None
        record.update(
            status="ok", goal=task.goal, success=result.success, verified=result.verified, steps=result.steps,
            budget=budget, termination=result.termination, error=result.error, guard_summary=summary,
            events=_count(env.event_log()), **_firing(ep, env),
        )
        guard_acted = bool(summary and (summary.get("sessions") or summary.get("blocked_claims")))
        keep_images = screenshots == "all" or (screenshots == "failures" and (not result.success or guard_acted))
        files = _collect({k: v for k, v in images.items() if keep_images or k.endswith(".xml")})
        store.write_episode(ep.id, traj, files)
    except Exception as exc:  # noqa: BLE001 - an episode that raises is recorded, the run goes on
        record.update(status="error", success=False, verified=False, termination="error",
                      error="".join(traceback.format_exception(exc)))
        if env is not None:
            record.update(_firing(ep, env))
        _DEVICE = None  # a fresh device for the next episode
    finally:
        encoder.close()  # frames not collected (not kept, or the episode raised) are dropped
        if env is not None:
            try:
                env.close()
            except Exception:  # noqa: BLE001
                _DEVICE = None
    record["wall_s"] = round(time.perf_counter() - t0, 4)
    return record


def _recorder(env: Any, task: Any) -> Any:
    """The ground-truth recorder of this episode (None if it cannot be set up: the
    episode then runs exactly as before, without ``truth``)."""
    try:
        from experiments.tune.truth import TruthRecorder

        return TruthRecorder(env, task)
    except Exception as exc:  # noqa: BLE001 - ground truth is optional, the episode is not
        from loguru import logger

        logger.warning("no ground truth for this episode: {}", exc)
        return None


def _build(ep: EpisodeSpec, task: Any, dev: Any, budget: int) -> Any:
    from experiments.agents import build_agent

    if ep.agent.kind != "python":
        return build_agent(ep, task)
    size = getattr(dev, "base_size", None)  # the phone's own size; an adb phone's first screen tells it
    return build_agent(ep, task, screen_size=tuple(size) if size else dev.observe().screen_size, budget=budget)


def _firing(ep: EpisodeSpec, env: Any) -> dict[str, Any]:
    """Whether and when the episode's perturbation took effect (None for a clean episode)."""
    from perturb.firing import first_effect_step

    if ep.perturbation == "clean":
        return {"fired": None, "fired_step": None}
    step = first_effect_step(env.event_log())
    return {"fired": step is not None, "fired_step": step}


def _count(events: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in events:
        out[e["event"]] = out.get(e["event"], 0) + 1
    return out
