"""The Ray actor: one process, one device, one episode at a time.

A plain class (``ray.remote`` wraps it in the executor) so it imports without Ray.
It runs episodes with the same ``experiments.worker.run_one`` as the local
executor, handing it the actor's own device. Where the driver's disk is not the
actor's (another node), the episode is written to a scratch folder and its files
travel back with the record; the driver alone writes the run directory.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional

from experiments.ray.devices import DeviceBinding, open_device
from experiments.spec import EpisodeSpec

RunFn = Callable[..., dict[str, Any]]
DeviceFactory = Callable[[DeviceBinding], Any]


class DeviceLost(RuntimeError):
    """The actor's device cannot be (re)opened: the actor is retired, its episode runs elsewhere."""


class DeviceActor:
    def __init__(self, binding: DeviceBinding, ship_files: bool, run_fn: Optional[RunFn] = None,
                 device_factory: Optional[DeviceFactory] = None):
        from experiments import worker

        self.binding = binding
        self._run_fn: RunFn = run_fn or worker.run_one
        self._factory: DeviceFactory = device_factory or open_device
        self._scratch: Optional[str] = tempfile.mkdtemp(prefix="ttir-ray-") if ship_files else None
        self._device: Any = self._open()  # a phone that cannot be opened fails the actor's start

    def _open(self) -> Any:
        try:
            return self._factory(self.binding)
        except Exception as exc:  # noqa: BLE001 - whatever the device raised, this actor cannot serve
            raise DeviceLost(f"{self.binding.label}: the device could not be opened: {exc}") from exc

    def ready(self) -> dict[str, Any]:
        """Where this actor lives (for the driver's log)."""
        return {"device": self.binding.label, "host": socket.gethostname(), "pid": os.getpid()}

    def run(self, ep: EpisodeSpec, kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, bytes]]:
        """Run one episode on this actor's device; return its record and (when shipping) its files."""
        from experiments import worker

        if self._device is None:
            self._device = self._open()
        # run_one uses the process's cached device: make it this actor's device. It drops the
        # cache (sets it to None) after an episode that raised, asking for a fresh device.
        worker._DEVICE = self._device
        args = dict(kwargs)
        if self._scratch is not None:
            args["root"] = self._scratch
        record = self._run_fn(ep, **args)
        if worker._DEVICE is not self._device:
            self._device = None
            self._device = self._open()  # DeviceLost here: the episode is retried on another actor
        if self.binding.kind != "sim":
            record["device"] = self.binding.label
        return record, self._take_files(ep.id)

    def _take_files(self, episode_id: str) -> dict[str, bytes]:
        if self._scratch is None:
            return {}
        folder = Path(self._scratch) / "episodes" / episode_id
        if not folder.is_dir():
            return {}
        files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        shutil.rmtree(folder, ignore_errors=True)
        return files
