"""The simulated soft keyboard: Gboard's layouts (letters, ?123 symbols, =\\< more
symbols, a dial pad for phone fields, a number pad for numeric ones), shift with
auto-capitalisation, a suggestion strip, and the window a real Gboard reports in a
uiautomator dump — package ``com.google.android.inputmethod.latin``, a
``keyboard_holder`` with a ``keyboard_header_view_holder`` (the strip) and an
``input_area`` of clickable key FrameLayouts (``key_pos_0_0`` … ``key_pos_del``,
``key_pos_ime_action``) whose descriptions name them. Layouts and the word list are
data: ``benchmark/data/keyboard.yaml`` and ``keyboard_words.txt``.

Tapping keys types like a person does; ``input_text`` still types the whole string
at once (as ``adb shell input text`` does), so agents need not spell.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Optional

from benchmark.data import lines, table
from benchmark.ui import tokens
from benchmark.ui.widgets import Widget, icon_button, key, row, spacer, text

if TYPE_CHECKING:  # pragma: no cover
    from benchmark.sim.device import SimDevice

IME = "com.google.android.inputmethod.latin"
AUTOCAP_TYPES = ("text",)  # input types whose sentences Gboard capitalises


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    data = table("keyboard")
    for spec in data["layouts"].values():
        spec["units"] = max(sum(_width(data, spec, k) for k in r) for r in spec["rows"])
    return data


def _width(data: dict[str, Any], layout: dict[str, Any], k: str) -> float:
    """A key's width in key units (a pad's keys are all one unit)."""
    special = data["special"].get(k)
    return float(special["width"]) if special and not layout.get("uniform") else 1.0


def layout_for(input_type: str) -> str:
    """The layout a field of ``input_type`` opens with (text, email, url, phone, number)."""
    return _data()["input_types"].get(input_type, "letters")


def current_word(value: str) -> str:
    """The word being typed: what follows the last space or line break."""
    return value.replace("\n", " ").rsplit(" ", 1)[-1]


def suggestions(word: str, limit: int = 2) -> list[str]:
    """Completions of ``word`` from the word list, most common first."""
    w = word.lower()
    if not w:
        return []
    return [x for x in lines("keyboard_words") if x.startswith(w) and x != w][:limit]


@dataclass
class ImeState:
    """What the keyboard shows: its layout and whether shift is on."""

    layout: str = "letters"
    shift: bool = False


class SoftKeyboard:
    """Gboard on the simulated phone: state, key handlers and the window's widgets."""

    def __init__(self, device: "SimDevice"):
        self.device = device
        self.state = ImeState()

    # -- state ------------------------------------------------------------------------
    def reset(self, input_type: str = "text") -> None:
        """A field gained focus: open the layout its input type asks for."""
        self.state = ImeState(layout=layout_for(input_type))

    def _value(self) -> str:
        f = self.device.focus
        return "" if f is None else str(f.store.get(f.key, ""))

    def shifted(self) -> bool:
        """Shift is on: pressed, or the field's sentence starts here (auto-capitalisation)."""
        f = self.device.focus
        if self.state.layout != "letters" or f is None:
            return False
        if self.state.shift:
            return True
        value = self._value()
        return f.input_type in AUTOCAP_TYPES and (not value.strip() or value.endswith((". ", "! ", "? ", "\n")))

    # -- handlers -----------------------------------------------------------------------
    def press(self, ch: str) -> None:
        out = ch.upper() if self.shifted() else ch
        self.state.shift = False
        self.device.type_text(out)

    def special(self, name: str) -> None:
        dev = self.device
        if name == "shift":
            self.state.shift = not self.shifted()
            dev._invalidate()
        elif name == "delete":
            dev.delete_char()
        elif name == "space":
            dev.type_text(" ")
        elif name == "action":
            dev.keyboard_enter()
        elif name in ("symbols", "back_to_symbols"):
            self._switch("symbols")
        elif name == "letters":
            self._switch("letters")
        elif name == "more":
            self._switch("more_symbols")
        # emoji, the features menu and voice typing open panels the simulator does not have

    def _switch(self, layout: str) -> None:
        self.state = ImeState(layout=layout)
        self.device._invalidate()

    def pick(self, word: str) -> None:
        """Tap a suggestion: it replaces the word being typed, followed by a space."""
        dev = self.device
        f = dev.focus
        if f is None:
            return
        value = self._value()
        stem = value[: len(value) - len(current_word(value))]
        f.store[f.key] = stem + word + " "
        self.state.shift = False
        dev._invalidate()

    # -- widgets -----------------------------------------------------------------------
    def widget(self, *, with_nav: bool) -> Widget:
        """The IME window's content: strip, keys and (in gesture navigation) its own
        navigation bar with Back and the input-method switcher."""
        dev = self.device
        landscape = dev.orientation == "landscape"
        data = _data()
        spec = data["layouts"][self.state.layout]
        key_h = tokens.KEY_H_LANDSCAPE if landscape else tokens.KEY_H
        shifted = self.shifted()
        rows: list[Widget] = []
        for r, keys in enumerate(spec["rows"]):
            cells: list[Widget] = []
            col = 0
            for k in keys:
                cells.append(self._key(k, r, col, spec, key_h, shifted))
                if k not in data["special"]:
                    col += 1
            spare = spec["units"] - sum(_width(data, spec, k) for k in keys)
            if spare > 0:  # a shorter row is centred, as Gboard's a-l row
                cells = [spacer_w(spare / 2), *cells, spacer_w(spare / 2)]
            rows.append(row(*cells, gap=tokens.KEY_GAP, emit=True, align="center"))
        strip_h = tokens.KEYBOARD_STRIP_H_LANDSCAPE if landscape else tokens.KEYBOARD_STRIP_H
        holder = Widget(
            "column", id="keyboard_holder", cls="android.widget.LinearLayout",
            children=[self._strip(strip_h),
                      Widget("column", id="input_area", cls="android.widget.LinearLayout", children=rows,
                             style={"gap": tokens.KEY_GAP, "pad": tokens.KEYBOARD_PAD})],
            style={"pad": 0, "gap": 0, "bg": "keyboard_bg"},
        )
        kids = [holder]
        if with_nav:
            kids.append(self._nav_bar())
        return Widget("column", cls="android.widget.FrameLayout", children=kids, style={"bg": "keyboard_bg"})

    def _key(self, k: str, r: int, col: int, spec: dict[str, Any], key_h: float, shifted: bool) -> Widget:
        data = _data()
        special = data["special"].get(k)
        size = tokens.KEY_LETTER_SP if self.device.orientation == "portrait" else tokens.KEY_LETTER_SP - 4
        if special is None:
            label = k.upper() if shifted and k.isalpha() else k
            hints = spec.get("hints") or []
            hint = hints[r][col] if r < len(hints) and col < len(hints[r]) else ""
            sub = (spec.get("subtitles") or {}).get(k, "")
            kid = f"key_pos_{r}_{col}" if self.state.layout == "letters" else f"key_pos_{self.state.layout}_{r}_{col}"
            if k in (",", ".") and r == len(spec["rows"]) - 1:
                kid = f"key_pos_bottom_symbol_{col}"
            return key(label, (lambda c=k: self.press(c)), id=kid, desc=label, hint=hint, subtitle=sub,
                       weight=1.0, h=key_h, role="char", size=size)
        name = k
        icon = special.get("icon", "")
        desc = special.get("desc", "")
        role = "special"
        if name == "action":
            act = data["actions"][self._action()]
            icon, desc, role = act["icon"], act["desc"], "action"
        elif name == "shift" and shifted:
            icon = "shift_on"
        elif name == "space":
            role = "char"
        return key(special.get("label", ""), (lambda n=name: self.special(n)), id=special["id"], desc=desc, icon=icon,
                   weight=_width(data, spec, name), h=key_h, role=role, size=tokens.KEY_LABEL_SP)

    def _action(self) -> str:
        f = self.device.focus
        if f is None:
            return "done"
        if f.ime_action:
            return f.ime_action
        return "enter" if f.multiline else "done"

    def _strip(self, h: float) -> Widget:
        value = self._value()
        word = current_word(value) if self.state.layout == "letters" else ""
        f = self.device.focus
        if f is not None and f.password:
            word = ""
        kids: list[Widget] = [
            _icon_cell("apps", "Open features menu", id="key_pos_header_access_points_menu"),
        ]
        if word:
            words = [word, *suggestions(word)]
            cells = [Widget("row", cls="android.widget.FrameLayout", desc=w, on_click=(lambda x=w: self.pick(x)),
                            children=[text(w, size=16, color="key_text", bold=i == 1, text_align="center", max_lines=1)],
                            style={"weight": 1, "justify": "center", "align": "center", "min_h": h})
                     for i, w in enumerate(words)]
            kids.append(Widget("row", id="softkey_holder_fixed_candidates", cls="android.widget.LinearLayout",
                               children=cells, style={"weight": 1, "gap": 0, "align": "center", "min_h": h}))
        else:
            kids.extend([_icon_cell("clipboard", "Clipboard"), _icon_cell("settings", "Settings"),
                         _icon_cell("palette", "Theme"), spacer_w(1)])
        kids.append(_icon_cell("mic", "Use voice typing", id="key_pos_header_power_key"))
        return Widget("row", id="keyboard_header_view_holder", cls="android.widget.FrameLayout", children=kids,
                      style={"pad": tokens.KEYBOARD_PAD, "gap": tokens.KEYBOARD_PAD, "min_h": h, "align": "center"})

    def _nav_bar(self) -> Widget:
        dev = self.device
        return Widget("row", id="android:id/input_method_navigation_bar_view", cls="android.widget.FrameLayout", children=[
            icon_button("chevron_down", "Back", dev.press_back, id="android:id/input_method_nav_back",
                        cls="android.widget.ImageView", color="key_text"),
            spacer_w(1),
            icon_button("keyboard", "Switch input method", lambda: None, id="android:id/input_method_nav_ime_switcher",
                        cls="android.widget.ImageView", color="key_text"),
        ], style={"pad": tokens.KEYBOARD_PAD, "align": "center",
                  "min_h": tokens.IME_NAV_H_LANDSCAPE if dev.orientation == "landscape" else tokens.IME_NAV_H})


def spacer_w(weight: float) -> Widget:
    """A weighted gap in a row."""
    s = spacer(0)
    s.style["weight"] = weight
    return s


def _icon_cell(icon: str, desc: str, *, id: str = "", on_click: Optional[Callable[[], Any]] = None) -> Widget:
    return Widget("icon_button", id=id, desc=desc, on_click=on_click or (lambda: None), cls="android.widget.FrameLayout",
                  style={"icon": icon, "color": "key_text", "box": 40})
