"""`--compilation-config` keys each release's CompilationConfig takes (issue 22 rules9 item 5).

Read from the wheels with scripts/gen_compilation_keys.py into app/core/compilation_keys.json:
vllm/config/compilation.py CompilationConfig's annotated fields. 0.11.0 declares it as a plain pydantic
``@dataclass`` (extra keys ignored): 18 keys, ``level`` but no ``mode``. 0.13.0-0.17.0
``@dataclass(config=ConfigDict(extra="forbid"))`` and 0.18.0+ ``@config`` (vllm/config/utils.py: "Extra fields are
forbidden by default") refuse any other key: engine/arg_utils.py parse_dataclass raises ArgumentTypeError from
``TypeAdapter(CompilationConfig).validate_json``. ``level`` is a field through 0.17.0 and gone from 0.18.0.
"""

from __future__ import annotations

import pytest

from app.core import compilation
from app.core.catalog import find_device
from app.core.command import parse_pasted
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.web.i18n import translations
from tests.specs_factory import dense

H100 = find_device("h100")
# dense(): 32 layers, 1,024 sequences -> the default 51 sizes at FULL_AND_PIECEWISE: 978,006,999 B
DEFAULT_GRAPH_BYTES = 978_006_999
GRAPH_BYTES_0_11 = (
    1_284_832_724  # 0.11.0 steps its grid by 8: 67 / 51 x 978,006,999 (test_compilation_config)
)
REFUSAL = (
    "vLLM {version} refuses --compilation-config key {key}: its CompilationConfig has no such field (pydantic: "
    "Extra inputs are not permitted)."
)


def _graphs(command: str, version: str) -> int:
    serve = parse_pasted(command, vllm_version=version).serve
    return estimate(model=dense(), device=H100, serve=serve, vllm_version=version).cuda_graph_bytes


def test_the_key_lists_as_read() -> None:
    assert compilation.release_keys("0.10.2") is None  # not read: keys taken as given
    extra, keys = compilation.release_keys("0.11.0") or ("", frozenset())
    assert extra == "ignore" and len(keys) == 18 and "level" in keys and "mode" not in keys
    extra, keys = compilation.release_keys("0.17.0") or ("", frozenset())
    assert extra == "forbid" and {"level", "mode", "max_cudagraph_capture_size"} <= keys
    extra, keys = compilation.release_keys("0.22.1") or ("", frozenset())  # the 0.22.0 wheel's list
    assert extra == "forbid" and len(keys) == 27 and "level" not in keys


@pytest.mark.parametrize(("version", "refused"), [("0.17.0", False), ("0.18.0", True), ("0.33.0", True)])
def test_level_is_refused_once_the_field_is_gone(version: str, refused: bool) -> None:
    command = "vllm serve m -cc '{\"level\": 0}'"
    if not refused:
        assert _graphs(command, version) == 0  # level 0 (NO_COMPILATION): no piecewise capture -> NONE
        return
    with pytest.raises(PlannerError) as err:
        _graphs(command, version)
    assert err.value.field == "compilation_config"
    assert REFUSAL.format(version=version, key="level") in str(err.value)


def test_an_unknown_key_is_dropped_by_0_11_and_refused_later() -> None:
    # 0.11.0 has no "mode" (0.11.1+): '{"mode": 0}' is dropped, the default FULL_AND_PIECEWISE stands
    # (0.11.0 spells it --compilation-config or -O: -cc is 0.12.0's, engine/arg_utils.py add_argument)
    assert _graphs("vllm serve m --compilation-config '{\"mode\": 0}'", "0.11.0") == GRAPH_BYTES_0_11
    # 0.14.0 reads it: mode NONE (0), so the piecewise default is overridden to NONE
    assert _graphs("vllm serve m -cc '{\"mode\": 0}'", "0.14.0") == 0
    # 0.13.0 reads it too (config/compilation.py CompilationConfig.mode; config/vllm.py __post_init__ "Cudagraph mode
    # %s is not compatible with compilation mode %s.Overriding to NONE."): no graphs (review9a: 0.13 was planned
    # with 0.11.0's rules and kept the default 51 sizes)
    assert _graphs("vllm serve m -cc '{\"mode\": 0}'", "0.13.0") == 0
    assert _graphs("vllm serve m --compilation-config '{\"bogus\": 1}'", "0.11.0") == GRAPH_BYTES_0_11
    # 0.13.0 CompilationConfig is a pydantic dataclass with ConfigDict(extra="forbid"), as 0.14.0's
    for version in ("0.13.0", "0.14.0"):
        with pytest.raises(PlannerError, match="key bogus"):
            _graphs("vllm serve m -cc '{\"bogus\": 1}'", version)


def test_the_refusal_reads_in_chinese() -> None:
    zh = translations("zh").gettext(REFUSAL)
    assert zh != REFUSAL and "{version}" in zh and "{key}" in zh
