"""Start and stop `ttir serve-model` for the live_model tests."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

READY_TIMEOUT_S = 240.0  # loading a 98 MB model takes seconds; a busy 2-core machine, more


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listed(base_url: str) -> list[str]:
    with urllib.request.urlopen(base_url + "/models", timeout=5) as r:  # noqa: S310 - 127.0.0.1 only
        return [m["id"] for m in json.loads(r.read())["data"]]


def _arm_parent_death() -> None:
    from experiments.process_lifetime import _parent_death_signal

    _parent_death_signal(signal.SIGTERM)  # the server goes when the test process does, even on SIGKILL


@contextmanager
def serve_model(folder: Path) -> Iterator[object]:
    from ttir.core.config import VLMConfig
    from ttir.model.local_model import MODEL_ALIAS, available, base_url

    why = available()
    if why is not None:
        pytest.skip(f"live model: {why}")
    port = free_port()
    log = (folder / "serve-model.log").open("wb")
    cmd = [sys.executable, "-c", "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))",
           "serve-model", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            preexec_fn=_arm_parent_death if sys.platform.startswith("linux") else None)
    url = base_url(port)
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"ttir serve-model exited with {proc.returncode}: "
                                   f"{(folder / 'serve-model.log').read_text(errors='replace')[-2000:]}")
            try:
                if MODEL_ALIAS in _listed(url):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"ttir serve-model did not answer GET /v1/models within {READY_TIMEOUT_S} s")
            time.sleep(0.5)
        # generous time-outs: a prompt of ~2,000 tokens takes tens of seconds on a shared 2-core machine
        yield VLMConfig(base_url=url, model=MODEL_ALIAS, api_key="EMPTY", timeout_s=300, max_retries=1,
                        step_deadline_s=600, max_tokens=256)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        log.close()
