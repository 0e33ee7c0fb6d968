"""Overlay candidates of one screen: windows and dialog-like containers that may
be interruptions, with their title, buttons (and a role guess for each) and a
structural score. The context-dependent part of the score (foreign package, the
agent's own last action, the goal) is added by the interference diagnoser.

Everything here reads only what a real ``uiautomator dump`` reports: packages,
classes, resource ids, bounds and text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple, Optional

from diagnosers.signals.cache import cached
from diagnosers.signals.data import builtin
from diagnosers.signals.intents import dialog_intents
from diagnosers.signals.lexicon import Lexicon
from diagnosers.signals.system import (interrupter_kind, is_app_package, is_launcher, is_systemui, knowledge, package_of,
                                      short_id)
from diagnosers.signals.tree import ScreenTree, foreground_package, screen_tree
from ttir.core.diagnosis import InterferenceKind
from ttir.core.lexicon import norm, resolve_roles, vocabulary
from ttir.core.types import Bounds, Observation, UIElement

# structural evidence (added to the lexicon score; see InterferenceConfig.min_score)
W_SYSTEM_SIGNATURE = 0.7  # permission controller / "isn't responding" ids
W_INTERRUPTER_PACKAGE = 0.5  # Play Store update sheet, system update, package "android"
W_SYSTEMUI_WINDOW = 0.45  # a system UI window that is neither bar, shade nor keyboard
W_HEADS_UP = 0.45
W_DIALOG = 0.2  # a dialog / sheet / popup container, or an extra window of the app
W_GATE_SHAPE = 0.15  # the app's page has few controls and one wide way on near the bottom (see gates.yaml)
W_FORWARD = 0.1  # ... labelled like a gate's way on (Next, Skip, Agree, Get started)
W_CAROUSEL = 0.35  # ... or it is a carousel of pages with indicator dots (onboarding)
W_GATE_IDS = 0.3  # ... with onboarding / consent / guide / paywall ids
W_BARE_PAGE = 0.15  # ... or a bare page (gates.yaml: bare_page_controls), none a known way on: with the shape, uncertain
BARE_PAGE = "bare_page"  # that feature: such a page scores at most uncertain (diagnosers/interference.py)
W_SIGN_IN_WALL = 0.45  # ... that asks to sign in (a password field, Sign in / Create account) before any content
W_AD_ACTIVITY = 0.3  # the foreground activity is an ad SDK's full-screen activity
W_COACH_MARK = 0.5  # a coach-mark library's overlay, by the ids it inflates (system.yaml: coach_mark_ids)
W_SCRIM = 0.05
W_DISMISS_BUTTON = 0.1  # a decline button next to interruption wording
LEXICON_CAP = 0.45
FULL_SCREEN_SHARE = 0.8  # of the screen's area: a window this large is an activity, not a dialog
MENU_ROWS = 3  # labelled entries of one list that make a page a menu
SIGN_IN_MIN_WIDTH = 0.3  # share of the screen's width of a wall's longer-labelled sign-in buttons
SIGN_IN_LABEL_MAX = 48  # longer than a control's label: a sentence about signing in, not a way to


@dataclass
class Button:
    label: str
    bounds: Bounds
    resource_id: str
    index: int

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return ((x1 + x2) // 2, (y1 + y2) // 2)

    def to_dict(self, role: str = "neutral") -> dict[str, Any]:
        return {"label": self.label, "role": role, "bounds": list(self.bounds), "center": list(self.center),
                "resource_id": self.resource_id, "index": self.index,
                "forward": _is_forward(self.label, gates().forward, self.resource_id),
                "next_page": _turns_page(self.label), "skip": norm(self.label) in gates().skip}


@dataclass
class Candidate:
    """A possible interruption on screen."""

    index: int  # element index of the container
    kind: InterferenceKind
    package: str
    bounds: Bounds
    is_window: bool  # a whole window root (vs a container inside the app's window)
    members: list[int] = field(default_factory=list)
    title: str = ""
    texts: list[str] = field(default_factory=list)
    buttons: list[Button] = field(default_factory=list)
    scrim: bool = False
    features: dict[str, float] = field(default_factory=dict)

    @property
    def structural_score(self) -> float:
        return sum(self.features.values())

    def signature(self) -> tuple:
        return (self.kind, self.package, self.title, tuple(b.label for b in self.buttons))


def _label(obs: Observation, tree: ScreenTree, i: int) -> str:
    e = obs.elements[i]
    if e.text or e.content_desc:
        return e.text or e.content_desc
    for j in tree.subtree(i)[1:]:
        c = obs.elements[j]
        if c.text or c.content_desc:
            return c.text or c.content_desc
    return short_id(e.resource_id).replace("_", " ")


def _buttons(obs: Observation, tree: ScreenTree, members: list[int]) -> list[Button]:
    taken: set[int] = set()
    out: list[Button] = []
    for i in members:
        e = obs.elements[i]
        if i in taken or not (e.clickable or "button" in e.class_name.lower()) or not e.enabled:
            continue
        if e.editable or e.scrollable:
            continue
        sub = tree.subtree(i)
        if any(obs.elements[j].clickable and obs.elements[j].enabled for j in sub[1:]):
            continue  # a clickable container (a whole dialog that closes on a tap): its buttons are inside
        taken.update(sub)
        label = _label(obs, tree, i)
        if label:
            out.append(Button(label=label, bounds=e.bounds, resource_id=e.resource_id, index=i))
    return out


def button_roles(buttons: list[Button], lexicon: Lexicon, kind: str = "", texts: Optional[list[str]] = None) -> list[str]:
    """A role per button (dismiss / engage / destructive / neutral) from the shared
    vocabulary: its label, else Android's own id (permission and "isn't responding"
    buttons, an AlertDialog's button1/2/3). "OK"-like labels dismiss when they are the
    only way out and engage when a decline exists or ``texts`` ask the user to agree
    (OK is consent there); on a heads-up banner an unnamed control (the banner itself)
    opens the notification."""
    v = vocabulary()
    named = [lexicon.role(b.label) for b in buttons]
    # a positive button (button1) under a label no phrase knows has no known role: its id alone does not make it a way out
    raw = [v.control_role(b.label, b.resource_id) for b in buttons]
    if any(r in ("acknowledge", "dismiss") for r in named):
        # beside a named OK or Cancel, an AlertDialog's positive button ("Salvar no celular") is the dialog's action
        raw = ["engage" if n is None and v.id_role(b.resource_id) == "acknowledge" else r
               for n, r, b in zip(named, raw, buttons)]
    if kind == "crash":  # the app already stopped: closing it destroys nothing
        raw = ["dismiss" if r == "destructive" else r for r in raw]
    agree = bool(texts) and "acknowledge" in raw and v.asks_agreement(texts or [])
    return resolve_roles(raw, unnamed="engage" if kind == "heads_up" else "neutral", asks_agreement=agree)


def _title(obs: Observation, members: list[int]) -> str:
    for i in members:
        if short_id(obs.elements[i].resource_id) in ("alerttitle", "title", "permission_message", "alert_title"):
            if obs.elements[i].text:
                return obs.elements[i].text
    for i in members:
        e = obs.elements[i]
        if e.text and not e.clickable:
            return e.text
    return next((obs.elements[i].text or obs.elements[i].content_desc for i in members
                 if obs.elements[i].text or obs.elements[i].content_desc), "")


def _dialog_like(e: UIElement) -> bool:
    k = knowledge()
    sid = short_id(e.resource_id)
    cls = e.class_name.lower().rsplit(".", 1)[-1]
    if sid and (sid in k.dialog_id_hints or any(h in sid for h in k.dialog_id_hints if len(h) > 4)):
        return True
    if norm(e.content_desc) in k.dialog_class_hints:
        return True  # frameworks that name the pane ("Dialog") where ids are obfuscated
    return any(h in cls for h in k.dialog_class_hints)


def _dialog_box(obs: Observation, tree: ScreenTree, j: int) -> bool:
    """A dialog's shape, whatever its ids: a centred box narrower than the screen and
    at most 70 % of its height, with text and one to three buttons."""
    w, h = tree.size
    x1, y1, x2, y2 = obs.elements[j].bounds
    if not (0.5 * w <= x2 - x1 <= 0.94 * w) or y2 - y1 > 0.7 * h or abs((x1 + x2) / 2 - w / 2) > 0.05 * w:
        return False
    sub = tree.subtree(j)
    buttons = [k for k in sub[1:] if obs.elements[k].clickable]
    return 1 <= len(buttons) <= 3 and any(obs.elements[k].text for k in sub)


def _floating_box(obs: Observation, tree: ScreenTree, j: int) -> bool:
    """A dialog box held by a full-screen backdrop that catches taps (the scrim that closes it)."""
    if not _dialog_box(obs, tree, j):
        return False
    w, h = tree.size
    p, depth = obs.elements[j].parent, 0
    while p is not None and depth < 3:
        a = obs.elements[p]
        if a.clickable and a.area >= 0.85 * w * h:
            return True
        p, depth = a.parent, depth + 1
    return False


def _on_overlay_layer(obs: Observation, tree: ScreenTree, j: int) -> bool:
    """A dialog box drawn on a layer of its own over the page (React Native's absolutely
    positioned modals): the only child of a full-screen layer drawn after the page it covers."""
    w, h = tree.size
    layer = obs.elements[j].parent
    if layer is None or tree.children.get(layer) != [j] or obs.elements[layer].area < 0.85 * w * h:
        return False
    holder = obs.elements[layer].parent
    if holder is None or tree.children.get(holder, [layer]).index(layer) == 0:
        return False  # nothing drawn under it
    return _dialog_box(obs, tree, j)


def _has_scrim(obs: Observation, tree: ScreenTree, container: int, root: int) -> bool:
    """A dimmed backdrop: a scrim id, a full-screen text-less sibling before the
    container, or a full-screen window whose content sits in a smaller box."""
    k = knowledge()
    w, h = tree.size
    full = 0.85 * w * h
    members = tree.subtree(root)
    for j in members:
        e = obs.elements[j]
        if short_id(e.resource_id) in k.scrim_ids:
            return True
    c = obs.elements[container]
    parent = c.parent
    if parent is not None:
        for s in tree.children.get(parent, []):
            if s == container:
                break
            se = obs.elements[s]
            if se.area >= full and not se.text and not tree.children.get(s):
                return True
    r = obs.elements[root]
    return r.area >= full and c.area < 0.6 * w * h


def _texts(obs: Observation, members: list[int]) -> list[str]:
    """The texts and content descriptions of ``members``, in tree order."""
    return [s for j in members for s in (obs.elements[j].text, obs.elements[j].content_desc) if s]


def _make(obs: Observation, tree: ScreenTree, i: int, kind: str, is_window: bool, root: int) -> Candidate:
    e = obs.elements[i]
    members = tree.subtree(i)
    texts = _texts(obs, members)
    # the visible box: the smallest descendant holding all texts, for a full-screen window
    bounds = e.bounds
    text_nodes = [j for j in members if obs.elements[j].text or obs.elements[j].content_desc or obs.elements[j].clickable]
    if text_nodes and e.area >= 0.85 * tree.size[0] * tree.size[1]:
        xs1 = min(obs.elements[j].bounds[0] for j in text_nodes)
        ys1 = min(obs.elements[j].bounds[1] for j in text_nodes)
        xs2 = max(obs.elements[j].bounds[2] for j in text_nodes)
        ys2 = max(obs.elements[j].bounds[3] for j in text_nodes)
        inner = [j for j in members[1:] if obs.elements[j].bounds[0] <= xs1 and obs.elements[j].bounds[1] <= ys1
                 and obs.elements[j].bounds[2] >= xs2 and obs.elements[j].bounds[3] >= ys2]
        bounds = obs.elements[inner[-1]].bounds if inner else (xs1, ys1, xs2, ys2)
    c = Candidate(index=i, kind=kind, package=package_of(e.package), bounds=bounds, is_window=is_window,
                  members=members, texts=texts, title=_title(obs, members))
    c.buttons = _buttons(obs, tree, members)
    c.scrim = _has_scrim(obs, tree, i, root) if kind not in ("heads_up", "shade") else False
    return c


def make_candidate(obs: Observation, index: int, kind: str, is_window: bool) -> Candidate:
    """A candidate for any container of ``obs`` (used for follow-up screens of a flow)."""
    tree = screen_tree(obs)
    root = tree.root_of[index] if tree.root_of else index
    return _make(obs, tree, index, kind, is_window, root)


def _system_kind(obs: Observation, members: list[int]) -> Optional[str]:
    """permission / anr / crash from Android's own ids, or from the framework dialog's
    wording (old ANR dialogs have no ids: "… isn't responding. Do you want to close it?").
    An "isn't responding" dialog offers Wait; a crash dialog ("has stopped", "keeps
    stopping") does not: the app is already gone."""
    k = knowledge()
    kinds = {k.system_dialog_ids.get(short_id(obs.elements[j].resource_id)) for j in members} - {None}
    if "permission" in kinds:
        return "permission"
    other = sorted(kinds - {"anr"})
    if other:
        return other[0]  # a system dialog or a development build's error screen, by its ids
    texts = [norm(obs.elements[j].text or obs.elements[j].content_desc) for j in members]
    anr_words = any(p in t for t in texts for p in k.anr_phrases)
    crash_words = any(p in t for t in texts for p in k.crash_phrases)
    if "anr" in kinds:
        has_wait = any(short_id(obs.elements[j].resource_id) == "aerr_wait" for j in members)
        return "anr" if has_wait or (anr_words and not crash_words) else "crash"
    if package_of(obs.elements[members[0]].package) == "android":
        if anr_words:
            return "anr"
        if crash_words:
            return "crash"
    return None


class OverlayScan(NamedTuple):
    """What the tree shows: its overlay candidates, and the app's page when the rules
    cannot tell whether it is a gate (:data:`BARE_PAGE`), which no other check sees."""

    candidates: list[Candidate]
    bare_page: Optional[Candidate]


def _scan(obs: Observation) -> OverlayScan:
    tree = screen_tree(obs)
    if not tree.has_tree:
        return OverlayScan([], None)
    out: list[Candidate] = []
    bare: Optional[Candidate] = None
    main = tree.main_root()
    foreground = foreground_package(obs)  # the Files app is DocumentsUI too: its own pop-ups are candidates
    for r in tree.roots:
        if r in tree.chrome_roots or r in tree.ime_roots:
            continue
        e = obs.elements[r]
        pkg = package_of(e.package)
        if r in tree.shade_roots:
            out.append(_make(obs, tree, r, "shade", True, r))
            continue
        if r in tree.lock_roots:
            c = _make(obs, tree, r, "lock_screen", True, r)
            c.features["keyguard"] = W_SYSTEM_SIGNATURE
            out.append(c)
            continue
        if r in tree.heads_up_roots:
            c = _make(obs, tree, r, "heads_up", True, r)
            c.features["heads_up"] = W_HEADS_UP
            out.append(c)
            continue
        members = tree.subtree(r)
        sys_kind = _system_kind(obs, members)
        ikind = interrupter_kind(pkg)
        if "permission" in (sys_kind, ikind) and _navigated_page(obs, tree, e, members):
            continue  # the permission controller's settings pages (its ids, under an up arrow): content, not a prompt
        if sys_kind is None and ((pkg in knowledge().task_surface_packages and pkg != foreground)
                                 or _has_any_id(obs, members, knowledge().task_surface_ids)):
            continue  # a chooser, an autofill drop-down, a picker serving the app: what the user's own action raised
        if sys_kind is not None:
            c = _make(obs, tree, r, sys_kind, True, r)
            c.features["system_signature"] = W_SYSTEM_SIGNATURE
            out.append(c)
            continue
        if ikind is not None and not _navigated_page(obs, tree, e, members):
            c = _make(obs, tree, r, ikind, True, r)
            c.features["interrupter_package"] = W_INTERRUPTER_PACKAGE
            out.append(c)
            continue
        if is_systemui(pkg):
            c = _make(obs, tree, r, "systemui", True, r)
            c.features["systemui_window"] = W_SYSTEMUI_WINDOW
            if any(_dialog_like(obs.elements[j]) for j in members):
                c.features["dialog_container"] = W_DIALOG  # a system dialog (alertTitle, buttonPanel)
            out.append(c)
            continue
        # the one window of a focus-only dump may be another app's dialog over the app in front
        # (a full-screen one is an activity the app opened for the user: a picker, a browser)
        over_foreground = (r == main and is_app_package(pkg) and is_app_package(foreground) and pkg != foreground
                           and e.area < FULL_SCREEN_SHARE * tree.size[0] * tree.size[1])
        if (r != main or over_foreground) and not is_launcher(pkg):
            # another window over the main one: the app's own dialog window, or another app's
            c = _make(obs, tree, r, "window", True, r)
            c.features["extra_window"] = W_DIALOG
            out.append(c)
            continue
        if r == main and _dialog_sized(e, tree.size) and not is_launcher(pkg):
            # the app's only window is a dialog: a focus-only dump (old uiautomator versions
            # dump just the focused window) or an app that shows a dialog over nothing of its own
            c = _make(obs, tree, r, "window", True, r)
            c.features["dialog_window"] = W_DIALOG
            out.append(c)
            continue
        # inside the main window: a coach mark's overlay, dialog-like containers (outermost only)
        inside: set[int] = set()
        for j in _coach_marks(obs, tree, members):
            c = _make(obs, tree, j, "dialog", False, r)
            c.features["coach_mark"] = W_COACH_MARK
            out.append(c)
            inside.update(c.members)
        for j in members[1:]:
            if j in inside:
                continue
            layered = _on_overlay_layer(obs, tree, j)
            if _list_ancestor(obs, j, r) is not None and not layered:
                continue  # a card inside a scrolling list (an in-feed banner) scrolls away with it
            if tree.children.get(j) and (_dialog_like(obs.elements[j]) or _floating_box(obs, tree, j) or layered):
                c = _make(obs, tree, j, "dialog", False, r)
                c.features["dialog_container"] = W_DIALOG
                out.append(c)
                inside.update(c.members)
        if r == main and not is_launcher(pkg):  # the home screen's pages and dots are no app's gate
            takeover = _takeover(obs, tree, r, members, inside)
            if takeover is not None and BARE_PAGE in takeover.features:
                bare = takeover
            elif takeover is not None:
                out.append(takeover)
    for c in out:
        if c.scrim:
            c.features["scrim"] = W_SCRIM
    return OverlayScan(out, bare)


def _coach_marks(obs: Observation, tree: ScreenTree, members: list[int]) -> list[int]:
    """The containers of coach-mark overlays in ``members``: per library, the lowest node
    that holds every id the library inflates (MaterialShowcaseView's content box around
    its text and "Got it")."""
    out: list[int] = []
    for ids in knowledge().coach_mark_ids.values():
        found = {}
        for j in members:
            sid = short_id(obs.elements[j].resource_id)
            if sid in ids and sid not in found:
                found[sid] = j
        if not ids or set(found) != set(ids):
            continue
        nodes = list(found.values())
        # the nearest node above them all (a lone button's overlay is its parent)
        common = _ancestors(obs, nodes[0])[1:]
        for j in nodes[1:]:
            common = [a for a in common if a in _ancestors(obs, j)]
        box = common[0] if common else None
        if box is not None and box in members and tree.children.get(box) and box not in out:
            out.append(box)
    return out


def _ancestors(obs: Observation, j: int) -> list[int]:
    """``j`` and its ancestors, nearest first."""
    chain: list[int] = []
    p: Optional[int] = j
    while p is not None:
        chain.append(p)
        p = obs.elements[p].parent
    return chain


def _has_any_id(obs: Observation, members: list[int], ids: frozenset[str]) -> bool:
    return any(short_id(obs.elements[j].resource_id) in ids for j in members)


def _dialog_sized(e: UIElement, size: tuple[int, int]) -> bool:
    """A window that does not fill the screen the way an activity does: narrower than
    the screen (a centred dialog) or a full-width box that starts low (a bottom sheet).
    A full-width window from the top (an activity over a keyboard) is not a dialog."""
    w, h = size
    x1, y1, x2, y2 = e.bounds
    if (x2 - x1) * (y2 - y1) >= 0.8 * w * h:
        return False
    narrower = x1 >= 0.02 * w and x2 <= 0.98 * w
    starts_low = y1 >= 0.25 * h
    return narrower or starts_low


def _ad_activity(obs: Observation) -> bool:
    act = (obs.activity or "").lower()
    return bool(act) and any(h in act for h in knowledge().ad_activity_hints)


def _takeover(obs: Observation, tree: ScreenTree, root: int, members: list[int], inside: set[int]) -> Optional[Candidate]:
    """The app's whole page when it is a gate before its content (onboarding, consent,
    a first-run picker, a survey gate, a paywall), or the window of an ad activity.

    A page has no window or container of its own, so its shape has to carry it: few
    controls and one wide way on near the bottom (``data/gates.yaml``); ids, words and
    a page carousel add to it. An ordinary page with many controls is never a gate,
    whatever its words."""
    ad = _ad_activity(obs)
    gate = _gate_evidence(obs, tree, root, members, inside)
    if ad and gate is not None and BARE_PAGE in gate:
        gate = None  # an ad activity's page is told by its activity, not left to the model
    if gate is None and not ad:
        return None
    c = _make(obs, tree, root, "takeover", True, root)
    if inside:
        # a dialog drawn inside the page is a candidate of its own: its words, ids and
        # buttons are not the page's (a promo sheet over a feed does not make the feed a gate)
        c.members = [j for j in c.members if j not in inside]
        c.texts = _texts(obs, c.members)
        c.buttons = [b for b in c.buttons if b.index not in inside]
    if gate is not None:
        c.features.update(gate)
    if ad:
        c.features["ad_activity"] = W_AD_ACTIVITY
    return c


def _gate_evidence(obs: Observation, tree: ScreenTree, root: int, members: list[int],
                   inside: set[int]) -> Optional[dict[str, float]]:
    g = gates()
    w, h = tree.size
    controls: set[object] = set()
    wide_forward = low_forward = lower = False
    passwords = 0
    sign_in_controls: set[str] = set()
    list_rows: dict[int, int] = {}  # list -> its labelled entries that do not sign in
    small: list[int] = []
    for j in members:
        if j in inside:
            continue
        e = obs.elements[j]
        if e.password and e.editable:
            passwords += 1
        if not (e.clickable or e.checkable or e.editable or e.long_clickable) or e.area <= 0:
            continue
        if not e.editable and any(obs.elements[k].clickable or obs.elements[k].editable for k in tree.subtree(j)[1:]):
            continue  # a clickable container (a form's card, a field's frame): its controls count, not it
        if e.area <= 0.003 * w * h and not (e.text or e.content_desc):
            small.append(j)
            continue
        list_parent = _list_ancestor(obs, j, root)
        controls.add(("list", list_parent) if list_parent is not None else j)
        x1, y1, x2, y2 = e.bounds
        lab = _label(obs, tree, j)
        key = norm(lab)
        signs_in = _names_sign_in(lab, g.sign_in)  # whatever the control's width
        if list_parent is not None and _is_list(obs.elements[list_parent]) and lab and not signs_in:
            list_rows[list_parent] = list_rows.get(list_parent, 0) + 1
        lower = lower or y1 >= 0.55 * h
        low = y1 >= 0.55 * h and _is_forward(lab, g.forward, e.resource_id)
        if (low and (x2 - x1) >= 0.4 * w) or key in g.skip:
            wide_forward = True  # a wide way on near the bottom; "Skip" anywhere: what onboarding pages offer
        elif low:
            low_forward = True
        if signs_in and ((x2 - x1) >= SIGN_IN_MIN_WIDTH * w or key in g.sign_in):  # see _names_sign_in(wide=)
            sign_in_controls.add(key)
    # a sign-in wall: two of a password field, sign-in controls, sign-in wording
    texts = [obs.elements[j].text or obs.elements[j].content_desc for j in members if j not in inside]
    fields = sum(1 for j in members if j not in inside and obs.elements[j].editable)
    # a page that also lists entries to go to (an account menu: Settings, Help …) is content
    # with a sign-in card, not a wall before the content
    menu = max(list_rows.values(), default=0) >= MENU_ROWS
    # two password fields and no way in: a password being set (a vault's master password, a
    # change-password form), not a wall before the content
    setting_password = passwords >= 2 and not sign_in_controls
    sign_in = (fields <= 3 and not menu and not setting_password
               and bool(passwords) + len(sign_in_controls) + ("sign_in" in dialog_intents(texts)) >= 2)
    if _has_navigation_bar(obs, tree, members, inside) or (not sign_in and _has_titled_toolbar(obs, tree, members)):
        return None  # the app's tab bar or titled toolbar: this is its content, not a gate before it
    dots = _indicator_row(obs, small) or _indicator_by_id(obs, members, inside) or _bullet_row(obs, members, inside)
    if dots:
        controls.add("dots")
    if len(controls) > g.max_controls or not controls:
        return None
    carousel = dots and any("viewpager" in obs.elements[j].class_name.lower()
                            or "pager" in short_id(obs.elements[j].resource_id) for j in members)
    # a page whose one control is a way on near the bottom (Welcome … [Continue]) is as much a gate
    wide_forward = wide_forward or (low_forward and len(controls) == 1)
    if not (wide_forward or carousel or sign_in):
        if len(controls) <= g.bare_page_controls and lower and not fields:
            # a bare page of the app whose controls sit low, as a gate's do, but none a way on the rules know
            # (Flutter's "СТАРТУЕМ", a notice page): a gate as often as content. Never more than uncertain, so
            # that the cascade asks the model; a form being filled is the user's own page
            return {"gate_shape": W_GATE_SHAPE, BARE_PAGE: W_BARE_PAGE}
        return None
    feats = {"gate_shape": W_GATE_SHAPE}
    if wide_forward:
        feats["forward_button"] = W_FORWARD
    if carousel:
        feats["carousel"] = W_CAROUSEL
    if sign_in:
        feats["sign_in_wall"] = W_SIGN_IN_WALL  # the goal asking to sign in makes it the task's own (intents)
    ids = {short_id(obs.elements[j].resource_id).replace("_", "") for j in members
           if j not in inside and obs.elements[j].resource_id}
    if any(h.replace("_", "") in i for i in ids for h in g.id_hints):
        feats["gate_ids"] = W_GATE_IDS
    return feats


def _id_and_class(e: UIElement) -> str:
    """A node's short resource id and class name, lower case (what the hint lists match)."""
    return (short_id(e.resource_id) + " " + e.class_name.rsplit(".", 1)[-1]).lower()


def _has_navigation_bar(obs: Observation, tree: ScreenTree, members: list[int], inside: set[int]) -> bool:
    """A tab bar / bottom navigation: a container with a navigation id or class in the
    bottom fifth of the screen holding three or more clickable items side by side."""
    g = gates()
    w, h = tree.size
    for j in members:
        if j in inside:
            continue
        e = obs.elements[j]
        name = _id_and_class(e)
        if e.bounds[1] < 0.8 * h or (e.bounds[2] - e.bounds[0]) < 0.6 * w or not any(k in name for k in g.navigation_hints):
            continue
        items = [k for k in tree.subtree(j)[1:] if obs.elements[k].clickable and obs.elements[k].area > 0]
        if len({obs.elements[k].bounds[0] // max(1, w // 12) for k in items}) >= 3:
            return True
    return _has_tab_row(obs, tree, members, inside)


def _has_tab_row(obs: Observation, tree: ScreenTree, members: list[int], inside: set[int]) -> bool:
    """A tab bar without a telling id (Flutter, Compose): three or more clickable items
    of one height and similar widths side by side in the bottom fifth, one of them
    selected. Onboarding pages put buttons there, but none of them is "selected"."""
    w, h = tree.size
    # the selected tab may not be clickable (it is where the user already is)
    row = [obs.elements[j] for j in members if j not in inside and (obs.elements[j].clickable or obs.elements[j].selected)
           and obs.elements[j].bounds[1] >= 0.8 * h and 0 < obs.elements[j].bounds[2] - obs.elements[j].bounds[0] < 0.4 * w]
    for e in row:
        if not e.selected:
            continue
        x1, y1, x2, y2 = e.bounds
        peers = [o for o in row if abs(o.bounds[1] - y1) <= 0.01 * h and abs(o.bounds[3] - y2) <= 0.01 * h
                 and 0.75 <= (o.bounds[2] - o.bounds[0]) / (x2 - x1) <= 1.33]
        if len({o.bounds[0] for o in peers}) >= 3 and max(o.bounds[2] for o in peers) - min(o.bounds[0] for o in peers) >= 0.6 * w:
            return True
    return False


def _has_titled_toolbar(obs: Observation, tree: ScreenTree, members: list[int]) -> bool:
    """A toolbar across the top of the page holding its title text: the app's own chrome
    (a settings or content page), which onboarding pages and paywalls do not have."""
    g = gates()
    w, h = tree.size
    for j in members:
        e = obs.elements[j]
        name = _id_and_class(e)
        if e.bounds[3] > 0.2 * h or (e.bounds[2] - e.bounds[0]) < 0.8 * w or not any(k in name for k in g.toolbar_hints):
            continue
        titles = [obs.elements[k].text for k in tree.subtree(j)[1:] if obs.elements[k].text and not obs.elements[k].clickable]
        if titles and not any(norm(t).startswith(g.welcome_titles) for t in titles):
            return True  # a "Welcome to …" title is the gate's own, not a content page's
    return False


def _navigated_page(obs: Observation, tree: ScreenTree, root: UIElement, members: list[int]) -> bool:
    """A full-screen page with an up arrow: a page the user navigated into (Safety Center
    of the permission controller, a Play Store page), not a prompt."""
    w, h = tree.size
    x1, y1, x2, y2 = root.bounds
    return (x2 - x1) * (y2 - y1) >= 0.8 * w * h and _has_up_arrow(obs, tree, members)


def _has_up_arrow(obs: Observation, tree: ScreenTree, members: list[int]) -> bool:
    """An up / back arrow in the top-left corner (in a toolbar, or labelled so): the page
    sits inside the app's navigation. A Close (×) there is a prompt's, not a page's."""
    w, h = tree.size
    g = gates()
    for j in members:
        e = obs.elements[j]
        if not e.clickable or e.bounds[0] > 0.05 * w or e.bounds[2] > 0.2 * w or e.bounds[3] > 0.15 * h:
            continue
        lab = e.text or e.content_desc
        if vocabulary().phrase_role(lab) == "dismiss":
            continue
        if norm(lab) in g.up_labels:
            return True
        p = e.parent
        if p is not None and any(k in _id_and_class(obs.elements[p]) for k in g.toolbar_hints):
            return True
    return False


def _indicator_row(obs: Observation, small: list[int]) -> bool:
    """Page-indicator dots: three or more small nodes of one size side by side on one
    line, copies of one view (one class, one id or none) — a toolbar's row of icon
    buttons has an id per button (search, filter, messages) and is not a carousel's dots."""
    by_line: dict[tuple[int, int, str, str], list[int]] = {}
    for j in small:
        e = obs.elements[j]
        x1, y1, x2, y2 = e.bounds
        by_line.setdefault(((y1 + y2) // 8, (y2 - y1) // 4, e.class_name, e.resource_id), []).append(j)
    for row in by_line.values():
        if len(row) < 3:
            continue
        xs = sorted(obs.elements[j].bounds for j in row)
        widths = [b[2] - b[0] for b in xs]
        heights = [b[3] - b[1] for b in xs]
        gaps = [b[0] - a[2] for a, b in zip(xs, xs[1:])]
        round_ = all(0.5 * hh <= ww <= 2 * hh for ww, hh in zip(widths, heights))  # dots, not thin bars
        if round_ and max(widths) <= 2 * max(1, min(widths)) and all(0 <= gap <= 4 * max(widths) for gap in gaps):
            return True
    return False


def _indicator_by_id(obs: Observation, members: list[int], inside: set[int]) -> bool:
    """A page indicator that draws its dots itself (one view, no child per dot), told by its id."""
    hints = gates().indicator_ids
    return any(h in short_id(obs.elements[j].resource_id).lower().replace("_", "")
               for j in members if j not in inside and obs.elements[j].resource_id for h in hints)


def _bullet_row(obs: Observation, members: list[int], inside: set[int]) -> bool:
    """Page-indicator dots written as text: three or more texts that are each one bullet
    ("•", the dots of the widely copied intro-slider layout) on one line."""
    bullets = gates().indicator_bullets
    lines: dict[int, int] = {}
    for j in members:
        e = obs.elements[j]
        if j not in inside and (e.text or "").strip() in bullets:
            key = (e.bounds[1] + e.bounds[3]) // 16
            lines[key] = lines.get(key, 0) + 1
    return any(n >= 3 for n in lines.values())


def _list_ancestor(obs: Observation, j: int, root: int) -> Optional[int]:
    p = obs.elements[j].parent
    while p is not None and p != root:
        if obs.elements[p].scrollable or _is_list(obs.elements[p]):
            return p
        p = obs.elements[p].parent
    return None


def _is_list(e: UIElement) -> bool:
    """A list of entries (not a scrolling page such as a form in a ScrollView)."""
    cls = e.class_name.lower()
    return "recyclerview" in cls or "listview" in cls or "gridview" in cls


def names_sign_in(label: str) -> bool:
    """Whether a control's label signs in or up ("Sign in", "Log in with Facebook").

    Args:
        label: the control's label.

    Returns:
        True when the gate vocabulary (``data/gates.yaml``: ``sign_in``) names it a way to sign in.
    """
    return _names_sign_in(label, gates().sign_in)


def _names_sign_in(label: str, sign_in: frozenset[str], wide: bool = True) -> bool:
    """A control that signs in or up: its label is a sign-in phrase ("Log in", whatever its
    size), or a wide button's label starts or ends with one at a word boundary ("Log in with
    Facebook", "Already have an account? Log in.") — a small icon's longer description
    ("Sync (log in)" in a toolbar) names what it does, not a wall's way in."""
    lab = norm(label)
    if lab in sign_in:
        return True
    if not wide or len(lab) > SIGN_IN_LABEL_MAX:
        return False
    words = tuple(_words(lab))
    return any(p and (words[:len(p)] == p or words[-len(p):] == p) for p in _phrase_words(sign_in))


@lru_cache(maxsize=8)
def _phrase_words(phrases: frozenset[str]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(_words(p)) for p in phrases)


def _words(text: str) -> list[str]:
    return [w for w in _WORDS.split(text) if w]


_WORDS = re.compile(r"[\s?.!,:;/|()]+")


def _is_forward(label: str, forward: frozenset[str], resource_id: str = "") -> bool:
    """A gate's way on: Next / Skip / Agree … (also as the head of a longer label:
    "Start — 3 days free →"), or any dismiss control (Not now)."""
    v = vocabulary()
    lab = norm(label)
    return (lab in forward or _head(label) in forward or lab in gates().skip
            or v.control_role(label, resource_id) == "dismiss")


def _turns_page(label: str) -> bool:
    """A carousel's Next ("Next", "Next →"): it turns to the interruption's next page."""
    return _head(label) in gates().next_page


def _head(label: str) -> str:
    """A forward label's head: "Continue — free for 7 days" -> "continue"."""
    return _FORWARD_HEAD.split(norm(label), maxsplit=1)[0].strip()


_FORWARD_HEAD = re.compile(r"\s*[—–\-:,(→>›»▸▶]\s*")  # "Continue — free for 7 days", "Next →"


@dataclass(frozen=True)
class GateKnowledge:
    max_controls: int
    id_hints: tuple[str, ...]
    forward: frozenset[str]
    skip: frozenset[str]
    sign_in: frozenset[str]
    navigation_hints: tuple[str, ...] = ()
    toolbar_hints: tuple[str, ...] = ()
    up_labels: frozenset[str] = frozenset()
    next_page: frozenset[str] = frozenset()
    indicator_bullets: frozenset[str] = frozenset()
    indicator_ids: tuple[str, ...] = ()
    welcome_titles: tuple[str, ...] = ()
    bare_page_controls: int = 3


@lru_cache(maxsize=1)
def gates() -> GateKnowledge:
    data = builtin("gates")
    return GateKnowledge(max_controls=int(data.get("max_controls", 8)),
                         bare_page_controls=int(data.get("bare_page_controls", 3)),
                         id_hints=tuple(str(v).lower() for v in data.get("id_hints") or []),
                         forward=frozenset(norm(str(v)) for v in data.get("forward") or []),
                         skip=frozenset(norm(str(v)) for v in data.get("skip") or []),
                         sign_in=frozenset(norm(str(v)) for v in data.get("sign_in") or []),
                         navigation_hints=tuple(str(v).lower() for v in data.get("navigation_hints") or []),
                         toolbar_hints=tuple(str(v).lower() for v in data.get("toolbar_hints") or []),
                         up_labels=frozenset(norm(str(v)) for v in data.get("up_labels") or []),
                         next_page=frozenset(norm(str(v)) for v in data.get("next_page") or []),
                         indicator_ids=tuple(str(v).lower() for v in data.get("indicator_ids") or []),
                         welcome_titles=tuple(norm(str(v)) for v in data.get("welcome_titles") or []),
                         indicator_bullets=frozenset(str(v).strip() for v in data.get("indicator_bullets") or []))


scan_overlays = cached("overlays")(_scan)


def overlay_candidates(obs: Observation) -> list[Candidate]:
    """The possible interruptions on screen (cached per observation)."""
    return scan_overlays(obs).candidates


def bare_page(obs: Observation) -> Optional[Candidate]:
    """The app's page when the rules cannot tell a gate from content: only the
    interference diagnoser scores it, never above uncertain (the cascade asks the model)."""
    return scan_overlays(obs).bare_page


def score_text(c: Candidate, lexicon: Lexicon) -> tuple[float, dict[str, float]]:
    """Lexicon score of a candidate's text (capped), and the terms found."""
    hits = lexicon.hits(c.texts)
    return min(LEXICON_CAP, sum(hits.values())), hits


def progress_nodes(obs: Observation) -> list[int]:
    """Loading indicators: ProgressBar nodes or 'Loading…' descriptions."""
    k = knowledge()
    tree = screen_tree(obs)
    out = []
    for i in tree.content:
        e = obs.elements[i]
        cls = e.class_name.lower().rsplit(".", 1)[-1]
        label = (e.text or e.content_desc).lower()
        if cls in k.progress_classes or any(label.startswith(wd) for wd in k.progress_words):
            out.append(i)
    return out
