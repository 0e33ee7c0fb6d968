"""Dismiss-interference recovery: close, decline or navigate past an off-task overlay;
never engage with its content and never destroy the task's state (AndroidReality
App. D.1 ③).

Per kind of overlay (the interference finding says which):

- a lock screen is reported, not dismissed: only the user can unlock it;
- "… isn't responding" (ANR): Wait. When the same dialog keeps coming back after
  ``anr_waits`` waits, close the app — the re-orientation check then opens it again
  (``app_hang_restart_required``) — but never System UI or the system process;
- "… has stopped" (crash): the app is already gone; close the dialog;
- a heads-up banner: swipe it away (Back would leave the app underneath);
- a full-page gate of the task's own app (onboarding, consent): a dismiss control,
  else its Skip, else its one way on when it offers no other and that is not an engage
  control or a carousel's Next, else nothing — Back would leave the task's app;
- anything else: a dismiss control, else wait out a loading screen, else Back — but
  not when the model saw interference where the rules locate no overlay: that is a page
  of the app itself (a welcome, a notice), and Back would leave the app.
"""

from __future__ import annotations

from typing import ClassVar, Optional

from ttir.core.config import RecoveryName
from ttir.core.diagnosis import InterferenceDetails, OverlayButton
from ttir.core.recovery import Recovery, RecoveryContext, recovery_step
from recoveries.ui import dismiss_rank, label, role_of
from diagnosers.signals.system import knowledge
from ttir.core.lexicon import control_role, loading_words, norm, vocabulary
from ttir.core.types import Action, AgentStep, Observation, StepRecord, UIElement

ANR_WAITS = 2  # waits on the same "isn't responding" dialog before the app is closed (RecoveryConfig.anr_waits)
BACKDROP_SHARE = 0.5  # a clickable node over this share of the screen is a backdrop, not a button
FORWARD_ROLES = (None, "neutral", "dismiss", "acknowledge")  # a gate's way on may be tapped; engage never


class DismissInterference(Recovery):
    """The recovery of the interference check: close, decline or navigate past the overlay
    the finding located, never engaging with its content nor destroying the task's state
    (AndroidReality App. D.1 ③). A lock screen is reported, not dismissed; an "isn't
    responding" dialog is waited on, and its app closed after ``recovery.anr_waits`` waits.
    
    Args:
        mode: ``rules`` or ``vlm`` (the recovery model proposes; the rules answer when it fails
            or proposes what :meth:`allowed` refuses).
        client: the recovery model; None: the rules.
        prompt: the recovery prompt (a name in ``prompts/`` or a path); None: ``dismiss_interference``.
        settings: the guard's :class:`~ttir.core.config.RecoveryConfig`; None: the defaults.
    """

    name: ClassVar[RecoveryName] = "dismiss_interference"
    handles = ("interference",)

    def rules(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        """The deterministic tier: per kind of overlay, a dismiss control, Back, a swipe
        of a banner, a wait, or nothing (a lock screen is the user's).

        Args:
            ctx: the goal, the screen, the history, the finding and the steps taken so far.

        Returns:
            The next corrective step, or None when there is nothing (left) to try.
        """
        details = _details(ctx)
        kind = details.kind
        hint = details.dismiss_hint
        if hint == "report":
            return None  # a lock screen, a required update: only the user can get past it; report, never press Back at it
        if kind == "anr":
            return self._anr(ctx)
        if hint == "swipe_up" and details.bounds and not ctx.taken:
            x1, y1, x2, y2 = details.bounds
            cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
            return recovery_step(Action(action_type="swipe", x=cx, y=cy, x2=cx, y2=max(0, y1 - (y2 - y1)), duration_ms=200),
                                 "A notification banner covers the top of the screen; swipe it away without opening it.",
                                 "Swipe the notification away")
        if hint == "wait" and len(ctx.taken) < 2:
            return recovery_step(Action(action_type="wait", seconds=2.0),
                                 "The screen is loading; wait for it rather than tapping through.", "Wait for the screen")
        tapped = self._tap_dismiss(ctx)
        if tapped is not None:
            return tapped
        if kind == "takeover":
            return self._gate_forward(ctx)
        obs = ctx.observation
        if self._is_waiting_screen(obs, self._buttons(obs, details.bounds)):
            return recovery_step(Action(action_type="wait", seconds=2.0),
                                 "The screen is loading or frozen; waiting is the only safe way past it.", "Wait for the screen")
        if not kind:
            return None  # a model saw interference where the rules locate no overlay: a page of the app itself, which Back would leave
        if details.rules_verdict not in (None, "true"):
            # only the screen model calls it a pop-up: a named way out, never Back, whose effect on a page
            # the rules did not call an overlay is a second guess (as its learnt controls are not tapped)
            return None
        if not any(s.action.action_type == "navigate_back" for s in ctx.taken[-1:]):
            return recovery_step(Action(action_type="navigate_back"),
                                 "No decline or close button is available; go back to leave the interruption.",
                                 "Press back to leave the interruption")
        return None

    # -- per kind ---------------------------------------------------------------------
    def _tap_dismiss(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        """The best dismiss control not tried yet (roles as the finding read them)."""
        tried = {tuple(s.action.point() or ()) for s in ctx.taken if s.action.is_touch}
        for e in self._controls(ctx, "dismiss"):
            if e.center in tried:
                continue
            x, y = e.center
            return recovery_step(
                Action(action_type="click", x=x, y=y),
                f"An off-task {_details(ctx).kind or 'overlay'} covers the task UI; decline it with "
                f"'{label(e)}' rather than engaging with its content.",
                f'Tap "{label(e)}" to dismiss the interruption',
            )
        return None

    def _gate_forward(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        """A full-page gate with no dismiss control: its Skip, else its one way on (Get
        started, Continue) when it offers no other; never a carousel's Next (its next page
        is still the interruption), never an engage control. A page offering two ways on
        (Get started | I have an account, Continue | Create tutorial) is left to the agent:
        labellers call such a forward engage about as often as dismiss (on `dev`: Skip
        dismiss 9 of 9, Get started engage 3 of 3, Continue 3 and 3), and Back would leave
        the task's app."""
        details = _details(ctx)
        if details.asks_input:
            return None  # a code to enter, a form to fill: the user's own answer, not a way past
        tried = {tuple(s.action.point() or ()) for s in ctx.taken if s.action.is_touch}
        buttons = details.buttons
        ways = [b for b in buttons if b.role == "neutral" and b.forward and not b.next_page]
        skips = [b for b in ways if b.skip]
        others = [b for b in buttons if b.role in ("neutral", "engage") and not b.skip and not b.next_page]
        pick = skips or (ways if len(ways) == 1 and len(others) <= 1 else [])
        for b in pick:
            if b.center in tried or _untappable(ctx.observation, b):
                continue
            x, y = b.center
            return recovery_step(Action(action_type="click", x=x, y=y),
                                 f"The task's app shows a {b.label!r} page before its content; move past it.",
                                 f'Tap "{b.label}" to get past the page')
        return None

    def _anr(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        details = _details(ctx)
        title = details.title
        buttons = details.buttons
        wait = next((b for b in buttons if _is_wait(b)), None)
        close = next((b for b in buttons if _is_close(b)), None)
        waited = _waits_on(ctx.history, title)
        limit = getattr(self.settings, "anr_waits", ANR_WAITS)
        if wait is not None and waited < limit:
            x, y = wait.center
            return recovery_step(Action(action_type="click", x=x, y=y),
                                 f"{title or 'An app'} is slow to respond; wait for it rather than closing it.",
                                 f'Tap "{wait.label}" to let the app finish')
        if _is_system(title) or close is None:
            return None  # never close System UI or the system process (that restarts the phone's UI)
        x, y = close.center
        return recovery_step(Action(action_type="click", x=x, y=y),
                             f"{title or 'The app'} stayed hung after {waited} waits; close it so that it can be "
                             "opened again.", f'Tap "{close.label}" to close the hung app')

    # -- helpers ----------------------------------------------------------------------
    def _controls(self, ctx: RecoveryContext, role: str) -> list[UIElement]:
        """Controls of the overlay with ``role``: from the finding's buttons when it read
        them (their roles are the diagnoser's, who knows the overlay's kind), else
        from the screen's clickable elements in the overlay's region."""
        obs = ctx.observation
        details = _details(ctx)
        if details.buttons:
            out = []
            for b in details.buttons:
                if b.role != role or _untappable(obs, b):
                    continue
                e = _button_element(obs, b)
                if e.checkable:
                    continue  # "Don't ask again" is a checkbox: ticking it changes a setting, it closes nothing
                out.append(e)
            return sorted(out, key=dismiss_rank)
        return sorted((e for e in self._buttons(obs, details.bounds) if role_of(e) == role),
                      key=dismiss_rank)

    def allowed(self, step: AgentStep, ctx: RecoveryContext) -> bool:
        """Whether the recovery model's proposed ``step`` may be taken: no ending action, and no tap on an
        engage or destructive control (closing a hung or crashed app excepted).

        Args:
            step: the proposal.
            ctx: the recovery's inputs.

        Returns:
            False to refuse it (the rules answer instead).
        """
        if not super().allowed(step, ctx):
            return False
        p = step.action.point(ctx.observation.elements) if step.action.is_touch else None
        if p is None:
            return True
        hit = ctx.observation.element_at(*p, clickable_only=True)
        if hit is None:
            return True
        role = role_of(hit)
        if role == "destructive" and _details(ctx).kind in ("anr", "crash"):
            return True  # closing a hung or crashed app is this strategy's own last resort
        return role not in ("engage", "destructive")  # never engage, never destroy the task

    @staticmethod
    def _buttons(obs: Observation, region: Optional[tuple[int, int, int, int]]) -> list[UIElement]:
        w, h = obs.screen_size
        backdrop = BACKDROP_SHARE * w * h if w and h else None
        out = []
        for e in obs.elements:
            if not (e.clickable and e.enabled and e.area > 0 and label(e)) or e.checkable:
                continue
            if backdrop is not None and e.area >= backdrop:
                continue  # a backdrop ("Dismiss" over the whole page) closes whatever the page has open; a tap at its centre lands on something else
            if region:
                x, y = e.center
                if not (region[0] <= x < region[2] and region[1] <= y < region[3]):
                    continue
            out.append(e)
        # the overlay is drawn last: later nodes first
        return list(reversed(out))

    @staticmethod
    def _is_waiting_screen(obs: Observation, buttons: list[UIElement]) -> bool:
        if buttons:
            return False
        text = " ".join(f"{e.text} {e.content_desc}" for e in obs.elements).lower()
        hints = (*loading_words(), *knowledge().anr_phrases)  # still loading, or the app is hung: wait
        return any(h in text for h in hints) or any("ProgressBar" in e.class_name for e in obs.elements)


def _details(ctx: RecoveryContext) -> InterferenceDetails:
    """The finding's details as the interference diagnoser's (a user's own check handed to this
    recovery is read the same way: its details name the overlay in the same keys)."""
    return ctx.finding.details_as(InterferenceDetails)


def _untappable(obs: Observation, b: OverlayButton) -> bool:
    """Whether a tap cannot reach the button: it has no area (a control laid out at 0,0,0,0,
    which a dump lists though nothing draws it: a tap at its "centre" lands on the status
    bar's corner), or another control covers its centre (:func:`_covered`). A centre below the
    screen size is not refused: a dump's size can be its app window's, short of the screen by
    the navigation bar that a dialog's bottom button still reaches into."""
    x1, y1, x2, y2 = b.bounds
    return x2 <= x1 or y2 <= y1 or _covered(obs, b)


def _covered(obs: Observation, b: OverlayButton) -> bool:
    """Whether another control lies over the button's centre, so that a tap there would
    land on it instead (a Firefox Focus tour under its URL bar: a tap on Skip's centre
    lands in the search field). The button itself, a node inside it or the clickable
    frame that wraps it is not cover. Such a button is not tapped: the reason would name
    one control and the tap would reach another."""
    x, y = b.center
    hit = obs.element_at(x, y, clickable_only=True)
    if hit is None:
        return False
    index = b.index
    if index is not None and 0 <= index < len(obs.elements):
        hit_index = next(i for i, e in enumerate(obs.elements) if e is hit)
        return not (_related(obs, hit_index, index) or _related(obs, index, hit_index))
    x1, y1, x2, y2 = b.bounds  # a finding without node indices (a model's): by bounds and label
    h1, k1, h2, k2 = hit.bounds
    inside = x1 <= h1 and y1 <= k1 and h2 <= x2 and k2 <= y2
    return not (inside or norm(label(hit)) == norm(b.label))


def _related(obs: Observation, node: int, ancestor: int) -> bool:
    """``node`` is ``ancestor`` or lies inside it."""
    seen = 0
    while node is not None and seen <= len(obs.elements):
        if node == ancestor:
            return True
        node = obs.elements[node].parent
        seen += 1
    return False


def _button_element(obs: Observation, b: OverlayButton) -> UIElement:
    """The finding's button as a screen element: its own node (so that the tap lands on
    its centre, not on that of a clickable frame around it), else one built from it."""
    bounds = b.bounds
    index = b.index
    node = obs.elements[index] if index is not None and 0 <= index < len(obs.elements) else None
    if node is None or node.bounds != bounds:
        x, y = b.center
        node = obs.element_at(x, y, clickable_only=True)
    if node is None or node.bounds != bounds:
        return UIElement(text=b.label, bounds=bounds, clickable=True)
    # a clickable frame whose label is its children's text: name it by what the finding read
    return node if label(node) else node.model_copy(update={"text": b.label})


def _is_wait(b: OverlayButton) -> bool:
    return b.resource_id.endswith(":id/aerr_wait") or (
        b.role == "dismiss" and vocabulary().phrase_role(b.label) == "dismiss")


def _is_close(b: OverlayButton) -> bool:
    return b.resource_id.endswith(":id/aerr_close") or vocabulary().phrase_role(b.label) == "destructive"


def _is_system(title: str) -> bool:
    from diagnosers.signals.system import knowledge

    t = norm(title)
    return any(n in t for n in knowledge().system_ui_names)


def _waits_on(history: list[StepRecord], title: str) -> int:
    """How often the agent (or the guard) answered Wait on a dialog with this title."""
    n = 0
    for rec in history:
        a = rec.step.action
        if not a.is_touch:
            continue
        obs = rec.observation
        if title and not any(norm(e.text) == norm(title) for e in obs.elements if e.text):
            continue
        p = a.point(obs.elements)
        hit = obs.element_at(*p, clickable_only=True) if p else None
        if hit is not None and (hit.resource_id.endswith(":id/aerr_wait") or control_role(hit) == "dismiss"):
            n += 1
    return n
