"""A GPTQ / W4A16 group straddling the TP shard: served only where a 0.33.0 kernel takes it.

0.33.0 layers/quantization/auto_gptq.py AutoGPTQLinearMethod.create_weights (and compressed_tensors_wNa16.py) call
kernels/linear/__init__.py choose_mp_linear_kernel, which walks CUDA's _POSSIBLE_KERNELS in order and raises
"Failed to find a kernel that can implement the WNA16 linear layer." when none can_implement:
CutlassW4A8 (float8 activations only), Machete (SM 9.0, group -1/64/128, input shard % 64 == 0, output % 128 == 0;
no group check), Marlin (refuses "in_features per partition N is not divisible by group_size"), Conch (needs
conch-triton-kernels, not installed with vLLM), Exllama (float16 activations only; checks the full input only),
TritonW4A16 (K % group), Humming (needs the humming package).

Configs: tests/data/configs/heldout_0_33q/sgl-project--ome-quant-gptq-llama-2-7b_config.json (Llama-2-7B GPTQ 4 bit,
group 128, torch_dtype float16, intermediate 11,008) and heldout_0_33d/TheBloke--Llama-2-13B-chat-GPTQ_config.json
(group 128, float16, intermediate 13,824, hidden 5,120). --dtype bfloat16 gives bfloat16 activations.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.catalog import find_device
from app.core.errors import PlannerError
from app.core.estimate import validate_parallel
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig
from app.core.versions import rules_for

DATA = Path(__file__).resolve().parents[1] / "data/configs"
LLAMA2_7B = DATA / "heldout_0_33q/sgl-project--ome-quant-gptq-llama-2-7b_config.json"
LLAMA2_13B = DATA / "heldout_0_33d/TheBloke--Llama-2-13B-chat-GPTQ_config.json"


def _check(path: Path, *, tp: int, dtype: str, device: str, version: str = "0.33.0") -> None:
    config = json.loads(path.read_text(encoding="utf-8"))
    validate_parallel(
        model=model_spec_from_hf_config(config, name=path.stem, vllm_version=version),
        serve=ServeConfig(tensor_parallel_size=tp, dtype=dtype),  # type: ignore[arg-type]
        device=find_device(device),
        rules=rules_for(version),
    )


def test_float16_activations_are_served_by_exllama() -> None:
    # down_proj 11,008 / 8 = 1,376 = 10 x 128 + 96 straddles, but Exllama checks 11,008 % 128 == 0 only
    _check(LLAMA2_7B, tp=8, dtype="auto", device="a100")
    _check(LLAMA2_7B, tp=8, dtype="float16", device="h100")


def test_bfloat16_activations_find_no_kernel() -> None:
    # A100 (8.0): no Machete, Marlin and Triton need whole groups, Exllama float16: refused
    with pytest.raises(PlannerError) as err:
        _check(LLAMA2_7B, tp=8, dtype="bfloat16", device="a100")
    assert err.value.field == "tensor_parallel_size"
    message = str(err.value)
    assert "1,376 of down_proj's 11,008 inputs" in message and "group size 128" in message
    assert "Failed to find a kernel that can implement the WNA16 linear layer." in message
    # H100 (9.0): Machete needs 1,376 % 64 == 0, and 1,376 = 21 x 64 + 32: refused too
    with pytest.raises(PlannerError):
        _check(LLAMA2_7B, tp=8, dtype="bfloat16", device="h100")


def test_machete_takes_a_shard_of_64s_on_sm_90() -> None:
    # 13,824 / 8 = 1,728 = 13.5 x 128 straddles; 1,728 = 27 x 64 and hidden 5,120 = 40 x 128: Machete on an H100
    _check(LLAMA2_13B, tp=8, dtype="bfloat16", device="h100")
    with pytest.raises(PlannerError, match="1,728 of down_proj's 13,824 inputs"):
        _check(LLAMA2_13B, tp=8, dtype="bfloat16", device="a100")


def test_whole_groups_are_served_in_bfloat16() -> None:
    # TP 2: 11,008 / 2 = 5,504 = 43 x 128, Marlin takes it
    _check(LLAMA2_7B, tp=2, dtype="bfloat16", device="a100")


def test_releases_before_0_33_are_not_read_for_it() -> None:
    # 0.10.2's kernel list differs (AllSpark, BitBLAS): no refusal planned there
    _check(LLAMA2_7B, tp=8, dtype="bfloat16", device="a100", version="0.32.0")


def test_a_bfloat16_checkpoint_on_a_card_without_bfloat16_runs_float16_and_exllama_serves_it() -> None:
    # The Llama-2-7B GPTQ config with its torch_dtype set to bfloat16 (as GPTQModel / AutoRound write it). Under
    # --dtype auto, 0.33.0 config/model.py _resolve_auto_dtype keeps the config's dtype only if the platform
    # supports it; platforms/cuda.py supported_dtypes is [float16, float32] below compute capability 8.0, so a T4
    # (7.5) or a V100 (7.0) serves float16 ("doesn't support torch.bfloat16. Falling back to torch.float16").
    # Then down_proj's 1,376-input shard (10 x 128 + 96) finds Exllama (float16, 11,008 % 128 == 0): served.
    config = json.loads(LLAMA2_7B.read_text(encoding="utf-8")) | {"torch_dtype": "bfloat16"}
    model = model_spec_from_hf_config(config, name="llama-2-7b-gptq-bf16", vllm_version="0.33.0")
    for device in ("t4", "v100"):
        validate_parallel(
            model=model,
            serve=ServeConfig(tensor_parallel_size=8),
            device=find_device(device),
            rules=rules_for("0.33.0"),
        )
    # on an A100 (8.0) it stays bfloat16: no kernel takes the straddled group
    with pytest.raises(PlannerError, match="with bfloat16 activations"):
        validate_parallel(
            model=model,
            serve=ServeConfig(tensor_parallel_size=8),
            device=find_device("a100"),
            rules=rules_for("0.33.0"),
        )


QWEN36_W4A16 = DATA / "heldout_0_33c/fantasylord--Qwen3.6-27B-W4A16_config.json"


def _llama2_7b_with_scheme_of_qwen36(*, symmetric: bool) -> dict[str, object]:
    # Llama-2-7B's shape (down_proj 11,008 inputs) under fantasylord/Qwen3.6-27B-W4A16's real compressed-tensors
    # scheme (int4, group 128, "symmetric": false); symmetric=True flips only that key
    shape = json.loads(LLAMA2_7B.read_text(encoding="utf-8"))
    scheme = json.loads(QWEN36_W4A16.read_text(encoding="utf-8"))["quantization_config"]
    group = scheme["config_groups"]["group_0"]
    weights = group["weights"] | {"symmetric": symmetric}
    quant = {"quant_method": "compressed-tensors", "format": scheme["format"]}
    return shape | {
        "quantization_config": quant | {"config_groups": {"group_0": group | {"weights": weights}}}
    }


def test_asymmetric_w4a16_finds_no_kernel_for_a_straddled_group_even_in_float16() -> None:
    # 0.33.0 compressed_tensors_wNa16.py: "symmetric": false -> weight type uint4 with zero points. At TP 8 the
    # 1,376-input shard (10 x 128 + 96) straddles: Marlin and Triton need whole groups, Exllama takes only
    # uint4b8 / uint8b128 (exllama.py SUPPORTED_QUANT_TYPES), Machete is SM 9.0 only -> refused on an A100 even
    # with the config's float16 activations; symmetric, Exllama serves it.
    rules, a100 = rules_for("0.33.0"), find_device("a100")
    asym = model_spec_from_hf_config(_llama2_7b_with_scheme_of_qwen36(symmetric=False), name="asym")
    assert asym.quantization is not None and asym.quantization.zero_points
    with pytest.raises(PlannerError) as err:
        validate_parallel(model=asym, serve=ServeConfig(tensor_parallel_size=8), device=a100, rules=rules)
    assert err.value.field == "tensor_parallel_size"
    assert "1,376 of down_proj's 11,008 inputs" in str(err.value) and "asymmetric weights" in str(err.value)
    sym = model_spec_from_hf_config(_llama2_7b_with_scheme_of_qwen36(symmetric=True), name="sym")
    validate_parallel(model=sym, serve=ServeConfig(tensor_parallel_size=8), device=a100, rules=rules)
    # TP 2: 5,504 = 43 x 128 whole groups, Marlin takes the asymmetric weights
    validate_parallel(model=asym, serve=ServeConfig(tensor_parallel_size=2), device=a100, rules=rules)
