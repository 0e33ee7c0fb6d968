"""What the corpus holds: files, repositories, categories and kinds per split, UI
languages, Android versions, dump formats, licences.

    python -m experiments.real_screens.stats [--markdown]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Optional

from experiments.real_screens.corpus import SPLITS, load_corpus


def composition() -> dict[str, object]:
    screens = load_corpus("all")
    out: dict[str, object] = {"files": len(screens), "repos": len({s.repo for s in screens})}
    for split in SPLITS:
        ss = [s for s in screens if s.split == split]
        out[split] = {
            "files": len(ss), "repos": len({s.repo for s in ss}),
            "categories": dict(Counter(s.label.category for s in ss)),
            "interference_kinds": dict(Counter(s.label.kind for s in ss if s.label.category == "interference")),
            "wanted_kinds": dict(Counter(s.label.kind for s in ss if s.label.category == "wanted")),
        }
    out["languages"] = dict(Counter(s.label.language for s in screens).most_common())
    out["android"] = dict(Counter(s.label.android for s in screens).most_common())
    out["formats"] = dict(Counter(s.manifest["format"] for s in screens))
    out["focus_only"] = sum(s.label.focus_only for s in screens)
    out["malformed"] = sum(bool(s.label.malformed) for s in screens)
    out["licences"] = dict(Counter(s.manifest.get("licence") or "not stated" for s in screens).most_common())
    return out


def markdown(c: dict) -> str:
    lines = [f"{c['files']} files from {c['repos']} repositories.", "",
             "| split | files | repos | interference | wanted | ordinary |", "|---|---:|---:|---:|---:|---:|"]
    for split in SPLITS:
        s = c[split]
        cat = s["categories"]
        lines.append(f"| {split} | {s['files']} | {s['repos']} | {cat.get('interference', 0)} | "
                     f"{cat.get('wanted', 0)} | {cat.get('ordinary', 0)} |")
    kinds = sorted(set(c["dev"]["interference_kinds"]) | set(c["test"]["interference_kinds"]))
    lines += ["", "| interference kind | dev | test |", "|---|---:|---:|"]
    for k in kinds:
        lines.append(f"| {k} | {c['dev']['interference_kinds'].get(k, 0)} | {c['test']['interference_kinds'].get(k, 0)} |")
    wk = sorted(set(c["dev"]["wanted_kinds"]) | set(c["test"]["wanted_kinds"]))
    lines += ["", "| wanted kind | dev | test |", "|---|---:|---:|"]
    for k in wk:
        lines.append(f"| {k} | {c['dev']['wanted_kinds'].get(k, 0)} | {c['test']['wanted_kinds'].get(k, 0)} |")
    lines += ["", "UI languages: " + ", ".join(f"{k} {v}" for k, v in c["languages"].items()),
              "", "Android (labeller's estimate): " + ", ".join(f"{k} {v}" for k, v in c["android"].items()),
              "", "Formats: " + ", ".join(f"{k} {v}" for k, v in c["formats"].items())
              + f"; focus-only dumps {c['focus_only']}; malformed (kept, with the reason) {c['malformed']}",
              "", "Licences stated by the repositories: " + ", ".join(f"{k} {v}" for k, v in c["licences"].items())]
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--markdown", action="store_true", help="tables for a README")
    args = p.parse_args(argv)
    c = composition()
    if args.markdown:
        print(markdown(c))
    else:
        import json

        print(json.dumps(c, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
