"""Files, Chrome (HTML renderer + page scripts) and Audio Recorder: behaviour and
robustness of their tasks' reference solutions under layout/theme changes."""

from __future__ import annotations

from typing import Any, Optional

import pytest

from benchmark import SimDevice, data, make_task, run_episode
from benchmark.agents import ReferenceAgent
from benchmark.apps.audio_recorder import BYTES_PER_SECOND, RECORDINGS_DIR, size_for
from benchmark.apps.browser import ChromeApp
from benchmark.apps.web import RenderContext, parse, parse_call, render_page, script_for
from benchmark.apps.web.maze import WALL, generate_maze, shortest_path
from benchmark.plan import PlanStep, T, ground, long_press, open_app, tap
from benchmark.ui.widgets import Widget
from ttir.core.types import Action, Observation, UIElement

TASK_PAGE = "/sdcard/Download/task.html"
MY_TASKS = [
    "FilesDeleteFile", "FilesDeleteMultipleFiles", "FilesMoveFile", "FilesRenameFile",
    "BrowserMaze", "BrowserMultiply",
    "AudioRecorderRecordAudio", "AudioRecorderRecordAudioWithFileName",
    "AudioRecorderDeleteRecording", "AudioRecorderRenameRecording",
]


# ------------------------------------------------------------------ helpers


def _do(device: SimDevice, *steps: PlanStep) -> Observation:
    for step in steps:
        action = ground(step, device.observe())
        assert action is not None, f"{step.describe()} is not on screen"
        device.execute(action)
    return device.observe()


def _open_page(device: SimDevice, page: str, seed: int) -> ChromeApp:
    device.storage.write(TASK_PAGE, data.text(f"pages/{page}").replace("%%SEED%%", str(seed)))
    device.open_url(TASK_PAGE)
    return device.app("Chrome")  # type: ignore[return-value]


def _ancestors(obs: Observation, e: UIElement) -> list[UIElement]:
    out, p = [], e.parent
    while p is not None:
        out.append(obs.elements[p])
        p = obs.elements[p].parent
    return out


def _maze_state(chrome: ChromeApp) -> dict[str, Any]:
    (state,) = chrome.page_states("maze")
    return state


def _button(obs: Observation, label: str) -> UIElement:
    (b,) = [e for e in obs.elements if e.text == label and e.class_name == "android.widget.Button"]
    return b


def _click(device: SimDevice, point: tuple[int, int]) -> None:
    device.execute(Action(action_type="click", x=point[0], y=point[1]))


# ------------------------------------------------------------------ HTML renderer


def test_renderer_maps_html_to_android_widgets():
    doc = parse(
        "<html><head><title>T</title><style>.gone { display: none } #big { font-size: 30px }"
        " .bar button { background-color: #ff0000 }</style></head><body>"
        "<h1 id='big'>Hello <b>web</b></h1><p class='gone'>hidden</p><div hidden>also hidden</div>"
        "<div class='bar' style='display: flex'><button id='go' onclick=\"go('x')\">Go</button><span id='s'>tail</span></div>"
        "<table><tr><td>a</td><td>b</td></tr></table><input id='q' placeholder='Type here'></body></html>")
    calls: list[tuple[str, str]] = []
    body = render_page(doc, RenderContext(on_call=lambda eid, code: calls.append((eid, code)), field_key=lambda k: f"web:{k}"))

    def walk(w: Widget):
        yield w
        for c in w.children:
            yield from walk(c)

    nodes = list(walk(body))
    texts = {w.text: w for w in nodes if w.kind == "text"}
    assert "Hello web" in texts and texts["Hello web"].id == "big" and texts["Hello web"].style["size"] == 30
    assert "hidden" not in texts and "also hidden" not in texts
    assert texts["tail"].id == "s" and {"a", "b"} <= set(texts)
    (go,) = [w for w in nodes if w.kind == "button"]
    assert go.class_name == "android.widget.Button" and go.style["bg"] == (255, 0, 0)
    go.on_click()
    assert calls == [("go", "go('x')")] and parse_call(calls[0][1]) == ("go", ["x"])
    (field,) = [w for w in nodes if w.kind == "field"]
    assert field.hint == "Type here" and field.state["key"] == "web:q" and field.class_name == "android.widget.EditText"


def test_page_script_errors_name_the_value():
    with pytest.raises(ValueError, match="onclick='alert"):
        parse_call("alert(1) + 2")
    with pytest.raises(KeyError, match="data-script='nope'"):
        script_for(parse("<script type='text/x-page-script' data-script='nope'></script>"))


def test_maze_page_is_a_webview_with_four_separate_buttons(device):
    _open_page(device, "maze.html", 7)
    obs = device.observe()
    assert obs.foreground.startswith("com.android.chrome/")
    (web,) = [e for e in obs.elements if e.class_name == "android.webkit.WebView"]
    assert web.text == "Maze Puzzle" and web.package == "com.android.chrome"
    buttons = [_button(obs, label) for label in ("Up", "Down", "Left", "Right")]
    assert len({b.bounds for b in buttons}) == 4
    for b in buttons:
        assert web in _ancestors(obs, b) and b.clickable
    assert any(e.text == "X" and e.class_name == "android.widget.TextView" for e in obs.elements)


# ------------------------------------------------------------------ maze behaviour


@pytest.mark.parametrize("change", CHANGES_MOVING_BUTTONS := [
    dict(font_scale=1.35), dict(density_scale=0.76, size_scale=0.88), dict(orientation="landscape")])
def test_direction_buttons_move_with_font_density_and_orientation(device, change):
    _open_page(device, "maze.html", 11)
    before = {label: _button(device.observe(), label).bounds for label in ("Up", "Down", "Left", "Right")}
    device.configure(**change)
    if not any(e.text == "Right" for e in device.observe().elements):  # landscape: the page scrolls
        device.execute(Action(action_type="scroll", direction="down"))
    after = {label: _button(device.observe(), label).bounds for label in before}
    assert all(after[label] != before[label] for label in before)


def _seed_with_wall_right_of_start() -> int:
    return next(s for s in range(200) if generate_maze(s)[0][1] == WALL)


def test_maze_move_is_blocked_by_a_wall(device):
    seed = _seed_with_wall_right_of_start()
    chrome = _open_page(device, "maze.html", seed)
    _click(device, _button(device.observe(), "Right").center)
    assert (_maze_state(chrome)["row"], _maze_state(chrome)["col"]) == (0, 0)
    _click(device, _button(device.observe(), "Down").center)  # the corridor goes down when right is a wall
    assert (_maze_state(chrome)["row"], _maze_state(chrome)["col"]) == (1, 0)


def test_maze_shortest_route_reaches_the_goal_and_shows_success(device):
    seed = 4242
    chrome = _open_page(device, "maze.html", seed)
    for move in shortest_path(generate_maze(seed)):
        _click(device, _button(device.observe(), move.title()).center)
    assert _maze_state(chrome)["solved"] is True
    assert any(e.text == "Success!" for e in device.observe().elements)


@pytest.mark.parametrize("change", [dict(density_scale=0.76, size_scale=0.88), dict(density_scale=1.2)])
def test_stale_right_coordinate_does_nothing_after_a_layout_change(device, change):
    """Case study 1: a tap on where Right used to be does not move the X right."""
    seed = next(s for s in range(200) if generate_maze(s)[0][1] != WALL)  # Right is a legal first move
    chrome = _open_page(device, "maze.html", seed)
    old = _button(device.observe(), "Right")
    device.configure(**change)
    new = _button(device.observe(), "Right")
    assert new.bounds != old.bounds
    x1, y1, x2, y2 = new.bounds
    assert not (x1 <= old.center[0] < x2 and y1 <= old.center[1] < y2)
    _click(device, old.center)
    assert _maze_state(chrome)["col"] == 0
    _click(device, new.center)
    assert _maze_state(chrome)["col"] == 1


def test_multiply_page_accepts_only_the_product(device):
    chrome = _open_page(device, "multiply.html", 99)
    for _ in range(5):
        _do(device, tap("Click Me"))
    (state,) = chrome.page_states("multiply")
    product = 1
    for n in state["numbers"]:
        product *= n
    _do(device, PlanStep(kind="type", target=T(id="answer"), text=str(product + 1)), tap("Submit"))
    assert state["solved"] is False
    _do(device, PlanStep(kind="type", target=T(id="answer"), text=str(product)), tap("Submit"))
    assert state["solved"] is True


# ------------------------------------------------------------------ Files


def _files_fixture(device: SimDevice) -> None:
    device.storage.write("/sdcard/Documents/report.pdf", "", size=123_456, modified=-86_400 * 3)
    device.storage.write("/sdcard/Documents/notes.txt", "hello", modified=-86_400 * 10)
    device.storage.write(TASK_PAGE, data.text("pages/maze.html").replace("%%SEED%%", "1"))


def test_moving_a_file_updates_storage(device):
    _files_fixture(device)
    _do(device, open_app("Files"), tap("Documents"), long_press("report.pdf"), tap(T(desc="More options")),
        tap("Move to…"), tap(T("Download", id="android:id/title")), tap("Move here"))
    moved = device.storage.read("/sdcard/Download/report.pdf")
    assert moved is not None and moved.size == 123_456
    assert not device.storage.exists("/sdcard/Documents/report.pdf")
    assert device.storage.exists("/sdcard/Documents/notes.txt")


def test_delete_needs_confirmation(device):
    _files_fixture(device)
    _do(device, open_app("Files"), tap("Documents"), long_press("notes.txt"), tap(T(desc="Delete")))
    obs = _do(device, tap(T("Cancel", id="android:id/button2")))
    assert device.storage.exists("/sdcard/Documents/notes.txt")
    assert any(e.text == "1 selected" for e in obs.elements)
    _do(device, tap(T(desc="Delete")), tap(T("OK", id="android:id/button1")))
    assert not device.storage.exists("/sdcard/Documents/notes.txt")
    assert device.storage.exists("/sdcard/Documents/report.pdf")


def test_file_rows_show_size_and_locale_date(device):
    _files_fixture(device)
    obs = _do(device, open_app("Files"), tap("Documents"))

    def detail(rid: str, nth: int) -> str:
        return [e.text for e in obs.elements if e.resource_id.endswith(f"id/{rid}")][nth]

    assert detail("size", 1) == "123 kB" and detail("date", 1) == "Oct 12, 2023"
    device.configure(date_format="EU")
    obs = device.observe()
    assert detail("date", 1) == "12 Oct 2023"


def test_opening_an_html_file_launches_chrome(device):
    _files_fixture(device)
    obs = _do(device, open_app("Files"), tap(T("Download", id="android:id/title")), tap("task.html"))
    assert obs.foreground.startswith("com.android.chrome/")
    assert any(e.class_name == "android.webkit.WebView" and e.text == "Maze Puzzle" for e in obs.elements)


# ------------------------------------------------------------------ Audio Recorder


def _progress(device: SimDevice) -> str:
    return device.observe().find(resource_id="com.dimowner.audiorecorder:id/txt_progress")[0].text


def test_recording_duration_follows_the_simulated_clock(device):
    _do(device, open_app("Audio Recorder"))
    started = device.clock.elapsed  # recording starts when the tap lands
    _do(device, tap(T(id="btn_record")))
    device.execute(Action(action_type="wait", seconds=10))
    recorded = device.clock.elapsed - started
    assert recorded >= 12 and _progress(device) == f"00:{int(recorded):02d}"
    _do(device, tap(T(desc="Pause recording")))  # pausing stops the timer
    device.execute(Action(action_type="wait", seconds=20))
    assert _progress(device) == f"00:{int(recorded):02d}"
    resumed = device.clock.elapsed
    _do(device, tap(T(desc="Resume recording")))
    device.execute(Action(action_type="wait", seconds=3))
    recorded += device.clock.elapsed - resumed
    _do(device, tap(T(id="btn_record_stop")))
    (rec,) = device.storage.listdir(RECORDINGS_DIR)[1]
    assert rec.name == "Record-1.m4a" and rec.size == size_for(recorded)
    obs = _do(device, tap(T("Save", id="dialog_positive_btn")), tap(T(desc="Records")))
    assert [e.text for e in obs.elements if e.resource_id.endswith("id/list_item_name")] == ["Record-1"]
    assert [e.text for e in obs.elements if e.resource_id.endswith("id/list_item_duration")] == [f"00:{int(recorded):02d}"]


def test_rename_dialog_saves_the_typed_name_and_rejects_duplicates(device):
    device.storage.write(f"{RECORDINGS_DIR}/taken.m4a", "", size=BYTES_PER_SECOND * 5)
    _do(device, open_app("Audio Recorder"), tap(T(id="btn_record")), tap(T(id="btn_record_stop")))
    _do(device, PlanStep(kind="type", target=T(id="input_name"), text="taken"), tap(T("Save", id="dialog_positive_btn")))
    assert device.storage.exists(f"{RECORDINGS_DIR}/Record-1.m4a")  # duplicate name: dialog stays, file unchanged
    _do(device, PlanStep(kind="type", target=T(id="input_name"), text="standup notes"), tap(T("Save", id="dialog_positive_btn")))
    assert device.storage.exists(f"{RECORDINGS_DIR}/standup notes.m4a")
    assert not device.storage.exists(f"{RECORDINGS_DIR}/Record-1.m4a")


# ------------------------------------------------------------------ tasks under perturbed settings


CHANGES = [dict(font_scale=1.35), dict(density_scale=0.76, size_scale=0.88), dict(orientation="landscape"),
           dict(dark_theme=True)]


class _ReconfiguredDevice(SimDevice):
    """Applies settings right after ``reset(task)``, as state perturbations will."""

    def __init__(self, change: dict[str, Any]):
        super().__init__()
        self.change = change

    def reset(self, task: Optional[Any] = None) -> Observation:
        super().reset(task)
        self.configure(**self.change)
        return self.observe()


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("name", MY_TASKS)
def test_reference_solution_survives_layout_and_theme_changes(name, change):
    task = make_task(name, seed=3)
    device = _ReconfiguredDevice(change)
    result = run_episode(device, task, ReferenceAgent(task.reference_solution()))
    assert result.success, f"{name} {change}: {[s.agent_step.get('summary') for s in result.trajectory]}"
    assert not [s.action_error for s in result.trajectory if s.action_error]
