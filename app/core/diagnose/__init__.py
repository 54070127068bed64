"""The doctor: a pasted vLLM start-up log and/or Prometheus scrape -> the seed's five-step diagnosis.

Source: /work/shared/seed/kv-cache-max-model-len.zh.md, "定位按五步走":

1. read the KV lines (blocks, bytes per block, pool); zero or a handful of blocks means the budget
   went to weights and activation, not to the context;
2. back-compute where the budget went (weights ≈ params × b ÷ TP; the rest is activation/workspace);
3. the demand from the formula at S = max_model_len and N = the target concurrency;
4. S-side, N-side or budget: halve --max-model-len -> starts -> S; concurrency 1 -> starts -> N;
   neither -> budget;
5. silent fallbacks: concurrency reached vs set, attention backend used vs expected, block size.

Each trial of step 4 is answered by the log when the log answers it, else by the estimator replayed
over the log's own KV pool ("planner"), else by arithmetic on the printed numbers. The estimator's
prediction of the same configuration is laid beside the log's numbers with the gaps called out.

Pure: no I/O, no web imports. :func:`diagnose` never raises on any text; it raises a
:class:`PlannerError` only for an explicit device hint that is not in the catalog (field
``device``) and, from the parser, for a log longer than ``MAX_LOG_CHARS`` (field ``log``).


Layout (issue 18: one concept per module):

- :mod:`.model` — thresholds with their origin, and the typed results (Diagnosis, Step, Trial, …);
- :mod:`.basics` — small helpers (GiB figures, excerpts, evidence, the estimator on what the log ran);
- :mod:`.case` — case recovery: model, version and serve flags from the paste;
- :mod:`.device` — which device the paste ran on, and what other processes held;
- :mod:`.steps` — the five steps, step 4's trials and the cause;
- :mod:`.comparison` — the log beside the planner's prediction;
- :mod:`.verdict` — failures, cause and metrics combined into the verdict; :func:`diagnose`.

The verdict vocabulary (labels, tones, remedies) is :mod:`app.core.verdicts`.
"""

from app.core.diagnose.model import (
    DEVICE_MATCH_TOLERANCE_BYTES,
    ComparisonRow,
    Diagnosis,
    DiagnosisFacts,
    Overall,
    Step,
    Trial,
)
from app.core.diagnose.verdict import diagnose

__all__ = [
    "DEVICE_MATCH_TOLERANCE_BYTES",
    "ComparisonRow",
    "Diagnosis",
    "DiagnosisFacts",
    "Overall",
    "Step",
    "Trial",
    "diagnose",
]
