"""What a label of a real screen says (one JSON object per line in ``labels.jsonl``).

Labels are written from the dump itself (``python -m experiments.real_screens.show``)
before any diagnoser runs on it, and never changed to fit a result.

- ``category``: ``interference`` (something off-task stands between the agent and
  its task: a pop-up, a system dialog, an ad, a gate), ``wanted`` (a dialog, sheet,
  picker, keyboard or permission prompt that the task itself needs or raised) or
  ``ordinary`` (a plain screen). ``malformed`` dumps keep the category they would have.
- ``kind``: for interference, one of :data:`INTERFERENCE_KINDS`; for wanted, one of
  :data:`WANTED_KINDS`; null for ordinary screens.
- ``dismiss`` / ``engage`` / ``destructive``: labels (text, content-desc or
  resource-id, as in the dump) of the controls that close the interruption
  safely, that act on its content, and that would destroy the task's state
  (Close app on the task app's ANR, Discard, Delete...). ``back_dismisses``:
  whether the Back key closes it without harm (null: not known).
- ``task_app``: the package the task runs in (what ``dumpsys activity`` would
  report as the resumed app); ``goal``: a task goal for this screen; for a
  wanted dialog, a goal that makes it wanted.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator

INTERFERENCE_KINDS = (
    "permission",  # runtime permission prompt (a goal that does not need it)
    "anr",  # "... isn't responding" (anr_of says whose)
    "crash",  # "... has stopped" / "keeps stopping"
    "app_update",  # update the app (Play in-app update, the app's own "new version" dialog)
    "whats_new",  # what's new / welcome / changelog / tips dialog of the app
    "rating",  # rate us / enjoying X?
    "ad",  # interstitial ad, app-install ad, promo / offer / subscription pop-up
    "consent",  # cookie / privacy / consent sheet or WebView banner that blocks
    "first_run",  # first-run / onboarding / sign-in gate standing before the task
    "heads_up",  # a heads-up notification banner over the app
    "system_update",  # system / software update prompt
    "system_warning",  # battery, storage, data, overheating, USB... warnings
    "survey",  # survey, newsletter, feedback pop-ups
    "lock_screen",  # keyguard / lock screen (blocking; cannot be dismissed with a tap)
    "system_dialog",  # other system dialogs not asked for (e.g. "Select a home app", SIM dialogs)
    "other_popup",  # any other off-task pop-up
)
WANTED_KINDS = (
    "confirm",  # the confirm dialog of an action the task asked for (delete, discard, send...)
    "picker",  # date / time / number / colour pickers
    "share_sheet",  # share sheets and app choosers / "open with"
    "save_as",  # save / export / file pickers
    "autofill",  # autofill / suggestion drop-downs
    "bottom_sheet",  # an in-task bottom sheet / menu / popup menu
    "keyboard",  # a form with the soft keyboard open
    "permission",  # a permission the task's own action needs (scan -> camera)
    "sign_in",  # a sign-in / account chooser the task itself asked for
    "dialog",  # any other dialog the task needs (input dialog, options dialog...)
)
Category = Literal["interference", "wanted", "ordinary"]


class ScreenLabel(BaseModel):
    """The label of one corpus file."""

    model_config = ConfigDict(extra="forbid")

    id: str
    category: Category
    kind: Optional[str] = None
    anr_of: Optional[Literal["task_app", "other_app", "system_ui", "system"]] = None
    dismiss: list[str] = Field(default_factory=list)
    engage: list[str] = Field(default_factory=list)
    destructive: list[str] = Field(default_factory=list)
    back_dismisses: Optional[bool] = None
    task_app: Optional[str] = None
    goal: str
    language: str = Field(description="the UI language of the screen's text: en, zh, es, pt, de, fr, ja, ko, ru, tr, ...")
    android: str = Field("unknown", description="Android version estimate ('4.x', '10', '13+', 'unknown')")
    android_basis: str = ""
    focus_only: bool = False  # the dump holds only the focused (dialog) window
    malformed: Optional[str] = None  # why the dump cannot be read as a screen, or null
    notes: str = ""

    @model_validator(mode="after")
    def _kind_fits(self) -> "ScreenLabel":
        if self.category == "interference" and self.kind not in INTERFERENCE_KINDS:
            raise ValueError(f"id={self.id}: kind={self.kind!r} is not an interference kind; "
                             f"expected one of {', '.join(INTERFERENCE_KINDS)}")
        if self.category == "wanted" and self.kind not in WANTED_KINDS:
            raise ValueError(f"id={self.id}: kind={self.kind!r} is not a wanted kind; "
                             f"expected one of {', '.join(WANTED_KINDS)}")
        if self.category == "ordinary" and self.kind is not None:
            raise ValueError(f"id={self.id}: an ordinary screen has no kind (got {self.kind!r})")
        if self.kind == "anr" and self.anr_of is None:
            raise ValueError(f"id={self.id}: an ANR label needs anr_of (task_app, other_app, system_ui or system)")
        return self
