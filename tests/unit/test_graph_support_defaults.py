"""The CUDA-graph support of vLLM's default CUDA backends, by release and device (issue 22 rules9 item 1).

Read from the wheels (`pip download --no-deps vllm==X`, unzipped outside the repository); the table is
app/core/graph_support.py:
- v1/attention/backends/flash_attn.py FlashAttentionMetadataBuilder._cudagraph_support (0.11.0-0.32.0): ALWAYS
  "if get_flash_attn_version() == 3 else UNIFORM_BATCH", a class attribute read at import; fa_utils.py
  get_flash_attn_version picks FA3 on capability 9.x, FA2 on 8.x and 12.x, FA4 on 10.x from 0.17.0. 0.33.0:
  "in (3, 4)", so FA4 on 10.x is ALWAYS too.
- flashinfer.py: 0.11.0 UNIFORM_SINGLE_TOKEN_DECODE; 0.13.0-0.27.1 get_cudagraph_support UNIFORM_BATCH when
  can_use_trtllm_attention (utils/flashinfer.py supports_trtllm_attention: capability 10.x), else
  UNIFORM_SINGLE_TOKEN_DECODE; 0.30.0+ also on the XQA decode devices (9.0, 12.x); 0.33.0 _use_fa2_native_decode
  UNIFORM_BATCH below 9.0.
- mla/flashattn_mla.py, flashmla.py, flashmla_sparse.py UNIFORM_BATCH (0.11.0-0.33.0); mla/indexer.py
  DeepseekV32IndexerMetadataBuilder UNIFORM_SINGLE_TOKEN_DECODE (0.11.0-0.15.0), UNIFORM_BATCH (0.17.0-0.27.1),
  ALWAYS (0.30.0+).
- config/compilation.py CompilationConfig.resolve_cudagraph_mode_and_sizes (0.33.0; 0.11.0-0.19.0
  gpu_model_runner._check_and_update_cudagraph_mode): mixed_mode() FULL below ALWAYS -> FULL_AND_PIECEWISE (attention
  split) with "CUDAGraphMode.FULL is not supported with <backend> backend (support: <level>); setting
  cudagraph_mode=FULL_AND_PIECEWISE"; a spec-decode FULL decode graph below UNIFORM_BATCH -> PIECEWISE.
"""

from __future__ import annotations

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.specs import ServeConfig, SpeculativeConfig
from tests.specs_factory import deepseek_v3_like

LLAMA = find_model("meta-llama/Llama-3.1-8B-Instruct")
A100 = find_device("nvidia-a100-sxm4-80gb")  # 8.0
H100 = find_device("nvidia-h100-sxm-80gb")  # 9.0
B200 = find_device("nvidia-b200")  # 10.0
H200 = find_device("nvidia-h200-141gb")
# budget.cuda_graph_bytes for Llama-3.1-8B (32 layers) at the default 51 sizes: FULL_AND_PIECEWISE's figure, and
# FULL / PIECEWISE's half (budget.ONE_GRAPH_A_SIZE_SHARE); the test pins the mode, not this fitted figure
LOWERED = "setting cudagraph_mode=FULL_AND_PIECEWISE"


def _line(backend_class: str, level: str) -> str:
    return (
        f"CUDAGraphMode.FULL is not supported with {backend_class} backend (support: AttentionCGSupport.{level}); "
        f"{LOWERED}"
    )


def _llama(device, version: str, **serve: object):  # type: ignore[no-untyped-def]
    return estimate(
        model=LLAMA, device=device, serve=ServeConfig(max_model_len=8192, **serve), vllm_version=version
    )


@pytest.mark.parametrize("version", ["0.11.0", "0.19.0", "0.32.0", "0.33.0"])
def test_full_on_flash_attention_by_fa_version(version: str) -> None:
    # A100: FA2 -> UNIFORM_BATCH, so -cc FULL runs FULL_AND_PIECEWISE (the default's graphs); H100: FA3 -> ALWAYS,
    # FULL is kept and captures one graph a size (half the default's figure)
    a100, a100_default = _llama(A100, version, cudagraph_mode="FULL"), _llama(A100, version)
    assert a100.attention_backend == "FLASH_ATTN"
    assert _line("FlashAttentionBackend", "UNIFORM_BATCH") in a100.log_lines
    assert a100.cuda_graph_bytes == a100_default.cuda_graph_bytes
    h100, h100_default = _llama(H100, version, cudagraph_mode="FULL"), _llama(H100, version)
    assert h100.attention_backend == "FLASH_ATTN"
    assert not any(LOWERED in line for line in h100.log_lines)
    assert h100.cuda_graph_bytes == h100_default.cuda_graph_bytes // 2


@pytest.mark.parametrize(
    ("version", "level"),
    [("0.11.0", "UNIFORM_SINGLE_TOKEN_DECODE"), ("0.19.0", "UNIFORM_BATCH"), ("0.33.0", "UNIFORM_BATCH")],
)
def test_full_on_flashinfer_is_lowered(version: str, level: str) -> None:
    # B200 runs FLASHINFER; never ALWAYS, so FULL becomes FULL_AND_PIECEWISE in every release
    est = _llama(B200, version, cudagraph_mode="FULL")
    assert est.attention_backend == "FLASHINFER"
    assert _line("FlashInferBackend", level) in est.log_lines


def test_spec_decode_on_flashinfer_before_trtllm_support() -> None:
    # 2 ngram tokens on a B200: 0.11.0's FlashInfer is UNIFORM_SINGLE_TOKEN_DECODE -> PIECEWISE; 0.19.0's
    # get_cudagraph_support is UNIFORM_BATCH on 10.x (TRTLLM decode) -> FULL_AND_PIECEWISE kept
    spec = SpeculativeConfig(method="ngram", num_speculative_tokens=2)
    old, new = (
        _llama(B200, "0.11.0", speculative_config=spec),
        _llama(B200, "0.19.0", speculative_config=spec),
    )
    assert (
        "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode for attention backend FlashInferBackend "
        "(support: AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE"
    ) in old.log_lines
    assert not any("cudagraph_mode=" in line for line in new.log_lines)
    # PIECEWISE is half; 0.11.0 steps its default grid by 8 (67 sizes where 0.19.0 counts 51):
    # 978,006,999 // 2 x 67 / 51 = 642,416,362 B
    assert new.cuda_graph_bytes == 978_006_999 and old.cuda_graph_bytes == 642_416_362


@pytest.mark.parametrize("version", ["0.19.0", "0.33.0"])
def test_full_on_flash_attention_mla(version: str) -> None:
    # DeepSeek-V3-like at TP 8 on H200: FLASH_ATTN_MLA (UNIFORM_BATCH) -> FULL_AND_PIECEWISE
    est = estimate(
        model=deepseek_v3_like(),
        device=H200,
        serve=ServeConfig(tensor_parallel_size=8, cudagraph_mode="FULL"),
        vllm_version=version,
    )
    assert est.attention_backend == "FLASH_ATTN_MLA"
    assert _line("FlashAttnMLABackend", "UNIFORM_BATCH") in est.log_lines


@pytest.mark.parametrize(("version", "lowered"), [("0.15.0", True), ("0.17.0", False)])
def test_the_sparse_indexer_takes_part_in_the_minimum(version: str, lowered: bool) -> None:
    # DeepSeek-V3.2 (index_topk: an indexer cache beside every MLA layer) at TP 8 on H200 with 2 ngram tokens: the
    # indexer's UNIFORM_SINGLE_TOKEN_DECODE (0.15.0) lowers FULL_AND_PIECEWISE to PIECEWISE although FLASHMLA_SPARSE
    # is UNIFORM_BATCH; 0.17.0's indexer is UNIFORM_BATCH, so the mode stands
    serve = ServeConfig(
        tensor_parallel_size=8,
        max_model_len=8192,
        speculative_config=SpeculativeConfig(method="ngram", num_speculative_tokens=2),
    )
    est = estimate(
        model=find_model("deepseek-ai/DeepSeek-V3.2"), device=H200, serve=serve, vllm_version=version
    )
    line = (
        "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode for attention backend "
        "DeepseekV32IndexerBackend (support: AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting "
        "cudagraph_mode=PIECEWISE"
    )
    assert est.attention_backend == "FLASHMLA_SPARSE"
    assert (line in est.log_lines) is lowered
