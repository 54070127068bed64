"""The start-up log's rule table is validated data (app/core/logs/startup/rules.json): every row names a real
template and a real handler, or the import fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.core import vllm_text as vt
from app.core.logs.startup.rules import RULES, RULES_FILE, load_rules


def _table(tmp_path: Path, *rows: dict[str, object]) -> Path:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"rules": list(rows)}), encoding="utf-8")
    return path


def test_the_table_in_order() -> None:
    rows = json.loads(RULES_FILE.read_text(encoding="utf-8"))["rules"]
    # 81 in round 4; round 5 adds PLATFORM_PLUGIN, GRAPH_UTILIZATION_SUGGESTION, LOGGED_FRAME, KV_GROUP_BLOCK_SIZES,
    # KV_LCM_BLOCK_SIZE, ENGINE_STARTUP_FRAME and GRAPH_PROFILING (88); round 6 adds ENGINE_BLOCKS, VLLM_FRAME,
    # DEVICE_INIT_FRAME, TORCH_COMPILE, three Ascend markers (PTA error record, CANN paths, ASCEND_RT_VISIBLE_DEVICES)
    # and eight ROCm markers (ROCm, /opt/rocm, gfx…, [aiter], ROCM_…, HIP error, hipError…, AMD Instinct); then
    # V0_WORKER_FRAME (heldout-2026-12f); round 7 (heldout-2026-12g) adds TORCH_NPU_RAISED, CONFIG_FRAME,
    # TORCH_CAPABILITY_NAME, MOE_CONFIG_NAME and PLATFORM_MODULE; round 8 (heldout-2026-12h) adds NPU_CORE_EXCEPTION
    # and NPU_KERNEL_FAILED (CANN's AI Core fault report), ASCEND_RUNNER_TAG (vllm-ascend's runner module in the tag);
    # round 9 (heldout-2026-12i) adds NPU_INNER_ERROR, WORKER_EXCEPTION, WORKER_METHOD_ERROR, DEVICE_API_ERROR,
    # CPP_TERMINATE, WEIGHT_PROCESS_FRAME and WEIGHT_REPACK_FRAME (app/core/vllm_text_failures.py), then
    # (heldout-2026-12j) V0_WORKER_METHOD_ERROR, SERVER_DIED, ENGINES_TIMEOUT and ENGINE_CORE_TAG; rules9 adds the three CUDA-graph refusals
    # of app/core/vllm_text_graphs.py; bracket9c ENGINE_CORES_TIMEOUT (0.17.0+ wording of ENGINES_TIMEOUT); round 10
    # (heldout-2026-12k) ENGINE_CORE_ERROR, V1_MODULE_FRAME, V0_MULTIPROC_LOGGER and MODEL_INIT_FRAME, then
    # (heldout-2026-12l) RANK_WORLD_SIZE, EXECUTOR_INIT_LINE and V0_LOAD_START; round 11 (heldout-2026-12m)
    # LOAD_MODEL_NAME, V0_ENGINE_FRAME, V1_ENGINE_BACKEND, V1_OBJECT_REPR (app/core/vllm_text_identity.py),
    # FAULTHANDLER_FRAME and FATAL_PYTHON_ERROR, then CODE_FRAME and CARET_LINE (flashinfer#2045) and
    # COLLECTIVE_RPC_METHOD (heldout-2026-12o); 0.34.0's WARMUP_KV (app/core/vllm_text_extensible.py); round 12
    # (heldout-2026-12p) ASYNC_SCHEDULING, V1_WORKER_TAG, NO_BACKEND_FOR_PLATFORM, CUDA_ERROR_NAME, WORKER_DIED,
    # CUDA_CHECK_FAILED, CANN_INNER_ERROR, STREAM_CAPTURE_ERROR and NPU_CAPTURE_FAILED (twice: an NPU error, and the
    # graph stage), then (heldout-2026-12q) PLATFORM_FRAME, (heldout-2026-12r) ACL_GRAPH_CAPTURE_FAILED (a failure,
    # and the graph stage), (heldout-2026-12t) NPU_CORE_ERROR_EXCEPTION; round 13 (heldout-2026-12u) MLA_DISABLES_CHUNKED_PREFILL,
    # DTYPE_FALLBACK and QUANTIZATION_NOT_OPTIMIZED (app/core/vllm_text_identity.py), then (heldout-2026-12v)
    # V0_MP_ENGINE_FRAME, (heldout-2026-12w) ROCM_MODULE_TAG, AMD_ALLREDUCE_OFF and OOM_CAPACITY_LINE; round 13b
    # REPORTED_VERSION, COLLECT_ENV_GPU, V0_ENGINE_PROCESS_FAILED and V0_MQ_CLIENT_WAITING, then (heldout-2026-12y)
    # V0_WORKER_PROCESS_TAG, V1_WORKER_RANK_TAG, V1_CORE_WAITING and NPU_SMI; round 14 (heldout-2026-12z) DTYPE_CAST and
    # ASYNC_OUTPUT_EAGER, (heldout-2026-12za) TESLA_DEVICE_NAME and BF16_UNSUPPORTED, then round 12's open H800 fact
    # GPU_STACK_ERROR and CUDA_CHECK_FAILED (a second row: a GPU, besides a failure); round 15 (heldout-2026-12ze)
    # ROCM_FLASH_ATTN; round 16 (heldout-2026-12zg) TORCH_NPU_CPP_WARNING; round 16b TORCH_NPU_DEPEND_WARNING and
    # CANN_SOC_VERSION (Ascend signs pinned on heldout-2026-12zg / -12e lines)
    assert len(RULES) == len(rows) == 183
    first, weights = RULES[0], next(r for r, row in zip(RULES, rows, strict=True) if row["line"] == "WEIGHTS")
    assert (first.needle, first.run_start, first.kv) == (vt.SERVER_VERSION.needle, True, False)
    assert weights.kv and weights.pattern.search("Loading model weights took 14.99 GB") is not None


def test_a_parameterised_handler_is_made_for_its_argument(tmp_path: Path) -> None:
    (rule,) = load_rules(
        _table(tmp_path, {"line": "MEMORY_ACCESS_FAULT", "handle": "fault:device_fault:GPU"})
    )
    assert rule.needle == "Memory access fault by GPU"


@pytest.mark.parametrize(
    ("row", "error"),
    [
        ({"line": "NO_SUCH_LINE", "handle": "weights"}, ValueError),  # not a template
        ({"line": "WEIGHTS", "handle": "no_such_handler"}, ValueError),
        ({"line": "WEIGHTS", "handle": "nope:load_oom"}, ValueError),  # no such factory
        ({"line": "WEIGHTS", "handle": "weights", "kvv": True}, ValidationError),  # a misspelt flag
    ],
)
def test_a_row_that_does_not_resolve_is_refused(tmp_path: Path, row: dict[str, object], error: type) -> None:
    with pytest.raises(error):
        load_rules(_table(tmp_path, row))
