"""Handlers for the memory-budget, graph, block and capacity lines (reference §4.1–§4.3)."""

from __future__ import annotations

import re

from app.core import regex
from app.core import vllm_text as vt
from app.core.logs.reading import (
    float_of,
    gib_bytes,
    int_of,
)
from app.core.logs.startup.accumulator import (
    SOURCE_FALLBACK,
    SOURCE_FORCED,
    SOURCE_PRIMARY,
    SOURCE_SECONDARY,
    G,
    _ascend_marker,
    _device,
    _error,
    _Line,
    _Run,
)
from app.core.text import N_, Text

# --------------------------------------------------------------------------------------------
# handlers: memory budget


def _weights(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("weights_bytes", gib_bytes(m.group(1)), ln)
    run.stage = "profile"


def _v0_budget(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("device_total_bytes", gib_bytes(m.group(1)), ln)
    run.put("gpu_memory_utilization", float_of(m.group(2)), ln, source=SOURCE_FALLBACK)  # 2 decimals only
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)


def _v0_partition(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("weights_bytes", gib_bytes(m.group(1)), ln, source=SOURCE_SECONDARY)
    run.put("non_torch_bytes", gib_bytes(m.group(2)), ln)
    run.put("activation_peak_bytes", gib_bytes(m.group(3)), ln)
    _kv_memory(m.group(4), ln, run)
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)


_PROFILE_VALUE = regex.compile(vt.PROFILE_VALUE)


def _v0_profiling_results(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """0.6.4/0.6.5 one-line "Memory profiling results: total_gpu_memory=…GiB …" (peak includes weights)."""
    values = dict(_PROFILE_VALUE.findall(m.group(0)))
    total = values.get("total_gpu_memory") or values.get("total_npu_memory")
    run.put("device_total_bytes", None if total is None else gib_bytes(total), ln)
    non_torch = values.get("non_torch_memory")
    run.put("non_torch_bytes", None if non_torch is None else gib_bytes(non_torch), ln)
    kv = values.get("kv_cache_size")
    if kv is not None:
        _kv_memory(kv, ln, run)
    util = values.get("gpu_memory_utilization")
    run.put("gpu_memory_utilization", None if util is None else float_of(util), ln, source=SOURCE_FALLBACK)
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)
    run.note(Text("this vLLM prints peak_torch_memory (weights + activation) instead of the activation peak"))


_PROFILE_ROW_FIELDS = {
    "total_gpu_memory": "device_total_bytes",
    "model weights take": "weights_bytes",
    "non_torch_memory": "non_torch_bytes",
    "PyTorch activation peak memory": "activation_peak_bytes",
}


def _v0_profiling_row(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """One row of the one-per-line "Memory profiling results:" table (vllm#10511)."""
    name, value = m.group(1), m.group(2)
    if name == "available_kv_cache_memory":
        _kv_memory(value, ln, run)
    elif name == "gpu_memory_utilization":
        run.put("gpu_memory_utilization", float_of(value), ln, source=SOURCE_FALLBACK)  # 2 decimals only
    else:
        source = SOURCE_SECONDARY if name == "model weights take" else SOURCE_PRIMARY
        run.put(_PROFILE_ROW_FIELDS[name], gib_bytes(value), ln, source=source)
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)


def _kv_memory(printed: str, ln: _Line, run: _Run) -> None:
    value = gib_bytes(printed)
    if value is None:
        return
    run.put("kv_cache_bytes", value, ln)
    run.kv_readings.append((value, ln.evidence))


def _available_kv(m: re.Match[str], ln: _Line, run: _Run) -> None:
    _kv_memory(m.group(1), ln, run)
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


def _warmup_kv(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """0.34.0's extensible cache: "… %d KV cache blocks (%s GiB) fit within …" after warmup is the pool (the
    "Available KV cache memory" before it was the tentative budget, vllm_text_extensible.WARMUP_KV)."""
    pool = gib_bytes(m.group(3))
    if pool is None:
        return
    run.put("kv_cache_bytes", pool, ln, source=SOURCE_FORCED)
    run.put("num_gpu_blocks", int_of(m.group(2)), ln, source=SOURCE_FORCED, mode="min")
    run.warmup_kv_readings.append((pool, ln.evidence))
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


# the last release series whose vllm-ascend prints the budget in bytes (v0.13.0 vllm_ascend/worker/worker.py:309
# "Available memory: {available_kv_cache_memory}, total memory: {total_npu_memory}"; not in v0.18.0, and v0.15.0rc1
# sizes the pool from a MemorySnapshot instead, versions.py): a log with the line ran vLLM 0.14 or older
ASCEND_BYTES_BUDGET_LAST = "0.14.0"


def _ascend_budget(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """vllm-ascend ≤ v0.14: "Available memory: <bytes>, total memory: <bytes>" (the KV pool and the total)."""
    available = float_of(m.group(1))
    run.put("device_total_bytes", int_of(m.group(2)), ln)
    if available is not None:
        run.put("kv_cache_bytes", int(available), ln)
        run.kv_readings.append((int(available), ln.evidence))
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)
    run.put("release_at_most", ASCEND_BYTES_BUDGET_LAST, ln, source=SOURCE_FALLBACK)
    _ascend_marker(m, ln, run)


def _kv_reserved(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("device_free_at_start_bytes", gib_bytes(m.group(1)), ln, source=SOURCE_SECONDARY)
    _kv_memory(m.group(2), ln, run)
    run.put("kv_cache_memory_specified", True, ln)
    run.note(Text("KV cache size was set by --kv-cache-memory-bytes; gpu_memory_utilization did not size it"))


def _v1_profiling(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("non_kv_cache_bytes", gib_bytes(m.group(1)), ln)
    run.put("activation_peak_bytes", gib_bytes(m.group(2)), ln)
    if m.group(3) == "non-torch forward increase memory":
        run.put("non_torch_bytes", gib_bytes(m.group(4)), ln)
    else:
        run.put("total_consumed_bytes", gib_bytes(m.group(4)), ln)
    run.put("weights_bytes", gib_bytes(m.group(5)), ln, source=SOURCE_SECONDARY)
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


FREE_MEMORY_REFUSAL = "is less than desired"  # the start-up check's words after "on startup" (0.10.2+)


# the device the start-up check names ("on device cuda:3 (53.76/79.18 GiB)"): each worker checks its own
# (v1/worker/utils.py::request_memory, 0.23.0, "Free memory on device {device} (…)"), in no fixed order
_CHECKED_DEVICE = regex.compile(r"on device \S{0,40}?:(\d{1,4}) \(")


def _free_at_start(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """Device 0's figures win over the other workers' (as rank 0's budget line is the pool); with no device 0,
    the first printed (vllm_text FREE_AT_START; heldout-2026-12zf's four TP 4 refusals)."""
    device = _CHECKED_DEVICE.search(m.group(0))
    if device is not None and int(device.group(1)) != 0:
        run.put(
            "device_free_at_start_bytes", gib_bytes(m.group(1)), ln, source=SOURCE_SECONDARY, mode="first"
        )
        run.put("device_total_bytes", gib_bytes(m.group(2)), ln, source=SOURCE_SECONDARY, mode="first")
    else:
        run.put("device_free_at_start_bytes", gib_bytes(m.group(1)), ln)
        run.put("device_total_bytes", gib_bytes(m.group(2)), ln)
    rest = m.string[m.end() :]
    tail = rest.strip()
    # the refusal, whole or wrapped after any part of its "is less than desired" (the next line goes on)
    if tail.startswith(FREE_MEMORY_REFUSAL) or (tail and FREE_MEMORY_REFUSAL.startswith(tail)):
        _error("startup_free_memory", m, ln, run)
    desired = regex.search(vt.DESIRED_UTILIZATION, rest)
    if desired is not None:
        run.put("gpu_memory_utilization", float_of(desired.group(1)), ln, source=SOURCE_FALLBACK)
    _usage_summary(rest, ln, run)


def _desired_utilization(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("gpu_memory_utilization", float_of(m.group(1)), ln, source=SOURCE_FALLBACK)


def _usage_summary(rest: str, ln: _Line, run: _Run) -> None:
    """The post-capture suggestion line (0.11.0 / 0.33.0 / vllm-ascend wordings, reference §4.2, §9)."""
    terms = {
        "weights_bytes": r"for weights?\b",
        "activation_peak_bytes": r"for peak activation",
        "non_torch_bytes": r"for non-torch memory",
        "total_consumed_bytes": r"for consumed memory",
        "cuda_graph_bytes": r"for (?:CUDAGraph|NPU graph|\w+ graph) memory",
    }
    for name, label in terms.items():
        found = regex.search(G + r" GiB " + label, rest)
        if found is not None:
            run.put(name, gib_bytes(found.group(1)), ln, source=SOURCE_FALLBACK)
    if regex.search(r"for (?:NPU|ACL) graph memory", rest) is not None:
        run.put("is_ascend", True, ln)
        run.put("device_type", "NPU", ln, source=SOURCE_FALLBACK)
    suggestion = regex.search(r"--kv-cache-memory=(\d{1,18})", rest)
    if suggestion is not None:
        run.put("kv_cache_memory_suggestion_bytes", int_of(suggestion.group(1)), ln)
    in_use = regex.search(r"Current (?:kv|KV) cache memory(?: in use is|:) " + G + " GiB", rest)
    if in_use is not None:
        pool = gib_bytes(in_use.group(1))
        run.put("kv_cache_bytes", pool, ln, source=SOURCE_FALLBACK)
        slot = run.slots.get("kv_cache_bytes")
        if pool is not None and slot is not None and slot.priority[0] == SOURCE_FALLBACK:
            # no "Available KV cache memory" line: each rank's own figure, the smallest sets the blocks
            run.kv_readings.append((pool, ln.evidence))


def _graph_captured(m: re.Match[str], ln: _Line, run: _Run) -> None:
    # 0.33.0's V2 runner prints this twice (profiling capture, then the real one): the last one wins
    graph_bytes = gib_bytes(m.group(1))
    if graph_bytes is not None and graph_bytes < 0:
        # the figure is the device's free memory before the capture minus after it (capture_model, 0.11.2 / 0.33.0):
        # below zero, memory was released during the capture, so it is not the graphs' size
        run.note(
            Text(
                "the graph capture line prints {took} GiB: negative, so the device freed memory while capturing and "
                "the figure is not the graphs' size (not read)",
                took=m.group(1),
            )
        )
    else:
        run.put("cuda_graph_bytes", graph_bytes, ln)
    if run.stage == "graph":
        run.stage = "profile"


def _graph_pool(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("cuda_graph_bytes", gib_bytes(m.group(1)), ln, source=SOURCE_FORCED)
    run.put("cuda_graph_estimate_bytes", gib_bytes(m.group(2)), ln, source=SOURCE_SECONDARY)


def _graph_estimate(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("cuda_graph_estimate_bytes", gib_bytes(m.group(1)), ln)


def _graph_equivalence(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("gpu_memory_utilization", float_of(m.group(1)), ln, source=SOURCE_SECONDARY)
    run.put("gpu_memory_utilization_without_cuda_graph", float_of(m.group(2)), ln)


def _graph_utilization_suggestion(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("gpu_memory_utilization", float_of(m.group(1)), ln, source=SOURCE_SECONDARY)


# --------------------------------------------------------------------------------------------
# handlers: blocks and capacity


def _sized(run: _Run) -> None:
    """A KV size line: the pool was sized, so a later failure is in the allocation or the graph capture."""
    if run.stage in ("start", "load", "profile"):
        run.stage = "sized"


def _blocks(m: re.Match[str], ln: _Line, run: _Run) -> None:
    _sized(run)
    run.put("device_type", _device(m.group(1)), ln, source=SOURCE_SECONDARY)
    run.put("num_gpu_blocks", int_of(m.group(2)), ln, mode="min")
    if m.group(3) is not None:
        run.put("num_cpu_blocks", int_of(m.group(3)), ln, mode="min")
        run.put("engine", "v0", ln, source=SOURCE_FALLBACK)
    else:
        run.put("engine", "v1", ln, source=SOURCE_FALLBACK)  # V1 0.6.6 / 0.7.3 print no CPU blocks


def _engine_blocks(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """The engine's blocks once the cache is initialised; with several engines each prints its own."""
    run.put("num_gpu_blocks", int_of(m.group(1)), ln, mode="min")


def _mamba_capped(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """0.19.x: the capture sizes capped to the pool's blocks, which the warning prints (the pool's num_blocks)."""
    run.put("num_gpu_blocks", int_of(m.group("blocks")), ln, source=SOURCE_SECONDARY)
    capped = N_(
        "vLLM capped the CUDA-graph capture sizes from {before} to {after} to fit {blocks} Mamba cache blocks: decode batches above {after} run without CUDA graphs"
    )
    run.note(Text(capped, **m.groupdict()))  # the sentence names the printed groups


def _blocks_override(m: re.Match[str], ln: _Line, run: _Run) -> None:
    if m.group("computed") == "0":
        # 0.18/0.19 allocate a minimal KV cache (available memory 0) to profile CUDA graphs: the
        # override printed then is not the pool the engine runs with
        run.note(Text("'Overriding num_gpu_blocks=0' was printed while profiling CUDA graphs; ignored"))
        return
    run.put("num_gpu_blocks", int_of(m.group("forced")), ln, source=SOURCE_FORCED)
    run.note(
        Text(N_("num_gpu_blocks_override replaced {computed} computed blocks with {forced}"), **m.groupdict())
    )


def _group_block_sizes(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("kv_group_block_sizes", [int(size) for size in m.group(1).split(", ")], ln)


def _scheduler_block_size(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("scheduler_block_size", int_of(m.group(1)), ln)


def _kv_size(m: re.Match[str], ln: _Line, run: _Run) -> None:
    # 0.10.2/0.11.0 print one line per worker before the cross-worker minimum: keep the smallest
    _sized(run)
    prefix = m.group(1)
    if prefix is not None:
        run.put("device_type", _device(prefix.split()[0]), ln)
        if "host" in prefix:
            run.note(Text("part of the KV pool is host-resident (HiSparse): 'GPU + host KV cache size'"))
    run.put("kv_tokens", int_of(m.group(2)), ln, mode="min")
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


def _concurrency(m: re.Match[str], ln: _Line, run: _Run) -> None:
    _sized(run)
    tokens = int_of(m.group(1))
    run.put("max_concurrency_tokens_per_request", tokens, ln)
    run.put("max_concurrency", float_of(m.group(2)), ln, mode="min")
    run.put("max_model_len", tokens, ln, source=SOURCE_FALLBACK)
