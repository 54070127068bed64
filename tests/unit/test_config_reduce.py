"""planner_config: the permalink's cut-down config plans exactly like the config it came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.errors import ConfigError
from app.core.hf_config import model_spec_from_hf_config
from app.core.hf_config.reduce import planner_config

DATA = Path(__file__).resolve().parents[1] / "data" / "configs"
FILES = sorted(p for p in DATA.rglob("*.json") if "hf_quant_config" not in p.name)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_reduced_config_gives_the_same_spec(path: Path) -> None:
    config = json.loads(path.read_text(encoding="utf-8"))
    try:
        spec = model_spec_from_hf_config(config, name="m")
    except ConfigError:
        with pytest.raises(ConfigError):  # a config the planner refuses is refused the same way
            model_spec_from_hf_config(planner_config(config), name="m")
        return
    assert model_spec_from_hf_config(planner_config(config), name="m") == spec


def test_a_3_mb_mixed_precision_config_fits_a_link() -> None:
    # nvidia/MiniMax-M3-NVFP4 config.json: 3,087,083 bytes, 2,305,088 compact, of which nearly all is the
    # per-module quantized_layers map; reduced, the compact JSON is a few KB
    config = json.loads(
        (DATA / "current" / "nvidia--MiniMax-M3-NVFP4_config.json").read_text(encoding="utf-8")
    )
    compact = json.dumps(planner_config(config), separators=(",", ":"))
    assert len(compact) < 20_000
    assert model_spec_from_hf_config(json.loads(compact), name="m") == model_spec_from_hf_config(
        config, name="m"
    )
