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


@pytest.mark.parametrize(
    ("version", "cc", "asked", "mode"),
    [
        # 0.33.0 config/compilation.py set_splitting_ops_for_v1 (mode VLLM_COMPILE, splitting_ops == []): "Piecewise
        # compilation with empty splitting_ops does not contain piecewise cudagraph": PIECEWISE -> NONE,
        # FULL_AND_PIECEWISE (the default here) -> FULL; the full modes are kept
        ("0.33.0", '{"splitting_ops":[]}', None, "FULL"),
        ("0.33.0", '{"mode":3,"splitting_ops":[]}', "PIECEWISE", "NONE"),
        ("0.33.0", '{"splitting_ops":[]}', "FULL_DECODE_ONLY", "FULL_DECODE_ONLY"),
        # set_splitting_ops_for_v1 returns at once under another mode: mode 0's own rule (without_piecewise)
        ("0.33.0", '{"mode":0,"splitting_ops":[]}', None, "FULL_DECODE_ONLY"),
        # 0.14.0 compilation.py has the same branch (NONE / FULL)
        ("0.14.0", '{"splitting_ops":[]}', "FULL_AND_PIECEWISE", "FULL"),
        ("0.14.0", '{"splitting_ops":[]}', "PIECEWISE", "NONE"),
        # 0.11.0 set_splitting_ops_for_v1 (level PIECEWISE, no inductor partition): "PIECEWISE cudagraph_mode will be
        # treated as FULL cudagraph_mode"; FULL_AND_PIECEWISE is left as it is
        ("0.11.0", '{"level":3,"splitting_ops":[]}', "PIECEWISE", "FULL"),
        ("0.11.0", '{"level":3,"splitting_ops":[]}', None, "FULL_AND_PIECEWISE"),
    ],
)
def test_empty_splitting_ops_lower_the_mode_as_vllm_does(
    version: str, cc: str, asked: graph_mode.CudagraphMode | None, mode: str
) -> None:
    rules = resolve_version(version).rules
    serve = ServeConfig(compilation_config=cc, cudagraph_mode=asked)
    assert graph_mode.effective_mode(serve, rules=rules) == mode
