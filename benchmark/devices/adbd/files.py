"""The served phone's file system: a few folders and the files tools and ``adb push`` write.

Paths are absolute and normalised (``/storage/emulated/0`` is ``/sdcard``, as
on a phone). Sizes are bounded so a client cannot fill the host's memory.
"""

from __future__ import annotations

import posixpath
import time
from dataclasses import dataclass, field
from typing import Iterable, Optional

S_IFDIR = 0o040000
S_IFREG = 0o100000
DIR_MODE = S_IFDIR | 0o771
FILE_MODE = S_IFREG | 0o660
MAX_FILE_BYTES = 48 * 1024 * 1024  # one push held in memory while it arrives: within the 64 MB a connection may cost
MAX_TOTAL_BYTES = 256 * 1024 * 1024
MAX_FILES = 10_000  # files in all (a phone's test fixtures are a few dozen)
_ALIASES = ("/storage/emulated/0", "/storage/self/primary", "/mnt/sdcard")


class FileError(OSError):
    """A file operation that fails as it would on the phone (the message is strerror-like)."""


@dataclass
class Entry:
    data: bytes
    mode: int = FILE_MODE
    mtime: int = field(default_factory=lambda: int(time.time()))


def normalise(path: str, cwd: str = "/") -> str:
    if not path:
        raise FileError(f"{path!r}: No such file or directory")
    full = posixpath.normpath(posixpath.join(cwd, path))
    full = "/" + full.lstrip("/")
    for alias in _ALIASES:
        if full == alias or full.startswith(alias + "/"):
            full = "/sdcard" + full[len(alias):]
    return full


class FileStore:
    def __init__(self, directories: Iterable[str] = ("/",)):
        self.dirs: set[str] = {"/"}
        self.files: dict[str, Entry] = {}
        self.total_bytes = 0  # kept as files change: summing on every write made many pushes quadratic
        for d in directories:
            self.mkdir(d, parents=True)

    # -- queries -------------------------------------------------------------------------
    def is_dir(self, path: str) -> bool:
        return normalise(path) in self.dirs

    def exists(self, path: str) -> bool:
        p = normalise(path)
        return p in self.dirs or p in self.files

    def stat(self, path: str) -> Optional[tuple[int, int, int]]:
        """(mode, size, mtime), or None when nothing is there."""
        p = normalise(path)
        if p in self.files:
            e = self.files[p]
            return e.mode, len(e.data), e.mtime
        if p in self.dirs:
            return DIR_MODE, 4096, 0
        return None

    def read(self, path: str) -> bytes:
        p = normalise(path)
        if p in self.dirs:
            raise FileError(f"{path}: Is a directory")
        if p not in self.files:
            raise FileError(f"{path}: No such file or directory")
        return self.files[p].data

    def listdir(self, path: str) -> list[str]:
        p = normalise(path)
        if p not in self.dirs:
            raise FileError(f"{path}: No such file or directory" if p not in self.files else f"{path}: Not a directory")
        prefix = p.rstrip("/") + "/"
        names = {q[len(prefix):].split("/", 1)[0] for q in (*self.dirs, *self.files) if q.startswith(prefix) and q != p}
        return sorted(n for n in names if n)

    # -- changes -------------------------------------------------------------------------
    def write(self, path: str, data: bytes, *, append: bool = False, mode: Optional[int] = None,
              mtime: Optional[int] = None) -> None:
        p = normalise(path)
        if p in self.dirs:
            raise FileError(f"{path}: Is a directory")
        parent = posixpath.dirname(p)
        if parent not in self.dirs:
            raise FileError(f"{path}: No such file or directory")
        old = self.files.get(p)
        body = (old.data if (append and old) else b"") + data
        if len(body) > MAX_FILE_BYTES:
            raise FileError(f"{path}: File too large")
        total = self.total_bytes - (len(old.data) if old else 0) + len(body)
        if total > MAX_TOTAL_BYTES or (old is None and len(self.files) >= MAX_FILES):
            raise FileError(f"{path}: No space left on device")
        self.total_bytes = total
        self.files[p] = Entry(body, FILE_MODE if mode is None else (S_IFREG | (mode & 0o7777)),
                              int(time.time()) if mtime is None else int(mtime))

    def remove(self, path: str, *, recursive: bool = False) -> None:
        p = normalise(path)
        if p in self.files:
            self.total_bytes -= len(self.files.pop(p).data)
            return
        if p in self.dirs:
            if not recursive:
                raise FileError(f"{path}: Is a directory")
            prefix = p.rstrip("/") + "/"
            self.files = {q: e for q, e in self.files.items() if not q.startswith(prefix)}
            self.total_bytes = sum(len(e.data) for e in self.files.values())
            self.dirs = {d for d in self.dirs if d != p and not d.startswith(prefix)} | {"/"}
            return
        raise FileError(f"{path}: No such file or directory")

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        p = normalise(path)
        if p in self.files:
            raise FileError(f"{path}: File exists")
        parent = posixpath.dirname(p)
        if parent not in self.dirs:
            if not parents:
                raise FileError(f"{path}: No such file or directory")
            self.mkdir(parent, parents=True)
        self.dirs.add(p)
