"""quantization_config -> QuantSpec, as vLLM names and sizes each method."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.core.errors import ConfigError, PlannerError
from app.core.hf_config.coerce import (
    MAX_DIM,
    _as_int,
    _as_list,
    _as_mapping,
    _as_str,
    _Configs,
    _flag,
    _lookup,
)
from app.core.hf_config.geometry import _Geometry
from app.core.hf_config.params import ParamBreakdown
from app.core.hf_config.quant_autoround import AUTO_ROUND_METHOD, INC_METHOD, auto_round_spec
from app.core.hf_config.quant_ignore import unconverted_fraction
from app.core.specs import QuantMethod, QuantSpec
from app.core.text import Text
from app.core.versions import ResolvedVersion, resolve_version

MXFP4_GROUP_SIZE = 32  # one e8m0 scale per 32 values (OCP MX spec)
NVFP4_GROUP_SIZE = 16  # one fp8 scale per 16 values
BNB_4BIT_BLOCK_SIZE = 64  # bitsandbytes nf4/fp4 default blocksize
BLOCK_DIMS = 2  # an FP8 weight block is [block_n, block_k]
# vLLM's words when it refuses compressed-tensors sparsity (VersionRules.ct_sparsity_removed, 0.22.0 on:
# compressed_tensors.py _parse_sparsity_config; vllm PR 36799; read in the 0.21.0, 0.22.0, 0.23.0, 0.24.0, 0.26.0
# and 0.33.0 wheels)
CT_SPARSITY_REMOVED_MESSAGE = "Sparsity support has been removed from compressed-tensors. Please use a model without sparsity configuration."


# ----------------------------------------------------------------------------------------------
# Quantization
# ----------------------------------------------------------------------------------------------
AWQ_BITS = 4  # the only AWQ weight width vLLM loads (0.19.0 awq.py, 0.33.0 auto_awq.py TYPE_MAP)


def _int_bits(key: str, value: Any) -> int:
    return _as_int(key, value, minimum=1, maximum=64)


def _group_size(key: str, value: Any, *, per_channel: int) -> int:
    """A group size; -1/None mean one scale per output channel (a row of ``per_channel`` inputs)."""
    if value is None:
        return per_channel
    size = _as_int(key, value, minimum=-1, maximum=MAX_DIM)
    return per_channel if size <= 0 else size


def _block_size(key: str, value: Any) -> tuple[int, int] | None:
    """[block_n, block_k] of an FP8 block-quantized checkpoint (0.33.0 fp8.py Fp8Config: weight_block_size must
    have two entries); None when the config gives none."""
    if not value:
        return None
    items = _as_list(key, value)
    if len(items) != BLOCK_DIMS:
        raise ConfigError(key, Text("weight_block_size must be [block_n, block_k], got {value}", value=value))
    return (
        _as_int(key, items[0], minimum=1, maximum=MAX_DIM),
        _as_int(key, items[1], minimum=1, maximum=MAX_DIM),
    )


def _ct_sparsity_targets(q: Mapping[str, Any]) -> bool:
    """The config declares compressed-tensors sparsity on some modules (`sparsity_config.targets` not empty;
    _parse_sparsity_config returns early for an absent or empty sparsity_config)."""
    sparsity = q.get("sparsity_config")
    if not sparsity:
        return False
    return bool(_as_mapping("quantization_config.sparsity_config", sparsity).get("targets"))


def _resolved(vllm_version: str | None) -> ResolvedVersion | None:
    """The release ``vllm_version`` names, or None for a version the planner cannot read (the version's own
    message comes from the plan)."""
    try:
        return resolve_version(vllm_version)
    except PlannerError:
        return None


def _release_text(version: ResolvedVersion) -> str:
    return ".".join(str(part) for part in version.release)


def _check_ct_sparsity(q: Mapping[str, Any], vllm_version: str | None) -> None:
    """vLLM's refusal of a sparse compressed-tensors checkpoint from 0.22.0 on (VersionRules.ct_sparsity_removed;
    0.21.0 serves it: get_scheme -> supports_cutlass_24 -> CompressedTensors24)."""
    if not _ct_sparsity_targets(q):
        return
    version = _resolved(vllm_version)
    if version is not None and version.rules.ct_sparsity_removed:
        raise ConfigError(
            "quantization_config.sparsity_config",
            Text(
                'vLLM {version} cannot load this sparse compressed-tensors checkpoint: "{vllm}" '
                "(releases before 0.22.0 load it)",
                version=_release_text(version),
                vllm=CT_SPARSITY_REMOVED_MESSAGE,
            ),
        )


# The keys GPTQ's from_config reads with get_from_keys (base_config.py: ValueError "Cannot find any of [...] in the
# model's quantization config." when absent): 0.21.0 gptq.py GPTQConfig bits, group_size, desc_act; 0.22.0+
# auto_gptq.py AutoGPTQConfig also sym (the same release as its symmetric-only TYPE_MAP, gptq_symmetric_only).
GPTQ_REQUIRED_KEYS = ("bits", "group_size", "desc_act")
GPTQ_REQUIRED_KEYS_AUTO = (*GPTQ_REQUIRED_KEYS, "sym")


def _check_gptq_keys(q: Mapping[str, Any], vllm_version: str | None) -> None:
    """vLLM's refusal of a GPTQ quantization_config that lacks a key its from_config requires."""
    version = _resolved(vllm_version)
    if version is None:
        return
    for key in GPTQ_REQUIRED_KEYS_AUTO if version.rules.gptq_symmetric_only else GPTQ_REQUIRED_KEYS:
        if key not in q:
            vllm = f"Cannot find any of ['{key}'] in the model's quantization config."  # vLLM's words
            raise ConfigError(
                f"quantization_config.{key}",
                Text(
                    'vLLM {version} cannot read this GPTQ quantization_config: "{vllm}"',
                    version=_release_text(version),
                    vllm=vllm,
                ),
            )


GPTQ_DESC_ACT_REMOVED = (
    "GPTQ group activation ordering (desc_act=True) is no longer supported. Use a checkpoint with static "
    "activation ordering or desc_act=False."
)
CT_GROUP_ACT_ORDERS = frozenset(
    {"group", "dynamic"}
)  # compressed-tensors 0.17.0 ActivationOrdering.GROUP, alias


def _check_gptq_desc_act(q: Mapping[str, Any], vllm_version: str | None) -> None:
    """0.30.0+ gptq_utils.py normalize_and_validate_gptq_desc_act (AutoGPTQConfig.__init__ runs it before the
    TYPE_MAP check): desc_act with a group size other than -1 raises (one group a channel makes it a no-op), and so
    does a `dynamic` rule (not a "-:" skip) whose desc_act (default: the config's own, before that no-op) and
    group_size (default: the config's) do."""
    version = _resolved(vllm_version)
    if version is None or not version.rules.act_order_groups_removed:
        return
    desc_act, group = q.get("desc_act"), q.get("group_size")
    rules = q.get("dynamic") or {}
    overrides = [o for p, o in rules.items() if not str(p).startswith("-:") and isinstance(o, Mapping)]
    if (desc_act and group != -1) or any(
        o.get("desc_act", desc_act) and o.get("group_size", group) != -1 for o in overrides
    ):
        raise ConfigError(
            "quantization_config.desc_act",
            Text(
                'vLLM {version} cannot load GPTQ with group activation ordering: "{vllm}" (releases before 0.30.0 '
                "load it)",
                version=_release_text(version),
                vllm=GPTQ_DESC_ACT_REMOVED,
            ),
        )


def _check_ct_act_order(q: Mapping[str, Any], vllm_version: str | None) -> None:
    """0.30.0+ compressed_tensors.py _quantization_scheme_map_from_config: a config group whose weights'
    actorder is group or dynamic (compressed-tensors 0.17.0, 0.33.0's pin, QuantizationArgs.validate_actorder
    reads true as group, any case) raises. from_config drops a group targeting one *Attention module first."""
    version = _resolved(vllm_version)
    if version is None or not version.rules.act_order_groups_removed:
        return
    for group in (q.get("config_groups") or {}).values():
        if not isinstance(group, Mapping):
            continue
        targets = group.get("targets") or []
        if len(targets) == 1 and str(targets[0]).endswith("Attention"):
            continue
        order = (group.get("weights") or {}).get("actorder")
        name = "group" if order is True else str(order).lower() if isinstance(order, str) else None
        if name in CT_GROUP_ACT_ORDERS:
            vllm = (  # vLLM's words, not translated
                f"Compressed-tensors group/dynamic activation ordering (actorder={name!r}) is no longer supported. "
                "Use a checkpoint with static/weight activation ordering or without activation ordering."
            )
            raise ConfigError(
                "quantization_config.config_groups",
                Text(
                    'vLLM {version} cannot load compressed-tensors weights with group activation ordering: "{vllm}" '
                    "(releases before 0.30.0 load them)",
                    version=_release_text(version),
                    vllm=vllm,
                ),
            )


def _check_gptq_symmetric(q: Mapping[str, Any], bits: int, vllm_version: str | None) -> bool:
    """Whether a GPTQ checkpoint stores zero points (`sym: false`), raising vLLM's refusal where the release has
    no asymmetric GPTQ kernel. 0.22.0+ auto_gptq.py AutoGPTQConfig.__init__: (bits, sym) must be in TYPE_MAP
    {(4, True): uint4b8, (8, True): uint8b128}, else ValueError "Unsupported quantization config: bits=4,
    sym=False" (read in 0.22.0, 0.26.0, 0.30.0, 0.33.0). 0.21.0 gptq_marlin.py is_gptq_marlin_compatible turns it
    down (same TYPE_MAP), and gptq.py GPTQConfig, which has no sym check, serves it (its ExLlama kernel reads
    qzeros)."""
    if q.get("sym") is not False:
        return False
    version = _resolved(vllm_version)
    if version is not None and version.rules.gptq_symmetric_only:
        vllm = f"Unsupported quantization config: bits={bits}, sym=False"  # vLLM's words, not translated
        raise ConfigError(
            "quantization_config.sym",
            Text(
                'vLLM {version} loads symmetric GPTQ only (sym: true): "{vllm}" (releases before 0.22.0 load '
                "asymmetric GPTQ with the ExLlama kernel)",
                version=_release_text(version),
                vllm=vllm,
            ),
        )
    return True


def _compressed_tensors(q: Mapping[str, Any], hidden: int) -> QuantSpec | None:
    if not q.get("config_groups") and q.get("kv_cache_scheme") is None:
        # nothing quantized (a sparsity-only checkpoint, served before 0.22.0): from_config builds an empty
        # target_scheme_map (config.get("config_groups", dict())), so every Linear keeps bf16 weights
        return None
    groups = _as_mapping("quantization_config", q.get("config_groups"))
    if not groups:
        raise ConfigError("quantization_config", Text("compressed-tensors config_groups is empty"))
    group = _as_mapping("quantization_config", _largest_group(groups))
    weights = _as_mapping("quantization_config", group.get("weights"))
    bits = _int_bits("quantization_config", weights.get("num_bits"))
    kind = weights.get("type", "int")
    group_size = _group_size("quantization_config", weights.get("group_size"), per_channel=hidden)
    name = "compressed-tensors"
    kv_scheme = q.get("kv_cache_scheme")
    if kv_scheme is not None:
        _check_ct_kv_cache_scheme(kv_scheme)
    # Attention.__init__ (0.22+): a checkpoint that declares a kv_cache_scheme gets an fp8 KV cache under auto
    kv = "fp8" if kv_scheme is not None else None
    if kind == "float" and bits == 8:
        # strategy "block": CompressedTensorsW8A8Fp8 (0.33.0) takes block_structure as its weight_block_size
        block = (
            _block_size("quantization_config.block_structure", weights.get("block_structure"))
            if weights.get("strategy") == "block"
            else None
        )
        return QuantSpec(
            method=QuantMethod.FP8,
            group_size=group_size,
            source_name=name,
            kv_cache_dtype=kv,
            weight_block_size=block,
        )
    if kind == "float" and bits == 4:
        return QuantSpec(
            method=QuantMethod.NVFP4, group_size=NVFP4_GROUP_SIZE, source_name=name, kv_cache_dtype=kv
        )
    if kind == "int" and bits == 8:
        return QuantSpec(method=QuantMethod.INT8, group_size=group_size, source_name=name, kv_cache_dtype=kv)
    if kind == "int" and bits == 4:
        return QuantSpec(
            method=QuantMethod.INT4,
            group_size=group_size,
            source_name=name,
            kv_cache_dtype=kv,
            zero_points=weights.get("symmetric") is False,
        )
    raise ConfigError(
        "quantization_config",
        Text("unsupported compressed-tensors weights: {kind} {bits}-bit", kind=kind, bits=bits),
    )


def _check_ct_kv_cache_scheme(value: Any) -> None:
    """0.33.0 layers/quantization/compressed_tensors/compressed_tensors.py: every Attention layer of a
    compressed-tensors checkpoint gets a CompressedTensorsKVCacheMethod, whose validate_kv_cache_scheme raises
    unless the scheme's `symmetric` is true (a scheme that leaves it out is refused too); 0.10.2 and 0.7.3 have the
    same check, so it holds for every release."""
    field = "quantization_config.kv_cache_scheme"
    scheme = _as_mapping(field, value)
    if not scheme.get("symmetric"):
        raise ConfigError(
            field,
            Text(
                "vLLM supports only a symmetric compressed-tensors KV cache scale, and this kv_cache_scheme has "
                "symmetric={value}",
                value=scheme.get("symmetric"),
            ),
        )


def _largest_group(groups: Mapping[str, Any]) -> Any:
    """The config group that covers the most modules (its `targets`), e.g. the NVFP4 experts of a
    checkpoint whose attention is FP8; ties keep the first, as compressed-tensors lists them."""
    best, best_count = None, -1
    for value in groups.values():
        group = _as_mapping("quantization_config", value)
        targets = group.get("targets")
        count = len(_as_list("quantization_config", targets)) if targets is not None else 0
        if count > best_count:
            best, best_count = value, count
    return best


# ModelOpt quant_algo -> (weight format, vLLM's method name); 0.33.0 modelopt.py LINEAR_ALGOS
MODELOPT_ALGOS: dict[str, tuple[QuantMethod, str]] = {
    "FP8": (QuantMethod.FP8, "modelopt"),
    "FP8_PER_CHANNEL_PER_TOKEN": (QuantMethod.FP8, "modelopt"),
    "FP8_PB_WO": (QuantMethod.FP8, "modelopt"),
    "FP8_BLOCK_SCALES": (QuantMethod.FP8, "modelopt"),
    "NVFP4": (QuantMethod.NVFP4, "modelopt_fp4"),
    "W4A16_NVFP4": (QuantMethod.NVFP4, "modelopt_fp4"),
    "MXFP8": (QuantMethod.FP8, "modelopt_mxfp8"),
}
# 0.33.0 utils/torch_utils.py MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP (kv_cache_quant_algo, lower-cased)
MODELOPT_KV_DTYPES = {"fp8": "fp8_e4m3", "nvfp4": "nvfp4"}
FP8_BITS, FP4_BITS = 8, 4


def _modelopt_producer(q: Mapping[str, Any]) -> bool:
    """hf_quant_config.json has no quant_method: 0.33.0 model_arch_config_convertor
    _normalize_quantization_config names it modelopt* from its producer (or the legacy
    `modelopt_quant_config`); only then does resolve_kv_cache_dtype_string read its KV algo."""
    producer = q.get("producer")
    inner = q.get("quantization")
    legacy = isinstance(inner, Mapping) and "modelopt_quant_config" in inner
    return (isinstance(producer, Mapping) and producer.get("name") == "modelopt") or legacy


def _is_modelopt(q: Mapping[str, Any]) -> bool:
    """A ModelOpt config vLLM's ModelOpt*Config.override_quantization_method claims: a producer, or a
    `quantization` block with a quant_algo (hf_quant_config.json written without a producer)."""
    inner = q.get("quantization")
    return _modelopt_producer(q) or (isinstance(inner, Mapping) and inner.get("quant_algo") is not None)


def _modelopt_kv_dtype(q: Mapping[str, Any], inner: Mapping[str, Any]) -> str | None:
    """0.33.0 utils/torch_utils.py get_kv_cache_quant_algo_string: kv_cache_scheme (a dict) or
    kv_cache_quant_algo (a string), inner `quantization` block first; unknown values fall back to auto."""
    kv = (
        inner.get("kv_cache_scheme")
        or q.get("kv_cache_scheme")
        or inner.get("kv_cache_quant_algo")
        or q.get("kv_cache_quant_algo")
    )
    if isinstance(kv, Mapping):
        if kv.get("type") != "float":
            return None
        if kv.get("num_bits") == FP8_BITS and kv.get("dynamic") is False:
            return MODELOPT_KV_DTYPES["fp8"]
        return MODELOPT_KV_DTYPES["nvfp4"] if kv.get("num_bits") == FP4_BITS else None
    if isinstance(kv, str):
        return MODELOPT_KV_DTYPES.get(kv.lower())
    return None


# MIXED_PRECISION: module names of the MLP / experts, which hold most of a decoder's parameters
MLP_MODULE_MARKERS = ("mlp", "experts", "moe", "ffn", "feed_forward")


def _mixed_precision_algo(layers: Any) -> str:
    """The algo of the most MLP / expert modules in `quantized_layers` (else of the most modules)."""
    mlp: dict[str, int] = {}
    every: dict[str, int] = {}
    for module, entry in _as_mapping("quantized_layers", layers or {}).items():
        entry_algo = _as_mapping("quantized_layers", entry).get("quant_algo")
        name = _as_str("quantized_layers", entry_algo).upper() if entry_algo is not None else ""
        every[name] = every.get(name, 0) + 1
        if any(marker in str(module) for marker in MLP_MODULE_MARKERS):
            mlp[name] = mlp.get(name, 0) + 1
    counts = mlp or every
    if not counts:
        raise ConfigError("quantization_config", Text("MIXED_PRECISION without quantized_layers"))
    return max(counts, key=lambda name: counts[name])


def _modelopt(q: Mapping[str, Any], hidden: int, *, reads_kv: bool) -> QuantSpec:
    """ModelOpt, in config.json (`quant_method: modelopt*`) or hf_quant_config.json (`producer`,
    `quantization`). MIXED_PRECISION lists an algo per layer (`quantized_layers`): the planner sizes the
    weights with the algo of most MLP / expert modules (they hold most of the parameters)."""
    inner_raw = q.get("quantization")
    inner = _as_mapping("quantization_config", inner_raw) if inner_raw is not None else q
    algo = _as_str("quantization_config", inner.get("quant_algo", "")).upper()
    kv = _modelopt_kv_dtype(q, inner) if reads_kv else None
    source = None
    if algo == "MIXED_PRECISION":
        algo = _mixed_precision_algo(inner.get("quantized_layers", q.get("quantized_layers")))
        source = "modelopt_mixed"
    if algo not in MODELOPT_ALGOS:
        raise ConfigError("quantization_config", Text("unsupported modelopt quant_algo {algo!r}", algo=algo))
    method, name = MODELOPT_ALGOS[algo]
    group = NVFP4_GROUP_SIZE if method == QuantMethod.NVFP4 else hidden
    return QuantSpec(method=method, group_size=group, source_name=source or name, kv_cache_dtype=kv)


# 0.33.0 models/deepseek_v4/quant_config.py DeepseekV4FP8Config: a deepseek_v4 checkpoint with
# quant_method fp8 is "deepseek_v4_fp8" (override_quantization_method). Its linears (attention, shared
# experts) are FP8 blocks; get_quant_method gives the routed experts Mxfp4MoEMethod when the config's
# `expert_dtype` is "fp4" — the default when the key is missing — or ModelOptNvFp4FusedMoE when
# quantization_config.moe_quant_algo is NVFP4; expert_dtype "fp8" (V4-Flash-Base) keeps them FP8.
DEEPSEEK_V4_MODEL_TYPE = "deepseek_v4"
DEEPSEEK_V4_DEFAULT_EXPERT_DTYPE = "fp4"


def _deepseek_v4_fp8(
    cfgs: _Configs, q: Mapping[str, Any], group: int, breakdown: Callable[[], ParamBreakdown]
) -> QuantSpec:
    expert_dtype = cfgs.text.get("expert_dtype", DEEPSEEK_V4_DEFAULT_EXPERT_DTYPE)
    source = "deepseek_v4_fp8"
    if expert_dtype != DEEPSEEK_V4_DEFAULT_EXPERT_DTYPE:
        return QuantSpec(method=QuantMethod.FP8, group_size=group, source_name=source)
    moe_algo = str(q.get("moe_quant_algo") or "").upper()
    expert_method = QuantMethod.NVFP4 if moe_algo == "NVFP4" else QuantMethod.MXFP4
    parts = breakdown()
    fraction = parts.experts / parts.non_embedding if parts.experts and parts.non_embedding else 0.0
    return QuantSpec(
        method=QuantMethod.FP8,
        group_size=group,
        source_name=source,
        expert_method=expert_method,
        expert_fraction=min(1.0, fraction),
    )


def _raw_quantization(cfgs: _Configs, hf_quant_config: Mapping[str, Any] | None) -> Any:
    raw = _lookup(cfgs, "quantization_config")
    if raw is None:
        raw = _lookup(cfgs, "compression_config")  # older compressed-tensors checkpoints
    if raw is None:
        # 0.33.0 transformers_utils/config.py: ModelOpt <= 0.29 saves hf_quant_config.json beside config.json,
        # read only when config.json has no quantization_config
        raw = hf_quant_config
    return raw


def _quantization(
    cfgs: _Configs,
    geometry: _Geometry,
    breakdown: Callable[[], ParamBreakdown],
    hf_quant_config: Mapping[str, Any] | None = None,
    *,
    vllm_version: str | None = None,
) -> QuantSpec | None:
    """The checkpoint's weight format, with the share of the decoder body it leaves unconverted
    (quant_ignore.py: compressed-tensors ignore, ModelOpt exclude_modules, modules_to_not_convert)."""
    raw = _raw_quantization(cfgs, hf_quant_config)
    if raw is None:
        return None
    spec = _quantization_format(
        cfgs, geometry, breakdown, _as_mapping("quantization_config", raw), vllm_version=vllm_version
    )
    if spec is None:
        return None
    if spec.quantized_fraction < 1.0 or spec.expert_method is not None:
        return spec  # gpt-oss's MXFP4 experts and DeepSeek-V4's split formats carry their own shares
    left = unconverted_fraction(
        _as_mapping("quantization_config", raw),
        breakdown=breakdown(),
        num_layers=geometry.num_layers,
        heads=geometry.num_heads,
        kv_heads=geometry.num_kv_heads,
    )
    return spec.model_copy(update={"quantized_fraction": 1.0 - left}) if left > 0 else spec


def _quantization_format(
    cfgs: _Configs,
    geometry: _Geometry,
    breakdown: Callable[[], ParamBreakdown],
    q: Mapping[str, Any],
    *,
    vllm_version: str | None,
) -> QuantSpec | None:
    method = _as_str("quantization_config", q.get("quant_method", "")).lower()
    if not method and "bits" in q:
        # MLX's converter writes {"bits", "group_size", "mode", per-module overrides} and no quant_method: 0.33.0
        # model_arch_config_convertor.py _normalize_quantization_config makes it "", no method claims it
        # (config/model.py _verify_quantization), and its packed weight / scales / biases tensors cannot load
        raise ConfigError(
            "quantization_config.quant_method",
            Text(
                "quantization_config has bits and group_size but no quant_method: an MLX-quantized checkpoint, "
                "which no vLLM quantization method loads; serve the original weights or a GPTQ, AWQ, "
                "compressed-tensors or FP8 copy"
            ),
        )
    hidden = geometry.hidden_size
    if method in ("fp8", "fbgemm_fp8"):
        block = _block_size("quantization_config.weight_block_size", q.get("weight_block_size"))
        group = block[0] if block else hidden
        if method == "fp8" and cfgs.text_model_type == DEEPSEEK_V4_MODEL_TYPE:
            return _deepseek_v4_fp8(cfgs, q, group, breakdown)
        return QuantSpec(
            method=QuantMethod.FP8,
            group_size=group,
            source_name=method,
            weight_block_size=block if method == "fp8" else None,
        )
    if method == "compressed-tensors":
        _check_ct_act_order(
            q, vllm_version
        )  # from_config: the scheme map (actorder) before the sparsity config
        _check_ct_sparsity(q, vllm_version)
        return _compressed_tensors(q, hidden)
    if method == "gptq":
        _check_gptq_keys(q, vllm_version)
        _check_gptq_desc_act(q, vllm_version)
    if method in ("gptq", "awq"):
        bits = _int_bits("quantization_config", q.get("bits", q.get("w_bit")))
        group = _group_size(
            "quantization_config", q.get("group_size", q.get("q_group_size")), per_channel=hidden
        )
        if method == "awq" and bits != AWQ_BITS:
            # 0.19.0 awq.py "Currently, only 4-bit weight quantization is supported for AWQ"; 0.33.0 auto_awq.py
            # AutoAWQConfig TYPE_MAP {4: uint4}
            raise ConfigError(
                "quantization_config.bits",
                Text("vLLM loads AWQ checkpoints with 4-bit weights only; this one says {bits}", bits=bits),
            )
        zero_points = method == "gptq" and _check_gptq_symmetric(q, bits, vllm_version)
        if bits == 8:
            return QuantSpec(
                method=QuantMethod.INT8, group_size=group, source_name=method, zero_points=zero_points
            )
        if bits == 4:
            return QuantSpec(
                method=QuantMethod.INT4, group_size=group, source_name=method, zero_points=zero_points
            )
        raise ConfigError(
            "quantization_config", Text("unsupported {method} bits {bits}", method=method, bits=bits)
        )
    if method in (AUTO_ROUND_METHOD, INC_METHOD):
        bits = _int_bits("quantization_config", q.get("bits"))
        group = _group_size("quantization_config", q.get("group_size"), per_channel=hidden)
        return auto_round_spec(q, bits=bits, group=group, vllm_version=vllm_version)
    if method == "mxfp4":
        # gpt-oss: only the MoE experts are MXFP4; attention, router, embeddings, lm_head stay bf16.
        parts = breakdown()
        fraction = parts.experts / parts.non_embedding if parts.experts and parts.non_embedding else 1.0
        return QuantSpec(
            method=QuantMethod.MXFP4,
            group_size=MXFP4_GROUP_SIZE,
            quantized_fraction=min(1.0, fraction),
            source_name="mxfp4",
        )
    if method.startswith("modelopt") or _is_modelopt(q):
        return _modelopt(q, hidden, reads_kv=method.startswith("modelopt") or _modelopt_producer(q))
    if method == "bitsandbytes":
        if _flag(q, "load_in_8bit"):
            return QuantSpec(method=QuantMethod.INT8, group_size=hidden, source_name=method)
        return QuantSpec(method=QuantMethod.INT4, group_size=BNB_4BIT_BLOCK_SIZE, source_name=method)
    raise ConfigError("quantization_config", Text("unsupported quant_method {method!r}", method=method))
