"""One hierarchy for ttir's own errors, as Gymnasium's ``error.py`` keeps one.

Every error a user can cause with a name, a key or a file is a :class:`TTIRError`;
the ones about input are also ``ValueError`` (so ``except ValueError`` keeps working).
Unknown names say which are known and which one was probably meant.
"""

from __future__ import annotations

import difflib
from typing import Iterable, Optional


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
    """``"; did you mean 'x'?"`` for the closest known name (the same name in another case first), or ``""``."""
    known = list(known)
    same = [k for k in known if str(k).casefold() == str(name).casefold()]
    close = same or difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def unknown_name(what: str, name: str, known: Iterable[str], *, list_known: bool = True,
                 see: Optional[str] = None) -> UnknownNameError:
    """The error for an unknown ``what`` (``task``, ``perturbation`` …) called ``name``.

    Args:
        what: what kind of name it is, for the message.
        name: the name that was given.
        known: the valid names.
        list_known: list the valid names when none is close (never after a suggestion:
            the suggestion, not a wall of names).
        see: a command that lists the valid names (``"ttir tasks"``); named instead of a list.

    Returns:
        The :class:`UnknownNameError` to raise.
    """
    known = sorted(set(known))
    hint = did_you_mean(name, known)
    if see:
        listing = f"; see `{see}`"
    elif list_known and not hint:
        listing = f"; known: {', '.join(known)}"
    else:
        listing = ""
    return UnknownNameError(f"unknown {what} {name!r}{hint}{listing}")


def resolve_name(what: str, name: str, known: Iterable[str], *, see: Optional[str] = None) -> str:
    """``name`` as one of ``known``: itself, or the one name equal to it ignoring case
    (``contactsaddcontact`` is ``ContactsAddContact``).

    Raises:
        UnknownNameError: no known name matches (the message suggests the closest one).
    """
    known = list(known)
    if name in known:
        return name
    folded = [k for k in known if k.casefold() == str(name).casefold()]
    if len(folded) == 1:
        return folded[0]
    raise unknown_name(what, name, known, see=see)


__all__ = ["ConfigError", "ImportTargetError", "TTIRError", "UnknownNameError", "did_you_mean", "resolve_name", "unknown_name"]
