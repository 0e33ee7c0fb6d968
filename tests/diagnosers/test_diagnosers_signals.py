"""The shared signals under the rule diagnosers: text, lexicon, tree analysis,
thumbnails and screen comparison."""

from __future__ import annotations

from PIL import ImageDraw

from diagnosers.signals import compare
from diagnosers.signals.image import changed_pixels, hash_distance, thumb
from diagnosers.signals.lexicon import load_lexicon
from diagnosers.signals.text import content_words, quoted, stem, text_landed, words
from diagnosers.signals.tree import foreground_package, screen_tree
from tests.support.diagnosers_support import dump, retext, with_screenshot


def test_words_and_stems():
    assert "wifi" in words("Wi\u2011Fi")  # a non-breaking hyphen, as Settings writes it
    assert stem("deleted") == stem("delete") == stem("deletes")
    assert stem("recipes") == stem("recipe") and stem("contacts") == "contact"
    assert content_words("Turn brightness to the max value.") == {"brightness", "max"}
    assert "13920741751" in words("+1 392-074-1751")


def test_quoted_targets_and_typed_text():
    assert quoted('Tap "Save"') == ["save"]
    assert quoted("don't tap the user's row") == []
    assert text_landed("+13920741751", "+1 392-074-1751")
    assert not text_landed("+13920741751", "Company")


def test_lexicon_roles_prefer_the_longest_phrase():
    lex = load_lexicon()
    assert lex.role("Don’t allow") == "dismiss" and lex.role("Allow") == "engage"
    assert lex.role("Close ad") == "dismiss" and lex.role("Close app") == "destructive"
    assert lex.role("Reject all") == "dismiss" and lex.role("Accept all") == "engage"
    assert lex.role("Zucchini Soup") is None
    assert "limited time" in lex.hits(["Limited-time offer"])


def test_tree_analysis_finds_bars_keyboard_shade_and_banners():
    t = screen_tree(dump("recipe_list"))
    assert len(t.chrome_roots) == 2 and not t.ime_roots and not t.shade_open
    assert "9:41" not in t.texts  # the clock is chrome
    assert screen_tree(dump("keyboard_form")).keyboard_open
    assert screen_tree(dump("shade_open")).shade_open
    assert len(screen_tree(dump("heads_up_message")).heads_up_roots) == 1
    assert foreground_package(dump("recipe_list")) == "com.flauschcode.broccoli"


def test_clock_changes_are_not_screen_changes():
    a, b = dump("recipe_list"), retext(dump("recipe_list"), "9:41", "9:42")
    assert not compare(a, b).changed
    assert compare(a, retext(dump("recipe_list"), "Garlic Bread", "Onion Bread")).changed


def test_thumbnails_and_pixel_changes():
    a, b = with_screenshot(dump("recipe_list")), with_screenshot(dump("recipe_list"))
    t = thumb(a)
    assert max(t.pixels.shape) <= 220 and t.size == (1080, 2400)
    assert hash_distance(a, b) == 0 and changed_pixels(a, b) == 0
    img = b.screenshot.copy()
    ImageDraw.Draw(img).rectangle((100, 1200, 300, 1400), fill=(0, 0, 0))
    c = b.replace(screenshot=img)
    assert changed_pixels(a, c) > 0
    assert changed_pixels(a, c, region=(700, 300, 900, 400)) == 0  # elsewhere nothing moved
    assert thumb(a) is t  # computed once per observation


def test_a_gates_way_on_may_lead_a_longer_label():
    from diagnosers.signals.overlays import _is_forward, gates

    fw = gates().forward
    assert _is_forward("Commencer — 3 jours gratuits →", fw)
    assert _is_forward("Next →", fw)
    assert not _is_forward("Nextdoor — your neighbourhood", fw)


def test_a_sign_in_control_may_lead_or_close_a_longer_label_at_a_word_boundary():
    from diagnosers.signals.overlays import _names_sign_in, gates

    g = gates().sign_in
    assert _names_sign_in("Log in with Facebook", g)
    assert _names_sign_in("Already have an account? Log in.", g)
    assert _names_sign_in("登录/注册", g)
    assert not _names_sign_in("Blog in", g)  # not at a word boundary
    assert not _names_sign_in("Forgot your login details?", g)  # the phrase is in the middle
    assert not _names_sign_in("Log in " + "to read the whole story " * 3, g)  # a sentence, not a control


def test_everyday_content_words_are_no_interruption_wording():
    """An expense list ("Wedding Gift", "Expenses this month") scored as an interruption's page
    once "gift" was an interruption term: task alignment then called 75 on-track steps off track."""
    from diagnosers.signals.lexicon import load_lexicon

    hits = load_lexicon().hits(["Expenses this month", "Wedding Gift", "Oct 12, 2023 · Social", "Parking"])
    assert sum(hits.values()) < 0.3, hits
