"""How the ``appagent-*`` and ``guiagent-*`` rows of steps.jsonl were made: labelled steps
of recorded agent runs in ``sequences.jsonl`` whose own logs give the actions.
``python -m experiments.real_screens.run_steps`` prints them; ``--write`` appends those
steps.jsonl does not hold yet.

- AppAgent (Untergang1/AppAgent, test split): the log lines mapped to coordinates the
  way AppAgent's task_executor maps them (scripts/and_controller.py at the corpus
  commit: clickable then focusable nodes in document order, a node within MIN_DIST=30
  px of a kept one skipped; tap(N) = the N-th one's centre; swipe(N, dir, dist) from its
  centre by 2*width/10*(1|2|3) for up/down, width/10*(...) for left/right; text() into
  the focused field).
- GUI-Agent (Darlingxxx-Paranoid/GUI-Agent, test split): its agent.log gives each
  action's coordinates ("tap (x, y)", "input at (x, y): adb shell input text T", adb's
  %s for a space) and what the agent meant by it.

Labels, decided from the files and the logs alone, the same for every source:
- stuck loop: true when the last three actions were the same (type, direction, start
  point) and each left a byte-identical dump (the corpus id) behind; else false.
- action effect: 'no' after a tap or swipe that left a byte-identical dump; typed
  text labelled by hand from the field (``TYPED``); otherwise no label.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent

def elements(xml: bytes):
    def parse(b):
        x1, y1, x2, y2 = map(int, re.findall(r"\d+", b))
        return x1, y1, x2, y2
    out = {}
    for attrib in ("clickable", "focusable"):
        lst = []
        for node in ET.fromstring(xml).iter("node"):
            if node.attrib.get(attrib) == "true":
                x1, y1, x2, y2 = parse(node.attrib["bounds"])
                c = ((x1 + x2) // 2, (y1 + y2) // 2)
                if all(((c[0] - d[0]) ** 2 + (c[1] - d[1]) ** 2) ** 0.5 > 30 for d in lst):
                    lst.append(c)
        out[attrib] = lst
    elems = list(out["clickable"])
    for c in out["focusable"]:
        if all(((c[0] - d[0]) ** 2 + (c[1] - d[1]) ** 2) ** 0.5 > 30 for d in out["clickable"]):
            elems.append(c)
    return elems

def width(xml: bytes) -> int:
    root = ET.fromstring(xml)
    return max(int(re.findall(r"\d+", n.attrib["bounds"])[2]) for n in root.iter("node"))

def focused(xml: bytes):
    for node in ET.fromstring(xml).iter("node"):
        if node.attrib.get("focused") == "true" and node.attrib.get("class", "").endswith("EditText"):
            x1, y1, x2, y2 = map(int, re.findall(r"\d+", node.attrib["bounds"]))
            return ((x1 + x2) // 2, (y1 + y2) // 2), node.attrib.get("text", "")
    return None, None

def foreground(xml: bytes) -> str:
    """The package of the largest window that is not System UI or a keyboard."""
    best, area = "", -1
    for node in ET.fromstring(xml):
        pkg = node.attrib.get("package", "")
        if pkg == "com.android.systemui" or "inputmethod" in pkg or not node.attrib.get("bounds"):
            continue
        x1, y1, x2, y2 = map(int, re.findall(r"\d+", node.attrib["bounds"]))
        if (x2 - x1) * (y2 - y1) > area:
            best, area = pkg, (x2 - x1) * (y2 - y1)
    return best


def action(log: str, xml: bytes):
    if m := re.fullmatch(r"tap\((\d+)\)", log):
        x, y = elements(xml)[int(m[1]) - 1]
        return {"action_type": "click", "x": x, "y": y}, f"Tap element {m[1]}", ("click", None, (x, y))
    if m := re.fullmatch(r'swipe\((\d+), "(\w+)", "(\w+)"\)', log):
        x, y = elements(xml)[int(m[1]) - 1]
        unit = width(xml) // 10 * {"long": 3, "medium": 2}.get(m[3], 1)
        dx, dy = {"up": (0, -2 * unit), "down": (0, 2 * unit), "left": (-unit, 0), "right": (unit, 0)}[m[2]]
        return ({"action_type": "swipe", "x": x, "y": y, "x2": x + dx, "y2": y + dy, "duration_ms": 400},
                f"Swipe {m[2]} on element {m[1]}", ("swipe", m[2], (x, y)))
    if m := re.fullmatch(r'text\("(.*)"\)', log):
        p, _ = focused(xml)
        a = {"action_type": "input_text", "text": m[1]}
        if p:
            a.update(x=p[0], y=p[1])
        return a, f'Type "{m[1]}"', ("input_text", m[1], None)
    raise ValueError(log)

# hand labels of typed text (from the field's text in the dump after the step)
TYPED = {("2024-11-12_23-45-06", 4): ("yes", "the omnibox (url_bar, focused) now reads 'weather tomorrow'"),
         ("2024-11-12_23-45-06", 5): ("no", "typed again: the omnibox reads 'weather tomorrowweather tomorrow'"),
         ("2024-10-29_14-14-57", 2): ("no", "no field had focus: the text landed nowhere and a menu opened"),
         ("2024-10-29_14-14-57", 3): ("no", "typed again with no focused field: Chrome left for a help page")}
# hand labels of GUI-Agent's typed text, per sequence and step (from the field after it)
GUI_AGENT_TYPED = {"seq-a40f203511aa": {
    2: ("yes", "the To field (focused) now reads '221240051@smail.nju.edu.cn'"),
    4: ("yes", "the Subject field (focused) now reads 'Meeting on 2026-03-18 14:00'"),
    5: ("yes", "the body (focused) now reads 'Hello,' — what adb typed (its text ends at the first space)")}}
GOALS = {"what is the weather tomorrow?": "Search the web in Chrome for tomorrow's weather",
         "search the weather tomorrorw": "Search the web in Chrome for tomorrow's weather",
         "check my new emails": "Check my new emails in Gmail", "open gmail": "Open Gmail",
         "turn on wifi": "Turn on Wi-Fi", "在设置里打开深色模式": "Turn on dark mode in Settings",
         "打开深色模式": "Turn on dark mode"}

GUI_AGENT_GOALS = {"seq-a40f203511aa": "Send an email to 221240051@smail.nju.edu.cn about the meeting on 2026-03-18 at 14:00"}


def gui_agent_action(log: str):
    """A GUI-Agent log line -> (action, summary, key for "the same action")."""
    if m := re.fullmatch(r"tap \((\d+), (\d+)\) '(.*)'", log):
        x, y = int(m[1]), int(m[2])
        return {"action_type": "click", "x": x, "y": y}, m[3], ("click", None, (x, y))
    if m := re.fullmatch(r"input at \((\d+), (\d+)\): adb shell input text (\S+) \('(.*)'\)", log):
        x, y, text = int(m[1]), int(m[2]), m[3].replace("%s", " ")
        return ({"action_type": "input_text", "text": text, "x": x, "y": y}, m[4], ("input_text", text, (x, y)))
    raise ValueError(log)


def _runs(corpus: Path, manifest: dict[str, Any]):
    """(episode, goal, screens, their dumps, actions, source note, typed labels) per logged run."""
    def dumps(screens: list[str]) -> list[bytes]:
        return [(corpus / manifest[s]["file"]).read_bytes() for s in screens]

    for line in open(corpus / "sequences.jsonl", encoding="utf-8"):
        seq = json.loads(line)
        screens = seq["screens"]
        if "Untergang1/AppAgent" in seq["source"]:
            task = re.search(r"task '([^']+)'", seq["source"])[1]
            run = re.search(r"task_system_[\d_-]+", seq["source"])[0][12:]
            xmls = dumps(screens)
            acts = [action(a, x) for a, x in zip(seq["actions"], xmls)]
            typed = {t: v for (r, t), v in TYPED.items() if r == run}
            yield (f"appagent-{run}", GOALS[task], screens, xmls, acts,
                   "AppAgent's own log; actions mapped as AppAgent maps them", typed)
        elif seq["id"] in GUI_AGENT_GOALS:
            logged = [a for a in seq["actions"] if a and not a.startswith("(")]
            acts = [gui_agent_action(a) for a in logged]
            screens = screens[: len(acts) + 1]
            yield (f"guiagent-{seq['id'][4:]}", GUI_AGENT_GOALS[seq["id"]], screens, dumps(screens), acts,
                   "GUI-Agent's own agent.log", GUI_AGENT_TYPED.get(seq["id"], {}))


def build_rows(corpus: Path = CORPUS) -> list[dict[str, Any]]:
    """The labelled steps of every logged agent run in ``sequences.jsonl``."""
    manifest = {json.loads(line)["id"]: json.loads(line) for line in open(corpus / "manifest.jsonl", encoding="utf-8")}
    rows: list[dict[str, Any]] = []
    for episode, goal, screens, xmls, acts, source, typed in _runs(corpus, manifest):
        fgs = [foreground(x) for x in xmls]  # read once per run, not once per step of its history
        for t in range(1, len(screens)):
            streak = 0
            for j in range(t - 1, -1, -1):
                if acts[j][2] != acts[t - 1][2] or screens[j] != screens[j + 1]:
                    break
                streak += 1
            lab = {"repeat_failure_detected": streak >= 3}
            why = [f"stuck loop: the same action {streak}x on an unchanged (byte-identical) screen" if streak
                   else "stuck loop: the last action changed the screen" if screens[t] != screens[t - 1]
                   else "stuck loop: first time"]
            if t in typed and acts[t - 1][0]["action_type"] == "input_text":
                lab["previous_intended_effect_satisfied"], w = typed[t]
                why.append("action effect: " + w)
            elif acts[t - 1][0]["action_type"] in ("click", "swipe") and screens[t] == screens[t - 1]:
                lab["previous_intended_effect_satisfied"] = "no"
                why.append("action effect: the dump after the action is byte-identical to the one before")
            hist = [{"observation": {"xml": manifest[screens[j]]["file"], "foreground": fgs[j]},
                     "action": acts[j][0], "summary": acts[j][1]} for j in range(t)]
            rows.append({"id": f"{episode}-step{t}", "goal": goal,
                         "observation": {"xml": manifest[screens[t]]["file"], "foreground": fgs[t]},
                         "history": hist, "labels": lab,
                         "meta": {"perturbation": "real_trace", "split": "test", "episode": episode,
                                  "step": t, "why": "; ".join(why) + f" ({source})"}})
    return rows


if __name__ == "__main__":
    rows = build_rows()
    print(f"{len(rows)} steps: stuck loop {sum(r['labels']['repeat_failure_detected'] for r in rows)} true; "
          f"action effect {sum(r['labels'].get('previous_intended_effect_satisfied') == 'no' for r in rows)} no, "
          f"{sum(r['labels'].get('previous_intended_effect_satisfied') == 'yes' for r in rows)} yes")
    for r in rows:
        print(r["id"], r["labels"])
    if "--write" in sys.argv[1:]:
        have = {json.loads(line)["id"] for line in open(CORPUS / "steps.jsonl", encoding="utf-8") if line.strip()}
        with open(CORPUS / "steps.jsonl", "a", encoding="utf-8") as f:
            for r in rows:
                if r["id"] not in have:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")
