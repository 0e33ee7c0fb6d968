"""AdbDevice when the phone gives no usable UI tree, against the recorded outputs of
failing dumps (fixtures/adb/dump_failures/): a dump that fails is retried, a bare
root or an unreadable dump is retried once after a settle, and then the screenshot
is observed — its text read by OCR, marked (``source``, ``tree_error``) and logged —
never a blank screen."""

from __future__ import annotations

import pytest
from loguru import logger

from tests.support.adb_fake import FIXTURES, FakePhone
from tests.support.served_support import adb_server  # noqa: F401 - fixture (the real adb server, private port)
from benchmark import SimDevice, make_task
from benchmark.devices import AdbDevice
from benchmark.devices.adb import cleanup as adb_cleanup
from benchmark.devices.adb import commands as cmd
from benchmark.tree_fallback import SETTLE_SECONDS
from ttir.core import ocr

FAILURES = FIXTURES / "adb" / "dump_failures"
needs_ocr = pytest.mark.skipif(not ocr.available(), reason="needs the ttir[ocr] extra")


def recorded(name: str) -> str:
    return (FAILURES / f"{name}.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def screen():
    """A real screenshot with text on it: the simulator's Settings page."""
    from ttir.core.types import Action

    d = SimDevice()
    d.reset(make_task("SystemWifiTurnOn", seed=0))
    d.execute(Action(action_type="open_app", app_name="Settings"))
    return d.observe().screenshot


@pytest.fixture
def built():
    made: list[AdbDevice] = []
    sleeps: list[float] = []

    def build(phone: FakePhone) -> AdbDevice:
        d = AdbDevice(adb_device=phone, sleep=sleeps.append, settle_seconds=0, action_settle_seconds=0)
        made.append(d)
        return d

    build.sleeps = sleeps  # type: ignore[attr-defined]
    yield build
    for d in made:
        adb_cleanup.unregister(id(d))


def _logged(fn):
    records: list[str] = []
    logger.enable("benchmark")
    sink = logger.add(lambda m: records.append(str(m)), level="DEBUG")
    try:
        return fn(), records
    finally:
        logger.remove(sink)
        logger.disable("benchmark")


@needs_ocr
@pytest.mark.parametrize("failure", ["idle_state", "null_root", "empty"])
def test_a_dump_that_keeps_failing_gives_the_screenshots_text(built, screen, failure):
    phone = FakePhone()
    phone.screen = screen
    phone.dump_outputs = [recorded(failure)] * 10
    obs, logs = _logged(lambda: built(phone).observe())
    assert phone.calls.count(cmd.UI_DUMP) == 3  # the device's own retries; a failed dump is not retried again
    assert obs.source == "ocr" and obs.xml is None
    assert "uiautomator dump failed 3 times" in obs.tree_error
    said = recorded(failure).strip()
    assert (said in obs.tree_error) if said else obs.tree_error.endswith("times")
    texts = [e.text for e in obs.elements]
    assert "Network & internet" in texts and all(e.source == "ocr" for e in obs.elements)
    assert obs.foreground  # the app in front is still asked
    assert any("no usable UI tree" in r and "OCR" in r for r in logs)


@needs_ocr
@pytest.mark.parametrize("bare", ["bare_root", "flutter_canvas"])
def test_a_bare_root_is_retried_once_after_a_settle_then_read_from_the_screenshot(built, screen, bare):
    phone = FakePhone()
    phone.screen = screen
    phone.dump_outputs = [recorded(bare)] * 10
    d = built(phone)
    obs = d.observe()
    assert phone.calls.count(cmd.UI_DUMP) == 2 and SETTLE_SECONDS in built.sleeps
    assert obs.source == "ocr" and "Network & internet" in [e.text for e in obs.elements]
    assert "window root" in obs.tree_error or "none has text" in obs.tree_error


def test_a_bare_root_that_settles_into_a_tree_is_the_tree(built):
    phone = FakePhone()
    phone.dump_outputs = [recorded("bare_root")]  # then the canned full dump
    obs = built(phone).observe()
    assert obs.source == "tree" and obs.tree_error is None and len(obs.elements) == 6
    assert phone.calls.count(cmd.UI_DUMP) == 2


def test_a_transient_idle_state_failure_is_retried_into_the_tree(built):
    phone = FakePhone()
    phone.dump_outputs = [recorded("idle_state"), recorded("idle_state")]
    obs = built(phone).observe()
    assert obs.source == "tree" and len(obs.elements) == 6 and phone.calls.count(cmd.UI_DUMP) == 3


def test_without_ocr_the_screenshot_is_observed_alone_and_marked(built, screen, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, ocr.ENGINE_PACKAGE, None)  # the extra not installed
    phone = FakePhone()
    phone.screen = screen
    phone.dump_outputs = [recorded("idle_state")] * 10
    obs = built(phone).observe()
    assert obs.source == "pixels" and obs.elements == [] and obs.screenshot is not None
    assert "could not get idle state" in obs.tree_error


def test_neither_screenshot_nor_tree_is_an_error_that_says_so(built):
    phone = FakePhone()
    phone.responses[cmd.SCREENCAP] = b"not a png"
    phone.dump_outputs = [recorded("null_root")] * 10
    from benchmark.device import DeviceError

    with pytest.raises(DeviceError, match="neither screencap nor uiautomator dump worked"):
        built(phone).observe()


def test_a_bare_root_without_a_screenshot_is_returned_marked_never_as_an_empty_screen(built):
    phone = FakePhone()
    phone.responses[cmd.SCREENCAP] = b"not a png"
    phone.dump_outputs = [recorded("bare_root")] * 10
    obs = built(phone).observe()
    assert len(obs.elements) == 1 and obs.tree_error and "window root" in obs.tree_error
    from diagnosers.signals.tree import screen_tree

    assert not screen_tree(obs).has_tree  # unknown to the diagnosers, not an empty screen


@needs_ocr
def test_a_served_phone_whose_tree_is_lost_through_the_real_adb_server(adb_server, tmp_path):
    """`ttir serve-adb --perturb a11y_tree_empty`, in-process: the real adb binary and
    adbutils talk to a simulated phone whose dumps hold no node; AdbDevice retries, then
    reads the screenshot it pulled over adb."""
    from tests.support.served_support import free_port
    from benchmark.devices.adbd import AdbDaemon, ServedPhone
    from perturb import PerturbedDevice, make
    from ttir.core.types import Action

    task = make_task("SystemWifiTurnOn", seed=0)
    phone = ServedPhone(PerturbedDevice(SimDevice(), [make("a11y_tree_empty", read_text=False)], seed=0))
    phone.start_task(task)
    daemon = AdbDaemon(phone, port=free_port()).start()
    d = None
    try:
        adb_server.connect(daemon.address)
        d = AdbDevice(daemon.address, port=adb_server.port, settle_seconds=0, action_settle_seconds=0,
                      journal_dir=tmp_path / "journal")
        d.execute(Action(action_type="open_app", app_name="Settings"))
        obs = d.observe()
        assert obs.source == "ocr" and obs.tree_error and "no node" in obs.tree_error
        assert "Network & internet" in [e.text for e in obs.elements]
        assert obs.foreground and obs.foreground.startswith("com.android.settings")
    finally:
        if d is not None:
            adb_cleanup.unregister(id(d))
        adb_server.adb("disconnect", daemon.address)
        daemon.close()
