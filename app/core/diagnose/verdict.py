"""The verdict and the whole diagnosis: failures first, then step 4's cause, then the metrics."""

from __future__ import annotations

import json

from app.core import catalog, deadline
from app.core.diagnose.basics import clip
from app.core.diagnose.case import Case, recover_case, replay_version
from app.core.diagnose.comparison import (
    comparison,
)
from app.core.diagnose.model import (
    Diagnosis,
    DiagnosisFacts,
    Overall,
)
from app.core.diagnose.steps import (
    cause_of,
    largest_fitting,
    step_budget,
    step_cause,
    step_demand,
    step_fallbacks,
    step_kv_lines,
    trial_as_configured,
    trial_half_length,
    trial_one_sequence,
)
from app.core.errors import PlannerError
from app.core.logs import LogFacts, MetricsFacts, parse_metrics, parse_startup_log
from app.core.specs import GIB
from app.core.text import N_, Text
from app.core.verdicts import remedies
from app.core.versions import resolve_version

# --------------------------------------------------------------------------------------------
# the whole diagnosis


# DiagnosisFacts names the log's facts as LogFacts does; these two are the case's own reading
_FROM_CASE = frozenset({"model", "max_model_len"})
_FROM_LOG = frozenset(DiagnosisFacts.model_fields) - _FROM_CASE


def _facts(case: Case) -> DiagnosisFacts:
    """The log's facts under the estimator's names: the model as the case found it (a path in the paste
    too), and max_model_len only when positive."""
    return DiagnosisFacts(
        **case.facts.model_dump(include=set(_FROM_LOG)),
        model=case.model_name,
        max_model_len=case.max_model_len,
    )


def _same_rules(printed: str, replayed: str) -> bool:
    try:
        return resolve_version(printed).rules.version == replayed
    except PlannerError:
        return False


def _version_note(case: Case, inputs: dict[str, str]) -> str | None:
    printed, linked = case.facts.vllm_version, inputs.get("vllm_version")
    if printed is None or linked is None or printed == linked:
        return None
    return replay_version(case.facts)[1] or None


def _planner_inputs(case: Case) -> dict[str, str]:
    """Planner query parameters (the permalink's names) for the recovered configuration."""
    out: dict[str, str] = {}
    # the catalog id the log's model resolved to; else the model as the log names it, so the planner
    # says it does not know it and asks for its config.json (never the planner's default model); a log
    # that names none gives no "model" and the doctor page asks for it (app.web.doctor.views)
    model = case.model_key or case.model_name
    if model is not None:
        out["model"] = model
    named = case.device is not None and case.device_source not in ("custom", "ambiguous")
    if case.device is not None and named:
        out["device"] = case.device.id
    printed = case.facts.device_total_bytes
    catalog_total = catalog.find_device(case.device.id).memory_total_bytes if case.device and named else None
    if printed is not None and printed != catalog_total:
        # the runtime's own total beats the catalog's typical figure (H100: 79.19 printed vs 79.1)
        out["device_memory_gib"] = f"{printed / GIB:.2f}"
    # the release the log printed when the planner plans it under the rules the doctor replays (a printed
    # 0.10.1.1 is "vLLM 0.10.1.1 (rules of 0.10.2)" there); else the replayed release (a V0 run of a V1
    # release), and the page says why (app.web.doctor.views.planner_version_note)
    version_for_link = replay_version(case.facts)[0]
    printed_version = case.facts.vllm_version
    if printed_version and version_for_link and _same_rules(printed_version, version_for_link):
        version_for_link = printed_version
    if version_for_link is not None:
        out["vllm_version"] = version_for_link
    if case.serve is not None:
        # every flag the prediction used, so the planner link plans the same configuration (extras too)
        serve = case.serve.model_dump(exclude_defaults=True, exclude_none=True)
        for name, value in serve.items():
            if isinstance(value, dict):
                out[name] = json.dumps(value, separators=(",", ":"))
            else:
                out[name] = str(value).lower() if isinstance(value, bool) else str(value)
    if case.target_given:
        out["target_concurrency"] = str(case.target)
    return out


# where a failure with no recognised cause happened, read from the traceback's frames
FAILURE_STAGE_TEXT: dict[str, str] = {
    "load": N_("while loading the weights"),
    "profile": N_("during the profile run, before the KV pool was sized"),
    "sized": N_("after the KV pool was sized (allocating it or capturing graphs)"),
    "kv_alloc": N_("while allocating the KV cache"),
    "graph": N_("while capturing CUDA graphs"),
}
# vllm-ascend captures ACL graphs (torch_npu's aclgraph) where vLLM captures CUDA graphs
NPU_STAGE_TEXT: dict[str, str] = {"graph": N_("while capturing ACL graphs")}


# the failures that are the device's, not the budget's (app.core.logs ErrorKind)
DEVICE_FAULT_TEXT: dict[str, str] = {
    "device_fault": N_(
        "a device fault (illegal memory access, GPU hang or a crash with a core dump) — a kernel, driver or firmware problem"
    ),
    "npu_error": N_("an Ascend operator or ACL call failed — a CANN / torch_npu / kernel problem"),
    "graph_refused": N_(
        "vLLM refused the CUDA-graph or compilation settings (cudagraph_mode, the capture sizes or a --compilation-config key) — change the flag the error names"
    ),
}


def _headline(case: Case, verdict: Overall, metrics: MetricsFacts | None) -> str:
    length = case.max_model_len
    s = f"{length:,}" if length else "max_model_len"
    reached = case.reached_concurrency()
    held = {"reached": reached, "s": s, "target": case.target}  # what the pool holds, for either side
    if verdict == "fits":
        if reached is not None:
            return Text(
                "Fits: the KV pool holds {reached:.2f} requests of {s} tokens (target {target}).", **held
            )
        return Text("Fits: the KV pool is not the limit.")
    if verdict == "s_bound":
        est = case.facts.estimated_max_model_len
        fit = Text("; about {est:,} tokens fit", est=est) if est else ""
        return Text("S-side: max_model_len {s} is too long for this KV pool{fit}.", s=s, fit=fit)
    if verdict == "n_bound" and case.facts.error_kind == "mamba_blocks":
        return Text(
            "N-side: vLLM refused --max-num-seqs {seqs}: the pool has {blocks} Mamba cache blocks, and with full CUDA graphs each decode sequence needs one — lower --max-num-seqs to {blocks} or less, use --enforce-eager, or give the pool more memory.",
            seqs=_count(case.facts.max_num_seqs),
            blocks=_count(case.facts.num_gpu_blocks),
        )
    if verdict == "n_bound":
        if reached is not None:
            return Text(
                "N-side: it starts, but the pool holds {reached:.2f} requests of {s} tokens, below the target {target}.",
                **held,
            )
        if metrics is not None and metrics.verdict == "kv_bound":
            return Text("N-side: the KV pool is full and requests wait — concurrency is bound by the pool.")
        return Text("N-side: one sequence fits, the target concurrency does not.")
    error = clip(case.facts.error or "")
    if verdict == "budget_bound" and case.facts.error_kind == "kv_alloc_oom":
        return Text(
            "Budget: out of memory while allocating the KV pool vLLM had sized — memory outside its accounting (another process, the runtime) holds the difference, and no shorter context changes the pool: {error}",
            error=error,
        )
    if verdict == "budget_bound":
        return Text(
            "Budget: weights and activation leave (almost) no KV pool — no useful context length starts."
        )
    if verdict == "load_oom":
        return Text("Out of memory while loading the weights: {error}", error=error)
    npu = case.facts.is_ascend or case.facts.device_type == "NPU"
    if verdict == "graph_oom" and npu:
        return Text("Out of memory while capturing ACL graphs: {error}", error=error)
    if verdict == "graph_oom":
        return Text("Out of memory while capturing CUDA graphs: {error}", error=error)
    stage_texts = {**FAILURE_STAGE_TEXT, **NPU_STAGE_TEXT} if npu else FAILURE_STAGE_TEXT
    stage = stage_texts.get(case.facts.failure_stage or "")
    fault = DEVICE_FAULT_TEXT.get(case.facts.error_kind or "")
    if verdict == "failed" and fault is not None:
        return Text(
            "The start-up failed {stage}: {fault} ({error}) — not a memory budget; more memory or a shorter context does not fix it.",
            stage=Text(stage) if stage is not None else Text("before it was ready"),
            fault=Text(fault),
            error=error,
        )
    if verdict == "failed" and stage is not None:
        return Text(
            "The start-up failed {stage}: {error} — not a memory cause the doctor recognises; the last line of the traceback names the error.",
            stage=Text(stage),
            error=error,
        )
    if verdict == "failed":
        return Text(
            "The start-up failed: {error} — the log does not show a KV, weight or graph cause; paste the lines before the first traceback.",
            error=error,
        )
    if case.facts.recognised_lines:
        return Text(
            "Unknown: the log was read but stops before it says whether vLLM started (no KV-cache line, no error); paste it up to 'init engine' or to the error."
        )
    return Text(
        "Nothing recognised: paste the vllm serve start-up log (from 'vLLM API server version' to 'init engine', or to the error) and/or a /metrics scrape."
    )


def _count(value: int | None) -> str:
    return f"{value:,}" if value is not None else "?"


def _remedies(case: Case, verdict: Overall) -> list[str]:
    largest = case.facts.estimated_max_model_len
    if case.facts.error_kind == "mamba_blocks":
        largest = case.facts.num_gpu_blocks  # the most sequences that start
    if verdict == "s_bound" and largest is None:
        largest, _, _ = largest_fitting(case)
    return remedies(verdict, largest=f"{largest:,}" if largest else None, cause=case.facts.error_kind)


def _apply_metrics(
    verdict: Overall, metrics: MetricsFacts | None, has_log: bool, notes: list[str]
) -> Overall:
    if metrics is None:
        return verdict
    if metrics.verdict == "kv_bound" and verdict in ("fits", "unknown"):
        if has_log:
            notes.append(
                Text("the log fits the target, but the metrics show a full KV pool with requests waiting")
            )
        return "n_bound"
    if verdict == "unknown" and not has_log and metrics.kv_usage is not None:
        return "fits"
    return verdict


def diagnose(
    *,
    log_text: str | None,
    metrics_text: str | None,
    target_concurrency: int | None = None,
    device_hint: str | None = None,
) -> Diagnosis:
    """The seed's five-step diagnosis of a pasted start-up log and/or Prometheus scrape."""
    log_text = log_text or ""
    deadline.check()  # the request's CPU budget (app.core.deadline) is read in every phase below too
    facts = parse_startup_log(log_text) if log_text.strip() else LogFacts()
    metrics = parse_metrics(metrics_text) if metrics_text and metrics_text.strip() else None
    pasted_metrics_as_log = False
    if facts.recognised_lines == 0 and log_text.strip() and metrics is None:
        as_metrics = parse_metrics(log_text)
        if as_metrics.samples_read:
            metrics, pasted_metrics_as_log = as_metrics, True
    if metrics is not None and metrics.samples_read == 0:
        metrics = None
    deadline.check()
    case = recover_case(log_text, facts, target_concurrency, device_hint)
    deadline.check()
    if pasted_metrics_as_log:
        case.notes.append(Text("the paste is a Prometheus scrape, so it was read as metrics"))
    has_log = facts.recognised_lines > 0
    largest = largest_fitting(case)
    trials = [trial_as_configured(case), trial_half_length(case, largest), trial_one_sequence(case)]
    cause = cause_of(case, trials, largest[0]) if has_log else "unknown"
    verdict = _apply_metrics(cause, metrics, has_log, case.notes)
    deadline.check()
    steps = [
        step_kv_lines(case),
        step_budget(case),
        step_demand(case),
        step_cause(case, trials, cause),
        step_fallbacks(case),
    ]
    return Diagnosis(
        facts=_facts(case),
        verdict=verdict,
        headline=_headline(case, verdict, metrics),
        remedies=_remedies(case, verdict),
        steps=steps,
        trials=trials,
        metrics=metrics,
        prediction=case.prediction,
        comparison=comparison(case),
        model_id=case.model.name if case.model is not None else None,
        device_id=case.device.id if case.device is not None else None,
        device_source=case.device_source,
        device_reasoning=case.device_reasoning,
        device_very_total=case.device_very_total,
        vllm_version_used=case.prediction.vllm_version if case.prediction is not None else None,
        target_concurrency=case.target,
        planner_inputs=(inputs := _planner_inputs(case)),
        planner_version_note=_version_note(case, inputs),
        recognised=has_log or metrics is not None,
        notes=case.notes,
    )
