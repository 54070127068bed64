"""The seed's fourth diagnosis step: would it run with --max-model-len halved? with one sequence? neither?"""

from __future__ import annotations

from typing import Literal

from app.core.estimate import estimate
from app.core.recommend.engine import Engine, gib_text
from app.core.recommend.model import Bisection, BisectionProbe
from app.core.result import ErrorKind, Estimate
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.text import N_, Plural, Text

# --- bisection (seed, diagnosis step 4) ----------------------------------------------------------------


def _probe(
    eng: Engine, name: Literal["as_given", "half_len", "one_seq"], serve: ServeConfig, demand: int
) -> BisectionProbe:
    est = eng.at(serve)
    return BisectionProbe(
        name=name,
        max_model_len=est.max_model_len,
        max_num_seqs=est.max_num_seqs,
        demand=demand,
        starts=est.fits,
        runs=eng.holds(est, demand),
        max_concurrency=est.max_concurrency,
        kv_tokens=est.kv_tokens,
        kv_cache_bytes=est.kv_cache_bytes,
        estimated_max_model_len=est.estimated_max_model_len or 0,
        error=est.error,
    )


def bisection_for(eng: Engine, serve: ServeConfig) -> Bisection:
    """The seed's three experiments as evidence; the verdict is the planner's own (estimate's
    app.core.verdicts.classify at the target concurrency), so the recommendation never names another
    cause than the verdict box above it."""
    demand = eng.target_conc
    full = eng.at(serve)
    as_given = _probe(eng, "as_given", serve, demand)
    half = _probe(
        eng, "half_len", serve.model_copy(update={"max_model_len": max(1, full.max_model_len // 2)}), demand
    )
    one = _probe(eng, "one_seq", serve.model_copy(update={"max_num_seqs": 1}), 1)
    planned = estimate(
        model=eng.model,
        device=eng.device,
        serve=serve,
        vllm_version=eng.vllm_version,
        target_concurrency=demand,
        working=False,  # its verdict is read, not its working
    )
    text = _explanation(planned, as_given=as_given, half=half, one=one, demand=demand)
    return Bisection(
        verdict=planned.verdict, target_concurrency=demand, explanation=text, probes=[as_given, half, one]
    )


def _explanation(
    planned: Estimate, *, as_given: BisectionProbe, half: BisectionProbe, one: BisectionProbe, demand: int
) -> str:
    """The verdict in the experiments' terms: each sentence says only what its probes show."""
    if planned.verdict == "fits":
        return Plural(
            demand,
            N_("It starts and holds {demand} sequence of {max_model_len:,} tokens ({max_concurrency:.2f}x)."),
            N_(
                "It starts and holds {demand} sequences of {max_model_len:,} tokens ({max_concurrency:.2f}x)."
            ),
            demand=demand,
            max_model_len=as_given.max_model_len,
            max_concurrency=as_given.max_concurrency,
        )
    if planned.verdict == "load_oom":
        return Text(
            "It runs out of memory loading the weights ({weights} per device), before any KV sizing: neither a shorter length nor fewer sequences helps. Raise TP (or PP) or use a quantized checkpoint.",
            weights=gib_text(planned.weights_bytes),
        )
    if planned.verdict == "s_bound" and half.runs:
        return Text(
            "With --max-model-len halved to {max_model_len:,} it runs ({max_concurrency:.2f}x ≥ {demand}): the single sequence is too long (S side). Lower max_model_len first.",
            max_model_len=half.max_model_len,
            max_concurrency=half.max_concurrency,
            demand=demand,
        )
    if planned.verdict == "s_bound":
        return Text(
            "{max_model_len:,} tokens do not start ({reason}) and halved to {half:,} it does not hold {demand}, but a shorter length worth serving starts: the single sequence is too long (S side). Lower max_model_len first.",
            max_model_len=as_given.max_model_len,
            reason=Text("above the model's maximum")
            if planned.error_kind == ErrorKind.MAX_LEN_ABOVE_DERIVED
            else Text("up to {largest:,} tokens fit", largest=planned.estimated_max_model_len or 0),
            half=half.max_model_len,
            demand=demand,
        )
    if planned.verdict == "n_bound":  # it starts at S, so one sequence (--max-num-seqs 1) does too
        return Text(
            "With one sequence (--max-num-seqs 1) it runs ({max_concurrency:.2f}x at {max_model_len:,} tokens): the concurrency is too high (N side).",
            max_concurrency=one.max_concurrency,
            max_model_len=one.max_model_len,
        )
    if one.runs:  # max_num_seqs 1 shrinks the activation peak enough to start: still no useful pool as set
        return Text(
            "Only --max-num-seqs 1 makes it start ({max_concurrency:.2f}x at {max_model_len:,} tokens), and no length worth serving fits the pool as configured: the budget itself is short (KV pool {kv_cache_bytes}). Change the KV dtype, TP or gpu_memory_utilization.",
            max_concurrency=one.max_concurrency,
            max_model_len=one.max_model_len,
            kv_cache_bytes=gib_text(as_given.kv_cache_bytes),
        )
    return Text(
        "Neither halving max_model_len nor a single sequence makes it run: the budget itself is short (KV pool {kv_cache_bytes}). Change the KV dtype, TP or gpu_memory_utilization.",
        kv_cache_bytes=gib_text(as_given.kv_cache_bytes),
    )


def bisect(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    vllm_version: str | None,
    target_concurrency: int = 1,
) -> Bisection:
    """The seed's check: would it run with --max-model-len halved? with one sequence? neither?

    "Runs" means it starts and holds ``target_concurrency`` sequences of its max_model_len (one sequence
    for the --max-num-seqs 1 probe).
    """
    eng = Engine(  # refuses a target below 1 sequence
        model=model,
        device=device,
        vllm_version=vllm_version,
        target_len=serve.max_model_len or model.max_model_len_derived,
        target_conc=target_concurrency,
    )
    return bisection_for(eng, serve)
