"""The README gallery: clean screenshots of every simulated app, the keyboard,
landscape, dark theme and one per perturbation family, regenerated from
``experiments/gallery.yaml``.

    python -m experiments.gallery [--out docs/gallery] [--width 432] [--only NAME ...]

Each shot seeds a task's data, runs the first steps of its reference solution (on a
clean phone or under a perturbation) and keeps the screen, downscaled and reduced to
a 256-colour palette so the whole gallery stays small. Deterministic: the same
command writes the same files.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path
from typing import Any, Optional

import yaml
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

OUT = Path("docs/gallery")


class Shot(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9_]+$")
    caption: str
    task: str
    steps: int = Field(0, ge=0, description="reference-solution steps to run before the shot")
    settings: dict[str, Any] = Field(default_factory=dict)
    perturbation: Optional[str] = None
    overrides: dict[str, Any] = Field(default_factory=dict)


def load(path: Optional[Path] = None) -> list[Shot]:
    text = path.read_text(encoding="utf-8") if path else resources.files("experiments").joinpath(
        "gallery.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    return [Shot.model_validate(s) for s in data.get("shots", [])]


def take(shot: Shot) -> Image.Image:
    """The screen a shot describes, full size."""
    import perturb
    from benchmark import SimDevice, make_task
    from benchmark.agents import ReferenceAgent
    from benchmark.device import DeviceSettings

    task = make_task(shot.task)
    device = SimDevice(settings=DeviceSettings(**shot.settings))
    perts = [perturb.make(shot.perturbation, **shot.overrides)] if shot.perturbation else []
    with perturb.PerturbedDevice(device, perts, seed=0) as env:
        obs = env.reset(task)
        agent = ReferenceAgent(task.reference_solution())
        agent.reset(task.goal)
        for _ in range(shot.steps):
            env.execute(agent.step(obs).action)
            obs = env.observe()
        return obs.screenshot.copy()


def small(img: Image.Image, width: int) -> Image.Image:
    """Downscaled (Lanczos) to ``width`` and reduced to 256 colours."""
    h = round(img.height * width / img.width)
    return img.resize((width, h), Image.Resampling.LANCZOS).quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                                                                    dither=Image.Dither.NONE)


def build(out: Path = OUT, width: int = 432, only: Optional[list[str]] = None,
          shots: Optional[list[Shot]] = None) -> list[tuple[Shot, Path]]:
    """Write every shot's PNG into ``out``; returns (shot, file) pairs."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for shot in shots if shots is not None else load():
        if only and shot.name not in only:
            continue
        img = take(shot)
        # a landscape shot keeps the portrait shots' scale: its short side as wide as they are
        w = width if img.width <= img.height else round(width * img.width / img.height)
        path = out / f"{shot.name}.png"
        small(img, w).save(path, optimize=True)
        written.append((shot, path))
    return written


def markdown(written: list[tuple[Shot, Path]]) -> str:
    """A README table of the shots, three to a row (paths as written, from where the command ran)."""
    cells = [f"![{s.caption}]({p.as_posix()})<br>{s.caption}" for s, p in written]
    rows = [cells[i:i + 3] for i in range(0, len(cells), 3)]
    lines = ["| | | |", "|---|---|---|"]
    lines += ["| " + " | ".join(r + [""] * (3 - len(r))) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.gallery", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=OUT, help="folder for the PNGs (default docs/gallery)")
    p.add_argument("--width", type=int, default=432, help="width of a portrait shot in pixels (default 432: 40 % of 1080)")
    p.add_argument("--only", nargs="*", help="only these shots (names in experiments/gallery.yaml)")
    p.add_argument("--markdown", action="store_true", help="print the README table of the shots")
    args = p.parse_args(argv)
    written = build(args.out, args.width, args.only)
    total = sum(path.stat().st_size for _, path in written)
    for shot, path in written:
        print(f"{path}  {path.stat().st_size / 1024:.0f} KB  {shot.caption}")
    print(f"{len(written)} shots, {total / 1024:.0f} KB")
    if args.markdown:
        print(markdown(written))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
