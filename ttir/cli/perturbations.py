"""``ttir perturbations``: list every perturbation with its component and defaults."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name, help=help_text,
        description="List every perturbation — AndroidReality's, AnTrap's traps and those beyond the paper: "
        "component (state / transition / action, plus the AnTrap STAR layer), what each does, and its default "
        "parameters (magnitude / timing / persistence). Override any parameter in a spec or with "
        "perturb.make(name, param=value); transitions take language (en, es, zh, de, a list, or any).",
    )
    # spelled here so that parsing a command does not import perturb (0.18 s); the vocabulary test checks it is perturb.base.COMPONENTS
    p.add_argument("--component", choices=["state", "action", "transition"], help="only this component")
    p.add_argument("--params", action="store_true", help="also print every default parameter")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from perturb import ANDROIDREALITY, ANTRAP, EXTENSIONS, REGISTRY
    from perturb.base import COMPONENTS, STAR_LAYERS

    order = {c: i for i, c in enumerate(COMPONENTS)}
    rows = sorted((p for p in REGISTRY.values() if args.component is None or p.component == args.component),
                  key=lambda p: (STAR_LAYERS.index(p.layer) if p.layer else -1, order.get(p.component, 3)))
    width = max(len(p.name) for p in rows)
    groups = ((ANDROIDREALITY, "AndroidReality perturbations"), (ANTRAP, "AnTrap traps"),
              (EXTENSIONS, "Beyond the paper"))
    for members, title in groups:
        group = [p for p in rows if p.name in members]
        if not group:
            continue
        print(f"{title} ({len(group)})")
        for prof in group:
            comp = prof.component + (f"/{prof.layer}" if prof.layer else "")
            print(f"  {prof.name:<{width}}  {comp:<12}  {prof.description}")
            if args.params:
                for section, values in prof.defaults.items():
                    if values:
                        print(f"  {'':<{width}}  {'':<12}  {section}: " + ", ".join(f"{k}={v}" for k, v in values.items()))
        print()
    print(f"{len(rows)} perturbations. See one: ttir show ContactsAddContact --perturb {rows[0].name}")
    return 0
