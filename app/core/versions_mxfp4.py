"""The MXFP4 MoE backend rows of the changelog (``VersionRules.mxfp4_backends``, table in mxfp4_backends.py): which
backend, hence which expert padding, each release gives each SM. Kept apart so versions_changelog.py stays under
the 800-line module cap; versions_platforms.py merges these rows into the one CHANGELOG in release order. The
0.12.x row (no known release of its own) is versions.PATCH_CHANGES'."""

from __future__ import annotations

from app.core.mxfp4_backends import MXFP4_0_13, MXFP4_0_27, MXFP4_0_32
from app.core.version_types import Change

MXFP4_CHANGELOG: tuple[Change, ...] = (
    Change(
        "0.13.0",
        "0.13.0 model_executor/layers/quantization/mxfp4.py get_mxfp4_backend: FlashInfer MXFP4 BF16 (TRT-LLM, "
        "create_weights pads hidden and intermediate to 256) on is_device_capability_family(100), SM103 included "
        "(0.12.0: exactly 10.0); Triton (third_party/triton_kernels, intermediate to 64) only on (9, 0) <= "
        "capability < (11, 0); Marlin (hidden to 256, intermediate to 128) on SM8x, SM110 and SM12x. 0.14.0, "
        "0.15.0, 0.17.0, 0.18.0 the same; 0.19.0 fused_moe/oracle/mxfp4.py _get_priority_backends, 0.22.1 / 0.24.0 "
        "/ 0.26.0 _get_priority_backends_for_gpt_oss give the same choice (Triton's device window still < 11.0, "
        "FlashInfer CUTLASS's BF16 path only on 9.0, TRT-LLM only on family 100)",
        {"mxfp4_backends": MXFP4_0_13},
    ),
    Change(
        "0.27.0",
        "0.27.1 (the series' known release, the one read) fused_moe/oracle/mxfp4.py mxfp4_round_up_hidden_size_and_intermediate_size: the TRT-LLM backends "
        "round the intermediate to 128 (0.26.0: 256), hidden still to 256; 0.30.0 the same",
        {"mxfp4_backends": MXFP4_0_27},
    ),
    Change(
        "0.32.0",
        "0.32.0 fused_moe/experts/gpt_oss_triton_kernels_moe.py _triton_kernel_moe_supports_current_device: (9, 0) "
        "<= capability < (13, 0) (0.30.0: < (11, 0)), and _get_priority_backends_for_gpt_oss moves TRITON after "
        "BATCHED_MARLIN on is_device_capability_family(120): SM110 takes Triton, SM12x stays Marlin; 0.33.0 the same",
        {"mxfp4_backends": MXFP4_0_32},
    ),
    Change(
        "0.34.0",
        "0.34.0 fused_moe/oracle/mxfp4.py _get_priority_backends_for_gpt_oss moves TRITON after BATCHED_MARLIN on "
        "family 110 as well as 120 ('Jetson Thor (SM110): MARLIN stays the default'): SM110 back to Marlin",
        {"mxfp4_backends": MXFP4_0_27},
    ),
)
