"""Success rate, Δc / Δstep (Table 2), RSR (D-GARA) and failed-task counts (Figure 4)."""

from __future__ import annotations

import pytest

from experiments.metrics.episodes import make_pairs
from experiments.metrics.success import delta_table, failure_counts, success_rates
from tests.support.metrics_support import rec


def _records():
    """Tasks A-D, agent planner, guard off: clean + font (state) + drop (action) + popup (transition)."""
    out = []
    clean = {"A": (True, 5), "B": (True, 6), "C": (True, 4), "D": (False, 40)}
    font = {"A": (True, 7), "B": (False, 40), "C": (True, 4), "D": (False, 40)}
    drop = {"A": (True, 6), "B": (True, 8), "C": (True, 5), "D": (True, 9)}
    popup = {"A": (False, 40), "B": (False, 40), "C": (True, 7), "D": (False, 40)}
    for task in "ABCD":
        out.append(rec(task=task, success=clean[task][0], steps=clean[task][1]))
        out.append(rec(task=task, perturbation="font_size_large", component="state", success=font[task][0],
                       steps=font[task][1]))
        out.append(rec(task=task, perturbation="action_drop_random", component="action", success=drop[task][0],
                       steps=drop[task][1]))
        out.append(rec(task=task, perturbation="popup_security", component="transition", success=popup[task][0],
                       steps=popup[task][1]))
    out.append(rec(task="A", perturbation="trap_loop", component="transition", layer="R", success=False, steps=46))
    out.append(rec(task="B", perturbation="trap_loop", component="transition", layer="R", success=True, steps=9))
    return out


def test_success_rate_per_setting_counts_errors_as_failures():
    records = _records() + [rec(task="E", success=True, status="error", steps=None)]
    rows = {r.perturbation: r for r in success_rates(records)}
    assert rows["clean"].episodes == 5 and rows["clean"].successes == 3 and rows["clean"].errors == 1
    assert rows["clean"].success_rate == pytest.approx(3 / 5)
    assert rows["font_size_large"].success_rate == pytest.approx(0.5)
    assert rows["clean"].mean_steps == pytest.approx((5 + 6 + 4 + 40) / 4)  # the errored episode has no steps


def test_delta_c_and_delta_step_per_component():
    (row,) = delta_table(_records(), "component")
    state, action, transition, overall = (row.cell(g) for g in ("state", "action", "transition", "overall"))
    assert state.pairs == 4 and state.clean_sr == pytest.approx(0.75) and state.pert_sr == pytest.approx(0.5)
    assert state.delta_c == pytest.approx(0.25)
    # both solved: A (7-5) and C (4-4)
    assert state.step_pairs == 2 and state.delta_step == pytest.approx(1.0)
    assert action.delta_c == pytest.approx(0.75 - 1.0)  # negative: D solved only when perturbed
    assert action.delta_step == pytest.approx(((6 - 5) + (8 - 6) + (5 - 4)) / 3)
    assert transition.delta_c == pytest.approx(0.5) and transition.delta_step == pytest.approx(3.0)
    assert overall.pairs == 12  # AnTrap traps are not in the AndroidReality table
    assert overall.pert_sr == pytest.approx((2 + 4 + 1) / 12)
    assert overall.delta_c == pytest.approx(0.75 - 7 / 12)


def test_antrap_layers_and_per_type():
    (layers,) = delta_table(_records(), "layer")
    assert [c.group for c in layers.cells] == ["overall", "R"]
    r = layers.cell("R")
    assert r.pairs == 2 and r.clean_sr == 1.0 and r.pert_sr == 0.5 and r.delta_step == pytest.approx(9 - 6)
    (per_type,) = delta_table(_records(), "perturbation")
    assert [c.group for c in per_type.cells] == ["font_size_large", "action_drop_random", "popup_security", "trap_loop"]


def test_rsr_is_the_share_of_clean_solved_pairs_still_solved():
    (row,) = delta_table(_records(), "component")
    t = row.cell("transition")
    assert (t.solved_clean, t.still_solved) == (3, 1) and t.rsr == pytest.approx(1 / 3)
    a = row.cell("action")
    assert a.rsr == 1.0  # D solved only when perturbed does not count: it was not solved clean


def test_pairs_need_the_same_agent_guard_seed_and_repeat():
    records = [rec(task="A"), rec(task="A", perturbation="p", seed=1), rec(task="A", perturbation="p", guard="rules"),
               rec(task="A", perturbation="p", repeat=0)]
    pairs = make_pairs(records)
    assert len(pairs) == 1 and pairs[0][0].seed == 0 and pairs[0][0].guard == "off"


def test_no_pair_gives_empty_cells_not_zeroes():
    assert delta_table([rec(perturbation="p")], "component") == []


def test_failure_counts_with_and_without_the_guard():
    records = []
    for task, off_clean, on_clean, off_pert, on_pert in [("A", True, True, False, True), ("B", False, True, False, False),
                                                          ("C", True, True, True, True), ("D", False, False, False, True)]:
        records += [rec(task=task, success=off_clean), rec(task=task, guard="rules", success=on_clean),
                    rec(task=task, perturbation="p", success=off_pert),
                    rec(task=task, perturbation="p", guard="rules", success=on_pert)]
    records.append(rec(task="E", perturbation="p", success=False))  # no guarded twin: not matched
    rows = {r.condition: r for r in failure_counts(records)}
    assert (rows["clean"].failed_without, rows["clean"].failed_with) == (2, 1)
    assert rows["clean"].reduction == pytest.approx(0.5)
    assert (rows["perturbed"].episodes, rows["perturbed"].failed_without, rows["perturbed"].failed_with) == (4, 3, 1)
    assert rows["perturbed"].reduction == pytest.approx(2 / 3)
    assert all(r.guard == "rules" for r in rows.values())


def test_failure_counts_need_guard_off():
    assert failure_counts([rec(guard="rules"), rec(guard="vlm")]) == []
