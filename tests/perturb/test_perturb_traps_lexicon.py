"""The traps' building blocks: antonym dictionary, label permutation, wrong text,
choosing a deviated tap target, and the pixel helpers."""

from __future__ import annotations

import random

import pytest
from PIL import Image, ImageDraw

from perturb.traps import lexicon, pixels
from perturb.traps.action import pick_alternative
from ttir.core.types import Observation


def test_dictionary_has_24_pairs_mapping_both_ways():
    pairs = lexicon.antonym_pairs()
    assert len(pairs) == 24
    for a, b in [("Save", "Delete"), ("Allow", "Deny"), ("Confirm", "Cancel"), ("On", "Off")]:
        assert (a, b) in pairs
        assert lexicon.antonym(a) == b and lexicon.antonym(b.upper()) == a


def test_swap_antonyms_keeps_case_and_matches_whole_words():
    assert lexicon.swap_antonyms("Delete contact?") == "Save contact?"
    assert lexicon.swap_antonyms("ALLOW") == "DENY"
    assert lexicon.swap_antonyms("Turn on Wi-Fi") == "Turn off Wi-Fi"
    assert lexicon.swap_antonyms("Sign in") == "Sign out"
    assert lexicon.swap_antonyms("Online") is None  # "On" inside a word is not a match
    assert lexicon.swap_antonyms("Lena Nakamura") is None


def test_unrecognised_labels_fall_back_to_a_character_permutation():
    rng = random.Random(3)
    new, how = lexicon.hallucinate("Lena Nakamura", rng)
    assert how == "permutation" and new != "Lena Nakamura"
    assert [sorted(w) for w in new.split(" ")] == [sorted(w) for w in "Lena Nakamura".split(" ")]
    assert lexicon.hallucinate("Cancel", rng) == ("Confirm", "antonym")
    assert lexicon.permute("aa", rng) == "aa"  # nothing to permute


def test_wrong_text_differs_and_keeps_character_kinds():
    rng = random.Random(0)
    for _ in range(20):
        text, mode = lexicon.wrong_text("+13920741751", rng, "characters")
        assert text != "+13920741751" and mode == "characters"
        assert text[0] == "+" and text[1:].isdigit() and len(text) == 12
    text, mode = lexicon.wrong_text("Hugo", rng, "dictionary")
    assert mode == "dictionary" and text in lexicon.wrong_texts()
    with pytest.raises(ValueError, match="mode='nonsense'"):
        lexicon.wrong_text("x", rng, "nonsense")


def _node(text: str, rid: str, bounds: tuple[int, int, int, int], clickable: bool = True) -> str:
    x1, y1, x2, y2 = bounds
    return (f'<node index="0" text="{text}" resource-id="{rid}" class="android.widget.Button" package="com.example" '
            f'content-desc="" clickable="{str(clickable).lower()}" enabled="true" bounds="[{x1},{y1}][{x2},{y2}]" />')


def _dialog(*nodes: str) -> Observation:
    xml = ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
           '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" '
           'content-desc="" bounds="[0,0][1080,2400]">' + "".join(nodes) + "</node></hierarchy>")
    return Observation.from_xml(xml)


def test_deviated_tap_prefers_the_opposite_meaning_over_the_nearest():
    obs = _dialog(
        _node("Help", "help", (100, 1200, 300, 1300)),        # nearest to Confirm
        _node("Cancel", "button2", (500, 1450, 700, 1550)),   # its antonym, further away
        _node("Confirm", "button1", (400, 1200, 600, 1300)),
    )
    src, dst, reason = pick_alternative(obs, (500, 1250))
    assert obs.elements[src].resource_id == "button1"
    assert obs.elements[dst].resource_id == "button2" and reason == "antonym"


def test_deviated_tap_without_an_antonym_takes_the_nearest_touchable_element():
    obs = _dialog(
        _node("Far", "far", (0, 100, 100, 200)),
        _node("Label", "label", (100, 1200, 300, 1300), clickable=False),
        _node("Near", "near", (700, 1200, 900, 1300)),
        _node("Delete", "button1", (400, 1200, 600, 1300)),
    )
    src, dst, reason = pick_alternative(obs, (500, 1250))
    assert obs.elements[dst].resource_id == "near" and reason == "nearest"
    assert pick_alternative(_dialog(_node("Only", "only", (0, 0, 100, 100))), (50, 50)) is None


def test_label_located_and_redrawn_in_the_contrast_inverted_colour():
    img = Image.new("RGB", (400, 120), (240, 240, 245))
    ImageDraw.Draw(img).text((150, 60), "Cancel", font=pixels.label_font(32), fill=(20, 90, 200), anchor="lm")
    box = (0, 0, 400, 120)
    found = pixels.locate_label(img, box)
    assert found is not None
    ink, bg = found
    assert bg == (240, 240, 245)
    assert 140 <= ink[0] <= 160 and ink[2] > 200  # the text, not the box
    before = img.copy()
    region = pixels.draw_label(img, box, ink, "Confirm", "Cancel", bg)
    changed = pixels.changed_box(before, img)
    assert changed is not None
    assert region[0] <= changed[0] and region[1] <= changed[1] and changed[2] <= region[2] and changed[3] <= region[3]
    colour = pixels.contrast_color(bg)
    assert colour == (15, 15, 10)
    counts = {c: n for n, c in img.crop(region).getcolors(maxcolors=1 << 20)}
    assert counts.get(colour, 0) > 50
    assert (20, 90, 200) not in counts  # the old text is gone


def test_contrast_colour_avoids_invisible_mid_tones():
    assert pixels.contrast_color((255, 255, 255)) == (0, 0, 0)
    assert pixels.contrast_color((128, 128, 128)) in ((0, 0, 0), (255, 255, 255))
    assert pixels.contrast_color((11, 87, 208)) == (244, 168, 47)
