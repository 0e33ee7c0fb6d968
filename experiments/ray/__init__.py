"""Sweeps on a Ray cluster (the ``ray`` extra; nothing here is imported without ``--executor ray``).

- :mod:`experiments.ray.executor`: ``RayExecutor``, the local executor's two methods on Ray actors;
- :mod:`experiments.ray.actor`: ``DeviceActor``, one device per actor, replaced when it dies;
- :mod:`experiments.ray.devices`: which real phones each node declares (``python -m experiments.ray.devices``);
- :mod:`experiments.ray.perf`: the Ray section of ``python -m experiments.perf``.
"""
