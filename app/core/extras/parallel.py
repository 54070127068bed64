"""Data and expert parallelism: the expert split of the weights and the all-to-all buffers (config/parallel.py, 0.19.0)."""

from __future__ import annotations

import math

from app.core import budget as B
from app.core.errors import InvalidServeConfigError
from app.core.extras.common import embed_params, src
from app.core.result import ExtraItem
from app.core.specs import ModelSpec, ServeConfig
from app.core.text import Text

# --- expert parallel (vllm/config/parallel.py, 0.19.0) --------------------------------------------
DEFAULT_ALL2ALL_BACKEND = "allgather_reducescatter"  # NCCL collectives: no buffers of its own
DEEPEP_BUFFER_BYTES = 1024 * 2**20  # VLLM_DEEPEP_BUFFER_SIZE_MB default (vllm/envs.py), deepep backends only


def expert_parallel_weights_delta(
    *, model: ModelSpec, serve: ServeConfig, layer_range: tuple[int, int], is_first: bool, is_last: bool
) -> tuple[int, int]:
    """(weights delta per device, routed-expert bytes per device) under --enable-expert-parallel.

    EP size = TP x DP (vllm/distributed/parallel_state.py): each rank keeps ceil(E / EP) experts whole
    (vllm/model_executor/layers/fused_moe/layer.py determine_expert_map) instead of 1/(TP x DP) of every
    expert, which is what the weights already hold without EP (budget.py: fused_moe/config.py flattens the
    experts' TP over DP x TP); attention, dense layers, shared experts and embeddings stay split by TP only
    (replicated over DP)."""
    tp, dp = serve.tensor_parallel_size, serve.data_parallel_size
    experts = B.routed_expert_params(model)
    if not experts:
        return 0, 0
    unsplit = serve.model_copy(
        update={"tensor_parallel_size": 1, "data_parallel_size": 1, "cpu_offload_gb": 0.0}
    )
    body_one = B.weights_bytes_for_stage(
        model=model,
        serve=unsplit,
        layer_range=layer_range,
        is_first=False,
        is_last=False,
    )
    body_params = model.params_total - embed_params(model) * model.embedding_tensors
    expert_bytes_stage = body_one * experts // max(1, body_params)  # all experts of this stage, unsplit
    ep = tp * dp
    local = math.ceil(model.num_experts / ep)
    with_ep = expert_bytes_stage * local // model.num_experts
    without = expert_bytes_stage // (tp * dp)
    return with_ep - without, with_ep


def parallel_extras(
    *, model: ModelSpec, serve: ServeConfig, layer_range: tuple[int, int], is_first: bool, is_last: bool
) -> tuple[int, ExtraItem | None]:
    dp = serve.data_parallel_size
    if not serve.enable_expert_parallel:
        if dp == 1:
            return 0, None
        return 0, ExtraItem(
            name="data_parallel",
            label=Text("Data parallel × {dp}", dp=dp),
            device_bytes=0,
            flag="--data-parallel-size",
            source=src("v1/engine/core.py (one engine per DP rank)"),
            note=Text(
                "every DP rank has its own KV pool; attention and dense layers are split by TP only, the routed experts over DP × TP"
            ),
        )
    if not model.num_experts:
        raise InvalidServeConfigError(
            "enable_expert_parallel", Text("{name} has no experts to split", name=model.name)
        )
    delta, held = expert_parallel_weights_delta(
        model=model, serve=serve, layer_range=layer_range, is_first=is_first, is_last=is_last
    )
    ep = serve.tensor_parallel_size * dp
    return delta, ExtraItem(
        name="expert_parallel",
        label=Text("Expert parallel (EP {ep} = TP × DP)", ep=ep),
        device_bytes=held,
        flag="--enable-expert-parallel --data-parallel-size",
        source=src("model_executor/layers/fused_moe/layer.py, config/parallel.py"),
        note=Text(
            "{local} of {experts} routed experts whole on each device; attention, dense and shared layers split by TP only. All-to-all: the default {backend} backend allocates no buffers (DeepEP backends: {deepep} MiB)",
            local=math.ceil(model.num_experts / ep),
            experts=model.num_experts,
            backend=DEFAULT_ALL2ALL_BACKEND,
            deepep=DEEPEP_BUFFER_BYTES // 2**20,
        ),
    )
