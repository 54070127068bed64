"""The benchmark fieldset opens from the one list of `vllm bench serve` arguments (app.web.measured_runs.BENCH_FIELDS):
forms.html's bench_open macro reads it (a Jinja global) instead of naming the arguments again."""

from __future__ import annotations

import pytest

from app.web.measured_runs import BENCH_FIELDS
from app.web.templating import TEMPLATES_DIR, make_environment

NONE_GIVEN = {name: "" for name in BENCH_FIELDS} | {"bench_serve": "", "ignore_eos": ""}


def _bench_open(values: dict[str, str]) -> str:
    return str(make_environment().get_template("_partials/forms.html").module.bench_open(values))  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", BENCH_FIELDS)
def test_any_one_argument_opens_the_fieldset(name: str) -> None:
    assert _bench_open({**NONE_GIVEN, name: "7"}) == " open"


def test_none_given_keeps_it_closed_and_the_switches_open_it() -> None:
    assert _bench_open(NONE_GIVEN) == ""
    assert _bench_open({**NONE_GIVEN, "bench_serve": "true"}) == " open"
    assert _bench_open({**NONE_GIVEN, "ignore_eos": "true"}) == " open"


def test_the_macro_names_no_argument_itself() -> None:
    macro = next(
        line
        for line in (TEMPLATES_DIR / "_partials/forms.html").read_text().splitlines()
        if "macro bench_open" in line
    )
    assert [name for name in BENCH_FIELDS if name in macro] == []
