"""What the doctor says about the other cards when it infers the device from the KV pool alone.

A log that prints no device total is replayed on every catalog device and the one whose predicted pool is
nearest the log's is used (case._replay_device). Cards of the same total (H100 and A100 80GB both report
79.10 GiB) are not told apart by the total, only by what the planner predicts on them; the new-user
walkthrough of 2026-12 (item 7) read "nvidia-a100-sxm4-80gb (inferred from the KV pool)" for its H100 log
with no word about the H100. So the inference names:

- the cards whose prediction ties the chosen one's (A100 SXM4 and A100 PCIe: the same pool to the byte),
  which the log cannot tell apart at all;
- the cards of the same total the replay ruled out, each with its predicted pool and how far that is from
  the log's, so a user who ran on one of them sees why it was not picked and that a chosen device decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.diagnose.model import DEVICE_TIE_TOLERANCE_BYTES
from app.core.specs import GIB, DeviceSpec
from app.core.text import N_, Plural

MAX_NAMED_IDS = 4  # ids named in one sentence (the catalog has up to 4 cards of one total and prediction)
MAX_RULED_OUT_GROUPS = 2  # sentences on same-total cards ruled out (one per distinct predicted pool)


@dataclass(frozen=True)
class Replayed:
    """One catalog device the log's configuration was replayed on."""

    device: DeviceSpec
    predicted_kv_bytes: int
    gap_bytes: float  # |predicted - the log's| in bytes (KV pool, or KV tokens x bytes per token)


def _gib(num_bytes: float) -> str:
    return f"{num_bytes / GIB:,.2f} GiB"


def _ids(rows: Sequence[Replayed]) -> str:
    return ", ".join(r.device.id for r in rows[:MAX_NAMED_IDS])


def tie_sentences(best: Replayed, replayed: Sequence[Replayed]) -> list[str]:
    """Sentences naming the cards the replay cannot tell from ``best`` and the same-total cards it ruled out."""
    others = [r for r in replayed if r.device.id != best.device.id]
    tied = [r for r in others if abs(r.gap_bytes - best.gap_bytes) <= DEVICE_TIE_TOLERANCE_BYTES]
    out: list[str] = []
    if tied:
        out.append(
            Plural(
                len(tied),
                N_(
                    "{ids} predicts the same KV pool ({pool}): the log cannot tell it from {id}, and the planner link uses {id}"
                ),
                N_(
                    "{ids} predict the same KV pool ({pool}): the log cannot tell them from {id}, and the planner link uses {id}"
                ),
                ids=_ids(tied),
                pool=_gib(best.predicted_kv_bytes),
                id=best.device.id,
            )
        )
    total = best.device.memory_total_bytes
    ruled_out = sorted(
        (
            r
            for r in others
            if r not in tied and abs(r.device.memory_total_bytes - total) <= DEVICE_TIE_TOLERANCE_BYTES
        ),
        key=lambda r: r.gap_bytes,
    )
    groups: dict[int, list[Replayed]] = {}
    for r in ruled_out:
        groups.setdefault(r.predicted_kv_bytes, []).append(r)
    for rows in list(groups.values())[:MAX_RULED_OUT_GROUPS]:
        out.append(
            Plural(
                len(rows),
                N_(
                    "{ids} reports the same {total} total, so the total does not rule it out; the planner predicts a KV pool of {pool} there, {gap} from the log's, so the replay did not pick it"
                ),
                N_(
                    "{ids} report the same {total} total, so the total does not rule them out; the planner predicts a KV pool of {pool} there, {gap} from the log's, so the replay did not pick them"
                ),
                ids=_ids(rows),
                total=_gib(total),
                pool=_gib(rows[0].predicted_kv_bytes),
                gap=_gib(rows[0].gap_bytes),
            )
        )
    return out
