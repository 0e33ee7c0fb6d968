"""ttir's loguru logs: quiet as a library, on when an application asks for them.

- :data:`LOGGED_PACKAGES`: the packages whose logs :func:`enable_logging` turns on;
- :func:`quiet_library`: what each of those packages calls as it is imported;
- :func:`enable_logging`: write their logs to stderr from a level on (the ``ttir`` CLI calls it first);
- :data:`QUIET`: a ``logger.contextualize`` key under which only warnings and errors are written.

Why a module of its own: a package imported after :func:`enable_logging` used to disable its own
logs as it was imported, so the CLI, which imports a command's modules lazily, dropped every
warning of ``experiments`` and ``benchmark`` (a skipped line of a run's records, say) without a word.
"""

from __future__ import annotations

import sys
from typing import Any, Literal, Optional

from loguru import logger

LoggedPackage = Literal["ttir", "benchmark", "perturb", "diagnosers", "recoveries", "experiments"]
LOGGED_PACKAGES: tuple[LoggedPackage, ...] = ("ttir", "benchmark", "perturb", "diagnosers", "recoveries", "experiments")
QUIET = "ttir_quiet"  # ``logger.contextualize(ttir_quiet=True)``: only warnings and errors are written meanwhile

_enabled_level: Optional[str] = None  # set by enable_logging: the application wants the logs


def quiet_library(package: str) -> None:
    """Keep ``package``'s logs off unless the application has turned them on already.

    Args:
        package: the importing package's ``__name__``.
    """
    if _enabled_level is None:
        logger.disable(package)


def enable_logging(level: str = "INFO") -> None:
    """Turn on ttir's loguru logs (to stderr) at ``level``; libraries start quiet.

    Packages imported later stay on (:func:`quiet_library`).

    Args:
        level: the lowest level written: ``"DEBUG"``, ``"INFO"``, ``"WARNING"`` …
    """
    global _enabled_level
    _enabled_level = level
    for pkg in LOGGED_PACKAGES:
        logger.enable(pkg)
    logger.remove()
    # write to whatever sys.stderr is at the time (test runners swap it)
    logger.add(lambda m: sys.stderr.write(m), level=level, format="<level>{level: <7}</level> {message}",
               colorize=False, filter=_shown)


def _shown(record: Any) -> bool:
    # a loop over a thousand one-screen episodes (`ttir tune eval --real`) reports what the guard did in
    # its own table; the guard's per-episode notes would bury its progress bar, its warnings must not be
    return not record["extra"].get(QUIET) or record["level"].no >= 30


__all__ = ["LOGGED_PACKAGES", "QUIET", "LoggedPackage", "enable_logging", "quiet_library"]
