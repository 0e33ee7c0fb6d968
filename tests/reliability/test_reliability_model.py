"""Issue 14, items 3, 9, 10 and 13: hostile model replies and dead endpoints, against the
real openai client over real HTTP (ttir.testing.VLMTestServer).

Replies are parsed in linear time; whatever a 200 body holds, a failure is a counted
VLMError (one per step, not one per diagnoser); a failed call is billed in the books;
one deadline bounds a step's model time, retries included; and after repeated failures
the model tier rests while the rules tier decides."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from tests.support.reliability_support import bounded, needs_linux

import perturb
import ttir
from benchmark import SimDevice, make_task, run_episode
from benchmark.agents import PlannerAgent, PlannerParams, ReferenceAgent
from diagnosers.judgment import Judgment
from ttir import Action, AgentStep, TTIRConfig
from ttir.testing import Reply
from ttir.model.client import VLMBadReply, VLMClient, VLMError
from ttir.model.payload import ReplyParseError, json_candidates, parse_json_reply

pytestmark = pytest.mark.reliability

GOOD = {"repeat_failure_detected": False, "previous_intended_effect_satisfied": "yes",
        "interference_present": False, "task_alignment": "on_track", "reason": "fine"}
TASK = "SystemWifiTurnOn"


def _config(server: Any, **vlm: Any) -> TTIRConfig:
    cfg = TTIRConfig.with_mode("vlm").model_dump()
    cfg["vlm"] = server.config(**{"timeout_s": 2.0, "max_retries": 0, **vlm}).model_dump()
    return TTIRConfig.from_dict(cfg)


def _guarded(server: Any, agent: Any = None, **vlm: Any) -> Any:
    config = _config(server, **vlm)
    task = make_task(TASK)
    agent = agent if agent is not None else ReferenceAgent(task.reference_solution())
    return ttir.guard(agent, config=config, vlm=VLMClient(config.vlm))


def _first_obs() -> tuple[Any, Any]:
    task = make_task(TASK)
    return task, SimDevice().reset(task)


def _refuse_the_rest(server: Any) -> None:
    server.responder = lambda request: Reply.error(400, "no more scripted replies")


# ------------------------------------------------------------- item 3: linear parsing


@needs_linux
@pytest.mark.parametrize("reply", [
    "<think>" * 40_000 + '{"a": 1}',  # 280 KB: 16 s per 20,000 with the old regex (quadratic)
    "```" + " " * 3_000 + '{"a": 1}',  # the old fence regex backtracked cubically on spaces
    "```json" + "\n```json" * 20_000 + '\n{"a": 1}',
    '{"a": 1}' + "{}" * 50_000,
], ids=["think", "fence-spaces", "fences", "many-objects"])
def test_reply_parsing_is_linear(reply):
    assert bounded(10, json_candidates, reply)[0] == {"a": 1}


@needs_linux
@pytest.mark.parametrize("reply", ["[" * 100_000, '{"a":' * 50_000, "<think>" * 30_000 + "[" * 50_000])
def test_deeply_nested_replies_are_a_parse_error(reply):
    def parse(text: str) -> str:
        try:
            parse_json_reply(text, Judgment)
        except ReplyParseError as exc:
            return str(exc)
        return "parsed"

    assert "nests brackets deeper" in bounded(10, parse, reply)


# --------------------------------------------------------- item 9: typed client errors


UNREADABLE = [
    Reply.body(b"<html><body><h1>502 Bad Gateway</h1></body></html>"),  # an HTML page labelled JSON
    Reply.body(b"<html><body>maintenance</body></html>", "text/html"),
    Reply.body(b""),
    Reply.body(b"   \n"),
    Reply.body(b'{"choices": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"),  # RecursionError in the JSON decoder
    Reply.body(b'{"choices": 5}'),
    Reply.text("[" * 50_000),
]
UNREADABLE_IDS = ["html-as-json", "html", "blank", "whitespace", "nested-body", "wrong-shape-body", "nested-reply"]


@pytest.mark.parametrize("reply", UNREADABLE, ids=UNREADABLE_IDS)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_unreadable_answers_are_a_counted_vlm_error(vlm_server, reply, mode):
    vlm_server.enqueue(reply)
    client = VLMClient(vlm_server.config(max_retries=0))
    with pytest.raises(VLMError) as info:
        if mode == "sync":
            client.complete_json("judge the screen", schema=Judgment)
        else:
            asyncio.run(client.acomplete_json("judge the screen", schema=Judgment))
    assert isinstance(info.value, VLMBadReply)
    assert client.usage.model_calls == 1 and client.usage.failed_calls == 1


@pytest.mark.parametrize("reply", UNREADABLE[:1] + UNREADABLE[4:5], ids=["html-as-json", "nested-body"])
def test_an_unreadable_answer_is_one_failed_call_per_step_not_one_per_diagnoser(vlm_server, reply):
    vlm_server.enqueue(reply)
    _refuse_the_rest(vlm_server)
    agent = _guarded(vlm_server)
    task, obs = _first_obs()
    agent.reset(task.goal)
    agent.step(obs)
    assert len(vlm_server.completions()) == 1
    usage = agent.report.usage[0]
    assert usage.model_calls == 1 and usage.model_errors == 1
    assert agent.report.errors and all("VLMBadReply" in e["error"] for e in agent.report.errors)


# --------------------------------------------------------- item 10: failed calls billed


def test_a_wrong_shape_reply_is_billed(vlm_server):
    # the bad reply is asked again once (issue 15), and the re-ask is billed too
    vlm_server.enqueue(Reply.json({"nope": 1}, prompt_tokens=900, completion_tokens=14),
                       Reply.json({"still": "nope"}, prompt_tokens=950, completion_tokens=9))
    _refuse_the_rest(vlm_server)
    agent = _guarded(vlm_server)
    task, obs = _first_obs()
    agent.reset(task.goal)
    agent.step(obs)
    assert len(vlm_server.completions()) == 2
    usage = agent.report.usage[0]
    assert (usage.model_calls, usage.model_errors, usage.prompt_tokens, usage.completion_tokens) == (2, 2, 1850, 23)
    assert agent.report.summary()["model_errors"] == 2 and agent.report.tokens == 1873
    assert usage.model_requests == 2


def test_a_429_storm_is_counted(vlm_server):
    vlm_server.enqueue(Reply.storm(4, retry_after=0.01))
    _refuse_the_rest(vlm_server)
    agent = _guarded(vlm_server, max_retries=3, backoff_s=0.01, backoff_max_s=0.02)
    task, obs = _first_obs()
    agent.reset(task.goal)
    agent.step(obs)
    assert len(vlm_server.completions()) == 4
    usage = agent.report.usage[0]
    assert usage.model_calls == 1 and usage.model_errors == 1 and usage.model_latency_s > 0


def test_a_failed_recovery_call_is_billed(vlm_server):
    vlm_server.enqueue(Reply.json({**GOOD, "interference_present": True, "reason": "a pop-up"}, prompt_tokens=100),
                       Reply.json({"no": "action"}, prompt_tokens=700), Reply.json({"no": "action"}, prompt_tokens=750))
    _refuse_the_rest(vlm_server)
    config = _config(vlm_server).override({"recovery.mode": "vlm"})
    task, obs = _first_obs()
    agent = ttir.guard(ReferenceAgent(task.reference_solution()), config=config, vlm=VLMClient(config.vlm))
    agent.reset(task.goal)
    agent.step(obs)
    assert len(vlm_server.completions()) == 3  # the judgment, the recovery's bad reply and its one re-ask
    usage = agent.report.usage[0]
    assert (usage.model_calls, usage.model_errors, usage.prompt_tokens) == (3, 2, 1550)


# --------------------------------------------- item 13: per-step deadline and breaker


def test_a_hanging_endpoint_costs_one_deadline_per_step(vlm_server):
    vlm_server.enqueue(*[Reply.slow(30) for _ in range(4)])
    _refuse_the_rest(vlm_server)
    agent = _guarded(vlm_server, timeout_s=20, max_retries=3, step_deadline_s=1.0)
    task, obs = _first_obs()
    agent.reset(task.goal)
    step = agent.step(obs)
    assert len(vlm_server.completions()) == 1  # the deadline cut the attempt short; no retry after it
    assert agent.report.usage[0].model_errors == 1
    expected = ReferenceAgent(task.reference_solution())
    expected.reset(task.goal)
    assert step.action == expected.step(obs).action  # the rules found nothing wrong: the agent's step


def test_a_long_retry_after_is_not_slept_past_the_deadline(vlm_server):
    vlm_server.enqueue(Reply.storm(4, retry_after=60))
    _refuse_the_rest(vlm_server)
    agent = _guarded(vlm_server, max_retries=3, step_deadline_s=2.0)
    task, obs = _first_obs()
    agent.reset(task.goal)
    agent.step(obs)
    assert len(vlm_server.completions()) == 1
    assert agent.report.usage[0].model_errors == 1
    assert "429" in agent.report.errors[0]["error"] or "rate limited" in agent.report.errors[0]["error"]


def test_the_deadline_does_not_bound_the_agents_own_calls(vlm_server):
    from ttir.model.deadline import model_deadline, paused_deadline, remaining_s

    with model_deadline(5):
        outer = remaining_s()
        with paused_deadline():
            assert remaining_s() is None  # the wrapped agent's own model calls run unbounded by the guard
        assert remaining_s() is not None and remaining_s() <= outer
    assert remaining_s() is None


class _Waiter:
    """An agent that always waits: every step is a guarded step on the same screen."""

    def reset(self, goal: str) -> None:
        pass

    def step(self, obs: Any) -> AgentStep:
        return AgentStep(action=Action(action_type="wait", seconds=0), summary="wait")


def test_a_dead_endpoint_makes_the_model_tier_rest(vlm_server):
    vlm_server.responder = lambda request: Reply.error(500)
    agent = _guarded(vlm_server, agent=_Waiter(), breaker_failures=2, breaker_rest_steps=3)
    task, obs = _first_obs()
    agent.reset(task.goal)
    calls = []
    for _ in range(8):
        before = len(vlm_server.completions())
        agent.step(obs)
        calls.append(len(vlm_server.completions()) - before)
    assert calls == [1, 1, 0, 0, 0, 1, 0, 0]  # 2 failed steps: rest 3; one more failure: rest again
    assert [e["event"] for e in agent.events].count("model_resting") == 2
    resting = [f for f in agent.report.findings if f["step"] in (2, 3, 4)]
    assert resting and all(f["tier"] == "rules" and any("resting" in e for e in f["evidence"]) for f in resting)


def test_the_rules_still_decide_when_the_model_is_dead(vlm_server):
    """Case study 3 (Figure 11) with every model call failing: the guard still declines the pop-up."""
    vlm_server.responder = lambda request: Reply.error(503)
    task = make_task("RecipeDeleteMultipleRecipes")
    engager = PlannerParams(engage_probability=1.0, move_on_probability=0.0, drift_probability=0.0)
    agent = _guarded(vlm_server, agent=PlannerAgent(task.reference_solution(), engager))
    env = perturb.PerturbedDevice(SimDevice(), [perturb.make("popup_security")], seed=0)
    result = run_episode(env, task, agent)
    assert result.success
    report = agent.report
    assert report.model_errors >= 1 and report.sessions[0].diagnoser == "interference"
    assert "overlay_engaged" not in [e["event"] for e in env.event_log()]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_trickling_endpoint_cannot_hold_a_step_past_its_deadline(vlm_server, kind):
    """Issue 31, item 1: 200 at once, then the body a byte every 0.25 s (some 80 s in all). The
    read timeout restarts with every byte, so it alone held a step for the whole drip; the
    deadline now bounds the whole exchange."""
    vlm_server.responder = lambda request: Reply.trickle(0.25, Reply.json(GOOD))
    task, obs = _first_obs()
    inner = ReferenceAgent(task.reference_solution())
    if kind == "async":
        class AsyncReference:
            def reset(self, goal: str) -> None:
                inner.reset(goal)

            async def step(self, o: Any) -> AgentStep:
                return inner.step(o)

        agent = _guarded(vlm_server, AsyncReference(), timeout_s=3.0, max_retries=3, step_deadline_s=2.0)
    else:
        agent = _guarded(vlm_server, inner, timeout_s=3.0, max_retries=3, step_deadline_s=2.0)
    agent.reset(task.goal)
    started = time.monotonic()
    step = agent.step(obs) if kind == "sync" else asyncio.run(agent.step(obs))
    elapsed = time.monotonic() - started
    assert elapsed < 2.0 + 1.0, f"the step took {elapsed:.1f}s against a 2s deadline"
    assert step.action is not None
    usage = agent.report.usage[0]
    assert usage.model_errors >= 1 and usage.model_calls >= 1  # the cut call is counted, not lost


def test_a_burst_of_calls_waits_its_turn_and_the_wait_counts_against_the_deadline(vlm_server):
    """Issue 31, item 1: model calls in flight per endpoint are bounded (vlm.max_concurrent_calls);
    a burst queues, and a call still queued at the step's deadline is not sent nor billed."""
    from ttir.model.deadline import model_deadline
    from ttir.model.client import VLMTimeout

    vlm_server.responder = lambda request: Reply.slow(0.4, Reply.json(GOOD))
    client = VLMClient(vlm_server.config(max_retries=0, timeout_s=5.0, max_concurrent_calls=2))

    async def burst(n: int, deadline: Any) -> list[Any]:
        async def one() -> Any:
            with model_deadline(deadline):
                return await client.acomplete_json("ping")
        return await asyncio.gather(*(one() for _ in range(n)), return_exceptions=True)

    results = asyncio.run(burst(6, None))
    assert all(not isinstance(r, BaseException) for r in results)  # all answered: they queued
    spans = sorted((r.received_at, r.responded_at) for r in vlm_server.completions())
    in_flight = max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)
    assert len(spans) == 6 and in_flight <= 2

    # every slot taken (as a burst in flight would take them): a call waits until its step's deadline,
    # then gives up unsent and unbilled, sync and async alike
    from ttir.model.call_slots import slot
    vlm_server.clear()
    with slot(client._slot_key, 2), slot(client._slot_key, 2):
        with pytest.raises(VLMTimeout, match="not sent") as sync_err, model_deadline(0.3):
            client.complete_json("ping")
        async def late() -> Any:
            with model_deadline(0.3):
                return await client.acomplete_json("ping")
        with pytest.raises(VLMTimeout, match="not sent") as async_err:
            asyncio.run(late())
    assert sync_err.value.usage.model_calls == 0 and async_err.value.usage.model_calls == 0
    assert vlm_server.completions() == []
    assert client.complete_json("ping")  # the slots freed: the next call goes through


class _ForwardProxy:
    """A plain-HTTP forward proxy (absolute-form requests, one per connection) that counts what it carries."""

    def __init__(self) -> None:
        import socket
        import threading

        self.requests = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._threads.append(threading.Thread(target=self._serve, args=(conn,), daemon=True))
            self._threads[-1].start()

    def _serve(self, conn: Any) -> None:
        try:
            self._forward(conn)
        except OSError:
            pass  # the client hung up (a cut drip): so does the proxy

    def _forward(self, conn: Any) -> None:
        import socket
        from urllib.parse import urlsplit

        with conn:
            raw = b""
            while b"\r\n\r\n" not in raw:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                raw += chunk
            head, body = raw.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            method, target, version = lines[0].split(" ")
            headers = [h for h in lines[1:] if not h.lower().startswith(("connection:", "proxy-connection:"))]
            length = next((int(h.split(":", 1)[1]) for h in headers if h.lower().startswith("content-length:")), 0)
            while len(body) < length:
                body += conn.recv(65536)
            url = urlsplit(target)
            self.requests += 1
            with socket.create_connection((url.hostname, url.port)) as up:
                path = url.path + (f"?{url.query}" if url.query else "")
                up.sendall("\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])
                           .encode("latin-1") + body)
                while chunk := up.recv(65536):  # streamed as it comes: a drip stays a drip
                    conn.sendall(chunk)

    def close(self) -> None:
        import socket

        self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept
        self._sock.close()
        for t in self._threads:
            t.join(timeout=10)


def test_the_model_client_goes_through_the_proxy_the_environment_names(vlm_server, monkeypatch):
    """The deadline transport replaced the HTTP library's own, which then no longer read
    HTTP_PROXY: a user behind a proxy lost the model. Calls go through the proxy again, and a
    drip through it is still cut at the deadline."""
    proxy = _ForwardProxy()
    try:
        for var in ("HTTP_PROXY", "http_proxy"):
            monkeypatch.setenv(var, proxy.url)
        for var in ("NO_PROXY", "no_proxy"):
            monkeypatch.setenv(var, "")
        vlm_server.responder = lambda request: Reply.json(GOOD)
        assert VLMClient(vlm_server.config(max_retries=0)).complete_json("ping")
        assert proxy.requests == 1 and len(vlm_server.completions()) == 1

        from ttir.model.deadline import model_deadline
        from ttir.model.client import VLMTimeout

        vlm_server.responder = lambda request: Reply.trickle(0.25, Reply.json(GOOD))
        client = VLMClient(vlm_server.config(max_retries=0, timeout_s=5.0))
        started = time.monotonic()
        with pytest.raises(VLMTimeout), model_deadline(1.0):
            client.complete_json("ping")
        assert time.monotonic() - started < 2.0 and proxy.requests == 2

        for var in ("NO_PROXY", "no_proxy"):  # and NO_PROXY still sends a host around it
            monkeypatch.setenv(var, "127.0.0.1")
        vlm_server.responder = lambda request: Reply.json(GOOD)
        assert VLMClient(vlm_server.config(max_retries=0)).complete_json("ping")
        assert proxy.requests == 2
    finally:
        proxy.close()
