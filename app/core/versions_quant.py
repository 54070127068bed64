"""versions_changelog.py's checkpoint-quantization rows: which quantization configs each release loads, refuses or
reshapes (compressed-tensors sparsity, GPTQ symmetry and group act-order, FP8 block shapes, WNA16 kernels, the KV
dtype a compressed-tensors checkpoint declares). Kept apart so versions_changelog.py stays under the 800-line
module cap; versions_platforms.py merges these rows into the one CHANGELOG in release order."""

from __future__ import annotations

from app.core.version_types import Change

QUANT_CHANGELOG: tuple[Change, ...] = (
    Change(
        "0.22.0",
        "0.22.0 model_executor/layers/quantization/compressed_tensors/compressed_tensors.py "
        "CompressedTensorsConfig.from_config -> _parse_sparsity_config raises 'Sparsity support has been removed "
        "from compressed-tensors' for a non-empty sparsity target map (0.21.0: get_scheme -> CompressedTensors24); "
        "0.22.0 quantization/auto_gptq.py AutoGPTQConfig replaces gptq.py / gptq_marlin.py and raises 'Unsupported "
        "quantization config: bits=4, sym=False' (TYPE_MAP symmetric only; 0.21.0 gptq.py GPTQConfig served it)",
        {"ct_sparsity_removed": True, "gptq_symmetric_only": True},
    ),
    Change(
        "0.22.0",
        "0.22.0 and 0.22.1 model_executor/layers/attention/attention.py Attention.__init__ (both wheels read): a "
        "compressed-tensors checkpoint that declares kv_cache_scheme sets cache_dtype 'fp8' when --kv-cache-dtype is "
        "auto (absent in 0.21.0)",
        {"checkpoint_kv_dtype_compressed_tensors": True},
    ),
    Change(
        "0.30.0",
        "0.30.0 model_executor/layers/quantization/utils/gptq_utils.py normalize_and_validate_gptq_desc_act (called by "
        "auto_gptq.py AutoGPTQConfig.__init__ and moe_wna16.py) raises for desc_act=True with a group size other "
        "than -1, also through a `dynamic` rule; compressed_tensors.py _quantization_scheme_map_from_config raises "
        "for weights actorder group / dynamic (0.29.0 has neither)",
        {"act_order_groups_removed": True},
    ),
    Change(
        "0.14.0",
        "0.14.0 model_executor/layers/linear.py ColumnParallelLinear._maybe_allow_fp8_block_shape_mismatch: a "
        "merged layer (gate_up_proj, qkv_proj) whose per-rank partitions are not multiples of weight_block_size[0] "
        "sets allow_fp8_block_shape_mismatch, and validate_fp8_block_shape skips it (absent in 0.13.0; 0.33.0 "
        "the same); CompressedTensorsConfig has no weight_block_size, so compressed-tensors is still checked",
        {"fp8_merged_block_mismatch_allowed": True},
    ),
    Change(
        "0.30.0",
        "0.30.0 model_executor/layers/fused_moe/oracle/fp8.py refine_fp8_moe_block_shape: Fp8MoEMethod upsamples "
        "the experts' block scales to gcd(block_n, block_k, intermediate_size_per_partition, hidden) when that is "
        ">= 32, and skips validate_fp8_block_shape_moe (absent in 0.27.1; 0.32.0 and 0.33.0 the same)",
        {"fp8_moe_block_refine": True},
    ),
    Change(
        "0.33.0",
        "0.33.0 model_executor/kernels/linear/__init__.py choose_mp_linear_kernel over CUDA's _POSSIBLE_KERNELS: "
        "with a group straddling the TP shard only Exllama (float16 activations) or Machete (SM 9.0, input shard % "
        "64) can_implement, else 'Failed to find a kernel that can implement the WNA16 linear layer.' (releases "
        "before 0.33.0 not read for it: 0.10.2's list also has AllSpark and BitBLAS)",
        {"wna16_split_group_needs_fp16": True},
    ),
)
