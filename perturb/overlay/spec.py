"""What an overlay says and does: content models loaded from the pool files in
``perturb/overlay/content/<type>.yaml``.

A pool has defaults (style, package, activity, blocking, back behaviour …),
named multi-page ``flows`` (e.g. the Security Center wizard) and at least four
``variants``. A variant is one page (``title`` / ``message`` / ``buttons``
shorthand) or several ``pages``. Button ``action`` vocabulary:

- ``close`` — close the overlay;
- ``next`` / ``previous`` — next / previous page (``next`` on the last page closes);
- ``flow:<name>`` — enter a named multi-page flow;
- ``settings`` — close and open the Settings app;
- ``home`` — close and go to the home screen;
- ``launch:<app>`` — close and launch another app (label or package);
- ``url:<url>`` — close and open a web page (the browser);
- ``close_app`` — close and force-stop the foreground app;
- ``wait`` — an app-not-responding "Wait": the hang goes on;
- ``none`` — nothing (a neutral control).

A variant's ``language`` (default ``en``) says what language its words are in; a
transition perturbation draws only from the variants of its ``language`` parameter
(default English), so translated variants never change what a default seed draws.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Role = Literal["dismiss", "engage", "neutral"]
Style = Literal["dialog", "bottom_sheet", "fullscreen", "banner", "skeleton", "spinner", "frozen", "anr"]
BackBehaviour = Literal["dismiss", "previous", "absorb", "pass"]
ButtonVariant = Literal["filled", "tonal", "outlined", "text"]

DEFAULT_LANGUAGE = "en"
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8})?")  # BCP 47-style: en, zh, pt-BR
SIMPLE_ACTIONS = ("close", "next", "previous", "settings", "home", "close_app", "wait", "none")
PREFIXED_ACTIONS = ("flow:", "launch:", "url:")


def check_language(value: str) -> str:
    """Validate a language code (``en``, ``zh``, ``pt-BR``)."""
    if not isinstance(value, str) or not LANGUAGE_CODE.fullmatch(value):
        raise ValueError(f"language={value!r} is not a language code; expected a BCP 47-style code such as "
                         "en, es, zh, de or pt-BR")
    return value


def check_action(value: str) -> str:
    """Validate a button action (see the module docstring)."""
    if value in SIMPLE_ACTIONS or any(value.startswith(p) and len(value) > len(p) for p in PREFIXED_ACTIONS):
        return value
    raise ValueError(
        f"action={value!r} is unknown; expected one of {', '.join(SIMPLE_ACTIONS)} "
        f"or flow:<name> / launch:<app> / url:<url>"
    )


class ButtonSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field("", description="Button text (empty for an icon-only button).")
    role: Role = Field("neutral", description="dismiss: makes the interruption go away; engage: follows its content.")
    action: str = Field("close", description="Consequence of pressing it (see module docstring).")
    id: str = Field("", description="Resource id; a short id is prefixed with the window's package.")
    desc: str = Field("", description="Content description (icon-only buttons).")
    icon: str = Field("", description="Icon name for icon-only buttons.")
    variant: ButtonVariant = "text"
    requires: Literal["none", "all_checked", "choice", "fields", "stars"] = Field(
        "none", description="Disabled until the page's checkboxes / choice / fields / rating are filled in.")

    @field_validator("action")
    @classmethod
    def _action(cls, v: str) -> str:
        return check_action(v)

    @model_validator(mode="after")
    def _named(self) -> "ButtonSpec":
        if not (self.label or self.desc):
            raise ValueError("a button needs a label or a desc (content description)")
        return self


class CheckSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    id: str = ""


class FieldSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    hint: str
    id: str = ""
    password: bool = False


class PageSpec(BaseModel):
    """One screen of an overlay."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    header: str = Field("", description="Top-bar title (full-screen pages) or app name (banners).")
    header_id: str = ""
    eyebrow: str = Field("", description="Small line above the title (step counter, sponsor label).")
    icon: str = ""
    icon_id: str = ""
    title: str = ""
    title_id: str = ""
    message: str = ""
    message_id: str = ""
    bullets: list[str] = Field(default_factory=list)
    checks: list[CheckSpec] = Field(default_factory=list)
    choices: list[str] = Field(default_factory=list)
    choice_id: str = ""
    fields: list[FieldSpec] = Field(default_factory=list)
    stars: bool = False
    progress: Optional[float] = Field(None, ge=0.0, le=1.0, description="Show a progress bar at this fraction.")
    indicator: bool = Field(False, description="Page dots (an onboarding carousel's): which of the pages this one is.")
    indicator_style: Literal["dots", "bullets"] = Field(
        "dots", description="How the page dots are drawn: small images, or one '•' text per dot (the widely copied "
                            "intro-slider layout real dumps show).")
    spinner: bool = False
    auto_next_steps: Optional[int] = Field(None, ge=1, description="Advance by itself after this many steps.")
    buttons: list[ButtonSpec] = Field(default_factory=list)
    button_layout: Literal["row", "stack", "split"] = "row"  # split: equal shares of the bottom bar
    close_button: Optional[ButtonSpec] = Field(None, description="Icon button in the top corner (full-screen, dialog, banner).")
    style: Optional[Style] = None


class FlowSpec(BaseModel):
    """A named multi-page flow entered by a ``flow:<name>`` button."""

    model_config = ConfigDict(extra="forbid")

    style: Optional[Style] = None
    package: Optional[str] = None
    activity: Optional[str] = None
    back: Optional[BackBehaviour] = None
    ids: dict[str, str] = Field(default_factory=dict, description="Container ids: panel, scroll, buttons.")
    pages: list[PageSpec] = Field(min_length=1)


class VariantSpec(BaseModel):
    """One content variant: a single page (shorthand) or several pages."""

    model_config = ConfigDict(extra="forbid")

    id: str
    language: str = Field(DEFAULT_LANGUAGE, description="The language of the variant's words (en, es, zh, de, ...).")
    style: Optional[Style] = None
    package: Optional[str] = None
    activity: Optional[str] = None
    accent: Optional[tuple[int, int, int]] = None
    ids: Optional[dict[str, str]] = Field(None, description="Container ids (overrides the pool's).")
    extras: dict[str, str] = Field(default_factory=dict, description="Extra placeholder values ({sender} …).")
    opt_in: bool = Field(False, description="Drawn only when a spec's profile_pool names it: a variant added after "
                                            "sweeps were measured leaves their draws as they were.")
    pages: list[PageSpec] = Field(min_length=1)

    @field_validator("language")
    @classmethod
    def _language(cls, v: str) -> str:
        return check_language(v)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "pages" in data:
            return data
        data = dict(data)
        page_keys = set(PageSpec.model_fields) - {"style"}
        page = {k: data.pop(k) for k in list(data) if k in page_keys and k != "id"}
        data["pages"] = [page]
        return data


class PoolSpec(BaseModel):
    """A content pool file: defaults, flows and variants of one overlay type."""

    model_config = ConfigDict(extra="forbid")

    description: str = ""
    style: Style = "dialog"
    package: str = Field("{app_package}", description="Window package; {app_package} = the foreground app's.")
    activity: Optional[str] = Field(None, description="Set: the overlay is an activity and becomes the foreground.")
    accent: Optional[tuple[int, int, int]] = None
    ids: dict[str, str] = Field(default_factory=dict, description="Container ids: panel, scroll, buttons.")
    blocking: bool = True
    back: BackBehaviour = "dismiss"
    requires_app: bool = Field(True, description="Only appears while an app (not the launcher) is in the foreground.")
    scope: Literal["app", "global"] = Field("app", description="app: shown only while its app is in the foreground.")
    flows: dict[str, FlowSpec] = Field(default_factory=dict)
    variants: list[VariantSpec] = Field(min_length=4)

    @property
    def languages(self) -> list[str]:
        """The languages of the pool's variants, in order of first appearance."""
        return list(dict.fromkeys(v.language for v in self.variants))

    @model_validator(mode="after")
    def _flows_exist(self) -> "PoolSpec":
        ids = [v.id for v in self.variants]
        if len(set(ids)) != len(ids):
            raise ValueError(f"variant ids must be unique; got {ids}")
        if DEFAULT_LANGUAGE not in self.languages:
            raise ValueError(f"variants: no variant in {DEFAULT_LANGUAGE!r} (language defaults to it); "
                             f"got languages {self.languages}")
        pages = [p for v in self.variants for p in v.pages] + [p for f in self.flows.values() for p in f.pages]
        for p in pages:
            for b in [*p.buttons, *([p.close_button] if p.close_button else [])]:
                if b.action.startswith("flow:") and b.action[5:] not in self.flows:
                    raise ValueError(f"button {b.label or b.desc!r}: action={b.action!r} names no flow; "
                                     f"flows: {', '.join(self.flows) or 'none'}")
        return self
