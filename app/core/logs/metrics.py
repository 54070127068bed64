"""Read a Prometheus scrape of a vLLM server (reference §8): is the KV pool what limits concurrency?

Never raises on any string (fuzz-tested). The label parser is linear: a key starts at a word start
and both key and value are length-capped, so a 20 kB label costs microseconds, not seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

from app.core import deadline, regex
from app.core.logs.reading import MAX_LOG_CHARS, float_of, int_of, numbered_lines
from app.core.text import Msg, Text

# a sample line is a metric name, a few labels and a number: real ones are < 1 kB (cache_config_info
# carries ~30 labels); longer is cut before the regex sees it
MAX_SAMPLE_CHARS = 16_384
KV_BOUND_USAGE = 0.9  # seed 五步: "gpu_cache_usage_perc 长期贴近 1 且 num_requests_waiting 持续大于零"

MetricsVerdict = Literal["kv_bound", "not_kv_bound"]


class MetricsFacts(BaseModel):
    """What a Prometheus scrape of a vLLM server says about KV pressure.

    Counters and request gauges are **summed across label sets** (engines, models, DP ranks);
    ``kv_usage`` is the **highest** value of any engine, because a usage fraction cannot be summed
    and the busiest engine is the one that is KV-bound; ``num_gpu_blocks`` from
    ``vllm:cache_config_info`` is summed across engines, ``block_size`` and
    ``gpu_memory_utilization`` are the first engine's.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kv_usage: float | None = None
    num_requests_running: float | None = None
    num_requests_waiting: float | None = None
    num_requests_swapped: float | None = None
    preemptions: float | None = None
    prefix_cache_hits: float | None = None
    prefix_cache_queries: float | None = None
    prefix_hit_rate: float | None = None
    num_gpu_blocks: int | None = None
    block_size: int | None = None
    gpu_memory_utilization: float | None = None
    verdict: MetricsVerdict = "not_kv_bound"
    reading: Msg = ""
    samples_read: int = 0


# A sample line, ``name{labels} value [timestamp]``, is split with str methods (:func:`_sample`), not a regex:
# the RE2 binding costs ~18 µs a match in Python, so 250,000 series in a 5 MB scrape took ~4.5 s of CPU.
# RE2 (linear); the leftmost match of ``\w+`` starts at a word start, so a key is a whole word
_LABEL = regex.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
_METRIC_NAMES = {
    "kv_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    "num_requests_running": ("vllm:num_requests_running",),
    "num_requests_waiting": ("vllm:num_requests_waiting",),
    "num_requests_swapped": ("vllm:num_requests_swapped",),
    "preemptions": ("vllm:num_preemptions_total", "vllm:num_preemptions"),
    "prefix_cache_hits": (
        "vllm:prefix_cache_hits_total",
        "vllm:prefix_cache_hits",
        "vllm:gpu_prefix_cache_hits_total",
        "vllm:gpu_prefix_cache_hits",
    ),
    "prefix_cache_queries": (
        "vllm:prefix_cache_queries_total",
        "vllm:prefix_cache_queries",
        "vllm:gpu_prefix_cache_queries_total",
        "vllm:gpu_prefix_cache_queries",
    ),
    "hit_rate_gauge": ("vllm:gpu_prefix_cache_hit_rate",),
}
PERCENT_SCALE = 100.0  # a usage above 1 is taken as a 0-100 percentage (vLLM itself exports 0..1)


@dataclass
class _Samples:
    by_name: dict[str, list[float]] = field(default_factory=dict)
    cache_config: list[dict[str, str]] = field(default_factory=list)
    count: int = 0


def _sample(line: str) -> tuple[str, str, str] | None:
    """(name, labels, value) of a stripped exposition line, or None when it is not one: the name is
    ``[A-Za-z_:][A-Za-z0-9_:]*``, optional labels up to the first ``}``, then the value and an optional integer
    timestamp. E.g. 'vllm:num_requests_waiting{engine="0"} 3 1700000000' -> ("vllm:num_requests_waiting",
    'engine="0"', "3"); 'vllm:x{a="1"' -> None (the labels are not closed)."""
    brace = line.find("{")
    parts = (line if brace < 0 else line[:brace]).split(maxsplit=1)
    name = parts[0] if parts else ""
    if not name.replace(":", "_").isidentifier() or not name.isascii():
        return None
    rest = line[len(name) :]
    after_blank = rest.lstrip()
    if after_blank.startswith("{") and (close := after_blank.find("}")) >= 0:
        found = _value(after_blank[close + 1 :])
        if found is not None:
            return name, after_blank[1:close], found
    found = _value(rest)  # no labels: the value follows the name
    return None if found is None else (name, "", found)


def _value(rest: str) -> str | None:
    """The value of what follows a name or its labels: blank, the value, an optional integer timestamp."""
    if not rest[:1].isspace():
        return None
    tail = rest.split()
    if not tail or len(tail) > 2 or (len(tail) == 2 and not _is_integer(tail[1])):
        return None
    return tail[0]


def _is_integer(text: str) -> bool:
    digits = text[1:] if text.startswith("-") else text
    return digits.isascii() and digits.isdigit()


# a sample line costs ~3 us (4.8 MB of one series, 120,000 lines, in ~0.37 s): the budget is read every
# this many lines, well under a millisecond between two reads
DEADLINE_EVERY_LINES = 256


def _scrape(text: str) -> _Samples:
    samples = _Samples()
    for position, (_, raw) in enumerate(numbered_lines(text[:MAX_LOG_CHARS])):
        if position % DEADLINE_EVERY_LINES == 0:
            deadline.check()  # the request's CPU budget (app.core.deadline), as the start-up log's reader
        line = raw[:MAX_SAMPLE_CHARS].strip()
        if not line.startswith("vllm:"):
            continue
        found = _sample(line)
        if found is None:
            continue
        name, labels, value_text = found
        value = float_of(value_text)  # NaN / ±Inf are dropped here
        if value is None:
            continue
        samples.count += 1
        if name == "vllm:cache_config_info":
            samples.cache_config.append(dict(_LABEL.findall(labels)))
        else:
            samples.by_name.setdefault(name, []).append(value)
    return samples


def _first_present(samples: _Samples, names: tuple[str, ...]) -> list[float] | None:
    for name in names:
        if name in samples.by_name:
            return samples.by_name[name]
    return None


def parse_metrics(text: str) -> MetricsFacts:
    """Read a Prometheus text exposition of vLLM's metrics (reference §8); never raises.

    See :class:`MetricsFacts` for how several engines / label sets are combined. The verdict is
    ``kv_bound`` when KV usage ≥ :data:`KV_BOUND_USAGE` and requests are waiting (seed, 五步).
    """
    samples = _scrape(text)
    sums: dict[str, float | None] = {}
    for key, names in _METRIC_NAMES.items():
        found = _first_present(samples, names)
        sums[key] = None if found is None else sum(found)
    usage_values = _first_present(samples, _METRIC_NAMES["kv_usage"])
    kv_usage = None
    if usage_values:
        kv_usage = max(usage_values)
        if kv_usage > 1.0:
            kv_usage = kv_usage / PERCENT_SCALE
    hits, queries = sums["prefix_cache_hits"], sums["prefix_cache_queries"]
    hit_rate = None
    if hits is not None and queries:
        hit_rate = hits / queries
    else:
        gauge = _first_present(samples, _METRIC_NAMES["hit_rate_gauge"])
        if gauge:
            hit_rate = sum(gauge) / len(gauge)
    blocks = [b for info in samples.cache_config if (b := int_of(info.get("num_gpu_blocks", ""))) is not None]
    first = samples.cache_config[0] if samples.cache_config else {}
    waiting = sums["num_requests_waiting"]
    verdict: MetricsVerdict = (
        "kv_bound"
        if kv_usage is not None and kv_usage >= KV_BOUND_USAGE and (waiting or 0) > 0
        else "not_kv_bound"
    )
    return MetricsFacts(
        kv_usage=kv_usage,
        num_requests_running=sums["num_requests_running"],
        num_requests_waiting=waiting,
        num_requests_swapped=sums["num_requests_swapped"],
        preemptions=sums["preemptions"],
        prefix_cache_hits=hits,
        prefix_cache_queries=queries,
        prefix_hit_rate=hit_rate,
        num_gpu_blocks=sum(blocks) if blocks else None,
        block_size=int_of(first.get("block_size", "")),
        gpu_memory_utilization=float_of(first.get("gpu_memory_utilization", "x")),
        verdict=verdict,
        reading=_reading(verdict, kv_usage, waiting, sums["preemptions"]),
        samples_read=samples.count,
    )


def _reading(
    verdict: MetricsVerdict, kv_usage: float | None, waiting: float | None, preempt: float | None
) -> Msg:
    if kv_usage is None:
        return Text(
            "No KV-cache usage metric (vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc) in the scrape."
        )
    usage = Text("KV cache usage is {kv_usage:.0%}", kv_usage=kv_usage)
    queue = (
        Text("no waiting-requests metric")
        if waiting is None
        else Text("{waiting:g} requests waiting", waiting=waiting)
    )
    extra = "" if not preempt else Text("; {preempt:g} preemptions so far", preempt=preempt)
    if verdict == "kv_bound":
        return Text(
            "{usage} with {queue}{extra}: concurrency is limited by the KV pool. Shorten max_model_len, use an fp8 KV cache, raise TP or gpu_memory_utilization.",
            usage=usage,
            queue=queue,
            extra=extra,
        )
    if kv_usage >= KV_BOUND_USAGE:
        return Text(
            "{usage} but {queue}{extra}: the pool is full yet nothing queues, so KV is not the limit now.",
            usage=usage,
            queue=queue,
            extra=extra,
        )
    return Text(
        "{usage} with {queue}{extra}: below {bound:.0%}, the KV pool is not the bottleneck.",
        usage=usage,
        queue=queue,
        extra=extra,
        bound=KV_BOUND_USAGE,
    )
