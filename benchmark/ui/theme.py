"""Light and dark palettes (Material-3-like roles)."""

from __future__ import annotations

from functools import lru_cache

Color = tuple[int, int, int]

_LIGHT: dict[str, Color] = {
    "bg": (254, 251, 255),
    "surface": (243, 237, 247),
    "surface2": (236, 230, 240),
    "dialog": (243, 237, 247),
    "text": (28, 27, 31),
    "muted": (73, 69, 79),
    "outline": (121, 116, 126),
    "divider": (202, 196, 208),
    "accent": (103, 80, 164),
    "on_accent": (255, 255, 255),
    "tonal": (232, 222, 248),
    "on_tonal": (29, 25, 43),
    "danger": (179, 38, 30),
    "scrim": (0, 0, 0),
    "status_bg": (254, 251, 255),
    "nav_bg": (243, 237, 247),
    "field_bg": (254, 251, 255),
    "selected": (232, 222, 248),
    "skeleton": (224, 224, 228),
    "keyboard_bg": (232, 234, 237),
    "key_bg": (255, 255, 255),
    "key_special": (205, 210, 218),
    "key_action": (194, 208, 244),
    "on_key_action": (16, 40, 80),
    "key_text": (32, 33, 36),
    "key_hint": (95, 99, 104),
    "web_bg": (255, 255, 255),
    "launcher_bg": (196, 214, 235),
    "launcher_text": (24, 28, 36),
    "qsb_bg": (240, 243, 250),
    "handle": (32, 33, 36),
    "shade_bg": (232, 232, 238),
    "tile_on": (103, 80, 164),
    "tile_off": (222, 218, 228),
    "banner": (240, 240, 245),
    "success": (56, 142, 60),
}

_DARK: dict[str, Color] = {
    "bg": (20, 18, 24),
    "surface": (33, 31, 38),
    "surface2": (43, 41, 48),
    "dialog": (43, 41, 48),
    "text": (230, 225, 229),
    "muted": (202, 196, 208),
    "outline": (147, 143, 153),
    "divider": (73, 69, 79),
    "accent": (208, 188, 255),
    "on_accent": (56, 30, 114),
    "tonal": (74, 68, 88),
    "on_tonal": (232, 222, 248),
    "danger": (242, 184, 181),
    "scrim": (0, 0, 0),
    "status_bg": (20, 18, 24),
    "nav_bg": (33, 31, 38),
    "field_bg": (20, 18, 24),
    "selected": (74, 68, 88),
    "skeleton": (58, 56, 64),
    "keyboard_bg": (32, 33, 36),
    "key_bg": (60, 64, 67),
    "key_special": (44, 46, 50),
    "key_action": (168, 199, 250),
    "on_key_action": (8, 33, 74),
    "key_text": (232, 234, 237),
    "key_hint": (154, 160, 166),
    "web_bg": (32, 33, 36),
    "launcher_bg": (30, 42, 60),
    "launcher_text": (236, 238, 244),
    "qsb_bg": (48, 52, 62),
    "handle": (226, 226, 230),
    "shade_bg": (28, 27, 31),
    "tile_on": (208, 188, 255),
    "tile_off": (60, 58, 66),
    "banner": (50, 48, 56),
    "success": (129, 199, 132),
}


class Palette(dict):
    """Role name -> RGB; ``palette['accent']``. Unknown roles fall back to text."""

    def __missing__(self, key: str) -> Color:
        if isinstance(key, tuple):
            return key  # literal colours pass through
        return dict.__getitem__(self, "text")


@lru_cache(maxsize=64)
def palette(dark: bool, accent: Color | None = None) -> Palette:
    base = dict(_DARK if dark else _LIGHT)
    if accent is not None:
        if dark:
            # lighten the app accent for dark surfaces
            accent = tuple(int(c + (255 - c) * 0.55) for c in accent)  # type: ignore[assignment]
        base["accent"] = accent  # type: ignore[assignment]
        base["tile_on"] = accent  # type: ignore[assignment]
        mix = 0.82 if not dark else 0.35
        target = 255 if not dark else 30
        base["tonal"] = tuple(int(c * (1 - mix) + target * mix) for c in accent)  # type: ignore[assignment]
        base["selected"] = base["tonal"]
    return Palette(base)
