"""The seed's fourth diagnosis step: would it run with --max-model-len halved? with one sequence? neither?"""

from __future__ import annotations

from typing import Literal

from app.core.errors import PlannerError
from app.core.recommend.engine import Engine, gib_text
from app.core.recommend.model import Bisection, BisectionProbe, BisectionVerdict
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
    demand = eng.target_conc
    full = eng.at(serve)
    as_given = _probe(eng, "as_given", serve, demand)
    half = _probe(
        eng, "half_len", serve.model_copy(update={"max_model_len": max(1, full.max_model_len // 2)}), demand
    )
    one = _probe(eng, "one_seq", serve.model_copy(update={"max_num_seqs": 1}), 1)
    probes = [as_given, half, one]
    verdict: BisectionVerdict
    if as_given.runs:
        verdict, text = (
            "fits",
            (
                Plural(
                    demand,
                    N_(
                        "It starts and holds {demand} sequence of {max_model_len:,} tokens ({max_concurrency:.2f}x)."
                    ),
                    N_(
                        "It starts and holds {demand} sequences of {max_model_len:,} tokens ({max_concurrency:.2f}x)."
                    ),
                    demand=demand,
                    max_model_len=as_given.max_model_len,
                    max_concurrency=as_given.max_concurrency,
                )
            ),
        )
    elif half.runs:
        verdict, text = (
            "s_bound",
            (
                Text(
                    "With --max-model-len halved to {max_model_len:,} it runs ({max_concurrency:.2f}x ≥ {demand}): the single sequence is too long (S side). Lower max_model_len first.",
                    max_model_len=half.max_model_len,
                    max_concurrency=half.max_concurrency,
                    demand=demand,
                )
            ),
        )
    elif one.runs:
        verdict, text = (
            "n_bound",
            (
                Text(
                    "With one sequence (--max-num-seqs 1) it runs ({max_concurrency:.2f}x at {max_model_len:,} tokens): the concurrency is too high (N side).",
                    max_concurrency=one.max_concurrency,
                    max_model_len=one.max_model_len,
                )
            ),
        )
    else:
        verdict, text = (
            "budget_bound",
            (
                Text(
                    "Neither halving max_model_len nor a single sequence makes it run: the budget itself is short (KV pool {kv_cache_bytes}). Change the KV dtype, TP or gpu_memory_utilization.",
                    kv_cache_bytes=gib_text(as_given.kv_cache_bytes),
                )
            ),
        )
    return Bisection(verdict=verdict, target_concurrency=demand, explanation=text, probes=probes)


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
    if target_concurrency < 1:
        raise PlannerError("target_concurrency", Text("must be at least 1 sequence"))
    eng = Engine(
        model=model,
        device=device,
        vllm_version=vllm_version,
        target_len=serve.max_model_len or model.max_model_len_derived,
        target_conc=target_concurrency,
    )
    return bisection_for(eng, serve)
