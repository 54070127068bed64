"""The memory lines of a 0.34.0 start-up under the extensible KV cache (app/core/extensible_kv.py), in the order
vLLM prints them; kept apart from vllm_text.py (800-line cap).

- gpu/model_runner.py load_model: "Model loading took %s GiB memory and %.6f seconds" (vllm_text_printed.weights_line);
- v1/worker/gpu_worker.py Worker.determine_available_memory: "Available KV cache memory: %s GiB", the tentative
  budget before warmup, requested - non_kv_cache_memory (weights, non-torch, activation peak), with no graph
  estimate: gpu/model_runner.py profile_cudagraph_memory returns 0 under this cache, so neither "Estimated CUDA
  graph memory" nor the "CUDA graph memory profiling is enabled" line is printed;
- gpu/model_runner.py capture_model: "Graph capturing finished in %.0f secs, took %.2f GiB";
- v1/worker/extensible_kv_cache.py measure_kv_cache_blocks: "Memory after warmup: … GiB free, … GiB committed to
  the KV cache, … GiB kept for transient activations (%s GiB allocated at peak, … GiB of torch reservation
  growth); %d KV cache blocks (%s GiB) fit within the requested %s GiB. Torch may reserve up to … GiB.", with the
  peak (reserved_headroom_bytes, the profiled activation peak), the blocks, their bytes and the requested budget;
  the free memory, the prefix warmup committed and torch's reservation are not modelled ("…");
- v1/core/kv_cache_planning.py finalize_extensible_kv_cache -> kv_cache_utils.py update_kv_cache_capacity: the
  "GPU KV cache size" line, once, on the pool measured after capture (update_kv_cache_capacity is skipped before
  warmup, v1/engine/core.py).

The doctor reads the warmup line's blocks and pool (WARMUP_KV); its pattern needs the free-memory number, so the
planner's own line, with "…" there, is not read back as a log's.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core import extensible_kv
from app.core.budget import StageNumbers
from app.core.specs import GIB, ServeConfig
from app.core.versions import VersionRules, format_gib
from app.core.vllm_text import GIB_NUMBER, VllmLine
from app.core.vllm_text_printed import DOCS_URL, PrintedStage, weights_line
from app.core.vllm_text_printed import startup_lines as profiled_startup_lines

# v1/worker/extensible_kv_cache.py measure_kv_cache_blocks (0.34.0) logs the pool measured after warmup and
# capture: "Memory after warmup: %s GiB free, %s GiB committed to the KV cache, %s GiB kept for transient
# activations (…); %d KV cache blocks (%s GiB) fit within the requested %s GiB. …". Its blocks x bytes per block
# is the final pool; the "Available KV cache memory" line before it is the tentative budget before warmup.
WARMUP_KV = VllmLine(
    "Memory after warmup",
    r"Memory after warmup: "
    + GIB_NUMBER
    + r" GiB free, .{0,600}?; (\d{1,12}) KV cache blocks \("
    + GIB_NUMBER
    + r" GiB\) fit within",
    "Memory after warmup: %s GiB free, … %d KV cache blocks (%s GiB) fit within the requested %s GiB. …",
    "v1/worker/extensible_kv_cache.py::measure_kv_cache_blocks (0.34.0)",
)


def startup_lines(*, rules: VersionRules, stage: PrintedStage) -> list[str]:
    """E.g. dense() (32 layers) on an H100 at 0.34.0 and 8,192 tokens: "Model loading took 14.96 GiB memory …",
    "Available KV cache memory: 61.3 GiB" (84,932,978,278 - 16,060,522,496 - 268,435,456 - 2,023,699,251 B),
    "Graph capturing finished in … secs, took 0.91 GiB", then the KV cache size line of the measured pool."""
    parts = stage.parts
    tentative = (
        stage.requested_bytes - parts.weights_bytes - parts.non_torch_bytes - parts.activation_peak_bytes
    )
    lines = [
        weights_line(rules=rules, weights_bytes=parts.weights_bytes),
        f"Available KV cache memory: {format_gib(max(tentative, 0), rules.format_gib_style)} GiB",
    ]
    if (
        not stage.warmed_up
    ):  # refused on that budget (get_kv_cache_configs): no capture, no warmup, no KV size line
        return lines
    if parts.cuda_graph_bytes > 0 and stage.graphs_captured:
        lines.append(f"Graph capturing finished in … secs, took {parts.cuda_graph_bytes / GIB:.2f} GiB")
    if stage.kv_tokens is not None:
        lines.append(warmup_line(rules=rules, stage=stage))
        lines.append(
            f"GPU KV cache size: {stage.kv_tokens:,} tokens, Maximum concurrency for {stage.max_model_len:,} "
            f"tokens per request: {stage.concurrency:.2f}x"
        )
    return lines


def warmup_line(*, rules: VersionRules, stage: PrintedStage) -> str:
    """measure_kv_cache_blocks' line as far as the planner models it. E.g. dense() on an H100 at 0.34.0: "Memory
    after warmup: … GiB free, … GiB committed to the KV cache, … GiB kept for transient activations (1.88 GiB
    allocated at peak, … GiB of torch reservation growth); 30272 KV cache blocks (59.12 GiB) fit within the
    requested 79.1 GiB. Torch may reserve up to … GiB." """
    gib = rules.format_gib_style
    blocks = stage.parts.num_blocks
    return (
        "Memory after warmup: … GiB free, … GiB committed to the KV cache, … GiB kept for transient activations "
        f"({format_gib(stage.parts.activation_peak_bytes, gib)} GiB allocated at peak, … GiB of torch reservation "
        f"growth); {blocks} KV cache blocks ({format_gib(blocks * stage.bytes_per_block, gib)} GiB) fit within the "
        f"requested {format_gib(stage.requested_bytes, gib)} GiB. Torch may reserve up to … GiB."
    )


def no_kv_cache_lines(*, rules: VersionRules, stage: PrintedStage) -> list[str]:
    """A V1 start-up with no KV cache spec (encoder-only attention): 0.33.0 and 0.34.0 v1/engine/core.py
    _initialize_kv_caches skips determine_available_memory when has_kv_cache is False, and update_kv_cache_capacity
    (kv_cache_utils.py) runs only when kv_cache_groups is non-empty. So: the weights line and the graph capture
    (Worker.compile_or_warm_up_model still captures), no profile lines, no "Available KV cache memory", no "KV cache
    size". E.g. bge-m3 (XLM-R, 1,133,410,304 B of weights) at 0.33.0: "Model loading took 1.06 GiB memory and …
    seconds", then "Graph capturing finished in … secs, took …"""
    lines = [weights_line(rules=rules, weights_bytes=stage.parts.weights_bytes)]
    if stage.parts.cuda_graph_bytes > 0 and stage.graphs_captured:
        lines.append(f"Graph capturing finished in … secs, took {stage.parts.cuda_graph_bytes / GIB:.2f} GiB")
    return lines


def memory_lines(*, rules: VersionRules, stage: PrintedStage, serve: ServeConfig) -> list[str]:
    """The start-up's memory lines: these under the extensible cache (extensible_kv.applies), else vllm_text's."""
    if rules.engine != "v0" and stage.bytes_per_block == 0:  # no KV cache group (kv.KVLayout with none)
        return no_kv_cache_lines(rules=rules, stage=stage)
    if extensible_kv.applies(rules=rules, device=stage.device, serve=serve):
        return startup_lines(rules=rules, stage=stage)
    return profiled_startup_lines(rules=rules, stage=stage)


def memory_hint(*, utilization: float, after_warmup: bool) -> str:
    """v1/core/kv_cache_planning.py _more_kv_cache_memory_hint (0.34.0) under the extensible KV cache."""
    used_by = (
        "the model, its activations, CUDA graphs and warmup"
        if after_warmup
        else "the model and its activations"
    )
    graphs = (
        " CUDA graphs take less with fewer or smaller capture sizes in the compilation config."
        if after_warmup
        else ""
    )
    if utilization < extensible_kv.EXTENSIBLE_DEFAULT_UTILIZATION:
        return (
            f"The KV cache gets what is left after {used_by} within `gpu_memory_utilization`={utilization}; increase "
            f"it (with the extensible KV cache it defaults to 1.0) or decrease `max_model_len` or `max_num_seqs`.{graphs}"
        )
    return (
        f"The extensible KV cache already takes all device memory left after {used_by}; decrease `max_model_len` or "
        f"`max_num_seqs`, or the model needs a device with more memory.{graphs}"
    )


def too_small_error(
    *,
    rules: VersionRules,
    no_memory: bool,
    max_model_len: int,
    needed_bytes: int,
    available_bytes: int,
    estimated_len: int,
    tokens_capacity: int,  # unused: vllm_text_printed.too_small_error's V0 figure, kept so both take the same call
    utilization: float,
    after_warmup: bool = True,
) -> str:
    """0.34.0 kv_cache_planning.py _check_enough_kv_cache_memory after warmup (shrink_kv_cache_configs, the
    measured pool less the null block), with _more_kv_cache_memory_hint(after_warmup=True); before warmup
    (``after_warmup`` False, get_kv_cache_configs on the tentative budget) the hint names only the model and its
    activations.

    E.g. 16.0 GiB needed at 131,072 tokens, 3.86 GiB left, estimate 31,616, utilization 1.0 -> "To serve at least
    one request with the model's max seq len (131072), (16.0 GiB KV cache is needed, which is larger than the
    available KV cache memory (3.86 GiB). Based on the available memory, the estimated maximum model length is
    31616. The extensible KV cache already takes all device memory left after the model, its activations, CUDA
    graphs and warmup; … Decreasing `max_model_len` also reduces what is needed. See … for more details."
    """
    hint = memory_hint(utilization=utilization, after_warmup=after_warmup)
    if no_memory:
        return f"No available memory for the cache blocks. {hint} See {DOCS_URL} for more details."
    gib = rules.format_gib_style
    est = (
        f"Based on the available memory, the estimated maximum model length is {estimated_len}. "
        if estimated_len > 0
        else ""
    )
    return (
        f"To serve at least one request with the model's max seq len ({max_model_len}), "
        f"({format_gib(needed_bytes, gib)} GiB KV cache is needed, which is larger than the available KV cache "
        f"memory ({format_gib(available_bytes, gib)} GiB). {est}{hint} Decreasing `max_model_len` also reduces "
        f"what is needed. See {DOCS_URL} for more details."
    )


def tentative_check_bytes(
    *, rules: VersionRules, requested_bytes: int, parts: StageNumbers, bytes_per_block: int
) -> int:
    """What 0.34.0 checks before warmup under the extensible cache (kv_cache_planning.py get_kv_cache_configs):
    the tentative budget requested - (weights + non-torch + activation peak), no graphs and no margin, less the
    null block. It is never below the measured pool's check, so a length it refuses is refused here first.

    E.g. Llama-3.1-8B on an L4 at 131,072 tokens: 6.27 GiB tentative against 3.86 GiB measured."""
    tentative = requested_bytes - parts.weights_bytes - parts.non_torch_bytes - parts.activation_peak_bytes
    return tentative - (bytes_per_block if rules.null_block_in_check else 0)


def extensible_refusal(
    *,
    rules: VersionRules,
    parts: StageNumbers,
    bytes_per_block: int,
    requested_bytes: int,
    needed_bytes: int,
    final_check_bytes: int,
    max_model_len: int,
    utilization: float,
    estimate_len: Callable[[int], int],
) -> tuple[bool, str, bool]:
    """(no memory at all, the error, refused before warmup) of a 0.34.0 start whose measured pool cannot hold one request: refused before
    warmup on the tentative budget when that is short too (:func:`tentative_check_bytes`), else after warmup on
    the measured pool (``final_check_bytes``, the pool less the null block)."""
    tentative = tentative_check_bytes(
        rules=rules, requested_bytes=requested_bytes, parts=parts, bytes_per_block=bytes_per_block
    )
    before = tentative <= 0 or needed_bytes > tentative
    available = tentative if before else final_check_bytes
    no_memory = available <= 0
    text = too_small_error(
        rules=rules,
        no_memory=no_memory,
        max_model_len=max_model_len,
        needed_bytes=needed_bytes,
        available_bytes=available,
        estimated_len=0 if no_memory else min(estimate_len(available), max_model_len),
        tokens_capacity=0,
        utilization=utilization,
        after_warmup=not before,
    )
    return no_memory, text, before
