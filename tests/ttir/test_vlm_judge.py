"""VLMJudge and RecoveryModel over real HTTP to the local test server."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
from PIL import Image

from ttir.core.diagnosis import Cost, DiagnosisContext, Diagnoser, Finding
from diagnosers.judgment import Judgment
from diagnosers.vlm_judge import CACHE_KEY, RecoveryModel, VLMJudge
from ttir.core.recovery import RecoveryContext
from ttir.core.config import CascadeConfig, PromptsConfig, TTIRConfig
from ttir.testing import Reply
from ttir.core.types import Action, AgentStep, Observation, StepRecord
from ttir.model.client import VLMBadReply, VLMClient, VLMServerError

JUDGMENT = {"repeat_failure_detected": False, "previous_intended_effect_satisfied": "no",
            "interference_present": True, "task_alignment": "on_track", "reason": "a permission dialog covers the list"}
GOAL = "Add a contact named Alice Smith"


# Four minimal diagnosers reading the shared judgment, one per question (the real ones live elsewhere).
class _Base(Diagnoser):
    field: ClassVar[str] = ""
    bad: ClassVar[Any] = True

    @classmethod
    def default_config(cls):
        return None

    def rules(self, ctx: DiagnosisContext) -> Finding:
        return Finding(diagnoser=self.name, problem=False, verdict="uncertain")

    def from_judgment(self, judgment: Judgment, cost: Cost) -> Finding:
        value = getattr(judgment, self.field)
        return Finding(diagnoser=self.name, problem=value == self.bad, verdict=str(value).lower(), cost=cost,
                       details={"reason": judgment.reason})


class Stuck(_Base):
    name, field = "stuck_loop", "repeat_failure_detected"


class Effect(_Base):
    name, field, bad = "action_effect", "previous_intended_effect_satisfied", "no"


class Interference(_Base):
    name, field = "interference", "interference_present"


class Alignment(_Base):
    name, field, bad = "task_alignment", "task_alignment", "off_track"


def _shot(color: tuple[int, int, int]) -> Image.Image:
    return Image.new("RGB", (1080, 2400), color)


def _record(obs: Observation, action: Action, summary: str, thought: str, source: str = "agent") -> StepRecord:
    return StepRecord(observation=obs, step=AgentStep(action=action, summary=summary, thought=thought), source=source)


@pytest.fixture
def screens(dump):
    def make(screenshot: bool) -> tuple[Observation, Observation]:
        before = Observation.from_xml(dump("contacts_list"), screenshot=_shot((250, 250, 250)) if screenshot else None,
                                      foreground="com.google.android.contacts")
        now = Observation.from_xml(dump("permission_dialog"), screenshot=_shot((90, 90, 90)) if screenshot else None,
                                   foreground="com.google.android.contacts")
        return before, now

    return make


def _ctx(before: Observation, now: Observation, n_history: int = 6) -> DiagnosisContext:
    history = [
        _record(before, Action(action_type="open_app", app_name="Contacts"), f"open Contacts ({i})", "start")
        for i in range(n_history - 1)
    ]
    history.append(_record(before, Action(action_type="click", x=954, y=2211),
                           "the new-contact form opens", "Tap the + button to create a contact"))
    return DiagnosisContext(goal=GOAL, observation=now, history=history)


def _judge(server, **cascade: Any) -> VLMJudge:
    cfg = TTIRConfig(vlm=server.config(image_max_side=256), cascade=CascadeConfig(history=3, **cascade))
    return VLMJudge(VLMClient(cfg.vlm), cfg)


def test_four_diagnosers_share_one_request_per_step(vlm_server, screens):
    vlm_server.enqueue(Reply.fenced(JUDGMENT, prompt_tokens=900, completion_tokens=60))
    judge = _judge(vlm_server)
    ctx = _ctx(*screens(screenshot=True))
    findings = [d(mode="vlm", judge=judge).diagnose(ctx) for d in (Stuck, Effect, Interference, Alignment)]
    assert len(vlm_server.completions()) == 1
    assert [f.problem for f in findings] == [False, True, True, False]
    assert all(f.tier == "vlm" for f in findings)
    total = sum((f.cost for f in findings), Cost())
    assert total.model_calls == 1 and total.prompt_tokens == 900  # the call is charged once
    assert isinstance(ctx.cache[CACHE_KEY].judgment, Judgment)

    # The next step is a new context: one more request.
    vlm_server.enqueue(Reply.json(JUDGMENT))
    ctx2 = _ctx(*screens(screenshot=True))
    for d in (Stuck, Effect, Interference, Alignment):
        d(mode="vlm", judge=judge).diagnose(ctx2)
    assert len(vlm_server.completions()) == 2


def test_prompt_carries_goal_history_and_both_screenshots(vlm_server, screens):
    vlm_server.enqueue(Reply.json(JUDGMENT))
    judge = _judge(vlm_server)
    judge.judge(_ctx(*screens(screenshot=True), n_history=6))
    req = vlm_server.completions()[0]
    assert len(req.images) == 2 and all(u.startswith("data:image/png;base64,") for u in req.images)
    text = req.text
    assert GOAL in text and "Image 1" in text and "Image 2" in text
    assert "click(x=954, y=2211)" in text and "the new-contact form opens" in text
    assert "Tap the + button" in text
    assert "step 6 (agent, on com.google.android.contacts)" in text
    assert "open Contacts (2)" not in text and "open Contacts (3)" in text  # only the last cascade.history=3 steps
    for field in JUDGMENT:
        assert field in text
    assert "android.widget" not in text and "[5] Button" not in text  # screenshots, not the tree


def test_without_screenshot_the_ui_tree_is_sent_as_text(vlm_server, screens):
    vlm_server.enqueue(Reply.json(JUDGMENT))
    judge = _judge(vlm_server)
    judge.judge(_ctx(*screens(screenshot=False)))
    req = vlm_server.completions()[0]
    assert req.images == []
    assert "No screenshot" in req.text
    assert '[7] Button "Don’t allow" id="permission_deny_button" pkg="com.android.permissioncontroller"' in req.text
    assert '"Amara Okafor"' in req.text  # the previous screen, for comparison


def test_first_step_and_pending_completion_claim(vlm_server, screens):
    vlm_server.enqueue(Reply.json(JUDGMENT))
    _, now = screens(screenshot=True)
    ctx = DiagnosisContext(goal=GOAL, observation=now,
                           pending=AgentStep(action=Action(action_type="status", goal_status="complete"),
                                             summary="the contact is saved"))
    _judge(vlm_server).judge(ctx)
    req = vlm_server.completions()[0]
    assert len(req.images) == 1 and "(no previous steps)" in req.text
    assert "claims the task is complete" in req.text and "the contact is saved" in req.text


def test_cascade_asks_the_model_only_when_rules_are_uncertain_or_scheduled(vlm_server, screens):
    class Sure(Interference):
        def rules(self, ctx):
            return Finding(diagnoser=self.name, problem=False, verdict="false")

    judge = _judge(vlm_server, every_n_steps=3)
    before, now = screens(screenshot=True)
    assert Sure(mode="cascade", judge=judge).diagnose(_ctx(before, now, n_history=4)).tier == "cascade"
    assert vlm_server.completions() == []  # rules were sure, step 4 is not scheduled
    assert judge.scheduled(_ctx(before, now, n_history=6))
    assert not judge.scheduled(DiagnosisContext(goal=GOAL, observation=now))
    vlm_server.enqueue(Reply.json(JUDGMENT), Reply.json(JUDGMENT))
    assert Sure(mode="cascade", judge=judge).diagnose(_ctx(before, now, n_history=6)).problem is True
    assert Interference(mode="cascade", judge=judge).diagnose(_ctx(before, now, n_history=4)).problem is True
    assert len(vlm_server.completions()) == 2


def test_a_failed_call_is_not_repeated_by_the_other_diagnosers(vlm_server, screens):
    vlm_server.enqueue(*[Reply.error(500, "down") for _ in range(8)])
    judge = VLMJudge(VLMClient(vlm_server.config(max_retries=1)), CascadeConfig())
    ctx = _ctx(*screens(screenshot=True))
    for d in (Stuck, Effect, Interference, Alignment):
        with pytest.raises(VLMServerError):
            d(mode="vlm", judge=judge).diagnose(ctx)
    assert len(vlm_server.completions()) == 2  # one call, one retry, shared by all four


def test_ajudge_shares_one_request_among_concurrent_diagnosers(vlm_server, screens):
    vlm_server.enqueue(Reply.slow(0.2, Reply.json(JUDGMENT)))
    judge = _judge(vlm_server)
    ctx = _ctx(*screens(screenshot=True))

    async def main():
        return await asyncio.gather(*(judge.ajudge(ctx) for _ in range(4)))

    results = asyncio.run(main())
    assert len(vlm_server.completions()) == 1
    assert all(j.interference_present for j, _ in results)
    assert sum(c.model_calls for _, c in results) == 1


def test_user_prompt_file_is_used(vlm_server, screens, tmp_path):
    mine = tmp_path / "strict.md"
    mine.write_text("MY PROMPT for $goal\n$history\n$screen\n$pending\nstep $step\nAnswer in JSON.", encoding="utf-8")
    vlm_server.enqueue(Reply.json(JUDGMENT))
    cfg = TTIRConfig(vlm=vlm_server.config(image_max_side=256), prompts=PromptsConfig(diagnose=str(mine)))
    VLMJudge(config=cfg).judge(_ctx(*screens(screenshot=True)))
    assert vlm_server.completions()[0].text.startswith(f"MY PROMPT for {GOAL}")


def test_judgment_rejects_boolean_task_alignment(vlm_server, screens):
    vlm_server.enqueue(Reply.json({**JUDGMENT, "previous_intended_effect_satisfied": True, "task_alignment": True}))
    with pytest.raises(VLMBadReply, match="task_alignment"):
        _judge(vlm_server).judge(_ctx(*screens(screenshot=True)))
    assert Judgment.model_validate({**JUDGMENT, "previous_intended_effect_satisfied": False}) \
        .previous_intended_effect_satisfied == "no"


# ------------------------------------------------------------------ RecoveryModel


def _recovery_ctx(screens, screenshot: bool = True, taken: tuple[AgentStep, ...] = ()) -> RecoveryContext:
    before, now = screens(screenshot=screenshot)
    diag = _ctx(before, now)
    finding = Finding(diagnoser="interference", problem=True, verdict="true",
                      evidence=["foreign package com.android.permissioncontroller"],
                      details={"reason": "a permission dialog covers the list"})
    return RecoveryContext(goal=GOAL, observation=now, history=diag.history, finding=finding, taken=list(taken),
                           budget=3)


def test_recovery_model_returns_a_validated_step(vlm_server, screens):
    vlm_server.enqueue(Reply.chatty({"thought": "decline it", "summary": "dialog closes",
                                     "action": {"action_type": "click", "index": 7}}, prompt_tokens=700))
    model = RecoveryModel(VLMClient(vlm_server.config(image_max_side=256)), TTIRConfig())
    step, cost = model.propose("dismiss_interference", _recovery_ctx(screens))
    assert step.action == Action(action_type="click", index=7)
    assert step.summary == "dialog closes" and step.thought == "decline it" and step.raw
    assert cost.model_calls == 1 and cost.prompt_tokens == 700
    req = vlm_server.completions()[0]
    assert len(req.images) == 1
    assert "Do NOT engage" in req.text and GOAL in req.text
    assert "a permission dialog covers the list" in req.text
    assert "foreign package com.android.permissioncontroller" in req.text
    assert "[7] Button" in req.text  # the tree with real indexes, so index actions can be grounded
    assert "3 recovery action(s) remain" in req.text


def test_alternative_action_prompt_carries_the_failed_action(vlm_server, screens):
    vlm_server.enqueue(Reply.json({"thought": "use the id", "summary": "form opens",
                                   "action_type": "click", "index": 5, "reason": "extra keys are dropped"}))
    model = RecoveryModel(VLMClient(vlm_server.config(image_max_side=256)))
    taken = (AgentStep(action=Action(action_type="scroll", direction="down"), summary="reveal the button"),)
    step, _ = model.propose("alternative_action", _recovery_ctx(screens, taken=taken))
    assert step.action == Action(action_type="click", index=5)  # a flat reply is accepted
    text = vlm_server.completions()[0].text
    assert "Failed action: click(x=954, y=2211)" in text
    assert "the new-contact form opens" in text
    assert "scroll(direction='down') — \"reveal the button\"" in text
    assert "2 recovery action(s) remain" in text


@pytest.mark.parametrize(
    "action, why",
    [
        ({"action_type": "click"}, "needs a target"),
        ({"action_type": "teleport"}, "not a known action"),
        ({"action_type": "click", "index": 99}, "out of range"),
        ({"action_type": "click", "x": 5000, "y": 10}, "off the 1080x2400 screen"),
        ({"action_type": "status", "goal_status": "complete"}, "may not end"),
    ],
)
def test_invalid_proposals_raise_bad_reply(vlm_server, screens, action, why):
    vlm_server.enqueue(Reply.json({"thought": "t", "summary": "s", "action": action}))
    client = VLMClient(vlm_server.config(image_max_side=256))
    with pytest.raises(VLMBadReply, match=why):
        RecoveryModel(client).propose("re_orientation", _recovery_ctx(screens))
    assert client.usage.failed_calls == 1


def test_recovery_without_screenshot_and_async(vlm_server, screens):
    vlm_server.enqueue(Reply.json({"thought": "back to the app", "summary": "contacts visible",
                                   "action": {"action_type": "open_app", "app_name": "Contacts"}}))
    model = RecoveryModel(VLMClient(vlm_server.config(image_max_side=256)))
    step, _ = asyncio.run(model.apropose("re_orientation", _recovery_ctx(screens, screenshot=False)))
    assert step.action.app_name == "Contacts"
    req = vlm_server.completions()[0]
    assert req.images == [] and "No screenshot" in req.text and "Do NOT try to complete the task" in req.text
    with pytest.raises(ValueError, match="strategy='stuck_loop'"):
        model.propose("stuck_loop", _recovery_ctx(screens))
