"""app.core.budget: the profiling peak of MoE, vision-language and hybrid models (issue 16 item 5).

Hand-worked terms from vLLM 0.19.0's code (the arithmetic is in each comment), then regression checks on
named real start-up logs: the record inputs and the printed figures are written out here with their
source, so the test reads nothing outside the repository.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.core import budget as B
from app.core import catalog
from app.core.estimate import estimate
from app.core.specs import GIB, ServeConfig
from bench import calibration

# ------------------------------------------------------------------------------------------------
# fused-MoE workspace
# ------------------------------------------------------------------------------------------------


def test_moe_workspace_deepseek_v2_lite_hand_worked() -> None:
    # DeepSeek-V2-Lite: hidden K = 2048, moe_intermediate I = 1408, top-k 6; profile run M = 8192 tokens.
    # modular_kernel.py `_allocate_buffers` (0.19.0: one chunk, M_chunk = M_full = 8192) asks the workspace
    # manager for two buffers:
    #   TritonExperts.workspace_shapes (N = w1 rows = 2I = 2816):
    #     workspace13 = M x topk x max(N/2, K) = 8192 x 6 x max(1408, 2048) = 100,663,296 elements
    #     fused out   = M x K = 8192 x 2048 = 16,777,216 elements (shares workspace13's buffer, smaller)
    #     workspace2  = M x topk x max(N, K)   = 8192 x 6 x max(2816, 2048) = 138,412,032 elements
    #   in bf16 (2 B): 201,326,592 + 276,824,064 = 478,150,656 B (both already multiples of 256)
    model = catalog.find_model("deepseek-ai/DeepSeek-V2-Lite-Chat")
    got = B.moe_workspace_bytes(model=model, tensor_parallel_size=1, num_tokens=8192, act_dtype_bytes=2)
    assert got == 478_150_656


def test_moe_workspace_splits_the_intermediate_by_tp() -> None:
    # TP 2: I = 1408 / 2 = 704 per rank; workspace13 = 8192 x 6 x max(704, 2048) x 2 B = 201,326,592;
    # workspace2 = 8192 x 6 x max(1408, 2048) x 2 B = 201,326,592; total 402,653,184 B
    model = catalog.find_model("deepseek-ai/DeepSeek-V2-Lite-Chat")
    got = B.moe_workspace_bytes(model=model, tensor_parallel_size=2, num_tokens=8192, act_dtype_bytes=2)
    assert got == 402_653_184


def test_llama_4_scout_chunked_hybrid_gets_workspace_and_encoder_terms() -> None:
    # Llama-4-Scout (chunked local attention + MoE + vision): the profile run skips attention, so the
    # chunked-local metadata adds nothing; what it does hold is the MoE workspace and the encoder outputs.
    # TP 4, MNBT 8192: I = 8192 / 4 = 2048, K = 5120, top-1:
    #   workspace13 = 8192 x 1 x max(2048, 5120) = 41,943,040 elements (= the fused output M x K)
    #   workspace2  = 8192 x 1 x max(4096, 5120) = 41,943,040 elements
    #   x 2 B = 167,772,160 B
    # encoder outputs: 8192 embeddings x 5120 x 2 B = 83,886,080 B (first PP stage)
    model = catalog.find_model("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    assert model.attention_chunk_tokens == 8192
    ws = B.moe_workspace_bytes(model=model, tensor_parallel_size=4, num_tokens=8192, act_dtype_bytes=2)
    assert ws == 167_772_160
    enc = B.encoder_outputs_bytes(model=model, serve=ServeConfig(), num_tokens=8192, act_dtype_bytes=2)
    assert enc == 83_886_080


def test_dense_model_has_no_moe_workspace() -> None:
    model = catalog.find_model("meta-llama/Llama-3.1-8B-Instruct")
    assert B.moe_workspace_bytes(model=model, tensor_parallel_size=1, num_tokens=8192, act_dtype_bytes=2) == 0


def test_moe_workspace_rides_on_the_sampler_phase() -> None:
    # The workspace manager never frees, so the persistent workspace adds to max(forward, sampler):
    # the activation peak with it minus the one without it is exactly the workspace.
    model = catalog.find_model("deepseek-ai/DeepSeek-V2-Lite-Chat")
    serve = ServeConfig()
    with_moe = B.activation_peak_bytes(
        model=model,
        serve=serve,
        max_num_batched_tokens=8192,
        max_num_seqs=1024,
        is_last_stage=True,
        sampler_logit_copies=3.75,
        act_dtype_bytes=2,
    )
    no_moe = model.model_copy(update={"num_experts": 0, "intermediate_size": 10944})
    without = B.activation_peak_bytes(
        model=no_moe,
        serve=serve,
        max_num_batched_tokens=8192,
        max_num_seqs=1024,
        is_last_stage=True,
        sampler_logit_copies=3.75,
        act_dtype_bytes=2,
    )
    # the sampler (1024 rows x 102,400 vocab x 4 B x 3.75 = 1.46 GiB) dominates both forwards
    assert with_moe - without == 478_150_656


# ------------------------------------------------------------------------------------------------
# MXFP4 expert padding
# ------------------------------------------------------------------------------------------------


def test_mxfp4_marlin_padding_gpt_oss_20b_on_a100() -> None:
    # A100 is SM80: triton_kernels need SM90+, so vLLM 0.19.0 falls to Marlin, which pads hidden to 256
    # (2880 -> 3072) and intermediate to 128 (2880 -> 2944) (oracle/mxfp4.py).
    # Per expert: w13 (2I x H) + w2 (H x I) = 3 x H x I values:
    #   3 x (3072 x 2944 - 2880 x 2880) = 3 x (9,043,968 - 8,294,400) = 2,248,704 extra values
    # x 24 layers x 32 experts = 1,727,004,672 values x (0.5 B + 1/32 B of e8m0 scale) = 917,471,232 B
    model = catalog.find_model("openai/gpt-oss-20b")
    a100 = catalog.find_device("a100")
    got = B.mxfp4_expert_padding_bytes(
        model=model, quant=model.quantization, device=a100, tensor_parallel_size=1, num_layers=24
    )
    assert got == 917_471_232


def test_mxfp4_triton_on_h100_pads_nothing_for_gpt_oss() -> None:
    # SM90: the Triton backend only rounds the intermediate to 64; 2880 = 45 x 64, hidden kept
    model = catalog.find_model("openai/gpt-oss-20b")
    h100 = catalog.find_device("h100")
    assert B.mxfp4_padding(device=h100)[0] == "triton"
    got = B.mxfp4_expert_padding_bytes(
        model=model, quant=model.quantization, device=h100, tensor_parallel_size=1, num_layers=24
    )
    assert got == 0


# ------------------------------------------------------------------------------------------------
# vision-language: encoder dummy batch and the unquantized tower
# ------------------------------------------------------------------------------------------------


def test_encoder_outputs_gemma_3_4b_hand_worked() -> None:
    # gemma-3-4b-it: 256 tokens per image, encoder budget = max(MNBT 8192, 256) = 8192 -> 32 dummy images,
    # whose 32 x 256 = 8192 embeddings of hidden 2560 in bf16 stay in the encoder cache through the text
    # dummy run: 8192 x 2560 x 2 B = 41,943,040 B
    model = catalog.find_model("google/gemma-3-4b-it")
    got = B.encoder_outputs_bytes(model=model, serve=ServeConfig(), num_tokens=8192, act_dtype_bytes=2)
    assert got == 41_943_040


def test_encoder_outputs_vanish_in_text_only_mode() -> None:
    # every modality limited to 0: no encoder profiling (gpu_model_runner.py profile_run, 0.19.0)
    model = catalog.find_model("google/gemma-3-4b-it")
    serve = ServeConfig(limit_mm_per_prompt={"image": 0})
    assert B.encoder_outputs_bytes(model=model, serve=serve, num_tokens=8192, act_dtype_bytes=2) == 0


def test_quantized_vl_checkpoint_keeps_the_tower_in_bf16() -> None:
    # Mistral-Small-3.1 w8a8: the 438,958,080-parameter Pixtral tower (counted from vision_config,
    # app/core/hf_config/vision.py) stays bf16 (2 B) instead of int8 (1 B): 438,958,080 B more than quantized
    model = catalog.find_model("RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8")
    serve = ServeConfig()
    kwargs: dict[str, Any] = {
        "serve": serve,
        "layer_range": (0, model.num_layers),
        "is_first": True,
        "is_last": True,
    }
    with_tower = B.weights_bytes_for_stage(model=model, **kwargs)
    text_only = B.weights_bytes_for_stage(model=model.model_copy(update={"vision_params": 0}), **kwargs)
    assert with_tower - text_only == pytest.approx(438_958_080, abs=2)


# ------------------------------------------------------------------------------------------------
# regression on named real logs (figures as printed; inputs as in the calibration records)
# ------------------------------------------------------------------------------------------------

_LLMD = "https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/"
_H100_SWEEP: dict[str, Any] = {
    "vllm_version": "0.19.0",
    "engine": "v1",
    "gpu": "H100-80GB",
    "gpu_mem_gib": 79.19,
    "tensor_parallel_size": 1,
    "pipeline_parallel_size": 1,
    "max_model_len": 8192,
    "gpu_memory_utilization": 0.95,
    "max_num_seqs": 1024,
    "max_num_batched_tokens": 8192,
    "enforce_eager": False,
    "enable_prefix_caching": False,
}

REAL_LOGS: list[tuple[str, dict[str, Any], dict[str, float]]] = [
    (
        _LLMD + "deepseek-ai-deepseek-v2---h100-80gb--tp1pp1dp1--8192.log",
        {**_H100_SWEEP, "model": "deepseek-ai/DeepSeek-V2-Lite-Chat", "dtype": "bfloat16"},
        {"activation_peak_gib": 1.93, "kv_cache_gib": 43.61, "kv_tokens": 1_505_552},
    ),
    (
        _LLMD + "google-gemma-3-4b-it--h100-80gb--tp1pp1dp1--8192.log",
        {**_H100_SWEEP, "model": "google/gemma-3-4b-it", "dtype": "bfloat16"},
        {"activation_peak_gib": 3.89, "kv_tokens": 468_144},
    ),
    (
        _LLMD + "w8a8-mistral-small-24b--h100-80gb--tp1pp1dp1--8192.log",
        {
            **_H100_SWEEP,
            "model": "RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8",
            "quantization": "compressed-tensors",
            "dtype": "bfloat16",
        },
        {"activation_peak_gib": 2.18, "kv_cache_gib": 48.73, "kv_tokens": 319_344},
    ),
    (
        _LLMD + "mistralai-mistral-small---h100-80gb--tp1pp1dp1--8192.log",
        {**_H100_SWEEP, "model": "mistralai/Mistral-Small-3.1-24B-Instruct-2503", "dtype": "bfloat16"},
        {"activation_peak_gib": 2.03, "kv_cache_gib": 28.19, "kv_tokens": 184_752},
    ),
    (
        # blog post with the full start-up log: `vllm serve openai/gpt-oss-20b --max-model-len 131072
        # --gpu-memory-utilization 0.65` on an A100
        "https://myoceane.fr/index.php/ai-vllm-a100-gemma-4/",
        {
            "vllm_version": "0.19.0",
            "engine": "v1",
            "model": "openai/gpt-oss-20b",
            "quantization": "mxfp4",
            "gpu": "NVIDIA A100",
            "tensor_parallel_size": 1,
            "max_model_len": 131072,
            "gpu_memory_utilization": 0.65,
        },
        {"weights_gib": 13.72, "kv_cache_gib": 36.56},
    ),
]

KV_POOL_TOLERANCE_GIB = 0.5  # issue 16: the predicted KV pool within 0.5 GiB of the printed one
KV_TOKENS_TOLERANCE = 0.05  # and KV tokens within 5 %
ACTIVATION_TOLERANCE_GIB = 0.2  # the activation model's p90 residual on the calibration set is 0.13 GiB
WEIGHTS_TOLERANCE_GIB = 0.1


@pytest.mark.parametrize(("source", "record", "printed"), REAL_LOGS, ids=[r[1]["model"] for r in REAL_LOGS])
def test_real_log_within_issue_16_tolerance(
    source: str, record: dict[str, Any], printed: dict[str, float]
) -> None:
    case = calibration.case_for({"id": source, "source": source, "reported": printed, **record})
    assert case is not None, source
    est = estimate(model=case.model, device=case.device, serve=case.serve, vllm_version=case.vllm_version)
    if "kv_cache_gib" in printed:
        assert abs(est.kv_cache_bytes / GIB - printed["kv_cache_gib"]) <= KV_POOL_TOLERANCE_GIB
    if "kv_tokens" in printed:
        assert abs(est.kv_tokens / printed["kv_tokens"] - 1) <= KV_TOKENS_TOLERANCE
    if "activation_peak_gib" in printed:
        assert (
            abs(est.activation_peak_bytes / GIB - printed["activation_peak_gib"]) <= ACTIVATION_TOLERANCE_GIB
        )
    if "weights_gib" in printed:
        assert abs(est.weights_bytes / GIB - printed["weights_gib"]) <= WEIGHTS_TOLERANCE_GIB


@pytest.mark.xfail(
    strict=True,
    reason="weights 8.01 GiB predicted vs 8.58 printed: the rotary cos/sin caches are not modelled "
    "(gemma-3's global layers use linear rope x8, so vLLM builds a 131072 x 8 x 256 bf16 cache = 0.5 GiB, "
    "plus 64 MiB for the local rope) — a weights term, not the profiling peak",
)
def test_gemma_3_4b_kv_pool_known_gap() -> None:
    source, record, _ = REAL_LOGS[1]
    case = calibration.case_for({"id": source, "source": source, "reported": {}, **record})
    assert case is not None
    est = estimate(model=case.model, device=case.device, serve=case.serve, vllm_version=case.vllm_version)
    assert abs(est.kv_cache_bytes / GIB - 62.51) <= KV_POOL_TOLERANCE_GIB
