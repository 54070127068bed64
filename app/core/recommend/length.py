"""Lever 1, the sequence length S (--max-model-len): check, candidates, effect, cost."""

from __future__ import annotations

import math

from app.core.recommend.engine import Context
from app.core.specs import ServeConfig
from app.core.text import Text

# --- 1. max_model_len ---------------------------------------------------------------------------------


def len_check(ctx: Context) -> str | None:
    if ctx.now.max_model_len == ctx.target_len:
        return Text("max_model_len is already the target {target_len:,}.", target_len=ctx.target_len)
    maximum = ctx.model.max_model_len_derived
    if ctx.target_len > maximum and not ctx.serve.allow_long_max_model_len:
        return Text(
            "S* {target_len:,} is above {name}'s derived maximum {maximum:,}: vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.",
            target_len=ctx.target_len,
            name=ctx.model.name,
            maximum=maximum,
        )
    return None


def len_candidates(ctx: Context) -> list[ServeConfig]:
    return [ctx.serve.model_copy(update={"max_model_len": ctx.target_len})]


def len_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    snap = ctx.engine.snapshot(chosen or ctx.serve)
    n = math.floor(snap.concurrency_at_target_len)
    return Text(
        "With this budget, at N* = {target_conc} sequences the longest max_model_len that fits is {largest_len_at_target_concurrency:,} tokens; at S* = {target_len:,} tokens {n} sequences fit (vLLM would print {concurrency_at_target_len:.2f}x). KV use is linear in S, so S is the first lever.",
        target_conc=ctx.target_conc,
        largest_len_at_target_concurrency=snap.largest_len_at_target_concurrency,
        target_len=ctx.target_len,
        n=n,
        concurrency_at_target_len=snap.concurrency_at_target_len,
    )


def len_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    current = ctx.now.max_model_len
    text = Text(
        "Requests longer than {target_len:,} tokens (prompt plus output) are refused.",
        target_len=ctx.target_len,
    )
    if current > ctx.target_len:
        text += Text(
            " The context window shrinks from {current:,} to {target_len:,} tokens.",
            current=current,
            target_len=ctx.target_len,
        )
    elif current < ctx.target_len:
        text += Text(
            " Raising it from {current:,} reserves more KV per sequence, which is what the target asks.",
            current=current,
        )
    if ctx.target_len > ctx.model.max_model_len_derived:
        text += Text(
            " S* is above the model's derived maximum {max_model_len_derived:,}: vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and quality past the trained context is not guaranteed.",
            max_model_len_derived=ctx.model.max_model_len_derived,
        )
    return text
