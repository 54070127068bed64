"""The doctor page's view model: typed, so the template holds no arithmetic."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from fastapi import Request
from markupsafe import Markup, escape

from app.core.catalog import list_devices
from app.core.diagnose import ComparisonRow, Diagnosis, Step
from app.core.logs import Evidence, MetricsFacts
from app.core.text import N_, TextList
from app.core.text import Message as TextMessage
from app.core.verdicts import VERDICTS
from app.web.format import gib, integer, percent
from app.web.i18n import _, page_lang, t, tr, tr_list
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.links import query_items, to_query
from app.web.inputs.options import Option
from app.web.inputs.params import PlannerParams
from app.web.inputs.problems import Problem
from app.web.templating import url_path

EXCERPT_LINE_CHARS = 400  # a quoted log line is clipped to this on the page (the JSON keeps 2,000)


TONES = {"ok": "ok", "info": "info", "warn": "warn", "fail": "bad", "unknown": "unknown"}
SOURCE_LABELS = {
    "hint": N_("chosen"),
    "printed_name": N_("named in the log"),
    "printed_total": N_("matched to the printed total"),
    "ambiguous": N_("ambiguous: several catalog cards report this total"),
    "replay": N_("inferred from the KV pool"),
    "custom": N_("custom, of the printed size"),
    "none": N_("unknown"),
}


def _device_source_label(diagnosis: Diagnosis) -> str:
    """Where the device came from; of several tied cards, the one whose catalog total is the printed one is
    named (the reasoning beneath keeps the others): an A3 die's 61.28 GiB is the 910C's, not the 910B's."""
    if diagnosis.device_very_total is not None:
        return t(
            "ambiguous: {id} reports this very total, other catalog cards are near it",
            id=diagnosis.device_very_total,
        )
    return _(SOURCE_LABELS[diagnosis.device_source])


def _device_kind_only(diagnosis: Diagnosis) -> str:
    """The device line when no card is matched: the stack the log itself names (vllm_ascend frames or an NPU,
    ROCm's HIP lines, CUDA's errors), else "—"; never a card the log does not print."""
    f = diagnosis.facts
    if f.device_type == "NPU":
        return t("Ascend NPU (the log does not name the card)")
    if f.gpu_platform == "rocm":
        return t("AMD GPU, ROCm (the log does not name the card)")
    if f.gpu_platform == "cuda":
        return t("NVIDIA GPU, CUDA (the log does not name the card)")
    return "—"


# Who answered a step-4 trial (Trial.source), as the page words it.
TRIAL_SOURCES = {
    "log": N_("log"),
    "planner": N_("planner"),
    "arithmetic": N_("arithmetic"),
    "none": N_("none"),
}


@dataclass(frozen=True)
class ExcerptLine:
    line_no: str  # "" for a gap marker
    text: str
    gap: bool = False


@dataclass(frozen=True)
class TrialView:
    label: str
    outcome: str
    tone: str
    source: str
    detail: str
    verbatim: bool = False  # the detail is vLLM's own error text (quoted as printed, not translated)


@dataclass(frozen=True)
class StepView:
    number: int
    key: str
    title: str
    verdict: str
    tone: str
    explanation: str
    excerpt: list[ExcerptLine]
    trials: list[TrialView] = field(default_factory=list)


@dataclass(frozen=True)
class RowView:
    key: str
    label: str
    actual: str
    predicted: str
    gap: str
    note: str | None


@dataclass(frozen=True)
class MetricsView:
    verdict: str
    tone: str
    reading: str
    rows: list[tuple[str, str]]


@dataclass(frozen=True)
class ResultView:
    verdict: str
    tone: str
    title: str
    headline: Markup
    remedies: list[str]
    steps: list[StepView]
    comparison: list[RowView]
    metrics: MetricsView | None
    planner_url: str | None
    planner_note: str | None
    # the log gave planner inputs but names no model: the page asks for it (a GET form to the planner
    # carrying these fields), instead of a link that would plan the planner's default model
    planner_fields: list[tuple[str, str]] | None
    identity: list[tuple[str, str]]
    device_reasoning: list[str]
    notes: list[str]
    # the log's own error that ended the start, verbatim, in the verdict box (None: none, or the headline
    # already quotes it): on a phone the steps that also show it are screens below
    failure: str | None = None


@dataclass(frozen=True)
class DoctorForm:
    log: str = ""
    metrics: str = ""
    target_concurrency: str = ""
    device: str = ""
    devices: list[Option] = field(default_factory=list)
    file_name: str = ""


@dataclass(frozen=True)
class DoctorView:
    form: DoctorForm
    problems: list[Problem]
    result: ResultView | None


def excerpt(evidence: Iterable[Evidence]) -> list[ExcerptLine]:
    """Evidence lines in order, with a gap marker between lines that are not adjacent."""
    lines: list[ExcerptLine] = []
    previous: int | None = None
    for ev in sorted({e.line_no: e for e in evidence}.values(), key=lambda e: e.line_no):
        if previous is not None and ev.line_no > previous + 1:
            lines.append(ExcerptLine(line_no="", text="…", gap=True))
        text = ev.text if len(ev.text) <= EXCERPT_LINE_CHARS else ev.text[: EXCERPT_LINE_CHARS - 1] + "…"
        lines.append(ExcerptLine(line_no=str(ev.line_no), text=text))
        previous = ev.line_no
    return lines


def _value(unit: str, value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "—"
    if unit == "bytes" and round(value / 2**30, 2) == 0:
        value = 0  # no "-0.00 GiB"
    sign = "+" if signed and value > 0 else ""
    if unit == "bytes":
        return sign + gib(value)
    if unit == "ratio":
        return f"{sign}{value:.2f}x"
    return sign + integer(value)


def _row_view(row: ComparisonRow) -> RowView:
    return RowView(
        key=row.key,
        label=tr(row.label),
        actual=_value(row.unit, row.actual),
        predicted=_value(row.unit, row.predicted),
        gap=_value(row.unit, row.gap, signed=True),
        note=tr(row.note) if row.note is not None else None,
    )


def _metrics_view(metrics: MetricsFacts | None) -> MetricsView | None:
    if metrics is None:
        return None
    rows: list[tuple[str, str]] = []
    if metrics.kv_usage is not None:
        rows.append((t("KV cache usage"), percent(metrics.kv_usage)))
    for label, value in (
        (t("Requests running"), metrics.num_requests_running),
        (t("Requests waiting"), metrics.num_requests_waiting),
        (_("Preemptions"), metrics.preemptions),
    ):
        if value is not None:
            rows.append((label, integer(value)))
    if metrics.prefix_hit_rate is not None:
        rows.append((t("Prefix-cache hit rate"), percent(metrics.prefix_hit_rate)))
    if metrics.num_gpu_blocks is not None:
        rows.append((t("GPU blocks (cache_config_info)"), integer(metrics.num_gpu_blocks)))
    bound = metrics.verdict == "kv_bound"
    return MetricsView(
        verdict=t("bound by the KV pool") if bound else t("not bound by the KV pool"),
        tone="warn" if bound else "ok",
        reading=tr(metrics.reading),
        rows=rows,
    )


def _trial_views(diagnosis: Diagnosis) -> list[TrialView]:
    views = []
    for trial in diagnosis.trials:
        outcome, tone = {True: (_("starts"), "ok"), False: (_("fails"), "bad"), None: ("?", "unknown")}[
            trial.starts
        ]
        source = _(TRIAL_SOURCES.get(trial.source, trial.source))
        verbatim = bool(trial.detail) and not isinstance(trial.detail, TextMessage | TextList)
        views.append(TrialView(tr(trial.label), outcome, tone, source, tr(trial.detail), verbatim))
    return views


VLLM_ERROR_PARAM = "error"  # diagnose/verdict.py: the failure's own line, as vLLM printed it


def _quoting_vllm_error(headline: str) -> Markup:
    """The headline in the page's language, with vLLM's quoted error kept verbatim (not translated)."""
    if not isinstance(headline, TextMessage) or VLLM_ERROR_PARAM not in headline.params:
        return escape(tr(headline))
    marker = "\x00error\x00"
    params = {**headline.params, VLLM_ERROR_PARAM: marker}
    sentence = escape(tr(TextMessage(headline.msgid, **params)))
    quoted = Markup('<q translate="no">{}</q>').format(headline.params[VLLM_ERROR_PARAM])
    return Markup(sentence.replace(marker, quoted))


def _failure(diagnosis: Diagnosis) -> str | None:
    """vLLM's error line that ended the start, unless the headline quotes it already."""
    headline = diagnosis.headline
    if isinstance(headline, TextMessage) and VLLM_ERROR_PARAM in headline.params:
        return None
    return diagnosis.facts.error


def _step_view(number: int, step: Step, diagnosis: Diagnosis) -> StepView:
    return StepView(
        number=number,
        key=step.key,
        title=tr(step.title),
        verdict=tr(step.verdict),
        tone=TONES[step.status],
        explanation=tr(step.explanation),
        excerpt=excerpt(step.evidence),
        trials=_trial_views(diagnosis) if step.key == "cause" else [],
    )


def result_view(request: Request, diagnosis: Diagnosis) -> ResultView:
    info = VERDICTS[diagnosis.verdict]
    tone, title = info.tone, _(info.label)
    url = planner_url(request, diagnosis, page_lang())
    notes = []
    if url is not None and diagnosis.model_id is None:
        notes.append(
            t(
                "The log's model is not in the catalog: the planner opens on it, computes nothing and asks for its config.json."
            )
        )
    elif url is not None and diagnosis.device_very_total is not None:
        notes.append(
            t(
                "The log does not say which card it ran on ({id} reports this very total, others are near it): the planner opens with a device of the printed size — choose the card there.",
                id=diagnosis.device_very_total,
            )
        )
    elif url is not None and diagnosis.device_source == "ambiguous":
        notes.append(
            t(
                "The log does not say which card it ran on (several report this total): the planner opens with a device of the printed size — choose the card there."
            )
        )
    if url is not None:
        notes.extend(planner_version_note(diagnosis))
    planner_note = " ".join(notes) or None
    identity = [
        (_("Model"), diagnosis.model_id or diagnosis.facts.model or "—"),
        (
            _("Device"),
            f"{diagnosis.device_id} ({_device_source_label(diagnosis)})"
            if diagnosis.device_id
            else _device_kind_only(diagnosis),
        ),
        ("vLLM", diagnosis.facts.vllm_version or diagnosis.vllm_version_used or "—"),
        (t("Parallelism"), _parallelism(diagnosis)),
        (t("KV cache dtype"), diagnosis.facts.kv_cache_dtype or "—"),  # not printed: not claimed
        (t("Target concurrency N"), str(diagnosis.target_concurrency)),
    ]
    return ResultView(
        verdict=diagnosis.verdict,
        tone=tone,
        title=title,
        headline=_quoting_vllm_error(diagnosis.headline),
        failure=_failure(diagnosis),
        remedies=tr_list(diagnosis.remedies),
        steps=[_step_view(i, step, diagnosis) for i, step in enumerate(diagnosis.steps, start=1)],
        comparison=[_row_view(row) for row in diagnosis.comparison],
        metrics=_metrics_view(diagnosis.metrics),
        planner_url=url,
        planner_note=planner_note,
        planner_fields=planner_fields_without_model(diagnosis, page_lang()),
        identity=identity,
        device_reasoning=tr_list(diagnosis.device_reasoning),
        notes=tr_list(diagnosis.notes),
    )


def _parallelism(diagnosis: Diagnosis) -> str:
    """TP × PP as the log says them ("—" when it says neither; one said: the other is vLLM's default 1). A size
    known only from worker names is a lower bound, shown as one ("TP ≥ 2 (worker names)")."""
    f = diagnosis.facts
    tp, pp = f.tensor_parallel_size, f.pipeline_parallel_size
    if tp is not None or pp is not None:
        return t("TP {tp} × PP {pp}", tp=tp or 1, pp=pp or 1)
    bounds = [
        t("{label} ≥ {n} (worker names)", label=label, n=n)
        for label, n in (("TP", f.tensor_parallel_at_least), ("PP", f.pipeline_parallel_at_least))
        if n is not None
    ]
    return " × ".join(bounds) or "—"


def planner_version_note(diagnosis: Diagnosis) -> list[str]:
    """Why the link's release differs from the one the log printed (a V0 run of a V1 release)."""
    printed, linked = diagnosis.facts.vllm_version, diagnosis.planner_inputs.get("vllm_version")
    if printed is None or linked is None or printed == linked:
        return []
    why = tr(diagnosis.planner_version_note) if diagnosis.planner_version_note else t("same rules")
    return [
        t(
            "The log says vLLM {printed}; the planner opens with {linked}, the release whose rules replay it ({why}).",
            printed=printed,
            linked=linked,
            why=why,
        )
    ]


def planner_url(request: Request, diagnosis: Diagnosis, lang: str | None = None) -> str | None:
    """A relative permalink to the planner prefilled with what the log says: None if it says nothing,
    or names no model (the planner would plan its default model; :func:`planner_fields_without_model`).

    ``lang``: the page's language for the link (the API's link is language-neutral)."""
    if "model" not in diagnosis.planner_inputs:
        return None
    params, _ = parse_lenient(PlannerParams, diagnosis.planner_inputs)
    return f"{url_path(request, 'planner')}?{to_query(params.model_copy(update={'lang': lang}))}"


def planner_link(request: Request, diagnosis: Diagnosis) -> dict[str, object]:
    """The API's way to the planner (docs/inputs.md, "The doctor's API"): ``planner_url`` when the log names
    a model; when it names none but says something else, ``model_needed`` is true and ``planner_fields`` holds
    every other input, so a client adds ``model`` to them (the page asks for it in a form)."""
    url = planner_url(request, diagnosis)
    fields = planner_fields_without_model(diagnosis)
    needed = url is None and bool(diagnosis.planner_inputs)
    return {
        "planner_url": url,
        "model_needed": needed,
        "planner_fields": dict(fields) if fields is not None else None,
    }


def planner_fields_without_model(
    diagnosis: Diagnosis, lang: str | None = None
) -> list[tuple[str, str]] | None:
    """The planner inputs of a log that names no model, as the fields of a form that asks for it."""
    if not diagnosis.planner_inputs or "model" in diagnosis.planner_inputs:
        return None
    params, _ = parse_lenient(PlannerParams, diagnosis.planner_inputs)
    return [(k, v) for k, v in query_items(params.model_copy(update={"lang": lang})) if k != "model"]


def device_options() -> list[Option]:
    return [Option("", t("detect from the log")), *(Option(d.id, d.name) for d in list_devices())]
