"""PerturbedDevice on a caller's mistakes: each named before the episode, none an AttributeError
from deep inside (a name for a perturbation failed on ``p.name``; no device failed at the first step)."""

from __future__ import annotations

import pytest

import perturb
from benchmark import SimDevice, make_task
from ttir.core.errors import UnknownNameError


def test_perturbations_may_be_names_built_with_their_defaults_as_in_a_spec():
    by_name = perturb.PerturbedDevice(SimDevice(), ["popup_security"], seed=3)
    built = perturb.PerturbedDevice(SimDevice(), [perturb.make("popup_security")], seed=3)
    assert [p.name for p in by_name.perturbations] == ["popup_security"]
    task = make_task("SystemBrightnessMax")
    assert by_name.reset(task).to_xml() == built.reset(task).to_xml()


@pytest.mark.parametrize("device, perturbations, error, message", [
    (SimDevice, "popup_security", TypeError, "perturbations='popup_security'): expected a list, e.g. ['popup_security']"),
    (SimDevice, ["popup_securty"], UnknownNameError, "did you mean 'popup_security'?"),
    (SimDevice, [42], TypeError, "int is no perturbation; expected perturb.make('popup_security') or a name"),
    (None, ["popup_security"], TypeError, "device='NoneType'): not a device, it has no reset, execute, observe()"),
])
def test_a_callers_mistake_is_named_before_the_episode(device, perturbations, error, message):
    with pytest.raises(error) as info:
        perturb.PerturbedDevice(device() if device else None, perturbations, seed=0)
    assert message in str(info.value)
