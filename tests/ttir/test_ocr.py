"""ttir.core.ocr and Observation.from_screenshot on real screenshots the simulator draws
(Pillow): the text a person reads is found where it is drawn, reads are cached by
screen content, and without the ttir[ocr] extra the error names it."""

from __future__ import annotations

import sys
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from benchmark import SimDevice, make_task
from diagnosers.signals.text import normalize
from ttir.core import ocr
from ttir.core.types import Action, Observation

pytestmark = pytest.mark.skipif(not ocr.available(), reason="needs the ttir[ocr] extra")


@pytest.fixture(scope="module")
def screens() -> list[Observation]:
    """Three simulated 1080x2400 screens: the home screen, Contacts' list, its new-contact form."""
    d = SimDevice()
    out = [d.reset(make_task("ContactsAddContact", seed=0))]
    d.execute(Action(action_type="open_app", app_name="Contacts"))
    out.append(d.observe())
    fab = (out[-1].find(content_desc="Create contact") or out[-1].find(text="Create contact"))[0]
    d.execute(Action(action_type="click", x=fab.center[0], y=fab.center[1]))
    out.append(d.observe())
    return out


def _labels(obs: Observation) -> dict[str, tuple[int, int, int, int]]:
    """The tree's visible one-line texts (what OCR should read), by normalised text."""
    h = obs.screen_size[1]
    return {normalize(e.text): e.bounds for e in obs.elements
            if e.text and len(e.text) >= 4 and "\n" not in e.text and e.bounds[1] > 0.05 * h
            and e.bounds[3] - e.bounds[1] < 200 and e.bounds[2] - e.bounds[0] > 40}


def _close(label: str, line: str) -> bool:
    a, b = label.replace(" ", ""), line.replace(" ", "").rstrip(".…")
    return a == b or (len(b) >= 4 and a.startswith(b)) or SequenceMatcher(None, a, b).ratio() >= 0.85


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_reads_the_text_the_simulator_drew_where_it_drew_it(screens):
    found = total = 0
    for tree in screens:
        obs = Observation.from_screenshot(tree.screenshot, tree.foreground)
        lines = [(normalize(e.text), e.bounds) for e in obs.elements]
        for text, box in _labels(tree).items():
            total += 1
            # read: a line over its node says it, up to a misread character or a lost space ("0ct", "Firstname")
            if any(_close(text, t) and _overlap(box, b) for t, b in lines):
                found += 1
    assert total >= 12
    assert found / total >= 0.9, f"OCR found {found} of {total} labels"


def test_from_screenshot_elements_have_bounds_in_the_image_and_say_they_came_from_ocr(screens):
    img = screens[2].screenshot
    obs = Observation.from_screenshot(img, "com.google.android.contacts/.Editor", step=3, time=1.5,
                                      tree_error="ERROR: could not get idle state.")
    w, h = img.size
    assert obs.source == "ocr" and obs.xml is None and obs.screenshot is img
    assert obs.screen_size == (w, h) and obs.orientation == "portrait" and obs.step == 3 and obs.time == 1.5
    assert obs.package == "com.google.android.contacts" and obs.tree_error.startswith("ERROR")
    assert len(obs.elements) >= 5
    for e in obs.elements:
        assert e.source == "ocr" and e.text and not e.clickable and e.parent is None
        x1, y1, x2, y2 = e.bounds
        assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h
    assert [e.bounds[1] for e in obs.elements] == sorted(e.bounds[1] for e in obs.elements)  # top to bottom
    assert obs.summary()["source"] == "ocr" and "tree_error" in obs.summary()
    # no line of text is a node of a dump: the XML of a tree-less screen is an empty hierarchy
    assert "<node" not in obs.to_xml()


def test_a_screen_is_read_once_the_same_image_or_an_identical_capture(screens):
    img = screens[1].screenshot
    ocr.CACHE.clear()
    first = Observation.from_screenshot(img)
    assert (ocr.CACHE.misses, ocr.CACHE.hits) == (1, 0)
    again = Observation.from_screenshot(img)
    copy = Observation.from_screenshot(img.copy())  # a new capture of the same screen: a content hit
    assert (ocr.CACHE.misses, ocr.CACHE.hits) == (1, 2)
    assert [(e.text, e.bounds) for e in again.elements] == [(e.text, e.bounds) for e in first.elements]
    assert [(e.text, e.bounds) for e in copy.elements] == [(e.text, e.bounds) for e in first.elements]
    assert again.elements[0] is not first.elements[0]  # observations never share element objects
    Observation.from_screenshot(screens[2].screenshot)  # another screen: read
    assert ocr.CACHE.misses == 2


def test_a_changed_screen_is_not_a_cache_hit(screens):
    img = screens[1].screenshot.copy()
    ocr.CACHE.clear()
    Observation.from_screenshot(img)
    changed = img.copy()
    changed.paste((20, 20, 20), (300, 900, 340, 940))  # a small dark square: other pixels, another key
    assert ocr.screen_hash(changed) != ocr.screen_hash(img)
    Observation.from_screenshot(changed)
    assert ocr.CACHE.misses == 2


def test_the_models_ship_inside_the_installed_package():
    files = ocr.model_files()
    assert set(files) == {"det", "cls", "rec"}
    root = Path(sys.modules["rapidocr_onnxruntime"].__file__ if "rapidocr_onnxruntime" in sys.modules
                else __import__("rapidocr_onnxruntime").__file__).parent
    for path in files.values():
        assert path.is_file() and path.suffix == ".onnx" and root in path.parents


def test_bad_input_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="PIL image"):
        Observation.from_screenshot(b"\x89PNG not an image")


def test_hostile_screen_text_is_bounded_and_has_no_control_characters():
    cleaned = ocr._clean("Tap\x00here\u202e" + "x" * 500)
    assert len(cleaned) == ocr.MAX_TEXT and "\x00" not in cleaned and "\u202e" not in cleaned


def test_without_the_extra_reading_names_it(monkeypatch, screens):
    monkeypatch.setitem(sys.modules, ocr.ENGINE_PACKAGE, None)  # as if not installed
    assert not ocr.available()
    with pytest.raises(ocr.OCRUnavailable, match=r"ttir\[ocr\]"):
        Observation.from_screenshot(screens[0].screenshot.copy())
    # a device without a tree still observes the screen: its pixels, marked
    obs = ocr.screenshot_observation(screens[0].screenshot, tree_error="the dump holds only its window root")
    assert obs.source == "pixels" and obs.elements == [] and obs.screenshot is screens[0].screenshot


def test_the_core_does_not_import_the_engine_and_works_without_it():
    """Importing ttir and running a guarded episode never loads RapidOCR; hidden, the
    same clean episode runs the same (its screens have trees)."""
    import subprocess

    code = (
        "import sys\n"
        "hide = sys.argv[1] == 'hide'\n"
        "if hide: sys.modules['rapidocr_onnxruntime'] = None\n"
        "import ttir\n"
        "from benchmark import SimDevice, make_task, run_episode\n"
        "from benchmark.agents import ReferenceAgent\n"
        "task = make_task('SystemWifiTurnOn', seed=0)\n"
        "agent = ttir.guard(ReferenceAgent(task.reference_solution()))\n"
        "r = run_episode(SimDevice(), task, agent)\n"
        "assert hide or 'rapidocr_onnxruntime' not in sys.modules, 'the engine was imported'\n"
        "print(r.success, r.steps, sorted({f['source'] for f in agent.report.to_dict()['findings'] if f.get('source')}))\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = [subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, cwd=root, timeout=300)
           for mode in ("keep", "hide")]
    for o in out:
        assert o.returncode == 0, o.stderr[-2000:]
    assert out[0].stdout == out[1].stdout and out[0].stdout.startswith("True")
