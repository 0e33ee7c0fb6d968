"""The four TTIR diagnosers (AndroidReality §5.1): stuck loop, action effect,
interference and task alignment — each with a deterministic rule tier, the
paper's VLM judgment tier and a cascade of the two.

    from diagnosers import DiagnosisContext, InterferenceDiagnoser
    finding = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=goal, observation=obs))
"""

from ttir.core.logs import quiet_library

quiet_library(__name__)  # a library stays quiet until the application (or `ttir` CLI) enables it

from diagnosers.action_effect import ActionEffectDiagnoser  # noqa: E402 - after the logs are quieted
from ttir.core.diagnosis import Cost, DiagnosisContext, Diagnoser, Finding
from diagnosers.interference import InterferenceDiagnoser
from diagnosers.judgment import Judgment
from diagnosers.stuck_loop import StuckLoopDiagnoser
from diagnosers.task_alignment import TaskAlignmentDiagnoser
from diagnosers.signals.screen_text import screen_source
from ttir.core.diagnosis import set_screen_source_reader

set_screen_source_reader(screen_source)  # a finding says what the rules read: tree, text from pixels, pixels

DIAGNOSER_CLASSES: dict[str, type[Diagnoser]] = {
    cls.name: cls
    for cls in (StuckLoopDiagnoser, ActionEffectDiagnoser, InterferenceDiagnoser, TaskAlignmentDiagnoser)
}
"""The four diagnoser classes by name (``stuck_loop``, ``action_effect``, ``interference``, ``task_alignment``)."""

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
