"""The bottom layer of ttir: what every other part (the model client, the diagnosers and
recoveries, the simulated phone, the guard, the runner) is written in terms of. It imports
nothing of ttir's above it.

What it holds:

- ``types``: UI elements, observations, actions, agent steps, the agent protocol;
- ``dump``: reading a uiautomator dump (or Appium page source), bounded;
- ``ocr``: text from pixels, for screens without a tree (the ``ocr`` extra, loaded lazily);
- ``config``: ``TTIRConfig``, every knob of the guard, validated;
- ``validation``, ``errors``, ``imports``: clear errors for bad input, one error hierarchy,
  ``package.module:attribute`` strings resolved;
- ``lexicon`` (and ``data/``): the one vocabulary of control roles and loading words;
- ``describe``, ``prompt_data``: observations and untrusted text as prompt text;
- ``obs_cache``: a feature computed once per observation;
- ``doctor_check``: one check of a doctor (phones, endpoints);
- ``logs``: the packages' loguru logs, quiet as a library until an application enables them.
"""

# the submodules (``from ttir.x import *`` loads them); the package itself re-exports nothing, so that
# importing one part never loads the others
__all__ = [
    "config",
    "describe",
    "diagnosis",
    "doctor_check",
    "dump",
    "errors",
    "imports",
    "lexicon",
    "logs",
    "obs_cache",
    "ocr",
    "prompt_data",
    "recovery",
    "types",
    "validation",
]
