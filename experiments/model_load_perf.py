"""``python -m experiments.perf model_load``: many async guarded episodes at once against a slow
model endpoint, in one process: does every step stay within its deadline, and is every model
call accounted for?

``EPISODES`` async agents, each guarded in ``vlm`` mode, step ``STEPS`` times concurrently on
one event loop against the local test server (``ttir.testing.VLMTestServer``: real HTTP, the
real ``openai`` async client), which answers every call after ``DELAY_S`` seconds. A step's
wall time is measured from the guard's ``step`` call to its return. Calls wait for one of
``vlm.max_concurrent_calls`` slots (default 32); a step whose call was still waiting at its
deadline sends nothing and the rules decide it.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

EPISODES = 100
STEPS = 3
DELAY_S = 1.0
DEADLINE_S = 5.0
TIMEOUT_S = 3.0


def measure_model_load(episodes: int = EPISODES, steps: int = STEPS) -> dict[str, Any]:
    """Run the load and return step times and call counts.

    Args:
        episodes: concurrent guarded episodes.
        steps: steps per episode.

    Returns:
        Medians and maxima of step wall time, steps over the deadline + 1 s, and the calls
        made, failed and the steps that called the model.
    """
    import ttir
    from benchmark import SimDevice, make_task
    from ttir import Action, AgentStep, TTIRConfig
    from ttir.testing import Reply, VLMTestServer
    from ttir.model.client import VLMClient

    good = {"repeat_failure_detected": False, "previous_intended_effect_satisfied": "yes",
            "interference_present": False, "task_alignment": "on_track", "reason": "fine"}
    obs = SimDevice().reset(make_task("SystemWifiTurnOn"))

    class Waits:
        def reset(self, goal: str) -> None:
            pass

        async def step(self, o: Any) -> AgentStep:
            return AgentStep(action=Action(action_type="wait"))

    with VLMTestServer() as server:
        server.responder = lambda request: Reply.slow(DELAY_S, Reply.json(good))
        cfg = TTIRConfig.with_mode("vlm").model_dump()
        cfg["vlm"] = server.config(timeout_s=TIMEOUT_S, step_deadline_s=DEADLINE_S, max_retries=1).model_dump()
        config = TTIRConfig.from_dict(cfg)
        client = VLMClient(config.vlm)
        times: list[float] = []
        guards = []

        async def episode() -> None:
            g = ttir.guard(Waits(), config=config, vlm=client)
            guards.append(g)
            g.reset("Turn on Wi-Fi")
            for _ in range(steps):
                t0 = time.monotonic()
                await g.step(obs)
                times.append(time.monotonic() - t0)

        async def all_episodes() -> None:
            await asyncio.gather(*(episode() for _ in range(episodes)))

        t0 = time.monotonic()
        asyncio.run(all_episodes())
        elapsed = time.monotonic() - t0
        requests = len(server.completions())
    usage = [u for g in guards for u in g.report.usage]
    return {"episodes": episodes, "steps": len(times), "endpoint_delay_s": DELAY_S, "step_deadline_s": DEADLINE_S,
            "step_s_median": round(statistics.median(times), 3), "step_s_max": round(max(times), 3),
            "steps_over_deadline_plus_1s": sum(t > DEADLINE_S + 1.0 for t in times),
            "model_calls": sum(u.model_calls for u in usage), "model_errors": sum(u.model_errors for u in usage),
            "http_requests_received": requests, "steps_with_a_model_call": sum(u.model_calls > 0 for u in usage),
            "steps_whose_call_waited_past_the_deadline": sum(u.model_calls == 0 for u in usage),
            "wall_s": round(elapsed, 2)}
