"""The fleet page's inputs: the planner's parameters plus the load, the SLO, the devices and the price.

One pydantic model on top of :class:`PlannerParams` (the same names and meaning), a lenient reading
for the page (a bad field is dropped and named), a strict one for ``POST /api/fleet`` (an unknown key
is a 422) and the permalink. Numbers typed as text go through the shared bounded parser
(app.core.numbers), so ``1e999`` or a 400-digit value is a 422 naming the field.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Annotated
from urllib.parse import urlencode

from pydantic import BeforeValidator, ConfigDict, Field

from app.core import numbers
from app.core.fleet import MAX_DEVICES_TOTAL, Limits, Target
from app.core.perf.bench_args import BenchArgs
from app.core.perf.measured import MAX_MEASURED_RUNS
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.links import query_items
from app.web.inputs.params import INT_OR_NONE, Flag, PlannerParams, parse_human_int, same_named
from app.web.inputs.problems import Problem
from app.web.measured_runs import MeasuredRun

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


OptDevicesPerNode = Annotated[Annotated[int, Field(ge=1, le=MAX_DEVICES_PER_NODE)] | None, INT_OR_NONE]
FLOAT_TEXT = BeforeValidator(_float)
# the load and the SLO: above zero; the price: zero or more (a device already paid for)
RequestsPerS = Annotated[float, FLOAT_TEXT, Field(gt=0.0, le=MAX_REQUESTS_PER_S, allow_inf_nan=False)]
SloMs = Annotated[float, FLOAT_TEXT, Field(gt=0.0, le=MAX_SLO_MS, allow_inf_nan=False)]
PricePerDeviceHour = Annotated[
    float, FLOAT_TEXT, Field(ge=0.0, le=MAX_PRICE_PER_DEVICE_HOUR, allow_inf_nan=False)
]


# the load's lengths: left blank, each is the default shortened to fit max_model_len (fleet.service)
LENGTH_FIELDS = ("input_tokens", "output_tokens")
# left blank, the load is the benchmark's --request-rate (app.core.fleet_load), else the default
RATE_FIELD = "requests_per_s"


class FleetParams(PlannerParams):
    """Every input of /fleet and /api/fleet: the planner's parameters, the load, the SLO, the limits."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True)

    input_tokens: Annotated[int, BeforeValidator(parse_human_int), Field(ge=1, le=10_000_000)] = (
        DEFAULT_INPUT_TOKENS
    )
    output_tokens: Annotated[int, BeforeValidator(parse_human_int), Field(ge=1, le=10_000_000)] = (
        DEFAULT_OUTPUT_TOKENS
    )
    requests_per_s: RequestsPerS = DEFAULT_REQUESTS_PER_S
    slo_ttft_ms: SloMs = DEFAULT_SLO_TTFT_MS
    slo_tpot_ms: SloMs = DEFAULT_SLO_TPOT_MS
    devices_available: Annotated[int, BeforeValidator(_int), Field(ge=1, le=MAX_DEVICES_TOTAL)] = (
        DEFAULT_DEVICES_AVAILABLE
    )
    price_per_device_hour: PricePerDeviceHour = SAMPLE_PRICE_PER_DEVICE_HOUR
    no_fp8_kv: Flag = False
    no_quantized_weights: Flag = False
    devices_per_node: OptDevicesPerNode = None

    @classmethod
    def unset_when_blank(cls) -> Collection[str]:
        """Also the load's lengths (blank: the default, shortened to fit max_model_len, fleet.service) and its
        rate (blank: the benchmark's --request-rate, else the default, app.core.fleet_load)."""
        return (*super().unset_when_blank(), *LENGTH_FIELDS, RATE_FIELD)

    def target(self) -> Target:
        """The load, the SLO, the devices and the price: this page's fields of the same names."""
        return same_named(Target, self)

    def limits(self) -> Limits:
        return same_named(Limits, self)

    def planner(self) -> PlannerParams:
        """The planner's part of the inputs (what a candidate's permalink starts from)."""
        return same_named(PlannerParams, self)


class StrictFleetParams(FleetParams):
    """The API's reading: an unknown key is an error, not a silently ignored typo."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    # your cluster's `vllm bench serve` runs (app/web/measured_runs.py): every figure scaled by them
    measured_runs: list[MeasuredRun] = Field(default_factory=list, max_length=MAX_MEASURED_RUNS)
    # the load as a `vllm bench serve` workload, as /api/performance takes it (app.core.fleet_load)
    bench: BenchArgs | None = None


FLEET_FIELDS: tuple[str, ...] = tuple(
    name for name in FleetParams.model_fields if name not in PlannerParams.model_fields
)
FLEET_DEFAULTS = FleetParams()


def parse_fleet_lenient(
    query: Mapping[str, str] | Iterable[tuple[str, str]],
) -> tuple[FleetParams, list[Problem]]:
    """Never fails: each field that does not validate is dropped (-> default) and reported. A blank
    length box is not set (the default, shortened to fit), nor a blank rate (the benchmark's, else the
    default), not a bad number (FleetParams.unset_when_blank)."""
    return parse_lenient(FleetParams, query)


def fleet_query(params: FleetParams) -> str:
    """The /fleet permalink: the planner's non-default fields, then the fleet's (defaults omitted; a
    length the user set is kept even at its default, so the link reopens the same request)."""
    items = [(k, v) for k, v in query_items(params) if k not in LENGTH_FIELDS]
    # a blank rate is the benchmark's --request-rate or the default: a rate the user set is kept even at the default
    set_kept = FleetParams.unset_when_blank()
    for name in (*LENGTH_FIELDS, *FLEET_FIELDS):
        value = getattr(params, name)
        kept = name in set_kept and name in params.model_fields_set
        if value == getattr(FLEET_DEFAULTS, name) and not kept:
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
