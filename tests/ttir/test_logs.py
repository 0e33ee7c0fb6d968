"""ttir's logs: quiet as a library, and on for every package once the application enables them —
including the packages it imports afterwards (as the CLI imports a command's modules lazily)."""

from __future__ import annotations

import subprocess
import sys


def _python(code: str, tmp_path) -> str:
    bad = tmp_path / "run" / "episodes.jsonl"
    bad.parent.mkdir()
    bad.write_text("null\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", code.replace("RUN", str(bad.parent))], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_package_imported_after_the_logs_are_enabled_still_logs(tmp_path):
    # experiments and benchmark disabled their own logs as they were imported: the CLI, which enables
    # the logs first, then dropped every warning of theirs (a skipped line of a run's records)
    err = _python("import ttir; ttir.enable_logging('INFO')\n"
                  "from experiments.store import RunStore; RunStore('RUN').records()\n"
                  "import benchmark, diagnosers, perturb, recoveries\n"
                  "from loguru import logger; print(logger._core.activation_list, file=__import__('sys').stderr)",
                  tmp_path)
    assert "episodes.jsonl:1: expected a JSON object, got NoneType; skipped" in err
    assert "False" not in err  # no package of ttir's disabled


def test_a_library_user_sees_no_log_of_any_package_until_enabling_them(tmp_path):
    err = _python("import benchmark, diagnosers, perturb, recoveries, experiments\n"
                  "from experiments.store import RunStore; RunStore('RUN').records()\n"
                  "from loguru import logger\n"
                  "for name in ('ttir', 'benchmark', 'diagnosers', 'perturb', 'recoveries', 'experiments'):\n"
                  "    assert (name + '.', False) in logger._core.activation_list, name",
                  tmp_path)
    assert "skipped" not in err
