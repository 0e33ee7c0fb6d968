"""ttir: keep mobile GUI agents on track in the messy real world.

``ttir.guard(agent)`` wraps any agent with Test-Time Introspective Recovery.
The guard and its config are imported lazily so that ``import ttir`` (and
``ttir.core.types``) never pull in the diagnosers.
"""


from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ttir.core.logs import LOGGED_PACKAGES, QUIET, enable_logging, quiet_library  # noqa: F401 - re-exported

quiet_library(__name__)  # a library stays quiet until the application (or `ttir` CLI) enables it

from ttir.core.types import Action, Agent, AgentStep, Observation, StepRecord, UIElement, as_agent, set_screenshot_reader
from ttir.core.diagnosis import Cost, DiagnosisContext, Diagnoser, Finding  # the check contract: a user's
from ttir.core.recovery import Recovery, RecoveryContext                     # own check imports only ttir
from ttir.core.ocr import read_elements as _read_screen_text

set_screenshot_reader(_read_screen_text)  # Observation.from_screenshot reads text with the OCR extra (lazily imported)

if TYPE_CHECKING:  # the guard's types, named in signatures without importing the guard
    from ttir.core.config import ConfigLike, TTIRConfig
    from ttir.guarded.checks import Check
    from ttir.guarded.middleware import GuardedAgent
    from ttir.model.client import VLMClient

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


def guard(agent: Any, config: ConfigLike = None, vlm: Optional[VLMClient] = None,
          checks: Optional[list[Check]] = None) -> GuardedAgent:
    """Wrap ``agent`` with Test-Time Introspective Recovery: a guard with the agent's own interface.

    The guarded agent has the same ``reset(goal)`` / ``step(obs)`` as ``agent``. Before each
    step it runs its checks on the screen and the history. The default checks are the four
    diagnosers of AndroidReality §5.1, each paired with a recovery:

    - interference (a dialog, a permission prompt, an ad or a crash notice over the app)
      -> dismiss it;
    - stuck loop (the same action again and again without any screen change) -> try
      another route;
    - action effect (the last action changed nothing, or hit another element than the
      one its summary names) -> redo it another way;
    - task alignment (off the task's app; a ``status: complete`` claim the screen does
      not support) -> re-orientation back to the task.

    On a problem the guard opens a bounded recovery session and returns the recovery's
    steps in the agent's place until the check says the problem is gone or the session's
    budget (``recovery.budget``, 3 actions) is spent; then the agent acts again. One
    session runs at a time, what failed on a screen is not retried on it, and an agent
    with ``on_recovery(event)`` is told how each session ended. ``report`` says what the
    guard did (findings, sessions, model calls and tokens, its own errors).

    Each check decides with a tier: ``rules`` (deterministic, free), ``vlm`` (a vision-language
    model, the paper's JSON judgment) or ``cascade`` (the rules, and the model only when they
    are unsure). Every diagnoser defaults to ``cascade``; without an endpoint (``vlm``,
    ``config.vlm.base_url`` or ``$TTIR_VLM_BASE_URL``) the rules decide.

    The guard fails open: when the model fails (an exception, a timeout, an unparseable
    reply, the step's model deadline) the rules decide the step; when the guard itself
    fails, the failure is logged and recorded (``report.errors``) and the agent's own step
    is used. The agent's own exceptions propagate unchanged.

    Args:
        agent: an object with ``step(obs)`` (and ``reset(goal)``, which may be missing),
            or a callable ``fn(obs) -> AgentStep | Action``; a ``step`` (or callable) that is
            ``async def`` gives an :class:`AsyncGuardedAgent`.
        config: a :class:`TTIRConfig`, the path of a YAML file of one, a mapping in that
            file's shape (``{"stuck_loop": {"window": 4}}``), or None for the defaults. Its sections: one per diagnoser (``stuck_loop``, ``action_effect``,
            ``interference``, ``task_alignment``: ``mode`` and thresholds), ``recovery``
            (budget, sessions per episode, cooldown, priority, tier), ``cascade``, ``vlm``
            (endpoint, timeouts, retries, the step's model deadline), ``prompts`` and
            ``checks`` (your own, by import path).
        vlm: a :class:`ttir.model.client.VLMClient` for the model tier; None builds one from
            ``config.vlm`` and the ``TTIR_VLM_*`` variables when a diagnoser's mode uses the
            model and an endpoint is set.
        checks: the :class:`Check` list to run, in priority order (the first whose problem may
            open a session wins); None runs :func:`default_checks` built from ``config``. The
            config's ``checks`` run after them.

    Returns:
        A :class:`GuardedAgent`, or an :class:`AsyncGuardedAgent` for an async agent.

    Raises:
        TypeError: ``agent`` has no ``step`` and is not callable, or is a class (pass an
            instance); ``config``, ``vlm`` or ``checks`` is none of the kinds above (a URL as
            ``vlm``, a name as ``checks``): a caller's mistake raises, it is not failed open.
        FileNotFoundError: ``config`` names a file that does not exist.
        ValueError: the config file (or mapping) is not valid YAML or not a valid config (the message names
            each bad key); a :class:`ttir.core.errors.ConfigError` (a ``ValueError``) when two checks
            share a name or a check factory of ``config.checks`` cannot be imported or built.

    Examples:
        An agent that taps empty space; the guard sees the tap change nothing and steps in:

        >>> import ttir
        >>> screen = ttir.Observation.from_xml(
        ...     '<hierarchy rotation="0"><node class="android.widget.FrameLayout" '
        ...     'package="com.android.settings" bounds="[0,0][1080,2400]">'
        ...     '<node text="Wi-Fi" class="android.widget.Switch" package="com.android.settings" '
        ...     'clickable="true" checkable="true" bounds="[48,400][1032,520]" /></node></hierarchy>')
        >>> def my_agent(obs):
        ...     return ttir.AgentStep(action=ttir.Action(action_type="click", x=540, y=1800),
        ...                           summary='Tap "Wi-Fi"')
        >>> agent = ttir.guard(my_agent, config=ttir.TTIRConfig.with_mode("rules"))
        >>> agent.reset("Turn on Wi-Fi")
        >>> agent.step(screen).action.describe()  # the agent's own step
        'click(x=540, y=1800)'
        >>> agent.step(screen).summary  # the screen did not change: a recovery session opens
        'Wait for the click to take effect'
        >>> agent.step(screen).action.describe()
        'click(x=540, y=460)'
        >>> [(s.diagnoser, s.recovery) for s in agent.report.sessions]
        [('action_effect', 'alternative_action')]
    """
    from ttir.guarded.middleware import guard as _guard

    return _guard(agent, config=config, vlm=vlm, checks=checks)


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
    "enable_logging",
    "guard",
]
