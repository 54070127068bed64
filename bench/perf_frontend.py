"""``+frontend`` (bench/perf_loso.py): the API server's serial time per request
(physics.Coefficients.frontend_request_s), chosen with the simulation's TTFT overhead on the training
sources, every source one vote.

Why (bench/perf_harness.py, round 11): held out by source, closed-loop runs come out unbiased on TTFT
(median of 21 sources' median log residual +0.04) while bursts (`--request-rate inf`, every prompt at
t = 0, 12 sources) come out too fast (+0.37, 1.45x) and so do their throughputs (+0.28). The model let a
burst's N requests reach the scheduler together after the same per-request latency; vLLM's API server (one
process, one event loop: HTTP, validation, template, tokenisation, the engine request's build and send)
takes them one after another. ovg-project's 500-prompt burst of 512-token prompts on one H100 (Qwen3-0.6B)
measured TTFT 2,905 ms with TPOT 5.45 ms where the model said 375 ms and 48 ms: the engine never saw the
500 at once; requests that trickle in about 11.6 ms apart (2,905 / 250) keep the batch small.

``+streams`` (round 13b): the API server's work per running stream, charged to each new request's
admission (physics.Coefficients.frontend_stream_s). Why (docs/accuracy.md, round 13): the shared file's
closed loops at 1,024-token prompts wait 3-9 decode steps more for their first token than simulated, more
with more clients, while TPOT is right; the event loop that takes a new request also turns every engine
step's outputs into each running stream's SSE chunk (vLLM 0.33.0 v1/engine/async_llm.py,
AsyncLLM._run_output_handler).
"""

from __future__ import annotations

FRONTEND_OPTION = "+frontend"
# 0-8 ms a request: from a small tokenizer on a fast host (vLLM's own 0.x benchmarks' front end is about
# 1 ms a request) to the 11.6 ms the ovg-project burst implies
FRONTEND_GRID_S = (0.0, 0.5e-3, 1e-3, 2e-3, 4e-3, 8e-3)


STREAMS_OPTION = "+streams"
# 0-2 ms a running stream: Python's detokenise-and-send of one stream's step output is tens of us; the
# top of the grid is what the round-13 excess would need with one step's backlog (B200, 32 clients,
# 1,024-token prompts: 83 ms above the simulation, 2.6 ms a client)
STREAMS_GRID_S = (0.0, 25e-6, 50e-6, 100e-6, 200e-6, 400e-6, 800e-6, 1.6e-3)


def streams_grid(mode: str) -> tuple[float, ...]:
    """The per-stream front-end times a mode tries: the grid with ``+streams``, else none (0)."""
    return STREAMS_GRID_S if STREAMS_OPTION in mode else (0.0,)


def frontend_grid(mode: str) -> tuple[float, ...]:
    """The serial per-request times a mode tries: the grid with ``+frontend``, else none (0)."""
    return FRONTEND_GRID_S if FRONTEND_OPTION in mode else (0.0,)
