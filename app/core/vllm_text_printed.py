"""What the estimator prints: its simulated start-up log and vLLM's refusals, in each release's words.

The other half of app.core.vllm_text (which holds the templates the log parser reads with): each line printed
here is one vLLM prints (reference §4 log lines and errors, §9 vllm-ascend), and the parser reads it back with
the template of that module (tests/unit/test_estimate_text_golden.py prints and reads every release's).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core import situations
from app.core.budget import StageNumbers
from app.core.specs import GIB, DeviceSpec  # vLLM divides by 2**30, prints "GiB" ("GB" in 0.6.6)
from app.core.versions import VersionRules, format_gib, graphs_budgeted

DOCS_URL = "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"
# vLLM's `_get_and_verify_max_len` names the config key it derived the maximum from; almost every model
# declares max_position_embeddings (the printed value is after any RoPE factor).
MAX_LEN_KEY = "max_position_embeddings"
# 0.6.6 and 0.8.5 (vllm/config.py) append "This may lead to incorrect model outputs or CUDA errors."; 0.10.2
# to 0.19.0 (vllm/config/model.py) the RoPE / absolute-position caution (rules.max_len_error_wording).
LONG_LEN_CAUTION = (
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative position "
    "encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses absolute "
    "position encoding, positions exceeding derived_max_model_len will cause a CUDA array out-of-bounds error."
)
# 0.14.0+ config/model.py, --max-model-len auto with a pool that holds no token (reference §4.4)
AUTOFIT_FAILED_TEXT = (
    "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. "
    "Try increasing `gpu_memory_utilization`."
)
_TRY_UTIL = "Try increasing `gpu_memory_utilization`"
_TRY_UTIL_OR_LEN = _TRY_UTIL + " or decreasing `max_model_len` when initializing the engine."


@dataclass(frozen=True)
class PrintedStage:
    """The numbers of the binding worker that vLLM's start-up log prints."""

    parts: StageNumbers
    device: DeviceSpec  # its memory_total_bytes (total_gpu_memory) and platform name the lines
    utilization: float
    requested_bytes: int
    cpu_blocks: int
    kv_tokens: int | None  # None where the release prints no "KV cache size" line
    concurrency: float
    max_model_len: int
    # False: the Mamba-block check (MAMBA_BLOCKS, 0.33.0 initialize_attn_backend) dies after the KV lines, before capture
    graphs_captured: bool = True
    bytes_per_block: int = 0  # one block of every KV layer (kv.KVLayout), 0 with none: 0.34.0's warmup line
    warmed_up: bool = True  # False: 0.34.0 refused the tentative budget before warmup (checks.Refusal)


def weights_line(*, rules: VersionRules, weights_bytes: int) -> str:
    """§4.1, e.g. 0.33.0 and 16,060,522,496 B -> "Model loading took 14.96 GiB memory and … seconds"."""
    if rules.weights_log == "took_gb":
        return f"Loading model weights took {weights_bytes / GIB:.4f} GB"
    memory = " memory" if rules.weights_log == "took_gib_memory" else ""  # from 0.13.0
    if rules.format_gib_style == "fixed2":  # to 0.13.0 "%.4f GiB"; format_gib's from 0.14.0
        return f"Model loading took {weights_bytes / GIB:.4f} GiB{memory} and … seconds"
    return f"Model loading took {format_gib(weights_bytes, rules.format_gib_style)} GiB{memory} and … seconds"


def _v0_lines(*, rules: VersionRules, stage: PrintedStage) -> list[str]:
    """V0 worker.py's profiling message (§4.2) and the executor's block and concurrency lines (§4.3)."""
    word = "GPU" if rules.v0_blocks_word == "GPU" else stage.device.platform
    return [
        "Memory profiling takes … seconds\n"
        f"the current vLLM instance can use total_gpu_memory ({stage.device.memory_total_bytes / GIB:.2f}GiB) x "
        f"gpu_memory_utilization ({stage.utilization:.2f}) = {stage.requested_bytes / GIB:.2f}GiB\n"
        f"model weights take {stage.parts.weights_bytes / GIB:.2f}GiB; non_torch_memory takes "
        f"{stage.parts.non_torch_bytes / GIB:.2f}GiB; PyTorch activation peak memory takes "
        f"{stage.parts.activation_peak_bytes / GIB:.2f}GiB; the rest of the memory reserved for KV Cache is "
        f"{stage.parts.kv_cache_bytes / GIB:.2f}GiB.",
        f"# {word} blocks: {stage.parts.num_blocks}, # CPU blocks: {stage.cpu_blocks}",
        f"Maximum concurrency for {stage.max_model_len} tokens per request: {stage.concurrency:.2f}x",
    ]


def _graph_profile_lines(*, stage: PrintedStage) -> list[str]:
    """0.20.2+ gpu_model_runner.py when CUDA graphs are budgeted (§4.2): equivalent = round(u - cg/T, 4)."""
    u, ratio = stage.utilization, stage.parts.cuda_graph_bytes / stage.device.memory_total_bytes
    return [
        f"Estimated CUDA graph memory: {stage.parts.cuda_graph_bytes / GIB:.2f} GiB total",
        "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
        f"--gpu-memory-utilization={u:.4f} is equivalent to --gpu-memory-utilization={round(u - ratio, 4):.4f} "
        "without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase "
        f"--gpu-memory-utilization to {min(round(u + ratio, 4), 1.0):.4f}. To disable, set "
        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
    ]


def _capacity_lines(*, rules: VersionRules, stage: PrintedStage, kv_tokens: int) -> list[str]:
    """§4.3: one merged line from 0.30.0 (prefix GPU for CUDA/ROCm, else the device type), two before."""
    length = stage.max_model_len
    concurrency = f"Maximum concurrency for {length:,} tokens per request: {stage.concurrency:.2f}x"
    if not rules.merged_capacity_line:
        return [f"GPU KV cache size: {kv_tokens:,} tokens", concurrency]
    platform = stage.device.platform
    prefix = "GPU" if platform in ("cuda", "rocm") else platform.upper()
    return [f"{prefix} KV cache size: {kv_tokens:,} tokens, {concurrency}"]


def startup_lines(*, rules: VersionRules, stage: PrintedStage) -> list[str]:
    """The memory lines of a start-up that profiles, in the order vLLM prints them (§4.1-§4.3).

    E.g. 0.33.0, Llama-3.1-8B on an H100 at 8,192 tokens: "Model loading took 14.96 GiB memory …",
    the two CUDA-graph profiling lines, "Available KV cache memory: 54.77 GiB", "GPU KV cache size:
    448,656 tokens, Maximum concurrency for 8,192 tokens per request: 54.77x", "Graph capturing
    finished in … secs, took 0.91 GiB" (tests/unit/test_estimate_text_golden.py pins every bracket).
    """
    lines = [weights_line(rules=rules, weights_bytes=stage.parts.weights_bytes)]
    if rules.engine == "v0":
        return [*lines, *_v0_lines(rules=rules, stage=stage)]
    if graphs_budgeted(rules=rules, platform=stage.device.platform) and stage.parts.cuda_graph_bytes > 0:
        lines += _graph_profile_lines(stage=stage)
    if stage.device.platform == "npu":
        # vllm-ascend's own lines (vllm_ascend/worker/worker.py): bytes with no unit up to v0.14, then %.2f GiB
        kv_bytes = stage.parts.kv_cache_bytes
        if rules.ascend_budget == "peak":
            lines.append(
                f"Available memory: {max(0, kv_bytes)}, total memory: {stage.device.memory_total_bytes}"
            )
        else:
            halved = (
                rules.ascend_310p_halved_log and situations.pool_divisor(rules=rules, device=stage.device) > 1
            )
            note = (
                " (halved for workspace)" if halved else ""
            )  # vllm_ascend/_310p/worker_310p.py (v0.21.0rc1+)
            lines.append(f"Available KV cache memory: {kv_bytes / GIB:.2f} GiB{note}")
    elif rules.budget_style == "v1_profile":
        kv = stage.parts.kv_cache_bytes
        shown = (
            f"{kv / GIB:.2f}"
            if rules.format_gib_style == "fixed2"
            else format_gib(kv, rules.format_gib_style)
        )
        lines.append(f"Available KV cache memory: {shown} GiB")
    if stage.kv_tokens is not None:
        lines += _capacity_lines(rules=rules, stage=stage, kv_tokens=stage.kv_tokens)
    if stage.parts.cuda_graph_bytes > 0 and stage.graphs_captured:
        lines.append(f"Graph capturing finished in … secs, took {stage.parts.cuda_graph_bytes / GIB:.2f} GiB")
    return lines


def _no_memory_error(*, rules: VersionRules) -> str:
    """§4.4 "No available memory for the cache blocks", in the wording of ``rules``' release."""
    text = "No available memory for the cache blocks. " + _TRY_UTIL + " when initializing the engine"
    if rules.error_style == "v1_027":
        return text + (
            " (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
            f"See {DOCS_URL} for more details."
        )
    if rules.error_style == "v1_014":
        return text + f". See {DOCS_URL} for more details."
    return text + "."


def too_small_error(
    *,
    rules: VersionRules,
    no_memory: bool,
    max_model_len: int,
    needed_bytes: int,
    available_bytes: int,
    estimated_len: int,
    tokens_capacity: int,
) -> str:
    """The start-up error when the KV pool is too small (§4.4), per release.

    E.g. 0.33.0, 8B at 131,072 tokens on an L4: needed 16.0 GiB, available 3.6 GiB, estimate 29,504 ->
    "To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache is needed,
    which is larger than the available KV cache memory (3.6 GiB). Based on the available memory, the
    estimated maximum model length is 29504. Try increasing …". V0 compares tokens instead.
    """
    style = rules.error_style
    if no_memory:
        return _no_memory_error(rules=rules)
    if style == "v0":
        return (
            f"The model's max seq len ({max_model_len}) is larger than the maximum number of tokens that can be "
            f"stored in KV cache ({tokens_capacity}). {_TRY_UTIL_OR_LEN}"
        )
    gib = rules.format_gib_style
    models = "model's" if style == "v1_027" else "models's"
    head = (
        f"To serve at least one request with the {models} max seq len ({max_model_len}), "
        f"({format_gib(needed_bytes, gib)} GiB KV cache is needed, which is larger than the available KV cache "
        f"memory ({format_gib(available_bytes, gib)} GiB)."
    )
    if style == "v1_085":  # the number is a discarded statement in 0.8.5: never printed
        middle = " Based on the available memory,  " if estimated_len > 0 else "  "
        return head + middle + _TRY_UTIL_OR_LEN
    est = (
        f" Based on the available memory, the estimated maximum model length is {estimated_len}. "
        if estimated_len > 0
        else "  "
    )
    if style == "v1_010":
        return head + est + _TRY_UTIL_OR_LEN
    if style == "v1_014":
        return head + est + _TRY_UTIL_OR_LEN[:-1] + f". See {DOCS_URL} for more details."
    return (
        head
        + est
        + _TRY_UTIL
        + " (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when "
        f"initializing the engine. See {DOCS_URL} for more details."
    )


def free_memory_error(
    *, where: str, total_bytes: int, free_bytes: int, utilization: float, requested_bytes: int
) -> str:
    """0.10.2+ start-up check (§2.2): e.g. H100 79.10 GiB, free 78.60, u = 0.999 (79.02 GiB) -> "Free memory
    on device cuda:0 (78.6/79.1 GiB) on startup is less than desired GPU memory utilization (0.999,
    79.02 GiB). …" (``where``: "device cuda:0 " from 0.14, "device " before and on vllm-ascend). Sizes are
    round(x, 2) as vLLM prints them: 0.11.0 ``GiB = lambda b: round(b / GiB_bytes, 2)``, 0.14+ format_gib."""
    return (
        f"Free memory on {where}({format_gib(free_bytes, 'round2')}/{format_gib(total_bytes, 'round2')} GiB) on "
        f"startup is less than desired GPU memory utilization ({utilization}, {format_gib(requested_bytes, 'round2')}"
        " GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
    )


def long_max_model_len_error(*, rules: VersionRules, max_model_len: int, derived: int) -> str:
    """The engine config's ValueError for --max-model-len above the model's derived maximum (text read from
    each release's source): e.g. 200,000 over 131,072 -> "ValueError: User-specified max_model_len (200000)
    is greater than the derived max_model_len (max_position_embeddings=131072 or …"."""
    msg = (
        f"User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len "
        f"({MAX_LEN_KEY}={derived} or model_max_length=None in model's config.json)."
    )
    if rules.max_len_error_wording == "incorrect_outputs":
        return (
            f"ValueError: {msg} This may lead to incorrect model outputs or CUDA errors. To allow overriding "
            "this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
        )
    return (
        f"ValueError: {msg} To allow overriding this maximum, set the env var "
        f"VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. {LONG_LEN_CAUTION}"
    )


def load_oom_error(*, platform: str, total_bytes: int) -> str:
    """PyTorch's allocator error while the weights load: e.g. an L4 (21.99 GiB) -> "torch.OutOfMemoryError:
    CUDA out of memory. Tried to allocate … GiB. GPU 0 has a total capacity of 21.99 GiB of which … MiB is
    free." The failing tensor and the free memory then depend on the load order: left as "…"."""
    kind = {"cuda": "CUDA", "rocm": "HIP", "npu": "NPU"}.get(platform, platform.upper())
    exc = "RuntimeError" if platform == "npu" else "torch.OutOfMemoryError"
    return (
        f"{exc}: {kind} out of memory. Tried to allocate … GiB. GPU 0 has a total capacity of "
        f"{total_bytes / GIB:.2f} GiB of which … MiB is free."
    )


def load_start_line(*, model: str) -> str:
    """v1/worker/gpu_model_runner.py load_model's first line (read back by :data:`LOAD_START`)."""
    return f"Starting to load model {model}..."


def autofit_line(*, rules: VersionRules, full: int, length: int, kv_cache_bytes: int) -> str:
    """§4.3 auto-fit: e.g. 0.33.0, 131,072 reduced to 29,504 with 3.6 GiB -> "Auto-fit max_model_len: reduced
    from 131072 to 29504 to fit in available KV cache memory (3.6 GiB GPU)"; 0.14.0 says "GPU memory"."""
    gib = format_gib(kv_cache_bytes, rules.format_gib_style)
    new_style = rules.autofit_log == "kv_cache_memory"
    if length >= full:
        head = f"Auto-fit max_model_len: full model context length {full} fits in available "
        return head + (f"KV cache memory ({gib} GiB GPU)" if new_style else "GPU memory")
    head = f"Auto-fit max_model_len: reduced from {full} to {length} to fit in available "
    return head + (
        f"KV cache memory ({gib} GiB GPU)" if new_style else f"GPU memory ({gib} GiB available for KV cache)"
    )
