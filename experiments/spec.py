"""Experiment specs (YAML, validated by pydantic) and their expansion into episodes.

A spec names tasks, perturbations (``clean`` plus names, components or ``all``),
agents, guard modes, seeds and repeats. ``pairing: cross`` runs every task under
every perturbation; ``pairing: paper`` pairs each task with ONE fixed perturbation
(AndroidReality Appendix B) and runs it clean and perturbed.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import typing
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from ttir.core.config import Tier
from ttir.core.errors import did_you_mean, unknown_name
from ttir.core.validation import (LineMap, Loc, error_items, error_lines, load_yaml_mapping_lines, located,
                                  short_repr)

AgentKind = Literal["replay", "planner", "oracle", "reference", "vlm", "python"]
DumpStyle = Literal["all_windows", "focused_window"]  # perturb.dump_style.DUMP_STYLES
SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")  # one path component, never '.' or '..'


def _safe_name(what: str, v: str) -> str:
    if not SAFE_NAME.fullmatch(v):
        raise ValueError(f"{what} {short_repr(v)} may only use letters, digits, '_', '.', '-' (and not start with '.')")
    return v


def _distinct(what: str, v: Any) -> Any:
    if isinstance(v, list):
        seen: set[Any] = set()
        for x in v:  # tasks, seeds and guard modes are hashable
            if x in seen:
                raise ValueError(f"{what}={short_repr(v)} lists {short_repr(x)} more than once; "
                                 "each copy would run again under the same episode id")
            seen.add(x)
    return v


class AgentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(..., description="Label used in reports (unique within the spec).")
    kind: AgentKind = Field(..., description="replay | planner | oracle | reference | vlm | python (your own agent).")
    params: dict[str, Any] = Field(default_factory=dict, description="Constructor parameters of the agent kind "
                                   "(python: keyword arguments of the factory).")
    factory: Optional[str] = Field(None, description="python: 'package.module:function' called as "
                                   "function(facts, **params) in each worker; it returns the agent.")
    path: Optional[str] = Field(None, description="python: the folder the factory's module is imported from "
                                "(default: the spec file's folder, then the current directory).")

    @field_validator("name")
    @classmethod
    def _safe(cls, v: str) -> str:
        return _safe_name("agent name", v)

    @field_validator("kind", mode="before")
    @classmethod
    def _kind_any_case(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) and v.lower() in typing.get_args(AgentKind) else v  # Planner is planner

    @model_validator(mode="after")
    def _factory_for_python(self) -> "AgentSpec":
        from experiments.python_agents import FACTORY_FORM

        if self.kind != "python":
            for key in ("factory", "path"):
                if getattr(self, key) is not None:
                    raise ValueError(f"{key}={short_repr(getattr(self, key))} applies to kind 'python' agents only "
                                     f"(this agent is kind {self.kind!r})")
        elif self.factory is not None and not FACTORY_FORM.fullmatch(self.factory):
            raise ValueError(f"factory={short_repr(self.factory)}: expected 'package.module:function' "
                             "(a module importable from the spec's folder or sys.path, and a function in it)")
        return self


class DeviceSpec(BaseModel):
    """Which phones run the episodes. ``sim`` (default): one simulated phone per worker.
    ``adb``: real phones or emulators, one per Ray actor (``--executor ray``). ``dump``
    (sim): the dump style the agent and the guard see (``perturb.dump_style``); a list
    sweeps them, each style a setting of its own (``clean@focused_window`` …)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["sim", "adb"] = Field("sim", description="sim: simulated phones; adb: real phones / emulators (Ray executor).")
    serials: Optional[list[str]] = Field(
        None, description="adb: these phones, one actor each; unset: every phone the Ray cluster declares as a "
                          "'ttir_adb:SERIAL' resource (or, on a Ray started by `ttir run`, every phone attached here).")
    options: dict[str, Any] = Field(default_factory=dict, description="adb: AdbDevice options (settle_seconds, apps, host, port, ...).")
    dump: Union[DumpStyle, list[DumpStyle]] = Field(
        "all_windows", description="sim: which windows the UI dump the agent and the guard see holds — all_windows "
                                   "(current Android), focused_window (older uiautomator: only the focused window, "
                                   "a dialog alone when one is up), or a list of both to sweep them.")

    @property
    def dump_styles(self) -> list[str]:
        return [self.dump] if isinstance(self.dump, str) else list(self.dump)

    @model_validator(mode="after")
    def _check_serials(self) -> "DeviceSpec":
        styles = self.dump_styles
        if not styles or len(set(styles)) != len(styles):
            raise ValueError(f"devices.dump={short_repr(self.dump)}: expected a dump style or a list of distinct ones "
                             "(all_windows, focused_window)")
        if self.kind == "adb" and styles != ["all_windows"]:
            raise ValueError(f"devices.dump={short_repr(self.dump)} applies to simulated phones only (devices.kind='sim'); "
                             "a real phone's dump is what its uiautomator writes")
        if self.kind == "sim" and self.options:
            raise ValueError(f"devices.options={short_repr(self.options)} applies to adb phones only (devices.kind='adb'); "
                             "simulated phones take no options, so every executor runs the same phone")
        if self.serials is None:
            return self
        if self.kind != "adb":
            raise ValueError(f"devices.serials={short_repr(self.serials)} needs devices.kind='adb' (got kind={self.kind!r})")
        bad = [s for s in self.serials if not s or not s.strip()]
        if bad or not self.serials:
            raise ValueError(f"devices.serials={short_repr(self.serials)}: expected a non-empty list of adb serials")
        if len(set(self.serials)) != len(self.serials):
            raise ValueError(f"devices.serials={short_repr(self.serials)}: each phone may be listed once")
        return self


class ExperimentSpec(BaseModel):
    """Everything ``ttir run`` needs."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field("experiment", description="A name for the run (the default run directory is runs/<name>).")
    tasks: Union[Literal["all"], list[str]] = Field("all", description="Task names, or 'all'.")
    task_seed: int = Field(0, description="Suite seed for task parameters (AndroidWorld instance seeding).")
    instances: int = Field(1, ge=1, description="Instances (parameterisations) per task.")
    perturbations: list[Union[str, dict[str, dict[str, Any]]]] = Field(
        default_factory=lambda: ["clean", "all"],
        description="'clean', perturbation names, components (state/action/transition), 'androidreality', 'antrap', "
                    "'all', or {name: {param: value}} overrides (one setting each: a name may come back with other "
                    "overrides, e.g. rate_dialog and rate_dialog: {language: zh}).")
    pairing: Literal["cross", "paper"] = Field("cross", description="cross: task x perturbation; paper: one fixed perturbation per task.")
    under: list[Union[str, dict[str, dict[str, Any]]]] = Field(
        default_factory=list,
        description="Perturbations applied beneath every episode's own, clean included (names or {name: {param: value}}), "
                    "e.g. [a11y_tree_empty]: the whole grid on a phone whose UI tree is lost.")
    agents: list[AgentSpec] = Field(default_factory=lambda: [AgentSpec(name="planner", kind="planner")])
    guard: list[Tier] = Field(default_factory=lambda: ["off", "rules"], min_length=1,
                              description="Guard modes to compare.")
    guard_config: dict[str, Any] = Field(default_factory=dict, description="Dotted TTIRConfig overrides, e.g. {'stuck_loop.window': 5}.")
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1,
                             description="Episode seeds (perturbation realisation).")
    repeats: int = Field(1, ge=1, description="Repeats per combination (for pass@k).")
    budget_multiplier: float = Field(20.0, gt=0, description="Step budget = multiplier x reference_steps (paper: 20).")
    trap_budget_factor: float = Field(1.15, ge=1.0, description="AnTrap extends the budget for trap episodes (x1.15).")
    workers: int = Field(2, ge=1, description="Worker processes (one device each).")
    screenshots: Literal["all", "failures", "none"] = Field(
        "failures", description="Which episodes keep step screenshots: all; failures (failed episodes and those in "
                                "which the guard opened a recovery session or blocked a claim); none.")
    screenshot_width: int = Field(360, ge=64, description="Saved screenshots are downscaled to this width.")
    save_xml: bool = Field(False, description="Also keep every step's uiautomator dump and the harness's per-step ground truth (needed by `ttir tune build`).")
    devices: DeviceSpec = Field(default_factory=DeviceSpec, description="sim (default) or adb phones; see DeviceSpec.")
    from_checkpoints: Optional[str] = Field(
        None, description="A folder written by `ttir checkpoints RUN_DIR --out CK_DIR`: every agent x guard mode x seed "
                          "resumes from each of its checkpoints (and starts each checkpoint's task and perturbation "
                          "from the beginning, for the clean-start comparison); tasks and perturbations are then "
                          "the checkpoints'. Simulated phones only (docs/checkpoints.md).")

    @field_validator("guard", mode="before")
    @classmethod
    def _yaml_off(cls, v: Any) -> Any:
        # YAML 1.1 reads a bare `off` as False
        return ["off" if x is False else x for x in v] if isinstance(v, list) else v

    @field_validator("name")
    @classmethod
    def _safe_run_name(cls, v: str) -> str:
        return _safe_name("name", v)  # it names the run directory: it must not climb out of it

    @field_validator("tasks", "seeds", "guard")
    @classmethod
    def _no_duplicates(cls, v: Any, info: Any) -> Any:
        return _distinct(info.field_name, v)

    @model_validator(mode="after")
    def _unique_agents(self) -> "ExperimentSpec":
        names = [a.name for a in self.agents]
        if len(set(names)) != len(names):
            raise ValueError(f"agents: names must be unique, got {names}")
        if not self.agents:
            raise ValueError("agents: at least one agent is needed")
        return self

    # -- loading ------------------------------------------------------------------------------
    @classmethod
    def from_yaml(cls, path: Union[str, Path]) -> "ExperimentSpec":
        """The spec in the YAML file ``path``, validated and checked whole: every problem of the
        file is reported at once, one ``path:LINE: key: message`` line each (``ValueError``)."""
        data, lines = load_yaml_mapping_lines(path, "spec", allow_empty=False)  # empty is a mistake, not "run everything"
        return cls._load(data, str(path), lines, Path(path).resolve().parent)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "spec") -> "ExperimentSpec":
        """A spec from a mapping (as from YAML), validated and checked like :meth:`from_yaml`.

        Raises:
            ValueError: the mapping is empty (as an empty spec file is: every default together is
                every task under every perturbation, thousands of episodes), or a key is invalid.
        """
        if isinstance(data, Mapping) and not data:
            raise ValueError(f"{source}: the spec is empty; expected a mapping of spec keys (tasks, perturbations, "
                             "agents, guard, seeds …), e.g. {'tasks': ['ContactsAddContact'], 'perturbations': "
                             "['popup_permission']}")
        return cls._load(data, source, None, None)

    @classmethod
    def _load(cls, data: dict[str, Any], source: str, lines: Optional[LineMap],
              folder: Optional[Path]) -> "ExperimentSpec":
        problems: list[Problem] = []
        try:
            spec: Optional[ExperimentSpec] = cls.model_validate(data)
        except ValidationError as exc:
            problems += error_items(exc, cls)
            # the keys that did validate are still checked (names, builds), so one pass finds every problem
            bad = {loc[0] for loc, _ in problems if loc}
            try:
                if not isinstance(data, dict):
                    raise exc
                spec = cls.model_validate({k: v for k, v in data.items() if k not in bad})
            except ValidationError:
                spec = None  # a cross-key rule failed too: what pydantic said is all there is to say
        if spec is not None:
            if folder is not None:
                spec._resolve_paths(folder)
            problems += spec.problems()
        if problems:
            raise ValueError("invalid experiment spec:\n  " + "\n  ".join(
                located(source, loc, text, lines) for loc, text in problems))
        assert spec is not None
        spec._checked = True
        return spec

    def _resolve_paths(self, folder: Path) -> None:
        for agent in self.agents:  # a python agent's module is found beside its spec, wherever `ttir run` starts
            if agent.kind == "python":
                agent.path = str((folder / agent.path).resolve()) if agent.path else str(folder)
        for ref in self.guard_config.get("checks") or []:  # so is a user check's module
            if isinstance(ref, dict):
                ref["path"] = str((folder / ref["path"]).resolve()) if ref.get("path") else str(folder)

    def check(self, source: str = "spec") -> None:
        """Everything an episode would build, built once now: task and perturbation names,
        each perturbation with its overrides, each agent with its params, the guard config
        of each guard mode. A bad parameter fails here, before any episode runs; the
        ``ValueError`` lists every problem found, one line each."""
        if self._checked:
            return
        problems = self.problems()
        if problems:
            raise ValueError("invalid experiment spec:\n  " + "\n  ".join(located(source, loc, text) for loc, text in problems))
        self._checked = True

    def problems(self) -> list[Problem]:
        """Every name and build problem of this (validated) spec as ``(key path, message)``:
        unknown tasks and perturbations, bad perturbation parameters, guard_config keys and
        agent params — each with the closest valid name."""
        return self.name_problems() + self.build_problems()

    def name_problems(self) -> list[Problem]:
        """Unknown task / perturbation names, each with the closest known one."""
        from benchmark.tasks import TASKS

        out: list[Problem] = []
        if self.from_checkpoints is not None and not (Path(self.from_checkpoints) / "checkpoints.jsonl").is_file():
            out.append((("from_checkpoints",), f"from_checkpoints: {short_repr(self.from_checkpoints)} holds no "
                        "checkpoints.jsonl; build one with `ttir checkpoints RUN_DIR --out CK_DIR` (a relative path "
                        "is read from the current directory)"))
        if self.tasks != "all":
            for i, t in enumerate(self.tasks):
                if t not in TASKS:
                    out.append((("tasks", i), f"tasks.{i}: {unknown_name('task', t, TASKS, see='ttir tasks')}"))
            if not self.tasks:
                out.append((("tasks",), "tasks: the list is empty; name tasks or use 'all'"))
        self._perturbations(out)
        self._under(out)
        return out

    def build_problems(self) -> list[Problem]:
        """Each perturbation, guard mode and agent built once; what fails, as problems."""
        from benchmark.tasks import TASKS, make_task
        from experiments.agents import agent_param_problem, build_agent, guard_config_for
        from perturb import make

        out: list[Problem] = []
        for key, items in (("perturbations", self._perturbations([])), ("under", self._under([]))):
            for i, name, overrides in items:
                if name == "clean":
                    continue
                try:
                    make(name, **overrides)
                except (KeyError, TypeError, ValueError) as exc:
                    out.append(((key, i, name, *_bad_param(exc, overrides)), f"{key}.{i}: {_message(exc)}"))
        from ttir.guarded.checks import configured_checks

        for mode in [m for m in self.guard if m != "off"] or (["rules"] if self.guard_config else []):
            try:
                configured_checks(guard_config_for(mode, self.guard_config))  # user checks imported and built now
            except (KeyError, TypeError, ValueError) as exc:
                out.append((("guard_config", *_bad_param(exc, self.guard_config)), f"guard_config: {_message(exc)}"))
                break  # the same overrides fail the same way under every mode
        from experiments.python_agents import FactoryError, check_agent

        tasks = [t for t in self.task_list() if t in TASKS]
        if not tasks:
            return out
        first = tasks[0]
        task = make_task(first, seed=self.task_seed, i=0)
        for i, agent in enumerate(self.agents):
            where = f"agents[{i}] ({agent.name}, kind {agent.kind})"
            unknown = agent_param_problem(agent.kind, agent.params)
            if unknown is not None:
                key, text = unknown
                out.append((("agents", i, "params", key), f"{where}: params: {text}"))
                continue
            try:
                if agent.kind == "python":
                    check_agent(agent, task)  # imported, called and its result checked, now
                else:
                    build_agent(EpisodeSpec(task=first, task_seed=self.task_seed, agent=agent), task, guard=False)
            except FactoryError as exc:
                out.append((("agents", i), f"agents[{i}] ({agent.name}, kind python): {exc}"))
            except (KeyError, TypeError, ValueError) as exc:
                out.append((("agents", i, "params"), f"{where}: params {short_repr(agent.params)}: {_message(exc)}"))
        return out

    # -- expansion -------------------------------------------------------------------------------
    def task_list(self) -> list[str]:
        from benchmark.tasks import task_names

        return task_names() if self.tasks == "all" else list(self.tasks)

    def under_list(self) -> list[tuple[str, dict[str, Any]]]:
        """``under`` as (name, overrides), names checked."""
        return [(name, ov) for _, name, ov in self._under(None)]

    def _under(self, problems: Optional[list[Problem]]) -> list[tuple[int, str, dict[str, Any]]]:
        """``under`` as (index, name, overrides); a bad entry is added to ``problems`` (raised when None)."""
        from perturb import REGISTRY

        out: list[tuple[int, str, dict[str, Any]]] = []
        for i, item in enumerate(self.under):
            if isinstance(item, dict):
                if len(item) != 1:
                    _problem(problems, ("under", i), f"under.{i}: entry {short_repr(item)} must be a one-key mapping "
                                                     "{name: {param: value}}")
                    continue
                (name, ov), = item.items()
            else:
                name, ov = item, {}
            if name not in REGISTRY:
                _problem(problems, ("under", i), f"under.{i}: {_unknown_perturbation(name, REGISTRY)}")
                continue
            out.append((i, name, dict(ov or {})))
        return out

    def perturbation_list(self) -> list[tuple[str, dict[str, Any]]]:
        """(name, overrides) in spec order; 'clean' is ('clean', {})."""
        return [(name, ov) for _, name, ov in self._perturbations(None)]

    def _perturbations(self, problems: Optional[list[Problem]]) -> list[tuple[int, str, dict[str, Any]]]:
        """(index of the spec entry, name, overrides), each setting once; a bad entry is added to
        ``problems`` (raised when None)."""
        from perturb import ANDROIDREALITY, ANTRAP, REGISTRY
        from perturb.base import COMPONENTS

        out: list[tuple[int, str, dict[str, Any]]] = []
        seen: list[tuple[str, dict[str, Any]]] = []

        def add(i: int, name: str, ov: dict[str, Any]) -> None:
            if (name, ov) not in seen:  # the same perturbation may come with other overrides (another setting)
                seen.append((name, ov))
                out.append((i, name, ov))

        for i, item in enumerate(self.perturbations):
            if isinstance(item, dict):
                if len(item) != 1:
                    _problem(problems, ("perturbations", i), f"perturbations.{i}: entry {short_repr(item)} must be "
                                                             "a one-key mapping {name: {param: value}}")
                    continue
                (name, ov), = item.items()
                if name not in REGISTRY:
                    _problem(problems, ("perturbations", i, name),
                             f"perturbations.{i}: {_unknown_perturbation(name, REGISTRY)}")
                    continue
                add(i, name, dict(ov or {}))
            elif item == "clean":
                add(i, "clean", {})
            elif item in ("all", "androidreality"):
                for n in ANDROIDREALITY:
                    add(i, n, {})
                if item == "all":
                    for n in ANTRAP:
                        add(i, n, {})
            elif item == "antrap":
                for n in ANTRAP:
                    add(i, n, {})
            elif item in COMPONENTS:
                for n in ANDROIDREALITY:
                    if REGISTRY[n].component == item:
                        add(i, n, {})
            elif item in REGISTRY:
                add(i, item, {})
            else:
                groups = [*COMPONENTS, "clean", "all", "androidreality", "antrap"]
                _problem(problems, ("perturbations", i),
                         f"perturbations.{i}: unknown entry {short_repr(item)}{did_you_mean(str(item), [*REGISTRY, *groups])}"
                         f"; use 'clean', 'all', 'androidreality', 'antrap', a component ({', '.join(COMPONENTS)}) "
                         "or a perturbation name (see `ttir perturbations`)")
        return out

    _checked: bool = PrivateAttr(False)

    def episodes(self) -> list["EpisodeSpec"]:
        if self.from_checkpoints is not None:
            from experiments.checkpoints.episodes import checkpoint_episodes

            return checkpoint_episodes(self, EpisodeSpec)
        tasks = self.task_list()
        perts = self.perturbation_list()
        perturbed = [p for p in perts if p[0] != "clean"]
        has_clean = any(p[0] == "clean" for p in perts)
        under = [{name: ov} for name, ov in self.under_list()]
        out: list[EpisodeSpec] = []
        for ti, task in enumerate(tasks):
            if self.pairing == "paper":
                chosen = ([("clean", {})] if has_clean else []) + ([perturbed[ti % len(perturbed)]] if perturbed else [])
            else:
                chosen = perts
            for inst in range(self.instances):
                for pname, pov in chosen:
                    for dump, seed, rep, agent, mode in itertools.product(
                            self.devices.dump_styles, self.seeds, range(self.repeats), self.agents, self.guard):
                        out.append(EpisodeSpec(
                            task=task, instance=inst, task_seed=self.task_seed, perturbation=pname,
                            overrides=pov, agent=agent, guard=mode, seed=seed, repeat=rep,
                            budget_multiplier=self.budget_multiplier, trap_budget_factor=self.trap_budget_factor,
                            guard_config=self.guard_config, dump=dump, under=under,
                        ))
        return out


Problem = tuple[Loc, str]  # (key path in the spec, "key: message")


def _problem(problems: Optional[list[Problem]], loc: Loc, text: str) -> None:
    if problems is None:
        raise ValueError(text)
    problems.append((loc, text))


def _unknown_perturbation(name: Any, known: Any) -> str:
    return f"unknown perturbation {short_repr(name)}{did_you_mean(str(name), known)}; see `ttir perturbations`"


def _bad_param(exc: BaseException, overrides: dict[str, Any]) -> tuple[str, ...]:
    """The override key an error is about (for its line in the file), when the message names one."""
    text = _message(exc)
    for key in overrides:
        if repr(str(key)) in text:
            return (str(key),)
    return ()


def _message(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(error_lines(exc))
    return str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)


class EpisodeSpec(BaseModel):
    """One combination: what a worker runs."""

    model_config = ConfigDict(extra="forbid")

    task: str
    instance: int = 0
    task_seed: int = 0
    perturbation: str = "clean"
    overrides: dict[str, Any] = Field(default_factory=dict)
    agent: AgentSpec
    guard: Tier = "off"  # one tier for every check (off: no guard)
    seed: int = 0
    repeat: int = 0
    budget_multiplier: float = 20.0
    trap_budget_factor: float = 1.15
    guard_config: dict[str, Any] = Field(default_factory=dict)
    dump: DumpStyle = "all_windows"
    under: list[dict[str, dict[str, Any]]] = Field(default_factory=list)  # {name: overrides}, beneath `perturbation`
    checkpoint: Optional[dict[str, Any]] = None  # start here (experiments.checkpoints.model.Checkpoint), not at the start

    @property
    def id(self) -> str:
        if self.checkpoint is not None:
            return f"{self.checkpoint['id']}__{self.agent.name}__{self.guard}__s{self.seed}r{self.repeat}"
        ov = ""
        if self.overrides:
            ov = "+" + hashlib.sha256(repr(sorted(self.overrides.items())).encode()).hexdigest()[:6]
        if self.under:  # (absent: the ids of runs without `under` are unchanged)
            ov += "+under-" + hashlib.sha256(repr(self.under).encode()).hexdigest()[:6]
        dump = "" if self.dump == "all_windows" else f"+{self.dump}"  # ids of the default style stay as they were
        return (f"{self.task}-i{self.instance}__{self.perturbation}{ov}{dump}__{self.agent.name}__{self.guard}"
                f"__s{self.seed}r{self.repeat}")

    @property
    def episode_seed(self) -> int:
        """Seed of the perturbation realisation: the same for every agent and guard mode,
        so with/without-guard comparisons face the identical perturbed MDP. A checkpoint keeps its source's."""
        if self.checkpoint is not None:
            return int(self.checkpoint["episode_seed"])
        key = f"{self.task_seed}:{self.task}:{self.instance}:{self.perturbation}:{self.seed}:{self.repeat}"
        return int(hashlib.sha256(key.encode()).hexdigest(), 16) % (2**31)

    @property
    def agent_seed(self) -> int:
        key = f"agent:{self.seed}:{self.repeat}:{self.agent.name}"
        return int(hashlib.sha256(key.encode()).hexdigest(), 16) % (2**31)
