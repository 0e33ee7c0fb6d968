"""Shared fixtures."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def pytest_configure(config):
    # bytecode caches, even where the environment turns them off (PYTHONDONTWRITEBYTECODE=1, as container
    # images often do): the suite starts about a hundred Python processes (CLI runs, examples, runner
    # workers, served phones, model servers), and without the caches each compiles the project again
    # (about 0.3 CPU-s a process) and each test worker rewrites every test module's asserts anew.
    # Written next to the sources (git-ignored __pycache__), as Python does by default.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    # the tests' model servers and phones are local: a proxy set for the package registries
    # (which the model client honours, as the openai client does) must not carry them
    for var in ("NO_PROXY", "no_proxy"):
        hosts = [h for h in os.environ.get(var, "").split(",") if h.strip()]
        os.environ[var] = ",".join(hosts + [h for h in LOCAL_HOSTS if h not in hosts])
    if getattr(config.option, "dist", None) == "loadgroup":
        os.environ["TTIR_XDIST_LOADGROUP"] = "1"  # the workers' own dist option reads "no"
    # one OCR thread per process: the test workers already fill the cores, and ONNX Runtime's own
    # pool (a thread per core, spinning while it waits) spends half again the CPU time for the same
    # text (two OCR episodes on the 2-core machine: 20.7 against 13.8 CPU-s, and no faster)
    os.environ.setdefault("TTIR_OCR_THREADS", "1")
    # the cyclic garbage collector less often: the tests build many short-lived containers (pydantic
    # records, parsed trees, laid-out screens), and at the default threshold of 700 allocations it ran
    # so often that 20,000 took about 5 % off the CPU time of the simulator and diagnoser tests (four
    # runs each, the same peak memory). The test processes only: the library never sets it.
    gc.set_threshold(20_000, 20, 20)


def pytest_collection_modifyitems(config, items):
    """``--dist loadgroup`` sends the tests of one ``xdist_group`` to one worker by a ``@group``
    suffix on their node ids, which pytest-xdist 3.8 writes to ``item._nodeid`` — gone in
    pytest 9 (``item._id``), so the groups split: two Rays, two model servers. Write it here."""
    if not (os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("TTIR_XDIST_LOADGROUP")):
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(item.nodeid + suffix)


@pytest.fixture
def dump():
    """Read a recorded uiautomator dump by name."""

    def read(name: str) -> str:
        return (FIXTURES / "dumps" / f"{name}.xml").read_text(encoding="utf-8")

    return read


@pytest.fixture
def device():
    from benchmark import SimDevice

    d = SimDevice()
    yield d
    d.close()


@pytest.fixture
def vlm_server():
    """A scripted OpenAI-compatible server on 127.0.0.1 (ttir.testing.VLMTestServer).

    Script it with ``vlm_server.enqueue(Reply.json({...}), ...)``; point a client at it
    with ``VLMClient(vlm_server.config(timeout_s=..., max_retries=...))``; inspect
    ``vlm_server.requests`` afterwards.
    """
    from ttir.testing import VLMTestServer

    with VLMTestServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _reliability_leaves_nothing_running(request):
    """Tests of the `reliability` group must leave no thread or child process behind."""
    if request.node.get_closest_marker("reliability") is None:
        yield
        return
    import os
    import threading

    from tests.support.reliability_support import LINUX, alive, children, wait_until

    threads = set(threading.enumerate())
    kids = children(os.getpid()) if LINUX else set()
    yield
    new_threads = [t for t in threading.enumerate() if t not in threads]
    for t in new_threads:
        t.join(timeout=5)
    assert not [t.name for t in new_threads if t.is_alive()], "threads left running"
    if LINUX:
        wait_until(lambda: not (children(os.getpid()) - kids), 5)
        left = [p for p in children(os.getpid()) - kids if alive(p)]
        assert not left, f"child processes left running: {left}"


@pytest.fixture(scope="session")
def live_model(tmp_path_factory):
    """The real offline model: `ttir serve-model` on a free port of 127.0.0.1, waited for
    (GET /v1/models), stopped afterwards. Yields a VLMConfig pointing at it. Skips, with
    one line, where the local-model extra is not installed."""
    from tests.support.live_model_support import serve_model

    with serve_model(tmp_path_factory.mktemp("live_model")) as config:
        yield config
