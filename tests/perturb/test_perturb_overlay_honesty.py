"""Honesty: nothing in an overlay's nodes marks it as injected. Its packages,
classes and resource ids are ones real Android UIs use, the dump has exactly the
device's attribute set, and no attribute says where it came from."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.support.overlay_helpers import ALL, act, find, foreign, make_env, open_contacts, raw, tap
from ttir.core.types import Observation, UIElement

APP = "com.google.android.contacts"
PACKAGES = {"com.android.systemui", "com.android.permissioncontroller", "com.android.vending", "android",
            "com.google.android.gms", APP}
CLASSES = {
    "android.widget.FrameLayout", "android.widget.LinearLayout", "android.widget.TextView", "android.widget.Button",
    "android.widget.ImageButton", "android.widget.ImageView", "android.widget.CheckBox", "android.widget.RadioButton",
    "android.widget.EditText", "android.widget.ProgressBar", "android.widget.RatingBar", "android.widget.ScrollView",
    "android.view.View", "android.view.ViewGroup", "com.facebook.shimmer.ShimmerFrameLayout",
    "androidx.recyclerview.widget.RecyclerView", "androidx.coordinatorlayout.widget.CoordinatorLayout",
}
TELLS = ("ttir", "inject", "overlay", "perturb", "fake", "synthetic", "mock", "simulat", "benchmark")
RID = re.compile(r"^(?P<pkg>[a-z][a-z0-9_]*(\.[a-z0-9_]+)*):id/[A-Za-z][A-Za-z0-9_]*$")


def _screens(name: str) -> list[tuple[Observation, Observation]]:
    """(shown, device) observation pairs covering the perturbation's screens."""
    out = []
    env, _ = make_env(name, seed=1)
    obs = open_contacts(env)
    for _ in range(4):
        out.append((obs, raw(env)))
        if name in ("execution_delay_loading", "execution_delay_frozen"):
            obs = tap(env, "Create contact") if find(obs, "Create contact") else act(env, "wait")
        else:
            obs = act(env, "wait")
    # walk into the first engage path of dialog overlays (flows are screens too)
    live = [o for o in env.overlays.active if hasattr(o, "page")]
    for _ in range(3):
        live = [o for o in env.overlays.active if hasattr(o, "page")]
        if not live:
            break
        page = live[0].page
        engage = next((b for b in page.buttons if b.role == "engage" and b.action.startswith(("flow:", "next"))), None)
        if engage is None:
            break
        el = find(env.observe(), engage.label)
        if el is None or not el.enabled:
            break
        obs = act(env, "click", x=el.center[0], y=el.center[1])
        out.append((obs, raw(env)))
    return out


def _check(e: UIElement) -> None:
    for attr in ("text", "content_desc", "resource_id", "class_name", "package", "hint"):
        value = getattr(e, attr).lower()
        assert not any(t in value for t in TELLS), f"{attr}={getattr(e, attr)!r} gives the overlay away"
    assert e.package in PACKAGES, e.package
    assert e.class_name in CLASSES, e.class_name
    if e.resource_id:
        m = RID.match(e.resource_id)
        assert m, e.resource_id
        assert m.group("pkg") in (e.package, "android"), f"{e.resource_id} in a {e.package} window"


@pytest.mark.parametrize("name", ALL)
def test_overlay_nodes_look_like_real_android(name):
    pairs = _screens(name)
    added_any = False
    for shown, device in pairs:
        added = foreign(shown, device)
        added_any = added_any or bool(added)
        for e in added:
            _check(e)
        # the dump is a real uiautomator dump with the same attributes on every node
        root = ET.fromstring(shown.xml[shown.xml.index("<hierarchy"):])
        keys = {frozenset(k for k in n.attrib if k != "hint") for n in root.iter("node")}
        assert len(keys) == 1, keys
        assert not any(t in shown.xml.lower() for t in ("ttir", "inject", "perturb", "overlay"))
    assert added_any or name == "execution_delay_frozen", "the perturbation was visible at least once"


def test_frozen_frame_is_an_old_real_frame():
    env, _ = make_env("execution_delay_frozen")
    obs = open_contacts(env)
    before = [e.model_dump() for e in obs.elements]
    obs = tap(env, "Create contact")
    assert [e.model_dump() for e in obs.elements] == before
