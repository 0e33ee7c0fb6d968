"""TTIRConfig: every knob of the guard, validated by pydantic, loadable from YAML.

Sections mirror the dotted names used by ``ttir tune sweep`` (``stuck_loop.window``,
``action_effect.hash_distance`` …). Defaults follow AndroidReality §5 / App. D.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Union, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ttir.core.imports import IMPORT_FORM
from ttir.core.errors import ConfigError, did_you_mean
from ttir.core.validation import LineMap, error_lines, load_yaml_mapping_lines, short_repr

Tier = Literal["rules", "vlm", "cascade", "off"]  # the tiers (a check's `mode`, a run's guard mode): declared once
TIERS: tuple[str, ...] = get_args(Tier)
DiagnoserName = Literal["stuck_loop", "action_effect", "interference", "task_alignment"]  # the four built-in diagnosers
DIAGNOSERS: tuple[DiagnoserName, ...] = get_args(DiagnoserName)
# which finding wins when several report a problem (RecoveryConfig.priority's default; reports list the diagnosers so)
DEFAULT_PRIORITY: tuple[DiagnoserName, ...] = ("interference", "stuck_loop", "action_effect", "task_alignment")
RecoveryName = Literal["alternative_action", "dismiss_interference", "re_orientation"]  # the three built-in recoveries
RECOVERIES: tuple[RecoveryName, ...] = get_args(RecoveryName)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @field_validator("mode", mode="before", check_fields=False)
    @classmethod
    def _yaml_off(cls, v: Any) -> Any:
        return "off" if v is False else v  # YAML 1.1 reads a bare `off` as False


class StuckLoopConfig(_Section):
    """The stuck-loop diagnoser: the same action again and again without a screen change."""

    mode: Tier = Field("cascade", description="rules | vlm | cascade | off.")
    window: int = Field(3, ge=2, le=20, description="N: identical last-N steps with an unchanged screen trigger the hard rule "
                        "(paper §5.1 and case study: 3; Appendix D.1: 5).")
    tolerance_px: int = Field(24, ge=0, description="Two taps within this many pixels count as the same coordinate.")
    screen_hash_distance: int = Field(4, ge=0, le=64, description="dHash Hamming distance at or below which two screens are 'unchanged'.")
    oscillation_period: int = Field(2, ge=2, le=4, description="Detect A-B-A-B loops of this period (2 = A-B-A-B).")
    oscillation_repeats: int = Field(2, ge=2, le=6, description="How many full periods make an oscillation.")


class ActionEffectConfig(_Section):
    """The action-effect diagnoser: did the last action have the effect its summary intended?"""

    mode: Tier = Field("cascade", description="rules | vlm | cascade | off.")
    hash_distance: int = Field(2, ge=0, le=64, description="dHash Hamming distance at or below which the screen did not change.")
    region_pad_px: int = Field(48, ge=0, description="Padding around the targeted element when diffing the region it occupies.")
    check_text_fields: bool = Field(True, description="Check typed text landed in the field the step's summary names.")


class InterferenceConfig(_Section):
    """The interference diagnoser: a dialog, a prompt or a system surface over the app."""

    mode: Tier = Field("cascade", description="rules | vlm | cascade | off.")
    min_score: float = Field(0.6, ge=0.0, le=1.0, description="Evidence score at or above which an overlay is reported.")
    uncertain_score: float = Field(0.3, ge=0.0, le=1.0, description="Scores between this and min_score are 'uncertain' (the cascade asks the model).")
    lexicon_file: Optional[str] = Field(None, description="A YAML file that replaces the built-in interruption lexicon.")
    screen_model: bool = Field(True, description="The learned screen model decides with the rules in the free tier "
                                                 "(`ttir tune train --real`); false: the rules alone.")
    screen_model_file: Optional[str] = Field(None, description="A model file written by `ttir tune train --real` "
                                                               "that replaces the shipped one.")


class TaskAlignmentConfig(_Section):
    """The task-alignment diagnoser: is the agent still on the task (and is a completion claim true)?"""

    mode: Tier = Field("cascade", description="rules | vlm | cascade | off.")
    check_completion_claims: bool = Field(True, description="Check a `status: complete` claim before letting it through.")
    min_goal_overlap: float = Field(0.15, ge=0.0, le=1.0, description="Share of goal keywords a screen must show to count as on-task for a completion claim.")


class RecoveryConfig(_Section):
    """Recovery sessions: their budget, how many per episode, cooldown, priority and tier."""

    budget: int = Field(3, ge=1, le=20, description="Most actions one recovery session may take (paper: a bounded session).")
    max_sessions: int = Field(20, ge=0, le=200, description="Most recovery sessions per episode.")
    cooldown: int = Field(2, ge=0, le=50, description="Steps after a session before the same diagnoser may trigger again on the same screen.")
    priority: list[str] = Field(default_factory=lambda: list(DEFAULT_PRIORITY),
                                description="Which finding wins when several report a problem.")
    mode: Literal["rules", "vlm"] = Field("rules", description="Recovery tier: deterministic rules or the VLM recovery agent.")
    anr_waits: int = Field(2, ge=0, le=10, description="Waits on the same \"isn't responding\" dialog before the hung app "
                                                     "is closed (and re-opened); System UI and the system process are never closed.")

    @field_validator("priority")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        bad = [x for x in v if x not in DIAGNOSERS]
        if bad or sorted(v) != sorted(set(v)):
            raise ValueError(f"priority={v} must list distinct diagnosers from {', '.join(DIAGNOSERS)}")
        return v


def endpoint_url_problem(url: str) -> Optional[str]:
    """What is wrong with ``url`` as a model endpoint, or None when it is an http(s) URL with a host.

    A URL the HTTP client cannot use (``localhost:8080/v1``, ``http//…``) failed every model call,
    and the guard, failing open, then let every step through unchecked; it is refused up front.

    Args:
        url: the endpoint, e.g. ``http://localhost:8000/v1``.

    Returns:
        The problem in words with a suggestion, or None.
    """
    from urllib.parse import urlsplit

    if url != url.strip() or any(c.isspace() for c in url):
        return f"{url!r} holds spaces; expected a URL such as {url.strip()!r}"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port out of range or not a number
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc}); expected e.g. http://localhost:8000/v1"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        guess = url.split("://", 1)[-1].lstrip(":/")
        if guess.startswith("http") and "//" in guess[:8]:  # "http//host": the colon forgotten
            guess = guess.split("//", 1)[1]
        return (f"{url!r} is not an http(s) URL with a host; expected e.g. http://localhost:8000/v1 "
                f"(did you mean 'http://{guess}'?)")
    return None


class VLMConfig(_Section):
    """The model endpoint (any OpenAI-compatible server) and the bounds on its use."""

    base_url: Optional[str] = Field(None, description="OpenAI-compatible endpoint; default $TTIR_VLM_BASE_URL.")
    model: Optional[str] = Field(None, description="Model name; default $TTIR_VLM_MODEL.")
    api_key: Optional[str] = Field(None, description="API key; default $TTIR_VLM_API_KEY (or 'EMPTY' for local servers).")
    timeout_s: float = Field(30.0, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(3, ge=0, le=10, description="Retries on timeouts, 429 and 5xx (exponential backoff).")
    temperature: float = Field(0.1, ge=0.0, le=2.0, description="Sampling temperature (paper: 0.1).")
    max_tokens: int = Field(512, ge=16, description="Reply token limit.")
    image_max_side: int = Field(1280, ge=128, description="Screenshots are downscaled so their longer side is at most this.")
    image_format: Literal["png", "jpeg"] = Field("png", description="Encoding of screenshots sent as data URLs (jpeg is smaller, png is lossless).")
    backoff_s: float = Field(1.0, ge=0.0, description="First retry wait in seconds; doubles per retry (a server's Retry-After wins when longer).")
    backoff_max_s: float = Field(20.0, ge=0.0, description="Longest exponential-backoff wait between retries, in seconds.")
    step_deadline_s: float = Field(60.0, gt=0, description="Most model time one guarded step may spend, every call, retry and "
                                   "backoff included; then the rules tier decides the step.")
    breaker_failures: int = Field(3, ge=1, le=100, description="After this many guarded steps in a row whose model calls all "
                                  "failed, the model tier rests (a dead or overloaded endpoint is not paid for every step).")
    breaker_rest_steps: int = Field(10, ge=1, le=10_000, description="Steps the model tier rests for (the rules tier decides); "
                                    "then one step tries the model again.")
    structured: Literal["auto", "json_schema", "json_object", "off"] = Field(
        "auto", description="How replies are held to their JSON schema: json_schema (OpenAI, vLLM), json_object with a "
        "schema (llama-cpp-python's server), off (plain text, parsed leniently); auto tries them in that order and "
        "remembers per endpoint what it accepts.")
    vision: Optional[bool] = Field(None, description="false: a text-only model, sent the accessibility tree as numbered "
                                   "elements and no images; true: always send screenshots; unset: send them, and switch to "
                                   "text if the endpoint refuses images (remembered per endpoint).")
    reasks_per_step: int = Field(1, ge=0, le=3, description="A reply that does not parse is asked again, with the parse error, "
                                 "at most this many times per guarded step (for all diagnosers and recoveries together).")
    max_concurrent_calls: int = Field(32, ge=1, le=4096, description="Model calls in flight at once per endpoint in this "
                                      "process (sync and async together); more wait their turn, the wait counting against "
                                      "the step's deadline, so that a burst of episodes queues instead of overrunning the "
                                      "endpoint.")

    @field_validator("base_url")
    @classmethod
    def _endpoint_url(cls, v: Optional[str]) -> Optional[str]:
        problem = endpoint_url_problem(v) if v else None  # unset or empty: $TTIR_VLM_BASE_URL decides
        if problem is not None:
            raise ValueError(problem)
        return v


class PromptsConfig(_Section):
    """The prompt files of the model tier (names in ``prompts/`` or paths to your own)."""

    diagnose: str = Field("diagnose", description="Prompt name in prompts/ or a path to your own file.")
    alternative_action: str = Field("alternative_action", description="Recovery prompt (name or path).")
    dismiss_interference: str = Field("dismiss_interference", description="Recovery prompt (name or path).")
    re_orientation: str = Field("re_orientation", description="Recovery prompt (name or path).")


class CascadeConfig(_Section):
    """When the cascade tier asks the model beyond the rules' uncertain verdicts."""

    every_n_steps: int = Field(0, ge=0, description="Also call the model every N steps regardless of the rules (0 = never).")
    history: int = Field(4, ge=0, le=20, description="How many past steps the diagnoser prompt shows.")
    probe: bool = Field(True, description="Before the model's first 'interference' verdict is acted on, ask it once "
                        "(per endpoint and model, per process) about a plain home screen; a model that calls that "
                        "screen interference has its interference verdicts logged, never acted on.")


class WatchWhen(BaseModel):
    """What a watch rule looks for on screen (every given part must hold)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(..., min_length=1, max_length=200,
                      description="Text shown on screen (an element's text or description), matched without case, as a part.")
    package: Optional[str] = Field(None, max_length=200, description="Only while this package is on screen (its windows' packages).")


class WatchRule(BaseModel):
    """A rule of ``ttir watch`` for what the model should not have to learn:
    ``{when: {text: "Rate us"}, tap: "Not now"}`` (uiautomator2's watcher, on top of ttir's own detection)."""

    model_config = ConfigDict(extra="forbid")

    when: WatchWhen = Field(description="What to look for on screen.")
    tap: str = Field(..., min_length=1, max_length=200,
                     description="The label of the control to tap (text or description, without case; an exact label first, else a part).")


class WatchConfig(_Section):
    """``ttir watch`` / :func:`ttir.watching`: how often it looks, how long it waits, your own rules."""

    interval_s: float = Field(1.0, ge=0.05, le=3600, description="Seconds between two looks at the screen.")
    stable_screens: int = Field(2, ge=1, le=10, description="Equal screens in a row before the watcher acts: it never "
                                "taps while the screen is changing.")
    rules: list[WatchRule] = Field(default_factory=list, description="Your own rules, tried before ttir's detection.")


class CheckRef(BaseModel):
    """A user-defined check named in a config: ``{factory: "my_checks:make_check", params: {...}}``."""

    model_config = ConfigDict(extra="forbid")

    factory: str = Field(..., description="package.module:function, called as function(config, **params) -> ttir.Check; "
                         "imported from `path`, the current directory or sys.path.")
    params: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments of the factory.")
    path: Optional[str] = Field(None, description="Folder to import the factory's module from (a spec sets its own folder).")

    @field_validator("factory")
    @classmethod
    def _form(cls, v: str) -> str:
        if not IMPORT_FORM.fullmatch(v):
            raise ValueError(f"factory={v!r} is not of the form 'package.module:function'")
        return v


class TTIRConfig(BaseModel):
    """All settings of ``ttir.guard``. Load with :meth:`from_yaml`; every field is documented.

    Every key is optional; a YAML file names only what it changes::

        stuck_loop: {mode: rules, window: 3}
        recovery: {budget: 3, max_sessions: 20}
        vlm: {base_url: http://localhost:8000/v1, model: qwen2.5-vl-7b}

    Assignments are validated too (``config.recovery.budget = 0`` raises).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    enabled: bool = Field(True, description="False turns the guard into a pass-through.")
    stuck_loop: StuckLoopConfig = Field(default_factory=StuckLoopConfig, description='The stuck-loop diagnoser: its tier and thresholds.')
    action_effect: ActionEffectConfig = Field(default_factory=ActionEffectConfig, description='The action-effect diagnoser: its tier and thresholds.')
    interference: InterferenceConfig = Field(default_factory=InterferenceConfig, description='The interference diagnoser: its tier, scores, lexicon and screen model.')
    task_alignment: TaskAlignmentConfig = Field(default_factory=TaskAlignmentConfig, description='The task-alignment diagnoser: its tier and completion-claim check.')
    recovery: RecoveryConfig = Field(default_factory=RecoveryConfig, description='Recovery sessions: budget, sessions per episode, cooldown, priority, tier.')
    cascade: CascadeConfig = Field(default_factory=CascadeConfig, description="When the cascade asks the model beyond the rules' uncertain verdicts.")
    vlm: VLMConfig = Field(default_factory=VLMConfig, description='The model endpoint, its timeouts, retries and the per-step model deadline.')
    prompts: PromptsConfig = Field(default_factory=PromptsConfig, description='The prompt files of the model tier.')
    watch: WatchConfig = Field(default_factory=WatchConfig, description="`ttir watch` / ttir.watching: how often it looks, your own rules.")
    checks: list[CheckRef] = Field(default_factory=list, description="Your own checks, run after the four: "
                                   "[{factory: 'my_checks:make_check', params: {...}}] (see ttir.guarded.checks).")

    # -- constructors --------------------------------------------------------------
    @classmethod
    def from_yaml(cls, path: Union[str, Path]) -> "TTIRConfig":
        """The config in a YAML file (an empty file gives the defaults).

        Args:
            path: the file.

        Returns:
            The validated config.

        Raises:
            FileNotFoundError: the file does not exist.
            ValueError: the file is too large, not UTF-8, not YAML, not a mapping, or not a valid
                config; the message names the file and each bad key with what was expected.
        """
        data, lines = load_yaml_mapping_lines(path, "config")
        return cls.from_dict(data, source=str(path), lines=lines)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config", lines: Optional[LineMap] = None) -> "TTIRConfig":
        """The config in a mapping (the shape of the YAML file).

        Args:
            data: the settings, e.g. ``{"stuck_loop": {"window": 4}}``.
            source: what the errors name as the settings' origin (a file name, say).
            lines: the line of each key in the source file, for ``file.yaml:LINE:`` prefixes.

        Returns:
            The validated config.

        Raises:
            ValueError: a key is unknown or a value invalid; one line per error, each naming
                the key, the value and what was expected.
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ValueError("invalid ttir config:\n  " + "\n  ".join(error_lines(exc, source, cls, lines))) from None

    @classmethod
    def with_mode(cls, mode: Tier) -> "TTIRConfig":
        """Every diagnoser in the same mode (``rules`` / ``vlm`` / ``cascade`` / ``off``).

        Args:
            mode: the tier every diagnoser decides with (``off``: the guard is a pass-through).

        Returns:
            The default config with that mode everywhere.

        Raises:
            ValueError: ``mode`` is not a tier (the message lists them).
        """
        if mode not in TIERS:
            raise ValueError(f"with_mode(mode={mode!r}): expected one of {', '.join(TIERS)}"
                             f"{did_you_mean(str(mode), TIERS)}")
        cfg = cls()
        for name in DIAGNOSERS:
            getattr(cfg, name).mode = mode
        cfg.enabled = mode != "off"
        return cfg

    def to_yaml(self) -> str:
        """The whole config as YAML text (every key, defaults included), in declaration order."""
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)

    def override(self, dotted: dict[str, Any]) -> "TTIRConfig":
        """A copy with ``{"stuck_loop.window": 4, …}`` applied (validated)."""
        data = self.model_dump(mode="json")
        for key, value in dotted.items():
            node = data
            parts = key.split(".")
            for part in parts[:-1]:
                if part not in node or not isinstance(node[part], dict):
                    sections = [k for k, v in node.items() if isinstance(v, dict)]
                    raise ValueError(f"unknown config key {key!r}: {part!r} is not a section"
                                     f"{did_you_mean(part, sections)}; sections: {', '.join(sections)}")
                node = node[part]
            if parts[-1] not in node:
                raise ValueError(f"unknown config key {key!r}{did_you_mean(parts[-1], node)}; "
                                 f"valid keys in that section: {', '.join(node)}")
            node[parts[-1]] = value
        return type(self).from_dict(data, source="override")

    def modes(self) -> dict[str, str]:
        """Each built-in diagnoser's tier, e.g. ``{"stuck_loop": "cascade", …}``."""
        return {name: getattr(self, name).mode for name in DIAGNOSERS}


def env_vlm_settings(cfg: VLMConfig) -> dict[str, Any]:
    """The effective endpoint settings: config first, then ``TTIR_VLM_*`` variables.

    Raises:
        ConfigError: ``TTIR_VLM_BASE_URL`` is set to what is not an http(s) URL with a host.
    """
    base_url = cfg.base_url or os.environ.get("TTIR_VLM_BASE_URL") or None
    problem = None if cfg.base_url or base_url is None else endpoint_url_problem(base_url)
    if problem is not None:
        raise ConfigError(f"TTIR_VLM_BASE_URL: {problem}")
    return {
        "base_url": base_url,
        "model": cfg.model or os.environ.get("TTIR_VLM_MODEL") or "default",
        "api_key": cfg.api_key or os.environ.get("TTIR_VLM_API_KEY") or "EMPTY",
        "timeout_s": cfg.timeout_s,
        "max_retries": cfg.max_retries,
    }


# what a caller may pass where the guard takes its settings (ttir.guard, GuardedAgent, Watcher, ProxyGuard)
ConfigLike = Union[TTIRConfig, str, "os.PathLike[str]", Mapping[str, Any], None]


def as_config(config: ConfigLike) -> TTIRConfig:
    """The guard's settings from what a caller may pass as ``config``.

    Args:
        config: a :class:`TTIRConfig`, the path of a YAML file of one, a mapping in the YAML
            file's shape (``{"stuck_loop": {"window": 4}}``), or None for the defaults.

    Returns:
        The validated config.

    Raises:
        TypeError: ``config`` is none of those (a caller's mistake is not failed open).
        FileNotFoundError: the path names no file.
        ValueError: the file or the mapping is not a valid config (each bad key named).
    """
    if config is None:
        return TTIRConfig()
    if isinstance(config, TTIRConfig):
        return config
    if isinstance(config, (str, os.PathLike)):
        return TTIRConfig.from_yaml(os.fspath(config))
    if isinstance(config, Mapping):
        return TTIRConfig.from_dict(dict(config))
    raise TypeError(f"config={short_repr(config)} ({type(config).__name__}): expected a ttir.TTIRConfig, the path "
                    "of a YAML file, a mapping of its settings such as {'stuck_loop': {'window': 4}}, or None for "
                    "the defaults")
