"""The async path: AsyncOpenAI over real HTTP, concurrency, no blocking of the event loop."""

from __future__ import annotations

import asyncio
import time

import pytest
from PIL import Image
from pydantic import BaseModel

from ttir.testing import Reply
from ttir.model.client import VLMBadReply, VLMClient, VLMRateLimited, VLMTimeout


class Verdict(BaseModel):
    blocked: bool
    label: str


GOOD = {"blocked": False, "label": "clean"}


def test_async_call_parses_inside_asyncio_run(vlm_server):
    vlm_server.enqueue(Reply.error(500), Reply.fenced(GOOD, prompt_tokens=50, completion_tokens=9))
    client = VLMClient(vlm_server.config())

    async def main():
        return await client.acomplete_json("q", [Image.new("RGB", (2000, 1000))], Verdict)

    result = asyncio.run(main())
    assert result.value == Verdict(**GOOD)
    assert result.usage.retries == 1 and result.usage.prompt_tokens == 50
    assert client.usage.model_calls == 1 and client.usage.retries == 1
    assert vlm_server.completions()[-1].images[0].startswith("data:image/png;base64,")


def test_async_client_survives_several_event_loops(vlm_server):
    vlm_server.enqueue(Reply.json(GOOD), Reply.json(GOOD))
    client = VLMClient(vlm_server.config())
    for _ in range(2):  # each asyncio.run has its own loop; the client must not reuse a dead pool
        assert asyncio.run(client.acomplete_json("q", schema=Verdict)).value.label == "clean"
    assert client.usage.model_calls == 2


def test_concurrent_slow_calls_overlap_and_leave_the_loop_free(vlm_server):
    # Each reply is held until both requests have arrived (a serial client would stall
    # 3 s and then fail the ordering check), then delayed a little for the heartbeat.
    held = Reply.held(2, Reply.slow(0.3, Reply.json(GOOD)), timeout_s=3.0)
    vlm_server.enqueue(held, held)
    client = VLMClient(vlm_server.config(timeout_s=5.0))
    ticks: list[float] = []

    async def heartbeat(stop: asyncio.Event):
        while not stop.is_set():
            ticks.append(time.monotonic())
            await asyncio.sleep(0.02)

    async def main():
        stop = asyncio.Event()
        beat = asyncio.create_task(heartbeat(stop))
        results = await asyncio.gather(client.acomplete_json("a", schema=Verdict),
                                       client.acomplete_json("b", schema=Verdict))
        stop.set()
        await beat
        return results

    results = asyncio.run(main())
    assert [r.value.label for r in results] == ["clean", "clean"]
    first, second = sorted(vlm_server.completions(), key=lambda r: r.received_at)
    # Both requests were in flight at once: the second arrived before the first was answered.
    assert second.received_at < first.responded_at
    # The event loop kept running while the server sat on both requests.
    assert any(second.received_at < t < first.responded_at for t in ticks)


def test_async_errors_are_typed(vlm_server):
    vlm_server.enqueue(Reply.garbage(), Reply.storm(3, retry_after=0), Reply.slow(1.0), Reply.slow(1.0))
    client = VLMClient(vlm_server.config(max_retries=2, timeout_s=0.25))

    async def main():
        with pytest.raises(VLMBadReply):
            await client.acomplete_json("q", schema=Verdict)
        with pytest.raises(VLMRateLimited) as rate:
            await client.acomplete_json("q", schema=Verdict)
        assert rate.value.attempts == 3
        client.config.max_retries = 1
        with pytest.raises(VLMTimeout) as slow:
            await client.acomplete_json("q", schema=Verdict)
        assert slow.value.attempts == 2

    asyncio.run(main())
    assert client.usage.failed_calls == 3
    assert len(vlm_server.completions()) == 1 + 3 + 2
