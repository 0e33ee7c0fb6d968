"""A smoke test against a real model; runs only when TTIR_VLM_BASE_URL is set."""

from __future__ import annotations

import os

import pytest

from ttir.core.diagnosis import DiagnosisContext
from diagnosers.judgment import Judgment
from diagnosers.vlm_judge import VLMJudge
from ttir.core.types import Observation

pytestmark = pytest.mark.skipif(not os.environ.get("TTIR_VLM_BASE_URL"),
                                reason="live model test: set TTIR_VLM_BASE_URL (and TTIR_VLM_MODEL)")


def test_live_model_answers_the_judgment(dump):
    # Tree only: the judge sends the UI tree as text when there is no screenshot.
    obs = Observation.from_xml(dump("permission_dialog"), foreground="com.google.android.contacts")
    judge = VLMJudge()
    judgment, cost = judge.judge(DiagnosisContext(goal="Add a contact named Alice Smith", observation=obs))
    assert isinstance(judgment, Judgment)
    assert cost.model_calls == 1 and cost.latency_s > 0
