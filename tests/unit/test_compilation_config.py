"""`--compilation-config` / `-cc` keys other than cudagraph_mode, and `-O` levels by release (issue 22 item 1).

Read from the wheels (`pip download --no-deps vllm==X`):
- 0.11.0 utils/__init__.py FlexibleArgumentParser.parse_args: "-O3" / "-O=3" -> "-O.level=3" and "-O 3" ->
  "-O.level 3" (-O is --compilation-config's alias); 0.14.0-0.33.0 utils/argparse_utils.py: -O is
  --optimization-level; dotted keys nest ("-cc.pass_config.x=1" -> {"pass_config": {"x": 1}}), merged;
- 0.11.0 config/__init__.py VllmConfig.__post_init__: with no cudagraph_mode, FULL_AND_PIECEWISE only when
  compilation_config.level == CompilationLevel.PIECEWISE (3), else NONE; a piecewise cudagraph_mode with another
  level fails "assert ... level == CompilationLevel.PIECEWISE";
- 0.14.0 config/vllm.py __post_init__: requires_piecewise_compilation() and mode != VLLM_COMPILE -> NONE;
  0.30.0 / 0.33.0 _normalize_piecewise_cudagraph_mode -> without_piecewise(): FULL_AND_PIECEWISE ->
  FULL_DECODE_ONLY, PIECEWISE -> NONE (config/compilation.py CUDAGraphMode.without_piecewise);
- 0.33.0 config/vllm.py _set_cudagraph_sizes: cudagraph_capture_sizes deduplicated and cut at
  max_num_batched_tokens; with max_cudagraph_capture_size the default grid [1, 2, 4] + range(8, 256, 8) +
  range(256, max + 1, 16) up to it.
"""

from __future__ import annotations

import pytest

from app.core import budget, compilation, graph_mode
from app.core.catalog import find_device
from app.core.command import parse_pasted, render_serve_command
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.specs import ServeConfig
from app.core.versions import rules_for
from tests.specs_factory import dense

H100 = find_device("h100")
# dense(): 32 layers on one rank, max_num_seqs 1,024 -> the default 51 sizes: 978,006,999 B (budget.cuda_graph_bytes)
DEFAULT_GRAPH_BYTES = 978_006_999
# 0.11.0 config/__init__.py _set_cudagraph_sizes: [1, 2, 4] + range(8, 513, 8) = 67 sizes -> 67 / 51 x 978,006,999
# = 1,284,832,724.5 -> 1,284,832,724 B
GRAPH_BYTES_0_11 = 1_284_832_724


def _graphs(command: str, version: str) -> int:
    serve = parse_pasted(command, vllm_version=version).serve
    return estimate(model=dense(), device=H100, serve=serve, vllm_version=version).cuda_graph_bytes


def test_other_keys_are_kept_and_written_back() -> None:
    command = (
        'vllm serve m -cc \'{"cudagraph_mode": "PIECEWISE", "cudagraph_capture_sizes": [8, 4, 2, 1]}\' '
        "-cc.pass_config.fuse_norm_quant=true -cc.pass_config.fuse_act_quant=false"
    )
    serve = parse_pasted(command, vllm_version="0.33.0").serve
    assert serve.cudagraph_mode == "PIECEWISE"
    assert serve.compilation_config == (
        '{"cudagraph_capture_sizes":[8,4,2,1],"pass_config":{"fuse_act_quant":false,"fuse_norm_quant":true}}'
    )
    written = render_serve_command(model="m", serve=serve, vllm_version="0.33.0")
    assert '"cudagraph_mode":"PIECEWISE"' in written and '"fuse_norm_quant":true' in written
    # round 7 dropped every key but cudagraph_mode from the plan and the command; the emitted one reads back the same
    again = parse_pasted(written, vllm_version="0.33.0").serve
    assert (again.cudagraph_mode, again.compilation_config) == (
        serve.cudagraph_mode,
        serve.compilation_config,
    )


def test_capture_sizes_scale_the_graph_memory() -> None:
    # 4 sizes of the default 51: 4 / 51 x 978,006,999 = 76,706,431.3 -> 76,706,431
    assert (
        _graphs("vllm serve m -cc '{\"cudagraph_capture_sizes\": [1, 2, 4, 8, 8]}'", "0.33.0") == 76_706_431
    )
    # max_cudagraph_capture_size 64: 1, 2, 4, 8, 16 ... 64 = 3 + 8 = 11 sizes -> 11 / 51 x 978,006,999 = 210,942,686
    assert budget.capture_grid_count(64) == 11
    assert _graphs("vllm serve m -cc.max_cudagraph_capture_size=64", "0.33.0") == 210_942_686
    # a size above max_num_batched_tokens (8,192 on an H100 at 0.33.0) is not captured: 2 sizes
    assert _graphs("vllm serve m -cc '{\"cudagraph_capture_sizes\": [1, 2, 16384]}'", "0.33.0") == int(
        2 / 51 * DEFAULT_GRAPH_BYTES
    )
    assert _graphs("vllm serve m", "0.33.0") == DEFAULT_GRAPH_BYTES


@pytest.mark.parametrize(
    ("command", "version", "mode"),
    [
        # 0.11.0: -O is the compilation level; only level 3 (PIECEWISE) captures the release's default
        ("vllm serve m -O0", "0.11.0", "NONE"),
        ("vllm serve m -O2", "0.11.0", "NONE"),
        ("vllm serve m -O3", "0.11.0", "FULL_AND_PIECEWISE"),
        ("vllm serve m -O 1", "0.11.0", "NONE"),
        # 0.14.0+: -O is the optimization level (OPTIMIZATION_LEVEL_0x cudagraph_mode)
        ("vllm serve m -O1", "0.14.0", "PIECEWISE"),
        ("vllm serve m -O0", "0.33.0", "NONE"),
        # compilation off (mode 0): 0.14.0 overrides the piecewise default to NONE, 0.30.0+ to FULL_DECODE_ONLY
        ("vllm serve m -cc '{\"mode\": 0}'", "0.14.0", "NONE"),
        ("vllm serve m -cc '{\"mode\": 0}'", "0.27.1", "NONE"),
        ("vllm serve m -cc '{\"mode\": 0}'", "0.30.0", "FULL_DECODE_ONLY"),
        ('vllm serve m -cc \'{"mode": "NONE", "cudagraph_mode": "PIECEWISE"}\'', "0.33.0", "NONE"),
        ('vllm serve m -cc \'{"mode": "VLLM_COMPILE"}\'', "0.33.0", "FULL_AND_PIECEWISE"),
        # -O0 with an explicit cudagraph_mode and no -cc mode: O0 still sets compilation mode NONE
        # (0.33.0 config/vllm.py VllmConfig.__post_init__: mode None and level O0 -> CompilationMode.NONE),
        # so the piecewise mode is lowered as {"mode": 0} lowers it (review, round 8: it stayed PIECEWISE)
        ('vllm serve m -O0 -cc \'{"cudagraph_mode": "PIECEWISE"}\'', "0.33.0", "NONE"),
        ('vllm serve m -O0 -cc \'{"cudagraph_mode": "FULL_AND_PIECEWISE"}\'', "0.33.0", "FULL_DECODE_ONLY"),
        # FULL needs no piecewise compilation: kept
        ('vllm serve m -cc \'{"mode": 0, "cudagraph_mode": "FULL"}\'', "0.33.0", "FULL"),
    ],
)
def test_the_mode_a_start_runs_by_release(command: str, version: str, mode: str) -> None:
    serve = parse_pasted(command, vllm_version=version).serve
    assert graph_mode.effective_mode(serve, rules=rules_for(version)) == mode


def test_graphs_follow_the_compilation_level() -> None:
    # 0.11.0 -O0 / -O2: no graphs captured; -O3 the default capture
    assert _graphs("vllm serve m -O0", "0.11.0") == 0
    assert _graphs("vllm serve m -O3", "0.11.0") == GRAPH_BYTES_0_11
    assert _graphs("vllm serve m -cc '{\"mode\": 0}'", "0.14.0") == 0


def test_a_piecewise_mode_without_level_3_is_refused_on_0_11() -> None:
    serve = parse_pasted(
        # 0.11.0 has no -cc (engine/arg_utils.py: "--compilation-config", "-O"; -cc is 0.12.0's)
        'vllm serve m -O.cudagraph_mode=PIECEWISE --compilation-config \'{"level": 0, "cudagraph_mode": "PIECEWISE"}\'',
        vllm_version="0.11.0",
    ).serve
    with pytest.raises(PlannerError) as err:
        estimate(model=dense(), device=H100, serve=serve, vllm_version="0.11.0")
    assert err.value.field == "compilation_config"
    assert "Compilation level should be CompilationLevel.PIECEWISE" in str(err.value)
    # 0.14.0 overrides instead of refusing: NONE, no graphs
    assert estimate(model=dense(), device=H100, serve=serve, vllm_version="0.14.0").cuda_graph_bytes == 0


@pytest.mark.parametrize(
    "value",
    [
        '{"cudagraph_capture_sizes": "1,2"}',
        '{"cudagraph_capture_sizes": [0, 2]}',
        '{"max_cudagraph_capture_size": -1}',
        '{"mode": 7}',
        '{"cudagraph_mode": "PIECEWISE"}',  # has its own field
        "[1, 2]",
        "{not json",
        '{"k": "' + "x" * 5000 + '"}',
    ],
)
def test_bad_compilation_keys_name_the_field(value: str) -> None:
    with pytest.raises(ValueError) as err:
        ServeConfig(compilation_config=value)
    assert "compilation_config" in str(err.value)


def test_bad_pasted_keys_name_the_field() -> None:
    with pytest.raises(PlannerError) as err:
        parse_pasted('vllm serve m -cc \'{"cudagraph_capture_sizes": ["a"]}\'', vllm_version="0.33.0")
    assert err.value.field == "compilation_config"


def test_settings_cache_is_bounded_against_distinct_texts() -> None:
    """Each distinct -cc text is a new key: 2,048 of them must not hold 2,048 entries (hardening10)."""
    for n in range(2 * compilation.SETTINGS_KEPT):
        compilation.settings(f'{{"cudagraph_capture_sizes": [{n + 1}]}}')
    assert compilation.settings.cache_info().currsize <= compilation.SETTINGS_KEPT
    assert compilation.settings.cache_info().maxsize == compilation.SETTINGS_KEPT
