"""The result store of a run directory.

``RUN_DIR/episodes.jsonl`` gets one JSON line per finished episode, appended with a
single write; a line cut short by a crash is ignored on load and trimmed before the
next append, so re-running the same command resumes and never duplicates.
Trajectories (and screenshots) live in ``RUN_DIR/episodes/<id>/``, written to a
temporary folder and renamed into place.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Iterator, Optional

from loguru import logger

EPISODES = "episodes.jsonl"
EPISODE_ID = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]*")  # names one folder under episodes/


def record_problem(rec: Any) -> Optional[str]:
    """Why ``rec`` is not an episode record this store could have written (None when it is)."""
    if not isinstance(rec, dict):
        return f"expected a JSON object, got {type(rec).__name__}"
    eid = rec.get("id")
    if not isinstance(eid, str) or not EPISODE_ID.fullmatch(eid):
        return f"id={str(eid)[:80]!r} is not an episode id (letters, digits, '_', '.', '+', '-')"
    for key, kind in (("task", str), ("perturbation", str), ("agent", str), ("guard", str), ("status", str)):
        if key in rec and rec[key] is not None and not isinstance(rec[key], kind):
            return f"{key}={str(rec[key])[:80]!r} is not a {kind.__name__}"
    return None


class RunStore:
    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "episodes").mkdir(exist_ok=True)
        self.path = self.root / EPISODES

    # -- reading --------------------------------------------------------------------------
    def records(self) -> list[dict[str, Any]]:
        return list(self._iter())

    def _iter(self) -> Iterator[dict[str, Any]]:
        if not self.path.exists():
            return
        with self.path.open("r", encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if not line.endswith("\n"):
                    break  # a line cut short by a crash
                try:
                    rec = json.loads(line)
                except (ValueError, RecursionError):
                    logger.warning("{}:{}: not a JSON record; skipped", self.path, n)
                    continue
                problem = record_problem(rec)
                if problem is not None:
                    logger.warning("{}:{}: {}; skipped", self.path, n, problem)
                    continue
                yield rec

    def done_ids(self) -> set[str]:
        return {r["id"] for r in self._iter()}

    def trajectory(self, episode_id: str) -> Optional[dict[str, Any]]:
        p = self.episode_dir(episode_id) / "trajectory.json"
        if not p.exists():
            return None
        return json.loads(p.read_text(encoding="utf-8"))

    def episode_dir(self, episode_id: str) -> Path:
        return self.root / "episodes" / episode_id

    # -- writing ---------------------------------------------------------------------------
    def _trim_partial(self) -> None:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with self.path.open("rb+") as fh:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) == b"\n":
                return
            fh.seek(0)
            data = fh.read()
            fh.truncate(data.rfind(b"\n") + 1)

    def append(self, record: dict[str, Any]) -> None:
        """Append one episode record atomically (one write of one line)."""
        self._trim_partial()
        line = (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def drop(self, ids: set[str]) -> int:
        """Remove the records of ``ids`` (to run those episodes again): the file is
        rewritten beside itself and renamed into place, so a crash keeps one or the other."""
        if not ids or not self.path.exists():
            return 0
        keep = [r for r in self._iter() if r["id"] not in ids]
        dropped = len(self.records()) - len(keep)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for rec in keep:
                fh.write(json.dumps(rec, separators=(",", ":"), default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        return dropped

    def write_episode(self, episode_id: str, trajectory: dict[str, Any], images: dict[str, bytes]) -> Path:
        """Write the trajectory and images to a temp folder, then rename it into place."""
        final = self.episode_dir(episode_id)
        tmp = final.with_name(final.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        for name, data in images.items():
            (tmp / name).write_bytes(data)
        (tmp / "trajectory.json").write_text(json.dumps(trajectory, default=str), encoding="utf-8")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        return final

    def write_meta(self, name: str, data: Any) -> None:
        (self.root / name).write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
