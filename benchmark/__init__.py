"""The benchmark: Device protocol, the simulated phone, apps, tasks and the episode loop."""

from ttir.core.logs import quiet_library

quiet_library(__name__)  # a library stays quiet until the application (or `ttir` CLI) enables it


from benchmark.device import ActionError, Device, DeviceError, DeviceSettings
from benchmark.episode import EpisodeResult, StepLog, run_episode
from benchmark.sim.device import SimDevice
from benchmark.tasks import TASKS, Task, make_task, task_names



def __getattr__(name: str):  # AdbDevice pulls in adbutils: import it only when asked
    if name == "AdbDevice":
        from benchmark.devices import AdbDevice

        return AdbDevice
    raise AttributeError(f"module 'benchmark' has no attribute {name!r}")


__all__ = [
    "AdbDevice",
    "ActionError",
    "Device",
    "DeviceError",
    "DeviceSettings",
    "EpisodeResult",
    "SimDevice",
    "StepLog",
    "TASKS",
    "Task",
    "make_task",
    "run_episode",
    "task_names",
]
