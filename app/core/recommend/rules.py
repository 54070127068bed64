"""The remedy table as data: the seed's order S -> KV dtype -> TP (-> PP) -> utilization -> offload, and the side rows.

Where the extras rows sit (the seed's table has no row for them): after every seed lever that keeps
the deployment's features (S, KV dtype, TP, PP, utilization) and the prefill side rows, and before
offload, which the seed puts last ("最后才动 … --swap-space") and applies only when it meets the
target. They remove something the user configured on purpose, so they come after the levers that
cost only devices or throughput; among themselves the cheapest first: a draft costs only speed
(outputs are identical), fewer LoRA slots cost adapters in one batch, text-only mode costs a whole
input type, so that last row, like offload, is applied only when it reaches the target.
"""

from __future__ import annotations

from app.core.recommend.engine import Rule
from app.core.recommend.kv_dtype import dtype_candidates, dtype_check, dtype_cost, dtype_effect
from app.core.recommend.length import len_candidates, len_check, len_cost, len_effect
from app.core.recommend.lora import lora_candidates, lora_cost, lora_effect, lora_relevant
from app.core.recommend.multimodal import MM_COST, mm_candidates, mm_effect, mm_relevant
from app.core.recommend.offload import offload_candidates, offload_check, offload_cost, offload_effect
from app.core.recommend.parallel import (
    pp_candidates,
    pp_check,
    pp_cost,
    pp_effect,
    tp_candidates,
    tp_check,
    tp_cost,
    tp_effect,
)
from app.core.recommend.refusals import (
    FREE_COST,
    MAMBA_COST,
    free_candidates,
    free_effect,
    free_relevant,
    long_candidates,
    long_cost,
    long_effect,
    long_relevant,
    mamba_candidates,
    mamba_effect,
    mamba_relevant,
)
from app.core.recommend.side import (
    BLOCK_EFFECT,
    CHUNKED_COST,
    CHUNKED_EFFECT,
    MNBT_COST,
    MNBT_EFFECT,
    PREFIX_COST,
    PREFIX_EFFECT,
    block_check,
    block_cost,
    chunked_candidates,
    chunked_relevant,
    mnbt_candidates,
    mnbt_relevant,
    no_candidates,
    not_met,
    prefix_check,
    seqs_candidates,
    seqs_cost,
    seqs_effect,
    seqs_lower_candidates,
    seqs_lower_cost,
    seqs_lower_effect,
    seqs_lower_relevant,
    seqs_relevant,
)
from app.core.recommend.speculative import spec_candidates, spec_cost, spec_effect, spec_relevant
from app.core.recommend.utilization import util_candidates, util_check, util_cost, util_effect
from app.core.text import Text

# --- the table ----------------------------------------------------------------------------------------

# vLLM runs at most max_num_seqs sequences: raised to N* first, and again at the end when a Mamba-block
# refusal lowered it and the levers between grew the pool enough (seqs_relevant says when)
ALLOW_N_STAR = Rule(
    "max_num_seqs",
    Text("Allow N* sequences (--max-num-seqs)"),
    ("max_num_seqs",),
    lambda _c: None,
    seqs_candidates,
    seqs_effect,
    seqs_cost,
    search="always",
    side=True,
    relevant=seqs_relevant,
)

# The first three rows fix a refusal the KV levers do not address (app.core.recommend.refusals), each
# relevant only while the configuration fails that check; the seed's order follows.
RULES: tuple[Rule, ...] = (
    Rule(
        "free_memory",
        Text("Lower the budget to the free memory (--gpu-memory-utilization)"),
        ("gpu_memory_utilization",),
        lambda _c: None,
        free_candidates,
        free_effect,
        FREE_COST,
        search="always",
        side=True,
        relevant=free_relevant,
    ),
    Rule(
        "mamba_blocks",
        Text("No more sequences than Mamba cache blocks (--max-num-seqs)"),
        ("max_num_seqs",),
        lambda _c: None,
        mamba_candidates,
        mamba_effect,
        MAMBA_COST,
        search="always",
        side=True,
        relevant=mamba_relevant,
    ),
    Rule(
        "max_model_len_derived",
        Text("Lower S to the model's maximum (--max-model-len)"),
        ("max_model_len",),
        lambda _c: None,
        long_candidates,
        long_effect,
        long_cost,
        search="always",
        side=True,
        relevant=long_relevant,
    ),
    ALLOW_N_STAR,
    Rule(
        "max_model_len",
        Text("Set S to the target (--max-model-len)"),
        ("max_model_len",),
        len_check,
        len_candidates,
        len_effect,
        len_cost,
        search="always",
    ),
    Rule(
        "kv_cache_dtype",
        Text("Quantize the KV cache (--kv-cache-dtype)"),
        ("kv_cache_dtype",),
        dtype_check,
        dtype_candidates,
        dtype_effect,
        dtype_cost,
    ),
    Rule(
        "tensor_parallel_size",
        Text("Tensor parallelism (--tensor-parallel-size)"),
        ("tensor_parallel_size",),
        tp_check,
        tp_candidates,
        tp_effect,
        tp_cost,
    ),
    Rule(
        "pipeline_parallel_size",
        Text("Pipeline parallelism across nodes (--pipeline-parallel-size)"),
        ("pipeline_parallel_size",),
        pp_check,
        pp_candidates,
        pp_effect,
        pp_cost,
    ),
    Rule(
        "gpu_memory_utilization",
        Text("Raise the budget (--gpu-memory-utilization)"),
        ("gpu_memory_utilization",),
        util_check,
        util_candidates,
        util_effect,
        util_cost,
        search="monotone",
    ),
    Rule(
        "max_num_seqs",
        Text("Schedule no more than N* sequences (--max-num-seqs)"),
        ("max_num_seqs",),
        lambda _c: None,
        seqs_lower_candidates,
        seqs_lower_effect,
        seqs_lower_cost,
        side=True,
        relevant=seqs_lower_relevant,
    ),
    Rule(
        "enable_chunked_prefill",
        Text("Chunked prefill (--enable-chunked-prefill)"),
        ("enable_chunked_prefill", "max_num_batched_tokens"),
        lambda _c: None,
        chunked_candidates,
        CHUNKED_EFFECT,
        CHUNKED_COST,
        side=True,
        relevant=chunked_relevant,
    ),
    Rule(
        "max_num_batched_tokens",
        Text("Smaller prefill batches (--max-num-batched-tokens)"),
        ("max_num_batched_tokens",),
        lambda _c: None,
        mnbt_candidates,
        MNBT_EFFECT,
        MNBT_COST,
        search="monotone",
        side=True,
        relevant=mnbt_relevant,
    ),
    Rule(
        "speculative_config",
        Text("No speculative draft (--speculative-config)"),
        ("speculative_config",),
        lambda _c: None,
        spec_candidates,
        spec_effect,
        spec_cost,
        side=True,
        relevant=spec_relevant,
    ),
    Rule(
        "lora",
        Text("Fewer or smaller LoRA slots (--max-loras, --max-lora-rank)"),
        ("max_loras", "max_lora_rank"),
        lambda _c: None,
        lora_candidates,
        lora_effect,
        lora_cost,
        search="monotone",
        side=True,
        relevant=lora_relevant,
    ),
    Rule(
        "limit_mm_per_prompt",
        Text("Text-only mode (--limit-mm-per-prompt)"),
        ("limit_mm_per_prompt",),
        lambda _c: None,
        mm_candidates,
        mm_effect,
        MM_COST,
        must_meet=True,
        side=True,
        relevant=mm_relevant,
    ),
    Rule(
        "offload",
        Text("CPU offload (--cpu-offload-gb, --swap-space / --kv-offloading-size)"),
        ("cpu_offload_gb",),
        offload_check,
        offload_candidates,
        offload_effect,
        offload_cost,
        search="monotone",
        must_meet=True,
    ),
    # after a Mamba-block refusal lowered --max-num-seqs below N*: the levers above grew the pool, so
    # N* sequences may now have their blocks (vLLM checks max_num_seqs against them again)
    ALLOW_N_STAR,
    Rule(
        "block_size",
        Text("Block size (--block-size)"),
        ("block_size",),
        block_check,
        no_candidates,
        BLOCK_EFFECT,
        block_cost,
        side=True,
        relevant=not_met,
    ),
    Rule(
        "enable_prefix_caching",
        Text("Prefix caching (--enable-prefix-caching)"),
        ("enable_prefix_caching",),
        prefix_check,
        no_candidates,
        PREFIX_EFFECT,
        PREFIX_COST,
        side=True,
        relevant=not_met,
    ),
)
