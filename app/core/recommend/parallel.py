"""Lever 3, tensor then pipeline parallelism: check, candidates, effect, cost (and the all-reduce traffic TP adds)."""

from __future__ import annotations

from app.core.errors import InvalidServeConfigError
from app.core.estimate import validate_parallel
from app.core.kv import kv_heads_per_rank, stage_layer_ranges
from app.core.recommend.engine import Context, gib_changes
from app.core.specs import ServeConfig
from app.core.text import SEMICOLON, Text, TextList

# --- tensor-parallel communication ------------------------------------------------------------------
ALLREDUCES_PER_LAYER = 2  # Megatron-style TP: one after attention (o_proj), one after the MLP (down_proj)
RING_ALLREDUCE_FACTOR = 2  # a ring all-reduce sends 2 x (TP - 1)/TP of the message from every rank
ACTIVATION_BYTES = 2  # the hidden state travels in bf16/fp16
BYTES_PER_GB = 10**9  # interconnect and PCIe figures are decimal GB/s


# --- 3. tensor_parallel_size, then pipeline_parallel_size ----------------------------------------------


def _tp_refusal(ctx: Context, tensor_parallel_size: int) -> str | None:
    """Why vLLM would refuse this TP for this model (estimate.validate_parallel, the one rule), or None."""
    try:
        validate_parallel(
            model=ctx.model,
            serve=ctx.serve.model_copy(update={"tensor_parallel_size": tensor_parallel_size}),
            device=ctx.device,
            rules=ctx.rules,
        )
    except InvalidServeConfigError as exc:
        return Text("TP {tp}: {message}", tp=tensor_parallel_size, message=exc.message)
    return None


def _powers_of_two(low_exclusive: int, high: int) -> list[int]:
    out, value = [], 1
    while value <= high:
        if value > low_exclusive:
            out.append(value)
        value *= 2
    return out


def tp_check(ctx: Context) -> str | None:
    tp = ctx.serve.tensor_parallel_size
    if tp >= ctx.devices_per_node:
        return Text(
            "TP is already {tp}, every device of a {devices_per_node}-device node.",
            tp=tp,
            devices_per_node=ctx.devices_per_node,
        )
    if not tp_candidates(ctx):
        return Text(
            "No larger TP is valid for this model: {reasons}.", reasons=TextList(SEMICOLON, ctx.notes)
        )
    return None


def tp_candidates(ctx: Context) -> list[ServeConfig]:
    out = []
    ctx.notes.clear()
    for tp in _powers_of_two(ctx.serve.tensor_parallel_size, ctx.devices_per_node):
        problem = _tp_refusal(ctx, tp)
        if problem:
            ctx.notes.append(problem)
            continue
        out.append(ctx.serve.model_copy(update={"tensor_parallel_size": tp}))
    return out


def allreduce_bytes_per_token(*, tensor_parallel_size: int, hidden_size: int, num_layers: int) -> int:
    """Bytes each rank sends per token: 2 all-reduces per layer x 2(TP-1)/TP x hidden x 2 B x layers."""
    tp = tensor_parallel_size
    return (
        ALLREDUCES_PER_LAYER
        * RING_ALLREDUCE_FACTOR
        * (tp - 1)
        * hidden_size
        * ACTIVATION_BYTES
        * num_layers
        // tp
    )


def tp_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    model = ctx.model
    if chosen is None:
        return Text(
            "TP splits the KV heads (and the weights) over the devices: per-device KV use falls to about 1/TP."
        )
    eng = ctx.engine
    before, after = eng.snapshot(ctx.serve), eng.snapshot(chosen)
    tp0, tp1 = ctx.serve.tensor_parallel_size, chosen.tensor_parallel_size
    weights = Text(
        "weights per device {weights_bytes} → {weights_bytes2}",
        **gib_changes(before, after, "weights_bytes"),
    )
    if model.mla is not None:
        return Text(
            "MLA caches one latent of {latent_size} values per token per layer, replicated on every TP rank: per-device KV bytes per token are {kv_bytes_per_token:,} B at TP {tp0} and {kv_bytes_per_token2:,} B at TP {tp1}. TP helps only by spreading the weights: {weights}, KV pool {kv_cache_bytes} → {kv_cache_bytes2}.",
            latent_size=model.mla.latent_size,
            kv_bytes_per_token=before.kv_bytes_per_token,
            tp0=tp0,
            kv_bytes_per_token2=after.kv_bytes_per_token,
            tp1=tp1,
            weights=weights,
            **gib_changes(before, after, "kv_cache_bytes"),
        )
    h0 = kv_heads_per_rank(total_kv_heads=model.num_kv_heads, tensor_parallel_size=tp0)
    h1 = kv_heads_per_rank(total_kv_heads=model.num_kv_heads, tensor_parallel_size=tp1)
    text = Text(
        "KV heads per device {h0} → {h1} (max(1, {num_kv_heads} // TP)): per-device KV bytes per token {kv_bytes_per_token:,} → {kv_bytes_per_token2:,} B; {weights}; KV cache {kv_tokens:,} → {kv_tokens2:,} tokens.",
        h0=h0,
        h1=h1,
        num_kv_heads=model.num_kv_heads,
        kv_bytes_per_token=before.kv_bytes_per_token,
        kv_bytes_per_token2=after.kv_bytes_per_token,
        weights=weights,
        kv_tokens=before.kv_tokens,
        kv_tokens2=after.kv_tokens,
    )
    if tp1 > model.num_kv_heads:
        text += Text(
            " Above {num_kv_heads} ranks the KV heads are replicated, so KV per device stops shrinking.",
            num_kv_heads=model.num_kv_heads,
        )
    return text


def tp_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    if chosen is None:
        return Text("More devices per replica and an all-reduce per layer.")
    tp = chosen.tensor_parallel_size
    model, device = ctx.model, ctx.device
    sent = allreduce_bytes_per_token(
        tensor_parallel_size=tp, hidden_size=model.hidden_size, num_layers=model.num_layers
    )
    text = Text(
        "All-reduce traffic ≈ {allreduces_per_layer} × 2 × ({tp}−1)/{tp} × hidden {hidden_size:,} × {activation_bytes} B × {num_layers} layers = {sent:.2f} MiB per token per device",
        allreduces_per_layer=ALLREDUCES_PER_LAYER,
        tp=tp,
        hidden_size=model.hidden_size,
        activation_bytes=ACTIVATION_BYTES,
        num_layers=model.num_layers,
        sent=sent / 2**20,
    )
    if device.interconnect_gbps:
        one_way = (
            device.interconnect_gbps / 2
        )  # the figure is bidirectional; a ring sends and receives at once
        micros = sent / (one_way * BYTES_PER_GB) * 1e6
        text += Text(
            "; at the interconnect's {interconnect_gbps:g} GB/s ({one_way:g} GB/s each way) ≈ {micros:.1f} µs per token of transfer, plus {allreduces_per_layer} collective launches per step that dominate at small batch",
            interconnect_gbps=device.interconnect_gbps,
            one_way=one_way,
            micros=micros,
            allreduces_per_layer=ALLREDUCES_PER_LAYER * model.num_layers,
        )
    else:
        text += Text("; the device's interconnect bandwidth is not known")
    return text + Text(
        ". A replica now takes {tp} devices instead of {tensor_parallel_size}.",
        tp=tp,
        tensor_parallel_size=ctx.serve.tensor_parallel_size,
    )


def pp_check(ctx: Context) -> str | None:
    if ctx.nodes <= 1:
        return Text("One node: pipeline parallelism across nodes needs nodes > 1.")
    if not pp_candidates(ctx):
        return Text(
            "No pipeline size fits TP {tensor_parallel_size} × PP ≤ {devices_per_node} × {nodes} devices.",
            tensor_parallel_size=ctx.serve.tensor_parallel_size,
            devices_per_node=ctx.devices_per_node,
            nodes=ctx.nodes,
        )
    return None


def pp_candidates(ctx: Context) -> list[ServeConfig]:
    """PP sizes above the current one: powers of two, then the largest that fits (one stage per node,
    at most one layer per stage) — ~log2(nodes) sizes, not one per node (1,024 nodes x a 10,000-layer
    config was 72 s of CPU, issue 27)."""
    tp, pp0 = ctx.serve.tensor_parallel_size, ctx.serve.pipeline_parallel_size
    limit = ctx.devices_per_node * ctx.nodes
    largest = min(ctx.nodes, ctx.model.num_layers, limit // tp)
    sizes = [pp for pp in _powers_of_two(pp0, largest)]
    if largest > pp0 and largest not in sizes:
        sizes.append(largest)
    return [ctx.serve.model_copy(update={"pipeline_parallel_size": pp}) for pp in sizes]


def pp_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    if chosen is None:
        return Text(
            "PP gives each node a slice of the layers: weights and KV per device shrink by the stage count."
        )
    pp = chosen.pipeline_parallel_size
    sizes = [
        hi - lo for lo, hi in stage_layer_ranges(num_layers=ctx.model.num_layers, pipeline_parallel_size=pp)
    ]
    before, after = ctx.engine.snapshot(ctx.serve), ctx.engine.snapshot(chosen)
    return Text(
        "{pp} stages of {sizes} layers (the last stage also holds lm_head and sets the block count): per-device KV bytes per token {kv_bytes_per_token:,} → {kv_bytes_per_token2:,} B, weights per device {weights_bytes} → {weights_bytes2}.",
        pp=pp,
        sizes=sizes,
        kv_bytes_per_token=before.kv_bytes_per_token,
        kv_bytes_per_token2=after.kv_bytes_per_token,
        **gib_changes(before, after, "weights_bytes"),
    )


def pp_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    if chosen is None:
        return Text(
            "Pipeline bubbles and a hop over the inter-node network per stage boundary, on every step."
        )
    pp, tp = chosen.pipeline_parallel_size, chosen.tensor_parallel_size
    return Text(
        "Pipeline bubbles: with fewer batches in flight than {pp} stages some stages idle; every step crosses {pp2} stage boundary(ies) on the inter-node network, adding latency per token. Needs a multi-node launch (Ray) over {tp} devices.",
        pp=pp,
        pp2=pp - 1,
        tp=tp * pp,
    )
