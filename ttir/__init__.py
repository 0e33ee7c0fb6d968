"""ttir: keep mobile GUI agents on track in the messy real world.

``ttir.guard(agent)`` wraps any agent with Test-Time Introspective Recovery.
The guard and its config are imported lazily so that ``import ttir`` (and
``ttir.core.types``) never pull in the diagnosers.
"""


from __future__ import annotations

from loguru import logger as _logger

_logger.disable(__name__)  # a library stays quiet until the application (or `ttir` CLI) enables it

from typing import Any

from ttir.core.types import Action, Agent, AgentStep, Observation, StepRecord, UIElement, as_agent, set_screenshot_reader
from ttir.core.diagnosis import Cost, DiagnosisContext, Diagnoser, Finding  # the check contract: a user's
from ttir.core.recovery import Recovery, RecoveryContext                     # own check imports only ttir
from ttir.core.ocr import read_elements as _read_screen_text

set_screenshot_reader(_read_screen_text)  # Observation.from_screenshot reads text with the OCR extra (lazily imported)

__version__ = "0.1.0"

_LAZY = {
    "GuardedAgent": ("ttir.guarded.middleware", "GuardedAgent"),
    "AsyncGuardedAgent": ("ttir.guarded.middleware", "AsyncGuardedAgent"),
    "TTIRConfig": ("ttir.core.config", "TTIRConfig"),
    "Check": ("ttir.guarded.checks", "Check"),
    "default_checks": ("ttir.guarded.checks", "default_checks"),
    "Watcher": ("ttir.guarded.watch", "Watcher"),
    "watching": ("ttir.guarded.watch", "watching"),
}


def guard(agent: Any, config: Any = None, vlm: Any = None, checks: Any = None) -> Any:
    """Wrap ``agent`` with Test-Time Introspective Recovery (see :func:`ttir.guarded.middleware.guard`)."""
    from ttir.guarded.middleware import guard as _guard

    return _guard(agent, config=config, vlm=vlm, checks=checks)


LOGGED_PACKAGES = ("ttir", "benchmark", "perturb", "diagnosers", "recoveries", "experiments")


def enable_logging(level: str = "INFO") -> None:
    """Turn on ttir's loguru logs (to stderr) at ``level``; libraries start quiet."""
    import sys

    for pkg in LOGGED_PACKAGES:
        _logger.enable(pkg)
    _logger.remove()
    # write to whatever sys.stderr is at the time (test runners swap it)
    _logger.add(lambda m: sys.stderr.write(m), level=level, format="<level>{level: <7}</level> {message}", colorize=False,
                filter=_shown)


QUIET = "ttir_quiet"  # ``logger.contextualize(ttir_quiet=True)``: only warnings and errors are written meanwhile


def _shown(record: Any) -> bool:
    # a loop over a thousand one-screen episodes (`ttir tune eval --real`) reports what the guard did in
    # its own table; the guard's per-episode notes would bury its progress bar, its warnings must not be
    return not record["extra"].get(QUIET) or record["level"].no >= 30


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'ttir' has no attribute {name!r}")


__all__ = [
    "Action",
    "Agent",
    "AgentStep",
    "AsyncGuardedAgent",
    "Check",
    "Cost",
    "DiagnosisContext",
    "Diagnoser",
    "Finding",
    "GuardedAgent",
    "Observation",
    "Recovery",
    "RecoveryContext",
    "StepRecord",
    "TTIRConfig",
    "UIElement",
    "as_agent",
    "default_checks",
    "guard",
]
