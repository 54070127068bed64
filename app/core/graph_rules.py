"""What the CUDA-graph mode a start-up runs changes in the plan (issue 22 item 1): the checks that need full
graphs. Kept apart from graph_mode.py (which versions.py imports for the mode's type) so it may read the
layers and vLLM's texts, and from estimate.py (at its size cap).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core import budget, capture_split, compilation, graph_mode, layers, vllm_text
from app.core.errors import InvalidServeConfigError
from app.core.graph_mode import FULL_GRAPH_MODES, CudagraphMode
from app.core.graph_support import on_sm
from app.core.hf_config.registry import is_pooling_architecture
from app.core.specs import LayerKind, ModelSpec, ServeConfig
from app.core.text import Text
from app.core.version_types import GraphSupport
from app.core.versions import VersionRules
from app.core.versions_changelog import CG_ALWAYS, CG_NEVER, CG_UNIFORM

if TYPE_CHECKING:
    from app.core.defaults import ResolvedFlags
    from app.core.specs import DeviceSpec

# v1/attention/backend.py AttentionCGSupport members, by level (versions_changelog.CG_*)
SUPPORT_NAMES = ("NEVER", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "ALWAYS")
# the modes whose decode batches run as full graphs of their own under 0.34.0's split grids (capture_split.py)
SPLIT_DECODE_MODES = ("FULL_AND_PIECEWISE", "FULL_DECODE_ONLY")


def mamba_blocks_error(
    *,
    rules: VersionRules,
    serve: ServeConfig,
    model: ModelSpec,
    platform: str,
    max_num_seqs: int,
    num_blocks: int,
) -> str | None:
    """0.20.2+ CompilationConfig.resolve_cudagraph_mode_and_sizes, called from gpu_model_runner.initialize_kv_cache
    (after the KV size lines, before the KV tensors are allocated and graphs captured): with full CUDA graphs (the
    default FULL_AND_PIECEWISE; not PIECEWISE, -O1, -O0 or --enforce-eager: graph_mode.py) a model with Mamba
    layers needs one block per decode sequence, so max_num_seqs above the pool's num_blocks is refused: vLLM's
    text, or None when the start goes ahead."""
    if (
        not rules.mamba_block_check
        or not graph_mode.full_graphs(serve, rules=rules)
        or platform not in ("cuda", "rocm")
    ):
        return None
    if not layers.has_kind(model, LayerKind.MAMBA) or max_num_seqs <= num_blocks:
        return None
    return vllm_text.mamba_blocks_error(max_num_seqs=max_num_seqs, num_blocks=num_blocks)


def default_capture_cap(*, rules: VersionRules, sm: int | None) -> int:
    """vLLM's default capture ceiling on this device: config/vllm.py _set_cudagraph_sizes' 512 (0.11.1-0.27.1, and
    off 10.x later), ``1024 if current_platform.is_device_capability_family(100) else 512`` from 0.30.0 (any 10.x:
    B200 10.0, B300 10.3), from rules.capture_cap_by_major. None (ROCm, NPU): no CUDA capability, 512."""
    caps = dict(rules.capture_cap_by_major)
    return budget.CUDA_GRAPH_MAX_CAPTURE if sm is None else caps.get(sm // 10, budget.CUDA_GRAPH_MAX_CAPTURE)


def capture_sizes(
    *, serve: ServeConfig, flags: ResolvedFlags, rules: VersionRules, sm: int | None
) -> list[int]:
    """The batch sizes vLLM captures, ascending. config/vllm.py _set_cudagraph_sizes (0.13.0-0.33.0; 0.11.0 steps by 8):
    cudagraph_capture_sizes deduplicated and cut at max_num_batched_tokens; else the grid up to
    min(max_num_batched_tokens, max_cudagraph_capture_size or min(2 x max_num_seqs, default_capture_cap)), plus
    max_num_batched_tokens itself when within that limit (0.20.2+, rules.capture_adds_batched_tokens), plus the
    uniform decode sizes within max_num_batched_tokens (_decode_sizes). With --speculative-config the default cap
    is min(2 x max_num_seqs x (1 + num_speculative_tokens), default_capture_cap) (0.13.0+ decode_query_len).

    E.g. [1, 2, 4, 8, 16, 32] at 8,192 batched tokens -> 6 sizes; max_cudagraph_capture_size 64 -> 11; the default at
    1,024 sequences and 100 batched tokens: 1, 2, 4, 8 ... 96 (15), and 100 from 0.20.2 (16); on a B200 from 0.30.0 at
    1,024 sequences and 8,192 tokens the grid to 1,024: 83."""
    settings = compilation.for_release(serve.compilation_config, version=rules.version)
    tokens = flags.max_num_batched_tokens
    if settings.capture_sizes is not None:
        return sorted({size for size in settings.capture_sizes if size <= tokens})
    seqs = flags.max_num_seqs
    spec = serve.speculative_config
    query_len = 1 + spec.num_speculative_tokens if spec is not None and rules.capture_spec_query_len else 1
    split = split_counts(serve=serve, flags=flags, rules=rules, sm=sm)
    if split is not None:
        return split[0]
    default_cap = default_capture_cap(rules=rules, sm=sm)
    cap = default_cap if rules.capture_cap_ignores_seqs else min(seqs * query_len * 2, default_cap)
    if settings.max_capture_size is not None:
        cap = settings.max_capture_size
    limit = min(cap, tokens)
    sizes = set(budget.capture_grid(limit, step_16_from_256=rules.capture_grid_16_from_256))
    if rules.capture_adds_batched_tokens and tokens <= limit:
        sizes.add(tokens)
    if settings.max_capture_size is None:
        sizes |= {size for size in _decode_sizes(rules, seqs, query_len, default_cap, cap) if size <= tokens}
    return sorted(sizes)


def split_counts(
    *, serve: ServeConfig, flags: ResolvedFlags, rules: VersionRules, sm: int | None
) -> tuple[list[int], int, int] | None:
    """0.34.0 on SM100 with no deprecated capture key (capture_split.py): (every graph's token count, prefill
    graphs, decode graphs); None where the shared grid decides. E.g. 1,024 sequences and 8,192 tokens on a B200:
    91 token sizes, 54 prefill and 64 decode graphs (0.33.0: the 83-size grid to 1,024)."""
    settings = compilation.for_release(serve.compilation_config, version=rules.version)
    wide = sm is not None and sm // 10 == capture_split.WIDE_DEFAULT_MAJOR
    if not rules.capture_split_sm100 or not wide or settings.max_capture_size is not None:
        return None
    if settings.capture_sizes is not None:
        return None
    spec = serve.speculative_config
    query_len = 1 + spec.num_speculative_tokens if spec is not None else 1
    return capture_split.wide_capture_sizes(
        max_num_seqs=flags.max_num_seqs,
        max_num_batched_tokens=flags.max_num_batched_tokens,
        query_len=query_len,
    )


def _decode_sizes(rules: VersionRules, seqs: int, query_len: int, default_cap: int, cap: int) -> set[int]:
    """0.30.0+ uniform_decode_sizes (default cap only): with speculative tokens, query_len x each request count of
    the grid up to min(max_num_seqs, the default cap) and that count itself, within the cap; with none (0.31.0+),
    max_num_seqs when within the cap. E.g. 64 sequences, 2 draft tokens: 3 x {1, 2, 4, 8 ... 64} = 3, 6, 12 ... 192."""
    if rules.capture_decode_sizes == "none":
        return set()
    if query_len > 1:
        requests = min(seqs, default_cap)
        counts = {*budget.capture_grid(requests, step_16_from_256=rules.capture_grid_16_from_256), requests}
        return {n * query_len for n in counts if n * query_len <= cap}
    return {seqs} if rules.capture_decode_sizes == "always" and seqs <= cap else set()


def graphs_in(mode: str, sizes: list[int], flags: ResolvedFlags) -> int:
    """How many graphs a mode captures over ``sizes``: FULL_AND_PIECEWISE one PIECEWISE graph a size and one FULL
    graph a decode size (those up to max_num_seqs), as a ROCm 0.11.0rc2 log prints "67/67" twice
    (tests/data/logs/heldout-2026-12j); FULL_DECODE_ONLY the decode sizes; PIECEWISE and FULL one a size. Before
    0.10.2 (no cudagraph_mode, rules.cudagraph_support empty) V1 captures the piecewise graphs only, as a ROCm
    0.9.2rc2.dev build prints one "(mixed prefill-decode, PIECEWISE): 67/67" bar (heldout-2026-12i)."""
    decode = sum(1 for size in sizes if size <= flags.max_num_seqs)
    if mode == "NONE":
        return 0
    if mode == "FULL_DECODE_ONLY":
        return decode
    return len(sizes) + decode if mode == "FULL_AND_PIECEWISE" else len(sizes)


def rank_graph_bytes(
    *,
    serve: ServeConfig,
    flags: ResolvedFlags,
    rules: VersionRules,
    device: DeviceSpec,
    num_layers_on_rank: int,
) -> int:
    """One rank's CUDA-graph memory (budget.cuda_graph_bytes) for the sizes this start-up captures and the mode it
    captures them in (memory_mode); none without graphs or off CUDA / ROCm."""
    sizes = capture_sizes(serve=serve, flags=flags, rules=rules, sm=device.sm)
    eager = not graph_mode.captures_graphs(serve, rules=rules) or device.platform not in ("cuda", "rocm")
    mode = memory_mode(serve, rules=rules)
    if device.platform == "rocm":  # hipGraph memory: a fixed part plus a part per graph per layer (budget.py)
        return (
            0
            if eager
            else budget.rocm_graph_bytes(
                num_layers_on_rank=num_layers_on_rank,
                graphs=graphs_in(mode if rules.cudagraph_support else "PIECEWISE", sizes, flags),
            )
        )
    split = split_counts(serve=serve, flags=flags, rules=rules, sm=device.sm)
    if (
        split is not None
    ):  # each prefill and each decode graph is one graph a size (budget.ONE_GRAPH_A_SIZE_SHARE)
        _, prefill, decode = split
        graphs = (prefill if mode != "FULL_DECODE_ONLY" else 0) + (
            decode if mode in SPLIT_DECODE_MODES else 0
        )
        return budget.cuda_graph_bytes(
            num_layers_on_rank=num_layers_on_rank,
            enforce_eager=eager,
            captured_sizes=graphs,
            decode_sizes=graphs,
            mode="PIECEWISE" if mode != "NONE" else "NONE",
        )
    return budget.cuda_graph_bytes(
        num_layers_on_rank=num_layers_on_rank,
        enforce_eager=eager,
        captured_sizes=len(sizes),
        decode_sizes=sum(1 for size in sizes if size <= flags.max_num_seqs),
        mode=mode,
    )


def check_compilation(*, serve: ServeConfig, rules: VersionRules, max_num_batched_tokens: int) -> None:
    """The compilation settings a release refuses at start-up: a key its CompilationConfig lacks (0.13.0+,
    ConfigDict(extra="forbid"): engine/arg_utils.py parse_dataclass's ArgumentTypeError), graph_mode.level_refusal
    (0.10.2-0.13), and
    (0.13.0+ config/vllm.py _set_cudagraph_sizes, only when graphs are captured) a max_cudagraph_capture_size that
    is not the largest cudagraph_capture_sizes entry within max_num_batched_tokens.

    E.g. {"cudagraph_capture_sizes": [1, 2, 4, 8], "max_cudagraph_capture_size": 16} -> "customized
    max_cudagraph_capture_size(=16) should be consistent with the max value of cudagraph_capture_sizes(=8)"."""
    unknown = compilation.unknown_keys(serve.compilation_config, version=rules.version)
    known = compilation.release_keys(rules.version)
    if unknown and known is not None and known[0] == "forbid":
        raise InvalidServeConfigError(
            "compilation_config",
            Text(
                "vLLM {version} refuses --compilation-config key {key}: its CompilationConfig has no such field (pydantic: Extra inputs are not permitted).",
                version=rules.version,
                key=unknown[0],
            ),
        )
    text = graph_mode.level_refusal(serve, rules=rules)
    if text is not None:
        raise InvalidServeConfigError("compilation_config", text)
    settings = compilation.for_release(serve.compilation_config, version=rules.version)
    if (
        not rules.capture_size_consistency
        or settings.capture_sizes is None
        or settings.max_capture_size is None
        or not graph_mode.captures_graphs(serve, rules=rules)
    ):
        return
    valid = max((size for size in settings.capture_sizes if size <= max_num_batched_tokens), default=0)
    if settings.max_capture_size != valid:
        raise InvalidServeConfigError(
            "compilation_config",
            f"customized max_cudagraph_capture_size(={settings.max_capture_size}) should be consistent with the max "
            f"value of cudagraph_capture_sizes(={valid})",
        )


@dataclass
class ResolvedMode:
    """The cudagraph_mode a start-up captures, after vLLM lowers what its backends cannot take."""

    mode: CudagraphMode
    asked: CudagraphMode  # before the backends' support was applied (graph_mode.effective_mode)
    log_lines: list[str] = field(default_factory=list)  # vLLM's WARNING for each step down


def _lowest_support(
    *, rules: VersionRules, model: ModelSpec, backend: str, sm: int | None
) -> GraphSupport | None:
    """The model's backend with the least CUDA-graph support (gpu_model_runner._check_and_update_cudagraph_mode:
    the minimum over every attention group, the sparse-MLA indexer's and the Mamba / linear mixers' included);
    None when none is listed. A level read on the device's capability major ("FLASH_ATTN@sm9") is taken over
    the backend's plain one: FLASH_ATTN is ALWAYS on an H100 (FA3), UNIFORM_BATCH on an A100 (FA2)."""
    keys = [backend]
    if model.mla is not None and model.indexer_bytes_per_token:
        keys.append("DEEPSEEK_V32_INDEXER")
    if model.mamba is not None and layers.has_kind(model, LayerKind.MAMBA):
        keys.append(f"mamba:{model.mamba.kind}")
    by_key = {row.key: row for row in rules.cudagraph_support}
    major = None if sm is None else sm // 10
    found = [
        row
        for key in keys
        if (row := by_key.get(on_sm(key, major) if major is not None else key) or by_key.get(key)) is not None
    ]
    return min(found, key=lambda row: row.level) if found else None


def resolved_mode(
    *,
    serve: ServeConfig,
    rules: VersionRules,
    model: ModelSpec,
    backend: str,
    platform: str,
    sm: int | None = None,
) -> ResolvedMode:
    """0.10.2-0.19 gpu_model_runner._check_and_update_cudagraph_mode / 0.20.0-0.33.0 config/compilation.py
    CompilationConfig.resolve_cudagraph_mode_and_sizes, in their order: FULL below ALWAYS -> FULL_AND_PIECEWISE (attention
    split) or FULL_DECODE_ONLY; a decode FULL graph with NEVER -> PIECEWISE (split) or NONE; spec decode (a uniform
    decode of 1 + k tokens) below UNIFORM_BATCH -> PIECEWISE or NONE. FULL with NEVER is refused.

    E.g. DeepSeek-V2-Lite on an A100 at 0.19.0: TRITON_MLA (NEVER) -> PIECEWISE; at 0.22.1 (UNIFORM_BATCH) kept.
    """
    asked = graph_mode.effective_mode(serve, rules=rules)
    out = ResolvedMode(mode=asked, asked=asked)
    if (
        asked in FULL_GRAPH_MODES
        and platform in ("cuda", "rocm")
        and is_pooling_architecture(model.architecture)
    ):
        if rules.pooling_overrides_full:
            out.mode = "PIECEWISE"
            out.log_lines.append(
                "Pooling models do not support full cudagraphs. Overriding cudagraph_mode to PIECEWISE."
            )
        elif serve.cudagraph_mode is None:  # 0.11.0: the default only, and without a word
            out.mode = "PIECEWISE"
    lowest = _lowest_support(rules=rules, model=model, backend=backend, sm=sm)
    if asked == "NONE" or platform not in ("cuda", "rocm") or lowest is None:
        return out
    split = compilation.for_release(serve.compilation_config, version=rules.version).splits_attention
    support = f"AttentionCGSupport.{SUPPORT_NAMES[lowest.level]}"
    where = f"with {lowest.class_name} backend (support: {support})"
    # the pooling override runs first (VllmConfig.__post_init__, at config time): a FULL it lowered is not raised back
    if out.mode == "FULL" and lowest.level < CG_ALWAYS:
        if lowest.level == CG_NEVER:
            raise InvalidServeConfigError(  # vLLM's own ValueError, word for word (like the Mamba-block one)
                "cudagraph_mode",
                f"CUDAGraphMode.FULL is not supported {where}; please try cudagraph_mode=PIECEWISE, and make sure "
                "compilation mode is VLLM_COMPILE",
            )
        out.mode = "FULL_AND_PIECEWISE" if split else "FULL_DECODE_ONLY"
        out.log_lines.append(
            f"CUDAGraphMode.FULL is not supported {where}; setting cudagraph_mode={out.mode}"
        )
    if out.mode in FULL_GRAPH_MODES and lowest.level == CG_NEVER:
        before = out.mode
        out.mode = "PIECEWISE" if split else "NONE"
        why = "attention is compiled piecewise" if split else "attention is not compiled piecewise"
        out.log_lines.append(
            f"CUDAGraphMode.{before} is not supported {where}; setting cudagraph_mode={out.mode} because {why}"
        )
    spec = serve.speculative_config
    if out.mode in FULL_GRAPH_MODES and spec is not None and lowest.level < CG_UNIFORM:
        before = out.mode
        out.mode = "PIECEWISE" if split else "NONE"
        out.log_lines.append(
            f"CUDAGraphMode.{before} is not supported with spec-decode for attention backend "
            f"{lowest.class_name} (support: {support}); setting cudagraph_mode={out.mode}"
        )
    return out


def downgrade_warning(resolved: ResolvedMode, *, rules: VersionRules) -> str | None:
    """The plan's note when vLLM lowers the mode (its figures are the lowered mode's)."""
    if resolved.mode == resolved.asked:
        return None
    return Text(
        "vLLM {version} lowers cudagraph_mode {asked} to {mode} here (a backend of this model does not take {asked}'s full graphs; see the start-up log's 'setting cudagraph_mode' warning): the graph memory and the Mamba-block check follow {mode}.",
        version=rules.version,
        asked=resolved.asked,
        mode=resolved.mode,
    )


def memory_mode(serve: ServeConfig, *, rules: VersionRules) -> CudagraphMode:
    """The mode budget.cuda_graph_bytes sizes: the one the start-up captures, from 0.10.2 (the first release with
    cudagraph_mode); before, the fitted figure as it stands (V0's graphs and 0.8-0.9's were not read per mode)."""
    if not rules.cudagraph_support:
        return "NONE" if not graph_mode.captures_graphs(serve, rules=rules) else graph_mode.DEFAULT_MODE
    return graph_mode.effective_mode(serve, rules=rules)
