"""Whether the compile splits, and whether it splits at attention, are decided once (compilation.CompileSettings).

Round 8 tested "does the compile split" in three places: graph_mode.effective_mode, graph_mode.level_refusal and
graph_rules._splits_attention (the last also reading "splitting_ops": []). vLLM 0.33.0 config/compilation.py: only
CompilationMode.VLLM_COMPILE (3, the default) splits the graph, so a piecewise cudagraph_mode under another mode falls
back to CUDAGraphMode.without_piecewise(); splitting_ops_contain_attention() is also False when the user empties
splitting_ops (set_splitting_ops_for_v1).
"""

from __future__ import annotations

import pytest

from app.core import compilation, graph_mode
from app.core.specs import ServeConfig
from app.core.versions import resolve_version


@pytest.mark.parametrize(
    ("cc", "piecewise", "at_attention"),
    [
        (None, True, True),  # vLLM's default mode is VLLM_COMPILE with its default splitting ops
        ('{"mode":3}', True, True),
        ('{"mode":0}', False, False),  # NONE: no compile, no split
        ('{"mode":2}', False, False),  # DYNAMO_TRACE_ONCE: one graph
        ('{"mode":3,"splitting_ops":[]}', True, False),
    ],
)
def test_the_two_questions(cc: str | None, piecewise: bool, at_attention: bool) -> None:
    settings = compilation.settings(cc)
    assert settings.compiles_piecewise is piecewise
    assert settings.splits_attention is at_attention


def test_graph_mode_asks_the_settings() -> None:
    # 0.33.0: FULL_AND_PIECEWISE (the default) under mode 0 -> without_piecewise() = FULL_DECODE_ONLY; under mode 3
    # it stays. 0.11.0 (level rule): -cc.cudagraph_mode=PIECEWISE at level 0 is its AssertionError
    rules_33 = resolve_version("0.33.0").rules
    assert (
        graph_mode.effective_mode(ServeConfig(compilation_config='{"mode":0}'), rules=rules_33)
        == "FULL_DECODE_ONLY"
    )
    assert (
        graph_mode.effective_mode(ServeConfig(compilation_config='{"mode":3}'), rules=rules_33)
        == "FULL_AND_PIECEWISE"
    )
    rules_10 = resolve_version("0.10.2").rules
    refused = ServeConfig(cudagraph_mode="PIECEWISE", compilation_config='{"level":0}')
    assert graph_mode.level_refusal(refused, rules=rules_10) is not None
    kept = ServeConfig(cudagraph_mode="PIECEWISE", compilation_config='{"level":3}')
    assert graph_mode.level_refusal(kept, rules=rules_10) is None
