"""The README gallery: `python -m experiments.gallery` rebuilds docs/gallery/ from
experiments/gallery.yaml, deterministically and small."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from experiments import gallery

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "gallery"


def test_the_gallery_spec_covers_every_app_the_keyboard_landscape_dark_and_each_family():
    shots = gallery.load()
    names = {s.name for s in shots}
    assert len(names) == len(shots)
    from benchmark import SimDevice

    apps_shown = {s.task for s in shots if s.steps and not s.perturbation and not s.settings}
    assert len(apps_shown) >= len(SimDevice().launcher_apps()) - 1  # every app (the Chrome shot starts in Files)
    assert {"keyboard", "landscape", "dark"} <= names
    families = {s.perturbation for s in shots if s.perturbation}
    import perturb

    assert {perturb.REGISTRY[p].family for p in families} == {"state", "transition", "action", "antrap", "extensions"}


def test_the_committed_gallery_has_every_shot_and_stays_small():
    shots = gallery.load()
    files = [DOCS / f"{s.name}.png" for s in shots]
    missing = [f.name for f in files if not f.exists()]
    assert not missing, f"run `python -m experiments.gallery`: missing {missing}"
    assert sum(f.stat().st_size for f in files) < 3 * 1024 * 1024
    assert all(Image.open(f).height <= 1000 for f in files)  # downscaled: 40 % of a 2400 px screen


def test_building_twice_writes_the_same_pixels(tmp_path):
    chosen = ["keyboard", "extension_ui_language"]
    a = gallery.build(tmp_path / "a", width=200, only=chosen)
    b = gallery.build(tmp_path / "b", width=200, only=chosen)
    assert [s.name for s, _ in a] == chosen
    for (_, pa), (_, pb) in zip(a, b):
        assert Image.open(pa).size == (200, round(2400 * 200 / 1080))
        assert Image.open(pa).tobytes() == Image.open(pb).tobytes()
