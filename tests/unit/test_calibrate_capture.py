"""bench/calibrate.py counts a log's captured sizes with graph_rules.capture_sizes, the planner's one rule (closing
note r9: it scaled every log at the 512-cap grid, wrong for 0.11.0's step of 8 and for 10.x at 0.30.0+)."""

from __future__ import annotations

from app.core.catalog import find_device
from app.core.defaults import resolve
from app.core.specs import ServeConfig
from app.core.versions import rules_for
from bench import calibrate, calibration
from tests.specs_factory import dense


def _share(device: str, version: str) -> float:
    case = calibration.Case(
        id="t",
        record={},
        model=dense(),
        device=find_device(device),
        serve=ServeConfig(),
        vllm_version=version,
    )
    flags, _, _ = resolve(model=case.model, device=case.device, serve=case.serve, rules=rules_for(version))
    return calibrate.capture_share(case=case, flags=flags)


def test_the_share_follows_the_release_grid() -> None:
    # 1,024 sequences, 8,192 batched tokens: 0.11.0 [1, 2, 4] + range(8, 513, 8) = 67 sizes; 0.19.0 the 51 of
    # [1, 2, 4] + range(8, 256, 8) + range(256, 513, 16); 0.30.0 on a B200 (10.0) the cap is 1,024: 3 + 31 + 49 = 83
    # plus max_num_seqs 1,024 itself already on the grid (0.31.0+ adds it; 0.30.0 only with draft tokens)
    assert _share("nvidia-h100-sxm-80gb", "0.11.0") == 67 / 51
    assert _share("nvidia-h100-sxm-80gb", "0.19.0") == 1.0
    assert _share("nvidia-b200", "0.30.0") == 83 / 51
