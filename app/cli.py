"""`kv-planner`: the estimator from a terminal, and the web server.

kv-planner estimate MODEL [vllm serve flags…] (--device ID | --device-memory-gib X [--device-platform cuda|rocm|npu])
                [--vllm-version V] [--json]
                [--allow-long-max-model-len]   (as VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)
kv-planner estimate --device h100 -- vllm serve MODEL --flags…
kv-planner perf MODEL [vllm serve flags…] --device ID --input-len N --output-len N --concurrency C [--json]
                [--runs FILE]   (your `vllm bench serve` results: every figure they measured is calibrated on them)
    MODEL: a catalog id or alias, a path to a config.json, or with KVPLAN_ALLOW_HUB=1 a hub id
    (org/name[@revision], read from HF_ENDPOINT as the web does: app/hub.py)
kv-planner deploy MODEL [vllm serve flags…] --device ID [--vllm-version V]
                --target command|docker|compose|kubernetes|helm [--replicas N]
    the same configuration as a `docker run` line, a compose file, a Kubernetes Deployment + Service
    or values for the vLLM production-stack Helm chart (image pinned to the release)
kv-planner models | kv-planner devices
kv-planner serve [--host H] [--port P] [--root-path /prefix] [--workers N]
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from app import hub
from app.core import catalog, deploy
from app.core.command import human_readable_int, parse_serve_args, parse_serve_command, vllm_flags
from app.core.errors import PlannerError, UnknownModelError
from app.core.estimate import estimate
from app.core.perf.bench import RESULT_KEYS
from app.core.perf.bench_args import BenchArgs
from app.core.perf.bench_run import bench_sets_clients
from app.core.perf.cluster import ClusterFit, RunComparison
from app.core.perf.measured import MAX_RUNS_CHARS, PlannedRun, compared, fit_runs, read_run, runs_of
from app.core.perf.predict import Performance, performance
from app.core.perf.workload import speed_workload
from app.core.plan import apply_quantization_flag, resolve_device, resolve_model
from app.core.result import Estimate, Range
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Msg
from app.core.verdicts import VERDICTS

# kv-planner's own options inside `estimate`; everything else is a `vllm serve` flag
_OWN_VALUED = {
    "--device",
    "--device-memory-gib",
    "--device-platform",
    "--vllm-version",
    "--target-concurrency",
}
# `kv-planner perf`'s workload (what `vllm bench serve --random-input-len/--random-output-len/--max-concurrency` sets)
# (app.core.perf.workload.speed_workload: a length not given is the benchmark's mean request, else 1,024,
# shortened to fit max_model_len; clients not given: the benchmark's --max-concurrency, else
# --target-concurrency, else 16); `--runs FILE`: your measured runs (app.core.perf.measured)
_PERF_VALUED = frozenset({"--input-len", "--output-len", "--concurrency"})
_OWN_FLAGS = {"--json", "--allow-long-max-model-len"}
# `kvplan perf --num-prompts ...`: `vllm bench serve`'s own arguments (any of them turns the simulated
# benchmark on; its result keys are printed under vLLM's names)
_BENCH_VALUED = {
    "--num-prompts",
    "--max-concurrency",
    "--request-rate",
    "--burstiness",
    "--dataset-name",
    "--random-input-len",
    "--random-output-len",
    "--random-range-ratio",
    "--random-prefix-len",
    "--seed",
}

_OWN_NAMES = sorted(_OWN_VALUED | _OWN_FLAGS | set(_PERF_VALUED) | _BENCH_VALUED | {"--runs"})
_OWN_SUGGESTION_CUTOFF = 0.75  # "--devce" -> "--device" (0.92), "--concurency" -> "--concurrency" (0.96)


def _own_typos(tokens: list[str], vllm_version: str | None) -> None:
    """A flag `vllm serve` does not have but that is close to one of kv-planner's own is its typo: say so
    (it used to read as "vllm serve: error: unrecognized arguments: --devce", with no suggestion)."""
    known = vllm_flags(vllm_version)
    for token in tokens:
        name = token.partition("=")[0]
        if not name.startswith("--") or name in known or "--" + name[2:].replace("_", "-") in known:
            continue
        close = difflib.get_close_matches(name, _OWN_NAMES, n=1, cutoff=_OWN_SUGGESTION_CUTOFF)
        if close:
            raise PlannerError("option", f"unknown kv-planner option {name} (did you mean {close[0]}?)")


def _split_own(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """kv-planner's own options (values by flag; `--json` is read by main) and the `vllm serve` flags."""
    own: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        name, eq, inline = token.partition("=")
        if name in _OWN_FLAGS:
            own[name] = "true"
        elif name in _OWN_VALUED:
            if eq:
                own[name] = inline
            elif i + 1 < len(argv):
                own[name] = argv[i + 1]
                i += 1
            else:
                raise PlannerError(name.lstrip("-").replace("-", "_"), f"{name} needs a value")
        else:
            rest.append(token)
        i += 1
    return own, rest


def _number(text: str, field: str, kind: type[float] | type[int]) -> float:
    try:
        return kind(text)
    except ValueError as exc:
        raise PlannerError(field, f"not a number: {text!r}") from exc


def run_estimate(argv: list[str]) -> Estimate:
    return _inputs(argv)[3]


def _inputs(argv: list[str]) -> tuple[ModelSpec, DeviceSpec, ServeConfig, Estimate]:
    if "--" in argv:
        cut = argv.index("--")
        own, extra = _split_own(argv[:cut])
        command = [a for a in argv[cut + 1 :] if a != "--json"]  # `--json` may follow the command too
        parsed = parse_serve_command(
            " ".join(_quote(a) for a in command), vllm_version=own.get("--vllm-version")
        )
        if extra:
            raise PlannerError("command", f"put vllm flags after `--`: {' '.join(extra)}")
    else:
        own, rest = _split_own(argv)
        _own_typos(rest, own.get("--vllm-version"))
        parsed = parse_serve_args(rest, vllm_version=own.get("--vllm-version"))
    if parsed.unknown_flags:
        print(
            f"note: ignored flags that do not move memory: {' '.join(parsed.unknown_flags)}", file=sys.stderr
        )
    if parsed.wrapper.ignored:  # `-- docker run … vllm/vllm-openai:vX …`: docker's own options
        print(f"note: not vLLM arguments, ignored: {' '.join(parsed.wrapper.ignored)}", file=sys.stderr)
    if parsed.wrapper.release and "--vllm-version" not in own:  # the image tag names the release
        own["--vllm-version"] = parsed.wrapper.release
    if "--allow-long-max-model-len" in own:  # as VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 in vLLM's environment
        parsed.serve = parsed.serve.model_copy(update={"allow_long_max_model_len": True})
    if not parsed.model:
        raise PlannerError("model", "no model given (an HF id, an alias, or a path to config.json)")
    model = apply_quantization_flag(_model(parsed.model), parsed.serve.quantization)
    memory = own.get("--device-memory-gib")
    device = resolve_device(
        own.get("--device"),
        float(_number(memory, "device_memory_gib", float)) if memory else None,
        platform=own.get("--device-platform"),
    )
    target = own.get("--target-concurrency")
    est = estimate(
        model=model,
        device=device,
        serve=parsed.serve,
        vllm_version=own.get("--vllm-version"),
        target_concurrency=int(_number(target, "target_concurrency", int)) if target else None,
        max_model_len_auto=parsed.max_model_len_auto,
    )
    return model, device, parsed.serve, est


def run_perf(argv: list[str]) -> Performance:
    """`kv-planner perf`: the estimate's exact pool plus the speed model at one workload."""
    workload: dict[str, int] = {}
    bench: dict[str, str | bool] = {}
    rest: list[str] = []
    runs_file = ""
    i = 0
    while i < len(argv):
        name, eq, inline = argv[i].partition("=")
        if name == "--runs" and "--" not in argv[:i]:
            if not eq and i + 1 >= len(argv):
                raise PlannerError("runs", "--runs needs a file")
            runs_file = inline if eq else argv[i + 1]
            if not runs_file:
                raise PlannerError("runs", "--runs needs a file")
            i += 1 if eq else 2
            continue
        if name == "--ignore-eos" and "--" not in argv[:i]:
            bench["ignore_eos"] = True
            i += 1
            continue
        if name in _BENCH_VALUED and "--" not in argv[:i]:
            field = name.lstrip("-").replace("-", "_")
            if not eq and i + 1 >= len(argv):
                raise PlannerError(field, f"{name} needs a value")
            bench[field] = inline if eq else argv[i + 1]
            i += 1 if eq else 2
            continue
        if name in _PERF_VALUED and "--" not in argv[:i]:
            field = name.lstrip("-").replace("-", "_")
            if not eq and i + 1 >= len(argv):
                raise PlannerError(field, f"{name} needs a value")
            text = inline if eq else argv[i + 1]
            # 2k = 2,000 and 2K = 2,048, as --max-model-len takes them (vLLM's human-readable ints)
            workload[name] = human_readable_int(text, field_name=field)
            i += 1 if eq else 2
            continue
        rest.append(argv[i])
        i += 1
    model, device, serve, est = _inputs(rest)
    try:
        bench_args = BenchArgs.model_validate(bench) if bench else None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise PlannerError(str(first["loc"][0]) if first["loc"] else "bench", first["msg"]) from None
    own, _ = _split_own(rest[: rest.index("--")] if "--" in rest else rest)
    target = own.get("--target-concurrency")
    work, note = speed_workload(
        input_tokens=workload.get("--input-len"),
        output_tokens=workload.get("--output-len"),
        concurrency=workload.get("--concurrency"),
        target_concurrency=int(_number(target, "target_concurrency", int)) if target else None,
        bench=bench_args,
        max_model_len=est.max_model_len,
    )
    cluster = _runs_cluster(runs_file, rest, bench_args, (model, device, serve, est)) if runs_file else None
    perf = performance(
        estimate=est,
        model=model,
        device=device,
        serve=serve,
        workload=work,
        bench=bench_args,
        cluster=cluster,
        clients_from_bench=bench_sets_clients(concurrency=workload.get("--concurrency"), bench=bench_args),
    )
    # the shortening note first, how your runs were read last (as the Speed section orders them)
    notes = [*([note] if note else []), *perf.notes, *(cluster.notes if cluster is not None else [])]
    return perf if len(notes) == len(perf.notes) else perf.model_copy(update={"notes": notes})


def _runs_cluster(
    path: str,
    rest: list[str],
    bench: BenchArgs | None,
    base: tuple[ModelSpec, DeviceSpec, ServeConfig, Estimate],
) -> ClusterFit:
    """`kvplan perf --runs FILE`: your `vllm bench serve` results (printed blocks or --save-result JSON,
    a `vllm serve` line above the runs it served), read by the page's and the API's reader
    (app.core.perf.measured: the same limits, comparison and notes); every figure the runs measured is
    then scaled by your cluster's factors."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(MAX_RUNS_CHARS + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise PlannerError("runs", f"cannot read {path}: {exc}") from None
    pasted, notes = runs_of(text, field="runs")
    if not pasted:
        raise PlannerError("runs", f"{path} holds no 'Serving Benchmark Result' block or JSON")
    own = [a for a in (rest[: rest.index("--")] if "--" in rest else rest) if a]
    own_args, _ = _split_own(own)
    options = [x for k, v in own_args.items() for x in ((k, v) if k in _OWN_VALUED else (k,))]
    runs: list[tuple[RunComparison, Sequence[Msg]]] = []
    for run in pasted:
        m, d, s, e = base  # model, device, serve flags, estimate
        where = f"runs: line {run.start}"
        if run.command is not None:  # the configuration that run served, on the same device
            try:
                m, d, s, e = _inputs([*options, "--", *shlex.split(run.command)])
            except ValueError as exc:  # shlex: an unbalanced quote in the run's serve line
                raise PlannerError(where, f"cannot split its vllm serve line: {exc}") from None
            except PlannerError as exc:
                raise PlannerError(where, f"{exc.field}: {exc.message}") from None
        read = read_run(run, bench=bench, field="runs")
        runs.append((compared(PlannedRun(e, m, d, s, read, where)), read.notes))
    fit = fit_runs(runs, field="runs")
    if fit is None:  # not reached: the file holds a run
        raise PlannerError("runs", f"{path} holds no run")
    return fit.model_copy(update={"notes": [*notes, *fit.notes]}) if notes else fit


# `kv-planner deploy`'s own options (the rest is what `estimate` reads)
_DEPLOY_VALUED = {"--target": "kubernetes", "--replicas": "1"}


def run_deploy(argv: list[str]) -> str:
    """`kv-planner deploy`: the estimate's configuration as one deployment artifact (app/core/deploy.py)."""
    own = dict(_DEPLOY_VALUED)
    rest: list[str] = []
    i = 0
    while i < len(argv):
        name, eq, inline = argv[i].partition("=")
        if name in _DEPLOY_VALUED and "--" not in argv[:i]:
            if not eq and i + 1 >= len(argv):
                raise PlannerError(name.lstrip("-"), f"{name} needs a value")
            own[name] = inline if eq else argv[i + 1]
            i += 1 if eq else 2
            continue
        rest.append(argv[i])
        i += 1
    target = own["--target"]
    if target not in deploy.TARGETS:
        raise PlannerError("target", f"unknown target {target!r}; one of {', '.join(deploy.TARGETS)}")
    replicas = int(_number(own["--replicas"], "replicas", int))
    if replicas < 1:
        raise PlannerError("replicas", "at least 1")
    model, device, serve, est = _inputs(rest)
    plan = deploy.Plan(
        model_label=model.name,  # the catalog's id (what vLLM downloads), or the config's name
        model=model,
        device=device,
        serve=serve,
        estimate=est,
        replicas=replicas,
    )
    return deploy.render(target, plan)


def _print_perf(perf: Performance) -> None:
    def band(name: str, r: Range, unit: str) -> None:
        print(f"  {name:22s} {r.expected:10.1f} {unit:9s} ({r.low:.1f}-{r.high:.1f})")

    print(
        f"{perf.concurrency} clients x ({perf.input_tokens:,} in + {perf.output_tokens:,} out) · "
        f"basis {perf.basis} ({perf.family})"
    )
    band("TTFT", perf.ttft_ms, "ms")
    band("TPOT", perf.tpot_ms, "ms")
    band("output throughput", perf.output_tokens_per_s, "tokens/s")
    band("requests", perf.requests_per_s, "req/s")
    band("per user", perf.per_user_tokens_per_s, "tokens/s")
    cliff = perf.kv_limited_from_concurrency
    print(
        f"  running at once        {perf.running_requests} per rank (limited by {perf.limit}); "
        + ("no KV cliff" if cliff is None else f"KV cliff at {cliff} clients")
        + (" · KV-LIMITED" if perf.kv_limited else "")
    )
    print(f"  binding regime         {perf.regime}")
    if perf.bench is not None:
        print(
            f"  vllm bench serve (simulated; {perf.bench.regime} binds, {perf.bench.preemptions} preemptions,"
            f" {perf.bench.clients_in_flight:,.1f} clients in flight):"
        )
        for key in RESULT_KEYS:
            r = getattr(perf.bench, key)
            print(f"    {key:24s} {r.expected:10.2f} ({r.low:.2f}-{r.high:.2f})")
    for note in perf.notes:
        print(f"  note: {note}")


def _model(name: str) -> ModelSpec:
    """A path to a config.json or a catalog id; with KVPLAN_ALLOW_HUB=1 an id the catalog lacks is read
    from HF_ENDPOINT as the web does (app/hub.py: the same cache, limits and messages)."""
    try:
        return resolve_model(name)
    except UnknownModelError:
        spec, fetched = hub.find_model_or_fetch(name.strip())  # re-raises without the opt-in
        if fetched:
            print(f"note: {spec.name} read from {hub.endpoint()} (KVPLAN_ALLOW_HUB=1)", file=sys.stderr)
        return spec


def _quote(arg: str) -> str:
    return shlex.quote(arg)


def _print_human(est: Estimate) -> None:
    def gib(n: int) -> str:
        return f"{n / GIB:8.2f} GiB"

    rules = "" if est.vllm_rules_version == est.vllm_version else f" (rules of {est.vllm_rules_version})"
    print(
        f"{est.model} on {est.device} · vLLM {est.vllm_version}{rules} · TP {est.tensor_parallel_size} "
        f"PP {est.pipeline_parallel_size} · backend {est.attention_backend} · block {est.block_size}"
    )
    print(f"  device total        {gib(est.device_total_bytes)}")
    print(f"  budget (× {est.gpu_memory_utilization:g})     {gib(est.budget_bytes)}")
    print(f"  weights             {gib(est.weights_bytes)}")
    print(f"  activation peak     {gib(est.activation_peak_bytes)}   (modelled)")
    print(f"  non-torch           {gib(est.non_torch_bytes)}   (modelled)")
    graphs = "budgeted" if est.cuda_graph_budgeted else "outside the budget"
    print(f"  CUDA graphs         {gib(est.cuda_graph_bytes)}   (modelled, {graphs})")
    print(f"  KV cache            {gib(est.kv_cache_bytes)}")
    print(
        f"  KV per token        {est.kv_bytes_per_token:,} B · {est.num_gpu_blocks:,} blocks × "
        f"{est.bytes_per_block:,} B"
    )
    print(
        f"  KV tokens           {est.kv_tokens:,} · max concurrency at {est.max_model_len:,}: "
        f"{est.max_concurrency:.2f}x"
    )
    print(
        f"  verdict             {VERDICTS[est.verdict].label}"
        + (
            f" · largest max_model_len that starts: {est.estimated_max_model_len:,}"
            if est.estimated_max_model_len is not None
            else ""
        )
    )
    _print_extras(est)
    print("\nWhat vLLM would print:")
    for line in est.log_lines:
        print("  " + line.replace("\n", "\n  "))
    for warning in est.warnings:
        print(f"\nwarning: {warning}")


def _print_extras(est: Estimate) -> None:
    """The extras ledger (app/core/extras.py), when there is one."""
    if not est.extras:
        return
    print("\nExtras (per device; host for the whole server):")
    for item in est.extras:
        where = "inside the profile" if item.inside_profile else "after the profile"
        print(
            f"  {item.label}: device {item.device_bytes / GIB:.2f} GiB · host {item.host_bytes / GIB:.2f} GiB"
            f" · {where} · {item.flag}"
        )
        if item.note:
            print(f"    {item.note}")
        print(f"    source: {item.source}")
    if est.host_memory_bytes:
        print(f"  host memory needed    {est.host_memory_bytes / GIB:.2f} GiB")


def _cmd_models() -> None:
    for entry in catalog.list_models():
        aliases = ", ".join(entry.aliases[:3])
        print(f"{entry.id:55s} {entry.params_total / 1e9:8.1f}B  {entry.confidence:9s} {aliases}")


def _cmd_devices() -> None:
    for device in catalog.list_devices():
        print(
            f"{device.id:38s} {device.memory_total_bytes / GIB:8.2f} GiB  {device.platform:5s} {device.name}"
        )


MAX_WORKERS = 64
Answer = TypeVar("Answer", bound=BaseModel)  # what `estimate` / `perf` print


def default_workers() -> int:
    """One worker per CPU (a request is CPU-bound Python: one process can use one core), at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


def _help_asked(rest: list[str]) -> bool:
    return any(a in ("-h", "--help") for a in rest)


def _report(rest: list[str], run: Callable[[list[str]], Answer], show: Callable[[Answer], None]) -> int:
    """`estimate` / `perf`: the answer as JSON with ``--json`` (wherever it stands), else the summary."""
    if _help_asked(rest):
        print(__doc__)
        return 0
    answer = run([a for a in rest if a != "--json"])
    if "--json" in rest:
        print(json.dumps(answer.model_dump(), indent=2))
    else:
        show(answer)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    try:
        if command == "estimate":
            return _report(rest, run_estimate, _print_human)
        if command == "perf":
            return _report(rest, run_perf, _print_perf)
        if command == "deploy":
            if _help_asked(rest):
                print(__doc__)
                return 0
            sys.stdout.write(run_deploy(rest))
            return 0
        if command == "models":
            _cmd_models()
            return 0
        if command == "devices":
            _cmd_devices()
            return 0
        if command == "serve":
            parser = argparse.ArgumentParser(prog="kv-planner serve", allow_abbrev=False)
            parser.add_argument("--host", default="127.0.0.1")
            parser.add_argument("--port", type=int, default=8000)
            parser.add_argument("--root-path", default="")
            parser.add_argument(
                "--workers",
                type=int,
                default=default_workers(),
                help="processes sharing the port (default: one per CPU, at most 4)",
            )
            opts = parser.parse_args(rest)
            if not 1 <= opts.workers <= MAX_WORKERS:
                parser.error(f"--workers must be 1 to {MAX_WORKERS}")
            from app.web.server import run

            run(host=opts.host, port=opts.port, root_path=opts.root_path, workers=opts.workers)
            return 0
    except PlannerError as exc:
        print(f"error: {exc.field}: {exc.message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `kv-planner … | head`
        return 0
    print(f"error: unknown command {command!r}\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
