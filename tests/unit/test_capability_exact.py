"""Blackwell Ultra (B300 / GB300, capability 10.3) before 0.13: vLLM tested exactly 10.0, not the 10.x family.

Read from the wheels (`pip download --no-deps vllm==X`), platforms/cuda.py:
- 0.10.1.1 and 0.11.0 CudaPlatform.get_attn_backend_cls: FlashInfer leads non-MLA models only
  ``if cls.is_device_capability(100)`` (10.0 exactly); any other 8.0+ device takes FlashAttention, or Triton
  for a model with sinks (``has_sink ... and not cls.is_device_capability(90)``). MLA: CUTLASS_MLA /
  FlashInfer-MLA only on ``is_device_capability(100)``; FlashMLA needs ``is_flashmla_supported()``
  (attention/ops/flashmla.py: ``get_device_capability()[0] != 9`` -> unsupported); FlashAttention-MLA needs
  ``flash_attn_supports_mla()`` (fa_utils.py: major == 9); else TRITON_MLA.
- 0.11.0 check_and_update_config: ``is_device_capability(100)`` -> use_cutlass_mla (block 128); else
  use_flashmla, forced to 64 only when is_flashmla_supported() -> on 10.3 nothing is forced, block stays 16.
- 0.13.0 _get_backend_priorities ``device_capability.major == 10`` and 0.14.0 check_and_update_config
  ``is_device_capability_family(100)``: from there 10.3 is planned as 10.0.
"""

from __future__ import annotations

import pytest

from app.core.errors import PlannerError
from tests.unit.test_current_configs_0_33 import _est

DSV3, LLAMA, GPT_OSS = "deepseek-ai--DeepSeek-V3", "meta-llama--Meta-Llama-3.1-8B", "openai--gpt-oss-20b"


@pytest.mark.parametrize("device", ["nvidia-b300", "nvidia-gb300"])
@pytest.mark.parametrize(
    ("name", "tp", "version", "backend", "block"),
    [
        # MLA on 10.3: not 10.0 (no CUTLASS / FlashInfer MLA), not 9.x (no FlashMLA, no FA-MLA) -> TRITON_MLA, and
        # check_and_update_config's FlashMLA branch forces nothing (is_flashmla_supported False): DEFAULT 16
        (DSV3, 8, "0.11.0", "TRITON_MLA", 16),
        # 0.10.1.1 get_attn_backend_cls: not 10.0 and `block_size != 64` -> TRITON_MLA
        (DSV3, 8, "0.10.2", "TRITON_MLA", 16),
        # 0.14.0: is_device_capability_family(100) -> CUTLASS_MLA forced to 128 on 10.3 too
        (DSV3, 8, "0.14.0", "CUTLASS_MLA", 128),
        # 0.13.0 check_and_update_config: is_device_capability_family(100) and not use_sparse -> use_cutlass_mla,
        # "block_size % 128 != 0" -> 128 (review9a: planned TRITON_MLA at 16 with 0.11.0's rules)
        (DSV3, 8, "0.13.0", "CUTLASS_MLA", 128),
        # non-MLA: not 10.0 -> FlashAttention (8.0+), its MultipleOf(16) keeps 16
        (LLAMA, 1, "0.11.0", "FLASH_ATTN", 16),
        (LLAMA, 1, "0.10.2", "FLASH_ATTN", 16),
        (LLAMA, 1, "0.14.0", "FLASHINFER", 16),  # 0.13.0+ major == 10
        (
            LLAMA,
            1,
            "0.13.0",
            "FLASHINFER",
            16,
        ),  # 0.13.0 _get_backend_priorities "device_capability.major == 10"
        # 0.13.0 flashinfer.py supports_sink with TRTLLM attention (10.x): FlashInfer, first on 10.x, takes the sinks
        (GPT_OSS, 1, "0.13.0", "FLASHINFER", 16),
        # sinks (gpt-oss) off 9.0 -> TRITON_ATTN; FlashInfer never runs there by default before 0.13
        (GPT_OSS, 1, "0.11.0", "TRITON_ATTN", 16),
        (GPT_OSS, 1, "0.10.2", "TRITON_ATTN", 16),
    ],
)
def test_capability_10_3_before_0_13(
    device: str, name: str, tp: int, version: str, backend: str, block: int
) -> None:
    est = _est(name, device, tp, version=version)
    assert (est.attention_backend, est.block_size) == (backend, block)
    forcing = [line for line in est.log_lines if line.startswith("Forcing")]
    assert forcing == (
        ["Forcing kv cache block size to 128 for CUTLASS_MLA backend."] if block == 128 else []
    )


@pytest.mark.parametrize(
    ("name", "tp", "backend", "block"),
    [(DSV3, 8, "CUTLASS_MLA", 128), (LLAMA, 1, "FLASHINFER", 16), (GPT_OSS, 1, "FLASHINFER", 16)],
)
def test_capability_10_0_keeps_the_blackwell_lists_at_0_11(
    name: str, tp: int, backend: str, block: int
) -> None:
    # B200 is 10.0: is_device_capability(100) holds -> CUTLASS_MLA at 128, FlashInfer first (sinks included)
    est = _est(name, "nvidia-b200", tp, version="0.11.0")
    assert (est.attention_backend, est.block_size) == (backend, block)


@pytest.mark.parametrize(
    ("device", "version", "backend"),
    [
        # 0.11.0 get_attn_backend_cls: "(has_sink or use_fp8_kv_cache) and not cls.is_device_capability(90)" ->
        # TRITON_ATTN on 10.3 (B300), 12.0 (RTX 5090), 12.1 (GB10), 8.9 (L40S) (review9a: FLASH_ATTN / FLASHINFER)
        ("nvidia-b300", "0.11.0", "TRITON_ATTN"),
        ("nvidia-rtx-5090-32gb", "0.11.0", "TRITON_ATTN"),
        ("nvidia-gb10", "0.11.0", "TRITON_ATTN"),
        ("nvidia-l40s-48gb", "0.11.0", "TRITON_ATTN"),
        # 10.0: "Prefer FlashInfer for Blackwell GPUs" returns before that branch; 9.0 is excluded from it
        ("nvidia-b200", "0.11.0", "FLASHINFER"),
        ("nvidia-h100-sxm-80gb", "0.11.0", "FLASH_ATTN"),
        # 0.13.0 walks _get_backend_priorities: 10.x FlashInfer first (fp8 on its TRTLLM path)
        ("nvidia-b300", "0.13.0", "FLASHINFER"),
    ],
)
def test_an_fp8_cache_takes_the_sinks_path_at_0_11(device: str, version: str, backend: str) -> None:
    est = _est(LLAMA, device, 1, version=version, kv_cache_dtype="fp8")
    assert (est.attention_backend, est.block_size) == (backend, 16)


def test_an_fp8_cache_on_ampere_at_0_11_has_no_backend() -> None:
    # 0.11.0 sends it to TRITON_ATTN, whose fp8e4nv cache cannot compile below capability 8.9 (vllm#26431, an
    # RTX 3090 on V1: "type fp8e4nv not supported in this architecture"): refused, naming the field
    with pytest.raises(PlannerError) as err:
        _est(LLAMA, "nvidia-a100-sxm4-80gb", 1, version="0.11.0", kv_cache_dtype="fp8")
    assert err.value.field == "kv_cache_dtype"


@pytest.mark.parametrize("version", ["0.11.1", "0.12.0"])
@pytest.mark.parametrize("device", ["nvidia-l40s-48gb", "nvidia-a100-sxm4-80gb"])
def test_the_fp8_sinks_path_is_0_11_0s_only(device: str, version: str) -> None:
    # review10: the 0.11.1 and 0.12.0 wheels' platforms/cuda.py have no "(has_sink or use_fp8_kv_cache)" branch:
    # 0.12.0's _get_backend_priorities (not 10.x) is FLASH_ATTN, FLASHINFER, TRITON_ATTN, and FlashAttention 2 on
    # 8.x takes no fp8 cache, so FlashInfer at 16 on an L40S (8.9) and an A100 (8.0), not TRITON_ATTN or a refusal
    est = _est(LLAMA, device, 1, version=version, kv_cache_dtype="fp8")
    assert (est.attention_backend, est.block_size) == ("FLASHINFER", 16)
