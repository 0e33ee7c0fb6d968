"""Issue 15, item 1: your own agent in a spec (kind python) and from Python (experiments.run).

A factory is imported inside each worker and called as factory(facts, **params); a factory
that cannot be imported, called or that returns no agent fails at spec load, naming it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

import experiments
from experiments.python_agents import EpisodeFacts, facts_for
from experiments.spec import ExperimentSpec

BASE = "name: mine\ntasks: [SystemWifiTurnOn]\nperturbations: [clean]\nguard: ['off']\nworkers: 1\n"
GOOD_AGENT = '''
from ttir import Action, AgentStep

SEEN = []

class Done:
    def reset(self, goal):
        self.goal = goal
    def step(self, obs):
        return AgentStep(action=Action(action_type="status", goal_status="complete"), summary=self.goal)

def make_agent(facts, greeting="hi"):
    SEEN.append(facts)
    return Done()
'''


def module(tmp_path: Path, source: str) -> str:
    """A uniquely named agent module in ``tmp_path`` (imports are cached per name)."""
    name = f"agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    return name


def spec_file(tmp_path: Path, agent: str) -> Path:
    p = tmp_path / "spec.yaml"
    p.write_text(BASE + f"agents: [{agent}]\n", encoding="utf-8")
    return p


def load_error(path: Path) -> str:
    with pytest.raises(ValueError) as info:
        ExperimentSpec.from_yaml(path)
    return str(info.value)


def records(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]


# ------------------------------------------------------------------- a working factory


def test_a_factory_beside_the_spec_is_imported_and_gets_the_episode_facts(tmp_path, monkeypatch):
    name = module(tmp_path, GOOD_AGENT)
    path = spec_file(tmp_path, f'{{name: mine, kind: python, factory: "{name}:make_agent", params: {{greeting: yo}}}}')
    monkeypatch.chdir(tmp_path.parent)  # found beside the spec, not through the current directory
    spec = ExperimentSpec.from_yaml(path)
    assert spec.agents[0].path == str(tmp_path.resolve())
    summary = experiments.run(spec, tmp_path / "run", progress=False)
    assert summary["ran"] == 1 and summary["errors_this_run"] == 0
    (rec,) = records(tmp_path / "run")
    assert rec["agent_kind"] == "python" and rec["termination"] == "done" and rec["success"] is False

    import sys

    facts = sys.modules[name].SEEN[-1]
    assert isinstance(facts, EpisodeFacts)
    ep = spec.episodes()[0]
    assert facts.task == "SystemWifiTurnOn" and facts.apps == ("Settings",) and facts.packages == ("com.android.settings",)
    assert facts.goal == rec["goal"] and facts.screen_size == (1080, 2400)
    assert facts.seed == ep.agent_seed and facts.budget == rec["budget"]


def test_facts_carry_no_perturbation():
    from benchmark import make_task

    facts = facts_for(make_task("ContactsAddContact"), (1080, 2400), seed=3)
    assert set(EpisodeFacts.model_fields) == {"goal", "task", "apps", "packages", "screen_size", "seed", "budget"}
    assert facts.apps == ("Contacts",)


# --------------------------------------------------------------- broken factories, at load


@pytest.mark.parametrize("source, factory, expect", [
    (None, "no_such_module_xyz:make_agent", ["no_such_module_xyz:make_agent", "cannot import module", "ModuleNotFoundError"]),
    (GOOD_AGENT, "{m}:make_agnet", ["{m}:make_agnet", "has no attribute 'make_agnet'"]),
    ("import does_not_exist_either\n", "{m}:make_agent", ["{m}:make_agent", "does_not_exist_either"]),
    ("make_agent = 3\n", "{m}:make_agent", ["{m}:make_agent", "not a function", "def make_agent(facts"]),
    ("def make_agent():\n    return None\n", "{m}:make_agent", ["{m}:make_agent", "cannot be called as make_agent(facts, **params)",
                                                              "expected def make_agent(facts"]),
    ("def make_agent(facts):\n    return None\n", "{m}:make_agent", ["{m}:make_agent", "returned None", "not an agent"]),
    ("def make_agent(facts, **params):\n    raise RuntimeError('no GPU here')\n", "{m}:make_agent",
     ["{m}:make_agent", "raised RuntimeError: no GPU here"]),
])
def test_a_broken_factory_fails_at_spec_load_naming_it(tmp_path, source, factory, expect):
    name = module(tmp_path, source) if source is not None else "unused"
    factory = factory.format(m=name)
    message = load_error(spec_file(tmp_path, f'{{name: mine, kind: python, factory: "{factory}"}}'))
    assert "spec.yaml" in message and "agents[0] (mine, kind python)" in message
    for part in expect:
        assert part.format(m=name) in message, message


def test_params_the_factory_does_not_take_fail_at_load(tmp_path):
    name = module(tmp_path, GOOD_AGENT)
    message = load_error(spec_file(tmp_path, f'{{name: mine, kind: python, factory: "{name}:make_agent", params: {{greting: yo}}}}'))
    assert f"{name}:make_agent" in message and "greting" in message and "make_agent(facts, greeting='hi')" in message


@pytest.mark.parametrize("agent, expect", [
    ('{name: mine, kind: python, factory: "not a path"}', "expected 'package.module:function'"),
    ('{name: mine, kind: python, factory: "os.system(1):x"}', "expected 'package.module:function'"),
    ('{name: p, kind: planner, factory: "a:b"}', "applies to kind 'python' agents only"),
    ('{name: mine, kind: python}', "has no factory"),
])
def test_bad_factory_fields_are_refused_at_load(tmp_path, agent, expect):
    assert expect in load_error(spec_file(tmp_path, agent))


def test_a_factory_that_fails_in_one_episode_records_that_episode_as_an_error(tmp_path):
    name = module(tmp_path, "import os\n" + GOOD_AGENT.replace(
        "    SEEN.append(facts)", "    SEEN.append(facts)\n    if facts.task == 'SystemWifiTurnOff':\n        raise RuntimeError('boom')"))
    path = tmp_path / "spec.yaml"
    path.write_text(BASE.replace("[SystemWifiTurnOn]", "[SystemWifiTurnOn, SystemWifiTurnOff]")
                    + f'agents: [{{name: mine, kind: python, factory: "{name}:make_agent"}}]\n', encoding="utf-8")
    summary = experiments.run(path, tmp_path / "run", progress=False)
    by_task = {r["task"]: r for r in records(tmp_path / "run")}
    assert summary["errors_this_run"] == 1
    assert by_task["SystemWifiTurnOff"]["status"] == "error" and "boom" in by_task["SystemWifiTurnOff"]["error"]
    assert by_task["SystemWifiTurnOn"]["status"] == "ok"


# ------------------------------------------------------------------- from Python


def test_experiments_run_takes_factories_directly_even_closures_with_forked_workers(tmp_path):
    from ttir import Action

    made = []

    def make_agent(facts, clicks=0):  # a closure: it cannot be imported, so it is handed over
        made.append(facts.task)
        return lambda obs: Action(action_type="status", goal_status="complete")

    spec = {"name": "py", "tasks": ["SystemWifiTurnOn", "SystemBluetoothTurnOn"], "perturbations": ["clean"],
            "guard": ["off", "rules"], "workers": 2}
    summary = experiments.run(spec, tmp_path / "run", agents={"mine": make_agent}, progress=False)
    recs = records(tmp_path / "run")
    assert summary["ran"] == 4 and summary["errors_this_run"] == 0
    assert {r["agent"] for r in recs} == {"mine"}, "the default planner is replaced when the spec lists no agent"
    assert {r["termination"] for r in recs} == {"done"}
    assert made == ["SystemWifiTurnOn"], "this process built it once, at spec load; the workers built the rest"


def test_a_handed_over_factory_fills_the_spec_agent_of_that_name(tmp_path):
    path = spec_file(tmp_path, "{name: mine, kind: python, params: {clicks: 2}}, {name: p, kind: reference}")
    got = []

    def make_agent(facts, clicks):
        got.append(clicks)
        return lambda obs: {"action_type": "status", "goal_status": "complete"}

    experiments.run(path, tmp_path / "run", agents={"mine": make_agent}, progress=False)
    assert {r["agent"] for r in records(tmp_path / "run")} == {"mine", "p"}
    assert got and set(got) == {2}
    with pytest.raises(ValueError, match="kind 'reference'"):  # "mine" needs its factory again: each run its own
        experiments.run(path, tmp_path / "run2", agents={"mine": make_agent, "p": make_agent}, progress=False)


def test_a_handed_over_factory_is_the_runs_own_and_not_a_later_specs(tmp_path):
    def make_agent(facts, clicks=0):
        return lambda obs: {"action_type": "status", "goal_status": "complete"}

    experiments.run(spec_file(tmp_path, "{name: mine, kind: python}"), tmp_path / "run", agents={"mine": make_agent},
                    progress=False)
    later = tmp_path / "later"
    later.mkdir()
    # a later spec's python agent of the same name, without a factory: refused, not silently given the last run's
    assert "has no factory" in load_error(spec_file(later, "{name: mine, kind: python}"))
