"""The recurrent state one Mamba-style layer holds per request, as vLLM's MambaStateShapeCalculator and
MambaStateDtypeCalculator size it (model_executor/layers/mamba/mamba_utils.py; reference §3.2)."""

from __future__ import annotations

from app.core.hf_config.registry import SSM_DTYPE_HOOK, has_config_hook
from app.core.specs import DTYPE_BYTES, MambaKind, MambaSpec, ModelSpec
from app.core.versions import VersionRules

KDA_RECURRENT_STATE_BYTES = (
    4  # mamba_utils.kda_state_dtype: the recurrent state is float32 under "auto" (0.19-0.33)
)


def mamba_state_bytes(
    *, mamba: MambaSpec, tensor_parallel_size: int, dtype_bytes: int, ssm_dtype_bytes: int | None = None
) -> int:
    """Recurrent state of one layer for one request (reference §3.2, MambaStateShapeCalculator).

    The conv state takes the cache dtype; the SSM (temporal) state ``ssm_dtype_bytes`` when
    mamba_ssm_cache_dtype is set (MambaStateDtypeCalculator), else the same dtype.
    """
    tp = tensor_parallel_size
    m = mamba
    if m.kind == MambaKind.MAMBA1:
        conv = (m.intermediate_size // tp) * (m.conv_kernel - 1)
        ssm = (m.intermediate_size // tp) * m.state_size
    elif m.kind == MambaKind.MAMBA2:
        groups = m.n_groups if m.n_groups % tp == 0 else m.n_groups + (tp - m.n_groups)
        conv = ((m.intermediate_size + 2 * groups * m.state_size) // tp) * (m.conv_kernel - 1)
        ssm = (m.num_heads // tp) * m.head_dim * m.state_size
    elif m.kind == MambaKind.KDA:
        # kda_state_shape: conv over q, k, v (3 x heads x head_dim) with kernel - 1 taps; a head_dim x head_dim
        # recurrent state per head (float32 unless --mamba-ssm-cache-dtype says otherwise)
        conv = (3 * m.num_heads * m.head_dim // tp) * (m.conv_kernel - 1)
        ssm = (m.num_heads // tp) * m.head_dim * m.head_dim
    elif m.kind == MambaKind.GATED_DELTA_NET:
        conv_dim = 2 * m.key_head_dim * m.key_heads + m.value_head_dim * m.value_heads
        conv = (conv_dim // tp) * (m.conv_kernel - 1)
        ssm = (m.value_heads // tp) * m.value_head_dim * m.key_head_dim
    elif m.kind == MambaKind.SHORT_CONV:
        # short_conv_state_shape: conv_dim / TP channels x (conv_L_cache - 1) taps, in the cache dtype; no SSM state
        conv = (m.intermediate_size // tp) * (m.conv_kernel - 1)
        ssm = 0
    else:  # linear attention (MiniMax lightning)
        conv = 0
        ssm = (m.num_heads // tp) * m.head_dim * m.head_dim
    return conv * dtype_bytes + ssm * (dtype_bytes if ssm_dtype_bytes is None else ssm_dtype_bytes)


# Architectures whose SSM-state dtype vLLM sets from the config (models/config.py
# VerifyAndUpdateConfig); from which release, and the default, are rules fields (versions.py).
NEMOTRON_H_ARCHITECTURES = frozenset(
    {"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM", "NemotronH_Nano_VL_V2"}
)


def mamba_ssm_dtype_bytes(*, model: ModelSpec, rules: VersionRules) -> int | None:
    """Bytes of the SSM state's dtype when vLLM overrides it for this model, else None (auto)."""
    if model.mamba is not None and model.mamba.kind == MambaKind.KDA:
        return KDA_RECURRENT_STATE_BYTES
    default = rules.nemotron_h_ssm_dtype_default
    if model.architecture in NEMOTRON_H_ARCHITECTURES and default is not None:
        return DTYPE_BYTES[model.mamba_ssm_dtype or default]
    if (
        rules.qwen3_5_reads_ssm_dtype
        and model.mamba_ssm_dtype
        # every architecture whose MODELS_CONFIG_MAP class derives from Qwen3_5ForConditionalGenerationConfig
        # in this release (ColQwen3_5, Qwen4Exp, D3ForSequenceClassification; vllm_model_config_map.json)
        and has_config_hook(SSM_DTYPE_HOOK, architecture=model.architecture, release=rules.version)
    ):
        return DTYPE_BYTES[model.mamba_ssm_dtype]
    return None
