"""`ttir tasks` (one line per task, with its apps) and `ttir show` (a perturbed image only when
the perturbation really fired)."""

from __future__ import annotations

from PIL import Image, ImageChops

from benchmark.tasks import task_names
from ttir.cli import main


def test_tasks_lists_every_task_on_one_line_with_its_apps(capsys):
    assert main(["tasks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {ln.split()[0]: ln for ln in lines[1:] if ln and ln.split()[0] in set(task_names())}
    assert set(rows) == set(task_names())  # multi-line goals (expense lists, recipes) do not add lines
    assert lines[0].split()[:3] == ["task", "steps", "apps"]
    assert "Pro Expense" in rows["ExpenseAddMultiple"] and " / " in rows["ExpenseAddMultiple"]
    assert "Files, Chrome" in rows["BrowserMaze"]


def test_show_writes_no_perturbed_image_before_the_perturbation_fires(tmp_path, capsys):
    out = tmp_path / "s"
    code = main(["show", "SystemBrightnessMax", "--perturb", "display_size_dpi_zoomed_out", "--set", "trigger_step=3",
                 "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 1 and "has not fired" in text and "trigger step 3" in text
    assert (out / "clean.png").is_file() and not (out / "perturbed.png").exists()


def test_show_writes_the_perturbed_screen_once_it_fired(tmp_path, capsys):
    out = tmp_path / "s"
    code = main(["show", "SystemBrightnessMax", "--perturb", "display_size_dpi_zoomed_out", "--set", "trigger_step=3",
                 "--set", "before_reference_end=true", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and "took effect at step 1" in text and "events:\n  step 1:" in text
    with Image.open(out / "clean.png") as a, Image.open(out / "perturbed.png") as b:
        assert a.size != b.size or ImageChops.difference(a.convert("RGB"), b.convert("RGB")).getbbox() is not None
    assert (out / "side_by_side.png").is_file()
