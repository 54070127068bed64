"""Hypothesis on the core: random models (catalog and synthetic config.json), devices and flags.

Whatever the inputs, ``estimate()``, ``capacity_curve()`` and ``model_spec_from_hf_config()`` either
answer or raise a PlannerError naming a field — nothing else may escape (a ZeroDivisionError,
KeyError or RecursionError here would be a 500 on the web). An answer must be strict JSON (no NaN
or infinity: the API could not send it) with no negative byte counts.

Bounded: ``EXAMPLES`` cases per test, derandomized so CI is reproducible. The case count is printed.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.catalog import find_model, list_devices, list_models
from app.core.errors import PlannerError
from app.core.estimate import capacity_curve, estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.plan import apply_quantization_flag
from app.core.result import Estimate
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig
from app.core.versions import KNOWN_VERSIONS

EXAMPLES = 150
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
RAN: Counter[str] = Counter()
OUTCOMES: Counter[str] = Counter()

MODEL_IDS = [m.id for m in list_models()]
DEVICES = list_devices()
KV_DTYPES = ["auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "int8"]
QUANT_FLAGS = [None, "fp8", "awq", "gptq", "bitsandbytes", "int8", "w8a8", "nonsense"]


def small_or_huge(low: int, high: int) -> st.SearchStrategy[int]:
    """Mostly realistic, sometimes the bounds themselves."""
    return st.one_of(
        st.integers(low, min(high, 4 * low + 64)), st.sampled_from([low, high]), st.integers(low, high)
    )


@st.composite
def serve_configs(draw: st.DrawFn) -> ServeConfig:
    return ServeConfig(
        max_model_len=draw(st.none() | small_or_huge(1, 10_000_000)),
        tensor_parallel_size=draw(st.sampled_from([1, 1, 1, 2, 4, 8, 16, 3, 1024])),
        pipeline_parallel_size=draw(st.sampled_from([1, 1, 1, 1, 2, 4, 3, 256])),
        gpu_memory_utilization=draw(
            st.none() | st.floats(min_value=1e-6, max_value=1.0, allow_nan=False) | st.just(1.0)
        ),
        kv_cache_dtype=draw(st.sampled_from(["auto"] * 6 + KV_DTYPES)),
        block_size=draw(
            st.none() | st.sampled_from([1, 8, 16, 32, 64, 128, 256, 16384]) | small_or_huge(1, 16384)
        ),
        max_num_seqs=draw(st.none() | small_or_huge(1, 65536)),
        max_num_batched_tokens=draw(st.none() | small_or_huge(1, 10_000_000)),
        enforce_eager=draw(st.booleans()),
        enable_prefix_caching=draw(st.none() | st.booleans()),
        enable_chunked_prefill=draw(st.none() | st.booleans()),
        dtype=draw(st.sampled_from(["auto", "bfloat16", "float16", "float32", "half"])),
        kv_cache_memory_bytes=draw(st.none() | st.integers(0, 10**13)),
        cpu_offload_gb=draw(st.sampled_from([0.0, 0.5, 10.0, 100_000.0])),
        swap_space_gib=draw(st.none() | st.sampled_from([0.0, 4.0, 100_000.0])),
        kv_offloading_size_gib=draw(st.none() | st.sampled_from([0.0, 16.0, 100_000.0])),
    )


@st.composite
def devices(draw: st.DrawFn) -> DeviceSpec:
    if draw(st.booleans()):
        return draw(st.sampled_from(DEVICES))
    base = draw(st.sampled_from(DEVICES))
    memory = draw(st.integers(1, 4096 * GIB) | st.sampled_from([1, GIB, 80 * GIB]))
    data = base.model_dump()
    data.update(memory_total_bytes=memory, memory_nominal_gib=memory / GIB, id="fuzz-device")
    data["typical_node_devices"] = draw(st.sampled_from([1, 2, 8, 16]))
    return DeviceSpec.model_validate(data)


_WEIRD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(-5, 5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


@st.composite
def hf_configs(draw: st.DrawFn, junk: bool = True) -> dict[str, Any]:
    """config.json objects: mostly plausible (GQA, sliding, MLA, MoE), some fields replaced by junk."""
    heads = draw(st.sampled_from([1, 2, 8, 16, 32, 64, 128]))
    kv_heads = draw(st.sampled_from([1, 2, 4, 8, heads]))
    head_dim = draw(st.sampled_from([64, 80, 96, 128, 256]))
    layers = draw(st.integers(1, 128))
    config: dict[str, Any] = {
        "architectures": [
            draw(
                st.sampled_from(
                    [
                        "LlamaForCausalLM",
                        "Qwen2ForCausalLM",
                        "Gemma3ForCausalLM",
                        "DeepseekV3ForCausalLM",
                        "MixtralForCausalLM",
                        "X<script>",
                    ]
                )
            )
        ],
        "model_type": draw(st.sampled_from(["llama", "qwen2", "gemma3_text", "deepseek_v3", "mixtral", "?"])),
        "num_hidden_layers": layers,
        "hidden_size": heads * head_dim,
        "intermediate_size": draw(st.integers(0, 100_000)),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "vocab_size": draw(st.integers(1, 300_000)),
        "max_position_embeddings": draw(st.integers(1, 10_000_000)),
        "torch_dtype": draw(st.sampled_from(["bfloat16", "bfloat16", "float16", "float32", "float8"])),
    }
    if draw(st.booleans()):
        config["sliding_window"] = draw(st.none() | st.integers(-1, 1_000_000))
        kinds = st.sampled_from(["full_attention", "sliding_attention", "full_attention"] * 3 + ["x"])
        size = draw(st.sampled_from([layers, layers, layers, 0, layers + 1]))
        config["layer_types"] = draw(st.lists(kinds, min_size=size, max_size=size))
    if draw(st.booleans()):
        config.update(
            kv_lora_rank=draw(st.integers(1, 1024)),
            qk_rope_head_dim=draw(st.integers(0, 128)),
            qk_nope_head_dim=128,
            v_head_dim=128,
        )
    if draw(st.booleans()):
        config.update(
            num_local_experts=draw(st.integers(0, 512)), num_experts_per_tok=draw(st.integers(0, 16))
        )
    if draw(st.booleans()):
        config["rope_scaling"] = draw(
            st.none()
            | st.fixed_dictionaries(
                {
                    "rope_type": st.sampled_from(["llama3", "yarn", "linear", "?"]),
                    "factor": st.floats(allow_nan=True),
                }
            )
        )
    if draw(st.booleans()):
        config["quantization_config"] = draw(
            st.fixed_dictionaries(
                {
                    "quant_method": st.sampled_from(
                        ["fp8", "awq", "gptq", "compressed-tensors", "bitsandbytes", "??"]
                    )
                }
            )
        )
    for key in draw(st.lists(st.sampled_from(sorted(config)), max_size=3)) if junk else ():
        config[key] = draw(_WEIRD)  # junk where a number or a name belongs
    if draw(st.booleans()):
        config = {"text_config": config, "architectures": config.get("architectures")}
    return config


@st.composite
def models(draw: st.DrawFn) -> ModelSpec | None:
    """A catalog model (with a --quantization flag sometimes) or one read from a random config.json."""
    if draw(st.integers(0, 2)) > 0:
        model = find_model(draw(st.sampled_from(MODEL_IDS)))
        try:
            return apply_quantization_flag(model, draw(st.sampled_from(QUANT_FLAGS)))
        except PlannerError:
            return model
    config = draw(hf_configs(junk=False))
    params = draw(st.none() | st.integers(1, 10**13))
    try:
        return model_spec_from_hf_config(config, name="fuzz", params_total=params)
    except PlannerError:
        OUTCOMES["config refused (PlannerError)"] += 1
        return None


def _check(est: Estimate) -> None:
    assert isinstance(est, Estimate)
    data = est.model_dump(mode="json")
    json.dumps(data, allow_nan=False)  # the API must be able to send it
    for key, value in data.items():
        if key.endswith("_bytes") and isinstance(value, int | float):
            assert value >= 0 or key in ("kv_cache_bytes", "unused_bytes"), (key, value)


@FUZZ
@given(
    model=models(),
    device=devices(),
    serve=serve_configs(),
    version=st.none() | st.sampled_from(KNOWN_VERSIONS) | st.sampled_from(["0.5.0", "9.9.9", "banana"]),
    target=st.none() | st.integers(1, 65536),
    auto=st.booleans(),
)
def test_estimate_only_raises_planner_error(
    model: ModelSpec | None,
    device: DeviceSpec,
    serve: ServeConfig,
    version: str | None,
    target: int | None,
    auto: bool,
) -> None:
    RAN["estimate"] += 1
    if model is None:
        return
    try:
        est = estimate(
            model=model,
            device=device,
            serve=serve,
            vllm_version=version,
            target_concurrency=target,
            max_model_len_auto=auto,
        )
    except PlannerError as exc:
        assert exc.field and exc.message
        OUTCOMES["estimate: PlannerError"] += 1
        return
    OUTCOMES["estimate: answered"] += 1
    _check(est)


@FUZZ
@given(
    model=models(),
    device=devices(),
    serve=serve_configs(),
    version=st.none() | st.sampled_from(KNOWN_VERSIONS),
)
def test_capacity_curve_only_raises_planner_error(
    model: ModelSpec | None, device: DeviceSpec, serve: ServeConfig, version: str | None
) -> None:
    RAN["capacity_curve"] += 1
    if model is None:
        return
    try:
        curve = capacity_curve(model=model, device=device, serve=serve, vllm_version=version, points=12)
    except PlannerError:
        return
    for length, concurrency in curve:
        assert length > 0 and math.isfinite(concurrency) and concurrency >= 0


@FUZZ
@given(config=hf_configs() | st.dictionaries(st.text(max_size=8), _WEIRD, max_size=6))
def test_config_reader_only_raises_planner_error(config: dict[str, Any]) -> None:
    RAN["model_spec_from_hf_config"] += 1
    try:
        spec = model_spec_from_hf_config(config, name="fuzz")
    except PlannerError as exc:
        assert exc.field and exc.message
        return
    assert spec.num_layers == len(spec.layer_kinds)


@pytest.fixture(scope="module", autouse=True)
def report() -> Any:
    yield
    print(f"\ncore fuzz: {sum(RAN.values())} cases {dict(RAN)}; outcomes {dict(OUTCOMES)}")
