"""Each step's speed effect, and which of the layouts that meet the target is cheapest to run.

Speed is app.core.perf.predict's :func:`performance` at the planner's speed workload (clients x input
/ output tokens), through the engine's cache: one prediction per configuration per recommendation.
Cost is device-hours per million output tokens (app.core.perf.cost, the arithmetic fleet sizing
prices with): one replica's devices over its throughput at that same workload.

The layouts compared are the final configuration and at most two others the table's own levers
reach: the configuration before the prune pass (it met the target), and the trade between the KV
dtype and tensor parallelism — fp8 KV at the final TP swapped for the model's KV dtype at the
smallest larger TP that meets the target (TP rule candidates), or the other way round.
"""

from __future__ import annotations

from app.core.errors import PlannerError
from app.core.perf.cost import device_hours_per_million_output_tokens
from app.core.perf.predict import Basis, Performance
from app.core.recommend.engine import Context, Engine
from app.core.recommend.kv_dtype import dtype_candidates, dtype_check
from app.core.recommend.model import Cheapest, LayoutCost, SpeedPoint, StepSpeed
from app.core.recommend.parallel import tp_candidates
from app.core.specs import ServeConfig
from app.core.text import SEMICOLON, Text, TextList

MAX_ALTERNATIVES = 2  # the final configuration against at most two others (the brief: keep it simple)
# Device-hours within 5 % of the cheapest count as a tie, won by the recommended configuration: two
# layouts of one model on one device share most of the performance model's error, but not below this.
COST_TIE_FRACTION = 0.05


# --- one configuration ----------------------------------------------------------------------------------


def _point(perf: Performance) -> SpeedPoint:
    """The step table's few figures of one prediction: SpeedPoint's fields read from ``perf`` by name."""
    return SpeedPoint.model_validate(perf, from_attributes=True)


def not_modelled(serve: ServeConfig) -> str | None:
    """Why performance() cannot price this configuration, or None.

    It has no term for a speculative draft's accepted tokens. Weights streamed from host memory
    (--cpu-offload-gb) it prices as PCIe traffic every step (physics.host_weight_bytes; extrapolated,
    no measured offload run), so an offload step shows its slowdown with that basis.
    """
    if serve.speculative_config is not None:
        return Text("speculative decoding is not in the performance model")
    return None


def speed_point(eng: Engine, serve: ServeConfig) -> tuple[SpeedPoint | None, str | None]:
    """The configuration's speed, or None and why (it does not start; the workload does not fit; the
    performance model does not cover it)."""
    if (why := not_modelled(serve)) is not None:
        return None, why
    try:
        est = eng.at(serve)
    except PlannerError:
        return None, Text("vLLM refuses this configuration")
    if not est.fits or est.num_gpu_blocks <= 0:
        return None, Text("does not start")
    try:
        return _point(eng.speed(serve)), None
    except PlannerError as exc:
        return None, exc.message


def _basis(*points: SpeedPoint | None) -> Basis | None:
    present = [p for p in points if p is not None]
    if not present:
        return None
    return "calibrated" if all(p.basis == "calibrated" for p in present) else "extrapolated"


def step_speed(eng: Engine, *, before: ServeConfig, after: ServeConfig | None) -> StepSpeed | None:
    """before -> after of one step (``after`` None: the step tried no configuration, so no change)."""
    if eng.workload is None:
        return None
    old, old_note = speed_point(eng, before)
    if after is None or after == before:
        return StepSpeed(
            before=old, after=old, basis=_basis(old), changed=False, before_note=old_note, after_note=old_note
        )
    new, new_note = speed_point(eng, after)
    return StepSpeed(
        before=old,
        after=new,
        basis=_basis(old, new),
        changed=True,
        before_note=old_note,
        after_note=new_note,
    )


# --- the cheapest layout meeting the target -------------------------------------------------------------


def _meets(eng: Engine, serve: ServeConfig) -> bool:
    try:
        return eng.meets(serve)
    except PlannerError:
        return False


def _side(ctx: Context, serve: ServeConfig) -> Context:
    """The rules' view of another configuration (same room: node size, nodes, fp8 allowed)."""
    return Context(
        engine=ctx.engine,
        serve=serve,
        devices_per_node=ctx.devices_per_node,
        nodes=ctx.nodes,
        allow_fp8_kv=ctx.allow_fp8_kv,
        preference=ctx.preference,
    )


def kv_tp_trade(ctx: Context, *, start: ServeConfig) -> ServeConfig | None:
    """The final configuration with the KV-dtype lever traded for the TP lever (or back), if that meets too.

    Quantized KV kept: the start's KV dtype at the smallest larger TP that meets the target. KV dtype
    kept and TP raised: the one-byte KV dtype at the smallest TP from the start's that meets it.
    """
    eng, final = ctx.engine, ctx.serve
    if final.kv_cache_dtype != start.kv_cache_dtype:
        options = tp_candidates(_side(ctx, final.model_copy(update={"kv_cache_dtype": start.kv_cache_dtype})))
    elif final.tensor_parallel_size > start.tensor_parallel_size:
        low = _side(ctx, final.model_copy(update={"tensor_parallel_size": start.tensor_parallel_size}))
        if dtype_check(low) is not None:
            return None
        quantized = dtype_candidates(low)[0]
        options = [quantized] + [
            c
            for c in tp_candidates(_side(ctx, quantized))
            if c.tensor_parallel_size < final.tensor_parallel_size
        ]
    else:
        return None
    return next((c for c in options if _meets(eng, c)), None)


def layout_text(eng: Engine, serve: ServeConfig) -> str:
    """ "TP 4, fp8 KV cache" (auto: the model's dtype; PP and DP only when above 1)."""
    kv: str = serve.kv_cache_dtype
    if kv == "auto":  # the KV cache takes the model's dtype (--dtype when given)
        named: dict[str, str] = {"auto": eng.model.torch_dtype, "half": "float16"}
        kv = named.get(serve.dtype, serve.dtype)
    text = Text("TP {tp}", tp=serve.tensor_parallel_size)
    if serve.pipeline_parallel_size > 1:
        text += Text(" × PP {pp}", pp=serve.pipeline_parallel_size)
    if serve.data_parallel_size > 1:
        text += Text(" × DP {dp}", dp=serve.data_parallel_size)
    return text + Text(", {kv} KV cache", kv=kv)


def _cost(eng: Engine, serve: ServeConfig, *, recommended: bool) -> LayoutCost | None:
    point, _why = speed_point(eng, serve)
    if point is None or point.output_tokens_per_s.expected <= 0:
        return None
    devices = serve.ranks * serve.data_parallel_size
    tokens_per_s = point.output_tokens_per_s.expected
    return LayoutCost(
        serve=serve,
        devices=devices,
        output_tokens_per_s=tokens_per_s,
        device_hours_per_million_output_tokens=device_hours_per_million_output_tokens(
            devices=devices, output_tokens_per_s=tokens_per_s
        ),
        basis=point.basis,
        recommended=recommended,
        calibrated_runs=point.calibrated_runs,
    )


def cheapest(ctx: Context, *, start: ServeConfig, unpruned: ServeConfig) -> Cheapest | None:
    """Which layout meeting the target costs the fewest device-hours for the same load; None when the
    final configuration does not meet the target, no alternative does, or speeds are missing."""
    eng, final, workload = ctx.engine, ctx.serve, ctx.engine.workload
    if workload is None or not _meets(eng, final):
        return None
    others: list[ServeConfig] = []
    for option in (unpruned, kv_tp_trade(ctx, start=start)):
        if option is not None and option != final and option not in others and _meets(eng, option):
            others.append(option)
    costs = [
        c
        for serve, recommended in ((final, True), *((o, False) for o in others[:MAX_ALTERNATIVES]))
        if (c := _cost(eng, serve, recommended=recommended)) is not None
    ]
    if len(costs) < 2 or not costs[0].recommended:
        return None  # the final configuration has no speed, or nothing to compare it with
    recommended = costs[0]
    low = min(c.device_hours_per_million_output_tokens for c in costs)
    tie = recommended.device_hours_per_million_output_tokens <= low * (1 + COST_TIE_FRACTION)
    costs.sort(key=lambda c: (c.device_hours_per_million_output_tokens, not c.recommended))
    if tie:
        costs.remove(recommended)
        costs.insert(0, recommended)
    best = costs[0]
    against = TextList(
        SEMICOLON,
        [
            Text(
                "{hours:.2f} for the recommended {layout}",
                hours=c.device_hours_per_million_output_tokens,
                layout=layout_text(eng, c.serve),
            )
            if c.recommended
            else Text(
                "{hours:.2f} for {layout}",
                hours=c.device_hours_per_million_output_tokens,
                layout=layout_text(eng, c.serve),
            )
            for c in costs[1:]
        ],
    )
    common = {
        "count": len(costs),
        "layout": layout_text(eng, best.serve),
        "hours": best.device_hours_per_million_output_tokens,
        "against": against,
        "concurrency": workload.concurrency,
        "input_tokens": workload.input_tokens,
        "output_tokens": workload.output_tokens,
        "tie": COST_TIE_FRACTION,
    }
    if best.recommended and best.device_hours_per_million_output_tokens > low:
        sentence = Text(
            "Of {count} layouts that meet the target, the recommended one ({layout}) is within {tie:.0%} of the cheapest to run (a tie for the performance model): {hours:.2f} device-hours per million output tokens at {concurrency} clients of {input_tokens:,} in / {output_tokens:,} out, against {against}.",
            **common,
        )
    elif best.recommended:
        sentence = Text(
            "Of {count} layouts that meet the target, the recommended one ({layout}) is the cheapest to run: {hours:.2f} device-hours per million output tokens at {concurrency} clients of {input_tokens:,} in / {output_tokens:,} out, against {against}.",
            **common,
        )
    else:
        sentence = Text(
            "Cheapest to run of {count} layouts that meet the target: {layout}, {hours:.2f} device-hours per million output tokens at {concurrency} clients of {input_tokens:,} in / {output_tokens:,} out, against {against}.",
            **common,
        )
        if eng.at(best.serve).kv_dtype_bytes_per_element < eng.at(final).kv_dtype_bytes_per_element:
            sentence += Text(" Its quantized KV cache costs accuracy (see the KV cache step).")
    return Cheapest(
        layouts=costs, serve=best.serve, recommended_is_cheapest=best.recommended, sentence=sentence
    )
