"""A model judge scored against outcome-grounded preferences (AndroidFlux §4.2, §5.3): ``ttir checkpoints judge``.

For every pair of ``ttir checkpoints prefs``' JSONL, a model behind an OpenAI-compatible endpoint
(``ttir.model.client.VLMClient``: ``TTIR_VLM_BASE_URL`` / ``TTIR_VLM_MODEL`` / ``TTIR_VLM_API_KEY``
or explicit settings) is asked which of the pair's two candidate actions is more likely to complete
the goal, given the goal, the neutral history a resumed agent receives and a text summary of the
restored screen (``export.state_summary``: its app, its labels; the judge is not told that an error
happened). Each pair is asked twice, the candidates in both orders, so that a judge that always
names the first (or the second) option scores chance, not 100 % or 0 %:

- ``order_accuracy`` — the share of answered questions naming the preferred (``chosen``) action;
- ``agree`` / ``disagree`` — pairs where both orders name the preferred / the rejected action;
  ``inconsistent`` — the two orders name different actions (position bias); ``unanswered`` — a
  question whose reply had no usable answer (the pair counts in neither);
- the guard's agreement on the same file (pairs with a ``guard`` candidate on exactly one side),
  set beside it.

What the model reads is built from records (the checkpoint's history and its stored dump); text
that came from screens is clipped and only ever placed in the prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from experiments.checkpoints.history import template
from experiments.checkpoints.model import Checkpoint, load

Choice = Literal["A", "B"]
MAX_HISTORY = 20  # the latest steps shown to the judge
MAX_LABELS = 40  # screen labels shown to the judge
SYSTEM = ("You evaluate actions of an agent that operates an Android phone to complete a user's goal. "
          "Reply with JSON only.")


class JudgeReply(BaseModel):
    """What the judge answers: the better candidate."""

    better: Choice = Field(description="A or B: the action more likely to lead to completing the goal")


class JudgedPair(BaseModel):
    """One preference pair and the judge's two answers (None: no usable answer)."""

    checkpoint: str
    chosen_first: Optional[Choice] = None  # the answer when the preferred action was shown as A
    rejected_first: Optional[Choice] = None  # the answer when the rejected action was shown as A
    errors: list[str] = Field(default_factory=list)

    @property
    def picks(self) -> list[bool]:
        """Per answered question: did the judge name the preferred action?"""
        out = []
        if self.chosen_first is not None:
            out.append(self.chosen_first == "A")
        if self.rejected_first is not None:
            out.append(self.rejected_first == "B")
        return out


class JudgeSummary(BaseModel):
    model: str
    base_url: Optional[str] = None
    pairs: int = 0
    questions: int = 0
    answered: int = 0
    correct: int = 0  # answered questions naming the preferred action
    agree: int = 0
    disagree: int = 0
    inconsistent: int = 0
    unanswered: int = 0  # pairs with at least one question left without a usable answer
    guard_pairs: int = 0
    guard_preferred: int = 0

    @property
    def order_accuracy(self) -> Optional[float]:
        return self.correct / self.answered if self.answered else None

    @property
    def pair_agreement(self) -> Optional[float]:
        return self.agree / self.pairs if self.pairs else None

    @property
    def guard_agreement(self) -> Optional[float]:
        return self.guard_preferred / self.guard_pairs if self.guard_pairs else None


def describe(action: dict[str, Any]) -> str:
    """A candidate action for the judge: a neutral phrase and its fields."""
    fields = {k: v for k, v in action.items() if v is not None}
    return f"{template(action)} — {json.dumps(fields, sort_keys=True)[:300]}"


def prompt(ck: Checkpoint, state: Any, first: dict[str, Any], second: dict[str, Any]) -> str:
    """The question about one pair, ``first`` shown as A and ``second`` as B.

    Args:
        ck: the pair's checkpoint (goal and history).
        state: its ``export.StateSummary`` (the restored screen).
        first: the action shown as A.
        second: the action shown as B.
    """
    hist = ck.history[-MAX_HISTORY:]
    lines = [f"Goal: {ck.goal[:500]}", "", "Steps taken so far:"]
    lines += [f"{h.step + 1}. {h.summary[:200]}" for h in hist] or ["(none)"]
    labels = [label[:80] for label in state.labels[:MAX_LABELS]]
    lines += ["", f"Current screen: app {state.package or 'unknown'}, {state.clickable} clickable elements; "
                  f"texts on screen: {json.dumps(labels)}", "",
              "Two candidate next actions:", f"A: {describe(first)}", f"B: {describe(second)}", "",
              "Which action is more likely to lead to completing the goal? "
              'Reply with JSON: {"better": "A"} or {"better": "B"}.']
    return "\n".join(lines)


def judge_preferences(ck_dir: Path | str, prefs: Path | str, client: Any, *,
                      out: Optional[Path | str] = None, max_tokens: int = 64) -> JudgeSummary:
    """Ask ``client`` about every pair of ``prefs`` (both orders) and score it against the preferences.

    Args:
        ck_dir: the checkpoint folder the preferences were collected on (histories, screens).
        prefs: the JSONL written by ``ttir checkpoints prefs``.
        client: a ``ttir.model.client.VLMClient``.
        out: optional JSONL of the judge's answers per pair.
        max_tokens: the reply's token limit.

    Returns:
        The judge's agreement with the preferences, and the guard's on the same pairs.

    Raises:
        FileNotFoundError: ``prefs`` does not exist (with the command that writes it).
        ValueError: a pair names a checkpoint ``ck_dir`` does not hold.
    """
    from experiments.checkpoints.export import state_summary
    from ttir.model.client import VLMError

    path = Path(prefs)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no preferences; write them with `ttir checkpoints prefs {ck_dir} --out {path}`")
    cks = {c.id: c for c in load(ck_dir)}
    summary = JudgeSummary(model=client.model, base_url=client.base_url)
    judged: list[JudgedPair] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        pair = json.loads(line)
        ck = cks.get(pair["checkpoint"])
        if ck is None:
            raise ValueError(f"{path}:{n}: checkpoint {pair['checkpoint']!r} is not in {ck_dir}; pass the CK_DIR "
                             "the preferences were collected on")
        state = state_summary(Path(ck_dir), ck)
        chosen, rejected = pair["chosen"], pair["rejected"]
        j = JudgedPair(checkpoint=ck.id)
        for attr, (a, b) in (("chosen_first", (chosen, rejected)), ("rejected_first", (rejected, chosen))):
            summary.questions += 1
            try:
                reply = client.complete_json(prompt(ck, state, a["action"], b["action"]), schema=JudgeReply,
                                             system=SYSTEM, temperature=0.0, max_tokens=max_tokens)
                setattr(j, attr, reply.value.better)
            except VLMError as exc:
                j.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
        picks = j.picks
        summary.pairs += 1
        summary.answered += len(picks)
        summary.correct += sum(picks)
        if len(picks) < 2:
            summary.unanswered += 1
        elif all(picks):
            summary.agree += 1
        elif not any(picks):
            summary.disagree += 1
        else:
            summary.inconsistent += 1
        if ("guard" in chosen["sources"]) != ("guard" in rejected["sources"]):
            summary.guard_pairs += 1
            summary.guard_preferred += "guard" in chosen["sources"]
        judged.append(j)
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        with Path(out).open("w", encoding="utf-8") as fh:
            for j in judged:
                fh.write(j.model_dump_json() + "\n")
    return summary
