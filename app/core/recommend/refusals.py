"""The refusals the KV walk does not address, each fixed first in vLLM's own terms (issue 24 item 5).

Three checks stop vLLM before the KV pool matters, so no KV lever helps and one makes it worse:

- the free-memory check (0.10.2+, ``v1/worker/utils.py::request_memory``): vLLM asks for
  ``ceil(total x u)`` and refuses when the free memory at its snapshot is below that. Memory other
  processes hold lowers the free memory, so the fix is a utilization of at most free / total (or a
  freed device); raising the utilization, the budget's usual lever, only widens the gap;
- the Mamba-block check (0.20.2+, ``CompilationConfig.resolve_cudagraph_mode_and_sizes``): with full
  CUDA graphs each decode sequence needs a Mamba cache block, so ``max_num_seqs`` above the pool's
  blocks is refused; the fix is ``--max-num-seqs`` at most the blocks (or ``--enforce-eager``);
- the engine config's length check: ``--max-model-len`` above the model's derived maximum is refused
  unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1``; the fix is the model's maximum.

Each row is relevant only while the configuration reached so far fails that check (the estimate's
``error_kind``), and it runs before every other row.
"""

from __future__ import annotations

import math

from app.core import situations
from app.core.budget import CUDA_CONTEXT_BYTES, requested_bytes
from app.core.errors import PlannerError
from app.core.recommend.engine import Context, gib_text
from app.core.result import ErrorKind
from app.core.specs import ServeConfig
from app.core.text import Text

UTILIZATION_STEP = 0.01  # the free share is rounded down to whole hundredths, as a user types it
MAMBA_FIXED_POINT_ROUNDS = 8  # fewer sequences free graph and sampler memory, so the blocks can only grow


# --- the free share --------------------------------------------------------------------------------------


def free_utilization(ctx: Context, serve: ServeConfig | None = None) -> float | None:
    """The highest --gpu-memory-utilization, in hundredths, that vLLM's free-memory check accepts on this
    device (None when this release does not make the check). vLLM asks for ceil(T x u) (0.14+; the plain
    product before) and refuses when the free memory is below it; the free memory is the device less
    the CUDA context and what other processes hold (app.core.estimate's check, the same arithmetic)."""
    serve = serve or ctx.serve
    rules, device = ctx.rules, ctx.device
    if not situations.free_check_runs(rules=rules, device=device, serve=serve):
        return None
    total = device.memory_total_bytes
    free = situations.free_at_start_bytes(device=device, serve=serve)
    use_ceil = situations.requested_uses_ceil(rules=rules, device=device)
    hundredths = math.floor(free / total / UTILIZATION_STEP + 1e-9)
    while hundredths > 0:
        share = round(hundredths * UTILIZATION_STEP, 2)
        if requested_bytes(total_bytes=total, utilization=share, use_ceil=use_ceil) <= free:
            return share
        hundredths -= 1
    return 0.0


def _refused(ctx: Context, kind: ErrorKind) -> bool:
    return ctx.now.error_kind == kind


# --- 1. memory held by other processes ---------------------------------------------------------------


def free_relevant(ctx: Context) -> bool:
    return _refused(ctx, ErrorKind.STARTUP_FREE_MEMORY)


def free_candidates(ctx: Context) -> list[ServeConfig]:
    share = free_utilization(ctx)
    if not share:
        return []  # nothing is free: only freeing the device helps (the row's reason says so)
    return [ctx.serve.model_copy(update={"gpu_memory_utilization": share})]


def free_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    est = ctx.now
    total = ctx.device.memory_total_bytes
    free = situations.free_at_start_bytes(device=ctx.device, serve=ctx.serve)
    text = Text(
        "vLLM asks for T × u = {requested} at --gpu-memory-utilization {util:g}, but other processes hold {used} and the CUDA context {context}, so only {free} of {total} is free when it starts: it refuses before loading the weights. At most free / total = {share:.2f} passes the check.",
        requested=gib_text(est.budget_bytes),
        util=est.gpu_memory_utilization,
        used=gib_text(situations.used_by_others_bytes(ctx.serve)),
        context=gib_text(CUDA_CONTEXT_BYTES),
        free=gib_text(free),
        total=gib_text(total),
        share=max(0.0, free / total),
    )
    if chosen is None:
        return text
    after = ctx.engine.at(chosen)
    return text + Text(
        " Budget {before} → {after}: vLLM starts, with a KV pool of {kv}.",
        before=gib_text(est.budget_bytes),
        after=gib_text(after.budget_bytes),
        kv=gib_text(after.kv_cache_bytes),
    )


FREE_COST = Text(
    "A smaller budget leaves a smaller KV pool; the steps below can only add to it up to the free share, never above. Or free the device from the other processes (then the budget can stay as it was)."
)


# --- 2. more sequences than Mamba cache blocks -------------------------------------------------------


def mamba_relevant(ctx: Context) -> bool:
    return _refused(ctx, ErrorKind.MAMBA_BLOCKS)


def mamba_candidates(ctx: Context) -> list[ServeConfig]:
    """--max-num-seqs at the pool's Mamba blocks. Fewer sequences capture smaller graphs and profile a
    smaller sampler batch, so the pool (and its blocks) grows; repeat until vLLM accepts it."""
    serve = ctx.serve
    for _round in range(MAMBA_FIXED_POINT_ROUNDS):
        try:
            est = ctx.engine.at(serve)
        except PlannerError:
            return []
        if est.error_kind != ErrorKind.MAMBA_BLOCKS:
            return [serve] if serve != ctx.serve else []
        serve = serve.model_copy(update={"max_num_seqs": min(est.num_gpu_blocks, est.max_num_seqs - 1)})
    return []


def mamba_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    est = ctx.now
    text = Text(
        "With full CUDA graphs vLLM needs a Mamba cache block per decode sequence: --max-num-seqs {seqs} exceeds the pool's {blocks} blocks, so it refuses to start.",
        seqs=est.max_num_seqs,
        blocks=est.num_gpu_blocks,
    )
    if chosen is None:
        return text
    return text + Text(
        " At --max-num-seqs {seqs} vLLM starts ({blocks} blocks).",
        seqs=chosen.max_num_seqs,
        blocks=ctx.engine.at(chosen).num_gpu_blocks,
    )


MAMBA_COST = Text(
    "At most that many sequences run at once; the rest queue. Or --enforce-eager: vLLM skips the check without full CUDA graphs, at the cost of slower decode (every step launches its kernels one by one)."
)


# --- 3. max_model_len above the model's maximum ----------------------------------------------------------


def long_relevant(ctx: Context) -> bool:
    return _refused(ctx, ErrorKind.MAX_LEN_ABOVE_DERIVED)


def long_candidates(ctx: Context) -> list[ServeConfig]:
    return [ctx.serve.model_copy(update={"max_model_len": ctx.model.max_model_len_derived})]


def long_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    return Text(
        "vLLM refuses --max-model-len {length:,} above {name}'s derived maximum {maximum:,} (the config's max_position_embeddings and rope scaling) before it loads anything; at {maximum:,} it starts.",
        length=ctx.now.max_model_len,
        name=ctx.model.name,
        maximum=ctx.model.max_model_len_derived,
    )


def long_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    return Text(
        "Requests longer than {maximum:,} tokens are refused. Or set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 if the model really handles longer inputs (outputs past the trained context may be wrong).",
        maximum=ctx.model.max_model_len_derived,
    )
