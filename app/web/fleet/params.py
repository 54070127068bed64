"""The fleet page's inputs: the planner's parameters plus the load, the SLO, the devices and the price.

One pydantic model on top of :class:`PlannerParams` (the same names and meaning), a lenient reading
for the page (a bad field is dropped and named), a strict one for ``POST /api/fleet`` (an unknown key
is a 422) and the permalink. Numbers typed as text go through the shared bounded parser
(app.core.numbers), so ``1e999`` or a 400-digit value is a 422 naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any
from urllib.parse import urlencode

from pydantic import BeforeValidator, ConfigDict, Field, ValidationError

from app.core import numbers
from app.core.fleet import MAX_DEVICES_TOTAL, Limits, Target
from app.web.measured_runs import MAX_MEASURED_RUNS, MeasuredRun
from app.web.planner.params import (
    FieldProblem,
    Flag,
    PlannerParams,
    opt_int,
    parse_human_int,
    query_items,
)
from app.web.validation import message_of

# The example: 20 requests/s of 2k in / 256 out, TTFT under 2 s, TPOT under 50 ms.
DEFAULT_INPUT_TOKENS = 2048
DEFAULT_OUTPUT_TOKENS = 256
DEFAULT_REQUESTS_PER_S = 20.0
DEFAULT_SLO_TTFT_MS = 2000.0
DEFAULT_SLO_TPOT_MS = 50.0
DEFAULT_DEVICES_AVAILABLE = 64
# A sample price only (the form says so): device prices are the user's input, no price list is shipped.
SAMPLE_PRICE_PER_DEVICE_HOUR = 2.5
MAX_PRICE_PER_DEVICE_HOUR = 1_000_000.0
MAX_REQUESTS_PER_S = 1_000_000.0
MAX_SLO_MS = 1_000_000_000.0
MAX_DEVICES_PER_NODE = 64


def _float(value: object) -> object:
    """Text through the bounded parser (``1e999`` and ``nan`` are errors); numbers pass through."""
    return numbers.parse_float(value) if isinstance(value, str) else value


def _int(value: object) -> object:
    return numbers.parse_int(value) if isinstance(value, str) else value


def _float_field(low: float, high: float, *, strict_low: bool) -> Any:
    bound = (
        Field(gt=low, le=high, allow_inf_nan=False)
        if strict_low
        else Field(ge=low, le=high, allow_inf_nan=False)
    )
    return Annotated[float, BeforeValidator(_float), bound]


class FleetParams(PlannerParams):
    """Every input of /fleet and /api/fleet: the planner's parameters, the load, the SLO, the limits."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True)

    input_tokens: Annotated[int, BeforeValidator(parse_human_int), Field(ge=1, le=10_000_000)] = (
        DEFAULT_INPUT_TOKENS
    )
    output_tokens: Annotated[int, BeforeValidator(parse_human_int), Field(ge=1, le=10_000_000)] = (
        DEFAULT_OUTPUT_TOKENS
    )
    requests_per_s: _float_field(0.0, MAX_REQUESTS_PER_S, strict_low=True) = DEFAULT_REQUESTS_PER_S
    slo_ttft_ms: _float_field(0.0, MAX_SLO_MS, strict_low=True) = DEFAULT_SLO_TTFT_MS
    slo_tpot_ms: _float_field(0.0, MAX_SLO_MS, strict_low=True) = DEFAULT_SLO_TPOT_MS
    devices_available: Annotated[int, BeforeValidator(_int), Field(ge=1, le=MAX_DEVICES_TOTAL)] = (
        DEFAULT_DEVICES_AVAILABLE
    )
    price_per_device_hour: _float_field(0.0, MAX_PRICE_PER_DEVICE_HOUR, strict_low=False) = (
        SAMPLE_PRICE_PER_DEVICE_HOUR
    )
    no_fp8_kv: Flag = False
    no_quantized_weights: Flag = False
    devices_per_node: opt_int(1, MAX_DEVICES_PER_NODE) = None

    def target(self) -> Target:
        return Target(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            requests_per_s=self.requests_per_s,
            slo_ttft_ms=self.slo_ttft_ms,
            slo_tpot_ms=self.slo_tpot_ms,
            devices_available=self.devices_available,
            price_per_device_hour=self.price_per_device_hour,
        )

    def limits(self) -> Limits:
        return Limits(
            no_fp8_kv=self.no_fp8_kv,
            no_quantized_weights=self.no_quantized_weights,
            devices_per_node=self.devices_per_node,
        )

    def planner(self) -> PlannerParams:
        """The planner's part of the inputs (what a candidate's permalink starts from)."""
        return PlannerParams.model_validate(
            {name: getattr(self, name) for name in PlannerParams.model_fields}
        )


class StrictFleetParams(FleetParams):
    """The API's reading: an unknown key is an error, not a silently ignored typo."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    # your cluster's `vllm bench serve` runs (app/web/measured_runs.py): every figure scaled by them
    measured_runs: list[MeasuredRun] = Field(default_factory=list, max_length=MAX_MEASURED_RUNS)


FLEET_FIELDS: tuple[str, ...] = tuple(
    name for name in FleetParams.model_fields if name not in PlannerParams.model_fields
)
FLEET_DEFAULTS = FleetParams()


def parse_fleet_lenient(
    query: Mapping[str, str] | Iterable[tuple[str, str]],
) -> tuple[FleetParams, list[FieldProblem]]:
    """Never fails: each field that does not validate is dropped (-> default) and reported."""
    items = query.items() if isinstance(query, Mapping) else query
    raw: dict[str, Any] = {k: v for k, v in items if k in FleetParams.model_fields}
    problems: list[FieldProblem] = []
    for _ in range(len(FleetParams.model_fields) + 1):
        try:
            return FleetParams.model_validate(raw), problems
        except ValidationError as exc:
            for error in exc.errors():
                name = str(error["loc"][0]) if error["loc"] else ""
                if name in raw:
                    value = str(raw.pop(name))
                    problems.append(
                        FieldProblem(
                            field=name,
                            value=value[:57] + "..." if len(value) > 60 else value,
                            message=message_of(error),
                        )
                    )
    return FleetParams(), problems  # unreachable in practice: each round removes a field


def fleet_query(params: FleetParams) -> str:
    """The /fleet permalink: the planner's non-default fields, then the fleet's (defaults omitted)."""
    items = [(k, v) for k, v in query_items(params) if k not in ("input_tokens", "output_tokens")]
    for name in ("input_tokens", "output_tokens", *FLEET_FIELDS):
        value = getattr(params, name)
        if value == getattr(FLEET_DEFAULTS, name):
            continue
        items.append(
            (
                name,
                ("true" if value else "false")
                if isinstance(value, bool)
                else f"{value:g}"
                if isinstance(value, float)
                else str(value),
            )
        )
    return urlencode(items)
