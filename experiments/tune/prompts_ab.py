"""``ttir tune prompts``: compare diagnose prompt files on the same steps.

Every prompt gets its own VLM judge over the same endpoint (config ``vlm`` section
or ``TTIR_VLM_*``) and answers every selected step (one call per step and
prompt); the rule tier is scored alongside as the free baseline. Reports per
prompt and diagnoser: precision, recall, F1, plus calls, tokens and replies that
could not be used (the guard would fall back to the rules there, and so does the
evaluation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from experiments.tune.evaluate import Variant, evaluate_dataset, summarise
from ttir.core.config import TTIRConfig, env_vlm_settings


def endpoint_configured(config: TTIRConfig) -> bool:
    return bool(env_vlm_settings(config.vlm)["base_url"])


def prompt_names(paths: list[str]) -> list[str]:
    """Short unique names for the prompts (file stems, numbered when they clash)."""
    stems = [Path(p).stem for p in paths]
    out = []
    for i, s in enumerate(stems):
        out.append(s if stems.count(s) == 1 else f"{s}#{i + 1}")
    return out


def compare(dataset: Path | str, prompt_paths: list[str], *, config: Optional[TTIRConfig] = None,
            select: Optional[dict[str, Any]] = None, client: Any = None, baseline: bool = True,
            progress: bool = False) -> dict[str, Any]:
    """The eval report with one ``vlm[<prompt>]`` variant per prompt (and ``rules``)."""
    import prompts as prompt_files
    from diagnosers.vlm_judge import VLMJudge
    from ttir.model.client import VLMClient

    config = config or TTIRConfig()
    if len(prompt_paths) < 1:
        raise ValueError("--prompt: give at least one prompt file (two or more to compare)")
    for p in prompt_paths:
        prompt_files.load(p)  # a missing file or a bad placeholder fails now, naming it
    if client is None:
        if not endpoint_configured(config):
            raise ValueError("no model endpoint: set vlm.base_url in --config or the TTIR_VLM_BASE_URL environment "
                             "variable (e.g. http://localhost:8000/v1)")
        client = VLMClient(config.vlm)
    variants: list[Variant] = [Variant("rules", "rules", config)] if baseline else []
    names = prompt_names(prompt_paths)
    for name, path in zip(names, prompt_paths):
        cfg = config.override({"prompts.diagnose": str(path)})
        variants.append(Variant(f"vlm[{name}]", "vlm", cfg, judge=VLMJudge(client, cfg)))
    outcomes = evaluate_dataset(dataset, variants, select=select, progress=progress)
    report = summarise(outcomes, variants)
    report["prompts"] = dict(zip(names, [str(p) for p in prompt_paths]))
    report["winners"] = _winners(report, [f"vlm[{n}]" for n in names])
    return report


def _winners(report: dict[str, Any], names: list[str]) -> dict[str, Optional[str]]:
    """Per diagnoser: the prompt with the highest F1 (None when none is measurable)."""
    out: dict[str, Optional[str]] = {}
    diags = next(iter(report["variants"].values()))["diagnosers"] if report["variants"] else {}
    for d in diags:
        scored = [(report["variants"][n]["diagnosers"][d]["f1"], n) for n in names
                  if report["variants"][n]["diagnosers"][d]["f1"] is not None]
        out[d] = max(scored)[1] if scored else None
    return out


__all__ = ["compare", "endpoint_configured", "prompt_names"]
