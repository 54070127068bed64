"""The estimator's entry: the release the user named, the model as that release reads it, the checkpoint's
KV dtype, `--max-model-len auto`, the working and the notes; one :func:`app.core.estimate.answer.single_estimate`
(or two, for auto) does the rest."""

from __future__ import annotations

from app.core import equations, vllm_text_printed
from app.core.defaults import (
    checkpoint_kv_cache_dtype,
    default_max_model_len,
    model_for_release,
    validate_devices,
)
from app.core.estimate.answer import single_estimate
from app.core.hf_config.registry import apply_runner, check_architecture, check_config_contract
from app.core.result import ErrorKind, Estimate
from app.core.serve_flags import check_release_has_flags
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Text
from app.core.versions import ResolvedVersion, VersionRules, resolve_version


def estimate(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    vllm_version: str | None = None,
    target_concurrency: int | None = None,
    max_model_len_auto: bool = False,
    devices: int | None = None,
    working: bool = True,  # False: no ``terms`` (the recommender's and the chart's probes show none)
    check_flags: bool = True,  # False: the doctor's replays (the log is what vLLM ran; its pool is passed as a flag)
) -> Estimate:
    """Predict vLLM's start-up numbers for one configuration (per device of the tightest rank).

    ``devices``: how many the user has (None: TP × PP); fewer than TP × PP is vLLM's refusal
    (:func:`validate_devices`, an InvalidServeConfigError naming ``devices``).

    ``max_model_len_auto`` is `--max-model-len auto` (0.14+): vLLM binary-searches the largest length
    that fits the KV pool, up to the model's own maximum, and logs what it did (reference §3.6, §4.3).

    A flag ``serve`` sets that the release's `vllm serve` lacks is refused here, naming its field
    (:func:`check_release_has_flags`: vLLM's "unrecognized arguments"), for every caller: the API, the CLI, the
    fleet, the recommender (whose candidates are estimates, so it never proposes such a flag) and the pages.
    The doctor passes ``check_flags=False``: a log's flags ran, and its replay over the printed pool sets
    ``kv_cache_memory_bytes`` itself, at releases that have no such flag too (diagnose.case.replay_over_pool).
    """
    validate_devices(serve=serve, devices=devices)
    if check_flags:
        check_release_has_flags(serve, vllm_version)
    version = resolve_version(vllm_version)
    rules = version.rules
    # the registry at the release the user named, not its bracket's: 0.12.0 plans with 0.11.0's rules,
    # but an architecture first read in 0.14.0 and absent from 0.11.0 may be in 0.12.0 (a note, not a refusal)
    architecture = check_architecture(
        architecture=model.architecture,
        model_type=model.model_type,
        version=version.release,
        transformers_fallback_release=rules.version if rules.transformers_fallback else None,
        remote_code=model.remote_code,
        remote_config=model.remote_config,
        quant_method=model.quantization.source_name if model.quantization else None,
        quant_field="quantization" if serve.quantization else "quantization_config.quant_method",
    )
    check_config_contract(model=model, version=version.release)
    model, runner_notes = apply_runner(
        model=model, runner=serve.resolved_runner, version=version.release, convert=serve.convert
    )
    architecture = [*architecture, *runner_notes]
    model = model_for_release(model=model, rules=rules)
    resolved_kv = checkpoint_kv_cache_dtype(model=model, serve=serve, rules=rules, device=device)
    if resolved_kv is not None:
        serve = serve.model_copy(update={"kv_cache_dtype": resolved_kv[0]})
    if max_model_len_auto and rules.has_auto_fit:
        est = _auto_fit(model=model, device=device, serve=serve, rules=rules, target=target_concurrency)
    else:
        est = single_estimate(
            model=model, device=device, serve=serve, rules=rules, target_concurrency=target_concurrency
        )
    if working:  # the working of the numbers above (situations read only serve's --kv-cache-memory-bytes)
        terms = equations.working_terms(
            model=model, serve=serve, est=est, rules=rules, target=target_concurrency or 1, device=device
        )
        est = est.model_copy(update={"terms": terms})
    if resolved_kv is not None and resolved_kv[1]:
        est = est.model_copy(update={"kv_cache_dtype_from_checkpoint": True})
    if architecture:
        est = est.model_copy(update={"warnings": [*architecture, *est.warnings]})
    quant = model.quantization
    if quant is not None and quant.kv_cache_dtype == "nvfp4" and serve.kv_cache_dtype == "auto":
        note = Text(
            "The checkpoint declares an NVFP4 KV cache, which vLLM uses under --kv-cache-dtype auto where a "
            "backend takes it (FlashInfer on SM100); the planner does not size NVFP4 KV and shows the model dtype."
        )
        est = est.model_copy(update={"warnings": [*est.warnings, note]})
    if model.model_type in UNSIZED_CACHE_MODEL_TYPES and est.attention_backend not in SIZED_BACKENDS:
        note = Text(
            "{model_type}: vLLM {version} sizes this model's cache with rules the planner does not model yet "
            "({what}); the KV numbers shown are those of plain attention layers and are not exact.",
            model_type=model.model_type,
            version=rules.version,
            what=UNSIZED_CACHE_MODEL_TYPES[model.model_type],
        )
        est = est.model_copy(update={"warnings": [*est.warnings, note]})
    return _as_requested(est, version)


# Model types whose 0.33.0 cache the planner knows it does not size (vllm/models/deepseek_v4: compressed
# KV per compress_ratios with its own block sizes)
SIZED_BACKENDS = frozenset({"FLASHMLA_SPARSE_DSV4", "ASCEND_DSA"})  # kv_dsv4.py (0.33.0), kv_dsv4_ascend.py
UNSIZED_CACHE_MODEL_TYPES = {
    "deepseek_v4": Text("a compressed cache per layer (compress_ratios), not a sliding window"),
}


def _as_requested(est: Estimate, version: ResolvedVersion) -> Estimate:
    """The estimate under the version the user gave (its bracket's rules did the work)."""
    if version.requested == est.vllm_version and not version.note:
        return est
    warnings = [version.note, *est.warnings] if version.note else est.warnings
    return est.model_copy(update={"vllm_version": version.requested, "warnings": warnings})


def _auto_fit(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, rules: VersionRules, target: int | None
) -> Estimate:
    """`--max-model-len auto`: probe the default length, then plan the largest one the pool holds.

    E.g. Llama-3.1-8B on one H100 (0.33.0): at utilization 0.92 the full 131,072 tokens fit (54.77 GiB of
    KV); at 0.3 the pool is 5.73 GiB and the length is reduced from 131,072 to 46,896.
    """

    def at(length: int) -> Estimate:
        changed = serve.model_copy(update={"max_model_len": length})
        return single_estimate(
            model=model, device=device, serve=changed, rules=rules, target_concurrency=target
        )

    full = default_max_model_len(model=model, rules=rules)  # -1 starts from the default length
    probe = at(full)
    if probe.error_kind in (ErrorKind.STARTUP_FREE_MEMORY, ErrorKind.LOAD_OOM):
        return probe
    largest = probe.estimated_max_model_len or 0
    if largest <= 0:
        text = vllm_text_printed.AUTOFIT_FAILED_TEXT
        return probe.model_copy(
            update={
                "fits": False,
                "error": text,
                "verdict": "load_oom" if probe.verdict == "load_oom" else "budget_bound",
                "log_lines": [*probe.log_lines[:-1], text] if probe.error else [*probe.log_lines, text],
            }
        )
    length = min(largest, full)
    line = vllm_text_printed.autofit_line(
        rules=rules, full=full, length=length, kv_cache_bytes=probe.kv_cache_bytes
    )
    fitted = at(length)
    return fitted.model_copy(update={"log_lines": [line, *fitted.log_lines]})
