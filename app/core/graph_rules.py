"""What the CUDA-graph mode a start-up runs changes in the plan (issue 22 item 1): the checks that need full
graphs. Kept apart from graph_mode.py (which versions.py imports for the mode's type) so it may read the
layers and vLLM's texts, and from estimate.py (at its size cap).
"""

from __future__ import annotations

from app.core import graph_mode, layers, vllm_text
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
