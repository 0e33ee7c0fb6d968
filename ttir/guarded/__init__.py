"""The guard: Test-Time Introspective Recovery around any agent. Above the diagnosers and
recoveries it runs; ``import ttir`` exposes what users need (``ttir.guard``, ``ttir.Check``,
``ttir.GuardedAgent``).

What it holds:

- ``checks``: ``Check`` (one diagnoser and its recovery) and ``default_checks``;
- ``middleware``: ``GuardedAgent`` / ``AsyncGuardedAgent`` and ``guard()``;
- ``report``: what the guard did (findings, recovery sessions, model usage, errors);
- ``watch``: ``Watcher`` / ``watching()``, interruptions kept off a phone beside any agent;
- ``proxy``: ``AdbProxy`` / ``ProxyGuard``, the guard before an adb agent's ``input`` commands.

(It is not called ``ttir.guard``: that name is the function users call, and a subpackage of
the same name would replace it on import.)
"""

# the submodules (``from ttir.x import *`` loads them); the package itself re-exports nothing, so that
# importing one part never loads the others
__all__ = [
    "checks",
    "middleware",
    "report",
    "watch",
]
