"""Recovery from first-error checkpoints (AndroidFlux §3–4, docs/checkpoints.md).

- ``placement`` — the first error of a failed episode, from the run's own records, with its
  AndroidFlux class (stagnation → direction → execution) beside ttir's attribution category;
- ``history`` — the neutral history a resumed agent receives (never mentions an error or a replay);
- ``model`` — a checkpoint (``Checkpoint``), its positions (``t-k``, ``t``, ``t+k``, ``t+k+``) and steps buckets;
- ``replay`` — the recorded prefix replayed on the simulated phone, screens fingerprinted;
- ``propose`` — the phone of an episode, and the next action an agent takes at a checkpoint;
- ``build`` — checkpoints around every placed first error (and injected ones, ``t+1+``), kept only
  when they reproduce the recorded screen (``ttir checkpoints RUN_DIR --out CK_DIR``);
- ``episodes`` — the episodes of a spec with ``from_checkpoints: CK_DIR``;
- ``resume`` — what a worker does with a checkpoint episode (replay, check, prime the agent);
- ``report`` — the "Recovery from checkpoints" section of report.md;
- ``prefs`` — outcome-grounded recovery-action preferences (``ttir checkpoints prefs``);
- ``judge`` — a model judge scored against them (``ttir checkpoints judge``);
- ``export`` — checkpoint contexts as JSONL (``ttir checkpoints export``).
"""
