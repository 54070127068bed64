"""vLLM's automatic cudagraph-mode downgrade, PIECEWISE graph memory as its own term, and the Mamba-block check on
the lowered mode (issue 22 item 1, rules8 round 8).

Read from the wheels (`pip download --no-deps vllm==X`):
- 0.10.2-0.19.0 v1/worker/gpu_model_runner.py GPUModelRunner._check_and_update_cudagraph_mode and 0.20.0-0.33.0
  config/compilation.py CompilationConfig.resolve_cudagraph_mode_and_sizes (the same steps): the lowest
  AttentionCGSupport over the model's backends; FULL below ALWAYS -> FULL_AND_PIECEWISE when
  splitting_ops_contain_attention() (FULL with NEVER: ValueError); a decode FULL graph with NEVER -> PIECEWISE
  "because attention is compiled piecewise"; spec decode (uniform_decode_query_len > 1) below UNIFORM_BATCH ->
  PIECEWISE. Then (0.20.2+) the Mamba-block check, on the lowered mode.
- the levels: 0.19.0 mla_attention.py MLACommonMetadataBuilder sets none (AttentionMetadataBuilder's NEVER), so
  TritonMLA is NEVER through 0.21.0 and UNIFORM_BATCH from 0.22.0 (triton_mla.py); cutlass_mla.py and
  linear_attn.py UNIFORM_SINGLE_TOKEN_DECODE (0.14.0-0.33.0).
- a real log of it: tests/data/logs/real/v1_kimi_linear_tp2_120k.log (vLLM 0.11-era, Kimi-Linear on TritonMLA):
  "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with TritonMLABackend backend (support:
  AttentionCGSupport.NEVER); setting cudagraph_mode=PIECEWISE because attention is compiled piecewise".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core import budget
from app.core.catalog import find_device, find_model
from app.core.errors import PlannerError
from app.core.estimate import ErrorKind, estimate
from app.core.specs import ServeConfig, SpeculativeConfig
from tests.specs_factory import deepseek_v3_like

A100 = find_device("nvidia-a100-sxm4-80gb")
B200 = find_device("nvidia-b200")
H200 = find_device("nvidia-h200-141gb")
REAL_LOG = Path(__file__).parents[1] / "data" / "logs" / "real" / "v1_kimi_linear_tp2_120k.log"
TRITON_MLA_LINE = (
    "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with TritonMLABackend backend (support: "
    "AttentionCGSupport.NEVER); setting cudagraph_mode=PIECEWISE because attention is compiled piecewise"
)


def _mla_on_a100(version: str, **serve: object):  # type: ignore[no-untyped-def]
    return estimate(
        model=deepseek_v3_like(),
        device=A100,
        serve=ServeConfig(tensor_parallel_size=8, **serve),
        vllm_version=version,
    )


def test_triton_mla_lowers_the_default_to_piecewise_until_0_22() -> None:
    # DeepSeek-V3-like MLA on an A100 (SM80): no FlashMLA / FlashAttention-MLA there, TRITON_MLA runs
    old, new = _mla_on_a100("0.19.0"), _mla_on_a100("0.22.1")
    assert old.attention_backend == new.attention_backend == "TRITON_MLA"
    # the line vLLM prints, word for word as the real Kimi-Linear log shows it
    assert TRITON_MLA_LINE in old.log_lines
    assert TRITON_MLA_LINE in REAL_LOG.read_text(encoding="utf-8")
    assert any("lowers cudagraph_mode FULL_AND_PIECEWISE to PIECEWISE" in w for w in old.warnings)
    # PIECEWISE captures one graph a size where FULL_AND_PIECEWISE captures two (budget.ONE_GRAPH_A_SIZE_SHARE):
    # the model's figure at 0.22.1 (FULL_AND_PIECEWISE kept: TritonMLA UNIFORM_BATCH) is 1,478,402,898 B for the 61
    # layers at TP 8, 0.19.0's half of it
    assert new.cuda_graph_bytes == 1_478_402_898 and not any(
        "cudagraph_mode=" in line for line in new.log_lines
    )
    assert old.cuda_graph_bytes == 1_478_402_898 // 2


def test_spec_decode_below_uniform_batch_runs_piecewise() -> None:
    # DeepSeek-V3-like on B200 at 0.30.0 with qk_nope_head_dim 256, which FLASHINFER_MLA refuses (supports_combination:
    # [64, 128, 192]): CUTLASS_MLA (UNIFORM_SINGLE_TOKEN_DECODE) with 2 speculative tokens
    spec = SpeculativeConfig(method="ngram", num_speculative_tokens=2)
    mla = deepseek_v3_like().mla
    assert mla is not None
    wide = deepseek_v3_like().model_copy(update={"mla": mla.model_copy(update={"qk_nope_head_dim": 256})})
    est = estimate(
        model=wide,
        device=B200,
        serve=ServeConfig(tensor_parallel_size=8, speculative_config=spec),
        vllm_version="0.30.0",
    )
    assert est.attention_backend == "CUTLASS_MLA"
    assert (
        "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode for attention backend CutlassMLABackend "
        "(support: AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE"
    ) in est.log_lines
    # without spec decode the mode stands; 0.33.0 runs FLASHINFER_MLA (ALWAYS) on SM100 and keeps it either way
    plain = estimate(
        model=wide, device=B200, serve=ServeConfig(tensor_parallel_size=8), vllm_version="0.30.0"
    )
    assert not any("cudagraph_mode=" in line for line in plain.log_lines)
    # PIECEWISE: half a size's figure (budget.ONE_GRAPH_A_SIZE_SHARE). Sizes (0.30.0 config/vllm.py
    # _set_cudagraph_sizes, SM 10.x cap 1,024): plain the grid to 1,024 = 83; with 2 draft tokens also
    # 3 x {1, 2, 4, 8 ... 248, 256 ... 336} (the request counts with 3n <= 1,024), off the grid 3, 6, 12 and 3n for
    # n = 88 ... 248 not a multiple of 16 (11) -> 83 + 14 = 97
    assert plain.cuda_graph_bytes == budget.cuda_graph_bytes(
        num_layers_on_rank=61, enforce_eager=False, captured_sizes=83, decode_sizes=83
    )
    assert est.cuda_graph_bytes == budget.cuda_graph_bytes(
        num_layers_on_rank=61, enforce_eager=False, captured_sizes=97, decode_sizes=97, mode="PIECEWISE"
    )
    new = estimate(
        model=deepseek_v3_like(),
        device=B200,
        serve=ServeConfig(tensor_parallel_size=8, speculative_config=spec),
        vllm_version="0.33.0",
    )
    assert new.attention_backend == "FLASHINFER_MLA" and not any(
        "cudagraph_mode=" in x for x in new.log_lines
    )


def test_full_is_lowered_or_refused_by_the_backends_support() -> None:
    # FULL with TritonMLA at 0.22.1 (UNIFORM_BATCH, not ALWAYS): attention is split -> FULL_AND_PIECEWISE
    est = _mla_on_a100("0.22.1", cudagraph_mode="FULL")
    assert (
        "CUDAGraphMode.FULL is not supported with TritonMLABackend backend (support: AttentionCGSupport.UNIFORM_BATCH); "
        "setting cudagraph_mode=FULL_AND_PIECEWISE"
    ) in est.log_lines
    # at 0.19.0 (NEVER) vLLM raises instead
    with pytest.raises(PlannerError) as err:
        _mla_on_a100("0.19.0", cudagraph_mode="FULL")
    assert err.value.field == "cudagraph_mode" and "please try cudagraph_mode=PIECEWISE" in str(err.value)
    # PIECEWISE asked: nothing to lower
    assert not any(
        "setting cudagraph_mode" in x for x in _mla_on_a100("0.19.0", cudagraph_mode="PIECEWISE").log_lines
    )


def test_the_mamba_block_check_runs_on_the_lowered_mode() -> None:
    # MiniMax-M1 (lightning linear attention: MambaSpec state, linear_attn.py UNIFORM_SINGLE_TOKEN_DECODE) at TP 8 on
    # H200, vLLM 0.22.1 (the last known release that serves it), max_num_seqs 4,096 above the pool's 2,581 blocks:
    # FULL_AND_PIECEWISE refuses it ("exceeds available Mamba cache blocks"); with 2 speculative tokens vLLM first
    # lowers the mode to PIECEWISE, whose graphs need no block per sequence, so the same start goes ahead
    model = find_model("MiniMaxAI/MiniMax-M1-80k")

    def run(spec: SpeculativeConfig | None):  # type: ignore[no-untyped-def]
        serve = ServeConfig(
            tensor_parallel_size=8, max_model_len=32_768, max_num_seqs=4_096, speculative_config=spec
        )
        return estimate(model=model, device=H200, serve=serve, vllm_version="0.22.1")

    full = run(None)
    assert full.error_kind == ErrorKind.MAMBA_BLOCKS and full.num_gpu_blocks == 2_581
    lowered = run(SpeculativeConfig(method="ngram", num_speculative_tokens=2))
    assert lowered.fits and lowered.error_kind is None
    assert any("setting cudagraph_mode=PIECEWISE" in line for line in lowered.log_lines)
    assert lowered.cuda_graph_bytes == full.cuda_graph_bytes // 2


def test_pooling_models_run_piecewise() -> None:
    # 0.14.0+ config/vllm.py VllmConfig.__post_init__: a pooling model (LlamaModel: vLLM's embedding registry) with
    # full graphs -> "Pooling models do not support full cudagraphs. Overriding cudagraph_mode to PIECEWISE.";
    # 0.11.0 config/__init__.py made only the default PIECEWISE, silently. dense(): 32 layers, 1,024 sequences:
    # PIECEWISE is half the fitted 978,006,999 B -> 489,003,499 B. 0.11.0 steps its default grid by 8 (67 sizes where
    # 0.14+ count 51; config/__init__.py): 489,003,499 x 67 / 51 = 642,416,362 B
    from tests.specs_factory import H100, dense

    model = dense().model_copy(update={"architecture": "LlamaModel"})
    line = "Pooling models do not support full cudagraphs. Overriding cudagraph_mode to PIECEWISE."
    new = estimate(model=model, device=H100, serve=ServeConfig(), vllm_version="0.33.0")
    assert line in new.log_lines and new.cuda_graph_bytes == 489_003_499
    old = estimate(model=model, device=H100, serve=ServeConfig(), vllm_version="0.11.0")
    assert line not in old.log_lines and old.cuda_graph_bytes == 642_416_362
    # the same checkpoint as a generative model keeps FULL_AND_PIECEWISE
    assert estimate(
        model=dense(), device=H100, serve=ServeConfig(), vllm_version="0.33.0"
    ).cuda_graph_bytes == (978_006_999)


def test_a_pooling_model_asked_full_stays_piecewise() -> None:
    # 0.33.0: VllmConfig.__post_init__ overrides a pooling model's FULL to PIECEWISE at config time; the backends'
    # check (CompilationConfig.resolve_cudagraph_mode_and_sizes, at KV-cache init) then sees PIECEWISE, whose
    # mixed_mode() is not FULL, so nothing raises it back (round 8 set FULL_AND_PIECEWISE from the FULL asked).
    # LlamaModel on an A100: FLASH_ATTN (FA2, UNIFORM_BATCH). PIECEWISE: half of 978,006,999 B -> 489,003,499 B
    from tests.specs_factory import dense

    model = dense().model_copy(update={"architecture": "LlamaModel"})
    est = estimate(model=model, device=A100, serve=ServeConfig(cudagraph_mode="FULL"), vllm_version="0.33.0")
    assert (
        "Pooling models do not support full cudagraphs. Overriding cudagraph_mode to PIECEWISE."
        in est.log_lines
    )
    assert not any("setting cudagraph_mode=FULL_AND_PIECEWISE" in line for line in est.log_lines)
    assert est.cuda_graph_bytes == 489_003_499
