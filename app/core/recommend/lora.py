"""Side lever: fewer or smaller LoRA slots (--max-loras, --max-lora-rank): check, candidates, effect, cost.

vLLM preallocates max_loras x max_lora_rank slots when the model loads (the extras ledger's
"lora_slots" line), inside the profile run, so they come straight off the KV pool. The candidates
halve the slots down to one, then lower the rank through the values vLLM accepts.
"""

from __future__ import annotations

from app.core.recommend.engine import Context
from app.core.recommend.ledger import lever_effect, lever_relevant
from app.core.specs import ServeConfig
from app.core.text import N_, Plural, Text

LORA_ITEM = "lora_slots"  # the ledger's line (app/core/extras.py)
# --max-lora-rank accepts only these (vllm/config/lora.py MaxLoRARanks, 0.19.0)
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
# the smallest rank offered: below 8 only rank 1 is left, which adapters are hardly ever trained at
LORA_RANK_FLOOR = 8


def lora_candidates(ctx: Context) -> list[ServeConfig]:
    """Increasing strength: max_loras halved down to 1, then the rank lowered one allowed value at a time."""
    serve = ctx.serve
    if not serve.enable_lora:
        return []
    out: list[ServeConfig] = []
    slots = serve.max_loras
    while slots > 1:
        slots //= 2
        out.append(serve.model_copy(update={"max_loras": slots}))
    lower = [r for r in LORA_RANKS if LORA_RANK_FLOOR <= r < serve.max_lora_rank]
    for rank in reversed(lower):
        out.append(serve.model_copy(update={"max_loras": 1, "max_lora_rank": rank}))
    return out


lora_relevant = lever_relevant(LORA_ITEM, lora_candidates)


lora_effect = lever_effect(LORA_ITEM)


def lora_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    serve = ctx.serve
    if chosen is None:
        return Text(
            "Fewer adapters in one batch, or a lower largest rank: adapters of a higher rank can no longer be loaded."
        )
    text = Plural(
        chosen.max_loras,
        N_(
            "At most {max_loras} adapter in one batch (was {max_loras_before}): requests for other adapters wait until a slot is free and their adapter is loaded from host memory."
        ),
        N_(
            "At most {max_loras} adapters in one batch (was {max_loras_before}): requests for other adapters wait until a slot is free and their adapter is loaded from host memory."
        ),
        max_loras=chosen.max_loras,
        max_loras_before=serve.max_loras,
    )
    if chosen.max_lora_rank < serve.max_lora_rank:
        text += Text(
            " Adapters of rank above {rank} (up to {rank_before} before) can no longer be loaded.",
            rank=chosen.max_lora_rank,
            rank_before=serve.max_lora_rank,
        )
    return text
