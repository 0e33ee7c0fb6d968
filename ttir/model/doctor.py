"""``ttir doctor --vlm``: is a model endpoint ready for ttir's model tier?

Checks, in order, with the real client over real HTTP: the endpoint answers
``GET /models``; the model is listed; it answers a request whose reply has a
JSON schema (and in which form: json_schema, json_object + schema, or plain text
parsed); it accepts an image. Each check yields a :class:`DoctorCheck`.
"""

from __future__ import annotations

import time
from typing import Iterator, Literal, Optional

from PIL import Image
from pydantic import BaseModel, ConfigDict

from ttir.core.config import VLMConfig
from ttir.core.doctor_check import DoctorCheck



class _Probe(BaseModel):
    """The doctor's question: a reply with a fixed shape."""

    model_config = ConfigDict(extra="ignore")

    answer: Literal["yes", "no"]
    colour: str = ""


PROBE_PROMPT = ('Is the sky blue on a clear day? Reply with one JSON object and nothing else: '
                '{"answer": "yes" or "no", "colour": "the colour, in one word"}')


def run_vlm_checks(config: Optional[VLMConfig] = None, *, max_tokens: int = 64) -> Iterator[DoctorCheck]:
    """``ttir doctor --vlm``: check an endpoint step by step (reachable, a model answers, JSON
    replies and in which form, images), yielding each check as it completes.

    Args:
        config: the endpoint's settings; None: the defaults and the ``TTIR_VLM_*`` variables.
        max_tokens: the reply limit of the test calls.

    Returns:
        An iterator of :class:`~ttir.core.doctor_check.DoctorCheck`; checks that cannot run after a
        failure are reported as ``skip``.
    """
    from ttir.model.client import VLMClient, VLMError, VLMImagesRefused

    cfg = (config or VLMConfig()).model_copy(update={"max_retries": 0, "vision": None, "structured": "auto"})
    client = VLMClient(cfg)
    if not client.base_url:
        yield DoctorCheck(name="endpoint", status="fail", detail="no endpoint: set TTIR_VLM_BASE_URL (or pass --base-url); "
                       "for the offline model run `ttir serve-model` first")
        return
    client.traits.structured, client.traits.vision = None, None  # probe afresh
    client.traits.refused.clear()
    t0 = time.perf_counter()
    try:
        models = client.list_models()
    except VLMError as exc:
        yield DoctorCheck(name="reachable", status="fail", detail=str(exc))
        for name in ("model listed", "structured replies", "images"):
            yield DoctorCheck(name=name, status="skip", detail="the endpoint did not answer")
        return
    yield DoctorCheck(name="reachable", status="ok", detail=f"{client.base_url} answered GET /models in "
                   f"{(time.perf_counter() - t0) * 1000:.0f} ms")
    if client.model in models:
        yield DoctorCheck(name="model listed", status="ok", detail=f"{client.model!r} is served")
    else:
        yield DoctorCheck(name="model listed", status="warn", needed=False,
                       detail=f"{client.model!r} is not among {models[:8]}; set TTIR_VLM_MODEL to one of them "
                              "(some servers answer for any name)")
    try:
        result = client.complete_json(PROBE_PROMPT, schema=_Probe, max_tokens=max_tokens)
        form = result.usage.structured or "off"
        how = {"json_schema": "response_format json_schema (OpenAI / vLLM style)",
               "json_object": "response_format json_object + schema (llama-cpp-python style)",
               "off": "no response_format accepted: plain replies, parsed leniently"}[form]
        yield DoctorCheck(name="structured replies", status="ok" if form != "off" else "warn", needed=False,
                       detail=f"{how}; a reply parsed in {result.usage.latency_s:.1f} s "
                              f"({result.usage.attempts} request(s))")
    except VLMError as exc:
        yield DoctorCheck(name="structured replies", status="fail", detail=f"no usable reply: {exc}")
    try:
        client.complete_text("Describe this image in three words.", images=[Image.new("RGB", (32, 32), "red")],
                             max_tokens=16)
        yield DoctorCheck(name="images", status="ok", needed=False, detail="an image was accepted: screenshots are sent")
    except VLMImagesRefused as exc:
        yield DoctorCheck(name="images", status="warn", needed=False,
                       detail=f"refused (a text-only model): ttir sends the accessibility tree as text instead "
                              f"(detected on its own; vlm.vision: false skips the probe). {str(exc)[:160]}")
    except VLMError as exc:
        yield DoctorCheck(name="images", status="warn", needed=False, detail=f"the image request failed: {exc}")
    finally:
        client.close()


__all__ = ["DoctorCheck", "run_vlm_checks"]
