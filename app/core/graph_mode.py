"""The CUDA-graph mode a start-up runs, from the flags (issue 22 item 1: `cudagraph_mode`).

vLLM 0.14.0-0.33.0 (config/vllm.py OptimizationLevel and its OPTIMIZATION_LEVEL_0x defaults; CompilationConfig
cudagraph_mode, config/compilation.py CUDAGraphMode): ``-O0`` captures no graphs (NONE), ``-O1`` PIECEWISE,
``-O2`` (the default) and ``-O3`` FULL_AND_PIECEWISE; ``--compilation-config '{"cudagraph_mode": ...}'`` (or
``-cc.cudagraph_mode=...``) names the mode itself and wins over the level; ``--enforce-eager`` captures none.
What follows from the mode:

- graph memory: none under NONE (budget.cuda_graph_bytes is 0, as under --enforce-eager);
- the Mamba-block check (0.20.2+ CompilationConfig.resolve_cudagraph_mode_and_sizes, "max_num_seqs (N) exceeds
  available Mamba cache blocks (M)") runs only when ``cudagraph_mode.has_full_cudagraphs()``: FULL,
  FULL_DECODE_ONLY and FULL_AND_PIECEWISE, not PIECEWISE or NONE.

vLLM may still lower a mode a backend cannot capture (config/vllm.py "Overriding cudagraph_mode to PIECEWISE");
that downgrade is graph_rules.resolved_mode's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from app.core import compilation

if TYPE_CHECKING:
    from app.core.specs import ServeConfig
    from app.core.versions import VersionRules

CudagraphMode = Literal["NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"]
CUDAGRAPH_MODES: tuple[CudagraphMode, ...] = (
    "NONE",
    "PIECEWISE",
    "FULL",
    "FULL_DECODE_ONLY",
    "FULL_AND_PIECEWISE",
)
# CUDAGraphMode.has_full_cudagraphs: the modes whose decode (or every) batch runs one full graph
FULL_GRAPH_MODES = frozenset({"FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"})
# the mode the planner's graph-memory model was calibrated on (0.19.0 logs); OptimizationLevel.O2, the default
# level (0.14.0-0.33.0). A release's own default is VersionRules.default_cudagraph_mode (0.11.0+: this one).
DEFAULT_MODE: CudagraphMode = "FULL_AND_PIECEWISE"
# OPTIMIZATION_LEVEL_00 .. _03 "cudagraph_mode"
LEVEL_MODES: dict[str, CudagraphMode] = {
    "0": "NONE",
    "1": "PIECEWISE",
    "2": "FULL_AND_PIECEWISE",
    "3": "FULL_AND_PIECEWISE",
}


# CUDAGraphMode.requires_piecewise_compilation / without_piecewise (config/compilation.py, 0.14.0-0.33.0)
PIECEWISE_MODES = frozenset({"PIECEWISE", "FULL_AND_PIECEWISE"})
WITHOUT_PIECEWISE: dict[str, CudagraphMode] = {"PIECEWISE": "NONE", "FULL_AND_PIECEWISE": "FULL_DECODE_ONLY"}


# config/compilation.py CompilationConfig.set_splitting_ops_for_v1 under a piecewise compile with "splitting_ops": []
# (nothing split, so no piecewise graph): the mode it sets, from the first release read with each rule. 0.11.0: a
# PIECEWISE mode "will be treated as FULL cudagraph_mode" (without inductor graph partition); 0.14.0-0.33.0 (as read
# in 0.14.0, 0.15.0, 0.17.0, 0.19.0, 0.22.0, 0.31.0, 0.32.0, 0.33.0): PIECEWISE -> NONE, FULL_AND_PIECEWISE -> FULL.
# 0.10.2 was not read (left as the mode asked); 0.12-0.13 are planned with 0.11.0's rules.
EMPTY_SPLIT_MODES: tuple[tuple[tuple[int, int, int], dict[str, CudagraphMode]], ...] = (
    ((0, 11, 0), {"PIECEWISE": "FULL"}),
    ((0, 14, 0), {"PIECEWISE": "NONE", "FULL_AND_PIECEWISE": "FULL"}),
)


def _unsplit(mode: CudagraphMode, *, rules: VersionRules) -> CudagraphMode:
    """The mode set_splitting_ops_for_v1 leaves when the user empties splitting_ops (:data:`EMPTY_SPLIT_MODES`)."""
    lowered: dict[str, CudagraphMode] = {}
    for since, table in EMPTY_SPLIT_MODES:
        if rules.version_tuple >= since:
            lowered = table
    return lowered.get(mode, mode)


def effective_mode(serve: ServeConfig, *, rules: VersionRules) -> CudagraphMode:
    """E.g. no flags -> the release's default (0.33.0 FULL_AND_PIECEWISE, 0.10.2 PIECEWISE); -O1 -> PIECEWISE;
    --enforce-eager -> NONE; -cc '{"mode": 0}' -> NONE on 0.14.0, FULL_DECODE_ONLY on 0.33.0, and the default on
    0.11.0, whose CompilationConfig has no ``mode`` key and drops it (compilation.for_release); -cc
    '{"splitting_ops": []}' -> FULL on 0.33.0 (:data:`EMPTY_SPLIT_MODES`)."""
    if serve.enforce_eager:
        return "NONE"
    settings = compilation.for_release(serve.compilation_config, version=rules.version)
    splits = settings.compiles_piecewise
    if rules.compile_mode_rule == "level":
        # 0.10.2 / 0.11.0 VllmConfig.__post_init__: the default only at level PIECEWISE, else NONE
        if serve.cudagraph_mode is None and not splits:
            return "NONE"
        mode = serve.cudagraph_mode or rules.default_cudagraph_mode
        return _unsplit(mode, rules=rules) if splits and settings.no_splitting_ops else mode
    mode = serve.cudagraph_mode or rules.default_cudagraph_mode
    if not splits and mode in PIECEWISE_MODES:
        return "NONE" if rules.compile_mode_rule == "to_none" else WITHOUT_PIECEWISE[mode]
    return _unsplit(mode, rules=rules) if splits and settings.no_splitting_ops else mode


def level_refusal(serve: ServeConfig, *, rules: VersionRules) -> str | None:
    """0.10.2 / 0.11.0 VllmConfig.__post_init__ asserts a piecewise cudagraph_mode runs at compilation level
    PIECEWISE: the AssertionError's text, or None when the start goes ahead."""
    if (
        rules.compile_mode_rule != "level"
        or serve.enforce_eager
        or serve.cudagraph_mode not in PIECEWISE_MODES
    ):
        return None
    if compilation.for_release(serve.compilation_config, version=rules.version).compiles_piecewise:
        return None
    return (
        "Compilation level should be CompilationLevel.PIECEWISE when cudagraph_mode piecewise cudagraphs is used, "
        f"cudagraph_mode={serve.cudagraph_mode}"
    )


def captures_graphs(serve: ServeConfig, *, rules: VersionRules) -> bool:
    return effective_mode(serve, rules=rules) != "NONE"


def full_graphs(serve: ServeConfig, *, rules: VersionRules) -> bool:
    return effective_mode(serve, rules=rules) in FULL_GRAPH_MODES
