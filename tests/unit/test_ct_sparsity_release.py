"""compressed-tensors sparsity: served until 0.21.0, refused with vLLM's own message from 0.22.0.

Config: tests/data/configs/heldout_0_33r/vllm-project--llm-compressor-llama2.c-stories42M-pruned2.4-compressed
(SOURCES.md there): a 2:4 `sparse-24-bitmask` sparsity_config targeting Linear, no config_groups.
0.21.0 layers/quantization/compressed_tensors/compressed_tensors.py get_scheme: supports_cutlass_24 (2:4 structure,
dense or sparse-24-bitmask format, unquantized) -> CompressedTensors24. 0.22.0 (and 0.23.0, 0.24.0, 0.26.0,
0.33.0): CompressedTensorsConfig.from_config calls _parse_sparsity_config, which raises DeprecationWarning("Sparsity
support has been removed from compressed-tensors. Please use a model without sparsity configuration.") for a
non-empty target map. Before this rule the planner refused it at every release with "quantization_config: must be
an object, got NoneType" (it looked for config_groups).

Worked by hand (served releases): 8 layers x 8 KV heads x 2 (K, V) x head 512 / 8 = 64 x 2 B (float32 checkpoint,
bf16 under --dtype auto) = 16,384 B a token.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.errors import PlannerError
from app.core.hf_config import model_spec_from_hf_config
from app.core.versions import rules_for
from tests.config_plans import kv_bytes_per_token

SPARSE = (
    Path(__file__).resolve().parents[1]
    / "data/configs/heldout_0_33r/vllm-project--llm-compressor-llama2.c-stories42M-pruned2.4-compressed_config.json"
)


def _config() -> dict[str, Any]:
    return json.loads(SPARSE.read_text(encoding="utf-8"))


def _kv_bytes(config: dict[str, Any], version: str) -> int:
    return kv_bytes_per_token(config, version)


@pytest.mark.parametrize("version", ["0.22.0", "0.33.0"])
def test_refused_with_vllms_message_from_0_22(version: str) -> None:
    with pytest.raises(PlannerError) as err:
        model_spec_from_hf_config(_config(), name="sparse", vllm_version=version)
    assert err.value.field == "quantization_config.sparsity_config"
    assert "Sparsity support has been removed from compressed-tensors" in str(err.value)
    assert f"vLLM {version}" in str(err.value)


@pytest.mark.parametrize("version", ["0.19.0", "0.21.0"])
def test_planned_before_0_22(version: str) -> None:
    assert _kv_bytes(_config(), version) == 16_384


def test_an_empty_target_list_is_not_sparsity() -> None:
    # _parse_sparsity_config builds its map from `targets`: none, nothing to refuse (0.33.0), unquantized weights
    config = _config()
    config["quantization_config"]["sparsity_config"]["targets"] = []
    assert _kv_bytes(config, "0.33.0") == 16_384


@pytest.mark.parametrize(
    ("version", "removed"), [("0.21.0", False), ("0.21.5", False), ("0.22.0", True), ("0.22.1", True)]
)
def test_the_rule_is_the_release_s(version: str, removed: bool) -> None:
    # 0.22.0 is planned in 0.22.1's bracket (same minor series), whose changelog row (versions_quant.py) removes it;
    # 0.21.x keeps 0.21.0's
    assert rules_for(version).ct_sparsity_removed is removed
