"""The simulated phone's shared storage (``/sdcard``): a tiny virtual file system
that the Files, Markor, Browser and Audio Recorder apps all read and write."""

from __future__ import annotations

import posixpath
from typing import Optional

from pydantic import BaseModel, Field

ROOT = "/sdcard"
DEFAULT_FOLDERS = ("Alarms", "DCIM", "Documents", "Download", "Movies", "Music", "Notifications", "Pictures", "Podcasts", "Recordings", "Ringtones")


class StoredFile(BaseModel):
    path: str
    content: str = ""
    size: int = 0  # bytes; defaults to len(content)
    modified: float = 0.0  # simulated seconds since the clock's epoch

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)

    @property
    def folder(self) -> str:
        return posixpath.dirname(self.path)


class Storage(BaseModel):
    """Folders and files under ``/sdcard``. Paths are absolute POSIX paths."""

    folders: set[str] = Field(default_factory=lambda: {ROOT, *(f"{ROOT}/{f}" for f in DEFAULT_FOLDERS)})
    files: dict[str, StoredFile] = Field(default_factory=dict)

    @staticmethod
    def norm(path: str) -> str:
        if not path.startswith("/"):
            path = f"{ROOT}/{path}"
        return posixpath.normpath(path)

    def mkdir(self, path: str) -> str:
        path = self.norm(path)
        parts = path.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            self.folders.add("/" + "/".join(parts[:i]))
        return path

    def write(self, path: str, content: str = "", *, size: Optional[int] = None, modified: float = 0.0) -> StoredFile:
        path = self.norm(path)
        self.mkdir(posixpath.dirname(path))
        f = StoredFile(path=path, content=content, size=len(content.encode()) if size is None else size, modified=modified)
        self.files[path] = f
        return f

    def read(self, path: str) -> Optional[StoredFile]:
        return self.files.get(self.norm(path))

    def exists(self, path: str) -> bool:
        p = self.norm(path)
        return p in self.files or p in self.folders

    def delete(self, path: str) -> bool:
        p = self.norm(path)
        if p in self.files:
            del self.files[p]
            return True
        if p in self.folders:
            self.folders = {f for f in self.folders if f != p and not f.startswith(p + "/")}
            self.files = {k: v for k, v in self.files.items() if not k.startswith(p + "/")}
            return True
        return False

    def move(self, src: str, dst_folder: str) -> StoredFile:
        s = self.norm(src)
        if s not in self.files:
            raise FileNotFoundError(f"no file at {s}")
        f = self.files.pop(s)
        dst = self.mkdir(dst_folder)
        f.path = posixpath.join(dst, f.name)
        self.files[f.path] = f
        return f

    def listdir(self, folder: str) -> tuple[list[str], list[StoredFile]]:
        """(sub-folder names, files) directly inside ``folder``, sorted by name."""
        folder = self.norm(folder)
        subs = sorted(posixpath.basename(f) for f in self.folders if posixpath.dirname(f) == folder and f != folder)
        files = sorted((f for f in self.files.values() if f.folder == folder), key=lambda f: f.name.lower())
        return subs, files
