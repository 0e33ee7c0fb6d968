"""``ttir proxy``: the guard at the adb level, for an agent whose code you cannot change.

What it holds:

- ``commands``: an agent's shell command line read as Actions (its ``input`` commands), and
  whether it reads or may change the screen;
- ``screens``: the UI dumps the agent pulls through the proxy (kept while fresh), read from
  shell, shell v2, exec and sync replies;
- ``guard``: ``ProxyGuard``, the guard run before each agent ``input`` command, and its
  ``ProxyIntervention`` records;
- ``server``: ``AdbProxy``, the adb device on a TCP port that forwards to the real device
  (``benchmark.devices.adbd.forward``) with the guard in between.
"""

from ttir.guarded.proxy.guard import COMMAND_FATES, ProxyGuard, ProxyIntervention
from ttir.guarded.proxy.server import AdbPhone, AdbProxy

__all__ = ["AdbPhone", "AdbProxy", "COMMAND_FATES", "ProxyGuard", "ProxyIntervention"]
