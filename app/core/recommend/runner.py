"""Runs the table from a configuration toward the target, then the prune pass that undoes steps no longer needed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.command import render_serve_command
from app.core.errors import PlannerError
from app.core.perf.cluster import ClusterFit
from app.core.perf.schedule import Workload
from app.core.recommend.bisection import bisection_for
from app.core.recommend.engine import Context, Engine, Rule, changes_text, explain, progress_text
from app.core.recommend.model import Preference, Recommendation, Search, Step
from app.core.recommend.rules import RULES
from app.core.recommend.speed import cheapest, step_speed
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.text import COMMA, N_, SEMICOLON, Plural, Text, TextList

# --- the runner ---------------------------------------------------------------------------------------


@dataclass
class _Choice:
    chosen: ServeConfig | None
    tried: ServeConfig | None  # the best valid candidate, applied or not
    refusals: list[str]


def _valid(eng: Engine, serve: ServeConfig, refusals: list[str]) -> bool:
    try:
        eng.at(serve)
        eng.at_len(serve, eng.target_len)
    except PlannerError as exc:
        refusals.append(Text("{field}: {message}", field=exc.field, message=exc.message))
        return False
    return True


def _choose(eng: Engine, search: Search, candidates: Sequence[ServeConfig], current: ServeConfig) -> _Choice:
    refusals: list[str] = []
    valid = [c for c in candidates if _valid(eng, c, refusals)] if search != "monotone" else list(candidates)
    if search == "always":
        first = valid[0] if valid else None
        return _Choice(first, first, refusals)
    if search == "monotone":
        # strength grows along the list: binary-search the first that meets the target
        lo, hi = 0, len(valid)
        while lo < hi:
            mid = (lo + hi) // 2
            if _valid(eng, valid[mid], refusals) and eng.meets(valid[mid]):
                hi = mid
            else:
                lo = mid + 1
        if lo < len(valid):
            return _Choice(valid[lo], valid[lo], refusals)
        valid = [c for c in valid[-1:] if _valid(eng, c, refusals)]
    else:
        for c in valid:
            if eng.meets(c):
                return _Choice(c, c, refusals)
    if not valid:
        return _Choice(None, None, refusals)
    best = max(valid, key=eng.score)  # max keeps the first of equals: the weaker lever
    chosen = best if eng.score(best) > eng.score(current) else None
    return _Choice(chosen, best, refusals)


def _run_rule(rule: Rule, ctx: Context) -> Step | None:
    eng = ctx.engine
    if rule.side and not rule.relevant(ctx):
        return None
    current = ctx.serve
    before = eng.snapshot(current)

    def skipped(reason: str, tried: ServeConfig | None = None) -> Step:
        return Step(
            key=rule.key,
            label=rule.label,
            applied=False,
            reason=reason,
            effect=explain(rule.effect, ctx, tried),
            cost=explain(rule.cost, ctx, tried),
            before=before,
            after=before,
            serve=current,
            speed=step_speed(eng, before=current, after=tried),
        )

    reason = rule.check(ctx)
    if reason is None and rule.search != "always" and before.meets_target:
        reason = Text("Not needed: the target is already met.")
    if reason is not None:
        return skipped(reason)

    def skipped_after(why: str, tried: ServeConfig) -> Step:
        """Skipped after trying ``tried``: ``why`` (a msgid) names its changes {ctx} and progress {ctx2}."""
        text = Text(why, ctx=changes_text(ctx, current, tried), ctx2=progress_text(ctx, tried))
        return skipped(text, tried)

    choice = _choose(eng, rule.search, rule.candidates(ctx), current)
    if choice.chosen is not None and rule.must_meet and not eng.meets(choice.chosen):
        return skipped_after(
            N_(
                "even {ctx} does not reach the target ({ctx2}), and this lever is only worth its cost when it does."
            ),
            choice.chosen,
        )
    if choice.chosen is None:
        if choice.tried is None:
            refused = TextList(SEMICOLON, choice.refusals) if choice.refusals else Text("no candidate")
            return skipped(Text("vLLM would refuse it ({refused}).", refused=refused))
        return skipped_after(N_("{ctx} does not move toward the target ({ctx2})."), choice.tried)
    step = Step(
        key=rule.key,
        label=rule.label,
        applied=True,
        reason=Text(
            "{changes}: {progress}.",
            changes=changes_text(ctx, current, choice.chosen),
            progress=progress_text(ctx, choice.chosen),
        ),
        effect=explain(rule.effect, ctx, choice.chosen),
        cost=explain(rule.cost, ctx, choice.chosen),
        before=before,
        after=eng.snapshot(choice.chosen),
        serve=choice.chosen,
        speed=step_speed(eng, before=current, after=choice.chosen),
    )
    ctx.serve = choice.chosen
    return step


def recommend(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    vllm_version: str | None,
    target_max_model_len: int,
    target_concurrency: int,
    devices_per_node: int | None = None,
    nodes: int = 1,
    allow_fp8_kv: bool = True,
    preference: Preference = "throughput",
    workload: Workload | None = None,
    cluster: ClusterFit | None = None,
) -> Recommendation:
    """Walk :data:`RULES` in order from ``serve`` toward S* x N*; raises PlannerError for unusable input.

    With a ``workload`` (the planner's speed clients), every step carries its speed effect and the
    recommendation says which layout meeting the target is cheapest to run (app.core.recommend.speed).
    """
    asked_len = target_max_model_len
    if asked_len > model.max_model_len_derived and not serve.allow_long_max_model_len:
        # vLLM refuses S* above the model's maximum (the length refusal): the walk aims at the maximum
        target_max_model_len = model.max_model_len_derived
    eng = Engine(  # refuses a target below 1 token or 1 sequence
        model=model,
        device=device,
        vllm_version=vllm_version,
        target_len=target_max_model_len,
        target_conc=target_concurrency,
        workload=workload,
        cluster=cluster,
    )
    if nodes < 1:
        raise PlannerError("nodes", Text("must be at least 1"))
    per_node = devices_per_node if devices_per_node is not None else device.typical_node_devices
    if per_node < 1:
        raise PlannerError("devices_per_node", Text("must be at least 1"))
    eng.at(serve)  # the starting point itself must be something vLLM accepts
    if serve.max_model_len is None:
        # the same configuration, with the model's own maximum written out so the command states it
        serve = serve.model_copy(update={"max_model_len": model.max_model_len_derived})
    ctx = Context(
        engine=eng,
        serve=serve,
        devices_per_node=per_node,
        nodes=nodes,
        allow_fp8_kv=allow_fp8_kv,
        preference=preference,
    )
    steps = [step for rule in RULES if (step := _run_rule(rule, ctx)) is not None]
    unpruned = ctx.serve
    steps = _prune(ctx, steps, start=serve)
    final = ctx.serve
    snap = eng.snapshot(final)
    best_n = math.floor(snap.concurrency_at_target_len)
    impossible = None
    if not snap.meets_target:
        where = Plural(
            nodes,
            N_("{devices} × {name} (one node of {per_node})"),
            N_("{devices} × {name} ({nodes} nodes of {per_node})"),
            devices=per_node * nodes,
            name=device.name,
            nodes=nodes,
            per_node=per_node,
        )
        impossible = Text(
            "{target_concurrency} sequences of {target_max_model_len:,} tokens do not fit on {where} with the steps allowed. Nearest reachable: {best_n} sequences at {target_max_model_len:,} tokens, or {largest_len_at_target_concurrency:,} tokens at {target_concurrency} sequences. Add nodes, use a device with more memory, or relax the target.",
            target_concurrency=target_concurrency,
            target_max_model_len=target_max_model_len,
            where=where,
            best_n=best_n,
            largest_len_at_target_concurrency=snap.largest_len_at_target_concurrency,
        )
    warnings = _length_warnings(model, asked_len=asked_len, aimed_len=target_max_model_len)
    return Recommendation(
        target_max_model_len=target_max_model_len,
        target_concurrency=target_concurrency,
        preference=preference,
        steps=steps,
        final=final,
        meets_target=snap.meets_target,
        impossible_reason=impossible,
        best_len_at_target_concurrency=snap.largest_len_at_target_concurrency,
        best_concurrency_at_target_len=best_n,
        command=render_serve_command(model=model.name, serve=final, vllm_version=vllm_version),
        bisection=bisection_for(eng, serve),
        warnings=warnings,
        speed_workload=workload,
        calibrated_runs=cluster.runs if cluster is not None and workload is not None else 0,
        calibrated_figures=cluster.measured_groups() if cluster is not None and workload is not None else [],
        cheapest=cheapest(ctx, start=serve, unpruned=unpruned),
    )


def _length_warnings(model: ModelSpec, *, asked_len: int, aimed_len: int) -> list[str]:
    """S* above the model's derived maximum: vLLM needs VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (without it the
    walk aims at the maximum)."""
    if asked_len <= model.max_model_len_derived:
        return []
    text = Text(
        "S* {target_max_model_len:,} is above {name}'s derived maximum {max_model_len_derived:,}; vLLM needs VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.",
        target_max_model_len=asked_len,
        name=model.name,
        max_model_len_derived=model.max_model_len_derived,
    )
    if aimed_len != asked_len:
        text += Text(" Without it, the recommendation aims at {maximum:,}.", maximum=aimed_len)
    return [text]


# --- the prune pass -----------------------------------------------------------------------------------

# Levers whose cost is worth undoing once later steps meet the target, costliest first: text-only mode
# and fewer LoRA slots take away what the deployment offers, offload slows every token, fp8 KV costs
# accuracy, no draft costs the speculative speed-up (outputs unchanged), each TP/PP rank is a device, a
# higher utilization risks an OOM, and smaller prefill batches cost prefill throughput. The rows that
# set the target itself (S, N) stay.
PRUNE_ORDER: tuple[str, ...] = (
    "limit_mm_per_prompt",
    "lora",
    "offload",
    "kv_cache_dtype",
    "speculative_config",
    "pipeline_parallel_size",
    "tensor_parallel_size",
    "gpu_memory_utilization",
    "max_num_batched_tokens",
    "enable_chunked_prefill",
)
RULE_FIELDS: dict[str, tuple[str, ...]] = {rule.key: rule.fields for rule in RULES}


def _prune(ctx: Context, steps: list[Step], *, start: ServeConfig) -> list[Step]:
    """After the target is met, undo earlier applied steps that are no longer needed, costliest first.

    A step's flags go back to their value before it; it stays undone when the final configuration
    still meets the target (and vLLM accepts it). The step stays in the list, marked undone, with why.
    """
    eng = ctx.engine
    if not eng.meets(ctx.serve):
        return steps
    applied = [i for i, step in enumerate(steps) if step.applied]
    before_of = {i: (steps[applied[k - 1]].serve if k else start) for k, i in enumerate(applied)}
    rank = {key: n for n, key in enumerate(PRUNE_ORDER)}
    order = sorted((i for i in applied if steps[i].key in rank), key=lambda i: rank[steps[i].key])
    out = list(steps)
    for i in order:
        step = steps[i]
        later = [j for j in applied if j > i and not out[j].undone]
        if not later:
            continue  # the last applied step is the one that met the target
        fields = RULE_FIELDS[step.key]
        if any(set(fields) & set(RULE_FIELDS[out[j].key]) for j in later):
            continue  # a later step set the same flag: undoing this one would undo that one too
        reverted = ctx.serve.model_copy(update={f: getattr(before_of[i], f) for f in fields})
        if reverted == ctx.serve or not _valid(eng, reverted, []) or not eng.meets(reverted):
            continue
        once = TextList(COMMA, [changes_text(ctx, before_of[j], out[j].serve) for j in later])
        out[i] = step.model_copy(
            update={
                "applied": False,  # not in the final configuration: the page and the API must not say applied
                "undone": True,
                "undone_reason": Text(
                    "Not needed once {later}: undone ({changes}); the target is still met.",
                    later=once,
                    changes=changes_text(ctx, ctx.serve, reverted),
                ),
            }
        )
        ctx.serve = reverted
    return out
