"""Attention backend, block size and KV-dtype checks per release (app/core/backends.py + versions.py).

Sources: reference vllm-accounting.md §5 (read from the released code of 0.6.6 … 0.33.0) and the wheels
themselves (`pip download --no-deps vllm==X`): 0.6.6 vllm/engine/arg_utils.py `--block-size
choices=[8, 16, 32, 64, 128]`; 0.8.5 vllm/config.py `BlockSize = Literal[1, 8, 16, 32, 64, 128]`;
0.14.0 vllm/config/cache.py `BlockSize = Literal[1, 8, 16, 32, 64, 128, 256]`; 0.20.2 `block_size:
SkipValidation[int]`.
"""

from __future__ import annotations

import pytest

from app.core.backends import allowed_block_sizes, cuda_candidates, resolve_backend
from app.core.catalog import find_device
from app.core.errors import InvalidServeConfigError
from app.core.specs import ServeConfig
from app.core.versions import rules_for
from tests.specs_factory import H100, deepseek_v3_like, dense

H200 = find_device("nvidia-h200-141gb")
B200 = find_device("nvidia-b200")
A100 = find_device("nvidia-a100-sxm4-80gb")
ASCEND = find_device("huawei-ascend-910b-64gb")
MI300X = find_device("amd-mi300x-192gb")


def choose(model, device, version, **serve):  # type: ignore[no-untyped-def]
    return resolve_backend(
        model=model,
        device=device,
        serve=ServeConfig(**serve),
        rules=rules_for(version),
        prefix_caching=True,
        chunked_prefill=True,
    )


@pytest.mark.parametrize(
    ("version", "choices"),
    [
        ("0.6.6", (8, 16, 32, 64, 128)),
        ("0.8.5", (1, 8, 16, 32, 64, 128)),
        ("0.11.0", (1, 8, 16, 32, 64, 128)),
        ("0.14.0", (1, 8, 16, 32, 64, 128, 256)),
        ("0.19.0", (1, 8, 16, 32, 64, 128, 256)),
        ("0.20.2", None),
        ("0.33.0", None),
    ],
)
def test_block_size_choices(version: str, choices: tuple[int, ...] | None) -> None:
    assert allowed_block_sizes(rules_for(version)) == choices


def test_a_block_size_outside_the_choices_is_refused_naming_the_flag() -> None:
    with pytest.raises(InvalidServeConfigError) as info:
        choose(dense(), H100, "0.11.0", block_size=256)
    assert info.value.field == "block_size"
    assert info.value.message == "vLLM 0.11.0 accepts --block-size only from [1, 8, 16, 32, 64, 128]"
    assert choose(dense(), H100, "0.14.0", block_size=256).block_size == 256


@pytest.mark.parametrize(
    ("device", "version", "expected"),
    [
        # 0.33.0 cuda.py _get_backend_priorities (reference §5.2): SM100 non-MLA -> FLASHINFER first
        (B200, "0.33.0", ("FLASHINFER", 16)),
        (H100, "0.33.0", ("FLASH_ATTN", 16)),
        # 0.11.0 default selection (reference §5.2): SM100 -> FlashInfer, SM80+ -> FlashAttention
        (B200, "0.11.0", ("FLASHINFER", 16)),
        (A100, "0.11.0", ("FLASH_ATTN", 16)),
        # V0 (0.6.6): FLASH_ATTN on SM80+
        (H100, "0.6.6", ("FLASH_ATTN", 16)),
    ],
)
def test_non_mla_backend_by_capability(device, version, expected) -> None:  # type: ignore[no-untyped-def]
    choice = choose(dense(), device, version)
    assert (choice.name, choice.block_size) == expected and choice.log_lines == []


def test_mla_backends_and_block_sizes_by_release() -> None:
    ds = deepseek_v3_like()
    # 0.11.0 (reference §5.1): FlashMLA on SM90 forces 64 and says so
    old = choose(ds, H200, "0.11.0")
    assert (old.name, old.block_size) == ("FLASHMLA", 64)
    assert old.log_lines == ["Forcing kv cache block size to 64 for FlashMLA backend."]
    # 0.11.0 on SM100: CUTLASS_MLA, fixed 128
    assert (choose(ds, B200, "0.11.0").name, choose(ds, B200, "0.11.0").block_size) == ("CUTLASS_MLA", 128)
    # 0.19.0 on SM90: FLASH_ATTN_MLA (MultipleOf(16)) keeps 16
    assert (choose(ds, H200, "0.19.0").name, choose(ds, H200, "0.19.0").block_size) == ("FLASH_ATTN_MLA", 16)
    # 0.33.0 on SM100: FLASHINFER_MLA [32, 64] -> the minimum, 32, with 0.20+'s wording (reference §5.1)
    new = choose(ds, B200, "0.33.0")
    assert (new.name, new.block_size) == ("FLASHINFER_MLA", 32)
    assert new.log_lines == ["Setting kv cache block size to 32 for FLASHINFER_MLA backend(s)."]


def test_priority_lists_come_from_the_rules_table() -> None:
    # platforms/cuda.py _get_backend_priorities, capability 10.x: the same list from 0.15.0 to 0.33.0 (read from
    # the 0.15-0.33 wheels; rules9: round 8 had CUTLASS_MLA first before 0.33); 0.13.0 / 0.14.0 CUTLASS_MLA first
    blackwell = ["FLASHINFER_MLA", "CUTLASS_MLA", "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA"]
    for version in ("0.15.0", "0.19.0", "0.30.0", "0.33.0"):
        assert [b.name for b in cuda_candidates(mla=True, sm=100, rules=rules_for(version))] == blackwell
    names = [b.name for b in cuda_candidates(mla=True, sm=100, rules=rules_for("0.14.0"))]
    assert names == ["CUTLASS_MLA", "FLASHINFER_MLA", "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA"]
    # "if device_capability.major == 10": 12.x (RTX 5090, GB10) takes the FlashAttention-first list, as a real GB10
    # log shows ("Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN', 'FLASHINFER',
    # 'TRITON_ATTN', 'FLEX_ATTENTION']", heldout-2026-12g nv_gb10_spark_qwen35_35b_a3b_fp8_docker_logs_kv_55_72_729696.log)
    for version in ("0.11.0", "0.19.0", "0.33.0"):
        names = [b.name for b in cuda_candidates(mla=False, sm=121, rules=rules_for(version))]
        assert names == ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"]
        assert cuda_candidates(mla=False, sm=100, rules=rules_for(version))[0].name == "FLASHINFER"
    names = [b.name for b in cuda_candidates(mla=False, sm=90, rules=rules_for("0.7.3"))]
    assert names == ["FLASH_ATTN", "XFORMERS"]


def test_fp8_kv_on_ampere_falls_back_with_a_warning() -> None:
    # FLASH_ATTN takes quantized KV only with FA3 on SM90 (reference §5.2); FlashInfer takes fp8 on SM80
    choice = choose(dense(), A100, "0.19.0", kv_cache_dtype="fp8")
    assert choice.name == "FLASHINFER"
    assert choice.warnings and "FLASH_ATTN (no fp8 KV cache here)" in choice.warnings[0]
    assert choose(dense(), H100, "0.19.0", kv_cache_dtype="fp8").name == "FLASH_ATTN"
    # 12.x (GB10) runs FA2: no fp8 there, FlashInfer takes it, as four real GB10 fp8 logs show ("Using FLASHINFER
    # attention backend out of potential backends: ('FLASHINFER', 'TRITON_ATTN')", heldout-2026-12g
    # nv_gb10_spark_qwen3_30b_a3b_fp8_kv_4_04_88176.log, kv_cache_dtype=fp8); auto keeps FLASH_ATTN
    # (nv_gb10_spark_qwen35_35b_a3b_fp8_docker_logs_kv_55_72_729696.log, kv_cache_dtype=auto)
    gb10 = find_device("nvidia-gb10")
    assert choose(dense(), gb10, "0.19.0", kv_cache_dtype="fp8").name == "FLASHINFER"
    assert choose(dense(), gb10, "0.19.0").name == "FLASH_ATTN"


def test_fp8_ds_mla_needs_0_14_and_an_mla_model() -> None:
    with pytest.raises(InvalidServeConfigError) as info:
        choose(deepseek_v3_like(), H200, "0.11.0", kv_cache_dtype="fp8_ds_mla")
    assert info.value.field == "kv_cache_dtype"
    with pytest.raises(InvalidServeConfigError):
        choose(dense(), H200, "0.33.0", kv_cache_dtype="fp8_ds_mla")


def test_other_platforms() -> None:
    # vllm-ascend refresh_block_size: 128 (reference §9); a user 64 is forced back with prefix caching on
    npu = choose(dense(), ASCEND, "0.11.0", block_size=64)
    assert (npu.name, npu.block_size) == ("ASCEND", 128)
    assert npu.log_lines == ["Block size is set to 128 if prefix cache or chunked prefill is enabled."]
    assert (choose(dense(), MI300X, "0.33.0").name, choose(dense(), MI300X, "0.33.0").block_size) == (
        "ROCM_ATTN",
        16,
    )
    with pytest.raises(InvalidServeConfigError) as info:
        choose(dense(), H100, "0.33.0", kv_cache_dtype="int8")
    assert info.value.field == "kv_cache_dtype"


def _on_rocm(model: str, version: str, **serve: object) -> tuple[str, int]:
    from app.core.catalog import find_model

    choice = choose(find_model(model), MI300X, version, **serve)
    return choice.name, choice.block_size


def test_rocm_walks_its_release_priority_list_with_aiter_off() -> None:
    # vLLM's default environment: VLLM_ROCM_USE_AITER False (0.33.0 envs.py), so neither AITER backend is listed.
    # 0.10.2-0.18.0 platforms/rocm.py: V1 dense -> TRITON_ATTN, MLA -> TRITON_MLA (AITER MLA only when enabled);
    # 0.19.0 _get_backend_priorities: [ROCM_ATTN, TRITON_ATTN]; every one MultipleOf(16) -> 16-token blocks
    assert _on_rocm("meta-llama/Llama-3.1-8B-Instruct", "0.18.0") == ("TRITON_ATTN", 16)
    assert _on_rocm("meta-llama/Llama-3.1-8B-Instruct", "0.19.0") == ("ROCM_ATTN", 16)
    assert _on_rocm("meta-llama/Llama-3.1-8B-Instruct", "0.33.0") == ("ROCM_ATTN", 16)
    assert _on_rocm("deepseek-ai/DeepSeek-V3", "0.19.0") == ("TRITON_MLA", 16)
    assert _on_rocm("deepseek-ai/DeepSeek-V3", "0.33.0") == ("TRITON_MLA", 16)
    # gpt-oss hands its attention learned sinks; RocmAttentionBackend.supports_sink is False (0.19.0-0.33.0)
    assert _on_rocm("openai/gpt-oss-120b", "0.33.0") == ("TRITON_ATTN", 16)
    # Gemma-3 is an image-prefix model (MM_PREFIX_LM_MODELS): ROCM_ATTN.supports_mm_prefix True in 0.31.0,
    # False ("Not implemented") from 0.32.0
    assert _on_rocm("google/gemma-3-12b-it", "0.31.0") == ("ROCM_ATTN", 16)
    assert _on_rocm("google/gemma-3-12b-it", "0.33.0") == ("TRITON_ATTN", 16)


def test_rocm_attn_head_sizes_come_from_the_one_head_size_table() -> None:
    # 0.33.0 v1/attention/backends/rocm_attn.py RocmAttentionBackend.get_supported_head_sizes:
    # [32, 64, 80, 96, 128, 160, 192, 224, 256] (0.19.0 the same), a row of backend_heads.HEAD_SIZE_TABLE
    from app.core.backend_heads import supported_heads

    rocm = supported_heads("ROCM_ATTN", sm=0, rules=rules_for("0.33.0"))
    assert rocm is not None
    assert [h for h in (32, 64, 80, 96, 100, 112, 128, 160, 192, 224, 256, 512) if rocm.takes(h)] == [
        32, 64, 80, 96, 128, 160, 192, 224, 256
    ]  # fmt: skip
    # head 112 (not in the list) walks on to TRITON_ATTN (0.19.0 _get_backend_priorities [ROCM_ATTN, TRITON_ATTN]);
    # 96 stays on ROCM_ATTN
    assert choose(dense(head=112), MI300X, "0.33.0").name == "TRITON_ATTN"
    assert choose(dense(head=96), MI300X, "0.33.0").name == "ROCM_ATTN"


def test_rocm_refuses_what_no_backend_takes() -> None:
    # 0.33.0 triton_mla.py TritonMLABackend.supported_kv_cache_dtypes: auto, float16, bfloat16, fp8, fp8_e4m3 --
    # no fp8_e5m2, and TRITON_MLA is ROCm's only MLA backend with AITER off: "No valid attention backend found"
    from app.core.catalog import find_model

    with pytest.raises(InvalidServeConfigError) as info:
        choose(find_model("deepseek-ai/DeepSeek-V3"), MI300X, "0.33.0", kv_cache_dtype="fp8_e5m2")
    assert info.value.field == "kv_cache_dtype"
    assert "TRITON_MLA: [kv_cache_dtype not supported]" in info.value.message
    assert (
        choose(find_model("deepseek-ai/DeepSeek-V3"), MI300X, "0.33.0", kv_cache_dtype="fp8").name
        == "TRITON_MLA"
    )
    # ROCM_ATTN takes any multiple of 16 (MultipleOf(16)); 24 is refused by it and by TRITON_ATTN
    with pytest.raises(InvalidServeConfigError) as info:
        choose(dense(), MI300X, "0.33.0", block_size=24)
    assert info.value.field == "block_size"


@pytest.mark.parametrize(
    ("device", "version", "backend"),
    [
        # 0.11.0 platforms/cuda.py: "(has_sink or use_fp8_kv_cache) and not cls.is_device_capability(90)" -> TRITON_ATTN
        ("nvidia-a100-sxm4-80gb", "0.11.0", "TRITON_ATTN"),
        # 0.14.0-0.33.0 flash_attn.py supports_sink: FA3 (9.x) / FA4 (10.x, 0.22+); FA2 on 8.x takes no sinks
        ("nvidia-a100-sxm4-80gb", "0.33.0", "TRITON_ATTN"),
        ("nvidia-h100-sxm-80gb", "0.33.0", "FLASH_ATTN"),
        # flashinfer.py supports_sink with TRTLLM (10.x)
        ("nvidia-b200", "0.19.0", "FLASHINFER"),
        # 12.x before 0.30: neither FA2 nor FlashInfer takes sinks -- vllm#40153 (GPT-OSS-20B on an RTX PRO 6000,
        # SM120): "Using TRITON_ATTN attention backend out of potential backends: ['TRITON_ATTN']", "FLASH_ATTN: [sink
        # setting not supported], FLASHINFER: [sink setting not supported]"; 0.30.0+ FlashInfer's XQA decode takes them
        ("nvidia-rtx-pro-6000-blackwell-96gb", "0.19.0", "TRITON_ATTN"),
        ("nvidia-rtx-5090-32gb", "0.33.0", "FLASHINFER"),
    ],
)
def test_a_sink_model_skips_the_backends_that_refuse_sinks(device: str, version: str, backend: str) -> None:
    from app.core.catalog import find_model

    model = find_model("openai/gpt-oss-20b")  # GptOssForCausalLM: sinks on every attention layer
    assert choose(model, find_device(device), version).name == backend
