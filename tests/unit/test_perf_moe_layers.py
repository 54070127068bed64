"""Which decoder layers of an MoE model carry the routed experts, and what the speed physics counts on them.

Each count is worked by hand from the real config.json (tests/data/configs/current/) and the rule of
vLLM 0.33.0's model code: llama4.py Llama4DecoderLayer ``(layer_idx + 1) % interleave_moe_layer_step == 0``;
deepseek_v2.py DeepseekV2DecoderLayer ``layer_idx >= first_k_dense_replace and layer_idx %
moe_layer_freq == 0``; qwen3_moe.py Qwen3MoeDecoderLayer ``layer_idx not in mlp_only_layers and
(layer_idx + 1) % decoder_sparse_step == 0``; MiMo-V2's moe_layer_freq is one 0/1 flag per layer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.perf.physics import moe_layer_count, step_physics, tp_over_pcie
from app.core.specs import ServeConfig

CURRENT = Path(__file__).resolve().parents[1] / "data" / "configs" / "current"


def _config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CURRENT / name).read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(
    ("name", "moe_layers"),
    [
        # interleave_moe_layer_step 2 over 48 layers: layers 1, 3, ..., 47 -> 24
        ("meta-llama--Llama-4-Maverick-17B-128E-Instruct_config.json", 24),
        # first_k_dense_replace 3, moe_layer_freq 1 over 61 layers: 3..60 -> 58
        ("deepseek-ai--DeepSeek-V3_config.json", 58),
        # decoder_sparse_step 1, mlp_only_layers [] over 48 layers: all 48
        ("Qwen--Qwen3-30B-A3B_config.json", 48),
        # moe_layer_freq [0, 1 x 47]: 47
        ("XiaomiMiMo--MiMo-V2-Flash_config.json", 47),
    ],
)
def test_moe_layers_read_from_the_config(name: str, moe_layers: int) -> None:
    spec = model_spec_from_hf_config(_config(name), name=name)
    assert spec.moe_layers == moe_layers
    assert moe_layer_count(spec) == moe_layers


def test_mlp_only_layers_and_sparse_step_drop_layers() -> None:
    # Qwen3-30B-A3B with mlp_only_layers [0, 47] and decoder_sparse_step 2: the MoE layers are the odd
    # indices 1, 3, ..., 47 (24) minus layer 47 -> 23
    config = _config("Qwen--Qwen3-30B-A3B_config.json")
    config["mlp_only_layers"] = [0, 47]
    config["decoder_sparse_step"] = 2
    spec = model_spec_from_hf_config(config, name="qwen3-moe-sparse")
    assert spec.moe_layers == 23


def test_a_dense_model_has_no_moe_layers() -> None:
    spec = find_model("meta-llama/Llama-3.1-8B-Instruct")
    assert spec.moe_layers is None
    assert moe_layer_count(spec) == 0


def test_without_the_count_the_routed_expert_parameters_decide() -> None:
    # a spec that does not say (a user's ModelSpec): DeepSeek-V3's routed experts are 256 x 3 x 7,168 x
    # 2,048 = 11.27 B parameters a layer; the 671 B body holds 59 of them (budget.routed_expert_params,
    # ~2 % high against the config's 58)
    spec = find_model("deepseek-ai/DeepSeek-V3").model_copy(update={"moe_layers": None})
    assert moe_layer_count(spec) == 59


def test_the_dp_exchange_and_moe_floors_cover_only_the_moe_layers() -> None:
    # Llama-4-Maverick TP 1 x DP 8 + EP (moreh-dev's MI355X layout): dispatch + combine on its 24 MoE
    # layers, 5,120 bf16 values a token to the other 7 ranks: 2 x 24 x 10,240 B x 7 = 3,440,640 B;
    # 48 collectives a step (was 96 and 6,881,280 B with every layer counted as MoE)
    model, device = (
        find_model("meta-llama/Llama-4-Maverick-17B-128E-Instruct"),
        find_device("amd-mi355x-288gb"),
    )
    serve = ServeConfig(
        tensor_parallel_size=1, data_parallel_size=8, enable_expert_parallel=True, max_model_len=8192
    )
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.10.1")
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    assert physics.exchange_bytes_per_token == 2 * 24 * 5120 * 2 * 7
    assert physics.collectives_per_step == 2 * 24
    assert (physics.layers_on_device, physics.moe_layers_on_device) == (48, 24)


def test_pipeline_stages_split_the_moe_layers() -> None:
    # DeepSeek-V3 at TP 8 x PP 2: 61 / 2 = 30 layers a stage (int), 58 / 2 = 29 MoE layers a stage
    model, device = find_model("deepseek-ai/DeepSeek-V3"), find_device("nvidia-h200-141gb")
    serve = ServeConfig(tensor_parallel_size=8, pipeline_parallel_size=2, max_model_len=8192)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.11.0")
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    assert (physics.layers_on_device, physics.moe_layers_on_device) == (30, 29)


def test_one_block_layers_count_half_a_layer_and_one_all_reduce() -> None:
    # NVIDIA-Nemotron-3-Nano-30B-A3B (hybrid_override_pattern: 23 M, 23 E, 6 *; vLLM 0.33.0 nemotron_h.py:
    # each decoder layer is a norm and one mixer ending in one row-parallel projection). At TP 2 (Vultr's
    # B200 layout): 52 all-reduces a step (one a block; was 2 x 52 = 104), 52 / 2 = 26 attention + MLP
    # layer equivalents for the per-layer floors, the 23 E blocks as MoE layers, and attention FLOPs on
    # the 6 attention layers only: 2 x 2 x 6 x 32 heads x 128 / 2 = 49,152 a context token (was 52 layers)
    model, device = find_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8"), find_device("nvidia-b200")
    assert model.one_sublayer_blocks
    serve = ServeConfig(tensor_parallel_size=2, max_model_len=8192)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.16.0")
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    assert physics.collectives_per_step == 52
    assert (physics.layers_on_device, physics.moe_layers_on_device) == (26, 23)
    heads, head = model.num_attention_heads, model.head_size
    assert (heads, head) == (32, 128)
    assert physics.attention_flops_per_context_token == 2 * 2 * 6 * 32 * 128 / 2


def test_a_transformer_layer_keeps_two_all_reduces() -> None:
    # Llama-3.1-8B at TP 2: 32 layers x 2 all-reduces (o_proj, down_proj) = 64 a step, 32 layers
    model, device = find_model("meta-llama/Llama-3.1-8B-Instruct"), find_device("nvidia-h100-sxm-80gb")
    assert not model.one_sublayer_blocks
    serve = ServeConfig(tensor_parallel_size=2, max_model_len=8192)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.16.0")
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    assert (physics.collectives_per_step, physics.layers_on_device) == (64, 32)


@pytest.mark.parametrize(
    ("device", "tp", "over_pcie"),
    [
        ("nvidia-rtx-4090-24gb", 2, True),  # PCIe Gen4 only, no NVLink (catalog peer_link pcie)
        ("nvidia-l40s-48gb", 4, True),
        ("nvidia-h100-sxm-80gb", 8, False),  # NVLink 4 through NVSwitch
        ("amd-mi300x-192gb", 8, False),  # xGMI, fully connected
        ("nvidia-h100-nvl-94gb", 2, False),  # a bridged NVLink pair
        ("nvidia-h100-nvl-94gb", 4, True),  # two pairs talk over PCIe
        ("nvidia-rtx-4090-24gb", 1, False),  # no TP, no all-reduce
    ],
)
def test_the_catalog_says_which_cards_talk_over_pcie(device: str, tp: int, over_pcie: bool) -> None:
    assert tp_over_pcie(device=find_device(device), serve=ServeConfig(tensor_parallel_size=tp)) is over_pcie


def test_more_than_two_pcie_cards_pay_ncclls_ring_steps() -> None:
    # Llama-3.1-8B on 4 RTX 4090s (PCIe only: vLLM's custom all-reduce is off beyond two such cards):
    # 32 layers x 2 all-reduces, each 2 x (4 - 1) = 6 ring steps of 5 us: 64 x 30 us = 1.92 ms a step
    model = find_model("meta-llama/Llama-3.1-8B-Instruct")
    for device, tp, ring_s in (
        ("nvidia-rtx-4090-24gb", 4, 64 * 6 * 5e-6),
        ("nvidia-rtx-4090-24gb", 2, 0.0),  # two cards: not this rule
        ("nvidia-h100-sxm-80gb", 4, 0.0),  # NVLink: the custom all-reduce
    ):
        serve = ServeConfig(tensor_parallel_size=tp, max_model_len=8192)
        spec = find_device(device)
        est = estimate(model=model, device=spec, serve=serve, vllm_version="0.19.0")
        physics = step_physics(estimate=est, model=model, device=spec, serve=serve)
        assert physics.pcie_ring_s == pytest.approx(ring_s)
