"""Interference detection (AndroidReality §5.1 ③, App. D.1): ``interference_present``.

Rules over the UI tree. Each overlay candidate (a window from another package, a
system dialog, a heads-up banner, a dialog / sheet container inside the app)
gets a score from structural evidence (known system dialog ids, interrupter
packages, system UI windows, dialog containers, a scrim), from the interruption
lexicon (``data/interruption/``, one file per language) and from a decline button; app dialogs the
agent's own last tap opened ("Delete recipe?" after tapping "Delete") and
dialogs that share words with the goal lose score. Score >= ``min_score``:
true; >= ``uncertain_score``: uncertain (the cascade asks the model). A bare page of
the app (a few controls low on it, none a gate's known way on) is a gate as often as
content: it scores at most uncertain, so that a model, not the word lists, decides.

A tap on an interruption's engage / neutral button that leads to a new screen
(the next page of a consent flow, the "Security Center" wizard) makes that
screen a "flow" candidate, which stays one while the agent keeps working in it.

Never interference: the status and navigation bars, the soft keyboard, the
notification shade the agent pulled down itself, the launcher and the overview.
Without a usable UI tree (a failed dump, a bare root) the rules read the
screenshot's text (OCR) and layout instead (:mod:`diagnosers.signals.text_overlays`:
a card over a dimmed backdrop, a banner at the top, a page that took over) and score
those candidates the same way; without OCR they can only compare pixels (a dimmed
backdrop) and answer uncertain. Findings say which they read (``source``).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from ttir.core.diagnosis import Cost, DiagnosisContext, Diagnoser, Finding, InterferenceKind
from diagnosers.signals.actions import intended_words, point_of, target_index
from diagnosers.signals.cache import CACHE
from diagnosers.signals.change import compare
from diagnosers.signals.context import CLOSING_KINDS, app_names, goal_words, in_overlay, shade_owned, track
from diagnosers.signals.findings import as_judgment, model_finding
from diagnosers.signals.intents import goal_intents, intents_for, shared_intents
from diagnosers.signals.lexicon import Lexicon, load_lexicon
from diagnosers.signals.overlays import (
    BARE_PAGE,
    LEXICON_CAP,
    W_DISMISS_BUTTON,
    Candidate,
    bare_page,
    button_roles,
    make_candidate,
    names_sign_in,
    overlay_candidates,
    progress_nodes,
    score_text,
)
from diagnosers.signals.screen_model import ScreenModel, load_screen_model
from diagnosers.signals.screen_text import content_lines, screen_source, text_similarity
from diagnosers.signals.system import is_app_package, knowledge, package_of
from diagnosers.signals.text import content_words
from diagnosers.signals.text_overlays import SCRIM_DARKENING, edges_darkened, persisting, text_candidates
from diagnosers.signals.tree import foreground_package, label_similarity, labels_around, screen_tree
from ttir.core.config import InterferenceConfig
from ttir.core.lexicon import norm
from ttir.core.types import NAVIGATION_TYPES, Observation

W_FOREIGN_APP = 0.45  # a window of another app than the one(s) the agent works in
W_UNREQUESTED_SHADE = 0.6  # the shade is open and no step of the agent pulled it down
W_OPENED_BY_LAST_ACTION = -0.45  # the agent's own tap opened this dialog ("Delete" -> "Delete recipe?")
W_GOAL_WORD = -0.15  # per shared goal word (at most two)
W_CONTINUES_INTERRUPTION = 0.15  # opened by a tap inside an interruption (a wizard's next page)
W_FLOW = 0.3  # the screen an engage / neutral tap on an interruption led to
W_GOAL_INTENT = -0.7  # the dialog asks for what the goal needs (scan -> camera, "sign in with Google" -> account chooser)
W_PERSISTENT_SPINNER = 0.45
# rule evidence that a dialog is the task's own, which a model's verdict does not overrule
TASK_OWN_FEATURES = {"goal_needs_it": "the goal needs what the dialog asks for",
                     "opened_by_last_action": "the agent's own last tap opened it"}
# what the rules read from the phone's structure or the run's history: the screen model does not overrule it
RULE_CERTAIN_KINDS: frozenset[InterferenceKind] = frozenset({"permission", "anr", "crash", "lock_screen", "shade", "heads_up", "flow", "loading"})
VERDICT_KEY = "interference.verdict"  # -> ScreenVerdict, kept per screen in the observation cache
TEXT_CANDIDATES_KEY = "interference.text_candidates"  # (score, candidate) read from a tree-less screen's pixels
REVEALED_SHARE = 0.6  # share of a screen's labels already present before: the overlay just closed
FLOW_SAME_PAGE = 0.5  # label similarity at which a flow page is still the same page (scrolled, checked)
RETURN_LOOKBACK = 8  # screens back in which a screen after an interruption's last page may have been seen


class ScreenVerdict(NamedTuple):
    """What this diagnoser remembers of a screen for the next step: did the agent tap into it?"""

    score: float
    bounds: Optional[tuple[int, int, int, int]]  # the strongest candidate's, None when there was none
    buttons: list[tuple[tuple[int, int, int, int], str]]  # (bounds, role) of its buttons
    kind: InterferenceKind  # the candidate's kind ("flow" for a page of an interruption's own flow)


NO_VERDICT = ScreenVerdict(0.0, None, [], "")


class InterferenceDiagnoser(Diagnoser):
    """Is an off-task overlay (pop-up, sheet, ad, banner, system dialog) on screen?"""

    name = "interference"

    def __init__(self, config: Any = None, *, mode: Any = None, judge: Any = None):
        super().__init__(config, mode=mode, judge=judge)
        self.lexicon: Lexicon = load_lexicon(getattr(self.config, "lexicon_file", None))
        # loaded here, so that a model file that cannot be read fails when the guard is built
        self.screen_model: Optional[ScreenModel] = (
            load_screen_model(getattr(self.config, "screen_model_file", None))
            if getattr(self.config, "screen_model", False) else None)

    @classmethod
    def default_config(cls) -> InterferenceConfig:
        """The defaults of the ``interference`` section of :class:`ttir.TTIRConfig`."""
        return InterferenceConfig()

    # -- the rule tier ------------------------------------------------------------------
    def rules(self, ctx: DiagnosisContext) -> Finding:
        """The deterministic tier: scores each overlay candidate on screen (system dialogs, windows of
        another package, dialog containers, the interruption lexicon, a decline button); without a
        usable tree it reads text from pixels or the screenshot alone.

        Args:
            ctx: the goal, the current screen and the history.

        Returns:
            The finding: verdict ``true`` (a problem; ``details`` locate the overlay and its buttons),
        ``false`` or ``uncertain``.
        """
        obs = ctx.observation
        if not screen_tree(obs).has_tree:
            return self._without_tree(ctx)
        scored: list[tuple[float, Candidate, dict[str, float], dict[str, float]]] = []
        flow = self._flow_candidate(ctx)
        page = bare_page(obs)  # the rules cannot tell it: at most uncertain, so the cascade asks the model
        for c in overlay_candidates(obs) + [x for x in (flow, page) if x is not None]:
            s = self._score(ctx, c)
            if s is not None:
                scored.append((s[0], c, s[1], s[2]))
        finding = self._conclude(obs, scored, self._spinner(ctx))
        if self.screen_model is None:
            return finding
        return self._with_screen_model(ctx, finding, max(scored, key=lambda x: x[0], default=None))

    def strongest_overlay(self, ctx: DiagnosisContext) -> Optional[dict[str, Any]]:
        """The details (kind, bounds, buttons and their roles) of the strongest overlay
        candidate the rules locate on the screen, whatever its score; None when there is none.

        Args:
            ctx: the diagnosis context.

        Returns:
            The candidate's details, as a finding of interference carries them.
        """
        obs = ctx.observation
        if not screen_tree(obs).has_tree:
            return None
        flow, page = self._flow_candidate(ctx), bare_page(obs)
        best = None
        for c in overlay_candidates(obs) + [x for x in (flow, page) if x is not None]:
            sc = self._score(ctx, c)
            if sc is not None and (best is None or sc[0] > best[0]):
                best = (sc[0], c, sc[1], sc[2])
        return self._details(obs, best[1], best[0], best[2], best[3]) if best is not None else None

    def _with_screen_model(self, ctx: DiagnosisContext, rule: Finding,
                           best: Optional[tuple[float, Candidate, dict[str, float], dict[str, float]]]) -> Finding:
        """The free tier's verdict: the learned screen model decides, the rules keep what they
        know for certain.

        - what the rules read from the phone's own structure or from the run's history is
          kept as they said it: system dialogs (permissions, ANR, crash), the lock screen,
          an unrequested shade, a heads-up banner, an interruption's next page, a loading
          screen that does not move;
        - the rules' goal-aware vetoes hold: a dialog the goal needs, or that the agent's own
          last tap opened, is at most uncertain (logged; the cascade's model is asked, and its
          "yes" is held too), never dismissed;
        - otherwise the model's probability maps to true / uncertain / false by the
          thresholds chosen on ``dev`` (a screen with no overlay candidate at all is not
          uncertain: a model call there is rarely worth it); where it finds what the rules
          scored too low, the overlay the rules located (its buttons and their roles) goes
          with the verdict, and so does what the rules said (``rules_verdict``): the recovery
          presses Back only on their own "true".
        """
        details = rule.details
        kind = details.get("kind")
        if kind in RULE_CERTAIN_KINDS and rule.verdict != "false":
            return rule
        model = self.screen_model
        p = model.probability(model.features(ctx.observation, ctx.goal, {"verdict": rule.verdict, "details": details}))
        verdict = model.verdict(p)
        if verdict == "uncertain" and best is None and rule.verdict == "false":
            verdict = "false"  # no overlay structure at all and a weak probability: not worth a model call
        vetoed = [k for k in TASK_OWN_FEATURES if k in (details.get("features") or {})]
        if verdict == "true" and vetoed:
            verdict = "uncertain"
        note = (f"screen model: p={p:.2f} (interference at >= {model.threshold:.2f}, uncertain at >= "
                f"{model.uncertain:.2f})" + (f"; held: {' and '.join(TASK_OWN_FEATURES[k] for k in vetoed)}"
                                              if vetoed and model.verdict(p) == "true" else ""))
        if verdict == "true" and "buttons" not in details and best is not None:
            score, c, feats, hits = best
            details = {**self._details(ctx.observation, c, score, feats, hits), **details}
        if verdict == "true" and rule.verdict != "true":
            details = _unlearned(details)  # the model alone calls it: its own guess at a control is not tapped
        confidence = p if verdict != "false" else 1.0 - p
        return Finding(diagnoser=self.name, problem=verdict == "true", verdict=verdict,
                       confidence=round(min(1.0, max(0.0, confidence)), 3), evidence=rule.evidence + [note],
                       details={**details, "screen_model": round(p, 4), "rules_verdict": rule.verdict})

    def _conclude(self, obs: Observation, scored: list[tuple[float, Candidate, dict[str, float], dict[str, float]]],
                  spinner: Optional[Finding] = None) -> Finding:
        """The finding from the scored candidates: the strongest decides."""
        best = max(scored, key=lambda x: x[0], default=None)
        self._remember(obs, best)
        if best is None or best[0] < self.config.uncertain_score:
            if spinner is not None:
                return spinner
            top = best[0] if best else 0.0
            return Finding(diagnoser=self.name, problem=False, verdict="false", confidence=round(1.0 - top / 2, 3),
                           evidence=["no overlay candidate" if best is None else
                                     f"strongest overlay candidate ({best[1].kind}, {best[1].title!r}) scores {top:.2f}"],
                           details={"candidates": [self._brief(x) for x in scored]})
        score, c, feats, hits = best
        details = self._details(obs, c, score, feats, hits)
        details["candidates"] = [self._brief(x) for x in scored if x[1] is not c]
        why = (f"{c.kind} from {c.package or '?'} titled {c.title!r}: score {score:.2f} "
               f"({', '.join(f'{k} {v:+.2f}' for k, v in feats.items() if v)})")
        if score >= self.config.min_score:
            return Finding(diagnoser=self.name, problem=True, verdict="true", confidence=round(min(1.0, score), 3),
                           evidence=[why], details=details)
        return Finding(diagnoser=self.name, problem=False, verdict="uncertain", confidence=round(score, 3),
                       evidence=[why], details=details)

    def _score(self, ctx: DiagnosisContext, c: Candidate) -> Optional[tuple[float, dict[str, float], dict[str, float]]]:
        feats = dict(c.features)
        lex, hits = score_text(c, self.lexicon)
        if c.kind == "shade":
            if shade_owned(ctx):
                return None
            feats["unrequested_shade"] = W_UNREQUESTED_SHADE
        feats["lexicon"] = lex
        roles = button_roles(c.buttons, self.lexicon, c.kind, c.texts)
        if "dismiss" in roles and (lex > 0 or sum(c.features.values()) >= 0.45):
            feats["decline_button"] = W_DISMISS_BUTTON
        needed = intents_for(c.kind, shared_intents(ctx.goal, c.texts, c.package, app_names(ctx)))
        if "sign_in_wall" in feats and "sign_in" in goal_intents(ctx.goal):
            needed = needed | {"sign_in"}  # the goal asks to sign in: the wall is the way
        if needed and c.kind == "takeover":
            return None  # a page the goal itself needs (a sign-in page for a sign-in goal) is the task's own
        if needed and c.kind not in ("anr", "crash", "lock_screen", "heads_up", "shade"):
            feats["goal_needs_it"] = W_GOAL_INTENT
        if c.kind in ("window", "dialog", "takeover"):
            if c.kind == "window" and self._foreign(ctx, c):
                feats["foreign_package"] = W_FOREIGN_APP
            link = self._link_to_last_action(ctx, c)
            if link == "opened":
                feats["opened_by_last_action"] = W_OPENED_BY_LAST_ACTION
            elif link == "continues":
                feats["continues_interruption"] = W_CONTINUES_INTERRUPTION
            # an onboarding carousel's pages speak of the app's features, not of the task
            shared = self._goal_overlap(ctx, c) if "carousel" not in feats else set()
            if shared:
                # goal words protect the task's own dialogs ("Delete recipe?"), not a
                # dialog whose wording is plainly promotional
                feats["goal_overlap"] = round(W_GOAL_WORD * min(2, len(shared)) * (1 - lex / LEXICON_CAP), 3)
        score = max(0.0, sum(feats.values()))
        if BARE_PAGE in feats:
            score = min(score, self.config.uncertain_score)  # the rules cannot tell this page: the model may
        return round(score, 3), feats, hits

    def _remember(self, obs: Observation, best: Optional[tuple]) -> None:
        """Keep this screen's verdict: the next step asks whether the agent tapped into it."""
        if best is None:
            CACHE.slot(obs)[VERDICT_KEY] = NO_VERDICT
            return
        score, c = best[0], best[1]
        roles = button_roles(c.buttons, self.lexicon, c.kind, c.texts)
        CACHE.slot(obs)[VERDICT_KEY] = ScreenVerdict(score, c.bounds, [(b.bounds, r) for b, r in zip(c.buttons, roles)],
                                                     c.kind)

    def _tapped_interruption(self, obs: Observation, point: tuple[int, int]) -> Optional[str]:
        """The role of what a touch at ``point`` hit inside an interruption on ``obs``
        ('' when it hit the interruption but no button; 'dismiss' for dialogs that any
        answer closes), or None when it hit no interruption."""
        verdict = CACHE.slot(obs).get(VERDICT_KEY)
        if verdict is None:  # not diagnosed (a recorded history): the context-free score
            best = None
            for c in overlay_candidates(obs):
                if c.kind == "shade":
                    continue
                sc = c.structural_score + score_text(c, self.lexicon)[0]
                if best is None or sc > best[0]:
                    roles = button_roles(c.buttons, self.lexicon, c.kind, c.texts)
                    best = ScreenVerdict(sc, c.bounds, [(b.bounds, r) for b, r in zip(c.buttons, roles)], c.kind)
            verdict = best or NO_VERDICT
        score, bounds, buttons, kind = verdict
        if bounds is None or score < self.config.min_score or not _inside(point, bounds):
            return None
        if kind in CLOSING_KINDS:
            return "dismiss"  # any answer closes these; what follows is not a page of theirs
        return next((r for b, r in buttons if _inside(point, b)), "")

    def _flow_candidate(self, ctx: DiagnosisContext) -> Optional[Candidate]:
        """The screen a tap on an interruption's engage / neutral button led to (the next
        page of a consent flow or a security wizard), when it is not itself an overlay."""
        prev = ctx.previous
        if prev is None:
            return None
        a = prev.step.action
        p = point_of(a, prev.observation) if a.is_touch else None
        role = self._tapped_interruption(prev.observation, p) if p is not None else None
        if role == "dismiss":
            return None
        if a.is_touch and self._same_flow_page(ctx):
            pass  # a tick or a choice on a flow page: still that page (nothing was "revealed")
        elif role is None or not compare(prev.observation, ctx.observation).changed:
            # not a tap into an interruption: is this still the flow page of the step before?
            before = CACHE.slot(prev.observation).get(VERDICT_KEY)
            if before is None or before.kind != "flow" or before.score < self.config.min_score:
                return None
            if a.action_type in NAVIGATION_TYPES:
                return None
            sim = label_similarity(screen_tree(prev.observation), screen_tree(ctx.observation))
            if sim is None or sim < FLOW_SAME_PAGE:
                return None
        elif any(_revealed(r.observation, ctx.observation) for r in ctx.history[-RETURN_LOOKBACK:]):
            return None  # the tap closed the interruption: what shows now was under it (or before its pages)
        elif foreground_package(ctx.observation) != foreground_package(prev.observation):
            return None  # it opened another app: the task-alignment check's business
        tree = screen_tree(ctx.observation)
        main = tree.main_root()
        if main is None:
            return None
        c = make_candidate(ctx.observation, main, "flow", True)
        c.features["continues_interruption"] = W_FLOW
        return c

    def _same_flow_page(self, ctx: DiagnosisContext) -> bool:
        """The step before was on a flow page and this screen is still that page."""
        prev = ctx.previous
        before = CACHE.slot(prev.observation).get(VERDICT_KEY) if prev is not None else None
        if before is None or before.kind != "flow" or before.score < self.config.min_score:
            return False
        sim = label_similarity(screen_tree(prev.observation), screen_tree(ctx.observation))
        return sim is not None and sim >= FLOW_SAME_PAGE

    @staticmethod
    def _overlays(obs: Observation) -> list[Candidate]:
        """The overlay candidates of an earlier screen: from its tree, else those read
        from its screenshot when it was diagnosed."""
        if screen_tree(obs).has_tree:
            return overlay_candidates(obs)
        return [c for _, c in CACHE.slot(obs).get(TEXT_CANDIDATES_KEY) or []]

    def _foreign(self, ctx: DiagnosisContext, c: Candidate) -> bool:
        """A window of another app than the one the task is in (the foreground app, else
        the first app window) and than the apps the agent used on track."""
        if not is_app_package(c.package):
            return False
        if c.package == foreground_package(ctx.observation):
            return False
        return c.package not in track(ctx).on_task

    def _link_to_last_action(self, ctx: DiagnosisContext, c: Candidate) -> Optional[str]:
        """'opened' when the agent's last touch named what this new dialog is about,
        'continues' when that touch landed inside an interruption."""
        prev = ctx.previous
        if prev is None:
            return None
        sig = c.signature()
        if any(p.signature() == sig for p in self._overlays(prev.observation)):
            return None  # it was already there before the last action
        a = prev.step.action
        if not a.is_touch and a.action_type != "keyboard_enter":
            return None
        if a.is_touch and in_overlay(prev.observation, point_of(a, prev.observation)):
            return "continues"
        words: set[str] = set(intended_words(prev.step))
        ti = target_index(a, prev.observation) if a.is_touch else None
        if ti is not None:
            for label in labels_around(prev.observation, ti, ids=False):
                words |= content_words(label)
        ov = content_words(" ".join([c.title] + [b.label for b in c.buttons]))
        return "opened" if words & ov else None

    def _goal_overlap(self, ctx: DiagnosisContext, c: Candidate) -> set[str]:
        # words of the app's name ("Simple SMS Messenger" ~ com.simplemobiletools.smsmessenger) say
        # nothing: interruptions name the app they interrupt ("Enjoying Broccoli?")
        apps = set(track(ctx).on_task) | {c.package, foreground_package(ctx.observation)}
        segments = {seg for p in apps if p for seg in p.split(".") if len(seg) > 2}
        goal = {w for w in goal_words(ctx.goal) if not any(w in seg or (len(seg) >= 4 and seg in w) for seg in segments)}
        return goal & content_words(" ".join(c.texts))

    def _spinner(self, ctx: DiagnosisContext) -> Optional[Finding]:
        """A loading indicator that has not moved for three observations: uncertain."""
        obs = ctx.observations()
        if len(obs) < 3 or not progress_nodes(obs[-1]):
            return None
        for a, b in zip(obs[-3:-1], obs[-2:]):
            if not progress_nodes(a) or compare(a, b).changed:
                return None
        e = ctx.observation.elements[progress_nodes(obs[-1])[0]]
        return Finding(diagnoser=self.name, problem=False, verdict="uncertain", confidence=W_PERSISTENT_SPINNER,
                       evidence=["a loading indicator has been on an unchanged screen for three observations"],
                       details={"kind": "loading", "bounds": list(e.bounds), "buttons": [], "dismiss_hint": "wait"})

    def _without_tree(self, ctx: DiagnosisContext) -> Finding:
        """No usable UI tree: the screenshot's text and layout (OCR); a screen without any
        text it can read (or without OCR): its pixels."""
        obs = ctx.observation
        if obs.screenshot is not None and screen_source(obs) == "ocr" and content_lines(obs):
            f = self._from_text(ctx)
            f.source = "ocr"
            return f
        f = self._from_pixels(ctx)
        f.source = "pixels" if obs.screenshot is not None else None
        return f

    def _from_text(self, ctx: DiagnosisContext) -> Finding:
        """Overlay candidates read from the screenshot (a card over a dimmed backdrop, a
        banner at the top, a page that took over), scored like the tree's."""
        obs, prev = ctx.observation, ctx.previous_observation
        candidates = text_candidates(obs, prev)
        if prev is not None:
            earlier = CACHE.slot(prev).get(TEXT_CANDIDATES_KEY) or []
            for c in persisting(earlier, obs, self.config.min_score):
                if not any(o.kind == c.kind and o.title == c.title for o in candidates):
                    candidates.append(c)
        flow = self._text_flow(ctx)
        if flow is not None and not candidates:
            candidates.append(flow)
        scored: list[tuple[float, Candidate, dict[str, float], dict[str, float]]] = []
        for c in candidates:
            s = self._score(ctx, c)
            if s is not None:
                scored.append((s[0], c, s[1], s[2]))
        CACHE.slot(obs)[TEXT_CANDIDATES_KEY] = [(x[0], x[1]) for x in scored]
        f = self._conclude(obs, scored)
        f.evidence = ["no UI tree; read from the screenshot's text: " + e for e in f.evidence]
        return f

    def _text_flow(self, ctx: DiagnosisContext) -> Optional[Candidate]:
        """Without a tree: the page an engage / neutral tap on an interruption led to (a
        consent flow's next page, a security wizard), while the agent stays on its pages."""
        prev = ctx.previous
        if prev is None:
            return None
        lines = content_lines(ctx.observation)
        if not lines:
            return None
        a = prev.step.action
        before = CACHE.slot(prev.observation).get(VERDICT_KEY)
        if before is None or before.score < self.config.min_score:
            return None
        if before.kind == "flow":
            if a.action_type in NAVIGATION_TYPES:
                return None
            sim = text_similarity(prev.observation, ctx.observation)
            if sim is None or sim < FLOW_SAME_PAGE:
                return None
        else:
            p = point_of(a, prev.observation) if a.is_touch else None
            role = self._tapped_interruption(prev.observation, p) if p is not None else None
            if role not in ("engage", "neutral", "") or not compare(prev.observation, ctx.observation).changed:
                return None
            earlier = [r.observation for r in ctx.history[-RETURN_LOOKBACK:-1]]
            if any((text_similarity(o, ctx.observation) or 0.0) >= REVEALED_SHARE for o in earlier):
                return None  # the tap closed the interruption: what shows now was on screen before it
        w, h = ctx.observation.screen_size
        c = Candidate(index=-1, kind="flow", package="", bounds=(0, 0, w, h), is_window=True,
                      texts=[e.text for e in lines], title=lines[0].text)
        c.features["continues_interruption"] = W_FLOW
        return c

    def _from_pixels(self, ctx: DiagnosisContext) -> Finding:
        """No UI tree and no text: a dimmed border around a changed centre looks like a dialog's scrim."""
        obs, prev = ctx.observation, ctx.previous_observation
        if obs.screenshot is None:
            return Finding(diagnoser=self.name, problem=False, verdict="uncertain", confidence=0.2,
                           evidence=["neither a UI tree nor a screenshot"], details={"kind": "unknown"})
        if prev is None or prev.screenshot is None or tuple(prev.screenshot.size) != tuple(obs.screenshot.size):
            return Finding(diagnoser=self.name, problem=False, verdict="uncertain", confidence=0.3,
                           evidence=["no UI tree and no earlier screenshot to compare with"], details={"kind": "unknown"})
        ratio = edges_darkened(prev, obs)
        if ratio is not None and ratio < SCRIM_DARKENING and compare(prev, obs).changed:
            return Finding(diagnoser=self.name, problem=False, verdict="uncertain", confidence=0.5,
                           evidence=[f"no UI tree; the screen edges darkened to {ratio:.2f} of their brightness "
                                     "(a dialog's scrim?)"], details={"kind": "scrim", "bounds": None, "buttons": []})
        return Finding(diagnoser=self.name, problem=False, verdict="false", confidence=0.5,
                       evidence=["no UI tree; no dimmed backdrop in the screenshot"], details={})

    # -- details ------------------------------------------------------------------------
    def _details(self, obs: Observation, c: Candidate, score: float, feats: dict[str, float],
                 hits: dict[str, float]) -> dict[str, Any]:
        roles = button_roles(c.buttons, self.lexicon, c.kind, c.texts)
        buttons = [b.to_dict(r) for b, r in zip(c.buttons, roles)]
        if self.screen_model is not None and buttons and c.kind not in RULE_CERTAIN_KINDS:
            roles = self._learned_roles(c, buttons)
        order = {"dismiss": 0, "neutral": 1, "engage": 2}
        buttons.sort(key=lambda b: -b.get("dismiss_p", 0.0))  # the likeliest dismiss first among equals
        return {
            "kind": c.kind,
            "package": c.package,
            "bounds": list(c.bounds),
            "title": c.title,
            "texts": c.texts[:12],
            "buttons": sorted(buttons, key=lambda b: order.get(b["role"], 1)),
            "scrim": c.scrim,
            "score": score,
            "features": {k: round(v, 3) for k, v in feats.items() if v},
            "lexicon_hits": sorted(hits),
            "dismiss_hint": _dismiss_hint(c.kind, roles, c.texts, [b["label"] for b in buttons]),
            # a page that asks for input (a code, a form) wants the user's own answer: no
            # recovery taps its way on
            "asks_input": c.kind in ("takeover", "flow") and any(obs.elements[j].editable for j in c.members
                                                                    if 0 <= j < len(obs.elements)),
            "element_index": c.index,
        }

    def _learned_roles(self, c: Candidate, buttons: list[dict[str, Any]]) -> list[str]:
        """The control model's word on each button (in place): ``dismiss_p``; a control of no
        known role that it finds likely enough to close the overlay is a (learned) dismiss; one
        the vocabulary calls dismiss but it finds unlikely is not tapped as one. Engage and
        destructive controls stay what the vocabulary says, and a sign-in control is never
        learnt as a dismiss: the model never makes them taps."""
        model = self.screen_model
        overlay = {"kind": c.kind, "bounds": list(c.bounds)}
        probs = model.control_probabilities(overlay, buttons)
        for b, p in zip(buttons, probs):
            b["dismiss_p"] = round(p, 4)
            if b["role"] == "dismiss" and p < model.control_veto:
                b["role"], b["learned"] = "neutral", True
        # the model fills in a way out only where the vocabulary knows none: beside a known
        # dismiss (a carousel's Skip) a learnt one is a second guess the guard would fall back
        # to (its Next, which pages on), so none is learnt there
        # a carousel's controls page through it (Next, its arrows): its way out is a Skip or Done the
        # vocabulary knows, and its Next is labelled engage as often as dismiss
        known = any(b["role"] == "dismiss" for b in buttons) or "carousel" in c.features
        for b, p in zip(buttons, probs):
            # signing in is the user's call, whatever the model learnt of a wall's one way on
            if not known and b["role"] in ("neutral", "acknowledge") and p >= model.control_threshold \
                    and not names_sign_in(b.get("label") or ""):
                b["role"], b["learned"] = "dismiss", True
        return [b["role"] for b in buttons]

    def _held(self, rule: Finding, model: Finding, held: list[str], why: str) -> Finding:
        """The model's "interference" kept as uncertain: logged and billed, never acted on."""
        return Finding(diagnoser=self.name, problem=False, verdict="uncertain", confidence=rule.confidence,
                       evidence=model.evidence + [why], tier=model.tier, cost=model.cost,
                       details={**rule.details, "held": held})

    @staticmethod
    def _brief(x: tuple[float, Candidate, dict[str, float], dict[str, float]]) -> dict[str, Any]:
        return {"kind": x[1].kind, "package": x[1].package, "title": x[1].title, "score": x[0]}

    # -- the model tier -----------------------------------------------------------------
    def from_judgment(self, judgment: Any, cost: Cost) -> Finding:
        """Read the shared VLM judgment's ``interference_present`` as this diagnoser's finding.

        Args:
            judgment: the step's :class:`diagnosers.judgment.Judgment` (or its dict).
            cost: what the judgment cost.

        Returns:
            The finding: true (a problem) or false.
        """
        j = as_judgment(judgment)
        v = bool(j.interference_present)
        return model_finding(self.name, "true" if v else "false", v, j, cost, "interference_present")

    def merge(self, rule: Finding, model: Finding) -> Finding:
        """The model decides whether an overlay is there; the overlay the rules located
        (bounds, buttons, roles) is kept for the dismiss-interference recovery.

        The model does not overrule what the rules know of the task itself: a dialog the
        goal needs (the location a "near me" goal asks for) or that the agent's own last
        tap opened is the task's; a model calling it interference is held as uncertain
        and logged, never dismissed (declining it breaks the task). Nor is the verdict of
        a model that called a plain home screen interference when probed (``cascade.probe``)."""
        held = [k for k in TASK_OWN_FEATURES if k in (rule.details.get("features") or {})]
        if model.problem and held and rule.verdict != "true":
            why = " and ".join(TASK_OWN_FEATURES[k] for k in held)
            return self._held(rule, model, held, f"the model calls it interference, but {why}: not acted on")
        probe = getattr(self.judge, "interference_trusted", None)
        if model.problem and rule.verdict != "true" and probe is not None:
            trusted, cost = probe()  # once per endpoint and model: does it tell a home screen from a pop-up?
            model.cost = model.cost + cost
            if trusted is False:
                return self._held(rule, model, ["model_failed_probe"], "the model called a plain home screen "
                                  "interference when probed (cascade.probe): its verdict is logged, not acted on")
        return _located(rule, model)

    def locate(self, ctx: DiagnosisContext, model: Finding) -> Finding:
        """The model alone decides (the paper's diagnoser); when it sees interference, the
        overlay the rules locate on the same screen (its kind, bounds, buttons and their
        roles, how to leave it) goes with its verdict, so that the recovery waits out an
        ANR, reports a lock screen and taps the overlay's own decline, rather than reading
        the whole screen's controls and pressing Back."""
        if not model.problem:
            return model
        return _located(self._sourced(self.rules(ctx), ctx), model)


def _located(rule: Finding, model: Finding) -> Finding:
    """``model`` with the overlay ``rule`` located, when the model sees interference and
    the rules located one (their verdict aside)."""
    if model.problem and rule.details.get("buttons") is not None:
        model.details = {**rule.details, **model.details}
    return model


def _unlearned(details: dict[str, Any]) -> dict[str, Any]:
    """``details`` with the controls the control model learnt as dismisses back to neutral (and
    the hint that follows): where the screen model alone finds a pop-up, two guesses would make
    one tap."""
    buttons = [({**b, "role": "neutral", "learned": False} if b.get("learned") and b["role"] == "dismiss" else b)
               for b in details.get("buttons") or []]
    if buttons == (details.get("buttons") or []):
        return details
    hint = _dismiss_hint(details.get("kind") or "", [b["role"] for b in buttons], details.get("texts") or [],
                         [b.get("label") or "" for b in buttons])
    return {**details, "buttons": buttons, "dismiss_hint": hint}


def _requires_update(texts: list[str]) -> bool:
    phrases = knowledge().required_update_phrases
    return any(p in t for t in map(norm, texts) for p in phrases)


def _revealed(before: Observation, after: Observation) -> bool:
    """Most labelled nodes of ``after`` were already on ``before`` (under an overlay)."""
    a, b = screen_tree(after).labels, screen_tree(before).labels
    return bool(a) and len(a & b) / len(a) >= REVEALED_SHARE


def _inside(p: tuple[int, int], box: Any) -> bool:
    x1, y1, x2, y2 = box
    return x1 <= p[0] < x2 and y1 <= p[1] < y2


def _licence_gate(texts: list[str], labels: list[str]) -> bool:
    """A licence / terms gate whose decline quits the app: it names a licence or terms and
    offers a decline control (declining is destructive, agreeing is the user's call)."""
    k = knowledge()
    return (any(p in t for t in map(norm, texts) for p in k.licence_gate_phrases)
            and any(norm(x) in k.licence_decline_labels for x in labels))


def _dismiss_hint(kind: str, roles: list[str], texts: list[str], labels: Optional[list[str]] = None) -> str:
    """How the dismiss recovery should leave this overlay."""
    if kind == "lock_screen":
        return "report"  # blocking: a PIN cannot be dismissed
    if "dismiss" not in roles and _requires_update(texts):
        return "report"  # a required update: no way on but to install it, which is the user's call
    if kind not in ("anr", "crash", "permission") and _licence_gate(texts, labels or []):
        return "report"  # a licence gate: declining quits the app, agreeing is the user's call
    if kind == "heads_up":
        return "swipe_up"
    return "button" if "dismiss" in roles else "back"
