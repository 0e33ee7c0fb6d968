"""The result store of a run directory.

``RUN_DIR/episodes.jsonl`` gets one JSON line per finished episode, appended with a
single write; a line cut short by a crash is ignored on load and trimmed before the
next append, so re-running the same command resumes and never duplicates.
Trajectories (and screenshots) live in ``RUN_DIR/episodes/<id>/``, written to a
temporary folder and renamed into place.

One run at a time: :meth:`RunStore.exclusive` holds ``RUN_DIR/.run.lock`` (an OS lock,
released when the process ends, however it ends), so a second ``ttir run`` on the same
folder is refused and names the process that holds it. And one spec per folder:
:meth:`RunStore.claim_spec` refuses to resume a folder whose episodes came from another
spec (``--force`` mixes them, keeping the earlier spec as ``spec.N.json``).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import socket
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional

from loguru import logger

from ttir.core.errors import ConfigError, TTIRError

if TYPE_CHECKING:  # pragma: no cover
    from experiments.records import EpisodeRecord

try:
    import fcntl
except ImportError:  # not POSIX: runs on one folder are not kept apart
    fcntl = None  # type: ignore[assignment]

EPISODES = "episodes.jsonl"
SPEC = "spec.json"
LOCK = ".run.lock"
RUN_ONLY_KEYS = ("workers",)  # how fast a run goes, not what it runs: a resume may change them
EPISODE_ID = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]*")  # names one folder under episodes/


def read_json(path: Path) -> Any:
    """A JSON file of a run folder (``spec.json``, a ``trajectory.json``), parsed; a file that is not
    JSON (cut short, edited by hand) raises naming the file, not only the parser's position.

    Args:
        path: the file.

    Returns:
        What it holds.

    Raises:
        ValueError: the file is not valid JSON (or nests too deep to read).
    """
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); `ttir run` writes it: restore it, or run the episodes "
                         "again into a new folder") from None


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


def check_derived_folder(out: Path, source: Path, marker: str, what: str) -> None:
    """Refuse ``--out`` unless it is a new folder or one the same command wrote, before any work.

    A command that writes a folder derived from a run (checkpoints, a tuning dataset) rewrites it;
    pointed at the run itself, a file or a folder of other things, it mixed its files with theirs
    (or failed half-way).

    Args:
        out: the folder to write.
        source: the run it is derived from (never written into).
        marker: the file a folder of this kind holds (``checkpoints.jsonl``, ``steps.jsonl``).
        what: what the folder holds, in words ("the checkpoints", "the dataset").

    Raises:
        ConfigError: ``out`` is ``source``, a file, or a folder with other files and no ``marker``.
    """
    if out.exists() and source.exists() and out.resolve() == source.resolve():
        raise ConfigError(f"--out {out} is the run folder itself; choose another folder for {what}, "
                          f"e.g. --out {source.name}_{marker.split('.')[0]}")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; expected a folder for {what} (a new one, or an earlier "
                          "build's)")
    if _holds_other_things(out, (marker,)):
        raise ConfigError(f"--out {out} holds other files and no {marker} (an earlier build's would hold it); "
                          f"choose a new folder for {what}")


RUN_MARKERS = (EPISODES, SPEC, "run.json", "episodes")  # what a run folder holds from its first moment
# a spec file beside the run it describes (`cd exp && ttir run spec.yaml --out .`) is no other thing
SPEC_SUFFIXES = (".yaml", ".yml")


def check_run_folder(out: Path) -> None:
    """Refuse a folder of other things as a run folder, before anything is written there.

    A new folder, an empty one (hidden files and spec files such as ``spec.yaml`` aside) and an
    earlier run's (resumed) are taken; a folder holding other files (a dataset, checkpoints, one's
    own notes) would get the run's files mixed into it.

    Args:
        out: the run folder asked for.

    Raises:
        ConfigError: ``out`` holds files and none of a run's (:data:`RUN_MARKERS`).
    """
    if _holds_other_things(out, RUN_MARKERS, SPEC_SUFFIXES):
        found = sorted(p.name for p in out.iterdir() if not _ignored(p, SPEC_SUFFIXES))
        raise ConfigError(f"the run folder {out} holds other files ({', '.join(found[:3])}"
                          f"{', …' if len(found) > 3 else ''}) and none of a run's ({', '.join(RUN_MARKERS)}); "
                          "choose a new folder for the run (or an earlier run's, to resume it)")


def _holds_other_things(folder: Path, markers: tuple[str, ...], ignored_suffixes: tuple[str, ...] = ()) -> bool:
    """Whether ``folder`` is a folder with entries (hidden ones such as .DS_Store aside, and files
    ending in ``ignored_suffixes``) but no marker."""
    return (folder.is_dir() and not any((folder / m).exists() for m in markers)
            and any(not _ignored(p, ignored_suffixes) for p in folder.iterdir()))


def _ignored(entry: Path, suffixes: tuple[str, ...]) -> bool:
    return entry.name.startswith(".") or (bool(suffixes) and entry.suffix in suffixes and entry.is_file())


class RunFolderBusy(TTIRError):
    """Another process is running into the same run folder."""


class SpecChanged(ConfigError):
    """A run folder holds episodes of another spec than the one being run into it."""


def spec_changes(old: Any, new: dict[str, Any]) -> list[str]:
    """What differs between two specs (as ``spec.json`` holds them), key by key; ``RUN_ONLY_KEYS`` aside.

    Args:
        old: the recorded spec (anything: a hand-edited or broken file is "another spec").
        new: the spec about to run.

    Returns:
        ``"key: old -> new"`` per changed key, empty when the specs run the same episodes.
    """
    if not isinstance(old, dict):
        return [f"{SPEC}: not a spec ({type(old).__name__})"]

    def short(v: Any) -> str:
        t = json.dumps(v, default=str)
        return t if len(t) <= 60 else t[:57] + "..."

    keys = [k for k in dict.fromkeys([*old, *new]) if k not in RUN_ONLY_KEYS]
    return [f"{k}: {short(old.get(k))} -> {short(new.get(k))}" for k in keys if old.get(k) != new.get(k)]


class RunStore:
    def __init__(self, root: Path | str):
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():  # mkdir's own "File exists" reads as a folder in the way
            raise NotADirectoryError(errno.ENOTDIR, "the run folder is an existing file (expected a folder: a new "
                                     "path, or an earlier run's folder to resume it)", str(self.root))
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "episodes").mkdir(exist_ok=True)
        self.path = self.root / EPISODES

    # -- reading --------------------------------------------------------------------------
    def records(self) -> list[dict[str, Any]]:
        """The episode records as the lines hold them (plain dicts)."""
        return list(self._iter())

    def episode_records(self) -> list["EpisodeRecord"]:
        """The episode records, typed (``experiments.records``); a line whose fields have the
        wrong type is skipped with a warning naming the field, like a line that is not JSON."""
        from experiments.records import EpisodeRecord, RecordError

        out = []
        for n, rec in self._numbered():
            try:
                out.append(EpisodeRecord.parse(rec, f"{self.path}:{n}"))
            except RecordError as exc:
                logger.warning("{}; skipped", exc)
        return out

    def _iter(self) -> Iterator[dict[str, Any]]:
        return (rec for _, rec in self._numbered())

    def _numbered(self) -> Iterator[tuple[int, dict[str, Any]]]:
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
                yield n, rec

    def done_ids(self) -> set[str]:
        return {r["id"] for r in self._iter()}

    def trajectory(self, episode_id: str) -> Optional[dict[str, Any]]:
        p = self.episode_dir(episode_id) / "trajectory.json"
        if not p.exists():
            return None
        return read_json(p)

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

    # -- one run, one spec -------------------------------------------------------------
    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the run folder for this process while the block runs.

        Raises:
            RunFolderBusy: another process holds it (the message names it).
        """
        if fcntl is None:
            yield
            return
        fh = (self.root / LOCK).open("a+", encoding="utf-8")
        try:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read(300).strip() or "another process"
                raise RunFolderBusy(f"run folder {self.root} is in use by {holder}: two runs into one folder would "
                                    "record episodes twice; wait for that run to end, or choose another --out") from None
            fh.seek(0)
            fh.truncate()
            fh.write(f"ttir run pid {os.getpid()} on {socket.gethostname()} since "
                     f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n")
            fh.flush()
            yield
        finally:
            fh.close()  # releases the lock

    def claim_spec(self, spec: dict[str, Any], *, force: bool = False) -> None:
        """Record ``spec`` as this folder's spec, refusing to mix episodes of two specs.

        Args:
            spec: the spec about to run (``ExperimentSpec.model_dump(mode="json")``).
            force: resume even though the recorded spec differs (the earlier spec is kept
                as ``spec.N.json``, and a warning says so).

        Raises:
            SpecChanged: the folder holds episodes and its recorded spec differs.
        """
        path = self.root / SPEC
        if path.exists() and self.path.exists() and self.path.stat().st_size > 0:
            try:
                old: Any = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, RecursionError):
                old = None
            changed = spec_changes(old, spec)
            if changed and not force:
                raise SpecChanged(
                    f"run folder {self.root} holds episodes of another spec ({'; '.join(changed[:5])}"
                    f"{'; …' if len(changed) > 5 else ''}): resuming would mix two specs' episodes in one report. "
                    "Run into a new --out, or pass --force to resume anyway (the earlier spec is kept beside it)")
            if changed:
                n = 1
                while (self.root / f"spec.{n}.json").exists():
                    n += 1
                os.replace(path, self.root / f"spec.{n}.json")
                logger.warning("{}: resuming with a changed spec ({}); the earlier one is kept as spec.{}.json",
                               self.root, "; ".join(changed[:5]), n)
        self.write_meta(SPEC, spec)

    def write_meta(self, name: str, data: Any) -> None:
        (self.root / name).write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
