"""Devices and situations the planner now expresses (issue 22 item 6): memory other processes hold,
Ascend's HCCL buffers inside the budget, unified-memory devices. Numbers worked by hand in comments."""

from __future__ import annotations

from app.core import budget as B
from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.specs import GIB, ServeConfig

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"


def plan(version: str, used_gib: float, util: float | None = None, device: str = "h100"):  # type: ignore[no-untyped-def]
    return estimate(
        model=find_model(LLAMA_8B),
        device=find_device(device),
        serve=ServeConfig(max_model_len=8192, device_memory_used_gib=used_gib, gpu_memory_utilization=util),
        vllm_version=version,
    )


def test_memory_held_by_others_raises_vllms_free_memory_error_033() -> None:
    # H100 catalog total 79.1 GiB (84,932,978,278 B). 0.33.0: requested = ceil(T x 0.92) = 72.77 GiB;
    # free at the snapshot = 79.1 - 0.5 (context) - 10 (others) = 68.6 GiB < 72.77 -> refused.
    # v1/worker/utils.py::request_memory (0.33.0) prints format_gib sizes: "68.6", "79.1", "72.77".
    e = plan("0.33.0", 10)
    assert not e.fits and e.error_kind == "startup_free_memory"
    assert e.error == (
        "Free memory on device cuda:0 (68.6/79.1 GiB) on startup is less than desired GPU memory utilization "
        "(0.92, 72.77 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
    )


def test_free_memory_error_text_of_0110() -> None:
    # 0.11.0 v1/worker/gpu_worker.py::Worker.init_device: no device id, round(x, 2) sizes, u = 0.9 default:
    # 79.1 x 0.9 = 71.19 GiB requested; 79.1 - 0.5 - 10 = 68.6 free
    e = plan("0.11.0", 10)
    assert e.error == (
        "Free memory on device (68.6/79.1 GiB) on startup is less than desired GPU memory utilization "
        "(0.9, 71.19 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
    )


def test_room_beside_the_other_process_starts() -> None:
    # 79.1 - 0.5 - 5 = 73.6 GiB free >= 79.1 x 0.9 = 71.19 requested: starts, and the pool is not reduced
    # (vLLM >= 0.10.2 does not subtract other processes' memory, reference §2.1)
    e, alone = plan("0.33.0", 5, util=0.9), plan("0.33.0", 0, util=0.9)
    assert e.fits and e.kv_cache_bytes == alone.kv_cache_bytes


def test_v1_085_counts_other_processes_as_non_torch() -> None:
    # 0.8.5 Worker.determine_available_memory: non_torch = (T - free) - torch allocated, so 10 GiB held by
    # another process comes out of the KV pool byte for byte; no start-up check in that release
    e, alone = plan("0.8.5", 10), plan("0.8.5", 0)
    assert e.fits and alone.kv_cache_bytes - e.kv_cache_bytes == 10 * GIB
    assert any("no start-up free-memory check" in w for w in e.warnings)


def test_hccl_buffers_per_communicator_on_ascend() -> None:
    mib = 2**20
    base = round(0.13 * GIB)  # vllm-ascend#8289, TP 1: "0.13 GiB for non-torch memory"
    assert B.non_torch_bytes(tensor_parallel_size=1, pipeline_parallel_size=1, platform="npu") == base
    # TP 2: world + TP communicators, 2 x 200 MiB each -> 0.13 GiB + 800 MiB = 0.911 GiB
    # (the 310P log of vllm-ascend#10122 prints 1.05 and 1.00 GiB at TP 2)
    tp2 = B.non_torch_bytes(tensor_parallel_size=2, pipeline_parallel_size=1, platform="npu")
    assert tp2 == base + 2 * 2 * 200 * mib
    assert abs(tp2 / GIB - 1.0) < 0.15
    # TP 2 x PP 2: world, TP and PP communicators
    assert (
        B.non_torch_bytes(tensor_parallel_size=2, pipeline_parallel_size=2, platform="npu")
        == base + 3 * 400 * mib
    )
    # CUDA keeps its fitted NCCL terms: 1.944 + 2 x 0.0665 GiB at TP 2
    assert B.non_torch_bytes(tensor_parallel_size=2, pipeline_parallel_size=1) == int(1.944 * GIB) + 2 * int(
        0.0665 * GIB
    )


def test_ascend_plan_uses_hccl_and_says_acl_graphs_are_outside_the_budget() -> None:
    e = estimate(
        model=find_model(LLAMA_8B),
        device=find_device("910b"),
        serve=ServeConfig(max_model_len=8192, tensor_parallel_size=2),
        vllm_version="0.33.0",
    )
    assert e.non_torch_bytes == round(0.13 * GIB) + 800 * 2**20
    assert any("ACL graphs" in w for w in e.warnings)


def test_unified_memory_device_warns_that_utilization_is_not_a_bound() -> None:
    gb10 = find_device("dgx-spark")
    assert gb10.unified_memory and gb10.memory_total_bytes == round(121.69 * GIB)
    e = plan("0.33.0", 0, device="gb10")
    assert any("unified memory" in w and "vllm#46307" in w for w in e.warnings)
    assert not any("unified memory" in w for w in plan("0.33.0", 0).warnings)  # the H100 is not


def test_new_devices_in_the_catalog() -> None:
    # 310P: 43.24 GiB as printed (vllm-ascend#10122); 950PR estimated from 131072 MB (recipes#793)
    p310 = find_device("310p")
    assert (p310.platform, p310.memory_total_bytes) == ("npu", round(43.24 * GIB))
    assert find_device("atlas-300i-duo") is p310
    assert find_device("950pr").memory_total_bytes == round(121.92 * GIB)  # 128 x 60.96 / 64


def ascend(version: str, used_gib: float):  # type: ignore[no-untyped-def]
    return estimate(
        model=find_model("Qwen/Qwen2.5-7B-Instruct"),
        device=find_device("910b"),
        serve=ServeConfig(max_model_len=32768, gpu_memory_utilization=0.9, device_memory_used_gib=used_gib),
        vllm_version=version,
    )


def test_vllm_ascend_up_to_014_takes_other_processes_out_of_the_pool() -> None:
    # vllm-ascend v0.13.0rc3 NPUWorker.determine_available_memory: KV = T x u - peak, peak includes
    # (T - free) - torch allocated, i.e. the 20 GiB a second server holds (vllm-ascend#4404's situation);
    # no free-memory check; requested = T x u without ceil: int(65,452,113,920 x 0.9) = 58,906,902,528
    e, alone = ascend("0.14.0", 20), ascend("0.14.0", 0)
    assert e.fits and e.budget_bytes == 58_906_902_528
    assert alone.kv_cache_bytes - e.kv_cache_bytes == 20 * GIB
    assert f"Available memory: {e.kv_cache_bytes}, total memory: 65452113920" in e.log_lines


def test_vllm_ascend_from_015_refuses_with_its_own_wording() -> None:
    # v0.15.0rc1 NPUWorker._init_device: free = 60.96 - 0.5 - 20 = 40.46 GiB < 0.9 x 60.96 = 54.86 GiB;
    # the message is vLLM 0.11's, without a device id, sizes as round(x, 2)
    e = ascend("0.15.0", 20)
    assert e.error_kind == "startup_free_memory"
    assert e.error == (
        "Free memory on device (40.46/60.96 GiB) on startup is less than desired GPU memory utilization "
        "(0.9, 54.86 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
    )
    assert ascend("0.15.0", 0).fits


def test_a_hybrid_requests_blocks_are_shown_per_kv_group() -> None:
    from app.core import equations as E
    from app.core.versions import rules_for

    # Gemma 3 27B at S = 32,768, B = 16: five sliding groups and one full group (0.33.0); the full group
    # needs ⌈32,768 ÷ 16⌉ = 2,048 blocks, and the concurrency divides the pool by the sum of all groups'
    est = estimate(
        model=find_model("google/gemma-3-27b-it"),
        device=find_device("h100"),
        serve=ServeConfig(max_model_len=32768),
        vllm_version="0.33.0",
    )
    rows = [
        eq for eq in E.block_equations(est, rules_for("0.33.0")) if eq.key.startswith("blocks_per_request_")
    ]
    assert len(rows) == len(est.groups) > 1
    full = [eq for eq in rows if "(full," in eq.name]
    assert [eq.formula for eq in full] == ["⌈S ÷ B⌉ = ⌈32,768 ÷ 16⌉"] and full[0].value == "2,048"
    assert sum(int(eq.value.replace(",", "")) for eq in rows) == sum(g.blocks_per_request for g in est.groups)


def test_rocm_hipgraphs_are_budgeted_from_0260_only() -> None:
    # v1/worker/gpu_worker.py: 0.19.0/0.20.x skip ROCm (`not current_platform.is_rocm()`), 0.21.0-0.25.1
    # require `is_cuda()`, 0.26.0 `is_cuda_alike()`: on an MI300X the graph estimate leaves the pool only
    # from 0.26.0, while an H100 has it subtracted from 0.21.0 on (the default-on release)
    def kv(version: str, device: str) -> tuple[bool, int, int]:
        e = plan(version, 0, device=device)
        return e.cuda_graph_budgeted, e.kv_cache_bytes, e.cuda_graph_bytes

    for version in ("0.21.0", "0.24.0", "0.25.1"):
        assert kv(version, "mi300x")[0] is False and kv(version, "h100")[0] is True
    budgeted, pool, graphs = kv("0.26.0", "mi300x")
    unbudgeted_pool = kv("0.24.0", "mi300x")[1]
    assert (
        budgeted and graphs > 0 and unbudgeted_pool - pool == graphs
    )  # 0.24 and 0.26 share every other rule


def _qwen_7b(version: str, device: str, **serve: object):  # type: ignore[no-untyped-def]
    return estimate(
        model=find_model("Qwen/Qwen2.5-7B-Instruct"),
        device=find_device(device),
        serve=ServeConfig(max_model_len=8192, **serve),  # type: ignore[arg-type]
        vllm_version=version,
    )


def test_the_310p_worker_halves_its_pool_from_vllm_ascend_0_18() -> None:
    # vllm_ascend/_310p/worker_310p.py NPUWorker310.determine_available_memory: "(requested - non_kv - cleared)
    # // 2" from v0.18.0 (v0.17.0rc1 has no override). Qwen2.5-7B on one 310P (46,428,596,470 B), u 0.8:
    # requested int(T x 0.8) = 37,142,877,176; - weights 15,231,233,024 - activation 637,612,851 - non-torch
    # 139,586,437 (0.13 GiB, TP 1) = 21,134,444,864. "cleared" (non_torch_memory_cleared_by_empty_cache) holds the
    # non-torch memory the device held at the init snapshot: 1.00 GiB = 1,073,741,824 on a 310P
    # (situations.ASCEND_310P_STARTUP_HELD_BYTES), so (21,134,444,864 - 1,073,741,824) // 2 = 10,030,351,520.
    # Blocks: 28 layers x 4 heads x (128 + 128) x 2 B (float16) x 128 tokens = 7,340,032 B a block -> 2,879
    # before, 10,030,351,520 // 7,340,032 = 1,366 after.
    # A real 310P log (tests/data/logs/collected/ascend_310p_qwen36_27b_w8a8_tp2_suggestion.log, vllm-ascend
    # #10122) shows it: requested 34.59 - (18.8 + 1.71 + 1.05) = 13.03 GiB, "Current KV cache memory: 5.77 GiB"
    # = (13.03 - 1.49) / 2: the 1.00 GiB held on startup (42.24 of 43.24 GiB free) and 0.49 GiB not modelled.
    before, after = (
        _qwen_7b("0.17.0", "310p", gpu_memory_utilization=0.8),
        _qwen_7b("0.18.0", "310p", gpu_memory_utilization=0.8),
    )
    assert (before.kv_cache_bytes, before.num_gpu_blocks) == (21_134_444_864, 2_879)
    assert (after.kv_cache_bytes, after.num_gpu_blocks) == (10_030_351_520, 1_366)
    # the held bytes are computed once, by the stage's budget, and the pool equation reads them from there
    assert (before.held_at_start_bytes, after.held_at_start_bytes) == (0, 1_073_741_824)
    assert "Available KV cache memory: 9.34 GiB" in after.log_lines  # 10,030,351,520 / 2**30 = 9.34
    assert any("halves the KV pool" in w for w in after.warnings)
    # v0.21.0rc1 prints the note; the 910B's worker (NPUWorker) never halves
    assert (
        "Available KV cache memory: 9.34 GiB (halved for workspace)"
        in _qwen_7b("0.21.0", "310p", gpu_memory_utilization=0.8).log_lines
    )
    pool = next(t for t in after.terms if t.name == "KV pool (available KV cache memory)")
    assert pool.formula.endswith("− 1.00) ÷ 2")
    assert _qwen_7b("0.33.0", "910b").kv_cache_bytes > 2 * after.kv_cache_bytes
    # memory another process holds is in that init snapshot too: 2 GiB more held -> 1 GiB less pool
    held = _qwen_7b("0.18.0", "310p", gpu_memory_utilization=0.8, device_memory_used_gib=2.0)
    assert held.kv_cache_bytes == (21_134_444_864 - 3 * 1_073_741_824) // 2
    assert held.held_at_start_bytes == 3 * 1_073_741_824
    pool = next(t for t in held.terms if t.name == "KV pool (available KV cache memory)")
    assert pool.formula.endswith("− 3.00) ÷ 2")


def test_vllm_ascend_reads_kv_cache_memory_bytes_from_0_19_and_never_on_the_310p() -> None:
    # vllm_ascend/worker/worker.py NPUWorker.determine_available_memory: the --kv-cache-memory-bytes fast path
    # arrives in v0.19.1rc1 (#8289, commit 65289ca80d); v0.18.0 never reads the flag, and NPUWorker310
    # overrides the method without it in every release (v0.25.1rc1 read)
    ten = 10 * GIB
    assert _qwen_7b("0.19.0", "910b", kv_cache_memory_bytes=ten).kv_cache_bytes == ten
    old = _qwen_7b("0.18.0", "910b", kv_cache_memory_bytes=ten)
    assert old.kv_cache_bytes == _qwen_7b("0.18.0", "910b").kv_cache_bytes != ten
    assert any("does not read --kv-cache-memory-bytes" in w for w in old.warnings)
    p310 = _qwen_7b("0.33.0", "310p", kv_cache_memory_bytes=ten)
    assert p310.kv_cache_bytes == _qwen_7b("0.33.0", "310p").kv_cache_bytes != ten
    # the pool equation says what the worker did, not the flag
    pool = next(t for t in old.terms if t.name == "KV pool (available KV cache memory)")
    assert "--kv-cache-memory-bytes" not in pool.formula


def test_vllm_ascend_checks_free_memory_even_with_kv_cache_memory_bytes() -> None:
    # NPUWorker._init_device (v0.15.0rc1 ... v0.25.1rc1) raises "Free memory on device ... is less than desired"
    # whatever the flags; upstream 0.19.0 skips its check under --kv-cache-memory-bytes (free_memory_check_with_
    # kv_bytes from 0.33.0). 910B at 0.19.0 (default u 0.9): 60.96 - 0.5 - 20 = 40.46 GiB free < 0.9 x 60.96 =
    # 54.86 GiB requested -> refused; the H100 starts (79.1 - 0.5 - 20 = 58.6 < 71.19, but unchecked)
    npu = _qwen_7b("0.19.0", "910b", kv_cache_memory_bytes=10 * GIB, device_memory_used_gib=20)
    assert npu.error_kind == "startup_free_memory"
    cuda = _qwen_7b("0.19.0", "h100", kv_cache_memory_bytes=10 * GIB, device_memory_used_gib=20)
    assert cuda.error_kind != "startup_free_memory"


def test_ascend_totals_per_device_910b_910c_a2_a3() -> None:
    # one die is one device: a 910C package (Atlas A3, 128 GB nominal) is two 64 GB dies, each printing "total
    # memory: 65796046848" (61.28 GiB; vllm-ascend#3869, 16 dies on a node), a 910B "65452113920" (60.96 GiB;
    # vllm-ascend#3800); an A3 node plans as 16 of them
    a2, a3 = find_device("atlas-800i-a2"), find_device("atlas-800i-a3")
    assert (a2.id, a3.id) == ("huawei-ascend-910b-64gb", "huawei-ascend-910c")
    assert (a2.memory_total_bytes, a3.memory_total_bytes) == (65_452_113_920, 65_796_046_848)
    assert (a2.typical_node_devices, a3.typical_node_devices) == (8, 16)
    assert all(d.platform == "npu" for d in (a2, a3, find_device("310p"), find_device("950pr")))


def test_a_pool_given_with_kv_cache_memory_bytes_has_no_band() -> None:
    # 0.33.0 gpu_worker.Worker.determine_available_memory returns --kv-cache-memory-bytes as the pool without
    # profiling, so the pool is the user's 10 GiB exactly: no band from the modelled weights / activation /
    # non-torch / graphs (latency9's walk saw 19.28-20.72 GiB for a given 20 GiB). The tokens follow exactly too.
    ten = 10 * GIB
    given = _qwen_7b("0.33.0", "h100", kv_cache_memory_bytes=ten)
    pool = given.ranges["kv_cache_bytes"]
    assert (pool.low, pool.expected, pool.high) == (ten, ten, ten)
    tokens = given.ranges["kv_tokens"]
    assert tokens.low == tokens.expected == tokens.high
    profiled = _qwen_7b("0.33.0", "h100").ranges["kv_cache_bytes"]
    assert profiled.low < profiled.expected < profiled.high  # a profiled pool keeps its band
