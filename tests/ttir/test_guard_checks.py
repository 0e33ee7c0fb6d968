"""Checks as (diagnoser, recovery) pairs (issue 17): the default four, a user's own check
(in Python, by import path in a config, in a spec), and the guard's four agent forms."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import ttir
from ttir import Action, AgentStep, Check, Observation, TTIRConfig, UIElement
from ttir.core.errors import ConfigError
from ttir.guarded.checks import CheckError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "own_check"
sys.path.insert(0, str(EXAMPLE))
from no_payment import BackOut, PaymentRule, make_check  # noqa: E402

PAY = (440, 1900, 640, 2000)


def _pay_screen() -> Observation:
    return Observation(elements=[
        UIElement(text="", class_name="android.widget.FrameLayout", package="com.shop", bounds=(0, 0, 1080, 2400)),
        UIElement(text="Your basket: 2 items", class_name="android.widget.TextView", package="com.shop",
                  bounds=(40, 300, 1040, 400)),
        UIElement(text="Pay now", class_name="android.widget.Button", package="com.shop", bounds=PAY, clickable=True),
    ], foreground="com.shop", screen_size=(1080, 2400))


def _tap_pay(obs: Observation) -> Action:
    return Action(action_type="click", x=540, y=1950)


def test_the_default_checks_are_the_papers_four_in_priority_order():
    assert [c.name for c in ttir.default_checks()] == ["interference", "stuck_loop", "action_effect", "task_alignment"]
    cfg = TTIRConfig()
    cfg.recovery.priority = ["task_alignment", "interference", "action_effect", "stuck_loop"]
    assert [c.name for c in ttir.default_checks(cfg)] == cfg.recovery.priority
    agent = ttir.guard(lambda obs: Action(action_type="wait", seconds=0), config=cfg)
    assert [c.name for c in agent.checks] == cfg.recovery.priority


def test_the_core_names_no_diagnoser():
    """What a check does lives in the check: the middleware special-cases none of them."""
    source = (ROOT / "ttir" / "guarded" / "middleware.py").read_text(encoding="utf-8")
    for name in ("interference", "stuck_loop", "action_effect", "task_alignment"):
        assert not re.search(rf"[\"']{name}[\"']", source), name


def test_a_user_check_blocks_a_tap_on_pay_unless_the_goal_asks_for_it():
    told: list[dict[str, Any]] = []

    class Shopper:
        def reset(self, goal: str) -> None:
            pass

        def step(self, obs: Observation) -> Action:
            return _tap_pay(obs)

        def on_recovery(self, event: dict[str, Any]) -> None:
            told.append(event)

    agent = ttir.guard(Shopper(), config=TTIRConfig.with_mode("rules"), checks=[*ttir.default_checks(), make_check()])
    agent.reset("Add milk to the basket")
    step = agent.step(_pay_screen())
    assert step.action.action_type == "navigate_back"  # the tap was replaced by the check's recovery
    assert agent.report.sessions[-1].diagnoser == "no_payment" and agent.report.blocked_claims == 1
    agent.step(_pay_screen().replace(elements=_pay_screen().elements[:2]))  # backed out: the problem is gone
    assert agent.report.sessions[-1].outcome == "resolved"
    assert told and told[-1]["diagnoser"] == "no_payment" and "payment control was blocked" in told[-1]["message"]

    asked = ttir.guard(Shopper(), config=TTIRConfig.with_mode("rules"), checks=[make_check()])
    asked.reset("Pay for the items in the basket")
    assert asked.step(_pay_screen()).action.action_type == "click"  # the goal asks for it: let through
    assert not asked.report.sessions


def test_a_check_named_by_import_path_in_a_config(tmp_path):
    (tmp_path / "ttir.yaml").write_text(f"checks: [{{factory: 'no_payment:make_check', path: '{EXAMPLE}', "
                                        "params: {words: [pay]}}]\n", encoding="utf-8")
    agent = ttir.guard(_tap_pay, config=str(tmp_path / "ttir.yaml"))
    assert [c.name for c in agent.checks][-1] == "no_payment" and len(agent.checks) == 5
    agent.reset("Add milk to the basket")
    assert agent.step(_pay_screen()).action.action_type == "navigate_back"


@pytest.mark.parametrize("ref, expected", [
    ({"factory": "no_such_module_x:make_check"}, "cannot import module 'no_such_module_x'"),
    ({"factory": "no_payment:make_chek", "path": str(EXAMPLE)}, "has no attribute 'make_chek'"),
    ({"factory": "no_payment:make_check", "path": str(EXAMPLE), "params": {"colour": 1}}, "unexpected keyword"),
    ({"factory": "no_payment:WORDS", "path": str(EXAMPLE)}, "not a function"),
    ({"factory": "no_payment:tapped_labels", "path": str(EXAMPLE)}, "cannot be called"),
])
def test_a_bad_check_factory_fails_naming_it(ref, expected):
    with pytest.raises(CheckError, match=re.escape(expected)):
        ttir.guard(_tap_pay, config=TTIRConfig.from_dict({"checks": [ref]}))


def test_a_factory_that_makes_no_check_and_duplicate_names_are_refused():
    with pytest.raises(ValueError, match="not of the form"):
        TTIRConfig.from_dict({"checks": [{"factory": "no colon"}]})
    with pytest.raises(CheckError, match="not a ttir.Check"):
        ttir.guard(_tap_pay, config=TTIRConfig.from_dict(
            {"checks": [{"factory": "builtins:str"}]}))
    with pytest.raises(ValueError, match="names must be unique"):
        ttir.guard(_tap_pay, checks=[make_check(), make_check()])
    with pytest.raises(ValueError, match="diagnose"):
        Check(object(), BackOut())


def test_a_spec_names_a_check_and_a_bad_one_fails_at_load(tmp_path):
    from experiments.spec import ExperimentSpec

    spec = yaml_spec = (EXAMPLE / "spec.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "spec.yaml"
    bad.write_text(yaml_spec.replace("no_payment:make_check", "no_paymnt:make_check"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"guard_config: check factory 'no_paymnt:make_check': cannot import"):
        ExperimentSpec.from_yaml(bad)
    assert spec  # the example itself loads (and builds its check) from any directory
    ExperimentSpec.from_yaml(EXAMPLE / "spec.yaml")


def test_the_example_check_runs_in_a_sweep_with_its_own_triggers_and_sessions(tmp_path):
    import subprocess

    out = tmp_path / "run"
    cmd = [sys.executable, "-c", "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))",
           "run", str(EXAMPLE / "spec.yaml"), "--out", str(out), "--no-progress", "--report"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    recs = [json.loads(x) for x in (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    blocked = [r for r in recs if (r.get("guard_summary") or {}).get("triggers", {}).get("no_payment")]
    assert blocked and all(r["guard"] == "rules" and r["perturbation"] == "ad_trial_offer" for r in blocked)
    wins = {g: sum(r["success"] for r in recs if r["guard"] == g and r["perturbation"] != "clean") for g in ("off", "rules")}
    assert wins["rules"] > wins["off"], wins
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    rows = [d for g in metrics["guard"] for d in g["diagnosers"] if d["diagnoser"] == "no_payment"]
    assert rows and rows[0]["triggers"] >= len(blocked) and rows[0]["sessions"] >= len(blocked)
    assert rows[0]["precision"] is None  # the event log cannot judge a user's rule
    assert re.search(r"\| no_payment \| \d+ \|", (out / "report.md").read_text(encoding="utf-8"))


# ------------------------------------------------------------ one path, four agent forms

class WaitObject:
    def reset(self, goal: str) -> None:
        self.goal = goal

    def step(self, obs: Observation) -> AgentStep:
        return AgentStep(action=Action(action_type="wait", seconds=0), summary="wait")


class AsyncWaitObject(WaitObject):
    async def step(self, obs: Observation) -> AgentStep:  # type: ignore[override]
        await asyncio.sleep(0)
        return AgentStep(action=Action(action_type="wait", seconds=0), summary="wait")


def wait_fn(obs: Observation) -> Action:
    return Action(action_type="wait", seconds=0)


async def async_wait_fn(obs: Observation) -> Action:
    await asyncio.sleep(0)
    return Action(action_type="wait", seconds=0)


class AsyncStepOnly:
    async def step(self, obs: Observation) -> Action:
        return Action(action_type="wait", seconds=0)


FORMS = {"object": WaitObject, "callable": lambda: wait_fn, "async callable": lambda: async_wait_fn,
         "async object": AsyncWaitObject, "async object without reset": AsyncStepOnly}


def _drive(agent: Any, steps: int = 4) -> list[str]:
    """A real permission-dialog dump (the pop-up stays: nothing here executes the taps)."""
    obs = Observation.from_xml((ROOT / "tests" / "fixtures" / "dumps" / "permission_dialog.xml").read_text(
        encoding="utf-8"))
    agent.reset("Take a photo")
    taken = []
    for _ in range(steps):
        got = agent.step(obs)
        if asyncio.iscoroutine(got):
            got = asyncio.run(got)
        taken.append(got.action.action_type)
    return taken


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("on", [True, False], ids=["guard on", "guard off"])
def test_every_agent_form_is_guarded_the_same_way(form, on):
    cfg = TTIRConfig.with_mode("rules" if on else "off")
    agent = ttir.guard(FORMS[form](), config=cfg)
    assert isinstance(agent, ttir.AsyncGuardedAgent) == form.startswith("async")
    taken = _drive(agent)
    if on:  # the permission pop-up is dismissed by the interference check, whatever the form
        assert agent.report.sessions and agent.report.sessions[0].diagnoser == "interference", taken
        assert taken[0] != "wait"
    else:
        assert taken == ["wait"] * 4 and not agent.report.sessions
    assert agent.report.steps == 4


# ------------------------------------------------------------ one error hierarchy, did you mean

def test_unknown_names_say_which_was_meant():
    from benchmark.tasks import make_task
    from experiments.spec import ExperimentSpec
    from perturb import make
    from ttir.core.errors import ConfigError, TTIRError, UnknownNameError

    with pytest.raises(UnknownNameError, match="did you mean 'SystemWifiTurnOn'") as task:
        make_task("SystemWifiTurnOnn")
    assert isinstance(task.value, (KeyError, ConfigError, TTIRError))
    with pytest.raises(KeyError, match="did you mean 'popup_security'"):
        make("popup_securty")
    with pytest.raises(ValueError, match="did you mean 'font_size_large'"):
        ExperimentSpec.from_dict({"tasks": ["SystemWifiTurnOn"], "perturbations": ["clean", "font_size_larg"]})
    with pytest.raises(ValueError, match="did you mean 'SystemWifiTurnOn'"):
        ExperimentSpec.from_dict({"tasks": ["SystemWifiTurnOnn"]})
    with pytest.raises(ValueError, match="did you mean 'guard_config'"):
        ExperimentSpec.from_dict({"guard_cnfig": {}})
    with pytest.raises(ValueError, match="did you mean 'recovery'"):
        TTIRConfig.from_dict({"recovry": {}})
    with pytest.raises(UnknownNameError, match="did you mean 'interference'"):
        ttir.guard(wait_fn)._core.check("interferense")


class PlainTrigger:
    """A check's trigger that is no Diagnoser: an object with diagnose(ctx) -> Finding."""

    def diagnose(self, ctx: Any) -> ttir.Finding:
        return ttir.Finding(diagnoser="plain", problem=True, verdict="yes", evidence=["always"])


class PlainBack:
    """A recovery that is no Recovery: only next_step(ctx), no name, cost or tiers."""

    def __init__(self) -> None:
        self.asked = 0

    def next_step(self, ctx: Any) -> Any:
        self.asked += 1
        return AgentStep(action=Action(action_type="navigate_back"), summary="back") if not ctx.taken else None


@pytest.mark.parametrize("form", ["object", "async object"])
def test_a_check_of_plain_objects_opens_sessions_in_the_sync_and_async_guard(form):
    """Check() accepts any object with next_step(ctx); the guard used to read its missing name and
    cost on the first problem and fail open on every step (report.errors), never opening a session."""
    recovery = PlainBack()
    check = Check(PlainTrigger(), recovery, name="plain")
    assert isinstance(check.recovery, ttir.Recovery) and check.recovery.name == "PlainBack"
    agent = ttir.guard(FORMS[form](), config=TTIRConfig.with_mode("rules"), checks=[check])
    taken = _drive(agent, steps=3)
    assert taken[0] == "navigate_back" and recovery.asked >= 1
    assert agent.report.errors == [] and agent.report.sessions[0].recovery == "PlainBack"
    with pytest.raises(ConfigError, match="Check.recovery = .*next_step"):
        check.recovery = object()
    check.recovery = PlainBack()  # set later, as a user swapping parts does: wrapped the same way
    assert check.recovery.name == "PlainBack" and check.recovery.cost.model_calls == 0


def test_a_diagnoser_or_recovery_class_is_refused_as_a_check_part_and_default_checks_take_any_config_form(tmp_path):
    # a class has diagnose / next_step, so it was taken: called unbound at every step, it failed open each time
    from diagnosers import InterferenceDiagnoser
    from recoveries import DismissInterference

    with pytest.raises(ConfigError, match=r"Check\(diagnoser=InterferenceDiagnoser\) is a class; pass an instance"):
        Check(InterferenceDiagnoser, DismissInterference())
    with pytest.raises(ConfigError, match=r"Check\(recovery=DismissInterference\) is a class"):
        Check(InterferenceDiagnoser(), DismissInterference)
    check = Check(InterferenceDiagnoser(), DismissInterference())
    with pytest.raises(ConfigError, match="Check.recovery = "):
        check.recovery = DismissInterference
    # default_checks(config) takes what ttir.guard(config=) takes (a dict raised "'dict' object has no
    # attribute 'recovery'")
    (tmp_path / "ttir.yaml").write_text("stuck_loop: {window: 4}\n", encoding="utf-8")
    for config in ({"stuck_loop": {"window": 4}}, tmp_path / "ttir.yaml", str(tmp_path / "ttir.yaml")):
        checks = ttir.default_checks(config)
        stuck = next(c for c in checks if c.name == "stuck_loop")
        assert stuck.diagnoser.config.window == 4
