"""The model client: one JSON-returning chat call to any OpenAI-compatible endpoint.

Built on the ``openai`` package (sync ``OpenAI``, async ``AsyncOpenAI``) so it
talks to OpenAI, vLLM, Ollama, LM Studio … alike. Retries are ours (``tenacity``,
exponential backoff, a server's ``Retry-After`` honoured), the client's own are
switched off so every retry is counted. Each call returns its :class:`CallUsage`
(tokens, latency, retries); the client accumulates them in ``client.usage``.

    client = VLMClient(VLMConfig(base_url="http://localhost:8000/v1", model="qwen2.5-vl"))
    result = client.complete_json("Describe the screen as JSON …", images=[screenshot], schema=MyModel)
    result.value, result.usage.prompt_tokens

With a schema, the request carries it as ``response_format`` in the richest form the
endpoint accepts (:mod:`ttir.model.endpoint`: learnt from its refusals, remembered per
endpoint). :meth:`VLMClient.ask` renders a prompt for what the endpoint can read —
screenshots, or for a text-only model the accessibility tree — and inside a guarded
step (:func:`ttir.model.deadline.model_deadline`) a reply that does not parse is asked again
once, with its parse error.
"""

from __future__ import annotations

import asyncio
import email.utils
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Generic, Optional, Sequence, TypeVar, Union

from loguru import logger
from pydantic import BaseModel, ConfigDict, Field
from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt, stop_any

from ttir.model.call_slots import SlotTimeout, aslot, slot
from ttir.core.config import VLMConfig, env_vlm_settings
from ttir.core.errors import TTIRError
from ttir.model.deadline import remaining_s, take_reask
from ttir.model.endpoint import (
    EndpointTraits,
    refuses_images,
    refuses_response_format,
    response_format,
    structured_choices,
    traits_for,
)
from ttir.model.payload import ImageLike, Messages, ReplyParseError, build_messages, encode_image, parse_json_reply

if TYPE_CHECKING:  # openai is imported on first use: `import ttir.model.client` stays cheap in rules-only runs
    import openai

T = TypeVar("T", bound=BaseModel)
Render = Callable[[bool], tuple[Union[str, Messages], Sequence[ImageLike]]]  # vision? -> (prompt, images)

MAX_RETRY_AFTER_S = 60.0  # never sleep longer than this on a server's say-so
"""The longest a client sleeps on a server's ``Retry-After``, in seconds."""
_RETRY_STATUSES = (408, 429)


# ------------------------------------------------------------------------ errors


class VLMError(TTIRError):
    """Base of every model-call failure. ``usage`` says what the failed call cost."""

    def __init__(self, message: str, *, usage: Optional["CallUsage"] = None, status: Optional[int] = None):
        super().__init__(message)
        self.usage = usage
        self.status = status

    @property
    def attempts(self) -> int:
        """How many HTTP attempts the failed call made (0 when unknown)."""
        return self.usage.attempts if self.usage else 0


class VLMNotConfigured(VLMError):
    """No endpoint: neither the config nor ``TTIR_VLM_BASE_URL`` names one."""


class VLMTimeout(VLMError):
    """Every attempt timed out (after the configured retries)."""


class VLMConnectionError(VLMError):
    """The endpoint could not be reached (after the configured retries)."""


class VLMRateLimited(VLMError):
    """The endpoint kept answering 429 until the retries ran out."""


class VLMServerError(VLMError):
    """The endpoint kept answering 5xx until the retries ran out."""


class VLMHTTPError(VLMError):
    """A non-retryable HTTP error (400, 401, 404 …): fix the request or the config."""


class VLMImagesRefused(VLMHTTPError):
    """The endpoint refused the request's images (a text-only model): ask it again in text.
    The endpoint is remembered as text-only once a text request succeeds."""


class VLMBadReply(VLMError):
    """The model answered, but not with what was asked (empty, no JSON, wrong shape).

    ``raw`` holds the reply text."""

    def __init__(self, message: str, *, raw: Optional[str] = None, **kw: Any):
        super().__init__(message, **kw)
        self.raw = raw


# ------------------------------------------------------------------------- usage


class CallUsage(BaseModel):
    """What one call cost. The first four fields are those of ``ttir.core.diagnosis.Cost``."""

    model_config = ConfigDict(extra="forbid")

    model_calls: int = 1
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # wall time of the whole call, retries and backoff included
    attempts: int = 0
    retries: int = 0
    waits_s: list[float] = Field(default_factory=list)  # backoff before each retry
    model: str = ""
    ok: bool = True
    error: Optional[str] = None
    failed_calls: int = 0  # of model_calls, those that failed (a re-asked bad reply, say)
    reasked: bool = False  # a bad reply was asked again with its parse error
    structured: Optional[str] = None  # the response_format form the endpoint accepted (json_schema, json_object, off)

    def as_cost(self) -> dict[str, Any]:
        """Keyword arguments for ``ttir.core.diagnosis.Cost`` (a failed call is billed too)."""
        return {
            "model_calls": self.model_calls,
            "failed_calls": self.failed_calls if self.ok else self.model_calls,
            "requests": self.attempts,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
        }

    def then(self, later: "CallUsage") -> "CallUsage":
        """This call and a ``later`` one (its re-ask) as one: costs added, the later outcome."""
        return later.model_copy(update={
            "model_calls": self.model_calls + later.model_calls,
            "failed_calls": self.model_calls + (later.failed_calls if later.ok else later.model_calls),
            "prompt_tokens": self.prompt_tokens + later.prompt_tokens,
            "completion_tokens": self.completion_tokens + later.completion_tokens,
            "latency_s": self.latency_s + later.latency_s,
            "attempts": self.attempts + later.attempts,
            "retries": self.retries + later.retries,
            "waits_s": self.waits_s + later.waits_s,
            "reasked": True,
        })


class Usage(BaseModel):
    """Totals over every call a client made (failed calls included)."""

    model_config = ConfigDict(extra="forbid")

    model_calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    requests: int = 0  # HTTP requests sent: retries, and refused response_format / image probes, included
    reasks: int = 0

    def add(self, call: CallUsage) -> None:
        """Add one call's usage to the totals (a failed call counts in ``failed_calls`` too)."""
        self.model_calls += call.model_calls
        self.failed_calls += 0 if call.ok else 1
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        self.latency_s += call.latency_s
        self.retries += call.retries
        self.requests += call.attempts

    def as_cost(self) -> dict[str, Any]:
        """Keyword arguments for ``ttir.core.diagnosis.Cost``."""
        return {
            "model_calls": self.model_calls,
            "failed_calls": self.failed_calls,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
        }


@dataclass
class VLMResult(Generic[T]):
    """One successful call: the validated ``value``, the ``raw`` reply text and its ``usage``."""

    value: Any
    raw: str
    usage: CallUsage


# ------------------------------------------------------------------------ client


def _openai() -> Any:
    import openai

    return openai


def _retryable(exc: BaseException) -> bool:
    openai = _openai()
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _RETRY_STATUSES or exc.status_code >= 500
    return False


def retry_after_s(exc: BaseException) -> Optional[float]:
    """The wait a 429/503 response asks for (``retry-after-ms`` or ``Retry-After``), if any."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    headers = response.headers
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:  # an HTTP date
        when = email.utils.parsedate_to_datetime(raw)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class VLMClient:
    """A JSON-returning chat client for one OpenAI-compatible endpoint.

    ``config`` is a :class:`~ttir.core.config.VLMConfig`; keyword overrides replace
    its fields (``VLMClient(base_url=…, model=…, timeout_s=2)``). Unset
    endpoint fields come from ``TTIR_VLM_BASE_URL`` / ``TTIR_VLM_MODEL`` /
    ``TTIR_VLM_API_KEY``.
    """

    def __init__(self, config: Optional[VLMConfig] = None, **overrides: Any):
        if config is not None and not isinstance(config, VLMConfig):
            section = getattr(config, "vlm", None)  # a whole TTIRConfig is fine too
            if not isinstance(section, VLMConfig):
                raise TypeError(f"config={type(config).__name__} must be a VLMConfig (or a TTIRConfig)")
            config = section
        cfg = config or VLMConfig()
        if overrides:
            unknown = sorted(set(overrides) - set(VLMConfig.model_fields))
            if unknown:
                raise ValueError(f"VLMClient: unknown setting(s) {', '.join(unknown)}; "
                                 f"valid: {', '.join(VLMConfig.model_fields)}")
            cfg = VLMConfig.model_validate({**cfg.model_dump(), **overrides})
        self.config = cfg
        settings = env_vlm_settings(cfg)
        self.base_url: Optional[str] = settings["base_url"]
        self.model: str = settings["model"]
        self._api_key: str = settings["api_key"]
        self.usage = Usage()
        self.last_usage: Optional[CallUsage] = None
        self.traits: EndpointTraits = traits_for(self.base_url, self.model)  # shared by every client of the endpoint
        self._lock = threading.Lock()
        self._sync: Optional["openai.OpenAI"] = None
        self._async: Optional["openai.AsyncOpenAI"] = None
        self._async_loop: Optional[asyncio.AbstractEventLoop] = None

    def __repr__(self) -> str:
        return f"VLMClient(base_url={self.base_url!r}, model={self.model!r})"

    # -- lifecycle -------------------------------------------------------------------
    def _check_endpoint(self) -> str:
        if not self.base_url:
            raise VLMNotConfigured(
                "no model endpoint: set vlm.base_url in the config or the TTIR_VLM_BASE_URL environment "
                "variable (e.g. http://localhost:8000/v1 for vLLM, http://localhost:11434/v1 for Ollama, "
                "https://api.openai.com/v1 for OpenAI)"
            )
        return self.base_url

    def _client_kwargs(self) -> dict[str, Any]:
        return {
            "base_url": self._check_endpoint(),
            "api_key": self._api_key,
            "timeout": self.config.timeout_s,
            "max_retries": 0,  # ours are the only retries, so they can be counted
        }

    @property
    def sync_client(self) -> "openai.OpenAI":
        """The ``openai.OpenAI`` client of the sync path, built on first use (its HTTP transport holds the call's timeout)."""
        if self._sync is None:
            from ttir.model.http_deadline import sync_http_client  # httpx comes with openai: loaded with it

            oa = _openai()  # the whole exchange bounded by the call's timeout, not each byte's wait
            self._sync = oa.OpenAI(**self._client_kwargs(), http_client=sync_http_client(oa, self.config.timeout_s))
        return self._sync

    def _async_client(self) -> "openai.AsyncOpenAI":
        # An AsyncOpenAI's connection pool belongs to one event loop; each
        # asyncio.run() gets a fresh client.
        loop = asyncio.get_running_loop()
        if self._async is None or self._async_loop is not loop:
            from ttir.model.http_deadline import async_http_client

            oa = _openai()
            self._async = oa.AsyncOpenAI(**self._client_kwargs(), http_client=async_http_client(oa, self.config.timeout_s))
            self._async_loop = loop
        return self._async

    def close(self) -> None:
        """Close the sync connection pool (the async one closes with its event loop)."""
        if self._sync is not None:
            self._sync.close()
            self._sync = None

    async def aclose(self) -> None:
        """Close the async connection pool (when called on the event loop that opened it)."""
        if self._async is not None and self._async_loop is asyncio.get_running_loop():
            await self._async.close()
        self._async = None
        self._async_loop = None

    def __enter__(self) -> "VLMClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- request pieces --------------------------------------------------------------
    def encode_images(self, images: Optional[Sequence[ImageLike]]) -> list[str]:
        """Data URLs for ``images``, downscaled to ``image_max_side``."""
        if images is None:
            return []
        if isinstance(images, (str, bytes, bytearray)) or hasattr(images, "save"):
            images = [images]  # one image given where a list was expected
        out = []
        for i, img in enumerate(images):
            try:
                out.append(encode_image(img, max_side=self.config.image_max_side, fmt=self.config.image_format))
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"images[{i}]: {exc}") from exc
        return out

    @property
    def sends_images(self) -> bool:
        """Whether prompts for this endpoint carry screenshots: ``vlm.vision``, else what the
        endpoint was seen to accept (images until it refuses them)."""
        if self.config.vision is not None:
            return self.config.vision
        return self.traits.vision is not False

    def _request(self, messages: Messages, temperature: Optional[float], max_tokens: Optional[int],
                 form: str = "off", schema: Optional[type[BaseModel]] = None) -> dict[str, Any]:
        request = {
            "model": self.model,
            "messages": messages,
            "temperature": self.config.temperature if temperature is None else temperature,
            "max_tokens": self.config.max_tokens if max_tokens is None else max_tokens,
        }
        fmt = response_format(form, schema) if schema is not None else None  # type: ignore[arg-type]
        if fmt is not None:
            request["response_format"] = fmt
        return request

    def _wait(self, state: RetryCallState) -> float:
        backoff = min(self.config.backoff_max_s, self.config.backoff_s * 2 ** (state.attempt_number - 1))
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_s(exc) if exc is not None else None
        if asked is not None:
            return max(backoff, min(asked, MAX_RETRY_AFTER_S))
        return backoff

    def _retry_kwargs(self, waits: list[float], give_up: Optional[Callable[[BaseException], bool]] = None) -> dict[str, Any]:
        def before_sleep(state: RetryCallState) -> None:
            pause = state.upcoming_sleep
            waits.append(pause)
            exc = state.outcome.exception() if state.outcome else None
            logger.warning("vlm: attempt {} failed ({}); retrying in {:.2f}s", state.attempt_number,
                           _describe(exc), pause)

        def out_of_time(state: RetryCallState) -> bool:  # a retry would start after the step's deadline
            left = remaining_s()
            return left is not None and left <= self._wait(state)

        return {
            "stop": stop_any(stop_after_attempt(self.config.max_retries + 1), out_of_time),
            "wait": self._wait,
            "retry": retry_if_exception(lambda e: _retryable(e) and not (give_up is not None and give_up(e))),
            "before_sleep": before_sleep,
            "reraise": True,
        }

    # -- bookkeeping -----------------------------------------------------------------
    def _record(self, usage: CallUsage) -> None:
        with self._lock:
            self.usage.add(usage)
            self.last_usage = usage

    def _fail(self, exc: BaseException, usage: CallUsage, *, refused_images: bool = False) -> VLMError:
        """Turn an openai exception into our typed error (recording the usage)."""
        openai = _openai()
        usage.ok = False
        usage.failed_calls = usage.model_calls
        where = f"{self.base_url} (model {self.model!r}) after {usage.attempts} attempt(s)"
        status = getattr(exc, "status_code", None)
        if refused_images:
            err: VLMError = VLMImagesRefused(f"HTTP {status} from {where} for a request with images (a text-only "
                                             f"model?): {_body(exc)}", usage=usage, status=status)
        elif isinstance(exc, openai.APITimeoutError) or status == 408:
            left = remaining_s()
            within = (f"before the step's model deadline (vlm.step_deadline_s)" if left is not None and left < 0.05
                      else f"within {self.config.timeout_s}s")
            err = VLMTimeout(f"model call timed out: no reply {within} from {where}", usage=usage, status=status)
        elif isinstance(exc, openai.APIConnectionError):
            err = VLMConnectionError(f"cannot reach the model endpoint {where}: {exc}", usage=usage)
        elif status == 429:
            err = VLMRateLimited(f"rate limited (HTTP 429) by {where}: {_body(exc)}", usage=usage, status=status)
        elif status is not None and status >= 500:
            err = VLMServerError(f"server error HTTP {status} from {where}: {_body(exc)}", usage=usage, status=status)
        elif status is not None:
            err = VLMHTTPError(f"HTTP {status} from {where}: {_body(exc)}", usage=usage, status=status)
        else:
            err = VLMError(f"model call to {where} failed: {exc!r}", usage=usage)
        usage.error = str(err)
        self._record(usage)
        (logger.warning if refused_images else logger.error)("vlm: {}", err)
        return err

    def _finish(self, response: Any, usage: CallUsage, schema: Optional[type[BaseModel]], parse: bool,
                context: Optional[dict[str, Any]] = None) -> VLMResult:
        try:
            text, finish = _reply_of(response, usage)
        except _NotACompletion as exc:
            raise self._bad(f"the endpoint's answer is not a chat completion: {exc}", "", usage, None) from None
        if not parse:
            if not text.strip():
                raise self._bad("the reply is empty", text, usage, finish)
            self._record(usage)
            return VLMResult(value=text, raw=text, usage=usage)
        try:
            value = parse_json_reply(text, schema, context)
        except ReplyParseError as exc:
            raise self._bad(str(exc), text, usage, finish) from None
        self._record(usage)
        logger.debug("vlm: {} ok in {:.2f}s ({} retries, {}+{} tokens)", self.model, usage.latency_s,
                     usage.retries, usage.prompt_tokens, usage.completion_tokens)
        return VLMResult(value=value, raw=text, usage=usage)

    def _unreadable(self, exc: BaseException, usage: CallUsage) -> VLMBadReply:
        why = "nested too deeply" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {str(exc)[:120]}"
        return self._bad(f"the endpoint's answer is not a readable chat completion ({why})", "", usage, None)

    # -- the step's deadline ---------------------------------------------------------
    @property
    def _slot_key(self) -> str:
        """Whose call slots this client's calls take: one endpoint and model."""
        return f"{self.base_url or ''} {self.model}"

    def _attempt_timeout(self) -> float:
        left = remaining_s()
        return self.config.timeout_s if left is None else max(0.01, min(self.config.timeout_s, left))

    def _check_time(self, usage: CallUsage) -> None:
        """No call once the step's deadline has passed (nothing is sent, nothing billed)."""
        left = remaining_s()
        if left is not None and left <= 0:
            usage.ok, usage.model_calls = False, 0
            raise VLMTimeout("model call skipped: the step's model deadline (vlm.step_deadline_s) has passed",
                             usage=usage)

    def _bad(self, why: str, text: str, usage: CallUsage, finish: Optional[str]) -> VLMBadReply:
        usage.ok = False
        usage.failed_calls = usage.model_calls
        hint = " (the reply was cut off at max_tokens; raise vlm.max_tokens)" if finish == "length" else ""
        err = VLMBadReply(f"bad reply from model {self.model!r}: {why}{hint}", raw=text, usage=usage)
        usage.error = str(err)
        self._record(usage)
        logger.warning("vlm: {}", err)
        return err

    # -- calls -----------------------------------------------------------------------
    def complete_json(
        self,
        prompt: Union[str, Messages],
        images: Optional[Sequence[ImageLike]] = None,
        schema: Optional[type[T]] = None,
        *,
        system: Optional[str] = None,
        temperature: Optional[float] = None,
        max_tokens: Optional[int] = None,
        validation_context: Optional[dict[str, Any]] = None,
    ) -> VLMResult[T]:
        """Ask and parse: ``result.value`` is a ``schema`` instance (a dict without schema).

        Raises :class:`VLMBadReply` when the reply has no JSON ``schema`` accepts,
        :class:`VLMTimeout` / :class:`VLMRateLimited` / :class:`VLMServerError` /
        :class:`VLMConnectionError` when the retries run out, :class:`VLMHTTPError`
        on other HTTP errors. ``validation_context`` reaches the schema's validators
        as ``info.context``.
        """
        return self._call(prompt, images, schema, system, temperature, max_tokens, parse=True,
                          context=validation_context)

    def complete_text(
        self,
        prompt: Union[str, Messages],
        images: Optional[Sequence[ImageLike]] = None,
        *,
        system: Optional[str] = None,
        temperature: Optional[float] = None,
        max_tokens: Optional[int] = None,
    ) -> VLMResult[Any]:
        """The reply as plain text (``result.value``); an empty reply is a :class:`VLMBadReply`."""
        return self._call(prompt, images, None, system, temperature, max_tokens, parse=False)

    def _call(self, prompt, images, schema, system, temperature, max_tokens, *, parse: bool,
              context: Optional[dict[str, Any]] = None) -> VLMResult:
        client = self.sync_client
        messages = build_messages(prompt, self.encode_images(images), system=system)

        async def send(request: dict[str, Any], usage: CallUsage, waits: list[float], give_up: Any) -> Any:
            def attempt() -> Any:
                with slot(self._slot_key, self.config.max_concurrent_calls):  # a burst waits its turn
                    usage.attempts += 1
                    return client.chat.completions.create(**request, timeout=self._attempt_timeout())

            return Retrying(**self._retry_kwargs(waits, give_up))(attempt)  # never suspends: driven by run_sync

        return run_sync(self._converse(send, messages, schema, temperature, max_tokens, parse, context))

    async def _acall(self, prompt, images, schema, system, temperature, max_tokens, *, parse: bool,
                     context: Optional[dict[str, Any]] = None) -> VLMResult:
        if "openai" not in sys.modules:  # the first import takes ~1 s: not on the event loop
            await asyncio.to_thread(_openai)
        client = self._async_client()
        urls = await asyncio.to_thread(self.encode_images, images) if images else []
        messages = build_messages(prompt, urls, system=system)

        async def send(request: dict[str, Any], usage: CallUsage, waits: list[float], give_up: Any) -> Any:
            async def attempt() -> Any:
                async with aslot(self._slot_key, self.config.max_concurrent_calls):
                    usage.attempts += 1
                    return await client.chat.completions.create(**request, timeout=self._attempt_timeout())

            return await AsyncRetrying(**self._retry_kwargs(waits, give_up))(attempt)

        return await self._converse(send, messages, schema, temperature, max_tokens, parse, context)

    async def acomplete_json(
        self,
        prompt: Union[str, Messages],
        images: Optional[Sequence[ImageLike]] = None,
        schema: Optional[type[T]] = None,
        *,
        system: Optional[str] = None,
        temperature: Optional[float] = None,
        max_tokens: Optional[int] = None,
        validation_context: Optional[dict[str, Any]] = None,
    ) -> VLMResult[T]:
        """The async :meth:`complete_json`: image encoding runs in a worker thread,
        the HTTP call and the backoff sleeps are awaited."""
        return await self._acall(prompt, images, schema, system, temperature, max_tokens, parse=True,
                                 context=validation_context)

    async def acomplete_text(
        self,
        prompt: Union[str, Messages],
        images: Optional[Sequence[ImageLike]] = None,
        *,
        system: Optional[str] = None,
        temperature: Optional[float] = None,
        max_tokens: Optional[int] = None,
    ) -> VLMResult[Any]:
        """The async :meth:`complete_text`: a plain-text reply, not parsed.

        Args:
            prompt: the user prompt, or the whole message list.
            images: screenshots to send with it.
            system: a system prompt.
            temperature: the sampling temperature; None: the config's.
            max_tokens: the reply's token limit; None: the config's.

        Returns:
            The reply text with its usage.

        Raises:
            VLMError: the call failed after its retries (``usage`` says what it cost).
        """
        return await self._acall(prompt, images, None, system, temperature, max_tokens, parse=False)

    async def _converse(self, send: Callable[..., Awaitable[Any]], messages: Messages,
                        schema: Optional[type[BaseModel]], temperature: Optional[float], max_tokens: Optional[int],
                        parse: bool, context: Optional[dict[str, Any]], *, may_reask: bool = True) -> VLMResult:
        """One call, on the sync and the async path alike (``send`` is their only difference).

        The reply's schema goes with the request as ``response_format``, in the richest form
        the endpoint accepts (a refusal steps down at once, and what worked is remembered);
        images the endpoint refuses raise :class:`VLMImagesRefused`, not retried; a reply
        that does not parse is asked again once with its parse error, when the step allows it."""
        usage = CallUsage(model=self.model)
        waits: list[float] = []
        started = time.perf_counter()
        self._check_time(usage)
        has_images = any(isinstance(m.get("content"), list) and any(p.get("type") == "image_url" for p in m["content"])
                         for m in messages)
        probing_images = has_images and self.config.vision is None and self.traits.vision is None
        forms = structured_choices(self.config.structured, self.traits) if (parse and schema is not None) else ["off"]
        while True:
            request = self._request(messages, temperature, max_tokens, forms[0], schema if parse else None)
            try:
                # refusals (of the images, of the response_format) are not retried: they will not change
                response = await send(request, usage, waits, _refusal_test(probing_images, len(forms) > 1))
            except SlotTimeout as exc:
                self._stamp(usage, waits, started)
                usage.ok = False
                if not usage.attempts:
                    usage.model_calls = 0  # nothing was sent: nothing billed
                usage.failed_calls = usage.model_calls
                err = VLMTimeout(f"model call not sent (a retry waited its turn) from {self.base_url}: {exc}"
                                 if usage.attempts else f"model call not sent: {exc}", usage=usage)
                usage.error = str(err)
                if usage.attempts:
                    self._record(usage)  # an earlier attempt was sent and failed: billed like any failure
                raise err from exc
            except _openai().OpenAIError as exc:
                if len(forms) > 1 and refuses_response_format(exc):
                    logger.info("vlm: {} refuses response_format {}; trying {}", self.base_url, forms[0], forms[1])
                    self.traits.refused.add(forms.pop(0))
                    continue
                self._stamp(usage, waits, started)
                if probing_images and refuses_images(exc):
                    raise self._fail(exc, usage, refused_images=True) from exc
                raise self._fail(exc, usage) from exc
            except _MALFORMED as exc:
                self._stamp(usage, waits, started)
                raise self._unreadable(exc, usage) from None
            break
        self._stamp(usage, waits, started)
        if parse and schema is not None:
            usage.structured = forms[0]
            if self.config.structured == "auto" and self.traits.structured is None:
                self.traits.structured = forms[0]
        if has_images and self.traits.vision is None:
            self.traits.vision = True
        try:
            return self._finish(response, usage, schema, parse, context)
        except VLMBadReply as bad:
            if not (parse and may_reask and take_reask(default=0)):
                raise
            first = bad.usage or usage
            with self._lock:
                self.usage.reasks += 1
            logger.info("vlm: re-asking {} once with the parse error", self.model)
            again = messages + [{"role": "assistant", "content": _clip_reply(bad.raw)},
                                {"role": "user", "content": _reask_prompt(bad)}]
            try:
                result = await self._converse(send, again, schema, temperature, max_tokens, parse, context,
                                              may_reask=False)
            except VLMError as exc:
                exc.usage = first.then(exc.usage) if exc.usage is not None else first
                raise
            result.usage = first.then(result.usage)
            return result

    def ask(self, render: Render, schema: Optional[type[T]] = None, *,
            validation_context: Optional[dict[str, Any]] = None, **options: Any) -> VLMResult[T]:
        """:meth:`complete_json` for a prompt ``render(vision)`` builds: with screenshots when the
        endpoint takes them, else (``vlm.vision: false``, or once it refused images) as text only."""
        prompt, images = render(self.sends_images)
        try:
            return self.complete_json(prompt, images, schema, validation_context=validation_context, **options)
        except VLMImagesRefused as refused:
            prompt, images = render(False)
            result = self.complete_json(prompt, images, schema, validation_context=validation_context, **options)
            self._learn_text_only(refused, result)
            return result

    async def aask(self, render: Render, schema: Optional[type[T]] = None, *,
                   validation_context: Optional[dict[str, Any]] = None, **options: Any) -> VLMResult[T]:
        """The async :meth:`ask`."""
        prompt, images = render(self.sends_images)
        try:
            return await self.acomplete_json(prompt, images, schema, validation_context=validation_context, **options)
        except VLMImagesRefused as refused:
            prompt, images = render(False)
            result = await self.acomplete_json(prompt, images, schema, validation_context=validation_context, **options)
            self._learn_text_only(refused, result)
            return result

    def _learn_text_only(self, refused: VLMImagesRefused, result: VLMResult) -> None:
        """The same question in text was answered: the images were the problem. Remember it, and
        bill the refused request with the answer."""
        if self.traits.vision is None:
            self.traits.vision = False
            logger.warning("vlm: {} (model {!r}) refuses images; sending the accessibility tree as text from now on "
                           "(set vlm.vision: false to skip the probe)", self.base_url, self.model)
        if refused.usage is not None:
            result.usage = refused.usage.then(result.usage).model_copy(update={"reasked": result.usage.reasked})

    @staticmethod
    def _stamp(usage: CallUsage, waits: list[float], started: float) -> None:
        usage.latency_s = time.perf_counter() - started
        usage.retries = max(0, usage.attempts - 1)
        usage.waits_s = waits

    def list_models(self) -> list[str]:
        """Model ids the endpoint serves (``GET /models``); a quick reachability check."""
        try:
            return [m.id for m in self.sync_client.models.list()]
        except _openai().OpenAIError as exc:
            raise self._fail(exc, CallUsage(model=self.model, attempts=1, model_calls=0)) from exc


class _NotACompletion(Exception):
    pass


def _refusal_test(images: bool, format_: bool) -> Optional[Callable[[BaseException], bool]]:
    """What a call probing the endpoint's images / response_format gives up on at once."""
    if not (images or format_):
        return None
    return lambda exc: (images and refuses_images(exc)) or (format_ and refuses_response_format(exc))


REASK_REPLY_CHARS = 2000  # of a bad reply, echoed back as the assistant's turn of a re-ask


def _clip_reply(raw: Optional[str]) -> str:
    text = raw or ""
    return text if len(text) <= REASK_REPLY_CHARS else text[:REASK_REPLY_CHARS] + "…"


def _reask_prompt(bad: VLMBadReply) -> str:
    import prompts
    from ttir.core.prompt_data import fence, quote

    why = str(bad).split(": ", 1)[-1]  # without "bad reply from model …"
    return prompts.load("reask").render(error=fence("why the reply could not be used", quote(why, 400)))


def run_sync(coro: Any, what: str = "the VLM client's sync path") -> Any:
    """Drive a coroutine that never suspends to its result: logic written once as ``async`` and
    run synchronously (the client's :meth:`VLMClient._converse`, the guard's core)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError(f"{what} tried to suspend")


def _reply_of(response: Any, usage: CallUsage) -> tuple[str, Optional[str]]:
    """The reply text and finish reason of a chat completion (its token counts go into ``usage``).

    An endpoint can answer 200 with anything (an HTML page, odd JSON): raises
    :class:`_NotACompletion` saying what came instead."""
    if isinstance(response, (str, bytes)):  # a body that was not JSON (text/html …), as the openai client hands it over
        raw = response.decode("utf-8", "replace") if isinstance(response, bytes) else response
        raise _NotACompletion(f"{' '.join(raw.split())[:120]!r}" if raw.strip() else "an empty body")
    try:
        u = getattr(response, "usage", None)
        usage.prompt_tokens = int(getattr(u, "prompt_tokens", 0) or 0)
        usage.completion_tokens = int(getattr(u, "completion_tokens", 0) or 0)
        choices = getattr(response, "choices", None) or []
        first = choices[0] if choices else None
        message = getattr(first, "message", None)
        text = getattr(message, "content", None)
        finish = getattr(first, "finish_reason", None)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        raise _NotACompletion(f"{type(exc).__name__}: {str(exc)[:120]}") from None
    return (text if isinstance(text, str) else ""), (finish if isinstance(finish, str) else None)


_MALFORMED = (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError)  # a 200 body the client could not read


def _body(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        msg = err.get("message") if isinstance(err, dict) else err
        return str(msg)
    return str(getattr(exc, "message", exc))


def _describe(exc: Optional[BaseException]) -> str:
    if exc is None:
        return "no exception"
    status = getattr(exc, "status_code", None)
    return f"HTTP {status}" if status else type(exc).__name__


__all__ = [
    "CallUsage",
    "MAX_RETRY_AFTER_S",
    "Usage",
    "VLMBadReply",
    "VLMClient",
    "VLMConnectionError",
    "VLMError",
    "VLMHTTPError",
    "VLMImagesRefused",
    "VLMNotConfigured",
    "VLMRateLimited",
    "VLMResult",
    "VLMServerError",
    "VLMTimeout",
    "retry_after_s",
]
