"""Every equation the planner shows, with the user's numbers substituted, from one place.

The page's formula card, its block-math card and the ``terms`` of ``/api/estimate`` all come from here,
per layout (one KV group or several: sliding window, chunked, Mamba hybrids) and per vLLM version (how
it prints tokens and concurrency), so what is shown is the arithmetic that produced the value:
``expression`` evaluates to ``value`` (tests/unit/test_equations.py parses and checks every one).

Notation: ``×``, ``÷``, ``+``, ``−``, ``⌊ ⌋`` floor, ``⌈ ⌉`` ceiling; numbers with thousands separators;
a value's unit follows it (``B``, ``GiB``, ``x``, ``%``). ``approximate`` marks a rule of thumb (``≈``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, get_args

import yaml  # type: ignore[import-untyped]  # no types-PyYAML in the lock file
from pydantic import BaseModel, ConfigDict, model_validator

from app.core import extensible_kv, situations
from app.core.budget import CUDA_CONTEXT_BYTES
from app.core.kv import KV_TENSORS_PER_LAYER, kind_spec, kv_heads_per_rank
from app.core.result import ErrorKind, Estimate, KVGroup, Term
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import N_, Msg, Text
from app.core.versions import BudgetStyle, ConcurrencyFormula, NeededFormula, TokensFormula, VersionRules

FORMULAS_FILE = Path(__file__).with_name("formulas.yaml")


class _Wordings(BaseModel):
    """formulas.yaml: each VersionRules formula field's values, worded (every value, no other)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tokens_formula: dict[TokensFormula, str]
    concurrency_formula: dict[ConcurrencyFormula, str]
    needed_formula: dict[NeededFormula, str]
    budget_style: dict[BudgetStyle, str]

    @model_validator(mode="after")
    def _every_value(self) -> _Wordings:
        for name, values in _FIELD_VALUES.items():
            missing = set(get_args(values)) - set(getattr(self, name))
            if missing:
                raise ValueError(f"formulas.yaml {name} lacks {sorted(missing)}")
        return self


_FIELD_VALUES: dict[str, Any] = {
    "tokens_formula": TokensFormula,
    "concurrency_formula": ConcurrencyFormula,
    "needed_formula": NeededFormula,
    "budget_style": BudgetStyle,
}
_Key = TypeVar("_Key", bound=str)


def _worded(table: Mapping[_Key, str]) -> dict[_Key, Msg]:
    return {key: Text(text) for key, text in table.items()}


# How each release computes what it prints (VersionRules fields), worded once: the version notes list
# them and the block math uses them as the generic side of its equations.
_WORDINGS = _Wordings.model_validate(yaml.safe_load(FORMULAS_FILE.read_text(encoding="utf-8")))
TOKENS_FORMULA: dict[TokensFormula, Msg] = _worded(_WORDINGS.tokens_formula)
CONCURRENCY_FORMULA: dict[ConcurrencyFormula, Msg] = _worded(_WORDINGS.concurrency_formula)
NEEDED_FORMULA: dict[NeededFormula, Msg] = _worded(_WORDINGS.needed_formula)
BUDGET_FORMULA: dict[BudgetStyle, Msg] = _worded(_WORDINGS.budget_style)


def message_ids() -> list[tuple[tuple[str, int], str]]:
    """Every wording of formulas.yaml, for scripts/extract_messages.py (where, message id)."""
    where = ("app/core/formulas.yaml", 0)
    tables = (
        _WORDINGS.tokens_formula,
        _WORDINGS.concurrency_formula,
        _WORDINGS.needed_formula,
        _WORDINGS.budget_style,
    )
    return [(where, text) for table in tables for text in table.values()]


@dataclass(frozen=True)
class Equation:
    """``generic`` (symbols, translatable) = ``expression`` (numbers) → ``value`` (with its unit)."""

    key: str
    name: Msg
    generic: Msg
    expression: str
    value: str
    exact: bool = True
    approximate: bool = False

    @property
    def formula(self) -> str:
        sign = " ≈ " if self.approximate else " = "
        return f"{self.generic}{sign}{self.expression}" if self.generic else self.expression

    def term(self) -> Term:
        # built from fields already typed (a Text name, str, str, bool): no validation to repeat
        return Term.model_construct(name=self.name, formula=self.formula, value=self.value, exact=self.exact)


def _int(value: int) -> str:
    return f"{value:,}"


def _gib(num_bytes: float) -> str:
    return f"{num_bytes / GIB:,.2f} GiB"


def _gib_number(num_bytes: float) -> str:
    return f"{num_bytes / GIB:.2f}"


def attention_layers(groups: list[KVGroup]) -> int:
    """Layers of this rank that cache K and V per token (Mamba layers keep a fixed state instead)."""
    return sum(g.num_layers for g in groups if kind_spec(g.kind).attention)


def kv_demand_bytes(*, kv_bytes_per_token: int, max_model_len: int, concurrency: int) -> int:
    """The seed's demand: every one of N sequences at its full length S (no sliding-window saving)."""
    return kv_bytes_per_token * max_model_len * concurrency


def replicas(*, devices: int, ranks: int) -> int:
    """Whole copies of the model a fleet of ``devices`` holds at TP × PP = ``ranks`` each."""
    return devices // ranks


def fleet_concurrency(*, replicas: int, per_replica: float) -> float:
    """Sequences of max_model_len the fleet holds at once: every replica has its own KV pool."""
    return replicas * per_replica


# --- the seed's per-token formula ---------------------------------------------------------------------


def per_token_equation(*, model: ModelSpec, est: Estimate) -> Equation:
    """vLLM's per-device KV bytes per token: the attention layers' page ÷ B, summed. The geometry
    (2 × H_kv × D × b, or the MLA latent × b) is shown when it is what the page holds; otherwise (fp8 MLA
    entries with their scales, V0's aligned MLA entry) the page itself.

    E.g. Llama-3.1-8B (32 layers, 8 KV heads of 128) at TP 1 with a bf16 cache: "2 × 32 × 8 × 128 × 2"
    = 131,072 B per token.
    """
    groups, block_size, kv_bytes_per_token = est.groups, est.block_size, est.kv_bytes_per_token
    kv_dtype_bytes, tensor_parallel_size = est.kv_dtype_bytes_per_element, est.tensor_parallel_size
    layers = attention_layers(groups)
    page = next((g.page_size_bytes for g in groups if kind_spec(g.kind).attention), 0)
    if model.layer_attention is not None or layers * page != kv_bytes_per_token * block_size:
        # layers with their own KV heads / head sizes (Gemma-4 full layers, Nemotron-NAS blocks) or their own
        # extra cache (GLM-5.2's indexers on some layers only): vLLM sums each layer's page ÷ its group's
        # block size (kv.py _layout_per_layer); one product would be false
        return Equation(
            "kv_bytes_per_token",
            Text("KV bytes per token per device (summed over layers that differ)"),
            Text("Σ over attention layers of page ÷ B"),
            _int(kv_bytes_per_token),
            f"{_int(kv_bytes_per_token)} B",
        )
    per_layer = page // block_size if block_size else 0
    name = Text("KV bytes per token per device")
    if model.mla is not None and per_layer == model.mla.latent_size * kv_dtype_bytes:
        return Equation(
            "kv_bytes_per_token",
            Text("KV bytes per token (MLA latent, replicated on every TP rank)"),
            "L × (kv_lora_rank + rope) × b",
            f"{layers} × {model.mla.latent_size} × {kv_dtype_bytes}",
            f"{_int(kv_bytes_per_token)} B",
        )
    if model.mla is None:
        heads = kv_heads_per_rank(
            total_kv_heads=model.num_kv_heads, tensor_parallel_size=tensor_parallel_size
        )
        if per_layer == KV_TENSORS_PER_LAYER * heads * model.head_size * kv_dtype_bytes:
            return Equation(
                "kv_bytes_per_token",
                name,
                "2 × L × H_kv per device × D × b",
                f"2 × {layers} × {heads} × {model.head_size} × {kv_dtype_bytes}",
                f"{_int(kv_bytes_per_token)} B",
            )
    return Equation(
        "kv_bytes_per_token",
        name,
        Text("L × page per layer ÷ B"),
        f"{layers} × {_int(page)} ÷ {block_size}",
        f"{_int(kv_bytes_per_token)} B",
    )


def demand_equation(*, kv_bytes_per_token: int, max_model_len: int, concurrency: int) -> Equation:
    demand = kv_demand_bytes(
        kv_bytes_per_token=kv_bytes_per_token, max_model_len=max_model_len, concurrency=concurrency
    )
    return Equation(
        "demand",
        Text("Demand at S = max_model_len, N = target concurrency"),
        Text("per-token × S × N ÷ GiB"),
        f"{_int(kv_bytes_per_token)} × {_int(max_model_len)} × {concurrency} ÷ {_int(GIB)}",
        _gib(demand),
    )


@dataclass(frozen=True)
class SeedFormula:
    """The seed's formula 2 × L × (H_kv/TP) × D × S × b × N over the whole model (per device)."""

    generic: str
    expression: str
    bytes: int
    layers: int
    heads_text: str
    head_size: int


def seed_formula(*, model: ModelSpec, est: Estimate, concurrency: int, kv_layers: int) -> SeedFormula:
    tp = est.tensor_parallel_size
    s, b, n = est.max_model_len, est.kv_dtype_bytes_per_element, concurrency
    if model.mla is not None:
        # MLA caches one latent vector per token and layer (no separate K and V), not split by TP
        size = model.mla.latent_size
        return SeedFormula(
            "L × (kv_lora_rank + rope) × S × b × N",
            f"{kv_layers} × {size} × {_int(s)} × {b} × {n}",
            kv_layers * size * s * b * n,
            kv_layers,
            "1 (MLA latent)",
            size,
        )
    heads = kv_heads_per_rank(total_kv_heads=model.num_kv_heads, tensor_parallel_size=tp)
    # the per-device head count: H_kv ÷ TP, or 1 when TP exceeds H_kv (vLLM replicates the heads)
    return SeedFormula(
        "2 × L × H_kv per device × D × S × b × N",
        f"2 × {kv_layers} × {heads} × {model.head_size} × {_int(s)} × {b} × {n}",
        KV_TENSORS_PER_LAYER * kv_layers * heads * model.head_size * s * b * n,
        kv_layers,
        str(model.num_kv_heads),
        model.head_size,
    )


# --- the budget ---------------------------------------------------------------------------------------


def pool_equation(
    est: Estimate,
    *,
    kv_cache_memory_flag: bool,
    divisor: int = 1,
    cleared_bytes: int = 0,
    extensible: ExtensibleHeadroom | None = None,
) -> Equation:
    """The KV pool as the budget leaves it: T × u − weights − activation − non-torch (− CUDA graphs where
    the release budgets them), or the --kv-cache-memory-bytes the user set. T × u is shown as the product:
    vLLM rounds it up to a byte from 0.14 on, within the shown rounding.

    E.g. Llama-3.1-8B on one H100 (79.10 GiB), 0.33.0 defaults, S 8,192: "79.10 × 0.92 − 14.96 − 1.88 −
    0.25 − 0.91" = 54.77 GiB (weights, activation peak, non-torch, CUDA graphs).
    """
    name = Text("KV pool (available KV cache memory)")
    kv_cache_bytes, cuda_graph_bytes = est.kv_cache_bytes, est.cuda_graph_bytes
    if kv_cache_memory_flag:
        return Equation(
            "kv_pool",
            name,
            "--kv-cache-memory-bytes ÷ GiB",
            f"{_int(kv_cache_bytes)} ÷ {_int(GIB)}",
            _gib(kv_cache_bytes),
        )
    if extensible is not None:
        return _extensible_pool_equation(est, name=name, headroom=extensible)
    graphs = f" − {_gib_number(cuda_graph_bytes)}" if est.cuda_graph_budgeted and cuda_graph_bytes else ""
    generic = "T × u − weights − activation − non-torch" + (" − CUDA graphs" if graphs else "")
    worked = (
        f"{_gib_number(est.device_total_bytes)} × {est.gpu_memory_utilization:g} − {_gib_number(est.weights_bytes)} − "
        f"{_gib_number(est.activation_peak_bytes)} − {_gib_number(est.non_torch_bytes)}{graphs}"
    )
    if cleared_bytes:  # the 310P worker's startup-held non-torch memory (Estimate.held_at_start_bytes)
        generic, worked = f"{generic} − held at start", f"{worked} − {_gib_number(cleared_bytes)}"
    if divisor > 1:  # vllm-ascend's 310P worker halves its pool (situations.pool_divisor)
        generic, worked = f"({generic}) ÷ {divisor}", f"({worked}) ÷ {divisor}"
    return Equation(
        "kv_pool",
        name,
        generic,
        worked,
        _gib(kv_cache_bytes),
        exact=False,
    )


@dataclass(frozen=True)
class ExtensibleHeadroom:
    """What 0.34.0's extensible KV cache sizes its pool against besides T × u (extensible_kv.pool_bytes)."""

    free_at_start_bytes: int  # situations.free_at_start_bytes
    others_bytes: int  # what other processes hold (situations.used_by_others_bytes)
    margin_bytes: int  # extensible_kv.margin_bytes


def _extensible_pool_equation(est: Estimate, *, name: Msg, headroom: ExtensibleHeadroom) -> Equation:
    """0.34.0 measure_kv_cache_bytes, its binding term written out: the requested budget T × u less everything
    resident but the cache (weights, non-torch, CUDA graphs) and the activation peak, or, when smaller, the free
    memory at start-up less the same and the margin (unset u is 1.0, so this one binds on an idle device).

    E.g. dense() on an H100 at 0.34.0 defaults: "79.10 − 0.50 − 14.96 − 0.25 − 0.91 − 1.41 − 1.88" = 59.18 GiB
    (tests/unit/test_release_0_34.py: 63,547,668,726 B); shown as T × u − … it read 61.10 GiB."""
    weights, non_torch, graphs = est.weights_bytes, est.non_torch_bytes, est.cuda_graph_bytes
    parts = f"{_gib_number(weights)} − {_gib_number(non_torch)} − {_gib_number(graphs)}"
    peak = _gib_number(est.activation_peak_bytes)
    if headroom.free_at_start_bytes - headroom.margin_bytes >= est.budget_bytes:  # the requested budget binds
        generic = "T × u − weights − non-torch − CUDA graphs − activation"
        worked = f"{_gib_number(est.device_total_bytes)} × {est.gpu_memory_utilization:g} − {parts} − {peak}"
    else:
        others = f" − {_gib_number(headroom.others_bytes)}" if headroom.others_bytes else ""
        generic = (
            "T − CUDA context"
            + (" − other processes" if others else "")
            + " − weights − non-torch − CUDA graphs − margin − activation"
        )
        worked = (
            f"{_gib_number(est.device_total_bytes)} − {_gib_number(CUDA_CONTEXT_BYTES)}{others} − {parts} − "
            f"{_gib_number(headroom.margin_bytes)} − {peak}"
        )
    if est.kv_cache_bytes == 0:  # measure_kv_cache_bytes returns at least 0
        generic, worked = f"max(0, {generic})", f"max(0, {worked})"
    return Equation("kv_pool", name, generic, worked, _gib(est.kv_cache_bytes), exact=False)


# --- vLLM's block arithmetic, per layout and version --------------------------------------------------


def _sum_of(parts: tuple[str, ...]) -> str:
    """``a + a + a + b`` written ``(3 × a + b)``: groups of one kind repeat the same term."""
    runs: list[tuple[str, int]] = []
    for part in parts:
        if runs and runs[-1][0] == part:
            runs[-1] = (part, runs[-1][1] + 1)
        else:
            runs.append((part, 1))
    text = " + ".join(part if n == 1 else f"{n} × {part}" for part, n in runs)
    return f"({text})" if len(parts) > 1 else text


def _layers_per_block(est: Estimate) -> int:
    page = est.groups[0].page_size_bytes if est.groups else 0
    return est.bytes_per_block // page if page else 0


# what one request needs in each kind of group (kv.blocks_per_request, reference §3.3)
_GROUP_BLOCKS_FORMULA = {
    "full": N_("⌈S ÷ B⌉"),
    "mla": N_("⌈S ÷ B⌉"),
    "sliding": N_("⌈min(window − 1 + tokens in flight, S) ÷ B⌉ + 1"),
    "chunked": N_("⌈min(chunk + tokens in flight, S) ÷ B⌉"),
    "mamba": N_("one state block (and its prefix-caching checkpoint blocks)"),
}


def _group_blocks(est: Estimate) -> list[Equation]:
    """A hybrid request's blocks, group by group: the sum the concurrency divides by."""
    out: list[Equation] = []
    s = est.max_model_len
    for i, g in enumerate(est.groups, start=1):
        n = g.blocks_per_request
        full = g.kind in ("full", "mla") and -(-s // g.block_size) == n
        out.append(
            Equation(
                f"blocks_per_request_{i}",
                Text(
                    "blocks per request, group {i} ({kind}, {layers} layers)",
                    i=i,
                    kind=g.kind,
                    layers=g.num_layers,
                ),
                Text(_GROUP_BLOCKS_FORMULA.get(g.kind, N_("this group's blocks for one request"))),
                f"⌈{_int(s)} ÷ {g.block_size}⌉" if full else _int(n),
                _int(n),
            )
        )
    return out


def block_equations(est: Estimate, rules: VersionRules) -> list[Equation]:
    """Page → block → num_blocks → tokens → concurrency, as this version computes them for this layout.

    With several KV groups (sliding + full, attention + Mamba) a block holds one page of as many layers
    as the largest group shares, every group draws blocks from the one pool, and a request needs the sum
    of its groups' blocks (sliding groups only a window's worth)."""
    if not est.groups or est.bytes_per_block <= 0:
        return []
    b, s = est.block_size, est.max_model_len
    page = est.groups[0].page_size_bytes
    per_layer_block = _layers_per_block(est)
    pool = max(0, est.kv_cache_bytes)
    out: list[Equation] = []
    attn = next((g for g in est.groups if kind_spec(g.kind).attention), None)
    if attn is not None and page % b == 0:
        per_token_layer = page // b
        out.append(
            Equation(
                "page",
                Text("page per layer"),
                Text("KV bytes per token and layer × B"),
                f"{_int(per_token_layer)} × {b}",
                f"{_int(page)} B",
            )
        )
    several = len(est.groups) > 1
    if page * per_layer_block == est.bytes_per_block:
        block_formula: Msg = Text("page × layers per group") if several else Text("page × layers")
        block_expression = f"{_int(page)} × {per_layer_block}"
    else:  # layers whose pages differ within a group (GLM-5.2's indexer layers): their pages summed
        block_formula, block_expression = Text("Σ over layers of page"), _int(est.bytes_per_block)
    out.append(
        Equation(
            "bytes_per_block",
            Text("bytes per block"),
            block_formula,
            block_expression,
            f"{_int(est.bytes_per_block)} B",
        )
    )
    out.append(_extensible_blocks(est, pool, page) if est.extensible_kv_cache else _floor_blocks(est, pool))
    if several:
        out.extend(_group_blocks(est))
    conc = _concurrency_equation(est, rules, page)
    tokens = _tokens_equation(est, rules, page, conc)
    out += [tokens, conc]
    out.append(
        Equation(
            "tail_waste",
            Text("tail waste"),
            "B ÷ (2S)",
            f"{b} ÷ (2 × {_int(s)}) × 100",
            f"{b / (2 * s) * 100:.2f}%",
            approximate=True,
        )
    )
    return out


def _floor_blocks(est: Estimate, pool: int) -> Equation:
    """E.g. ⌊60 GiB ÷ 2,097,152 B⌋ = 30,720 blocks."""
    return Equation(
        "num_blocks",
        Text("num_blocks"),
        Text("⌊pool ÷ bytes per block⌋"),
        f"⌊{_int(pool)} ÷ {_int(est.bytes_per_block)}⌋",
        _int(est.num_gpu_blocks),
    )


def _extensible_blocks(est: Estimate, pool: int, page: int) -> Equation:
    """0.34.0's extensible cache maps each layer segment in whole granules (extensible_kv.extensible_num_blocks_for):
    with one page size, ⌊⌊pool ÷ (segments × 2 MiB)⌋ × 2 MiB ÷ page⌋, e.g. Llama-3.1-8B on an H100
    ⌊⌊63,547,668,726 ÷ (32 × 2,097,152)⌋ × 2,097,152 ÷ 65,536⌋ = 30,272; with pages that differ, the count the
    search lands on."""
    granule = extensible_kv.VMM_GRANULE_BYTES
    uniform = (
        page > 0 and est.bytes_per_block % page == 0 and all(g.page_size_bytes == page for g in est.groups)
    )
    fit = (
        extensible_kv.uniform_fit(
            available_bytes=pool, segments=est.bytes_per_block // page, stride_bytes=page
        )
        if uniform
        else None
    )
    if fit is not None and fit.blocks == est.num_gpu_blocks:
        return Equation(
            "num_blocks",
            Text("num_blocks"),
            Text("⌊⌊pool ÷ (layer segments × 2 MiB)⌋ × 2 MiB ÷ page⌋"),
            f"⌊⌊{_int(pool)} ÷ ({fit.segments} × {_int(granule)})⌋ × {_int(granule)} ÷ {_int(page)}⌋",
            _int(est.num_gpu_blocks),
        )
    return Equation(
        "num_blocks",
        Text("num_blocks"),
        Text("most blocks whose layer segments, each in whole 2 MiB granules, fit the pool"),
        _int(est.num_gpu_blocks),
        _int(est.num_gpu_blocks),
    )


def _concurrency_equation(est: Estimate, rules: VersionRules, page: int) -> Equation:
    """Maximum concurrency as the release divides: e.g. 30,720 blocks ÷ 512 blocks a request = 60.00x."""
    blocks = _int(est.num_gpu_blocks)
    if rules.concurrency_formula == "blocks_x_block_size_div_len":
        expression = f"{blocks} × {est.block_size} ÷ {_int(est.max_model_len)}"
    elif rules.concurrency_formula == "one_cdiv_over_sum":
        weighted = _sum_of(
            tuple(f"{_int(g.blocks_per_request)} × {_int(g.page_size_bytes)}" for g in est.groups)
        )
        expression = f"{blocks} ÷ ⌈{weighted} ÷ {_int(page)}⌉"
    else:
        expression = f"{blocks} ÷ {_sum_of(tuple(_int(g.blocks_per_request) for g in est.groups))}"
    return Equation(
        "max_concurrency",
        Text("max concurrency"),
        CONCURRENCY_FORMULA[rules.concurrency_formula],
        expression,
        f"{est.max_concurrency:.2f}x",
    )


def _tokens_equation(est: Estimate, rules: VersionRules, page: int, conc: Equation) -> Equation:
    """The "KV cache size" tokens as the release computes them: e.g. int(60.0 × 8,192) = 491,520."""
    b, s = est.block_size, est.max_model_len
    formula = TOKENS_FORMULA["blocks_x_block_size"]  # V0 prints no tokens line: the pool's own size
    if rules.tokens_formula in ("blocks_div_groups", "concurrency_x_len"):
        formula = TOKENS_FORMULA[rules.tokens_formula]
    if rules.tokens_formula == "blocks_div_groups":
        expression = f"⌊{_int(est.num_gpu_blocks)} ÷ {len(est.groups)}⌋ × {b}"
    elif rules.tokens_formula == "concurrency_x_len":
        # vLLM prints int(concurrency × S) with the unrounded concurrency, in floating point: when the
        # exact product is a whole number the float one can fall just below it (53,736 ÷ 6,250 ×
        # 100,000 = 859,776 exactly, 859,775.99… in float64, printed 859,775), so the float is shown
        per_group = [g.blocks_per_request for g in est.groups]
        if rules.concurrency_formula == "one_cdiv_over_sum":
            weight = sum(n * g.page_size_bytes for n, g in zip(per_group, est.groups, strict=True))
            denominator = -(-weight // page)
        else:
            denominator = sum(per_group)
        exact = est.num_gpu_blocks * s // denominator if denominator else 0
        expression = (
            f"⌊{conc.expression} × {_int(s)}⌋"
            if exact == est.kv_tokens or not denominator
            else f"⌊{est.num_gpu_blocks / denominator:.17g} × {_int(s)}⌋"
        )
    else:
        expression = f"{_int(est.num_gpu_blocks)} × {b}"
    return Equation("kv_tokens", Text("tokens"), formula, expression, _int(est.kv_tokens))


def working_terms(
    *,
    model: ModelSpec,
    serve: ServeConfig,
    est: Estimate,
    rules: VersionRules,
    target: int,
    device: DeviceSpec,
) -> list[Term]:
    """The working, with the user's numbers substituted (seed formula, then vLLM's block math)."""
    per_token = per_token_equation(model=model, est=est)
    demand = demand_equation(
        kv_bytes_per_token=est.kv_bytes_per_token, max_model_len=est.max_model_len, concurrency=target
    )
    pool = pool_equation(
        est,
        kv_cache_memory_flag=situations.kv_bytes_given(rules=rules, device=device, serve=serve) is not None,
        divisor=situations.pool_divisor(rules=rules, device=device),
        cleared_bytes=est.held_at_start_bytes,  # computed once, by the stage's budget (estimate.stages)
        extensible=_extensible_headroom(est, rules=rules, device=device, serve=serve),
    )
    if est.error_kind == ErrorKind.LOAD_OOM:
        return [per_token.term(), demand.term()]  # vLLM dies loading the weights: no pool, no blocks
    block = [eq for eq in block_equations(est, rules) if not eq.approximate]
    return [eq.term() for eq in (per_token, demand, pool, *block)]


def _extensible_headroom(
    est: Estimate, *, rules: VersionRules, device: DeviceSpec, serve: ServeConfig
) -> ExtensibleHeadroom | None:
    if not extensible_kv.applies(rules=rules, device=device, serve=serve):
        return None
    return ExtensibleHeadroom(
        free_at_start_bytes=situations.free_at_start_bytes(device=device, serve=serve),
        others_bytes=situations.used_by_others_bytes(serve),
        margin_bytes=extensible_kv.margin_bytes(
            platform=device.platform, transient_peak_bytes=est.activation_peak_bytes
        ),
    )
