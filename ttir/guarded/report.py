"""What the guard did: findings, recovery sessions, model usage, errors."""

from __future__ import annotations

from typing import Any, Literal, Optional, get_args

from pydantic import BaseModel, ConfigDict, Field

Outcome = Literal["open", "resolved", "budget_spent", "exhausted", "episode_end", "error"]  # how a session ended

# what the guard's step log (``GuardedAgent.events``, an episode record's ``guard_events``) says, under its
# ``type`` key: declared once, checked where an event is written
GuardEventType = Literal["finding", "session_opened", "recovery_step", "session_closed", "recovery_unavailable",
                         "claim_blocked", "model_resting", "diagnoser_error", "guard_error"]
GUARD_EVENT_TYPES: tuple[str, ...] = get_args(GuardEventType)
SESSION_OUTCOMES: tuple[str, ...] = get_args(Outcome)


class SessionRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int
    diagnoser: str
    strategy: str
    opened_at: int
    closed_at: Optional[int] = None
    trigger: dict[str, Any] = Field(default_factory=dict)  # the finding that opened it
    actions: list[dict[str, Any]] = Field(default_factory=list)
    outcome: Outcome = "open"

    @property
    def resolved(self) -> bool:
        return self.outcome == "resolved"


class StepUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step: int
    model_calls: int = 0  # failed calls included: they are billed too
    model_errors: int = 0  # of those, the calls that failed (timeouts, 429/5xx, unreadable replies)
    model_requests: int = 0  # HTTP requests those calls took (retries, re-asks and refused probes included)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_latency_s: float = 0.0
    guard_ms: float = 0.0  # time spent inside the guard, model calls included
    source: Literal["agent", "recovery"] = "agent"


class GuardReport(BaseModel):
    """Serialisable into the episode trajectory (``to_dict``)."""

    model_config = ConfigDict(extra="forbid")

    goal: str = ""
    steps: int = 0
    findings: list[dict[str, Any]] = Field(default_factory=list)
    sessions: list[SessionRecord] = Field(default_factory=list)
    usage: list[StepUsage] = Field(default_factory=list)
    errors: list[dict[str, Any]] = Field(default_factory=list)
    blocked_claims: int = 0
    # problems found whose recovery had nothing to try (step, diagnoser, strategy, verdict, evidence)
    unavailable: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def model_calls(self) -> int:
        return sum(u.model_calls for u in self.usage)

    @property
    def model_errors(self) -> int:
        return sum(u.model_errors for u in self.usage)

    @property
    def model_requests(self) -> int:
        return sum(u.model_requests for u in self.usage)

    @property
    def tokens(self) -> int:
        return sum(u.prompt_tokens + u.completion_tokens for u in self.usage)

    @property
    def recovery_steps(self) -> int:
        return sum(1 for u in self.usage if u.source == "recovery")

    def triggers(self) -> dict[str, int]:
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
