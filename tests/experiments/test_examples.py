"""The examples run as a user runs them (issue 15, item 1): the own-agent spec through the
real `ttir run`, from another folder, and the single-episode script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "own_agent"


def test_the_own_agent_spec_runs_from_anywhere_and_the_guard_changes_outcomes(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-c", "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))",
           "run", str(EXAMPLE / "spec.yaml"), "--out", str(out), "--no-progress"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    recs = [json.loads(x) for x in (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(recs) == 32 and all(r["status"] == "ok" and r["agent_kind"] == "python" for r in recs)
    wins = {g: sum(r["success"] for r in recs if r["guard"] == g and r["perturbation"] != "clean") for g in ("off", "rules")}
    clean = {g: sum(r["success"] for r in recs if r["guard"] == g and r["perturbation"] == "clean") for g in ("off", "rules")}
    assert 0 < clean["off"] < 4, "the example agent solves some clean tasks, not all"
    assert wins["rules"] > wins["off"], wins  # the guard dismisses the pop-ups this agent walks into


def test_the_single_episode_script_solves_its_task_under_a_pop_up():
    done = subprocess.run([sys.executable, str(EXAMPLE / "single_episode.py")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "success=True" in done.stdout and "'interference': 1" in done.stdout


def test_the_real_screen_threshold_example_compares_settings_on_dev():
    script = ROOT / "examples" / "real_screens" / "compare_thresholds.py"
    done = subprocess.run([sys.executable, str(script), "--every", "6"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and " of " in line]
    found = {r.split("|")[1].strip().split()[0]: int(r.split("|")[2].split(" of ")[0]) for r in rows}
    assert set(found) == {"default", "stricter", "looser"}
    assert found["stricter"] <= found["default"] <= found["looser"]  # a higher bar reports fewer pop-ups


def test_the_watch_example_keeps_an_adb_script_on_track_that_fails_alone():
    """examples/watch/adb_script.py: a served phone, a private adb server, the script alone and beside
    ttir.watching (its watch.yaml loads: the rules are validated)."""
    script = ROOT / "examples" / "watch" / "adb_script.py"
    alone = subprocess.run([sys.executable, str(script), "--alone"], capture_output=True, text=True, timeout=300)
    assert alone.returncode == 1 and "alone: success=False" in alone.stdout, alone.stdout + alone.stderr[-2000:]
    watched = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert watched.returncode == 0 and "beside ttir.watching: success=True" in watched.stdout, \
        watched.stdout + watched.stderr[-2000:]
    assert "watch: dismissed on com.android.permissioncontroller" in watched.stdout


def test_the_guard_loop_example_recovers_what_the_agent_alone_loses():
    """examples/own_agent/guard_loop.py, the README's loop: the goal-word agent alone taps into the
    permission pop-up and fails; guarded, the pop-up is dismissed and the task is verified from app state."""
    script = EXAMPLE / "guard_loop.py"
    alone = subprocess.run([sys.executable, str(script), "--no-guard"], capture_output=True, text=True,
                           timeout=300, cwd=EXAMPLE)
    assert alone.returncode == 1 and "verified False" in alone.stdout, alone.stdout + alone.stderr[-2000:]
    guarded = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=EXAMPLE)
    assert guarded.returncode == 0 and "ended done, verified True" in guarded.stdout, \
        guarded.stdout + guarded.stderr[-2000:]
    assert "'resolved': 1" in guarded.stdout


def test_the_proxy_example_puts_an_unchanged_adb_script_behind_the_guard():
    """examples/proxy/adb_script.py: a served phone, a private adb server, `ttir proxy` as its own
    command, the script alone (fails) and on the proxy's serial (succeeds)."""
    script = ROOT / "examples" / "proxy" / "adb_script.py"
    alone = subprocess.run([sys.executable, str(script), "--alone"], capture_output=True, text=True, timeout=300)
    assert alone.returncode == 1 and "alone: success=False" in alone.stdout, alone.stdout + alone.stderr[-2000:]
    proxied = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proxied.returncode == 0 and "through ttir proxy: success=True" in proxied.stdout, \
        proxied.stdout + proxied.stderr[-2000:]
    assert "proxy: delayed 'input tap 613 312'" in proxied.stdout and "com.android.permissioncontroller" in proxied.stdout
