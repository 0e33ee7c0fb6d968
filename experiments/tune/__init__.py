"""Tuning the guard's diagnosers: labelled step datasets, per-diagnoser metrics,
threshold sweeps and prompt A/B tests (``ttir tune build | eval | sweep | prompts``).

- :mod:`experiments.tune.truth` — per-step ground truth recorded by the harness;
- :mod:`experiments.tune.labels` — the four labels derived from it (documented rules);
- :mod:`experiments.tune.schema` — the step-row JSONL format (also for hand-labelled
  trajectories from a real phone);
- :mod:`experiments.tune.dataset` — run directory -> dataset; loading rows back;
- :mod:`experiments.tune.evaluate` — run the diagnosers on rows, score them;
- :mod:`experiments.tune.sweep` — grids of config values, best config under an FP ceiling;
- :mod:`experiments.tune.prompts_ab` — compare diagnose prompts against one endpoint;
- :mod:`experiments.tune.loader` / :mod:`metrics` / :mod:`tables` — rows to
  DiagnosisContexts, scores, text tables;
- :mod:`experiments.tune.fidelity` — offline verdicts vs the live guard's on the same episodes.

See experiments/tune/README.md.

Importing this package is cheap: the worker imports :mod:`truth` in every episode.
"""
