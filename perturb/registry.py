"""The perturbation registry: YAML profiles in ``perturb/profiles/`` carry each
perturbation's class, component, description and the paper's default parameters;
``make(name, **overrides)`` builds one.

Overrides may be flat (``font_scale=1.5``, ``trigger_step=3``) when the name is
unique across the three sections, or dotted (``**{"timing.trigger_step": 3}``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Optional

from pydantic import ValidationError

from perturb.base import Params, Perturbation
from perturb.timing import Persistence, Timing
from ttir.core.errors import did_you_mean, resolve_name
from ttir.core.validation import load_package_yaml, plain_message

SECTIONS = ("magnitude", "timing", "persistence")


@dataclass(frozen=True)
class Profile:
    """One perturbation as its YAML profile declares it (``perturb/profiles/``): its class, its
    component (and AnTrap layer), what it does, and its default parameters."""

    name: str
    cls_path: str
    component: str
    description: str
    layer: Optional[str] = None
    defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    family: str = ""

    @property
    def cls(self) -> type[Perturbation]:
        """The perturbation class ``cls_path`` names (imported on first use)."""
        module, _, attr = self.cls_path.partition(":")
        return getattr(importlib.import_module(module), attr)

    def param_names(self) -> dict[str, str]:
        """Every tunable parameter → its section."""
        out: dict[str, str] = {}
        models = {"magnitude": self.cls.magnitude_model, "timing": Timing, "persistence": Persistence}
        for section, model in models.items():
            for name in model.model_fields:
                out[f"{section}.{name}"] = section
        return out


def _load_profiles() -> dict[str, Profile]:
    out: dict[str, Profile] = {}
    folder = resources.files("perturb").joinpath("profiles")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith((".yaml", ".yml")):
            continue
        data = load_package_yaml(entry.read_text(encoding="utf-8")) or {}
        for name, spec in data.items():
            where = f"perturb/profiles/{entry.name}: {name}"
            if name in out:
                raise ValueError(f"{where}: perturbation defined twice")
            missing = [k for k in ("class", "component", "description") if k not in spec]
            if missing:
                raise ValueError(f"{where}: missing key(s) {', '.join(missing)}")
            unknown = sorted(set(spec) - {"class", "component", "description", "layer", "family", *SECTIONS})
            if unknown:
                raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; expected class, component, description, layer, family, {', '.join(SECTIONS)}")
            out[name] = Profile(
                name=name,
                cls_path=spec["class"],
                component=spec["component"],
                description=" ".join(str(spec["description"]).split()),
                layer=spec.get("layer"),
                defaults={s: dict(spec.get(s) or {}) for s in SECTIONS},
                family=str(spec.get("family") or entry.name.rsplit(".", 1)[0]),  # a profile may join another family
            )
    return out


REGISTRY: dict[str, Profile] = _load_profiles()
"""Every perturbation profile by name, loaded from ``perturb/profiles/*.yaml``."""

EXTENSIONS_FAMILY = "extensions"  # perturb/profiles/extensions.yaml: beyond the paper
ANDROIDREALITY = tuple(n for n, p in REGISTRY.items() if p.layer is None and p.family != EXTENSIONS_FAMILY)
"""The names of AndroidReality's perturbations (state, action and transition)."""
ANTRAP = tuple(n for n, p in REGISTRY.items() if p.layer is not None)
"""The names of AnTrap's traps (each with its STAR layer)."""
EXTENSIONS = tuple(n for n, p in REGISTRY.items() if p.family == EXTENSIONS_FAMILY)
"""The names of the perturbations beyond the papers (``perturb/profiles/extensions.yaml``)."""


def names(component: Optional[str] = None) -> list[str]:
    """The registered perturbations' names, in registry order.

    Args:
        component: only those of this component (``state``, ``action``, ``transition``); None: all.
    """
    return [n for n, p in REGISTRY.items() if component is None or p.component == component]


def make(name: str, **overrides: Any) -> Perturbation:
    """Build perturbation ``name`` with the profile's defaults and ``overrides``.

    Args:
        name: a registered perturbation, any case (:func:`names` lists them), e.g. ``"popup_permission"``.
        **overrides: parameters by dotted name (``timing.trigger_step=2``) or, when unambiguous,
            by their bare name (``trigger_step=2``).

    Returns:
        The perturbation, ready for :class:`PerturbedDevice`.

    Raises:
        ttir.core.errors.UnknownNameError: no perturbation is called ``name`` (a ``KeyError``
            and ``ValueError``; the message suggests the closest).
        ValueError: an unknown, ambiguous or invalid parameter (the message lists the valid ones).
    """
    name = resolve_name("perturbation", name, REGISTRY, see="ttir perturbations")  # case-insensitive
    prof = REGISTRY[name]
    sections = {s: dict(prof.defaults.get(s, {})) for s in SECTIONS}
    valid = prof.param_names()
    flat: dict[str, list[str]] = {}
    for dotted in valid:
        flat.setdefault(dotted.split(".", 1)[1], []).append(dotted)
    for key, value in overrides.items():
        if key in valid:
            dotted = key
        elif key in flat and len(flat[key]) == 1:
            dotted = flat[key][0]
        elif key in flat:
            raise ValueError(f"{name}: parameter {key!r} is ambiguous; use one of {', '.join(flat[key])}")
        else:
            hint = did_you_mean(str(key), [*flat, *valid])
            listing = (" (`ttir perturbations --params` lists each one's parameters)" if hint
                       else f"; valid parameters: {', '.join(sorted(valid))}")  # the suggestion, not a wall of names
            raise ValueError(f"{name}: unknown parameter {key!r}{hint}{listing}")
        section, field_name = dotted.split(".", 1)
        sections[section][field_name] = value
    cls = prof.cls
    try:
        params = Params.model_construct(
            magnitude=cls.magnitude_model(**sections["magnitude"]),
            timing=Timing(**sections["timing"]),
            persistence=Persistence(**sections["persistence"]),
        )
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(str(x) for x in e['loc'])}={e.get('input')!r}: {plain_message(e)}"
                           for e in exc.errors())
        raise ValueError(f"{name}: invalid parameters: {detail}") from None
    return cls(name, params, description=prof.description, component=prof.component, layer=prof.layer)  # type: ignore[arg-type]


def make_all(spec: list[Any]) -> list[Perturbation]:
    """Build a list from names or ``{name: {overrides}}`` mappings.

    Args:
        spec: e.g. ``["popup_permission", {"font_size_large": {"magnitude.font_scale": 1.3}}]``.

    Returns:
        The perturbations, in order.

    Raises:
        ValueError: an entry is neither a name nor a one-key mapping, or :func:`make` refuses it.
    """
    out = []
    for item in spec:
        if isinstance(item, str):
            out.append(make(item))
        elif isinstance(item, dict) and len(item) == 1:
            (n, ov), = item.items()
            out.append(make(n, **(ov or {})))
        else:
            raise ValueError(f"perturbation entry {item!r} must be a name or a one-key mapping {{name: {{param: value}}}}")
    return out
