"""The OpenAI-compatible VLM agent, against the local test server over real HTTP."""

from __future__ import annotations

import asyncio

import ttir
from benchmark import SimDevice, make_task, run_episode
from benchmark.agents.vlm import AsyncVLMAgent, VLMAgent
from ttir.testing import Reply
from ttir.model.client import VLMClient


def test_vlm_agent_plays_a_task_from_model_replies(vlm_server):
    task = make_task("SystemWifiTurnOn")
    device = SimDevice()

    def responder(req):
        # answer from the UI tree the agent sent (lines like `[12] Switch "OFF" id="wifi_switch" …`)
        tree = [ln for ln in req.text.splitlines() if ln.startswith("[")]

        def index_of(needle):
            line = next((ln for ln in tree if needle in ln), None)
            return None if line is None else int(line[1:line.index("]")])

        switch = next((ln for ln in tree if 'id="wifi_switch"' in ln), None)
        state = next((ln for ln in tree if 'id="switch_widget"' in ln), "")
        if switch is not None and '"ON"' in state:
            return Reply.json({"thought": "done", "summary": "Finish", "action": {"action_type": "status", "goal_status": "complete"}})
        if switch is not None:
            return Reply.chatty({"thought": "tap the switch", "summary": "Turn Wi-Fi on",
                                 "action": {"action_type": "click", "index": index_of('id="wifi_switch"')}})
        row = index_of('"Network & internet"')
        if row is not None and any("pkg=" not in ln and "Settings" in ln for ln in tree):
            return Reply.fenced({"thought": "open network settings", "summary": "Open Network & internet",
                                 "action": {"action_type": "click", "index": row}})
        return Reply.json({"thought": "start", "summary": "Open Settings", "action": {"action_type": "open_app", "app_name": "Settings"}})

    vlm_server.responder = responder
    agent = VLMAgent(VLMClient(vlm_server.config()))
    result = run_episode(device, task, agent)
    assert result.success and result.termination == "done"
    reqs = vlm_server.completions()
    assert len(reqs) == agent.stats.calls == len(result.trajectory)
    assert all(r.images for r in reqs)  # the screenshot went along
    assert task.goal in reqs[0].text and "step 1" in reqs[-1].text  # goal and history in the prompt


def test_unusable_reply_is_asked_again_once_then_becomes_a_wait(vlm_server):
    vlm_server.enqueue(Reply.garbage(), Reply.json({"action": {"action_type": "tap", "x": 1}}),  # step 1 + its re-ask
                       Reply.empty(), Reply.garbage())  # step 2 + its re-ask
    agent = VLMAgent(VLMClient(vlm_server.config(max_retries=0)))
    agent.reset("goal")
    obs = SimDevice().observe()
    assert agent.step(obs).action.action_type == "wait"
    assert agent.step(obs).action.action_type == "wait"
    assert agent.stats.bad_replies == 2 and agent.stats.calls == 4 and agent.stats.requests == 4
    second = vlm_server.completions()[1]
    assert second.messages[-2]["role"] == "assistant" and "I looked at the screen" in second.messages[-2]["content"]
    assert "could not be used" in second.messages[-1]["content"] and "no JSON object" in second.messages[-1]["content"]


def test_a_reply_that_parses_on_the_re_ask_is_used(vlm_server):
    vlm_server.enqueue(Reply.garbage(), Reply.json({"summary": "Open Settings",
                                                    "action": {"action_type": "open_app", "app_name": "Settings"}}))
    agent = VLMAgent(VLMClient(vlm_server.config(max_retries=0)))
    agent.reset("goal")
    step = agent.step(SimDevice().observe())
    assert step.action.app_name == "Settings" and agent.stats.reasks == 1 and agent.stats.bad_replies == 0


def test_async_vlm_agent_under_the_async_guard(vlm_server):
    vlm_server.responder = lambda req: Reply.json({"thought": "", "summary": "Open Settings",
                                                   "action": {"action_type": "open_app", "app_name": "Settings"}})
    agent = ttir.guard(AsyncVLMAgent(VLMClient(vlm_server.config())), config=ttir.TTIRConfig.with_mode("rules"))

    async def go():
        agent.reset("Turn on WiFi.")
        return await agent.step(SimDevice().observe())

    assert asyncio.run(go()).action.app_name == "Settings"
