"""Material 3 / Android system dimensions in dp, in one place.

Screens, system bars, the launcher and the keyboard take their spacing from here
(and the overlay engine its bar sizes), so a margin is decided once. Values are
Material 3's (m3.material.io) and AOSP's ``frameworks/base/core/res/res/values/dimens.xml``
/ SystemUI's where Android itself draws the element.
"""

from __future__ import annotations

# -- layout grid ----------------------------------------------------------------------
EDGE = 16  # margin between content and the screen edge on a compact window
GAP = 8  # the small gap between neighbouring controls

# -- top app bar ----------------------------------------------------------------------
TOOLBAR_H = 64  # small top app bar
TOOLBAR_PAD = 4  # the bar's own start/end padding: a 48 dp icon's glyph then sits 16 dp in
TOOLBAR_GAP = 4
TITLE_INSET = EDGE  # headline start without a navigation icon (56 dp with one: 4 + 48 + 4)
TOUCH = 48  # minimum touch target
ICON = 24  # a standard icon glyph

# -- floating action button -----------------------------------------------------------
FAB = 56
FAB_MARGIN = EDGE

# -- system bars (AOSP dimens.xml) ------------------------------------------------------
STATUS_BAR = 28  # status_bar_height on a Pixel-like phone (24 dp + the display cutout's share)
STATUS_BAR_PAD = 16  # start/end padding of the status bar contents (rounded screen corners)
STATUS_ICON = 16  # status_bar_icon_size
NAV_BAR = 48  # navigation_bar_height: three-button navigation at the bottom
NAV_BAR_SIDE = 48  # navigation_bar_width: three-button navigation on a phone's side in landscape
NAV_BAR_GESTURE = 24  # navigation_bar_gesture_height: the strip that holds the gesture pill
NAV_BUTTON_GAP = 96  # between the three navigation buttons
GESTURE_HANDLE_W = 108  # navigation_home_handle_width
GESTURE_HANDLE_H = 4  # navigation_handle_radius x 2
BACK_GESTURE_INSET = 24  # config_backGestureInset: an inward swipe starting this close to an edge is Back

# -- launcher (Pixel Launcher, 4 x 5 grid) ----------------------------------------------
LAUNCHER_ICON = 56
LAUNCHER_LABEL_SP = 12
LAUNCHER_CELL_H = 96
LAUNCHER_HOTSEAT_H = 88
LAUNCHER_QSB_H = 56  # the search bar under the dock
LAUNCHER_GLANCE_H = 96  # the "At a glance" date area

# -- soft keyboard (Gboard) ---------------------------------------------------------------
KEY_H = 48  # one key row's key height, portrait
KEY_H_LANDSCAPE = 32  # Gboard is flatter in landscape, where height is scarce
KEY_GAP = 6  # between keys, horizontally and vertically
KEY_RADIUS = 6
KEYBOARD_PAD = 4  # keyboard_holder's padding
KEYBOARD_STRIP_H = 44  # the suggestion strip (keyboard_header_view_holder)
KEYBOARD_STRIP_H_LANDSCAPE = 32
IME_NAV_H = 48  # the keyboard's own Back / switcher bar under gesture navigation
IME_NAV_H_LANDSCAPE = 36
KEY_LETTER_SP = 22
KEY_LABEL_SP = 15  # "?123", "ABC", the space bar's language
KEY_HINT_SP = 10  # the long-press digit in a key's corner
