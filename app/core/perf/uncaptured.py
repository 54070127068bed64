"""Which engine steps run outside a CUDA graph, and what launching their kernels one by one costs.

A start-up that captures graphs replays one only for a step whose scheduled tokens fit the largest captured
size; a bigger step runs the compiled model with every kernel launched from the host. V1 (0.8.0-0.33.0
v1/worker/gpu_model_runner.py, ``execute_model``: a batch of more tokens than the largest entry of
compilation_config.cudagraph_capture_sizes takes no padded graph size and runs with cudagraph_runtime_mode NONE)
decides by the step's token count alone, and the sizes are graph_rules.capture_sizes' (512 at the default
256 sequences, 2 x max_num_seqs below that, max_num_batched_tokens if smaller). V0 (0.6.x worker/model_runner.py,
ModelInputForGPUBuilder.build: ``use_captured_graph`` needs a decode-only batch) replays graphs for decode
steps of at most 256 sequences only: every step with a prompt chunk in it is launched eagerly.

Where the step is launched that way, its layers cost what an --enforce-eager start's do (the fitted
``Coefficients.eager_layer_s`` a layer, on the --enforce-eager runs): the host issues them while the device
runs what it was given, so a step takes the longer of the two (:func:`launched_seconds`). Off by default
(``Coefficients.uncaptured_launch``): chosen or refused by bench/perf_loso.py ``+uncap``.
"""

from __future__ import annotations

from app.core import graph_mode, graph_rules
from app.core.backends import BackendChoice
from app.core.defaults import ResolvedFlags
from app.core.result import Estimate
from app.core.specs import DeviceSpec, ServeConfig
from app.core.versions import rules_for

V0_DECODE_GRAPH_MAX = 256  # V0 _BATCH_SIZES_TO_CAPTURE ends at 256 decode sequences (0.6.x model_runner.py)
NO_LIMIT = 1 << 62  # every step replays a graph (no step is that large)


def graph_token_limit(*, estimate: Estimate, serve: ServeConfig, device: DeviceSpec) -> int:
    """The most tokens a step can carry and still replay a captured graph (V1), or, on V0, the most decode
    sequences (any prompt chunk makes a V0 step eager: :func:`uncaptured`). 0 when no graph is captured
    (--enforce-eager: every step is eager, which StepPhysics.eager prices already); NO_LIMIT off CUDA and ROCm.
    E.g. 0.14.0 at 256 sequences and 8,192 batched tokens: 512; at 64 sequences: 128; at 256 tokens: 256."""
    rules = rules_for(estimate.vllm_version)
    if not graph_mode.captures_graphs(serve, rules=rules):
        return 0
    if device.platform not in ("cuda", "rocm"):
        return NO_LIMIT
    if rules.engine != "v1":
        return V0_DECODE_GRAPH_MAX
    flags = ResolvedFlags(
        max_model_len=estimate.max_model_len,
        gpu_memory_utilization=estimate.gpu_memory_utilization,
        max_num_seqs=estimate.max_num_seqs,
        max_num_batched_tokens=estimate.max_num_batched_tokens,
        prefix_caching=False,
        chunked_prefill=True,
        choice=BackendChoice(name="", block_size=16),  # capture_sizes reads the two limits only
    )
    sizes = graph_rules.capture_sizes(serve=serve, flags=flags, rules=rules, sm=device.sm)
    return max(sizes, default=0)


def uncaptured(*, limit: int, v0: bool, decode_tokens: float, prefill_tokens: float) -> bool:
    """Whether this step runs without a graph: V1 past the largest captured token count, V0 with any prompt
    chunk or past its decode sizes. E.g. limit 512: 480 decodes + a 32-token chunk replays, + 33 does not."""
    if limit <= 0:
        return False  # no graphs at all: the eager start's own layer floor prices it
    if v0:
        return prefill_tokens > 0 or decode_tokens > limit
    return decode_tokens + prefill_tokens > limit


def launched_seconds(*, device_s: float, launch_s: float, serial: bool = False) -> float:
    """An eagerly launched step: the host's launches and the device's kernels overlap (the host runs ahead
    of the device on the stream), so the step lasts the longer of the two: e.g. 32 layers at 0.3 ms of
    launches (9.6 ms) under a 40 ms prompt chunk cost nothing; under a 4 ms step, 5.6 ms more. ``serial``:
    the launches add to the device's work, as StepPhysics.eager's layer floor prices an --enforce-eager start."""
    return device_s + launch_s if serial else max(device_s, launch_s)
