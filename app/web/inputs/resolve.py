"""From validated parameters to the core's inputs (ModelSpec, DeviceSpec, ServeConfig), and the one
estimate call every web feature makes.

The model comes from, in order: a pasted config.json, a complete model card, the catalog.
Both the config and the card go through the core's HF-config reader, so vLLM's rules for
head sizes, sliding windows and MLA live in one place.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal, ParamSpec, TypeVar

from starlette.concurrency import run_in_threadpool

from app import hub
from app.core.catalog import find_device
from app.core.errors import ConfigError, PlannerError, UnknownDeviceError, UnknownModelError
from app.core.estimate import capacity_curve, default_max_model_len, estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.plan import apply_quantization_flag
from app.core.result import Estimate
from app.core.serve_flags import check_release_has_flags
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Text
from app.core.versions import rules_for
from app.hub import find_model_or_fetch
from app.web.i18n import page_lang
from app.web.inputs.params import CARD_REQUIRED, DEFAULTS, PlannerParams, serve_config
from app.web.inputs.problems import Problem, UnusableInputs, shown_value, stopping, unknown_model_message

ModelSource = Literal["catalog", "config", "card", "hub"]
# The command's model when the user named none: a visible placeholder they must fill in (issue 24 item 2:
# `vllm serve pasted-config` / `vllm serve model-card` looked runnable and were not)
MODEL_PLACEHOLDER = "<model path or id>"
PASTED_MODEL_NAME = MODEL_PLACEHOLDER
CARD_MODEL_NAME = MODEL_PLACEHOLDER
NAME_OR_PATH_KEY = "_name_or_path"  # transformers writes the repo id or local path into a saved config.json
MAX_NAME_CHARS = 300  # PlannerParams.model's own limit
# Fallbacks for card fields a user may leave blank; each only moves the activation model a little.
CARD_DEFAULT_VOCAB = 32_000  # Llama-2 vocabulary, the smallest common one
CARD_DEFAULT_MAX_LEN = 131_072  # 128K, what most current cards declare
CARD_INCOMPLETE = Text("the model card needs layers, KV heads, head size and parameters")
# Hybrid models on the card: one full-attention layer after every N-1 sliding ones (Gemma-3 uses 6).
CARD_HYBRID_PERIOD = 6
# Pasted configs whose spec is kept (_pasted_spec): a few users' pastes at once; each text is at most
# CONFIG_JSON_MAX_CHARS (64 KiB), so the cache holds at most ~2 MB of keys
PASTED_SPECS_KEPT = 32


CARD_FIELDS = tuple(name for name in PlannerParams.model_fields if name.startswith("card_"))
CARD_FIELD_OF_HF_KEY = {
    "num_hidden_layers": "card_layers",
    "num_key_value_heads": "card_kv_heads",
    "head_dim": "card_head_size",
    "num_attention_heads": "card_heads",
    "hidden_size": "card_hidden_size",
    "vocab_size": "card_vocab_size",
    "sliding_window": "card_window",
    "layer_types": "card_attention",
    "kv_lora_rank": "card_kv_lora_rank",
    "qk_rope_head_dim": "card_rope_dim",
    "torch_dtype": "card_dtype",
    "max_position_embeddings": "card_max_len",
}


def _missing_card_field(params: PlannerParams) -> str | None:
    """The first required card field left blank when the card was started and nothing else given."""
    if params.config_json or not params.card_started or params.has_card:
        return None
    return next(name for name in CARD_REQUIRED if getattr(params, name) is None)


@dataclass(frozen=True)
class Resolved:
    params: PlannerParams
    model: ModelSpec
    model_label: str
    model_source: ModelSource
    device: DeviceSpec
    serve: ServeConfig
    vllm_version: str
    # inputs the page could not use (resolve_lenient): the estimate refuses to run, nothing is computed
    # for the defaults that stand in for them (they only give the form its scaffolding)
    unusable: tuple[Problem, ...] = ()

    @property
    def derived_len(self) -> int:
        """The model's maximum length under this release's yarn rule (ModelSpec.max_model_len_for, the
        one rule the estimate's model_for_release applies too; no copy of the model is made)."""
        return self.model.max_model_len_for(
            yarn_scales_max_len=rules_for(self.vllm_version).yarn_scales_max_len
        )

    @property
    def default_len(self) -> int:
        """The length this release serves when --max-model-len is not given (LongRoPE: the original)."""
        return default_max_model_len(model=self.model, rules=rules_for(self.vllm_version))


def card_config(params: PlannerParams) -> dict[str, Any]:
    """An HF-style config.json built from the model card fields."""
    assert params.card_layers and params.card_kv_heads and params.card_head_size  # has_card checked
    heads = params.card_heads or params.card_kv_heads
    config: dict[str, Any] = {
        "architectures": ["CardForCausalLM"],
        "model_type": "card",
        "num_hidden_layers": params.card_layers,
        "num_attention_heads": heads,
        "num_key_value_heads": params.card_kv_heads,
        "head_dim": params.card_head_size,
        "hidden_size": params.card_hidden_size or heads * params.card_head_size,
        "vocab_size": params.card_vocab_size or CARD_DEFAULT_VOCAB,
        "intermediate_size": 4 * (params.card_hidden_size or heads * params.card_head_size),
        "max_position_embeddings": params.card_max_len or CARD_DEFAULT_MAX_LEN,
        "torch_dtype": params.card_dtype,
    }
    if params.card_attention in ("sliding", "hybrid"):
        if params.card_window is None:
            raise ConfigError("card_window", Text("sliding and hybrid attention need the window size"))
        config["sliding_window"] = params.card_window
        config["layer_types"] = [
            "full_attention"
            if params.card_attention == "hybrid" and (i + 1) % CARD_HYBRID_PERIOD == 0
            else "sliding_attention"
            for i in range(params.card_layers)
        ]
    if params.card_attention == "mla":
        if params.card_kv_lora_rank is None:
            raise ConfigError("card_kv_lora_rank", Text("MLA needs kv_lora_rank (512 for DeepSeek-V3)"))
        config["model_type"] = "deepseek_v3"
        config["architectures"] = ["DeepseekV3ForCausalLM"]
        config["kv_lora_rank"] = params.card_kv_lora_rank
        config["qk_rope_head_dim"] = params.card_rope_dim if params.card_rope_dim is not None else 64
        config["qk_nope_head_dim"] = params.card_head_size
        config["v_head_dim"] = params.card_head_size
    return config


def _model(params: PlannerParams) -> tuple[ModelSpec, str, ModelSource]:
    if params.config_json:
        spec, label = _pasted_spec(
            params.config_json, params.hf_quant_config_json, params.model, params.vllm_version
        )
        return spec, label, "config"
    if params.hf_quant_config_json:
        raise ConfigError(
            "hf_quant_config_json",
            Text(
                "an hf_quant_config.json is read beside a pasted config.json: paste the model's config.json too"
            ),
        )
    if params.has_card:
        try:
            spec = model_spec_from_hf_config(
                card_config(params), name=CARD_MODEL_NAME, params_total=params.card_params
            )
        except ConfigError as exc:
            if exc.field.startswith("card_"):
                raise
            field = CARD_FIELD_OF_HF_KEY.get(exc.field, "card_layers")
            raise ConfigError(field, exc.message) from exc
        label = params.model if params.model != DEFAULTS.model else CARD_MODEL_NAME
        return spec, label, "card"
    model, fetched = find_model_or_fetch(params.model)  # the hub only with KVPLAN_ALLOW_HUB=1 (app/hub.py)
    return model, params.model, "hub" if fetched else "catalog"


@lru_cache(maxsize=PASTED_SPECS_KEPT)
def _pasted_spec(
    config_json: str, hf_quant_config_json: str, model: str, vllm_version: str | None
) -> tuple[ModelSpec, str]:
    """A pasted config.json's spec and label, read once per text: a slider move posts the same config
    again, and so do the two slots its results load (/speed, /recommend). The spec is frozen; a config
    the reader refuses raises each time (lru_cache keeps no exception). ``vllm_version`` names the release whose
    refusal is said for a config the reader cannot read (vLLM's, before the missing field)."""
    config = json.loads(config_json)
    label = model if model != DEFAULTS.model else config_name(config)
    hf_quant = json.loads(hf_quant_config_json) if hf_quant_config_json else None
    spec = model_spec_from_hf_config(config, name=label, hf_quant_config=hf_quant, vllm_version=vllm_version)
    return spec, label


def config_name(config: dict[str, Any]) -> str:
    """The model a pasted config.json names (its ``_name_or_path``), else the placeholder."""
    name = config.get(NAME_OR_PATH_KEY)
    if isinstance(name, str) and name.strip() and len(name) <= MAX_NAME_CHARS and "\n" not in name:
        return name.strip()
    return PASTED_MODEL_NAME


Inputs = PlannerParams | Sequence[tuple[str, str]]
P = ParamSpec("P")
R = TypeVar("R")


async def computed(inputs: Inputs, view: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """The one step of every route that computes: ``view(*args, **kwargs)`` in the thread pool, off the
    event loop, after a hub id's first fetch (seconds, over the network) has been awaited here on
    app.hub's own pool, holding no thread of the request pool; the resolve in ``view`` then finds the
    spec (or the failure, with its message) in app.hub's memory cache. ``inputs``: the validated
    parameters, or a page's raw query or form items. Without KVPLAN_ALLOW_HUB=1 nothing is fetched."""
    if isinstance(inputs, PlannerParams):
        if not (inputs.config_json or inputs.has_card):  # a pasted config or a card wins over the id
            await hub.prefetch(inputs.model)
    else:
        await hub.prefetch_items(list(inputs))
    return await run_in_threadpool(view, *args, **kwargs)


def resolve_strict(params: PlannerParams) -> Resolved:
    """For the API: any unusable input raises a PlannerError naming its field."""
    missing = _missing_card_field(params)
    if missing is not None:
        raise ConfigError(missing, CARD_INCOMPLETE)
    try:
        model, label, source = _model(params)
    except ConfigError as exc:
        if source_is_card(params) or exc.field == "config_json":
            raise
        raise ConfigError("config_json", f"{exc.field}: {exc.message}") from exc
    if label not in (params.model, MODEL_PLACEHOLDER):  # a config's _name_or_path: the box and link carry it
        params = params.model_copy(update={"model": label})
    model = apply_quantization_flag(model, params.quantization)  # a checkpoint's own format wins
    device = find_device(params.device)
    if params.device_memory_gib is not None:
        device = device.model_copy(update={"memory_total_bytes": round(params.device_memory_gib * GIB)})
    if params.device != device.id:  # an alias (910b, a100, mi300x): the form and the link show the id
        params = params.model_copy(update={"device": device.id})
    serve = serve_config(params)
    # a flag the chosen release lacks: estimate() refuses it too; checked here as well so the page reports it as
    # the field's problem (the form kept, every feature stopped) before anything is computed
    check_release_has_flags(serve, params.resolved_version)
    return Resolved(params, model, label, source, device, serve, params.resolved_version)


def source_is_card(params: PlannerParams) -> bool:
    return not params.config_json and params.has_card


def resolve_lenient(params: PlannerParams, parsed: Sequence[Problem] = ()) -> tuple[Resolved, list[Problem]]:
    """For the page: never raises. An unusable model source, device or flag is reported and the
    defaults stand in for it only to build the form; ``parsed`` (the lenient parse's problems) and these
    make the result ``unusable``, so :func:`estimate_for` refuses it. The params keep what the user
    typed (the Model box, the pasted config, the permalink name the model asked for)."""
    problems: list[Problem] = []
    # the page's permalinks carry the language it is shown in (omitted for English)
    params = params.model_copy(update={"lang": page_lang()})
    no_card = {name: getattr(DEFAULTS, name) for name in CARD_FIELDS}  # defaults, not None (card_dtype…)
    typed: dict[str, Any] = {}  # what the user gave for each input the defaults stand in for
    missing = _missing_card_field(params)
    if missing is not None:
        problems.append(Problem(missing, CARD_INCOMPLETE))
        typed.update({name: getattr(params, name) for name in CARD_FIELDS})
        params = params.model_copy(update=no_card)
    resolved = _resolve_standing_in(params, problems, typed, no_card)
    if typed:
        kept = resolved.params.model_copy(update=typed)
        label = typed.get("model", resolved.model_label)
        resolved = replace(resolved, params=kept, model_label=label)
    unusable = stopping((*parsed, *problems))
    return (replace(resolved, unusable=unusable) if unusable else resolved), problems


def _resolve_standing_in(
    params: PlannerParams, problems: list[Problem], typed: dict[str, Any], no_card: dict[str, Any]
) -> Resolved:
    """``resolve_strict`` with each input it refuses reported and replaced by its default."""
    for _ in range(4):
        try:
            return resolve_strict(params)
        except UnknownModelError as exc:
            problems.append(
                Problem("model", unknown_model_message(exc.model_id), value=shown_value(params.model))
            )
            typed.setdefault("model", params.model)
            params = params.model_copy(update={"model": DEFAULTS.model})
        except UnknownDeviceError as exc:
            problems.append(Problem("device", exc.message, value=shown_value(params.device)))
            typed.setdefault("device", params.device)
            params = params.model_copy(update={"device": DEFAULTS.device})
        except ConfigError as exc:
            problems.append(Problem(exc.field, exc.message))
            if params.config_json:
                typed.setdefault("config_json", params.config_json)
                params = params.model_copy(update={"config_json": ""})
            else:
                typed.update({name: getattr(params, name) for name in CARD_FIELDS if name not in typed})
                params = params.model_copy(update=no_card)
        except PlannerError as exc:  # a flag the core refuses (an unknown --quantization), a hub failure
            if exc.field not in PlannerParams.model_fields:
                raise
            value = getattr(params, exc.field)
            problems.append(Problem(exc.field, exc.message, value=shown_value(value)))
            typed.setdefault(exc.field, value)
            params = params.model_copy(update={exc.field: getattr(DEFAULTS, exc.field)})
    raise PlannerError("model", Text("no usable model"))  # unreachable: the defaults always resolve


def require_usable(resolved: Resolved) -> Resolved:
    """``resolved``, unless it stands in for inputs the page could not use (then :class:`UnusableInputs`).
    Every computation of a web feature starts here (estimate_for does; the recommender's and the
    fleet's own core calls too)."""
    if resolved.unusable:
        raise UnusableInputs(resolved.unusable)
    return resolved


def estimate_for(resolved: Resolved, *, vllm_version: str | None = None, **serve_changes: Any) -> Estimate:
    """The one estimate call of the web features: the resolved inputs, optionally another release or
    some flags changed (the explorer's what-ifs, the compare view's second version). Inputs the page
    could not use (``resolved.unusable``) raise :class:`UnusableInputs`: nothing is computed for them."""
    require_usable(resolved)
    serve = resolved.serve.model_copy(update=serve_changes) if serve_changes else resolved.serve
    return estimate(
        model=resolved.model,
        device=resolved.device,
        serve=serve,
        vllm_version=vllm_version or resolved.vllm_version,
        target_concurrency=resolved.params.target_concurrency,
        devices=resolved.params.devices,
    )


def capacity_curve_for(resolved: Resolved, base: Estimate, *, points: int) -> list[tuple[int, float]]:
    """The core's capacity chart for the resolved inputs: concurrency at ``points`` max_model_len values
    (log-spaced from 512 to the model's limit), reusing ``base``'s pool (the estimate of these inputs)."""
    return capacity_curve(
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        vllm_version=resolved.vllm_version,
        points=points,
        base=base,
    )
