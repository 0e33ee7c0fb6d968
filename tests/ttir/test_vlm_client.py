"""VLMClient through the real openai client over real HTTP to the local test server."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from pydantic import BaseModel

from ttir.core.diagnosis import Cost
from ttir.testing import Reply
from ttir.model.client import (
    VLMBadReply,
    VLMClient,
    VLMHTTPError,
    VLMNotConfigured,
    VLMRateLimited,
    VLMServerError,
    VLMTimeout,
)
from ttir.model.payload import decode_data_url


class Verdict(BaseModel):
    blocked: bool
    label: str


GOOD = {"blocked": True, "label": "cookie banner"}


@pytest.mark.parametrize("reply", [Reply.json(GOOD), Reply.fenced(GOOD), Reply.chatty(GOOD)],
                         ids=["plain", "fenced", "chatty"])
def test_good_replies_parse(vlm_server, reply):
    vlm_server.enqueue(reply)
    client = VLMClient(vlm_server.config())
    result = client.complete_json("Is the screen blocked?", schema=Verdict)
    assert result.value == Verdict(**GOOD)
    assert result.raw == reply.content
    assert result.usage.retries == 0 and result.usage.attempts == 1


@pytest.mark.parametrize(
    "reply, why",
    [
        (Reply.garbage(), "no JSON object"),
        (Reply.empty(), "empty"),
        (Reply.json({"blocked": "perhaps", "label": 3}), "blocked"),
        (Reply.json({"label": "x"}), "blocked"),
        (Reply.text("Sure: {'blocked': True, 'label': 'x'}"), "no JSON object"),
    ],
    ids=["garbage", "empty", "wrong-types", "missing-field", "python-dict"],
)
def test_bad_replies_raise_bad_reply(vlm_server, reply, why):
    vlm_server.enqueue(reply)
    client = VLMClient(vlm_server.config())
    with pytest.raises(VLMBadReply) as info:
        client.complete_json("Is the screen blocked?", schema=Verdict)
    assert why in str(info.value)
    assert info.value.raw == reply.content
    assert len(vlm_server.completions()) == 1  # a bad reply is not a transport error: no retry
    assert client.usage.failed_calls == 1


def test_truncated_reply_names_max_tokens(vlm_server):
    vlm_server.enqueue(Reply.text('{"blocked": true, "lab', finish_reason="length"))
    with pytest.raises(VLMBadReply, match="max_tokens"):
        VLMClient(vlm_server.config()).complete_json("q", schema=Verdict)


def test_slow_reply_times_out_after_retries(vlm_server):
    vlm_server.enqueue(Reply.slow(1.5), Reply.slow(1.5))
    client = VLMClient(vlm_server.config(timeout_s=0.25, max_retries=1))
    with pytest.raises(VLMTimeout) as info:
        client.complete_json("q", schema=Verdict)
    assert info.value.attempts == 2
    assert info.value.usage.retries == 1
    assert len(vlm_server.completions()) == 2
    assert "0.25" in str(info.value)


def test_server_error_then_success_counts_the_retry(vlm_server):
    vlm_server.enqueue(Reply.error(500), Reply.error(502, "bad gateway"), Reply.json(GOOD))
    client = VLMClient(vlm_server.config(max_retries=3))
    result = client.complete_json("q", schema=Verdict)
    assert result.value.blocked is True
    assert result.usage.attempts == 3 and result.usage.retries == 2
    assert len(result.usage.waits_s) == 2
    assert result.usage.waits_s[1] > result.usage.waits_s[0]  # exponential backoff
    assert client.usage.retries == 2
    assert [r.status for r in vlm_server.completions()] == [500, 502, 200]


def test_persistent_server_error_is_typed(vlm_server):
    vlm_server.enqueue(*[Reply.error(503, "overloaded") for _ in range(3)])
    client = VLMClient(vlm_server.config(max_retries=2))
    with pytest.raises(VLMServerError, match="overloaded") as info:
        client.complete_json("q", schema=Verdict)
    assert info.value.status == 503 and info.value.attempts == 3


def test_429_retry_after_is_honoured(vlm_server):
    vlm_server.enqueue(Reply.rate_limited(retry_after=0.3), Reply.json(GOOD))
    client = VLMClient(vlm_server.config(backoff_s=0.01, backoff_max_s=0.02))
    result = client.complete_json("q", schema=Verdict)
    assert result.value.label == "cookie banner"
    assert result.usage.retries == 1
    assert result.usage.waits_s[0] >= 0.3  # the server's wait, not our 0.01 s backoff
    first, second = vlm_server.completions()
    assert first.status == 429 and second.status == 200
    assert second.received_at - first.responded_at >= 0.25  # lower bound: the client really waited


def test_429_storm_ends_in_typed_error_after_max_retries(vlm_server):
    vlm_server.enqueue(Reply.storm(10, retry_after=0))
    client = VLMClient(vlm_server.config(max_retries=3))
    with pytest.raises(VLMRateLimited) as info:
        client.complete_json("q", schema=Verdict)
    assert info.value.attempts == 4
    assert len(vlm_server.completions()) == 4
    assert vlm_server.pending == 6
    assert client.usage.failed_calls == 1 and client.usage.retries == 3


def test_client_errors_are_not_retried(vlm_server):
    vlm_server.enqueue(Reply.error(401, "invalid api key"), Reply.json(GOOD))
    client = VLMClient(vlm_server.config(max_retries=3))
    with pytest.raises(VLMHTTPError, match="invalid api key") as info:
        client.complete_json("q", schema=Verdict)
    assert info.value.status == 401
    assert len(vlm_server.completions()) == 1


def test_usage_is_recorded_per_call_and_accumulated(vlm_server):
    vlm_server.enqueue(Reply.json(GOOD, prompt_tokens=120, completion_tokens=30),
                       Reply.json(GOOD, prompt_tokens=80, completion_tokens=12))
    client = VLMClient(vlm_server.config())
    a = client.complete_json("q", schema=Verdict)
    b = client.complete_json("q", schema=Verdict)
    assert (a.usage.prompt_tokens, a.usage.completion_tokens) == (120, 30)
    assert (b.usage.prompt_tokens, b.usage.completion_tokens) == (80, 12)
    assert a.usage.latency_s > 0 and b.usage.latency_s > 0
    assert client.usage.model_calls == 2
    assert client.usage.prompt_tokens == 200 and client.usage.completion_tokens == 42
    assert client.usage.latency_s == pytest.approx(a.usage.latency_s + b.usage.latency_s)
    assert client.last_usage == b.usage
    cost = Cost(**a.usage.as_cost()) + Cost(**b.usage.as_cost())
    assert cost.model_calls == 2 and cost.prompt_tokens == 200
    assert Cost(**client.usage.as_cost()) == cost


def test_images_arrive_as_downscaled_data_urls(vlm_server):
    vlm_server.enqueue(Reply.json(GOOD), Reply.json(GOOD))
    shot = Image.new("RGB", (1080, 2400), (200, 30, 30))
    client = VLMClient(vlm_server.config(model="qwen2.5-vl-7b", image_max_side=512))
    client.complete_json("Goal: open Contacts. Is the screen blocked?", [shot, shot.crop((0, 0, 300, 200))],
                         schema=Verdict)
    req = vlm_server.completions()[0]
    assert req.model == "qwen2.5-vl-7b"
    assert "Goal: open Contacts" in req.text
    assert len(req.images) == 2
    mime, raw = decode_data_url(req.images[0])
    assert mime == "image/png"
    big = Image.open(io.BytesIO(raw))
    assert max(big.size) == 512 and big.size[0] < big.size[1]
    assert Image.open(io.BytesIO(decode_data_url(req.images[1])[1])).size == (300, 200)  # small ones untouched
    assert req.body["temperature"] == pytest.approx(0.1) and req.body["max_tokens"] == 512
    assert req.headers["authorization"] == "Bearer test-key"

    jpeg = VLMClient(vlm_server.config(image_format="jpeg", image_max_side=256))
    jpeg.complete_json("q", [shot], schema=Verdict)
    mime, raw = decode_data_url(vlm_server.completions()[1].images[0])
    assert mime == "image/jpeg" and Image.open(io.BytesIO(raw)).format == "JPEG"


def test_messages_and_system_prompt(vlm_server):
    vlm_server.enqueue(Reply.json(GOOD))
    client = VLMClient(vlm_server.config())
    client.complete_json([{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
                          {"role": "user", "content": "second"}], [Image.new("RGB", (64, 64))],
                         Verdict, system="You judge screens.")
    msgs = vlm_server.completions()[0].messages
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[0]["content"] == "You judge screens."
    assert msgs[1]["content"] == "first"  # images go to the last user turn only
    assert [p["type"] for p in msgs[3]["content"]] == ["text", "image_url"]


def test_without_schema_returns_the_object(vlm_server):
    vlm_server.enqueue(Reply.chatty({"anything": [1, 2]}), Reply.text("plain words"))
    client = VLMClient(vlm_server.config())
    assert client.complete_json("q").value == {"anything": [1, 2]}
    assert client.complete_text("q").value == "plain words"


def test_settings_come_from_environment(vlm_server, monkeypatch):
    monkeypatch.setenv("TTIR_VLM_BASE_URL", vlm_server.base_url)
    monkeypatch.setenv("TTIR_VLM_MODEL", "env-model")
    monkeypatch.setenv("TTIR_VLM_API_KEY", "env-key")
    vlm_server.enqueue(Reply.json(GOOD))
    client = VLMClient(timeout_s=2.0)
    assert client.base_url == vlm_server.base_url and client.model == "env-model"
    client.complete_json("q", schema=Verdict)
    req = vlm_server.completions()[0]
    assert req.model == "env-model" and req.headers["authorization"] == "Bearer env-key"
    assert client.list_models() == [vlm_server.model]


def test_missing_endpoint_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("TTIR_VLM_BASE_URL", raising=False)
    client = VLMClient()
    with pytest.raises(VLMNotConfigured, match="TTIR_VLM_BASE_URL"):
        client.complete_json("q", schema=Verdict)


def test_unknown_override_is_rejected():
    with pytest.raises(ValueError, match="timeout"):
        VLMClient(timeout=3)


def test_connection_refused_is_retried_then_typed(vlm_server):
    from ttir.model.client import VLMConnectionError

    cfg = vlm_server.config(max_retries=1)
    vlm_server.stop()  # nothing listens on the port any more
    client = VLMClient(cfg)
    with pytest.raises(VLMConnectionError) as info:
        client.complete_json("q", schema=Verdict)
    assert info.value.attempts == 2


def test_a_single_image_and_a_whole_ttir_config_are_accepted(vlm_server):
    from ttir.core.config import TTIRConfig

    vlm_server.enqueue(Reply.json(GOOD))
    client = VLMClient(TTIRConfig(vlm=vlm_server.config()))
    client.complete_json("q", Image.new("RGB", (40, 30)), Verdict)
    assert len(vlm_server.completions()[0].images) == 1
    with pytest.raises(TypeError, match="VLMConfig"):
        VLMClient(object())
    with pytest.raises(TypeError, match=r"images\[1\]"):
        client.complete_json("q", [Image.new("RGB", (4, 4)), 7], Verdict)
