import random

import pytest

from experiments.metrics.intervals import cluster_interval


def test_the_interval_holds_the_pooled_ratio_and_repeats_with_the_seed():
    clusters = [(3, 4), (0, 2), (5, 5), (1, 3), (2, 2), (0, 1)]
    a = cluster_interval(clusters, random.Random(7))
    b = cluster_interval(clusters, random.Random(7))
    pooled = sum(h for h, _ in clusters) / sum(t for _, t in clusters)
    assert a == b and a[0] <= pooled <= a[1] and a[0] < a[1]


def test_alike_items_of_one_cluster_widen_the_interval():
    # ten clusters that are all-or-nothing: 10 items each, every item of a cluster alike
    clustered = [(10, 10)] * 5 + [(0, 10)] * 5
    items = [(1, 1)] * 50 + [(0, 1)] * 50  # the same 100 items, as if independent
    lo_c, hi_c = cluster_interval(clustered, random.Random(0))
    lo_i, hi_i = cluster_interval(items, random.Random(0))
    assert hi_c - lo_c > 1.5 * (hi_i - lo_i)


def test_a_ratio_with_no_spread_has_a_point_interval():
    assert cluster_interval([(0, 3), (0, 5)], random.Random(0)) == (0.0, 0.0)
    assert cluster_interval([(2, 2), (4, 4)], random.Random(0)) == (1.0, 1.0)


def test_nothing_to_resample_gives_none():
    assert cluster_interval([], random.Random(0)) is None
    assert cluster_interval([(0, 0), (0, 0)], random.Random(0)) is None


@pytest.mark.parametrize("kwargs,field", [({"resamples": 0}, "resamples"), ({"level": 1.0}, "level"),
                                          ({"level": 0}, "level")])
def test_bad_settings_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        cluster_interval([(1, 2)], random.Random(0), **kwargs)


def test_the_bounds_keep_enough_places_to_be_printed_once():
    # one cluster: every resample is 11 / 301 = 3.6545 %, which bounds kept to four places print as 3.6 %
    lo, hi = cluster_interval([(11, 301)], random.Random(0))
    assert f"{100 * lo:.1f}" == f"{100 * hi:.1f}" == "3.7"
