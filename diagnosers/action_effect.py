"""Action-effect verification (AndroidReality §5.1 ②, App. D.1):
``previous_intended_effect_satisfied`` = yes / no / uncertain; a problem when "no".

Rules, by the type of the previous action:
- wait / status / answer have no expected visible effect: yes;
- touches: UI-tree diff and thumbnail pixel diff over the whole screen and over
  the targeted element's region. Nothing changed: no (a dropped or absorbed tap,
  a stale coordinate on empty space) — unless the target was already selected or
  checked (a selected tab), then uncertain. Something changed but the tap landed
  on another element than the one the summary names, while that one is on
  screen: no (a stale coordinate on a neighbour);
- input_text: the typed text must be in a field, and in the field the summary
  names (label / hint / id) — the phone-number-in-Company case of Figure 10;
- scroll / swipe / enter / back: a change is a yes; no change is uncertain where
  it can be legitimate (the end of a list, a slider already at its value);
- open_app / navigate_home / app_switch: the expected app or launcher in front.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

from ttir.core.diagnosis import Cost, DiagnosisContext, Diagnoser, Finding
from diagnosers.signals import fields as F
from diagnosers.signals.actions import (
    describe_element,
    intended_targets,
    intended_words,
    is_shade_pull,
    point_of,
    same_action,
    target_index,
)
from diagnosers.signals.change import ScreenChange, compare
from diagnosers.signals.context import INTERRUPTION_SCORE, app_named_in_goal, overlay_score
from diagnosers.signals.data import builtin
from diagnosers.signals.findings import as_judgment, model_finding
from diagnosers.signals.image import MIN_CHANGED_PIXELS, changed_pixels
from diagnosers.signals.system import interrupter_kind, is_app_package, is_launcher
from diagnosers.signals.lexicon import load_lexicon
from diagnosers.signals.overlays import overlay_candidates, score_text
from diagnosers.signals.text import contains_phrase, content_words, normalize, quoted, same_text, text_landed
from diagnosers.signals.tree import clickable_ancestor, deepest_at, element_at, foreground_package, labels_around, screen_tree
from ttir.core.config import ActionEffectConfig
from ttir.core.types import INERT_TYPES, TOUCH_TYPES, Observation, StepRecord

TAP_BOX_PX = 60  # half-size of the region checked around a tap that hit no element
SAME_CONTROL_PX = 24  # two taps this close press the same control


@lru_cache(maxsize=1)
def _silent_words() -> tuple[str, ...]:
    return tuple(normalize(w) for w in builtin("effects").get("silent_targets", []))


class ActionEffectDiagnoser(Diagnoser):
    """Did the previous action have the effect its summary intended?"""

    name = "action_effect"

    @classmethod
    def default_config(cls) -> ActionEffectConfig:
        """The defaults of the ``action_effect`` section of :class:`ttir.TTIRConfig`."""
        return ActionEffectConfig()

    # -- the rule tier ------------------------------------------------------------------
    def rules(self, ctx: DiagnosisContext) -> Finding:
        """The deterministic tier: compares the screen before and after the last action (UI tree, pixels, the
        targeted region, the field typed into) with what the step's summary meant.

        Args:
            ctx: the goal, the current screen and the history.

        Returns:
            The finding: verdict ``yes`` (the effect is seen), ``no`` (a problem) or ``uncertain``.
        """
        if not ctx.history:
            return self._f("yes", 1.0, "no previous action to verify")
        rec = ctx.history[-1]
        a = rec.step.action
        t = a.action_type
        base = {"action": a.to_dict(), "intended_effect": rec.step.summary, "source": rec.source}
        if t in INERT_TYPES:
            return self._f("yes", 0.95, f"{t} has no expected visible effect", base)
        before, after = rec.observation, ctx.observation
        ch = compare(before, after)
        if not ch.known:
            return self._f("uncertain", 0.3, "neither screenshots nor UI trees to compare", base)
        if t in TOUCH_TYPES:
            return self._touch(ctx.history, after, ch, base)
        if t == "input_text":
            return self._typed(rec, after, ch, base)
        if t == "scroll":
            if ch.changed:
                return self._f("yes", 0.8, "the scroll moved the screen", base)
            if _covered(before):
                return self._f("no", 0.7, "the scroll changed nothing while a pop-up covered the screen "
                                          "(it takes the input)", base)
            return self._f("uncertain", 0.5, "the scroll changed nothing (the end of the list, or a dropped scroll)", base)
        if t == "swipe":
            return self._swipe(rec, after, ch, base)
        if t == "open_app":
            return self._open_app(rec, after, ch, base)
        if t == "navigate_home":
            if is_launcher(foreground_package(after)) and not screen_tree(after).shade_open:
                return self._f("yes", 0.9, "the home screen is in front", base)
            return self._f("uncertain" if ch.changed else "no", 0.6 if ch.changed else 0.8,
                           "home was pressed but the launcher is not in front", base)
        if t == "navigate_back":
            if ch.changed:
                return self._f("yes", 0.75, "back changed the screen", base)
            if is_launcher(foreground_package(before)):
                return self._f("uncertain", 0.5, "back on the home screen changes nothing", base)
            return self._f("no", 0.7, "back was pressed but the screen did not change", base)
        if t == "keyboard_enter":
            if ch.changed:
                return self._f("yes", 0.75, "enter changed the screen", base)
            if _covered(before):
                return self._f("no", 0.7, "enter changed nothing while a pop-up covered the screen (it takes the "
                                          "input)", base)
            return self._f("uncertain", 0.5, "enter changed nothing visible", base)
        if t == "app_switch":
            if ch.changed:
                return self._f("yes", 0.8, "the overview opened", base)
            return self._f("no", 0.7, "app switch changed nothing", base)
        return self._f("uncertain", 0.3, f"no rule for {t}", base)

    # -- touches ------------------------------------------------------------------------
    def _touch(self, ctx_history: list[StepRecord], after: Observation, ch: ScreenChange,
               base: dict[str, Any]) -> Finding:
        rec = ctx_history[-1]
        before, a = rec.observation, rec.step.action
        ti = target_index(a, before)
        target = before.elements[ti] if ti is not None else None
        anchor = before.elements[clickable_ancestor(before, ti)] if ti is not None else None
        p = point_of(a, before)
        interactive = target is not None and (target.clickable or target.long_clickable or target.editable
                                              or target.checkable)
        di = deepest_at(before, *p) if p is not None else None
        deepest = before.elements[di] if di is not None else None
        if interactive:
            region = target.bounds
        elif p is not None:
            region = (p[0] - TAP_BOX_PX, p[1] - TAP_BOX_PX, p[0] + TAP_BOX_PX, p[1] + TAP_BOX_PX)
        else:
            region = None
        region_px = changed_pixels(before, after, region, pad=self.config.region_pad_px) if region else None
        region_changed = region_px is not None and region_px >= MIN_CHANGED_PIXELS
        details = {**base, "target_element": describe_element(target), "point": list(p) if p else None,
                   "intended_targets": intended_targets(rec.step), "region_changed_pixels": region_px,
                   "tree_similarity": ch.tree_similarity, "changed_pixels": ch.pixels}
        if not ch.changed and not region_changed:
            absent = self._absent_target(rec, ti)  # nothing changed: a missing name says why, in any language
            if absent is not None:  # the exceptions below assume the tap reached the control it meant
                details["absent_target"] = absent
                return self._f("no", 0.8, f"the step names {absent!r}, which is nowhere on the screen it was "
                                          f"decided on, and the tap on {_name(target)} changed nothing", details)
            for e in (target, anchor, deepest):
                if e is not None and (e.selected or (e.checkable and e.checked and "radio" in e.class_name.lower())):
                    return self._f("uncertain", 0.5, "the tap changed nothing, but its target was already selected", details)
            if target is not None and target.editable and target.focused:
                return self._f("yes", 0.7, "the tapped field already had the focus", details)
            if target is not None and "seekbar" in target.class_name.lower() and ch.pixels is None:
                return self._f("uncertain", 0.4, "a slider's value is not in the UI tree and there is no screenshot", details)
            if interactive and ti is not None and self._silent_target(rec, before, ti):
                return self._f("uncertain", 0.5, f"the tap on {_name(target)} changed nothing, but that control "
                                                 "often works without a visible change", details)
            if self._stepper(ctx_history):
                return self._f("uncertain", 0.5, "the same control was pressed before and changed the screen then; "
                                                 "its effect depends on state (a counter, a value that repeats)", details)
            what = f"on {_name(target)}" if interactive else "on empty space (nothing there takes a tap)"
            details["no_change"] = True  # nothing at all changed: a dropped tap, or one still on its way
            return self._f("no", 0.85, f"the {a.action_type} {what} changed nothing on screen", details)
        missed = self._missed_target(rec, ti)
        if missed is not None:
            details["missed_target"] = missed
            return self._f("no", 0.7, f"the tap landed on {_name(target)}, not on the {missed['label']!r} the step "
                                      "names, which is elsewhere on screen", details)
        absent = self._absent_target(rec, ti, ctx_history)
        if absent is not None:
            details["absent_target"] = absent
            return self._f("no", 0.6, f"the step names {absent!r}, which is nowhere on the screen it was decided on; "
                                      f"the tap landed on {_name(target)}", details)
        popup = _only_a_popup_appeared(rec, after)
        if popup is not None:
            details["popup"] = popup
            return self._f("no", 0.6, f"the only change is a pop-up that came up ({popup!r}), which is not what the "
                                      "tap was about; the app under it did not change", details)
        conf = 0.8 if ch.tree_similarity is not None else 0.6
        return self._f("yes", conf, "the screen changed after the tap", details)

    @staticmethod
    def _silent_target(rec: StepRecord, before: Observation, ti: int) -> bool:
        """The tapped control is one that often works silently (Save, Copy …): its
        name (text / description) is, or starts with, such a word — "Save", "Copy to
        clipboard", not "More options for talk_copy" — or its id ends with one
        (``menu_save``); or it is the step's named target and that name is silent."""
        control = clickable_ancestor(before, ti)
        idx = set(screen_tree(before).subtree(control)) | {ti}
        for k in idx:
            e = before.elements[k]
            if any(_names_silently(n) for n in (e.text, e.content_desc) if n):
                return True
            sid = e.resource_id.split("/", 1)[-1].lower() if e.resource_id else ""
            if sid and any(sid == w.replace(" ", "_") or sid.endswith("_" + w.replace(" ", "_")) for w in _silent_words()):
                return True
        hit = labels_around(before, ti)
        named = [t for t in intended_targets(rec.step) if _names_silently(t)]
        return any(same_text(t, h) or contains_phrase(h, t) for t in named for h in hit if h)

    @staticmethod
    def _absent_target(rec: StepRecord, ti: Optional[int], history: Optional[list[StepRecord]] = None) -> Optional[str]:
        """The target the summary names in quotes, when nothing on the screen the step
        was decided on carries that name and the tap hit something else: the agent
        aimed at a control that was not there (a stale coordinate replayed on another
        screen, a pop-up in the way). Given ``history`` (the tap did change the screen),
        only when the agent's words are the screens' words: some earlier step named a
        target its screen did carry — an agent narrating in English on a phone in
        Spanish names "Pause" over "Pausar" on every step, and that is no evidence of a
        missed tap."""
        before = rec.observation
        if ti is None or not screen_tree(before).has_tree:
            return None
        named = _quoted_names(rec)
        if not named:
            return None
        hit = [normalize(h) for h in labels_around(before, ti) if h]
        for q in named:
            if any(same_text(q, n) or contains_phrase(n, q) or contains_phrase(q, n) for n in hit):
                return None
        if _names_found(named, before):
            return None
        if history is not None and not _agent_speaks_the_screens_language(history[:-1]):
            return None
        return named[0]

    @staticmethod
    def _stepper(history: list[StepRecord]) -> bool:
        """The step before pressed the same control and that press changed the screen."""
        if len(history) < 2:
            return False
        prev, rec = history[-2], history[-1]
        if not same_action(prev, rec, SAME_CONTROL_PX):
            return False
        return compare(prev.observation, rec.observation).changed

    def _missed_target(self, rec: StepRecord, ti: Optional[int]) -> Optional[dict[str, Any]]:
        """The named target, when the tap hit something else and the named one is on screen."""
        before = rec.observation
        if ti is None or not screen_tree(before).has_tree:
            return None
        targets = [normalize(x) for x in intended_targets(rec.step)]
        targets = [x for x in targets if len(x) >= 2]
        if not targets:
            return None
        hit_labels = [normalize(s) for s in labels_around(before, ti)]
        for tgt in targets:
            if any(same_text(tgt, h) or contains_phrase(h, tgt) or contains_phrase(tgt, h) for h in hit_labels if h):
                return None
        tree = screen_tree(before)
        for tgt in targets:
            for i in tree.content:
                e = before.elements[i]
                names = (e.text, e.content_desc, e.hint, e.resource_id.split("/", 1)[-1])
                if any(same_text(tgt, n) for n in names if n) and e.area > 0:
                    return {"label": tgt, **(describe_element(e) or {})}
        return None

    # -- typing -------------------------------------------------------------------------
    def _typed(self, rec: StepRecord, after: Observation, ch: ScreenChange, base: dict[str, Any]) -> Finding:
        before, a = rec.observation, rec.step.action
        typed = a.text or ""
        details = {**base, "typed_text": typed}
        if not screen_tree(after).has_tree:
            if ch.changed:
                return self._f("uncertain", 0.4, "the screen changed, but without a UI tree the field text cannot be read", details)
            return self._f("no", 0.7, "typing changed nothing on screen", details)
        if not normalize(typed):
            return self._f("yes", 0.6, "nothing visible was typed", details)
        focused_password = any(after.elements[i].password for i in F.editable_indices(after))
        landed = F.landing_fields(before, after, typed)
        if not landed:
            if focused_password:
                return self._f("uncertain", 0.5, "a password field hides what was typed", details)
            already = any(text_landed(typed, s) for s in screen_tree(before).texts) if screen_tree(before).has_tree else False
            if not already and any(text_landed(typed, s) for s in screen_tree(after).texts):
                return self._f("uncertain", 0.5, "the typed text shows on screen, but in no text field", details)
            hidden = self._target_field_hidden(rec, after)
            if hidden and ch.changed:
                return self._f("uncertain", 0.5, "the field typed into is no longer visible (under the keyboard or "
                                                 "scrolled away)", details)
            return self._f("no", 0.85, f"the typed text {typed!r} is not in any text field", details)
        details["landed_in"] = F.describe_field(after, landed[0])
        if self.config.check_text_fields and screen_tree(before).has_tree:
            intended = F.mentioned_fields(before, rec.step.summary, typed) or self._targeted_field(rec)
            if intended:
                landed_before = [F.to_before(before, after, i) for i in landed]
                if not any(j in intended for j in landed_before if j is not None):
                    details["intended_field"] = F.describe_field(before, intended[0])
                    names = details["intended_field"]["names"]
                    got = details["landed_in"]["names"]
                    return self._f("no", 0.8, f"the text landed in the field {got[0] if got else '?'!r}, "
                                              f"not in the {names[0] if names else '?'!r} field the step names", details)
        return self._f("yes", 0.85, "the typed text is in the intended field", details)

    @staticmethod
    def _targeted_field(rec: StepRecord) -> list[int]:
        """The field an input_text aimed at by position or index (when its summary names none)."""
        a, before = rec.step.action, rec.observation
        if a.x is None and a.index is None:
            return []
        ti = target_index(a, before)
        return [ti] if ti is not None and before.elements[ti].editable else []

    @staticmethod
    def _target_field_hidden(rec: StepRecord, after: Observation) -> bool:
        """The field the text was meant for (at the action's point, or focused) is not
        on the later screen."""
        before, a = rec.observation, rec.step.action
        ti = target_index(a, before)
        if ti is None or not before.elements[ti].editable:
            ti = next((i for i in F.editable_indices(before) if before.elements[i].focused), None)
        if ti is None:
            return True
        e = before.elements[ti]
        return not any(F.to_before(before, after, i) == ti for i in F.editable_indices(after))

    # -- other actions -------------------------------------------------------------------
    def _swipe(self, rec: StepRecord, after: Observation, ch: ScreenChange, base: dict[str, Any]) -> Finding:
        before, a = rec.observation, rec.step.action
        if is_shade_pull(a, before.screen_size):
            if screen_tree(after).shade_open:
                return self._f("yes", 0.9, "the notification shade is open", base)
            if screen_tree(before).shade_open:
                return self._f("uncertain", 0.5, "the shade was already open", base)
            if ch.changed:
                return self._f("yes" if not screen_tree(after).has_tree else "uncertain", 0.5,
                               "the screen changed after pulling down from the top", base)
            return self._f("no", 0.8, "the swipe from the top edge did not open the shade", base)
        ti = element_at(before, a.x, a.y) if a.x is not None and a.y is not None else None
        if ch.changed:
            return self._f("yes", 0.75, "the swipe changed the screen", base)
        if ti is not None and "seekbar" in before.elements[ti].class_name.lower():
            return self._f("uncertain", 0.5, "the slider did not move (it may already be at that value)", base)
        return self._f("uncertain", 0.5, "the swipe changed nothing (nothing to move, or a dropped gesture)", base)

    def _open_app(self, rec: StepRecord, after: Observation, ch: ScreenChange, base: dict[str, Any]) -> Finding:
        name = rec.step.action.app_name or ""
        fg = foreground_package(after)
        if is_app_package(fg) and app_named_in_goal(fg, name):
            return self._f("yes", 0.9, f"{fg} is in front", base)
        if is_launcher(fg) and not ch.changed:
            return self._f("no", 0.85, f"open_app({name!r}) left the home screen in front", base)
        if interrupter_kind(fg) is not None:
            return self._f("uncertain", 0.4, f"{fg} is in front (a system dialog?)", base)
        if is_app_package(fg) and ch.changed:
            return self._f("yes", 0.6, f"an app ({fg}) opened", base)
        return self._f("uncertain", 0.4, f"open_app({name!r}): {fg or 'unknown'} is in front", base)

    # -- findings -----------------------------------------------------------------------
    def _f(self, verdict: str, confidence: float, why: str, details: Optional[dict[str, Any]] = None) -> Finding:
        return Finding(diagnoser=self.name, problem=verdict == "no", verdict=verdict, confidence=confidence,
                       evidence=[why], details=details or {})

    def from_judgment(self, judgment: Any, cost: Cost) -> Finding:
        """Read the shared VLM judgment's ``previous_intended_effect_satisfied`` as this diagnoser's finding.

        Args:
            judgment: the step's :class:`diagnosers.judgment.Judgment` (or its dict).
            cost: what the judgment cost.

        Returns:
            The finding: yes / no / uncertain, a problem when no.
        """
        j = as_judgment(judgment)
        v = j.previous_intended_effect_satisfied
        return model_finding(self.name, v, v == "no", j, cost, "previous_intended_effect_satisfied")

    def merge(self, rule: Finding, model: Finding) -> Finding:
        """The cascade asks the model when the rules are unsure: the model decides, and
        keeps what the rules knew about the action for the recovery."""
        model.details = {**rule.details, **model.details}
        return model


def _content_without(obs: Observation, skip: set[int]) -> set[tuple[Any, ...]]:
    """The app's nodes (no bars, banners, keyboard, nor the ``skip`` subtrees)."""
    t = screen_tree(obs)
    out = set()
    for i in t.content:
        if i in skip:
            continue
        e = obs.elements[i]
        out.add((e.class_name, e.resource_id, e.text, e.content_desc, e.bounds, e.checked, e.selected))
    return out


def _only_a_popup_appeared(rec: StepRecord, after: Observation) -> Optional[str]:
    """The title of an interruption that appeared after the tap, when nothing else on
    screen changed and the pop-up is not about what the tap named ("Delete" opening
    "Delete recipe?" is the tap's own effect)."""
    before = rec.observation
    if not screen_tree(before).has_tree or not screen_tree(after).has_tree:
        return None
    lex = load_lexicon(None)
    old = {c.signature() for c in overlay_candidates(before)}
    new = [c for c in overlay_candidates(after) if c.kind not in ("shade",) and c.signature() not in old
           and c.structural_score + score_text(c, lex)[0] >= INTERRUPTION_SCORE]
    if not new:
        return None
    t_after = screen_tree(after)
    skip = {j for c in new for j in t_after.subtree(c.index)}
    if _content_without(before, set()) != _content_without(after, skip):
        return None
    words = set(intended_words(rec.step))
    ti = target_index(rec.step.action, before)
    if ti is not None:
        for label in labels_around(before, ti, ids=False):
            words |= content_words(label)
    for c in new:
        if words & content_words(" ".join([c.title] + [b.label for b in c.buttons])):
            return None  # the tap asked for it
    return new[0].title or new[0].kind


def _covered(obs: Observation) -> bool:
    """A pop-up that takes the input (a dialog, a sheet, a full-screen page — not a
    heads-up banner) scores as an interruption on ``obs``."""
    return overlay_score(obs, ("shade", "heads_up")) >= INTERRUPTION_SCORE


def _names_silently(label: str) -> bool:
    n = normalize(label).replace("_", " ")
    return any(n == w or n.startswith(w + " ") for w in _silent_words())


def _name(e: Any) -> str:
    if e is None:
        return "nothing"
    label = e.text or e.content_desc or e.resource_id.split("/", 1)[-1] or e.class_name.rsplit(".", 1)[-1]
    return repr(label)


AGREEMENT_LOOKBACK = 12  # earlier steps searched for one whose named target its screen carried


def _quoted_names(rec: StepRecord) -> list[str]:
    """The targets a step's summary names in quotes, normalised (``_`` as a space)."""
    return [q.replace("_", " ") for q in (normalize(q) for q in quoted(rec.step.summary)) if len(q) >= 2]


def _names_found(named: list[str], obs: Observation) -> bool:
    """Whether some element of ``obs`` carries one of ``named`` (text, description, hint or id)."""
    names: list[str] = []
    for e in obs.elements:
        names.extend(normalize(n) for n in (e.text, e.content_desc, e.hint) if n)
        if e.resource_id:
            names.append(normalize(e.resource_id.split("/", 1)[-1].replace("_", " ")))
    return any(same_text(q, n) or contains_phrase(n, q) for q in named for n in names if n)


def _agent_speaks_the_screens_language(earlier: list[StepRecord]) -> bool:
    """Some recent earlier step named a target that its screen carried."""
    for r in earlier[-AGREEMENT_LOOKBACK:]:
        named = _quoted_names(r)
        if named and screen_tree(r.observation).has_tree and _names_found(named, r.observation):
            return True
    return False
