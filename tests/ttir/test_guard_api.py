"""ttir.guard: same interface in and out, config, report, hook, async."""

from __future__ import annotations

import asyncio
import json

import pytest

import ttir
from benchmark import SimDevice, make_task, run_episode
from benchmark.agents import ReferenceAgent, ReplayAgent
from ttir import Action, AgentStep, TTIRConfig
from ttir.guarded.middleware import AsyncGuardedAgent, GuardedAgent

RULES = TTIRConfig.with_mode("rules")


def test_guard_keeps_the_agent_interface_and_passes_clean_steps_through():
    task = make_task("SystemWifiTurnOn")
    inner = ReferenceAgent(task.reference_solution())
    agent = ttir.guard(inner, config=RULES)
    assert isinstance(agent, GuardedAgent) and isinstance(agent, ttir.Agent)
    result = run_episode(SimDevice(), task, agent)
    assert result.success
    rep = agent.report
    assert rep.steps == len(result.trajectory) and not rep.sessions and not rep.errors
    assert {f["diagnoser"] for f in rep.findings} == {"stuck_loop", "action_effect", "interference", "task_alignment"}
    json.dumps(rep.to_dict())  # serialisable into the episode trajectory
    assert all(s.guard_events for s in result.trajectory)  # findings land in the per-step log
    assert agent.plan is inner.plan  # attribute access falls through to the wrapped agent


def test_guard_accepts_plain_callables_and_yaml_config(tmp_path):
    cfg = tmp_path / "ttir.yaml"
    cfg.write_text("stuck_loop:\n  mode: rules\n  window: 5\nrecovery:\n  budget: 2\n", encoding="utf-8")
    agent = ttir.guard(lambda obs: Action(action_type="wait"), config=str(cfg))
    assert agent.config.stuck_loop.window == 5 and agent.config.recovery.budget == 2
    agent.reset("goal")
    assert agent.step(SimDevice().observe()).action.action_type == "wait"


def test_bad_config_names_file_key_and_value(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("stuck_loop:\n  window: 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.yaml:2: stuck_loop.window.*got 1"):
        TTIRConfig.from_yaml(cfg)
    with pytest.raises(ValueError, match="unknown config key"):
        TTIRConfig().override({"stuck_loop.windw": 3})



def test_the_config_may_be_a_path_object_or_a_mapping_validated_as_the_yaml_is(tmp_path):
    cfg = tmp_path / "ttir.yaml"
    cfg.write_text("stuck_loop:\n  window: 5\n", encoding="utf-8")
    agent = ttir.guard(lambda obs: Action(action_type="wait"), config=cfg)  # a pathlib.Path, not only a str
    assert agent.config.stuck_loop.window == 5
    agent = GuardedAgent(lambda obs: Action(action_type="wait"), config={"recovery": {"budget": 2}})
    assert agent.config.recovery.budget == 2
    with pytest.raises(ValueError, match=r"interferance: unknown key.*did you mean 'interference'"):
        ttir.guard(lambda obs: Action(action_type="wait"), config={"interferance": {"mode": "rules"}})


def test_with_mode_names_a_mode_that_is_no_tier():
    with pytest.raises(ValueError, match=r"with_mode\(mode='rule'\): expected one of rules, vlm, cascade, off; "
                                         r"did you mean 'rules'\?"):
        TTIRConfig.with_mode("rule")
    assert TTIRConfig.with_mode("off").enabled is False


class _Agent:
    def reset(self, goal: str) -> None:
        pass

    def step(self, obs: ttir.Observation) -> Action:
        return Action(action_type="wait")


@pytest.mark.parametrize("kwargs, message", [
    ({"agent": _Agent}, "agent=_Agent is a class, not an agent: pass an instance, e.g. guard(_Agent())"),
    ({"config": 3}, "config=3 (int): expected a ttir.TTIRConfig, the path of a YAML file, a mapping"),
    ({"vlm": "http://127.0.0.1:8000/v1"}, "vlm='http://127.0.0.1:8000/v1' (str) is not a model client"),
    ({"checks": "interference"}, "checks='interference' (str): expected a list of ttir.Check"),
    ({"checks": ["interference"]}, "checks[0]='interference' (str): expected a ttir.Check"),
])
@pytest.mark.parametrize("make", [ttir.guard, GuardedAgent, AsyncGuardedAgent])
def test_a_callers_mistake_in_the_guards_arguments_raises_naming_it(kwargs, message, make):
    # the guard fails open on its own faults; these are the caller's, and a URL given as vlm would
    # otherwise fail every model call quietly ("the rules decided")
    kwargs = {"agent": _Agent(), **kwargs}
    with pytest.raises(TypeError) as info:
        make(kwargs.pop("agent"), **kwargs)
    assert message in str(info.value)

@pytest.mark.parametrize("url, says", [
    ("localhost:8080/v1", "is not an http(s) URL with a host; expected e.g. http://localhost:8000/v1 "
                          "(did you mean 'http://localhost:8080/v1'?)"),
    ("http//127.0.0.1:8000/v1", "did you mean 'http://127.0.0.1:8000/v1'?"),
    ("http://127.0.0.1:99999/v1", "Port out of range"),
    ("http://127.0.0.1:8000/v1 ", "holds spaces"),
])
def test_an_endpoint_url_the_client_cannot_use_is_refused_not_failed_open_at_every_step(url, says, monkeypatch):
    # every model call failed on such a URL, and the guard, failing open, let every step through unchecked
    cascade = {"interference": {"mode": "cascade"}}
    with pytest.raises(ValueError) as info:
        ttir.guard(_Agent(), config={**cascade, "vlm": {"base_url": url}})
    assert says in str(info.value)
    monkeypatch.setenv("TTIR_VLM_BASE_URL", url)
    with pytest.raises(ValueError) as info:
        ttir.guard(_Agent(), config=cascade)
    assert "TTIR_VLM_BASE_URL: " in str(info.value) and says in str(info.value)
    monkeypatch.setenv("TTIR_VLM_BASE_URL", "https://api.example.com/v1")
    ttir.guard(_Agent(), config=cascade)  # a good URL from the environment is taken


@pytest.mark.parametrize("make", [ttir.guard, GuardedAgent])
def test_a_guard_around_a_guard_is_refused(make):
    # every check ran twice a step (every model call paid twice), and two sessions acted on one problem
    from ttir.core.errors import ConfigError

    guarded = ttir.guard(_Agent())
    with pytest.raises(ConfigError, match=r"agent=guard\(_Agent\) is guarded already"):
        make(guarded)
    assert isinstance(make(guarded.inner), GuardedAgent)  # its inner agent, once, as the message says


def test_disabled_guard_is_a_pass_through():
    cfg = TTIRConfig.with_mode("off")
    task = make_task("ContactsAddContact")
    agent = ttir.guard(ReplayAgent([]), config=cfg)
    result = run_episode(SimDevice(), task, agent, budget=3)
    assert not agent.report.findings and result.steps == 0


def test_reset_clears_state_between_episodes():
    task = make_task("SystemWifiTurnOn")
    agent = ttir.guard(ReferenceAgent(task.reference_solution()), config=RULES)
    run_episode(SimDevice(), task, agent)
    first = agent.report.steps
    agent.reset(task.goal)
    assert agent.report.steps == 0 and not agent.events and first > 0


class Hooked:
    """An agent that keeps its own history and wants to hear about recoveries."""

    def __init__(self, inner):
        self.inner, self.heard = inner, []

    def reset(self, goal):
        self.inner.reset(goal)

    def step(self, obs):
        return self.inner.step(obs)

    def on_recovery(self, event):
        self.heard.append(event)


def test_on_recovery_hook_is_told_what_the_guard_did():
    import perturb

    task = make_task("ContactsAddContact")
    agent = Hooked(ReplayAgent.from_task(task))
    guarded = ttir.guard(agent, config=RULES)
    env = perturb.PerturbedDevice(SimDevice(), [perturb.make("font_size_small")], seed=0)
    with env:
        result = run_episode(env, task, guarded)
    assert result.success
    assert agent.heard and all("continue: " + task.goal in e["message"] for e in agent.heard)
    assert {e["diagnoser"] for e in agent.heard} <= {"action_effect", "stuck_loop"}


def test_an_exception_of_the_on_recovery_hook_propagates_unchanged_and_the_guard_goes_on():
    # the hook is the agent's code: its bug was recorded in report.errors alone and went unseen
    import perturb

    class HookBug(Exception):
        pass

    class Raising:
        def __init__(self):
            self.raised = 0

        def reset(self, goal):
            pass

        def step(self, obs):
            return {"action_type": "wait"}

        def on_recovery(self, event):
            if not self.raised:
                self.raised += 1
                raise HookBug(event["diagnoser"])

    task = make_task("SystemWifiTurnOn")
    inner = Raising()
    guarded = ttir.guard(inner, config=RULES)
    env = perturb.PerturbedDevice(SimDevice(), ["popup_permission"], seed=0)
    obs = env.reset(task)
    guarded.reset(task.goal)
    caught = []
    for _ in range(6):
        try:
            step = guarded.step(obs)
        except HookBug as exc:
            caught.append(exc)
            continue
        env.execute(step.action)
        obs = env.observe()
    assert len(caught) == 1 and inner.raised == 1
    assert guarded.report.errors == []  # the agent's exception, not a guard failure
    assert guarded.report.steps == 5  # the steps after it went on


class AsyncReference:
    def __init__(self, plan):
        self.sync = ReferenceAgent(plan)

    def reset(self, goal):
        self.sync.reset(goal)

    async def step(self, obs):
        await asyncio.sleep(0)
        return self.sync.step(obs)


def test_async_agent_gets_an_async_guard():
    task = make_task("SystemBluetoothTurnOn")
    agent = ttir.guard(AsyncReference(task.reference_solution()), config=RULES)
    assert isinstance(agent, AsyncGuardedAgent)

    async def episode():
        device = SimDevice()
        obs = device.reset(task)
        agent.reset(task.goal)
        for _ in range(task.budget):
            step = await agent.step(obs)
            assert isinstance(step, AgentStep)
            if step.action.action_type == "status":
                break
            device.execute(step.action)
            obs = device.observe()
        return task.verify(device)

    assert asyncio.run(episode())
    assert agent.report.steps > 0 and not agent.report.errors


@pytest.mark.parametrize("mode", ["vlm", "cascade"])
def test_an_async_guard_books_every_model_call(mode, vlm_server):
    """The async guard makes the step's call off the event loop; its cost is booked like the
    sync guard's (it had been taken and dropped there, leaving async reports at zero calls)."""
    from ttir.testing import Reply
    from ttir.model.client import VLMClient

    vlm_server.responder = lambda request: Reply.json({
        "repeat_failure_detected": False, "previous_intended_effect_satisfied": "uncertain",
        "interference_present": False, "task_alignment": "on_track", "reason": "fine"}, prompt_tokens=500)
    task = make_task("SystemBluetoothTurnOn")
    cfg = TTIRConfig.with_mode(mode).model_dump()
    cfg["vlm"] = vlm_server.config(max_retries=0).model_dump()
    cfg = TTIRConfig.from_dict(cfg)
    sync_agent = ttir.guard(ReferenceAgent(task.reference_solution()), config=cfg, vlm=VLMClient(cfg.vlm))
    async_agent = ttir.guard(AsyncReference(task.reference_solution()), config=cfg, vlm=VLMClient(cfg.vlm))
    obs = SimDevice().reset(task)
    for agent in (sync_agent, async_agent):
        agent.reset(task.goal)
    before = len(vlm_server.completions())
    sync_agent.step(obs)
    sync_calls = len(vlm_server.completions()) - before
    asyncio.run(async_agent.step(obs))
    async_calls = len(vlm_server.completions()) - before - sync_calls
    assert async_calls == sync_calls and (async_calls > 0) == (mode == "vlm")
    assert async_agent.report.model_calls == sync_agent.report.model_calls == async_calls
    assert async_agent.report.usage[-1].prompt_tokens == sync_agent.report.usage[-1].prompt_tokens


def test_the_guard_summary_rounds_its_rates_and_times():
    from ttir.guarded.report import GuardReport, StepUsage

    report = GuardReport(steps=3, usage=[StepUsage(step=i, guard_ms=ms, model_calls=1)
                                         for i, ms in enumerate([12.955924000380037, 3.0, 40.1])])
    summary = report.summary()
    assert summary["guard_ms_median"] == 12.96 and summary["model_calls_per_step"] == 1.0
    assert GuardReport(steps=3, usage=[StepUsage(step=0, model_calls=1)]).summary()["model_calls_per_step"] == 0.333
    assert report.usage[0].guard_ms == 12.955924000380037  # the exact figure stays in the usage


def test_the_watcher_and_the_proxy_guard_take_the_config_as_the_guard_does(tmp_path):
    from ttir.guarded.proxy import ProxyGuard

    cfg = tmp_path / "ttir.yaml"
    cfg.write_text("watch:\n  interval_s: 2\n", encoding="utf-8")
    assert ttir.Watcher(SimDevice(), cfg).config.watch.interval_s == 2
    assert ttir.Watcher(SimDevice(), {"watch": {"interval_s": 3}}).config.watch.interval_s == 3
    assert ProxyGuard(SimDevice(), {"recovery": {"budget": 2}}).config.recovery.budget == 2
    for make in (ttir.Watcher, ProxyGuard):
        with pytest.raises(TypeError, match=r"config=5 \(int\): expected a ttir.TTIRConfig"):
            make(SimDevice(), 5)


@pytest.mark.parametrize("goal", ["", "   \n"])
def test_an_empty_goal_is_refused_while_task_alignment_reads_it(goal):
    agent = ttir.guard(_Agent())
    with pytest.raises(ValueError, match=r"the goal is empty, and task alignment compares every screen with it"):
        agent.reset(goal)
    with pytest.raises(ValueError, match=r"start_with_history\(goal=.*\): the goal is empty"):
        agent.start_with_history(goal, [])
    agent.reset("Turn on Wi-Fi")  # the guard is still usable
    assert agent.step(SimDevice().observe()).action.action_type == "wait"
    # no task is a choice once task alignment is off (ttir proxy's guard with no --goal)
    ttir.guard(_Agent(), config={"task_alignment": {"mode": "off"}}).reset(goal)


def test_a_users_diagnoser_that_returns_no_finding_is_recorded_not_passed_over_in_silence():
    from recoveries import AlternativeAction

    class ReturnsNone:
        name = "mine"

        def diagnose(self, ctx):
            return None  # forgot the return: the check sat every step out and nothing said so

    agent = ttir.guard(_Agent(), config=TTIRConfig.with_mode("rules"),
                       checks=[*ttir.default_checks(), ttir.Check(ReturnsNone(), AlternativeAction())])
    agent.reset("Turn on Wi-Fi")
    assert agent.step(SimDevice().observe()).action.action_type == "wait"  # fails open: the agent's step
    errors = [e for e in agent.report.errors if e.get("diagnoser") == "mine"]
    assert len(errors) == 1, agent.report.errors  # once, though its rules (the same call) failed too
    assert "returned None (NoneType); expected a ttir.Finding" in errors[0]["error"]
    assert any(e["event"] == "diagnoser_error" and e["diagnoser"] == "mine" for e in agent.events)


@pytest.mark.parametrize("returned, outcome", [
    ({"action_type": "navigate_back"}, "navigate_back"),  # an action dict, as an agent may return
    (Action(action_type="navigate_back"), "navigate_back"),
    ("tap", "recovery 'mine' returned 'tap' (str); expected an AgentStep, an Action or an action dict"),
    ({"action_type": "tap"}, "recovery 'mine' returned an action that is not one"),
])
def test_a_users_recovery_may_return_an_action_and_is_named_when_it_returns_none_of_them(returned, outcome):
    class Always:
        name = "always"

        def diagnose(self, ctx):
            return ttir.Finding(diagnoser="always", problem=True, verdict="true")

    class Mine:
        name = "mine"

        def next_step(self, ctx):
            return returned

    agent = ttir.guard(_Agent(), checks=[ttir.Check(Always(), Mine())])
    agent.reset("Turn on Wi-Fi")
    step = agent.step(SimDevice().observe())
    if "returned" not in outcome:
        assert step.action.action_type == outcome and not agent.report.errors
    else:  # fails open on the user's recovery, its error named (an AttributeError from inside the guard before)
        assert step.action.action_type == "wait"
        assert outcome in agent.report.errors[0]["error"]


def test_a_runaway_reply_is_kept_cut_in_the_history_and_the_step_log_but_returned_whole():
    from benchmark import make_task, run_episode
    from ttir.core.types import RAW_REPLY_CHARS, STEP_TEXT_CHARS

    big = "y" * 1_000_000  # a model that never stopped: the stuck-loop check read all of it at every step

    class Runaway:
        def reset(self, goal):
            pass

        def step(self, obs):
            return AgentStep(action=Action(action_type="wait"), thought=big, summary=big, raw=big)

    agent = ttir.guard(Runaway(), config=TTIRConfig.with_mode("rules"))
    agent.reset("Turn on Wi-Fi")
    screen = SimDevice().observe()
    returned = agent.step(screen)
    assert returned.summary == big and returned.raw == big  # the caller gets what the agent said
    agent.step(screen)
    remembered = agent._core.history[-1].step
    assert remembered.summary == big[:STEP_TEXT_CHARS] + "… [cut: 1,000,000 characters]"
    assert len(remembered.thought) < STEP_TEXT_CHARS + 40 and len(remembered.raw) < RAW_REPLY_CHARS + 40

    result = run_episode(SimDevice(), make_task("SystemBrightnessMax"), ttir.guard(Runaway()), budget=3)
    logged = result.trajectory[0].agent_step
    assert logged["thought"].endswith("… [cut: 1,000,000 characters]") and len(logged["raw"]) < RAW_REPLY_CHARS + 40
    short = AgentStep(action=Action(action_type="wait"), summary='Tap "Save"')
    assert short.bounded() is short  # nothing long: the same step, no copy
