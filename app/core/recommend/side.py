"""Side levers listed where they help: --max-num-seqs, chunked prefill, --max-num-batched-tokens, block size, prefix caching."""

from __future__ import annotations

from collections.abc import Callable

from app.core.errors import PlannerError
from app.core.recommend.engine import Context, TextFn, gib_changes, gib_text
from app.core.result import ErrorKind
from app.core.specs import ServeConfig
from app.core.text import Text
from app.core.versions import default_chunked_prefill

# --- side levers --------------------------------------------------------------------------------------
MIN_BATCHED_TOKENS = 2048  # vLLM's smallest API-server default for --max-num-batched-tokens (§7)


# --- side levers --------------------------------------------------------------------------------------


def _chunked_prefill_on(ctx: Context) -> bool:
    if ctx.serve.enable_chunked_prefill is not None:
        return ctx.serve.enable_chunked_prefill
    return default_chunked_prefill(ctx.rules, max_model_len=ctx.now.max_model_len)


def not_met(ctx: Context) -> bool:
    return not ctx.engine.meets(ctx.serve)


def seqs_relevant(ctx: Context) -> bool:
    """Below N*, unless N* sequences are more than the pool's Mamba blocks: vLLM refuses that start
    (app.core.recommend.refusals), so the walk keeps the sequences that do start."""
    if ctx.now.max_num_seqs >= ctx.target_conc:
        return False
    try:
        raised = ctx.engine.at(seqs_candidates(ctx)[0])
    except PlannerError:
        return True  # the row's own step says why vLLM would refuse it
    return raised.error_kind != ErrorKind.MAMBA_BLOCKS


def seqs_candidates(ctx: Context) -> list[ServeConfig]:
    return [ctx.serve.model_copy(update={"max_num_seqs": ctx.target_conc})]


def seqs_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    return Text(
        "vLLM runs at most max_num_seqs sequences at once: {max_num_seqs} < N* = {target_conc}, so the target cannot be met whatever the KV pool holds.",
        max_num_seqs=ctx.now.max_num_seqs,
        target_conc=ctx.target_conc,
    )


def seqs_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    if chosen is None:
        return ""
    b, a = ctx.now, ctx.engine.at(chosen)
    return Text(
        "Larger batches: more CUDA-graph capture sizes ({cuda_graph_bytes} → {cuda_graph_bytes2}) and more sampler rows in the profile run (activation peak {activation_peak_bytes} → {activation_peak_bytes2}).",
        **gib_changes(b, a, "cuda_graph_bytes", "activation_peak_bytes"),
    )


def seqs_lower_relevant(ctx: Context) -> bool:
    return (
        not_met(ctx) and ctx.now.max_num_seqs > ctx.target_conc and _frees_memory(ctx, seqs_lower_candidates)
    )


def seqs_lower_candidates(ctx: Context) -> list[ServeConfig]:
    return [ctx.serve.model_copy(update={"max_num_seqs": ctx.target_conc})]


def seqs_lower_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    text = Text(
        "vLLM sizes the sampler's profile batch and the CUDA-graph capture sizes by max_num_seqs ({max_num_seqs}); N* = {target_conc} is all the target needs.",
        max_num_seqs=ctx.now.max_num_seqs,
        target_conc=ctx.target_conc,
    )
    if chosen is None:
        return text
    b, a = ctx.now, ctx.engine.at(chosen)
    freed = (b.activation_peak_bytes + b.cuda_graph_bytes) - (a.activation_peak_bytes + a.cuda_graph_bytes)
    return text + (
        Text(
            " Activation peak {activation_peak_bytes} → {activation_peak_bytes2}, CUDA graphs {cuda_graph_bytes} → {cuda_graph_bytes2} (frees {freed}).",
            **gib_changes(b, a, "activation_peak_bytes", "cuda_graph_bytes"),
            freed=gib_text(freed),
        )
    )


def seqs_lower_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    return Text(
        "No more than {target_conc} sequences run at once; the rest wait in the queue.",
        target_conc=ctx.target_conc,
    )


def _frees_memory(ctx: Context, candidates: Callable[[Context], list[ServeConfig]]) -> bool:
    """A side lever helps only if its strongest candidate leaves a larger KV pool."""
    options = candidates(ctx)
    if not options:
        return False
    try:
        return ctx.engine.at(options[-1]).kv_cache_bytes > ctx.now.kv_cache_bytes
    except PlannerError:
        return False


def chunked_relevant(ctx: Context) -> bool:
    return not_met(ctx) and not _chunked_prefill_on(ctx)


def chunked_candidates(ctx: Context) -> list[ServeConfig]:
    update: dict[str, object] = {"enable_chunked_prefill": True}
    if (
        ctx.serve.max_num_batched_tokens is not None
        and ctx.serve.max_num_batched_tokens >= ctx.now.max_model_len
    ):
        update["max_num_batched_tokens"] = None  # let vLLM pick its chunked default
    return [ctx.serve.model_copy(update=update)]


def activation_effect(what: str) -> TextFn:
    """The effect of a lever that lowers the profile run's batched tokens: ``what`` says why, then the
    peaks before and after, e.g. "... max_num_batched_tokens 16,384 → 8,192: activation peak 2.10 GiB →
    1.05 GiB (frees 1.05 GiB for KV)." (the figures are the engine's estimates of both configurations)."""

    def effect(ctx: Context, chosen: ServeConfig | None) -> str:
        if chosen is None:
            return what
        b, a = ctx.now, ctx.engine.at(chosen)
        return Text(
            "{what} max_num_batched_tokens {max_num_batched_tokens:,} → {max_num_batched_tokens2:,}: activation peak {activation_peak_bytes} → {activation_peak_bytes2} (frees {activation_peak_bytes3} for KV).",
            what=what,
            max_num_batched_tokens=b.max_num_batched_tokens,
            max_num_batched_tokens2=a.max_num_batched_tokens,
            **gib_changes(b, a, "activation_peak_bytes"),
            activation_peak_bytes3=gib_text(b.activation_peak_bytes - a.activation_peak_bytes),
        )

    return effect


CHUNKED_EFFECT = activation_effect(
    Text(
        "Without chunked prefill a whole max_model_len prompt is one batch, so the profile run peaks at max_num_batched_tokens ≥ max_model_len. Chunking lowers"
    )
)


CHUNKED_COST = Text(
    "Long prompts are prefilled in chunks mixed with decodes: scheduling is more complex and the attention backend (and, on V0, every other enabled feature) must support it."
)


def _mnbt_floor(ctx: Context) -> int:
    floor = max(MIN_BATCHED_TOKENS, ctx.now.max_num_seqs)  # vLLM: max_num_batched_tokens >= max_num_seqs
    if not _chunked_prefill_on(ctx):
        floor = max(floor, ctx.now.max_model_len)  # without chunking a whole prompt is one batch
    return floor


def mnbt_relevant(ctx: Context) -> bool:
    return (
        not_met(ctx)
        and ctx.now.max_num_batched_tokens > _mnbt_floor(ctx)
        and _frees_memory(ctx, mnbt_candidates)
    )


def mnbt_candidates(ctx: Context) -> list[ServeConfig]:
    out = []
    value, floor = ctx.now.max_num_batched_tokens, _mnbt_floor(ctx)
    while value > floor:
        value = max(floor, value // 2)
        out.append(ctx.serve.model_copy(update={"max_num_batched_tokens": value}))
    return out


MNBT_EFFECT = activation_effect(
    Text("The profile run pushes max_num_batched_tokens through the model; fewer tokens, a lower peak:")
)


MNBT_COST = Text(
    "Fewer prompt tokens per step: prefill throughput drops and long prompts take longer to their first token."
)


def no_candidates(_ctx: Context) -> list[ServeConfig]:
    return []


def block_check(ctx: Context) -> str:
    est = ctx.engine.at_len(ctx.serve, ctx.target_len)
    size = est.block_size
    blocks = -(-ctx.target_len // size)
    waste = blocks * size - ctx.target_len
    return Text(
        "Explanation only: each request of {target_len:,} tokens reserves {blocks:,} blocks of {size}; {waste} token slots of the last block stay unused ({waste2:.3%}).",
        target_len=ctx.target_len,
        blocks=blocks,
        size=size,
        waste=waste,
        waste2=waste / ctx.target_len,
    )


BLOCK_EFFECT = Text(
    "Block size trades internal fragmentation (about B / 2S of a sequence, plus coarser prefix-cache hits) against block-table and scheduling overhead; at long S it barely moves capacity."
)


def block_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    return Text(
        "The attention backend restricts the value ({attention_backend} here); a value it rejects makes vLLM fall back to another backend or refuse to start.",
        attention_backend=ctx.now.attention_backend,
    )


def prefix_check(ctx: Context) -> str:
    on = ctx.serve.enable_prefix_caching
    if on is None:
        on = ctx.rules.engine == "v1"
    state = "on" if on else "off"
    return Text(
        "Explanation only (prefix caching is {state}): it adds no blocks, so vLLM's maximum concurrency at S* does not change; with a shared prompt prefix, full blocks are shared and real use stays below that worst case.",
        state=state,
    )


PREFIX_EFFECT = Text("Shared prefixes are computed and stored once, in whole blocks.")


PREFIX_COST = Text(
    "Only full blocks are cached, and LoRA ids, multimodal hashes or cache_salt in the block hash split otherwise equal prefixes."
)
