"""Collect real screen dumps from a fetched repository, byte for byte, with provenance.

    python -m experiments.real_screens.collect GIT_DIR --repo OWNER/NAME --out STAGING_DIR

Scans every blob reachable from any ref of ``GIT_DIR`` (a bare snapshot is fine),
keeps the ones that are uiautomator dumps or Appium page sources, and writes each
unchanged to ``STAGING_DIR/files/OWNER+NAME/`` with one manifest row (repository,
path, a commit holding it, blob id, sha256, licence where the repository states
one). Files on the reserved list (``reserved.txt`` here, blob id and sha256) are
never written; files already in the corpus or in any staging
directory next to ``STAGING_DIR`` are skipped by sha256.

No diagnoser is imported: collecting and labelling come before any rule sees a file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Optional

from experiments.real_screens.reserved import Reserved, load_reserved, rejection
from ttir.core.dump import text_encoding

CORPUS_DIR = Path(__file__).resolve().parent
SUFFIXES = (".xml", ".uix", ".txt", ".html", ".source", "")
MAX_BYTES = 4 * 1024 * 1024
MIN_BYTES = 150

_LICENCE_PATTERNS = (
    ("Apache-2.0", r"Apache License,?\s+Version 2\.0"),
    ("MIT", r"\bMIT License\b|Permission is hereby granted, free of charge"),
    ("GPL-3.0", r"GNU GENERAL PUBLIC LICENSE\s+Version 3"),
    ("GPL-2.0", r"GNU GENERAL PUBLIC LICENSE\s+Version 2"),
    ("AGPL-3.0", r"GNU AFFERO GENERAL PUBLIC LICENSE"),
    ("LGPL", r"GNU LESSER GENERAL PUBLIC LICENSE"),
    ("BSD-3-Clause", r"Neither the name of"),
    ("BSD-2-Clause", r"Redistribution and use in source and binary forms"),
    ("MPL-2.0", r"Mozilla Public License,?\s+(v\.|Version) 2\.0"),
    ("Unlicense", r"This is free and unencumbered software"),
    ("CC0-1.0", r"CC0 1\.0|Creative Commons Zero"),
    ("ISC", r"\bISC License\b"),
)


def dump_format(data: bytes) -> Optional[str]:
    """'uiautomator' or 'appium' when the bytes are a screen dump (UTF-8, or UTF-16 with
    its BOM: what Windows PowerShell's ``>`` writes), else None."""
    head = data[:200_000]
    if text_encoding(head) == "utf-16":
        head = head[: len(head) // 2 * 2].decode("utf-16", "replace").encode("utf-8")
    if b"<hierarchy" not in head or b"bounds=" not in head:
        return None
    if b"<node" in head:
        return "uiautomator"
    if re.search(rb"<(android|androidx|com)\.[A-Za-z0-9_.$]+[\s>]", head):
        return "appium"
    return None


def _git(git_dir: Path, *args: str, input: Optional[bytes] = None) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], input=input, capture_output=True, check=True).stdout


def _candidates(git_dir: Path) -> Iterator[tuple[str, str, int]]:
    """(blob, path, size) of every reachable blob with a dump-like name and size."""
    listing = _git(git_dir, "rev-list", "--all", "--objects", "--missing=allow-any").decode("utf-8", "replace").splitlines()
    seen: set[str] = set()
    pairs = []
    for line in listing:
        sha, _, path = line.partition(" ")
        if not path or sha in seen:
            continue
        name = path.rsplit("/", 1)[-1].lower()
        suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
        if suffix not in SUFFIXES:
            continue
        seen.add(sha)
        pairs.append((sha, path))
    if not pairs:
        return
    checks = _git(git_dir, "cat-file", "--batch-check", input="\n".join(s for s, _ in pairs).encode()).decode()
    for (sha, path), row in zip(pairs, checks.splitlines()):
        parts = row.split()  # "<sha> missing" for objects the snapshot lacks (files of 4 MiB and more)
        if len(parts) == 3 and parts[1] == "blob" and MIN_BYTES <= int(parts[2]) <= MAX_BYTES:
            yield sha, path, int(parts[2])


def _commit_holding(git_dir: Path, blob: str, path: str) -> Optional[tuple[str, str]]:
    """A commit whose tree holds ``blob``, and its path there: at ``path`` if one does,
    else wherever the commit has it (the same bytes committed under two names are
    listed under one of them)."""
    # --no-renames: rename detection would read blobs a snapshot lacks (files of 4 MiB and more)
    # the commits where the blob's count changes: the one that added it, or (when that one is
    # not listed, e.g. it came in through a merge) one that removed it, whose parents hold it
    out = _git(git_dir, "log", "--all", "--no-renames", "--format=%H %P", f"--find-object={blob}").decode().split()
    for commit in out:
        try:
            if _git(git_dir, "rev-parse", f"{commit}:{path}").decode().strip() == blob:
                return commit, path
        except subprocess.CalledProcessError:
            continue
    for commit in out:
        for line in _git(git_dir, "ls-tree", "-r", commit).decode("utf-8", "replace").splitlines():
            meta, _, where = line.partition("\t")
            if meta.split()[-1] == blob:
                return commit, where
    return None


def licence_of(git_dir: Path, commit: str) -> Optional[str]:
    """The SPDX id of the repository's licence file at ``commit``, when one is stated."""
    try:
        names = _git(git_dir, "ls-tree", "--name-only", commit).decode().splitlines()
    except subprocess.CalledProcessError:
        return None
    for name in names:
        if re.match(r"(?i)^(licen[cs]e|copying)(\..*)?$", name):
            text = _git(git_dir, "cat-file", "blob", f"{commit}:{name}")[:20000].decode("utf-8", "replace")
            for spdx, pattern in _LICENCE_PATTERNS:
                if re.search(pattern, text, re.I):
                    return spdx
            return f"see {name}"
    return None


def known_hashes(staging: Path) -> set[str]:
    """sha256 of every file already in the corpus or in any staging directory beside ``staging``."""
    out: set[str] = set()
    manifests = [CORPUS_DIR / "manifest.jsonl"] + sorted(staging.parent.glob("*/manifest.jsonl"))
    for m in manifests:
        if m.exists():
            for line in m.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    out.add(json.loads(line)["sha256"])
    return out


def collect(git_dir: Path, repo: str, staging: Path, reserved: Reserved) -> dict[str, int]:
    counts = {"dumps": 0, "reserved": 0, "duplicate": 0, "no_commit": 0, "written": 0}
    have = known_hashes(staging)
    out_dir = staging / "files" / repo.replace("/", "+")
    rows = []
    licence_cache: dict[str, Optional[str]] = {}
    for blob, path, _size in _candidates(git_dir):
        try:
            data = _git(git_dir, "cat-file", "blob", blob)
        except subprocess.CalledProcessError:
            continue
        fmt = dump_format(data)
        if fmt is None:
            continue
        counts["dumps"] += 1
        sha = hashlib.sha256(data).hexdigest()
        why = rejection(blob, sha, reserved, have)
        if why is not None:
            counts[why] += 1
            continue
        held = _commit_holding(git_dir, blob, path)
        if held is None:
            counts["no_commit"] += 1  # reachable (a stash, a dangling ref) but in no commit's tree
            continue
        commit, path = held
        if commit not in licence_cache:
            licence_cache[commit] = licence_of(git_dir, commit)
        name = re.sub(r"[^A-Za-z0-9._-]", "_", path.rsplit("/", 1)[-1])[:80]
        target = out_dir / f"{blob[:10]}-{name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        have.add(sha)
        rows.append({"file": str(target.relative_to(staging)), "repo": repo, "path": path, "commit": commit,
                     "blob": blob, "sha256": sha, "bytes": len(data), "format": fmt,
                     "licence": licence_cache[commit]})
        counts["written"] += 1
    if rows:
        with (staging / "manifest.jsonl").open("a", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return counts


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("git_dir", type=Path, help="a fetched repository's git directory")
    p.add_argument("--repo", required=True, help="OWNER/NAME, as GitHub spells it")
    p.add_argument("--out", required=True, type=Path, help="staging directory (manifest.jsonl + files/)")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    counts = collect(args.git_dir, args.repo, args.out, load_reserved())
    print(json.dumps({"repo": args.repo, **counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
