"""Run a sweep on a Ray cluster: one actor per device, one episode per actor at a time.

``RayExecutor`` has the executor interface of ``experiments.executor``: ``run(episodes,
**kwargs)`` yields each record as soon as it is finished (the driver alone appends it
to episodes.jsonl) and ``close()``. Without an address it starts a quiet local Ray
(``num_cpus=workers``, no dashboard) and shuts it down in ``close()``.

Failures: an actor that dies (node lost, process killed, device lost, episode
timeout) is replaced, and its episode is retried on the next free actor; after
``max_attempts`` failed tries the episode is recorded as an error. A device whose
actor dies again after ``max_restarts`` replacements in a row (no episode finished
in between) is given up; when no device is left, the remaining episodes are
recorded as errors. Either way the sweep ends
with exactly one record per episode.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Optional, Union

from loguru import logger

from experiments.ray.actor import DeviceActor, DeviceFactory, DeviceLost, RunFn
from experiments.ray.devices import DeviceBinding, attached_serials, local_resources, plan_bindings
from experiments.spec import DeviceSpec, EpisodeSpec
from experiments.store import RunStore

POLL_S = 1.0  # how often the driver checks time-outs while it waits
ADDRESS_PROBE_S = 5.0  # how long the address check waits for the head node to accept a connection
DEFAULT_PORTS = {"": 6379, "ray://": 10001}  # Ray's head (GCS) port, and its client server's


def address_problem(address: str, timeout_s: float = ADDRESS_PROBE_S) -> Optional[str]:
    """Why no Ray cluster can be joined at ``address``, or None when its head accepts a connection.

    ``ray.init`` retries a wrong address for minutes, printing a warning every few seconds, before
    it fails; one TCP connection tells at once. ``auto`` and ``local`` are Ray's to resolve.

    Args:
        address: ``host:port`` of the head node (GCS), or ``ray://host:port`` (Ray client).
        timeout_s: seconds to wait for the connection.

    Returns:
        The problem in words, or None.
    """
    import socket

    if address in ("auto", "local"):
        return None
    scheme = "ray://" if address.startswith("ray://") else ""
    rest = address[len(scheme):].rstrip("/")
    if rest.startswith("["):  # [v6 address]:port
        host, _, tail = rest[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    elif rest.count(":") == 1:
        host, port_text = rest.split(":")
    else:  # a bare host (or a v6 address without brackets)
        host, port_text = rest, ""
    if not port_text:
        port = DEFAULT_PORTS[scheme]
    elif port_text.isdigit() and 0 < int(port_text) < 65536:
        port = int(port_text)
    else:
        return f"{address!r} is not host:port (e.g. 10.0.0.5:6379, or ray://10.0.0.5:10001 for Ray client)"
    if not host:
        return f"{address!r} names no host (e.g. 10.0.0.5:6379)"
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        return (f"no Ray head node answers at {host}:{port} ({exc.strerror or exc}); start one there with "
                "`ray start --head`, or check the address (--address auto joins the cluster this machine is part of)")
    return None


@dataclass
class _Slot:
    """One device's place in the pool; its actor is replaced when it dies."""

    binding: DeviceBinding
    actor: Any = None
    state: str = "starting"  # starting | idle | busy | retired
    ref: Any = None  # the actor's ready() call while starting, its run() call while busy
    episode: Optional[EpisodeSpec] = None
    attempts: int = 0  # failed tries of the running episode before this one
    since: float = 0.0
    failures: int = 0  # deaths in a row
    kill_reason: Optional[str] = None
    last_error: str = ""


class RayExecutor:
    """Episodes as tasks on a pool of Ray actors, each owning one device.

    ``address``: ``None`` (a Ray already initialised in this process, else a new local
    one with ``num_cpus=workers``), ``"auto"`` or ``HOST:PORT`` / ``ray://HOST:PORT``.
    ``devices``: sim (``workers`` simulated phones) or adb phones, one actor each.
    ``ship_files``: send trajectories back to the driver instead of letting actors
    write the run directory (default: on unless this executor started Ray locally).
    ``episode_timeout_s``: an episode running longer kills its actor (it is retried).
    ``run_fn`` / ``device_factory``: replace ``worker.run_one`` / ``open_device``.
    """

    def __init__(self, workers: int = 2, *, address: Optional[str] = None,
                 devices: Union[DeviceSpec, Mapping[str, Any], None] = None, max_attempts: int = 3,
                 max_restarts: int = 3, actor_cpus: float = 1.0, actor_resources: Optional[Mapping[str, float]] = None,
                 episode_timeout_s: Optional[float] = None, start_timeout_s: float = 300.0,
                 ship_files: Optional[bool] = None, run_fn: Optional[RunFn] = None,
                 device_factory: Optional[DeviceFactory] = None, init_options: Optional[Mapping[str, Any]] = None):
        try:
            import ray
        except ImportError as exc:
            raise ImportError("the ray executor needs Ray: pip install 'ttir[ray]' (or pip install 'ray>=2.9')") from exc
        for name, value, low in (("workers", workers, 1), ("max_attempts", max_attempts, 1), ("max_restarts", max_restarts, 0)):
            if value < low:
                raise ValueError(f"{name}={value} must be >= {low}")
        if actor_cpus < 0:
            raise ValueError(f"actor_cpus={actor_cpus} must be >= 0")
        for name, value in (("episode_timeout_s", episode_timeout_s), ("start_timeout_s", start_timeout_s)):
            if value is not None and value <= 0:
                raise ValueError(f"{name}={value} must be > 0 seconds")
        self._ray = ray
        self.workers = workers
        self.address = address
        self.devices = devices if isinstance(devices, DeviceSpec) else DeviceSpec.model_validate(dict(devices or {}))
        self.max_attempts = max_attempts
        self.max_restarts = max_restarts
        self.actor_cpus = actor_cpus
        self.actor_resources = dict(actor_resources or {})
        self.episode_timeout_s = episode_timeout_s
        self.start_timeout_s = start_timeout_s
        self.ship_files = ship_files
        self.run_fn = run_fn
        self.device_factory = device_factory
        self.init_options = dict(init_options or {})
        self._connected = False  # this executor called ray.init (so close() calls ray.shutdown)
        self._started_local = False
        self._slots: list[_Slot] = []

    # -- connection ------------------------------------------------------------------------
    def _connect(self) -> None:
        ray = self._ray
        if ray.is_initialized():
            if self.address:
                logger.warning("Ray is already initialised in this process; address={} is ignored", self.address)
            return
        quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR,
                 "namespace": "ttir"}
        if self.address:
            ray.init(address=self.address, **{**quiet, **self.init_options})
        else:
            resources = {}
            if self.devices.kind == "adb":  # a local Ray: the phones attached here are its resources
                resources = local_resources(list(self.devices.serials or attached_serials()))
            n_actors = len(resources) if resources else self.workers
            cpus = max(1, math.ceil(n_actors * self.actor_cpus))
            ray.init(num_cpus=cpus, resources=resources or None, **{**quiet, **self.init_options})
            self._started_local = True
        self._connected = True
        logger.info("Ray: {} (resources {})", "started locally" if self._started_local else f"connected to {self.address}",
                    ray.cluster_resources())

    @property
    def actors(self) -> list[Any]:
        """Handles of the live actors (for monitoring, or to kill one in a test)."""
        return [s.actor for s in self._slots if s.actor is not None and s.state != "retired"]

    def _ship(self) -> bool:
        return self.ship_files if self.ship_files is not None else not self._started_local

    # -- the pool --------------------------------------------------------------------------
    def _start(self, slot: _Slot) -> None:
        remote = self._ray.remote(DeviceActor)
        resources = {**self.actor_resources, **slot.binding.resources}
        options: dict[str, Any] = {"num_cpus": self.actor_cpus, "max_restarts": 0, "max_concurrency": 1}
        if resources:
            options["resources"] = resources
        if slot.binding.kind == "sim":
            options["scheduling_strategy"] = "SPREAD"  # simulated phones: use every node
        slot.actor = remote.options(**options).remote(slot.binding, self._ship(), self.run_fn, self.device_factory)
        slot.ref = slot.actor.ready.remote()
        slot.state, slot.episode, slot.kill_reason = "starting", None, None
        slot.since = time.monotonic()

    def _lose(self, slot: _Slot, reason: str) -> None:
        """The slot's actor is gone (or useless): kill it, then replace it or give the slot up."""
        slot.last_error = reason
        try:
            self._ray.kill(slot.actor, no_restart=True)
        except Exception:  # noqa: BLE001 - it may be dead already
            pass
        slot.failures += 1
        slot.ref, slot.episode = None, None
        if slot.failures > self.max_restarts:
            slot.state, slot.actor = "retired", None
            logger.warning("Ray: giving up {} after {} failures in a row: {}", slot.binding.label, slot.failures, reason)
            return
        logger.warning("Ray: actor for {} lost ({}); starting a new one", slot.binding.label, reason)
        self._start(slot)

    def run(self, episodes: Iterable[EpisodeSpec], **kwargs: Any) -> Iterator[dict[str, Any]]:
        todo: deque[tuple[EpisodeSpec, int]] = deque((ep, 0) for ep in episodes)
        if not todo:
            return
        self._connect()
        ship = self._ship()
        store = RunStore(kwargs["root"]) if ship and "root" in kwargs else None
        if not ship and "root" in kwargs:
            kwargs = {**kwargs, "root": os.path.abspath(kwargs["root"])}  # actors' working folder is not ours
        if not any(s.state != "retired" for s in self._slots):  # a second run() reuses the pool's actors
            bindings = plan_bindings(self.devices, self.workers, self._ray.cluster_resources())
            self._slots = [_Slot(b) for b in bindings]
            for slot in self._slots:
                self._start(slot)
        try:
            yield from self._schedule(todo, kwargs, store)
        finally:
            if any(s.state == "busy" for s in self._slots):  # abandoned mid-sweep: no stale results later
                self._drop_pool()

    def _schedule(self, todo: deque, kwargs: dict[str, Any], store: Optional[RunStore]) -> Iterator[dict[str, Any]]:
        last_progress = time.monotonic()
        while todo or any(s.state == "busy" for s in self._slots):
            out: list[dict[str, Any]] = []
            for slot in self._slots:
                if slot.state == "idle" and todo:
                    self._submit(slot, *todo.popleft(), kwargs)
            live = [s for s in self._slots if s.state != "retired"]
            if not live:
                reasons = "; ".join(sorted({s.last_error for s in self._slots if s.last_error}))
                while todo:
                    ep, attempts = todo.popleft()
                    out.append(failure_record(ep, f"no device actor left ({reasons})", attempts))
                yield from out
                return
            refs = {s.ref: s for s in live if s.ref is not None}
            ready = self._ray.wait(list(refs), num_returns=1, timeout=POLL_S)[0] if refs else []
            for ref in ready:
                slot = refs[ref]
                if slot.state == "starting":
                    self._started(slot)
                else:
                    out.extend(self._finished(slot, todo, store))
                last_progress = time.monotonic()
            self._enforce_timeouts(last_progress, bool(todo))
            # hand out work before the consumer sees the records: actors never wait for the driver's disk
            for slot in self._slots:
                if slot.state == "idle" and todo:
                    self._submit(slot, *todo.popleft(), kwargs)
            yield from out

    def _submit(self, slot: _Slot, ep: EpisodeSpec, attempts: int, kwargs: dict[str, Any]) -> None:
        slot.ref = slot.actor.run.remote(ep, kwargs)
        slot.state, slot.episode, slot.attempts, slot.since = "busy", ep, attempts, time.monotonic()

    def _started(self, slot: _Slot) -> None:
        try:
            where = self._ray.get(slot.ref)
        except Exception as exc:  # noqa: BLE001 - a start that failed for any reason
            self._lose(slot, f"could not start: {_short(exc)}")
            return
        slot.state, slot.ref = "idle", None
        logger.debug("Ray: actor ready {}", where)

    def _finished(self, slot: _Slot, todo: deque, store: Optional[RunStore]) -> list[dict[str, Any]]:
        ep, attempts = slot.episode, slot.attempts
        assert ep is not None
        try:
            record, files = self._ray.get(slot.ref)
        except Exception as exc:  # noqa: BLE001 - sorted below: actor lost, or the call itself failed
            lost = not isinstance(exc, self._ray.exceptions.RayTaskError) or _caused_by(exc, DeviceLost)
            reason = slot.kill_reason or _short(exc)
            attempts += 1
            if lost:
                self._lose(slot, reason)
            else:
                slot.state, slot.ref, slot.episode = "idle", None, None
            if attempts >= self.max_attempts:
                logger.error("Ray: {} failed {} time(s); recording an error: {}", ep.id, attempts, reason)
                return [failure_record(ep, f"failed on {attempts} actor(s); last: {reason}", attempts)]
            logger.warning("Ray: {} will be retried ({}/{}): {}", ep.id, attempts, self.max_attempts, reason)
            todo.appendleft((ep, attempts))
            return []
        slot.state, slot.ref, slot.episode, slot.failures = "idle", None, None, 0
        if store is not None and "trajectory.json" in files:
            trajectory = json.loads(files.pop("trajectory.json"))
            store.write_episode(ep.id, trajectory, files)
        if attempts:
            record["retries"] = attempts
        return [record]

    def _enforce_timeouts(self, last_progress: float, waiting_work: bool) -> None:
        now = time.monotonic()
        if self.episode_timeout_s is not None:
            for slot in self._slots:
                if slot.state == "busy" and slot.kill_reason is None and now - slot.since > self.episode_timeout_s:
                    slot.kill_reason = f"episode exceeded episode_timeout_s={self.episode_timeout_s}"
                    self._ray.kill(slot.actor, no_restart=True)  # its run() call now fails: handled as a death
        working = any(s.state in ("idle", "busy") for s in self._slots)
        if waiting_work and not working and now - last_progress > self.start_timeout_s:
            need = {"CPU": self.actor_cpus, **self.actor_resources}
            raise TimeoutError(
                f"no Ray actor became ready within start_timeout_s={self.start_timeout_s}: each actor needs {need} "
                f"(plus its phone's resource for adb); the cluster has {self._ray.available_resources()}")

    def _drop_pool(self) -> None:
        for slot in self._slots:
            if slot.actor is not None:
                try:
                    self._ray.kill(slot.actor, no_restart=True)
                except Exception:  # noqa: BLE001 - dead already, or Ray is gone
                    pass
            slot.actor, slot.state = None, "retired"
        self._slots = []

    def close(self) -> None:
        self._drop_pool()
        if self._connected and self._ray.is_initialized():
            self._ray.shutdown()
        self._connected = self._started_local = False


def failure_record(ep: EpisodeSpec, message: str, attempts: int) -> dict[str, Any]:
    """The record of an episode no actor could finish (same fields as ``run_one``'s error record)."""
    from perturb import REGISTRY

    prof = REGISTRY.get(ep.perturbation)
    return {
        "id": ep.id, "task": ep.task, "instance": ep.instance, "perturbation": ep.perturbation,
        "component": prof.component if prof else "clean", "layer": prof.layer if prof else None,
        "overrides": ep.overrides, "agent": ep.agent.name, "agent_kind": ep.agent.kind, "guard": ep.guard,
        "seed": ep.seed, "repeat": ep.repeat, "episode_seed": ep.episode_seed,
        "status": "error", "success": False, "verified": False, "termination": "error", "error": message,
        "retries": attempts, "wall_s": 0.0,
    }


def _caused_by(exc: BaseException, kind: type) -> bool:
    return isinstance(exc, kind) or isinstance(getattr(exc, "cause", None), kind)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}"[:300]


__all__ = ["DeviceLost", "RayExecutor", "failure_record"]
