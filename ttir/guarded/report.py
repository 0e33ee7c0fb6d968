"""What the guard did: findings, recovery sessions, model usage, errors."""

from __future__ import annotations

from typing import Any, Literal, Optional, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ttir.core.validation import renamed_key

Outcome = Literal["open", "resolved", "budget_spent", "exhausted", "episode_end", "error"]  # how a session ended

# what the guard's step log (``GuardedAgent.events``, an episode record's ``guard_events``) says, under its
# ``event`` key as in the perturbation event log (``perturb.events``): declared once, checked where written
GuardEventName = Literal["finding", "session_opened", "recovery_step", "session_closed", "recovery_unavailable",
                         "claim_blocked", "model_resting", "diagnoser_error", "guard_error"]
GUARD_EVENT_NAMES: tuple[str, ...] = get_args(GuardEventName)
SESSION_OUTCOMES: tuple[str, ...] = get_args(Outcome)


class SessionRecord(BaseModel):
    """One recovery session: which check opened it on which finding, what it did, how it ended."""

    model_config = ConfigDict(extra="forbid")

    id: int = Field(description="The session's number in the episode, from 1.")
    diagnoser: str = Field(description="The check (diagnoser) whose finding opened it.")
    recovery: str = Field(description="The recovery that ran it (its name).")
    opened_at: int = Field(description="The guard step it opened at.")
    closed_at: Optional[int] = Field(None, description="The guard step it closed at; None while open.")
    trigger: dict[str, Any] = Field(default_factory=dict, description="The finding that opened it (without details).")
    actions: list[dict[str, Any]] = Field(default_factory=list, description="The actions it took, in order.")
    outcome: Outcome = Field("open", description="How it ended: resolved (the problem is gone), budget_spent, exhausted "
                                                 "(nothing left to try), episode_end, error; open while running.")

    @model_validator(mode="before")
    @classmethod
    def _recovery_from_strategy(cls, data: Any) -> Any:
        return renamed_key(data, "strategy", "recovery")  # reports written before called it the strategy

    @property
    def resolved(self) -> bool:
        """Whether the session ended with its problem gone."""
        return self.outcome == "resolved"


class StepUsage(BaseModel):
    """What one guarded step cost: model calls, tokens, latency and the guard's own time."""

    model_config = ConfigDict(extra="forbid")

    step: int = Field(description="The guard step, from 0.")
    model_calls: int = Field(0, description="Model calls made, failed ones included (they are billed too).")
    model_errors: int = Field(0, description="Of those, the calls that failed (timeouts, 429/5xx, unreadable replies).")
    model_requests: int = Field(0, description="HTTP requests those calls took (retries, re-asks and refused probes "
                                               "included).")
    prompt_tokens: int = Field(0, description="Prompt tokens, as the endpoint reported them.")
    completion_tokens: int = Field(0, description="Completion tokens, as the endpoint reported them.")
    model_latency_s: float = Field(0.0, description="Seconds spent waiting for the model.")
    guard_ms: float = Field(0.0, description="Milliseconds spent inside the guard, model calls included (the wrapped "
                                             "agent's own time excluded).")
    source: Literal["agent", "recovery"] = Field("agent", description="Whose step was returned: the agent's or a "
                                                                      "recovery's.")


class GuardReport(BaseModel):
    """What the guard did in one episode (``GuardedAgent.report``); serialisable into the episode
    trajectory (``to_dict``)."""

    model_config = ConfigDict(extra="forbid")

    goal: str = Field("", description="The episode's goal.")
    steps: int = Field(0, description="Guarded steps so far.")
    findings: list[dict[str, Any]] = Field(default_factory=list, description="Every finding, per step and check "
                                                                            "(``claim: true`` for a reviewed step).")
    sessions: list[SessionRecord] = Field(default_factory=list, description="The recovery sessions, in order.")
    usage: list[StepUsage] = Field(default_factory=list, description="Model use and guard time, one entry per step.")
    errors: list[dict[str, Any]] = Field(default_factory=list, description="The guard's own faults and failed model "
                                                                          "calls (step, where, error).")
    blocked_claims: int = Field(0, description="``status: complete`` claims the guard replaced with a recovery.")
    unavailable: list[dict[str, Any]] = Field(
        default_factory=list, description="Problems found whose recovery had nothing to try (step, diagnoser, "
                                          "recovery, verdict, evidence).")

    @property
    def model_calls(self) -> int:
        """Model calls over the episode, failed ones included."""
        return sum(u.model_calls for u in self.usage)

    @property
    def model_errors(self) -> int:
        """Model calls that failed over the episode."""
        return sum(u.model_errors for u in self.usage)

    @property
    def model_requests(self) -> int:
        """HTTP requests the model calls took over the episode."""
        return sum(u.model_requests for u in self.usage)

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens over the episode."""
        return sum(u.prompt_tokens + u.completion_tokens for u in self.usage)

    @property
    def recovery_steps(self) -> int:
        """Steps whose returned action was a recovery's."""
        return sum(1 for u in self.usage if u.source == "recovery")

    def triggers(self) -> dict[str, int]:
        """Per check, the recovery sessions it opened."""
        out: dict[str, int] = {}
        for s in self.sessions:
            out[s.diagnoser] = out.get(s.diagnoser, 0) + 1
        return out

    def unavailable_counts(self) -> dict[str, int]:
        """Per check, the problems it found that its recovery had nothing to try on."""
        out: dict[str, int] = {}
        for u in self.unavailable:
            out[u["diagnoser"]] = out.get(u["diagnoser"], 0) + 1
        return out

    def summary(self) -> dict[str, Any]:
        """The episode's guard figures at a glance: counts, and rates and times rounded for reading
        (``guard_ms_median`` to 0.01 ms, ``model_calls_per_step`` to 0.001); ``usage`` keeps the exact ones."""
        n = max(1, self.steps)
        return {
            "steps": self.steps,
            "sessions": len(self.sessions),
            "resolved": sum(1 for s in self.sessions if s.resolved),
            "triggers": self.triggers(),
            "unavailable": self.unavailable_counts(),
            "recovery_steps": self.recovery_steps,
            "model_calls": self.model_calls,
            "model_calls_per_step": round(self.model_calls / n, 3),
            "model_errors": self.model_errors,
            "model_requests": self.model_requests,
            "tokens": self.tokens,
            "guard_ms_median": round(_median([u.guard_ms for u in self.usage]), 2),
            "errors": len(self.errors),
            "blocked_claims": self.blocked_claims,
        }

    def to_dict(self) -> dict[str, Any]:
        d = self.model_dump(mode="json")
        d["summary"] = self.summary()
        return d


def _median(values: list[float]) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
