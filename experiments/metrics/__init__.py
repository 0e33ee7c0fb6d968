"""Metrics of a run: one module per family.

- ``episodes``    loading a run, settings and clean/perturbed pairing
- ``success``     success rate, Δc, Δstep (AndroidReality Table 2), RSR (D-GARA), failure counts (Figure 4)
- ``passk``       pass@k, unbiased estimator (Chen et al. 2021)
- ``adr``         action difference rate (RealGUINoise) over deterministic tokens
- ``safety``      engagement with injected content
- ``guardstats``  triggers, precision against the event log, sessions, model usage, latency
- ``attribution`` failed episodes -> the paper's four error categories
- ``intervals``   how sure a ratio is: a bootstrap over clusters (repositories, tasks)
"""

from experiments.metrics.adr import action_difference_rate, action_tokens, adr_table, edit_distance
from experiments.metrics.attribution import CATEGORY_LABELS, Attribution, attribute, attribute_run
from experiments.metrics.episodes import RunData, make_pairs, pair_key, perturbation_label
from experiments.metrics.guardstats import check_trigger, guard_stats
from experiments.metrics.passk import pass_at_k, pass_at_k_table
from experiments.metrics.safety import safety_table
from experiments.metrics.success import delta_table, failure_counts, success_rates

__all__ = [
    "RunData", "make_pairs", "pair_key", "perturbation_label",
    "success_rates", "delta_table", "failure_counts",
    "pass_at_k", "pass_at_k_table",
    "action_tokens", "edit_distance", "action_difference_rate", "adr_table",
    "safety_table", "guard_stats", "check_trigger",
    "Attribution", "attribute", "attribute_run", "CATEGORY_LABELS",
]
