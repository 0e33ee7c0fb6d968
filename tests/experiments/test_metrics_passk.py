"""pass@k: the unbiased estimator against brute-force enumeration, and the per-setting table."""

from __future__ import annotations

from itertools import combinations

import pytest

from experiments.metrics.passk import pass_at_k, pass_at_k_table
from tests.support.metrics_support import rec


def brute_force(n: int, c: int, k: int) -> float:
    """Share of the k-subsets of n runs (c of them successes) that contain a success."""
    runs = [True] * c + [False] * (n - c)
    subsets = list(combinations(range(n), k))
    return sum(any(runs[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", range(1, 8))
def test_estimator_matches_enumeration(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(brute_force(n, c, k)), (n, c, k)


def test_pass_at_1_is_the_success_share_and_monotone_in_k():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    values = [pass_at_k(10, 3, k) for k in range(1, 11)]
    assert values == sorted(values)
    assert values[-1] == 1.0 and pass_at_k(5, 0, 5) == 0.0


@pytest.mark.parametrize("args, field", [((0, 0, 1), "n=0"), ((3, 4, 1), "c=4"), ((3, 1, 4), "k=4"),
                                         ((3, 1, 0), "k=0"), ((3, -1, 1), "c=-1")])
def test_bad_input_names_the_field(args, field):
    with pytest.raises(ValueError, match=field):
        pass_at_k(*args)


def test_table_groups_runs_over_seeds_and_repeats_and_averages_over_tasks():
    records = []
    # task A: 4 runs, 1 success; task B: 4 runs, 4 successes; plus an unrelated guard mode
    for i, ok in enumerate([True, False, False, False]):
        records.append(rec(task="A", seed=i // 2, repeat=i % 2, success=ok))
    for i in range(4):
        records.append(rec(task="B", seed=i // 2, repeat=i % 2, success=True))
    records.append(rec(task="A", guard="rules", success=False))
    rows = {(r.guard, r.perturbation): r for r in pass_at_k_table(records)}
    off = rows[("off", "clean")]
    assert off.tasks == 2 and off.runs_per_task == 4
    assert sorted(off.pass_at) == [1, 2, 3, 4]
    for k in range(1, 5):
        assert off.pass_at[k] == pytest.approx((brute_force(4, 1, k) + 1.0) / 2)
    assert rows[("rules", "clean")].pass_at == {1: 0.0}


def test_errored_runs_count_as_failures():
    rows = pass_at_k_table([rec(success=True, status="error"), rec(repeat=1, success=True)])
    assert rows[0].pass_at[1] == pytest.approx(0.5)
