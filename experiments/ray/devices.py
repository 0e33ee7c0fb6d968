"""Which device each Ray actor owns, and the Ray resources that keep one phone to one actor.

A real phone (or emulator) is a Ray custom resource named ``ttir_adb:SERIAL`` with
capacity 1, declared by the node it is attached to::

    ray start --address HEAD:6379 --resources "$(python -m experiments.ray.devices)"

An actor bound to that phone asks for the whole resource, so Ray places it on the
right node and never lets two actors (two concurrent episodes) share the phone.
Simulated phones need no such resource: each actor asks for CPUs only.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from experiments.spec import DeviceSpec

ADB_RESOURCE_PREFIX = "ttir_adb:"


def adb_resource(serial: str) -> str:
    """The Ray custom resource that stands for the phone ``serial``."""
    return f"{ADB_RESOURCE_PREFIX}{serial}"


@dataclass(frozen=True)
class DeviceBinding:
    """The one device an actor owns: a simulated phone, or the adb phone ``serial``."""

    kind: str = "sim"
    serial: Optional[str] = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return "sim" if self.kind == "sim" else f"adb:{self.serial}"

    @property
    def resources(self) -> dict[str, float]:
        """Ray custom resources the actor must hold (the whole phone, for adb)."""
        return {adb_resource(self.serial): 1.0} if self.kind == "adb" and self.serial else {}


def open_device(binding: DeviceBinding) -> Any:
    """Create the device a binding names (inside the actor process)."""
    if binding.kind == "sim":
        from experiments.worker import sim_device

        return sim_device()  # the same phone as the local executor's workers
    if binding.kind == "adb":
        from benchmark.devices import AdbDevice

        return AdbDevice(binding.serial, **dict(binding.options))
    raise ValueError(f"device kind {binding.kind!r} is unknown; expected sim or adb")


def declared_serials(cluster_resources: Mapping[str, float]) -> list[str]:
    """Phones the cluster's nodes declare as ``ttir_adb:SERIAL`` resources."""
    return sorted(k[len(ADB_RESOURCE_PREFIX):] for k, v in cluster_resources.items()
                  if k.startswith(ADB_RESOURCE_PREFIX) and v >= 1)


def plan_bindings(devices: DeviceSpec, workers: int, cluster_resources: Mapping[str, float]) -> list[DeviceBinding]:
    """One binding per actor: ``workers`` simulated phones, or one per adb phone.

    adb phones must be declared as cluster resources (else no actor could ever be
    placed); an unset ``serials`` means every phone the cluster declares."""
    if devices.kind == "sim":
        if workers < 1:
            raise ValueError(f"workers={workers} must be >= 1")
        return [DeviceBinding("sim") for _ in range(workers)]
    declared = declared_serials(cluster_resources)
    serials = list(devices.serials) if devices.serials is not None else declared
    if not serials:
        raise ValueError("devices.kind='adb' with no devices.serials found no phone: no Ray node declares a "
                         f"'{ADB_RESOURCE_PREFIX}SERIAL' resource. Start each node with "
                         "`ray start --resources \"$(python -m experiments.ray.devices)\"`, or list devices.serials")
    missing = [s for s in serials if s not in declared]
    if missing:
        raise ValueError(f"devices.serials: phone(s) {', '.join(missing)} are not declared by any Ray node "
                         f"(expected resources {', '.join(adb_resource(s) for s in missing)}; the cluster declares "
                         f"{', '.join(declared) or 'no phone'}). Start the node they are attached to with "
                         "`ray start --resources \"$(python -m experiments.ray.devices)\"`")
    return [DeviceBinding("adb", s, dict(devices.options)) for s in serials]


def attached_serials(host: Optional[str] = None, port: Optional[int] = None) -> list[str]:
    """Serials of the phones this machine's adb server sees as ready (state ``device``)."""
    import adbutils

    from benchmark.devices.adb.transport import ensure_server, server_address

    host, port = server_address(host, port)
    ensure_server(host, port)
    return sorted(d.serial for d in adbutils.AdbClient(host=host, port=port).list() if d.state == "device")


def local_resources(serials: list[str]) -> dict[str, float]:
    """``--resources`` for a node with these phones attached."""
    return {adb_resource(s): 1.0 for s in serials}


def main(argv: Optional[list[str]] = None) -> int:
    """Print the ``ray start --resources`` JSON for the phones attached to this machine."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m experiments.ray.devices", description=main.__doc__)
    p.add_argument("--host", default=None, help="adb server host (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="adb server port (default 5037)")
    args = p.parse_args(argv)
    print(json.dumps(local_resources(attached_serials(args.host, args.port))))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
