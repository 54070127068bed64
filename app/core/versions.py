"""What differs between vLLM releases, as data (reference vllm-accounting.md §1-§4, §7).

Boundaries the reference could only bracket ("changed between 0.14.0 and 0.20.2") are put at
the first release of the bracket that the calibration logs or the reference confirm, and say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from app.core.errors import PlannerError
from app.core.text import Text

# Releases offered in the UI (newest last). Any 0.x[.y] from 0.6 on is accepted by `rules_for`.
KNOWN_VERSIONS: tuple[str, ...] = (
    "0.6.6",
    "0.7.3",
    "0.8.5",
    "0.9.2",
    "0.10.2",
    "0.11.0",
    "0.14.0",
    "0.15.0",
    "0.17.0",
    "0.19.0",
    "0.20.2",
    "0.21.0",
    "0.24.0",
    "0.27.1",
    "0.30.0",
    "0.33.0",
)
DEFAULT_VERSION = "0.33.0"  # newest release the reference covers (§0)
OLDEST_SUPPORTED = (0, 6, 0)

Version = tuple[int, int, int]

BudgetStyle = Literal["v0", "v1_peak", "v1_profile"]
TokensFormula = Literal["none", "blocks_x_block_size", "blocks_div_groups", "concurrency_x_len"]
ConcurrencyFormula = Literal["blocks_x_block_size_div_len", "one_cdiv_over_sum", "sum_of_cdivs"]
NeededFormula = Literal["v0", "sum_layers", "first_group", "all_groups"]


@dataclass(frozen=True)
class VersionRules:
    version: str
    version_tuple: Version
    engine: Literal["v0", "v1"]
    default_gpu_memory_utilization: float
    requested_uses_ceil: bool  # requested = ceil(T*u) (>=0.14) or the float product
    budget_style: BudgetStyle
    cuda_graph_budgeted: bool  # CUDA-graph estimate subtracted before KV sizing
    hybrid_allocator: bool  # sliding/chunked/mamba layers get their own KV groups
    tokens_formula: TokensFormula
    concurrency_formula: ConcurrencyFormula
    needed_formula: NeededFormula
    inflight_uses_batches: bool  # IF = max_concurrent_batches x MNBT (>=0.27) instead of MNBT
    null_block_in_check: bool  # capacity check uses available - bytes_per_block (>=0.30)
    merged_capacity_line: bool  # one "KV cache size ..., Maximum concurrency ..." line (>=0.30)
    format_gib_style: Literal["fixed2", "round2"]  # %.2f or str(round(x, 2)) (>=0.14)
    weights_log: Literal["took_gb", "took_gib", "took_gib_memory"]
    error_style: Literal["v0", "v1_073", "v1_085", "v1_010", "v1_014", "v1_027"]
    sampler_logit_copies: float  # profile-run sampler peak, in fp32 logits copies (see budget.py)
    swap_space_used: bool  # V0 swap preemption; ignored by V1, removed in 0.20+
    has_kv_offloading_flags: bool  # --kv-offloading-size (0.14+)
    has_auto_fit: bool  # --max-model-len auto / -1 (0.14+)


def parse_version(text: str) -> Version:
    """'0.19.0', 'v0.11', '0.20.2rc1.dev9+g01d4' -> (0, 19, 0) / (0, 11, 0) / (0, 20, 2)."""
    match = re.match(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not match:
        raise PlannerError(
            "vllm_version", Text("not a vLLM version: {text!r} (expected e.g. 0.19.0)", text=text)
        )
    major, minor, patch = int(match[1]), int(match[2]), int(match[3] or 0)
    version = (major, minor, patch)
    if version < OLDEST_SUPPORTED:
        raise PlannerError(
            "vllm_version", Text("{text} is older than 0.6, which the planner does not model", text=text)
        )
    return version


def _rules(version: Version, label: str) -> VersionRules:
    v = version
    engine: Literal["v0", "v1"] = "v0" if v < (0, 8, 0) else "v1"  # V1 default from 0.8.0
    if engine == "v0":
        budget: BudgetStyle = "v0"
    elif v < (0, 10, 0):
        budget = "v1_peak"  # 0.7.3/0.8.5: T*u - (torch peak + non-torch)
    else:
        budget = "v1_profile"
    if engine == "v0" or v < (0, 8, 0):
        tokens: TokensFormula = "none"
        conc: ConcurrencyFormula = "blocks_x_block_size_div_len"
    elif v < (0, 10, 0):
        tokens, conc = "blocks_x_block_size", "blocks_x_block_size_div_len"
    elif v < (0, 20, 0):
        # 0.10.2-0.19.0 (0.19.0 confirmed by real gemma-2/3, gpt-oss, Llama-4 logs)
        tokens, conc = "blocks_div_groups", "one_cdiv_over_sum"
    elif v < (0, 27, 0):
        tokens, conc = "concurrency_x_len", "one_cdiv_over_sum"
    else:
        tokens, conc = "concurrency_x_len", "sum_of_cdivs"
    if engine == "v0":
        needed: NeededFormula = "v0"
    elif v < (0, 14, 0):
        needed = "sum_layers"
    elif v < (0, 20, 0):
        needed = "first_group"
    else:
        needed = "all_groups"
    if engine == "v0":
        error_style: Literal["v0", "v1_073", "v1_085", "v1_010", "v1_014", "v1_027"] = "v0"
    elif v < (0, 10, 0):
        error_style = "v1_085"
    elif v < (0, 14, 0):
        error_style = "v1_010"
    elif v < (0, 27, 0):
        error_style = "v1_014"
    else:
        error_style = "v1_027"
    if v < (0, 8, 0):
        weights_log: Literal["took_gb", "took_gib", "took_gib_memory"] = "took_gb"
    elif v < (0, 14, 0):
        weights_log = "took_gib"
    else:
        weights_log = "took_gib_memory"
    return VersionRules(
        version=label,
        version_tuple=v,
        engine=engine,
        # 0.9 through 0.14.0, 0.92 in 0.20.2+ (reference §2.1); 0.19.0 logs were run with an explicit 0.95,
        # so the switch is placed at 0.20.
        default_gpu_memory_utilization=0.92 if v >= (0, 20, 0) else 0.9,
        requested_uses_ceil=v >= (0, 14, 0),
        budget_style=budget,
        # present but off by default in 0.19.0 (real logs); on by default in 0.20.2/0.21.0 (§1)
        cuda_graph_budgeted=v >= (0, 20, 0),
        hybrid_allocator=v >= (0, 10, 0),
        tokens_formula=tokens,
        concurrency_formula=conc,
        needed_formula=needed,
        inflight_uses_batches=v >= (0, 27, 0),
        null_block_in_check=v >= (0, 30, 0),
        merged_capacity_line=v >= (0, 30, 0),
        format_gib_style="round2" if v >= (0, 14, 0) else "fixed2",
        weights_log=weights_log,
        error_style=error_style,
        # Qwen3-14B on H100: activation 5.64 GiB in 0.15/0.16 vs 2.23 GiB in 0.17/0.18 with the same inputs
        # (calibration llmd-versionsweep-*): the sampler warm-up grew lighter in 0.17.
        sampler_logit_copies=_SAMPLER_COPIES_OLD if (0, 10, 0) <= v < (0, 17, 0) else _SAMPLER_COPIES,
        swap_space_used=engine == "v0",
        has_kv_offloading_flags=v >= (0, 14, 0),
        has_auto_fit=v >= (0, 14, 0),
    )


# Sampler peak in fp32-logit copies, fitted by bench/calibrate.py (docs/model.md): 3.75 on 39 real
# 0.19.0 H100 logs; 9.6 = (5.64 GiB - 0.05 GiB base) / 0.58 GiB of logits for Qwen3-14B on 0.15/0.16,
# the only older-era evidence (so the forward-pass constants are shared, not refitted).
_SAMPLER_COPIES = 3.75
_SAMPLER_COPIES_OLD = 9.6


@cache
def rules_for(version: str | None) -> VersionRules:
    label = version or DEFAULT_VERSION
    parsed = parse_version(label)
    return _rules(parsed, ".".join(str(p) for p in parsed))


def default_gpu_memory_utilization(version: str | None) -> float:
    return rules_for(version).default_gpu_memory_utilization


def format_gib(num_bytes: float, style: Literal["fixed2", "round2"]) -> str:
    """How vLLM prints GiB: `%.2f` before 0.14, `str(round(x / 2**30, 2))` after (reference §0)."""
    gib = num_bytes / 2**30
    if style == "fixed2":
        return f"{gib:.2f}"
    return str(round(gib, 2))
