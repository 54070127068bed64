"""The version resolver and the per-release rules table (app/core/versions.py).

Boundaries are cited from vLLM's released code (`pip download --no-deps vllm==X`, the wheel is a zip)
or from the reference (/work/shared/reference/vllm-accounting.md, section numbers below).
"""

from __future__ import annotations

import dataclasses

import pytest

from app.core import versions as V
from app.core.catalog import find_device
from app.core.errors import PlannerError
from app.core.estimate import default_max_num_batched_tokens, default_max_num_seqs, estimate
from app.core.specs import GIB, DeviceSpec, ServeConfig
from tests.specs_factory import H100, dense


@pytest.mark.parametrize(
    ("text", "requested", "release", "rules_of"),
    [
        # the forms people type (issue 13): vLLM builds are PEP 440 (setuptools-scm)
        ("0.10.1.1", "0.10.1.1", (0, 10, 1), "0.10.2"),  # a 4th release number: same minor series
        ("0.19.2rc1.dev8+g4b7f5ea1a", "0.19.2rc1.dev8+g4b7f5ea1a", (0, 19, 2), "0.19.0"),
        ("0.14.0rc2+cu130", "0.14.0rc2+cu130", (0, 14, 0), "0.14.0"),  # an rc takes its release's rules
        ("0.6.4.post1", "0.6.4.post1", (0, 6, 4), "0.6.6"),
        ("v0.11.2", "0.11.2", (0, 11, 2), "0.11.0"),  # the git tag spelling, normalized
        (" 0.13.0 ", "0.13.0", (0, 13, 0), "0.13.0"),  # read from the 0.13.0 wheel (round 10)
        ("0.12.0", "0.12.0", (0, 12, 0), "0.11.0"),  # no 0.12 was read: the older known series
        ("0.23.0", "0.23.0", (0, 23, 0), "0.22.1"),
        ("0.27.0", "0.27.0", (0, 27, 0), "0.27.1"),  # same minor series as the known 0.27.1
        ("0.33.0", "0.33.0", (0, 33, 0), "0.33.0"),
        ("0.19", "0.19", (0, 19, 0), "0.19.0"),
    ],
)
def test_real_version_strings_resolve_to_their_bracket(
    text: str, requested: str, release: tuple[int, int, int], rules_of: str
) -> None:
    resolved = V.resolve_version(text)
    assert (resolved.requested, resolved.release, resolved.rules.version) == (requested, release, rules_of)
    assert not resolved.newer_than_known and resolved.note == ""


def test_no_version_is_the_default_release() -> None:
    assert V.resolve_version(None).rules.version == V.DEFAULT_VERSION == "0.33.0"
    assert V.resolve_version("  ").requested == "0.33.0"


def test_newer_than_the_newest_known_uses_its_rules_with_a_note() -> None:
    # 0.34.0 is a known release from round 11 (its wheel read, tests/unit/test_release_0_34.py)
    resolved = V.resolve_version("0.35.0rc1.dev12+gabc")
    assert resolved.rules is V.rules_for("0.34.0") and resolved.newer_than_known
    assert resolved.note.startswith("vLLM 0.35.0rc1.dev12+gabc is newer than 0.34.0")
    assert V.resolve_version("1.0.0").newer_than_known
    # a patch of the newest series is that series: same rules, no note
    assert not V.resolve_version("0.34.1").newer_than_known


def test_the_estimate_says_which_rules_planned_it() -> None:
    est = estimate(model=dense(), device=H100, serve=ServeConfig(), vllm_version="v0.23.0")
    assert (est.vllm_version, est.vllm_rules_version) == ("0.23.0", "0.22.1")
    same = estimate(model=dense(), device=H100, serve=ServeConfig(), vllm_version="0.22.1")
    assert est.model_dump(exclude={"vllm_version"}) == same.model_dump(exclude={"vllm_version"})
    newer = estimate(model=dense(), device=H100, serve=ServeConfig(), vllm_version="0.40.0")
    assert newer.vllm_rules_version == "0.34.0" and newer.warnings[0].startswith("vLLM 0.40.0 is newer")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0.5.4", "vLLM 0.5.4 is older than 0.6, the oldest release the planner models"),
        ("banana", "not a vLLM version: 'banana' (expected e.g. 0.33.0)"),
        ("0.19.0-cu128", "not a vLLM version: '0.19.0-cu128' (expected e.g. 0.33.0)"),
        ("1!0.19.0", "not a vLLM version: '1!0.19.0' (expected e.g. 0.33.0)"),  # epochs: not vLLM's
    ],
)
def test_bad_versions_name_the_field(text: str, message: str) -> None:
    with pytest.raises(PlannerError) as info:
        V.resolve_version(text)
    assert (info.value.field, info.value.message) == ("vllm_version", message)


def test_a_version_followed_by_thousands_of_digits_is_refused_quickly_and_briefly() -> None:
    # int("9" * 5000) raises ValueError past Python's 4300-digit limit: that was a 500 in the doctor
    text = "0.19.0" + "9" * 5000
    with pytest.raises(PlannerError) as info:
        V.resolve_version(text)
    assert info.value.field == "vllm_version"
    assert (
        info.value.message
        == "not a vLLM version: '0.19.09999999999999999999999999999999999…' is too long (expected e.g. 0.33.0)"
    )


def test_rules_are_cached_per_bracket_not_per_string() -> None:
    for i in range(300):
        V.rules_for(f"0.19.{i}rc1.dev{i}+g{i:x}")
    assert V._rules_of.cache_info().currsize <= len(V.KNOWN_VERSIONS)


def test_every_change_sits_at_the_minor_series_of_a_known_release() -> None:
    """So a version and its bracket (newest known release of its series or older) have equal rules."""
    series = {V.parse_version(v)[:2] for v in V.KNOWN_VERSIONS}
    for change in V.CHANGELOG:
        since = V.parse_version(change.since)
        assert since[:2] in series and since[2] == 0, change.since
        assert change.source and change.fields
        # every entry changes something compared with the release just before it
        before = V.rules_for(V.KNOWN_VERSIONS[V.KNOWN_VERSIONS.index(V.bracket_of(since)) - 1])
        assert any(getattr(before, name) != value for name, value in change.fields.items()), change.since


def test_changelog_is_in_release_order_and_names_real_fields() -> None:
    names = {f.name for f in dataclasses.fields(V.VersionRules)}
    order = [V.parse_version(c.since) for c in V.CHANGELOG]
    assert order == sorted(order)
    for change in V.CHANGELOG:
        assert set(change.fields) <= names - {"version", "version_tuple"}


@pytest.mark.parametrize(
    ("version", "field", "value"),
    [
        # reference §1/§2.4: V1 default from 0.8.0
        ("0.7.3", "engine", "v0"),
        ("0.8.5", "engine", "v1"),
        # reference §7: --gpu-memory-utilization 0.9 through 0.14.0, 0.92 in 0.20.2
        ("0.19.0", "default_gpu_memory_utilization", 0.9),
        ("0.20.2", "default_gpu_memory_utilization", 0.92),
        # reference §7: --kv-cache-memory-bytes present 0.10.2+; --kv-offloading-size 0.14.0+, absent 0.11.0
        ("0.9.2", "has_kv_cache_memory_bytes_flag", False),
        ("0.10.2", "has_kv_cache_memory_bytes_flag", True),
        ("0.11.0", "has_kv_offloading_flags", False),
        ("0.14.0", "has_kv_offloading_flags", True),
        # reference §7: --swap-space removed by 0.20.2
        ("0.19.0", "has_swap_space_flag", True),
        ("0.20.2", "has_swap_space_flag", False),
        # reference §5.4: fp8_ds_mla added in 0.14.0
        ("0.11.0", "has_fp8_ds_mla", False),
        ("0.14.0", "has_fp8_ds_mla", True),
        # v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size (read from the wheels): the smallest
        # bucket in 0.11.0, the largest within 1.25x in 0.14.0-0.17.0, within 1.5x from 0.18.0 (to 0.33.0)
        ("0.11.0", "group_size_max_ratio", None),
        ("0.14.0", "group_size_max_ratio", 1.25),
        ("0.17.0", "group_size_max_ratio", 1.25),
        ("0.18.0", "group_size_max_ratio", 1.5),
        ("0.33.0", "group_size_max_ratio", 1.5),
        # reference §4.2: "Free memory on device cuda:0 (...)" from 0.14.0
        ("0.11.0", "free_memory_device", "device "),
        ("0.14.0", "free_memory_device", "device cuda:0 "),
        # reference §6: prefix caching off by default in V0, on in V1 (0.8.5: None -> True)
        ("0.7.3", "prefix_caching_default", False),
        ("0.8.5", "prefix_caching_default", True),
    ],
)
def test_rule_boundaries(version: str, field: str, value: object) -> None:
    assert getattr(V.rules_for(version), field) == value


def _device(name: str, gib: float, sm: str = "9.0") -> DeviceSpec:
    return H100.model_copy(
        update={"id": name, "name": name, "memory_total_bytes": int(gib * GIB), "compute_capability": sm}
    )


def _defaults(device: DeviceSpec, version: str, *, max_model_len: int = 32768) -> tuple[int, int]:
    rules = V.rules_for(version)
    seqs = default_max_num_seqs(device=device, rules=rules)
    tokens = default_max_num_batched_tokens(
        device=device, rules=rules, max_model_len=max_model_len, max_num_seqs=seqs, chunked_prefill=True
    )
    return seqs, tokens


@pytest.mark.parametrize(
    ("device_id", "version", "expected"),
    [
        # vllm 0.33.0 vllm/engine/arg_utils.py get_batch_defaults, OPENAI_API_SERVER column:
        # >= 160 GiB -> 1024 / 16384; >= 70 GiB and "a100" not in the name and not GB10 -> 1024 / 8192; else 256 / 2048
        ("nvidia-h200-141gb", "0.33.0", (1024, 8192)),  # "the default batched tokens on an H200 in 0.33"
        ("nvidia-b200", "0.33.0", (1024, 16384)),
        ("amd-mi300x-192gb", "0.33.0", (1024, 16384)),
        ("nvidia-a100-sxm4-80gb", "0.33.0", (256, 2048)),
        ("nvidia-a800-80gb", "0.33.0", (1024, 8192)),  # vLLM matches the substring "a100" only
        ("nvidia-l40s-48gb", "0.33.0", (256, 2048)),
        # vllm 0.19.0 arg_utils.py:2053 `device_memory >= 70 * GiB_bytes and "a100" not in device_name`: no 160 tier
        ("nvidia-b200", "0.19.0", (1024, 8192)),
        ("nvidia-a100-sxm4-80gb", "0.19.0", (256, 2048)),
        # vllm 0.8.5 arg_utils.py:1596 `if device_memory >= 70 * GiB_bytes:` (no A100 exclusion yet)
        ("nvidia-a100-sxm4-80gb", "0.8.5", (1024, 8192)),
        # V0 0.6.6: SchedulerConfig 256 sequences, 2048 batched tokens with chunked prefill (reference §7)
        ("nvidia-h100-sxm-80gb", "0.6.6", (256, 2048)),
    ],
)
def test_batch_defaults_by_device_and_release(
    device_id: str, version: str, expected: tuple[int, int]
) -> None:
    assert _defaults(find_device(device_id), version) == expected


def test_gb10_stays_on_the_small_tier_from_0_33() -> None:
    # 0.33.0 arg_utils: "GB10 (DGX Spark, cc 12.1) has the memory but not the compute" -> small tier
    spark = _device("GB10-like", 119.7, sm="12.1")
    assert _defaults(spark, "0.33.0") == (256, 2048)
    assert _defaults(spark, "0.30.0") == (1024, 8192)


def test_batched_tokens_without_chunked_prefill_and_the_seqs_cap() -> None:
    rules = V.rules_for("0.33.0")
    h200 = find_device("nvidia-h200-141gb")
    # chunked prefill off: max(max_model_len, default) (reference §7)
    assert (
        default_max_num_batched_tokens(
            device=h200, rules=rules, max_model_len=32768, max_num_seqs=1024, chunked_prefill=False
        )
        == 32768
    )
    # always min(max_num_seqs x max_model_len, value): 2 sequences of 1024 tokens -> 2048
    assert (
        default_max_num_batched_tokens(
            device=h200, rules=rules, max_model_len=1024, max_num_seqs=2, chunked_prefill=True
        )
        == 2048
    )


def test_format_gib_follows_the_release() -> None:
    # reference §0: %.2f before 0.14, str(round(x / 2**30, 2)) after (16.0, not 16.00)
    assert V.format_gib(16 * GIB, V.rules_for("0.11.0").format_gib_style) == "16.00"
    assert V.format_gib(16 * GIB, V.rules_for("0.14.0").format_gib_style) == "16.0"


def test_chunked_prefill_default() -> None:
    # V0 0.6.6 turns chunked prefill on only above 32,768 tokens; V1 always chunks (reference §7)
    v0, v1 = V.rules_for("0.6.6"), V.rules_for("0.8.5")
    assert not V.default_chunked_prefill(v0, max_model_len=32768)
    assert V.default_chunked_prefill(v0, max_model_len=32769)
    assert V.default_chunked_prefill(v1, max_model_len=1024)
    assert V.LAST_V0_RELEASE == "0.7.3"
