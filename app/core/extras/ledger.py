"""The ledger of one pipeline stage: every extra that applies, and the draft's KV layers in the target's layout."""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.core import kv as K
from app.core.extras.host import host_items
from app.core.extras.lora import lora_item
from app.core.extras.multimodal import multimodal_extras
from app.core.extras.parallel import parallel_extras
from app.core.extras.speculative import TargetCache, speculative_draft
from app.core.result import ExtraItem
from app.core.specs import ModelSpec, ServeConfig
from app.core.versions import VersionRules


@dataclass(frozen=True)
class StageExtras:
    """What the extras change on one pipeline stage, as the estimator applies it."""

    weights_delta_bytes: int  # added to the stage's weights (negative when a tower is not loaded)
    draft_kv_layers: int  # draft attention layers on this rank (they join the KV pages)
    draft_page_bytes: int  # one block of one draft layer, at the target's block size
    items: tuple[ExtraItem, ...]
    host_memory_bytes: int


NO_EXTRAS = StageExtras(
    weights_delta_bytes=0, draft_kv_layers=0, draft_page_bytes=0, items=(), host_memory_bytes=0
)


def stage_extras(
    *,
    model: ModelSpec,
    serve: ServeConfig,
    rules: VersionRules,
    layout: K.KVLayout,
    layer_range: tuple[int, int],
    is_first: bool,
    is_last: bool,
    model_dtype: str,
    max_num_batched_tokens: int,
) -> StageExtras:
    """The ledger of one pipeline stage (per device), given its plain KV layout."""
    if not _has_extras(serve=serve, model=model, rules=rules):
        return NO_EXTRAS
    items: list[ExtraItem] = []
    weights = 0
    kv_layers = 0
    page = 0
    cache = TargetCache(
        block_size=layout.block_size, kv_cache_dtype=serve.kv_cache_dtype, model_dtype=model_dtype
    )
    draft = speculative_draft(model=model, serve=serve, cache=cache, is_last=is_last)
    if draft is not None:
        weights += draft.weights_bytes
        kv_layers, page = draft.kv_layers, draft.page_bytes
        items.append(draft.item)
    if serve.enable_lora:
        lora = lora_item(
            model=model,
            serve=serve,
            model_dtype=model_dtype,
            num_layers=layer_range[1] - layer_range[0],
            is_first=is_first,
        )
        weights += lora.device_bytes
        items.append(lora)
    delta, parallel = parallel_extras(
        model=model, serve=serve, layer_range=layer_range, is_first=is_first, is_last=is_last
    )
    weights += delta
    if parallel is not None:
        items.append(parallel)
    mm_delta, mm = multimodal_extras(
        model=model,
        serve=serve,
        model_dtype=model_dtype,
        is_first=is_first,
        max_num_batched_tokens=max_num_batched_tokens,
    )
    weights += mm_delta
    if mm is not None:
        items.append(mm)
    world = serve.ranks * serve.data_parallel_size
    items.extend(host_items(serve=serve, rules=rules, layout=layout, world_size=world))
    return StageExtras(
        weights_delta_bytes=weights,
        draft_kv_layers=kv_layers,
        draft_page_bytes=page,
        items=tuple(items),
        host_memory_bytes=sum(i.host_bytes for i in items),
    )


def _has_extras(*, serve: ServeConfig, model: ModelSpec, rules: VersionRules) -> bool:
    return bool(
        serve.speculative_config is not None
        or serve.enable_lora
        or serve.data_parallel_size > 1
        or serve.enable_expert_parallel
        or model.vision_params
        or model.uncounted_towers  # the named caveat for towers the planner cannot count (extras/multimodal.py)
        or serve.kv_offloading_size_gib
        or serve.cpu_offload_gb
        or rules.swap_space_used
    )


def with_draft_kv(layout: K.KVLayout, extras: StageExtras) -> K.KVLayout:
    """The draft's attention layers in the target's KV layout. vLLM 0.19.0 puts full-attention layers of
    different page sizes into ONE group (`UniformTypeKVCacheSpecs`, v1/core/kv_cache_utils.py): a block
    holds every layer's page, so bytes per block and per token grow by the draft's, and one request still
    needs cdiv(L, B) blocks. The merged group reports the average page per layer."""
    if not extras.draft_kv_layers or not layout.groups:
        return layout
    added_block = extras.draft_kv_layers * extras.draft_page_bytes
    added_token = added_block // layout.block_size if layout.block_size else 0
    bytes_per_block = layout.bytes_per_block + added_block
    if len(layout.groups) == 1:
        g = layout.groups[0]
        layers = g.num_layers + extras.draft_kv_layers
        groups: tuple[K.Group, ...] = (
            replace(g, num_layers=layers, page_size_bytes=bytes_per_block // layers),
        )
    else:
        groups = layout.groups  # hybrid target: the draft's pages ride in every block
    return replace(
        layout,
        groups=groups,
        bytes_per_block=bytes_per_block,
        kv_bytes_per_token=layout.kv_bytes_per_token + added_token,
        num_kv_layers=layout.num_kv_layers + extras.draft_kv_layers,
    )
