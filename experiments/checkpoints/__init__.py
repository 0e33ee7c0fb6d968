"""Recovery from first-error checkpoints (AndroidFlux §3–4, docs/checkpoints.md).

- ``placement`` — the first error of a failed episode, from the run's own records, with its
  AndroidFlux class (stagnation → direction → execution) beside ttir's attribution category;
- ``history`` — the neutral history a resumed agent receives (never mentions an error or a replay);
- ``build`` — checkpoints before / at / after the first error: the recorded prefix replayed on the
  simulated phone under the episode's seeds, kept only when it reproduces the recorded screen;
- ``resume`` — what a worker does with a checkpoint episode (replay, then the agent primed);
- ``report`` — the "Recovery from checkpoints" section;
- ``export`` — checkpoint contexts as JSONL for training pipelines.
"""
