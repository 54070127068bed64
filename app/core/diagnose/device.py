"""Which device a pasted log ran on: the hinted one, the card it names, the catalog device nearest the printed
total among those the log does not rule out (a device of the printed size when several tie), or the one whose
replayed KV pool matches the log's; and what other processes held when vLLM started."""

from __future__ import annotations

from typing import Any

from app.core import catalog
from app.core.budget import CUDA_CONTEXT_BYTES
from app.core.diagnose.basics import fmt_gib, safe_estimate
from app.core.diagnose.model import (
    BACKEND_MIN_SM,
    BF16_MIN_SM,
    DEVICE_MATCH_TOLERANCE_BYTES,
    DEVICE_SAME_TOTAL_BYTES,
    DEVICE_TIE_TOLERANCE_BYTES,
    DeviceSource,
)
from app.core.diagnose.replay_ties import Replayed, tie_sentences
from app.core.errors import PlannerError
from app.core.logs import LogFacts
from app.core.plan import CustomPlatform, custom_device
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import N_, Text

# Below this, the used memory at the snapshot is the runtime's own: a fresh 310P shows 1.0 GiB in use
# (vllm-ascend#10122: 42.24 free of 43.24 GiB), an H100 0.51 GiB (78.68 of 79.19, the 0.19.0 log)
HELD_BY_OTHERS_MIN_BYTES = GIB


def held_by_others(facts: LogFacts) -> int | None:
    """Memory other processes held when vLLM started: total − free at the snapshot − the runtime's context
    (budget.CUDA_CONTEXT_BYTES); None when the log does not print both or the rest may be the runtime's own."""
    total, free = facts.device_total_bytes, facts.device_free_at_start_bytes
    if total is None or free is None:
        return None
    held = total - free - CUDA_CONTEXT_BYTES
    return held if held >= HELD_BY_OTHERS_MIN_BYTES else None


def _platforms(facts: LogFacts) -> tuple[str, ...]:
    """The catalog platforms the log's device can be on: an NPU log never matches a GPU, and a GPU log
    whose stack it names (ROCm's HIP / HSA lines, CUDA's errors or an NVIDIA card) never the other stack."""
    if facts.is_ascend or facts.device_type == "NPU":
        return ("npu",)
    if facts.device_type in (None, "GPU"):
        return (facts.gpu_platform,) if facts.gpu_platform is not None else ("cuda", "rocm")
    return (facts.device_type.lower(),)


def ruled_out(device: DeviceSpec, facts: LogFacts) -> str | None:
    """Why the log rules this device out (a dtype or backend it cannot run), or None."""
    sm = device.sm
    if sm is None or device.platform != "cuda":
        return None
    if facts.dtype == "bfloat16" and sm < BF16_MIN_SM:
        return Text(
            "{id}: bfloat16 needs compute capability ≥ {need} (it has {cap})",
            id=device.id,
            need=BF16_MIN_SM / 10,
            cap=device.compute_capability,
        )
    need = BACKEND_MIN_SM.get(facts.attention_backend or "")
    if need is not None and sm < need:
        return Text(
            "{id}: {backend} needs compute capability ≥ {need} (it has {cap})",
            id=device.id,
            backend=facts.attention_backend,
            need=need / 10,
            cap=device.compute_capability,
        )
    return None


def _candidates(facts: LogFacts) -> tuple[list[DeviceSpec], list[tuple[DeviceSpec, str]]]:
    """Catalog devices of the log's platform that can run what it printed, and why others cannot."""
    kept: list[DeviceSpec] = []
    reasons: list[tuple[DeviceSpec, str]] = []
    for device in catalog.list_devices():
        if device.platform not in _platforms(facts):
            continue
        reason = ruled_out(device, facts)
        if reason is None:
            kept.append(device)
        else:
            reasons.append((device, reason))
    return kept, reasons


def exclusions_that_matter(facts: LogFacts, device: DeviceSpec | None) -> list[str]:
    """Why cards were ruled out, for the cards the chosen one could be mistaken for: those of about its total
    (within DEVICE_MATCH_TOLERANCE_BYTES); with no device chosen, every one. A Llama-3.1-8B log on an 80 GB
    card listed "V100 32GB / 16GB and T4: bfloat16 needs compute capability ≥ 8.0", cards its 55 GiB KV pool
    had already ruled out (the new-user walkthrough of 2026-12, item 7: noise; walk11)."""
    reasons = _candidates(facts)[1]
    if device is not None:
        total = device.memory_total_bytes
        reasons = [
            (d, r) for d, r in reasons if abs(d.memory_total_bytes - total) <= DEVICE_MATCH_TOLERANCE_BYTES
        ]
    return [r for _, r in reasons]


def _tie_note(total: int, tied: list[DeviceSpec]) -> str:
    ids = ", ".join(d.id for d in tied[:6])
    shared = {d.memory_total_bytes for d in tied}
    if len(shared) == 1 and abs(shared.pop() - total) <= DEVICE_SAME_TOTAL_BYTES:
        return Text(
            "the card reports {total}, and {count} catalog cards report that very total ({ids}): the log does not say which one it ran on, so none is guessed — the prediction uses a device of the printed size; pass a device to choose",
            total=fmt_gib(total),
            count=len(tied),
            ids=ids,
        )
    exact = _very_total(total, tied)
    if exact and len(exact) < len(tied):
        near = [d for d in tied if d not in exact]
        return Text(
            "the card reports {total}: the catalog gives that very total for {exact}, and a total within {tolerance} of it for {near} — the log names no card, so none is guessed; the prediction uses a device of the printed size; pass a device to choose",
            total=fmt_gib(total),
            exact=", ".join(d.id for d in exact[:6]),
            near=", ".join(f"{d.id} ({fmt_gib(d.memory_total_bytes)})" for d in near[:6]),
            tolerance=fmt_gib(DEVICE_MATCH_TOLERANCE_BYTES),
        )
    drift = max(abs(d.memory_total_bytes - total) for d in tied) <= DEVICE_TIE_TOLERANCE_BYTES
    message = (
        N_(
            "the card reports {total}, and {count} catalog cards report a total within {tolerance} of it ({ids}), as much as one card's total moves between drivers: the log does not say which one it ran on, so none is guessed — the prediction uses a device of the printed size; pass a device to choose"
        )
        if drift
        else N_(
            "the card reports {total}, and {count} catalog cards report a total within {tolerance} of it ({ids}): the log names no card and its total does not tell them apart, so none is guessed — the prediction uses a device of the printed size; pass a device to choose"
        )
    )
    tolerance = DEVICE_TIE_TOLERANCE_BYTES if drift else DEVICE_MATCH_TOLERANCE_BYTES
    return Text(message, total=fmt_gib(total), count=len(tied), tolerance=fmt_gib(tolerance), ids=ids)


def _very_total(total: int, tied: list[DeviceSpec]) -> list[DeviceSpec]:
    """The tied cards whose catalog total is the printed one itself (to DEVICE_SAME_TOTAL_BYTES)."""
    return [d for d in tied if abs(d.memory_total_bytes - total) <= DEVICE_SAME_TOTAL_BYTES]


def very_total_card(facts: LogFacts) -> str | None:
    """Of the catalog cards a printed total cannot tell apart, the one (and only one) whose total it is to the
    printed 0.01 GiB, else None: an A3 die's 61.28 GiB is the 910C's, the 910B (60.96 GiB) only near it."""
    total = facts.device_total_bytes
    if total is None or total <= 0:
        return None
    candidates = _candidates(facts)[0]
    best = _nearest_device(total, candidates)
    tied = _ties(total, best, candidates) if best is not None else []
    exact = _very_total(total, tied)
    return exact[0].id if len(tied) > 1 and len(exact) == 1 else None


def _ambiguous_device(total: int, tied: list[DeviceSpec]) -> DeviceSpec:
    """Several catalog cards report this very total: a device of the printed size that names none of them.
    It keeps what the cards agree on (platform, compute capability, fp8 KV) and, where they differ, the
    custom device's stated assumption (SM 9.0 CUDA)."""
    base = custom_device(total / GIB)
    first = tied[0]
    agree = all(
        (d.platform, d.compute_capability, d.fp8_kv)
        == (first.platform, first.compute_capability, first.fp8_kv)
        for d in tied
    )
    update: dict[str, Any] = {"memory_total_bytes": total}
    if agree:
        update |= {
            "platform": first.platform,
            "compute_capability": first.compute_capability,
            "fp8_kv": first.fp8_kv,
        }
    return base.model_copy(update=update)


def _ties(total: int, best: DeviceSpec, candidates: list[DeviceSpec]) -> list[DeviceSpec]:
    """Candidates the printed total cannot tell apart: every card within the match tolerance of it
    (DEVICE_MATCH_TOLERANCE_BYTES, the best match among them), nearest first. A log that names no card and
    prints a total two catalog cards are near (23.98 GiB: RTX 4090 23.99, RTX 3090 23.69) gets both named,
    never the nearer one guessed."""
    close = sorted(
        (abs(d.memory_total_bytes - total), i, d)
        for i, d in enumerate(candidates)
        if abs(d.memory_total_bytes - total) <= DEVICE_MATCH_TOLERANCE_BYTES or d is best
    )
    return [d for _, _, d in close]


def _nearest_device(total: int, candidates: list[DeviceSpec]) -> DeviceSpec | None:
    close = [d for d in candidates if abs(d.memory_total_bytes - total) <= DEVICE_MATCH_TOLERANCE_BYTES]
    return min(close, key=lambda d: abs(d.memory_total_bytes - total), default=None)


def _replay_device(
    facts: LogFacts, model: ModelSpec, serve: ServeConfig, version: str | None, pool: int | None
) -> tuple[DeviceSpec | None, list[str]]:
    """No total printed: the catalog device whose predicted KV pool is closest to the log's (the first in
    catalog order on a tie), with the cards it cannot tell apart and the same-total cards it ruled out."""
    replayed: list[Replayed] = []
    for device in _candidates(facts)[0]:
        est = safe_estimate(model=model, device=device, serve=serve, version=version, target=None)
        if est is None:
            continue
        if pool is not None:
            gap = abs(est.kv_cache_bytes - pool)
        elif facts.kv_tokens is not None:
            gap = abs(est.kv_tokens - facts.kv_tokens) * est.kv_bytes_per_token
        else:
            return None, []
        replayed.append(Replayed(device=device, predicted_kv_bytes=est.kv_cache_bytes, gap_bytes=gap))
    best = min(replayed, key=lambda r: r.gap_bytes, default=None)  # min keeps the first of equal gaps
    if best is None or best.gap_bytes > DEVICE_MATCH_TOLERANCE_BYTES:
        return (
            None,
            [
                Text(
                    "the log prints no device total and no catalog device reproduces its KV pool; pass a device"
                )
            ],
        )
    inferred = Text(
        "the log prints no device total; {id} was inferred by replaying this configuration on every catalog device (predicted KV pool within {best} of the log's) — pass a device to be sure",
        id=best.device.id,
        best=fmt_gib(best.gap_bytes),
    )
    return best.device, [inferred, *tie_sentences(best, replayed)]


def _on_stack(device: DeviceSpec, facts: LogFacts) -> DeviceSpec:
    """A device of the printed size takes the stack the log names: on ROCm (its HIP / HSA lines) the
    prediction uses ROCm's backends and graph rules, and an Ascend log (vllm-ascend's lines) an NPU's (no fp8
    KV, vllm-ascend's budget), not the custom device's assumed CUDA. An NPU log is never reasoned about on an
    NVIDIA card (an Atlas 300I Duo die reports 46.20 GiB, vllm-ascend#3316, which no catalog NPU has)."""
    stack: CustomPlatform | None = None
    if (facts.is_ascend or facts.device_type == "NPU") and device.platform != "npu":
        stack = "npu"
    elif facts.gpu_platform == "rocm" and device.platform not in ("rocm", "npu"):
        stack = "rocm"
    if stack is None:
        return device
    # the custom device of that stack (plan.custom_device: a ROCm GPU has no CUDA compute capability)
    template = custom_device(device.memory_total_bytes / GIB, stack)
    return device.model_copy(
        update={key: getattr(template, key) for key in ("platform", "compute_capability", "fp8_kv", "name")}
    )


def _with_total(device: DeviceSpec, total: int | None) -> DeviceSpec:
    """The run's own total (what the runtime printed) beats the catalog's typical figure for the device."""
    if total is None or total <= 0:
        return device
    return device.model_copy(update={"memory_total_bytes": total})


def _named_device(facts: LogFacts) -> DeviceSpec | None:
    """The catalog device whose torch name the paste prints ("GPU 0: NVIDIA H100 80GB HBM3")."""
    if not facts.device_name:
        return None
    try:
        return catalog.find_device(facts.device_name)
    except PlannerError:
        return None


def recover_device(
    facts: LogFacts,
    hint: str | None,
    model: ModelSpec | None,
    serve: ServeConfig | None,
    version: str | None,
    pool: int | None,
) -> tuple[DeviceSpec | None, DeviceSource, list[str]]:
    """The device the prediction uses, where it came from, and the reasoning lines shown beside it."""
    total = facts.device_total_bytes
    if hint and hint.strip():
        hinted = catalog.find_device(hint)  # an unknown hint is the caller's error (field "device")
        return _with_total(hinted, total), "hint", []
    named = _named_device(facts)
    if named is not None:
        note = Text("the paste names the card ({name}): {id}", name=facts.device_name, id=named.id)
        return _with_total(named, total), "printed_name", [note]
    if total is not None and total > 0:
        candidates, _ = _candidates(facts)
        best = _nearest_device(total, candidates)
        tied = _ties(total, best, candidates) if best is not None else []
        if best is not None and len(tied) > 1:
            return _on_stack(_ambiguous_device(total, tied), facts), "ambiguous", [_tie_note(total, tied)]
        if best is not None:
            note = Text(
                "the card reports {total}: matched to {id} ({memory_total_bytes})",
                total=fmt_gib(total),
                id=best.id,
                memory_total_bytes=fmt_gib(best.memory_total_bytes),
            )
            return _with_total(best, total), "printed_total", [note]
        try:
            return (
                _on_stack(custom_device(total / GIB), facts),
                "custom",
                [
                    Text(
                        "no catalog device has {total}; predicted on a custom device of that size",
                        total=fmt_gib(total),
                    )
                ],
            )
        except PlannerError:
            return None, "none", []
    if model is not None and serve is not None and ((pool is not None and pool > 0) or facts.kv_tokens):
        device, notes = _replay_device(facts, model, serve, version, pool)
        return device, ("replay" if device is not None else "none"), notes
    return None, "none", []
