"""Content pools: load ``perturb/overlay/content/<type>.yaml``, draw a variant with
the perturbation's seeded rng, fill in placeholders and apply overrides."""

from __future__ import annotations

import random
import string
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable, Optional, Union

from pydantic import ValidationError

from perturb.overlay.spec import DEFAULT_LANGUAGE, ButtonSpec, FlowSpec, PageSpec, PoolSpec, VariantSpec, check_language
from ttir.core.validation import load_package_yaml

ANY_LANGUAGE = "any"
Languages = Union[str, list[str]]  # a language code, a list of them, or "any"


def pool_names() -> list[str]:
    folder = resources.files("perturb.overlay").joinpath("content")
    return sorted(e.name.rsplit(".", 1)[0] for e in folder.iterdir() if e.name.endswith(".yaml"))


@lru_cache(maxsize=None)
def load_pool(name: str) -> PoolSpec:
    """The validated pool ``name``; a bad file names itself and the offending key."""
    where = f"perturb/overlay/content/{name}.yaml"
    entry = resources.files("perturb.overlay").joinpath("content", f"{name}.yaml")
    if not entry.is_file():
        raise KeyError(f"content pool {name!r} does not exist ({where}); known pools: {', '.join(pool_names())}")
    data = load_package_yaml(entry.read_text(encoding="utf-8")) or {}
    try:
        return PoolSpec.model_validate(data)
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{where}: {detail}") from None


def choose_variant(pool: PoolSpec, rng: random.Random, allowed: Optional[Iterable[str]] = None,
                   pool_name: str = "", language: Languages = DEFAULT_LANGUAGE) -> VariantSpec:
    """A seeded choice among the pool's variants in ``language`` (a code, a list of
    codes, or ``any``), restricted to the ``allowed`` ids."""
    variants = variants_in(pool, language, pool_name)
    if allowed is None:
        variants = [v for v in variants if not v.opt_in]  # opt-in variants only when a spec names them
    else:
        wanted = list(allowed)
        known = {v.id for v in variants}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            others = {v.id: v.language for v in pool.variants if v.id in unknown}
            hint = "; ".join(f"{i} is in language {lang!r}" for i, lang in others.items())
            raise ValueError(f"profile_pool={wanted}: unknown variant id(s) {', '.join(unknown)} in pool "
                             f"{pool_name!r} for language={language!r}; expected some of {', '.join(sorted(known))}"
                             + (f" ({hint}: set language to it)" if hint else ""))
        variants = [v for v in variants if v.id in wanted]
        if not variants:
            raise ValueError(f"profile_pool={wanted} is empty; expected at least one variant id of pool {pool_name!r}")
    return variants[rng.randrange(len(variants))]


def check_languages(value: Any) -> Languages:
    """Validate a ``language`` parameter: a code, a non-empty list of codes, or ``any``."""
    if value == ANY_LANGUAGE:
        return value
    if isinstance(value, list):
        if not value:
            raise ValueError(f"language=[] is empty; expected a language code, a list of them or {ANY_LANGUAGE!r}")
        return [check_language(v) for v in value]
    return check_language(value)


def variants_in(pool: PoolSpec, language: Languages, pool_name: str = "") -> list[VariantSpec]:
    """The pool's variants in ``language`` (pool order); an unknown language names the known ones."""
    if language == ANY_LANGUAGE:
        return list(pool.variants)
    wanted = [language] if isinstance(language, str) else list(language)
    missing = [w for w in wanted if w not in pool.languages]
    if missing or not wanted:
        raise ValueError(f"language={language!r}: pool {pool_name!r} has no variant in {', '.join(missing) or 'an empty list'}; "
                         f"expected one of {', '.join(pool.languages)} (a list of them, or {ANY_LANGUAGE!r})")
    return [v for v in pool.variants if v.language in wanted]


class _Blank(dict):
    def __missing__(self, key: str) -> str:  # unknown placeholders stay visible rather than crash
        return "{" + key + "}"


def fill(text: str, values: dict[str, str]) -> str:
    if "{" not in text:
        return text
    return string.Formatter().vformat(text, (), _Blank(values))


def _fill_model(model: Any, values: dict[str, str]) -> Any:
    """A deep copy of a content model with every string field's placeholders filled."""

    def walk(obj: Any) -> Any:
        if isinstance(obj, str):
            return fill(obj, values)
        if isinstance(obj, list):
            return [walk(x) for x in obj]
        if isinstance(obj, dict):
            return {k: walk(v) for k, v in obj.items()}
        return obj

    return type(model).model_validate(walk(model.model_dump()))


def resolve(pool: PoolSpec, variant: VariantSpec, values: dict[str, str]) -> tuple[VariantSpec, dict[str, FlowSpec]]:
    """The variant and the pool's flows with placeholders filled."""
    merged = {**values, **{k: fill(v, values) for k, v in variant.extras.items()}}
    return _fill_model(variant, merged), {k: _fill_model(f, merged) for k, f in pool.flows.items()}


def apply_overrides(pages: list[PageSpec], *, title: Optional[str] = None, message: Optional[str] = None,
                    buttons: Optional[list[ButtonSpec]] = None, primary_action: Optional[str] = None,
                    secondary_action: Optional[str] = None, single_button: bool = False) -> list[PageSpec]:
    """Table 3's content overrides on the first page; D-GARA's single-button mode
    (every dismiss-role control removed) on every page."""
    out = [p.model_copy(deep=True) for p in pages]
    first = out[0]
    if title is not None:
        first.title = title
    if message is not None:
        first.message = message
    if buttons is not None:
        first.buttons = [b.model_copy() for b in buttons]
    if primary_action is not None:
        for b in first.buttons:
            if b.role == "engage":
                b.action = primary_action
    if secondary_action is not None:
        for b in [*first.buttons, *([first.close_button] if first.close_button else [])]:
            if b.role == "dismiss":
                b.action = secondary_action
    if single_button:
        for p in out:
            p.buttons = [b for b in p.buttons if b.role != "dismiss"]
            if p.close_button is not None and p.close_button.role == "dismiss":
                p.close_button = None
    return out
