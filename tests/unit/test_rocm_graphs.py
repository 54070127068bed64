"""ROCm's hipGraph memory as its own physical figure (issue 22, round 11): a fixed part on the first capture plus a
part per captured graph per layer, fitted on the three real ROCm logs that print "Graph capturing finished … took"
(bench/calibrate_rocm_graphs.py; each log a source of its own, each left out within 0.03 GiB of its print).
"""

from __future__ import annotations

from app.core import budget, graph_rules
from app.core.backends import BackendChoice
from app.core.catalog import find_device, find_model
from app.core.command import parse_pasted
from app.core.defaults import ResolvedFlags
from app.core.estimate import estimate
from tests.specs_factory import dense

MI300X = find_device("amd-mi300x-192gb")


def test_gemma_3_27b_on_rocm_0_11_0rc2_is_what_its_log_prints() -> None:
    # tests/data/logs/heldout-2026-12j/rocm_compose_gemma3_27b_0_11_0rc2_kv_109_86_205696_blocks_89994.log: 62 layers,
    # "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 67/67" and "(decode, FULL): 67/67", "took 1.02 GiB".
    # 394,600,120 + 84,449 x 62 x 134 = 1,096,202,412 B = 1.021 GiB; the CUDA form gave 67/51 x (0.3966 + 0.01607 x 62)
    # GiB = 1.83 GiB
    serve = parse_pasted(
        "vllm serve google/gemma-3-27b-it --max-model-len 4096", vllm_version="0.11.0rc2"
    ).serve
    est = estimate(
        model=find_model("google/gemma-3-27b-it"), device=MI300X, serve=serve, vllm_version="0.11.0rc2"
    )
    assert est.cuda_graph_bytes == 1_096_202_412
    assert round(est.cuda_graph_bytes / 2**30, 2) == 1.02


def test_a_few_graphs_still_cost_the_fixed_part() -> None:
    # tests/data/logs/heldout-2026-12g/rocm_rx7800xt_ovis2_gptq_compose_kv_0_79_14800_tokens.log: max_num_seqs 5,
    # 4 PIECEWISE + 3 FULL graphs of Ovis2-8B's 28 layers, "took 0.38 GiB": 394,600,120 + 84,449 x 28 x 7 =
    # 411,152,124 B (0.383 GiB); the CUDA form gave 4/51 x (0.3966 + 0.01607 x 28) GiB = 0.066 GiB
    assert budget.rocm_graph_bytes(num_layers_on_rank=28, graphs=7) == 411_152_124
    assert budget.rocm_graph_bytes(num_layers_on_rank=28, graphs=0) == 0


def test_graphs_per_mode() -> None:
    # sizes 1, 2, 4, 8 at max_num_seqs 5 (the Ovis2 log): FULL_AND_PIECEWISE 4 + 3, FULL_DECODE_ONLY 3, PIECEWISE 4
    choice = BackendChoice(name="TRITON_ATTN", block_size=16, min_kernel_block=16)
    flags = ResolvedFlags(8192, 0.85, 5, 8192, True, True, choice)
    sizes = [1, 2, 4, 8]
    assert graph_rules.graphs_in("FULL_AND_PIECEWISE", sizes, flags) == 7
    assert graph_rules.graphs_in("FULL_DECODE_ONLY", sizes, flags) == 3
    assert graph_rules.graphs_in("PIECEWISE", sizes, flags) == 4
    assert graph_rules.graphs_in("NONE", sizes, flags) == 0


def test_cuda_keeps_its_fitted_figure() -> None:
    # dense() (32 layers) on an H100 at 0.33.0: the 51-size figure, 978,006,999 B (bench/calibrate.py, 37 logs)
    serve = parse_pasted("vllm serve m", vllm_version="0.33.0").serve
    assert estimate(model=dense(), device=find_device("h100"), serve=serve).cuda_graph_bytes == 978_006_999
