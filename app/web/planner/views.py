"""Typed view models: everything a template shows, decided and formatted in Python.

Templates loop and print; every number, comparison and verdict is computed here from the
core's Estimate, so the page, the Markdown copy and the tests read the same values.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

from markupsafe import Markup

from app.core import equations as E
from app.core.command import render_serve_command
from app.core.errors import PlannerError
from app.core.kv import attention_layer_count, kind_spec
from app.core.perf.bench_run import bench_sets_clients
from app.core.perf.schedule import Workload
from app.core.plan import QUANTIZATION_FLAGS
from app.core.recommend import utilization_ceiling
from app.core.result import ErrorKind, Estimate, Range
from app.core.specs import ModelSpec
from app.core.text import N_, Plural, Text
from app.core.versions import rules_for
from app.web.format import Figure, gib, gib_range, human_tokens, integer, percent
from app.web.i18n import _, t, tr, tr_list
from app.web.inputs.options import TP_OPTIONS, Choices, Option, choices
from app.web.inputs.params import CARD_DTYPES, PlannerParams, clients_of, workload_of
from app.web.inputs.problems import Problem
from app.web.inputs.resolve import MODEL_PLACEHOLDER, Resolved
from app.web.measured_runs import bench_of
from app.web.planner import svg
from app.web.verdict import VerdictView, holds_no_kv, verdict_view
from app.web.version_notes import VersionNote, version_notes

SLIDER_MIN_TOKENS = 256
SLIDER_MAX_TOKENS = 4 * 2**20  # 4M tokens, beyond every catalogued model's window
UTILIZATION_STEP = 0.01  # suggestions are rounded up to whole percent
# What a catalog entry's confidence means (model_specs/*.yaml ``confidence``; scripts/gen_model_specs.py)
CONFIDENCE_TEXT = {
    "verified": N_("verified: its config.json matches the published file"),
    "likely": N_("likely: its config.json comes from the public model card, not checked field by field"),
    "recalled": N_(
        "recalled: its config.json was not read from the published file but filled in from a related "
        "model's verified config; paste the real config.json to be sure"
    ),
}


@dataclass(frozen=True)
class PartitionRow:
    key: str
    label: str
    gib: str
    percent: str
    exact: bool
    note: str = ""
    band: str = ""  # "±0.13 GiB" for a modelled row
    range_text: str = ""  # "1.75 – 2.01 GiB" for a modelled row


@dataclass(frozen=True)
class BorderlineView:
    """The start-up verdict flips inside the uncertainty range: what margin makes it safe."""

    kv_range: str
    safe_len: str  # "" when no length starts at the low end
    raise_util_by: str  # "" when raising utilization cannot cover the band
    raise_util_to: str


@dataclass(frozen=True)
class FormulaView:
    generic: str
    substituted: str
    result: str
    symbols: tuple[Figure, ...]
    exact_line: str
    comparison: str
    note: str


@dataclass(frozen=True)
class StopSlider:
    """A range input over chosen stops (a log scale): the stops, and the one the value stands at."""

    stops: tuple[int, ...]
    index: int

    @property
    def last(self) -> int:
        """The range input's max: its stops are indices 0 … last."""
        return len(self.stops) - 1


def stop_slider(stops: tuple[int, ...], value: int) -> StopSlider:
    """``stops`` with the index nearest ``value``: (256, 384, 512), 400 -> index 1."""
    return StopSlider(stops, nearest_index(stops, value))


@dataclass(frozen=True)
class FormState:
    """What the inputs show; empty strings where vLLM's default applies (the placeholder shows it)."""

    values: dict[str, str]
    placeholders: dict[str, str]
    length: StopSlider  # max_model_len: 2^k and 1.5 x 2^k, plus the model's own lengths
    util_slider: str
    choices: Choices
    tp_sizes: tuple[Option, ...]
    open_config: bool
    open_card: bool
    # the Speed workload (issue 14): the clients' slider and the --quantization choices
    concurrency: StopSlider
    quantizations: tuple[Option, ...] = ()
    card_dtypes: tuple[Option, ...] = ()


@dataclass(frozen=True)
class ResultView:
    verdict: VerdictView
    partition: tuple[PartitionRow, ...]
    bar_svg: Markup
    chart_svg: Markup
    formula: FormulaView
    block_math: tuple[Figure, ...]
    log_title: str
    log_lines: tuple[str, ...]
    warnings: tuple[str, ...]
    terms: tuple[Figure, ...]
    command: str
    multi_node_hint: str
    fleet: str
    model_note: str
    markdown: str
    curve_rows: tuple[tuple[str, str], ...]
    estimate: Estimate
    headline: tuple[Figure, ...]
    borderline: BorderlineView | None
    version_notes: tuple[VersionNote, ...]
    compare_link: str
    compare_versions: str  # its a=…&b=… (a fragment's link is completed from #planner-state)
    version_line: str = ""  # the doctor builds its own ResultView without one
    numbers_note: str = ""  # what the headline numbers assume when vLLM would refuse before sizing them
    deploy_tabs: tuple[tuple[str, str], ...] = ()  # (target, label) beside the command


# The command card's tabs: the same configuration as the deployment targets of GET /api/deploy.
DEPLOY_TABS = (
    ("docker", Text("docker run")),
    ("compose", Text("compose")),
    ("kubernetes", Text("Kubernetes")),
    ("helm", Text("Helm (production-stack)")),
)


def version_line(est: Estimate) -> str:
    """ "vLLM 0.23.0 (rules of 0.21.0)": the release the user named and the one whose rules planned it."""
    if est.vllm_version == est.vllm_rules_version:
        return f"vLLM {est.vllm_version}"
    return t(
        "vLLM {requested} (rules of {release})", requested=est.vllm_version, release=est.vllm_rules_version
    )


@dataclass(frozen=True)
class PlannerView:
    params: PlannerParams
    query: str
    permalink: str
    problems: tuple[Problem, ...]
    form: FormState
    result: ResultView | None
    error: Problem | None
    command_text: str = ""
    command_error: Problem | None = None
    command_problems: tuple[Problem, ...] = ()  # a refused paste: every problem, where the verdict goes
    notices: tuple[str, ...] = field(default=())
    # a slider move's fragment: closed <details> bodies are fetched on opening (/part/<name>)
    lazy: bool = False

    @property
    def state_tag(self) -> str:
        """A short tag of these inputs: the recommendation echoes it on the verdict box's list, so a
        late answer for inputs the page no longer shows is not swapped in (static/app.js)."""
        return f"{zlib.crc32(self.query.encode()):08x}"


def slider_lengths(extra: tuple[int, ...]) -> tuple[int, ...]:
    """Nice max_model_len stops for the log slider: 2^k and 1.5 x 2^k, plus the model's own values."""
    stops: set[int] = set()
    k = SLIDER_MIN_TOKENS
    while k <= SLIDER_MAX_TOKENS:
        stops.update((k, k * 3 // 2))
        k *= 2
    stops.update(v for v in extra if SLIDER_MIN_TOKENS <= v <= SLIDER_MAX_TOKENS)
    return tuple(sorted(s for s in stops if s <= SLIDER_MAX_TOKENS))


def nearest_index(values: tuple[int, ...], target: int) -> int:
    return min(range(len(values)), key=lambda i: abs(values[i] - target))


def _blank_workload(params: PlannerParams, max_model_len: int) -> tuple[Workload | None, int, bool]:
    """The Speed workload the form's blank fields stand for (None: the inputs cannot give one; the
    Speed section then names the field), its clients (the same rule either way) and whether an
    open-loop benchmark decides them instead (bench_run.bench_sets_clients: known after its run)."""
    try:
        bench = bench_of(params)
    except PlannerError:
        bench = None  # the Speed section names the bad argument
    from_bench = bench_sets_clients(concurrency=params.concurrency, bench=bench)
    try:
        workload = workload_of(params, max_model_len=max_model_len, bench=bench)[0]
    except PlannerError:
        return None, clients_of(params, bench=bench), from_bench
    return workload, workload.concurrency, from_bench


def form_state(
    params: PlannerParams, *, derived_len: int, effective_len: int, default_util: float
) -> FormState:
    values = {
        name: ""
        if value is None
        else ("true" if value is True else "false" if value is False else str(value))
        for name, value in params.model_dump().items()
    }
    # a target N not given shows blank with the N the capacity check uses as its placeholder (a "1" in the box
    # read as typed while the Speed section ran its own 16 clients, and the form then posted it as given)
    if "target_concurrency" not in params.model_fields_set:
        values["target_concurrency"] = ""
    # the clients the Speed section runs (blank: the benchmark's --max-concurrency, else the target N,
    # else 16): the box's placeholder and the slider's position say the same number
    workload, clients, from_bench = _blank_workload(params, effective_len)
    return FormState(
        values=values,
        placeholders={
            "devices": str(params.tensor_parallel_size * params.pipeline_parallel_size),
            "max_model_len": str(effective_len),  # what a blank field serves (LongRoPE: the original)
            "gpu_memory_utilization": f"{default_util:g}",
            "target_concurrency": str(params.target_concurrency),
            # an open-loop benchmark's clients are its Little's-law count, known after its run
            "concurrency": tr(t("from the benchmark")) if from_bench else str(clients),
            # what a blank length serves: the benchmark's mean request (else 1,024), shortened to fit
            "input_tokens": str(workload.input_tokens) if workload else "",
            "output_tokens": str(workload.output_tokens) if workload else "",
        },
        length=stop_slider(slider_lengths((derived_len, effective_len)), effective_len),
        util_slider=f"{params.gpu_memory_utilization or default_util:g}",
        choices=choices(params.vllm_version),
        tp_sizes=TP_OPTIONS,
        open_config=bool(params.config_json),
        open_card=params.card_started,
        concurrency=stop_slider(concurrency_stops(clients), clients),
        quantizations=tuple(Option(q, q) for q in sorted(QUANTIZATION_FLAGS)),
        card_dtypes=tuple(Option(d, d) for d in CARD_DTYPES),
    )


CONCURRENCY_STOPS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)  # the Speed slider (log2)


def concurrency_stops(value: int) -> tuple[int, ...]:
    """The slider's stops, with the current value among them (a typed 48 gets its own stop)."""
    return tuple(sorted({*CONCURRENCY_STOPS, value}))


def kv_layer_count(model: ModelSpec) -> int:
    return attention_layer_count(list(model.layer_kinds))


def formula_view(model: ModelSpec, est: Estimate, target: int) -> FormulaView:
    """The seed's per-device formula with this request's numbers substituted (app.core.equations)."""
    layers = kv_layer_count(model)
    tp = est.tensor_parallel_size
    seed = E.seed_formula(model=model, est=est, concurrency=target, kv_layers=layers)
    exact_need = E.kv_demand_bytes(
        kv_bytes_per_token=est.kv_bytes_per_token, max_model_len=est.max_model_len, concurrency=target
    )
    notes = []
    if not all(kind_spec(kind).whole_sequence for kind in set(model.layer_kinds)):  # per kind, not layer
        notes.append(
            t(
                "Sliding-window, chunked and recurrent layers cache less than S tokens each, so vLLM's exact figure is below the formula's."
            )
        )
    if est.pipeline_parallel_size > 1:
        notes.append(t("With pipeline parallelism each device holds only its stage's layers."))
    if model.mla is None and tp > model.num_kv_heads:
        notes.append(
            t(
                "TP={tp} exceeds {heads} KV heads: vLLM replicates heads, one per device.",
                tp=tp,
                heads=model.num_kv_heads,
            )
        )
    pool = est.kv_cache_bytes
    verb = "≤" if exact_need <= pool else ">"
    heads_text = t("1 (MLA latent)") if model.mla is not None else seed.heads_text
    return FormulaView(
        generic=seed.generic,
        substituted=seed.expression,
        result=f"{integer(seed.bytes)} B = {gib(seed.bytes)}",
        symbols=(
            Figure("L", t("attention layers"), str(layers)),
            Figure("H_kv", t("KV heads per layer"), heads_text),
            Figure("D", t("head size"), str(seed.head_size)),
            Figure("S", t("tokens per sequence (max_model_len)"), integer(est.max_model_len)),
            Figure(
                "b", t("bytes per KV element"), f"{est.kv_dtype_bytes_per_element} ({kv_dtype_label(est)})"
            ),
            Figure("N", t("concurrent sequences (target)"), str(target)),
            Figure("TP", "tensor_parallel_size", str(tp)),
        ),
        exact_line=(
            t(
                "vLLM's per-device KV per token for this model: {kv_bytes_per_token} B; × S × N = {exact_need}",
                kv_bytes_per_token=integer(est.kv_bytes_per_token),
                exact_need=gib(exact_need),
            )
        ),
        comparison=t("{exact_need}: no KV pool ({why})", exact_need=gib(exact_need), why=never_sized_why(est))
        if no_pool(est)
        else t("{exact_need} {verb} KV pool {pool}", exact_need=gib(exact_need), verb=verb, pool=gib(pool)),
        note=" ".join(notes),
    )


def band_of(r: Range) -> str:
    """The half-width of a band as "±0.13 GiB" (the high side: the low side is clipped at zero)."""
    return f"±{gib(r.high - r.expected)}"


# why no KV pool is ever computed or printed: vLLM dies loading the weights, or refuses before loading them
# (the start-up free-memory check, 0.10.2+ v1/worker/utils.py request_memory)
NEVER_SIZED_WHY = {
    ErrorKind.LOAD_OOM: N_("the weights do not fit the device"),
    ErrorKind.STARTUP_FREE_MEMORY: N_("vLLM refuses to start: other processes hold the memory it asks for"),
}


def never_sized(est: Estimate) -> bool:
    """vLLM dies loading the weights (or refuses before): no KV pool is ever computed or printed."""
    return est.error_kind in NEVER_SIZED_WHY


def never_sized_why(est: Estimate) -> str:
    why = NEVER_SIZED_WHY.get(est.error_kind) if est.error_kind is not None else None
    if why is None and holds_no_kv(est):
        return t("no layer keeps a KV cache")
    return t(why) if why is not None else ""


def no_pool(est: Estimate) -> bool:
    """No KV pool to show: never sized (the weights do not load), or none at all (no KV layer)."""
    return never_sized(est) or holds_no_kv(est)


# The partition's two platform-worded rows: what a device's non-torch memory holds and what its graphs are
# called (vLLM's CUDA graphs; ROCm's HIP graphs through the same torch API; vllm-ascend's ACL graphs with HCCL
# buffers, ../shared/reference/ascend-rocm-notes-2026-12.md). Other platforms get the neutral words.
PLATFORM_ROW_LABELS: dict[str, tuple[str, str]] = {
    "cuda": (N_("Non-torch (NCCL buffers, cuBLAS workspaces)"), N_("CUDA graphs")),
    "rocm": (N_("Non-torch (RCCL buffers, hipBLAS workspaces)"), N_("HIP graphs")),
    "npu": (N_("Non-torch (HCCL buffers, CANN workspaces)"), N_("ACL graphs")),
}
OTHER_ROW_LABELS = (N_("Non-torch (collective buffers, library workspaces)"), N_("Graphs"))


def partition_rows(
    est: Estimate, *, quantized: bool = False, platform: str = "cuda"
) -> tuple[tuple[PartitionRow, ...], list[svg.BarSegment], int]:
    """Rows for the table, segments for the bar and the overrun (bytes over budget, >= 0).

    Exact rows are vLLM's own arithmetic; modelled rows are what vLLM measures at start-up and carry
    their band from ``Estimate.ranges`` (weights only when quantized: scales the count may miss).
    """
    total = est.device_total_bytes
    kv = 0 if no_pool(est) else max(0, est.kv_cache_bytes)
    graphs_in_slack = 0 if est.cuda_graph_budgeted else est.cuda_graph_bytes
    unused = max(0, est.unused_bytes - graphs_in_slack)
    unused_label = t("Unused by design (1 − utilization)")
    if holds_no_kv(est):
        # nothing claims the rest of the budget: what the device holds beyond the weights, the activations,
        # non-torch memory and the graphs stays free
        taken = est.weights_bytes + est.activation_peak_bytes + est.non_torch_bytes + est.cuda_graph_bytes
        unused = max(0, total - taken)
        unused_label = t("Unused (no KV cache claims the rest)")
    non_torch_label, graphs_label = PLATFORM_ROW_LABELS.get(platform, OTHER_ROW_LABELS)
    graph_note = (
        t("inside the budget") if est.cuda_graph_budgeted else t("taken from the 1 − utilization slack")
    )
    items = [
        ("weights", _("Weights"), est.weights_bytes, not quantized, ""),
        ("activation", t("Activation & workspace (peak)"), est.activation_peak_bytes, False, ""),
        ("non-torch", _(non_torch_label), est.non_torch_bytes, False, ""),
        ("graphs", _(graphs_label), est.cuda_graph_bytes, False, graph_note),
        (
            "kv",
            t("KV cache pool"),
            est.kv_cache_bytes,
            False,
            t("over budget") if est.kv_cache_bytes < 0 else "",
        ),
        ("unused", unused_label, unused, True, ""),
    ]
    range_key = {
        "weights": "weights_bytes",
        "activation": "activation_peak_bytes",
        "non-torch": "non_torch_bytes",
        "graphs": "cuda_graph_bytes",
        "kv": "kv_cache_bytes",
    }

    def band_texts(key: str, exact: bool) -> tuple[str, str]:
        r = est.ranges.get(range_key.get(key, ""))
        if exact or r is None:
            return "", ""
        return band_of(r), gib_range(r)

    rows = tuple(
        PartitionRow(key, label, gib(num), percent(num / total), exact, note, *band_texts(key, exact))
        if not (key == "kv" and no_pool(est))
        else PartitionRow(
            key,
            label,
            "—",
            "—",
            exact,
            t("none: {why}", why=never_sized_why(est))
            if holds_no_kv(est)
            else t("never sized: {why}", why=never_sized_why(est)),
        )
        for key, label, num, exact, note in items
    )
    order = ["weights", "activation", "non-torch"]
    if est.cuda_graph_budgeted:
        order.append("graphs")
    if not holds_no_kv(est):
        order.append("kv")  # no bar for a pool vLLM never allocates
    if not est.cuda_graph_budgeted:
        order.append("graphs")
    order.append("unused")
    sizes = {key: num for key, _, num, _, _ in items} | {"kv": kv}
    labels = {
        "weights": _("Weights"),
        "activation": _("Activation"),
        "non-torch": _("Non-torch"),
        "graphs": _("Graphs"),
        "kv": _("KV pool"),
        "unused": _("Unused"),
    }
    segments = [svg.BarSegment(key, labels[key], sizes[key]) for key in order]
    return rows, segments, max(0, -est.kv_cache_bytes)


def headline_numbers(est: Estimate) -> tuple[Figure, ...]:
    """KV pool (modelled: what is left after the measured parts), tokens and concurrency (exact for a
    given pool, so their range is the pool's pushed through vLLM's block arithmetic: beside a range
    their badge says "exact given the pool", not plain "exact"), max_model_len."""
    pool, tokens, conc = (est.ranges.get(k) for k in ("kv_cache_bytes", "kv_tokens", "max_concurrency"))
    # a pool with no band is the one --kv-cache-memory-bytes gave (uncertainty.ranges_for's pool_given): the
    # user's input, and the tokens and concurrency on it plainly exact
    given = pool is not None and pool.low == pool.high
    banded = not no_pool(est) and not given
    tokens_range = f"{integer(tokens.low)} – {integer(tokens.high)}" if tokens and banded else ""
    conc_range = f"{conc.low:.2f} – {conc.high:.2f}x" if conc and banded else ""
    return (
        Figure("kv-bytes", t("KV cache pool"), t("none (no KV cache)"), "exact")
        if holds_no_kv(est)
        else Figure("kv-bytes", t("KV cache pool"), t("never sized"), "modelled")
        if never_sized(est)
        else Figure(
            "kv-bytes",
            t("KV cache pool"),
            gib(est.kv_cache_bytes),
            "input" if given else "modelled",
            band_of(pool) if pool and not given else "",
            gib_range(pool) if pool and not given else "",
        ),
        Figure(
            "kv-tokens",
            t("GPU KV cache size"),
            t("{kv_tokens} tokens", kv_tokens=integer(est.kv_tokens)) if not no_pool(est) else "—",
            _exact_kind(tokens_range),
            "",
            tokens_range,
        ),
        Figure(
            "concurrency",
            t("Max concurrency at S"),
            f"{est.max_concurrency:.2f}x" if not never_sized(est) else "—",
            _exact_kind(conc_range),
            "",
            conc_range,
        ),
        Figure("max-model-len", "max_model_len", integer(est.max_model_len), "input"),
    )


def numbers_note(est: Estimate) -> str:
    """vLLM refuses a --max-model-len above the derived maximum in its config check, before it profiles
    (0.33.0 vllm/config/model.py _get_and_verify_max_len), so it prints no pool: the planner's pool,
    tokens and concurrency are what it would size with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and say so."""
    if est.error_kind != ErrorKind.MAX_LEN_ABOVE_DERIVED:
        return ""
    return t(
        "vLLM prints none of these numbers at this length: they are what it would size with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 set (the form's “allow max_model_len above the model's maximum” box)."
    )


def _exact_kind(range_text: str) -> str:
    """A figure that is exact arithmetic on the KV pool: "exact" alone, "exact given the pool" (the
    badge macro's ``exact-given-pool``) when it carries the modelled pool's range."""
    return "exact-given-pool" if range_text else "exact"


def borderline_view(est: Estimate) -> BorderlineView | None:
    """Only when the verdict flips inside the KV band. Two ways out, both computed here:

    - the largest max_model_len that starts even at the low end of the band (the core's search);
    - raising utilization so the band's low end reaches today's expected pool (when that starts) or
      today's high end (when only the high end starts): the budget grows by total × Δu, byte for byte.
    """
    pool = est.ranges.get("kv_cache_bytes")
    if not est.borderline or pool is None:
        return None
    shortfall = (pool.expected if est.fits else pool.high) - pool.low
    steps = math.ceil(shortfall / est.device_total_bytes / UTILIZATION_STEP)
    raise_by = round(steps * UTILIZATION_STEP, 2)
    raise_to = round(est.gpu_memory_utilization + raise_by, 2)
    ceiling, _why = utilization_ceiling(est)  # the recommender's ceiling: one answer per page
    possible = raise_to <= ceiling
    return BorderlineView(
        kv_range=gib_range(pool),
        safe_len=integer(est.safe_max_model_len) if est.safe_max_model_len else "",
        raise_util_by=f"{raise_by:.2f}" if possible else "",
        raise_util_to=f"{raise_to:.2f}" if possible else "",
    )


def block_math(est: Estimate) -> tuple[Figure, ...]:
    """vLLM's block arithmetic for this layout and version (app.core.equations), translated; none when
    vLLM dies before it sizes the pool."""
    if never_sized(est):
        return ()
    return tuple(
        Figure(
            tr(eq.name),
            f"{tr(eq.generic)} {'≈' if eq.approximate else '='} {eq.expression}",
            eq.value,
        )
        for eq in E.block_equations(est, rules_for(est.vllm_version))
    )


def kv_dtype_label(est: Estimate) -> str:
    """The KV dtype planned: `fp8_e4m3 (from the checkpoint)` when `auto` took the checkpoint's declared one."""
    if est.kv_cache_dtype_from_checkpoint:
        return t("{dtype} (from the checkpoint)", dtype=est.kv_cache_dtype)
    return est.kv_cache_dtype


def markdown_summary(resolved: Resolved, est: Estimate, verdict: VerdictView) -> str:
    """The copied summary: its KV pool, tokens and concurrency are the headline's own figures (no KV cache,
    never sized: the same "none" / "—" the page shows, not "0 tokens" and a concurrency on no pool)."""
    p = resolved.params
    headline = {figure.key: figure.value for figure in headline_numbers(est)}
    rows = [
        (_("model"), resolved.model_label),
        (_("device"), f"{resolved.device.name} × {p.device_count}"),
        ("vLLM", est.vllm_version),
        ("max_model_len", integer(est.max_model_len)),
        (t("target concurrency"), str(p.target_concurrency)),
        (t("tensor / pipeline parallel"), f"{est.tensor_parallel_size} / {est.pipeline_parallel_size}"),
        ("gpu_memory_utilization", f"{est.gpu_memory_utilization:g}"),
        ("kv_cache_dtype", kv_dtype_label(est)),
        (_("verdict"), verdict.headline),
        (t("weights per device"), gib(est.weights_bytes)),
        (t("KV cache pool"), headline["kv-bytes"]),
        (t("KV cache size"), headline["kv-tokens"]),
        (t("max concurrency"), headline["concurrency"]),
    ]
    # the permalink follows as the last line: app.js appends it when copying (data-copy-link), as an
    # absolute URL, so the page carries the (possibly large) query once, in #permalink
    return "\n".join(["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows), ""])


def _model_note(resolved: Resolved) -> str:
    """Where the model came from; when the user named none, that the command's placeholder is theirs to fill."""
    source = resolved.model_source
    if source == "catalog":
        return t(
            "Catalog model {model_label} ({confidence})",
            model_label=resolved.model_label,
            confidence=_(CONFIDENCE_TEXT.get(resolved.model.confidence, resolved.model.confidence)),
        )
    if source == "hub":
        return t(
            "Model {model_label} read from the hub ({source})",
            model_label=resolved.model_label,
            source=resolved.model.source,
        )
    placeholder = resolved.model_label == MODEL_PLACEHOLDER
    if source == "config" and placeholder:
        return t(
            "Model from the pasted config.json, which names no model: replace {placeholder} in the command with its path or hub id (or type it in the Model box).",
            placeholder=MODEL_PLACEHOLDER,
        )
    if source == "config":
        return t("Model {model_label} from the pasted config.json", model_label=resolved.model_label)
    if placeholder:
        return t(
            "Model from the model card: replace {placeholder} in the command with its path or hub id (or type it in the Model box).",
            placeholder=MODEL_PLACEHOLDER,
        )
    return t("Model {model_label} from the model card", model_label=resolved.model_label)


def memory_partition(resolved: Resolved, est: Estimate) -> tuple[tuple[PartitionRow, ...], Markup]:
    """One device's memory: the partition rows and the bar that draws them, with the S × N demand mark."""
    rows, segments, overrun = partition_rows(
        est, quantized=resolved.model.quantization is not None, platform=resolved.device.platform
    )
    target = resolved.params.target_concurrency
    demand = E.kv_demand_bytes(
        kv_bytes_per_token=est.kv_bytes_per_token, max_model_len=est.max_model_len, concurrency=target
    )
    bar = svg.partition_bar(
        segments=segments,
        device_total_bytes=est.device_total_bytes,
        budget_bytes=est.budget_bytes,
        overrun_bytes=overrun,
        title=t("Memory of one {name}", name=resolved.device.name),
        desc="; ".join(f"{r.label} {r.gib}" for r in rows),
        budget_label=t(
            "budget {budget_bytes} ({gpu_memory_utilization:g})",
            budget_bytes=gib(est.budget_bytes, 1),
            gpu_memory_utilization=est.gpu_memory_utilization,
        ),
        overrun_label=t("over budget by {overrun}", overrun=gib(overrun, 1)),
        kv_demand_bytes=demand,
        kv_demand_label=(
            t("S × N need {demand} ", demand=gib(demand, 1))
            + (_("≤ pool") if demand <= max(0, est.kv_cache_bytes) else _("> pool"))
        ),
    )
    return rows, bar


def capacity_chart(est: Estimate, curve: list[tuple[int, float]], *, target_concurrency: int) -> Markup:
    """Maximum concurrency against max_model_len, with the current length and the target N marked."""
    return svg.capacity_chart(
        curve=curve,
        current_len=est.max_model_len,
        current_concurrency=est.max_concurrency,
        target_concurrency=target_concurrency,
        title=t("Maximum concurrency against max_model_len"),
        desc=(
            t(
                "At {max_model_len} tokens the pool holds {max_concurrency:.2f} sequences; target {target_concurrency}. Both axes logarithmic.",
                max_model_len=human_tokens(est.max_model_len),
                max_concurrency=est.max_concurrency,
                target_concurrency=target_concurrency,
            )
        ),
        x_label=t("max_model_len (tokens, log scale)"),
        y_label=t("max concurrency (log)"),
        target_label=t("target N = {target_concurrency}", target_concurrency=target_concurrency),
    )


def multi_node_hint(*, ranks: int, per_node: int) -> str:
    """Empty within one node; else how many nodes TP × PP needs and how to lay it out."""
    if ranks <= per_node:
        return ""
    return t(
        "TP × PP = {ranks} devices is more than one node of {per_node}: this needs {nodes} nodes (Ray or multiprocessing across hosts). Keep TP within a node and use PP across nodes.",
        ranks=ranks,
        per_node=per_node,
        nodes=-(-ranks // per_node),
    )


def fleet_line(est: Estimate, *, devices: int) -> str:
    """The devices as whole replicas of TP × PP, and the concurrency they hold together."""
    if never_sized(est):
        return ""  # no replica starts, so no concurrency to multiply
    # ≥ 1: fewer devices than TP × PP is refused before any estimate (estimate.validate_devices)
    replicas = E.replicas(devices=devices, ranks=est.ranks)
    return tr(
        Plural(
            replicas,
            N_(
                "⌊devices {devices} ÷ (TP × PP = {ranks})⌋ = {replicas} replica → {replicas} × {per_replica:.2f} = {max_concurrency:.2f} concurrent sequences of {max_model_len} tokens"
            ),
            N_(
                "⌊devices {devices} ÷ (TP × PP = {ranks})⌋ = {replicas} replicas → {replicas} × {per_replica:.2f} = {max_concurrency:.2f} concurrent sequences of {max_model_len} tokens"
            ),
            devices=devices,
            ranks=est.ranks,
            replicas=replicas,
            per_replica=est.max_concurrency,
            max_concurrency=E.fleet_concurrency(replicas=replicas, per_replica=est.max_concurrency),
            max_model_len=integer(est.max_model_len),
        )
    )


def printed_log(est: Estimate) -> tuple[str, tuple[str, ...]]:
    """The log's title and lines; a refusal's text ends the log once, as vLLM prints it last."""
    if not est.error:
        return t("What vLLM would print"), tuple(est.log_lines)
    lines = tuple(est.log_lines) if est.error in est.log_lines else (*est.log_lines, est.error)
    return t("What vLLM would print (start-up fails)"), lines


def term_symbols(est: Estimate) -> tuple[Figure, ...]:
    """Every term of the estimate, the modelled ones marked."""
    return tuple(
        Figure(tr(term.name), tr(term.formula), term.value + ("" if term.exact else _(" (modelled)")))
        for term in est.terms
    )


def result_view(
    resolved: Resolved,
    est: Estimate,
    curve: list[tuple[int, float]],
    *,
    compare_link: str = "",
    compare_versions: str = "",
    details: bool = True,
) -> ResultView:
    """``details=False`` leaves out what only the closed <details> sections show (the curve as a table,
    the version notes, every term), for a fragment that loads those when they are opened."""
    params = resolved.params
    rows, bar = memory_partition(resolved, est)
    verdict = verdict_view(est, params.target_concurrency, derived_len=resolved.derived_len)
    log_title, log_lines = printed_log(est)
    return ResultView(
        verdict=verdict,
        partition=rows,
        bar_svg=bar,
        chart_svg=capacity_chart(est, curve, target_concurrency=params.target_concurrency),
        formula=formula_view(resolved.model, est, params.target_concurrency),
        block_math=block_math(est),
        log_title=log_title,
        log_lines=log_lines,
        warnings=tuple(tr_list(est.warnings)),
        terms=term_symbols(est) if details else (),
        command=render_serve_command(
            model=resolved.model_label, serve=resolved.serve, vllm_version=resolved.vllm_version
        ),
        multi_node_hint=multi_node_hint(ranks=est.ranks, per_node=resolved.device.typical_node_devices),
        fleet=fleet_line(est, devices=params.device_count),
        model_note=_model_note(resolved),
        markdown=markdown_summary(resolved, est, verdict),
        curve_rows=tuple((integer(s), f"{c:.2f}") for s, c in curve) if details else (),
        estimate=est,
        headline=headline_numbers(est),
        borderline=borderline_view(est),
        version_notes=version_notes(rules_for(est.vllm_version)) if details else (),
        compare_link=compare_link,
        compare_versions=compare_versions,
        version_line=version_line(est),
        numbers_note=numbers_note(est),
        deploy_tabs=tuple((target, tr(label)) for target, label in DEPLOY_TABS),
    )
