"""Every equation the planner shows holds: parse the numbers substituted into it, evaluate, and compare
with the value shown beside it (issue 13: the block-math card showed `507,904 × 16 = 1,310,720 B`,
`13,146 × 16 = 30,048` and `30,048 ÷ 32,768 = 2.39x` for gemma-3, none of them true).

Numbers are read as intervals: a figure printed with two decimals (GiB, concurrency) stands for anything
within half a unit of its last digit, so `79.10 × 0.9 − 51.09` is checked against `16.05 GiB` within the rounding the page
itself did, and integer arithmetic (blocks, tokens, bytes) must hold exactly.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pytest
import yaml  # type: ignore[import-untyped]
from pydantic import ValidationError

from app.core import equations as E
from app.core.catalog import find_device, find_model, list_models
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.specs import ServeConfig
from app.core.versions import rules_for

Interval = tuple[Fraction, Fraction]
ROUNDED_DECIMALS = 2
_TOKEN = re.compile(r"\s*(?:(\d(?:\d|,(?=\d))*(?:\.\d+)?)|(max\(|[×÷+−()⌊⌋⌈⌉,]))")


def _number(text: str) -> Interval:
    digits = text.replace(",", "")
    value = Fraction(digits)
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    # GiB amounts are printed with two decimals (rounded); a utilization or a count is exact as printed
    half = Fraction(1, 2 * 10**decimals) if decimals == ROUNDED_DECIMALS else Fraction(0)
    return value - half, value + half


def _mul(a: Interval, b: Interval) -> Interval:
    products = [x * y for x in a for y in b]
    return min(products), max(products)


def _div(a: Interval, b: Interval) -> Interval:
    assert b[0] > 0 or b[1] < 0, "division by an interval holding zero"
    return _mul(a, (1 / b[1], 1 / b[0]))


def evaluate(expression: str) -> Interval:
    """× ÷ before + −, left to right; ( ), ⌊ ⌋ and ⌈ ⌉ group (and floor / ceil); max(a, b)."""
    tokens: list[str] = []
    pos = 0
    text = expression.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m, f"cannot read {text[pos:]!r} in {expression!r}"
        tokens.append(m.group(1) or m.group(2))
        pos = m.end()
    index = 0

    def atom() -> Interval:
        nonlocal index
        tok = tokens[index]
        index += 1
        if tok == "max(":  # max(a, b): 0.34.0's pool is at least 0 (extensible_kv.pool_bytes)
            first = expr()
            assert tokens[index] == ",", expression
            index += 1
            second = expr()
            assert tokens[index] == ")", expression
            index += 1
            return max(first[0], second[0]), max(first[1], second[1])
        if tok in "(⌊⌈":
            inner = expr()
            close = tokens[index]
            index += 1
            assert close == {"(": ")", "⌊": "⌋", "⌈": "⌉"}[tok], expression
            if tok == "⌊":
                return Fraction(math.floor(inner[0])), Fraction(math.floor(inner[1]))
            if tok == "⌈":
                return Fraction(math.ceil(inner[0])), Fraction(math.ceil(inner[1]))
            return inner
        return _number(tok)

    def term() -> Interval:
        nonlocal index
        value = atom()
        while index < len(tokens) and tokens[index] in "×÷":
            op = tokens[index]
            index += 1
            value = _mul(value, atom()) if op == "×" else _div(value, atom())
        return value

    def expr() -> Interval:
        nonlocal index
        value = term()
        while index < len(tokens) and tokens[index] in "+−":
            op = tokens[index]
            index += 1
            other = term()
            value = (
                (value[0] + other[0], value[1] + other[1])
                if op == "+"
                else (value[0] - other[1], value[1] - other[0])
            )
        return value

    result = expr()
    assert index == len(tokens), f"unread tokens in {expression!r}"
    return result


def shown_value(value: str) -> Interval:
    m = re.match(r"\s*(−|-)?(\d[\d,]*(?:\.\d+)?)", value)
    assert m, f"no number in {value!r}"
    low, high = _number(m.group(2))
    return (-high, -low) if m.group(1) else (low, high)


def holds(formula: str, value: str) -> bool:
    """``formula``'s last `= …` (or `≈ …`) part evaluates to ``value`` within the shown rounding."""
    expression = re.split(r" [=≈] ", formula)[-1]
    low, high = evaluate(expression)
    v_low, v_high = shown_value(value)
    return low <= v_high and v_low <= high


def test_the_evaluator_catches_the_false_equations_of_issue_13() -> None:
    assert not holds("507,904 × 16", "1,310,720 B")
    assert not holds("13,146 × 16", "30,048")
    assert not holds("30,048 ÷ 32,768", "2.39x")
    # and accepts true ones: 13,146 // 7 * 16 = 1,878 * 16 = 30,048; 13,146 / 5,510 = 2.3858 -> 2.39
    assert holds("⌊13,146 ÷ 7⌋ × 16", "30,048")
    assert holds("13,146 ÷ (6 × 577 + 2,048)", "2.39x")
    assert holds("79.10 × 0.9 − 51.09 − 3.80 − 0.25", "16.05 GiB")  # 71.19 - 55.14 = 16.05
    assert holds("max(0, 79.10 − 80.00)", "0.00 GiB") and not holds("max(0, 79.10 − 80.00)", "-0.90 GiB")
    assert holds("max(0, 1,024 − 24)", "1,000")  # a comma before a digit is a thousands separator
    assert not holds("79.10 × 0.9 − 51.09 − 3.80 − 0.25", "16.15 GiB")


VERSIONS = ("0.6.6", "0.8.5", "0.10.2", "0.19.0", "0.24.0", "0.33.0", "0.34.0")
TENSOR_PARALLEL = (1, 2, 8)


def _estimates():
    device = find_device("h100")
    for entry in list_models():
        model = find_model(entry.id)
        for version in VERSIONS:
            for tp in TENSOR_PARALLEL:
                serve = ServeConfig(
                    tensor_parallel_size=tp, max_model_len=min(32768, model.max_model_len_derived)
                )
                try:
                    est = estimate(
                        model=model, device=device, serve=serve, vllm_version=version, target_concurrency=4
                    )
                except PlannerError:
                    continue  # TP that does not divide the heads: refused, nothing shown
                yield model, version, est


def test_every_catalog_equation_holds_for_every_version_and_tp() -> None:
    """Every term of /api/estimate and every row of the block-math card, for 80 models × 7 versions ×
    3 TP sizes, evaluates to the value shown beside it."""
    checked = 0
    false: list[str] = []
    for model, version, est in _estimates():
        rows = [(t.formula, t.value) for t in est.terms]
        rows += [(eq.formula, eq.value) for eq in E.block_equations(est, rules_for(version))]
        seed = E.seed_formula(
            model=model,
            est=est,
            concurrency=4,
            kv_layers=sum(1 for k in model.layer_kinds if k in ("full", "sliding", "chunked", "mla")),
        )
        rows.append((seed.expression, f"{seed.bytes:,} B"))
        for formula, value in rows:
            checked += 1
            if not holds(formula, value):
                false.append(f"{model.name} {version} TP{est.tensor_parallel_size}: {formula} = {value}")
    assert checked > 5000
    assert not false, "\n".join(false[:20])


def test_equations_hold_with_pp_fp8_and_a_fixed_kv_budget_on_other_devices() -> None:
    """Pipeline stages, fp8 KV at TP 4, --kv-cache-memory-bytes, on an Ascend 910B and an MI300X too."""
    configs = (
        ServeConfig(pipeline_parallel_size=2, max_model_len=8192),
        ServeConfig(kv_cache_dtype="fp8", tensor_parallel_size=4, max_model_len=100_000),
        ServeConfig(kv_cache_memory_bytes=20 * 2**30, max_model_len=4096),
    )
    false: list[str] = []
    checked = 0
    for device_id in ("910b", "mi300x"):
        device = find_device(device_id)
        for entry in list_models():
            model = find_model(entry.id)
            for version in ("0.11.0", "0.21.0", "0.30.0", "0.34.0"):
                for serve in configs:
                    try:
                        est = estimate(
                            model=model,
                            device=device,
                            serve=serve,
                            vllm_version=version,
                            target_concurrency=3,
                        )
                    except PlannerError:
                        continue
                    rows = [(t.formula, t.value) for t in est.terms]
                    rows += [(eq.formula, eq.value) for eq in E.block_equations(est, rules_for(version))]
                    for formula, value in rows:
                        checked += 1
                        if not holds(formula, value):
                            false.append(f"{model.name} {device_id} {version}: {formula} = {value}")
    assert checked > 5000
    assert not false, "\n".join(false[:20])


def test_tokens_follow_vllms_floating_point_product() -> None:
    # Qwen2.5-72B, fp8 KV, TP 4: 8 KV heads / 4 = 2 per rank x 128 x 2 (K and V) x 1 B = 512 B per token
    # and layer; x 16 = 8,192 B pages; x 80 layers = 655,360 B per block. A pool fixed at 53,736 blocks
    # (--kv-cache-memory-bytes 35,216,424,960) and S = 100,000 (cdiv(100,000, 16) = 6,250 blocks per request):
    # exactly 53,736 x 100,000 / 6,250 = 859,776, but vLLM 0.21 prints int(8.5977599999999992 x 100000) =
    # 859,775; the equation shows the float vLLM multiplies, so it holds.
    est = estimate(
        model=find_model("Qwen/Qwen2.5-72B"),
        device=find_device("h100"),
        serve=ServeConfig(
            kv_cache_dtype="fp8",
            tensor_parallel_size=4,
            max_model_len=100_000,
            kv_cache_memory_bytes=53_736 * 655_360,
        ),
        vllm_version="0.21.0",
    )
    assert est.bytes_per_block == 655_360 and est.num_gpu_blocks == 53_736
    tokens = next(eq for eq in E.block_equations(est, rules_for("0.21.0")) if eq.key == "kv_tokens")
    assert est.kv_tokens == 859_775
    assert tokens.expression == "⌊8.5977599999999992 × 100,000⌋" and holds(tokens.formula, tokens.value)


def test_the_formula_wordings_are_validated_data() -> None:
    """app/core/formulas.yaml words every value of the four VersionRules formula fields; a value left
    unworded is refused at load (a release with a new formula cannot reach a page without its words)."""
    data = yaml.safe_load(E.FORMULAS_FILE.read_text(encoding="utf-8"))
    assert E.TOKENS_FORMULA["blocks_div_groups"] == "⌊blocks ÷ KV groups⌋ × block_size"
    assert E.BUDGET_FORMULA[rules_for("0.33.0").budget_style] == (
        "total × utilization − weights − activation peak − non-torch"
    )
    del data["needed_formula"]["first_group"]
    with pytest.raises(ValidationError, match="first_group"):
        E._Wordings.model_validate(data)
