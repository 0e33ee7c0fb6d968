"""AndroidFlux's injection gain (``t+1+`` checkpoints: the first error, then the oracle's next action instead of
the source's), a model judge scored against the outcome-grounded preferences over real HTTP (the local
test server), and preference rollouts in worker processes that give the same pairs as one process."""

from __future__ import annotations

import json
import re

import pytest

from experiments.checkpoints.build import build
from experiments.checkpoints.history import BANNED_WORDS
from experiments.checkpoints.model import is_injected, load, parse_position, position_key
from experiments.spec import ExperimentSpec
from ttir.testing import Reply

PLANNER = {"name": "planner", "kind": "planner",
           "params": {"engage_probability": 0.8, "move_on_probability": 0.9, "drift_probability": 0.5,
                      "drift_mode": "restart"}}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """Two failed episodes (the planner stuck in MarkorCreateNote under trap_loop, seeds 0 and 1) and their
    checkpoints at t, t+1 and t+1+."""
    from experiments.runner import run

    root = tmp_path_factory.mktemp("inject")
    spec = ExperimentSpec.from_dict({"name": "src", "tasks": ["MarkorCreateNote"], "perturbations": ["trap_loop"],
                                     "agents": [PLANNER], "guard": ["off"], "seeds": [0, 1], "workers": 1,
                                     "save_xml": True})
    run(spec, root / "src", workers=1, progress=False)
    summary = build(root / "src", root / "ck", ("t", "t+1", "t+1+"))
    return root, summary


# -- positions --------------------------------------------------------------------------------------

def test_the_injected_position_is_read_and_ordered_after_its_plain_one():
    assert parse_position("t+1+") == 1 and is_injected("t+1+") and not is_injected("t+1")
    assert sorted(["t+1+", "t", "t+1", "t-1"], key=position_key) == ["t-1", "t", "t+1", "t+1+"]
    for bad in ("t+", "t-1+", "t+0+", "t++1"):
        with pytest.raises(ValueError, match=r"t\+K\+"):
            parse_position(bad)


# -- injection ------------------------------------------------------------------------------------

def test_an_injected_checkpoint_replaces_the_source_s_next_action_by_the_oracle_s(source):
    from experiments.checkpoints.build import open_env
    from experiments.checkpoints.export import contexts
    from experiments.checkpoints.propose import agent_spec, next_action
    from experiments.checkpoints.resume import ReplayedStart
    from experiments.spec import EpisodeSpec
    from experiments.worker import _jpeg

    root, summary = source
    counts = summary.by_position["t+1+"]
    assert summary.placed == 2 and counts.reproduced == 2 and counts.not_injected == 0
    cks = {(c.source_id, c.position): c for c in load(root / "ck")}
    for (sid, pos), ck in cks.items():
        if pos != "t+1+":
            assert ck.injected is None
            continue
        at_t, plain = cks[(sid, "t")], cks[(sid, "t+1")]
        oracle_next, _ = next_action(at_t, agent_spec("oracle", "oracle", {}), 0)
        assert ck.injected == oracle_next == ck.actions[-1] and ck.injected_by == "oracle"
        assert ck.actions[:-1] == at_t.actions and ck.prefix_steps == plain.prefix_steps == len(ck.actions)
        assert ck.actions != plain.actions  # the oracle does not repeat the source's stuck step here
        assert ck.history[:-1] == at_t.history and not any(w in ck.history[-1].summary.lower() for w in BANNED_WORDS)
        assert (root / "ck" / "screens" / f"{ck.id}.xml").exists()
        ctx = next(c for c in contexts(root / "ck") if c.id == ck.id)  # the export: no source action at that state
        assert ctx.candidate_actions == [] and ctx.injected == ck.injected
        ep = EpisodeSpec(task=ck.task, perturbation=ck.perturbation, agent=PLANNER, checkpoint=ck.model_dump(mode="json"))
        env, shown, task, _ = open_env(ep)
        try:
            ReplayedStart(shown, ck, _jpeg).reset(task)  # the injected state reproduces (raises when it does not)
        finally:
            env.close()


def test_a_run_from_injected_checkpoints_reports_the_injection_gain(source, tmp_path):
    from experiments.checkpoints.report import RecoveryRow, recovery_metrics, recovery_section
    from experiments.metrics.episodes import RunData, succeeded
    from experiments.runner import run

    root, _ = source
    spec = ExperimentSpec.from_dict({"name": "rec", "from_checkpoints": str(root / "ck"), "agents": [PLANNER],
                                     "guard": ["off"], "seeds": [0], "workers": 1})
    out = run(spec, tmp_path / "rec", workers=1, progress=False)
    assert out["errors_this_run"] == 0
    data = RunData.load(tmp_path / "rec")
    m = recovery_metrics(data)
    assert m is not None and m.positions == ["t", "t+1", "t+1+"]
    rate = {p: [succeeded(r) for r in data.records if (r.model_extra or {}).get("checkpoint", {}).get("position") == p]
            for p in m.positions}
    assert len(rate["t+1+"]) == len(rate["t+1"]) == 2
    want = 100 * (sum(rate["t+1+"]) - sum(rate["t+1"])) / 2
    assert m.rows[0].injection_gain() == pytest.approx(want)
    text = recovery_section(data)
    assert "injection gain (t+1+ − t+1)" in text and "Rewinding vs injection" in text
    assert f"{want:+.1f} pp" in text
    # and on hand-made cells: +1/2 at t+1+ against 0/2 at t+1 is +50 points; without t+1+ there is none
    row = RecoveryRow(agent="a", guard="off", positions={"t+1": {"k": 0, "n": 2}, "t+1+": {"k": 1, "n": 2}})
    assert row.injection_gain() == pytest.approx(50.0)
    assert RecoveryRow(agent="a", guard="off", positions={"t+1": {"k": 0, "n": 2}}).injection_gain() is None


# -- preferences in worker processes ----------------------------------------------------------------

def test_preference_rollouts_in_worker_processes_equal_the_sequential_ones(source, tmp_path):
    from experiments.checkpoints.prefs import preferences

    root, _ = source
    one = preferences(root / "ck", tmp_path / "one.jsonl", repeats=1, margin=1, workers=1)
    two = preferences(root / "ck", tmp_path / "two.jsonl", repeats=1, margin=1, workers=2)
    assert one.checkpoints == 2 and one.rollouts == 3 * one.candidates  # oracle, reference, the source at seed 0
    assert one == two
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()


# -- a model judge over real HTTP ---------------------------------------------------------------------

def _pairs(root, path):
    """Two hand-made preference pairs at the real t checkpoints: the oracle's next action preferred to the
    source's recorded one (the schema of ``prefs.Preference``)."""
    from experiments.checkpoints.prefs import Candidate, Preference, _recorded_next
    from experiments.checkpoints.propose import agent_spec, next_action

    lines = []
    for ck in (c for c in load(root / "ck") if c.position == "t"):
        good, _ = next_action(ck, agent_spec("oracle", "oracle", {}), 0)
        bad = _recorded_next(ck)
        assert good != bad
        guard = Candidate(action=good, sources=["oracle", "guard"], guard_acted=True, successes=3, rollouts=3)
        p = Preference(checkpoint=ck.id, task=ck.task, goal=ck.goal, position=ck.position, error_class=ck.error_class,
                       history=[h.model_dump() for h in ck.history], state=ck.screen.model_dump(), chosen=guard,
                       rejected=Candidate(action=bad, sources=["agent"], successes=0, rollouts=3), margin=3)
        lines.append(p.model_dump_json())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [json.loads(x) for x in lines]


def _knows(pairs):
    """A responder that names the preferred action wherever it is shown (an ideal judge)."""
    def answer(request):
        text = request.text
        for p in pairs:
            good = json.dumps({k: v for k, v in p["chosen"]["action"].items() if v is not None}, sort_keys=True)
            for letter in "AB":
                line = re.search(rf"^{letter}: .*$", text, re.M)
                if line and good in line.group(0):
                    return Reply.json({"better": letter})
        return Reply.json({"better": "A"})
    return answer


def test_an_ideal_judge_agrees_with_every_preference_over_http(source, tmp_path):
    from experiments.checkpoints.judge import judge_preferences
    from ttir.model.client import VLMClient
    from ttir.testing import VLMTestServer

    root, _ = source
    pairs = _pairs(root, tmp_path / "prefs.jsonl")
    with VLMTestServer(responder=_knows(pairs)) as server:
        with VLMClient(server.config()) as client:
            s = judge_preferences(root / "ck", tmp_path / "prefs.jsonl", client, out=tmp_path / "judged.jsonl")
        asked = server.completions()
    assert s.pairs == 2 and s.questions == 4 == len(asked) and s.answered == 4
    assert s.correct == 4 and s.agree == 2 and s.pair_agreement == 1.0 and s.order_accuracy == 1.0
    assert s.guard_pairs == 2 and s.guard_preferred == 2
    ck = next(c for c in load(root / "ck") if c.id == pairs[0]["checkpoint"])
    first = asked[0].text
    assert ck.goal in first and all(h.summary in first for h in ck.history[-5:])
    assert not any(w in first.lower() for w in ("error", "mistake", "replay", "recover", "checkpoint", "inject"))
    judged = [json.loads(x) for x in (tmp_path / "judged.jsonl").read_text().splitlines()]
    assert [(j["chosen_first"], j["rejected_first"]) for j in judged] == [("A", "B"), ("A", "B")]


def test_a_judge_that_always_names_a_scores_chance_and_a_bad_reply_is_unanswered(source, tmp_path):
    from experiments.checkpoints.judge import judge_preferences
    from ttir.model.client import VLMClient
    from ttir.testing import VLMTestServer

    root, _ = source
    _pairs(root, tmp_path / "prefs.jsonl")
    with VLMTestServer() as server:
        server.enqueue(Reply.json({"better": "A"}), Reply.json({"better": "A"}),
                       Reply.text("I think the first one."), Reply.text("no idea"), Reply.text("still no"),
                       Reply.text("nope"))
        with VLMClient(server.config(max_retries=0)) as client:
            s = judge_preferences(root / "ck", tmp_path / "prefs.jsonl", client)
    assert s.pairs == 2 and s.answered == 2 and s.correct == 1 and s.order_accuracy == 0.5
    assert s.inconsistent == 1 and s.agree == 0 and s.unanswered == 1


def test_ttir_checkpoints_judge_on_the_command_line(source, tmp_path, capsys, monkeypatch):
    from ttir.cli import main
    from ttir.testing import VLMTestServer

    root, _ = source
    pairs = _pairs(root, tmp_path / "prefs.jsonl")
    monkeypatch.delenv("TTIR_VLM_BASE_URL", raising=False)
    assert main(["checkpoints", "judge", str(root / "ck"), str(tmp_path / "prefs.jsonl"),
                 "--out", str(tmp_path / "j.jsonl")]) == 2
    assert "--base-url" in capsys.readouterr().err
    with VLMTestServer(responder=_knows(pairs)) as server:
        rc = main(["checkpoints", "judge", str(root / "ck"), str(tmp_path / "prefs.jsonl"), "--out",
                   str(tmp_path / "j.jsonl"), "--base-url", server.base_url, "--model", server.model])
    out = capsys.readouterr().out
    assert rc == 0 and "in 4 of 4 answers (100.0%" in out and "2 of 2 pairs it is part of" in out
    assert main(["checkpoints", "judge", str(root / "ck"), str(tmp_path / "missing.jsonl"), "--out",
                 str(tmp_path / "j.jsonl"), "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "ttir checkpoints prefs" in capsys.readouterr().err


@pytest.mark.live_model
@pytest.mark.xdist_group("live_model")
def test_the_offline_model_judges_the_pairs_over_http(source, tmp_path, live_model):
    """The real offline model (`ttir serve-model`): every question is answered with A or B or counted as
    unanswered with its error; a 135M model is scored, not expected to be right."""
    from experiments.checkpoints.judge import judge_preferences
    from ttir.model.client import VLMClient

    root, _ = source
    _pairs(root, tmp_path / "prefs.jsonl")
    with VLMClient(live_model) as client:
        s = judge_preferences(root / "ck", tmp_path / "prefs.jsonl", client, out=tmp_path / "judged.jsonl")
    judged = [json.loads(x) for x in (tmp_path / "judged.jsonl").read_text().splitlines()]
    assert s.pairs == 2 and s.questions == 4
    assert s.answered + sum(len(j["errors"]) for j in judged) == 4
    assert s.agree + s.disagree + s.inconsistent + s.unanswered == 2 and 0 <= s.correct <= s.answered
    for j in judged:
        assert {j["chosen_first"], j["rejected_first"]} <= {"A", "B", None}
