"""LoRA adapter slots preallocated on every device (vllm/lora/layers/*.py, 0.19.0)."""

from __future__ import annotations

from app.core import kv as K
from app.core.extras.common import src
from app.core.result import ExtraItem
from app.core.specs import DTYPE_BYTES, ModelSpec, ServeConfig
from app.core.text import Text

# --- LoRA (vllm/lora/layers/*.py create_lora_weights, 0.19.0) ----------------------------------------
# architectures whose class declares embedding_modules {"embed_tokens", "lm_head"}: vLLM then wraps the
# embedding (VocabParallelEmbeddingWithLoRA) and the logits (LogitsProcessorWithLoRA) too
LORA_EMBEDDING_ARCHITECTURES = frozenset(
    {
        "LlamaForCausalLM",
        "MistralForCausalLM",
        "Qwen3ForCausalLM",
        "Qwen3MoeForCausalLM",
        "MixtralForCausalLM",
        "GraniteForCausalLM",
        "GraniteMoeForCausalLM",
        "JambaForCausalLM",
        "NemotronHForCausalLM",
        "PhiMoEForCausalLM",
    }
)
LORA_QKV_SLICES = 3  # MergedQKVParallelLinearWithLoRA: q, k, v
LORA_GATE_UP_SLICES = 2  # MergedColumnParallelLinearWithLoRA: gate, up
LORA_MOE_W13_SLICES = 2  # FusedMoEWithLoRA: w1 and w3 (w13 for 3-D checkpoints)


def lora_slot_elements(
    *, model: ModelSpec, rank: int, tp: int, fully_sharded: bool, num_layers: int, with_embeddings: bool
) -> int:
    """Elements of ONE LoRA slot on one device, summed over the layers vLLM wraps (0.19.0):

    - qkv (MergedQKVParallelLinearWithLoRA): A = 3 x (r' x hidden), B = (q/TP + 2 x kv/TP) x r
    - o_proj (RowParallelLinearWithLoRA): A = r x q/TP, B = hidden' x r
    - gate_up (MergedColumnParallelLinearWithLoRA): A = 2 x (r' x hidden), B = 2 x (inter/TP) x r
    - down (RowParallelLinearWithLoRA): A = r x inter/TP, B = hidden' x r
    - experts (FusedMoEWithLoRA): per local expert A = 2 x r' x hidden + r x inter/TP, B = 2 x inter/TP x r + hidden' x r
    - embed_tokens: A = vocab x r, B = hidden x r; lm_head (LogitsProcessorWithLoRA): A = r x hidden, B = vocab x r
    where r' = r/TP and hidden' = hidden/TP with fully_sharded_loras, else r and hidden.
    """
    h = model.hidden_size
    r = rank
    r_a = r // tp if fully_sharded else r
    h_b = h // tp if fully_sharded else h
    heads = max(1, model.num_attention_heads // tp)
    kv_heads = K.kv_heads_per_rank(total_kv_heads=model.num_kv_heads, tensor_parallel_size=tp)
    q_out = heads * model.head_size
    kv_out = kv_heads * model.head_size
    qkv = LORA_QKV_SLICES * r_a * h + (q_out + 2 * kv_out) * r
    o_proj = r * q_out + h_b * r
    per_layer = qkv + o_proj
    if model.num_experts:
        inter = model.moe_intermediate_size // tp
        experts = model.num_experts
        per_layer += experts * (
            LORA_MOE_W13_SLICES * r_a * h + r * inter + LORA_MOE_W13_SLICES * inter * r + h_b * r
        )
    if model.intermediate_size and not model.num_experts:
        inter = model.intermediate_size // tp
        per_layer += LORA_GATE_UP_SLICES * r_a * h + LORA_GATE_UP_SLICES * inter * r + r * inter + h_b * r
    total = per_layer * num_layers
    if with_embeddings:
        total += model.vocab_size * r + h * r  # embed_tokens
        total += r * h + model.vocab_size * r  # lm_head
    return total


def lora_item(
    *, model: ModelSpec, serve: ServeConfig, model_dtype: str, num_layers: int, is_first: bool
) -> ExtraItem:
    tp = serve.tensor_parallel_size
    dtype = DTYPE_BYTES[model_dtype]  # lora_dtype "auto" -> the model dtype (config/lora.py)
    with_embeddings = model.architecture in LORA_EMBEDDING_ARCHITECTURES and is_first
    per_slot = lora_slot_elements(
        model=model,
        rank=serve.max_lora_rank,
        tp=tp,
        fully_sharded=serve.fully_sharded_loras,
        num_layers=num_layers,
        with_embeddings=with_embeddings,
    )
    device = serve.max_loras * per_slot * dtype
    # adapters kept on the host: max_cpu_loras (default max_loras) at most max_lora_rank, unsharded
    full = lora_slot_elements(
        model=model,
        rank=serve.max_lora_rank,
        tp=1,
        fully_sharded=False,
        num_layers=model.num_layers,
        with_embeddings=model.architecture in LORA_EMBEDDING_ARCHITECTURES,
    )
    cpu_loras = serve.max_cpu_loras or serve.max_loras
    return ExtraItem(
        name="lora_slots",
        label=Text(
            "LoRA slots ({max_loras} × rank {rank})", max_loras=serve.max_loras, rank=serve.max_lora_rank
        ),
        device_bytes=device,
        host_bytes=cpu_loras * full * dtype,
        flag="--enable-lora --max-loras --max-lora-rank --max-cpu-loras --fully-sharded-loras",
        source=src(
            "lora/layers/base_linear.py, lora/layers/column_parallel_linear.py, lora/layers/fused_moe.py, lora/model_manager.py"
        ),
        note=Text(
            "preallocated when the model loads (counted in the weights vLLM measures, so it shrinks the KV pool); host: up to {cpu_loras} adapters cached at rank {rank}",
            cpu_loras=cpu_loras,
            rank=serve.max_lora_rank,
        ),
    )
