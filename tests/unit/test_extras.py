"""The extras ledger against numbers worked by hand from vLLM 0.19.0's code.

Every expected value below is arithmetic on config.json dimensions and the tensor shapes vLLM allocates
(files cited per test); none is read back from the code under test.
"""

from __future__ import annotations

import pytest

from app.core import budget as B
from app.core import extras as X
from app.core.catalog import find_device, find_model
from app.core.errors import InvalidServeConfigError
from app.core.estimate import estimate
from app.core.result import Estimate
from app.core.specs import GIB, ServeConfig

H100 = find_device("H100")
V = "0.19.0"


def _est(model: str, **flags: object) -> Estimate:
    serve = ServeConfig(max_model_len=8192, **flags)  # type: ignore[arg-type]
    return estimate(model=find_model(model), device=H100, serve=serve, vllm_version=V)


def _item(est: Estimate, name: str) -> X.ExtraItem:
    found = [i for i in est.extras if i.name == name]
    assert len(found) == 1, est.extras
    return found[0]


def test_plain_estimate_has_no_extras() -> None:
    est = _est("meta-llama/Llama-3.1-8B")
    assert est.extras == []
    assert est.host_memory_bytes == 0


# --- speculative decoding -------------------------------------------------------------------------


def test_draft_model_at_tp4_adds_its_weights_per_device_and_its_kv_per_token() -> None:
    """Llama-3.1-70B + Llama-3.2-1B-Instruct draft, TP 4 (draft TP defaults to the target's:
    vllm/config/speculative.py _verify_and_get_draft_tp).

    draft weights per device: 1,235,814,400 params x 2 B / 4 = 617,907,200 B (loaded inside
    GPUModelRunner.load_model's DeviceMemoryProfiler, so "Model loading took" includes it)
    draft KV per token per device: 16 layers x 2 (K, V) x (8 KV heads / 4) x 64 x 2 B = 8,192 B
    target KV per token per device: 80 x 2 x (8 / 4) x 128 x 2 B = 81,920 B
    one group (UniformTypeKVCacheSpecs, v1/core/kv_cache_utils.py): block = 16 x (81,920 + 8,192)
    """
    spec = {"model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 5}
    plain = _est("meta-llama/Llama-3.1-70B", tensor_parallel_size=4)
    draft = _est("meta-llama/Llama-3.1-70B", tensor_parallel_size=4, speculative_config=spec)
    assert plain.kv_bytes_per_token == 81_920
    assert draft.weights_bytes - plain.weights_bytes == 617_907_200
    assert draft.kv_bytes_per_token == 81_920 + 8_192
    assert draft.bytes_per_block == 16 * 90_112
    # the pool shrinks by exactly the draft's weights (the profiled activation does not change)
    assert plain.kv_cache_bytes - draft.kv_cache_bytes == 617_907_200
    assert draft.num_gpu_blocks == draft.kv_cache_bytes // (16 * 90_112)
    item = _item(draft, "speculative")
    assert item.inside_profile
    assert item.device_bytes == 617_907_200 + 8_192
    assert "draft_model" in item.source


def test_draft_tp_1_keeps_the_whole_draft_on_each_device() -> None:
    # 1,235,814,400 x 2 B = 2,471,628,800 B; KV 16 x 2 x 8 x 64 x 2 = 32,768 B per token
    spec = {"model": "meta-llama/Llama-3.2-1B-Instruct", "draft_tensor_parallel_size": 1}
    plain = _est("meta-llama/Llama-3.1-70B", tensor_parallel_size=4)
    draft = _est("meta-llama/Llama-3.1-70B", tensor_parallel_size=4, speculative_config=spec)
    assert draft.weights_bytes - plain.weights_bytes == 2_471_628_800
    assert draft.kv_bytes_per_token == 81_920 + 32_768


def test_draft_tp_must_be_one_or_the_targets() -> None:
    spec = {"model": "meta-llama/Llama-3.2-1B-Instruct", "draft_tensor_parallel_size": 2}
    with pytest.raises(InvalidServeConfigError) as exc:
        _est("meta-llama/Llama-3.1-70B", tensor_parallel_size=4, speculative_config=spec)
    assert exc.value.field == "speculative_config"


def test_unknown_draft_names_the_field() -> None:
    with pytest.raises(InvalidServeConfigError) as exc:
        _est("meta-llama/Llama-3.1-8B", speculative_config={"model": "nobody/no-such-draft"})
    assert exc.value.field == "speculative_config"


def test_eagle_head_shares_the_embedding() -> None:
    """EAGLE-LLaMA3.1-Instruct-8B counts 743,452,672 params as a 1-layer Llama (model_specs); the
    128,256 x 4,096 embedding (525,336,576) is the target's (v1/spec_decode/eagle.py load_model), and vLLM
    adds fc = ReplicatedLinear(2 x 4096 -> 4096, no bias) (models/llama_eagle.py):
    (218,116,096 + 33,554,432) x 2 B = 503,341,056 B. One Llama layer of KV: 2 x 8 x 128 x 2 = 4,096 B/token."""
    spec = '{"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}'
    plain = _est("meta-llama/Llama-3.1-8B")
    eagle = _est("meta-llama/Llama-3.1-8B", speculative_config=spec)
    assert eagle.weights_bytes - plain.weights_bytes == 503_341_056
    assert eagle.kv_bytes_per_token == 131_072 + 4_096


def test_eagle_fc_is_replicated_under_tp() -> None:
    """EAGLE 70B head at TP 4: layer (1,906,335,744 - 1,050,673,152 = 855,662,592) x 2 B / 4 = 427,831,296
    plus fc 2 x 8192 x 8192 x 2 B = 268,435,456 whole on each rank -> 696,266,752 B."""
    spec = {"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3-Instruct-70B"}
    plain = _est("meta-llama/Llama-3.1-70B", tensor_parallel_size=4)
    eagle = _est("meta-llama/Llama-3.1-70B", tensor_parallel_size=4, speculative_config=spec)
    assert eagle.weights_bytes - plain.weights_bytes == 696_266_752


def test_ngram_takes_nothing() -> None:
    plain = _est("meta-llama/Llama-3.1-8B")
    ngram = _est(
        "meta-llama/Llama-3.1-8B", speculative_config={"method": "ngram", "num_speculative_tokens": 4}
    )
    assert (ngram.weights_bytes, ngram.kv_bytes_per_token, ngram.kv_cache_bytes) == (
        plain.weights_bytes,
        plain.kv_bytes_per_token,
        plain.kv_cache_bytes,
    )
    assert _item(ngram, "speculative").device_bytes == 0


def test_mtp_is_the_models_own_layer() -> None:
    """DeepSeek-V3 MTP (num_nextn_predict_layers 1) at TP 8: one more MLA layer of KV, 576 x 2 = 1,152 B
    per token; weights: 257 experts x 3 x 7168 x 2048 + 256 x 7168 (router) + 4 x 7168^2 (attention
    estimate) + 2 x 7168^2 (eh_proj) = 11,628,445,696 params x 1 B (fp8) / 8 = 1,453,555,712 B."""
    plain = _est("deepseek-ai/DeepSeek-V3", tensor_parallel_size=8)
    mtp = _est("deepseek-ai/DeepSeek-V3", tensor_parallel_size=8, speculative_config={"method": "mtp"})
    assert X.mtp_layer_params(find_model("deepseek-ai/DeepSeek-V3")) == 11_628_445_696
    assert mtp.kv_bytes_per_token == plain.kv_bytes_per_token + 1_152
    assert mtp.weights_bytes - plain.weights_bytes == 1_453_555_712


# --- LoRA -----------------------------------------------------------------------------------------


def test_eight_rank_64_lora_slots_shrink_the_pool_by_what_vllm_preallocates() -> None:
    """Llama-3.1-8B, TP 1, --enable-lora --max-loras 8 --max-lora-rank 64, lora_dtype auto = bf16.
    Per decoder layer (lora/layers/*.py create_lora_weights, elements of one slot):
      qkv   A 3 x 64 x 4096 = 786,432          B (4096 + 2 x 1024) x 64 = 393,216
      o     A 64 x 4096 = 262,144              B 4096 x 64 = 262,144
      gate_up A 2 x 64 x 4096 = 524,288        B 2 x 14336 x 64 = 1,835,008
      down  A 64 x 14336 = 917,504             B 4096 x 64 = 262,144
      = 5,242,880 per layer x 32 = 167,772,160
    LlamaForCausalLM declares embedding_modules: embed_tokens A 128256 x 64 + B 4096 x 64 = 8,470,528,
    lm_head (LogitsProcessorWithLoRA) A 64 x 4096 + B 128256 x 64 = 8,470,528
    slot = 184,713,216 elements; 8 slots x 2 B = 2,955,411,456 B, allocated in load_model (inside
    "Model loading took"), so the KV pool shrinks by exactly that."""
    plain = _est("meta-llama/Llama-3.1-8B")
    lora = _est("meta-llama/Llama-3.1-8B", enable_lora=True, max_loras=8, max_lora_rank=64)
    assert lora.weights_bytes - plain.weights_bytes == 2_955_411_456
    assert plain.kv_cache_bytes - lora.kv_cache_bytes == 2_955_411_456
    assert lora.kv_bytes_per_token == plain.kv_bytes_per_token
    item = _item(lora, "lora_slots")
    assert item.device_bytes == 2_955_411_456
    assert item.inside_profile
    # max_cpu_loras defaults to max_loras: 8 adapters of the same size at TP 1 on the host
    assert item.host_bytes == 2_955_411_456
    assert lora.host_memory_bytes == 2_955_411_456


def test_fully_sharded_loras_split_the_a_rank_and_the_b_output() -> None:
    """TP 2, rank 64, fully sharded: r' = 32, hidden' = 2048; heads per rank 16 x 128 = 2048, KV 4 x 128 = 512,
    MLP 7168 per rank. Per layer: qkv 3 x 32 x 4096 + (2048 + 1024) x 64 = 393,216 + 196,608;
    o 64 x 2048 + 2048 x 64 = 262,144; gate_up 2 x 32 x 4096 + 2 x 7168 x 64 = 262,144 + 917,504;
    down 64 x 7168 + 2048 x 64 = 589,824  -> 2,621,440 x 32 = 83,886,080; embeddings 2 x 8,470,528."""
    elements = X.lora_slot_elements(
        model=find_model("meta-llama/Llama-3.1-8B"),
        rank=64,
        tp=2,
        fully_sharded=True,
        num_layers=32,
        with_embeddings=True,
    )
    assert elements == 83_886_080 + 16_941_056


# --- data / expert parallel -----------------------------------------------------------------------


def test_dp8_ep_on_deepseek_v3_sits_between_tp8_and_the_unsplit_share() -> None:
    """EP = TP x DP = 8 ranks, 256 routed experts -> 32 whole experts per device
    (fused_moe/layer.py determine_expert_map); everything else is replicated over DP (split by TP = 1).
    Routed experts: 256 x 3 x 7168 x 2048 = 11,274,289,152 per MoE layer; the spec has no
    first_k_dense_replace, so the layers counted are the most that fit in the body:
    (671,026,419,200 - 2 x 129,280 x 7168) // 11,274,289,152 = 59 -> 665,183,059,968 params.
    MLA bytes per token do not depend on the layout: 61 x 576 x 2 = 70,272."""
    model = find_model("deepseek-ai/DeepSeek-V3")
    assert B.routed_expert_params(model) == 59 * 11_274_289_152
    h200 = find_device("H200")

    def run(**flags: object) -> Estimate:
        serve = ServeConfig(max_model_len=8192, **flags)  # type: ignore[arg-type]
        return estimate(model=model, device=h200, serve=serve, vllm_version=V)

    tp8 = run(tensor_parallel_size=8)
    ep = run(data_parallel_size=8, enable_expert_parallel=True)
    unsplit = run(kv_cache_memory_bytes=GIB)  # TP 1: the whole model on one device (weights only read)
    assert tp8.weights_bytes < ep.weights_bytes < unsplit.weights_bytes
    assert tp8.kv_bytes_per_token == ep.kv_bytes_per_token == unsplit.kv_bytes_per_token == 70_272
    # the expert share per device under EP is 32/256 of the unsplit experts
    item = _item(ep, "expert_parallel")
    assert "32 of 256" in str(item.note)
    experts_unsplit = unsplit.weights_bytes - (ep.weights_bytes - item.device_bytes)
    assert abs(item.device_bytes * 8 - experts_unsplit) <= 8


def test_dp_without_ep_splits_the_routed_experts_over_dp_x_tp() -> None:
    """Without --enable-expert-parallel vLLM still shards the MoE layers over every DP x TP rank (0.19.0
    model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.flatten_tp_across_dp_and_pcp);
    attention and embeddings stay whole per DP rank. Qwen3-30B-A3B: 48 layers x 128 experts x 3 x 2048
    x 768 = 28,991,029,248 routed params = 57,982,058,496 B in bf16; DP 4 keeps a quarter of them:
    61,064,245,248 - 57,982,058,496 x 3/4 = 17,577,701,376 B."""
    plain = _est("Qwen/Qwen3-30B-A3B")
    dp = _est("Qwen/Qwen3-30B-A3B", data_parallel_size=4)
    assert plain.weights_bytes == 61_064_245_248
    assert dp.weights_bytes == 61_064_245_248 - 57_982_058_496 * 3 // 4 == 17_577_701_376
    assert dp.kv_bytes_per_token == plain.kv_bytes_per_token  # each DP rank holds its own KV pool
    assert _item(dp, "data_parallel").device_bytes == 0


def test_expert_parallel_on_a_dense_model_is_refused() -> None:
    with pytest.raises(InvalidServeConfigError) as exc:
        _est("meta-llama/Llama-3.1-8B", enable_expert_parallel=True)
    assert exc.value.field == "enable_expert_parallel"


# --- multimodal -----------------------------------------------------------------------------------


def test_all_limits_zero_drops_the_vision_tower() -> None:
    """Qwen2.5-VL-7B: the tower is 676,550,144 params (model_specs note) x 2 B = 1,353,100,288 B at TP 1;
    with every modality limited to 0 vLLM runs text-only and skips loading it
    (0.19.0 model_executor/models/interfaces.py _mark_tower_model, multimodal/registry.py)."""
    with_tower = _est("Qwen/Qwen2.5-VL-7B-Instruct")
    text_only = _est("Qwen/Qwen2.5-VL-7B-Instruct", limit_mm_per_prompt='{"image": 0, "video": 0}')
    assert with_tower.weights_bytes - text_only.weights_bytes == 1_353_100_288
    assert text_only.kv_bytes_per_token == with_tower.kv_bytes_per_token == 28 * 2 * 4 * 128 * 2
    assert _item(text_only, "multimodal").device_bytes == 0
    mm = _item(with_tower, "multimodal")
    assert mm.device_bytes >= 1_353_100_288
    # processor cache: 4 GiB x (1 API server + 1 engine core)
    assert mm.host_bytes == 8 * GIB


# --- host memory ----------------------------------------------------------------------------------


def test_kv_offloading_64_gib_reports_at_least_64_gib_of_host_memory() -> None:
    """Llama-3.1-8B TP 1: page 16 x 8 x 256 x 2 = 65,536 B; 32 KV tensors -> 2 MiB per block;
    64 GiB // 2 MiB = 32,768 blocks; each tensor 32,768 x 65,536 = 2 GiB, already a power of two."""
    est = _est("meta-llama/Llama-3.1-8B", kv_offloading_size_gib=64)
    item = _item(est, "kv_offloading")
    assert item.host_bytes == 64 * GIB
    assert not item.inside_profile
    assert est.host_memory_bytes >= 64 * GIB


def test_kv_offloading_pinned_tensors_round_up_to_a_power_of_two() -> None:
    """Qwen2.5-7B TP 1: page 16 x 4 x 256 x 2 = 32,768 B; 28 tensors -> 917,504 B per block;
    64 GiB // 917,504 = 74,898 blocks; each tensor 74,898 x 32,768 = 2,454,257,664 B, which the pinned
    host allocator rounds to 4 GiB: 28 x 4 GiB = 112 GiB (1.75x, the size of vllm#53042's ~1.9x)."""
    blocks, host = X.kv_offload_host_bytes(
        requested_bytes=64 * GIB, kv_tensors_per_rank=28, page_bytes=32_768, world_size=1
    )
    assert blocks == 74_898
    assert host == 112 * GIB
    est = _est("Qwen/Qwen2.5-7B", kv_offloading_size_gib=64)
    assert est.host_memory_bytes == 112 * GIB


def test_cpu_offload_and_v0_swap_are_host_memory() -> None:
    est = _est("meta-llama/Llama-3.1-8B", cpu_offload_gb=4, tensor_parallel_size=2)
    assert _item(est, "cpu_offload").host_bytes == 2 * 4 * GIB  # per device x 2 devices
    v0 = estimate(
        model=find_model("meta-llama/Llama-3.1-8B"),
        device=H100,
        serve=ServeConfig(max_model_len=8192),
        vllm_version="0.6.6",
    )
    assert _item(v0, "swap_space").host_bytes == 4 * GIB  # V0 default 4 GiB per GPU


def test_speculative_config_reads_json_text_like_the_flag() -> None:
    serve = ServeConfig(speculative_config='{"method": "ngram", "num_speculative_tokens": 3}')
    assert serve.speculative_config is not None
    assert serve.speculative_config.resolved_method == "ngram"
    with pytest.raises(ValueError):
        ServeConfig(speculative_config="{not json")


# --- command line -----------------------------------------------------------------------------------


def test_serve_flags_parse_and_render_back() -> None:
    from app.core.command import parse_serve_command, render_serve_command

    parsed = parse_serve_command(
        "vllm serve meta-llama/Llama-3.1-70B -tp 4 "
        """--speculative-config '{"model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 5}' """
        "--enable-lora --max-loras 8 --max-lora-rank 64 --data-parallel-size 2 "
        "--limit-mm-per-prompt image=0,video=0 --kv-offloading-size 64"
    )
    serve = parsed.serve
    assert parsed.unknown_flags == []
    assert serve.speculative_config is not None
    assert serve.speculative_config.model == "meta-llama/Llama-3.2-1B-Instruct"
    assert serve.speculative_config.num_speculative_tokens == 5
    assert (serve.enable_lora, serve.max_loras, serve.max_lora_rank) == (True, 8, 64)
    assert serve.data_parallel_size == 2
    assert serve.limit_mm_per_prompt == {"image": 0, "video": 0}
    assert serve.kv_offloading_size_gib == 64
    text = render_serve_command(model="meta-llama/Llama-3.1-70B", serve=serve, vllm_version=V)
    again = parse_serve_command(text.replace("\\\n", " "))
    assert again.serve == serve
