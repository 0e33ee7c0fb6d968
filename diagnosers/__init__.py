"""The four TTIR diagnosers (AndroidReality §5.1): stuck loop, action effect,
interference and task alignment — each with a deterministic rule tier, the
paper's VLM judgment tier and a cascade of the two.

    from diagnosers import DiagnosisContext, InterferenceDiagnoser
    finding = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=goal, observation=obs))
"""

from diagnosers.action_effect import ActionEffectDiagnoser
from diagnosers.base import Cost, DiagnosisContext, Diagnoser, Finding
from diagnosers.interference import InterferenceDiagnoser
from diagnosers.judgment import Judgment
from diagnosers.stuck_loop import StuckLoopDiagnoser
from diagnosers.task_alignment import TaskAlignmentDiagnoser

DIAGNOSER_CLASSES: dict[str, type[Diagnoser]] = {
    cls.name: cls
    for cls in (StuckLoopDiagnoser, ActionEffectDiagnoser, InterferenceDiagnoser, TaskAlignmentDiagnoser)
}

__all__ = [
    "ActionEffectDiagnoser",
    "Cost",
    "DIAGNOSER_CLASSES",
    "DiagnosisContext",
    "Diagnoser",
    "Finding",
    "InterferenceDiagnoser",
    "Judgment",
    "StuckLoopDiagnoser",
    "TaskAlignmentDiagnoser",
]
