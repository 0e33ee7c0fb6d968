"""Done-gated success and fired perturbations, metric by metric, on a hand-built episode log.

The log: tasks A-D, planner, guard off and rules. Two episodes end by budget on a VERIFIED
state (A clean / guard off, B perturbed / guard rules): AndroidWorld scores them 0, and so
must every metric here. One perturbed episode per guard mode never fired (D): it is a clean
run under another name and must stay out of every perturbed figure.
"""

from __future__ import annotations

import pytest

from experiments.metrics.adr import adr_pairs
from experiments.metrics.attribution import attribute_run
from experiments.metrics.episodes import fired, succeeded, termination_of, verified, verified_not_done
from experiments.metrics.guardstats import check_trigger
from experiments.metrics.passk import pass_at_k_table
from experiments.metrics.success import delta_table, failure_counts, success_rates
from tests.support.metrics_support import click, rec, run_of, step, traj

DROP = "action_drop_random"


def _log() -> list[dict]:
    out = []
    for guard in ("off", "rules"):
        out += [
            rec(task="A", guard=guard, steps=4, termination="budget" if guard == "off" else "done"),
            rec(task="B", guard=guard, steps=5),
            rec(task="C", guard=guard, steps=6),
            rec(task="D", guard=guard, steps=7),
            rec(task="A", guard=guard, perturbation=DROP, component="action", steps=6),
            rec(task="B", guard=guard, perturbation=DROP, component="action", steps=40,
                termination="done" if guard == "off" else "budget"),
            rec(task="C", guard=guard, perturbation=DROP, component="action", success=False, steps=40,
                termination="budget"),
            rec(task="D", guard=guard, perturbation=DROP, component="action", steps=7, fired=False),
        ]
    return out


def _by(records, **where):
    return next(r for r in records if all(r.get(k) == v for k, v in where.items()))


def test_a_verified_episode_that_ran_out_of_budget_is_not_a_success():
    log = _log()
    a = _by(log, task="A", guard="off", perturbation="clean")
    assert verified(a) and termination_of(a) == "budget"
    assert not succeeded(a) and verified_not_done(a)
    legacy = {"id": "x", "task": "A", "agent": "p", "success": True, "termination": "budget"}  # before `verified`
    assert verified(legacy) and not succeeded(legacy)
    assert succeeded({**legacy, "termination": "complete"}) and termination_of({**legacy, "termination": "complete"}) == "done"
    assert termination_of({**legacy, "status": "error"}) == "error"


def test_success_rate_counts_verified_not_done_apart_and_skips_unfired_episodes():
    rows = {(r.guard, r.perturbation): r for r in success_rates(_log())}
    clean_off = rows[("off", "clean")]
    assert (clean_off.successes, clean_off.scored, clean_off.verified_not_done) == (3, 4, 1)
    assert clean_off.terminations == {"done": 3, "budget": 1} and clean_off.fired is None
    drop_rules = rows[("rules", DROP)]
    assert drop_rules.episodes == 4 and drop_rules.fired == 3 and drop_rules.not_reached == ["D-i0__action_drop_random__planner__rules__s0r0"]
    assert drop_rules.successes == 1 and drop_rules.success_rate == pytest.approx(1 / 3)  # A; B ran out of budget
    assert drop_rules.verified_not_done == 1 and drop_rules.terminations == {"done": 1, "budget": 2}


def test_delta_c_delta_step_and_rsr_use_fired_pairs_and_gated_success():
    rows = {r.guard: r for r in delta_table(_log(), "component")}
    off, rules = rows["off"].cell("action"), rows["rules"].cell("action")
    # off: pairs A, B, C (D never fired); clean A ran out of budget
    assert off.pairs == 3 and off.not_reached == 1
    assert off.clean_sr == pytest.approx(2 / 3) and off.pert_sr == pytest.approx(2 / 3)
    assert off.delta_c == pytest.approx(0.0)
    assert off.step_pairs == 1 and off.delta_step == pytest.approx(40 - 5)  # only B solved both ways
    assert (off.solved_clean, off.still_solved) == (2, 1) and off.rsr == pytest.approx(0.5)
    assert rules.clean_sr == 1.0 and rules.pert_sr == pytest.approx(1 / 3) and rules.rsr == pytest.approx(1 / 3)
    (per_type,) = [r for r in delta_table(_log(), "perturbation") if r.guard == "off"]
    assert per_type.cell(DROP).pairs == 3 and per_type.cell(DROP).not_reached == 1


def test_pass_at_k_counts_gated_successes_over_fired_runs():
    rows = {(r.guard, r.perturbation): r for r in pass_at_k_table(_log())}
    assert rows[("off", "clean")].pass_at[1] == pytest.approx(3 / 4)
    assert rows[("rules", DROP)].tasks == 3 and rows[("rules", DROP)].pass_at[1] == pytest.approx(1 / 3)


def test_failure_counts_gate_on_done_and_keep_pairs_fired_in_either_run():
    rows = {r.condition: r for r in failure_counts(_log())}
    assert rows["clean"].episodes == 4 and rows["clean"].failed_without == 1 and rows["clean"].failed_with == 0
    # perturbed: A, B, C (D fired in neither run); off fails C, rules fails B (budget) and C
    assert rows["perturbed"].episodes == 3
    assert (rows["perturbed"].failed_without, rows["perturbed"].failed_with) == (1, 2)
    log = _log()
    _by(log, task="D", guard="rules", perturbation=DROP).update(fired=True)
    assert {r.condition: r for r in failure_counts(log)}["perturbed"].episodes == 4


def test_attribution_and_adr_treat_budget_endings_as_failures():
    log = _log()
    trajs = {r["id"]: traj([step(0, click(10, 10)), step(1, click(20, 20), n_elements=11)],
                           termination=r["termination"]) for r in log}
    run = run_of(log, trajs)
    failed = {a.id for a in attribute_run(run)}
    assert _by(log, task="A", guard="off", perturbation="clean")["id"] in failed
    assert _by(log, task="B", guard="rules", perturbation=DROP)["id"] in failed
    assert failed == {r["id"] for r in log if not succeeded(r)}
    pairs = {(p.guard, p.id.split("-")[0]): p for p in adr_pairs(run)}
    assert ("off", "D") not in pairs and len(pairs) == 6  # the unfired pair is not compared
    assert not pairs[("off", "A")].both_succeeded and pairs[("off", "B")].both_succeeded


def test_a_completion_claim_is_judged_by_the_verifier_not_the_gated_score():
    # the guard blocked a true claim and the budget ran out: the claim check was a false alarm
    blocked_true = rec(task="A", guard="rules", termination="budget")
    t = traj([step(0, click(1, 1)), step(1, click(2, 2), n_elements=11)])
    assert check_trigger("task_alignment", 1, blocked_true, t, claim=True)[0] == "false_positive"
    wrong = rec(task="A", guard="rules", success=False)
    assert check_trigger("task_alignment", 1, wrong, t, claim=True)[0] == "agent"


def test_fired_reads_old_records_from_their_event_counts():
    old = {"id": "x", "task": "A", "agent": "p", "perturbation": DROP, "events": {"restored": 1}}
    assert not fired(old)
    assert fired({**old, "events": {"dropped": 2, "restored": 1}})
    assert fired({"id": "y", "task": "A", "agent": "p", "perturbation": DROP, "status": "error"})  # raised: kept
