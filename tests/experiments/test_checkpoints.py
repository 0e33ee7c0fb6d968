"""Recovery from first-error checkpoints (experiments.checkpoints, AndroidFlux): first-error placement on
hand-built episode logs, checkpoints that reproduce the recorded screen on the simulated phone, histories
that never mention an error or a replay, and runs from checkpoints that resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.checkpoints.build import build, open_env
from experiments.checkpoints.model import load, parse_position, prefix_length
from experiments.checkpoints.history import BANNED_WORDS, history_step, neutral
from experiments.checkpoints.placement import place
from experiments.checkpoints.replay import replay_prefix, screen_digest, sha256
from experiments.worker import _jpeg
from experiments.spec import EpisodeSpec, ExperimentSpec
from tests.support.metrics_support import LAUNCHER, action, click, ev, rec, step, traj

OPEN = action("open_app", app_name="Notes")
DONE = action("status", goal_status="complete")
PLANNER = {"name": "planner", "kind": "planner",
           "params": {"engage_probability": 0.8, "move_on_probability": 0.9, "drift_probability": 0.5,
                      "drift_mode": "restart"}}


def _failed(**kw):
    kw.setdefault("success", False)
    kw.setdefault("perturbation", "popup_security")
    return rec(**kw)


# -- placement ------------------------------------------------------------------------------------

def test_stagnation_is_the_first_repeat_not_the_first_attempt():
    steps = [step(0, OPEN, fg=LAUNCHER)] + [step(i, click(540, 1200), 'Tap "Save"') for i in range(1, 5)]
    fe = place(_failed(termination="budget"), traj(steps))
    assert fe.placed and fe.error_class == "stagnation" and fe.step == 2
    assert fe.ttir_category == "stale_coordinate_stuck"


def test_direction_engaging_with_injected_content():
    steps = [step(0, OPEN, fg=LAUNCHER), step(1, click(540, 1800), 'Tap "Continue"'),
             step(2, click(540, 900), n_elements=14), step(3, DONE, n_elements=15)]
    events = [ev(1, "overlay_shown", "popup_security"),
              ev(1, "overlay_engaged", "popup_security", label="Continue", role="engage", title="Protect")]
    fe = place(_failed(), traj(steps, events))
    assert fe.placed and fe.error_class == "direction" and fe.step == 1
    assert fe.ttir_category == "off_task_engagement" and not fe.ends_episode


def test_direction_a_rejected_completion_claim_ends_the_episode():
    steps = [step(0, OPEN, fg=LAUNCHER), step(1, click(100, 200), n_elements=11), step(2, DONE, n_elements=12)]
    fe = place(_failed(perturbation="clean", verified=False), traj(steps))
    assert fe.placed and fe.error_class == "direction" and fe.step == 2 and fe.ends_episode


def test_execution_a_silently_dropped_action_the_agent_did_not_notice():
    steps = [step(0, OPEN, fg=LAUNCHER), step(1, click(900, 2100), 'Tap "New"', n_elements=11),
             step(2, action("input_text", x=540, y=600, text="milk"), 'Type "milk"', n_elements=12),
             step(3, action("scroll", direction="down"), n_elements=13)]
    events = [ev(1, "dropped", "action_drop_random", action=click(900, 2100))]
    fe = place(_failed(perturbation="action_drop_random", termination="budget"), traj(steps, events))
    assert fe.placed and fe.error_class == "execution" and fe.step == 1
    assert fe.ttir_category == "silent_action_failure"


def test_priority_stagnation_then_direction_then_execution_at_the_same_step():
    # step 2: the second identical tap (stagnation) is also where the agent engaged with an overlay (direction)
    steps = [step(0, OPEN, fg=LAUNCHER)] + [step(i, click(540, 1200), 'Tap "Open"') for i in range(1, 5)]
    events = [ev(2, "overlay_engaged", "popup_security", label="Open", role="engage", title="Offer")]
    fe = place(_failed(termination="budget"), traj(steps, events))
    assert fe.step == 2 and fe.error_class == "stagnation" and set(fe.candidates) >= {"stagnation", "direction"}


def test_an_episode_no_rule_places_is_left_out_with_its_reason():
    steps = [step(i, click(100 * i, 200), n_elements=10 + i) for i in range(4)]
    fe = place(_failed(termination="budget"), traj(steps))
    assert not fe.placed and fe.step is None and "no rule" in fe.reason
    assert not place(_failed(status="error"), None).placed


def test_positions():
    assert [parse_position(p) for p in ("t-3", "t-1", "t", "t+1")] == [-3, -1, 0, 1]
    assert [prefix_length(5, o) for o in (-3, -1, 0, 1)] == [2, 4, 6, 7]
    with pytest.raises(ValueError, match="t-K"):
        parse_position("before")


# -- history --------------------------------------------------------------------------------------

def test_history_never_mentions_an_error_or_a_replay():
    bad = history_step(3, click(540, 900), "My taps keep having no effect; something may be in the way. Go back.")
    assert bad.summary == "Tap at (540, 900)" and neutral(bad.summary)
    kept = history_step(1, click(540, 900), 'Tap "Create new document"')
    assert kept.summary == 'Tap "Create new document"'
    assert history_step(2, action("wait", seconds=1.0), "Nothing changed yet; retry").summary == "Wait"


# -- a real source run, checkpoints, and runs from them ------------------------------------------------

@pytest.fixture(scope="module")
def source(tmp_path_factory):
    from experiments.runner import run

    root = tmp_path_factory.mktemp("ck")
    spec = ExperimentSpec.from_dict({"name": "src", "tasks": ["ContactsAddContact"], "perturbations": ["ad_trial_offer"],
                                     "agents": [PLANNER], "guard": ["off"], "seeds": [0], "workers": 1,
                                     "save_xml": True})
    run(spec, root / "src", workers=1, progress=False)
    summary = build(root / "src", root / "ck", ("t-1", "t", "t+1"))
    return root, summary


def test_checkpoints_reproduce_the_recorded_screen_exactly(source):
    root, summary = source
    assert summary.failed_episodes == 1 and summary.placed == 1
    cks = load(root / "ck")
    assert {c.position for c in cks} == {"t-1", "t", "t+1"} and summary.reproduced_rate == 1.0
    for ck in cks:
        recorded = root / "src" / "episodes" / ck.source_id
        ep = EpisodeSpec.model_validate(json.loads((recorded / "trajectory.json").read_text())["spec"])
        env, shown, task, _ = open_env(ep)
        try:
            seen = replay_prefix(shown, shown.reset(task), ck.actions)
        finally:
            env.close()
        _, jpg, xml = screen_digest(seen[-1], ck.screenshot_width, _jpeg)
        assert xml == (recorded / f"step_{ck.prefix_steps:03d}.xml").read_bytes()  # the dump, byte for byte
        assert sha256(jpg) == sha256((recorded / f"step_{ck.prefix_steps:03d}.jpg").read_bytes())
        assert sha256(jpg) == ck.screen.jpeg_sha256


def test_a_checkpoint_s_history_and_what_the_agent_receives_never_mention_an_error(source):
    from experiments.checkpoints.resume import ReplayedStart, ResumedAgent
    from ttir.core.types import Action, AgentStep

    root, _ = source
    ck = next(c for c in load(root / "ck") if c.position == "t+1")
    assert len(ck.history) == ck.prefix_steps >= 2
    for h in ck.history:
        assert not any(w in h.summary.lower() for w in BANNED_WORDS), h.summary

    class Recorder:  # an agent with its own resume(): it gets the history as StepRecords
        def resume(self, goal, history):
            self.goal, self.history = goal, history

        def reset(self, goal):
            raise AssertionError("resume() is used instead")

        def step(self, obs):
            return AgentStep(action=Action(action_type="wait", seconds=1.0))

    ep = EpisodeSpec(task=ck.task, perturbation=ck.perturbation, agent=PLANNER, checkpoint=ck.model_dump(mode="json"))
    env, shown, task, _ = open_env(ep)
    try:
        start = ReplayedStart(shown, ck, _jpeg)
        start.reset(task)
        agent = ResumedAgent(Recorder(), start)
        agent.reset(ck.goal)
    finally:
        env.close()
    told = " ".join(f"{r.step.summary} {r.step.thought}" for r in agent.agent.history).lower()
    assert agent.how == "resume" and len(agent.agent.history) == ck.prefix_steps
    assert not any(w in told for w in (*BANNED_WORDS, "replay"))


def test_runs_from_checkpoints_resume_and_report(source, tmp_path):
    from experiments.checkpoints.report import recovery_metrics
    from experiments.metrics.episodes import RunData
    from experiments.runner import run
    from experiments.store import RunStore

    root, _ = source
    spec = ExperimentSpec.from_dict({"name": "rec", "from_checkpoints": str(root / "ck"), "agents": [PLANNER],
                                     "guard": ["off", "rules"], "seeds": [0], "workers": 1})
    eps = spec.episodes()
    n_ck = sum(e.checkpoint is not None for e in eps)
    assert n_ck == 3 * 2 and len(eps) == n_ck + 2  # + the clean start of the one setting, guard off and on
    first = run(spec, tmp_path / "rec", workers=1, progress=False)
    assert first["ran"] == len(eps) and first["errors_this_run"] == 0
    store = RunStore(tmp_path / "rec")
    before = {r["id"]: (r["success"], r["steps"]) for r in store.records()}
    rec = next(r for r in store.records() if r.get("checkpoint"))
    assert rec["budget"] == 120 - rec["checkpoint"]["prefix_steps"]  # the task's budget minus the prefix
    assert run(spec, tmp_path / "rec", workers=1, progress=False)["ran"] == 0  # resumed: nothing left
    dropped = {r["id"] for r in store.records() if r.get("checkpoint")}
    store.drop(set(list(dropped)[:3]))
    assert run(spec, tmp_path / "rec", workers=1, progress=False)["ran"] == 3  # only what was missing
    assert {r["id"]: (r["success"], r["steps"]) for r in store.records()} == before  # deterministic
    m = recovery_metrics(RunData.load(tmp_path / "rec"))
    assert m is not None and m.checkpoint_episodes == 6 and m.clean_start_episodes == 2
    assert {r.guard for r in m.rows} == {"off", "rules"} and set(m.positions) == {"t-1", "t", "t+1"}


def test_a_checkpoint_that_does_not_reproduce_is_an_error_not_a_result(source, tmp_path):
    from experiments.worker import run_one

    root, _ = source
    ck = load(root / "ck")[0].model_dump(mode="json")
    ck["screen"]["xml_sha256"] = "0" * 64
    ep = EpisodeSpec(task=ck["task"], perturbation=ck["perturbation"], agent=PLANNER, checkpoint=ck)
    r = run_one(ep, str(tmp_path))
    assert r["status"] == "error" and "did not restore" in r["error"] and r["success"] is False


def test_preferences_pair_candidates_of_one_state_by_panel_outcomes(source, tmp_path):
    from experiments.checkpoints.prefs import preferences

    root, _ = source
    s = preferences(root / "ck", tmp_path / "prefs.jsonl", repeats=1, margin=1)
    ck = next(c for c in load(root / "ck") if c.position == "t")
    assert s.checkpoints == 1 and s.candidates >= 1 and s.rollouts == 3 * s.candidates  # oracle, reference, source s0
    lines = [json.loads(x) for x in (tmp_path / "prefs.jsonl").read_text().splitlines()]
    assert len(lines) == s.pairs
    for p in lines:  # each pair shares the task, the state and the history; the chosen one did better
        assert p["checkpoint"] == ck.id and p["task"] == ck.task and p["history"] == [h.model_dump() for h in ck.history]
        assert p["state"]["xml_sha256"] == ck.screen.xml_sha256
        assert p["chosen"]["successes"] - p["rejected"]["successes"] == p["margin"] >= 1
    assert s.guard_preferred <= s.guard_pairs <= s.pairs


RESUMING_AGENT = '''
from ttir import Action, AgentStep

class Resuming:
    def resume(self, goal, history):
        self.told = [r.step.summary for r in history]
    def reset(self, goal):
        self.told = None
    def step(self, obs):
        said = "none" if self.told is None else f"{len(self.told)} steps: " + " | ".join(self.told)
        return AgentStep(action=Action(action_type="status", goal_status="complete"), summary=said[:1000])

def make_agent(facts):
    return Resuming()
'''


def test_a_python_agent_resumes_from_checkpoints_with_its_own_resume(source, tmp_path):
    import uuid

    from experiments.runner import run
    from experiments.store import RunStore

    root, _ = source
    name = f"agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(RESUMING_AGENT, encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(
        f"name: mine\nfrom_checkpoints: {root / 'ck'}\nguard: ['off']\nworkers: 1\n"
        f"agents: [{{name: mine, kind: python, factory: '{name}:make_agent'}}]\n", encoding="utf-8")
    spec = ExperimentSpec.from_yaml(tmp_path / "spec.yaml")
    run(spec, tmp_path / "run", workers=1, progress=False)
    store = RunStore(tmp_path / "run")
    resumed = [r for r in store.records() if r.get("checkpoint")]
    assert len(resumed) == 3 and all(r["status"] == "ok" for r in resumed)
    for r in resumed:
        said = store.trajectory(r["id"])["trajectory"][0]["agent_step"]["summary"]
        assert said.startswith(f"{r['checkpoint']['prefix_steps']} steps")
        assert not any(w in said.lower() for w in BANNED_WORDS)
    start = [r for r in store.records() if not r.get("checkpoint")]
    assert len(start) == 1 and store.trajectory(start[0]["id"])["trajectory"][0]["agent_step"]["summary"] == "none"


def test_from_checkpoints_names_a_folder_without_checkpoints(tmp_path):
    with pytest.raises(ValueError, match=r"from_checkpoints: .*holds no checkpoints.jsonl; build one with `ttir checkpoints"):
        ExperimentSpec.from_dict({"name": "x", "from_checkpoints": str(tmp_path / "nowhere")})


def test_a_build_refuses_an_out_folder_that_is_not_its_own_and_a_rebuild_drops_stale_screens(source, tmp_path):
    from ttir.core.errors import ConfigError

    root, _ = source
    before = sorted(p.name for p in (root / "src").iterdir())
    with pytest.raises(ConfigError, match="is the run folder itself"):
        build(root / "src", root / "src", ("t",))
    assert sorted(p.name for p in (root / "src").iterdir()) == before  # nothing written into the run
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(ConfigError, match="is a file; expected a folder for the checkpoints"):
        build(root / "src", tmp_path / "a_file", ("t",))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep")
    with pytest.raises(ConfigError, match="holds other files and no checkpoints.jsonl"):
        build(root / "src", tmp_path / "notes", ("t",))
    assert [p.name for p in (tmp_path / "notes").iterdir()] == ["mine.txt"]
    # an earlier build's folder is rewritten, and the screens this build does not keep go with it
    build(root / "src", tmp_path / "ck", ("t-1", "t", "t+1"))
    assert len(list((tmp_path / "ck" / "screens").glob("*.xml"))) == 3
    build(root / "src", tmp_path / "ck", ("t",))
    assert sorted(p.stem for p in (tmp_path / "ck" / "screens").glob("*.xml")) == [c.id for c in load(tmp_path / "ck")]


def test_export_names_a_run_that_did_not_start_from_the_checkpoints(source, tmp_path):
    from experiments.checkpoints.export import contexts
    from ttir.core.errors import ConfigError

    root, _ = source
    with pytest.raises(ConfigError, match="no episodes.jsonl there"):
        contexts(root / "ck", tmp_path / "missing")
    # the source run itself: no episode of it started from a checkpoint (every context had no outcome)
    with pytest.raises(ConfigError, match="none of its episodes started from a checkpoint of"):
        contexts(root / "ck", root / "src")
    assert all(c.outcomes == [] for c in contexts(root / "ck"))  # without --run: no outcomes, as asked


@pytest.mark.parametrize("words, message", [
    (["RUN", "--out", "ck", "--repeats", "3"], "--repeats is an option of `ttir checkpoints prefs`; "
                                               "`ttir checkpoints RUN_DIR` does not take it"),
    (["prefs", "ck", "--out", "p.jsonl", "--positions", "t"], "--positions is an option of `ttir checkpoints RUN_DIR`"),
    (["export", "ck", "--out", "e.jsonl", "--base-url", "http://x/v1"], "--base-url is an option of `ttir checkpoints judge`"),
    (["judge", "ck", "p.jsonl", "--out", "j.jsonl", "--run", "r"], "--run is an option of `ttir checkpoints export`"),
])
def test_an_option_of_another_form_of_the_command_is_refused_not_ignored(words, message, tmp_path, capsys, monkeypatch):
    from ttir.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["checkpoints", *words]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # refused before anything was written
