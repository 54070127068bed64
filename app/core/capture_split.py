"""0.34.0's split capture grids on SM100 (config/vllm.py VllmConfig._split_cudagraph_capture_sizes): prefill graphs
by token count and decode graphs by request count, each from its own grid, when no deprecated
cudagraph_capture_sizes / max_cudagraph_capture_size is given and the device is of capability family 100
(``current_platform.is_device_capability_family(100)``: B200, B300, GB200; not GB10's 12.1). Elsewhere the decode
sizes are the shared grid's own (min(s, max_num_seqs)), so graph_rules.capture_sizes' count stands.

config/compilation.py (0.34.0): ``_walk_grid(limit, step)`` runs 1, … up to ``limit``, each next size the next
multiple of the largest power of two not above ``step(size)``, and ends at ``limit``;
``prefill_cudagraph_capture_grid(max_tokens)`` steps by min(t, max(8, t / 4), 0.07 x max(t, 4096)) ("54 sizes at
8192"); ``decode_cudagraph_capture_grid(max_requests)`` by 0.65 x n^(2/3) ("64 sizes at 1024").
"""

from __future__ import annotations

import math
from collections.abc import Callable

WIDE_DEFAULT_MAJOR = 10  # is_device_capability_family(100)
WIDE_PREFILL_MAX_TOKENS = 8192  # max_prefill_cudagraph_capture_tokens default on SM100 ("8192 if … is None")
WIDE_DECODE_MAX_TOKENS = 8192  # max_decode_cudagraph_capture_tokens = 8192 on SM100
PREFILL_STEP_FLOOR = 8  # max(8, t / 4)
PREFILL_STEP_SHARE = 0.07  # 0.07 x max(t, 4096)
PREFILL_STEP_FROM = 4096
DECODE_STEP_SCALE = 0.65  # 0.65 x n^(2/3)
DECODE_STEP_POWER = 2 / 3


def walk_grid(limit: int, step: Callable[[int], float]) -> list[int]:
    """E.g. limit 10 with step 2: 1, 2, 4, 6, 8, 10 (1 -> stride 2 -> 2, then 4, 6, 8, and the limit)."""
    grid: list[int] = []
    size = 1
    while size < limit:
        grid.append(size)
        stride = 1 << max(0, math.floor(math.log2(max(1.0, step(size)))))
        size = (size // stride + 1) * stride
    return [*grid, limit] if limit else []


def prefill_grid(max_tokens: int) -> list[int]:
    """E.g. 8,192 tokens -> 54 sizes (the docstring's count); 64 -> 1, 2, 4, 8, 16 ... 64 (11)."""
    return walk_grid(
        max_tokens,
        lambda t: min(t, max(PREFILL_STEP_FLOOR, t / 4), PREFILL_STEP_SHARE * max(t, PREFILL_STEP_FROM)),
    )


def decode_grid(max_requests: int) -> list[int]:
    """E.g. 1,024 requests -> 64 sizes (the docstring's count)."""
    return walk_grid(max_requests, lambda n: DECODE_STEP_SCALE * n**DECODE_STEP_POWER)


def decode_token_sizes(
    *, request_sizes: list[int], query_len: int, max_requests: int, max_tokens: int
) -> set[int]:
    """compilation.py decode_cudagraph_capture_shapes for one query length: the request counts up to the first at or
    above min(max_requests, max_tokens // q), that one captured at the limit; each graph's token count n x q."""
    limit = min(max_requests, max_tokens // query_len)
    if limit < 1:
        return set()
    sizes = sorted(set(request_sizes))
    reachable = [n for n in sizes if n < limit] + [n for n in sizes if n >= limit][:1]
    return {min(n, limit) * query_len for n in reachable}


def wide_capture_sizes(
    *, max_num_seqs: int, max_num_batched_tokens: int, query_len: int
) -> tuple[list[int], int, int]:
    """Every graph's token count under SM100's wide defaults (no split key given), with the number of prefill
    graphs and of decode graphs: the prefill grid to min(8,192, max_num_batched_tokens) and the decode graphs of
    the request grid to max_num_seqs.

    E.g. 1,024 sequences, 8,192 tokens, no drafts: 54 prefill sizes, decode 1 ... 1,024 (64, all within the
    prefill grid's range; the union, 91 token sizes, is what is counted)."""
    prefill = prefill_grid(min(WIDE_PREFILL_MAX_TOKENS, max_num_batched_tokens))
    decode = decode_token_sizes(
        request_sizes=decode_grid(max_num_seqs),
        query_len=query_len,
        max_requests=max_num_seqs,
        max_tokens=min(max_num_batched_tokens, WIDE_DECODE_MAX_TOKENS),
    )
    return sorted(set(prefill) | decode), len(prefill), len(decode)
