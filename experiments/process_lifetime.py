"""Worker processes die with the process that started them.

A pool's workers wait on a pipe their parent writes; forked, they hold its other
end too, so when the driver is killed (SIGKILL, or SIGTERM, which Python does not
handle) they never see EOF and live on, ~450 MB each. ``die_with_parent`` runs
first in every worker: on Linux the kernel sends the worker SIGKILL when its parent
dies (``prctl(PR_SET_PDEATHSIG)``, through ctypes); elsewhere a daemon thread
watches the parent pid.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCH_INTERVAL_S = 1.0


def die_with_parent(parent_pid: int) -> None:
    """Make this process end when ``parent_pid`` (its parent) does. A pool initializer."""
    if not _parent_death_signal(signal.SIGKILL):
        threading.Thread(target=_watch, args=(parent_pid,), name="ttir-parent-watch", daemon=True).start()
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)


def _parent_death_signal(sig: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent_pid: int) -> None:
    stop = threading.Event()
    while not stop.wait(WATCH_INTERVAL_S):
        if os.getppid() != parent_pid:  # re-parented: the parent is gone
            os._exit(1)
