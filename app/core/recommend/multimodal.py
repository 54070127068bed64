"""Side lever: text-only mode (--limit-mm-per-prompt with every modality 0): check, candidates, effect, cost.

With every modality of a tower limited to 0, vLLM 0.19.0 does not load the tower
(model_executor/models/interfaces.py `_mark_tower_model`) and skips the encoder's profiling
(multimodal/registry.py "running in text-only mode"): the extras ledger's "multimodal" line goes.
"""

from __future__ import annotations

from app.core.recommend.engine import Context
from app.core.recommend.ledger import lever_effect, lever_relevant
from app.core.specs import ServeConfig
from app.core.text import Text

MULTIMODAL_ITEM = "multimodal"  # the ledger's line (app/core/extras.py)
# the vision towers' modalities: Qwen2-VL/Qwen2.5-VL mark {"image", "video"}, Gemma-3/LLaVA "image";
# vLLM ignores a limit for a modality the model lacks (multimodal/processing/context.py reads only the
# supported ones), so both zeros suit every vision-language model
VISION_MODALITIES = ("image", "video")


def mm_candidates(ctx: Context) -> list[ServeConfig]:
    limits = dict.fromkeys(ctx.serve.limit_mm_per_prompt or {}, 0)
    limits.update(dict.fromkeys(VISION_MODALITIES, 0))
    if ctx.serve.limit_mm_per_prompt == limits:
        return []
    return [ctx.serve.model_copy(update={"limit_mm_per_prompt": limits})]


mm_relevant = lever_relevant(MULTIMODAL_ITEM, mm_candidates)


mm_effect = lever_effect(MULTIMODAL_ITEM)


MM_COST = Text(
    "No image or video input: vLLM runs the model text-only and refuses requests that carry images or videos."
)
