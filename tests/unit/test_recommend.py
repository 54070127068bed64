"""The recommender (issue 4): the seed's remedy order, worked by hand where the arithmetic is exact.

KV bytes per token, bytes per block, blocks per request and concurrency are vLLM's own arithmetic
(seed formula: 2 x L x H_kv/TP x D x b; reference §1); the KV pool comes from the budget model, so
tests take it from the estimate and check the block math on top of it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core import catalog
from app.core.budget import CUDA_CONTEXT_BYTES, CUDA_GRAPH_BASE_BYTES, CUDA_GRAPH_PER_LAYER_BYTES
from app.core.errors import InvalidServeConfigError, PlannerError
from app.core.estimate import estimate, validate_parallel
from app.core.recommend import (
    ACTIVATION_HEADROOM_BYTES,
    RULES,
    Recommendation,
    Step,
    allreduce_bytes_per_token,
    bisect,
    recommend,
    utilization_ceiling,
)
from app.core.specs import (
    GIB,
    DeviceSpec,
    ModelSpec,
    ServeConfig,
)
from app.core.versions import rules_for
from tests.specs_factory import H100, deepseek_v3_like, dense, gpt_oss_like, llama70

H200 = H100.model_copy(
    update={"id": "h200-like", "name": "H200-like", "memory_total_bytes": int(139.7 * GIB)}
)
A100 = DeviceSpec(
    id="a100-like",
    name="A100-like",
    vendor="NVIDIA",
    platform="cuda",
    memory_total_bytes=int(39.39 * GIB),
    compute_capability="8.0",
    fp8_kv=False,
    interconnect_gbps=600.0,
    typical_node_devices=8,
)
ASCEND = DeviceSpec(
    id="910b-like",
    name="Ascend-910B-like",
    vendor="Huawei",
    platform="npu",
    memory_total_bytes=int(29.49 * GIB),
    int8_kv=True,
    interconnect="HCCS",
    interconnect_gbps=392.0,
    typical_node_devices=8,
)
SMALL = H100.model_copy(update={"id": "small", "name": "22 GiB GPU", "memory_total_bytes": 22 * GIB})


def llama8() -> ModelSpec:
    return dense()


def deepseek_v3_fp8() -> ModelSpec:
    return deepseek_v3_like(fp8_weights=True)


def steps_by_key(rec: Recommendation) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = {}
    for s in rec.steps:
        out.setdefault(s.key, []).append(s.applied)
    return out


def step(rec: Recommendation, key: str) -> Step:
    return next(s for s in rec.steps if s.key == key)


# --- GQA: fp8, then TP ---------------------------------------------------------------------------------


def test_gqa_70b_needs_fp8_then_tp8() -> None:
    # Llama-3.1-70B-like, 128k x 16 users on 80 GB H100s.
    # KV bytes/token/device: bf16 TP1 2 x 80 x 8 x 128 x 2 = 327,680; fp8 TP1 163,840;
    # fp8 TP8 2 x 80 x 1 x 128 x 1 = 20,480. At TP1 the weights (~131 GiB) leave no pool, so concurrency is 0
    # before TP; fp8 still counts as
    # progress because it halves the demand. TP4 would need 16 x 131,072 x 40,960 B = 80 GiB of KV per device,
    # more than the whole 79.1 GiB device, so TP8 is the smallest TP that can meet the target.
    rec = recommend(
        model=llama70(),
        device=H100,
        serve=ServeConfig(),
        vllm_version="0.33.0",
        target_max_model_len=131_072,
        target_concurrency=16,
    )
    assert rec.meets_target and rec.impossible_reason is None
    keys = steps_by_key(rec)
    assert keys["max_model_len"] == [False]  # the derived 131,072 is already S*
    assert keys["kv_cache_dtype"] == [True]
    assert keys["tensor_parallel_size"] == [True]
    assert keys["gpu_memory_utilization"] == [False] and keys["offload"] == [False]  # target already met
    fp8, tp = step(rec, "kv_cache_dtype"), step(rec, "tensor_parallel_size")
    assert (fp8.before.kv_bytes_per_token, fp8.after.kv_bytes_per_token) == (327_680, 163_840)
    assert tp.after.kv_bytes_per_token == 20_480
    assert rec.final.kv_cache_dtype == "fp8" and rec.final.tensor_parallel_size == 8
    assert rec.final.gpu_memory_utilization is None  # utilization untouched: never went past what was needed
    # block math on the final pool: bytes/block = 16 x 1 x 256 x 1 x 80 = 327,680;
    # blocks/request 131,072/16 = 8,192
    est = estimate(model=llama70(), device=H100, serve=rec.final, vllm_version="0.33.0")
    assert est.bytes_per_block == 327_680
    assert est.num_gpu_blocks == est.kv_cache_bytes // 327_680
    assert est.max_concurrency == round(est.num_gpu_blocks / 8192, 2) >= 16
    assert est.num_gpu_blocks >= 16 * 8192  # = 131,072 blocks = 40 GiB
    assert rec.command.startswith("vllm serve llama-3.1-70b-like")
    assert "--tensor-parallel-size 8" in rec.command and "--kv-cache-dtype fp8" in rec.command
    # the TP cost names the traffic: 2 all-reduces x 2 x 7/8 x 8192 x 2 B x 80 = 4,587,520 B per token
    assert allreduce_bytes_per_token(tensor_parallel_size=8, hidden_size=8192, num_layers=80) == 4_587_520
    # at 900/2 GB/s each way: 4,587,520 / 450e9 s = 10.2 µs
    assert "10.2 µs" in tp.cost
    # the original (bf16, TP1) dies loading 141 GB of weights on 79.1 GiB: the planner's load_oom
    assert rec.bisection.verdict == "load_oom"


def test_smallest_tp_that_meets_the_target() -> None:
    # Llama-8B-like, 32k x 16 on the 22 GiB GPU: bf16 needs 16 x 32,768 x 131,072 B = 64 GiB at TP1; fp8 TP1
    # 32 GiB (> 22 GiB device), fp8 TP2 16 GiB per device (4 heads x 256 x 32 layers = 32,768 B/token fp8)
    # with ~7.5 GiB of weights on a 22 GiB device -> not quite; fp8 TP4 8 GiB -> fits.
    # The pick is the first TP
    # that meets it, never a larger one.
    rec = recommend(
        model=llama8(),
        device=SMALL,
        serve=ServeConfig(),
        vllm_version="0.33.0",
        target_max_model_len=32_768,
        target_concurrency=16,
    )
    assert rec.meets_target
    tp = rec.final.tensor_parallel_size
    assert tp in (2, 4)
    smaller = rec.final.model_copy(update={"tensor_parallel_size": tp // 2})
    est = estimate(model=llama8(), device=SMALL, serve=smaller, vllm_version="0.33.0")
    assert not (est.fits and est.max_concurrency >= 16)


# --- MLA: TP only spreads the weights -------------------------------------------------------------------


def test_mla_tp_keeps_per_device_kv_bytes_and_frees_weights() -> None:
    # DeepSeek-V3-like: 61 layers x (512 + 64) latent x 2 B = 70,272 B per token on every device, at any TP
    # (the latent is replicated). fp8 weights ~626 GiB: TP4 still needs ~157 GiB per device (> 139.7 GiB),
    # TP8 ~78 GiB. 32k x 8 needs 8 x 2,048 blocks x (16 x 70,272 = 1,124,352 B) = 17.16 GiB of KV.
    rec = recommend(
        model=deepseek_v3_fp8(),
        device=H200,
        serve=ServeConfig(),
        vllm_version="0.33.0",
        target_max_model_len=32_768,
        target_concurrency=8,
        allow_fp8_kv=False,
    )
    assert rec.meets_target
    assert steps_by_key(rec)["max_model_len"] == [True]  # 163,840 -> 32,768
    dtype = step(rec, "kv_cache_dtype")
    assert not dtype.applied and "allow_fp8_kv" in dtype.reason
    tp = step(rec, "tensor_parallel_size")
    assert tp.applied
    assert rec.final.tensor_parallel_size == 8
    assert tp.before.kv_bytes_per_token == tp.after.kv_bytes_per_token == 70_272
    assert tp.after.weights_bytes * 7 < tp.before.weights_bytes
    assert "replicated on every TP rank" in tp.effect and "70,272 B at TP 1" in tp.effect
    est = estimate(model=deepseek_v3_fp8(), device=H200, serve=rec.final, vllm_version="0.33.0")
    assert est.kv_bytes_per_token == 70_272
    assert est.bytes_per_block == 16 * 70_272 == 1_124_352
    assert est.max_concurrency == round(est.num_gpu_blocks / 2048, 2) >= 8
    assert est.num_gpu_blocks >= 8 * 2048


# --- devices without fp8 KV -----------------------------------------------------------------------------


def test_a100_skips_fp8_with_its_reason() -> None:
    # Llama-8B-like at 128k x 8 on a 40 GB sm 8.0 card:
    # bf16 KV 131,072 B/token at TP1 needs 8 x 16 GiB = 128 GiB.
    rec = recommend(
        model=llama8(),
        device=A100,
        serve=ServeConfig(),
        vllm_version="0.33.0",
        target_max_model_len=131_072,
        target_concurrency=8,
    )
    dtype = step(rec, "kv_cache_dtype")
    assert not dtype.applied
    assert "sm 8.0" in dtype.reason and "no fp8 KV cache" in dtype.reason
    assert rec.final.kv_cache_dtype == "auto"
    assert rec.meets_target and rec.final.tensor_parallel_size > 1


def test_ascend_takes_the_int8_path() -> None:
    # 32 GB-class Ascend NPU: no fp8 --kv-cache-dtype in vllm-ascend;
    # INT8 (C8) halves 131,072 -> 65,536 B/token.
    rec = recommend(
        model=llama8(),
        device=ASCEND,
        serve=ServeConfig(),
        vllm_version="0.33.0",
        target_max_model_len=131_072,
        target_concurrency=8,
    )
    dtype = step(rec, "kv_cache_dtype")
    assert dtype.applied
    assert (dtype.before.kv_bytes_per_token, dtype.after.kv_bytes_per_token) == (131_072, 65_536)
    assert "ModelSlim" in dtype.effect
    assert rec.final.kv_cache_dtype == "int8"
    assert "--kv-cache-dtype" not in rec.command  # C8 comes from the quantization description, not a flag
    # Ascend blocks are 128 tokens: 131,072 / 128 = 1,024 blocks per request
    est = estimate(model=llama8(), device=ASCEND, serve=rec.final, vllm_version="0.33.0")
    assert est.block_size == 128
    assert est.max_concurrency == round(est.num_gpu_blocks / 1024, 2)


def test_fp8_not_allowed_on_npu_either() -> None:
    rec = recommend(
        model=llama8(),
        device=ASCEND,
        serve=ServeConfig(),
        vllm_version="0.33.0",
        target_max_model_len=131_072,
        target_concurrency=8,
        allow_fp8_kv=False,
    )
    assert not step(rec, "kv_cache_dtype").applied


# --- across nodes ---------------------------------------------------------------------------------------


def test_impossible_on_one_node_reachable_with_pp_on_two() -> None:
    # 70B-like, 128k x 32: fp8 TP8 needs 32 x 131,072 x 20,480 B = 80 GiB of KV per device, more than the
    # 79.1 GiB device even with every weight offloaded: impossible on one node. PP2 puts 40 layers per stage
    # (10,240 B/token fp8), 40 GiB of KV per device: reachable.
    one = recommend(
        model=llama70(),
        device=H100,
        serve=ServeConfig(),
        vllm_version="0.33.0",
        target_max_model_len=131_072,
        target_concurrency=32,
    )
    assert not one.meets_target
    assert one.impossible_reason is not None and "Nearest reachable" in one.impossible_reason
    assert 16 <= one.best_concurrency_at_target_len < 32
    assert 0 < one.best_len_at_target_concurrency < 131_072
    assert one.final.cpu_offload_gb == 0  # offload would not reach the target, so it is not paid for
    two = recommend(
        model=llama70(),
        device=H100,
        serve=ServeConfig(),
        vllm_version="0.33.0",
        target_max_model_len=131_072,
        target_concurrency=32,
        nodes=2,
    )
    assert two.meets_target
    assert (two.final.tensor_parallel_size, two.final.pipeline_parallel_size) == (8, 2)
    pp = step(two, "pipeline_parallel_size")
    assert pp.applied and pp.after.kv_bytes_per_token == 10_240
    assert "Pipeline bubbles" in pp.cost
    assert "--pipeline-parallel-size 2" in two.command


# --- utilization ceiling and offload --------------------------------------------------------------------


def test_utilization_ceiling_for_versions_without_cuda_graph_budget() -> None:
    # 0.19.0 captures graphs outside T x u. Graphs for 32 layers at max_num_seqs 256 (all 51 capture sizes):
    # 0.45 GiB + 32 x 0.0145 GiB; plus 0.5 GiB context and 0.5 GiB headroom, on a 22 GiB device:
    # 1 - 1.914 / 22 = 0.913 -> 0.91.
    est = estimate(model=llama8(), device=SMALL, serve=ServeConfig(max_model_len=8192), vllm_version="0.19.0")
    graphs = CUDA_GRAPH_BASE_BYTES + 32 * CUDA_GRAPH_PER_LAYER_BYTES
    assert est.cuda_graph_bytes == graphs
    ceiling, why = utilization_ceiling(est)
    raw = 1 - (graphs + CUDA_CONTEXT_BYTES + ACTIVATION_HEADROOM_BYTES) / (22 * GIB)
    assert f"{raw:.3f}" == "0.913"
    assert ceiling == 0.91 and "0.91" in why
    budgeted = estimate(
        model=llama8(), device=SMALL, serve=ServeConfig(max_model_len=8192), vllm_version="0.33.0"
    )
    assert utilization_ceiling(budgeted)[0] == 0.95


def test_utilization_raised_only_as_far_as_needed() -> None:
    # Llama-8B-like, one 22 GiB GPU, 2 sequences. A block is 16 tokens x 131,072 B = 2 MiB; 2 sequences of S
    # need 2 x S/16 blocks. Pick S* so that the pool at the default 0.92 falls short by about 0.015 x 22 GiB
    # (~0.33 GiB): 0.93 is not enough or just enough, 0.95 certainly is; the step must stop at the first
    # hundredth that holds it.
    serve = ServeConfig(max_num_seqs=2)
    base = estimate(
        model=llama8(),
        device=SMALL,
        serve=serve.model_copy(update={"max_model_len": 8192}),
        vllm_version="0.33.0",
    )
    block = 16 * 131_072
    assert base.bytes_per_block == block
    target_blocks = (base.kv_cache_bytes + int(0.015 * 22 * GIB)) // block // 2
    target_len = target_blocks * 16
    rec = recommend(
        model=llama8(),
        device=SMALL,
        serve=serve,
        vllm_version="0.33.0",
        target_max_model_len=target_len,
        target_concurrency=2,
        devices_per_node=1,
        allow_fp8_kv=False,
    )
    assert rec.meets_target
    util = rec.final.gpu_memory_utilization
    assert util is not None and 0.92 < util <= 0.95
    assert step(rec, "gpu_memory_utilization").applied
    lower = rec.final.model_copy(update={"gpu_memory_utilization": round(util - 0.01, 2)})
    if util > 0.93:
        est = estimate(model=llama8(), device=SMALL, serve=lower, vllm_version="0.33.0")
        assert not (est.fits and est.max_concurrency >= 2)
    est = estimate(model=llama8(), device=SMALL, serve=rec.final, vllm_version="0.33.0")
    assert est.num_gpu_blocks >= 2 * target_blocks


def test_cpu_offload_only_when_it_reaches_the_target_and_never_for_latency() -> None:
    # One 22 GiB GPU, no fp8, no TP: only offloading weights can hold 8 x 16k of bf16 KV (8 x 2 GiB = 16 GiB).
    kwargs = dict(
        model=llama8(),
        device=SMALL,
        serve=ServeConfig(max_num_seqs=8),
        vllm_version="0.33.0",
        target_max_model_len=16_384,
        target_concurrency=8,
        devices_per_node=1,
        allow_fp8_kv=False,
    )
    rec = recommend(**kwargs)  # type: ignore[arg-type]
    offload = step(rec, "offload")
    assert offload.applied and rec.meets_target
    gb = rec.final.cpu_offload_gb
    assert gb > 0 and f"--cpu-offload-gb {gb:g}" in rec.command
    # the smallest whole GiB that meets it
    est = estimate(
        model=llama8(),
        device=SMALL,
        serve=rec.final.model_copy(update={"cpu_offload_gb": gb - 1}),
        vllm_version="0.33.0",
    )
    assert not (est.fits and est.max_concurrency >= 8)
    # PCIe Gen5 (sm 9.0): gb GiB at 50 GB/s per step
    assert f"≈ {gb * GIB / 50e9 * 1e3:.0f} ms" in offload.cost
    assert "--kv-offloading-size" in offload.effect
    latency = recommend(**kwargs, preference="latency")  # type: ignore[arg-type]
    assert not step(latency, "offload").applied and latency.final.cpu_offload_gb == 0
    assert not latency.meets_target


def test_v0_offload_row_explains_swap_space() -> None:
    rec = recommend(
        model=llama8(),
        device=SMALL,
        serve=ServeConfig(max_num_seqs=8),
        vllm_version="0.6.6",
        target_max_model_len=16_384,
        target_concurrency=8,
        devices_per_node=1,
        allow_fp8_kv=False,
    )
    assert "--swap-space" in step(rec, "offload").effect


# --- side levers ----------------------------------------------------------------------------------------


def test_max_num_seqs_below_target_is_raised_first() -> None:
    rec = recommend(
        model=llama8(),
        device=H100,
        serve=ServeConfig(max_num_seqs=4),
        vllm_version="0.33.0",
        target_max_model_len=8192,
        target_concurrency=16,
    )
    assert rec.steps[0].key == "max_num_seqs" and rec.steps[0].applied
    assert rec.final.max_num_seqs == 16 and rec.meets_target


def test_lowering_max_num_seqs_and_batched_tokens_shows_the_freed_memory() -> None:
    rec = recommend(
        model=llama70(),
        device=H100,
        serve=ServeConfig(),
        vllm_version="0.33.0",
        target_max_model_len=131_072,
        target_concurrency=32,
    )
    seqs = [s for s in rec.steps if s.key == "max_num_seqs"]
    assert seqs and seqs[0].applied and rec.final.max_num_seqs == 32
    assert "frees" in seqs[0].effect
    assert seqs[0].after.activation_peak_bytes < seqs[0].before.activation_peak_bytes


def test_tp_validity() -> None:
    # one rule (estimate.validate_parallel) for the planner and the recommender
    rules = rules_for("0.33.0")
    validate_parallel(model=llama8(), serve=ServeConfig(tensor_parallel_size=8), device=H100, rules=rules)
    validate_parallel(
        model=llama8(), serve=ServeConfig(tensor_parallel_size=16), device=H100, rules=rules
    )  # 16 % 8: replicated
    qwen_like = llama8().model_copy(update={"num_attention_heads": 28, "num_kv_heads": 4})
    with pytest.raises(InvalidServeConfigError, match="does not divide the 28"):
        validate_parallel(
            model=qwen_like, serve=ServeConfig(tensor_parallel_size=8), device=H100, rules=rules
        )
    rec = recommend(
        model=qwen_like,
        device=A100,
        serve=ServeConfig(),
        vllm_version="0.33.0",
        target_max_model_len=131_072,
        target_concurrency=8,
    )
    assert rec.final.tensor_parallel_size in (1, 2, 4)


def test_invalid_starting_point_raises() -> None:
    from app.core.errors import PlannerError

    with pytest.raises(PlannerError) as info:
        recommend(
            model=llama8(),
            device=H100,
            serve=ServeConfig(tensor_parallel_size=3),
            vllm_version="0.33.0",
            target_max_model_len=8192,
            target_concurrency=1,
        )
    assert info.value.field == "tensor_parallel_size"


# --- bisection ------------------------------------------------------------------------------------------


def test_bisection_s_bound() -> None:
    # 8B-like at util 0.35 on 79.1 GiB: 27.7 GiB budget - 15 GiB weights leaves ~11 GiB; one 131,072-token
    # sequence needs 16 GiB (131,072 x 131,072 B) but 65,536 tokens need 8 GiB: halving S makes it start.
    b = bisect(
        model=llama8(),
        device=H100,
        serve=ServeConfig(max_model_len=131_072, gpu_memory_utilization=0.35),
        vllm_version="0.33.0",
    )
    as_given, half, _one = b.probes
    assert not as_given.starts and half.starts and half.max_model_len == 65_536
    assert b.verdict == "s_bound"


def test_a_target_below_one_sequence_or_token_is_refused_by_name() -> None:
    # the Engine owns the target S* x N*: bisect and recommend both get its refusal, naming the input
    with pytest.raises(PlannerError) as no_sequence:
        bisect(model=llama8(), device=H100, serve=ServeConfig(), vllm_version="0.33.0", target_concurrency=0)
    assert (no_sequence.value.field, no_sequence.value.message) == (
        "target_concurrency",
        "must be at least 1 sequence",
    )
    with pytest.raises(PlannerError) as no_token:
        recommend(
            model=llama8(),
            device=H100,
            serve=ServeConfig(),
            vllm_version="0.33.0",
            target_max_model_len=0,
            target_concurrency=1,
            nodes=0,  # also wrong: the target is named first, as before
        )
    assert (no_token.value.field, no_token.value.message) == (
        "target_max_model_len",
        "must be at least 1 token",
    )


def test_bisection_n_bound() -> None:
    # Starts at 131,072 (pool ~60 GiB holds ~3.7 sequences of 16 GiB), but 64 sequences do not fit, even at
    # 65,536 (~7.5); one sequence does.
    b = bisect(
        model=llama8(),
        device=H100,
        serve=ServeConfig(max_model_len=131_072),
        vllm_version="0.33.0",
        target_concurrency=64,
    )
    as_given, half, one = b.probes
    assert as_given.starts and not as_given.runs and not half.runs and one.runs and one.max_num_seqs == 1
    assert b.verdict == "n_bound"


def test_bisection_budget_bound_and_fits() -> None:
    # 70B in bf16 on one 79.1 GiB device: the weights alone do not fit (load OOM, the verdict box's word)
    b = bisect(model=llama70(), device=H100, serve=ServeConfig(max_model_len=8192), vllm_version="0.33.0")
    assert b.verdict == "load_oom" and b.probes[0].kv_cache_bytes < 0
    ok = bisect(
        model=llama8(),
        device=H100,
        serve=ServeConfig(max_model_len=8192),
        vllm_version="0.33.0",
        target_concurrency=8,
    )
    assert ok.verdict == "fits"


# --- catalog --------------------------------------------------------------------------------------------


def test_catalog_llama_70b_on_h100() -> None:
    model = catalog.find_model("meta-llama/Llama-3.1-70B-Instruct")
    device = catalog.find_device("nvidia-h100-sxm-80gb")
    rec = recommend(
        model=model,
        device=device,
        serve=ServeConfig(),
        vllm_version=None,
        target_max_model_len=131_072,
        target_concurrency=16,
    )
    assert rec.meets_target
    assert (rec.final.kv_cache_dtype, rec.final.tensor_parallel_size) == ("fp8", 8)


# --- properties -----------------------------------------------------------------------------------------

MODELS = (llama8(), llama70(), gpt_oss_like(), deepseek_v3_fp8())
DEVICES = (H100, H200, A100, ASCEND, SMALL)
RULE_KEYS = [r.key for r in RULES]


def _rule_indices(rec: Recommendation) -> list[int]:
    """Each step's row in RULES (the first row of that key at or after the previous step's row)."""
    out: list[int] = []
    pos = 0
    for s in rec.steps:
        pos = RULE_KEYS.index(s.key, pos)
        out.append(pos)
        pos += 1
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=st.sampled_from(MODELS),
    device=st.sampled_from(DEVICES),
    version=st.sampled_from(["0.33.0", "0.19.0", "0.11.0", "0.6.6"]),
    target_len=st.integers(min_value=256, max_value=262_144),
    target_conc=st.integers(min_value=1, max_value=96),
    nodes=st.integers(min_value=1, max_value=2),
    allow_fp8=st.booleans(),
    preference=st.sampled_from(["latency", "throughput"]),
)
def test_recommendation_properties(
    model: ModelSpec,
    device: DeviceSpec,
    version: str,
    target_len: int,
    target_conc: int,
    nodes: int,
    allow_fp8: bool,
    preference: str,
) -> None:
    rec = recommend(
        model=model,
        device=device,
        serve=ServeConfig(),
        vllm_version=version,
        target_max_model_len=target_len,
        target_concurrency=target_conc,
        nodes=nodes,
        allow_fp8_kv=allow_fp8,
        preference=preference,
    )  # type: ignore[arg-type]
    # no recommended value is invalid: the final config (and every step's) estimates without raising
    final = estimate(model=model, device=device, serve=rec.final, vllm_version=version)
    # S is set to S*, unless S* is above the model's maximum: vLLM refuses that length, so it stays there
    expected_len = min(target_len, model.max_model_len_derived)
    assert rec.final.max_model_len == expected_len and final.max_model_len == expected_len
    if rec.meets_target:
        assert final.fits and final.max_concurrency >= target_conc and final.max_num_seqs >= target_conc
        assert rec.impossible_reason is None
    else:
        assert rec.impossible_reason
    # rows in the table's order, each changing only its own flags, never undoing an earlier one
    indices = _rule_indices(rec)
    assert indices == sorted(indices)
    # the walk starts from the same configuration with the model's own maximum written out
    previous = ServeConfig(max_model_len=model.max_model_len_derived)
    undo: dict[str, object] = {}  # the prune pass puts an undone step's flags back to their value before it
    for s, i in zip(rec.steps, indices, strict=True):
        changed = {k for k in ServeConfig.model_fields if getattr(s.serve, k) != getattr(previous, k)}
        assert changed <= set(RULES[i].fields)
        taken = s.applied or s.undone  # an undone step was applied during the walk, then undone
        assert taken == bool(changed) or (s.applied and s.key == "max_model_len")
        assert not s.undone or (not s.applied and rec.meets_target and s.undone_reason)
        if s.undone:
            undo.update({k: getattr(previous, k) for k in RULES[i].fields})
        previous = s.serve
        estimate(model=model, device=device, serve=s.serve, vllm_version=version)
    assert previous.model_copy(update=undo) == rec.final
    if not allow_fp8:
        assert rec.final.kv_cache_dtype == "auto"
    if preference == "latency":
        assert rec.final.cpu_offload_gb == 0
    assert (
        rec.final.tensor_parallel_size * rec.final.pipeline_parallel_size
        <= device.typical_node_devices * nodes
    )


# --- refusals the KV walk does not address: the first step is the refusal's own fix (issue 24 item 5) --


def _catalog_rec(name: str, serve: ServeConfig, length: int, conc: int) -> Recommendation:
    return recommend(
        model=catalog.find_model(name),
        device=catalog.find_device("nvidia-h100-sxm-80gb"),
        serve=serve,
        vllm_version="0.33.0",
        target_max_model_len=length,
        target_concurrency=conc,
    )


def test_memory_held_by_others_lowers_the_utilization_to_the_free_share() -> None:
    # H100 84,932,978,278 B (79.1 GiB), 10 GiB held by others: free = 79.1 - 0.5 (CUDA context) - 10
    # = 68.6 GiB; 0.33.0 asks ceil(T x 0.92) = 72.77 GiB -> refused (v1/worker/utils.py request_memory).
    # 68.6 / 79.1 = 0.867 -> 0.86: ceil(T x 0.86) = 68.03 GiB <= 68.6 passes; 0.87 = 68.82 GiB does not
    rec = _catalog_rec(
        "meta-llama/Llama-3.1-8B-Instruct",
        ServeConfig(max_model_len=8192, device_memory_used_gib=10),
        8192,
        64,
    )
    first = rec.changes()[0]
    assert first.key == "free_memory" and first.serve.gpu_memory_utilization == 0.86
    assert first.before.fits is False and first.after.fits is True
    assert "Or free the device" in first.cost
    util = step(rec, "gpu_memory_utilization")  # the budget row never raises it above the free share
    assert not util.applied and "free share of the device (0.86)" in util.reason
    assert rec.final.gpu_memory_utilization == 0.86 and rec.meets_target  # then fp8 KV meets 64 x 8,192


def test_more_sequences_than_mamba_blocks_lowers_max_num_seqs_to_the_blocks() -> None:
    # Qwen3.5-27B, H100, 0.906, S 2,048: vLLM 0.33.0 refuses max_num_seqs 1,024 above 302 Mamba cache
    # blocks (tests/unit/test_verdicts.py; 302 since the vision tower's weights count); at 302 it
    # starts, and the sequences of 2,048 that fit are >= N* 16
    rec = _catalog_rec(
        "Qwen/Qwen3.5-27B", ServeConfig(gpu_memory_utilization=0.906, max_model_len=2048), 2048, 16
    )
    assert [s.key for s in rec.changes()] == ["mamba_blocks"]
    assert rec.final.max_num_seqs == 302 and rec.meets_target
    assert "--enforce-eager" in rec.changes()[0].cost


def test_a_length_above_the_models_maximum_is_lowered_to_it() -> None:
    # Llama-3.1-8B derives 131,072 (max_position_embeddings); 262,144 is refused without
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, so the first step sets 131,072 and the target row says why it stops
    rec = _catalog_rec("meta-llama/Llama-3.1-8B-Instruct", ServeConfig(max_model_len=262_144), 262_144, 4)
    first = rec.changes()[0]
    assert first.key == "max_model_len_derived" and first.serve.max_model_len == 131_072
    assert not step(rec, "max_model_len").applied
    assert rec.final.max_model_len == 131_072


def test_no_refusal_no_refusal_row() -> None:
    rec = _catalog_rec("meta-llama/Llama-3.1-8B-Instruct", ServeConfig(max_model_len=8192), 8192, 64)
    assert not {"free_memory", "mamba_blocks", "max_model_len_derived"} & {s.key for s in rec.steps}


def test_more_sequences_than_the_blocks_and_the_target_raises_them_again_once_the_pool_has_them() -> None:
    # N* 400 > the 302 Mamba blocks at TP 1: the first step makes vLLM start (302), the walk grows the
    # pool (TP 8: 835.75 sequences of 2,048 fit), and the last row allows N* = 400, which vLLM now accepts
    rec = _catalog_rec(
        "Qwen/Qwen3.5-27B", ServeConfig(gpu_memory_utilization=0.906, max_model_len=2048), 2048, 400
    )
    keys = [s.key for s in rec.changes()]
    assert keys[0] == "mamba_blocks" and keys[-1] == "max_num_seqs"
    assert rec.changes()[0].serve.max_num_seqs == 302
    assert rec.final.max_num_seqs == 400 and rec.meets_target
    final = estimate(
        model=catalog.find_model("Qwen/Qwen3.5-27B"),
        device=catalog.find_device("nvidia-h100-sxm-80gb"),
        serve=rec.final,
        vllm_version="0.33.0",
    )
    assert final.error is None and final.num_gpu_blocks >= 400
