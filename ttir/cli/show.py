"""``ttir show TASK --perturb NAME [--step K]``: what the agent sees, clean vs perturbed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name, help=help_text,
        description="Run TASK's reference solution for K steps twice — on a clean simulated phone and under "
        "perturbation NAME — and write both screenshots (and a side-by-side PNG, and the XML dumps) so a person "
        "can see exactly what the agent sees.",
    )
    p.add_argument("task", help="task name (see `ttir tasks`)")
    p.add_argument("--perturb", required=True, metavar="NAME", help="perturbation name (see `ttir perturbations`)")
    p.add_argument("--step", type=int, default=None, metavar="K",
                   help="show the observation after K actions (default: the first step the perturbation logs an event, else 1)")
    p.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE",
                   help="override a perturbation parameter, e.g. --set trigger_step=0 (YAML value)")
    p.add_argument("--seed", type=int, default=0, help="episode seed (default 0)")
    p.add_argument("--out", type=Path, default=None, help="output folder (default ./show_out/TASK-NAME)")
    p.set_defaults(func=run)


def _overrides(items: list[str]) -> dict[str, Any]:
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"--set {item!r}: expected PARAM=VALUE")
        k, v = item.split("=", 1)
        out[k.strip()] = yaml.safe_load(v)
    return out


def run(args: argparse.Namespace) -> int:
    from PIL import Image

    import perturb
    from benchmark import SimDevice, make_task
    from benchmark.agents import ReferenceAgent

    task = make_task(args.task)
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
        first_event = None
        limit = target if target is not None else 3 * task.reference_steps
        while k < limit:
            if first_event is None and env.events:
                first_event = k
                if target is None:
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
        obs_p.screenshot.save(out / "perturbed.png")
        obs_c.screenshot.save(out / "clean.png")
        (out / "perturbed.xml").write_text(obs_p.xml or obs_p.to_xml(), encoding="utf-8")
        (out / "clean.xml").write_text(obs_c.xml or obs_c.to_xml(), encoding="utf-8")
        a, b = obs_c.screenshot, obs_p.screenshot
        side = Image.new("RGB", (a.width + b.width + 24, max(a.height, b.height)), (255, 255, 255))
        side.paste(a, (0, 0))
        side.paste(b, (a.width + 24, 0))
        side.save(out / "side_by_side.png")
        events = env.event_log()
    print(f"task: {task.goal}\nperturbation: {pert.name} ({pert.component}) — {pert.description}")
    print(f"after {k} action(s); events so far:")
    for e in events:
        print(f"  step {e['step']}: {e['perturbation']} {e['event']} {e['details'] or ''}")
    print(f"wrote clean.png, perturbed.png, side_by_side.png and XML dumps to {out.resolve()}")
    return 0
