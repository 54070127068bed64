"""What the extras levers share: reading the extras ledger (app/core/extras.py) of an estimate.

The freed bytes are the ledger's own ``device_bytes`` before and after a step, never a second
computation of the draft, the LoRA slots or the tower.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.errors import PlannerError
from app.core.extras import ExtraItem
from app.core.recommend.engine import Context, TextFn, gib_text
from app.core.recommend.side import not_met
from app.core.result import Estimate
from app.core.specs import ServeConfig
from app.core.text import Text


def ledger_item(est: Estimate, name: str) -> ExtraItem | None:
    """The ledger's line ``name`` (``"speculative"``, ``"lora_slots"``, ``"multimodal"``), if any."""
    return next((item for item in est.extras if item.name == name), None)


def ledger_device_bytes(est: Estimate, name: str) -> int:
    item = ledger_item(est, name)
    return item.device_bytes if item is not None else 0


def frees_ledger_bytes(ctx: Context, name: str, candidates: list[ServeConfig]) -> bool:
    """The strongest candidate leaves less of the ledger's line ``name`` on the device than now."""
    if not candidates:
        return False
    try:
        after = ctx.engine.at(candidates[-1])
    except PlannerError:
        return False
    return ledger_device_bytes(after, name) < ledger_device_bytes(ctx.now, name)


def lever_relevant(
    name: str, candidates: Callable[[Context], list[ServeConfig]]
) -> Callable[[Context], bool]:
    """A ledger lever's ``relevant``: the target is not met and its strongest candidate frees some of
    the line ``name`` (e.g. "multimodal": text-only mode is listed only where the ledger holds a vision
    tower that it would drop)."""

    def relevant(ctx: Context) -> bool:
        return not_met(ctx) and frees_ledger_bytes(ctx, name, candidates(ctx))

    return relevant


def lever_effect(name: str) -> TextFn:
    """A ledger lever's ``effect``: :func:`freed_effect` of its line ``name``."""

    def effect(ctx: Context, chosen: ServeConfig | None) -> str:
        return freed_effect(ctx, chosen, name=name)

    return effect


def freed_effect(ctx: Context, chosen: ServeConfig | None, *, name: str) -> str:
    """The ledger's bytes of line ``name`` before and after, and what the KV pool does with them."""
    item = ledger_item(ctx.now, name)
    if item is None:
        return ""
    held = item.device_bytes
    if chosen is None:
        return Text(
            "The extras ledger holds {held} per device for “{label}”; vLLM's profile run includes it, so it comes off the KV pool.",
            held=gib_text(held),
            label=item.label,
        )
    b, a = ctx.now, ctx.engine.at(chosen)
    left = ledger_device_bytes(a, name)
    text = Text(
        "Frees {freed} per device of the extras ledger's “{label}” ({held} → {left}); vLLM's profile run includes it, so the KV pool grows: {pool} → {pool2}, {tokens:,} → {tokens2:,} KV tokens.",
        freed=gib_text(held - left),
        label=item.label,
        held=gib_text(held),
        left=gib_text(left),
        pool=gib_text(b.kv_cache_bytes),
        pool2=gib_text(a.kv_cache_bytes),
        tokens=b.kv_tokens,
        tokens2=a.kv_tokens,
    )
    if a.kv_bytes_per_token < b.kv_bytes_per_token:
        text += Text(
            " Every token's KV also sheds the draft's layers: {per_token:,} → {per_token2:,} B per token.",
            per_token=b.kv_bytes_per_token,
            per_token2=a.kv_bytes_per_token,
        )
    return text
