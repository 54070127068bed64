"""The seed's 触发场景 (trigger scenarios) as runnable workloads: data (presets.yaml), validated at import."""

from __future__ import annotations

from pathlib import Path

import yaml  # type: ignore[import-untyped]  # no types-PyYAML in the lock file
from pydantic import field_validator

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

    @field_validator("label", "description", "hits_first", mode="after")
    @classmethod
    def _translatable(cls, value: str) -> str:
        """The file's English sentence as a Text, translated where it is shown."""
        return Text(value)


class _PresetsFile(FrozenModel):
    presets: tuple[WorkloadPreset, ...]


PRESETS_FILE = Path(__file__).with_name("presets.yaml")
WORKLOAD_PRESETS: dict[str, WorkloadPreset] = {
    p.key: p
    for p in _PresetsFile.model_validate(yaml.safe_load(PRESETS_FILE.read_text(encoding="utf-8"))).presets
}


def message_ids() -> list[tuple[tuple[str, int], str]]:
    """The presets' English sentences, for scripts/extract_messages.py (where, message id)."""
    where = ("app/core/workload/presets.yaml", 0)
    return [
        (where, text) for p in WORKLOAD_PRESETS.values() for text in (p.label, p.description, p.hits_first)
    ]
