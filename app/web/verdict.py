"""The verdict box every page shows for an estimate: key, tone and label from
app.core.verdicts.VERDICTS (the doctor's words too); only the sentence built from the estimate's
numbers is written here. Shared by the planner and the compare view. What to change is not the
verdict's list here: for every verdict, refusals included (the recommendation's first step fixes vLLM's
free-memory, Mamba-block or length refusal, app.core.recommend.refusals), the planner's box shows the
recommendation's steps (Recommendation.changes), the same ones its "What to change, in order" applies."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.result import ErrorKind, Estimate
from app.core.verdicts import VERDICTS
from app.web.format import gib, integer
from app.web.i18n import _, t


@dataclass(frozen=True)
class VerdictView:
    key: str  # a key of app.core.verdicts.VERDICTS: fits / s_bound / n_bound / budget_bound / load_oom
    tone: str  # ok / warn / bad (a CSS class)
    headline: str
    detail: str


def holds_no_kv(est: Estimate) -> bool:
    """No layer has a KV cache spec (encoder-only attention): vLLM neither profiles nor allocates a pool
    (0.33.0 v1/engine/core.py _initialize_kv_caches), so the page shows no KV pool at all."""
    return not est.groups and est.kv_bytes_per_token == 0 and est.kv_cache_bytes == 0


def verdict_view(est: Estimate, target: int, *, derived_len: int | None = None) -> VerdictView:
    """The verdict box: key, tone and label from app.core.verdicts.VERDICTS (the doctor's words too);
    only the sentence built from this estimate's numbers is written here."""
    info = VERDICTS[est.verdict]
    return VerdictView(
        info.key, info.tone, _(info.label), _verdict_detail(est, target, derived_len=derived_len)
    )


def _verdict_detail(est: Estimate, target: int, *, derived_len: int | None) -> str:
    """The verdict's one sentence with this estimate's numbers."""
    s = integer(est.max_model_len)
    if est.error_kind == ErrorKind.MAX_LEN_ABOVE_DERIVED:
        return t(
            "vLLM refuses --max-model-len {s} above the model's derived maximum ({maximum}) unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; past the trained context the outputs may be wrong.",
            s=s,
            maximum=integer(derived_len) if derived_len else "?",
        )
    if est.error_kind == ErrorKind.MAMBA_BLOCKS:
        return t(
            "vLLM refuses to start: --max-num-seqs {seqs} exceeds the pool's {blocks} Mamba cache blocks, and with full CUDA graphs each decode sequence needs one. Up to {blocks} sequences start; --enforce-eager skips the check.",
            seqs=integer(est.max_num_seqs),
            blocks=integer(est.num_gpu_blocks),
        )
    if est.error_kind == ErrorKind.STARTUP_FREE_MEMORY:
        return t(
            "vLLM refuses to start before loading the weights: memory other processes hold leaves less free than --gpu-memory-utilization asks for. vLLM's error: {error}",
            error=est.error or "",
        )
    if est.verdict == "load_oom":
        return t(
            "Each rank holds {weights} of weights on a {total} device: vLLM runs out of memory while loading them, before any KV cache is sized.",
            weights=gib(est.weights_bytes),
            total=gib(est.device_total_bytes),
        )
    if est.verdict == "budget_bound":
        return t(
            "After weights, activations and the rest, the KV pool is {kv_cache_bytes} — not even one sequence fits at any length worth serving. Shortening max_model_len does not help.",
            kv_cache_bytes=gib(est.kv_cache_bytes),
        )
    if est.verdict == "s_bound":
        return t(
            "One sequence of max_model_len = {s} tokens needs more KV than the pool holds ({kv_cache_bytes}). Largest max_model_len that starts: {largest}.",
            s=s,
            kv_cache_bytes=gib(est.kv_cache_bytes),
            largest=integer(est.estimated_max_model_len) if est.estimated_max_model_len else _("none"),
        )
    if est.fits and holds_no_kv(est):
        return t(
            "vLLM starts; no layer keeps a KV cache (encoder-only attention), so no pool is sized: up to {seqs} sequences of {s} tokens run at once (--max-num-seqs).",
            seqs=integer(est.max_num_seqs),
            s=s,
        )
    numbers = {
        "kv_tokens": integer(est.kv_tokens),
        "max_concurrency": est.max_concurrency,
        "s": s,
        "target": target,
    }
    if est.verdict == "n_bound":
        return t(
            "The pool holds {kv_tokens} tokens: {max_concurrency:.2f} sequences of {s} tokens at once, fewer than the target {target}. vLLM starts; the rest of the requests queue.",
            **numbers,
        )
    return t(
        "vLLM starts; the KV pool holds {kv_tokens} tokens = {max_concurrency:.2f} concurrent sequences of {s} tokens (target {target}).",
        **numbers,
    )
