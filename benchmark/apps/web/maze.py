"""AndroidWorld's BrowserMaze page behaviour: a seeded 4x4 maze of wall cells,
an X that the Up/Down/Left/Right buttons move, "Success!" at the bottom-right."""

from __future__ import annotations

import random
from collections import deque
from functools import lru_cache
from typing import Any

from benchmark.apps.web.dom import Document, element
from benchmark.apps.web.scripts import PageScript, register

WALL, OPEN, GOAL = "#", " ", "$"
MOVES: dict[str, tuple[int, int]] = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


def _neighbours(cell: tuple[int, int], size: int) -> list[tuple[int, int]]:
    r, c = cell
    return [(r + dr, c + dc) for dr, dc in MOVES.values() if 0 <= r + dr < size and 0 <= c + dc < size]


@lru_cache(maxsize=8)
def _corridors(size: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Every route from the top-left to the bottom-right cell that never runs
    alongside itself (so walls can fill every cell beside it)."""
    goal = (size - 1, size - 1)
    found: list[tuple[tuple[int, int], ...]] = []

    def extend(route: list[tuple[int, int]]) -> None:
        if route[-1] == goal:
            found.append(tuple(route))
            return
        for nxt in _neighbours(route[-1], size):
            if nxt in route or any(n in route[:-1] for n in _neighbours(nxt, size)):
                continue
            route.append(nxt)
            extend(route)
            route.pop()

    extend([(0, 0)])
    return tuple(found)


def generate_maze(seed: int, size: int = 4, dead_ends: float = 0.5) -> list[str]:
    """A seeded maze of wall cells: one corridor from the top-left corner to the
    bottom-right goal (longer corridors more likely) plus open dead-end cells that
    branch off it without creating a shortcut; every other cell is a wall."""
    rng = random.Random(seed)
    corridors = _corridors(size)
    route = rng.choices(corridors, weights=[len(c) ** 2 for c in corridors])[0]
    open_cells = set(route)
    walls = [(r, c) for r in range(size) for c in range(size) if (r, c) not in open_cells]
    rng.shuffle(walls)
    for cell in walls:
        if sum(n in open_cells for n in _neighbours(cell, size)) == 1 and rng.random() < dead_ends:
            open_cells.add(cell)
    grid = [[OPEN if (r, c) in open_cells else WALL for c in range(size)] for r in range(size)]
    grid[size - 1][size - 1] = GOAL
    return ["".join(line) for line in grid]


def can_move(layout: list[str], r: int, c: int) -> bool:
    return 0 <= r < len(layout) and 0 <= c < len(layout[r]) and layout[r][c] != WALL


def shortest_path(layout: list[str], start: tuple[int, int] = (0, 0)) -> list[str]:
    """The button presses (``up`` / ``down`` / ``left`` / ``right``) of a shortest route to the goal."""
    goal = (len(layout) - 1, len(layout[-1]) - 1)
    prev: dict[tuple[int, int], tuple[tuple[int, int], str]] = {}
    queue = deque([start])
    seen = {start}
    while queue:
        cur = queue.popleft()
        if cur == goal:
            path: list[str] = []
            while cur != start:
                cur, move = prev[cur]
                path.append(move)
            return path[::-1]
        for name, (dr, dc) in MOVES.items():
            nxt = (cur[0] + dr, cur[1] + dc)
            if nxt not in seen and can_move(layout, *nxt):
                seen.add(nxt)
                prev[nxt] = (cur, name)
                queue.append(nxt)
    raise ValueError(f"maze layout={layout!r} has no route from {start} to the goal")


@register
class MazeScript(PageScript):
    name = "maze"

    def init_state(self, params: dict[str, str]) -> dict[str, Any]:
        seed = params.get("seed", "")
        if not seed.isdigit():
            raise ValueError(f"maze page data-seed={seed!r} is not a non-negative integer")
        return {"layout": generate_maze(int(seed)), "row": 0, "col": 0, "solved": False, "moves": 0}

    def render(self, doc: Document, state: dict[str, Any]) -> None:
        if state["solved"]:
            doc.body.children = [element("h1", "Success!")]
            return
        maze = doc.by_id("maze")
        if maze is None:
            return
        maze.clear()
        for r, line in enumerate(state["layout"]):
            row_el = maze.append(element("div", class_="row"))
            for c, cell in enumerate(line):
                cls = "cell wall" if cell == WALL else "cell"
                here = (r, c) == (state["row"], state["col"])
                if cell == GOAL and not here:
                    cls = "cell goal"
                row_el.append(element("div", "X" if here else "", class_=cls + (" character" if here else "")))  # type: ignore[union-attr]

    def call(self, state: dict[str, Any], fn: str, args: list[str], values: dict[str, str]) -> None:
        if fn != "moveCharacter" or not args or args[0] not in MOVES or state["solved"]:
            return
        dr, dc = MOVES[args[0]]
        r, c = state["row"] + dr, state["col"] + dc
        if not can_move(state["layout"], r, c):
            return  # a wall or the edge: the X stays where it is
        state.update(row=r, col=c, moves=state["moves"] + 1)
        if state["layout"][r][c] == GOAL:
            state["solved"] = True
