"""viewer.html in a real browser (headless Chromium over the DevTools protocol): every episode
is rendered, nothing logs an error, the page opens on the first failure with its screenshots,
labels never overlap, and at 800 px nothing is cut off — for the viewer that loads the run's
screenshots and for the self-contained one, which must work alone in another folder.

The run's texts are hostile on purpose: an agent's goal and thought carrying ``<!--<script>``,
``</script>`` and an ``<img onerror>``, and U+2028 (issue 14.5: the data island used to
swallow the viewer's own script, leaving a blank page).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.browser_support import Chromium, file_url, find_chromium
from experiments.report import write_report
from experiments.runner import run
from experiments.spec import ExperimentSpec

pytestmark = pytest.mark.xdist_group("chromium")  # one browser at a time on the 2-core CI machine

HOSTILE = "<!--<script> </script><img src=x onerror=\"window.__pwned=1\"> \u2028 & done"
WIDTH = 800


@pytest.fixture(scope="module")
def chromium_binary() -> str:
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium here: install Debian's `chromium` package (apt-get install -y chromium; .ci/run does)")
    return binary


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("browser_run")
    spec = ExperimentSpec(name="browser", tasks=["SystemBrightnessMax", "ContactsDeleteContact"],
                          perturbations=["clean", "popup_security"], agents=[{"name": "replay", "kind": "replay"}],
                          guard=["off", "rules"], screenshots="failures", budget_multiplier=4, workers=1)
    run(spec, out, workers=1, progress=False)
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(x) for x in lines]
    for r in records:  # hostile text wherever agent or app text reaches the page
        r["goal"] = HOSTILE
        path = out / "episodes" / r["id"] / "trajectory.json"
        traj = json.loads(path.read_text(encoding="utf-8"))
        for st in traj["trajectory"][:2]:
            st["agent_step"]["thought"] = HOSTILE
        path.write_text(json.dumps(traj), encoding="utf-8")
    (out / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return out


def _viewer(run_dir: Path, tmp_path: Path, self_contained: bool) -> tuple[Path, list[dict]]:
    out = tmp_path / ("shared" if self_contained else "report")
    write_report(run_dir, out, plots=False, self_contained=self_contained)
    records = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    viewer = out / "viewer.html"
    if self_contained:  # shareable: it must work alone, far from the run directory
        alone = tmp_path / "elsewhere"
        alone.mkdir()
        shutil.copy(viewer, alone / "viewer.html")
        viewer = alone / "viewer.html"
    return viewer, records


OVERLAPS = """(() => {
  const boxes = [".shot-label", ".shot-frame", ".shot-caption", ".step-info"].map((s) => document.querySelector(s))
    .filter((e) => e && e.offsetParent !== null).map((e) => [e.className, e.getBoundingClientRect()]);
  const hits = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [n1, a] = boxes[i], [n2, b] = boxes[j];
    if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) hits.push(n1 + " / " + n2);
  }
  const inner = window.innerWidth;
  const cut = [".step-info", ".shot", ".ep-meta", "#list"].map((s) => document.querySelector(s))
    .filter((e) => e && e.getBoundingClientRect().right > inner + 0.5).map((e) => e.className || e.id);
  return {hits, cut, scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth};
})()"""


@pytest.mark.parametrize("self_contained", [False, True], ids=["linked", "self-contained"])
def test_viewer_renders_every_episode_and_opens_on_the_first_failure(chromium_binary, run_dir, tmp_path,
                                                                     self_contained):
    viewer, records = _viewer(run_dir, tmp_path, self_contained)
    html = viewer.read_text(encoding="utf-8")
    if self_contained:
        assert "episodes/" not in html and "data:image/jpeg;base64," in html
    with Chromium(chromium_binary) as browser:
        browser.open(file_url(viewer), WIDTH, 900)
        assert browser.evaluate("document.querySelectorAll('#list a.ep').length") == len(records)
        assert browser.evaluate("document.querySelectorAll('#list .group').length") == 2  # one per task
        listed = browser.evaluate("[...document.querySelectorAll('#list a.ep')].map((a) => a.dataset.id)")
        first_failure = next(i for i in listed if not next(r for r in records if r["id"] == i)["success"])
        assert browser.evaluate("document.querySelector('#list a.active').dataset.id") == first_failure
        assert browser.evaluate("document.querySelector('.ep-title .fail') !== null")
        assert browser.evaluate("document.querySelector('.shot-img').complete && "
                                "document.querySelector('.shot-img').naturalWidth") > 0
        assert browser.evaluate("document.querySelector('.ep-goal').textContent") == HOSTILE
        assert browser.evaluate("window.__pwned === undefined && !document.querySelector('img[src=x]')")
        for _ in range(6):  # step through: the label, the screenshot and the details never overlap
            layout = browser.evaluate(OVERLAPS)
            assert not layout["hits"] and not layout["cut"], layout
            assert layout["scroll"] <= layout["client"], f"cut off at {WIDTH} px: {layout}"
            browser.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}))")
        recovered = browser.evaluate("[...document.querySelectorAll('#list a.ep')].filter((a) => "
                                     "a.querySelector('.tag')).length")
        assert recovered == sum(r["success"] and bool((r.get("guard_summary") or {}).get("sessions")) for r in records)
        assert browser.problems == [], browser.problems


def test_a_hostile_data_island_cannot_end_the_viewer_script(run_dir, tmp_path):
    """14.5 without a browser: the JSON island holds no '<' at all, and reads back unchanged."""
    import re

    viewer, _ = _viewer(run_dir, tmp_path, False)
    html = viewer.read_text(encoding="utf-8")
    island = re.search(r'<script id="run-data" type="application/json">(.*?)</script>', html, re.S).group(1)
    assert "<" not in island and ">" not in island and "\u2028" not in island
    data = json.loads(island)
    assert {e["goal"] for e in data["episodes"]} == {HOSTILE}
    assert html.count("<script") == 2  # the data island and the viewer's own script, nothing injected


READABLE = """(() => {
  const img = document.querySelector('.shot-img'), frame = document.querySelector('.shot-frame');
  const i = img.getBoundingClientRect(), f = frame.getBoundingClientRect();
  return {width: i.width, height: i.height, natural: [img.naturalWidth, img.naturalHeight], frame: f.height};
})()"""


@pytest.mark.parametrize("width", [1280, 900])
def test_the_phone_is_shown_whole_at_a_readable_size(chromium_binary, run_dir, tmp_path, width):
    viewer, _ = _viewer(run_dir, tmp_path, False)
    with Chromium(chromium_binary) as browser:
        browser.open(file_url(viewer), width, 900)
        shot = browser.evaluate(READABLE)
        assert shot["width"] >= 360, shot  # the run keeps 360-px screenshots: never shrunk below that
        ratio = shot["natural"][1] / shot["natural"][0]
        assert abs(shot["height"] - shot["width"] * ratio) < 2, shot  # its whole height, not cut
        assert shot["frame"] >= shot["height"] - 0.5, shot
        layout = browser.evaluate(OVERLAPS)
        assert layout["hits"] == [] and layout["cut"] == [], layout
        assert browser.problems == [], browser.problems


def test_the_header_summarises_the_run_and_links_the_report(chromium_binary, run_dir, tmp_path):
    viewer, _ = _viewer(run_dir, tmp_path, False)
    with Chromium(chromium_binary) as browser:
        browser.open(file_url(viewer), WIDTH, 900)
        lines = browser.evaluate("[...document.querySelectorAll('#summary li')].map((li) => li.textContent)")
        assert [line.split(":")[0] for line in lines[:3]] == ["Episodes", "Success", "Guard effect"]
        href = browser.evaluate("document.querySelector('#summary a').getAttribute('href')")
        assert href == "report.md" and (viewer.parent / href).is_file()


def test_guard_events_and_steps_read_as_words(chromium_binary, run_dir, tmp_path):
    viewer, records = _viewer(run_dir, tmp_path, False)
    acted = next(r for r in records if (r.get("guard_summary") or {}).get("sessions"))
    with Chromium(chromium_binary) as browser:
        browser.open(file_url(viewer) + "#" + acted["id"], WIDTH, 900)
        texts = []
        for _ in range(acted["steps"] + 2):
            texts.append(browser.evaluate("document.querySelector('.step-label').textContent"))
            texts += browser.evaluate("[...document.querySelectorAll('ul.guard li')].map((li) => li.textContent)")
            browser.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}))")
        said = " | ".join(texts)
        assert "recovery session 1 opened" in said and "recovery session 1 closed" in said, said
        for raw in ("session=", "outcome=", "session_closed", "{"):
            assert raw not in said, (raw, said)
        assert f"({acted['steps']} steps in all)" in said
        meta = browser.evaluate("document.querySelector('.ep-meta').textContent")
        assert f"{acted['steps']} steps of a budget of" in meta
        assert browser.problems == [], browser.problems
