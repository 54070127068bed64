"""Version strings are read by one parser (app/core/version_parse.py, behind versions.parse_version), and the
architecture registry file is read once.

Round 8's closing note found three readers beside versions.parse_version (hf_config/registry._version,
versions_changelog._since and packaging.version.Version in diagnose/case.py) and vllm_architectures.json
parsed three times at start-up (architecture_table, releases_read, _registry_dicts).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.core.hf_config import registry
from app.core.perf.predict import LEGACY_BAND_SUFFIX, version_band
from app.core.versions import parse_version

CORE = Path(__file__).resolve().parents[2] / "app" / "core"
READER = CORE / "version_parse.py"
NOT_YET: set[Path] = set()  # perf/predict.version_band read by hand until round 9 (fixes9)
HAND_SPLIT = re.compile(r"int\(\w+\) for \w+ in [\w.\[\]\"']+\.split\(\"\.\"\)")
# the loop form: for piece in version.split(".")[:3]: ... int(digits) (predict.version_band's old reader)
LOOP_SPLIT = re.compile(r"for \w+ in [\w.]+\.split\(\"\.\"\)")


def test_no_core_module_parses_a_version_by_hand() -> None:
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        if path == READER or path in NOT_YET:
            continue
        text = path.read_text(encoding="utf-8")
        if (
            HAND_SPLIT.search(text)
            or LOOP_SPLIT.search(text)
            or re.search(r"^from packaging\.version import Version$", text, re.M)
        ):
            offenders.append(str(path.relative_to(CORE)))
    assert not offenders, offenders


def test_the_hand_split_pattern_catches_the_old_readers() -> None:
    assert HAND_SPLIT.search('tuple(int(part) for part in change.since.split("."))')
    assert HAND_SPLIT.search('[int(part) for part in text.split(".")]')
    assert HAND_SPLIT.search('tuple(int(x) for x in version.split(".")[:3])')
    assert LOOP_SPLIT.search('for piece in vllm_version.split(".")[:3]:')
    assert not LOOP_SPLIT.search('for part in reversed(key.split(".")[1:]):')  # command.py's dotted keys


def test_the_perf_band_reads_a_version_as_pep_440_does() -> None:
    # perf/predict.LEGACY_BAND_BELOW (0, 15, 0): "0.14rc1" is 0.14.0's first candidate (PEP 440 release (0, 14)),
    # in the legacy band; the old hand reader took the digits of "14rc1" as minor 141 and gave the current band
    assert version_band("0.14rc1") == LEGACY_BAND_SUFFIX
    assert version_band("0.14.1.dev3+g4b7f5ea1a") == LEGACY_BAND_SUFFIX
    assert version_band("0.15.0rc2") == ""
    assert version_band("0.33.0") == ""


def test_a_release_candidate_reads_like_its_release() -> None:
    # registry.has_config_hook compared releases with int(part) for each dot part, so "0.27.0rc1" raised
    # ValueError; parse_version drops the pre-release: Qwen3_5ForCausalLM gains the SSM-dtype hook at
    # 0.27.0 (vllm_model_config_map.json), and not at 0.26.0
    assert parse_version("0.27.0rc1") == (0, 27, 0)
    hook = registry.SSM_DTYPE_HOOK
    assert registry.has_config_hook(hook, architecture="Qwen3_5ForCausalLM", release="0.27.0rc1")
    assert not registry.has_config_hook(hook, architecture="Qwen3_5ForCausalLM", release="0.26.0")


class _CountingPath(type(Path())):  # type: ignore[misc]
    reads = 0

    def read_text(self, *args: object, **kwargs: object) -> str:  # type: ignore[override]
        _CountingPath.reads += 1
        return super().read_text(*args, **kwargs)  # type: ignore[arg-type]


CACHED = ("_architectures_file", "architecture_table", "releases_read", "_registry_dicts")


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def clear() -> None:
        for name in CACHED:
            cached = getattr(registry, name, None)
            if cached is not None:
                cached.cache_clear()

    clear()
    _CountingPath.reads = 0
    monkeypatch.setattr(registry, "ARCHITECTURES_FILE", _CountingPath(registry.ARCHITECTURES_FILE))
    yield
    clear()  # the next caller reads the real path again


@pytest.mark.usefixtures("fresh_registry")
def test_the_architecture_file_is_read_once() -> None:
    table = registry.architecture_table()
    releases = registry.releases_read()
    pooling = registry.is_pooling_architecture("BertModel")
    assert _CountingPath.reads == 1
    # what the one read gives: 0.33.0 among the releases read, and Bert an embedding model
    # (registry.py _EMBEDDING_MODELS has "BertModel")
    assert "0.33.0" in releases and "LlamaForCausalLM" in table and pooling


def test_a_table_s_release_reads_as_a_user_s_version() -> None:
    from app.core.version_parse import release_numbers

    for text in ("0.28.0", "0.10.1.1", "0.14.0rc2", "0.6.6"):
        assert release_numbers(text) == parse_version(text)
    assert release_numbers("0.10.1.1") == (0, 10, 1)
