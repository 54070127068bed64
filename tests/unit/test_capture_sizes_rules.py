"""The capture-size rules of config/vllm.py VllmConfig._set_cudagraph_sizes (issue 22 rules9 items 3 and 8).

Read from the wheels (`pip download --no-deps vllm==X`):
- 0.13.0-0.33.0: "max_cudagraph_capture_size = min(max_num_tokens, max_cudagraph_capture_size)"; user sizes are
  deduplicated and cut at max_num_batched_tokens; valid_max_size = the largest size left (0 if none); when both
  max_cudagraph_capture_size and cudagraph_capture_sizes are given and the first != valid_max_size: ValueError
  "customized max_cudagraph_capture_size(=X) should be consistent with the max value of cudagraph_capture_sizes(=Y)".
  All of it runs only when not enforce_eager and cudagraph_mode != NONE. 0.11.0 has no max_cudagraph_capture_size.
- 0.20.2-0.33.0 (absent in 0.19.0): the default grid gains max_num_batched_tokens when it is within the largest
  capture size and not on the grid ("ensure max_num_tokens is captured if within max capture size").
"""

from __future__ import annotations

import pytest

from app.core import graph_rules
from app.core.backends import BackendChoice
from app.core.catalog import find_device
from app.core.command import parse_pasted
from app.core.defaults import ResolvedFlags
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.versions import rules_for
from tests.specs_factory import dense

H100 = find_device("h100")
# dense(): 32 layers on one rank; the default 51 sizes cost 978,006,999 B (budget.cuda_graph_bytes), each size 1/51
DEFAULT_GRAPH_BYTES = 978_006_999
MISMATCH = 'vllm serve m -cc \'{"cudagraph_capture_sizes": [1, 2, 4, 8], "max_cudagraph_capture_size": 16}\''


def _estimate(command: str, version: str, **serve: object):  # type: ignore[no-untyped-def]
    parsed = parse_pasted(command, vllm_version=version).serve
    return estimate(model=dense(), device=H100, serve=parsed.model_copy(update=serve), vllm_version=version)


@pytest.mark.parametrize(
    "version", ["0.13.0", "0.14.0", "0.19.0", "0.33.0"]
)  # 0.13.0 config/vllm.py the same
def test_inconsistent_capture_keys_are_refused(version: str) -> None:
    # sizes [1, 2, 4, 8] at 8,192 batched tokens: valid_max_size 8, the given max 16 -> vLLM's ValueError
    with pytest.raises(PlannerError) as err:
        _estimate(MISMATCH, version)
    assert err.value.field == "compilation_config"
    assert (
        "customized max_cudagraph_capture_size(=16) should be consistent with the max value of "
        "cudagraph_capture_sizes(=8)"
    ) in str(err.value)


def test_consistent_keys_or_no_graphs_start() -> None:
    # max 8 agrees with the sizes: 4 of the default 51 sizes -> 4 / 51 x 978,006,999 = 76,706,431
    ok = 'vllm serve m -cc \'{"cudagraph_capture_sizes": [1, 2, 4, 8], "max_cudagraph_capture_size": 8}\''
    assert _estimate(ok, "0.33.0").cuda_graph_bytes == 76_706_431
    # the check sits inside "not enforce_eager and cudagraph_mode != NONE": eager starts, with no graphs
    assert _estimate(MISMATCH, "0.33.0", enforce_eager=True).cuda_graph_bytes == 0
    # the sizes cut at max_num_batched_tokens 4: valid_max_size 4, so max 8 no longer agrees
    with pytest.raises(PlannerError, match=r"cudagraph_capture_sizes\(=4\)"):
        _estimate(ok, "0.33.0", max_num_batched_tokens=4, max_model_len=4, enable_chunked_prefill=True)


def test_the_default_grid_is_cut_at_max_num_batched_tokens_and_gains_it() -> None:
    # max_num_batched_tokens 100 (chunked prefill; 1,024 sequences): the grid runs to min(2 x 1,024, 512, 100) = 100:
    # 1, 2, 4, 8, 16 ... 96 = 3 + 12 = 15 sizes; 0.20.2+ append 100 itself (off the grid): 16.
    # 15 / 51 x 978,006,999 = 287,649,117.4 and 16 / 51 x ... = 306,825,725.2
    serve = {"max_num_batched_tokens": 100, "max_model_len": 4096, "enable_chunked_prefill": True}
    assert _estimate("vllm serve m", "0.19.0", **serve).cuda_graph_bytes == 287_649_117
    est = _estimate("vllm serve m", "0.33.0", **serve)
    assert est.cuda_graph_bytes == 306_825_725
    # 96 is on the grid: nothing appended, 15 sizes
    assert _estimate(
        "vllm serve m", "0.33.0", **{**serve, "max_num_batched_tokens": 96}
    ).cuda_graph_bytes == (287_649_117)
    # the default 8,192 tokens are above 512: the 51 sizes, unchanged
    assert _estimate("vllm serve m", "0.33.0").cuda_graph_bytes == DEFAULT_GRAPH_BYTES


def test_0_11_steps_its_default_grid_by_8() -> None:
    # 0.11.0 config/__init__.py VllmConfig._set_cudagraph_sizes: [1, 2, 4] + range(8, min(2 x 1,024, 512) + 1, 8)
    # = 3 + 64 = 67 sizes, what a real 0.11.0rc2 start prints ("Capturing CUDA graphs (decode, FULL): 67/67",
    # tests/data/logs/heldout-2026-12j/rocm_compose_gemma3_27b_0_11_0rc2_kv_109_86_205696_blocks_89994.log, whose
    # printed cudagraph_capture_sizes run 512, 504, 496 ... 8, 4, 2, 1); 0.13.0 steps by 16 from 256: 51
    serve = parse_pasted("vllm serve m", vllm_version="0.11.0").serve
    choice = BackendChoice(name="FLASH_ATTN", block_size=16, min_kernel_block=16)
    flags = ResolvedFlags(8192, 0.9, 1024, 8192, True, True, choice)  # an H100's 0.11.0 defaults
    sizes = graph_rules.capture_sizes(serve=serve, flags=flags, rules=rules_for("0.11.0"), sm=90)
    assert len(sizes) == 67 and sizes[-3:] == [496, 504, 512] and sizes[:5] == [1, 2, 4, 8, 16]
    assert len(graph_rules.capture_sizes(serve=serve, flags=flags, rules=rules_for("0.13.0"), sm=90)) == 51
    # 67 / 51 x 978,006,999 = 1,284,832,724.5 -> 1,284,832,724 B
    assert _estimate("vllm serve m", "0.11.0").cuda_graph_bytes == 1_284_832_724


def test_only_0_11_0_steps_by_8_in_its_bracket() -> None:
    # review10: 0.11.1's config/vllm.py VllmConfig._set_cudagraph_sizes already steps by 16 from 256 (the 0.11.1
    # wheel), so 0.11.1, 0.11.2 and 0.12.x, planned with 0.11.0's bracket, count 51 sizes and the 51-size graph
    # line (978,006,999 B, as before round 10); 0.11.0 and its release candidates keep 67 (1,284,832,724 B)
    assert _estimate("vllm serve m", "0.11.0rc2").cuda_graph_bytes == 1_284_832_724
    for version in ("0.11.1", "0.11.2", "0.12.0"):
        assert rules_for(version).version == "0.11.0"  # still 0.11.0's bracket for every other rule
        assert _estimate("vllm serve m", version).cuda_graph_bytes == 978_006_999, version


def test_0_9_2_and_0_10_2_step_by_8_and_0_9_2_always_runs_to_512() -> None:
    # 0.9.2 config.py VllmConfig._set_cudagraph_sizes (V1): [1, 2, 4] + range(8, cuda_graph_sizes[0] + 1, 8) with
    # SchedulerConfig.cuda_graph_sizes = [512] (a field default, whatever max_num_seqs): 67 sizes even at 64
    # sequences; 0.10.2 config/scheduler.py: [min(max_num_seqs x 2, 512)], still by 8: 64 sequences -> 1, 2, 4, 8
    # ... 128 = 3 + 16 = 19; 1,024 -> 67 (both wheels read in round 11)
    serve = parse_pasted("vllm serve m", vllm_version="0.10.2").serve
    choice = BackendChoice(name="FLASH_ATTN", block_size=16, min_kernel_block=16)
    for seqs, by_release in ((64, {"0.9.2": 67, "0.10.2": 19}), (1024, {"0.9.2": 67, "0.10.2": 67})):
        flags = ResolvedFlags(8192, 0.9, seqs, 8192, True, True, choice)
        for version, count in by_release.items():
            sizes = graph_rules.capture_sizes(serve=serve, flags=flags, rules=rules_for(version), sm=90)
            assert len(sizes) == count, (version, seqs)
