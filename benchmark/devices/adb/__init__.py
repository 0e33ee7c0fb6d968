"""A real phone or emulator driven over adb (adbutils and the adb binary it ships).

What it holds:

- ``device``: :class:`AdbDevice`, the Device protocol on a phone (observe, execute, settings);
- ``commands``: the shell commands it sends, built and quoted in one place;
- ``parse``: what it reads back (``dumpsys``, ``wm``, ``getprop`` output);
- ``actions``: an :class:`~ttir.core.types.Action` as ``input`` commands;
- ``apps`` (and ``apps.yaml``): app names to packages, for ``open_app``;
- ``settings``: the device settings perturbations change, restored afterwards;
- ``cleanup``: what a run leaves on the phone, removed;
- ``transport``: the adb connection, bounded in time;
- ``doctor``: ``ttir doctor``, is a phone ready.
"""
