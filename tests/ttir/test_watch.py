"""`ttir watch` / `ttir.watching` (issue 33, item 2): a phone kept clear of interruptions while
something else drives it. End to end through the real adb binary: a scripted adb agent that
replays the clean taps of SystemWifiTurnOn on `ttir serve-adb --perturb popup_permission`
fails alone and succeeds with the watcher beside it (the verdict from the phone's app state)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

import perturb
from benchmark import SimDevice, make_task
from benchmark.devices import AdbDevice
from benchmark.devices.adb import cleanup as adb_cleanup
from benchmark.devices.adbd.spawn import spawn
from tests.support.served_support import adb_server, free_ports, scripted_agent, served_verdict  # noqa: F401
from ttir import Action, Observation, TTIRConfig
from ttir.guarded.watch import Watcher, rule_target, watching

# the clean run of SystemWifiTurnOn (ReplayAgent.from_task), as an adb script would send it
SCRIPT = ["monkey -p com.android.settings -c android.intent.category.LAUNCHER 1", "input tap 613 312", "input tap 540 337"]
PAUSE_S = 2.5  # the scripted agent's think time between commands: the watcher looks every 0.2 s


def _perturbed(name: str) -> Any:
    env = perturb.PerturbedDevice(SimDevice(), [perturb.make(name)], seed=0)
    env.reset(make_task("SystemWifiTurnOn"))
    return env


def _fast(**watch: Any) -> TTIRConfig:
    return TTIRConfig.from_dict({"watch": {"interval_s": 0.2, **watch}})


def test_a_rule_taps_its_control_before_the_detection_is_asked():
    env = _perturbed("rate_dialog")
    env.execute(Action(action_type="open_app", app_name="Settings"))
    env.execute(Action(action_type="click", x=613, y=312))  # the rating dialog opens over Network & internet
    config = _fast(rules=[{"when": {"text": "do you love", "package": "com.android.settings"}, "tap": "not really"}])
    watcher = Watcher(env, config)
    assert watcher.look() is None  # one look: the screen might still be changing
    done = watcher.look()
    assert done is not None and done.kind == "rule" and done.title == "do you love"
    assert "Do you love Settings?" not in [e.text for e in env.observe().elements]  # closed
    assert any(e["event"] == "overlay_dismissed" for e in env.event_log())
    assert watcher.summary() == {"looks": 2, "looks_failed": 0, "rule": 1, "dismissed": 0, "gave_up": 0,
                                 "nothing_to_try": 0, "failed": 0}


def test_an_on_intervention_callback_that_raises_is_the_callers_not_a_failed_look():
    # its exception was counted as a look that failed ("a look failed (…)"), as if the phone were away
    from ttir.guarded.watch import CallbackError, watch_for

    def broken(item):
        raise KeyError("my_field")

    def rating_dialog_watcher() -> Watcher:
        env = _perturbed("rate_dialog")
        env.execute(Action(action_type="open_app", app_name="Settings"))
        env.execute(Action(action_type="click", x=613, y=312))  # the rating dialog opens
        return Watcher(env, _fast(rules=[{"when": {"text": "do you love"}, "tap": "not really"}]),
                       on_intervention=broken)

    watcher = rating_dialog_watcher()
    assert watcher.look() is None
    with pytest.raises(CallbackError, match="the on_intervention callback raised KeyError") as info:
        watcher.look()
    assert isinstance(info.value.__cause__, KeyError)
    assert [i.kind for i in watcher.interventions] == ["rule"]  # made and recorded before the callback
    again = rating_dialog_watcher()
    watch_for(again, duration_s=1.0)  # the loop of `ttir watch` and ttir.watching
    assert [i.kind for i in again.interventions] == ["rule"]
    assert again.looks_failed == 0 and again.last_error == ""


def test_a_rule_applies_only_where_its_text_and_package_are():
    env = _perturbed("rate_dialog")
    env.execute(Action(action_type="open_app", app_name="Settings"))
    env.execute(Action(action_type="click", x=613, y=312))
    obs = env.observe()
    rule = _fast(rules=[{"when": {"text": "Do you love"}, "tap": "Not"}]).watch.rules[0]
    assert rule_target(rule, obs).text == "Not really"  # a part of the label, when no label is exact
    elsewhere = _fast(rules=[{"when": {"text": "Do you love", "package": "com.example"}, "tap": "Not really"}]).watch.rules[0]
    assert rule_target(elsewhere, obs) is None
    absent = _fast(rules=[{"when": {"text": "Rate us"}, "tap": "Not really"}]).watch.rules[0]
    assert rule_target(absent, obs) is None


class Flicker:
    """Two real screens of the simulator, shown in turn (a screen that keeps changing)."""

    def __init__(self, screens: list[Observation]):
        self.screens, self.i, self.actions = screens, 0, []

    def observe(self) -> Observation:
        self.i += 1
        return self.screens[self.i % len(self.screens)]

    def execute(self, action: Action) -> None:
        self.actions.append(action)


def test_it_never_acts_while_the_screen_is_changing_and_spends_at_most_the_budget():
    env = _perturbed("popup_permission")
    env.execute(Action(action_type="open_app", app_name="Settings"))
    popup = env.observe()
    assert "com.android.permissioncontroller" in {e.package for e in popup.elements}
    home = SimDevice().observe()
    flicker = Flicker([popup, home])
    watcher = Watcher(flicker, _fast())
    for _ in range(6):
        watcher.look()
    assert flicker.actions == []  # never two equal screens in a row
    stuck = Flicker([popup])  # a pop-up that its taps do not close
    watcher = Watcher(stuck, _fast())
    kinds = [getattr(watcher.look(), "kind", None) for _ in range(20)]
    assert 1 <= len(stuck.actions) <= TTIRConfig().recovery.budget  # at most the budget on one interruption
    assert kinds.count("gave_up") + kinds.count("nothing_to_try") == 1  # then it stops, and says so once
    assert kinds.count("dismissed") == len(stuck.actions)


def test_bad_watch_config_names_the_key_and_a_bad_device_is_refused():
    with pytest.raises(ValueError, match=r"(?s)watch\.rules\.0\.when\.txt.*did you mean 'text'"):
        TTIRConfig.from_dict({"watch": {"rules": [{"when": {"txt": "Rate us"}, "tap": "Not now"}]}})
    with pytest.raises(ValueError, match=r"watch\.interval_s"):
        TTIRConfig.from_dict({"watch": {"interval_s": 0}})
    with pytest.raises(TypeError, match=r"observe\(\) and execute\(action\)"):
        Watcher(object())


# -- end to end: real adb binary, served phone, scripted adb agent --------------------------------------------


def _agent(adb_server: Any, serial: str) -> None:
    scripted_agent(adb_server, serial, SCRIPT, PAUSE_S)


def _verdict(adb_server: Any, serial: str) -> dict[str, Any]:
    return served_verdict(adb_server, serial)


def _serve(adb_server: Any) -> tuple[Any, str]:
    port = free_ports(1)
    proc, _ = spawn(port, "--task", "SystemWifiTurnOn", "--perturb", "popup_permission", "--seed", "0")
    serial = f"127.0.0.1:{port}"
    adb_server.connect(serial)
    return proc, serial


def _stop(adb_server: Any, proc: Any, serial: str) -> None:
    adb_server.adb("disconnect", serial)
    proc.terminate()
    proc.communicate(timeout=30)


def test_the_scripted_adb_agent_fails_alone_and_succeeds_beside_watching(adb_server, tmp_path):
    proc, serial = _serve(adb_server)
    try:
        _agent(adb_server, serial)
        alone = _verdict(adb_server, serial)
    finally:
        _stop(adb_server, proc, serial)
    assert alone["success"] is False  # the permission prompt swallowed the taps

    proc, serial = _serve(adb_server)
    device = AdbDevice(serial, port=adb_server.port, settle_seconds=0, action_settle_seconds=0,
                       journal_dir=tmp_path / "journal")
    try:
        with watching(device, _fast()) as watcher:
            _agent(adb_server, serial)
        watched = _verdict(adb_server, serial)
    finally:
        adb_cleanup.unregister(id(device))
        _stop(adb_server, proc, serial)
    assert watched["success"] is True, (watched, watcher.interventions)
    dismissed = [i for i in watcher.interventions if i.kind == "dismissed"]
    assert dismissed and dismissed[0].package == "com.android.permissioncontroller"


def test_ttir_watch_beside_the_unchanged_agent_logs_its_interventions(adb_server, tmp_path):
    proc, serial = _serve(adb_server)
    log = tmp_path / "watch.jsonl"
    code = "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))"
    watch = subprocess.Popen([sys.executable, "-c", code, "watch", "--serial", serial, "--adb-port", str(adb_server.port),
                              "--interval", "0.2", "--log", str(log)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "ttir watch: watching" in watch.stderr.readline()
        _agent(adb_server, serial)
        verdict = _verdict(adb_server, serial)
    finally:
        watch.terminate()
        _, rest = watch.communicate(timeout=30)
        _stop(adb_server, proc, serial)
    assert watch.returncode == 0, rest
    assert verdict["success"] is True, (verdict, log.read_text() if log.exists() else "")
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert lines and lines[0]["kind"] == "dismissed" and lines[0]["package"] == "com.android.permissioncontroller"
    summary = json.loads(rest.strip().splitlines()[-1].split("ttir watch: ", 1)[1])
    assert summary["dismissed"] == len([x for x in lines if x["kind"] == "dismissed"]) and summary["looks"] > 0


def test_a_phone_that_cannot_be_read_is_named_at_the_start_and_failed_looks_are_counted():
    import time

    import ttir

    class Gone(SimDevice):
        def observe(self):
            raise ConnectionError("device 'emulator-5556' not found")

    # a wrong serial: every look failed, and the summary read as a quiet watch (10 looks, nothing failed)
    with pytest.raises(ConnectionError, match=r"ttir.watching: cannot read the phone's screen \(ConnectionError: "
                                              r"device 'emulator-5556' not found\); check the serial"):
        with ttir.watching(Gone()):
            pass

    class Flaky(SimDevice):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def observe(self):
            self.calls += 1
            if self.calls > 1:  # readable at the start, then gone
                raise ConnectionError("device offline")
            return super().observe()

    with ttir.watching(Flaky(), {"watch": {"interval_s": 0.05}}) as watcher:
        deadline = time.monotonic() + 30
        while watcher.looks_failed < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    summary = watcher.summary()
    assert summary["looks_failed"] >= 2 and summary["looks_failed"] == summary["looks"]
    assert watcher.last_error == "ConnectionError: device offline"



@pytest.mark.parametrize("command", [["watch", "--duration", "1"], ["proxy", "--port", "5997"]])
def test_a_serial_no_phone_answers_to_is_one_line_not_a_traceback(adb_server, command, capsys):
    from ttir.cli import main

    # the real adb server on its own port, no phone attached: the device error reached the terminal as a traceback
    code = main([*command, "--serial", "emulator-5570", "--adb-port", str(adb_server.port)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "device emulator-5570 is not attached" in err and "Traceback" not in err
    assert err.startswith(f"ttir {command[0]}: error: ")
