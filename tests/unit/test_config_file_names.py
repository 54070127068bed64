"""A config.json read from disk that names no model (no ``_name_or_path``) is named by where it is.

The new-user walkthrough of 2026-12 (step 3): ``kvplan estimate path/to/config.json`` named the model
after the bare parent folder ("inputs on nvidia-h100…"), and an HF cache snapshot after its revision hash
("0123abcd").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from app.core.catalog import load_model_config_file

REAL = Path(__file__).parents[1] / "data" / "configs" / "real" / "Qwen__Qwen3-30B-A3B.config.json"


def _copy(to: Path) -> Path:
    to.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REAL, to)
    assert "_name_or_path" not in json.loads(to.read_text())  # the real file names no model
    return to


def test_a_config_json_in_a_folder_is_named_by_the_folder_as_given(tmp_path: Path) -> None:
    path = _copy(tmp_path / "inputs" / "config.json")
    assert load_model_config_file(path).name == str(tmp_path / "inputs")
    assert load_model_config_file(path.parent).name == str(tmp_path / "inputs")  # the folder given


def test_an_hf_cache_snapshot_is_named_by_its_hub_id(tmp_path: Path) -> None:
    path = _copy(tmp_path / "hub" / "models--Qwen--Qwen3-30B-A3B" / "snapshots" / "0123abcd" / "config.json")
    assert load_model_config_file(path).name == "Qwen/Qwen3-30B-A3B"


def test_a_config_file_of_another_name_is_named_by_the_file() -> None:
    assert load_model_config_file(REAL).name == str(REAL)


def test_the_cli_names_its_own_way_to_give_an_unknown_models_config(capsys) -> None:  # type: ignore[no-untyped-def]
    # The walkthrough (step 3): the CLI's unknown-model error said "or paste its config.json", the web's word;
    # a terminal gives a path.
    from app.cli import main

    assert main(["estimate", "Qwen/Qwen3-30B-A3B-Instruct-2507", "--device", "h100"]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'Qwen/Qwen3-30B-A3B-Instruct-2507'" in err
    assert "a path to it on the command line" in err and "paste" not in err
