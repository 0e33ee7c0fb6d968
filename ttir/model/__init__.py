"""The model layer: calls to any OpenAI-compatible endpoint, bounded in time and cost.
Above :mod:`ttir.core` (and ``prompts/``), below the diagnosers and recoveries that use it.

What it holds:

- ``client``: ``VLMClient``, one JSON-returning chat call (sync and async), retried, billed;
- ``endpoint``: what an endpoint accepts, learnt from its answers;
- ``payload``: messages, image data URLs, JSON pulled out of a reply;
- ``deadline``: one deadline and one re-ask budget per guarded step;
- ``http_deadline``: the HTTP transports that hold that deadline against a dripping body;
- ``call_slots``: at most so many calls per endpoint in flight in a process;
- ``breaker``: a dead endpoint rested across steps;
- ``local_model``: the offline model of the ``local-model`` extra;
- ``doctor``: ``ttir doctor --vlm``.
"""

# the submodules (``from ttir.x import *`` loads them); the package itself re-exports nothing, so that
# importing one part never loads the others
__all__ = [
    "breaker",
    "call_slots",
    "client",
    "deadline",
    "doctor",
    "endpoint",
    "http_deadline",
    "local_model",
    "payload",
]
