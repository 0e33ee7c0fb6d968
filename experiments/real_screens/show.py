"""Print a screen dump as a compact indented outline, for labelling by eye.

    python -m experiments.real_screens.show FILE_OR_ID [...] [--all] [--label]

One line per node that says something (text, description, id, or a control):
class, quoted text / description, short id, flags (click, edit, focus, check,
scroll, disabled) and bounds. Window roots are marked with their package. Reads
uiautomator dumps and Appium page sources alike, with the standard library only:
labels are written from this view before any diagnoser sees the file.
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

from ttir.core.dump import text_encoding

TEXT_CLIP = 90


def _root(data: bytes) -> ET.Element:
    text = data.decode(text_encoding(data), "replace")
    start = text.find("<hierarchy")
    end = text.rfind("</hierarchy>")
    if start == -1:
        raise ValueError("no <hierarchy> element")
    if end != -1:
        text = text[start : end + len("</hierarchy>")]
    else:
        text = text[start:]
    return ET.fromstring(text)


def _clip(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    return s if len(s) <= TEXT_CLIP else s[: TEXT_CLIP - 1] + "…"


def outline(data: bytes, show_all: bool = False) -> str:
    root = _root(data)
    lines = [f"hierarchy {' '.join(f'{k}={v}' for k, v in root.attrib.items())}"]

    def walk(node: ET.Element, depth: int, parent_pkg: Optional[str]) -> None:
        for child in node:
            a = child.attrib
            cls = a.get("class") or child.tag
            pkg = a.get("package", "")
            flags = [name for name, attr in (("click", "clickable"), ("long", "long-clickable"), ("focus", "focused"),
                                             ("check", "checkable"), ("scroll", "scrollable"), ("sel", "selected"),
                                             ("pwd", "password")) if a.get(attr) == "true"]
            if a.get("checked") == "true":
                flags.append("checked")
            if a.get("enabled") == "false":
                flags.append("disabled")
            if "EditText" in cls or "AutoComplete" in cls:
                flags.append("edit")
            text, desc, rid = a.get("text", ""), a.get("content-desc", ""), a.get("resource-id", "")
            hint = a.get("hint", "")
            says = text or desc or rid or hint or flags
            window = depth == 0 or (pkg and pkg != parent_pkg)
            if says or window or show_all:
                parts = ["  " * depth + cls.rsplit(".", 1)[-1]]
                if window:
                    parts.append(f"[window pkg={pkg}]" if depth == 0 else f"[pkg={pkg}]")
                if text:
                    parts.append(f"text={_clip(text)!r}")
                if desc:
                    parts.append(f"desc={_clip(desc)!r}")
                if hint and hint != text:
                    parts.append(f"hint={_clip(hint)!r}")
                if rid:
                    parts.append(f"id={rid.split('/', 1)[-1] if ':id/' in rid else rid}")
                if flags:
                    parts.append("{" + ",".join(flags) + "}")
                parts.append(a.get("bounds", ""))
                lines.append(" ".join(parts))
            walk(child, depth + 1, pkg or parent_pkg)

    walk(root, 0, None)
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", help="dump files, or corpus ids (manifest.jsonl)")
    p.add_argument("--all", action="store_true", help="also print nodes that say nothing")
    p.add_argument("--label", action="store_true", help="with a corpus id: print its label too")
    args = p.parse_args(argv)
    corpus = Path(__file__).resolve().parent
    for name in args.files:
        f = Path(name)
        label = None
        if not f.exists():
            import json

            rows = {r["id"]: r for r in map(json.loads, (corpus / "manifest.jsonl").read_text(encoding="utf-8").splitlines())}
            if name not in rows:
                print(f"=== {name}: no such file or corpus id")
                continue
            f = corpus / rows[name]["file"]
            labels = {r["id"]: r for r in map(json.loads, (corpus / "labels.jsonl").read_text(encoding="utf-8").splitlines())}
            label = labels.get(name)
        print(f"=== {f}")
        if args.label and label:
            print("label:", {k: v for k, v in label.items() if v not in (None, "", [], False)})
        try:
            print(outline(f.read_bytes(), args.all))
        except (ET.ParseError, ValueError) as exc:
            print(f"MALFORMED: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
