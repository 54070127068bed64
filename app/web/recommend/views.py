"""The recommendation's view model (templates/recommend.html, templates/_recommend.html)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from app.core.perf.calibrated import RunsScope
from app.core.recommend import Recommendation, Snapshot
from app.core.recommend.model import SpeedPoint, StepSpeed
from app.core.specs import ServeConfig
from app.core.text import N_, Plural
from app.web.format import gib, integer, regime_text, speed_band, speed_number
from app.web.i18n import t, tr, tr_list


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
    undone: bool = False  # applied during the walk, then undone by the prune pass (not applied)
    undone_reason: str = ""
    speed: str = ""  # "Speed: TPOT 30.4 → 19.3 ms, …" ("" when the step changes no configuration)


@dataclass(frozen=True)
class RecommendationView:
    tone: Literal["good", "bad"]
    meets_target: bool
    target_len: str
    target_concurrency: str
    target_line: str  # "Target: 1 sequence of 40,960 tokens." (plural by the count)
    steps: list[StepView]
    impossible_reason: str | None
    best_len: str
    best_concurrency: str
    command: str
    bisection_verdict: str
    bisection_explanation: str
    warnings: list[str]
    final_link: str
    changes: tuple[str, ...] = ()  # the applied steps' labels in order: the planner's verdict box shows them
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


def _band_sentence(point: SpeedPoint) -> str:
    """The band of the configuration a step's line ends on, and what binds its speed."""
    return t(
        "Band: TPOT {tpot} ms, TTFT {ttft} ms, {tps} output tokens/s; {regime} binds.",
        tpot=speed_band(point.tpot_ms),
        ttft=speed_band(point.ttft_ms),
        tps=speed_band(point.output_tokens_per_s),
        regime=regime_text(point.regime),
    )


def speed_line(speed: StepSpeed | None, scope: RunsScope | None = None) -> str:
    """One line per step: TPOT, TTFT and output tokens/s before → after, and the basis (``scope``: what
    your measured runs calibrate; the kinds they did not measure are the model's, said as its basis),
    then the band of the configuration it ends on and what binds its speed."""
    if speed is None or not speed.changed:
        return ""
    last = speed.after or speed.before
    line = _speed_change(speed, _basis(speed, scope or RunsScope()))
    # a regime the page has no words for (regime_text: "") says nothing rather than "; binds."
    return f"{line} {_band_sentence(last)}" if last is not None and regime_text(last.regime) else line


def _basis(speed: StepSpeed, scope: RunsScope) -> str:
    """The model's basis, or your runs' caption with where the other figures come from (round 8 read
    "TPOT calibrated on your 1 run; the rest calibrated": the model's basis beside your runs')."""
    extrapolated = speed.basis != "calibrated"
    if not scope.calibrates:
        return t("extrapolated") if extrapolated else t("calibrated")
    return tr(scope.with_rest(extrapolated=extrapolated))


def _speed_change(speed: StepSpeed, basis: str) -> str:
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

    scope = RunsScope.of(rec.calibrated_runs, rec.calibrated_figures)
    calibrated = tr(scope.caption())
    cheapest = tr(rec.cheapest.sentence) if rec.cheapest is not None else ""

    return RecommendationView(
        tone="good" if rec.meets_target else "bad",
        meets_target=rec.meets_target,
        target_len=integer(rec.target_max_model_len),
        target_concurrency=integer(rec.target_concurrency),
        target_line=tr(
            Plural(
                rec.target_concurrency,
                N_("Target: {n} sequence of {s} tokens."),
                N_("Target: {n} sequences of {s} tokens."),
                n=integer(rec.target_concurrency),
                s=integer(rec.target_max_model_len),
            )
        ),
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
                link=link(s.serve) if s.applied else "",
                undone=s.undone,
                undone_reason=tr(s.undone_reason) if s.undone_reason else "",
                speed=speed_line(s.speed, scope),
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
        changes=tuple(tr(s.label) for s in rec.changes()),
        speed_workload=t(
            "Speed effects are predicted for {concurrency} concurrent clients of {input_tokens} input / {output_tokens} output tokens (the Speed section's workload), per replica.",
            concurrency=integer(rec.speed_workload.concurrency),
            input_tokens=integer(rec.speed_workload.input_tokens),
            output_tokens=integer(rec.speed_workload.output_tokens),
        )
        + (f" ({calibrated})" if calibrated else "")
        if rec.speed_workload is not None
        else "",
        cheapest=f"{cheapest} ({calibrated})" if cheapest and calibrated else cheapest,
        cheapest_link=link(rec.cheapest.serve)
        if rec.cheapest is not None and not rec.cheapest.recommended_is_cheapest
        else "",
    )
