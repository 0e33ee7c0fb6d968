"""``ttir checkpoints``: first-error checkpoints of a run, and their contexts as JSONL."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional

from ttir.cli.arguments import option_flag, positive_count, positive_seconds, writable_file

DESCRIPTION = """\
AndroidFlux-style recovery checkpoints (docs/checkpoints.md).

  ttir checkpoints RUN_DIR --out CK_DIR [--positions t-3,t-1,t,t+1,t+1+]
      place the first error of every failed episode of RUN_DIR (a run on simulated phones) with its
      class (stagnation, direction, execution) beside ttir's error category; build a checkpoint at
      each position by replaying the recorded prefix under the episode's seeds; keep those whose
      screen reproduces the recorded one (screenshot and dump hashes), count the rest. Writes
      CK_DIR/checkpoints.jsonl, placements.jsonl, screens/ and summary.json; CK_DIR is a new folder
      or an earlier build's (rewritten).
  ttir checkpoints prefs CK_DIR --out FILE.jsonl [--repeats 2] [--margin 2] [--workers N]
      recovery-action preferences at t: candidate next actions (the source agent's own, the rules
      guard's recovery, the oracle's and the reference plan-follower's) each rolled out by a fixed panel
      (oracle, reference, the source agent with seeds 0..repeats-1), in N worker processes (the same
      pairs for any N); pairs whose success counts differ by --margin or more, as JSONL; prints how
      often the guard's recovery is the preferred action.
  ttir checkpoints judge CK_DIR PREFS.jsonl --out ANSWERS.jsonl [--base-url URL] [--model NAME]
      a model behind an OpenAI-compatible endpoint (--base-url/--model/--api-key, or TTIR_VLM_BASE_URL,
      TTIR_VLM_MODEL, TTIR_VLM_API_KEY) picks the better action of every preference pair (goal, history
      and a text summary of the screen; both orders asked); prints how often it agrees with the
      outcome-grounded preference, beside the guard's agreement on the same pairs.
  ttir checkpoints export CK_DIR --out FILE.jsonl [--run RUN_DIR]
      the checkpoint contexts (state summary, history, candidate actions, and the outcomes of a run
      started `from_checkpoints: CK_DIR`) as JSONL.

Each option belongs to one form (--positions: RUN_DIR; --repeats/--margin/--workers: prefs;
--base-url/--model/--api-key/--timeout: judge; --run: export); another form refuses it.

Then run agents from the checkpoints: a spec with `from_checkpoints: CK_DIR` (`ttir run`), and
`ttir report` adds the "Recovery from checkpoints" section.
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("args", nargs="+", metavar="RUN_DIR | prefs CK_DIR | judge CK_DIR PREFS | export CK_DIR",
                   help="a run folder, or: prefs CK_DIR, or: judge CK_DIR PREFS.jsonl, or: export CK_DIR")
    p.add_argument("--out", type=Path, required=True, help="the checkpoint folder (build) or the JSONL file "
                                                          "(prefs, judge, export)")
    p.add_argument("--positions", default=None, help="checkpoint positions around the first error t "
                                                                "(default t-3,t-1,t,t+1,t+1+; t+1+: the error, then an injected correct action)")
    p.add_argument("--run", type=Path, default=None, help="export: a run started from_checkpoints (its outcomes)")
    p.add_argument("--repeats", type=positive_count, default=None, help="prefs: seeds of the source agent in the panel (default 2)")
    p.add_argument("--margin", type=positive_count, default=None, help="prefs: least difference in panel successes for a pair (default 2)")
    p.add_argument("--workers", type=positive_count, default=None, help="prefs: worker processes for the rollouts (default 1)")
    p.add_argument("--base-url", default=None, help="judge: the endpoint (default $TTIR_VLM_BASE_URL)")
    p.add_argument("--model", default=None, help="judge: the model name (default $TTIR_VLM_MODEL)")
    p.add_argument("--api-key", default=None, help="judge: the API key (default $TTIR_VLM_API_KEY)")
    p.add_argument("--timeout", type=positive_seconds, default=None, help="judge: seconds per request (default 60)")
    p.set_defaults(func=run)


def _judge(words: list[str], args: argparse.Namespace) -> int:
    import os
    import sys

    if len(words) != 3:
        print("ttir checkpoints judge: expected CK_DIR and PREFS.jsonl, e.g. "
              "ttir checkpoints judge ck prefs.jsonl --out judged.jsonl --base-url http://127.0.0.1:8088/v1",
              file=sys.stderr)
        return 2
    if not (args.base_url or os.environ.get("TTIR_VLM_BASE_URL")):
        print("ttir checkpoints judge: no endpoint; pass --base-url URL (an OpenAI-compatible /v1) or set "
              "TTIR_VLM_BASE_URL (e.g. `ttir serve-model` for the offline model)", file=sys.stderr)
        return 2
    from experiments.checkpoints.judge import judge_preferences
    from ttir.core.config import VLMConfig
    from ttir.model.client import VLMClient

    client = VLMClient(VLMConfig(base_url=args.base_url, model=args.model, api_key=args.api_key,
                                 timeout_s=args.timeout, max_retries=1))
    try:
        s = judge_preferences(words[1], words[2], client, out=args.out)
    except (FileNotFoundError, ValueError) as exc:
        print(f"ttir checkpoints judge: {exc}", file=sys.stderr)
        return 2
    finally:
        client.close()

    def pct(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.1f}%"

    print(f"judge {s.model} at {s.base_url}: {s.pairs} pairs, {s.questions} questions (both orders), "
          f"{s.answered} answered -> {args.out}")
    print(f"it names the preferred action in {s.correct} of {s.answered} answers ({pct(s.order_accuracy)}; "
          f"chance 50%); in both orders for {s.agree} of {s.pairs} pairs ({pct(s.pair_agreement)}), the rejected one "
          f"in both for {s.disagree}, different answers per order for {s.inconsistent}, unanswered {s.unanswered}")
    print(f"the guard's recovery is the preferred action in {s.guard_preferred} of {s.guard_pairs} pairs it is part "
          f"of ({pct(s.guard_agreement)})")
    return 0


# the forms of the command, each with the options it takes (the others refuse them rather than ignore
# them) and their defaults; "build" is `ttir checkpoints RUN_DIR`
OPTIONS_OF: dict[str, dict[str, Any]] = {
    "build": {"positions": "t-3,t-1,t,t+1,t+1+"},
    "prefs": {"repeats": 2, "margin": 2, "workers": 1},
    "judge": {"base_url": None, "model": None, "api_key": None, "timeout": 60.0},
    "export": {"run": None},
}
FILE_OUTPUTS = tuple(form for form in OPTIONS_OF if form != "build")  # whose --out is a file, written after their work


def _misplaced_option(form: str, args: argparse.Namespace) -> Optional[str]:
    """What to say of the first option given that ``form`` does not take; fills in ``form``'s defaults."""
    for other, options in OPTIONS_OF.items():
        for name, default in options.items():
            if other != form and getattr(args, name) is not None:
                return (f"{option_flag(name)} is an option of `{_form_name(other)}`; "
                        f"`{_form_name(form)}` does not take it (see ttir checkpoints --help)")
            if other == form and getattr(args, name) is None:
                setattr(args, name, default)
    return None


def _form_name(form: str) -> str:
    return "ttir checkpoints RUN_DIR" if form == "build" else f"ttir checkpoints {form}"


def run(args: argparse.Namespace) -> int:
    import sys

    words = list(args.args)
    form = words[0] if words[0] in FILE_OUTPUTS else "build"
    misplaced = _misplaced_option(form, args)
    if misplaced is not None:
        print(f"ttir checkpoints: {misplaced}", file=sys.stderr)
        return 2
    if words[0] in FILE_OUTPUTS:
        try:  # before the rollouts or the model calls, not after them
            writable_file(str(args.out))
        except argparse.ArgumentTypeError as exc:
            print(f"ttir checkpoints {words[0]}: --out {exc}", file=sys.stderr)
            return 2
    if words[0] == "export":
        if len(words) != 2:
            print("ttir checkpoints export: expected one CK_DIR, e.g. ttir checkpoints export ck --out ck.jsonl",
                  file=sys.stderr)
            return 2
        from experiments.checkpoints.export import write_jsonl

        n = write_jsonl(words[1], args.out, args.run)
        print(f"{n} checkpoint contexts -> {args.out}")
        return 0
    if words[0] == "judge":
        return _judge(words, args)
    if words[0] == "prefs":
        if len(words) != 2 or args.repeats < 1 or args.margin < 1 or args.workers < 1:
            print("ttir checkpoints prefs: expected one CK_DIR and --repeats/--margin/--workers >= 1, e.g. "
                  "ttir checkpoints prefs ck --out prefs.jsonl", file=sys.stderr)
            return 2
        from experiments.checkpoints.prefs import preferences

        s = preferences(words[1], args.out, repeats=args.repeats, margin=args.margin, workers=args.workers)
        agree = "–" if s.guard_agreement is None else f"{100 * s.guard_agreement:.1f}%"
        print(f"{s.checkpoints} checkpoints at t, {s.candidates} candidate actions, {s.rollouts} rollouts "
              f"(panel {', '.join(s.panel)}): {s.pairs} preference pairs (margin >= {args.margin}) -> {args.out}")
        print(f"the guard acted at {s.guard_acted} of {s.checkpoints} checkpoints; its recovery is the preferred action "
              f"in {s.guard_preferred} of {s.guard_pairs} pairs it is part of ({agree}); it has the most successes "
              f"(ties included) at {s.guard_top} of {s.checkpoints} checkpoints")
        return 0
    if len(words) != 1:
        print(f"ttir checkpoints: expected one RUN_DIR, got {words}; e.g. ttir checkpoints runs/x --out ck",
              file=sys.stderr)
        return 2
    run_dir = Path(words[0])
    if not (run_dir / "episodes.jsonl").exists():
        print(f"ttir checkpoints: {run_dir} holds no episodes.jsonl; pass a folder written by `ttir run`", file=sys.stderr)
        return 2
    from experiments.checkpoints.build import build, is_injected, parse_position

    positions = tuple(p.strip() for p in args.positions.split(",") if p.strip())
    try:
        for p in positions:
            parse_position(p)
    except ValueError as exc:
        print(f"ttir checkpoints: --positions={args.positions!r}: {exc}", file=sys.stderr)
        return 2
    s = build(run_dir, args.out, positions)
    rate = s.reproduced_rate
    print(f"{s.failed_episodes} failed episodes: {s.placed} first errors placed "
          f"({', '.join(f'{k} {v}' for k, v in sorted(s.classes.items())) or 'none'}), {s.unplaced} unplaced"
          + (f" ({'; '.join(f'{k}: {v}' for k, v in s.unplaced_reasons.items())})" if s.unplaced_reasons else ""))
    for label, c in s.by_position.items():
        print(f"  {label:>4}: {c.admitted} admitted ({c.not_admitted} not: prefix outside the episode), "
              f"{c.reproduced} reproduced, {c.not_reproduced} dropped (screen differs), {c.unverifiable} unverifiable"
              + (f"; injected: {c.not_injected} not (the oracle ends the episode), {c.injected_as_source} the same "
                 "as the source's own action" if is_injected(label) else ""))
    print(f"{s.checkpoints} checkpoints -> {args.out}"
          + (f" ({100 * rate:.1f}% of those replayed reproduce the recorded screen)" if rate is not None else ""))
    return 0
