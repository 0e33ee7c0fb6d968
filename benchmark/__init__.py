"""The benchmark: Device protocol, the simulated phone, apps, tasks and the episode loop."""

from loguru import logger as _logger

_logger.disable(__name__)  # a library stays quiet until the application (or `ttir` CLI) enables it


from benchmark.device import ActionError, Device, DeviceError, DeviceSettings
from benchmark.episode import EpisodeResult, StepLog, run_episode
from benchmark.sim.device import SimDevice
from benchmark.tasks import TASKS, Task, make_task, task_names

__all__ = [
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
