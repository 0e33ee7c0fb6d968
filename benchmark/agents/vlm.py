"""VLMAgent: an OpenAI-compatible multimodal agent (screenshot + goal + history →
one JSON action in the ttir Action vocabulary). The prompt is ``prompts/agent.md``
(or your own file); the endpoint comes from config or ``TTIR_VLM_*``."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

import prompts
from ttir.core.describe import describe_history, describe_screens
from ttir.core.types import Action, AgentStep, Observation, StepRecord


class AgentReply(BaseModel):
    """What the model must answer."""

    model_config = ConfigDict(extra="ignore")

    thought: str = ""
    summary: str = ""
    action: Action

    @field_validator("action", mode="before")
    @classmethod
    def _strip_unknown(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {k: val for k, val in v.items() if k in Action.model_fields and val is not None}
        return v


class VLMAgentStats(BaseModel):
    calls: int = 0  # model calls, failed ones included (a re-ask is a second call)
    requests: int = 0  # HTTP requests (retries, re-asks and refused probes included)
    reasks: int = 0  # steps whose first reply did not parse and was asked again
    bad_replies: int = 0  # steps whose reply could not be used (after the re-ask): a wait instead
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    errors: list[str] = Field(default_factory=list)

    def add(self, usage: Any) -> None:
        self.calls += usage.model_calls
        self.requests += usage.attempts
        self.reasks += bool(usage.reasked)
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.latency_s += usage.latency_s


class VLMAgent:
    """``VLMAgent(client=None, prompt="agent", history=8, include_tree=True, **vlm_settings)``.

    A reply that is not a valid action becomes a ``wait`` step (recorded in
    ``stats``), as a benchmark harness treats an unparseable model output."""

    name = "vlm"

    def __init__(self, client: Any = None, *, prompt: str = "agent", history: int = 8, include_tree: bool = True,
                 **vlm_settings: Any):
        if client is None:
            from ttir.core.config import VLMConfig
            from ttir.model.client import VLMClient

            client = VLMClient(VLMConfig(**vlm_settings))
        self.client = client
        self.template = prompts.load(prompt)
        self.action_space = prompts.load("action_space").render()
        self.data_notice = prompts.load("data_notice").render().strip()
        self.history_len = history
        self.include_tree = include_tree
        self.stats = VLMAgentStats()
        self.reset("")

    def reset(self, goal: str) -> None:
        self.goal = goal
        self.history: list[StepRecord] = []
        self.previous: Optional[Observation] = None

    def on_recovery(self, event: dict[str, Any]) -> None:
        """A guard acted on our behalf: remember it as a step in our history."""
        note = AgentStep(action=Action(action_type="wait", seconds=0), summary=event.get("message", ""),
                         thought="(recovery by the guard)")
        if self.previous is not None:
            self.history.append(StepRecord(observation=self.previous, step=note, source="recovery"))

    def prompt_for(self, obs: Observation, vision: Optional[bool] = None) -> tuple[str, list[Any]]:
        """The prompt and images for ``obs`` (for a text-only model, ``vision=False``: the
        accessibility tree as numbered elements and no image)."""
        vision = getattr(self.client, "sends_images", True) if vision is None else vision
        screen, images = describe_screens(obs, None, include_tree=self.include_tree, vision=vision)
        text = self.template.render(data_notice=self.data_notice, goal=self.goal,
                                    history=describe_history(self.history, self.history_len),
                                    screen=screen, action_space=self.action_space)
        return text, images

    def _record(self, obs: Observation, step: AgentStep) -> AgentStep:
        self.history.append(StepRecord(observation=obs, step=step))
        self.previous = obs
        return step

    def _from_result(self, obs: Observation, result: Any) -> AgentStep:
        self.stats.add(result.usage)
        reply: AgentReply = result.value
        return self._record(obs, AgentStep(action=reply.action, thought=reply.thought, summary=reply.summary, raw=result.raw))

    def _bad(self, obs: Observation, exc: Exception) -> AgentStep:
        if getattr(exc, "usage", None) is not None:
            self.stats.add(exc.usage)  # type: ignore[attr-defined]
        self.stats.bad_replies += 1
        self.stats.errors.append(f"{type(exc).__name__}: {exc}"[:300])
        return self._record(obs, AgentStep(action=Action(action_type="wait", seconds=1.0),
                                           thought=f"The model's reply could not be used ({type(exc).__name__}).",
                                           summary="Wait", raw=getattr(exc, "raw", None)))

    def _reasks(self) -> int:
        return int(getattr(getattr(self.client, "config", None), "reasks_per_step", 1))

    def step(self, obs: Observation) -> AgentStep:
        from ttir.model.deadline import model_deadline
        from ttir.model.client import VLMBadReply

        try:
            with model_deadline(None, reasks=self._reasks()):  # a bad reply is asked again once per step
                result = self.client.ask(lambda vision: self.prompt_for(obs, vision), AgentReply)
        except VLMBadReply as exc:
            return self._bad(obs, exc)
        return self._from_result(obs, result)


class AsyncVLMAgent(VLMAgent):
    """The same agent with ``async def step`` (for event-loop deployments and the async guard)."""

    async def step(self, obs: Observation) -> AgentStep:  # type: ignore[override]
        from ttir.model.deadline import model_deadline
        from ttir.model.client import VLMBadReply

        try:
            with model_deadline(None, reasks=self._reasks()):
                result = await self.client.aask(lambda vision: self.prompt_for(obs, vision), AgentReply)
        except VLMBadReply as exc:
            return self._bad(obs, exc)
        return self._from_result(obs, result)
