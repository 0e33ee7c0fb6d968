"""The CLI on the edges a first hour hits: grouped and wrapped help, `ttir help CMD`, names in
any case, suggestions without a wall of names, one step counting in `ttir demo`, `ttir show`
without a perturbation and its captioned side-by-side image."""

from __future__ import annotations

import sys

import pytest
from PIL import Image

from ttir.cli import COMMANDS, GROUP_TITLES, build_parser, main


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    return capsys.readouterr().out


def test_top_help_lists_every_command_once_under_its_group(capsys):
    text = _help(["--help"], capsys)
    titles = [GROUP_TITLES[g] + ":" for g in COMMANDS]
    assert [t for t in text.splitlines() if t in titles] == titles  # each group, in order
    positions = [text.index(t) for t in titles] + [len(text)]
    for i, commands in enumerate(COMMANDS.values()):
        block = text[positions[i]:positions[i + 1]]
        for name in commands:
            assert f"\n  {name} " in block, (name, block)
    registered = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert registered == {n for cmds in COMMANDS.values() for n in cmds}


def test_the_perturbations_line_names_every_family_without_importing_them(capsys):
    """The three families are named (the ones beyond the papers too); `ttir --help` imports no perturbation."""
    import subprocess

    text = " ".join(_help(["--help"], capsys).split())
    assert "AndroidReality's, AnTrap's traps, and those beyond the papers" in text
    probe = "import sys; from ttir.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass\nprint('perturb' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stdout + done.stderr


@pytest.mark.parametrize("argv", [[], ["tasks"], ["demo"], ["doctor"], ["serve-model"], ["serve-adb"], ["watch"],
                                  ["perturbations"], ["show"], ["run"], ["report"], ["compare"], ["tune"],
                                  ["tune", "build"], ["tune", "eval"], ["tune", "sweep"], ["tune", "prompts"],
                                  ["tune", "train"]])
def test_help_is_wrapped_even_on_a_wide_terminal(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    text = _help([*argv, "--help"], capsys)
    long = [line for line in text.splitlines() if len(line) > 100]
    assert not long, long


def test_help_command_is_the_commands_own_help(capsys):
    assert _help(["help", "tune", "eval"], capsys) == _help(["tune", "eval", "--help"], capsys)
    assert _help(["help"], capsys) == _help(["--help"], capsys)


def test_demo_takes_a_task_name_in_any_case_and_counts_steps_once(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "contactsaddcontact", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "task: ContactsAddContact" in text
    numbered = [line for line in text.splitlines() if line.strip().startswith("step ")]
    n = int(text.split("SUCCESS in ")[1].split()[0])
    assert len(numbered) == n and numbered[-1].split(":")[0].split()[-1] == str(n - 1)
    assert "end: Declare the task complete" in " ".join(text.split())
    # one screenshot per step plus the screen the agent declared done on
    assert sorted(p.name for p in out.glob("*.png")) == [f"step_{i:02d}.png" for i in range(n + 1)]


def test_an_unknown_task_gets_the_suggestion_not_every_name(capsys):
    assert main(["demo", "ContactsAddContct"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'ContactsAddContact'?" in err and "see `ttir tasks`" in err
    assert "SystemWifiTurnOn" not in err and len(err) < 300


@pytest.mark.parametrize("argv, message", [
    (["show", "ContactsAddContact", "--step", "-1"], "argument --step: '-1' is not a whole number of 0 or more"),
    (["tune", "build", "runs/x", "--out", "ds", "--per-perturbation", "0"],
     "argument --per-perturbation: '0' is not a whole number of 1 or more"),
    (["tune", "eval", "ds", "--workers", "0"], "argument --workers: '0' is not a whole number of 1 or more"),
    (["checkpoints", "prefs", "ck", "--repeats", "0"], "argument --repeats: '0' is not a whole number of 1 or more"),
    (["serve-adb", "--task", "ContactsAddContact", "--instance", "-1"],
     "argument --instance: '-1' is not a whole number of 0 or more"),
    (["checkpoints", "judge", "ck", "p.jsonl", "--timeout", "-1"],
     "argument --timeout: '-1' is not a number of seconds above 0"),
    (["watch", "--serial", "emulator-5554", "--duration", "nan"],
     "argument --duration: 'nan' is not a number of seconds above 0"),
    (["tune", "eval", "ds", "--min-precision", "95"], "argument --min-precision: '95' is not a share from 0 to 1"),
    (["tune", "sweep", "ds", "--param", "stuck_loop.window=2", "--max-fpr", "-0.1"],
     "argument --max-fpr: '-0.1' is not a share from 0 to 1"),
])
def test_a_count_below_its_least_is_refused_as_the_command_line_is_read(argv, message, capsys):
    # argparse's int let --step -1 run as 0 and --per-perturbation 0 build an empty dataset, without a word;
    # its float let a timeout of -1 or nan and a precision target of 95 (meaning 95 %) through
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["watch", "--serial", "emulator-5554", "--log"],
                                  ["proxy", "--serial", "emulator-5554", "--port", "5998", "--log"],
                                  ["tune", "eval", "--real", "--plot"]])
def test_a_log_or_plot_path_that_cannot_be_written_is_refused_before_the_work(argv, tmp_path, capsys):
    # the plot was drawn after the evaluation, and a log's missing folder failed the watch at its start
    blocker = tmp_path / "afile"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main([*argv, str(blocker / "out")])
    assert exc.value.code == 2
    assert f"cannot write in {blocker}" in capsys.readouterr().err


def test_a_setting_out_of_its_range_reads_in_the_configs_words_not_pydantics(capsys):
    assert main(["watch", "--serial", "emulator-5554", "--interval", "0"]) == 2
    err = capsys.readouterr().err
    assert "ttir watch: error: invalid setting: interval_s: Input should be greater than or equal to 0.05 (got 0.0)" in err
    assert "pydantic" not in err and "WatchConfig" not in err


@pytest.mark.parametrize("argv, source", [
    (["show", "ContactsAddContact", "--perturb", "popup_permission", "--set", "trigger_step=[1,2"],
     "--set 'trigger_step=[1,2'"),
    (["tune", "eval", "ds", "--set", "stuck_loop.window=[4"], "--set 'stuck_loop.window=[4'"),
    (["tune", "sweep", "ds", "--param", "stuck_loop.window=2,[4"], "--param 'stuck_loop.window=2,[4'"),
])
def test_a_value_that_is_not_yaml_is_one_error_line_naming_the_option_not_a_traceback(argv, source, tmp_path,
                                                                                       capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"error: {source}:1:" in err and "not valid YAML" in err, err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, prog, unknown", [(["demo", "--task", "ContactsAddContact"], "ttir demo", "--task"),
                                                (["tune", "eval", "--real", "--bogus"], "ttir tune eval", "--bogus"),
                                                (["perturbations", "--layer", "ui"], "ttir perturbations", "--layer ui")])
def test_an_argument_a_command_does_not_know_is_named_under_that_commands_usage(argv, prog, unknown, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    # the command's own usage and error, not ttir's (which lists no argument of the command)
    assert err.startswith(f"usage: {prog} ")
    assert f"{prog}: error: unrecognized arguments: {unknown} " in err
    assert f"see `{prog} --help`" in err and "COMMAND ..." not in err


def test_perturbation_names_match_in_any_case():
    from perturb import make

    assert make("POPUP_Security").name == "popup_security"


def test_show_without_a_perturbation_writes_the_clean_screen(tmp_path, capsys):
    out = tmp_path / "s"
    assert main(["show", "ContactsAddContact", "--step", "1", "--out", str(out)]) == 0
    assert "clean screen after 1 action(s)" in capsys.readouterr().out
    assert (out / "clean.png").is_file() and (out / "clean.xml").is_file() and not (out / "perturbed.png").exists()
    assert main(["show", "ContactsAddContact", "--set", "trigger_step=0", "--out", str(out)]) == 2
    assert "--perturb" in capsys.readouterr().err


def test_the_side_by_side_image_has_captions_above_both_screens():
    from ttir.cli.show import side_by_side

    a = Image.new("RGB", (360, 640), (0, 0, 0))
    b = Image.new("RGB", (300, 600), (0, 0, 0))
    image = side_by_side(a, b, "clean", "popup_security")
    head = image.height - 640
    assert head > 0 and image.width > a.width + b.width
    for x0, width in ((0, a.width), (image.width - b.width, b.width)):
        caption = image.crop((x0, 0, x0 + width, head)).convert("L")
        assert caption.getextrema()[0] < 100  # dark text on the white band
        assert image.getpixel((x0 + 5, head + 5)) == (0, 0, 0)  # the screen starts below it


def test_serve_adb_names_the_closest_perturbation_before_serving(capsys):
    assert main(["serve-adb", "--perturb", "popup_permision"]) == 2
    err = capsys.readouterr().err
    assert "--perturb: unknown perturbation 'popup_permision'; did you mean 'popup_permission'?" in err
    assert "see `ttir perturbations`" in err


@pytest.mark.parametrize("argv", [["tune", "eval", "--real", "--cases"],
                                  ["tune", "eval", "--real", "--split", "all", "--cases"],
                                  ["tune", "eval", "--real", "--round", "30", "--cases"]])
def test_the_test_splits_cases_are_never_listed(argv, capsys):
    # the corpus's protocol: the test split is scored once per change and its cases never read;
    # `--cases` on it (the default split) listed every miss and false alarm
    assert main(argv) == 2
    assert "include the test split, which is for reporting only" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["doctor", "--base-url", "http://127.0.0.1:8088/v1"], "--base-url: for the model endpoint's check; add --vlm"),
    (["doctor", "--vlm", "--serial", "emulator-5554", "--skip-knobs"],
     "--serial, --skip-knobs: for a phone's check (ttir doctor without --vlm)"),
])
def test_doctor_refuses_an_option_of_the_other_check(argv, says, capsys):
    # `ttir doctor --base-url URL` (without --vlm) checked a phone, the URL ignored
    assert main(argv) == 2
    assert says in capsys.readouterr().err


def test_report_refuses_a_self_contained_viewer_it_is_told_not_to_write(tmp_path, capsys):
    (tmp_path / "episodes.jsonl").write_text("", encoding="utf-8")
    assert main(["report", str(tmp_path), "--self-contained", "--no-viewer"]) == 2
    assert "--self-contained embeds the screenshots in viewer.html, and --no-viewer writes none" in \
        capsys.readouterr().err


def test_serve_adb_refuses_an_instance_without_a_task_before_serving(capsys):
    # it was ignored without a word (and a negative one taken)
    assert main(["serve-adb", "--instance", "3"]) == 2
    assert "--instance 3 picks an instance of --task, and no --task was given" in capsys.readouterr().err
    # --verdict serves nothing: a serving option beside it was ignored, and --adb-port without it
    assert main(["serve-adb", "--verdict", "5555", "--task", "ContactsAddContact", "--phones", "2"]) == 2
    assert "--phones, --task: options of serving phones; --verdict serves none" in capsys.readouterr().err
    assert main(["serve-adb", "--adb-port", "5037"]) == 2
    assert "--adb-port: only with --verdict" in capsys.readouterr().err


def test_serve_adb_takes_a_perturbation_in_any_case(monkeypatch):
    from ttir.cli import serve_adb

    seen = {}

    def stop(task, perturbations, seed):  # the names reach the phone resolved; stop before serving
        seen["perturbations"] = perturbations
        raise KeyboardInterrupt

    monkeypatch.setattr(serve_adb, "build_device", stop)
    assert main(["serve-adb", "--perturb", "Popup_Permission"]) == 130
    assert seen["perturbations"] == ["popup_permission"]


def test_an_os_error_reads_as_its_cause_and_path_not_its_errno():
    # `ttir tune train --out /missing/dir/m.npz` printed "ttir tune: error: 2" (a FileNotFoundError's args[0])
    from ttir.cli import _error_text

    assert _error_text(FileNotFoundError(2, "No such file or directory", "/missing/m.npz")) == \
        "No such file or directory (/missing/m.npz)"
    assert _error_text(PermissionError(13, "Permission denied")) == "Permission denied"
    assert _error_text(FileNotFoundError("spec file x.yaml does not exist")) == "spec file x.yaml does not exist"
    assert _error_text(KeyError("unknown task 'x'")) == "unknown task 'x'"


def test_tune_refuses_an_out_it_cannot_write_before_its_work(tmp_path, capsys, monkeypatch):
    # `ttir tune train --out` trained for a quarter of a minute before it found it could not write the file
    pytest.importorskip("sklearn")
    import experiments.real_screens.train as training

    monkeypatch.setattr(training, "train", lambda *a, **k: pytest.fail("trained before checking --out"))
    blocker = tmp_path / "a-file"
    blocker.write_text("mine", encoding="utf-8")
    for command in (["tune", "train", "--real"], ["tune", "eval", "--real", "--split", "dev"]):
        for out, why in ((blocker / "m.npz", f"cannot write in {blocker}"), (tmp_path, "is a folder")):
            with pytest.raises(SystemExit) as exc:
                main([*command, "--no-progress", "--out", str(out)])
            assert exc.value.code == 2
            err = capsys.readouterr().err
            assert f"argument --out: {why}" in err or f"argument --out: {out} {why}" in err, err
    assert blocker.read_text(encoding="utf-8") == "mine"


def test_serve_adb_refuses_a_verdict_file_it_could_not_write_before_serving(tmp_path, capsys):
    # the verdicts are written when the phones stop, hours later: a path that cannot be written
    # lost them then
    blocker = tmp_path / "a-file"
    blocker.write_text("mine", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["serve-adb", "--out", str(blocker / "verdicts.json")])
    assert exc.value.code == 2
    assert f"argument --out: cannot write in {blocker}" in capsys.readouterr().err


@pytest.mark.parametrize("words", [["prefs", "ck"], ["judge", "ck", "prefs.jsonl"], ["export", "ck"]])
def test_checkpoints_refuse_an_out_file_they_could_not_write_before_their_work(tmp_path, capsys, words):
    # prefs rolls out every candidate and judge asks a model about every pair before writing --out
    blocker = tmp_path / "a-file"
    blocker.write_text("mine", encoding="utf-8")
    assert main(["checkpoints", *words, "--out", str(blocker / "out.jsonl")]) == 2
    assert f"ttir checkpoints {words[0]}: --out cannot write in {blocker}" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["demo", "ContactsAddContact"], ["show", "ContactsAddContact"],
                                     ["report", "runs/x"], ["compare", "runs/a", "runs/b"],
                                     ["tune", "build", "runs/x"]])
def test_an_output_folder_that_is_a_file_is_refused_as_the_command_line_is_read(tmp_path, capsys, command):
    # each printed mkdir's "File exists (PATH)", which reads as a folder in the way, after its work for compare
    blocker = tmp_path / "a-file"
    blocker.write_text("mine", encoding="utf-8")
    for out, why in ((blocker, f"{blocker} is a file; expected a folder"),
                     (blocker / "sub", f"{blocker} is a file, so the folder {blocker / 'sub'} cannot be made there")):
        with pytest.raises(SystemExit) as exc:
            main([*command, "--out", str(out)])
        assert exc.value.code == 2
        assert f"argument --out: {why}" in capsys.readouterr().err
    assert blocker.read_text(encoding="utf-8") == "mine"


def test_an_output_folder_is_not_made_while_the_command_line_is_read(tmp_path, capsys):
    out = tmp_path / "new" / "demo"
    assert main(["demo", "NoSuchTask", "--out", str(out)]) == 2  # another error: no empty folder left behind
    assert not (tmp_path / "new").exists()
    assert "unknown task" in capsys.readouterr().err
