"""One hierarchy for ttir's own errors, as Gymnasium's ``error.py`` keeps one.

Every error a user can cause with a name, a key or a file is a :class:`TTIRError`;
the ones about input are also ``ValueError`` (so ``except ValueError`` keeps working).
Unknown names say which are known and which one was probably meant.
"""

from __future__ import annotations

import difflib
from typing import Iterable


class TTIRError(Exception):
    """The base of every error ttir raises on purpose."""


class ConfigError(TTIRError, ValueError):
    """A config, spec or argument is wrong: the message names the field, the value and what was expected."""


class UnknownNameError(ConfigError, KeyError):
    """A name (task, perturbation, check, key) that is not known; the message lists the close ones.
    Also a ``KeyError``: a registry lookup that failed."""

    __str__ = BaseException.__str__  # KeyError would quote the message


class ImportTargetError(ConfigError):
    """A ``package.module:attribute`` string that cannot be imported, or names the wrong kind of thing."""


class GuardUsageError(TTIRError, RuntimeError):
    """The guard was called the wrong way (a step before ``reset``, one guard stepped from two
    threads at once): the caller's bug, raised like the agent's own exceptions, never failed open."""


class ObservationTypeError(GuardUsageError, TypeError):
    """``step`` was given something that is not a :class:`ttir.core.types.Observation`."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest known name, or ``""``."""
    close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def unknown_name(what: str, name: str, known: Iterable[str], *, list_known: bool = True) -> UnknownNameError:
    """The error for an unknown ``what`` (``task``, ``perturbation`` …) called ``name``."""
    known = sorted(set(known))
    listing = f"; known: {', '.join(known)}" if list_known else ""
    return UnknownNameError(f"unknown {what} {name!r}{did_you_mean(name, known)}{listing}")


__all__ = ["ConfigError", "ImportTargetError", "TTIRError", "UnknownNameError", "did_you_mean", "unknown_name"]
