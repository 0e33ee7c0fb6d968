"""How sure a ratio is: a percentile bootstrap over clusters.

Screens of one repository (episodes of one task) are alike: the same app, the same
labeller, the same dialogs. Resampling single items would treat 20 dumps of one app
as 20 independent looks and give intervals that are too narrow, so whole clusters
are resampled: each draw picks as many clusters as there are, with replacement, and
pools their counts."""

from __future__ import annotations

import random
from typing import Optional, Sequence

RESAMPLES = 2000
LEVEL = 0.95


def cluster_interval(clusters: Sequence[tuple[int, int]], rng: random.Random, resamples: int = RESAMPLES,
                     level: float = LEVEL) -> Optional[tuple[float, float]]:
    """The ``level`` percentile interval of sum(hits) / sum(totals) over resampled
    clusters. ``clusters`` holds one (hits, total) pair per cluster; clusters with no
    items are ignored. None when there is nothing to resample."""
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie between 0 and 1 (exclusive), got {level}")
    kept = [(h, t) for h, t in clusters if t > 0]
    if not kept:
        return None
    n = len(kept)
    ratios = []
    for _ in range(resamples):
        hits = total = 0
        for _ in range(n):
            h, t = kept[rng.randrange(n)]
            hits += h
            total += t
        ratios.append(hits / total)
    ratios.sort()
    tail = (1 - level) / 2
    lo = ratios[int(tail * (resamples - 1))]
    hi = ratios[int(round((1 - tail) * (resamples - 1)))]
    # six places: reports print one decimal of a percentage, and bounds rounded to four first
    # would be rounded twice (0.0365 prints as 3.6 %, not the 3.7 % of 0.036545)
    return round(lo, 6), round(hi, 6)
