"""The one bounded number parser every surface uses (app.core.numbers)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core import numbers
from app.core.command import human_readable_int
from app.core.errors import PlannerError

PARSERS = (numbers.parse_int, numbers.parse_human_int, numbers.parse_count, numbers.parse_float)


@given(text=st.text(max_size=200))
def test_any_text_is_a_number_or_a_value_error(text: str) -> None:
    # Never OverflowError, never inf/nan, never a number longer than the cap.
    for parse in PARSERS:
        try:
            value = parse(text)
        except ValueError:
            continue
        assert len(text.strip().replace("_", "").replace(",", "")) <= numbers.MAX_NUMBER_CHARS
        if isinstance(value, float):
            assert math.isfinite(value) and abs(value) <= numbers.MAX_FLOAT_MAGNITUDE
        else:
            assert value >= 0


@given(digits=st.integers(min_value=33, max_value=5000), char=st.sampled_from("0123456789"))
def test_long_numbers_are_refused_by_length(digits: int, char: str) -> None:
    for parse in PARSERS:
        with pytest.raises(ValueError, match="at most 32 characters"):
            parse(char * digits)


@given(value=st.integers(min_value=0, max_value=10**20))
def test_plain_ints_round_trip(value: int) -> None:
    assert numbers.parse_int(str(value)) == value
    assert numbers.parse_human_int(f"{value:,}") == value
    if value <= numbers.MAX_FLOAT_MAGNITUDE:
        assert numbers.parse_float(str(value)) == float(value)


@given(text=st.text(alphabet="²³¹٣٢۴५௬๗᠘０１", min_size=1, max_size=5))
def test_non_ascii_digits_are_refused(text: str) -> None:
    # str.isdigit() and int() accept some of these (int("٣٢") == 32): the parser takes ASCII only.
    for parse in PARSERS:
        with pytest.raises(ValueError):
            parse(text)


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "Infinity", "1e308", "1e999", "-1e16"])
def test_floats_are_finite_and_bounded(text: str) -> None:
    with pytest.raises(ValueError):
        numbers.parse_float(text)


def test_human_ints_by_hand() -> None:
    # vLLM's rule: lower-case suffix decimal, upper-case binary; exact decimal arithmetic.
    assert numbers.parse_human_int("32k") == 32_000
    assert numbers.parse_human_int("32K") == 32 * 1024
    assert numbers.parse_human_int("25.6k") == 25_600  # float arithmetic gives 25600.000000000004
    assert numbers.parse_human_int("1M") == 1_048_576
    with pytest.raises(ValueError, match="not a whole number"):
        numbers.parse_human_int("1.5")
    assert numbers.parse_count("1.5B") == 1_500_000_000
    assert numbers.parse_count("70b") == 70_000_000_000
    assert numbers.parse_float("0.9") == 0.9
    assert numbers.parse_float("1e-3") == 0.001


def test_command_flags_name_the_field() -> None:
    with pytest.raises(PlannerError) as caught:
        human_readable_int("9" * 400, field_name="max_model_len")
    assert caught.value.field == "max_model_len"
