"""Each pipeline stage's budget and KV layout, as vLLM profiles it on that stage's worker (reference §2).

The budget of a stage: total x utilization - weights - activation peak - non-torch (- CUDA graphs where
the release budgets them), and on a 310P less what its worker holds at start-up, halved; the layout is
:func:`app.core.kv.build_layout` with the extras that change it (a draft's KV layers join it).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core import budget, deadline, extensible_kv, extras, kv, layers, stage_pool
from app.core.defaults import ResolvedFlags
from app.core.graph_rules import rank_graph_bytes
from app.core.specs import DTYPE_BYTES, DeviceSpec, ModelSpec, ServeConfig
from app.core.versions import VersionRules


@dataclass(frozen=True)
class Stage(budget.StageNumbers):
    """One pipeline stage: its partition (budget.StageNumbers) with its index, KV layout and extras."""

    index: int
    layout: kv.KVLayout
    extras: extras.StageExtras = extras.NO_EXTRAS
    # what the 310P worker holds at start-up and takes off the pool before halving it (0 elsewhere, and
    # under --kv-cache-memory-bytes): situations.cleared_before_halving_bytes, computed here only
    held_at_start_bytes: int = 0


def stage_layout(
    *,
    model: ModelSpec,
    serve: ServeConfig,
    rules: VersionRules,
    flags: ResolvedFlags,
    layer_range: tuple[int, int],
    index: int,
) -> tuple[kv.KVLayout, extras.StageExtras]:
    """One pipeline stage's KV layout with the extras that change it (a draft's KV layers join it)."""
    model_dtype = budget.serving_dtype(model=model, serve=serve)
    layout = kv.build_layout(
        model=model,
        layer_range=layer_range,
        tensor_parallel_size=serve.tensor_parallel_size,
        block_size=flags.choice.block_size,
        kv_cache_dtype=serve.kv_cache_dtype,
        model_dtype=model_dtype,
        rules=rules,
        hybrid=flags.hybrid,
        pad_pages=flags.choice.pads_pages,
        backend=flags.choice.name,
    )
    stage_extras = extras.stage_extras(
        model=model,
        serve=serve,
        rules=rules,
        layout=layout,
        layer_range=layer_range,
        is_first=index == 0,
        is_last=index == serve.pipeline_parallel_size - 1,
        model_dtype=model_dtype,
        max_num_batched_tokens=flags.max_num_batched_tokens,
    )
    return extras.with_draft_kv(layout, stage_extras), stage_extras


def pipeline_stages(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    rules: VersionRules,
    flags: ResolvedFlags,
    requested: int,
) -> list[Stage]:
    """Each pipeline stage's budget as vLLM profiles it on that stage's worker (reference §2), once per shape."""
    pipeline_size = serve.pipeline_parallel_size
    ranges = kv.stage_layer_ranges(num_layers=model.num_layers, pipeline_parallel_size=pipeline_size)
    stages = []
    fold = layers.StageFold(
        model=model, ranges=ranges
    )  # stages of one shape share a budget (app.core.layers)
    for index, layer_range in fold.new_stages():
        deadline.check()  # a request's CPU budget (app.core.deadline), checked once per stage
        is_first, is_last = index == 0, index == pipeline_size - 1
        layout, stage_extras = stage_layout(
            model=model, serve=serve, rules=rules, flags=flags, layer_range=layer_range, index=index
        )
        weights = stage_extras.weights_delta_bytes + budget.weights_bytes_for_stage(
            model=model,
            serve=serve,
            layer_range=layer_range,
            is_first=is_first,
            is_last=is_last,
            device=device,
            mxfp4_backends=rules.mxfp4_backends,
        )
        activation = budget.activation_peak_bytes(
            model=model,
            serve=serve,
            max_num_batched_tokens=flags.max_num_batched_tokens,
            max_num_seqs=flags.max_num_seqs,
            is_last_stage=is_last,
            sampler_logit_copies=rules.sampler_logit_copies,
            act_dtype_bytes=DTYPE_BYTES[budget.serving_dtype(model=model, serve=serve)],
        )
        non_torch = budget.non_torch_bytes(
            tensor_parallel_size=serve.tensor_parallel_size,
            pipeline_parallel_size=pipeline_size,
            platform=device.platform,
        )
        graphs = rank_graph_bytes(
            serve=serve,
            flags=flags,
            rules=rules,
            device=device,
            num_layers_on_rank=layer_range[1] - layer_range[0],
        )
        kv_bytes, held = stage_pool.stage_pool_bytes(
            device=device,
            serve=serve,
            rules=rules,
            requested=requested,
            parts=(weights, activation, non_torch, graphs),
        )
        if not layout.groups and rules.engine != "v0":
            # no layer has a KV cache spec (encoder-only attention): V1 never profiles nor allocates a pool
            # (0.33.0 v1/engine/core.py EngineCore._initialize_kv_caches: has_kv_cache False -> available memory
            # [0]; kv_cache_planning.get_kv_cache_config_from_groups: no groups -> no tensors, the null block only)
            kv_bytes, held = 0, 0
        stages.append(
            Stage(
                index=index,
                layout=layout,
                weights_bytes=weights,
                activation_peak_bytes=activation,
                non_torch_bytes=non_torch,
                cuda_graph_bytes=graphs,
                kv_cache_bytes=kv_bytes,
                num_blocks=extensible_kv.stage_num_blocks(
                    available_bytes=kv_bytes, layout=layout, rules=rules, device=device, serve=serve
                ),
                extras=stage_extras,
                held_at_start_bytes=held,
            )
        )
    return fold.expand(stages)


def inflight_tokens(*, rules: VersionRules, max_num_batched_tokens: int, pipeline_parallel_size: int) -> int:
    if rules.inflight_uses_batches:
        # async scheduling + V2 runner: max_concurrent_batches = pp + 1 (reference §3.3)
        return (pipeline_parallel_size + 1) * max_num_batched_tokens
    return max_num_batched_tokens
