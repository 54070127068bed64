"""What the CUDA-graph mode a start-up runs changes in the plan (issue 22 item 1): the checks that need full
graphs. Kept apart from graph_mode.py (which versions.py imports for the mode's type) so it may read the
layers and vLLM's texts, and from estimate.py (at its size cap).
"""

from __future__ import annotations

from app.core import budget, compilation, graph_mode, layers, vllm_text
from app.core.errors import InvalidServeConfigError
from app.core.specs import LayerKind, ModelSpec, ServeConfig
from app.core.versions import VersionRules


def mamba_blocks_error(
    *,
    rules: VersionRules,
    serve: ServeConfig,
    model: ModelSpec,
    platform: str,
    max_num_seqs: int,
    num_blocks: int,
) -> str | None:
    """0.20.2+ CompilationConfig.resolve_cudagraph_mode_and_sizes, called from gpu_model_runner.initialize_kv_cache
    (after the KV size lines, before the KV tensors are allocated and graphs captured): with full CUDA graphs (the
    default FULL_AND_PIECEWISE; not PIECEWISE, -O1, -O0 or --enforce-eager: graph_mode.py) a model with Mamba
    layers needs one block per decode sequence, so max_num_seqs above the pool's num_blocks is refused: vLLM's
    text, or None when the start goes ahead."""
    if (
        not rules.mamba_block_check
        or not graph_mode.full_graphs(serve, rules=rules)
        or platform not in ("cuda", "rocm")
    ):
        return None
    if not layers.has_kind(model, LayerKind.MAMBA) or max_num_seqs <= num_blocks:
        return None
    return vllm_text.mamba_blocks_error(max_num_seqs=max_num_seqs, num_blocks=num_blocks)


def captured_sizes(*, serve: ServeConfig, max_num_batched_tokens: int) -> int | None:
    """How many batch sizes vLLM captures when --compilation-config names them (None: its default grid).
    config/vllm.py _set_cudagraph_sizes (0.11.1-0.33.0): cudagraph_capture_sizes deduplicated and cut at
    max_num_batched_tokens; else the default grid up to min(max_cudagraph_capture_size, max_num_batched_tokens).

    E.g. [1, 2, 4, 8, 16, 32] at 8,192 batched tokens -> 6; max_cudagraph_capture_size 64 -> 11."""
    settings = compilation.settings(serve.compilation_config)
    if settings.capture_sizes is not None:
        return sum(1 for size in settings.capture_sizes if size <= max_num_batched_tokens)
    if settings.max_capture_size is not None:
        return budget.capture_grid_count(min(settings.max_capture_size, max_num_batched_tokens))
    return None


def check_compilation(*, serve: ServeConfig, rules: VersionRules) -> None:
    """The compilation settings a release refuses at start-up (graph_mode.level_refusal: 0.10.2-0.13)."""
    text = graph_mode.level_refusal(serve, rules=rules)
    if text is not None:
        raise InvalidServeConfigError("compilation_config", text)
