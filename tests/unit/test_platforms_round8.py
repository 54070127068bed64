"""Platforms, round 8 (issue 22 items 1, 4): a device known by its stack and memory takes that stack's rules.

Sources (read from the wheels, /work/vllm-src/<version>): platforms/rocm.py RocmPlatform.get_device_capability
(a gfx arch, not a CUDA compute capability; _capability_from_gcn_arch), supports_fp8 (on_cdna() or on_rdna()),
_get_backend_priorities (0.19.0+), get_attn_backend_cls (0.10.2-0.18.0).
"""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core.diagnose import diagnose
from app.core.errors import InvalidServeConfigError
from app.core.plan import custom_device
from app.core.specs import GIB


def test_a_custom_rocm_device_has_no_cuda_capability() -> None:
    rocm = custom_device(192.0, "rocm")
    assert (rocm.platform, rocm.compute_capability, rocm.sm, rocm.fp8_kv) == ("rocm", None, None, True)
    assert rocm.name == "Custom 192 GiB GPU (ROCm)"
    assert rocm.memory_total_bytes == 192 * GIB
    npu = custom_device(64.0, "npu")
    assert (npu.platform, npu.compute_capability, npu.fp8_kv) == ("npu", None, False)
    cuda = custom_device(80.0)
    assert (cuda.platform, cuda.compute_capability, cuda.name) == (
        "cuda",
        "9.0",
        "Custom 80 GiB GPU (assumed CUDA SM 9.0)",
    )


def test_the_doctor_predicts_a_rocm_log_on_rocm_rules() -> None:
    # "Automatically detected platform rocm." and a total no catalog ROCm card has (a 48 GB Radeon PRO W7900 reports
    # 47.98 GiB): the device of that size is ROCm's, not a CUDA SM 9.0 card renamed (round 7 kept compute capability
    # 9.0 there). gpt-oss-20b hands its attention sinks, which ROCM_ATTN refuses (supports_sink False), so 0.33.0's
    # _get_backend_priorities [ROCM_ATTN, ..., TRITON_ATTN] runs TRITON_ATTN, 16-token blocks (MultipleOf(16))
    lines = [
        "INFO 11-20 09:12:00 [utils.py:261] non-default args: {'model_tag': 'openai/gpt-oss-20b', "
        "'model': 'openai/gpt-oss-20b', 'max_model_len': 16384}",
        "INFO 11-20 09:12:00 [__init__.py:241] Automatically detected platform rocm.",
        "(EngineCore pid=7) INFO 11-20 09:12:05 [gpu_worker.py:436] Free memory on device (47.21/47.98 GiB) "
        "on startup. Desired GPU memory utilization is (0.9, 43.18 GiB).",
    ]
    d = diagnose(log_text="\n".join(lines) + "\n", metrics_text=None)
    assert d.device_id == "custom-47.98gib"
    assert d.prediction is not None
    assert (d.prediction.attention_backend, d.prediction.block_size) == ("TRITON_ATTN", 16)


def test_a_custom_rocm_device_plans_as_the_rocm_card_of_its_size() -> None:
    # DeepSeek-V3 TP 8 at 0.33.0: a ROCm device of the MI300X's reported total (206,051,056,026 B) plans exactly as
    # the catalog MI300X (TRITON_MLA, hipGraphs budgeted from 0.26.0); the CUDA custom device of that size runs
    # FLASH_ATTN_MLA (SM90) instead
    from app.core.catalog import find_device, find_model
    from app.core.estimate import estimate
    from app.core.specs import ServeConfig

    mi300x = find_device("amd-mi300x-192gb")
    serve = ServeConfig(tensor_parallel_size=8, max_model_len=32_768)
    model = find_model("deepseek-ai/DeepSeek-V3")
    custom = custom_device(mi300x.memory_total_bytes / GIB, "rocm")
    assert custom.memory_total_bytes == mi300x.memory_total_bytes
    on_card = estimate(model=model, device=mi300x, serve=serve, vllm_version="0.33.0")
    on_custom = estimate(model=model, device=custom, serve=serve, vllm_version="0.33.0")
    assert on_custom.attention_backend == on_card.attention_backend == "TRITON_MLA"
    for key in ("cuda_graph_bytes", "kv_cache_bytes", "num_gpu_blocks", "kv_tokens", "block_size"):
        assert getattr(on_custom, key) == getattr(on_card, key), key
    cuda = custom_device(mi300x.memory_total_bytes / GIB)
    assert (
        estimate(model=model, device=cuda, serve=serve, vllm_version="0.33.0").attention_backend
        == "FLASH_ATTN_MLA"
    )


def test_the_cli_takes_the_custom_device_platform(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "estimate",
        "deepseek-ai/DeepSeek-V3",
        "-tp",
        "8",
        "--max-model-len",
        "32768",
        "--device-memory-gib",
    ]
    assert main([*argv, "192", "--device-platform", "rocm", "--vllm-version", "0.33.0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attention_backend"] == "TRITON_MLA"
    assert main([*argv, "192", "--device-platform", "tpu"]) == 2
    assert capsys.readouterr().err.startswith("error: device_platform: must be one of cuda, rocm, npu")
    assert main(["estimate", "llama-3.1-8b", "--device", "h100", "--device-platform", "rocm"]) == 2
    assert capsys.readouterr().err.startswith("error: device_platform: --device-platform goes with")


def _v4_on_ascend(version: str, **serve: object) -> object:
    from app.core.catalog import find_device, find_model
    from app.core.estimate import estimate
    from app.core.specs import ServeConfig

    return estimate(
        model=find_model("deepseek-ai/DeepSeek-V4-Flash"),
        device=find_device("huawei-ascend-910c"),
        serve=ServeConfig(**serve),  # type: ignore[arg-type]
        vllm_version=version,
    )


def test_deepseek_v4_on_ascend_takes_vllm_ascends_own_layout() -> None:
    # vllm-ascend v0.25.1rc1 (= v0.23.0) on an A3 die, cache_config.block_size 128, --dtype auto (bf16):
    # DSV4_BLOCK_SIZES[128] = ((128, 128, 8, 32), (16,640, 131,072)). V4-Flash: 43 layers, 21 C4, 20 C128, head 512,
    # index_head_dim 128, window 128. Pages: latent 128 x 512 x 2 = 131,072; indexer 128 x (128 + 2) = 16,640;
    # SWA 128 x 512 x 2 = 131,072; C4 kv state 8 x 2,048 x 4 = 65,536 -> t2 131,072; C4 index state 8 x 512 x 4 =
    # 16,384 -> t1 16,640; C128 state 32 x 1,024 x 4 = 131,072.
    # Tuples [21, 20, 43, 21, 20], _approximate_gcd from 21: d 22 pads 1+2+1+1+2 = 7 (d 21: 22, d 23: 13) -> T 22;
    # SWA 43 -> cdiv(43, 22) = 2 groups (22, 21). One block id: 22 x (131,072 + 16,640) = 3,249,664 B.
    # 20 GiB: 21,474,836,480 // 3,249,664 = 6,608 blocks.
    # A request at 65,536 with 8,192 in flight: C4 cdiv(65,536, 512) = 128, C128 cdiv(65,536, 16,384) = 4,
    # SWA cdiv(127 + 8,192, 128) + 1 = 66 (x 2), C4 state cdiv(7 + 8,192, 8) + 1 = 1,026, C128 state
    # cdiv(127 + 8,192, 32) + 1 = 261. vLLM 0.25.1 get_max_concurrency_for_kv_cache_config: cdiv(sum_g b_g x page_g,
    # page_0) with each group's summed page: (128 x 3,101,952 + 4 x 2,621,440 + 66 x 2,883,584 + 66 x 2,752,512
    # + 1,026 x 3,101,952 + 261 x 2,621,440) = 4,646,316,544 -> cdiv(., 3,101,952) = 1,498; 6,608 / 1,498 = 4.411x,
    # int(4.41121 x 65,536) = 289,093 tokens
    from app.core.specs import GIB

    est = _v4_on_ascend(
        "0.25.0",
        tensor_parallel_size=8,
        max_model_len=65_536,
        max_num_batched_tokens=8_192,
        kv_cache_memory_bytes=20 * GIB,
    )
    assert (est.attention_backend, est.block_size, est.num_gpu_blocks) == ("ASCEND_DSA", 128, 6_608)  # type: ignore[attr-defined]
    groups = [(g.kind, g.num_layers, g.block_size, g.blocks_per_request) for g in est.groups]  # type: ignore[attr-defined]
    assert groups == [
        ("mla", 42, 512, 128),
        ("mla", 20, 16_384, 4),
        ("sliding", 22, 128, 66),
        ("sliding", 21, 128, 66),
        ("sliding", 42, 8, 1_026),
        ("sliding", 20, 32, 261),
    ]
    assert round(est.max_concurrency, 2) == 4.41  # type: ignore[attr-defined]
    assert est.kv_tokens == 289_093  # type: ignore[attr-defined]
    assert not any("deepseek_v4" in str(w) for w in est.warnings)  # type: ignore[attr-defined]


def test_deepseek_v4_on_ascend_outside_the_read_releases_keeps_the_warning() -> None:
    # 0.22.x: no vllm-ascend release before v0.23.0 was read; 0.26.0+: main after v0.25.1rc1 regroups (changelog)
    for version in ("0.22.0", "0.26.0"):
        est = _v4_on_ascend(version, tensor_parallel_size=8, max_model_len=65_536)
        assert est.attention_backend == "ASCEND"  # type: ignore[attr-defined]
        assert any("not exact" in str(w) for w in est.warnings)  # type: ignore[attr-defined]


def test_deepseek_v4_on_ascend_refuses_a_block_size_dsv4_block_sizes_lacks() -> None:
    # layer.py DSV4_BLOCK_SIZES has 128, 64, 32 only: DSV4_BLOCK_SIZES[96] is a KeyError at model build; 64 is sized
    # (prefix caching and chunked prefill off, or vllm-ascend forces 128)
    off = {"enable_prefix_caching": False, "enable_chunked_prefill": False}
    with pytest.raises(InvalidServeConfigError) as info:
        _v4_on_ascend("0.25.0", tensor_parallel_size=8, max_model_len=8_192, block_size=96, **off)
    assert info.value.field == "block_size"
    assert "32, 64, 128" in info.value.message
    assert (
        _v4_on_ascend("0.25.0", tensor_parallel_size=8, max_model_len=8_192, block_size=64, **off).block_size
        == 64
    )  # type: ignore[attr-defined]
