"""Perturbations: the 24 AndroidReality perturbations, the 10 AnTrap traps and six beyond the
paper (``EXTENSIONS``: UI language, gesture navigation, what's-new dialogs, first-run gates, System UI
not responding, an empty accessibility tree), over any device.

``make(name, **overrides)`` builds one from its YAML profile; ``REGISTRY`` lists them;
``PerturbedDevice(device, perturbations, seed=…)`` runs them around any device."""

from ttir.core.logs import quiet_library

quiet_library(__name__)  # a library stays quiet until the application (or `ttir` CLI) enables it


from perturb.base import Magnitude, Params, Perturbation
from perturb.device import Event, PerturbationContext, PerturbedDevice
from perturb.registry import ANDROIDREALITY, ANTRAP, EXTENSIONS, REGISTRY, Profile, make, make_all, names
from perturb.timing import Persistence, Timing

__all__ = [
    "ANDROIDREALITY",
    "ANTRAP",
    "EXTENSIONS",
    "Event",
    "Magnitude",
    "Params",
    "Persistence",
    "PerturbationContext",
    "PerturbedDevice",
    "Perturbation",
    "Profile",
    "REGISTRY",
    "Timing",
    "make",
    "make_all",
    "names",
]
