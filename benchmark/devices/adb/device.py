"""AdbDevice: a real phone or emulator behind the Device protocol (see docs/architecture.md § Device protocol).

Observation = ``screencap`` + ``uiautomator dump`` + the foreground activity
from ``dumpsys``; actions = ``input`` commands (actions.py); the state
knobs = ``settings`` / ``wm`` / ``cmd uimode`` (settings.py), whose
original values are snapshotted before the first change and written back on
``close()``, ``reset()``, leaving a ``with`` block, SIGINT/SIGTERM and
interpreter exit — and, after a hard kill, by the next AdbDevice on that phone.
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from loguru import logger
from PIL import Image
from tenacity import Retrying, retry_if_result, stop_after_attempt, wait_fixed

from benchmark.device import (ActionError, DeviceError, DeviceSettings, SETTING_NAMES, check_action, check_reset_task,
                              check_settings)
from benchmark.devices.adb import cleanup as adb_cleanup
from benchmark.devices.adb import commands as cmd
from benchmark.devices.adb.actions import Pause, Screen, plan
from benchmark.devices.adb.apps import AppTable
from benchmark.devices.adb.parse import (
    command_failed,
    extract_dump,
    parse_current_display,
    parse_foreground,
    parse_packages,
    parse_sdk,
    parse_wm_size,
)
from benchmark.devices.adb.settings import (
    BEST_EFFORT,
    KNOB_STATES,
    STATES,
    Display,
    SettingsSnapshot,
    default_journal_dir,
    knob_commands,
    parse_state,
    read_command,
    settings_from_states,
)
from benchmark.devices.adb.transport import AdbShell, connect
from benchmark.tree_fallback import SETTLE_SECONDS, TreeProblem, TreeRead, observe_tree
from ttir.core.dump import DumpError
from ttir.core.types import Action, Observation

DUMP_ATTEMPTS = 3  # `uiautomator dump` fails transiently while the screen animates


def decode_screenshot(data: bytes) -> Image.Image:
    """``screencap -p`` bytes → RGB image. Old shells turn ``\\n`` into ``\\r\\n``; undo that if needed."""
    for candidate in (data, data.replace(b"\r\n", b"\n")):
        try:
            img = Image.open(io.BytesIO(candidate))
            img.load()
            return img if img.mode == "RGB" else img.convert("RGB")  # no copy when it already is
        except Exception:  # noqa: BLE001 - PIL raises several types for bad data
            continue
    head = data[:120].decode("utf-8", "replace").strip()
    raise ValueError(f"screencap did not return a PNG image (it printed {head!r})")


class AdbDevice:
    """A real Android phone or emulator, driven over adb.

    ``serial`` picks the device (else ``ANDROID_SERIAL``, else the only one
    attached); ``host``/``port`` locate the adb server (started from adbutils'
    bundled adb if none runs and ``start_server``). ``apps`` adds names to the
    ``open_app`` table (``{"my app": "com.example.app"}``). ``settle_seconds``
    is waited after settings change, ``action_settle_seconds`` after each
    action. ``journal_dir`` keeps the settings snapshot on disk (``"auto"``:
    ~/.local/state/ttir/adb; ``None``: off). ``adb_device`` injects an
    already-connected adbutils device (or a test double).
    """

    def __init__(
        self,
        serial: Optional[str] = None,
        *,
        host: Optional[str] = None,
        port: Optional[int] = None,
        start_server: bool = True,
        apps: Union[AppTable, Mapping[str, Union[str, Sequence[str]]], None] = None,
        settle_seconds: float = 1.0,
        action_settle_seconds: float = 0.5,
        attempts: int = 3,
        backoff_seconds: float = 0.5,
        command_timeout: float = 30.0,
        journal_dir: Union[str, Path, None] = "auto",
        adb_device: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if serial is not None and not isinstance(serial, str):  # {} read as "no serial", 3 as a device named "3"
            raise TypeError(f"AdbDevice(serial={serial!r:.80} ({type(serial).__name__})): expected the phone's serial "
                            "as `adb devices` lists it, e.g. 'emulator-5554' or '127.0.0.1:5555', or None for the one "
                            "phone attached")
        for name, v in (("settle_seconds", settle_seconds), ("action_settle_seconds", action_settle_seconds)):
            if v < 0:
                raise ValueError(f"{name}={v} must be >= 0 seconds")
        device = adb_device if adb_device is not None else connect(
            serial, host=host, port=port, start_server=start_server
        )
        self._shell = AdbShell(device, attempts=attempts, backoff_seconds=backoff_seconds,
                               timeout=command_timeout, sleep=sleep)
        self.serial = self._shell.serial
        self.apps = apps if isinstance(apps, AppTable) else AppTable(apps)
        self.settle_seconds = settle_seconds
        self.action_settle_seconds = action_settle_seconds
        self._sleep = sleep
        jdir = default_journal_dir() if journal_dir == "auto" else (Path(journal_dir) if journal_dir else None)
        self._snapshot = SettingsSnapshot(self.serial, jdir)
        self._display: Optional[Display] = None
        self._sdk: Optional[int] = None
        self._settings: Optional[DeviceSettings] = None
        self._packages: Optional[set[str]] = None
        self._last_obs: Optional[Observation] = None
        self.last_dump_error = ""
        self._warned: set[str] = set()
        self._t0 = time.monotonic()
        self.actions = 0
        self.answers: list[str] = []
        self.closed = False
        pids = self._snapshot.adopt_stale()
        if pids:
            logger.warning(
                f"adb {self.serial}: process(es) {pids} changed this phone's settings and died without "
                f"restoring them; restoring now: {self._snapshot.originals}"
            )
            adb_cleanup.register(id(self), self._restore_at_exit)
            try:
                self.restore_settings()
            except DeviceError as exc:  # keep the originals: close() and the exit handlers try again
                logger.error(str(exc))

    def __repr__(self) -> str:
        return f"AdbDevice(serial={self.serial!r})"

    # ------------------------------------------------------------------ shell
    def shell(self, command: str) -> str:
        """Run a raw shell command on the phone (with retries) and return its output."""
        return self._shell.run(command)

    def _run(self, command: str, action: Optional[Action] = None) -> str:
        out = self._shell.run(command)
        problem = command_failed(out)
        if problem:
            if action is not None:
                raise ActionError(action, f"the phone refused `{command}`: {problem}")
            raise DeviceError(f"adb {self.serial}: `{command}` failed: {problem}")
        return out

    @property
    def sdk(self) -> int:
        """The Android API level (0 if it cannot be read)."""
        if self._sdk is None:
            try:
                self._sdk = parse_sdk(self._shell.run(cmd.SDK_LEVEL))
            except ValueError as exc:
                logger.warning(f"adb {self.serial}: {exc}; assuming an old Android")
                self._sdk = 0
        return self._sdk

    @property
    def display(self) -> Display:
        """The physical screen size and density (what the scale knobs multiply)."""
        if self._display is None:
            try:
                self._display = Display.parse(self._shell.run(cmd.WM_SIZE), self._shell.run(cmd.WM_DENSITY))
            except ValueError as exc:
                raise DeviceError(f"adb {self.serial}: cannot read the screen size/density: {exc}") from exc
        return self._display

    # ------------------------------------------------------------------ observe
    def observe(self) -> Observation:
        """Screenshot + UI dump + foreground app of the phone's current screen. A dump that
        fails, cannot be read or holds a bare root is retried once after a settle; then the
        screenshot alone is observed, its text read by OCR (``ttir[ocr]``): logged, and
        marked (``source``, ``tree_error``)."""
        t0 = time.perf_counter()
        try:
            image: Optional[Image.Image] = decode_screenshot(self._shell.run_bytes(cmd.SCREENCAP))
        except ValueError as exc:
            logger.warning(f"adb {self.serial}: {exc}; observing without a screenshot")
            image = None
        t1 = time.perf_counter()
        now = time.monotonic() - self._t0
        spent = {"dump": 0.0, "foreground": 0.0}
        fg: list[Optional[str]] = []

        def foreground() -> Optional[str]:  # asked once, after the first dump
            if not fg:
                t = time.perf_counter()
                fg.append(self.foreground())
                spent["foreground"] += time.perf_counter() - t
            return fg[0]

        def read() -> TreeRead:
            t = time.perf_counter()
            xml = self.dump_xml()  # retries a failing dump itself
            spent["dump"] += time.perf_counter() - t
            if xml is None:
                foreground()
                said = f": {self.last_dump_error}" if self.last_dump_error else ""
                return TreeProblem(f"uiautomator dump failed {DUMP_ATTEMPTS} times{said}", retry=False)
            return self._tree_observation(xml, image, foreground(), now)

        try:
            obs = observe_tree(read, lambda: self._sleep(SETTLE_SECONDS), image, lambda: foreground(),
                               step=self.actions, time=now, who=f"adb {self.serial}")
        except ValueError as exc:
            raise DeviceError(f"{exc}: neither screencap nor uiautomator dump worked; is the screen on and "
                              "unlocked?") from None
        logger.debug(
            f"adb {self.serial} observe: screencap {1000 * (t1 - t0):.0f} ms, uiautomator dump "
            f"{1000 * spent['dump']:.0f} ms ({len(obs.elements)} "
            f"{'nodes' if obs.source == 'tree' else 'lines of text read from the screenshot'}), "
            f"foreground {1000 * spent['foreground']:.0f} ms"
        )
        self._last_obs = obs
        return obs

    def _tree_observation(self, xml: str, image: Optional[Image.Image], foreground: Optional[str],
                          now: float) -> TreeRead:
        """The dump parsed, or why it cannot be read (then the caller retries, and observes
        the screenshot alone)."""
        try:
            return Observation.from_xml(xml, screenshot=image, foreground=foreground, step=self.actions, time=now)
        except DumpError as exc:
            return TreeProblem(f"the UI dump cannot be read ({exc})")

    def screenshot(self) -> Image.Image:
        """The phone's screen now (``adb exec-out screencap -p``).

        Raises:
            DeviceError: the screenshot cannot be taken or decoded.
        """
        try:
            return decode_screenshot(self._shell.run_bytes(cmd.SCREENCAP))
        except ValueError as exc:
            raise DeviceError(f"adb {self.serial}: {exc}") from exc

    def dump_xml(self) -> Optional[str]:
        """The current ``uiautomator dump`` XML, or None if it keeps failing (what the phone
        said the last time is in ``last_dump_error``)."""
        self.last_dump_error = ""
        retrying = Retrying(stop=stop_after_attempt(DUMP_ATTEMPTS), wait=wait_fixed(0.5),
                            retry=retry_if_result(lambda r: r is None), sleep=self._sleep,
                            retry_error_callback=lambda state: None)
        return retrying(self._dump_once)

    def _dump_once(self) -> Optional[str]:
        out = self._shell.run(cmd.UI_DUMP)
        xml = extract_dump(out)
        if xml is None:
            self.last_dump_error = " ".join(out.split())[:200]
        return xml

    def foreground(self) -> Optional[str]:
        """``package/activity`` in front, from ``dumpsys window`` (``dumpsys activity`` as a fallback)."""
        found = parse_foreground(self._shell.run(cmd.FOREGROUND_WINDOW))
        if found is None:
            found = parse_foreground("", self._shell.run(cmd.FOREGROUND_ACTIVITY))
        return found

    def forget_screen(self) -> None:
        """Drop what was observed and read (screen, settings): the phone changed behind our back."""
        self._last_obs = None
        self._settings = None

    def _screen(self) -> Screen:
        if self._last_obs is not None:
            return Screen(self._last_obs.screen_size, self._last_obs.elements)
        size = parse_current_display(self._shell.run(cmd.DISPLAY_CURRENT))
        if size is None:
            physical, override = parse_wm_size(self._shell.run(cmd.WM_SIZE))
            size = override or physical
        return Screen(size, None)

    # ------------------------------------------------------------------ act
    def execute(self, action: Action) -> None:
        """Perform one action; raises ActionError (phone untouched) if it cannot be done."""
        check_action(action)
        t = action.action_type
        if t == "open_app":
            self._open(action.app_name or "", action)
        elif t == "wait":
            self._sleep(float(action.seconds if action.seconds is not None else 1.0))
        elif t == "answer":
            self.answers.append(action.text or "")
        elif t != "status":
            for step in plan(action, self._screen(), sdk=lambda: self.sdk):
                if isinstance(step, Pause):
                    self._sleep(step.seconds)
                else:
                    self._run(step, action)
            self._sleep(self.action_settle_seconds)
        self.actions += 1

    def launch(self, app: str) -> None:
        """Open an app by name (see the app table), package or ``package/activity``."""
        self._open(app, None)

    def _open(self, app: str, action: Optional[Action]) -> None:
        candidates = self.apps.candidates(app)
        if candidates is None:
            raise ActionError(
                action, f"app_name={app!r} is not a known app or package; known apps: {', '.join(self.apps.names())}. "
                "Give a package name, or add it: AdbDevice(apps={'name': 'com.example.app'})"
            )
        target = candidates[0]
        if len(candidates) > 1:
            installed = self.installed_packages()
            target = next((c for c in candidates if c.split("/")[0] in installed), "")
            if not target:
                raise ActionError(action, f"app_name={app!r}: none of its packages ({', '.join(candidates)}) is "
                                          "installed on the phone")
        command = cmd.launch_component(target) if "/" in target else cmd.launch_package(target)
        out = self._shell.run(command)
        problem = command_failed(out)
        if problem:
            raise ActionError(action, f"could not open {app!r} ({target}); is it installed? The phone said: {problem}")
        self._sleep(self.action_settle_seconds)

    def installed_packages(self) -> set[str]:
        """The packages installed on the phone (``pm list packages``), read once."""
        if self._packages is None:
            self._packages = parse_packages(self._shell.run(cmd.LIST_PACKAGES))
        return self._packages

    # ------------------------------------------------------------------ settings
    @property
    def settings(self) -> DeviceSettings:
        """The knobs as the phone has them now (read once, then tracked through configure)."""
        if self._settings is None:
            states: dict[str, Optional[str]] = {}
            for s in STATES:
                try:
                    states[s] = parse_state(s, self._shell.run(read_command(s)))
                except ValueError as exc:
                    logger.debug(f"adb {self.serial}: cannot read {s}: {exc}")
                    states[s] = None
            self._settings = settings_from_states(states, self.display)
        return self._settings.model_copy()

    def read_state(self, state: str) -> Optional[str]:
        """The raw value of one device state (see settings.STATES); None = unset."""
        try:
            return parse_state(state, self._shell.run(read_command(state)))
        except ValueError as exc:
            hint = " (the dark theme needs `cmd uimode`, Android 10+)" if state == "night_mode" else ""
            raise DeviceError(
                f"adb {self.serial}: cannot read {state}{hint}: {exc}. ttir will not change it, since it could "
                "not be restored"
            ) from exc

    def configure(self, **settings: Any) -> None:
        """Change knobs (font_scale, density_scale, size_scale, dark_theme, orientation,
        time_format, date_format, brightness); originals are snapshotted first."""
        check_settings(settings)
        if not settings:
            return
        for knob in (k for k in SETTING_NAMES if k in settings):
            self._snapshot.capture(KNOB_STATES[knob], self.read_state)
            adb_cleanup.register(id(self), self._restore_at_exit)
            for command in knob_commands(knob, settings[knob], self.display):
                self._run(command)
            if knob in BEST_EFFORT and knob not in self._warned:
                self._warned.add(knob)
                logger.warning(f"adb {self.serial}: {knob}: {BEST_EFFORT[knob]}")
            if self._settings is not None:
                self._settings = self._settings.model_copy(update={knob: settings[knob]})
        self._last_obs = None  # geometry may have changed: index targets need a fresh observation
        self._sleep(self.settle_seconds)

    def restore_settings(self, *, settle: bool = True) -> None:
        """Write back every original value changed so far. Raises DeviceError naming
        what could not be restored (and how to do it by hand)."""
        if not self._snapshot:
            adb_cleanup.unregister(id(self))
            return
        problems = self._snapshot.restore(self._shell.run, command_failed)
        self._settings = None
        self._last_obs = None
        if problems:
            manual = "; ".join(self._snapshot.manual_commands())
            raise DeviceError(f"adb {self.serial}: could not restore {', '.join(problems)}. By hand: {manual}")
        adb_cleanup.unregister(id(self))
        logger.debug(f"adb {self.serial}: settings restored")
        if settle:
            self._sleep(self.settle_seconds)

    def _restore_at_exit(self, reason: str) -> None:
        logger.info(f"adb {self.serial}: restoring settings ({reason})")
        try:
            self.restore_settings(settle=False)
        except DeviceError as exc:
            logger.error(str(exc))

    # ------------------------------------------------------------------ lifecycle
    def reset(self, task: Any = None) -> Observation:
        """Home screen with the original settings; then ``task.setup(self)`` if the task
        supports real phones (``supports_real_device = True``)."""
        check_reset_task(task)
        if task is not None and not getattr(task, "supports_real_device", False):
            name = getattr(task, "name", type(task).__name__)
            raise DeviceError(
                f"task {name} is simulator-only: its setup seeds simulated app data and its verifier reads the "
                "simulated apps' state, neither of which exists on a real phone. Run it on SimDevice, on a phone "
                "served by `ttir serve-adb` (benchmark.devices.phone_task.for_device(task, device) sets it up "
                "there), or give the task `supports_real_device = True` with a setup/verify that work over adb"
            )
        self._run(cmd.keyevent("KEYCODE_HOME"))
        self.restore_settings()
        self._last_obs = None
        self.actions = 0
        self.answers = []
        self._t0 = time.monotonic()
        if task is not None:
            task.setup(self)
        return self.observe()

    def close(self) -> None:
        """Restore every changed setting. Safe to call more than once."""
        try:
            self.restore_settings(settle=False)
        finally:
            self.closed = True

    def __enter__(self) -> "AdbDevice":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
            return
        try:
            self.close()
        except DeviceError as err:  # do not hide the exception that is already on its way out
            logger.error(str(err))
