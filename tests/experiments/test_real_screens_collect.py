"""Collecting dumps from a repository's history (experiments.real_screens.collect) with
the real git binary: every dump is either written with a commit that holds it or
counted with the reason it was not."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from experiments.real_screens.collect import collect
from experiments.real_screens.corpus import load_corpus
from experiments.real_screens.reserved import Reserved

pytestmark = pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
                                reason="needs git")


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env).stdout.decode()


def test_a_renamed_dump_is_written_with_the_commit_and_path_that_hold_it(tmp_path):
    # fresh bytes (a corpus dump plus a newline): the corpus's own files would be skipped as duplicates
    dumps = [s.data + b"\n" for s in load_corpus("dev")[:2]]
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a").mkdir()
    (repo / "a" / "window_dump.xml").write_bytes(dumps[0])
    (repo / "ui.xml").write_bytes(dumps[1])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "mv", "a/window_dump.xml", "renamed.xml")  # the history lists the blob under its new name only
    git(repo, "commit", "-qm", "two")

    staging = tmp_path / "staging"
    counts = collect(repo / ".git", "someone/repo", staging, Reserved(set(), set()))
    assert counts["dumps"] == 2 and counts["written"] == 2 and counts["no_commit"] == 0
    rows = [json.loads(line) for line in (staging / "manifest.jsonl").read_text().splitlines()]
    for r in rows:  # the path is where that commit holds these bytes
        assert git(repo, "rev-parse", f"{r['commit']}:{r['path']}").strip() == r["blob"]
        assert (staging / r["file"]).read_bytes() in dumps


def test_a_dump_powershell_wrote_as_utf16_is_collected_byte_for_byte(tmp_path):
    from experiments.real_screens.collect import dump_format

    text = load_corpus("dev")[0].data.decode("utf-8") + "\n"
    utf16 = b"\xff\xfe" + text.encode("utf-16-le")
    assert dump_format(utf16) == dump_format(text.encode("utf-8")) is not None
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "dump.xml").write_bytes(utf16)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    staging = tmp_path / "staging"
    counts = collect(repo / ".git", "someone/repo", staging, Reserved(set(), set()))
    assert counts["written"] == 1
    row = json.loads((staging / "manifest.jsonl").read_text().splitlines()[0])
    assert (staging / row["file"]).read_bytes() == utf16
