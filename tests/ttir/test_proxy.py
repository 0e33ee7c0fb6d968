"""`ttir proxy` (issue 33, item 1): the guard at the adb level. End to end through the real adb
binary on both sides: adb client -> ttir proxy -> adb server -> served phone. A scripted adb
agent replaying the clean taps of SystemWifiTurnOn fails on `serve-adb --perturb
popup_permission` alone and succeeds through the proxy (the verdict from the phone's app
state); pass-through is byte-identical; a hostile client does not stop a good one."""

from __future__ import annotations

import json
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

import perturb
from benchmark import SimDevice, make_task
from benchmark.devices.adbd import wire
from benchmark.devices.adbd.host import RawHost
from benchmark.devices.adbd.spawn import spawn
from tests.support.served_support import (adb_server, closed_by_peer, free_ports, scripted_agent,  # noqa: F401
                                          served, served_verdict)
from ttir import Action, Observation
from ttir.guarded.proxy import AdbProxy, ProxyGuard
from ttir.guarded.proxy.commands import changes_screen, input_actions
from ttir.guarded.proxy.screens import ReplyReader, ScreenCache, SyncReader

# the clean run of SystemWifiTurnOn (ReplayAgent.from_task), as an adb script would send it
SCRIPT = ["monkey -p com.android.settings -c android.intent.category.LAUNCHER 1", "input tap 613 312", "input tap 540 337"]
PAUSE_S = 1.0  # the scripted agent's think time between commands


# -- reading an agent's command lines ------------------------------------------------------------


def test_input_commands_are_read_as_actions_and_other_commands_are_not():
    assert input_actions("input tap 613 312") == [Action(action_type="click", x=613, y=312)]
    assert [a.action_type for a in input_actions("input tap 1 2 && /system/bin/input touchscreen tap 1 2")] == ["click"] * 2
    assert input_actions("input swipe 100 200 900 200 300")[0].action_type == "swipe"
    assert input_actions("input swipe 5 5 6 6 800")[0].action_type == "long_press"  # a press held in place
    assert input_actions("input text hello%sthere")[0].text == "hello there"
    assert input_actions("input keyevent KEYCODE_BACK")[0].action_type == "navigate_back"
    assert input_actions("input tap x y") == []  # an input the proxy cannot read: guarded as nothing, forwarded
    assert input_actions("screencap -p") is None and input_actions("echo 'input tap 1 2'") is None
    assert not changes_screen("rm -f /sdcard/d.xml; uiautomator dump /sdcard/d.xml && cat /sdcard/d.xml")
    assert changes_screen("am start -n com.android.settings/.Settings") and changes_screen("monkey -p x 1")


def test_a_pulled_screen_is_fresh_until_an_input_goes_through_or_it_ages():
    now = [0.0]
    cache = ScreenCache(max_age_s=5.0, clock=lambda: now[0])
    xml = SimDevice().observe().to_xml()
    assert cache.put(xml, cache.inputs) and cache.fresh() is not None
    cache.changed()
    assert cache.fresh() is None  # an input since it was taken
    assert not cache.put(xml, cache.inputs - 1)  # taken before that input: not kept
    assert cache.put(xml, cache.inputs)
    now[0] = 6.0
    assert cache.fresh() is None  # older than max_age_s


def _sync(ident: bytes, body: bytes = b"", length: Any = None) -> bytes:
    return ident + struct.pack("<I", len(body) if length is None else length) + body


def test_dumps_are_read_from_shell_v2_packets_and_sync_pulls_cut_anywhere():
    xml = SimDevice().observe().to_xml().encode()
    v2 = ReplyReader(v2=True)
    stream = (struct.pack("<BI", 2, 5) + b"noise" + struct.pack("<BI", 1, len(xml)) + xml + struct.pack("<BI", 3, 1) + b"\0")
    for i in range(0, len(stream), 777):  # packets cut across writes
        v2.feed(stream[i:i + 777])
    assert v2.dump() == xml.decode()
    liar = ReplyReader(v2=True)
    liar.feed(struct.pack("<BI", 1, 0xFFFFFFF0) + b"x" * 100)  # a length that is not a promise: nothing kept
    assert liar.overflow and liar.dump() is None
    for request in (_sync(b"RECV", b"/sdcard/window_dump.xml"),
                    _sync(b"RCV2", b"/sdcard/window_dump.xml") + _sync(b"RCV2", length=0)):
        reader = SyncReader()
        reader.received(_sync(b"STAT", length=0) + b"\0" * 8)  # a STAT reply before any RECV: not followed
        for i in range(0, len(request), 5):
            reader.sent(request[i:i + 5])
        reply = _sync(b"DATA", xml[:1000]) + _sync(b"DATA", xml[1000:]) + _sync(b"DONE", length=0)
        for i in range(0, len(reply), 999):
            reader.received(reply[i:i + 999])
        assert reader.dump() == xml.decode(), request[:4]
    compressed = SyncReader()
    compressed.sent(_sync(b"RCV2", b"/sdcard/window_dump.xml") + _sync(b"RCV2", length=1))  # brotli: not read
    compressed.received(_sync(b"DATA", b"\x8b\x00") + _sync(b"DONE", length=0))
    assert compressed.lost and compressed.dump() is None


# -- the guard's rule for the agent's command (in-process phone) ---------------------------------


class SimPhone:
    """A perturbed simulated phone as the proxy's guard uses a device (its dump and its actions)."""

    def __init__(self, perturbation: str, task: str = "SystemWifiTurnOn", deaf: bool = False):
        self.env = perturb.PerturbedDevice(SimDevice(), [perturb.make(perturbation)], seed=0)
        self.env.reset(make_task(task))
        self.deaf = deaf  # the guard's actions do nothing (an interruption it cannot clear)
        self.performed: list[Action] = []

    def observe(self) -> Observation:
        return Observation.from_xml(self.env.observe().to_xml())

    def perform(self, action: Action, obs: Observation) -> None:
        self.performed.append(action)
        if not self.deaf:
            self.env.execute(action)

    def send(self, guard: ProxyGuard, command: str) -> Any:
        """The agent's command through the guard: performed when the guard lets it through."""
        message = guard.before_input(command)
        if message is None:
            for action in input_actions(command):
                self.env.execute(action)
        return message


def test_the_guard_dismisses_an_interruption_before_the_agents_tap_and_delays_it():
    phone = SimPhone("popup_permission")
    phone.env.execute(Action(action_type="open_app", app_name="Settings"))
    seen = []
    guard = ProxyGuard(phone, on_intervention=seen.append)
    assert phone.send(guard, "input tap 613 312") is None  # it goes through, after the dismissal
    assert len(seen) == 1 and seen[0].fate == "delayed" and seen[0].did
    assert seen[0].saw[0]["diagnoser"] == "interference"
    assert seen[0].saw[0]["package"] == "com.android.permissioncontroller"
    assert "com.android.permissioncontroller" not in {e.package for e in phone.observe().elements}
    assert phone.send(guard, "input tap 540 337") is None and len(seen) == 1  # a clear screen: no intervention
    summary = guard.summary()
    assert summary["inputs"] == 2 and summary["delayed"] == 1 and summary["forwarded"] == 1
    assert summary["guard"]["triggers"] == {"interference": 1} and summary["guard"]["resolved"] == 1


def test_a_tap_on_an_interruption_the_guard_cannot_clear_is_held_back_once():
    phone = SimPhone("popup_permission", deaf=True)
    phone.env.execute(Action(action_type="open_app", app_name="Settings"))
    dialog = next(e for e in phone.observe().elements if e.package == "com.android.permissioncontroller"
                  and e.width > 0 and e.height > 0)
    guard = ProxyGuard(phone)
    tap = f"input tap {dialog.center[0]} {dialog.center[1]}"
    message = guard.before_input(tap)
    assert message is not None and "held_back" in message  # it would land on the interruption
    assert 1 <= len(phone.performed) <= 2 * guard.config.recovery.budget  # the guard tried, within its budget
    assert guard.before_input(tap) is None  # the agent insists, on the same screen: it goes through
    assert guard.summary()["held_back"] == 1


class Broken:
    """A device whose dumps fail (the screen off, uiautomator busy)."""

    def observe(self) -> Observation:
        raise RuntimeError("uiautomator dump failed")

    def perform(self, action: Action, obs: Observation) -> None:
        raise AssertionError("nothing to perform on a screen never seen")


def test_without_a_screen_the_guard_fails_open_and_the_command_goes_through():
    guard = ProxyGuard(Broken())
    assert guard.before_input("input tap 1 2") is None
    assert guard.summary()["unguarded"] == 1 and guard.summary()["forwarded"] == 1


@pytest.mark.parametrize("phone", ["emulator-5554", Broken])
def test_what_is_no_phone_is_refused_rather_than_every_command_going_through_unguarded(phone):
    # a serial failed at the first look and was failed open: every command went through, counted "unguarded"
    with pytest.raises(TypeError, match=r"expected a phone with observe\(\) and perform\(action, obs\)"):
        ProxyGuard(phone)


@pytest.mark.parametrize("kwargs, says", [({"cache": "x"}, "expected a ScreenCache"),
                                          ({"settle_s": -1}, "expected seconds from 0 to 600")])
def test_a_cache_or_settle_time_of_the_wrong_kind_is_refused_at_once(kwargs, says):
    # each failed only at its first use: the cache at the first command, the settle time at the first pop-up
    with pytest.raises(TypeError, match=says):
        ProxyGuard(SimPhone("popup_permission"), **kwargs)


def test_an_on_intervention_that_cannot_be_called_is_refused_at_once():
    from ttir.guarded.watch import Watcher

    seen: list = []
    with pytest.raises(TypeError, match=r"ProxyGuard\(on_intervention=\[\]\): expected a function"):
        ProxyGuard(SimPhone("popup_permission"), on_intervention=seen)
    with pytest.raises(TypeError, match=r"Watcher\(on_intervention=\[\]\): expected a function"):
        Watcher(SimDevice(), on_intervention=seen)


def test_a_repeated_tap_without_effect_is_caught_from_the_agents_own_inputs_and_replaced():
    phone = SimPhone("popup_permission")  # no pop-up until Settings opens: the home screen is clear
    seen = []
    guard = ProxyGuard(phone, on_intervention=seen.append)
    assert guard.config.task_alignment.mode == "off"  # no goal: nothing to align with
    assert ProxyGuard(phone, goal="Turn on WiFi.").config.task_alignment.mode != "off"
    sent = [phone.send(guard, "input tap 540 2000") is None for _ in range(4)]  # empty space, again and again
    caught = [i for i in seen if i.saw and i.saw[0]["diagnoser"] in ("action_effect", "stuck_loop")]
    assert caught and caught[0].did, seen  # the guard tried another route
    assert caught[0].fate == "replaced" and sent.count(False) == guard.summary()["replaced"] >= 1


# -- end to end: real adb binary on both sides ---------------------------------------------------


def _serve(adb_server: Any, perturbation: str) -> tuple[Any, str]:
    port = free_ports(1)
    proc, _ = spawn(port, "--task", "SystemWifiTurnOn", "--perturb", perturbation, "--seed", "0")
    serial = f"127.0.0.1:{port}"
    adb_server.connect(serial)
    return proc, serial


def _stop(adb_server: Any, proc: Any, *serials: str) -> None:
    for serial in serials:
        adb_server.adb("disconnect", serial)
    proc.terminate()
    proc.communicate(timeout=30)


def _agent(adb_server: Any, serial: str) -> None:
    scripted_agent(adb_server, serial, SCRIPT, PAUSE_S)


def _verdict(adb_server: Any, serial: str) -> dict[str, Any]:
    return served_verdict(adb_server, serial)


@pytest.mark.parametrize("perturbation", ["popup_permission", "whats_new_dialog"])
def test_the_scripted_adb_agent_fails_alone_and_succeeds_through_the_proxy(adb_server, perturbation):
    proc, serial = _serve(adb_server, perturbation)
    try:
        _agent(adb_server, serial)
        alone = _verdict(adb_server, serial)
    finally:
        _stop(adb_server, proc, serial)
    assert alone["success"] is False  # the interruption swallowed a tap

    proc, serial = _serve(adb_server, perturbation)
    proxy = AdbProxy(serial, adb_port=adb_server.port, settle_s=0.1).start()
    try:
        adb_server.connect(proxy.address)
        _agent(adb_server, proxy.address)  # the same agent, unchanged, on the proxy's serial
        through = _verdict(adb_server, serial)
    finally:
        proxy.close()
        _stop(adb_server, proc, serial, proxy.address)
    assert through["success"] is True, (through, [i.model_dump() for i in proxy.guard.interventions])
    delayed = [i for i in proxy.guard.interventions if i.fate == "delayed"]
    assert delayed and delayed[0].saw[0]["diagnoser"] == "interference" and delayed[0].did


def test_ttir_proxy_on_the_command_line_logs_its_interventions_and_sums_up(adb_server, tmp_path):
    proc, serial = _serve(adb_server, "popup_permission")
    log = tmp_path / "proxy.jsonl"
    port = free_ports(1)
    code = "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))"
    cli = subprocess.Popen([sys.executable, "-c", code, "proxy", "--serial", serial, "--port", str(port),
                            "--adb-port", str(adb_server.port), "--settle", "0.1", "--log", str(log)],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    address = f"127.0.0.1:{port}"
    try:
        assert cli.stderr is not None
        lines = [cli.stderr.readline() for _ in range(3)]
        assert "Ctrl-C stops." in lines[-1], lines
        adb_server.connect(address)
        _agent(adb_server, address)
        verdict = _verdict(adb_server, serial)
    finally:
        cli.send_signal(signal.SIGINT)
        _, rest = cli.communicate(timeout=30)
        _stop(adb_server, proc, serial, address)
    assert cli.returncode == 0, rest
    assert verdict["success"] is True
    items = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert items and items[0]["fate"] == "delayed" and items[0]["command"] == "input tap 613 312"
    summary = json.loads(rest.strip().splitlines()[-1].split("ttir proxy: ", 1)[1])
    assert summary["delayed"] == 1 and summary["inputs"] == 2 and summary["guard"]["triggers"] == {"interference": 1}


def test_a_non_loopback_host_is_warned_about_and_an_unknown_serial_named(adb_server):
    code = "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))"
    res = subprocess.run([sys.executable, "-c", code, "proxy", "--serial", "no-such-phone", "--port", str(free_ports(1)),
                          "--host", "0.0.0.0", "--adb-port", str(adb_server.port)],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert res.returncode == 2, res.stderr
    assert "WARNING: --host 0.0.0.0 serves the device no-such-phone to the network with no authentication" in res.stderr
    assert "ttir proxy: error: --serial no-such-phone: device no-such-phone is not attached" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.fixture
def proxied(adb_server, served):
    """A served phone (in-process) behind a proxy, both connected to the adb server."""
    proxy = AdbProxy(served.address, adb_port=adb_server.port, settle_s=0).start()
    adb_server.connect(proxy.address)
    try:
        yield served.address, proxy
    finally:
        adb_server.adb("disconnect", proxy.address)
        proxy.close()


def test_pass_through_is_byte_identical_for_screencap_dump_and_pull(adb_server, proxied, tmp_path):
    direct, proxy = proxied
    for args in (("exec-out", "screencap -p"), ("shell", "screencap -p"), ("exec-out", "uiautomator dump /dev/tty"),
                 ("shell", "dumpsys window windows"), ("shell", "pm list packages"),
                 ("shell", "echo one; echo two\necho three; getprop ro.product.model")):
        a = adb_server.adb("-s", direct, *args).stdout
        b = adb_server.adb("-s", proxy.address, *args).stdout
        assert a == b and len(a) > 20, args
    assert adb_server.adb("-s", direct, "exec-out", "screencap -p").stdout.startswith(b"\x89PNG")
    blob = random.Random(7).randbytes(3_000_000)  # many writes, each acknowledged once the device has it
    (tmp_path / "blob.bin").write_bytes(blob)
    assert adb_server.adb("-s", proxy.address, "push", str(tmp_path / "blob.bin"), "/sdcard/blob.bin").returncode == 0
    adb_server.adb("-s", direct, "shell", "uiautomator dump /sdcard/window_dump.xml")
    for name in ("blob.bin", "window_dump.xml"):
        assert adb_server.adb("-s", direct, "pull", f"/sdcard/{name}", str(tmp_path / f"direct-{name}")).returncode == 0
        assert adb_server.adb("-s", proxy.address, "pull", f"/sdcard/{name}", str(tmp_path / f"proxy-{name}")).returncode == 0
        assert (tmp_path / f"direct-{name}").read_bytes() == (tmp_path / f"proxy-{name}").read_bytes()
    assert (tmp_path / "proxy-blob.bin").read_bytes() == blob  # pushed through the proxy, pulled back unchanged


def test_an_interactive_shell_fed_on_stdin_passes_both_ways(adb_server, proxied):
    direct, proxy = proxied
    script = b"echo first\ngetprop ro.product.model\nexit 3\n"
    a = subprocess.run([adb_server.binary, "-P", str(adb_server.port), "-s", direct, "shell"], input=script,
                       capture_output=True, timeout=60)
    b = subprocess.run([adb_server.binary, "-P", str(adb_server.port), "-s", proxy.address, "shell"], input=script,
                       capture_output=True, timeout=60)
    assert (a.stdout, a.returncode) == (b.stdout, b.returncode) and b"first" in b.stdout and b.returncode == 3


def test_the_agents_own_dump_spares_the_proxy_a_dump_until_an_input_goes_through(adb_server, proxied, tmp_path):
    _, proxy = proxied
    adb_server.adb("-s", proxy.address, "shell", "uiautomator dump /sdcard/window_dump.xml")
    adb_server.adb("-s", proxy.address, "pull", "/sdcard/window_dump.xml", str(tmp_path / "d.xml"))
    adb_server.adb("-s", proxy.address, "shell", "input tap 540 1000")  # fresh: the pulled dump is the screen
    adb_server.adb("-s", proxy.address, "shell", "input tap 540 1000")  # stale: an input went through since
    adb_server.adb("-s", proxy.address, "exec-out", "uiautomator dump /dev/tty")
    adb_server.adb("-s", proxy.address, "shell", "am start -n com.android.settings/.Settings")  # changes the screen
    adb_server.adb("-s", proxy.address, "shell", "input keyevent KEYCODE_BACK")
    counts = proxy.summary()
    # the first tap on the agent's screen; the second and the key on dumps of the proxy's own (and one after
    # each recovery action, if a tap without effect brought one on)
    assert counts["inputs"] == 3 and counts["screens_from_agent"] == 1, counts
    assert counts["dumps"] == 2 + counts["guard"]["recovery_steps"], counts


# -- a hostile client --------------------------------------------------------------------------




def test_a_malformed_request_fails_its_own_stream_and_the_session_goes_on(proxied):
    _, proxy = proxied
    host = RawHost(proxy.port)
    reply = host.connect()
    assert reply.command == wire.A_CNXN and b"features=shell_v2" in reply.payload  # the device's own banner
    host.send(wire.A_OPEN, 3, 0, b"\0")  # no service name
    assert host.recv().command == wire.A_CLSE
    assert host.run("no-such-service:", local_id=4) == b""  # the device refuses it: that stream closes
    # an input the guard cannot read passes unguarded: the device's own answer comes back
    assert host.run("shell:input tap x y", local_id=5).startswith(b"Error")
    assert host.run("shell:echo still here", local_id=6) == b"still here\n"
    host.close()


def test_random_bytes_oversized_lengths_and_200_connections_leave_a_good_client_served(adb_server, proxied):
    direct, proxy = proxied
    rng = random.Random(33)
    stop = threading.Event()
    served_ok: list[bool] = []

    def good_client() -> None:
        while not stop.is_set():
            res = adb_server.adb("-s", proxy.address, "shell", "echo ok", timeout=60)
            served_ok.append(res.stdout == b"ok\n")

    worker = threading.Thread(target=good_client)
    worker.start()
    socks: list[socket.socket] = []
    try:
        for k in range(200):  # a flood of connections: silent, garbage, or a header declaring 4 GB
            try:
                s = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
            except OSError:
                continue
            socks.append(s)
            try:
                if k % 3 == 1:
                    s.sendall(rng.randbytes(rng.randrange(1, 4096)))
                elif k % 3 == 2:
                    s.sendall(struct.pack("<6I", wire.A_CNXN, wire.A_VERSION, 4096, 0xFFFFFFF0, 0,
                                          wire.A_CNXN ^ 0xFFFFFFFF))
            except OSError:
                pass
        host = RawHost(proxy.port)  # a connected client that opens too many streams and writes garbage
        host.connect()
        for local in range(1, 80):
            host.send(wire.A_OPEN, local, 0, b"shell,v2,raw:\0")
        host.send(wire.A_WRTE, 1, 1, rng.randbytes(2000))
        newcomer = RawHost(proxy.port)  # during the flood, a new client still gets in (a silent socket gives way)
        assert newcomer.connect().command == wire.A_CNXN
        assert newcomer.run("shell:echo newcomer", local_id=3) == b"newcomer\n"
        time.sleep(2.0)
    finally:
        stop.set()
        worker.join(timeout=120)
        for s in socks:
            s.close()
    assert served_ok and all(served_ok), served_ok
    assert adb_server.adb("-s", proxy.address, "exec-out", "screencap -p").stdout == \
        adb_server.adb("-s", direct, "exec-out", "screencap -p").stdout
    assert adb_server.adb("-s", proxy.address, "shell", "echo still").stdout == b"still\n"
