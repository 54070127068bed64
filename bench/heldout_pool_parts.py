"""The held-out logs' KV pool, split into its parts: where each printed-vs-predicted gap comes from.

bench/heldout_logs.py scores the KV pool the planner predicts for a log's own inputs against the printed
one (|Δ| ≤ 0.5 GiB). This prints, for every log where both sides exist, the pool's parts as the log prints
them beside the planner's:

- weights ("Model loading took X GiB"), the profile run's activation peak and non-torch memory
  (0.1x+ "Memory profiling takes … torch peak memory increase …, non-torch forward increase …"; V0's
  "the current vLLM instance can use …" table) and CUDA graphs ("Graph capturing finished … took X GiB"
  or 0.20+ "Estimated CUDA graph memory");
- the inputs the doctor had to guess, because the log does not print them: the device (inferred from
  the printed total, the pool, or nothing), the release (no version line), gpu_memory_utilization,
  max_num_seqs, max_num_batched_tokens (the profile run's token count), and the parallel sizes bounded by
  worker names;
- a first class for the gap (issue 22): ``guessed`` when an input that moves the pool was guessed
  (device / release / utilization / max_num_batched_tokens), ``part:<name>`` when a printed part is
  off by more than the 0.5 GiB bar and explains most of the gap, ``ok`` inside the bar, ``?`` otherwise.

It prints and asserts nothing; the classes are a first reading for a person, not a score.

    .venv/bin/python bench/heldout_pool_parts.py                      # the held-out sets heldout_logs.py knows
    .venv/bin/python bench/heldout_pool_parts.py tests/data/logs/heldout-2026-12z
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root

from app.core import catalog
from app.core.diagnose import ComparisonRow, diagnose
from app.core.estimate import estimate
from app.core.logs import parse_startup_log
from app.core.logs.startup.facts import LogFacts
from app.core.result import Estimate
from app.core.specs import GIB, ServeConfig
from bench.heldout_logs import POOL_TOLERANCE_BYTES

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "data" / "logs"
PARTS = ("weights_bytes", "activation_peak_bytes", "non_torch_bytes", "cuda_graph_bytes")
SHORT = {"weights_bytes": "weights", "activation_peak_bytes": "act", "non_torch_bytes": "nontorch"}
# where the device came from (app/core/diagnose/model.py DeviceSource): these read it off the log itself
DEVICE_PRINTED = frozenset({"printed_name", "hint", "custom"})
# a guessed input moves the pool: the device's total, the release's rules, the budget share, the profile run
POOL_MOVING = ("device", "version", "util", "mnbt")


@dataclass
class Part:
    printed: int | None
    predicted: int | None

    @property
    def gap(self) -> int | None:
        return None if self.printed is None or self.predicted is None else self.printed - self.predicted


@dataclass
class PoolRow:
    name: str
    model_class: str
    version: str
    device: str
    pool: Part
    parts: dict[str, Part]
    graph_estimate: int | None  # 0.20+ "Estimated CUDA graph memory" (budgeted before KV sizing)
    graphs_budgeted: bool  # the planner subtracts the graphs before KV sizing in this release
    guessed: list[str]

    @property
    def fitted(self) -> bool:
        """The log names no device and prints no total: the doctor chose the catalog device whose predicted
        pool is nearest the printed one (diagnose/device.py _replay_device), so the pool gap is no test."""
        return any(g == "device=replay" for g in self.guessed)

    @property
    def classification(self) -> str:
        gap = self.pool.gap
        if gap is None:
            return "?"
        if abs(gap) <= POOL_TOLERANCE_BYTES:
            return "ok"
        moving = [g for g in self.guessed if g.split("=")[0] in POOL_MOVING]
        # the pool is budget − the parts: a part the planner over-predicts lowers its pool, so the part
        # explains a pool gap of the opposite sign; the largest such part that itself misses the bar is named
        explaining = [
            (abs(p.gap), name)
            for name, p in self.parts.items()
            if (name != "cuda_graph_bytes" or self.graphs_budgeted)
            and p.gap is not None
            and abs(p.gap) > POOL_TOLERANCE_BYTES
            and (p.gap > 0) != (gap > 0)
        ]
        if explaining:
            return "part:" + SHORT.get(max(explaining)[1], "graphs")
        if moving:
            return "guessed:" + ",".join(g.split("=")[0] for g in moving)
        return "?"


# a listing of the flags: 0.10+ "non-default args: {…}" (a flag it leaves out is at the release's default, which
# the planner knows) or the V0 / early V1 "args: Namespace(…)" (every flag); without one an unprinted flag is a guess
ARGS_LISTINGS = ("non-default args", "Namespace(")


def guessed_inputs(facts: LogFacts, device_source: str, text: str) -> list[str]:
    """The inputs of the prediction the log does not establish (name=how, or the field's short name)."""
    out = []
    if device_source not in DEVICE_PRINTED:
        out.append(f"device={device_source}")
    if facts.vllm_version is None:
        out.append("version")
    if not any(listing in text for listing in ARGS_LISTINGS):
        if facts.gpu_memory_utilization is None and not facts.kv_cache_memory_specified:
            out.append("util")
        if facts.max_num_batched_tokens is None:
            out.append("mnbt")
        if facts.max_num_seqs is None:
            out.append("seqs")
    if facts.tensor_parallel_size is None and facts.tensor_parallel_at_least is not None:
        out.append("tp")
    return out


def _part(rows: dict[str, ComparisonRow], key: str) -> Part:
    row = rows.get(key)
    if row is None:
        return Part(None, None)
    return Part(
        None if row.actual is None else int(row.actual), None if row.predicted is None else int(row.predicted)
    )


def row_for(path: Path, entry: dict[str, object]) -> PoolRow | None:
    text = path.read_text(encoding="utf-8")
    d = diagnose(log_text=text, metrics_text=None, target_concurrency=None, device_hint=None)
    facts = parse_startup_log(text)
    rows = {row.key: row for row in d.comparison}
    pool = _part(rows, "kv_cache_bytes")
    guessed = guessed_inputs(facts, d.device_source, text)
    planner = entry.get("planner")
    device = f"{d.device_id or '—'} ({d.device_source})"
    parts = {key: _part(rows, key) for key in PARTS}
    budgeted = bool(d.prediction and d.prediction.cuda_graph_budgeted)
    version = facts.vllm_version or f"({d.vllm_version_used or '—'})"
    if (pool.printed is None or pool.predicted is None) and isinstance(planner, dict):
        # the log does not name the model (or the device): the thread's configuration, sources.json "planner"
        if facts.kv_cache_bytes is None:
            return None
        est = thread_estimate(planner)
        pool = Part(facts.kv_cache_bytes, est.kv_cache_bytes)
        parts = {key: Part(getattr(facts, key), getattr(est, key)) for key in PARTS}
        budgeted = est.cuda_graph_budgeted
        guessed = ["config=thread"]
        device = f"{planner['device']} (thread)"
        version = facts.vllm_version or f"({planner['vllm_version']}, thread)"
    if pool.printed is None or pool.predicted is None:
        return None
    return PoolRow(
        name=path.name,
        model_class=str(entry.get("class") or "?"),
        version=version,
        device=device,
        pool=pool,
        parts=parts,
        graph_estimate=facts.cuda_graph_estimate_bytes,
        graphs_budgeted=budgeted,
        guessed=guessed,
    )


def thread_estimate(planner: dict[str, object]) -> Estimate:
    """The planner's estimate for the configuration the thread states (as heldout_logs.from_thread)."""
    flags = {k: v for k, v in planner.items() if k not in ("model", "device", "vllm_version")}
    return estimate(
        model=catalog.find_model(str(planner["model"])),
        device=catalog.find_device(str(planner["device"])),
        serve=ServeConfig.model_validate(flags),
        vllm_version=str(planner["vllm_version"]),
    )


def rows_in(directory: Path) -> list[PoolRow]:
    sources = json.loads((directory / "sources.json").read_text(encoding="utf-8"))
    out = []
    for name, entry in sources.items():
        if name.startswith("_"):
            continue
        row = row_for(directory / name, entry)
        if row is not None:
            out.append(row)
    return out


def _gib(value: int | None) -> str:
    return "—" if value is None else f"{value / GIB:.2f}"


def _pair(part: Part) -> str:
    gap = "" if part.gap is None else f" ({part.gap / GIB:+.2f})"
    return f"{_gib(part.printed)}/{_gib(part.predicted)}{gap}"


def report(rows: list[PoolRow]) -> None:
    print(
        "printed/predicted GiB (printed − predicted); graphs: the capture the log prints, est = 0.20+ estimate; "
        "guessed = inputs the log does not print"
    )
    header = (
        f"{'log':58} {'vLLM':12} {'class':7} {'device (source)':34} {'pool':22} {'weights':22} "
        f"{'activation':22} {'non-torch':22} {'graphs':22} {'est':5} {'guessed':30} class"
    )
    print(header)
    for r in rows:
        p = r.parts
        print(
            f"{r.name[:58]:58} {r.version[:12]:12} {r.model_class[:7]:7} {r.device[:34]:34} {_pair(r.pool):22} "
            f"{_pair(p['weights_bytes']):22} {_pair(p['activation_peak_bytes']):22} "
            f"{_pair(p['non_torch_bytes']):22} {_pair(p['cuda_graph_bytes']):22} {_gib(r.graph_estimate):5} "
            f"{','.join(r.guessed)[:30]:30} {r.classification}"
        )
    within = sum(r.classification == "ok" for r in rows)
    print(f"\nKV pool within 0.5 GiB: {within}/{len(rows)}")
    for label, subset in (
        ("device printed (name or total) or stated by the thread", [r for r in rows if not r.fitted]),
        ("device fitted to the printed pool (no test of the pool)", [r for r in rows if r.fitted]),
    ):
        ok = sum(r.classification == "ok" for r in subset)
        print(f"  {label}: {ok}/{len(subset)}")
    counts: dict[str, int] = {}
    for r in rows:
        key = r.classification.split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    print("classes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def default_dirs() -> list[Path]:
    return [LOGS / "heldout", *sorted(LOGS.glob("heldout-2026-12*"))]


def main(argv: list[str]) -> int:
    directories = [Path(a) for a in argv] or default_dirs()
    report([row for d in directories for row in rows_in(d)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
