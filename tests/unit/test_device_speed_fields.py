"""Every catalog device carries the speed fields app/core/perf/physics.py reads, so none falls back to the
H100 defaults (physics.DEFAULT_BF16_TFLOPS 989, DEFAULT_BANDWIDTH_TBPS 3.35, DEFAULT_INTERCONNECT_GBPS 900)
without saying so; and the figures filled in round 8 match the documents cited in device_specs/*.yaml."""

from app.core.catalog import find_device, list_devices

# Devices whose reference record has no per-device link figure (scripts/gen_model_specs.py INTERCONNECT_GBPS
# says "no figure in the record" for each): physics takes DEFAULT_INTERCONNECT_GBPS for their TP collectives.
# Listed so that a new device cannot join them silently; fill the figure and remove the id.
NO_PUBLISHED_LINK = frozenset(
    {
        "amd-mi355x-288gb",
        "amd-mi250x-128gb",
        "huawei-ascend-910c",
        "aws-trainium1",
        "aws-trainium2",
        "aws-inferentia2",
    }
)


def test_every_device_has_compute_and_bandwidth() -> None:
    missing = [d.id for d in list_devices() if d.bf16_dense_tflops is None or d.memory_bandwidth_tbps is None]
    assert missing == []


def test_only_the_named_devices_lack_a_link_figure() -> None:
    lacking = {d.id for d in list_devices() if d.interconnect_gbps is None}
    assert lacking == NO_PUBLISHED_LINK


def test_gb10_compute_is_derived_from_nvidias_fp4_figure() -> None:
    # NVIDIA DGX Spark page: 1 PFLOP FP4 with sparsity. Dense = 1000 / 2 = 500 FP4, 250 FP8, 125 BF16 (the B200
    # data sheet's ladder: 9 / 4.5 / 2.25 PFLOPS dense). Was the H100 default 989: 7.9x too fast in prefill.
    assert find_device("gb10").bf16_dense_tflops == 1000 / 2 / 2 / 2


def test_rtx_pro_6000_and_v100_match_their_published_figures() -> None:
    # RTX PRO 6000 Blackwell: BF16 tensor, FP32 accumulate, 503.8 TFLOPS dense (1.01 PFLOPS sparse = 2 x 503.8).
    assert find_device("rtx-pro-6000").bf16_dense_tflops == 503.8
    # Tesla V100 SXM2: "up to 125 Tensor TFLOPS" (FP16; Volta has no BF16).
    assert find_device("v100").bf16_dense_tflops == 125
    # Atlas 300I Duo 280 TOPS INT8 over two 310P dies = 140 a die; FP16 cube rate is half INT8's = 70.
    assert find_device("310p").bf16_dense_tflops == 280 / 2 / 2
