"""The seed's 触发场景 (trigger scenarios) as runnable workloads: data, validated at import."""

from __future__ import annotations

from typing import Any

from app.core.text import Msg, Text
from app.core.workload.schema import FrozenModel, WorkloadSpec


class WorkloadPreset(FrozenModel):
    """One of the seed's 触发场景 rows as a runnable workload (lengths are illustrative)."""

    key: str
    label: Msg  # the scenario's name (Chinese: the seed's own 触发场景 name, in the catalog)
    label_zh: str  # the seed's name, as it is written there
    description: Msg
    hits_first: Msg  # the seed's 先受阻的方面, in English
    spec: WorkloadSpec


def _preset(
    key: str, label: tuple[str, str], description: str, hits_first: str, spec: dict[str, Any]
) -> WorkloadPreset:
    return WorkloadPreset(
        key=key,
        label=label[0],
        label_zh=label[1],
        description=description,
        hits_first=hits_first,
        spec=WorkloadSpec.model_validate(spec),
    )


WORKLOAD_PRESETS: dict[str, WorkloadPreset] = {
    p.key: p
    for p in (
        _preset(
            "long_single",
            (Text("One very long request"), "超长上下文单请求"),
            Text("Long-document QA / whole-repo prompts, one at a time: S is close to the limit."),
            Text("a single sequence does not fit (max_model_len, or the whole pool)"),
            {
                "classes": [
                    {
                        "share": 1.0,
                        "prompt_tokens": {"dist": "uniform", "low": 60_000, "high": 126_000},
                        "output_tokens": {"dist": "uniform", "low": 256, "high": 2048},
                    }
                ],
                "num_requests": 20,
                "concurrency": 1,
            },
        ),
        _preset(
            "mixed_long_short",
            (Text("Long and short mixed"), "长短交错"),
            Text("A few long requests among many short ones: the long ones hold most of the pool."),
            Text("concurrency is pushed down: short requests cannot get in (kv_pool)"),
            {
                "classes": [
                    {
                        "share": 0.1,
                        "prompt_tokens": {"dist": "uniform", "low": 12_000, "high": 28_000},
                        "output_tokens": {"dist": "uniform", "low": 256, "high": 1024},
                    },
                    {
                        "share": 0.9,
                        "prompt_tokens": {"dist": "lognormal", "median": 400, "sigma": 0.8, "max": 4000},
                        "output_tokens": {"dist": "lognormal", "median": 200, "sigma": 0.7, "max": 2000},
                    },
                ],
                "num_requests": 1000,
                "concurrency": 128,
            },
        ),
        _preset(
            "many_short",
            (Text("Many short requests"), "高并发短请求"),
            Text("Chat-sized requests at high concurrency: S is small, N is large."),
            Text("starts fine but concurrency stalls: N x S exceeds the pool (kv_pool) or max_num_seqs"),
            {
                "classes": [
                    {
                        "share": 1.0,
                        "prompt_tokens": {"dist": "lognormal", "median": 300, "sigma": 0.6, "max": 3000},
                        "output_tokens": {"dist": "lognormal", "median": 150, "sigma": 0.6, "max": 1500},
                    }
                ],
                "num_requests": 2000,
                "concurrency": 512,
            },
        ),
        _preset(
            "shared_prefix",
            (Text("Shared prefixes"), "高前缀复用"),
            Text("A fixed system prompt plus varying questions, two tenants with their own prompts."),
            Text("memory without benefit when the prefix is not full blocks or its hash varies"),
            {
                "classes": [
                    {
                        "share": 0.7,
                        "prompt_tokens": {"dist": "uniform", "low": 2030, "high": 2400},
                        "output_tokens": {"dist": "lognormal", "median": 150, "sigma": 0.6, "max": 1500},
                        "shared_prefix_tokens": 2000,
                        "prefix_group": "tenant_a",
                    },
                    {
                        "share": 0.3,
                        "prompt_tokens": {"dist": "uniform", "low": 1230, "high": 1600},
                        "output_tokens": {"dist": "lognormal", "median": 150, "sigma": 0.6, "max": 1500},
                        "shared_prefix_tokens": 1200,
                        "prefix_group": "tenant_b",
                    },
                ],
                "num_requests": 2000,
                "concurrency": 256,
            },
        ),
        _preset(
            "long_output",
            (Text("Long outputs"), "长输出生成"),
            Text("Short prompts, long generations (reports, code): S keeps growing while decoding."),
            Text("usage climbs during decode until running requests are preempted (kv_pool)"),
            {
                "classes": [
                    {
                        "share": 1.0,
                        "prompt_tokens": {"dist": "lognormal", "median": 500, "sigma": 0.5, "max": 4000},
                        "output_tokens": {"dist": "uniform", "low": 4000, "high": 8000},
                    }
                ],
                "num_requests": 500,
                "concurrency": 128,
            },
        ),
    )
}
