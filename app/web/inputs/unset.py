"""The one rule of a box left blank: a blank (or, in JSON, null) value of a field that declares it so is not
given at all, as if the key were absent: the field's default stands and ``model_fields_set`` leaves it out (the
page shows the box blank with the default as its placeholder, the permalink omits it). The pages' lenient parse
and the strict JSON API read it alike (PlannerParams' ``unset_when_blank``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any


def is_blank(value: object) -> bool:
    """An empty or all-space string, or None (JSON's null)."""
    return value is None or (isinstance(value, str) and not value.strip())


def without_unset(data: Mapping[str, Any], names: Collection[str]) -> dict[str, Any]:
    """``data`` without the keys of ``names`` whose value is blank (:func:`is_blank`)."""
    return {key: value for key, value in data.items() if not (key in names and is_blank(value))}
