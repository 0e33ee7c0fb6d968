"""Draw laid-out nodes onto a Pillow image."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Optional

from PIL import Image, ImageDraw, ImageFilter, ImageFont

from benchmark.ui.icons import draw_icon
from benchmark.ui.layout import Box, Node
from benchmark.ui.metrics import UI_FONT, Metrics, face, font, line_height, runs, text_width
from benchmark.ui.theme import Color, Palette


def blend(a: Color, b: Color, t: float) -> Color:
    return tuple(int(a[i] * (1 - t) + b[i] * t) for i in range(3))  # type: ignore[return-value]


def scrim(img: Image.Image, box: Box, color: Color = (0, 0, 0), alpha: float = 0.45) -> None:
    """Darken a region (the dimmed backdrop behind dialogs)."""
    x1, y1, x2, y2 = (int(v) for v in box)
    if x2 <= x1 or y2 <= y1:
        return
    # one lookup table per band: v -> v*(1-alpha) + color*alpha (what Image.blend computes, without a second image)
    lut = [int(v * (1 - alpha) + color[band] * alpha) for band in range(3) for v in range(256)]
    img.paste(img.crop((x1, y1, x2, y2)).point(lut), (x1, y1))


@lru_cache(maxsize=32768)
def _glyphs(px: int, text: str, stroke: int, mode: str, start: tuple[float, float]) -> tuple[Any, tuple[int, int]]:
    """The rendered mask of one line of text and its offset: what ``ImageDraw.text``
    computes on every call. A frame redraws mostly the same labels at the same
    places, so rendering each once is a third of a step saved."""
    return font(px, text).getmask2(text, mode, stroke_width=stroke, anchor="la", start=start, stroke_filled=True)


def draw_text(d: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, px: int, color: Color, stroke: int = 0) -> None:
    """``d.text(xy, text, font=font(px, text), fill=color, stroke_width=stroke, stroke_fill=color)``,
    pixel for pixel, with the glyph masks cached. A string that needs two fonts (Latin and
    Chinese) is drawn run by run on a shared baseline."""
    parts = runs(text)
    if len(parts) > 1:
        x, y = xy
        base = y + face(UI_FONT, px).getmetrics()[0]
        for chunk, name in parts:
            d.text((x, base), chunk, font=face(name, px), fill=color, stroke_width=stroke, stroke_fill=color, anchor="ls")
            x += face(name, px).getlength(chunk)
        return
    f = font(px, text)
    ink = d._getink(color)[0] if isinstance(f, ImageFont.FreeTypeFont) and "\n" not in text else None
    if ink is None:  # not the case we cache: let Pillow do it
        d.text(xy, text, font=f, fill=color, stroke_width=stroke, stroke_fill=color)
        return
    x, y = xy
    mask, (ox, oy) = _glyphs(px, text, stroke, d.fontmode, (math.modf(x)[0], math.modf(y)[0]))
    d.draw.draw_bitmap((int(x) + ox, int(y) + oy), mask, ink)


@lru_cache(maxsize=64)
def launcher_icon(icon: str, accent: Color, px: int) -> Image.Image:
    """An app's launcher icon, as Pixel Launcher draws adaptive icons: a disc shaded
    from a lighter top to the brand colour, a soft shadow under it, a white glyph.
    RGBA, ``px`` wide plus room for the shadow; cached (drawn once per size)."""
    pad = max(2, px // 12)
    size = px + 2 * pad
    shadow = Image.new("L", (size, size), 0)
    ImageDraw.Draw(shadow).ellipse((pad, pad + pad // 2, pad + px, pad + px + pad // 2), fill=90)
    shadow = shadow.filter(ImageFilter.GaussianBlur(pad / 2))
    out = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    out.paste((0, 0, 0, 255), (0, 0), shadow)
    top = blend(accent, (255, 255, 255), 0.28)
    disc = Image.new("RGB", (px, px), accent)
    dd = ImageDraw.Draw(disc)
    for y in range(px):  # vertical shade, top light
        dd.line([(0, y), (px, y)], fill=blend(top, accent, y / max(1, px - 1)))
    mask = Image.new("L", (px, px), 0)
    ImageDraw.Draw(mask).ellipse((0, 0, px - 1, px - 1), fill=255)
    out.paste(disc, (pad, pad), mask)
    g = int(px * 0.56)
    o = pad + (px - g) // 2
    draw_icon(ImageDraw.Draw(out), icon, (o, o, o + g, o + g), (255, 255, 255))
    return out


WALLPAPER = {False: ((176, 200, 236), (226, 214, 240)), True: ((22, 32, 58), (52, 36, 74))}


@lru_cache(maxsize=8)
def wallpaper(size: tuple[int, int], dark: bool) -> Image.Image:
    """The home screen's wallpaper: a soft vertical gradient (light or dark)."""
    a, b = WALLPAPER[dark]
    strip = Image.new("RGB", (1, 256))
    for y in range(256):
        strip.putpixel((0, y), blend(a, b, y / 255))
    return strip.resize(size, Image.Resampling.BILINEAR)


class Painter:
    """Draws one frame; keeps the image, the draw handle, metrics and palette together."""

    def __init__(self, img: Image.Image, m: Metrics, pal: Palette):
        self.img = img
        self.d = ImageDraw.Draw(img)
        self.m = m
        self.pal = pal

    # -- primitives -----------------------------------------------------------
    @staticmethod
    def color(pal: Palette, role: Any) -> Color:
        """A palette role's colour (a literal RGB tuple passes through)."""
        return role if isinstance(role, tuple) else pal[role]

    def c(self, role: Any) -> Color:
        return self.color(self.pal, role)

    def text_lines(
        self,
        lines: tuple[str, ...],
        px: int,
        box: Box,
        color: Color,
        *,
        align: str = "left",
        valign: str = "top",
        bold: bool = False,
    ) -> None:
        if not lines:
            return
        lh = line_height(px)
        x1, y1, x2, y2 = box
        total = lh * len(lines)
        y = y1 if valign == "top" else y1 + (y2 - y1 - total) // 2
        for ln in lines:
            if align == "left":
                x = x1
            else:
                w = text_width(ln, px)
                x = x1 + ((x2 - x1 - w) / 2 if align == "center" else (x2 - x1 - w))
            draw_text(self.d, (x, y + (lh - px) * 0.35), ln, px, color, stroke=1 if bold else 0)
            y += lh

    def icon(self, name: str, box: Box, color: Color) -> None:
        draw_icon(self.d, name, box, color)

    # -- nodes ----------------------------------------------------------------
    def node(self, n: Node) -> None:
        w = n.widget
        k = w.kind
        m, d = self.m, self.d
        x1, y1, x2, y2 = n.bounds
        st = w.style
        if n.meta.get("dialog"):
            self.dialog_surface(n)
        elif k == "top_bar":
            d.rectangle(n.bounds, fill=self.c(st.get("bg", "surface")))
        elif k == "card":
            bg = st.get("bg", "surface")
            if bg:
                d.rounded_rectangle(n.bounds, radius=m.dp(st.get("radius", 12)), fill=self.c(bg))
        elif k in ("row", "column", "web", "grid") and st.get("bg"):
            r = m.dp(st.get("radius", 0))
            if r:
                d.rounded_rectangle(n.bounds, radius=r, fill=self.c(st["bg"]))
            else:
                d.rectangle(n.bounds, fill=self.c(st["bg"]))
        elif k == "key":
            bg = {"char": "key_bg", "special": "key_special", "action": "key_action"}.get(st.get("role", "char"), "key_bg")
            d.rounded_rectangle(n.bounds, radius=m.dp(st.get("radius", 6)), fill=self.c(bg))
        if k == "row" and w.state.get("selected"):
            d.rectangle(n.bounds, fill=self.c("selected"))
        if k == "text":
            self.text_lines(n.lines, n.font_px, n.bounds, self.c(st.get("color", "text")),
                            align=st.get("text_align", "left"), bold=bool(st.get("bold")))
        elif k == "button":
            self.button(n)
        elif k == "icon_button":
            s = m.dp(24)
            cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
            if st.get("bg"):
                d.ellipse(n.bounds, fill=self.c(st["bg"]))
            self.icon(st.get("icon", "circle"), (cx - s // 2, cy - s // 2, cx + s // 2, cy + s // 2), self.c(st.get("color", "text")))
        elif k == "image":
            if st.get("adaptive"):
                bmp = launcher_icon(st.get("icon", "circle"), self.c(st.get("bg", "accent")), x2 - x1)
                pad = (bmp.size[0] - (x2 - x1)) // 2
                self.img.paste(bmp, (x1 - pad, y1 - pad), bmp)
            elif st.get("circle"):
                d.ellipse(n.bounds, fill=self.c(st.get("bg", "tonal")))
                pad = (x2 - x1) // 5
                self.icon(st.get("icon", "circle"), (x1 + pad, y1 + pad, x2 - pad, y2 - pad), self.c(st.get("color", "accent")))
            else:
                s = min(x2 - x1, y2 - y1)
                self.icon(st.get("icon", "circle"), (x1, y1, x1 + s, y1 + s), self.c(st.get("color", "accent")))
        elif k == "field":
            self.field(n)
        elif k in ("checkbox", "radio"):
            self.check(n)
        elif k == "switch":
            on = bool(w.state.get("checked"))
            d.rounded_rectangle(n.bounds, radius=(y2 - y1) // 2, fill=self.c("accent" if on else "tile_off"), outline=self.c("outline"), width=0 if on else 2)
            r = (y2 - y1) // 2 - m.dp(4 if on else 8)
            cx = x2 - (y2 - y1) // 2 if on else x1 + (y2 - y1) // 2
            cy = (y1 + y2) // 2
            d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=self.c("on_accent" if on else "outline"))
        elif k == "slider":
            self.slider(n)
        elif k == "progress":
            cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
            r = (x2 - x1) // 2 - m.dp(6)
            d.arc((cx - r, cy - r, cx + r, cy + r), -90, 180, fill=self.c("accent"), width=m.dp(4))
        elif k == "skeleton":
            d.rounded_rectangle(n.bounds, radius=m.dp(6), fill=self.c("skeleton"))
        elif k == "divider":
            d.line([(x1, y1), (x2, y1)], fill=self.c("divider"), width=max(1, y2 - y1))
        if n.meta.get("fab"):
            d.rounded_rectangle(n.bounds, radius=m.dp(16), fill=self.c("tonal"))
            s = m.dp(24)
            cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
            self.icon(st.get("icon", "add"), (cx - s // 2, cy - s // 2, cx + s // 2, cy + s // 2), self.c("on_tonal"))
        for c in n.children:
            self.node(c)

    def dialog_surface(self, n: Node) -> None:
        m, d = self.m, self.d
        st = n.widget.style
        if n.meta.get("scrim"):
            scrim(self.img, n.meta["area"], self.c("scrim"), float(st.get("scrim_alpha", 0.45)))
            self.d = d = ImageDraw.Draw(self.img)
        placement = n.meta.get("dialog")
        bg = self.c(st.get("surface", "dialog"))
        if placement == "full":
            d.rectangle(n.bounds, fill=bg)
        elif placement == "bottom":
            r = m.dp(28)
            x1, y1, x2, y2 = n.bounds
            d.rounded_rectangle((x1, y1, x2, y2 + r), radius=r, fill=bg)
            d.rounded_rectangle(((x1 + x2) // 2 - m.dp(16), y1 + m.dp(10), (x1 + x2) // 2 + m.dp(16), y1 + m.dp(14)), radius=m.dp(2), fill=self.c("outline"))
        else:
            radius = m.dp(st.get("radius", 28 if placement == "center" else 16))
            if placement == "menu":  # a menu floats at elevation 3: a soft shadow under it
                drop_shadow(self.img, n.bounds, radius, m.dp(6))
            d.rounded_rectangle(n.bounds, radius=radius, fill=bg,
                                outline=self.c("divider") if placement == "top" else None, width=2 if placement == "top" else 0)

    def button(self, n: Node) -> None:
        m, d = self.m, self.d
        w = n.widget
        variant = w.style.get("variant", "filled")
        enabled = w.state.get("enabled", True)
        x1, y1, x2, y2 = n.bounds
        inset = m.dp(4)
        box = (x1, y1 + inset, x2, y2 - inset)
        r = (box[3] - box[1]) // 2
        if variant == "filled":
            fill = self.c(w.style.get("bg", "accent"))
            if not enabled:
                fill = blend(fill, self.c("bg"), 0.6)
            d.rounded_rectangle(box, radius=r, fill=fill)
            color = self.c(w.style.get("color", "on_accent"))
        elif variant == "tonal":
            d.rounded_rectangle(box, radius=r, fill=self.c("tonal"))
            color = self.c("on_tonal")
        elif variant == "outlined":
            d.rounded_rectangle(box, radius=r, outline=self.c("outline"), width=max(2, m.dp(1)))
            color = self.c(w.style.get("color", "accent"))
        else:
            color = self.c(w.style.get("color", "accent"))
        if not enabled:
            color = blend(color, self.c("bg"), 0.5)
        self.text_lines(n.lines, n.font_px, box, color, align="center", valign="middle")

    def field(self, n: Node) -> None:
        m, d = self.m, self.d
        w = n.widget
        focused = bool(w.state.get("focused"))
        x1, y1, x2, y2 = n.bounds
        pill = bool(w.style.get("pill"))
        plain = bool(w.style.get("plain"))
        if pill:  # a search / address pill: filled, no outline, no floating label
            d.rounded_rectangle(n.bounds, radius=(y2 - y1) // 2, fill=self.c("surface2"),
                                outline=self.c("accent") if focused else None, width=max(2, m.dp(1)) if focused else 0)
        elif plain:  # a full-screen editor: text straight on the page
            pass
        else:
            d.rounded_rectangle(n.bounds, radius=m.dp(4), fill=self.c("field_bg"),
                                outline=self.c("accent" if focused else "outline"), width=m.dp(2) if focused else max(2, m.dp(1)))
        pad = m.dp(16)
        vpad = m.dp(8) if pill else pad
        top = line_height(m.sp(12)) // 2 if w.style.get("label_space") else 0  # room kept for the floating label
        inner = (x1 + pad, y1 + vpad + top, x2 - pad, y2 - vpad)
        if w.text and w.style.get("highlight") == "markdown":
            self.markdown_lines(n.lines, n.font_px, inner)
        elif w.text:
            shown = tuple("•" * len(ln) for ln in n.lines) if w.state.get("password") else n.lines
            self.text_lines(shown, n.font_px, inner, self.c("text"))
            if w.hint and not pill and not plain:
                # floating label on the outline
                lp = max(8, int(n.font_px * 0.72))
                lw = text_width(w.hint, lp)
                lx, ly = x1 + m.dp(12), y1 - lp // 2 - 2
                d.rectangle((lx - 4, ly, lx + lw + 4, ly + lp + 2), fill=self.c("bg"))
                draw_text(d, (lx, ly), w.hint, lp, self.c("accent" if focused else "muted"))
        else:
            self.text_lines(n.lines, n.font_px, inner, self.c("muted"))
        if focused:
            last = (n.lines[-1] if n.lines and w.text else "")
            cx = inner[0] + text_width(last, n.font_px) + 2
            ly = inner[1] + (len(n.lines) - 1 if w.text else 0) * line_height(n.font_px)
            d.line([(cx, ly), (cx, ly + line_height(n.font_px))], fill=self.c("accent"), width=max(2, m.dp(1)))

    def markdown_lines(self, lines: tuple[str, ...], px: int, box: Box) -> None:
        """Markor's highlighting editor: headings bold in the accent colour, list and
        quote markers in the accent colour, the rest as typed."""
        lh = line_height(px)
        x, y = box[0], box[1]
        for ln in lines:
            stripped = ln.lstrip()
            ty = y + (lh - px) * 0.35
            if stripped.startswith("#"):
                draw_text(self.d, (x, ty), ln, px, self.c("accent"), stroke=1)
            elif stripped[:2] in ("- ", "* ", "+ ", "> ") or stripped[:3] in ("[ ]", "[x]"):
                lead = len(ln) - len(stripped) + (3 if stripped.startswith("[") else 2)
                draw_text(self.d, (x, ty), ln[:lead], px, self.c("accent"), stroke=1)
                draw_text(self.d, (x + text_width(ln[:lead], px), ty), ln[lead:], px, self.c("text"))
            else:
                draw_text(self.d, (x, ty), ln, px, self.c("text"))
            y += lh

    def check(self, n: Node) -> None:
        m, d = self.m, self.d
        w = n.widget
        x1, y1, x2, y2 = n.bounds
        s = m.dp(20)
        bx, by = x1 + m.dp(10), (y1 + y2) // 2 - s // 2
        on = bool(w.state.get("checked"))
        if w.kind == "radio":
            d.ellipse((bx, by, bx + s, by + s), outline=self.c("accent" if on else "outline"), width=m.dp(2))
            if on:
                r = s // 4
                d.ellipse((bx + s // 2 - r, by + s // 2 - r, bx + s // 2 + r, by + s // 2 + r), fill=self.c("accent"))
        elif on:
            d.rounded_rectangle((bx, by, bx + s, by + s), radius=m.dp(2), fill=self.c("accent"))
            self.icon("check", (bx, by, bx + s, by + s), self.c("on_accent"))
        else:
            d.rounded_rectangle((bx, by, bx + s, by + s), radius=m.dp(2), outline=self.c("outline"), width=m.dp(2))
        self.text_lines(n.lines, n.font_px, (x1 + m.dp(48), y1, x2, y2), self.c("text"), valign="middle")

    def slider(self, n: Node) -> None:
        m, d = self.m, self.d
        w = n.widget
        x1, y1, x2, y2 = n.bounds
        lo, hi = float(w.state.get("lo", 0)), float(w.state.get("hi", 1))
        v = float(w.state.get("value", lo))
        frac = 0.0 if hi == lo else min(1.0, max(0.0, (v - lo) / (hi - lo)))
        pad = m.dp(16)
        cy = (y1 + y2) // 2
        tx1, tx2 = x1 + pad, x2 - pad
        th = m.dp(4)
        d.rounded_rectangle((tx1, cy - th, tx2, cy + th), radius=th, fill=self.c("tile_off"))
        px = tx1 + int((tx2 - tx1) * frac)
        d.rounded_rectangle((tx1, cy - th, max(tx1 + 2 * th, px), cy + th), radius=th, fill=self.c("accent"))
        r = m.dp(10)
        d.ellipse((px - r, cy - r, px + r, cy + r), fill=self.c("accent"))


@lru_cache(maxsize=32)
def _shadow_mask(w: int, h: int, radius: int, blur: int) -> Image.Image:
    mask = Image.new("L", (w + 4 * blur, h + 4 * blur), 0)
    ImageDraw.Draw(mask).rounded_rectangle((2 * blur, 2 * blur, 2 * blur + w, 2 * blur + h), radius=radius, fill=70)
    return mask.filter(ImageFilter.GaussianBlur(blur / 2))


def drop_shadow(img: Image.Image, box: Box, radius: int, blur: int) -> None:
    """A soft shadow under a floating surface at ``box`` (drawn before the surface),
    falling a little downwards as Material's key light does."""
    x1, y1, x2, y2 = (int(v) for v in box)
    mask = _shadow_mask(x2 - x1, y2 - y1, radius, blur)
    img.paste((0, 0, 0), (x1 - 2 * blur, y1 - 2 * blur + blur // 2), mask)


TOAST_BG = (60, 60, 64)
TOAST_FG = (240, 240, 240)


def draw_toast(img: Image.Image, m: Metrics, message: str, bottom: int) -> Box:
    """A toast (the dark pill Android shows for a few seconds) centred above ``bottom``;
    returns its box."""
    px = m.sp(14)
    tw = text_width(message, px)
    x1 = (img.size[0] - tw) // 2 - m.dp(16)
    y1 = bottom - m.dp(96)
    box = (x1, y1, x1 + tw + m.dp(32), y1 + m.dp(40))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle(box, radius=m.dp(20), fill=TOAST_BG)
    draw_text(d, (x1 + m.dp(16), y1 + m.dp(10)), message, px, TOAST_FG)
    return box


def slider_track(n: Node, m: Metrics) -> tuple[int, int]:
    """The x range of a slider's track (shared by the renderer and the hit handler)."""
    pad = m.dp(16)
    return n.bounds[0] + pad, n.bounds[2] - pad


def render_nodes(img: Image.Image, root: Node, m: Metrics, pal: Palette, bg: Optional[Any] = None) -> None:
    p = Painter(img, m, pal)
    if bg is not None:
        p.d.rectangle(root.bounds, fill=p.c(bg))
    p.node(root)
