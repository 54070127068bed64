"""version_notes.yaml: the release aspects one boolean VersionRules field decides are validated data."""

from __future__ import annotations

import pydantic
import pytest

from app.core.versions import rules_for
from app.web import version_notes
from app.web.version_notes import ASPECTS, SWITCHES, Switch


def test_every_row_of_the_file_is_an_aspect_of_the_page_and_names_a_boolean_rule() -> None:
    placed = {key for key, *_ in ASPECTS}
    assert set(SWITCHES) <= placed
    assert {row.field for row in SWITCHES.values()} <= version_notes.BOOLEAN_RULES


def test_a_row_that_names_no_boolean_rule_or_an_unknown_key_is_refused() -> None:
    row = {"topic": "T", "field": "has_auto_fit", "when_set": "a", "when_unset": "b"}
    Switch.model_validate(row)
    with pytest.raises(pydantic.ValidationError, match="not a boolean field"):
        Switch.model_validate({**row, "field": "default_gpu_memory_utilization"})  # a float rule
    with pytest.raises(pydantic.ValidationError):
        Switch.model_validate({**row, "on": "a"})  # YAML would read an `on:` key as True


def test_the_switches_read_the_release_they_describe() -> None:
    # versions.py CHANGELOG: `--max-model-len auto` from 0.14.0 (has_auto_fit), the null block in the
    # start-up check from 0.30.0 (null_block_in_check); the spans are the known releases sharing each value
    notes = {note.key: note for note in version_notes.version_notes(rules_for("0.6.6"))}
    assert (notes["auto_fit"].topic, notes["auto_fit"].value) == (
        "--max-model-len auto",
        "does not exist yet",
    )
    assert notes["auto_fit"].detail == "0.6.6 – 0.13.0"  # 0.13.0 is a known release now; auto came in 0.14.0
    assert notes["null_block"].value == "available must hold one request"
    new = {note.key: note for note in version_notes.version_notes(rules_for("0.33.0"))}
    assert new["auto_fit"].value == "available: vLLM searches the largest length that fits"
    assert new["null_block"].value == "available − one null block must hold one request"
    assert new["null_block"].detail == "0.30.0 – 0.34.0"  # 0.34.0 known from round 11


def test_its_sentences_are_message_ids_and_flags_stay_verbatim() -> None:
    ids = {text for _, text in version_notes.message_ids()}
    assert "CUDA graphs subtracted from the budget before KV sizing" in ids
    assert "--kv-offloading-size" not in ids and "--max-num-batched-tokens" not in ids
