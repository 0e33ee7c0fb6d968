"""Browser tasks (AndroidWorld: BrowserMaze, BrowserMultiply).

As in AndroidWorld, the task page is ``task.html`` in Download; the agent starts on
the home screen, opens it from the Files app and it opens in Chrome. Success is
the page script's state in Chrome, never the screen.
"""

from __future__ import annotations

import math
import random
from typing import Any, ClassVar

from benchmark import data
from benchmark.apps.browser import ChromeApp
from benchmark.apps.files import FilesApp
from benchmark.apps.web.maze import generate_maze, shortest_path
from benchmark.apps.web.multiply import CLICKS, multiply_numbers
from benchmark.plan import PlanStep, T, enter, open_app, tap, type_into
from benchmark.sim.storage import ROOT
from benchmark.tasks import _storage_seed as seed
from benchmark.tasks.base import Task

TASK_PAGE = f"{ROOT}/Download/task.html"
PREAMBLE = "Open the file task.html in Downloads in the file manager; when prompted open it with Chrome."


class _BrowserTask(Task):
    abstract = True
    apps = (FilesApp.package, ChromeApp.package)
    tags = ("browser",)
    page: ClassVar[str] = ""  # file in benchmark/data/pages
    script: ClassVar[str] = ""  # the page script whose state says "solved"

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"browser_task_seed": rng.randint(0, 2**32 - 1)}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        html = data.text(f"pages/{self.page}").replace("%%SEED%%", str(self.params["browser_task_seed"]))
        seed.seed_folder(device, rng, "Download", rng.randint(2, 5), {"task.html"})
        device.storage.write(TASK_PAGE, html, modified=-round(rng.uniform(60, 3_600)))

    def verify(self, device: Any) -> bool:
        chrome: ChromeApp = device.app(ChromeApp.package)  # type: ignore[assignment]
        return any(state.get("solved") for state in chrome.page_states(self.script))

    def _open_page(self) -> list[PlanStep]:
        return [open_app("Files"), tap(T("Download", id="android:id/title")), tap(T("task.html"))]


class BrowserMaze(_BrowserTask):
    template = PREAMBLE + " Then navigate the X to the bottom-right cell, by using the direction buttons."
    reference_steps = 9  # the three steps to open the page + a 6-move route (every seeded maze needs 6)
    page = "maze.html"
    script = "maze"
    tags = ("browser", "case_study_1")

    def route(self) -> list[str]:
        """The button presses of a shortest route through this task's maze."""
        return shortest_path(generate_maze(self.params["browser_task_seed"]))

    def reference_solution(self) -> list[PlanStep]:
        return self._open_page() + [tap(T(move.title())) for move in self.route()]


class BrowserMultiply(_BrowserTask):
    template = (PREAMBLE + f" Then click the button {CLICKS} times, remember the numbers displayed, "
                "and enter their product in the form.")
    reference_steps = 3 + CLICKS + 3
    page = "multiply.html"
    script = "multiply"

    def reference_solution(self) -> list[PlanStep]:
        product = math.prod(multiply_numbers(self.params["browser_task_seed"]))
        return self._open_page() + [tap(T("Click Me")) for _ in range(CLICKS)] + [
            type_into(T(id="answer"), str(product)),
            enter(),  # hides the keyboard so the Submit button is reachable
            tap(T("Submit")),
        ]
