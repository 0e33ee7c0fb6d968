"""The spec beside this file, run from Python with the factory handed over directly.

    python examples/own_agent/run_from_python.py [RUN_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import experiments
from my_agent import make_agent

HERE = Path(__file__).parent

if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "runs/own_agent_from_python"
    summary = experiments.run(HERE / "spec.yaml", out, agents={"goal_words": make_agent}, progress=False)
    print(summary)
    sys.exit(1 if summary["errors_this_run"] else 0)
