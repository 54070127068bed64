"""cudagraph_mode read from a pasted command (--compilation-config / -cc JSON, -cc.cudagraph_mode=X, -O levels) and
what it changes (issue 22 item 1). From the wheels:

- 0.14.0-0.33.0 utils/argparse_utils.py FlexibleArgumentParser.parse_args: "-O3", "-O=3" and "-O 3" become
  "--optimization-level 3"; dotted "--compilation-config.cudagraph_mode X" / "-cc.cudagraph_mode=X" set one key
  (underscores turn into dashes only before the first '.'); engine/arg_utils.py: "--compilation-config", "-cc";
- 0.14.0 / 0.33.0 config/vllm.py OPTIMIZATION_LEVEL_00 .. _03: cudagraph_mode NONE, PIECEWISE, FULL_AND_PIECEWISE,
  FULL_AND_PIECEWISE; optimization_level default O2;
- 0.33.0 config/compilation.py CompilationConfig.resolve_cudagraph_mode_and_sizes: the Mamba-block ValueError only
  when cudagraph_mode.has_full_cudagraphs() (FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE).
"""

from __future__ import annotations

import pytest

from app.core.command import parse_pasted
from app.core.errors import PlannerError
from app.core.estimate import ErrorKind
from app.core.specs import ServeConfig
from tests.unit.test_doctor_mamba_blocks import _qwen3_next


@pytest.mark.parametrize(
    ("command", "mode"),
    [
        ("vllm serve m -O0", "NONE"),
        ("vllm serve m -O 1", "PIECEWISE"),
        ("vllm serve m -O=3", "FULL_AND_PIECEWISE"),
        ("vllm serve m --optimization-level 2", "FULL_AND_PIECEWISE"),
        ("vllm serve m -cc.cudagraph_mode=piecewise", "PIECEWISE"),
        ("vllm serve m --compilation_config.cudagraph_mode FULL_DECODE_ONLY", "FULL_DECODE_ONLY"),
        # the explicit key wins over the level, whatever the order (the level only sets defaults)
        ('vllm serve m --compilation-config \'{"cudagraph_mode": "PIECEWISE"}\' -O3', "PIECEWISE"),
        ('vllm serve m -O0 -cc \'{"cudagraph_mode": "FULL"}\'', "FULL"),
    ],
)
def test_the_mode_is_read_from_the_command(command: str, mode: str) -> None:
    parsed = parse_pasted(command, vllm_version="0.33.0")
    assert parsed.serve.cudagraph_mode == mode
    assert not parsed.unrecognized  # round 5 refused -O3 and -cc.cudagraph_mode as unrecognized arguments


def test_other_compilation_settings_are_kept_and_bad_values_refused() -> None:
    # a JSON without cudagraph_mode keeps its keys for the plan and the emitted command (test_compilation_config)
    other = parse_pasted("vllm serve m -cc '{\"mode\": 3}'", vllm_version="0.33.0")
    assert other.serve.cudagraph_mode is None and other.serve.compilation_config == '{"mode":3}'
    assert other.unknown_flags == []
    # before 0.14.0 -O was --compilation-config's level (0.11.0 utils FlexibleArgumentParser: -O3 -> -O.level=3)
    old = parse_pasted("vllm serve m -O3", vllm_version="0.11.0")
    assert old.serve.cudagraph_mode is None and old.serve.compilation_config == '{"level":3}'
    for bad in (
        "vllm serve m -O7",
        'vllm serve m -cc \'{"cudagraph_mode": "SOME"}\'',
        "vllm serve m -cc [1]",
    ):
        with pytest.raises(PlannerError) as err:
            parse_pasted(bad, vllm_version="0.33.0")
        assert err.value.field == "cudagraph_mode"
    # the renderer writes it back in vLLM's spelling, and the parser reads that
    from app.core.serve_flags import render_flags
    from app.core.versions import rules_for

    (flag,) = render_flags(ServeConfig(cudagraph_mode="PIECEWISE"), rules_for("0.33.0"))
    assert parse_pasted(f"vllm serve m {flag}", vllm_version="0.33.0").serve.cudagraph_mode == "PIECEWISE"


def _one_above_the_blocks() -> int:
    seqs = 1_024  # the fixed point of max_num_seqs = blocks + 1 (test_doctor_mamba_blocks)
    for _ in range(20):
        blocks = _qwen3_next("0.33.0", max_num_seqs=seqs).num_gpu_blocks
        if seqs == blocks + 1:
            return seqs
        seqs = blocks + 1
    raise AssertionError("no fixed point")


def test_the_mamba_block_check_needs_full_graphs() -> None:
    # Qwen3-Next-80B at TP 4 on H100, 0.33.0, max_num_seqs one above the pool's blocks: refused under the default
    # FULL_AND_PIECEWISE, FULL and FULL_DECODE_ONLY; PIECEWISE (-O1) and NONE (-O0) start
    seqs = _one_above_the_blocks()
    for mode in (None, "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"):
        assert (
            _qwen3_next("0.33.0", max_num_seqs=seqs, cudagraph_mode=mode).error_kind == ErrorKind.MAMBA_BLOCKS
        )
    piecewise = _qwen3_next("0.33.0", max_num_seqs=seqs, cudagraph_mode="PIECEWISE")
    assert piecewise.fits and piecewise.error is None
    default = _qwen3_next("0.33.0", max_num_seqs=seqs)
    # PIECEWISE still captures graphs: budgeted with the default capture's model, and the estimate says so
    assert piecewise.cuda_graph_bytes > 0
    assert any("cudagraph_mode PIECEWISE" in str(w) for w in piecewise.warnings)
    default = _qwen3_next("0.33.0", max_num_seqs=seqs)
    assert not any("cudagraph_mode" in str(w) for w in default.warnings)
    # NONE captures no graph: no graph memory, as under --enforce-eager, so the pool is larger by that budget
    none = _qwen3_next("0.33.0", max_num_seqs=seqs, cudagraph_mode="NONE")
    eager = _qwen3_next("0.33.0", max_num_seqs=seqs, enforce_eager=True)
    assert none.cuda_graph_bytes == eager.cuda_graph_bytes == 0
    assert none.kv_cache_bytes == eager.kv_cache_bytes == default.kv_cache_bytes + default.cuda_graph_bytes


def test_a_prefix_resolves_against_every_flag_of_the_release() -> None:
    # argparse takes a unique prefix of a long option; "--compilation" is unique among 0.33.0's flags
    # (vllm_flags.json), and "--c" is not (--compilation-config, --cpu-offload-gb, ...), so it is no -cc
    parsed = parse_pasted("vllm serve m --compilation.cudagraph_mode=PIECEWISE", vllm_version="0.33.0")
    assert parsed.serve.cudagraph_mode == "PIECEWISE"
    with pytest.raises(PlannerError):
        parse_pasted('vllm serve m --c \'{"cudagraph_mode": "NONE"}\'', vllm_version="0.33.0")


def test_the_default_mode_is_the_releases() -> None:
    # 0.10.2 vllm/config/__init__.py VllmConfig.__post_init__: no cudagraph_mode given, V1 at compilation level
    # PIECEWISE -> CUDAGraphMode.PIECEWISE; 0.11.0 the same branch -> FULL_AND_PIECEWISE (0.14.0-0.33.0 through
    # OptimizationLevel.O2). An explicit mode and --enforce-eager win at every release.
    from app.core import graph_mode
    from app.core.versions import rules_for

    plain, piecewise = ServeConfig(), ServeConfig(cudagraph_mode="PIECEWISE")
    assert graph_mode.effective_mode(plain, rules=rules_for("0.10.2")) == "PIECEWISE"
    assert graph_mode.effective_mode(plain, rules=rules_for("0.11.0")) == "FULL_AND_PIECEWISE"
    assert graph_mode.effective_mode(plain, rules=rules_for("0.33.0")) == "FULL_AND_PIECEWISE"
    assert not graph_mode.full_graphs(plain, rules=rules_for("0.10.2"))
    assert graph_mode.full_graphs(plain, rules=rules_for("0.33.0"))
    assert graph_mode.effective_mode(piecewise, rules=rules_for("0.33.0")) == "PIECEWISE"
    eager = ServeConfig(enforce_eager=True)
    assert not graph_mode.captures_graphs(eager, rules=rules_for("0.33.0"))
