"""Move labelled files from staging directories into the corpus.

    python -m experiments.real_screens.ingest STAGING [STAGING ...] --round N [--seed 0]

Each staging directory holds what ``collect`` wrote (``manifest.jsonl``, ``files/``)
and the labels written from the outline (``labels.jsonl``, ids = the manifest's
``file``) and optionally ``sequences.jsonl``. Every file is checked again — same
sha256 as collected, not on the reserved list, not already in the corpus — copied
byte for byte, and given its corpus id (the first 12 hex digits of its sha256).
Repositories new to the corpus are assigned to a split (see :func:`assign_splits`) and
recorded under collection round ``N`` in ``rounds.yaml`` (``--round``: needed when the
staging holds a repository the corpus does not have yet).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import yaml

from experiments.real_screens.corpus import CORPUS_DIR, SPLITS, load_rounds, load_splits, read_yaml
from experiments.real_screens.labels import ScreenLabel
from experiments.real_screens.reserved import git_blob_id, load_reserved, rejection

TEST_SHARE = 0.5  # of each interference kind's screens, and of the wanted / ordinary screens


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _append(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def ingest(stagings: list[Path], corpus: Path = CORPUS_DIR, seed: int = 0,
           round_: Optional[int] = None) -> dict[str, int]:
    known = set(load_rounds(corpus)) | set(load_splits(corpus))
    arriving = sorted({m["repo"] for st in stagings for m in _rows(st / "manifest.jsonl")} - known)
    if arriving and (round_ is None or round_ < 1):
        raise ValueError(f"round={round_!r}: the staging brings {len(arriving)} new repositories "
                         f"({', '.join(arriving[:3])}{', …' if len(arriving) > 3 else ''}); give --round N (N >= 1), "
                         "the collection round they belong to (see rounds.yaml)")
    reserved = load_reserved()
    have = {r["sha256"] for r in _rows(corpus / "manifest.jsonl")}
    manifest_out, labels_out, sequences_out = [], [], []
    counts: Counter[str] = Counter()
    for staging in stagings:
        labels = {r["id"]: r for r in _rows(staging / "labels.jsonl")}
        id_of: dict[str, str] = {}
        for m in _rows(staging / "manifest.jsonl"):
            lab = labels.get(m["file"])
            if lab is None:
                counts["unlabelled"] += 1
                continue
            data = (staging / m["file"]).read_bytes()
            sha = hashlib.sha256(data).hexdigest()
            if sha != m["sha256"]:
                raise ValueError(f"{staging / m['file']}: sha256 {sha} differs from the manifest's {m['sha256']}: "
                                 "the file changed after it was collected")
            blob = git_blob_id(data)
            if blob != m["blob"]:
                raise ValueError(f"{staging / m['file']}: git blob id {blob} differs from the manifest's {m['blob']}")
            why = rejection(blob, sha, reserved, have)
            if why is not None:
                counts[why] += 1
                continue
            cid = sha[:12]
            target = corpus / m["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(staging / m["file"], target)
            have.add(sha)
            id_of[m["file"]] = cid
            manifest_out.append({"id": cid, **m})
            labels_out.append(ScreenLabel(**{**lab, "id": cid}).model_dump())
            counts["ingested"] += 1
        for s in _rows(staging / "sequences.jsonl"):
            files = s.get("files") or []
            if files and all(f in id_of for f in files):
                sequences_out.append({"id": "seq-" + id_of[files[0]], "screens": [id_of[f] for f in files],
                                      "actions": s.get("actions") or [None] * (len(files) - 1),
                                      "source": s.get("source", ""), "cases": s.get("cases") or []})
    _append(corpus / "manifest.jsonl", manifest_out)
    _append(corpus / "labels.jsonl", labels_out)
    _append(corpus / "sequences.jsonl", sequences_out)
    counts["sequences"] = len(sequences_out)
    counts["new_repos"] = assign_splits(corpus, seed)
    if round_ is not None:
        record_round(corpus, round_)
    return dict(counts)


def record_round(corpus: Path, number: int, about: str = "") -> None:
    """Put every repository of the corpus that is in no round yet into round ``number``."""
    path = corpus / "rounds.yaml"
    header = "".join(line + "\n" for line in path.read_text(encoding="utf-8").splitlines()
                     if line.startswith("#")) if path.exists() else ""
    data = read_yaml(path).get("rounds") or {}
    new = sorted({r["repo"] for r in _rows(corpus / "manifest.jsonl")} - set(load_rounds(corpus)), key=str.lower)
    if not new:
        return
    entry = data.setdefault(number, {"about": about, "repositories": []})
    entry["repositories"] = sorted([*entry.get("repositories", []), *new], key=str.lower)
    path.write_text(header + yaml.safe_dump({"rounds": dict(sorted(data.items()))}, sort_keys=False, allow_unicode=True),
                    encoding="utf-8")


def assign_splits(corpus: Path = CORPUS_DIR, seed: int = 0) -> int:
    """Put every repository that is in no split yet into dev or test.

    Repositories are taken in a seeded random order; each goes to the split that is
    further below its target share (``TEST_SHARE``) over the categories and kinds it
    holds, so both splits hold every kind. A repository never moves once assigned."""
    splits = load_splits(corpus)
    manifest = {r["id"]: r["repo"] for r in _rows(corpus / "manifest.jsonl")}
    per_repo: dict[str, Counter[str]] = {}
    for lab in _rows(corpus / "labels.jsonl"):
        key = f"{lab['category']}:{lab['kind']}" if lab["category"] == "interference" else lab["category"]
        per_repo.setdefault(manifest[lab["id"]], Counter())[key] += 1
    totals: dict[str, Counter[str]] = {s: Counter() for s in SPLITS}
    for repo, c in per_repo.items():
        if repo in splits:
            totals[splits[repo]].update(c)
    new = sorted(r for r in per_repo if r not in splits)
    random.Random(seed).shuffle(new)
    # repositories with the rarest screens first, so they are spread before the common ones fill the splits
    rarity = Counter(k for c in per_repo.values() for k in c)
    new.sort(key=lambda r: min(rarity[k] for k in per_repo[r]))
    for repo in new:
        def deficit(split: str) -> float:
            share = TEST_SHARE if split == "test" else 1 - TEST_SHARE
            return sum(n * (share * (totals["dev"][k] + totals["test"][k] + n) - totals[split][k])
                       for k, n in per_repo[repo].items())
        split = max(SPLITS, key=lambda s: (deficit(s), s == "test"))
        splits[repo] = split
        totals[split].update(per_repo[repo])
    out = {s: sorted(r for r, v in splits.items() if v == s) for s in SPLITS}
    header = ("# Repository -> split. No repository is in both: `dev` is for tuning, `test` only for reporting.\n"
              "# Written by experiments/real_screens/ingest.py (assign_splits); a repository never moves.\n")
    (corpus / "splits.yaml").write_text(header + yaml.safe_dump(out, sort_keys=False, allow_unicode=True),
                                        encoding="utf-8")
    return len(new)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("staging", nargs="+", type=Path)
    p.add_argument("--seed", type=int, default=0, help="seed of the split assignment of new repositories")
    p.add_argument("--round", type=int, default=None, dest="round_",
                   help="the collection round the new repositories belong to (rounds.yaml)")
    args = p.parse_args(argv)
    try:
        print(json.dumps(ingest(args.staging, seed=args.seed, round_=args.round_)))
    except ValueError as exc:
        print(f"ingest: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
