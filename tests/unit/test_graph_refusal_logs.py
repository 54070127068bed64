"""The doctor on vLLM's CUDA-graph and compilation refusals (issue 22 rules9 item 10; app/core/vllm_text_graphs.py).

- The real line vllm#23200 quotes (tests/data/logs/graph-refusals/SOURCES.md): 0.10.1-era
  gpu_model_runner._check_and_update_cudagraph_mode refusing cudagraph_mode FULL on CUTLASS_MLA (NEVER).
- The planner's own refusals read back (its texts are vLLM's: graph_rules.resolved_mode, check_compilation from
  config/compilation.py resolve_cudagraph_mode_and_sizes and config/vllm.py _set_cudagraph_sizes, 0.33.0).
Before this change the doctor matched none of them (a bare line: "nothing recognised").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.catalog import find_device
from app.core.command import parse_pasted
from app.core.diagnose import diagnose
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.web.i18n import translations
from tests.specs_factory import deepseek_v3_like, dense

LOG = (
    Path(__file__).parents[1]
    / "data"
    / "logs"
    / "graph-refusals"
    / "vllm_pr23200_cutlass_mla_full_refused.log"
)
FAULT = (
    "vLLM refused the CUDA-graph or compilation settings (cudagraph_mode, the capture sizes or a "
    "--compilation-config key) — change the flag the error names"
)


def test_the_real_full_refusal_is_a_failure_of_the_flags() -> None:
    d = diagnose(log_text=LOG.read_text(encoding="utf-8"), metrics_text=None)
    assert d.verdict == "failed"
    assert d.facts.error_kind == "graph_refused"
    assert d.facts.error is not None and "CutlassMLAMetadataBuilder" in d.facts.error
    assert FAULT in str(d.headline)


def _refusal(command: str, version: str, model=None) -> str:  # type: ignore[no-untyped-def]
    serve = parse_pasted(command, vllm_version=version).serve
    with pytest.raises(PlannerError) as err:
        estimate(
            model=model or dense(),
            device=find_device("nvidia-a100-sxm4-80gb"),
            serve=serve,
            vllm_version=version,
        )
    return str(err.value).split(": ", 1)[1]


@pytest.mark.parametrize(
    ("command", "version", "model"),
    [
        # TritonMLA is NEVER at 0.19.0 (graph_support.GRAPHS_0_17): FULL raises
        ('vllm serve m -cc \'{"cudagraph_mode": "FULL"}\' -tp 8', "0.19.0", deepseek_v3_like()),
        (
            'vllm serve m -cc \'{"cudagraph_capture_sizes": [1, 2], "max_cudagraph_capture_size": 4}\'',
            "0.33.0",
            None,
        ),
    ],
)
def test_the_planners_refusals_read_back(command: str, version: str, model) -> None:  # type: ignore[no-untyped-def]
    text = _refusal(command, version, model)
    d = diagnose(log_text=f"(EngineCore_DP0 pid=1) ValueError: {text}", metrics_text=None)
    assert (d.verdict, d.facts.error_kind) == ("failed", "graph_refused")


def test_the_fault_text_reads_in_chinese() -> None:
    zh = translations("zh").gettext(FAULT)
    assert zh != FAULT and "cudagraph_mode" in zh
