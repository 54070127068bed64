"""Rule changes 0.19 -> 0.33 found missing by the round-5 audit of issue 22 item 1, each pinned against
numbers worked by hand from that release's wheel (`pip download --no-deps vllm==X`, file and function
cited in each test)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device, find_model
from app.core.errors import ConfigError, InvalidServeConfigError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ModelSpec, ServeConfig

CURRENT = Path(__file__).resolve().parents[1] / "data" / "configs" / "current"


def _spec(name: str) -> ModelSpec:
    config: dict[str, Any] = json.loads((CURRENT / f"{name}_config.json").read_text(encoding="utf-8"))
    return model_spec_from_hf_config(config, name=name)


def _est(name: str, device: str, tp: int, version: str, **serve: Any) -> Any:
    return estimate(
        model=_spec(name),
        device=find_device(device),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=8_192, **serve),
        vllm_version=version,
    )


V32 = "deepseek-ai--DeepSeek-V3.2"


@pytest.mark.parametrize("version", ["0.30.0", "0.33.0"])
def test_nvfp4_ds_mla_on_sm100_from_0_30(version: str) -> None:
    # config/cache.py CacheDType gains "nvfp4_ds_mla" in 0.30.0. On a B200 (SM100) the sparse-MLA list for a
    # quantized cache is FLASHINFER_MLA_SPARSE, FLASHMLA_SPARSE (platforms/cuda.py _get_backend_priorities);
    # FlashInfer's supported_kv_cache_dtypes has no nvfp4_ds_mla, FlashMLA's does (SM100 only), kernel block
    # [64] (0.30.0 get_supported_kernel_block_sizes; 0.33.0 [64] for a quantized spec on SM100) and
    # _canonicalize_sparse_mla_kv_cache_dtype keeps nvfp4_ds_mla. mla_attention.py get_kv_cache_spec:
    # state_content_bytes 352 a token-layer; the indexer's cache stays 128 + 128 // 128 x 4 = 132 B.
    # 61 layers x (352 + 132) = 29,524 B a token; page 64 x 484 = 30,976; a block 61 x 30,976 = 1,889,536
    est = _est(V32, "b200", 8, version, kv_cache_dtype="nvfp4_ds_mla")
    assert (est.attention_backend, est.kv_cache_dtype, est.block_size) == (
        "FLASHMLA_SPARSE",
        "nvfp4_ds_mla",
        64,
    )
    assert est.kv_bytes_per_token == 29_524
    assert est.groups[0].page_size_bytes == 30_976
    assert est.bytes_per_block == 1_889_536
    # fp8_ds_mla on the same plan: 61 x (656 + 132) = 48,068 — nvfp4 holds 48,068 / 29,524 = 1.63x the tokens
    assert _est(V32, "b200", 8, version, kv_cache_dtype="fp8_ds_mla").kv_bytes_per_token == 48_068


def test_nvfp4_ds_mla_is_refused_off_sm100_and_before_0_30() -> None:
    # flashmla_sparse.py supports_combination: "FLASHMLA_SPARSE only supports the nvfp4_ds_mla kv-cache dtype
    # on SM100 (Blackwell)"; no other sparse backend lists it -> no backend on an H100
    with pytest.raises(InvalidServeConfigError) as h100:
        _est(V32, "h100", 8, "0.33.0", kv_cache_dtype="nvfp4_ds_mla")
    assert h100.value.field == "kv_cache_dtype"
    # 0.27.1 config/cache.py CacheDType has no nvfp4_ds_mla: the CLI refuses the value
    with pytest.raises(InvalidServeConfigError) as old:
        _est(V32, "b200", 8, "0.27.1", kv_cache_dtype="nvfp4_ds_mla")
    assert old.value.field == "kv_cache_dtype" and "0.30" in str(old.value)
    # a dense MLA model (no indexer) has no DS-MLA sparse layout either
    with pytest.raises(InvalidServeConfigError):
        _est("deepseek-ai--DeepSeek-V3", "b200", 8, "0.33.0", kv_cache_dtype="nvfp4_ds_mla")


def _gemma4_three_global_heads() -> ModelSpec:
    # google/gemma-4-26B-A4B (tests/data/configs/current) with num_global_key_value_heads 3 instead of 2, so
    # that the full layers' page does not divide the sliding layers' (no shipped config does this today)
    config: dict[str, Any] = json.loads(
        (CURRENT / "google--gemma-4-26B-A4B_config.json").read_text(encoding="utf-8")
    )
    config["text_config"]["num_global_key_value_heads"] = 3
    return model_spec_from_hf_config(config, name="gemma-4-26B-A4B, 3 global KV heads")


def _gemma4_est(version: str, device: str) -> Any:
    return estimate(
        model=_gemma4_three_global_heads(),
        device=find_device(device),
        serve=ServeConfig(max_model_len=8_192),
        vllm_version=version,
    )


def test_a_page_that_does_not_divide_the_largest_is_padded_from_0_24() -> None:
    # 25 sliding layers of 8 KV heads x (256 + 256) x 2 B = 8,192 B a token; 5 full layers (attention_k_eq_v,
    # the V slot kept) of 3 heads x (512 + 512) x 2 B = 6,144. Pages at 16 tokens: 131,072 and 98,304;
    # 131,072 % 98,304 = 32,768, so block scaling cannot unify them (v1/core/kv_cache_utils.py
    # unify_kv_cache_spec_page_size). 0.23.0: NotImplementedError "not divisible by the maximum page size".
    with pytest.raises(ConfigError):
        _gemma4_est("0.23.0", "h100")
    # 0.24.0: FLASH_ATTN indexes KV by the block stride (flash_attn.py get_kv_cache_stride_order with the
    # layers dimension: (1, 0, 2, 3, 4, 5)), so the full page is padded to 131,072 and keeps 16 tokens a block:
    # cdiv(8,192, 16) = 512 blocks a request (a divisible page would have taken 32-token blocks: 256).
    # Groups (0.33.0 _group_size, 25 >= 1.5 x 5): 5 a group -> 5 sliding + 1 full; 5 x 131,072 = 655,360 B a
    # block; 25 x 8,192 + 5 x 6,144 = 235,520 B a token
    for version in ("0.24.0", "0.33.0"):
        est = _gemma4_est(version, "h100")
        assert (est.block_size, est.kv_bytes_per_token) == (16, 235_520)
        full = [g for g in est.groups if g.kind == "full"]
        assert [(g.num_layers, g.page_size_bytes, g.blocks_per_request) for g in full] == [(5, 131_072, 512)]
        assert {g.page_size_bytes for g in est.groups} == {131_072}
    assert _gemma4_est("0.33.0", "h100").bytes_per_block == 655_360
    # ROCm: Gemma4Config (0.24.0 models/config.py) forces TRITON_ATTN when FA4 is unavailable, and a ROCm build has
    # no vllm_flash_attn (fa_utils.is_fa_version_supported -> ImportError -> False); TRITON_ATTN indexes KV by the
    # block stride, so 0.24.0 pads on an MI300X as on an H100 (ROCM_ATTN, which has no stride order, never runs it)
    for version in ("0.24.0", "0.30.0"):
        est = _gemma4_est(version, "mi300x")
        assert (est.attention_backend, est.block_size, est.kv_bytes_per_token) == ("TRITON_ATTN", 16, 235_520)
        assert est.groups[-1].page_size_bytes == 131_072


def _catalog_est(model: str, device: str, version: str, **serve: Any) -> Any:
    return estimate(
        model=find_model(model),
        device=find_device(device),
        serve=ServeConfig(max_model_len=8_192, **serve),
        vllm_version=version,
    )


def _backend(model: str, device: str, version: str, **serve: Any) -> tuple[str, int]:
    est = _catalog_est(model, device, version, **serve)
    return est.attention_backend, est.block_size


GEMMA3_4B, GEMMA3_12B, GEMMA3_27B = "google/gemma-3-4b-it", "google/gemma-3-12b-it", "google/gemma-3-27b-it"


def test_image_prefix_models_skip_backends_without_mm_prefix_from_0_14() -> None:
    # ModelConfig.is_mm_prefix_lm: model_type gemma3 (Gemma3ForConditionalGeneration). 0.19.0 AttentionBackend.
    # validate_configuration drops FLASH_ATTN and FLASHINFER ("partial multimodal token full attention not
    # supported"); a real 0.19.0 H100 log of gemma-3-4b-it (llm-d-incubation/llm-d-planner@d3121e0,
    # accuracy/results/v0.19.0/logs/google-gemma-3-4b-it--h100-80gb--tp1pp1dp1--8192.log) prints exactly that,
    # then "Using TRITON_ATTN attention backend out of potential backends: ['TRITON_ATTN', 'FLEX_ATTENTION']"
    assert _backend(GEMMA3_4B, "h100", "0.19.0") == ("TRITON_ATTN", 16)
    assert _backend(GEMMA3_4B, "b200", "0.19.0") == ("TRITON_ATTN", 16)
    # 0.11.0 has no mm-prefix check; gemma-3-1b-it is gemma3_text, not an image-prefix model
    assert _backend(GEMMA3_4B, "h100", "0.11.0") == ("FLASH_ATTN", 16)
    assert _backend("google/gemma-3-1b-it", "h100", "0.19.0") == ("FLASH_ATTN", 16)
    # 0.24.0 flash_attn.py supports_mm_prefix = is_fa_version_supported(4): FA4 on SM 9.x / 10.x / 11.x only
    assert _backend(GEMMA3_4B, "h100", "0.24.0") == ("FLASH_ATTN", 16)
    assert _backend(GEMMA3_4B, "b200", "0.24.0") == ("FLASH_ATTN", 16)  # FLASHINFER still has no mm prefix
    assert _backend(GEMMA3_4B, "a100-80gb", "0.24.0") == ("TRITON_ATTN", 16)


def test_image_prefix_composites_lead_from_0_30() -> None:
    # 0.30.0 platforms/cuda.py: TRITON_FLASH_ATTN first on SM 9.x, TRITON_FLASHINFER on SM 10.x, for head sizes
    # 256 / 512 (triton_flash_attn.py / triton_flashinfer.py). TRITON_FLASHINFER's kernel block is 64:
    # "Setting kv cache block size to 64 for TRITON_FLASHINFER backend(s)."; Gemma-3-12B, 8 KV heads of 256,
    # bf16: page 64 x 8 x 512 x 2 = 524,288 B; 6 groups of 8 layers (40 sliding + 8 full): 8 x 524,288 =
    # 4,194,304 B a block
    assert _backend(GEMMA3_12B, "h100", "0.27.1") == ("FLASH_ATTN", 16)
    for version in ("0.30.0", "0.33.0"):
        assert _backend(GEMMA3_12B, "h100", version) == ("TRITON_FLASH_ATTN", 16)
        b200 = _catalog_est(GEMMA3_12B, "b200", version)
        assert (b200.attention_backend, b200.block_size, b200.bytes_per_block) == (
            "TRITON_FLASHINFER",
            64,
            4_194_304,
        )
        assert {g.page_size_bytes for g in b200.groups} == {524_288}
        # 0.30.0 interface.py: "... for %s backend."; 0.31.0+: "... for %s backend(s)." (names joined by '/')
        suffix = "backend." if version == "0.30.0" else "backend(s)."
        assert f"Setting kv cache block size to 64 for TRITON_FLASHINFER {suffix}" in b200.log_lines
    # Gemma-3-27B's head is 128: the composites refuse it, FLASH_ATTN (FA4) takes mm prefix
    assert _backend(GEMMA3_27B, "h100", "0.33.0") == ("FLASH_ATTN", 16)
    assert _backend(GEMMA3_27B, "b200", "0.33.0") == ("FLASH_ATTN", 16)


def test_text_only_serving_drops_mm_prefix_from_0_27() -> None:
    # 0.27.1 model_arch_config_convertor.py is_mm_prefix_lm(supports_multimodal=False) when every modality is 0:
    # the plain priority list again (FLASH_ATTN on an A100, FLASHINFER first on a B200); 0.24.0 keeps the mode
    text_only = {"limit_mm_per_prompt": {"image": 0}}
    assert _backend(GEMMA3_4B, "a100-80gb", "0.24.0", **text_only) == ("TRITON_ATTN", 16)
    assert _backend(GEMMA3_4B, "a100-80gb", "0.27.1", **text_only) == ("FLASH_ATTN", 16)
    assert _backend(GEMMA3_12B, "b200", "0.33.0", **text_only) == ("FLASHINFER", 16)


GEMMA4 = "google/gemma-4-26B-A4B"  # head_dim 256 (sliding), global_head_dim 512, use_bidirectional_attention "vision"


def test_gemma4_backend_by_release() -> None:
    # models/config.py Gemma4Config.verify_and_update_config. 0.19.0: heterogeneous heads with the larger above
    # 256 force TRITON_ATTN on every layer (vllm#38891 reports it on 0.19.0); 0.24.0: FA4 for all layers where
    # FA4 exists (SM 9.x-11.x), TRITON_ATTN forced elsewhere (A100; GB10 is SM 12.1 - inference-atlas PR 14
    # notes "Gemma 4 forces the TRITON_ATTN backend" on 0.27.1 on a DGX Spark)
    assert _backend(GEMMA4, "h100", "0.19.0") == ("TRITON_ATTN", 16)
    assert _backend(GEMMA4, "b200", "0.19.0") == ("TRITON_ATTN", 16)
    # 0.24.0: Gemma4ModelArchConfigConvertor.is_mm_prefix_lm (use_bidirectional_attention "vision", 0.20+) ->
    # only mm-prefix backends: FLASH_ATTN with FA4
    assert _backend(GEMMA4, "h100", "0.24.0") == ("FLASH_ATTN", 16)
    assert _backend(GEMMA4, "a100-80gb", "0.24.0") == ("TRITON_ATTN", 16)
    assert _backend(GEMMA4, "gb10", "0.27.1") == ("TRITON_ATTN", 16)
    # 0.33.0: the composites (head sizes 256 and 512 both taken); vllm#56305 benchmarks gemma-4-31B-it on B300
    # with "TRITON_FLASHINFER (HND, 64-token pages)". 26B-A4B at 64 tokens: 25 sliding layers of 8 heads x 512 x
    # 2 B = 8,192 B a token (page 524,288), 5 full of 2 x 1,024 x 2 = 4,096 (page 262,144, divides: its block is
    # raised to 128 tokens, cdiv(8,192, 128) = 64 a request); 6 groups of 5: 5 x 524,288 = 2,621,440 B a block
    assert _backend(GEMMA4, "h100", "0.33.0") == ("TRITON_FLASH_ATTN", 16)
    b200 = _catalog_est(GEMMA4, "b200", "0.33.0")
    assert (b200.attention_backend, b200.block_size, b200.bytes_per_block) == (
        "TRITON_FLASHINFER",
        64,
        2_621_440,
    )
    assert b200.kv_bytes_per_token == 25 * 8_192 + 5 * 4_096
    assert [g.blocks_per_request for g in b200.groups if g.kind == "full"] == [64]


@pytest.mark.parametrize(
    ("version", "counts", "group_size"),
    [
        # v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size. 0.11.0: min(len(layers)) always
        ("0.11.0", [12, 13], 12),
        # 0.14.0-0.17.0: "if max_num_layers < min_num_layers * 1.25: group_size = max_num_layers" (gpt-oss-20b +
        # eagle: 12 sw + 13 full -> 13 < 15 -> groups of 13); 12 + 16: 16 >= 15 -> 12
        ("0.14.0", [12, 13], 13),
        ("0.17.0", [12, 16], 12),
        # 0.18.0+: 1.5 (0.33.0 kv_cache_planning.py the same): 16 < 18 -> 16; 12 + 36 (Llama-4) stays 12
        ("0.18.0", [12, 16], 16),
        ("0.33.0", [12, 16], 16),
        ("0.33.0", [12, 36], 12),
    ],
)
def test_group_size_rule_by_release(version: str, counts: list[int], group_size: int) -> None:
    from app.core.kv import _group_size
    from app.core.versions import rules_for

    assert _group_size(counts, rules_for(version)) == group_size
