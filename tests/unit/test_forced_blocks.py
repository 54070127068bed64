"""The MLA blocks vLLM forces before 0.18.0, and the sparse-MLA indexer's 64-token check, by release (issue 22
item 1: rules as changelog rows, versions_changelog.py).

Read from the wheels (`pip download --no-deps vllm==X`), platforms/cuda.py CudaPlatform.check_and_update_config:
- 0.7.3: no block forcing; 0.8.5 / 0.9.2: FlashMLA (the MLA default) `if ... cache_config.block_size != 64:
  cache_config.block_size = 64`, "Forcing kv cache block size to 64 for FlashMLA backend.";
- 0.10.2: also CUTLASS_MLA (Blackwell) `!= 128` -> 128 "... to 128 for CUTLASS_MLA backend." and FlashInferMLA
  `not in [32, 64]` -> 64; 0.11.0: also `if use_sparse and cache_config.block_size != 64` -> FlashMLASparse;
- 0.14.0: FlashMLA `block_size % 64 != 0`, CUTLASS_MLA `% 128 != 0` (a multiple is kept); FlashMLASparse `!= 64`;
- 0.17.0: also FlashInferMLASparse `not in (32, 64)`; 0.18.0: no forcing (update_block_size_for_backend keeps a
  --block-size). The cache_config.block_size written there is what the user's --block-size becomes.
- v1/attention/backends/mla/indexer.py DeepseekV32IndexerBackend.get_supported_kernel_block_sizes: absent in
  0.11.0, `[1 if current_platform.is_rocm() else 64]` from 0.14.0, with gpu_model_runner.py
  _select_common_block_size's "No common block size for %d".
"""

from __future__ import annotations

import pytest

from app.core.catalog import find_device
from app.core.versions import rules_for
from tests.specs_factory import deepseek_v3_like
from tests.unit.test_backends import choose
from tests.unit.test_current_configs_0_33 import _est

H200 = find_device("nvidia-h200-141gb")
B200 = find_device("nvidia-b200")
FLASHMLA_LINE = "Forcing kv cache block size to 64 for FlashMLA backend."


def _choose(device, version, **serve):  # type: ignore[no-untyped-def]
    return choose(deepseek_v3_like(), device, version, **serve)


@pytest.mark.parametrize(
    ("version", "block", "expected"),
    [
        # 0.11.0: --block-size 16 != 64 -> 64 (before this change: FLASHMLA skipped, TRITON_MLA at 16 "Fallback")
        ("0.11.0", 16, ("FLASHMLA", 64, [FLASHMLA_LINE])),
        # 0.11.0 `!= 64`: a 128 is forced down to 64 too
        ("0.11.0", 128, ("FLASHMLA", 64, [FLASHMLA_LINE])),
        # 0.14.0 `% 64 != 0`: 128 is two kernel blocks, kept, no line; 32 is forced. 0.13.0 / 0.14.0
        # _get_backend_priorities put FLASH_ATTN_MLA first on 9.x, which runs at the block FlashMLA's branch left
        ("0.14.0", 128, ("FLASH_ATTN_MLA", 128, [])),
        ("0.14.0", 32, ("FLASH_ATTN_MLA", 64, [FLASHMLA_LINE])),
        # 0.8.5 (FlashMLA's first forcing release): 16 -> 64
        ("0.8.5", 16, ("FLASHMLA", 64, [FLASHMLA_LINE])),
    ],
)
def test_flashmla_writes_its_block_over_a_block_size(version, block, expected) -> None:  # type: ignore[no-untyped-def]
    choice = _choose(H200, version, block_size=block)
    assert (choice.name, choice.block_size, choice.log_lines) == expected
    assert choice.warnings == []


def test_no_forcing_before_0_8_or_from_0_18() -> None:
    # 0.7.3 cuda.py has no forcing: FLASHMLA (fixed 64) rejects a --block-size 16, the next MLA backend runs
    old = _choose(H200, "0.7.3", block_size=16)
    assert (old.name, old.block_size, old.log_lines) == ("TRITON_MLA", 16, [])
    # 0.18.0: FLASH_ATTN_MLA (MultipleOf(16)) leads on SM90 and keeps the 16 the user gave
    new = _choose(H200, "0.18.0", block_size=16)
    assert (new.name, new.block_size, new.log_lines) == ("FLASH_ATTN_MLA", 16, [])


def test_cutlass_mla_forcing_names_its_own_block() -> None:
    # 0.10.2 / 0.11.0 on SM100: CUTLASS_MLA, 16 != 128 -> "Forcing kv cache block size to 128 for CUTLASS_MLA
    # backend." (round 7 printed nothing here: its table named only 64-token backends)
    for version in ("0.10.2", "0.11.0"):
        choice = _choose(B200, version)
        assert (choice.name, choice.block_size) == ("CUTLASS_MLA", 128)
        assert choice.log_lines == ["Forcing kv cache block size to 128 for CUTLASS_MLA backend."]
    # 0.17.0: CUTLASS_MLA's branch only when qk_nope_head_dim is not 128 (FLASHINFER_MLA's otherwise, and
    # supports_combination refuses it too): a 64-dim variant
    mla = deepseek_v3_like().mla
    assert mla is not None
    odd = deepseek_v3_like().model_copy(update={"mla": mla.model_copy(update={"qk_nope_head_dim": 64})})
    choice = choose(odd, B200, "0.17.0")
    assert (choice.name, choice.block_size) == ("CUTLASS_MLA", 128)
    assert choice.log_lines == ["Forcing kv cache block size to 128 for CUTLASS_MLA backend."]
    # 0.9.2 forced FlashMLA only: CUTLASS_MLA's 128 is its own preference, with no line
    assert _choose(B200, "0.9.2").log_lines == []
    # 0.14.0 `% 128 != 0`: 256 kept
    assert _choose(B200, "0.14.0", block_size=256).block_size == 256


def test_sparse_mla_block_forced_before_0_18() -> None:
    # DeepSeek-V3.2 on H100 (SM90): FLASHMLA_SPARSE. 0.14.0 check_and_update_config: not Blackwell -> use_flashmla,
    # and is_flashmla_dense_supported() (9.x): 32 % 64 != 0 -> 64, "Forcing ... for FlashMLA backend."; then
    # `use_sparse and block_size != 64` finds 64 and says nothing (rules9: the FlashMLA step runs for sparse models
    # too). At --block-size 128 FlashMLA keeps it (128 % 64 == 0) and the sparse step writes 64 with its own line.
    est = _est("deepseek-ai--DeepSeek-V3.2", "h100", 8, version="0.14.0", block_size=32)
    assert (est.attention_backend, est.block_size) == ("FLASHMLA_SPARSE", 64)
    assert [line for line in est.log_lines if line.startswith("Forcing")] == [
        "Forcing kv cache block size to 64 for FlashMLA backend."
    ]
    est = _est("deepseek-ai--DeepSeek-V3.2", "h100", 8, version="0.14.0", block_size=128)
    assert est.block_size == 64
    assert [line for line in est.log_lines if line.startswith("Forcing")] == [
        "Forcing kv cache block size to 64 for FlashMLASparse backend."
    ]


@pytest.mark.parametrize(
    ("version", "device", "backend", "block"),
    [
        # 0.14.0: FLASH_ATTN_MLA leads 0.13/0.14's 9.x list; FlashMLA's branch forced 64 first
        ("0.14.0", "nvidia-h200-141gb", "FLASH_ATTN_MLA", 64),
        # 0.15.0 / 0.17.0: FLASH_ATTN_MLA leads the SM90 list, yet FlashMLA's branch forced 64 on any 9.x device
        ("0.15.0", "nvidia-h200-141gb", "FLASH_ATTN_MLA", 64),
        ("0.17.0", "nvidia-h200-141gb", "FLASH_ATTN_MLA", 64),
        # 10.x with qk_nope_head_dim 128 (DeepSeek-V3): FLASHINFER_MLA set as the backend, 16 -> 64
        ("0.15.0", "nvidia-b200", "FLASHINFER_MLA", 64),
        ("0.17.0", "nvidia-b200", "FLASHINFER_MLA", 64),
        # 0.18.0: nothing forced; update_block_size_for_backend keeps FLASH_ATTN_MLA's preferred 16
        ("0.18.0", "nvidia-h200-141gb", "FLASH_ATTN_MLA", 16),
    ],
)
def test_the_device_decides_the_forced_block(version: str, device: str, backend: str, block: int) -> None:
    est = _est("deepseek-ai--DeepSeek-V3", device, 8, version=version)
    assert (est.attention_backend, est.block_size) == (backend, block)
    names = {"FLASHMLA": "FlashMLA", "FLASH_ATTN_MLA": "FlashMLA", "FLASHINFER_MLA": "FlashInferMLA"}
    forcing = [line for line in est.log_lines if line.startswith("Forcing")]
    assert forcing == (
        [] if version == "0.18.0" else [f"Forcing kv cache block size to 64 for {names[backend]} backend."]
    )


@pytest.mark.parametrize(
    ("version", "names", "indexer"),
    [
        ("0.7.3", [], False),
        ("0.8.5", ["FLASHMLA"], False),
        ("0.10.2", ["FLASHMLA", "CUTLASS_MLA", "FLASHINFER_MLA"], False),
        ("0.11.0", ["FLASHMLA", "CUTLASS_MLA", "FLASHINFER_MLA", "FLASHMLA_SPARSE"], False),
        ("0.14.0", ["FLASHMLA", "CUTLASS_MLA", "FLASHINFER_MLA", "FLASHMLA_SPARSE"], True),
        ("0.15.0", ["FLASHMLA", "CUTLASS_MLA", "FLASHINFER_MLA", "FLASHMLA_SPARSE"], True),
        (
            "0.17.0",
            ["FLASHMLA", "CUTLASS_MLA", "FLASHINFER_MLA", "FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE"],
            True,
        ),
        ("0.18.0", [], True),
        ("0.33.0", [], True),
    ],
)
def test_the_rules_by_release(version, names, indexer) -> None:  # type: ignore[no-untyped-def]
    rules = rules_for(version)
    assert [f.backend for f in rules.forced_blocks] == names
    assert rules.indexer_kernel_block is indexer
    exact = {f.backend: f.exact for f in rules.forced_blocks}
    if version in ("0.8.5", "0.10.2", "0.11.0"):
        assert all(exact.values())  # `!= 64`, `!= 128`, `not in [32, 64]`
    if version in ("0.14.0", "0.17.0"):
        assert not exact["FLASHMLA"] and exact["FLASHMLA_SPARSE"]


@pytest.mark.parametrize(
    ("version", "block", "line"),
    [
        # 0.15.0 / 0.17.0 check_and_update_config: getattr(hf_text_config, "qk_nope_head_dim", 1) == 128 fails for
        # a spec without the dim -> not FlashInfer-MLA's branch but CUTLASS_MLA's, 16 % 128 != 0 -> 128
        ("0.15.0", 128, "Forcing kv cache block size to 128 for CUTLASS_MLA backend."),
        ("0.17.0", 128, "Forcing kv cache block size to 128 for CUTLASS_MLA backend."),
        # 0.19.0 / 0.33.0 mla/flashinfer_mla.py supports_combination: the same getattr default 1, not in
        # [64, 128, 192] -> refused; CUTLASS_MLA (next in the 10.x list) prefers its one kernel block, 128
        ("0.19.0", 128, "Setting kv cache block size to 128 for CUTLASS_MLA backend."),
        ("0.33.0", 128, "Setting kv cache block size to 128 for CUTLASS_MLA backend(s)."),
    ],
)
def test_a_missing_qk_nope_head_dim_is_vllms_1_not_128(version: str, block: int, line: str) -> None:
    mla = deepseek_v3_like().mla
    assert mla is not None
    unknown = deepseek_v3_like().model_copy(update={"mla": mla.model_copy(update={"qk_nope_head_dim": None})})
    choice = choose(unknown, B200, version)
    assert (choice.name, choice.block_size, choice.log_lines) == ("CUTLASS_MLA", block, [line])
