"""Score the guard on real screens (``ttir tune eval --real``).

Per labelled screen: the interference diagnoser's verdict per tier (rules always;
model and cascade when an endpoint is configured), and what a guarded agent that
only waits does on it — the guard's first action classified against the label as
dismiss / engage / destructive / back / other, or harmful when the screen holds no
interference. The figures: recall per kind, false alarms on ordinary screens and on
wanted dialogs separately, and the guard's actions, each headline rate with a 95 %
interval that resamples repositories (experiments/metrics/intervals.py).
"""

from __future__ import annotations

import random
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Optional

from loguru import logger

from experiments.metrics.intervals import LEVEL, RESAMPLES, cluster_interval
from experiments.real_screens.corpus import Screen
from experiments.real_screens.oracle import ORACLE_TIER, LabelOracle, oracle_overrides
from ttir import QUIET
from ttir.core.config import TTIRConfig
from ttir.core.dump import DumpError
from ttir.core.types import Action, AgentStep, Observation

RULES_ALONE_TIER = "rules_alone"  # the rule tier with the screen model switched off, measured beside the free tier
ACTION_CLASSES = ("dismiss", "engage", "destructive", "back", "other", "wait", "none")
SESSION_STEPS = 3  # guarded steps per screen: the headline one, then two on the unchanged screen


class WaitOnlyAgent:
    """An agent that only ever waits: whatever happens on screen is the guard's doing."""

    name = "wait_only"

    def reset(self, goal: str) -> None:
        pass

    def step(self, obs: Observation) -> AgentStep:
        return AgentStep(action=Action(action_type="wait", seconds=1.0), summary="Wait")


def _norm(s: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", s).replace("’", "'").lower().split()).strip(" .!?:")


def _names(obs: Observation, i: int) -> set[str]:
    """Every name of element ``i`` and of its descendants (a button's inner label) and
    of its clickable ancestors' direct labels."""
    out: set[str] = set()
    idx = [i]
    kids: dict[int, list[int]] = defaultdict(list)
    for j, e in enumerate(obs.elements):
        if e.parent is not None:
            kids[e.parent].append(j)
    stack = [i]
    while stack:
        j = stack.pop()
        idx.append(j)
        stack.extend(kids.get(j, []))
    for j in idx:
        e = obs.elements[j]
        for v in (e.text, e.content_desc, e.resource_id, e.short_id):
            if v:
                out.add(_norm(v))
    return out


def tapped_names(obs: Observation, action: Action) -> set[str]:
    """The names of what a touch lands on (topmost clickable element, else topmost element)."""
    p = action.point(obs.elements)
    if p is None:
        return set()
    hit = None
    for i in range(len(obs.elements) - 1, -1, -1):
        e = obs.elements[i]
        if e.contains(*p) and (e.clickable or e.long_clickable or e.checkable):
            hit = i
            break
    if hit is None:
        hit = next((i for i in range(len(obs.elements) - 1, -1, -1) if obs.elements[i].contains(*p)), None)
    return _names(obs, hit) if hit is not None else set()


def classify(screen: Screen, obs: Observation, step: Optional[AgentStep], source: str) -> str:
    """What the guard's first action did to this screen, by its label."""
    if step is None or source != "recovery":
        return "none"
    a = step.action
    lab = screen.label
    if a.action_type == "wait":
        return "wait"
    if a.action_type == "navigate_back":
        return "back"
    if a.is_touch:
        names = tapped_names(obs, a)
        for role, words in (("destructive", lab.destructive), ("engage", lab.engage), ("dismiss", lab.dismiss)):
            if names & {_norm(w) for w in words}:
                return role
        return "other"
    if a.action_type == "swipe" and lab.kind == "heads_up":
        return "dismiss"
    return "other"


@dataclass
class ScreenResult:
    id: str
    repo: str
    split: str
    category: str
    kind: Optional[str]
    round: Optional[int] = None  # the collection round of its repository
    back_dismisses: Optional[bool] = None  # the label's word on whether Back closes it without harm
    clearable: bool = False  # a pop-up a first action can clear: a labelled dismiss control, an ANR, or Back closes it
    verdicts: dict[str, str] = field(default_factory=dict)  # tier -> true / false / uncertain
    evidence: dict[str, str] = field(default_factory=dict)
    located: dict[str, bool] = field(default_factory=dict)  # tier -> did its finding locate any overlay candidate
    model_asked: bool = False
    guard_action: Optional[dict[str, Any]] = None
    guard_summary: str = ""
    action_class: str = "none"
    # the classes of the guard's next actions when the screen stays as it is (its first
    # action had no effect): what its fallbacks would do, step by step
    session: list[str] = field(default_factory=list)
    error: Optional[str] = None

    def detected(self, tier: str) -> bool:
        return self.verdicts.get(tier) == "true"

    @property
    def cleared(self) -> bool:
        """The guard's first action cleared the pop-up: its dismiss control (Wait on an ANR), a
        swipe on a banner, or Back where the label says Back closes it."""
        return self.clearable and (self.action_class == "dismiss"
                                   or (self.action_class == "back" and self.back_dismisses is True))


def guard_tier(tiers: list[str]) -> str:
    """The tier whose guard steps on each screen: the oracle's when asked for, else the
    cascade's when asked for, else the rules'."""
    return next((t for t in (ORACLE_TIER, "cascade") if t in tiers), "rules")


def evaluate_screen(screen: Screen, config: TTIRConfig, tiers: list[str], judge: Any = None,
                    session_steps: int = SESSION_STEPS, oracle_mode: str = "vlm") -> ScreenResult:
    """One screen: the interference verdict per tier, then guarded steps of a wait-only
    agent (the oracle's guard when that tier is asked for, else the cascade's when that
    is, else the rules'): the first is the headline; the ``session_steps - 1`` after it
    see the same screen again, as if each action had had no effect, and show what the
    guard's fallbacks do. The oracle tier (:mod:`experiments.real_screens.oracle`) runs
    the interference diagnoser in ``oracle_mode`` with the label as its model."""
    from diagnosers import DiagnosisContext, InterferenceDiagnoser
    from diagnosers.vlm_judge import VLMJudge
    from ttir.core.config import DIAGNOSERS
    from ttir.guarded.middleware import guard

    lab = screen.label
    res = ScreenResult(id=screen.id, repo=screen.repo, split=screen.split, category=lab.category, kind=lab.kind,
                       round=screen.round, back_dismisses=lab.back_dismisses,
                       clearable=lab.category == "interference" and (bool(lab.dismiss) or lab.kind == "anr"
                                                                      or lab.back_dismisses is True))
    obs = screen.observation()
    oracle = LabelOracle(lab.category == "interference") if ORACLE_TIER in tiers else None
    oracle_config = config.override(oracle_overrides(oracle_mode)) if oracle is not None else None
    for tier in tiers:
        if tier == ORACLE_TIER:
            d = InterferenceDiagnoser(oracle_config.interference, mode=oracle_mode,
                                      judge=VLMJudge(oracle, oracle_config))
        elif tier == RULES_ALONE_TIER:
            d = InterferenceDiagnoser(config.interference.model_copy(update={"screen_model": False}), mode="rules")
        else:
            d = InterferenceDiagnoser(config.interference, mode=tier, judge=judge if tier != "rules" else None)
        f = d.diagnose(DiagnosisContext(goal=lab.goal, observation=obs, history=[]))
        res.verdicts[tier] = f.verdict
        res.located[tier] = bool(f.details.get("kind") not in (None, "unknown") or f.details.get("candidates"))
        res.evidence[tier] = "; ".join(f.evidence)[:300]
        if tier == "cascade":
            res.model_asked = bool(f.cost and f.cost.model_calls) or f.tier == "vlm"
    if oracle is not None:
        agent = guard(WaitOnlyAgent(), oracle_config, vlm=oracle)
    else:
        agent = guard(WaitOnlyAgent(), config.override({f"{d}.mode": guard_tier(tiers) for d in DIAGNOSERS}))
    agent.reset(lab.goal)
    for k in range(session_steps):
        step = agent.step(obs)
        source = agent.report.usage[-1].source if agent.report.usage else "agent"
        if k:
            res.session.append(_session_class(screen, obs, step, source))
            continue
        if source == "recovery":
            res.guard_action = step.action.to_dict()
            res.guard_summary = step.summary
        res.action_class = classify(screen, obs, step, source)
    return res


def _session_class(screen: Screen, obs: Observation, step: AgentStep, source: str) -> str:
    """As :func:`classify`; closing the task's own hung app after its waits is what the
    ANR rule prescribes (re-orientation opens it again), so it is told apart."""
    c = classify(screen, obs, step, source)
    if c == "destructive" and screen.label.kind == "anr" and screen.label.anr_of == "task_app":
        return "close_hung_app"
    return c


def evaluate(screens: list[Screen], config: Optional[TTIRConfig] = None, tiers: Optional[list[str]] = None,
             judge: Any = None, progress: bool = False, session_steps: int = SESSION_STEPS,
             oracle_mode: str = "vlm") -> list[ScreenResult]:
    if session_steps < 1:
        raise ValueError(f"session_steps must be at least 1, got {session_steps}")
    config = config or TTIRConfig()
    tiers = tiers or ["rules"]
    out = []
    items = screens
    if progress:
        from tqdm import tqdm

        items = tqdm(screens, desc="real screens", unit="screen")
    # the guard's per-episode notes (a lock screen with nothing to try, ...) are what this report counts:
    # written for a thousand one-screen episodes they would bury the progress bar (warnings still show)
    with logger.contextualize(**{QUIET: True}):
        for s in items:
            if s.label.malformed:
                continue
            try:
                out.append(evaluate_screen(s, config, tiers, judge=judge, session_steps=session_steps,
                                           oracle_mode=oracle_mode))
            except DumpError as exc:  # an unreadable dump that is not labelled malformed (a bug elsewhere raises)
                out.append(ScreenResult(id=s.id, repo=s.repo, split=s.split, category=s.label.category,
                                        kind=s.label.kind, round=s.round, error=str(exc)))
    return out


# ----------------------------------------------------------------------------- figures


def _share(n: int, d: int) -> Optional[float]:
    # six places: the report prints one decimal of a percentage, and a share rounded to four
    # first would print 11 of 301 (3.654 %) as 3.6 % (3.65 rounded again)
    return round(n / d, 6) if d else None


def summarize(results: list[ScreenResult], tiers: list[str], seed: int = 0) -> dict[str, Any]:
    ok = [r for r in results if r.error is None]
    inter = [r for r in ok if r.category == "interference"]
    report: dict[str, Any] = {"screens": len(ok), "errors": [r.id for r in results if r.error],
                              "repos": len({r.repo for r in ok}), "tiers": {}}
    for tier in tiers:
        per_kind: dict[str, dict[str, Any]] = {}
        for kind, rs in sorted(_group(inter, lambda r: r.kind).items()):
            c = Counter(r.verdicts.get(tier) for r in rs)
            per_kind[kind] = {"n": len(rs), "detected": c["true"], "uncertain": c["uncertain"],
                              "recall": _share(c["true"], len(rs))}
        det = sum(r.detected(tier) for r in inter)
        missed = [r for r in inter if not r.detected(tier)]
        # where the misses stand: a model in the cascade is asked on the uncertain ones only
        misses = {"uncertain": sum(r.verdicts.get(tier) == "uncertain" for r in missed),
                  "located_below_uncertain": sum(r.verdicts.get(tier) == "false" and r.located.get(tier, False)
                                                 for r in missed),
                  "nothing_located": sum(r.verdicts.get(tier) == "false" and not r.located.get(tier, False)
                                         for r in missed)}
        t = {"interference": {"n": len(inter), "detected": det, "recall": _share(det, len(inter)), "per_kind": per_kind,
                              "misses": misses},
             "false_alarms": {}}
        for cat in ("ordinary", "wanted"):
            rs = [r for r in ok if r.category == cat]
            fa = sum(r.detected(tier) for r in rs)
            unc = sum(r.verdicts.get(tier) == "uncertain" for r in rs)
            by_kind = {k: sum(r.detected(tier) for r in g) for k, g in _group(rs, lambda r: r.kind or "-").items()}
            t["false_alarms"][cat] = {"n": len(rs), "false_alarms": fa, "rate": _share(fa, len(rs)),
                                      "uncertain": unc, "by_kind": by_kind}
        if tier == "cascade":
            t["model_asked"] = sum(r.model_asked for r in ok)
        report["tiers"][tier] = t
    actions: dict[str, dict[str, int]] = {}
    for cat in ("interference", "wanted", "ordinary"):
        rs = [r for r in ok if r.category == cat]
        actions[cat] = {c: sum(r.action_class == c for r in rs) for c in ACTION_CLASSES}
    whole = _headline(ok, tiers[0])
    acted = whole["actions_on_non_interference"]
    report["guard"] = {
        "tier": guard_tier(tiers),
        "actions": actions,
        "engage_or_destructive_taps": whole["engage_or_destructive_taps"],
        "actions_on_non_interference": acted,
        "clearable": sum(r.clearable for r in ok),
        "cleared": sum(r.cleared for r in ok),
        "cleared_rate": _share(sum(r.cleared for r in ok), sum(r.clearable for r in ok)),
        "actions_on_non_interference_rate": _share(acted, whole["ordinary"] + whole["wanted"]),
        # Back on a screen whose label says Back does not close it (a gate Back would leave the app from)
        "back_where_back_harms": sum(r.action_class == "back" and r.back_dismisses is False for r in ok),
    }
    rounds = _group(ok, lambda r: r.round or 0)
    report["by_round"] = {str(k): _headline(rs, tiers[0]) for k, rs in sorted(rounds.items())}
    report["by_split"] = {k: _headline(rs, tiers[0]) for k, rs in sorted(_group(ok, lambda r: r.split).items())}
    rng = random.Random(seed)
    report["intervals"] = _intervals(ok, tiers[0], rng)
    for k, rs in rounds.items():
        per_repo = [_headline(g, tiers[0]) for g in _group(rs, lambda r: r.repo).values()]
        report["by_round"][str(k)]["recall_interval"] = cluster_interval(
            [(h["detected"], h["interference"]) for h in per_repo], rng)
    report["session"] = _session(ok)
    return report


def _session(rs: list[ScreenResult]) -> dict[str, Any]:
    """Over the whole replay of each screen (first step and the ones after it): how many
    screens saw an engage or destructive tap, an action though they hold no
    interference, or the task's own hung app closed."""
    steps = 1 + max((len(r.session) for r in rs), default=0)
    every = {r.id: [r.action_class, *r.session] for r in rs}
    inter = [r for r in rs if r.category == "interference"]
    return {
        "steps": steps,
        "engage_or_destructive_taps": sum(any(c in ("engage", "destructive") for c in every[r.id]) for r in rs),
        "actions_on_non_interference": sum(any(c != "none" for c in every[r.id]) for r in rs
                                           if r.category != "interference"),
        "non_interference": sum(r.category != "interference" for r in rs),
        "closed_hung_task_app": sum("close_hung_app" in every[r.id] for r in inter),
        "back_where_back_harms": sum("back" in every[r.id] and r.back_dismisses is False for r in rs),
        "by_step": [dict(Counter(every[r.id][k] for r in rs if k < len(every[r.id]))) for k in range(steps)],
    }


def _intervals(rs: list[ScreenResult], tier: str, rng: random.Random) -> dict[str, Any]:
    """95 % intervals of the headline rates, resampling repositories (their screens are
    alike: one app, one labeller), so that a reader sees how far a figure could move."""
    per_repo = [_headline(g, tier) for g in _group(rs, lambda r: r.repo).values()]
    pairs = {
        "recall": [(h["detected"], h["interference"]) for h in per_repo],
        "ordinary_false_alarm_rate": [(h["ordinary_false_alarms"], h["ordinary"]) for h in per_repo],
        "wanted_false_alarm_rate": [(h["wanted_false_alarms"], h["wanted"]) for h in per_repo],
        "actions_on_non_interference_rate": [(h["actions_on_non_interference"], h["ordinary"] + h["wanted"])
                                             for h in per_repo],
    }
    out: dict[str, Any] = {"level": LEVEL, "resamples": RESAMPLES, "clusters": "repository"}
    for name, clusters in pairs.items():
        out[name] = cluster_interval(clusters, rng)
    return out


def _headline(rs: list[ScreenResult], tier: str) -> dict[str, int]:
    """The headline counts of some screens: pop-ups found, false alarms, what the guard did."""
    inter = [r for r in rs if r.category == "interference"]
    out = {"screens": len(rs), "interference": len(inter), "detected": sum(r.detected(tier) for r in inter)}
    for cat in ("ordinary", "wanted"):
        cs = [r for r in rs if r.category == cat]
        out[cat] = len(cs)
        out[f"{cat}_false_alarms"] = sum(r.detected(tier) for r in cs)
    out["engage_or_destructive_taps"] = sum(r.action_class in ("engage", "destructive") for r in rs)
    out["actions_on_non_interference"] = sum(r.action_class != "none" for r in rs if r.category != "interference")
    return out


def _group(rs: list[ScreenResult], key: Any) -> dict[Any, list[ScreenResult]]:
    out: dict[Any, list[ScreenResult]] = defaultdict(list)
    for r in rs:
        out[key(r)].append(r)
    return dict(out)


def _pct(v: Optional[float]) -> str:
    return "—" if v is None else f"{100 * v:.1f} %"


def _interval(report: dict[str, Any], name: str) -> str:
    iv = report.get("intervals") or {}
    if not iv.get(name):
        return ""
    lo, hi = iv[name]
    return f" [{100 * iv['level']:.0f} % interval over repositories: {100 * lo:.1f}–{100 * hi:.1f} %]"


def render(report: dict[str, Any], results: list[ScreenResult], split: str, show: bool = False) -> str:
    first = next(iter(report["tiers"]), None)  # the tier the intervals and the guard's figures are of
    lines = [f"Real screens ({split} split): {report['screens']} screens from {report['repos']} repositories"]
    if report.get("screen_model"):
        lines.append(f"free tier ('rules'): the rules and the screen model trained on {report['screen_model']}; "
                     f"'{RULES_ALONE_TIER}': the rules with the screen model off")
    elif "screen_model" in report:
        lines.append("free tier ('rules'): the rules alone (interference.screen_model is off)")
    if report["errors"]:
        lines.append(f"unreadable (not labelled malformed): {', '.join(report['errors'])}")
    for tier, t in report["tiers"].items():
        i = t["interference"]
        lines += ["", f"## {tier} tier", "",
                  f"interference recall {_pct(i['recall'])} ({i['detected']} of {i['n']})"
                  + (_interval(report, "recall") if tier == first else ""), "",
                  "| kind | screens | detected | uncertain | recall |", "|---|---:|---:|---:|---:|"]
        for kind, k in i["per_kind"].items():
            lines.append(f"| {kind} | {k['n']} | {k['detected']} | {k['uncertain']} | {_pct(k['recall'])} |")
        m = i.get("misses")
        if m and sum(m.values()):
            lines += ["", f"missed {sum(m.values())}: uncertain {m['uncertain']} (the cascade asks the model on these), "
                      f"an overlay located but scored under the uncertain threshold {m['located_below_uncertain']}, "
                      f"nothing located {m['nothing_located']} (no overlay structure the rules read)"]
        lines += ["", "| screens without interference | screens | false alarms | rate | uncertain |",
                  "|---|---:|---:|---:|---:|"]
        for cat, fa in t["false_alarms"].items():
            lines.append(f"| {cat} | {fa['n']} | {fa['false_alarms']} | {_pct(fa['rate'])} | {fa['uncertain']} |")
        if tier == first:
            lines += ["", "false-alarm rate, ordinary" + _interval(report, "ordinary_false_alarm_rate")
                      + "; wanted" + _interval(report, "wanted_false_alarm_rate")]
        if "model_asked" in t:
            lines.append(f"\nthe cascade asked the model on {t['model_asked']} of {report['screens']} screens")
    g = report["guard"]
    oracle_asked = {"cascade": "where the rules are uncertain"}.get(g.get("oracle_mode", "vlm"), "on every screen")
    heading = {ORACLE_TIER: f" (oracle: the label as a perfect interference verdict, asked {oracle_asked}; "
                            "the recoveries as they are)",
               "cascade": " (cascade tier)"}.get(g.get("tier", "rules"), "")
    lines += ["", "## what a guarded wait-only agent did" + heading, "",
              "| screens | " + " | ".join(ACTION_CLASSES) + " |", "|---|" + "---:|" * len(ACTION_CLASSES)]
    for cat, c in g["actions"].items():
        lines.append(f"| {cat} | " + " | ".join(str(c[k]) for k in ACTION_CLASSES) + " |")
    lines += ["", f"first action cleared the pop-up: {g['cleared']} of {g['clearable']} "
                  f"({_pct(g['cleared_rate'])}) that a tap or Back can clear (a labelled dismiss control, Wait on "
                  "an ANR, Back where the label says Back closes it)",
              f"taps on engage or destructive controls: {g['engage_or_destructive_taps']}",
              f"actions on screens without interference: {g['actions_on_non_interference']} "
              f"({_pct(g['actions_on_non_interference_rate'])})" + _interval(report, "actions_on_non_interference_rate"),
              f"Back pressed where the label says Back does not close it: {g['back_where_back_harms']}"]
    ses = report.get("session")
    if ses and ses["steps"] > 1:
        lines += ["", f"over {ses['steps']} guarded steps on a screen that does not change (each action without effect): "
                  f"screens with an engage or destructive tap {ses['engage_or_destructive_taps']}, screens without "
                  f"interference acted on {ses['actions_on_non_interference']} of {ses['non_interference']}, "
                  f"the task's own hung app closed after its waits {ses['closed_hung_task_app']}, Back pressed where "
                  f"it does not close the screen {ses['back_where_back_harms']}"]
    if len(report["by_round"]) > 1:
        tier = first
        lines += ["", f"## by collection round ({tier} tier; rounds.yaml — each round after the first was a fresh check)",
                  "", "| round | screens | pop-ups found | false alarms, ordinary | false alarms, wanted "
                  "| engage / destructive taps | actions on non-interference |", "|---|---:|---:|---:|---:|---:|---:|"]
        for k, h in report["by_round"].items():
            lines.append(f"| {k if k != '0' else '?'} | {h['screens']} | {h['detected']} of {h['interference']} "
                         f"| {h['ordinary_false_alarms']} of {h['ordinary']} | {h['wanted_false_alarms']} of {h['wanted']} "
                         f"| {h['engage_or_destructive_taps']} | {h['actions_on_non_interference']} of "
                         f"{h['ordinary'] + h['wanted']} |")
    if show:
        tier = first
        lines += ["", f"## cases ({tier} tier)"]
        for r in results:
            if r.error:
                continue
            bad = ((r.category == "interference" and not r.detected(tier))
                   or (r.category != "interference" and r.verdicts.get(tier) != "false")
                   or r.action_class in ("engage", "destructive", "other")
                   or (r.category != "interference" and r.action_class != "none")
                   or (r.action_class == "back" and r.back_dismisses is False))
            if bad:
                lines.append(f"- {r.id} [{r.category}/{r.kind}] {tier}={r.verdicts.get(tier)} guard={r.action_class} "
                             f"{r.guard_summary!r} :: {r.evidence.get(tier, '')}")
    text = "\n".join(lines)
    if report.get("round") is not None:
        # a round's fresh check reports each half: its dev half is tuned on afterwards, its test half never
        for sp, h in report["by_split"].items():
            text += (f"\n{sp} half ({first} tier): {h['detected']} of {h['interference']} pop-ups, false alarms on "
                     f"{h['ordinary_false_alarms']} of {h['ordinary']} ordinary, "
                     f"{h['wanted_false_alarms']} of {h['wanted']} wanted")
    return text
