"""Case recovery: what configuration, model, version and device a pasted log describes.

Only the catalog is consulted (a pasted path never opens a file); which device the log ran on is
:mod:`.device`'s answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from app.core import catalog, regex
from app.core.diagnose.basics import fmt_gib, safe_estimate
from app.core.diagnose.batch_defaults import inferred_max_num_seqs
from app.core.diagnose.device import (
    exclusions_that_matter,
    held_by_others,
    recover_device,
    ruled_out,
    very_total_card,
)
from app.core.diagnose.model import (
    DEFAULT_BLOCK_SIZE,
    LAST_V0_VERSION,
    V0_FALLBACK_VERSION,
    DeviceSource,
)
from app.core.errors import PlannerError, UnknownModelError
from app.core.logs import Evidence, LogFacts
from app.core.logs.reading import split_lines, strip_ansi
from app.core.plan import apply_quantization_flag
from app.core.result import Estimate
from app.core.specs import GIB, KV_CACHE_DTYPES, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Text
from app.core.versions import DEFAULT_VERSION, KNOWN_VERSIONS, graphs_budgeted, parse_version, rules_for
from app.core.vllm_text_identity import LOAD_MODEL_NAME

# --------------------------------------------------------------------------------------------
# the block size the log asked for


_ARGS_BLOCK_SIZE = regex.compile(r"(?:'block_size':\s*|\bblock_size=)(\d{1,5})\b")
MAX_SCAN_LINES = 200_000  # the two fallback scans below stop after this many lines


def _scan(text: str, needle: str, pattern: re.Pattern[str]) -> tuple[str, Evidence] | None:
    """First match of ``pattern`` on a line holding ``needle``: (group 1, the line as evidence)."""
    for index, raw in enumerate(split_lines(text, maxsplit=MAX_SCAN_LINES)):  # as app.core.logs splits
        if needle not in raw:
            continue
        line = strip_ansi(raw).strip()
        found = pattern.search(line)
        if found is not None:
            return found.group(1), Evidence(line_no=index + 1, text=line[:2000])
    return None


# --------------------------------------------------------------------------------------------
# recovering the configuration


@dataclass
class Case:
    """Everything resolved from the paste; the steps read it."""

    facts: LogFacts
    evidence_model: Evidence | None
    model_name: str | None
    model: ModelSpec | None
    model_key: str | None  # the string that resolved in the catalog
    version: str | None
    serve: ServeConfig | None
    requested_block_size: int | None
    device: DeviceSpec | None
    device_source: DeviceSource
    prediction: Estimate | None
    target: int
    target_given: bool
    notes: list[str] = field(default_factory=list)
    device_reasoning: list[str] = field(default_factory=list)
    device_very_total: str | None = None  # "ambiguous": the one tied card whose total is the printed one

    # --- derived numbers -------------------------------------------------------------------
    @property
    def max_model_len(self) -> int | None:
        value = self.facts.max_model_len
        return value if value is not None and value > 0 else None

    @property
    def printed_pool(self) -> int | None:
        """The KV pool that sized the blocks: the smallest rank's, 0 when vLLM found no blocks."""
        f = self.facts
        value = f.kv_cache_bytes_min_rank if f.kv_cache_bytes_min_rank is not None else f.kv_cache_bytes
        if value is None and (f.num_gpu_blocks == 0 or f.error_kind == "no_blocks"):
            return 0
        return value

    @property
    def pool(self) -> int | None:
        """The printed pool or, when only tokens are printed (0.7/0.8), tokens × the spec's bytes/token."""
        printed = self.printed_pool
        if printed is not None:
            return printed
        tokens = self.facts.kv_tokens
        if tokens is not None and self.prediction is not None and self.facts.error is None:
            return tokens * self.prediction.kv_bytes_per_token
        return None

    @property
    def graphs_budgeted(self) -> bool:
        """The CUDA-graph estimate came out of the budget before KV sizing (0.20+, reference §2.6)."""
        version = self.facts.vllm_version
        if version is None:
            return False
        platform = self.device.platform if self.device is not None else "cuda"
        try:
            return graphs_budgeted(rules=rules_for(version), platform=platform)
        except PlannerError:
            return False

    @property
    def block_size(self) -> int | None:
        """The block size in effect: forced or printed, the planner's for the log's catalog model, or V0's
        default 16 on a GPU (reference §5.1). None when nothing says it: V1 picks it per backend and model
        (MLA 64, hybrids aligned to the Mamba page, vllm-ascend 128), so 16 is not assumed."""
        f = self.facts
        if f.block_size_forced:
            return f.block_size_forced
        if self.prediction is not None:
            return self.prediction.block_size
        if f.block_size or self.requested_block_size:
            return f.block_size or self.requested_block_size
        if f.engine == "v0" and not f.is_ascend and f.device_type != "NPU":
            return DEFAULT_BLOCK_SIZE
        return None

    @property
    def uniform_pages(self) -> bool:
        """Blocks and tokens convert by the block size: one KV group (or a model the catalog does not know
        and a printed block size). A hybrid's or DeepSeek-V4's groups have pages of their own, and
        vLLM's "GPU KV cache size" is then concurrency × max_model_len, not blocks × block size."""
        return self.prediction is None or len(self.prediction.groups) <= 1

    def _tokens_per_block(self) -> int | None:
        return self.block_size if self.uniform_pages else None

    def _blocks_and_tokens(self) -> tuple[int | None, int | None]:
        """Blocks (V0 prints them) and pool tokens (V1 prints them) as printed, the other converted by
        the block size when one is known and the pages are uniform."""
        f = self.facts
        blocks, tokens, size = f.num_gpu_blocks, f.kv_tokens, self._tokens_per_block()
        if size and blocks is None and tokens is not None and f.error_kind is None:
            blocks = tokens // size
        if size and tokens is None and blocks is not None and f.error_kind != "mamba_blocks":
            tokens = blocks * size  # the Mamba refusal counts state blocks, not token pages
        return blocks, tokens

    @property
    def blocks(self) -> int | None:
        return self._blocks_and_tokens()[0]

    @property
    def pool_tokens(self) -> int | None:
        return self._blocks_and_tokens()[1]

    def per_token(self) -> tuple[int | None, str]:
        """KV bytes per token per device, and where the figure came from."""
        if self.prediction is not None and self.prediction.kv_bytes_per_token > 0:
            return self.prediction.kv_bytes_per_token, Text("model spec (2 × L × H_kv/TP × D × b)")
        f, pool, tokens = self.facts, self.pool, self.pool_tokens
        if pool and tokens:
            return round(pool / tokens), Text("log: KV pool ÷ pool tokens")
        if f.kv_cache_needed_bytes and self.max_model_len:
            return round(f.kv_cache_needed_bytes / self.max_model_len), Text("log: KV needed ÷ max_model_len")
        return None, Text("not derivable from the paste")

    def bytes_per_block(self) -> tuple[int | None, str]:
        if self.prediction is not None and self.prediction.bytes_per_block > 0:
            return self.prediction.bytes_per_block, Text("model spec")
        f, pool = self.facts, self.pool
        if pool and f.num_gpu_blocks and f.error_kind != "mamba_blocks":
            return pool // f.num_gpu_blocks, Text("log: pool ÷ blocks")
        per_token, _ = self.per_token()
        size = self._tokens_per_block()
        if per_token and size:
            return per_token * size, Text("per-token bytes × block size {block_size}", block_size=size)
        return None, ""

    def reached_concurrency(self) -> float | None:
        """Requests of max_model_len tokens the pool holds: printed, or pool tokens ÷ S."""
        f = self.facts
        if f.error is not None:
            return None
        if f.max_concurrency is not None:
            return f.max_concurrency
        tokens, length = self.pool_tokens, self.max_model_len
        if tokens is not None and length:
            return round(tokens / length, 2)
        return None

    @property
    def started(self) -> bool | None:
        f = self.facts
        if f.error is not None:
            return False
        printed = (f.kv_tokens, f.num_gpu_blocks, f.max_concurrency, f.kv_cache_bytes)
        if any(v is not None for v in printed) or f.kv_cache_memory_suggestion_bytes is not None:
            return True  # the suggestion line is printed after KV sizing and graph capture
        if f.startup_completed:
            return (
                True  # the server is up, so vLLM sized and allocated the pool (a quote without its KV lines)
            )
        return None


def _resolve_model(name: str | None, quantization: str | None) -> tuple[ModelSpec | None, str | None, str]:
    """The catalog model for a log's model id (a local path is tried by its folder name too).

    Only the catalog is consulted: a pasted path must never open a file on this server.
    """
    if not name:
        return None, None, ""
    candidates = [name]
    tail = name.rstrip("/").rsplit("/", 1)[-1]
    if tail and tail != name and (name.startswith(("/", ".", "~")) or name.count("/") > 1):
        candidates.append(tail)
    for key in candidates:
        try:
            spec = catalog.find_model(key)
        except UnknownModelError:
            continue
        except PlannerError as exc:  # the catalog itself failed to load: say so, do not blame the log
            return (
                None,
                None,
                Text(
                    "the model catalog could not be read ({field}: {message})",
                    field=exc.field,
                    message=exc.message,
                ),
            )
        note = (
            ""
            if key == name
            else Text(
                "model {name!r} was matched to the catalog by its folder name {key!r}", name=name, key=key
            )
        )
        try:
            spec = apply_quantization_flag(spec, quantization)
        except PlannerError as exc:
            note = f"{note}; {exc.message}" if note else exc.message
        return spec, key, note
    return (
        None,
        None,
        Text("model {name!r} is not in the catalog: the prediction and the planner link need it", name=name),
    )


def replay_version(facts: LogFacts) -> tuple[str | None, str]:
    """The release whose rules replay this log, and a note when it had to be guessed."""
    printed = facts.vllm_version
    if printed is not None:
        try:
            rules = rules_for(printed)
        except PlannerError as exc:
            return None, Text(
                "{message}; predicted with {default_version}",
                message=exc.message,
                default_version=DEFAULT_VERSION,
            )
        if facts.engine == "v0" and rules.engine == "v1":
            return LAST_V0_VERSION, (
                Text(
                    "vLLM {printed} ran the V0 engine here; predicted with {last_v0_version}'s V0 rules",
                    printed=printed,
                    last_v0_version=LAST_V0_VERSION,
                )
            )
        return rules.version, ""
    if facts.engine == "v0":
        return (
            V0_FALLBACK_VERSION,
            Text(
                "the log prints no version; its V0 lines were replayed as {v0_fallback_version}",
                v0_fallback_version=V0_FALLBACK_VERSION,
            ),
        )
    if facts.release_at_most is not None:
        bound = parse_version(facts.release_at_most)
        known = [v for v in KNOWN_VERSIONS if parse_version(v) <= bound]
        if known:
            return known[-1], Text(
                "the log prints no version; its lines are those of releases up to {bound} (vllm-ascend's byte budget line), so it was replayed as {version}",
                bound=facts.release_at_most,
                version=known[-1],
            )
    return None, Text(
        "the log prints no version; predicted with {default_version}", default_version=DEFAULT_VERSION
    )


# ServeConfig fields a log does not carry as such: the doctor replays over the printed pool rather than
# take --kv-cache-memory-bytes, and VLLM_ALLOW_LONG_MAX_MODEL_LEN is an environment variable
NOT_FROM_LOG = frozenset({"kv_cache_memory_bytes", "allow_long_max_model_len", "device_memory_used_gib"})
# read below with a check of their own (a value vLLM printed that the planner's type does not take)
CHECKED_FIELDS = frozenset({"kv_cache_dtype", "dtype", "block_size"})
# one planner-parameter model (issue 13): every other flag the log shows reaches the prediction, under
# the name LogFacts shares with ServeConfig (a test holds LogFacts to that)
SERVE_FIELDS = tuple(name for name in ServeConfig.model_fields if name not in NOT_FROM_LOG)


def _draft_in_catalog(data: dict[str, Any]) -> str:
    """The draft of a logged --speculative-config, by its catalog name (a local path by its folder name);
    a draft the catalog lacks is left out of the prediction, and the note says so."""
    spec = data.get("speculative_config")
    if not isinstance(spec, dict) or not isinstance(spec.get("model"), str):
        return ""
    name = spec["model"]
    draft, key, _ = _resolve_model(name, None)
    if draft is None or key is None:
        data.pop("speculative_config")
        return Text(
            "draft model {name!r} is not in the catalog: the prediction leaves its weights and KV out",
            name=name,
        )
    data["speculative_config"] = {**spec, "model": key}
    if key != name:
        return Text("draft model {name!r} was matched to the catalog as {key!r}", name=name, key=key)
    return ""


def _parallel_from_bounds(facts: LogFacts, data: dict[str, Any]) -> list[str]:
    """A size the log does not print but its worker names bound from below (`Worker_TP1`: at least 2) is
    planned at that bound, and the note says it is an assumption, not a printed fact."""
    notes = []
    for size, bound, label in (
        ("tensor_parallel_size", facts.tensor_parallel_at_least, "TP"),
        ("pipeline_parallel_size", facts.pipeline_parallel_at_least, "PP"),
    ):
        if size not in data and bound is not None:
            data[size] = bound
            notes.append(
                Text(
                    "{label} is not printed; the worker names show at least {n} ranks, so the prediction assumes {label} {n}",
                    label=label,
                    n=bound,
                )
            )
    return notes


def _serve(facts: LogFacts, requested_block_size: int | None) -> tuple[ServeConfig | None, list[str]]:
    """The `vllm serve` flags the log shows; a value ServeConfig refuses is dropped and reported."""
    data: dict[str, Any] = {
        name: getattr(facts, name)
        for name in SERVE_FIELDS
        if name not in CHECKED_FIELDS and getattr(facts, name) is not None
    }
    if facts.kv_cache_dtype in KV_CACHE_DTYPES:
        data["kv_cache_dtype"] = facts.kv_cache_dtype
    if facts.dtype in ("bfloat16", "float16", "float32", "half"):
        data["dtype"] = facts.dtype
    if requested_block_size is not None:
        data["block_size"] = requested_block_size
    dropped: list[str] = _parallel_from_bounds(facts, data)
    draft_note = _draft_in_catalog(data)
    if draft_note:
        dropped.append(draft_note)
    for _ in range(len(data) + 1):
        try:
            return ServeConfig.model_validate(data), dropped
        except ValidationError as exc:
            bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]} & data.keys()
            if not bad:
                break
            for name in sorted(bad):
                dropped.append(
                    Text(
                        "{name}={name2!r} from the log is outside what the planner models",
                        name=name,
                        name2=data.pop(name),
                    )
                )
    return None, dropped


def _load_line_evidence(facts: LogFacts) -> Evidence | None:
    """The model runner's "Starting to load model X..." line when it is what named the model (the start-up
    reader takes it below the banner and config lines, vllm_text_identity.LOAD_MODEL_NAME): the budget step
    shows it beside the weights line."""
    ev = facts.evidence.get("model")
    return ev if ev is not None and LOAD_MODEL_NAME.needle in ev.text else None


def _with_inferred_seqs(
    serve: ServeConfig | None, facts: LogFacts, log_text: str, version: str | None, notes: list[str]
) -> ServeConfig | None:
    """--max-num-seqs from the branch the printed default batched tokens prove (batch_defaults), said in a note."""
    if serve is None or version is None:
        return serve
    try:
        rules = rules_for(version)
    except PlannerError:
        return serve
    seqs = inferred_max_num_seqs(facts, log_text, rules)
    if seqs is None:
        return serve
    notes.append(
        Text(
            "the log does not print max_num_seqs; its default batched tokens ({tokens}) are vLLM's choice with {seqs} sequences, so the prediction uses {seqs}",
            tokens=f"{facts.max_num_batched_tokens:,}",
            seqs=f"{seqs:,}",
        )
    )
    return serve.model_copy(update={"max_num_seqs": seqs})


def recover_case(log_text: str, facts: LogFacts, target: int | None, device_hint: str | None) -> Case:
    notes: list[str] = list(facts.notes)
    model_name, evidence_model = facts.model, _load_line_evidence(facts)
    requested_block_size = facts.block_size if facts.block_size_forced is None else None
    if facts.block_size_forced is not None and log_text:
        found_size = _scan(log_text, "args", _ARGS_BLOCK_SIZE)
        requested_block_size = int(found_size[0]) if found_size is not None else None
    model, model_key, model_note = _resolve_model(model_name, facts.quantization)
    if model_note:
        notes.append(model_note)
    version, version_note = replay_version(facts) if model is not None else (None, "")
    if version_note:
        notes.append(version_note)
    serve, dropped = _serve(facts, requested_block_size)
    notes.extend(dropped)
    serve = _with_inferred_seqs(serve, facts, log_text, version, notes)
    held = held_by_others(facts)
    if serve is not None and held:
        serve = serve.model_copy(update={"device_memory_used_gib": round(held / GIB, 2)})
        notes.append(
            Text(
                "the device had {free} free of {total} when vLLM started: about {held} was held by other processes (planned as such)",
                free=fmt_gib(facts.device_free_at_start_bytes or 0),
                total=fmt_gib(facts.device_total_bytes or 0),
                held=fmt_gib(held),
            )
        )
    pool_hint = (
        facts.kv_cache_bytes_min_rank if facts.kv_cache_bytes_min_rank is not None else facts.kv_cache_bytes
    )
    device, device_source, reasoning = recover_device(facts, device_hint, model, serve, version, pool_hint)
    if device_source == "hint" and device is not None:
        reasoning.append(Text("{id} was chosen in the form", id=device.id))
        conflict = ruled_out(device, facts)
        if conflict is not None:
            notes.append(Text("the chosen device does not match the log: {conflict}", conflict=conflict))
    elif device_source in ("printed_name", "printed_total", "ambiguous", "replay", "none"):
        reasoning.extend(exclusions_that_matter(facts, device)[:6])
    n = target if target is not None and target > 0 else 1
    prediction = None
    if model is not None and device is not None and serve is not None:
        prediction = safe_estimate(model=model, device=device, serve=serve, version=version, target=n)
        if prediction is None:
            notes.append(Text("the planner refuses this configuration, so there is no prediction to compare"))
    return Case(
        facts=facts,
        evidence_model=evidence_model,
        model_name=model_name,
        model=model,
        model_key=model_key,
        version=version,
        serve=serve,
        requested_block_size=requested_block_size,
        device=device,
        device_source=device_source,
        prediction=prediction,
        target=n,
        target_given=target is not None and target > 0,
        notes=notes,
        device_reasoning=reasoning,
        device_very_total=very_total_card(facts) if device_source == "ambiguous" else None,
    )


def replay_over_pool(case: Case, **changes: int) -> Estimate | None:
    """The estimator over the log's own KV pool (``--kv-cache-memory-bytes`` = the printed pool)."""
    if case.model is None or case.device is None or case.serve is None:
        return None
    update: dict[str, Any] = dict(changes)
    pool = case.pool
    if pool is not None:
        update["kv_cache_memory_bytes"] = max(0, pool)
    try:
        serve = ServeConfig.model_validate({**case.serve.model_dump(), **update})
    except ValidationError:
        return None
    return safe_estimate(model=case.model, device=case.device, serve=serve, version=case.version, target=None)
