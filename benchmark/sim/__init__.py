"""The embedded simulated Android phone."""

from benchmark.sim.device import SimDevice

__all__ = ["SimDevice"]
