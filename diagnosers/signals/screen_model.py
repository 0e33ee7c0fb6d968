"""The learned screen model: how likely a screen holds an interruption, from its text and shape.

A logistic regression over hashed features of one observation, trained on the real-screen
corpus's ``dev`` split (``ttir tune train --real``; the training code and scikit-learn live in
``experiments/real_screens/train.py``). Inference here needs numpy alone: the shipped file
``diagnosers/data/screen_model.npz`` holds the weights, the feature layout's version and the
thresholds chosen on ``dev``; nothing in it is executed (``numpy.load(allow_pickle=False)``).

What it holds:

- :func:`screen_features`: the sparse feature vector of a screen (the one function training
  and inference share, so that both see the same features);
- :class:`ScreenModel`: the loaded weights, :meth:`ScreenModel.probability` and the
  :meth:`ScreenModel.verdict` a probability maps to (true / uncertain / false);
- :func:`load_screen_model`: the shipped model (or another file), loaded once per path.

Features (each group hashed into its own part of one space by a salt):

- ``all``: character 3–4-grams and words of every visible text of the app's windows;
- ``top``: the same of the strongest overlay candidate the rules located (else the last
  content window), where a pop-up's own words are;
- ``click``: the labels of clickable controls;
- ``ids``: the words of resource ids (``permission_allow_button``, ``btn_close``);
- ``pkg``: the packages of the windows;
- ``rule``: what the rules said (verdict, the candidate's kind, the names of their
  features, the interruption terms they hit): the rules as evidence, not as the judge;
- numeric: counts and shares of the screen's structure, and how much of the goal the
  candidate's text repeats (a dialog that speaks of the goal is more often the task's own).

Screen text is hostile: every string is cut to ``MAX_TEXT`` characters for its n-grams (and to
``MAX_WORDS_TEXT`` for the goal overlap) and at most ``MAX_STRINGS`` strings per group are read, so
a huge dump costs bounded time.
"""

from __future__ import annotations

import math
import re
import unicodedata
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, get_args

import numpy as np

from diagnosers.signals.cache import cached
from diagnosers.signals.text import content_words
from diagnosers.signals.tree import screen_tree
from ttir.core.types import Observation

FEATURE_VERSION = 1  # bump when screen_features changes: a model file of another version is refused
HASH_BITS = 18
HASH_SIZE = 1 << HASH_BITS
MAX_TEXT = 120  # characters of one string read
MAX_STRINGS = 120  # strings of one group read
MAX_WORDS_TEXT = 10_000  # characters of one string (and of the goal) whose words are compared; the dump parser's clip
NGRAMS = (3, 4)
DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "data" / "screen_model.npz"

ScreenFeatureGroup = Literal["all", "top", "click", "ids", "pkg", "rule"]  # what screen_features reads
ControlFeatureGroup = Literal["clabel", "cid", "cctx"]  # what control_features reads
FeatureGroup = Literal[ScreenFeatureGroup, ControlFeatureGroup]
SCREEN_FEATURE_GROUPS: tuple[ScreenFeatureGroup, ...] = get_args(ScreenFeatureGroup)
CONTROL_FEATURE_GROUPS: tuple[ControlFeatureGroup, ...] = get_args(ControlFeatureGroup)
FEATURE_GROUPS: tuple[FeatureGroup, ...] = SCREEN_FEATURE_GROUPS + CONTROL_FEATURE_GROUPS
# a fixed salt per group: the same n-gram in two groups lands in two buckets
_SALT = {g: zlib.crc32(f"ttir-screen-model:{g}".encode()) for g in FEATURE_GROUPS}
# a group's L2 norm (1 where not named; a model file records the norms it was trained with). The rule group
# at 0.25-0.6 was studied (experiments/real_screens/README.md, `later_rounds`): fewer false alarms on dev
# rounds the rules were not written from, but the simulator's trial offer fell to uncertain; not adopted
GROUP_WEIGHT: dict[FeatureGroup, float] = {}
NUMERIC_FEATURES = (
    "windows", "packages", "log_elements", "log_clickables", "log_texts", "editable", "keyboard", "shade",
    "locked", "top_area", "top_centred", "scrim", "candidates", "rule_score", "goal_in_top", "goal_in_all",
)
CONTROL_NUMERIC = ("x", "y", "width", "height", "rightmost", "lowest", "top_right", "count", "order", "log_label")
_WORD = re.compile(r"\w+", re.UNICODE)
_ID_SPLIT = re.compile(r"[_\W]+|(?<=[a-z])(?=[A-Z])")
ScreenVerdictName = Literal["true", "uncertain", "false"]


def _norm(s: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", s[:MAX_TEXT]).lower().split())


@lru_cache(maxsize=8192)  # screens repeat their labels step after step; the memory stays bounded
def _text_hashes(s: str) -> np.ndarray:
    """The hashes of a string's words and character 3–4-grams (word-bounded), read-only."""
    t = _norm(s)
    out = [zlib.crc32(b"w:" + w.encode()) for w in _WORD.findall(t)]
    padded = f" {t} "
    for n in NGRAMS:
        out.extend(zlib.crc32(padded[i:i + n].encode()) for i in range(len(padded) - n + 1))
    return _frozen(np.array(out, dtype=np.uint32))


@lru_cache(maxsize=8192)
def _token_hashes(s: str) -> np.ndarray:
    """The hashes of whole tokens (rule signals, id words, packages), read-only."""
    return _frozen(np.array([zlib.crc32(b"t:" + s[:MAX_TEXT].encode())], dtype=np.uint32))


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False  # shared by the cache: no caller may change it
    return a


def _id_words(resource_id: str) -> list[str]:
    short = resource_id.rsplit("/", 1)[-1]
    return [w.lower() for w in _ID_SPLIT.split(short) if len(w) > 1][:6] + ([short.lower()] if short else [])


Buckets = list[tuple[np.ndarray, float]]  # per group: its buckets and the weight each gets


def _group_keys(group: FeatureGroup, strings: list[str], tokens: bool = False) -> Optional[np.ndarray]:
    """A group's buckets: each string's hashes counted once (None when it has none)."""
    hashes = [_token_hashes(s) if tokens else _text_hashes(s) for s in dict.fromkeys(strings[:MAX_STRINGS]) if s]
    if not hashes:
        return None
    # with numpy, not a loop over each n-gram: a screen holds thousands of them
    keys = np.unique((np.concatenate(hashes) ^ np.uint32(_SALT[group])) & np.uint32(HASH_SIZE - 1))
    return _frozen(keys) if len(keys) else None


def _add(parts: Buckets, keys: Optional[np.ndarray], weight: float) -> None:
    """Add a group's buckets, the group L2-normalised to ``weight``."""
    if keys is not None:
        parts.append((keys, weight / math.sqrt(len(keys))))


def _group(parts: Buckets, group: FeatureGroup, strings: list[str], tokens: bool = False,
           weight: float = 1.0) -> None:
    """Add a group's features, each string's hashes counted once, the group L2-normalised to ``weight``."""
    _add(parts, _group_keys(group, strings, tokens), weight)


def _sparse(parts: Buckets) -> tuple[np.ndarray, np.ndarray]:
    """The sorted buckets of all groups and their summed weights (summed in group order)."""
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    keys = np.concatenate([k for k, _ in parts]).astype(np.int64)
    idx, where = np.unique(keys, return_inverse=True)
    weights = np.concatenate([np.full(len(k), w) for k, w in parts])
    return idx, np.bincount(where, weights=weights, minlength=len(idx))


@dataclass(frozen=True)
class ScreenFeatures:
    """One screen's sparse hashed features and its numeric ones (in ``NUMERIC_FEATURES`` order)."""

    indices: np.ndarray  # int64, sorted, unique
    values: np.ndarray  # float64
    numeric: np.ndarray  # float64, len(NUMERIC_FEATURES)


@dataclass(frozen=True)
class _ScreenPart:
    """What :func:`screen_features` reads of the screen alone (not of the goal, the rules or the
    norms), computed once per observation: the guard diagnoses one screen more than once (each
    tier, each step of a session that changed nothing)."""

    keys: Mapping[ScreenFeatureGroup, Optional[np.ndarray]]  # the buckets of the groups all, click, ids, pkg
    last_texts: tuple[str, ...]  # the texts of the last content window (the top group's fallback)
    last_bounds: Optional[list[int]]
    all_words: frozenset[str]
    counts: tuple[float, ...]  # windows .. locked of NUMERIC_FEATURES


@cached("screen_model.screen")
def _screen_part(obs: Observation) -> _ScreenPart:
    tree = screen_tree(obs)
    els = obs.elements
    visible = [i for i in tree.content if tree.root_of and tree.root_of[i] not in tree.ime_roots] \
        if tree.roots else list(range(len(els)))
    texts = [s for i in visible for s in (els[i].text, els[i].content_desc) if s]
    clicks = [els[i].text or els[i].content_desc or els[i].resource_id.rsplit("/", 1)[-1]
              for i in visible if els[i].clickable]
    ids = [w_ for i in visible if els[i].resource_id for w_ in _id_words(els[i].resource_id)]
    roots = [r for r in tree.roots if r not in tree.chrome_roots and r not in tree.ime_roots]
    packages = sorted({els[r].package for r in roots if els[r].package})
    last_texts: tuple[str, ...] = ()
    last_bounds = None
    if roots:
        last = roots[-1]
        last_texts = tuple(s for i in visible if tree.root_of[i] == last for s in (els[i].text, els[i].content_desc)
                           if s)
        b = els[last].bounds
        last_bounds = [b[0], b[1], b[2], b[3]]
    return _ScreenPart(
        keys={"all": _group_keys("all", texts), "click": _group_keys("click", clicks),
              "ids": _group_keys("ids", ids, tokens=True), "pkg": _group_keys("pkg", packages, tokens=True)},
        last_texts=last_texts, last_bounds=last_bounds,
        all_words=frozenset(content_words(" ".join(t[:MAX_WORDS_TEXT] for t in texts[:MAX_STRINGS]))),
        counts=(min(len(roots), 6) / 6, min(len(packages), 4) / 4, math.log1p(len(els)) / 8,
                math.log1p(len(clicks)) / 6, math.log1p(len(texts)) / 6,
                float(any(els[i].editable for i in visible)), float(tree.keyboard_open), float(tree.shade_open),
                float(tree.locked)))


def screen_features(obs: Observation, goal: str, rule: Optional[dict[str, Any]] = None,
                    weights: Optional[Mapping[FeatureGroup, float]] = None) -> ScreenFeatures:
    """The features of one screen.

    Args:
        obs: the observation (its UI tree; a tree-less screen has only its OCR lines).
        goal: the task's goal (only how much of it the candidate repeats is used).
        rule: what the rule tier said: ``{"verdict", "details"}`` of its finding, or None.
        weights: each group's norm (default :data:`GROUP_WEIGHT`, what the shipped model was
            trained with; another mapping only to study other weights).

    Returns:
        The screen's :class:`ScreenFeatures`.
    """
    screen = _screen_part(obs)
    w, h = obs.screen_size or (1080, 2400)
    area = float(max(1, w * h))
    details = (rule or {}).get("details") or {}
    verdict = (rule or {}).get("verdict") or "none"
    top_texts = [t for t in ([details.get("title") or ""] + list(details.get("texts") or [])) if t]
    top_bounds = details.get("bounds")
    if not top_texts and screen.last_bounds is not None:
        top_texts, top_bounds = list(screen.last_texts), screen.last_bounds
    rule_tokens = [f"verdict={verdict}", f"kind={details.get('kind') or 'none'}",
                   *(f"feat={k}" for k in sorted(details.get("features") or {})),
                   *(f"hit={x}" for x in (details.get("lexicon_hits") or [])[:20]),
                   *(f"role={b.get('role')}" for b in (details.get("buttons") or [])[:8]),
                   f"hint={details.get('dismiss_hint') or 'none'}"]
    norm = GROUP_WEIGHT if weights is None else weights
    parts: Buckets = []
    keys = {**screen.keys, "top": _group_keys("top", top_texts), "rule": _group_keys("rule", rule_tokens, tokens=True)}
    for group in SCREEN_FEATURE_GROUPS:
        _add(parts, keys[group], norm.get(group, 1.0))
    top_area, centred = 0.0, 0.0
    if top_bounds and len(top_bounds) == 4:
        x1, y1, x2, y2 = top_bounds
        top_area = max(0.0, (x2 - x1) * (y2 - y1)) / area
        centred = float(abs((x1 + x2) / 2 - w / 2) < 0.1 * w and abs((y1 + y2) / 2 - h / 2) < 0.25 * h
                        and top_area < 0.8)
    goal_words = content_words((goal or "")[:MAX_WORDS_TEXT])
    top_words = content_words(" ".join(t[:MAX_WORDS_TEXT] for t in top_texts[:MAX_STRINGS]))
    numeric = np.array([
        *screen.counts, min(top_area, 1.0), centred, float(bool(details.get("scrim"))),
        min(len(details.get("candidates") or []), 5) / 5, min(float(details.get("score") or 0.0), 2.0) / 2,
        len(goal_words & top_words) / len(goal_words) if goal_words else 0.0,
        len(goal_words & screen.all_words) / len(goal_words) if goal_words else 0.0,
    ], dtype=np.float64)
    idx, vals = _sparse(parts)
    return ScreenFeatures(idx, vals, numeric)


def control_features(overlay: dict[str, Any], buttons: list[dict[str, Any]], i: int) -> ScreenFeatures:
    """The features of one control of a located overlay, for the control model.

    Args:
        overlay: the interference finding's details (``kind``, ``bounds``).
        buttons: its buttons (``label``, ``role`` as the vocabulary reads it, ``bounds``,
            ``resource_id``, ``forward`` / ``next_page`` / ``skip``), in the overlay's order.
        i: which button.

    Returns:
        The control's :class:`ScreenFeatures` (``numeric`` in ``CONTROL_NUMERIC`` order).
    """
    b = buttons[i]
    x1, y1, x2, y2 = overlay.get("bounds") or b["bounds"]
    ow, oh = max(1, x2 - x1), max(1, y2 - y1)
    bx1, by1, bx2, by2 = b["bounds"]
    cx, cy = (bx1 + bx2) / 2, (by1 + by2) / 2
    centres = [((c["bounds"][0] + c["bounds"][2]) / 2, (c["bounds"][1] + c["bounds"][3]) / 2) for c in buttons]
    n = len(buttons)
    ctx = [f"kind={overlay.get('kind') or 'none'}", f"role={b.get('role') or 'none'}", f"n={min(n, 5)}",
           f"order={min(i, 4)}", f"last={i == n - 1}", f"forward={bool(b.get('forward'))}",
           f"next_page={bool(b.get('next_page'))}", f"skip={bool(b.get('skip'))}",
           f"kind_role={overlay.get('kind')}:{b.get('role')}", f"empty_label={not (b.get('label') or '').strip()}"]
    parts: Buckets = []
    _group(parts, "clabel", [b.get("label") or ""])
    _group(parts, "cid", _id_words(b.get("resource_id") or ""), tokens=True)
    _group(parts, "cctx", ctx, tokens=True)
    rx, ry = (cx - x1) / ow, (cy - y1) / oh
    numeric = np.array([
        min(max(rx, 0.0), 1.0), min(max(ry, 0.0), 1.0), min((bx2 - bx1) / ow, 1.0), min((by2 - by1) / oh, 1.0),
        float(cx >= max(c[0] for c in centres)), float(cy >= max(c[1] for c in centres)),
        float(rx > 0.75 and ry < 0.25), min(n, 8) / 8, min(i, 8) / 8, math.log1p(len(b.get("label") or "")) / 4,
    ], dtype=np.float64)
    idx, vals = _sparse(parts)
    return ScreenFeatures(idx, vals, numeric)


@dataclass(frozen=True)
class LinearModel:
    """A logistic regression over hashed and numeric features."""

    hashed: np.ndarray
    numeric: np.ndarray
    bias: float

    def probability(self, features: ScreenFeatures) -> float:
        """The probability of the positive class for ``features``."""
        z = self.bias + float(np.dot(self.hashed[features.indices], features.values)) \
            + float(np.dot(self.numeric, features.numeric))
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


class ScreenModelError(ValueError):
    """A model file that cannot be used (missing, another feature version, wrong shapes)."""


@dataclass(frozen=True)
class ScreenModel:
    """The learned interference detector and control picker: weights, thresholds, where they came from."""

    screen: LinearModel  # P(the screen holds an interruption)
    control: LinearModel  # P(a control of the located overlay closes it safely)
    threshold: float  # screen probability at or above which the verdict is "true"
    uncertain: float  # screen probability at or above which it is "uncertain"
    control_threshold: float  # control probability at or above which a control of no known role dismisses
    control_veto: float  # below this, a control the vocabulary calls dismiss is not tapped as one
    trained_on: str  # what it was trained on (files, repositories, date), for reports
    group_weight: Mapping[FeatureGroup, float]  # the feature groups' norms it was trained with

    def features(self, obs: Observation, goal: str, rule: Optional[dict[str, Any]] = None) -> ScreenFeatures:
        """A screen's features as this model was trained to read them (:func:`screen_features`
        with its :attr:`group_weight`).

        Args:
            obs, goal, rule: as :func:`screen_features` takes them.

        Returns:
            The screen's :class:`ScreenFeatures`.
        """
        return screen_features(obs, goal, rule, self.group_weight)

    def probability(self, features: ScreenFeatures) -> float:
        """The probability that the screen holds an interruption.

        Args:
            features: the screen's :func:`screen_features`.

        Returns:
            A probability in [0, 1].
        """
        return self.screen.probability(features)

    def verdict(self, p: float) -> ScreenVerdictName:
        """``true`` at or above the threshold, ``uncertain`` at or above the lower one, else ``false``."""
        return "true" if p >= self.threshold else "uncertain" if p >= self.uncertain else "false"

    def control_probabilities(self, overlay: dict[str, Any], buttons: list[dict[str, Any]]) -> list[float]:
        """P(dismisses) of each of an overlay's controls.

        Args:
            overlay: the interference finding's details.
            buttons: its buttons.

        Returns:
            One probability per button, in order.
        """
        return [self.control.probability(control_features(overlay, buttons, i)) for i in range(len(buttons))]


def save_screen_model(path: Path, screen: LinearModel, control: LinearModel, thresholds: dict[str, float],
                      trained_on: str, group_weight: Optional[Mapping[FeatureGroup, float]] = None) -> None:
    """Write a model file (numpy's npz, compressed; no pickled objects).

    Args:
        path: the file to write.
        screen, control: the two logistic regressions.
        thresholds: ``threshold``, ``uncertain``, ``control_threshold``, ``control_veto``.
        trained_on: a sentence naming the training data (files, repositories, date).
        group_weight: the feature groups' norms the model was trained with (default
            :data:`GROUP_WEIGHT`); inference reads them from the file.
    """
    norm = GROUP_WEIGHT if group_weight is None else group_weight
    np.savez_compressed(
        path, version=np.array(FEATURE_VERSION), hashed=screen.hashed.astype(np.float32),
        numeric=screen.numeric.astype(np.float32), bias=np.array(screen.bias),
        control_hashed=control.hashed.astype(np.float32), control_numeric=control.numeric.astype(np.float32),
        control_bias=np.array(control.bias),
        thresholds=np.array([thresholds[k] for k in THRESHOLDS]), trained_on=np.array(trained_on),
        numeric_names=np.array(NUMERIC_FEATURES + CONTROL_NUMERIC),
        group_weight=np.array([float(norm.get(g, 1.0)) for g in FEATURE_GROUPS]))


THRESHOLDS = ("threshold", "uncertain", "control_threshold", "control_veto")


@lru_cache(maxsize=4)
def load_screen_model(path: Optional[str] = None) -> ScreenModel:
    """The model in ``path`` (default: the shipped one), loaded once.

    Args:
        path: a model file written by ``ttir tune train --real``; None for the shipped one.

    Returns:
        The :class:`ScreenModel`.

    Raises:
        ScreenModelError: the file is missing or was written for other features.
    """
    p = Path(path) if path else DEFAULT_MODEL
    try:
        with np.load(p, allow_pickle=False) as z:
            version = int(z["version"])
            names = tuple(str(x) for x in z["numeric_names"])
            if version != FEATURE_VERSION or names != NUMERIC_FEATURES + CONTROL_NUMERIC \
                    or z["hashed"].shape != (HASH_SIZE,) or z["control_hashed"].shape != (HASH_SIZE,):
                raise ScreenModelError(f"screen_model_file={p}: written for feature version {version} "
                                       f"({len(names)} numeric features), this code reads version {FEATURE_VERSION}; "
                                       "regenerate it with `ttir tune train --real`")
            t = dict(zip(THRESHOLDS, (float(x) for x in z["thresholds"])))
            # a file written before the norms were recorded was trained with them all at 1
            weights = [float(x) for x in z["group_weight"]] if "group_weight" in z.files else [1.0] * len(FEATURE_GROUPS)
            if len(weights) != len(FEATURE_GROUPS) or not all(0.0 <= w <= 10.0 for w in weights):
                raise ScreenModelError(f"screen_model_file={p}: group_weight={weights[:12]} is not one norm in "
                                       f"[0, 10] per feature group {FEATURE_GROUPS}; regenerate it with "
                                       "`ttir tune train --real`")
            return ScreenModel(
                screen=LinearModel(z["hashed"].astype(np.float64), z["numeric"].astype(np.float64), float(z["bias"])),
                control=LinearModel(z["control_hashed"].astype(np.float64), z["control_numeric"].astype(np.float64),
                                    float(z["control_bias"])),
                trained_on=str(z["trained_on"]), group_weight=dict(zip(FEATURE_GROUPS, weights)), **t)
    except ScreenModelError:
        raise
    except (OSError, KeyError, ValueError) as exc:
        raise ScreenModelError(f"screen_model_file={p}: cannot be read ({exc}); expected a file written by "
                               "`ttir tune train --real`") from exc
