"""Layers folded by kind (app/core/layers.py): a 10,000-layer config costs what its distinct kinds cost,
and gives the numbers the layer-by-layer walk gives (issue 27, N3).

The configs are real ones (model_specs/: google/gemma-3-12b-it, NVIDIA-Nemotron-3-Nano-30B-A3B-BF16,
Qwen3-MoE-shaped as bench/hostile_server.py's N3) with ``num_hidden_layers`` raised to 10,000: the layer
pattern a config states (Gemma-3's sliding_window_pattern 6, Nemotron-H's hybrid_override_pattern) is
repeated, as a pasted config can.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.core import kinds, kv, layers
from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.fleet import Target, plan_fleet
from app.core.hf_config import model_spec_from_hf_config
from app.core.recommend.runner import recommend
from app.core.specs import AttentionShape, LayerKind, ModelSpec, ServeConfig
from app.resources import Data, directory

H100 = find_device("nvidia-h100-sxm-80gb")
LAYERS = 10_000
CURRENT = Path(__file__).resolve().parents[1] / "data" / "configs" / "current"


def _config(spec_file: str) -> dict[str, Any]:
    text = (directory(Data.MODEL_SPECS) / spec_file).read_text(encoding="utf-8")
    return copy.deepcopy(yaml.safe_load(text)["config"])


def gemma3_10k(num_layers: int = LAYERS) -> ModelSpec:
    config = _config("google_gemma_3_12b_it.yaml")
    config["text_config"]["num_hidden_layers"] = num_layers
    return model_spec_from_hf_config(config, name="gemma-3-10k")


def nemotron_h_10k() -> ModelSpec:
    config = _config("nvidia_nvidia_nemotron_3_nano_30b_a3b_bf16.yaml")
    pattern = config["hybrid_override_pattern"]  # 52 layers: M (Mamba), E (MoE, no cache), * (attention)
    config["hybrid_override_pattern"] = (pattern * (LAYERS // len(pattern) + 1))[:LAYERS]
    config["num_hidden_layers"] = LAYERS
    return model_spec_from_hf_config(config, name="nemotron-h-10k")


def qwen3_moe_10k() -> ModelSpec:
    config = {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "num_hidden_layers": LAYERS,
        "intermediate_size": 6144,
        "moe_intermediate_size": 768,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "torch_dtype": "bfloat16",
    }
    return model_spec_from_hf_config(config, name="qwen3-moe-10k")


def _stretched(name: str, per_layer_keys: tuple[str, ...], num_layers: int = LAYERS) -> ModelSpec:
    """A published config.json (tests/data/configs/current/, sources in SOURCES.md) at ``num_layers``
    layers: each per-layer list it states repeated, as a pasted config can."""
    config = dict(json.loads((CURRENT / name).read_text(encoding="utf-8")))
    text = config.get("text_config", config)
    for key in per_layer_keys:
        text[key] = (text[key] * (num_layers // len(text[key]) + 1))[:num_layers]
    text["num_hidden_layers"] = num_layers
    return model_spec_from_hf_config(config, name=f"{name}-{num_layers}")


def gemma4_10k(num_layers: int = LAYERS) -> ModelSpec:
    # google/gemma-4-26B-A4B: five sliding layers (8 KV heads of 256), then one full (2 of 512, K = V)
    return _stretched("google--gemma-4-26B-A4B_config.json", ("layer_types",), num_layers)


def glm52_10k() -> ModelSpec:
    # zai-org/GLM-5.2-FP8: an indexer on every fourth layer (index_topk_freq 4)
    return _stretched("zai-org--GLM-5.2-FP8_config.json", ("indexer_types", "mlp_layer_types"))


def mimo_v2_10k() -> ModelSpec:
    # XiaomiMiMo/MiMo-V2-Flash: SWA layers of 8 KV heads, full of 4
    return _stretched("XiaomiMiMo--MiMo-V2-Flash_config.json", ("hybrid_layer_pattern", "moe_layer_freq"))


def _per_layer_signatures(*, model: ModelSpec, layer_range: tuple[int, int]) -> dict[Any, int]:
    """The walk the signature fold replaced: every layer of the stage, one by one, in order."""
    shapes, indexed = model.layer_attention, set(model.indexer_layers or ())
    counts: dict[Any, int] = {}
    for index in range(*layer_range):
        key = (model.layer_kinds[index], None if shapes is None else shapes[index], index in indexed)
        counts[key] = counts.get(key, 0) + 1
    return counts


def _per_layer_counts(*, model: ModelSpec, layer_range: tuple[int, int]) -> dict[LayerKind, int]:
    """The walk the fold replaced: every layer of the stage, one by one, in order."""
    counts: dict[LayerKind, int] = {}
    for kind in model.layer_kinds[layer_range[0] : layer_range[1]]:
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def _each_stage_its_own(
    *, model: ModelSpec, layer_range: tuple[int, int], is_first: bool, is_last: bool
) -> Any:
    return (layer_range, is_first, is_last)


def _both(monkeypatch: pytest.MonkeyPatch, compute: Any) -> tuple[Any, Any]:
    """``compute()`` folded, then layer by layer and stage by stage as before the fold."""
    folded = compute()
    with monkeypatch.context() as patch:
        patch.setattr(layers, "kind_counts", _per_layer_counts)
        patch.setattr(kv, "signature_counts", _per_layer_signatures)
        patch.setattr(layers, "stage_shape", _each_stage_its_own)
        walked = compute()
    return folded, walked


# --- the fold itself, by hand ---------------------------------------------------------------------------


def test_a_stage_counts_its_kinds_in_order_of_first_appearance() -> None:
    # Gemma-3: every 6th layer full (indices 5, 11, ...), the rest sliding
    model = gemma3_10k()
    fold = layers.fold(model)
    # [0, 5,000): 5,000 = 833 x 6 + 2 -> 833 full layers, 4,167 sliding; layer 0 is sliding, so it comes first
    assert list(fold.counts(start=0, stop=5_000).items()) == [
        (LayerKind.SLIDING, 4_167),
        (LayerKind.FULL, 833),
    ]
    # [5, 12): layers 5 and 11 full, 6-10 sliding; layer 5 comes first
    assert list(fold.counts(start=5, stop=12).items()) == [(LayerKind.FULL, 2), (LayerKind.SLIDING, 5)]
    assert fold.counts(start=7, stop=7) == {}
    assert layers.model_counts(model) == {LayerKind.SLIDING: 8_334, LayerKind.FULL: 1_666}  # 10,000 // 6
    assert layers.fold(model) is fold  # made once per layer_kinds tuple


def test_stages_of_one_shape_share_a_key() -> None:
    model = qwen3_moe_10k()
    ranges = [(0, 2_500), (2_500, 5_000), (5_000, 7_500), (7_500, 10_000)]
    shapes = [
        layers.stage_shape(model=model, layer_range=r, is_first=i == 0, is_last=i == 3)
        for i, r in enumerate(ranges)
    ]
    assert shapes[1] == shapes[2] == (2_500, ((LayerKind.FULL, 2_500),), False, False)
    assert len(set(shapes)) == 3  # the first (embeddings), the middle two, the last (the head)


def test_a_model_whose_attention_differs_per_layer_is_folded_by_signature() -> None:
    # the per-layer fields are named (layers.PER_LAYER_FIELDS), each a ModelSpec field; the ones a LayerSignature
    # folds are a subset, the rest (DeepSeek-V4's compress_ratios) keep each stage its own
    assert set(layers.PER_LAYER_FIELDS) == {"layer_attention", "indexer_layers", "compress_ratios"}
    assert set(layers.PER_LAYER_FIELDS) <= set(ModelSpec.model_fields)
    assert set(layers.FOLDED_PER_LAYER_FIELDS) <= set(layers.PER_LAYER_FIELDS)
    assert "uncounted_towers" not in layers.PER_LAYER_FIELDS and "layer_kinds" not in layers.PER_LAYER_FIELDS
    model = gemma3_10k()
    same = tuple(AttentionShape(kv_heads=8, head_size=256, head_size_v=256) for _ in range(LAYERS))
    # layer i has 1 + i // 12 KV heads: layers [6, 12) all 1 head, [12, 18) all 2 heads
    growing = tuple(
        AttentionShape(kv_heads=1 + i // 12, head_size=256, head_size_v=256) for i in range(LAYERS)
    )

    def shapes(of: ModelSpec) -> set[Any]:
        return {
            layers.stage_shape(model=of, layer_range=r, is_first=False, is_last=False)
            for r in [(6, 12), (12, 18)]
        }

    # [6, 12) and [12, 18) hold 5 sliding + 1 full each: one shape by kind, one by signature while the
    # layers' attention is the same, two when the heads differ between the ranges
    assert len(shapes(model)) == 1
    assert len(shapes(model.model_copy(update={"layer_attention": same}))) == 1
    assert len(shapes(model.model_copy(update={"layer_attention": growing}))) == 2
    # a per-layer field the signature does not fold: the layer range is the shape
    ratios = model.model_copy(update={"compress_ratios": (0,) * LAYERS})
    assert len(shapes(ratios)) == 2


def test_signatures_count_in_order_of_first_appearance_and_walk_when_all_differ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = gemma4_10k()
    sliding, full = model.layer_attention[0], model.layer_attention[5]  # type: ignore[index]
    # Gemma-4-26B-A4B's layer_types: five sliding then one full, over and over; [0, 12): 10 + 2
    assert list(layers.signature_counts(model=model, layer_range=(0, 12)).items()) == [
        ((LayerKind.SLIDING, sliding, False), 10),
        ((LayerKind.FULL, full, False), 2),
    ]
    assert sliding == AttentionShape(kv_heads=8, head_size=256, head_size_v=256)
    assert full == AttentionShape(kv_heads=2, head_size=512, head_size_v=512)  # global heads, K = V slot
    # every layer its own shape: more distinct signatures than layers in a stage, so the stage is walked
    distinct = tuple(AttentionShape(kv_heads=1 + i, head_size=128, head_size_v=128) for i in range(LAYERS))
    each = model.model_copy(update={"layer_attention": distinct})
    bisections: list[int] = []
    real = bisect.bisect_left

    def counted(*args: Any, **kwargs: Any) -> int:
        bisections.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(layers, "bisect_left", counted)
    counts = layers.signature_counts(model=each, layer_range=(100, 103))
    # layers 100, 101, 102: 100 % 6 = 4 sliding, 101 % 6 = 5 full, 102 sliding; heads 1 + i
    assert [(kind, shape.kv_heads if shape else 0, n) for (kind, shape, _), n in counts.items()] == [
        (LayerKind.SLIDING, 101, 1),
        (LayerKind.FULL, 102, 1),
        (LayerKind.SLIDING, 103, 1),
    ]
    assert bisections == []  # 3 layers walked, not 10,000 distinct signatures bisected
    layers.signature_counts(model=model, layer_range=(100, 103))
    assert len(bisections) == 2 * 2  # Gemma-4 as published: two signatures, two bisections each


# --- the same numbers -------------------------------------------------------------------------------------


# the last three: attention that differs per layer (layer_attention; GLM-5.2's indexer_layers), folded
# by signature and walked signature by signature, layer by layer
@pytest.mark.parametrize(
    "make", [gemma3_10k, nemotron_h_10k, qwen3_moe_10k, gemma4_10k, glm52_10k, mimo_v2_10k]
)
@pytest.mark.parametrize(("tp", "pp"), [(1, 1), (2, 4), (1, 7), (8, 64)])
def test_an_estimate_folded_is_the_estimate_walked_layer_by_layer(
    monkeypatch: pytest.MonkeyPatch, make: Any, tp: int, pp: int
) -> None:
    model = make()
    serve = ServeConfig(tensor_parallel_size=tp, pipeline_parallel_size=pp, max_model_len=8192)
    folded, walked = _both(
        monkeypatch,
        lambda: estimate(model=model, device=H100, serve=serve, target_concurrency=4).model_dump(),
    )
    assert folded == walked


def test_the_qwen3_moe_10k_layout_by_hand() -> None:
    # one group of 10,000 full-attention layers: page = B 16 x 4 KV heads x (128 + 128) x 2 B (bf16) =
    # 32,768 B; a block 10,000 x 32,768 = 327,680,000 B; a token 2 x 10,000 x 4 x 128 x 2 = 20,480,000 B
    est = estimate(model=qwen3_moe_10k(), device=H100, serve=ServeConfig(max_model_len=8192))
    assert est.kv_bytes_per_token == 20_480_000
    assert [(g.num_layers, g.page_size_bytes) for g in est.groups] == [(10_000, 32_768)]


@pytest.mark.parametrize("make", [gemma3_10k, gemma4_10k])  # Gemma-4: folded by signature
def test_a_recommendation_folded_is_the_one_walked(monkeypatch: pytest.MonkeyPatch, make: Any) -> None:
    model = make(2_000)  # the walk it is compared with costs ~40 estimates x the layers

    def run() -> Any:
        return recommend(
            model=model,
            device=H100,
            serve=ServeConfig(max_model_len=8192),
            vllm_version="0.33.0",
            target_max_model_len=32_768,
            target_concurrency=16,
            devices_per_node=8,
        ).model_dump()

    folded, walked = _both(monkeypatch, run)
    assert folded == walked


def test_a_fleet_plan_folded_is_the_one_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    model = qwen3_moe_10k()
    target = Target(
        input_tokens=1024,
        output_tokens=128,
        requests_per_s=2.0,
        slo_ttft_ms=1e8,
        slo_tpot_ms=1e8,
        devices_available=64,
        price_per_device_hour=2.5,
    )

    def run() -> Any:
        plan = plan_fleet(
            model=model, device=H100, serve=ServeConfig(max_model_len=8192), vllm_version=None, target=target
        )
        return plan.model_dump()

    folded, walked = _both(monkeypatch, run)
    assert folded == walked


# --- the cost: one evaluation per kind, not per layer -------------------------------------------------------


def _count_bucket_calls(monkeypatch: pytest.MonkeyPatch) -> list[LayerKind]:
    calls: list[LayerKind] = []
    for spec in kinds.KIND_SPECS.values():
        real = spec.bucket

        def counted(model: ModelSpec, real: Any = real, kind: LayerKind = spec.kind) -> Any:
            calls.append(kind)
            return real(model)

        monkeypatch.setattr(spec, "bucket", counted)
    return calls


@pytest.mark.parametrize(
    ("make", "distinct"),
    [
        (gemma3_10k, 2),
        (nemotron_h_10k, 2),
        (qwen3_moe_10k, 1),
    ],  # Nemotron-H: Mamba and attention (E holds none)
)
def test_a_10000_layer_estimate_evaluates_each_kind_once(
    monkeypatch: pytest.MonkeyPatch, make: Any, distinct: int
) -> None:
    model = make()
    layers.fold(model)  # the fold itself is one pass when the config is read
    calls = _count_bucket_calls(monkeypatch)
    estimate(model=model, device=H100, serve=ServeConfig(max_model_len=8192))
    assert len(calls) == distinct and len(set(calls)) == distinct  # was 10,000 (8,334 + 1,666 for Gemma-3)


def test_pipeline_stages_of_one_shape_are_evaluated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # 10,000 layers over PP 64: 10,000 = 64 x 156 + 16, so 16 stages of 157 layers and 48 of 156 (vLLM's
    # get_pp_indices gives one more to each of the 16 stages before the last); shapes: the first (156,
    # the embeddings), 156 in the middle, 157 in the middle, the last (156, the head) -> 4 evaluations
    # of the one kind, not 64 (nor 10,000)
    model = qwen3_moe_10k()
    layers.fold(model)
    calls = _count_bucket_calls(monkeypatch)
    est = estimate(model=model, device=H100, serve=ServeConfig(pipeline_parallel_size=64, max_model_len=8192))
    assert est.pipeline_parallel_size == 64
    assert len(calls) == 4


def _count_page_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = kv.attention_page_bytes

    def counted(**kwargs: int) -> int:
        calls.append(kwargs["block_size"])
        return real(**kwargs)

    monkeypatch.setattr(kv, "attention_page_bytes", counted)
    return calls


def test_a_10000_layer_gemma4_costs_its_distinct_signatures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Attention layers whose shapes differ (``layer_attention``: Gemma-4's full layers have their own KV
    heads and head size) are folded by signature: the estimate computes each distinct shape's page, not
    each layer's (20,001 pages and 10,000 buckets before the signature fold)."""
    model = gemma4_10k()
    layers.signature_fold(model)
    pages = _count_page_calls(monkeypatch)
    buckets = _count_bucket_calls(monkeypatch)
    est = estimate(model=model, device=H100, serve=ServeConfig(tensor_parallel_size=8, max_model_len=8192))
    # 10,000 = 333 x 30 + 10 layers of the 30-layer pattern (25 sliding + 5 full; the first 10: 9 + 1):
    # 8,334 sliding, 1,666 full. At TP 8 a sliding layer keeps max(1, 8 // 8) = 1 head of 256 + 256, bf16:
    # 1,024 B a token; a full one max(1, 2 // 8) = 1 head of 512 + 512: 2,048 B.
    # 8,334 x 1,024 + 1,666 x 2,048 = 8,534,016 + 3,411,968 = 11,945,984 B a token
    assert est.kv_bytes_per_token == 11_945_984
    # per-token pages of the two shapes (2), their pages at B 16 to unify them (2), the model-wide page (1)
    assert len(pages) == 5
    assert buckets == [LayerKind.SLIDING, LayerKind.FULL]  # one bucket per kind, in order of first appearance


def test_pipeline_stages_of_a_per_layer_model_share_by_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    model = gemma4_10k()
    serve = ServeConfig(tensor_parallel_size=8, pipeline_parallel_size=64, max_model_len=8192)
    ranges = kv.stage_layer_ranges(num_layers=LAYERS, pipeline_parallel_size=64)
    shapes = {
        layers.stage_shape(model=model, layer_range=r, is_first=i == 0, is_last=i == 63)
        for i, r in enumerate(ranges)
    }
    # 156 and 157 layers of a period-6 pattern starting at different phases, plus the first and last
    assert len(shapes) < 12
    pages = _count_page_calls(monkeypatch)
    estimate(model=model, device=H100, serve=serve)
    assert len(pages) == 5 * len(shapes)  # five pages per stage shape (above), not per stage nor per layer


def test_a_10000_layer_glm52_indexer_costs_two_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """GLM-5.2: the indexer on every fourth layer (``indexer_layers``): two pages, with and without."""
    model = glm52_10k()
    assert model.indexer_layers is not None and len(model.indexer_layers) == 2_502
    est = estimate(model=model, device=H100, serve=ServeConfig(tensor_parallel_size=8, max_model_len=8192))
    # index_skip_topk_offset 3, index_topk_freq 4: layers with max(i - 2, 0) % 4 == 0, so 0, 1 and
    # 2, 6, ..., 9,998: 2 + 2,500 = 2,502. A token: the latent (512 + 64) x 2 B = 1,152 B on every layer,
    # the indexer's 128 B + 4 B scale on 2,502: 10,000 x 1,152 + 2,502 x 132 = 11,850,264 B
    assert est.kv_bytes_per_token == 11_850_264
    (group,) = est.groups
    assert group.num_layers == 10_000
    assert group.page_size_bytes == 64 * (1_152 + 132)  # MLA block 64: 82,176 B with the indexer


def test_a_tuple_field_that_is_not_per_layer_leaves_stage_folding_alone() -> None:
    # ModelSpec.uncounted_towers is a tuple (the encoder towers the planner cannot count), not a per-layer list:
    # with it set, stages of one kind pattern still share one shape, and 1,024 stages of a 10,000-layer model
    # still fold to the 4 shapes of 10,000 = 1,024 x 9 + 784 (the first, the last, the middle ones of 9 and 10).
    model = gemma3_10k().model_copy(update={"uncounted_towers": ("vision_config (timm_wrapper)",)})
    assert layers.stage_shape(model=model, layer_range=(6, 12), is_first=False, is_last=False) == (
        6,
        ((LayerKind.SLIDING, 5), (LayerKind.FULL, 1)),
        False,
        False,
    )
    bounds = [0]
    for stage in range(1_024):
        bounds.append(bounds[-1] + (10 if stage < 784 else 9))
    ranges = list(itertools.pairwise(bounds))
    assert ranges[-1][1] == LAYERS
    folded = layers.StageFold(model=model, ranges=ranges)
    # layer i is full iff i % 6 == 5. 10-layer stages start at 10k (offsets 0, 4, 2): 9 sliding + 1 full at offset
    # 0, 8 + 2 at 2 and 4; 9-layer stages start at 7,840 + 9j (offsets 4, 1): 7 + 2 and 8 + 1. With the first and
    # the last stage (embeddings, head) that is 6 shapes, not 1,024
    assert len(list(folded.new_stages())) == 6
    plain = layers.StageFold(model=gemma3_10k(), ranges=ranges)
    assert folded.first == plain.first  # exactly as without the tuple field
