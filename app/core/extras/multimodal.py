"""Multimodal: the vision tower and the encoder cache (config/multimodal.py, 0.19.0)."""

from __future__ import annotations

from app.core.extras.common import src
from app.core.result import ExtraItem
from app.core.specs import DTYPE_BYTES, GIB, ModelSpec, ServeConfig
from app.core.text import Text

# --- multimodal (vllm/config/multimodal.py, 0.19.0) ----------------------------------------------
API_SERVER_COUNT = 1  # `vllm serve` default --api-server-count


def multimodal_extras(
    *, model: ModelSpec, serve: ServeConfig, model_dtype: str, is_first: bool, max_num_batched_tokens: int
) -> tuple[int, ExtraItem | None]:
    limits = serve.limit_mm_per_prompt
    text_only = limits is not None and bool(limits) and all(v == 0 for v in limits.values())
    if not model.vision_params:
        return 0, _uncounted_item(model, text_only=text_only)

    dtype = DTYPE_BYTES[model_dtype]
    tower = model.vision_params * dtype // serve.tensor_parallel_size if is_first else 0
    if text_only:
        return -tower, ExtraItem(
            name="multimodal",
            label=Text("Vision tower (not loaded)"),
            device_bytes=0,
            flag="--limit-mm-per-prompt",
            source=src("model_executor/models/interfaces.py _mark_tower_model, multimodal/registry.py"),
            note=Text(
                "every modality limited to 0: text-only mode, the tower's {gib:.2f} GiB per device are not loaded",
                gib=tower / GIB,
            ),
        )
    # the encoder cache holds max(encoder_cache_size, largest item) embeddings of hidden size; the profile
    # run fills it with a dummy batch, so vLLM's measured peak includes it
    encoder_cache = max_num_batched_tokens * model.hidden_size * dtype
    host = int(serve.mm_processor_cache_gb * GIB) * (API_SERVER_COUNT + serve.data_parallel_size)
    uncounted = _uncounted_note(model)
    return 0, ExtraItem(
        name="multimodal",
        label=Text("Vision tower and encoder cache"),
        device_bytes=tower + encoder_cache,
        host_bytes=host,
        flag="--limit-mm-per-prompt --mm-processor-cache-gb",
        source=src("v1/core/encoder_cache_manager.py, config/multimodal.py, multimodal/registry.py"),
        note=Text(
            "tower {tower:.2f} GiB per device (in the weights); encoder cache ≈ {cache:.2f} GiB (max_num_batched_tokens embeddings, inside the profiled peak); host processor cache {proc} GiB × (API servers + DP ranks)",
            tower=tower / GIB,
            cache=encoder_cache / GIB,
            proc=f"{serve.mm_processor_cache_gb:g}",
        )
        + uncounted,
    )


def _uncounted_note(model: ModelSpec) -> str:
    """A named caveat for the towers vLLM loads that the planner cannot count (ModelSpec.uncounted_towers)."""
    if not model.uncounted_towers:
        return ""
    return Text(
        "; not counted: the {towers} tower vLLM also builds (a layout the planner does not size), so the weights "
        "and the encoder cache are short by its size",
        towers=", ".join(model.uncounted_towers),
    )


def _uncounted_item(model: ModelSpec, *, text_only: bool) -> ExtraItem | None:
    """The row for a multimodal model none of whose towers is counted: the caveat, no bytes."""
    if not model.uncounted_towers:
        return None
    if text_only:
        note = Text(
            "every modality limited to 0: text-only mode, the towers ({towers}) are not loaded",
            towers=", ".join(model.uncounted_towers),
        )
    else:
        note = Text(
            "not counted: vLLM also loads the {towers} tower, a layout the planner does not size, so the weights "
            "and the encoder cache are short by its size; --limit-mm-per-prompt with every modality 0 skips it",
            towers=", ".join(model.uncounted_towers),
        )
    return ExtraItem(
        name="multimodal",
        label=Text("Encoder towers (not counted)"),
        device_bytes=0,
        flag="--limit-mm-per-prompt",
        source=src("model_executor/models/interfaces.py _mark_tower_model"),
        note=note,
    )
