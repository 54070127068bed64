"""device_specs/devices.yaml is scripts/gen_model_specs.py's output, and a rerun keeps the hand figures (and model_specs/ files).

Round 8's closing note: the generator would overwrite hand edits in devices.yaml (the compute figures of
af9c012 / 8cf9d0c, peer_link of cdc227a, the T4 / 910B figures). They now live in device_specs/devices_hand.yaml,
which the generator lays over each entry it builds from the reference catalog.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[2]
DEVICES = ROOT / "device_specs" / "devices.yaml"


def _generator() -> Any:  # scripts/ is not a package
    spec = importlib.util.spec_from_file_location("gen_model_specs", ROOT / "scripts" / "gen_model_specs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_model_specs"] = module
    spec.loader.exec_module(module)
    return module


GEN = _generator()
HAND = GEN.load_hand()
TEXT = DEVICES.read_text(encoding="utf-8")
ENTRIES: list[dict[str, Any]] = yaml.safe_load(TEXT)["devices"]


def _as_the_reference_gives_it(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry before the hand figures: no peer_link, no hand figure, no hand source."""
    figures = HAND["figures"].get(entry["id"], {})
    bare = dict(entry, peer_link=None)
    for field in GEN.HAND_FIGURES:
        if field in figures:
            bare[field] = None
    bare["sources"] = [s for s in entry["sources"] if s not in figures.get("sources", [])]
    return bare


def test_a_rerun_keeps_every_hand_figure() -> None:
    # e.g. the A10G: the reference has no bf16_dense_tflops; the hand file's 70 (80 SMs x 512 x 1.71 GHz) is kept,
    # with peer_link pcie and the Baseten source
    for entry in ENTRIES:
        kept, replaced = GEN.with_hand_figures(_as_the_reference_gives_it(entry), HAND)
        assert kept == entry, entry["id"]
        assert replaced == []
    a10g = next(e for e in ENTRIES if e["id"] == "nvidia-a10g-24gb")
    assert (a10g["bf16_dense_tflops"], a10g["peer_link"]) == (70, "pcie")
    t4 = next(e for e in ENTRIES if e["id"] == "nvidia-t4-16gb")
    assert t4["bf16_dense_tflops"] == 65  # NVIDIA's T4 data sheet, FP16/FP32 mixed precision
    ascend = {e["id"]: e["memory_bandwidth_tbps"] for e in ENTRIES if e["id"].startswith("huawei-ascend-910")}
    assert ascend == {
        "huawei-ascend-910b-64gb": 1.6,
        "huawei-ascend-910b4-32gb": 1.6,
        "huawei-ascend-910c": 1.6,
    }


def test_devices_yaml_is_exactly_what_the_generator_writes() -> None:
    # a hand edit the generator would not write again (a comment, a reordered key) fails here
    skipped = next(line for line in TEXT.splitlines() if line.startswith("# Skipped: "))
    reasons = skipped.removeprefix("# Skipped: ").removesuffix(".").split("; ")
    assert GEN.render_devices(ENTRIES, reasons) == TEXT


def test_a_reference_figure_that_differs_from_the_hand_one_is_reported() -> None:
    a10g = _as_the_reference_gives_it(next(e for e in ENTRIES if e["id"] == "nvidia-a10g-24gb"))
    kept, replaced = GEN.with_hand_figures(dict(a10g, bf16_dense_tflops=125), HAND)
    assert kept["bf16_dense_tflops"] == 70
    assert replaced == ["nvidia-a10g-24gb bf16_dense_tflops: reference 125, hand 70 kept"]


def test_every_hand_figure_says_where_it_comes_from() -> None:
    ids = {e["id"] for e in ENTRIES}
    assert set(HAND["peer_link"]) == ids  # every generated device states its link
    for device, figures in HAND["figures"].items():
        assert device in ids
        assert set(figures) <= {*GEN.HAND_FIGURES, "sources", "why"}, device
        if set(figures) & set(GEN.HAND_FIGURES):
            assert len(figures.get("why", "")) > 40, device


def test_no_alias_is_a_url() -> None:
    # round 8 put the A10G's and V100 16GB's sources into their aliases
    assert not [a for e in ENTRIES for a in e["aliases"] if "://" in a]


def test_a_model_spec_rerun_keeps_hand_presets_and_edits(tmp_path: Path) -> None:
    # round 8's write_models deleted every model_specs/*.yaml first: a rerun would have lost the 54 presets
    # added by hand and 10 generated files edited since (e.g. Gemma-2-2B's params_total 2,614,341,888 ->
    # 2,614,222,080, Llama-3.1-405B's other_revision_kv_heads 16)
    (tmp_path / "added_by_hand.yaml").write_text("id: a/b\n", encoding="utf-8")
    (tmp_path / "edited.yaml").write_text("params_total: 2614222080\n", encoding="utf-8")
    (tmp_path / "unchanged.yaml").write_text("params_total: 1\n", encoding="utf-8")
    written, kept = GEN.write_spec_files(
        {
            "edited.yaml": "params_total: 2614341888\n",
            "unchanged.yaml": "params_total: 1\n",
            "new.yaml": "x: 1\n",
        },
        tmp_path,
    )
    assert (sorted(written), kept) == (["new.yaml", "unchanged.yaml"], ["edited.yaml"])
    assert (tmp_path / "added_by_hand.yaml").read_text(encoding="utf-8") == "id: a/b\n"
    assert (tmp_path / "edited.yaml").read_text(encoding="utf-8") == "params_total: 2614222080\n"
    GEN.write_spec_files({"edited.yaml": "params_total: 2614341888\n"}, tmp_path, force=True)
    assert (tmp_path / "edited.yaml").read_text(encoding="utf-8") == "params_total: 2614341888\n"
