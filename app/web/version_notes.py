"""What changes with the vLLM version, as sentences: read off `VersionRules`, never per version.

The planner lists the rules of the chosen release; the compare view lists the rules two releases
differ in and uses them as the reason for each differing row. Every sentence is built from a field
of `VersionRules`; "as in A – B" ranges are computed over `KNOWN_VERSIONS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from app.core import equations as E
from app.core.text import Text
from app.core.versions import KNOWN_VERSIONS, VersionRules, rules_for

# The formula each release uses, worded once (app.core.equations), shown here and in the block math.
TOKENS_TEXT = E.TOKENS_FORMULA
CONCURRENCY_TEXT = E.CONCURRENCY_FORMULA
NEEDED_TEXT = E.NEEDED_FORMULA
BUDGET_TEXT = E.BUDGET_FORMULA
WEIGHTS_LOG_TEXT = {
    "took_gb": Text("“Loading model weights took X GB”"),
    "took_gib": Text("“Model loading took X GiB and … seconds”"),
    "took_gib_memory": Text("“Model loading took X GiB memory and … seconds”"),
}


@dataclass(frozen=True)
class VersionNote:
    key: str  # a VersionRules aspect, also used to link compare rows to their reasons
    topic: str
    value: str
    detail: str = ""


def _same_span(rules: VersionRules, value_of: Callable[[VersionRules], object]) -> str:
    """Known releases sharing this value, contiguous around the chosen one: "0.20.2 – 0.33.0"."""
    here = value_of(rules)
    values = [value_of(rules_for(v)) for v in KNOWN_VERSIONS]  # KNOWN_VERSIONS is oldest first
    position = KNOWN_VERSIONS.index(rules.version)  # rules are always a known release's (the bracket)
    lo = hi = position
    while lo > 0 and values[lo - 1] == here:
        lo -= 1
    while hi < len(values) - 1 and values[hi + 1] == here:
        hi += 1
    first, last = KNOWN_VERSIONS[lo], KNOWN_VERSIONS[hi]
    return f"{first} – {last}" if first != last else Text("only {first}", first=first)


def _swap_space(rules: VersionRules) -> str:
    if rules.swap_space_used:
        return Text("used: CPU swap space for V0 preemption")
    if not rules.has_swap_space_flag:
        return Text("removed (passing it is an error)")
    return Text("accepted but ignored by the V1 engine")


def _log_wording(rules: VersionRules) -> str:
    if rules.engine == "v0":
        return Text("“# GPU blocks: N, # CPU blocks: M” then “Maximum concurrency …”")
    if rules.merged_capacity_line:
        return Text(
            "one line: “GPU KV cache size: N tokens, Maximum concurrency for L tokens per request: Xx”"
        )
    return Text(
        "two lines: “GPU KV cache size: N tokens” and “Maximum concurrency for L tokens per request: Xx”"
    )


# (key, topic, value reader, sentence). The reader is what "differs" compares between two releases.
ASPECTS: tuple[tuple[str, str, Callable[[VersionRules], object], Callable[[VersionRules], str]], ...] = (
    ("engine", Text("Engine"), lambda r: r.engine, lambda r: r.engine.upper()),
    (
        "default_util",
        Text("Default --gpu-memory-utilization"),
        lambda r: r.default_gpu_memory_utilization,
        lambda r: f"{r.default_gpu_memory_utilization:g}",
    ),
    (
        "budget",
        Text("KV budget"),
        lambda r: (r.budget_style, r.requested_uses_ceil),
        lambda r: (
            BUDGET_TEXT[r.budget_style]
            + (
                Text("; requested = ⌈total × utilization⌉")
                if r.requested_uses_ceil
                else Text("; requested = total × utilization")
            )
        ),
    ),
    (
        "cuda_graphs",
        Text("CUDA graphs"),
        lambda r: r.cuda_graph_budgeted,
        lambda r: (
            Text("CUDA graphs subtracted from the budget before KV sizing")
            if r.cuda_graph_budgeted
            else Text("not subtracted: captured after KV sizing, out of the 1 − utilization slack")
        ),
    ),
    (
        "sampler",
        Text("Profile-run sampler peak"),
        lambda r: r.sampler_logit_copies,
        lambda r: Text(
            "{sampler_logit_copies:g} fp32 logits copies (modelled)",
            sampler_logit_copies=r.sampler_logit_copies,
        ),
    ),
    (
        "inflight",
        Text("In-flight tokens per request (prefix caching off)"),
        lambda r: r.inflight_uses_batches,
        lambda r: (
            Text("max concurrent batches × --max-num-batched-tokens")
            if r.inflight_uses_batches
            else "--max-num-batched-tokens"
        ),
    ),
    (
        "tokens",
        Text("“GPU KV cache size” tokens"),
        lambda r: r.tokens_formula,
        lambda r: TOKENS_TEXT[r.tokens_formula],
    ),
    (
        "concurrency",
        Text("“Maximum concurrency”"),
        lambda r: r.concurrency_formula,
        lambda r: CONCURRENCY_TEXT[r.concurrency_formula],
    ),
    (
        "needed",
        Text("Memory one request needs (sliding-window capacity)"),
        lambda r: (r.needed_formula, r.hybrid_allocator),
        lambda r: (
            NEEDED_TEXT[r.needed_formula]
            + (Text("; sliding/chunked layers get their own KV groups") if r.hybrid_allocator else "")
        ),
    ),
    (
        "null_block",
        Text("Start-up capacity check"),
        lambda r: r.null_block_in_check,
        lambda r: (
            Text("available − one null block must hold one request")
            if r.null_block_in_check
            else Text("available must hold one request")
        ),
    ),
    (
        "weights_log",
        Text("Weights log line"),
        lambda r: r.weights_log,
        lambda r: WEIGHTS_LOG_TEXT[r.weights_log],
    ),
    ("capacity_log", Text("Capacity log line"), _log_wording, _log_wording),
    (
        "gib_format",
        Text("GiB in the log"),
        lambda r: r.format_gib_style,
        lambda r: "%.2f (54.10)" if r.format_gib_style == "fixed2" else "round(x, 2) (54.1)",
    ),
    ("swap_space", "--swap-space", lambda r: _swap_space(r), _swap_space),
    (
        "offloading",
        "--kv-offloading-size",
        lambda r: r.has_kv_offloading_flags,
        lambda r: (
            Text("available (KV offloading to CPU)")
            if r.has_kv_offloading_flags
            else Text("does not exist yet")
        ),
    ),
    (
        "auto_fit",
        Text("--max-model-len auto"),
        lambda r: r.has_auto_fit,
        lambda r: (
            Text("available: vLLM searches the largest length that fits")
            if r.has_auto_fit
            else Text("does not exist yet")
        ),
    ),
)


@cache
def version_notes(rules: VersionRules) -> tuple[VersionNote, ...]:
    """Every aspect of the chosen release, with the span of known releases that share it."""
    return tuple(
        VersionNote(key, topic, sentence(rules), _same_span(rules, read))
        for key, topic, read, sentence in ASPECTS
    )


@dataclass(frozen=True)
class RuleDifference:
    key: str
    topic: str
    a: str
    b: str


def rule_differences(a: VersionRules, b: VersionRules) -> tuple[RuleDifference, ...]:
    return tuple(
        RuleDifference(key, topic, sentence(a), sentence(b))
        for key, topic, read, sentence in ASPECTS
        if read(a) != read(b)
    )
