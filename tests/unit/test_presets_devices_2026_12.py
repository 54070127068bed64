"""Round-4 presets and devices against their published sources (model_specs/, device_specs/devices_added.yaml)."""

from __future__ import annotations

from pathlib import Path

import yaml

from app.core.catalog import find_device, find_model
from app.core.hf_config import count_params
from app.core.specs import GIB

SPECS = Path(__file__).resolve().parents[2] / "model_specs"


def test_devstral_small_2507_from_its_params_json() -> None:
    # params.json (fetchwiki/mistralai-Devstral-Small-2507 @ bc3721c0) through vLLM 0.33.0's mistral adapter:
    # 40 layers x (q 5,120 x 4,096 + k, v 2 x 5,120 x 1,024 + o 4,096 x 5,120 + MLP 3 x 5,120 x 32,768 + 2
    # norms) + embed and lm_head 2 x 131,072 x 5,120 + final norm = 23,572,403,200, the index's
    # total_parameters (its total_size 47,144,806,400 = 2 B each)
    config = yaml.safe_load((SPECS / "mistralai_devstral_small_2507.yaml").read_text(encoding="utf-8"))[
        "config"
    ]
    assert count_params(config) == (23_572_403_200, None)
    model = find_model("devstral-small")
    assert model.name == "mistralai/Devstral-Small-2507"
    # no max_position_embeddings in params.json and no config.json to read it from: 128,000
    # (transformers_utils/config.py _maybe_retrieve_max_pos_from_hf default)
    assert model.max_model_len_derived == 128_000
    assert (model.num_kv_heads, model.head_size) == (8, 128)


def test_gh200_totals() -> None:
    # 144GB HBM3e: cuDeviceTotalMem 153,008,209,920 B = 142.50 GiB; 96GB HBM3: 97,871 MiB = 95.58 GiB
    assert find_device("gh200-144gb").memory_total_bytes == 153_008_209_920
    assert round(find_device("gh200").memory_total_bytes / GIB, 2) == 95.58
    assert find_device("NVIDIA GH200 480GB").id == "nvidia-gh200-96gb"
    assert find_device("gh200").compute_capability == "9.0"
