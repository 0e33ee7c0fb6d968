"""What a package or a node is, system-wise: launcher, system UI, keyboard,
known interrupter; status/navigation bar, shade, heads-up banner."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from diagnosers.signals.data import builtin, lower_set
from ttir.core.diagnosis import INTERFERENCE_KINDS, InterferenceKind
from ttir.core.lexicon import loading_words, norm


def _kinds(data: dict, key: str) -> dict[str, InterferenceKind]:
    """``data[key]``: a package or resource id -> the interference kind it marks, each kind one of
    :data:`~ttir.core.diagnosis.INTERFERENCE_KINDS` (a kind named nowhere else would reach the
    recoveries unknown)."""
    out: dict[str, InterferenceKind] = {}
    for k, v in (data.get(key) or {}).items():
        if v not in INTERFERENCE_KINDS:
            raise ValueError(f"diagnosers/data/system.yaml: {key}.{k} = {v!r} is not an interference kind; "
                             f"expected one of {', '.join(INTERFERENCE_KINDS)}")
        out[str(k).lower()] = v
    return out


class SystemKnowledge:
    """The contents of ``data/system.yaml``, as sets."""

    def __init__(self, data: dict):
        self.launchers = lower_set(data.get("launcher_packages"))
        self.launcher_tokens = lower_set(data.get("launcher_tokens"))
        self.systemui = lower_set(data.get("systemui_packages"))
        self.imes = lower_set(data.get("ime_packages"))
        self.ime_tokens = lower_set(data.get("ime_tokens"))
        self.interrupters = _kinds(data, "interrupter_packages")
        self.system_dialog_ids = _kinds(data, "system_dialog_ids")
        self.chrome_ids = lower_set(data.get("chrome_ids"))
        self.shade_ids = lower_set(data.get("shade_ids"))
        self.dialog_id_hints = lower_set(data.get("dialog_id_hints"))
        self.dialog_class_hints = lower_set(data.get("dialog_class_hints"))
        self.coach_mark_ids: dict[str, frozenset[str]] = {str(k): lower_set(v) for k, v in
                                                           (data.get("coach_mark_ids") or {}).items()}
        self.scrim_ids = lower_set(data.get("scrim_ids"))
        self.heads_up_ids = lower_set(data.get("heads_up_ids"))
        self.progress_classes = lower_set(data.get("progress_classes"))
        self.progress_words = frozenset(loading_words())  # ttir/core/data/loading.yaml: one list for everyone
        self.home_goal_words = lower_set(data.get("home_goal_words"))
        self.shade_goal_words = lower_set(data.get("shade_goal_words"))
        self.ad_activity_hints = lower_set(data.get("ad_activity_hints"))
        self.decoration_ids = lower_set(data.get("decoration_ids"))
        self.keyguard_ids = lower_set(data.get("keyguard_ids"))
        self.keyguard_packages = lower_set(data.get("keyguard_packages"))
        self.vendor_keyguard_ids = lower_set(data.get("vendor_keyguard_ids"))
        self.always_on_display_packages = lower_set(data.get("always_on_display_packages"))
        self.app_lock_packages = lower_set(data.get("app_lock_packages"))
        self.app_lock_ids = lower_set(data.get("app_lock_ids"))
        self.task_surface_ids = lower_set(data.get("task_surface_ids"))
        self.task_surface_packages = lower_set(data.get("task_surface_packages"))
        self.anr_phrases = tuple(norm(str(v)) for v in data.get("anr_phrases") or [])
        self.crash_phrases = tuple(norm(str(v)) for v in data.get("crash_phrases") or [])
        self.system_ui_names = tuple(norm(str(v)) for v in data.get("system_ui_names") or [])
        self.required_update_phrases = tuple(norm(str(v)) for v in data.get("required_update_phrases") or [])
        self.licence_gate_phrases = tuple(norm(str(v)) for v in data.get("licence_gate_phrases") or [])
        self.licence_decline_labels = frozenset(norm(str(v)) for v in data.get("licence_decline_labels") or [])


@lru_cache(maxsize=1)
def knowledge() -> SystemKnowledge:
    return SystemKnowledge(builtin("system"))


def package_of(foreground: Optional[str]) -> str:
    return (foreground or "").split("/", 1)[0].strip().lower()


def is_launcher(pkg: Optional[str]) -> bool:
    p = package_of(pkg)
    k = knowledge()
    return bool(p) and (p in k.launchers or any(t in p for t in k.launcher_tokens))


def is_systemui(pkg: Optional[str]) -> bool:
    return package_of(pkg) in knowledge().systemui


def is_ime(pkg: Optional[str]) -> bool:
    p = package_of(pkg)
    k = knowledge()
    return bool(p) and (p in k.imes or any(t in p for t in k.ime_tokens))


def interrupter_kind(pkg: Optional[str]) -> Optional[InterferenceKind]:
    return knowledge().interrupters.get(package_of(pkg))


def is_app_package(pkg: Optional[str]) -> bool:
    """An ordinary app: not the launcher, system UI, a keyboard or a known interrupter."""
    p = package_of(pkg)
    return bool(p) and not (is_launcher(p) or is_systemui(p) or is_ime(p) or interrupter_kind(p) is not None)


def short_id(resource_id: str) -> str:
    return resource_id.split("/", 1)[-1].lower() if resource_id else ""


def package_tokens(pkg: Optional[str]) -> set[str]:
    """The distinctive words of a package name (com.google.android.contacts -> contacts)."""
    generic = {"com", "org", "net", "android", "google", "apps", "app", "io", "de", "www", "mobile", "simplemobiletools"}
    return {t for t in package_of(pkg).split(".") if t and t not in generic and len(t) > 2}
