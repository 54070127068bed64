"""The seed's five steps (定位按五步走) over a recovered case: KV lines, budget, demand, cause, fallbacks."""

from __future__ import annotations

import math

from app.core import situations
from app.core.budget import requested_bytes
from app.core.diagnose.basics import clip, evidence_of, fmt_gib
from app.core.diagnose.case import Case, replay_over_pool, replay_version
from app.core.diagnose.model import (
    BUDGET_ERRORS,
    FAILURE_VERDICTS,
    FEW_BLOCKS,
    SEQUENCE_ERRORS,
    WEIGHTS_GAP_FRACTION,
    WEIGHTS_HEAVY_SHARE,
    Overall,
    Step,
    StepStatus,
    Trial,
    TrialKey,
    TrialSource,
)
from app.core.errors import PlannerError
from app.core.logs import Evidence
from app.core.text import N_, SEMICOLON, SPACE, Text, TextList
from app.core.verdicts import VERDICTS, classify, shorter_length_starts, useful_length
from app.core.versions import rules_for

# Who answered a step-4 trial (Trial.source), as the sentence words it: a word, translated where shown
# (the Chinese page said "可以启动（log）" and "失败（arithmetic）" before; walk11).
TRIAL_SOURCE_WORDS = {"log": N_("log"), "planner": N_("planner"), "arithmetic": N_("arithmetic")}


# --------------------------------------------------------------------------------------------
# step 1: the KV lines


def step_kv_lines(case: Case) -> Step:
    f = case.facts
    title = Text("Read the KV-cache lines: blocks, bytes per block, pool")
    ev = evidence_of(
        f, "num_gpu_blocks", "kv_cache_bytes_min_rank", "kv_cache_bytes", "kv_tokens", "max_concurrency"
    )
    pool, blocks, tokens = case.pool, case.blocks, case.pool_tokens
    per_block, per_block_from = case.bytes_per_block()
    if pool is None and blocks is None and tokens is None:
        return Step(
            key="kv_lines",
            title=title,
            verdict=Text("no KV lines"),
            status="unknown",
            explanation=(
                Text(
                    "The paste has no 'Available KV cache memory', '# GPU blocks' or 'KV cache size' line. Paste the start-up log up to 'init engine' (or the error that stopped it)."
                )
            ),
            evidence=ev,
        )
    parts: list[str] = []
    if blocks is not None and f.error_kind == "mamba_blocks":
        parts.append(Text("{blocks:,} Mamba cache blocks (printed)", blocks=blocks))
    elif blocks is not None:
        how = (
            Text("printed")
            if f.num_gpu_blocks is not None
            else Text(
                "= {tokens:,} tokens ÷ block size {block_size}", tokens=tokens, block_size=case.block_size
            )
        )
        parts.append(Text("{blocks:,} blocks ({how})", blocks=blocks, how=how))
    elif tokens is not None:
        parts.append(_no_block_count(case))
    if per_block is not None:
        parts.append(
            Text(
                "{per_block:,.2f} MiB per block ({per_block_from})",
                per_block=per_block / 2**20,
                per_block_from=per_block_from,
            )
        )
    if pool is not None:
        how_pool = "" if case.printed_pool is not None else Text(" (= tokens × bytes per token; not printed)")
        parts.append(Text("KV pool {pool}{how_pool}", pool=fmt_gib(pool), how_pool=how_pool))
    if tokens is not None:
        parts.append(Text("{tokens:,} tokens", tokens=tokens))
    summary = Text("{parts}.", parts=TextList(SEMICOLON, parts))
    empty = (pool is not None and pool <= 0) or blocks == 0 or f.error_kind == "no_blocks"
    if empty or (blocks is not None and blocks < FEW_BLOCKS):
        ev = evidence_of(
            f, "num_gpu_blocks", "kv_cache_bytes_min_rank", "kv_cache_bytes", "kv_tokens", "error"
        )
        return Step(
            key="kv_lines",
            title=title,
            verdict=Text("no blocks") if empty else Text("only {blocks} blocks", blocks=blocks),
            status="fail",
            explanation=(
                Text(
                    "{summary} Zero or a handful of blocks means weights and activation took the budget: the problem is not the context length.",
                    summary=summary,
                )
            ),
            evidence=ev,
        )
    verdict = (
        Text("{blocks:,} blocks", blocks=blocks)
        if blocks is not None
        else Text("{tokens:,} tokens", tokens=tokens)
        if tokens
        else fmt_gib(pool or 0)
    )
    if pool is not None and blocks is not None:
        verdict += f" · {fmt_gib(pool)}"
    if f.error_kind == "max_len_too_long":
        # vLLM's own check failed: "To serve at least one request with the models's max seq len …"
        return _too_small_for_one_request(case, title, summary, verdict, ev)
    return Step(
        key="kv_lines",
        title=title,
        verdict=verdict,
        status="ok",
        explanation=Text("{summary} Enough blocks: the budget left room for a KV pool.", summary=summary),
        evidence=ev,
    )


def _no_block_count(case: Case) -> str:
    """V1 prints tokens, not blocks; dividing by a block size the log does not print would be a guess. 0.30+
    prints each KV group's block size when there are several (DeepSeek-V4, hybrids): those are said."""
    sizes = case.facts.kv_group_block_sizes
    if sizes:
        return Text(
            "{groups} KV groups with block sizes {sizes} (printed; the scheduler aligns to {lcm}): the tokens are not blocks × block size, so no block count is derived",
            groups=len(sizes),
            sizes=", ".join(str(size) for size in sizes),
            lcm=case.facts.scheduler_block_size or math.lcm(*sizes),
        )
    if case.block_size is None:
        return Text("block size not printed, so no block count is derived")
    groups = len(case.prediction.groups) if case.prediction is not None else 0
    if case.uniform_pages and case.facts.error_kind is not None:  # Case._blocks_and_tokens converts none then
        return Text("the start failed, so the printed tokens are not converted to blocks")
    return Text(
        "{groups} KV groups with pages of their own: the tokens are not blocks × block size, so no block count is derived",
        groups=groups,
    )


def _too_small_for_one_request(
    case: Case, title: str, summary: str, verdict: str, ev: list[Evidence]
) -> Step:
    """Step 1 when vLLM refused to start because one request of max_model_len does not fit the pool."""
    f = case.facts
    lines = {e.line_no for e in ev}
    ev = [*ev, *(e for e in evidence_of(f, "error") if e.line_no not in lines)]  # vLLM's refusal itself
    needed = f.kv_cache_needed_bytes
    if needed is not None and f.max_model_len is not None:
        why = Text(
            "{summary} Too small for one request: one sequence of max_model_len {max_model_len:,} needs {needed} of KV, so vLLM refused to start (step 3 says what to change).",
            summary=summary,
            max_model_len=f.max_model_len,
            needed=fmt_gib(needed),
        )
    else:
        why = Text(
            "{summary} Too small for one request of max_model_len, so vLLM refused to start (step 3 says what to change).",
            summary=summary,
        )
    return Step(
        key="kv_lines",
        title=title,
        verdict=Text("{verdict}: too small for one request", verdict=verdict),
        status="fail",
        explanation=why,
        evidence=ev,
    )


# --------------------------------------------------------------------------------------------
# step 2: where the budget went


def _expected_weights(case: Case) -> tuple[int | None, str]:
    if case.model is None:
        return None, ""
    tp = case.serve.tensor_parallel_size if case.serve is not None else 1
    if case.prediction is not None:
        return case.prediction.weights_bytes, (
            Text(
                "params {params_total:,.2f} B × b ÷ TP {tp} (the planner's weight model)",
                params_total=case.model.params_total / 1000000000.0,
                tp=tp,
            )
        )
    if case.model.quantization is None:
        b = case.model.weight_dtype_bytes
        return (
            case.model.params_total * b // tp,
            Text(
                "params {params_total:,.2f} B × {b} B ÷ TP {tp}",
                params_total=case.model.params_total / 1000000000.0,
                b=b,
                tp=tp,
            ),
        )
    return None, ""


def step_budget(case: Case) -> Step:
    f = case.facts
    title = Text("Back-compute where the budget went")
    ev = evidence_of(
        f,
        "device_total_bytes",
        "gpu_memory_utilization",
        "weights_bytes",
        "activation_peak_bytes",
        "non_torch_bytes",
        "cuda_graph_estimate_bytes",
        "kv_cache_bytes",
    )
    if case.evidence_model is not None:
        ev = sorted([*ev, case.evidence_model], key=lambda e: e.line_no)
    total, total_from = f.device_total_bytes, Text("printed")
    if total is None and case.device is not None:
        total, total_from = case.device.memory_total_bytes, Text("catalog {id}", id=case.device.id)
    util = f.gpu_memory_utilization
    if util is None and case.prediction is not None:
        util = case.prediction.gpu_memory_utilization
    expected, expected_how = _expected_weights(case)
    weights = f.weights_bytes
    lines: list[str] = []
    budget = requested_budget(case, total, util) if total is not None and util is not None else None
    if budget is not None and total is not None:
        lines.append(
            Text(
                "Budget = total {total} ({total_from}) × gpu_memory_utilization {util} = {budget}.",
                total=fmt_gib(total),
                total_from=total_from,
                util=util,
                budget=fmt_gib(budget),
            )
        )
    if weights is not None:
        lines.append(Text("Weights {weights} (log).", weights=fmt_gib(weights)))
    if expected is not None:
        lines.append(_expected_weights_line(expected, expected_how, weights))
    weights = weights if weights is not None else expected
    pool = case.pool
    status: StepStatus = "info"
    verdict = Text("budget not printed")
    if budget is not None and weights is not None and pool is not None:
        status, verdict = _budget_partition(case, budget=budget, weights=weights, pool=pool, lines=lines)
    elif weights is not None and pool is not None:
        verdict = Text("weights {weights} · KV {pool}", weights=fmt_gib(weights), pool=fmt_gib(max(pool, 0)))
        lines.append(
            Text("The log prints no device total and the device is unknown: pass a device to close the sum.")
        )
    if not lines:
        lines.append(Text("The log prints neither the budget nor the weights."))
        status, verdict = "unknown", Text("not printed")
    return Step(
        key="budget",
        title=title,
        verdict=verdict,
        status=status,
        explanation=TextList(SPACE, lines),
        evidence=ev,
    )


def _expected_weights_line(expected: int, expected_how: str, weights: int | None) -> str:
    """What the weights should be, and whether the log's figure matches it (WEIGHTS_GAP_FRACTION)."""
    check = ""
    if weights is not None and expected > 0:
        off = (weights - expected) / expected
        check = (
            Text(" — the log's weights are {off:+.0%} off: another dtype, quantization or model?", off=off)
            if abs(off) > WEIGHTS_GAP_FRACTION
            else Text(" — matches the log.")
        )
    return Text(
        "Expected ≈ {expected_how} = {expected}{check}",
        expected_how=expected_how,
        expected=fmt_gib(expected),
        check=check,
    )


def _budget_partition(
    case: Case, *, budget: int, weights: int, pool: int, lines: list[str]
) -> tuple[StepStatus, str]:
    """Budget − weights − KV (− non-torch − graphs) = what activation took, and whether the weights
    leave the KV cache room; appends the sentences to ``lines``, returns the status and verdict."""
    f = case.facts
    graphs = (f.cuda_graph_estimate_bytes or 0) if case.graphs_budgeted else 0
    status: StepStatus
    non_torch = f.non_torch_bytes
    rest = budget - weights - max(pool, 0) - graphs - (non_torch or 0)
    label = (
        Text("activation and workspace")
        if non_torch is not None
        else Text("activation, workspace and non-torch")
    )
    terms = Text(
        "{budget} − weights {weights} − KV {pool}",
        budget=fmt_gib(budget),
        weights=fmt_gib(weights),
        pool=fmt_gib(max(pool, 0)),
    )
    if non_torch is not None:
        terms += Text(" − non-torch {non_torch}", non_torch=fmt_gib(non_torch))
    if graphs:
        terms += Text(" − CUDA graphs {graphs}", graphs=fmt_gib(graphs))
    lines.append(
        Text("The difference is {label}: {terms} = {rest}.", label=label, terms=terms, rest=fmt_gib(rest))
    )
    if f.activation_peak_bytes is not None:
        lines.append(
            Text(
                "The log's own activation peak: {activation_peak_bytes}.",
                activation_peak_bytes=fmt_gib(f.activation_peak_bytes),
            )
        )
    share = weights / budget if budget > 0 else 1.0
    verdict = Text("weights {share:.0%} of budget", share=share)
    if weights >= budget:
        status, verdict = "fail", Text("weights exceed the budget")
        lines.append(Text("The weights alone do not fit the budget: quantize them or raise TP."))
    elif share >= WEIGHTS_HEAVY_SHARE or pool <= 0:
        status = "fail" if pool <= 0 else "warn"
        lines.append(
            Text("Weights take most of the budget: reduce weight memory first (quantization, higher TP).")
        )
    else:
        status = "ok"
        lines.append(Text("KV gets {pool:.0%} of the budget.", pool=max(pool, 0) / budget))
    return status, verdict


# --------------------------------------------------------------------------------------------
# step 3: demand from the formula


def step_demand(case: Case) -> Step:
    f = case.facts
    title = Text("Demand from the formula at S = max_model_len, N = target")
    ev = evidence_of(f, "max_model_len", "kv_cache_dtype", "tensor_parallel_size", "kv_cache_needed_bytes")
    per_token, source = case.per_token()
    length, n, pool = case.max_model_len, case.target, case.pool
    if per_token is None or length is None:
        if length is None:
            missing: str = "max_model_len"
        elif case.model is not None:
            # the model is known but no prediction was made (no device to size its KV layout on)
            missing = Text(
                "the KV bytes per token (the device is unknown, and the log prints no pool/tokens)"
            )
        else:
            missing = Text("the KV bytes per token (model unknown, no pool/tokens)")
        return Step(
            key="demand",
            title=title,
            verdict=Text("not computable"),
            status="unknown",
            explanation=Text("Needs {missing}.", missing=missing),
            evidence=ev,
        )
    one = per_token * length
    demand = one * n
    target_note = "" if case.target_given else Text(" (no target given: N = 1)")
    text = Text(
        "KV bytes per token per device = {per_token:,} B ({source}). Demand = per-token × S × N = {per_token:,} × {length:,} × {n}{target_note} = {demand}.",
        per_token=per_token,
        source=source,
        length=length,
        n=n,
        target_note=target_note,
        demand=fmt_gib(demand),
    )
    if pool is None:
        return Step(
            key="demand",
            title=title,
            verdict=Text("needs {demand}", demand=fmt_gib(demand)),
            status="info",
            explanation=text + Text(" The log prints no KV pool to compare with."),
            evidence=ev,
        )
    holds = pool / one if one else 0.0
    printed = f.max_concurrency if f.max_concurrency_tokens_per_request == length else None
    if printed is None:
        text += Text(
            " Pool {pool} holds {holds:.2f} requests of {length:,} tokens.",
            pool=fmt_gib(max(pool, 0)),
            holds=holds,
            length=length,
        )
    else:  # the printed figure counts the blocks vLLM cut the pool into (kv_cache_utils.py); this is bytes ÷ bytes
        ev = evidence_of(
            f,
            "max_model_len",
            "kv_cache_dtype",
            "tensor_parallel_size",
            "kv_cache_needed_bytes",
            "max_concurrency",
        )
        text += Text(
            " Pool {pool} ÷ {one} = {holds:.2f} requests of {length:,} tokens: the unrounded byte ratio; vLLM prints {printed:.2f}x, counted in the whole blocks it allocated.",
            pool=fmt_gib(max(pool, 0)),
            one=fmt_gib(one),
            holds=holds,
            length=length,
            printed=printed,
        )
    if demand <= pool:
        return Step(
            key="demand",
            title=title,
            verdict=Text("{demand} ≤ pool", demand=fmt_gib(demand)),
            status="ok",
            explanation=text,
            evidence=ev,
        )
    over = f"{demand / pool:.1f}×" if pool > 0 else Text("more than")
    return Step(
        key="demand",
        title=title,
        verdict=Text("{demand} > pool {pool}", demand=fmt_gib(demand), pool=fmt_gib(max(pool, 0))),
        status="fail",
        explanation=Text("{text} The demand is {over} the pool.", text=text, over=over),
        evidence=ev,
    )


# --------------------------------------------------------------------------------------------
# step 4: S-side, N-side or budget


# a trial's answer: does it start, who says so, and the detail (Trial's own fields but key and label)
Answer = tuple[bool | None, TrialSource, str]


def _trial(key: TrialKey, label: str, answer: Answer) -> Trial:
    starts, source, detail = answer
    return Trial(key=key, label=label, starts=starts, source=source, detail=detail)


def trial_as_configured(case: Case) -> Trial:
    label = (
        Text("As configured (S = {max_model_len:,})", max_model_len=case.max_model_len)
        if case.max_model_len
        else Text("As configured")
    )
    return _trial("as_configured", label, _as_configured(case))


def _as_configured(case: Case) -> Answer:
    if case.started is False:
        return False, "log", clip(case.facts.error or "")
    if case.started:
        reached = case.reached_concurrency()
        more = (
            Text("; holds {reached:.2f} requests of S tokens", reached=reached) if reached is not None else ""
        )
        return True, "log", Text("started{more}", more=more)
    if case.prediction is not None:
        return (
            case.prediction.fits,
            "planner",
            Text("the log stops before the KV lines; the planner's prediction"),
        )
    return None, "none", Text("the log does not say")


def largest_fitting(case: Case) -> tuple[int | None, TrialSource, str]:
    """The longest max_model_len the log's pool starts: vLLM's printed estimate, else the planner's
    replay over the log's pool, else pool ÷ KV bytes per token."""
    f = case.facts
    if f.estimated_max_model_len is not None:
        return (
            f.estimated_max_model_len,
            "log",
            Text(
                "vLLM estimates {largest:,} tokens fit",
                largest=f.estimated_max_model_len,
            ),
        )
    replay = replay_over_pool(case)
    if replay is not None and replay.estimated_max_model_len is not None:
        largest = replay.max_model_len if replay.fits else replay.estimated_max_model_len
        return (
            largest,
            "planner",
            Text("replayed over the log's pool: {largest:,} tokens fit", largest=largest),
        )
    per_token, _ = case.per_token()
    pool = case.pool
    if per_token and pool is not None:
        largest = max(pool, 0) // per_token
        return (
            largest,
            "arithmetic",
            Text(
                "pool {pool} ÷ {per_token:,} B per token = {largest:,} tokens",
                pool=fmt_gib(max(pool, 0)),
                per_token=per_token,
                largest=largest,
            ),
        )
    return None, "none", ""


def requested_budget(case: Case, total: int, util: float) -> int:
    """T × u as the replayed release takes it, by the planner's one function (budget.requested_bytes): ceil
    from 0.14 (v1/worker/gpu_worker.py, 0.14.0: ``math.ceil(total_memory * gpu_memory_utilization)``), the
    plain product before it and on vllm-ascend, whose worker keeps it."""
    try:
        rules = rules_for(case.version or replay_version(case.facts)[0])
    except PlannerError:
        rules = rules_for(None)
    platform = (
        case.device.platform
        if case.device is not None
        else "npu"
        if case.facts.device_type == "NPU"
        else "cuda"
    )
    return requested_bytes(
        total_bytes=total,
        utilization=util,
        use_ceil=situations.platform_requested_uses_ceil(rules=rules, platform=platform),
    )


def budget_short(case: Case) -> bool:
    """The log's error is about the budget (reference §4.4), or it prints no pool: no length helps."""
    return case.facts.error_kind in BUDGET_ERRORS or (case.pool is not None and case.pool <= 0)


def trial_half_length(case: Case, largest: tuple[int | None, TrialSource, str]) -> Trial:
    """Seed step 4's S trial: does some useful, shorter max_model_len start? (``largest``: from
    :func:`largest_fitting`; the rule is app.core.verdicts.shorter_length_starts, the planner's)."""
    length = case.max_model_len
    useful = useful_length(length) if length is not None else 0
    label = (
        Text("A shorter --max-model-len (≥ {useful:,} tokens)", useful=useful)
        if length is not None
        else Text("A shorter --max-model-len")
    )
    return _trial("half_length", label, _half_length(case, largest))


def _half_length(case: Case, largest: tuple[int | None, TrialSource, str]) -> Answer:
    f, length = case.facts, case.max_model_len
    if case.started:
        return True, "log", Text("it already starts at S")
    if budget_short(case):
        return False, "log", Text("the error is about the budget, not the length")
    if f.error_kind in SEQUENCE_ERRORS:
        # the pool's blocks do not depend on S (the page size does not), so no length changes the check
        return False, "log", Text("the error is about --max-num-seqs, not the length")
    largest_len, source, detail = largest
    if largest_len is None and f.error_kind == "max_len_too_long":
        # v1/core/kv_cache_utils.py::_check_enough_kv_cache_memory (0.11.0-0.33.0) raises "No available memory
        # for the cache blocks" when the pool is empty and this error only for a pool that holds some tokens,
        # naming the length it does hold: a shorter S starts, though the quote cut its figures (vllm#53961)
        return (
            True,
            "log",
            Text(
                "vLLM refused this length, not the budget (an empty pool gets another error); the quote cuts the length it estimates"
            ),
        )
    if length is None or f.error_kind in FAILURE_VERDICTS or largest_len is None:
        return None, "none", ""
    return shorter_length_starts(largest_len=largest_len, max_model_len=length), source, detail


def trial_one_sequence(case: Case) -> Trial:
    return _trial("one_sequence", Text("Concurrency 1 (--max-num-seqs 1)"), _one_sequence(case))


def _one_sequence(case: Case) -> Answer:
    if case.started:
        return True, "log", Text("it already starts")
    blocks = case.facts.num_gpu_blocks
    if case.facts.error_kind in SEQUENCE_ERRORS and blocks is not None:
        return blocks >= 1, "log", Text("1 ≤ the {blocks:,} Mamba cache blocks the log prints", blocks=blocks)
    if case.facts.error_kind in FAILURE_VERDICTS:
        return None, "none", Text("the failure is not about the KV pool")
    replay = replay_over_pool(case, max_num_seqs=1)
    if replay is not None:
        detail = Text("replayed over the log's pool") if replay.fits else clip(replay.error or "")
        return replay.fits, "planner", detail
    per_token, _ = case.per_token()
    pool, length = case.pool, case.max_model_len
    if pool is not None and pool <= 0:
        return False, "arithmetic", Text("no KV pool")
    if per_token is not None and pool is not None and length is not None:
        once = Text("vLLM's start-up check is one request of S tokens, so N does not change it")
        return pool >= per_token * length, "arithmetic", once
    return None, "none", ""


def cause_of(case: Case, trials: list[Trial], largest_len: int | None) -> Overall:
    """The verdict by the planner's own rule (app.core.verdicts.classify), from what the log says;
    ``trials``: as configured, the S trial (shown), the N trial; ``largest_len``: the largest length
    that starts (:func:`largest_fitting`)."""
    as_configured, half, one = trials
    reached = None
    if as_configured.starts:  # only from the log (a started log): a prediction gives no verdict (below)
        reached = case.reached_concurrency()
    return classify(
        failure=FAILURE_VERDICTS.get(case.facts.error_kind or ""),
        # a log that stops before the KV lines does not say whether the start fits: the planner's prediction is
        # shown as the trial's, not given as the verdict (EasyR1#69, heldout-2026-12zb: a V0 start cut at the budget)
        starts=as_configured.starts if as_configured.source == "log" else None,
        reached=reached,
        target=case.target,
        # or the S trial read from vLLM's own refusal, its figures cut (_half_length)
        length_refused=case.facts.error_kind == "max_len_above_derived"
        or (largest_len is None and half.starts is True and as_configured.starts is False),
        sequences_refused=case.facts.error_kind in SEQUENCE_ERRORS,
        largest_len=largest_len,
        max_model_len=case.max_model_len,
        budget_short=budget_short(case),
        one_sequence_starts=one.starts,
    )


def step_cause(case: Case, trials: list[Trial], cause: Overall) -> Step:
    info = VERDICTS[cause]
    badge, sentence = Text(info.badge), Text(info.cause)
    f = case.facts
    if f.error_kind in SEQUENCE_ERRORS and f.max_num_seqs is not None and f.num_gpu_blocks is not None:
        sentence = Text(
            "vLLM refused max_num_seqs {seqs:,}: the pool has {blocks:,} Mamba cache blocks, and with full CUDA graphs each decode sequence needs one; up to {blocks:,} sequences start.",
            seqs=f.max_num_seqs,
            blocks=f.num_gpu_blocks,
        )
    rows = TextList(
        SEMICOLON,
        (
            Text(
                "{label}: {outcome}",
                label=t.label,
                outcome=Text("starts") if t.starts else Text("fails") if t.starts is False else "?",
            )
            + (Text(" ({source})", source=Text(TRIAL_SOURCE_WORDS[t.source])) if t.source != "none" else "")
            for t in trials
        ),
    )
    status: StepStatus = "ok" if info.tone == "ok" else "unknown" if info.tone == "unknown" else "fail"
    return Step(
        key="cause",
        title=Text("S-side, N-side or budget"),
        verdict=badge,
        status=status,
        explanation=Text("{sentence} {rows}.", sentence=sentence, rows=rows),
        evidence=evidence_of(f, "error", "estimated_max_model_len", "max_concurrency"),
    )


# --------------------------------------------------------------------------------------------
# step 5: silent fallbacks


def step_fallbacks(case: Case) -> Step:
    f = case.facts
    found: list[str] = []
    checked: list[str] = []
    expected_backend = case.prediction.attention_backend if case.prediction is not None else None
    if f.attention_backend is not None:
        names = {"attention_backend": f.attention_backend, "expected_backend": expected_backend}
        if expected_backend is None:
            checked.append(
                Text("backend {attention_backend} (no expectation: model or device unknown)", **names)
            )
        elif f.attention_backend != expected_backend:
            found.append(
                Text(
                    "attention backend {attention_backend} was used where the planner expects {expected_backend} for this model, device and version",
                    **names,
                )
            )
        else:
            checked.append(Text("backend {attention_backend} as expected", **names))
    effective = f.block_size_forced
    if effective is None and f.num_gpu_blocks and f.kv_tokens and f.error_kind == "max_len_too_long":
        effective = f.kv_tokens // f.num_gpu_blocks  # V0: capacity = blocks × block size
    requested = case.requested_block_size
    if effective is not None and requested is not None and effective != requested:
        found.append(
            Text(
                "block size {requested} was requested but {effective} is in effect",
                requested=requested,
                effective=effective,
            )
        )
    elif f.block_size_forced is not None and requested is None:
        checked.append(
            Text(
                "block size {block_size_forced} set by the backend/platform (none requested)",
                block_size_forced=f.block_size_forced,
            )
        )
    elif effective is not None:
        checked.append(Text("block size {effective}", effective=effective))
    reached = case.reached_concurrency()
    wanted, wanted_what = (case.target, "target") if case.target_given else (f.max_num_seqs, "max_num_seqs")
    if reached is not None and wanted is not None:
        if reached < wanted:
            found.append(
                Text(
                    "concurrency {wanted_what} {wanted:,}, but the pool holds {reached:.2f} requests of {value:,} tokens: the rest wait, with no error",
                    wanted_what=wanted_what,
                    wanted=wanted,
                    reached=reached,
                    value=case.max_model_len or 0,
                )
            )
        else:
            checked.append(
                Text(
                    "concurrency {reached:.2f} ≥ {wanted_what} {wanted:,}",
                    reached=reached,
                    wanted_what=wanted_what,
                    wanted=wanted,
                )
            )
    ev = evidence_of(
        f, "attention_backend", "block_size_forced", "block_size", "max_num_seqs", "max_concurrency"
    )
    if found:
        return Step(
            key="fallbacks",
            title=Text("Silent fallbacks"),
            verdict=Text(
                "{found} silent change{value}", found=len(found), value="s" if len(found) > 1 else ""
            ),
            status="warn",
            explanation=Text("{found}.", found=TextList(SEMICOLON, found))
            + (Text(" Checked: {checked}.", checked=TextList(SEMICOLON, checked)) if checked else ""),
            evidence=ev,
        )
    if checked:
        return Step(
            key="fallbacks",
            title=Text("Silent fallbacks"),
            verdict=Text("no fallback seen"),
            status="ok",
            explanation=Text("No fallback seen: {checked}.", checked=TextList(SEMICOLON, checked)),
            evidence=ev,
        )
    return Step(
        key="fallbacks",
        title=Text("Silent fallbacks"),
        verdict=Text("not checkable"),
        status="unknown",
        explanation=Text("The log names no attention backend, block size or concurrency to compare."),
        evidence=ev,
    )
