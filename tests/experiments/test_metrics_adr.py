"""Action difference rate: edit distance, deterministic tokens, ADR on known edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.metrics.adr import action_difference_rate, action_tokens, adr_pairs, adr_table, edit_distance
from tests.support.metrics_support import APP, LAUNCHER, action, click, rec, run_of, step, traj
from ttir.core.types import Observation, UIElement


@pytest.mark.parametrize("a, b, d", [("", "", 0), ("abc", "", 3), ("", "ab", 2), ("kitten", "sitting", 3),
                                     ("flaw", "lawn", 2), ("abcd", "abcd", 0), ("abcd", "acbd", 2),
                                     ("aaaa", "aaaaaaa", 3)])
def test_edit_distance_known_values(a, b, d):
    assert edit_distance(list(a), list(b)) == d
    assert edit_distance(list(b), list(a)) == d


def test_adr_is_normalised_by_the_clean_length():
    clean = ["a", "b", "c", "d"]
    assert action_difference_rate(clean, clean) == 0.0
    assert action_difference_rate(["a", "x", "c", "d"], clean) == pytest.approx(1 / 4)  # one substitution
    assert action_difference_rate(["a", "b", "b", "b", "c", "d"], clean) == pytest.approx(2 / 4)  # two insertions
    assert action_difference_rate(["a", "d"], clean) == pytest.approx(2 / 4)  # two deletions
    assert action_difference_rate(list("xxxxxxxx"), clean) == pytest.approx(8 / 4)  # above 1 is possible
    assert action_difference_rate(["a"], []) is None


def _clean_traj():
    return traj([step(0, action("open_app", app_name="Notes"), "Open the Notes app", fg=LAUNCHER),
                 step(1, click(900, 2100), 'Tap "New note"'),
                 step(2, action("input_text", x=540, y=600, text="Buy  Milk"), 'Type "Buy milk" into "title"'),
                 step(3, action("status", goal_status="complete"), "Declare the task complete")])


def test_tokens_use_the_named_target_not_coordinates():
    tokens = action_tokens(_clean_traj())
    assert tokens == [
        f"{LAUNCHER}|open_app|-|notes|{APP}",
        f"{APP}|click|label:new note|-|{APP}",
        f"{APP}|input_text|label:buy milk|buy milk|{APP}",
        f"{APP}|status|-|complete|{APP}",
    ]
    moved = _clean_traj()
    moved["trajectory"][1]["agent_step"]["action"] = click(870, 2180)  # same element, shifted layout
    assert action_tokens(moved) == tokens


def test_tokens_fall_back_to_a_coarse_grid_cell():
    t = traj([step(0, click(10, 10)), step(1, click(1079, 2399)), step(2, click(60, 50)),
              step(3, action("swipe", x=500, y=1500, x2=500, y2=500)), step(4, action("scroll", direction="down"))])
    tokens = action_tokens(t)
    assert tokens[0].split("|")[2] == "cell:0,0" and tokens[1].split("|")[2] == "cell:9,19"
    assert tokens[2] == tokens[0]  # a few pixels do not count
    assert tokens[3].split("|")[2:4] == ["cell:4,12", "up"]
    assert tokens[4].split("|")[2:4] == ["-", "down"]


def test_tokens_hit_test_the_step_ui_dump_when_kept(tmp_path: Path):
    els = [UIElement(class_name="android.widget.FrameLayout", package=APP, bounds=(0, 0, 1080, 2400)),
           UIElement(text="New note", resource_id=f"{APP}:id/fab", class_name="android.widget.Button", package=APP,
                     bounds=(800, 2000, 1000, 2200), clickable=True, parent=0, depth=1),
           UIElement(text="Settings", class_name="android.widget.TextView", package=APP, bounds=(0, 100, 540, 200),
                     clickable=True, parent=0, depth=1)]
    xml = Observation(elements=els, foreground=APP, screen_size=(1080, 2400)).to_xml()
    (tmp_path / "step_000.xml").write_text(xml, encoding="utf-8")
    (tmp_path / "step_001.xml").write_text(xml, encoding="utf-8")
    t = traj([step(0, click(900, 2100), "tap the round button"), step(1, click(100, 150), "tap somewhere")])
    tokens = action_tokens(t, tmp_path)
    assert tokens[0].split("|")[2] == f"id:{APP}:id/fab"  # the smallest element with an identity wins
    assert tokens[1].split("|")[2] == "text:settings"


def test_adr_pairs_compare_the_same_agent_guard_seed_and_repeat():
    clean = _clean_traj()
    pert = _clean_traj()
    steps = pert["trajectory"]
    # a dropped tap retried once (one insertion) and a swallowed status replaced by a wait (one substitution)
    steps.insert(2, step(2, click(900, 2100), 'Tap "New note"'))
    steps[-1] = step(4, action("wait", seconds=1.0))
    records = [rec(task="A"), rec(task="A", perturbation="action_drop_random", component="action", success=False),
               rec(task="A", guard="rules"), rec(task="A", guard="rules", perturbation="action_drop_random",
                                                 component="action")]
    trajs = {records[0]["id"]: clean, records[1]["id"]: pert, records[2]["id"]: clean, records[3]["id"]: clean}
    run = run_of(records, trajs)
    pairs = {p.guard: p for p in adr_pairs(run)}
    # the inserted retry duplicates "click New note": its "package after" matches, so exactly 2 edits
    assert pairs["off"].edits == 2 and pairs["off"].clean_len == 4 and pairs["off"].adr == pytest.approx(0.5)
    assert not pairs["off"].both_succeeded
    assert pairs["rules"].adr == 0.0 and pairs["rules"].both_succeeded
    rows = {(r.guard, r.group): r for r in adr_table(run)}
    assert rows[("off", "overall")].adr == pytest.approx(0.5) and rows[("off", "overall")].adr_both_succeeded is None
    assert rows[("rules", "action")].adr_both_succeeded == 0.0
    assert rows[("off", "action_drop_random")].pairs == 1
