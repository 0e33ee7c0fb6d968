"""A recording stand-in for ``adbutils.AdbDevice`` (test code, not product code).

``FakePhone.shell(cmd)`` records the exact command string, then interprets it
like the phone's ``sh`` would (POSIX quoting, ``;``, ``&&``, ``|``) against a
small emulated phone: system settings, ``wm`` overrides, night mode, installed
packages, a canned UI dump and canned ``dumpsys`` output. So tests see both
what was sent and what the phone would have received (``argv``), and settings
really round-trip.
"""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path
from typing import Any, Optional, Union

from PIL import Image

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

_PNG_CACHE: dict[tuple[int, int], bytes] = {}

DEFAULT_PACKAGES = (
    "com.android.settings",
    "com.google.android.contacts",
    "com.android.chrome",
    "com.google.android.deskclock",
    "com.simplemobiletools.smsmessenger",
)


class FakePhone:
    def __init__(
        self,
        serial: str = "FAKE0001",
        *,
        sdk: int = 34,
        size: tuple[int, int] = (1080, 2400),
        density: int = 420,
        dump: Optional[str] = None,
        window: Optional[str] = None,
        activity: str = "",
        packages: tuple[str, ...] = DEFAULT_PACKAGES,
        log_path: Optional[Union[str, Path]] = None,
    ):
        self.serial = serial
        self.sdk = sdk
        self.size = size
        self.density = density
        self.system: dict[str, Optional[str]] = {
            "font_scale": "1.0",
            "accelerometer_rotation": "1",
            "user_rotation": "0",
            "time_12_24": None,
            "date_format": None,
            "screen_brightness_mode": "1",
            "screen_brightness": "102",
            "system_locales": None,
        }
        self.secure: dict[str, Optional[str]] = {"navigation_mode": "0"}  # mirrors the enabled navbar overlay
        self.size_override: Optional[tuple[int, int]] = None
        self.density_override: Optional[int] = None
        self.night = "no"
        self.packages = set(packages)
        self.dump = dump if dump is not None else (FIXTURES / "dumps" / "keyboard_form.xml").read_text(encoding="utf-8")
        self.window = window if window is not None else (FIXTURES / "adb" / "dumpsys_window_android14.txt").read_text(
            encoding="utf-8")
        self.activity = activity
        self.files: dict[str, str] = {}
        self.calls: list[str] = []  # every shell() command string, as sent
        self.argv: list[list[str]] = []  # every simple command the shell ran, as the phone parsed it
        self.errors: list[BaseException] = []  # raised by the next shell() calls, first one first
        self.responses: dict[str, Union[str, bytes]] = {}  # canned output for an exact command string
        self.dump_failures = 0  # the next N `uiautomator dump`s fail like a busy screen does
        # what the next `uiautomator dump … && cat …` commands print, verbatim, one per call (the
        # recorded failures of fixtures/adb/dump_failures/); when empty, the canned dump is served
        self.dump_outputs: list[str] = []
        self.screen: Optional[Image.Image] = None  # what screencap shows (default: a blank screen)
        self.log_path = Path(log_path) if log_path else None

    # -- the adbutils surface ------------------------------------------------------
    def shell(self, cmdargs: Any, stream: bool = False, timeout: Optional[float] = None,
              encoding: Optional[str] = "utf-8", rstrip: bool = True) -> Union[str, bytes]:
        command = cmdargs if isinstance(cmdargs, str) else " ".join(shlex.quote(a) for a in cmdargs)
        self.calls.append(command)
        if self.log_path is not None:
            with self.log_path.open("a", encoding="utf-8") as f:
                f.write(command + "\n")
                f.flush()
        if self.errors:
            raise self.errors.pop(0)
        if self.dump_outputs and "uiautomator dump" in command:
            out: Union[str, bytes] = self.dump_outputs.pop(0)
        else:
            out = self.responses[command] if command in self.responses else self._sh(command)
        if isinstance(out, str):
            out = out.encode("utf-8")
        if encoding is None:
            return out
        text = out.decode(encoding, "replace")
        return text.rstrip() if rstrip else text

    # -- state helpers for assertions ------------------------------------------------
    def logical_size(self) -> tuple[int, int]:
        w, h = self.size_override or self.size
        if self.system.get("accelerometer_rotation") == "0" and self.system.get("user_rotation") in ("1", "3"):
            w, h = h, w
        return w, h

    def state(self) -> dict[str, Any]:
        return {"system": dict(self.system), "secure": dict(self.secure), "size": self.size_override,
                "density": self.density_override, "night": self.night}

    def commands(self, prefix: str = "") -> list[str]:
        return [c for c in self.calls if c.startswith(prefix)]

    # -- a tiny sh ---------------------------------------------------------------------
    def _sh(self, command: str) -> bytes:
        lex = shlex.shlex(command, posix=True, punctuation_chars=";&|")
        lex.whitespace_split = True
        tokens = list(lex)
        out = b""
        status = 0
        pipe_in: Optional[bytes] = None
        argv: list[str] = []
        skip = False
        for tok in tokens + [";"]:
            if tok not in (";", "&&", "|"):
                argv.append(tok)
                continue
            if argv and not skip:
                res, status = self._run(argv, pipe_in)
                if tok == "|":
                    pipe_in = res
                else:
                    out += res
                    pipe_in = None
            elif skip and tok != "|":
                skip = False
            argv = []
            if tok == "&&" and status != 0:
                skip = True
        return out

    def _run(self, argv: list[str], stdin: Optional[bytes]) -> tuple[bytes, int]:
        self.argv.append(list(argv))
        name, args = argv[0], argv[1:]
        handler = getattr(self, f"_cmd_{name}", None)
        if handler is None:
            return f"/system/bin/sh: {name}: not found\n".encode(), 127
        res = handler(args, stdin)
        if isinstance(res, tuple):
            text, status = res
        else:
            text, status = res, 0
        return (text.encode("utf-8") if isinstance(text, str) else text), status

    # -- commands ----------------------------------------------------------------------
    def _cmd_input(self, args: list[str], stdin: Any) -> str:
        known = {"tap", "swipe", "text", "keyevent", "keycombination"}
        if not args or args[0] not in known:
            return f"Error: Unknown command: {args[0] if args else ''}\n"
        if args[0] == "keycombination" and self.sdk < 33:
            return "Error: Unknown command: keycombination\n"
        return ""

    def _cmd_settings(self, args: list[str], stdin: Any) -> str:
        verb, ns, key = args[0], args[1], args[2]
        if ns == "secure" and verb == "get":
            v = self.secure.get(key)
            return ("null" if v is None else v) + "\n"
        if ns != "system":
            return "null\n"
        if verb == "get":
            v = self.system.get(key)
            return ("null" if v is None else v) + "\n"
        if verb == "put":
            self.system[key] = args[3]
            return ""
        if verb == "delete":
            self.system[key] = None
            return "Deleted 1 rows\n"
        return f"Invalid command: {verb}\n"

    def _cmd_wm(self, args: list[str], stdin: Any) -> str:
        what = args[0]
        if what == "size":
            if len(args) == 1:
                w, h = self.size
                text = f"Physical size: {w}x{h}\n"
                if self.size_override:
                    text += "Override size: {}x{}\n".format(*self.size_override)
                return text
            if args[1] == "reset":
                self.size_override = None
            else:
                w, h = args[1].split("x")
                self.size_override = (int(w), int(h))
            return ""
        if what == "density":
            if len(args) == 1:
                text = f"Physical density: {self.density}\n"
                if self.density_override:
                    text += f"Override density: {self.density_override}\n"
                return text
            self.density_override = None if args[1] == "reset" else int(args[1])
            return ""
        return f"Error: unknown command '{what}'\n"

    def _cmd_cmd(self, args: list[str], stdin: Any) -> str:
        navbars = {"threebutton": "0", "twobutton": "1", "gestural": "2"}
        if args[:3] == ["overlay", "enable-exclusive", "--category"] and len(args) == 4:
            mode = navbars.get(args[3].rsplit(".", 1)[-1])
            if mode is None or not args[3].startswith("com.android.internal.systemui.navbar."):
                return f"Error: no such overlay {args[3]}\n", 1  # type: ignore[return-value]
            self.secure["navigation_mode"] = mode
            return ""
        if args[:2] != ["uimode", "night"]:
            return "Unknown command\n"
        if len(args) > 2:
            self.night = args[2]
        return f"Night mode: {self.night}\n"

    def _cmd_getprop(self, args: list[str], stdin: Any) -> str:
        return f"{self.sdk}\n" if args == ["ro.build.version.sdk"] else "\n"

    def _cmd_screencap(self, args: list[str], stdin: Any) -> bytes:
        if self.screen is not None:
            buf = io.BytesIO()
            self.screen.save(buf, format="PNG", compress_level=1)
            return buf.getvalue()
        size = self.logical_size()
        if size not in _PNG_CACHE:
            buf = io.BytesIO()
            Image.new("RGB", size, (250, 250, 250)).save(buf, format="PNG", compress_level=1)
            _PNG_CACHE[size] = buf.getvalue()
        return _PNG_CACHE[size]

    def _cmd_rm(self, args: list[str], stdin: Any) -> str:
        for a in args:
            self.files.pop(a, None)
        return ""

    def _cmd_uiautomator(self, args: list[str], stdin: Any) -> Any:
        if self.dump_failures > 0:
            self.dump_failures -= 1
            return "ERROR: could not get idle state.\n", 1
        self.files[args[1]] = self.dump
        return f"UI hierchary dumped to: {args[1]}\n"

    def _cmd_cat(self, args: list[str], stdin: Any) -> Any:
        if args[0] not in self.files:
            return f"cat: {args[0]}: No such file or directory\n", 1
        return self.files[args[0]]

    def _cmd_dumpsys(self, args: list[str], stdin: Any) -> str:
        if args[:2] == ["window", "windows"]:
            return self.window
        if args[:2] == ["activity", "activities"]:
            return self.activity
        if args[:2] == ["window", "displays"]:
            w, h = self.logical_size()
            return f"Display: mDisplayId=0\n  init={self.size[0]}x{self.size[1]} {self.density}dpi cur={w}x{h} app={w}x{h - 126}\n"
        return ""

    def _cmd_grep(self, args: list[str], stdin: Optional[bytes]) -> Any:
        pattern = re.compile(args[-1])
        lines = [ln for ln in (stdin or b"").decode().splitlines() if pattern.search(ln)]
        return ("\n".join(lines) + "\n", 0) if lines else ("", 1)

    def _cmd_monkey(self, args: list[str], stdin: Any) -> str:
        pkg = args[args.index("-p") + 1]
        if pkg not in self.packages:
            return "  bash arg: -p\n** No activities found to run, monkey aborted.\n"
        return "  bash arg: -p\nEvents injected: 1\n## Network stats: elapsed time=12ms\n"

    def _cmd_am(self, args: list[str], stdin: Any) -> str:
        comp = args[args.index("-n") + 1]
        if comp.split("/")[0] not in self.packages:
            return f"Starting: Intent {{ cmp={comp} }}\nError: Activity class {{{comp}}} does not exist.\n"
        return f"Starting: Intent {{ cmp={comp} }}\n"

    def _cmd_pm(self, args: list[str], stdin: Any) -> str:
        return "".join(f"package:{p}\n" for p in sorted(self.packages))


class FakeAdbServer:
    """An adb server on 127.0.0.1 that answers ``host:version`` and ``host:devices``
    (the smart-socket protocol: 4 hex digits of length, then the request)."""

    def __init__(self, devices: list[tuple[str, str]], version: int = 41):
        import socket
        import threading

        self.devices = devices
        self.version = version
        self.requests: list[str] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                try:
                    size = int(conn.recv(4), 16)
                    request = conn.recv(size).decode()
                except (OSError, ValueError):
                    continue
                self.requests.append(request)
                if request == "host:version":
                    body = f"{self.version:04x}"
                elif request == "host:devices":
                    body = "".join(f"{s}\t{st}\n" for s, st in self.devices)
                else:
                    msg = f"unsupported request {request}".encode()
                    conn.sendall(b"FAIL" + f"{len(msg):04x}".encode() + msg)
                    continue
                data = body.encode()
                conn.sendall(b"OKAY" + f"{len(data):04x}".encode() + data)

    def close(self) -> None:
        self._sock.close()


def free_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
