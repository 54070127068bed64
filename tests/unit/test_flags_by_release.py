"""A `vllm serve` flag is accepted only at the releases whose parser has it, the flags the planner models
included (app/core/vllm_flags.json, scripts/gen_vllm_flags.py on every minor series' .0 wheel from 0.7.0 to
0.34.0 plus 0.6.6, 0.8.5, 0.10.1, 0.10.2, 0.14.0). Before, the modelled flags were accepted at every release.

The first / last releases below were read by hand in each wheel's vllm/engine/arg_utils.py (EngineArgs fields and
add_argument calls) and the frontend's cli_args.py:
- async_scheduling: no field in 0.9.0, `async_scheduling: bool = SchedulerConfig.async_scheduling` in 0.10.0;
- kv_cache_memory_bytes: none in 0.10.1, `"--kv-cache-memory-bytes"` add_argument in 0.10.2;
- "-cc": 0.11.0 spells `"--compilation-config", "-O"`, 0.12.0 `"--compilation-config", "-cc"`;
- swap_space: `"--swap-space"` in 0.17.0, gone from 0.18.0's arg_utils.py;
- enable_extensible_kv_cache: first in 0.34.0 (no 0.7.0-0.33.0 wheel read has it);
- --port: 0.29.0-0.32.0 keep the frontend's flags in vllm/entrypoints/launchers/cli_args.py (0.28.0 in
  entrypoints/openai/, 0.33.0 in entrypoints/common/).
"""

from __future__ import annotations

import pytest

from app.core.command import parse_serve_command
from app.core.errors import PlannerError
from app.core.release_flags import flag_runs, release_flags
from app.core.serve_flags import check_release_has_flags, flags_release_lacks
from app.core.specs import ServeConfig


@pytest.mark.parametrize(
    ("flags", "lacking", "having", "says"),
    [
        (
            "--async-scheduling",
            "0.9.0",
            "0.10.0",
            "vLLM 0.9.0 does not have it; 0.10.0 is the first release with it",
        ),
        ("--kv-cache-memory-bytes 8G", "0.10.1", "0.10.2", "0.10.2 is the first release with it"),
        ("--enable-extensible-kv-cache", "0.33.0", "0.34.0", "0.34.0 is the first release with it"),
        (
            "--swap-space 8",
            "0.18.0",
            "0.17.0",
            "vLLM 0.18.0 does not have it; 0.17.0 was the last release with it",
        ),
        (
            '-cc \'{"cudagraph_mode": "PIECEWISE"}\'',
            "0.11.0",
            "0.12.0",
            "0.12.0 is the first release with it",
        ),
    ],
)
def test_a_modelled_flag_the_release_lacks_is_refused_naming_the_release_that_has_it(
    flags: str, lacking: str, having: str, says: str
) -> None:
    flag = flags.split()[0]
    with pytest.raises(PlannerError) as err:
        parse_serve_command(f"vllm serve m {flags}", vllm_version=lacking)
    assert err.value.field == "command"
    assert f"unrecognized arguments: {flag} (vLLM {lacking} does not have it; " in err.value.message
    assert says in err.value.message
    parse_serve_command(f"vllm serve m {flags}", vllm_version=having)  # the neighbouring release reads it


def test_the_argparse_prefix_follows_the_release() -> None:
    # --kv-cache-memory is argparse's unique prefix of --kv-cache-memory-bytes: read where that flag exists
    assert (
        parse_serve_command(
            "vllm serve m --kv-cache-memory 8G", vllm_version="0.10.2"
        ).serve.kv_cache_memory_bytes
        == 8 * 2**30
    )
    with pytest.raises(PlannerError, match="unrecognized arguments: --kv-cache-memory"):
        parse_serve_command("vllm serve m --kv-cache-memory 8G", vllm_version="0.10.1")


def test_releases_between_two_read_take_the_older_one_s_parser() -> None:
    # 0.10.1.1 (not read) has 0.10.1's flags; 0.29.0 its own, although versions.py plans it with older rules
    assert "--kv-cache-memory-bytes" not in release_flags("0.10.1.1")
    assert flag_runs("--swap-space")[-1].last == "0.17.0"
    assert {"--port", "--host", "--api-key"} <= release_flags("0.30.0")  # launchers/cli_args.py
    assert parse_serve_command("vllm serve m --port 8001", vllm_version="0.30.0").unknown_flags == [
        "--port",
        "8001",
    ]


def test_a_request_setting_a_field_whose_flag_the_release_lacks_is_refused_by_field() -> None:
    assert flags_release_lacks(ServeConfig(async_scheduling=True), "0.9.0") == [
        ("async_scheduling", "--async-scheduling")
    ]
    assert flags_release_lacks(ServeConfig(async_scheduling=False), "0.9.0") == [
        ("async_scheduling", "--no-async-scheduling")
    ]
    assert flags_release_lacks(ServeConfig(async_scheduling=True), "0.10.0") == []
    with pytest.raises(PlannerError) as err:
        check_release_has_flags(ServeConfig(enable_extensible_kv_cache=False), "0.33.0")
    assert err.value.field == "enable_extensible_kv_cache"
    assert (
        "--no-enable-extensible-kv-cache: vLLM 0.33.0 does not have it; 0.34.0 is the first release with it"
        in (err.value.message)
    )
    check_release_has_flags(ServeConfig(), "0.6.6")  # the defaults set no flag


# The refusal is the core's (estimate() runs check_release_has_flags), so every caller that builds a ServeConfig
# itself refuses as the API does: 0.9.0's engine/arg_utils.py has no --async-scheduling (0.10.0 the first release
# read with it, vllm_flags.json), and 0.9.0's `vllm serve` exits "unrecognized arguments: --async-scheduling".
LACKING_AT_0_9 = "--async-scheduling: vLLM 0.9.0 does not have it; 0.10.0 is the first release with it"


def test_core_estimate_refuses_a_flag_the_release_lacks_by_field() -> None:
    from app.core.catalog import find_device, find_model
    from app.core.estimate import estimate

    model, device = find_model("meta-llama/Llama-3.1-8B-Instruct"), find_device("h100")
    with pytest.raises(PlannerError) as err:
        estimate(model=model, device=device, serve=ServeConfig(async_scheduling=True), vllm_version="0.9.0")
    assert err.value.field == "async_scheduling" and LACKING_AT_0_9 in err.value.message
    est = estimate(
        model=model, device=device, serve=ServeConfig(async_scheduling=True), vllm_version="0.10.0"
    )
    assert est.fits


def test_fleet_and_recommend_refuse_it_too() -> None:
    from app.core.catalog import find_device, find_model
    from app.core.fleet import plan_fleet
    from app.core.recommend import recommend
    from tests.unit.test_fleet import target

    model, device = find_model("meta-llama/Llama-3.1-8B-Instruct"), find_device("h100")
    serve = ServeConfig(async_scheduling=True, max_model_len=8192)
    with pytest.raises(PlannerError) as fleet_err:  # was: every layout dropped, "no layout starts"
        plan_fleet(model=model, device=device, serve=serve, vllm_version="0.9.0", target=target())
    with pytest.raises(PlannerError) as rec_err:
        recommend(
            model=model,
            device=device,
            serve=serve,
            vllm_version="0.9.0",
            target_max_model_len=8192,
            target_concurrency=4,
        )
    for err in (fleet_err, rec_err):
        assert err.value.field == "async_scheduling" and LACKING_AT_0_9 in err.value.message


def test_the_cli_refuses_a_flag_the_image_tags_release_lacks(capsys: pytest.CaptureFixture[str]) -> None:
    # the CLI's command reader already refuses it as vLLM's parser does (release from the image tag); the core
    # check stands behind it
    from app.cli import main

    argv = ["estimate", "--device", "h100", "--", "docker", "run", "vllm/vllm-openai:v0.9.0"]
    argv += ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--async-scheduling"]
    assert main(argv) == 2
    assert (
        "unrecognized arguments: --async-scheduling (vLLM 0.9.0 does not have it" in capsys.readouterr().err
    )


@pytest.mark.parametrize("version", ["0.6.6", "0.10.1", "0.17.0", "0.18.0", "0.33.0"])
def test_the_recommenders_command_sets_no_flag_its_release_lacks(version: str) -> None:
    # a start that needs levers (70B at TP 1 on an H100, 16 x 32k): whatever it proposes is an estimate the core
    # accepted, so its final configuration sets no flag the release lacks (--kv-cache-memory-bytes only from 0.10.2)
    from app.core.catalog import find_device, find_model
    from app.core.recommend import recommend

    rec = recommend(
        model=find_model("meta-llama/Llama-3.1-70B-Instruct"),
        device=find_device("h100"),
        serve=ServeConfig(),
        vllm_version=version,
        target_max_model_len=32_768,
        target_concurrency=16,
    )
    assert rec.steps
    assert flags_release_lacks(rec.final, version) == []
