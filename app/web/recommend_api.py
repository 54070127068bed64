"""`POST /api/recommend`: the remedy table of app.core.recommend as JSON, plus its view model.

The body is the /api/estimate parameters plus the target (S*, N*) and what the recommender may use
(devices per node, nodes, fp8 KV, latency or throughput). Every domain error is a 422 naming the body
field; pydantic errors are 422 too; nothing here turns bad input into a 500.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from pydantic import Field

from app.core.errors import PlannerError
from app.core.recommend import Recommendation, Snapshot, recommend
from app.core.recommend.model import SpeedPoint, StepSpeed
from app.core.specs import ServeConfig
from app.web.format import gib, integer, speed_number
from app.web.i18n import t, tr, tr_list
from app.web.params import SERVE_FIELDS, PlannerParams, StrictPlannerParams, with_serve
from app.web.perf_api import workload_of
from app.web.resolve import Resolved, resolve_strict

router = APIRouter(prefix="/api", tags=["api"])

MAX_TOKENS = 10_000_000  # ServeConfig.max_model_len's upper bound
MAX_DEVICES_PER_NODE = 1024
MAX_NODES = 1024


class RecommendRequest(StrictPlannerParams):
    """The /api/estimate parameters (one model: app.web.params) plus the target and the room the
    recommender has. ``target_max_model_len`` defaults to ``max_model_len`` (else the model's maximum)."""

    target_max_model_len: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    devices_per_node: int | None = Field(default=None, ge=1, le=MAX_DEVICES_PER_NODE)
    nodes: int = Field(default=1, ge=1, le=MAX_NODES)
    allow_fp8_kv: bool = True
    preference: Literal["latency", "throughput"] = "throughput"


# What the recommender adds to the planner's parameters (not part of a configuration).
RECOMMEND_ONLY = frozenset(RecommendRequest.model_fields) - frozenset(PlannerParams.model_fields)


def _unprocessable(field: str, message: str) -> HTTPException:
    return HTTPException(status_code=422, detail=[{"loc": ["body", field], "msg": message}])


def run(body: RecommendRequest) -> tuple[Resolved, Recommendation]:
    """Resolve the inputs as /api/estimate does and run the recommender; PlannerError propagates."""
    resolved = resolve_strict(body)
    target_len = body.target_max_model_len or body.max_model_len or resolved.model.max_model_len_derived
    rec = recommend(
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        vllm_version=resolved.vllm_version,
        target_max_model_len=target_len,
        target_concurrency=body.target_concurrency,
        devices_per_node=body.devices_per_node,
        nodes=body.nodes,
        allow_fp8_kv=body.allow_fp8_kv,
        preference=body.preference,
        workload=workload_of(body),
    )
    return resolved, rec


def final_params(resolved: Resolved, rec: Recommendation) -> dict[str, Any]:
    """The final configuration as /api/estimate parameters: POST it there unchanged."""
    return params_for(resolved, rec.final)


def params_for(resolved: Resolved, serve: ServeConfig) -> dict[str, Any]:
    """A configuration the recommender reached as /api/estimate parameters (the planner's inputs with it)."""
    params = PlannerParams.model_validate(
        {k: v for k, v in resolved.params.model_dump().items() if k not in RECOMMEND_ONLY}
    )
    applied = with_serve(params, serve)
    if applied.devices is not None:
        ranks = serve.tensor_parallel_size * serve.pipeline_parallel_size
        applied = applied.model_copy(update={"devices": max(applied.devices, ranks)})
    out = applied.model_dump(exclude_defaults=True, exclude={"lang", "v"})
    out.update(
        {name: getattr(applied, name) for name in ("model", "device", *SERVE_FIELDS)},
        vllm_version=resolved.vllm_version,
    )
    return out


def payload(resolved: Resolved, rec: Recommendation) -> dict[str, Any]:
    return {
        "target_max_model_len": rec.target_max_model_len,
        "target_concurrency": rec.target_concurrency,
        "steps": [step.model_dump() for step in rec.steps],
        "final": final_params(resolved, rec),
        "meets_target": rec.meets_target,
        "impossible_reason": rec.impossible_reason,
        "best_len_at_target_concurrency": rec.best_len_at_target_concurrency,
        "best_concurrency_at_target_len": rec.best_concurrency_at_target_len,
        "command": rec.command,
        "bisection": rec.bisection.model_dump(),
        "warnings": rec.warnings,
        "speed_workload": rec.speed_workload,
        "cheapest": _cheapest_payload(resolved, rec),
    }


def _cheapest_payload(resolved: Resolved, rec: Recommendation) -> dict[str, Any] | None:
    """The layouts meeting the target, cheapest first, each with its /api/estimate parameters."""
    if rec.cheapest is None:
        return None
    return {
        "sentence": rec.cheapest.sentence,
        "recommended_is_cheapest": rec.cheapest.recommended_is_cheapest,
        "params": params_for(resolved, rec.cheapest.serve),
        "layouts": [
            {**c.model_dump(exclude={"serve"}), "params": params_for(resolved, c.serve)}
            for c in rec.cheapest.layouts
        ],
    }


@router.post("/recommend", name="api_recommend")
def recommend_post(body: RecommendRequest) -> dict[str, Any]:
    """Which flags to change, in the seed's order, to hold N* sequences of S* tokens."""
    try:
        resolved, rec = run(body)
    except PlannerError as exc:
        raise _unprocessable(exc.field, tr(exc.message)) from exc
    return payload(resolved, rec)


# --- view model for templates/_recommend.html ----------------------------------------------------------


@dataclass(frozen=True)
class SnapshotView:
    concurrency_at_target: str  # "10.06x"
    largest_len_at_target: str  # "82,432"
    kv_tokens: str
    kv_pool: str  # "50.30 GiB"
    kv_bytes_per_token: str


@dataclass(frozen=True)
class StepView:
    key: str
    label: str
    applied: bool
    reason: str
    effect: str
    cost: str
    before: SnapshotView
    after: SnapshotView
    link: str  # planner permalink with this step's configuration applied ("" when not applicable)
    undone: bool = False  # applied, then undone by the prune pass
    undone_reason: str = ""
    speed: str = ""  # "Speed: TPOT 30.4 → 19.3 ms, …" ("" when the step changes no configuration)


@dataclass(frozen=True)
class RecommendationView:
    tone: Literal["good", "bad"]
    meets_target: bool
    target_len: str
    target_concurrency: str
    steps: list[StepView]
    impossible_reason: str | None
    best_len: str
    best_concurrency: str
    command: str
    bisection_verdict: str
    bisection_explanation: str
    warnings: list[str]
    final_link: str
    speed_workload: str = ""  # the clients the steps' speeds are predicted for
    cheapest: str = ""  # which layout meeting the target is cheapest to run
    cheapest_link: str = ""  # the planner with it ("" when it is the recommended one)


def _snapshot_view(snap: Snapshot) -> SnapshotView:
    return SnapshotView(
        concurrency_at_target=f"{snap.concurrency_at_target_len:.2f}x",
        largest_len_at_target=integer(snap.largest_len_at_target_concurrency),
        kv_tokens=integer(snap.kv_tokens),
        kv_pool=gib(snap.kv_cache_bytes) if snap.kv_cache_bytes >= 0 else t("none (over budget)"),
        kv_bytes_per_token=integer(snap.kv_bytes_per_token),
    )


def _side(point: SpeedPoint) -> dict[str, str]:
    return {
        "tpot": speed_number(point.tpot_ms.expected),
        "ttft": speed_number(point.ttft_ms.expected),
        "tps": speed_number(point.output_tokens_per_s.expected),
    }


def speed_line(speed: StepSpeed | None) -> str:
    """One line per step: TPOT, TTFT and output tokens/s before → after, and the basis."""
    if speed is None or not speed.changed:
        return ""
    basis = t("calibrated") if speed.basis == "calibrated" else t("extrapolated")
    old, new = speed.before, speed.after
    if old is not None and new is not None:
        b, a = _side(old), _side(new)
        return t(
            "Speed: TPOT {tpot_before} → {tpot_after} ms, TTFT {ttft_before} → {ttft_after} ms, {tps_before} → {tps_after} output tokens/s ({basis}).",
            tpot_before=b["tpot"],
            tpot_after=a["tpot"],
            ttft_before=b["ttft"],
            ttft_after=a["ttft"],
            tps_before=b["tps"],
            tps_after=a["tps"],
            basis=basis,
        )
    if new is not None:
        return t(
            "Speed: before, {why}; after, TPOT {tpot} ms, TTFT {ttft} ms, {tps} output tokens/s ({basis}).",
            why=tr(speed.before_note),
            basis=basis,
            **_side(new),
        )
    if old is not None:
        return t(
            "Speed: before, TPOT {tpot} ms, TTFT {ttft} ms, {tps} output tokens/s ({basis}); after, {why}.",
            why=tr(speed.after_note),
            basis=basis,
            **_side(old),
        )
    return t("Speed: no prediction ({why}).", why=tr(speed.after_note or speed.before_note))


def build_view(
    rec: Recommendation, link_for: Callable[[ServeConfig], str] | None = None
) -> RecommendationView:
    """``link_for`` turns a configuration into a planner permalink (the page passes it; the API does not)."""

    def link(serve: ServeConfig) -> str:
        return link_for(serve) if link_for is not None else ""

    return RecommendationView(
        tone="good" if rec.meets_target else "bad",
        meets_target=rec.meets_target,
        target_len=integer(rec.target_max_model_len),
        target_concurrency=integer(rec.target_concurrency),
        steps=[
            StepView(
                key=s.key,
                label=tr(s.label),
                applied=s.applied,
                reason=tr(s.reason),
                effect=tr(s.effect),
                cost=tr(s.cost),
                before=_snapshot_view(s.before),
                after=_snapshot_view(s.after),
                link=link(s.serve) if s.applied and not s.undone else "",
                undone=s.undone,
                undone_reason=tr(s.undone_reason) if s.undone_reason else "",
                speed=speed_line(s.speed),
            )
            for s in rec.steps
        ],
        impossible_reason=tr(rec.impossible_reason) if rec.impossible_reason is not None else None,
        best_len=integer(rec.best_len_at_target_concurrency),
        best_concurrency=integer(rec.best_concurrency_at_target_len),
        command=rec.command,
        bisection_verdict=rec.bisection.verdict,
        bisection_explanation=tr(rec.bisection.explanation),
        warnings=tr_list(rec.warnings),
        final_link=link(rec.final),
        speed_workload=t(
            "Speed effects are predicted for {concurrency} concurrent clients of {input_tokens} input / {output_tokens} output tokens (the Speed section's workload), per replica.",
            concurrency=integer(rec.speed_workload.concurrency),
            input_tokens=integer(rec.speed_workload.input_tokens),
            output_tokens=integer(rec.speed_workload.output_tokens),
        )
        if rec.speed_workload is not None
        else "",
        cheapest=tr(rec.cheapest.sentence) if rec.cheapest is not None else "",
        cheapest_link=link(rec.cheapest.serve)
        if rec.cheapest is not None and not rec.cheapest.recommended_is_cheapest
        else "",
    )
