"""The default CUDA-graph capture cap by release and device family (one rule: graph_rules.default_capture_cap).

Read from the wheels (`pip download --no-deps vllm==X`), config/vllm.py VllmConfig._set_cudagraph_sizes:
- 0.27.1: ``max_cudagraph_capture_size = min(max_num_seqs * decode_query_len * 2, 512)`` on every device;
- 0.30.0: ``default_max_graph_size = 1024 if current_platform.is_device_capability_family(100) else 512``
  (platforms/interface.py is_device_capability_family: ``capability.to_int() // 10 == 100 // 10``, so every
  10.x device: B200 10.0, B300 10.3; not 9.0 or 12.0), the cap being min(2 x max_num_seqs, that default);
- 0.31.0 (planned from 0.32.0, the next known release; 0.32.0 and 0.33.0 the same): with one token a request,
  ``uniform_decode_sizes = [max_num_seqs]`` when max_num_seqs is within that cap, then appended to the grid
  if within max_num_batched_tokens (the list deduplicated);
- the grid: [1, 2, 4] + range(8, 256, 8) + range(256, cap + 1, 16), plus max_num_batched_tokens when within cap.

Graph memory is budget.cuda_graph_bytes: (sizes / 51) x 978,006,999 B for the 32-layer dense() model (51 = the
grid up to 512, the size count the figure was fitted at).
"""

from __future__ import annotations

import pytest

from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.graph_rules import default_capture_cap
from app.core.specs import ServeConfig
from app.core.versions import rules_for
from tests.specs_factory import dense

# dense() at the default 1,024 sequences and 8,192 batched tokens (B200 / H100 at 0.27.1-0.32.0, 80-180 GB tier):
# grid to 512: 3 + 31 + (512 - 256) / 16 + 1 = 17 -> 51 sizes, 978,006,999 B;
# grid to 1,024: 3 + 31 + (1,024 - 256) / 16 + 1 = 49 -> 83 sizes, int(83 / 51 x 978,006,999) = 1,591,658,449 B.
# (1,024 sequences is on the grid, so 0.31.0's uniform decode size adds nothing; 8,192 tokens is above the cap.)
SIZES_51_BYTES = 978_006_999
SIZES_83_BYTES = 1_591_658_449


def _graph_bytes(device: str, version: str, **serve: object) -> int:
    plan = estimate(
        model=dense(), device=find_device(device), serve=ServeConfig(**serve), vllm_version=version
    )  # type: ignore[arg-type]
    return plan.cuda_graph_bytes


@pytest.mark.parametrize(
    ("device", "version", "expected"),
    [
        ("b200", "0.30.0", SIZES_83_BYTES),  # 10.0: the 1,024 default (the review's repro gave 978,006,999)
        ("nvidia-b300", "0.30.0", SIZES_83_BYTES),  # 10.3: the same family
        ("b200", "0.32.0", SIZES_83_BYTES),
        ("b200", "0.29.0", SIZES_51_BYTES),  # 0.29.x planned with 0.27.1's rules: 512 everywhere
        ("b200", "0.27.1", SIZES_51_BYTES),
        ("h100", "0.30.0", SIZES_51_BYTES),  # 9.0: 512
    ],
)
def test_default_capture_cap_by_release_and_family(device: str, version: str, expected: int) -> None:
    assert _graph_bytes(device, version) == expected


def test_cap_rule_reads_the_capability_family() -> None:
    new, old = rules_for("0.30.0"), rules_for("0.27.1")
    assert [default_capture_cap(rules=new, sm=sm) for sm in (90, 100, 103, 120, None)] == [
        512,
        1024,
        1024,
        512,
        512,
    ]
    assert [default_capture_cap(rules=old, sm=sm) for sm in (90, 100, 103)] == [512, 512, 512]


def test_uniform_decode_size_joins_the_grid_from_0_31() -> None:
    # H100, 300 sequences: cap min(600, 512) = 512 -> 51 grid sizes; 300 <= 512 and 300 % 16 = 12 (off the grid),
    # so 0.31.0+ captures 52: int(52 / 51 x 978,006,999) = 997,183,606 B; 0.30.0 the grid alone
    assert _graph_bytes("h100", "0.30.0", max_num_seqs=300) == SIZES_51_BYTES
    assert _graph_bytes("h100", "0.32.0", max_num_seqs=300) == 997_183_606
    # 300 batched tokens: cap min(300, 512) = 300 -> 1, 2, 4, 8 ... 296 = 3 + 31 + (296 - 256) / 16 + 1 = 37, plus
    # 300 itself (max_num_batched_tokens, 0.20.2+) = 38; the decode size 300 is the same entry (deduplicated)
    assert _graph_bytes("h100", "0.32.0", max_num_seqs=300, max_num_batched_tokens=300) == int(
        38 / 51 * SIZES_51_BYTES
    )
    # 2,048 sequences on a B200: cap min(4,096, 1,024) = 1,024 < 2,048, so no decode size is added: 83
    assert _graph_bytes("b200", "0.32.0", max_num_seqs=2048) == SIZES_83_BYTES


def test_decode_only_graphs_follow_the_blackwell_cap() -> None:
    # FULL_DECODE_ONLY, 600 sequences on a B200 at 0.30.0: cap min(1,200, 1,024) = 1,024 -> 83 sizes, of which the
    # decode ones (<= 600): 3 + 31 + (592 - 256) / 16 + 1 = 56 -> int(0.5 x 56 / 51 x 978,006,999) = 536,945,019 B
    # (budget.ONE_GRAPH_A_SIZE_SHARE); at 0.32.0 600 (600 % 16 = 8) joins: 57 -> 546,533,322 B
    assert _graph_bytes("b200", "0.30.0", max_num_seqs=600, cudagraph_mode="FULL_DECODE_ONLY") == 536_945_019
    assert _graph_bytes("b200", "0.32.0", max_num_seqs=600, cudagraph_mode="FULL_DECODE_ONLY") == 546_533_322
    # on an H100 the cap is 512 < 600: every captured size is a decode size, 51 -> 0.5 x 978,006,999
    assert _graph_bytes("h100", "0.30.0", max_num_seqs=600, cudagraph_mode="FULL_DECODE_ONLY") == 489_003_499


NGRAM_2 = {"method": "ngram", "num_speculative_tokens": 2}


def test_speculative_tokens_widen_the_default_cap() -> None:
    # 0.13.0-0.33.0 decode_query_len = 1 + 2 = 3: 64 sequences on an H100 -> cap min(64 x 3 x 2, 512) = 384, the grid
    # 3 + 31 + (384 - 256) / 16 + 1 = 43 sizes (0.27.1); the planner took min(2 x 64, 512) = 128 -> 3 + 16 = 19
    # 0.30.0 adds 3 x {1, 2, 4, 8, 16 ... 64} = 3, 6, 12, 24, 48 ... 192 (<= 384); off the grid: 3, 6, 12 -> 46
    # (graph bytes counted as the target model's, as without speculation)
    assert _graph_bytes("h100", "0.27.1", max_num_seqs=64, speculative_config=NGRAM_2) == int(
        43 / 51 * SIZES_51_BYTES
    )
    assert _graph_bytes("h100", "0.30.0", max_num_seqs=64, speculative_config=NGRAM_2) == int(
        46 / 51 * SIZES_51_BYTES
    )
    # 0.11.0 config/__init__.py: min(max_num_seqs x 2, 512) = 128, speculative or not -> 19 sizes
    assert _graph_bytes("h100", "0.11.0", max_num_seqs=64, speculative_config=NGRAM_2) == int(
        19 / 51 * SIZES_51_BYTES
    )
