"""``ttir show TASK [--perturb NAME] [--step K]``: what the agent sees, clean, or clean vs perturbed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ttir.cli.arguments import count, output_folder


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name, help=help_text,
        description="Run TASK's reference solution for K steps twice — on a clean simulated phone and under "
        "perturbation NAME — and write both screenshots (and a side-by-side PNG with captions, and the XML dumps) "
        "so a person can see exactly what the agent sees. Without --perturb: the clean screen after K steps "
        "(default 0, the first screen).",
    )
    p.add_argument("task", help="task name (see `ttir tasks`)")
    p.add_argument("--perturb", default=None, metavar="NAME",
                   help="perturbation name (see `ttir perturbations`); without it, only the clean screen")
    p.add_argument("--step", type=count, default=None, metavar="K",
                   help="show the observation after K actions (default: the first step at which the perturbation "
                        "took effect). When it has not fired by then, only clean.png is written and the command "
                        "says when it would fire (exit status 1)")
    p.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE",
                   help="override a perturbation parameter, e.g. --set trigger_step=0 (YAML value)")
    p.add_argument("--seed", type=int, default=0, help="episode seed (default 0)")
    p.add_argument("--out", type=output_folder, default=None, help="output folder (default ./show_out/TASK-NAME)")
    p.set_defaults(func=run)


def _overrides(items: list[str]) -> dict[str, Any]:
    from ttir.core.validation import load_yaml_text

    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"--set {item!r}: expected PARAM=VALUE")
        k, v = item.split("=", 1)
        out[k.strip()] = load_yaml_text(v, f"--set {item!r}")  # bounded; a syntax error is one line
    return out


def run(args: argparse.Namespace) -> int:

    import perturb
    from benchmark import SimDevice, make_task
    from benchmark.agents import ReferenceAgent
    from perturb.firing import first_effect_step
    from ttir.cli.tasks import one_line

    task = make_task(args.task)
    if args.perturb is None:
        if args.set:
            raise ValueError("--set overrides a perturbation's parameter: name one with --perturb NAME")
        return _clean_only(task, args)
    pert = perturb.make(args.perturb, **_overrides(args.set))
    out: Path = args.out or Path("show_out") / f"{task.name}-{pert.name}"
    out.mkdir(parents=True, exist_ok=True)

    env = perturb.PerturbedDevice(SimDevice(), [pert], seed=args.seed)
    clean = SimDevice()
    with env:
        agents = [ReferenceAgent(task.reference_solution()), ReferenceAgent(task.reference_solution())]
        obs_p = env.reset(task)
        obs_c = clean.reset(task)
        for a in agents:
            a.reset(task.goal)
        target = args.step
        k = 0
        limit = target if target is not None else 3 * task.reference_steps
        while k < limit:
            if target is None and first_effect_step(env.event_log()) is not None:
                break
            step = agents[0].step(obs_p)
            if step.action.action_type == "status":
                break
            for dev, s in ((env, step), (clean, agents[1].step(obs_c))):
                try:
                    dev.execute(s.action)
                except Exception:  # noqa: BLE001 - showing, not judging
                    pass
                obs_p, obs_c = env.observe(), clean.observe()
            k += 1
        events = env.event_log()
        fired_at = first_effect_step(events)
        obs_c.screenshot.save(out / "clean.png")
        (out / "clean.xml").write_text(obs_c.xml or obs_c.to_xml(), encoding="utf-8")
        for stale in ("perturbed.png", "perturbed.xml", "side_by_side.png"):  # from an earlier call
            (out / stale).unlink(missing_ok=True)
        if fired_at is not None:
            obs_p.screenshot.save(out / "perturbed.png")
            (out / "perturbed.xml").write_text(obs_p.xml or obs_p.to_xml(), encoding="utf-8")
            a, b = obs_c.screenshot, obs_p.screenshot
            side_by_side(a, b, f"clean, after {k} action(s)", f"{pert.name}, after {k} action(s)").save(
                out / "side_by_side.png")
            same = a.size == b.size and a.tobytes() == b.tobytes()
    print(f"task: {one_line(task.goal)}\nperturbation: {pert.name} ({pert.component}) — {pert.description}")
    if fired_at is None:
        print(f"after {k} action(s) the perturbation has not fired yet ({_when(pert)}); nothing perturbed to show.")
        print(f"wrote clean.png and clean.xml to {out.resolve()}; try a later --step, or "
              "--set before_reference_end=true to fire it by the task's last reference step")
        return 1
    print(f"after {k} action(s); it took effect at step {fired_at}; events:")
    for e in events:
        print(f"  step {e['step']}: {e['perturbation']} {e['event']} {e['details'] or ''}")
    if same:
        print("the two screens are pixel-identical: this perturbation acts on the actions (or the timing), "
              "not on what the agent sees")
    print(f"wrote clean.png, perturbed.png, side_by_side.png and XML dumps to {out.resolve()}")
    return 0


def _clean_only(task: Any, args: argparse.Namespace) -> int:
    """The clean screen after ``--step`` actions (default 0): clean.png and clean.xml."""
    from benchmark import SimDevice
    from benchmark.agents import ReferenceAgent
    from ttir.cli.tasks import one_line

    out: Path = args.out or Path("show_out") / f"{task.name}-clean"
    out.mkdir(parents=True, exist_ok=True)
    device = SimDevice()
    obs = device.reset(task)
    agent = ReferenceAgent(task.reference_solution())
    agent.reset(task.goal)
    k = 0
    while k < (args.step or 0):
        step = agent.step(obs)
        if step.action.action_type == "status":
            break
        try:
            device.execute(step.action)
        except Exception:  # noqa: BLE001 - showing, not judging
            pass
        obs = device.observe()
        k += 1
    obs.screenshot.save(out / "clean.png")
    (out / "clean.xml").write_text(obs.xml or obs.to_xml(), encoding="utf-8")
    print(f"task: {one_line(task.goal)}\nthe clean screen after {k} action(s) (name a perturbation with --perturb "
          "to see it beside this one)")
    print(f"wrote clean.png and clean.xml to {out.resolve()}")
    return 0


def side_by_side(a: Any, b: Any, caption_a: str, caption_b: str) -> Any:
    """``a`` and ``b`` (PIL images) next to each other on white, each with its caption above it
    (text sized to the screenshots: readable on a 1080-px-wide screen as on a small one)."""
    from PIL import Image, ImageDraw, ImageFont

    size = max(14, max(a.width, b.width) // 28)
    gap, head = size, size * 2
    side = Image.new("RGB", (a.width + b.width + gap, max(a.height, b.height) + head), (255, 255, 255))
    side.paste(a, (0, head))
    side.paste(b, (a.width + gap, head))
    draw = ImageDraw.Draw(side)
    try:
        font: Any = ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has one bitmap size
        font = ImageFont.load_default()
    for x, text in ((0, caption_a), (a.width + gap, caption_b)):
        draw.text((x + size // 3, size // 2), text, fill=(20, 20, 20), font=font)
    return side


def _when(pert: Any) -> str:
    t = pert.timing
    parts = [f"trigger step {t.trigger_step}" if t.trigger_step is not None else "",
             f"probability {t.probability} per step" if t.probability is not None else "",
             f"when {len(t.keywords)} keywords match" if t.keywords else ""]
    return ", ".join(p for p in parts if p) or "its own schedule"
