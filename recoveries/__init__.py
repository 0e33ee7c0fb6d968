"""Recovery strategies: alternative_action, dismiss_interference, re_orientation.

Each has a deterministic rule tier and a VLM tier (prompts/ declares the problem,
the target condition and the constraints)."""

from __future__ import annotations

from ttir.core.logs import quiet_library

quiet_library(__name__)  # a library stays quiet until the application (or `ttir` CLI) enables it

from recoveries.alternative_action import AlternativeAction  # noqa: E402
from ttir.core.recovery import Recovery, RecoveryContext  # noqa: E402
from recoveries.dismiss_interference import DismissInterference  # noqa: E402
from recoveries.re_orientation import ReOrientation  # noqa: E402

__all__ = ["AlternativeAction", "DismissInterference", "ReOrientation", "Recovery", "RecoveryContext"]
