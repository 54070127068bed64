"""Side lever: no speculative draft (--speculative-config): check, candidates, effect, cost.

Dropping the draft frees the extras ledger's "speculative" line (its weights per device and its KV
layers in every block); the outputs do not change, only the speed-up goes.
"""

from __future__ import annotations

from app.core.recommend.engine import Context
from app.core.recommend.ledger import lever_effect, lever_relevant
from app.core.specs import ServeConfig
from app.core.text import Text

SPECULATIVE_ITEM = "speculative"  # the ledger's line (app/core/extras.py)


def spec_candidates(ctx: Context) -> list[ServeConfig]:
    if ctx.serve.speculative_config is None:
        return []
    return [ctx.serve.model_copy(update={"speculative_config": None})]


spec_relevant = lever_relevant(SPECULATIVE_ITEM, spec_candidates)


spec_effect = lever_effect(SPECULATIVE_ITEM)


def spec_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    spec = ctx.serve.speculative_config
    if spec is None:
        return ""
    return Text(
        "No speculative speed-up: the target model decodes every token itself instead of checking up to {tokens} proposed by the {method} draft per step, so decoding at low batch sizes is slower; the outputs are the same. Prompt-lookup speculation (method ngram) takes no device memory and keeps part of the speed-up on repetitive text.",
        tokens=spec.num_speculative_tokens,
        method=spec.resolved_method,
    )
