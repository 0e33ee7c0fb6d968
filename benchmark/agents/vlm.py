"""VLMAgent: an OpenAI-compatible multimodal agent (screenshot + goal + history →
one JSON action in the ttir Action vocabulary). The prompt is ``prompts/agent.md``
(or your own file); the endpoint comes from config or ``TTIR_VLM_*``."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

import prompts
from ttir.describe import describe_history, describe_screens
from ttir.types import Action, AgentStep, Observation, StepRecord


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
    calls: int = 0
    bad_replies: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    errors: list[str] = Field(default_factory=list)


class VLMAgent:
    """``VLMAgent(client=None, prompt="agent", history=8, include_tree=True, **vlm_settings)``.

    A reply that is not a valid action becomes a ``wait`` step (recorded in
    ``stats``), as a benchmark harness treats an unparseable model output."""

    name = "vlm"

    def __init__(self, client: Any = None, *, prompt: str = "agent", history: int = 8, include_tree: bool = True,
                 **vlm_settings: Any):
        if client is None:
            from ttir.config import VLMConfig
            from ttir.vlm import VLMClient

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

    def prompt_for(self, obs: Observation) -> tuple[str, list[Any]]:
        screen, images = describe_screens(obs, None, include_tree=self.include_tree)
        text = self.template.render(data_notice=self.data_notice, goal=self.goal,
                                    history=describe_history(self.history, self.history_len),
                                    screen=screen, action_space=self.action_space)
        return text, images

    def _record(self, obs: Observation, step: AgentStep) -> AgentStep:
        self.history.append(StepRecord(observation=obs, step=step))
        self.previous = obs
        return step

    def _from_result(self, obs: Observation, result: Any) -> AgentStep:
        u = result.usage
        self.stats.calls += 1
        self.stats.prompt_tokens += u.prompt_tokens
        self.stats.completion_tokens += u.completion_tokens
        self.stats.latency_s += u.latency_s
        reply: AgentReply = result.value
        return self._record(obs, AgentStep(action=reply.action, thought=reply.thought, summary=reply.summary, raw=result.raw))

    def _bad(self, obs: Observation, exc: Exception) -> AgentStep:
        self.stats.bad_replies += 1
        self.stats.errors.append(f"{type(exc).__name__}: {exc}"[:300])
        return self._record(obs, AgentStep(action=Action(action_type="wait", seconds=1.0),
                                           thought=f"The model's reply could not be used ({type(exc).__name__}).",
                                           summary="Wait", raw=getattr(exc, "raw", None)))

    def step(self, obs: Observation) -> AgentStep:
        from ttir.vlm import VLMBadReply

        text, images = self.prompt_for(obs)
        try:
            result = self.client.complete_json(text, images, AgentReply)
        except VLMBadReply as exc:
            return self._bad(obs, exc)
        return self._from_result(obs, result)


class AsyncVLMAgent(VLMAgent):
    """The same agent with ``async def step`` (for event-loop deployments and the async guard)."""

    async def step(self, obs: Observation) -> AgentStep:  # type: ignore[override]
        from ttir.vlm import VLMBadReply

        text, images = self.prompt_for(obs)
        try:
            result = await self.client.acomplete_json(text, images, AgentReply)
        except VLMBadReply as exc:
            return self._bad(obs, exc)
        return self._from_result(obs, result)
