"""Current config.json / hf_quant_config.json files (tests/data/configs/current, sources in SOURCES.md)
planned at vLLM 0.33.0, against numbers worked by hand from the 0.33.0 wheel's code:
v1/kv_cache_interface.py pages, platforms/interface.py Platform._align_hybrid_block_size and
update_block_size_for_backend, platforms/cuda.py backend priorities, utils/torch_utils.py
resolve_kv_cache_dtype_string (the checkpoint's KV dtype under `auto`), config/model.py
_get_and_verify_max_len, deepseek_v2.py IndexCache, models/config.py GlmMoeDsaForCausalLM.

Row: file, device, TP, KV bytes per token (all attention layers of one rank), block size, page of
one layer, bytes per block, (kind, layers) per group, derived max_model_len, backend, KV dtype.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device
from app.core.errors import InvalidServeConfigError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ModelSpec, QuantMethod, ServeConfig

CURRENT = Path(__file__).resolve().parents[1] / "data" / "configs" / "current"


def _spec(name: str) -> ModelSpec:
    config: dict[str, Any] = json.loads((CURRENT / f"{name}_config.json").read_text(encoding="utf-8"))
    quant_path = CURRENT / f"{name}_hf_quant_config.json"
    hf_quant = json.loads(quant_path.read_text(encoding="utf-8")) if quant_path.exists() else None
    return model_spec_from_hf_config(config, name=name, hf_quant_config=hf_quant)


def _est(name: str, device: str, tp: int, version: str = "0.33.0", **serve: Any) -> Any:
    return estimate(
        model=_spec(name),
        device=find_device(device),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=8_192, **serve),
        vllm_version=version,
    )


F, M, A, S, C = "full", "mla", "mamba", "sliding", "chunked"

CASES = [
    # hf_quant_config.json (producer modelopt): kv_cache_quant_algo FP8 -> fp8_e4m3 (MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP).
    # TP 4: 8 // 4 = 2 KV heads x (128 + 128) x 1 B = 512 B a layer; x 80 = 40,960; page 16 x 512 = 8,192;
    # FLASH_ATTN takes fp8 on SM90 (FA3); llama3 rope does not scale: 131,072
    (
        "nvidia--Llama-3.1-70B-Instruct-FP8",
        "h100",
        4,
        (40_960, 16, 8_192, 80 * 8_192, [(F, 80)], 131_072, "FLASH_ATTN", "fp8_e4m3"),
    ),
    # config.json quantization_config with producer modelopt and kv_cache_scheme "FP8" (a string): fp8_e4m3.
    # 8 x 256 x 1 B = 2,048 a layer x 64 = 131,072; page 32,768
    (
        "Qwen--Qwen3-32B-FP8-Static-PerTensor",
        "h100",
        1,
        (131_072, 16, 32_768, 64 * 32_768, [(F, 64)], 40_960, "FLASH_ATTN", "fp8_e4m3"),
    ),
    # NVFP4 weights, kv_cache_quant_algo FP8. TP 4: 4 // 4 = 1 head x 256 x 1 B = 256 x 94 = 24,064; page
    # 4,096; SM100 priorities: FLASHINFER first, block 16 in [16, 32, 64]
    (
        "nvidia--Qwen3-235B-A22B-NVFP4",
        "b200",
        4,
        (24_064, 16, 4_096, 94 * 4_096, [(F, 94)], 40_960, "FLASHINFER", "fp8_e4m3"),
    ),
    # Qwen3.5-27B: 64 layers, full every 4th (16) + 48 Gated DeltaNet. Attention 4 x 512 x 2 B = 4,096 a
    # layer, x 16 = 65,536. GDN (TP 1): conv (2 x 128 x 16 + 128 x 48 = 10,240) x 3 = 30,720 bf16 = 61,440 B;
    # ssm 48 x 128 x 128 = 786,432 x 4 B (mamba_ssm_dtype float32) = 3,145,728 -> 3,207,168 B. SM90: FlashInfer
    # GDN prefill, step lcm(16, 64) = 64: 64 x cdiv(3,207,168, 64 x 4,096) = 64 x 13 = 832; page 832 x 4,096
    (
        "Qwen--Qwen3.5-27B",
        "h100",
        1,
        (
            65_536,
            832,
            3_407_872,
            16 * 3_407_872,
            [(A, 16), (A, 16), (A, 16), (F, 16)],
            262_144,
            "FLASH_ATTN",
            "auto",
        ),
    ),
    # Nemotron-3 Ultra: no num_hidden_layers, 108 layers_block_type entries (48 mamba, 48 moe, 12 attention).
    # TP 8: attention max(1, 2 // 8) = 1 x 256 x 2 B = 512 x 12 = 6,144. Mamba-2: 8 groups % 8 = 0; conv
    # (256 x 64 + 2 x 8 x 128) / 8 = 2,304 x 3 = 6,912 x 2 B = 13,824; ssm 256 / 8 x 64 x 128 = 262,144 x 4 B
    # (mamba_ssm_cache_dtype float32) = 1,048,576 -> 1,062,400 B; step max(16, 16): 16 x cdiv(1,062,400,
    # 8,192) = 16 x 130 = 2,080; page 2,080 x 512 = 1,064,960; groups of 12: 4 mamba + 1 full
    (
        "nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
        "b200",
        8,
        (
            6_144,
            2_080,
            1_064_960,
            12 * 1_064_960,
            [(A, 12), (A, 12), (A, 12), (A, 12), (F, 12)],
            262_144,
            "FLASHINFER",
            "auto",
        ),
    ),
    # GLM-5.2: 78 MLA layers; IndexCache index_topk_freq 4, offset 3 -> indexers on layers 0, 1, 2, 6, 10, ..,
    # 74 (21); GlmMoeDsaForCausalLM: auto -> fp8_e4m3 on SM10x; MLA latent 576 x 1 B on 78 layers + indexer 128
    # + 128 // 128 x 4 = 132 B on 21: 44,928 + 2,772 = 47,700; FLASHINFER_MLA_SPARSE MultipleOf(32) beside the
    # indexer's DEEPSEEK_V32_INDEXER [64] (platforms/interface.py _preferred_block_size_for_backends: 16 not
    # supported by both, lcm(32, 64) = 64; round 5 had 32, which the indexer's kernel cannot take);
    # one uniform-type group: 64 x 47,700 = 3,052,800 a block; rope default: 1,048,576
    (
        "zai-org--GLM-5.2-FP8",
        "b200",
        8,
        (47_700, 64, 64 * (576 + 132), 3_052_800, [(M, 78)], 1_048_576, "FLASHINFER_MLA_SPARSE", "fp8_e4m3"),
    ),
    # NVFP4 GLM-5 on H100 (issue 22: was refused "no backend accepts fp8_e4m3"). hf_quant_config.json (producer
    # modelopt) kv_cache_quant_algo FP8 -> fp8_e4m3 (utils/torch_utils.py MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP).
    # platforms/cuda.py _get_backend_priorities, SM90 sparse tail: FLASH_ATTN_MLA_SPARSE (flashattn_mla_sparse.py
    # supports_combination: FP16/BF16 only) and FLASHMLA_SPARSE (supported_kv_cache_dtypes auto, bfloat16,
    # fp8_ds_mla, fp8, nvfp4_ds_mla: no fp8_e4m3) refuse it; FLASHINFER_MLA_SPARSE_SM90 takes fp8_e4m3 and keeps
    # it (mla_attention.py _canonicalize_sparse_mla_kv_cache_dtype rewrites only FLASHMLA_SPARSE's), kernel block
    # MultipleOf(64) -> 64. 78 layers, no index_topk_freq: latent 576 x 1 B + indexer 128 + 128 // 128 x 4 = 132 on
    # every layer = 708 B a token-layer x 78 = 55,224; page 64 x 708 = 45,312; block 78 x 45,312 = 3,534,336
    (
        "nvidia--GLM-5-NVFP4",
        "h100",
        8,
        (55_224, 64, 45_312, 3_534_336, [(M, 78)], 202_752, "FLASHINFER_MLA_SPARSE_SM90", "fp8_e4m3"),
    ),
    # DeepSeek-V3.2-NVFP4 on H100, the same path: 61 x 708 = 43,188; 61 x 45,312 = 2,764,032; yarn x 40 of 4,096 =
    # max_position_embeddings 163,840 either way
    (
        "nvidia--DeepSeek-V3.2-NVFP4",
        "h100",
        8,
        (43_188, 64, 45_312, 2_764_032, [(M, 61)], 163_840, "FLASHINFER_MLA_SPARSE_SM90", "fp8_e4m3"),
    ),
    # Kimi-K3 (text_config linear_attn_config): transformers_utils/configs/kimi_linear.py is_kda_layer(i) =
    # (i + 1) in kda_layers -> 69 KDA layers, the other 24 MLA (kimi_k3/nvidia/mla.py head_size = kv_lora_rank
    # 512 + qk_rope_head_dim 64 = 576, bf16: 1,152 B a token-layer x 24 = 27,648). KDA state at TP 8
    # (mamba_utils.kda_state_shape / kda_state_dtype): conv (3 x 96 x 128 / 8 = 4,608) x (4 - 1) = 13,824 bf16
    # = 27,648 B; recurrent 96 / 8 x 128 x 128 = 196,608 float32 = 786,432 B -> 814,080 B. FlashKDA prefill
    # (SM90, head_dim 128, bf16, gate_lower_bound set): prefill_checkpoint_alignment 16. Platform.
    # _align_hybrid_block_size: max(FLASH_ATTN_MLA's 16, 16), MLA hybrid >= 128, lcm(128, 16) = 128;
    # 128 x cdiv(814,080, 128 x 1,152) = 128 x 6 = 768; page 768 x 1,152 = 884,736 (the KDA page padded to it).
    # Groups (kv_cache_utils): min(24, 69) = 24 a group -> 3 KDA groups of 23 + 1 MLA of 24; 24 x 884,736 a block
    (
        "moonshotai--Kimi-K3",
        "h100",
        8,
        (
            27_648,
            768,
            884_736,
            24 * 884_736,
            [(A, 23), (A, 23), (A, 23), (M, 24)],
            1_048_576,
            "FLASH_ATTN_MLA",
            "auto",
        ),
    ),
    # nvidia/MiniMax-M3-NVFP4 (MiniMaxM3SparseForConditionalGeneration, models/minimax_m3/nvidia/model.py): every
    # layer a GQA cache, 4 KV heads -> max(1, 4 // 8) = 1 x (128 + 128) x 2 B (MIXED_PRECISION, no KV algo:
    # auto = bf16) = 512 B; the 57 layers with sparse_attention_freq 1 (3 .. 59) also an index-key cache,
    # common/indexer.py MiniMaxM3IndexerCache: sparse_index_dim 128 x 2 B (bf16) = 256 B. 60 x 512 + 57 x 256 =
    # 45,312 B a token; MiniMaxM3SparseBackend (MINIMAX_M3_SPARSE) kernel block [128] -> 128; one uniform-type
    # group, sparse layers' page 128 x 768 = 98,304, a block 128 x 45,312 = 5,799,936; rope default: 1,048,576
    (
        "nvidia--MiniMax-M3-NVFP4",
        "h100",
        8,
        (45_312, 128, 98_304, 5_799_936, [(F, 60)], 1_048_576, "MINIMAX_M3_SPARSE", "auto"),
    ),
    # gpt-oss-120b: 18 sliding (128) + 18 full, 8 x (64 + 64) x 2 B = 2,048 a layer x 36 = 73,728; page
    # 32,768; groups 18 + 18; yarn does not scale from 0.30.0: 131,072
    (
        "openai--gpt-oss-120b",
        "h100",
        1,
        (73_728, 16, 32_768, 18 * 32_768, [(S, 18), (F, 18)], 131_072, "FLASH_ATTN", "auto"),
    ),
    # Llama-4 Scout TP 4: 8 // 4 = 2 x 256 x 2 B = 1,024 a layer x 48 = 49,152; page 16,384; 36 chunked + 12
    # full -> groups of 12; llama3 rope: 10,485,760
    (
        "meta-llama--Llama-4-Scout-17B-16E-Instruct",
        "h100",
        4,
        (
            49_152,
            16,
            16_384,
            12 * 16_384,
            [(C, 12), (C, 12), (C, 12), (F, 12)],
            10_485_760,
            "FLASH_ATTN",
            "auto",
        ),
    ),
]


@pytest.mark.parametrize(("name", "device", "tp", "expected"), CASES)
def test_current_config_at_0_33(name: str, device: str, tp: int, expected: tuple[Any, ...]) -> None:
    per_token, block, page, per_block, groups, max_len, backend, kv_dtype = expected
    est = _est(name, device, tp)
    assert est.kv_bytes_per_token == per_token
    assert est.block_size == block
    assert est.groups[0].page_size_bytes == page or {g.page_size_bytes for g in est.groups} == {page}
    assert est.bytes_per_block == per_block
    assert [(g.kind, g.num_layers) for g in est.groups] == groups
    assert _spec(name).max_model_len_derived == max_len
    assert est.attention_backend == backend
    assert est.kv_cache_dtype == kv_dtype


def test_checkpoint_kv_dtype_follows_the_release() -> None:
    # utils/torch_utils.py resolve_kv_cache_dtype_string is absent in 0.11.0: auto is the model's bf16
    # (2 B: 131,072 x 2 = 262,144 B a token); from 0.14.0 it is the checkpoint's fp8_e4m3
    old = _est("Qwen--Qwen3-32B-FP8-Static-PerTensor", "h100", 1, version="0.11.0")
    assert (old.kv_cache_dtype, old.kv_bytes_per_token, old.kv_cache_dtype_from_checkpoint) == (
        "auto",
        262_144,
        False,
    )
    new = _est("Qwen--Qwen3-32B-FP8-Static-PerTensor", "h100", 1)
    assert new.kv_cache_dtype_from_checkpoint and new.kv_dtype_bytes_per_element == 1
    # an explicit --kv-cache-dtype wins over the checkpoint's
    explicit = _est("Qwen--Qwen3-32B-FP8-Static-PerTensor", "h100", 1, kv_cache_dtype="bfloat16")
    assert (explicit.kv_cache_dtype, explicit.kv_bytes_per_token) == ("bfloat16", 262_144)


def test_producerless_hf_quant_config_keeps_auto_kv() -> None:
    # Nemotron-3 Super FP8's hf_quant_config.json has no producer: ModelOptFp8Config claims the weights
    # (override_quantization_method: quant_algo FP8), but quant_method stays "" after
    # _normalize_quantization_config, so get_kv_cache_quant_algo_string reads no KV algo: auto = bf16
    spec = _spec("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8")
    assert spec.quantization is not None and spec.quantization.method == QuantMethod.FP8
    assert spec.quantization.kv_cache_dtype is None
    # a producer makes the same block read: Llama-3.1-70B-FP8's hf_quant_config.json
    llama = _spec("nvidia--Llama-3.1-70B-Instruct-FP8").quantization
    assert llama is not None and llama.kv_cache_dtype == "fp8_e4m3" and llama.source_name == "modelopt"


def test_mixed_precision_reads_the_mlp_algo() -> None:
    # Qwen3.6-27B-NVFP4 (88 KB config.json): MIXED_PRECISION, 208 FP8 + 193 W4A16_NVFP4 modules; the MLP
    # modules are W4A16_NVFP4, the attention / linear-attention projections FP8; kv_cache_scheme 8-bit float
    spec = _spec("nvidia--Qwen3.6-27B-NVFP4")
    assert spec.quantization is not None
    assert (spec.quantization.method, spec.quantization.source_name) == (QuantMethod.NVFP4, "modelopt_mixed")
    assert spec.quantization.kv_cache_dtype == "fp8_e4m3"


def test_glm_5_2_indexers_on_some_layers_by_release() -> None:
    # 0.22.1 deepseek_v2.py built an indexer on every layer: 78 x (576 + 132) = 55,224 B a token (fp8 is
    # given here: the SM10x auto -> fp8 rule is 0.32+); 0.24.0+ only the 21 IndexCache keeps
    old = _est("zai-org--GLM-5.2-FP8", "b200", 8, version="0.22.1", kv_cache_dtype="fp8")
    assert old.kv_bytes_per_token == 55_224
    new = _est("zai-org--GLM-5.2-FP8", "b200", 8, version="0.24.0", kv_cache_dtype="fp8")
    assert new.kv_bytes_per_token == 47_700


def test_per_layer_rope_parameters_are_read() -> None:
    # Gemma-4 nests rope_parameters per layer type ({"full_attention": {...}, "sliding_attention": {...}}):
    # iter_rope_parameters yields both; neither scales (proportional / default have no factor) -> 262,144
    assert _spec("google--gemma-4-26B-A4B").max_model_len_derived == 262_144


def test_sparse_mla_fp8_backends_by_release() -> None:
    # GLM-5-NVFP4 (checkpoint fp8_e4m3) on H100: 0.27.1 has no FLASHINFER_MLA_SPARSE_SM90 and FLASHMLA_SPARSE does
    # not list fp8_e4m3, so vLLM finds no backend (refused); 0.30.0 adds it (versions.py)
    with pytest.raises(InvalidServeConfigError):
        _est("nvidia--GLM-5-NVFP4", "h100", 8, version="0.27.1")
    assert (
        _est("nvidia--GLM-5-NVFP4", "h100", 8, version="0.30.0").attention_backend
        == "FLASHINFER_MLA_SPARSE_SM90"
    )
    # an explicit --kv-cache-dtype fp8 is FLASHMLA_SPARSE's alias for fp8_ds_mla (0.19.0 and 0.33.0
    # flashmla_sparse.py; the layer runs fp8_ds_mla, mla_attention.py): 656 + 132 = 788 B x 61 = 48,068 a
    # token, page 64 x 788 = 50,432. On SM90 it is also the first backend that takes fp8 at 0.33.0
    # (FLASH_ATTN_MLA_SPARSE is 16-bit only)
    for version in ("0.19.0", "0.33.0"):
        est = _est("deepseek-ai--DeepSeek-V3.2", "h100", 8, version=version, kv_cache_dtype="fp8")
        assert (est.attention_backend, est.kv_cache_dtype, est.kv_bytes_per_token) == (
            "FLASHMLA_SPARSE",
            "fp8_ds_mla",
            48_068,
        )
        assert est.groups[0].page_size_bytes == 50_432
    # a bf16 cache on H100 at 0.33.0: FLASH_ATTN_MLA_SPARSE first (0.26.0+), MultipleOf(64) -> 64;
    # 576 x 2 + 132 = 1,284 B x 61 = 78,324
    auto = _est("deepseek-ai--DeepSeek-V3.2", "h100", 8)
    assert (auto.attention_backend, auto.block_size, auto.kv_bytes_per_token) == (
        "FLASH_ATTN_MLA_SPARSE",
        64,
        78_324,
    )
    # on B200 an explicit fp8_ds_mla skips FlashInfer's sparse kernel ("SM10 does not support fp8_ds_mla",
    # flashinfer_mla_sparse.py) for FLASHMLA_SPARSE, block 64
    ds = _est("deepseek-ai--DeepSeek-V3.2", "b200", 8, kv_cache_dtype="fp8_ds_mla")
    assert (ds.attention_backend, ds.block_size) == ("FLASHMLA_SPARSE", 64)


def test_kimi_k3_kda_blocks_per_request_by_release() -> None:
    # v1/kv_cache_interface.py MambaSpec.max_memory_usage_bytes in "align" mode (prefix caching on, the hybrid
    # default from 0.26): 2 + num_prefill_checkpoint_blocks pages. FlashKDA's checkpoint block arrives in 0.32.0
    # (kda_checkpoint.py): 3 a KDA group; 0.30.0: 2. MLA: cdiv(8,192, 768) = 11
    for version, kda_blocks in (("0.30.0", 2), ("0.33.0", 3)):
        est = _est("moonshotai--Kimi-K3", "h100", 8, version=version)
        assert [g.blocks_per_request for g in est.groups] == [kda_blocks] * 3 + [11]
    # no cache warning is left: the KDA state is sized
    assert not any("does not model" in str(w) for w in _est("moonshotai--Kimi-K3", "h100", 8).warnings)


def test_deepseek_v4_flash_cache_at_0_33() -> None:
    # DeepSeek-V4-Flash (43 layers; compress_ratios 0, 0 then 4 / 128 alternating, ending 4: 21 CSA, 20 HCA) at
    # TP 8 on an H100. models/deepseek_v4/nvidia/model.py _select_dsv4_attn_cls -> DeepseekV4FlashMLAAttention
    # (SM90), fp8_ds_mla layout: auto -> fp8_ds_mla (attention.py _resolve_dsv4_kv_cache_dtype). Pages, rounded up to
    # 576 B (kv_cache_interface.py _apply_alignment_padding):
    #   sliding-window cache (sparse_swa.py DeepseekV4SWACache, 64-token blocks, window 128): 64 x 584 = 37,376
    #     -> 37,440, on all 43 layers;
    #   compressed cache (MLAAttentionSpec, block 256): CSA 256 / 4 = 64 x 584 -> 37,440, HCA 256 / 128 = 2 x 584 =
    #     1,168 -> 1,728; indexer (CSA): 64 x (128 + 4) = 8,448 -> 8,640;
    #   compressor states (compressor.py CompressorStateCache, float32): CSA block 4 x 2 x 2 x 512 x 4 B = 32,768
    #     -> 32,832 and its indexer's 4 x 2 x 2 x 128 x 4 = 8,192 -> 8,640 (window 8); HCA block 8 x 2 x 512 x 4 =
    #     32,768 -> 32,832 (window 128).
    # kv_cache_planning._get_packed_kv_cache_groups: buckets sliding (43 x 37,440), full (21 + 20 + 21 pages),
    # CSA states (21 + 21), HCA states (20). Balanced buckets' repeats [43, 21, 20], floor 21 (the two-page CSA
    # bucket): _approximate_gcd -> 22 (padding 1 + 1 + 2); the sliding bucket splits cdiv(43, 22) = 2 ways (22, 21).
    # Widths: 22 x 37,440 = 823,680; full 21 x 37,440 + 20 x 1,728 + 21 x 8,640 = 1,002,240; CSA states
    # 21 x 32,832 + 21 x 8,640 = 870,912; HCA 20 x 32,832 = 656,640 -> a block is 1,002,240 B. One request of
    # 8,192 tokens with 8,192 in flight: sliding cdiv(min(127 + 8,192, 8,192), 64) + 1 = 129 (x 2), full
    # cdiv(8,192, 256) = 32, CSA states cdiv(8,192, 4) + 1 = 2,049, HCA cdiv(8,192, 8) + 1 = 1,025
    est = _est("deepseek-ai--DeepSeek-V4-Flash", "h100", 8)
    assert (est.attention_backend, est.kv_cache_dtype, est.block_size) == (
        "FLASHMLA_SPARSE_DSV4",
        "fp8_ds_mla",
        256,
    )
    assert est.bytes_per_block == 1_002_240
    assert [(g.kind, g.num_layers, g.blocks_per_request) for g in est.groups] == [
        (S, 22, 129),
        (S, 21, 129),
        (M, 62, 32),
        (S, 42, 2_049),
        (S, 20, 1_025),
    ]
    assert est.max_concurrency == round(est.num_gpu_blocks / (129 + 129 + 32 + 2_049 + 1_025), 2)
    assert not any("does not model" in str(w) for w in est.warnings)
    # a 16-bit cache is refused as vLLM refuses it; 0.32.0 (not read) keeps the planner's warning
    with pytest.raises(InvalidServeConfigError):
        _est("deepseek-ai--DeepSeek-V4-Flash", "h100", 8, kv_cache_dtype="bfloat16")
    assert any(
        "does not model" in str(w)
        for w in _est("deepseek-ai--DeepSeek-V4-Flash", "h100", 8, version="0.32.0").warnings
    )
