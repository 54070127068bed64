"""The request's CPU budget (app.core.deadline): what a spent budget names, and the simulator reading it.

A budget of -1 s is spent at its first check, so these tests hold no clock in an assertion."""

from __future__ import annotations

import pytest

from app.core import deadline
from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf.bench_args import BenchArgs
from app.core.perf.predict import performance
from app.core.perf.schedule import Workload
from app.core.perf.simulate import DEADLINE_EVERY_TURNS
from app.core.specs import ServeConfig


def test_naming_relabels_the_open_budget_and_keeps_its_clock() -> None:
    with deadline.naming(field="bench.num_prompts", advice="fewer prompts"):
        deadline.check()  # no budget open: relabelling opens none
    with deadline.cpu_budget(seconds=-1.0, field="config_json", advice="fewer layers"):
        with (
            deadline.naming(field="bench.num_prompts", advice="fewer prompts"),
            pytest.raises(deadline.WorkBudgetError) as inner,
        ):
            deadline.check()
        assert (inner.value.field, inner.value.message.endswith("fewer prompts")) == (
            "bench.num_prompts",
            True,
        )
        with pytest.raises(deadline.WorkBudgetError) as outer:
            deadline.check()  # out of the block: the path's own field again
        assert outer.value.field == "config_json"


def test_a_simulated_benchmark_stops_at_the_budget_naming_num_prompts() -> None:
    # Before: the simulator never read the budget, so /api/performance with 100,000 prompts and 65,536
    # clients ran 14.8 s of CPU (bench/data/hostile_cpu/before-d041b4f.txt) until MAX_TURNS refused it.
    model = find_model("meta-llama/Llama-3.1-8B-Instruct")
    device = find_device("h100")
    serve = ServeConfig(max_model_len=4096)
    planned = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")  # outside any budget
    # 4,096 prompts of 1,024 + 128 tokens: some 16,000 turns, over DEADLINE_EVERY_TURNS (1,024)
    bench = BenchArgs(num_prompts=4096)
    kwargs = {"estimate": planned, "model": model, "device": device, "serve": serve, "with_curve": False}
    workload = Workload(input_tokens=1024, output_tokens=128, concurrency=16)
    assert DEADLINE_EVERY_TURNS < 4096
    answered = performance(**kwargs, workload=workload, bench=bench)  # type: ignore[arg-type]
    assert answered.bench is not None  # without a budget the same run answers
    with (
        deadline.cpu_budget(seconds=-1.0, field="config_json", advice="fewer layers"),
        pytest.raises(deadline.WorkBudgetError) as spent,
    ):
        performance(**kwargs, workload=workload, bench=bench)  # type: ignore[arg-type]
    assert spent.value.field == "bench.num_prompts"
    assert "fewer prompts (num_prompts) or fewer clients (max_concurrency)" in spent.value.message


def test_the_log_reader_stops_at_the_budget() -> None:
    # Before: 60,000 KV lines (4.5 MB, under the 5 MiB body cap) took 3.0 s of CPU in /api/diagnose,
    # past its 1.5 s budget, because the reader never read it (bench/hostile_cpu.py "doctor").
    from app.core.logs.startup.parser import DEADLINE_EVERY_LINES, parse_startup_log

    log = "INFO 12-01 10:00:00 [gpu_worker.py:1] GPU KV cache size: 1,000 tokens\n" * (
        2 * DEADLINE_EVERY_LINES
    )
    assert parse_startup_log(log).recognised_lines == 2 * DEADLINE_EVERY_LINES  # no budget: read whole
    with (
        deadline.cpu_budget(seconds=-1.0, field="log", advice="a shorter log"),
        pytest.raises(deadline.WorkBudgetError) as spent,
    ):
        parse_startup_log(log)
    assert spent.value.field == "log"


class _LineClock:
    """A fake CPU clock for app.core.deadline that advances ``per_line_s`` for every line a reader takes
    up, so these tests count work, not wall time."""

    def __init__(self, per_line_s: float) -> None:
        self.per_line_s = per_line_s
        self.lines = 0

    def thread_time(self) -> float:
        return self.lines * self.per_line_s

    def tick(self, value: object) -> object:
        self.lines += 1
        return value


# One line of each kind a 4.8 MB doctor paste can repeat (round 11: a repeated `vllm serve` line ran 6.2 s
# of CPU and answered 200, because the reader read the budget only on recognised log lines; a plain line
# and a config line never read it either)
LINE_KINDS = {
    "command": "vllm serve meta-llama/Llama-3.1-8B --max-model-len 8192 --gpu-memory-utilization 0.9\n",
    "kv": "INFO 12-01 10:00:00 [gpu_worker.py:1] GPU KV cache size: 1,000 tokens\n",
    "plain": "hello world, a line that matches no rule\n",
    "continued command": "vllm serve m \\\n  --max-model-len 4096 \\\n",
    "engine config": "INFO 12-01 10:00:00 [core.py:1] Initializing a V1 LLM engine (v0.19.0) with config: "
    "model='m', tensor_parallel_size=1, max_seq_len=8192\n",
}


@pytest.mark.parametrize("kind", sorted(LINE_KINDS))
def test_the_log_reader_reads_the_budget_on_every_kind_of_line(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.logs.startup import parser

    clock = _LineClock(per_line_s=0.001)  # 1 ms a line: a 0.1 s budget is spent after 100 lines
    monkeypatch.setattr(deadline, "time", clock)
    real = parser.strip_ansi  # called once for every line the reader takes up
    monkeypatch.setattr(parser, "strip_ansi", lambda line: clock.tick(real(line)))
    log = LINE_KINDS[kind] * (20 * parser.DEADLINE_EVERY_LINES)
    with (
        deadline.cpu_budget(seconds=0.1, field="log", advice="a shorter log"),
        pytest.raises(deadline.WorkBudgetError),
    ):
        parser.parse_startup_log(log)
    # spent after 100 lines, so stopped within one reading interval of it (64 lines), never at the end
    assert 100 < clock.lines <= 100 + parser.DEADLINE_EVERY_LINES + 1


def test_the_metrics_reader_reads_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.logs import metrics

    clock = _LineClock(per_line_s=0.001)
    monkeypatch.setattr(deadline, "time", clock)
    real = metrics.numbered_lines
    monkeypatch.setattr(metrics, "numbered_lines", lambda text: (clock.tick(x) for x in real(text)))
    scrape = 'vllm:num_requests_running{engine="0"} 1\n' * (20 * metrics.DEADLINE_EVERY_LINES)
    with (
        deadline.cpu_budget(seconds=0.1, field="metrics", advice="a shorter scrape"),
        pytest.raises(deadline.WorkBudgetError),
    ):
        metrics.parse_metrics(scrape)
    assert 100 < clock.lines <= 100 + metrics.DEADLINE_EVERY_LINES + 1


def test_the_doctor_reads_the_budget_between_its_phases(monkeypatch: pytest.MonkeyPatch) -> None:
    # a case recovery that spends the budget: the trials (estimates) are never started
    from app.core.diagnose import verdict

    clock = _LineClock(per_line_s=1.0)
    monkeypatch.setattr(deadline, "time", clock)
    real_recover = verdict.recover_case
    monkeypatch.setattr(verdict, "recover_case", lambda *a: clock.tick(real_recover(*a)))
    trials: list[object] = []
    monkeypatch.setattr(verdict, "largest_fitting", lambda case: trials.append(case))
    log = "INFO 12-01 10:00:00 [gpu_worker.py:1] GPU KV cache size: 1,000 tokens\n"
    with (
        deadline.cpu_budget(seconds=0.5, field="log", advice="a shorter log"),
        pytest.raises(deadline.WorkBudgetError),
    ):
        verdict.diagnose(log_text=log, metrics_text=None)
    assert (clock.lines, trials) == (1, [])
