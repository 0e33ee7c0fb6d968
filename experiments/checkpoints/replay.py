"""Restoring a checkpoint's phone state: the recorded prefix replayed under the episode's seeds.

The simulated phone, its task and its perturbations are built as ``experiments.worker.run_one``
builds them (``propose.open_env``) (same task seed and instance, same perturbation overrides and ``under`` list, same
episode seed and step budget, same dump style), then the recorded actions are executed in order,
each followed by one observation, as the episode loop did. Active perturbations keep their state:
they live in the same ``PerturbedDevice`` that replays the prefix.

:func:`screen_digest` fingerprints a screen as the run stored it: the SHA-256 of its JPEG bytes
(``worker._jpeg`` at the run's screenshot width: the same image gives the same bytes) and of its
UI dump; two screens are the same checkpoint screen when both digests are equal.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Optional

from pydantic import BaseModel, ConfigDict


class ScreenDigest(BaseModel):
    """A screen's fingerprint (None: not stored / not available)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    jpeg_sha256: Optional[str] = None
    xml_sha256: Optional[str] = None

    def matches(self, other: "ScreenDigest") -> bool:
        """Every fingerprint both have is equal, and they share at least one."""
        pairs = [(a, b) for a, b in ((self.jpeg_sha256, other.jpeg_sha256), (self.xml_sha256, other.xml_sha256))
                 if a is not None and b is not None]
        return bool(pairs) and all(a == b for a, b in pairs)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def screen_digest(obs: Any, width: int, encode: Callable[[Any, int], bytes]) -> tuple[ScreenDigest, Optional[bytes], bytes]:
    """(digest, JPEG bytes or None, dump bytes) of an observation, encoded as the worker stores them
    (``encode``: ``experiments.worker._jpeg``, passed in so that the worker may import this module)."""
    xml = (obs.xml or obs.to_xml()).encode("utf-8")
    jpg = encode(obs.screenshot, width) if obs.screenshot is not None else None
    return ScreenDigest(jpeg_sha256=sha256(jpg) if jpg else None, xml_sha256=sha256(xml)), jpg, xml


def replay_prefix(shown: Any, first: Any, actions: list[dict[str, Any]]) -> list[Any]:
    """Execute ``actions`` on ``shown`` after its reset observation ``first``.

    Returns:
        The observations the agent saw: ``[first, after action 0, …, after action n-1]``.
    """
    from benchmark.device import ActionError
    from ttir.core.types import Action

    seen = [first]
    for a in actions:
        try:
            shown.execute(Action(**a))
        except ActionError:
            pass  # the episode loop recorded it and went on
        seen.append(shown.observe())
    return seen
