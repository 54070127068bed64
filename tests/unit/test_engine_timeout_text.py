"""The API server's give-up on the engine cores, as each release words it (v1/engine/core_client.py, the
``sync_input_socket.poll(timeout=VLLM_ENGINE_READY_TIMEOUT_S * 1000)`` of the client's start-up handshake):

- 0.10.1.1, 0.11.0, 0.13.0, 0.14.0, 0.15.0: "Timed out waiting for engines to send initial message on input socket."
- 0.17.0, 0.18.0, 0.19.0, 0.22.0, 0.33.0: f"Timed out waiting for engine core processes to start. This is often
  caused by slow weight loading for large models. Waited {VLLM_ENGINE_READY_TIMEOUT_S}s (configured by
  VLLM_ENGINE_READY_TIMEOUT_S). ..." (envs.py default 600).

Either is a failed start even when the engine goes on to "init engine … took" (failures.py _server_died). The
elastic-EP scale-up's "Timed out waiting for new engine(s) / new engine core processes" is not a start-up line.
"""

from __future__ import annotations

import re

import pytest

from app.core import vllm_text_failures as vf
from app.core.diagnose import diagnose
from app.core.logs import parse_startup_log

# 0.17.0 core_client.py's f-string with envs.py's default VLLM_ENGINE_READY_TIMEOUT_S = 600
TIMEOUT_0_17 = (
    "TimeoutError: Timed out waiting for engine core processes to start. This is often caused by slow weight "
    "loading for large models. Waited 600s (configured by VLLM_ENGINE_READY_TIMEOUT_S). To increase the timeout, "
    "set the environment variable: VLLM_ENGINE_READY_TIMEOUT_S=<seconds>"
)
TIMEOUT_0_15 = "TimeoutError: Timed out waiting for engines to send initial message on input socket."
LATER = (
    "(EngineCore_DP0 pid=10314) INFO 02-27 15:02:23 [kv_cache_utils.py:1307] GPU KV cache size: 249,216 tokens\n"
    "(EngineCore_DP0 pid=10314) INFO 02-27 15:02:31 [core.py:278] init engine (profile, create kv cache, warmup "
    "model) took 63.98 seconds\n"
)


@pytest.mark.parametrize("line", [TIMEOUT_0_15, TIMEOUT_0_17])
def test_the_api_servers_timeout_fails_the_start_in_either_wording(line: str) -> None:
    text = f"(APIServer pid=10466) {line}\n{LATER}"
    facts = parse_startup_log(text)
    assert (facts.kv_tokens, facts.error_kind, facts.engine) == (249216, "startup_failed", "v1")
    verdict = diagnose(log_text=text, metrics_text=None, target_concurrency=None, device_hint=None).verdict
    assert verdict == "failed"


def test_each_release_text_has_its_template_and_the_scale_up_line_none() -> None:
    assert (
        vf.ENGINES_TIMEOUT.printed == "Timed out waiting for engines to send initial message on input socket."
    )
    assert vf.ENGINE_CORES_TIMEOUT.printed.startswith("Timed out waiting for engine core processes to start.")
    scale_up = "Timed out waiting for new engine core processes to start. Waited 600s"
    for template in (vf.ENGINES_TIMEOUT, vf.ENGINE_CORES_TIMEOUT):
        assert re.search(template.pattern, scale_up) is None
