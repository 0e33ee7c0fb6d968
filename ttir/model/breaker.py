"""A breaker across steps: a dead or overloaded endpoint is not paid for on every step.

After ``failures`` guarded steps in a row whose model calls all failed, the model
tier rests for ``rest_steps`` steps — the rules tier decides them alone — and
then one step tries the model again (one more failure: another rest).
"""

from __future__ import annotations

from loguru import logger


class ModelBreaker:
    def __init__(self, failures: int, rest_steps: int):
        if failures < 1 or rest_steps < 1:
            raise ValueError(f"failures={failures}, rest_steps={rest_steps}: both must be >= 1")
        self.failures = failures
        self.rest_steps = rest_steps
        self.failed_in_row = 0
        self.rest_left = 0
        self.rests = 0  # how often the breaker opened

    @property
    def resting(self) -> bool:
        return self.rest_left > 0

    def begin_step(self) -> bool:
        """Whether the model tier may be used this step (a resting step is counted off)."""
        if self.rest_left > 0:
            self.rest_left -= 1
            return False
        return True

    def end_step(self, calls: int, failed: int) -> bool:
        """Record a step's model calls; True when this opens the breaker."""
        if calls <= 0:
            return False  # no model call this step: nothing learnt about the endpoint
        if failed < calls:
            self.failed_in_row = 0
            return False
        self.failed_in_row += 1
        if self.failed_in_row < self.failures:
            return False
        self.failed_in_row = self.failures - 1  # after the rest, one failure is enough to rest again
        self.rest_left = self.rest_steps
        self.rests += 1
        logger.warning("ttir guard: the model failed on {} step(s) in a row; the model tier rests for {} step(s) "
                       "(the rules tier decides them)", self.failures, self.rest_steps)
        return True
