"""The held-out pool comparisons that test nothing: a log that names no card and prints no total gets the catalog
device whose predicted pool is nearest the printed one (app/core/diagnose/device.py _replay_device), so its pool
gap is what is left after that fit. bench/heldout_pool_parts.py split the 32 held-out pool comparisons into their
parts and found 17 such logs (10 within 0.5 GiB) beside 15 whose device is printed or stated (6 within, blind).
The KV row now says so, and the bench counts them apart. Pinned on the logs' own lines."""

from __future__ import annotations

from pathlib import Path

from app.core import budget as B
from app.core import catalog
from app.core.diagnose import ComparisonRow
from app.core.diagnose.batch_defaults import inferred_max_num_seqs
from app.core.diagnose.case import recover_case
from app.core.estimate import estimate
from app.core.logs import parse_startup_log
from app.core.specs import GIB, ServeConfig
from app.core.versions import rules_for
from bench import heldout_logs, heldout_pool_parts
from tests import log_sets
from tests.log_sets import LOGS_DIR

SET_ZI = LOGS_DIR / "heldout-2026-12zi"
SET_ZH = LOGS_DIR / "heldout-2026-12zh"
SET_G = LOGS_DIR / "heldout-2026-12g"
# kesh-kredos/voice-agent vllm.log: "non-default args: {… 'max_model_len': 4096}", "Model loading took 2.32 GiB",
# "Available KV cache memory: 41.01 GiB"; no card name, no "free memory … of … total" line
LLAMA_1B = "nv_0_23_0_llama32_1b_kv_41_01_1343840_328_09x_graph_then_flashinfer_no_nvcc.log"
# giyushino/ModelMerging logs/vllm_server.log: vLLM 0.9.2 inside an application; no args listing, no card
QWEN_15B = "nv_0_9_2_qwen25_1_5b_at_1536_kv_14_58_545856_355_38x_graph_0_47.log"
# vllm-ascend 300I Duo: "Available memory: 40178937036, total memory: 49602220032" (worker_v1.py), a printed total
DUO = "ascend_310p3_300i_duo_qwen25_05b_multi_plugin_kv_sized_then_npu_507013.log"


def kv_row(directory: Path, name: str) -> tuple[str, ComparisonRow]:
    _, d = log_sets.read(directory, name)
    row = next(r for r in d.comparison if r.key == "kv_cache_bytes")
    return d.device_source, row


def test_a_pool_the_device_was_fitted_to_says_it_is_no_test() -> None:
    source, row = kv_row(SET_ZI, LLAMA_1B)
    assert source == "replay"
    assert row.actual == round(41.01 * GIB)
    note = str(row.note)
    # before: "KV higher than predicted: the planner over-estimates activation or non-torch here" (+1.02 GiB on the
    # fitted RTX A6000), a planner miss on a card the log never named
    assert "chosen because its predicted pool is the nearest to this one" in note
    assert "over-estimates" not in note


def test_a_printed_total_keeps_the_gap_call_out() -> None:
    # the 300I Duo prints its total (49602220032 B = 46.20 GiB): the device is read, so the -1.67 GiB gap is a miss
    source, row = kv_row(SET_G, DUO)
    assert source == "custom"
    assert row.actual == 40178937036
    assert "KV lower than predicted by more than 1 GiB" in str(row.note)


def test_heldout_logs_counts_fitted_pools_apart() -> None:
    fitted = heldout_logs.score(SET_ZI / LLAMA_1B, {"facts": {}, "verdict": "failed"}, "dense")
    printed = heldout_logs.score(SET_G / DUO, {"facts": {}, "verdict": "failed"}, "dense")
    assert fitted.pool is not None and fitted.device_fitted
    assert printed.pool is not None and not printed.device_fitted


def test_pool_parts_name_the_inputs_the_log_does_not_print() -> None:
    entry = {"class": "dense"}
    llama = heldout_pool_parts.row_for(SET_ZI / LLAMA_1B, entry)
    qwen = heldout_pool_parts.row_for(SET_ZH / QWEN_15B, entry)
    assert llama is not None and qwen is not None
    # 0.23.0 lists its non-default args, so an unlisted utilization is the default 0.9, not a guess
    assert llama.guessed == ["device=replay"] and llama.fitted
    assert llama.parts["weights_bytes"].printed == round(2.32 * GIB)
    # "Graph capturing finished in 1 secs, took 0.33 GiB"
    assert llama.parts["cuda_graph_bytes"].printed == round(0.33 * GIB)
    # the 0.9.2 log lists no flags; its engine config prints max_num_batched_tokens (8192, sources.json), not the
    # utilization or max_num_seqs: those two are the planner's defaults, a guess
    assert qwen.guessed == ["device=replay", "util", "seqs"]
    assert qwen.pool.printed == round(14.58 * GIB)


# --- max_num_seqs read off the printed default batched tokens (app/core/diagnose/batch_defaults.py) ----------------
# vLLM engine/arg_utils.py (0.10-0.13 _set_default_args, 0.14+ get_batch_defaults): >= 70 GiB and not an A100 ->
# serve 8,192 tokens / 1,024 sequences (LLM class 16,384 / 1,024), else serve 2,048 / 256 (LLM class 8,192 / 256)
GB10_30B = "nv_gb10_spark_qwen3_30b_a3b_fp8_kv_4_04_88176.log"
TP4_8B = "nv_0_13_0_tp4_llama3_8b_worker_tp0_kv_62_52_2048704_250_09x.log"
SET_ZF = LOGS_DIR / "heldout-2026-12zf"
ARGS = (
    "(APIServer pid=1) INFO 03-18 12:03:55 [utils.py:253] non-default args: {'model_tag': 'Qwen/Qwen3-8B', "
    "'model': 'Qwen/Qwen3-8B', 'max_model_len': 32768%s}\n"
)
ENGINE = (
    "(EngineCore_DP0 pid=143) INFO 03-18 12:03:58 [core.py:93] Initializing a V1 LLM engine (v0.13.0) with config: "
    "model='Qwen/Qwen3-8B', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1\n"
)
SCHEDULER = (
    "(APIServer pid=1) INFO 03-18 12:03:56 [scheduler.py:230] Chunked prefill is enabled with "
    "max_num_batched_tokens=%d.\n"
)


def seqs_for(text: str) -> int | None:
    facts = parse_startup_log(text)
    return inferred_max_num_seqs(facts, text, rules_for("0.13.0"))


def test_the_gb10_log_s_2048_batched_tokens_are_the_256_sequence_branch() -> None:
    # "Chunked prefill is enabled with max_num_batched_tokens=2048." and non-default args without either flag: the
    # small branch, so 256 sequences, though the GB10's 121.69 GiB alone would put it in the 1,024 tier (0.13)
    text = (SET_G / GB10_30B).read_text(encoding="utf-8")
    facts = parse_startup_log(text)
    case = recover_case(text, facts, None, None)
    assert case.serve is not None and case.serve.max_num_seqs == 256
    assert any("default batched tokens (2,048)" in str(note) for note in case.notes)
    # the sampler's dummy run is 256 rows, not 1,024: forward 2,048 x 2 B x (3.5 x 6,144 + 4 x 2,048) = 121,634,816 B;
    # sampler 256 x 151,936 x 4 B x 9.6 copies = 1,493,591,654 B (the larger); MoE workspace 2 x 64 MiB
    # (2,048 x 8 rows x 2,048 x 2 B each); base 0.05 GiB -> 1,681,496,473 B = 1.566 GiB (5.739 GiB at 1,024)
    assert case.prediction is not None
    assert case.prediction.activation_peak_bytes == 1_493_591_654 + 2 * 64 * 2**20 + int(0.05 * GIB)


def test_the_api_server_s_8192_is_the_1024_sequence_tier() -> None:
    # heldout-2026-12zf, `python -m vllm.entrypoints.openai.api_server` (no model_tag; the "(APIServer pid=…)"
    # process printed "max_num_batched_tokens=8192"): the >= 70 GiB non-A100 tier, 1,024 sequences. The A100 80 GB
    # the doctor had fitted to the pool (-1.50 GiB at 256 sequences) is in the 2,048 branch, so it was the wrong card
    text = (SET_ZF / TP4_8B).read_text(encoding="utf-8")
    case = recover_case(text, parse_startup_log(text), None, None)
    assert case.serve is not None and case.serve.max_num_seqs == 1024
    assert case.device is None or "a100" not in case.device.id


def test_no_inference_without_proof_the_flags_are_defaults() -> None:
    base = ENGINE + SCHEDULER % 2048
    assert seqs_for(ARGS % "" + base) == 256
    assert seqs_for(ARGS % ", 'max_num_batched_tokens': 2048" + base) is None  # set by the user: no branch
    assert seqs_for(ARGS % ", 'max_num_seqs': 64" + base) is None  # printed elsewhere
    assert seqs_for(base) is None  # no args listing: the flags may have been set
    assert seqs_for(ARGS % "" + ENGINE + SCHEDULER % 8192) == 1024  # serve (model_tag): the 70 GiB tier
    # the LLM class (no model_tag, no APIServer process): 8,192 is its small branch as well as serve's large one
    llm_args = "INFO 03-18 12:03:55 [utils.py:253] non-default args: {'model': 'Qwen/Qwen3-8B'}\n"
    assert seqs_for(llm_args + ENGINE + SCHEDULER.replace("(APIServer pid=1) ", "") % 8192) is None


# --- MXFP4 experts on SM90 before triton_kernels shipped in the wheel (0.12.0) -------------------------------------
GPT_OSS_LOG = LOGS_DIR / "heldout" / "v1_0.10_gpt_oss_120b_h100_negative_kv.log"


def test_mxfp4_on_h100_before_0_12_is_marlin_padded() -> None:
    # vLLM 0.10.2 / 0.11.1 quantization/mxfp4.py get_mxfp4_backend: SM90 without an importable triton_kernels
    # (not in those wheels; vllm/third_party/triton_kernels from 0.12.0) -> Marlin, whose create_weights pads hidden
    # to 256 (2880 -> 3072) and the intermediate to 128 (2880 -> 2944). gpt-oss-120b, 36 layers x 128 experts:
    # 3 x (3072 x 2944 - 2880 x 2880) = 2,248,704 extra values an expert -> 10,362,028,032 values x 17/32 B
    # = 5,504,827,392 B (5.13 GiB) more weights at TP 1
    model = catalog.find_model("openai/gpt-oss-120b")
    h100 = catalog.find_device("h100")
    old = B.mxfp4_expert_padding_bytes(
        model=model,
        quant=model.quantization,
        device=h100,
        tensor_parallel_size=1,
        num_layers=36,
        rows=rules_for("0.10.2").mxfp4_backends,
    )
    new = B.mxfp4_expert_padding_bytes(
        model=model,
        quant=model.quantization,
        device=h100,
        tensor_parallel_size=1,
        num_layers=36,
        rows=rules_for("0.13.0").mxfp4_backends,
    )
    assert (old, new) == (5_504_827_392, 0)


def test_0_12_takes_the_bundled_triton_kernels() -> None:
    # 0.12.x has no known release of its own (planned in 0.11.0's bracket): versions.PATCH_CHANGES gives it the
    # 0.12.0 wheel's vllm/third_party/triton_kernels, so an H100 pads MXFP4 as Triton does; 0.11.1 still Marlin
    h100 = catalog.find_device("h100")
    got = [
        B.mxfp4_padding(device=h100, rows=rules_for(v).mxfp4_backends)[0]
        for v in ("0.11.1", "0.12.0", "0.12.1", "0.13.0")
    ]
    assert got == ["marlin", "triton", "triton", "triton"]


def test_the_0_10_1_gpt_oss_h100_log_s_weights_are_marlin_s() -> None:
    # vllm-project/vllm#23278 (0.10.1, H100): "Your GPU does not have native support for FP4 computation … the Marlin
    # kernel" then "Model loading took 65.9651 GiB". The planner had 60.77 GiB (Triton's padding, none for 2880):
    # 5.20 GiB short; with Marlin's 5.13 GiB it is within 0.07 GiB, and the pool gap -4.37 -> +0.76 GiB
    text = GPT_OSS_LOG.read_text(encoding="utf-8")
    assert "leveraging the Marlin kernel" in text
    printed = parse_startup_log(text).weights_bytes
    est = estimate(
        model=catalog.find_model("openai/gpt-oss-120b"),
        device=catalog.find_device("nvidia-h100-sxm-80gb"),
        serve=ServeConfig(),
        vllm_version="0.10.1",
    )
    assert printed == round(65.9651 * GIB)
    assert abs(est.weights_bytes - printed) < 0.1 * GIB
