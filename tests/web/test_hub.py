"""The opt-in model hub against a stand-in hub on 127.0.0.1, over real HTTP.

The stand-in serves meta-llama/Llama-3.1-8B's real config.json (model_specs/meta_llama_llama_3.1_8b.yaml)
under an id the catalog lacks, and that model's real model.safetensors.index.json metadata:
"total_size": 16060522496 (= 8,030,261,248 parameters x 2 bytes of bf16; the figure Hugging Face's
transformers docs print for the Llama-3 8B index).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from app import hub
from app.cli import main
from app.resources import Data, directory
from app.web.app import create_app
from tests.web.conftest import TestClient


def clear_memory() -> None:
    """Forget what this process fetched from the hub and refill its rate bucket (a new process; the
    disk cache stays)."""
    with hub._lock:
        hub._specs.clear()
        hub._failures.clear()
        hub._bucket = hub._Bucket(hub.FETCH_RATE_PER_S, hub.FETCH_BURST)
        hub.stats["network_fetches"] = 0


def memory_sizes() -> dict[str, int]:
    with hub._lock:
        return {"specs": len(hub._specs), "failures": len(hub._failures), "in_flight": len(hub._inflight)}


LLAMA_CONFIG: dict[str, Any] = yaml.safe_load(
    (directory(Data.MODEL_SPECS) / "meta_llama_llama_3.1_8b.yaml").read_text(encoding="utf-8")
)["config"]
LLAMA_8B_INDEX_TOTAL_SIZE = 16_060_522_496
# 2 (K and V) x 32 layers x 8 KV heads x 128 head size x 2 bytes (bf16)
LLAMA_8B_KV_BYTES_PER_TOKEN = 131_072
REPO = "acme/Llama-3.1-8B-support-ft"  # not in the catalog
CURRENT = Path(__file__).resolve().parents[1] / "data" / "configs" / "current"
CONFIG_PATH = f"/{REPO}/resolve/main/config.json"
GATE_SECONDS = 30.0  # a gated stand-in request is answered after this even if the test never opens it
INDEX_PATH = f"/{REPO}/resolve/main/model.safetensors.index.json"
# asked for only when config.json has no quantization_config (vLLM transformers_utils/config.py); 404 here
QUANT_PATH = f"/{REPO}/resolve/main/hf_quant_config.json"


@dataclass
class StandIn:
    """Routes: path -> (status, body, extra headers); every request is recorded."""

    routes: dict[str, tuple[int, bytes, dict[str, str]]] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    delay_seconds: float = 0.0
    base: str = ""
    # when set, a request is held until the test sets it (at most GATE_SECONDS): "slow" without a clock
    gate: threading.Event | None = None
    answered: int = 0  # requests answered so far
    # when set, every answer is a 200 whose body drips one byte per this many seconds (until stopped)
    drip_seconds: float = 0.0
    stop: threading.Event = field(default_factory=threading.Event)

    def json(self, path: str, data: Any, status: int = 200) -> None:
        self.routes[path] = (status, json.dumps(data).encode(), {"Content-Type": "application/json"})


def _serve(standin: StandIn) -> Iterator[StandIn]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            standin.requests.append((self.path, self.headers.get("Authorization")))
            if standin.delay_seconds:
                time.sleep(standin.delay_seconds)
            if standin.gate is not None:
                standin.gate.wait(GATE_SECONDS)
            if standin.drip_seconds:
                self._drip()
                return
            status, body, headers = standin.routes.get(self.path, (404, b"Entry not found", {}))
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            standin.answered += 1

        def _drip(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            with contextlib.suppress(OSError):
                while not standin.stop.wait(standin.drip_seconds):
                    self.wfile.write(b" ")
                    self.wfile.flush()

        def log_message(self, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a client that stopped reading early (the index's metadata was enough) is not an error

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    standin.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield standin
    finally:
        standin.stop.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def standin() -> Iterator[StandIn]:
    yield from _serve(StandIn())


@pytest.fixture
def other_host() -> Iterator[StandIn]:
    yield from _serve(StandIn())


@pytest.fixture
def opted_in(standin: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StandIn:
    monkeypatch.setenv("KVPLAN_ALLOW_HUB", "1")
    monkeypatch.setenv("HF_ENDPOINT", standin.base)
    monkeypatch.setenv("KVPLAN_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    clear_memory()
    standin.json(CONFIG_PATH, LLAMA_CONFIG)
    standin.json(INDEX_PATH, {"metadata": {"total_size": LLAMA_8B_INDEX_TOTAL_SIZE}, "weight_map": {}})
    yield standin
    clear_memory()


def _estimate(client: TestClient, model: str) -> Any:
    return client.get("/api/estimate", params={"model": model, "device": "h100", "max_model_len": 8192})


def test_without_the_opt_in_nothing_is_fetched_and_the_id_is_a_4xx(
    client: TestClient, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KVPLAN_ALLOW_HUB", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", standin.base)
    standin.json(CONFIG_PATH, LLAMA_CONFIG)
    response = _estimate(client, REPO)
    assert response.status_code == 422
    assert f"unknown model '{REPO}'" in response.text
    assert standin.requests == []


def test_an_id_the_catalog_lacks_is_planned_from_the_fetched_config(
    client: TestClient, opted_in: StandIn
) -> None:
    response = _estimate(client, REPO)
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["inputs"]["model_source"] == "hub"
    assert result["weights_bytes"] == LLAMA_8B_INDEX_TOTAL_SIZE
    assert result["kv_bytes_per_token"] == LLAMA_8B_KV_BYTES_PER_TOKEN
    assert [path for path, _ in opted_in.requests] == [CONFIG_PATH, INDEX_PATH, QUANT_PATH]
    # the same estimate as the catalog's own Llama-3.1-8B
    catalog = _estimate(client, "meta-llama/Llama-3.1-8B").json()
    assert (result["num_gpu_blocks"], result["kv_tokens"]) == (
        catalog["num_gpu_blocks"],
        catalog["kv_tokens"],
    )


def test_weights_come_from_the_index_total_size_when_there_is_one(opted_in: StandIn) -> None:
    spec = hub.hub_model(hub.HubRef(REPO, "main"))
    assert spec.weights_bytes_exact == LLAMA_8B_INDEX_TOTAL_SIZE
    assert spec.source == opted_in.base + CONFIG_PATH
    # a single-file checkpoint has no index (404): weights from the parameter count instead
    commit = "0123456789abcdef0123456789abcdef01234567"
    opted_in.json(f"/{REPO}/resolve/{commit}/config.json", LLAMA_CONFIG)
    other = hub.hub_model(hub.HubRef(REPO, commit))
    assert opted_in.requests[-2][0] == f"/{REPO}/resolve/{commit}/model.safetensors.index.json"
    assert other.weights_bytes_exact is None and other.params_total == 8_030_261_248


def test_fetched_models_are_cached_in_memory_and_on_disk(client: TestClient, opted_in: StandIn) -> None:
    assert _estimate(client, REPO).status_code == 200
    assert _estimate(client, REPO).status_code == 200
    assert len(opted_in.requests) == 3  # config + index + hf_quant_config.json (404), once
    clear_memory()  # a new process: the disk cache answers
    assert _estimate(client, REPO).status_code == 200
    assert len(opted_in.requests) == 3
    (entry,) = hub.cache_dir().glob("*.json")
    cached = json.loads(entry.read_text())
    assert cached["index_metadata"] == {"total_size": LLAMA_8B_INDEX_TOTAL_SIZE}  # not the weight map


def test_an_hf_quant_config_beside_the_config_sets_the_kv_dtype(opted_in: StandIn) -> None:
    # nvidia/Llama-3.1-70B-Instruct-FP8's hf_quant_config.json (tests/data/configs/current): producer
    # modelopt, quant_algo FP8, kv_cache_quant_algo FP8 -> vLLM 0.33.0 plans `auto` KV as fp8_e4m3
    quant = json.loads(
        (CURRENT / "nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant_config.json").read_text(encoding="utf-8")
    )
    commit = "89abcdef0123456789abcdef0123456789abcdef"
    opted_in.json(f"/{REPO}/resolve/{commit}/config.json", LLAMA_CONFIG)
    opted_in.json(f"/{REPO}/resolve/{commit}/hf_quant_config.json", quant)
    spec = hub.hub_model(hub.HubRef(REPO, commit))
    assert spec.quantization is not None and spec.quantization.kv_cache_dtype == "fp8_e4m3"


def test_a_revision_is_addressed_as_the_hub_does(client: TestClient, opted_in: StandIn) -> None:
    opted_in.json(f"/{REPO}/resolve/refs%2Fpr%2F3/config.json", LLAMA_CONFIG)
    response = _estimate(client, f"{REPO}@refs/pr/3")
    assert response.status_code == 200, response.text
    assert opted_in.requests[0][0] == f"/{REPO}/resolve/refs%2Fpr%2F3/config.json"


def test_a_gated_model_needs_hf_token_which_is_sent_to_the_endpoint(
    client: TestClient, opted_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    opted_in.routes[CONFIG_PATH] = (401, b'{"error":"Access to model is restricted"}', {})
    response = _estimate(client, REPO)
    assert response.status_code == 422
    assert "gated or private model needs HF_TOKEN" in response.text
    assert opted_in.requests[0][1] is None
    # with a token the hub answers (here: the stand-in only checks that it arrived)
    opted_in.json(CONFIG_PATH, LLAMA_CONFIG)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    clear_memory()
    assert _estimate(client, REPO).status_code == 200
    assert opted_in.requests[-1][1] == "Bearer hf_test_token"


def test_a_redirect_to_another_host_is_refused_and_never_followed(
    client: TestClient, opted_in: StandIn, other_host: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    other_host.json(CONFIG_PATH, LLAMA_CONFIG)
    opted_in.routes[CONFIG_PATH] = (302, b"", {"Location": other_host.base + CONFIG_PATH})
    response = _estimate(client, REPO)
    assert response.status_code == 422
    assert f"{REPO}: the hub redirected config.json to another host" in response.text
    assert opted_in.base not in response.text and other_host.base not in response.text  # no URL named
    assert other_host.requests == []


def test_a_renamed_repository_redirect_on_the_same_host_is_followed(
    client: TestClient, opted_in: StandIn
) -> None:
    old = "/acme/old-name/resolve/main/config.json"
    opted_in.routes[old] = (307, b"", {"Location": CONFIG_PATH})
    opted_in.routes["/acme/old-name/resolve/main/model.safetensors.index.json"] = (
        307,
        b"",
        {"Location": INDEX_PATH},
    )
    response = _estimate(client, "acme/old-name")
    assert response.status_code == 200, response.text
    assert response.json()["weights_bytes"] == LLAMA_8B_INDEX_TOTAL_SIZE


def test_a_gated_renamed_repository_keeps_its_token_on_the_same_host(
    client: TestClient, opted_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    opted_in.routes["/acme/old-gated/resolve/main/config.json"] = (307, b"", {"Location": CONFIG_PATH})
    assert _estimate(client, "acme/old-gated").status_code == 200
    assert (CONFIG_PATH, "Bearer hf_test_token") in opted_in.requests


def test_a_corrupt_cache_entry_is_fetched_again(client: TestClient, opted_in: StandIn) -> None:
    assert _estimate(client, REPO).status_code == 200
    (entry,) = hub.cache_dir().glob("*.json")
    entry.write_text('{"format": 1, "fetched_at": 1e18, "config": {"a": 1}}')  # no source
    clear_memory()
    assert _estimate(client, REPO).status_code == 200
    assert len(opted_in.requests) == 6  # config + index + hf_quant_config.json, twice


def test_a_missing_model_a_huge_file_and_a_slow_hub_each_get_a_clear_message(
    client: TestClient, opted_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    response = _estimate(client, "acme/no-such-model")
    assert response.status_code == 422
    assert (
        "acme/no-such-model is not in the catalog and" in response.text and "was not found" in response.text
    )

    opted_in.routes[CONFIG_PATH] = (200, b" " * (hub.CONFIG_MAX_BYTES + 1), {})
    clear_memory()
    response = _estimate(client, REPO)
    assert response.status_code == 422 and "is larger than 8,388,608 bytes" in response.text

    opted_in.json(CONFIG_PATH, LLAMA_CONFIG)
    monkeypatch.setattr(hub, "TIMEOUT_SECONDS", 0.2)
    opted_in.delay_seconds = 1.0
    clear_memory()
    response = _estimate(client, REPO)
    assert response.status_code == 422 and "did not answer config.json within 0.2 s" in response.text

    opted_in.delay_seconds = 0.0
    opted_in.routes[CONFIG_PATH] = (200, b"[1, 2]", {})
    clear_memory()
    response = _estimate(client, REPO)
    assert response.status_code == 422 and "top level must be a JSON object" in response.text


def test_a_config_the_planner_cannot_read_names_the_model(client: TestClient, opted_in: StandIn) -> None:
    opted_in.json(CONFIG_PATH, {"model_type": "llama"})  # no layers, heads or sizes
    response = _estimate(client, REPO)
    assert response.status_code == 422
    assert f"the config.json of {REPO} cannot be read" in response.text


@pytest.mark.parametrize("model", ["no-slash", "../etc/passwd", "a/../b", "a/b/c", "a/b@..", "-a/b"])
def test_what_is_not_a_hub_id_is_never_fetched(client: TestClient, opted_in: StandIn, model: str) -> None:
    assert _estimate(client, model).status_code == 422
    assert opted_in.requests == []


def test_the_page_says_where_the_model_came_from(client: TestClient, opted_in: StandIn) -> None:
    page = client.get("/", params={"v": 1, "model": REPO, "device": "h100"}).text
    assert f"Model {REPO} read from the hub ({opted_in.base}{CONFIG_PATH})" in page
    zh_client = TestClient(create_app())  # its own: lang=zh sets a cookie
    page = zh_client.get("/", params={"v": 1, "model": REPO, "device": "h100", "lang": "zh"}).text
    assert f"模型 {REPO} 从模型仓库读取（{opted_in.base}{CONFIG_PATH}）" in page


# --- the CLI, and the event loop ---------------------------------------------------------------------


def test_the_cli_plans_a_hub_id_like_the_web(opted_in: StandIn, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["estimate", REPO, "--device", "h100", "--max-model-len", "8192", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    result = json.loads(captured.out)
    assert result["weights_bytes"] == LLAMA_8B_INDEX_TOTAL_SIZE
    assert result["kv_bytes_per_token"] == LLAMA_8B_KV_BYTES_PER_TOKEN
    assert f"read from {opted_in.base}" in captured.err
    assert [path for path, _ in opted_in.requests] == [CONFIG_PATH, INDEX_PATH, QUANT_PATH]
    # the same numbers as the catalog's own Llama-3.1-8B, from the terminal
    assert (
        main(["estimate", "meta-llama/Llama-3.1-8B", "--device", "h100", "--max-model-len", "8192", "--json"])
        == 0
    )
    catalog = json.loads(capsys.readouterr().out)
    assert (result["num_gpu_blocks"], result["kv_tokens"]) == (
        catalog["num_gpu_blocks"],
        catalog["kv_tokens"],
    )
    # the `-- vllm serve …` form reads the same cache: no new request
    assert (
        main(
            ["estimate", "--device", "h100", "--json", "--", "vllm", "serve", REPO, "--max-model-len", "8192"]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["weights_bytes"] == LLAMA_8B_INDEX_TOTAL_SIZE
    assert len(opted_in.requests) == 3


def test_the_cli_without_the_opt_in_fetches_nothing(
    standin: StandIn, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("KVPLAN_ALLOW_HUB", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", standin.base)
    standin.json(CONFIG_PATH, LLAMA_CONFIG)
    assert main(["estimate", REPO, "--device", "h100"]) == 2
    assert f"unknown model '{REPO}'" in capsys.readouterr().err
    assert standin.requests == []


def test_the_cli_says_why_a_fetch_failed(opted_in: StandIn, capsys: pytest.CaptureFixture[str]) -> None:
    opted_in.routes[CONFIG_PATH] = (401, b'{"error":"Access to model is restricted"}', {})
    assert main(["estimate", REPO, "--device", "h100"]) == 2
    assert "gated or private model needs HF_TOKEN" in capsys.readouterr().err


@pytest.mark.parametrize(
    "path",
    ["/api/estimate?device=h100&max_model_len=8192&model=", "/?v=1&device=h100&model="],
    ids=["api", "page"],
)
def test_a_slow_first_fetch_does_not_stall_the_event_loop(opted_in: StandIn, path: str) -> None:
    """The stand-in holds the config.json request until the test opens the gate. One event loop serves
    every request (TestClient as a context manager runs the app on one portal): while the fetch waits,
    /healthz must answer. Were the fetch on the loop, /healthz would wait for it, and the fetch would
    finish (or time out) first: the ordering below is the test, no clock is read."""
    opted_in.gate = threading.Event()
    with TestClient(create_app()) as client:
        slow: dict[str, int] = {}
        worker = threading.Thread(target=lambda: slow.update(status=client.get(path + REPO).status_code))
        worker.start()
        while not opted_in.requests:  # the fetch has reached the hub and is held there
            time.sleep(0.01)
        health = client.get("/healthz")
        assert health.status_code == 200
        assert opted_in.answered == 0 and "status" not in slow  # the fetch is still held
        opted_in.gate.set()
        worker.join(GATE_SECONDS)
    assert slow["status"] == 200


# --- the hub as a client that cannot be turned against the server (issue 27) --------------------------


@pytest.mark.parametrize("model", ["ok/a\n@main", "ok/a@main\n", "ok/a\n", "ok/a@ma\nin", "ok/a@main\x00"])
def test_an_id_with_a_line_break_is_a_4xx_not_a_fetch(
    client: TestClient, opted_in: StandIn, model: str
) -> None:
    assert hub.parse_ref(model.replace("\n", "").replace("\x00", "")) is not None  # the rest is an id
    assert hub.parse_ref(model) is None or model.strip() != model  # strip() drops only a trailing \n
    for path in ("/api/estimate", "/"):
        response = client.get(path, params={"model": model, "device": "h100"})
        assert response.status_code in (200, 422), response.text  # the page shows the error inline
    assert all("\n" not in path for path, _ in opted_in.requests)


def test_a_deeply_nested_config_is_refused_before_it_is_parsed(client: TestClient, opted_in: StandIn) -> None:
    opted_in.routes[CONFIG_PATH] = (200, b"[" * 1_000_000, {})  # json.loads: RecursionError, a 500 before
    response = _estimate(client, REPO)
    assert response.status_code == 422
    assert f"{REPO}: config.json is nested deeper than 64 levels; not read" in response.text


def test_only_the_leading_metadata_of_the_index_is_parsed(
    client: TestClient, opted_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index of 10^5 tensors (4.4 MB): its metadata comes first, so the weight map is never parsed."""
    weight_map = {f"model.layers.{i}.weight": "model-00001-of-00009.safetensors" for i in range(100_000)}
    index = {"metadata": {"total_size": LLAMA_8B_INDEX_TOTAL_SIZE}, "weight_map": weight_map}
    opted_in.json(INDEX_PATH, index)
    assert len(opted_in.routes[INDEX_PATH][1]) > hub.INDEX_SCAN_BYTES
    parsed: list[int] = []
    real_loads = json.loads

    def counting_loads(text: str | bytes, **kw: Any) -> Any:
        parsed.append(len(text))
        return real_loads(text, **kw)

    monkeypatch.setattr(hub.json, "loads", counting_loads)
    response = _estimate(client, REPO)
    assert response.status_code == 200, response.text
    assert response.json()["weights_bytes"] == LLAMA_8B_INDEX_TOTAL_SIZE
    assert max(parsed) < 20_000  # the config (~1 KB) and '{"total_size": 16060522496}', nothing larger


def test_an_index_whose_metadata_is_not_first_gives_weights_from_the_parameter_count() -> None:
    assert hub.leading_metadata(b' {"metadata": {"total_size": 5}, "weight_map": {') == (
        True,
        b'{"total_size": 5}',
    )
    assert hub.leading_metadata(b'{"metad') == (False, None)  # more bytes may complete it
    assert hub.leading_metadata(b'{"weight_map": {"a": "b"}, "metadata": {}}') == (True, None)
    assert hub.leading_metadata(b'{"metadata": {"format": "pt", "note": "a } in a string"}}') == (
        True,
        b'{"format": "pt", "note": "a } in a string"}',
    )


def test_fifty_requests_for_one_id_cause_one_fetch(opted_in: StandIn) -> None:
    opted_in.gate = threading.Event()
    results: list[object] = []

    def ask() -> None:
        try:
            results.append(hub.hub_model(hub.HubRef(REPO, "main")).weights_bytes_exact)
        except hub.HubError as exc:
            results.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(50)]
    for thread in threads:
        thread.start()
    while not opted_in.requests:
        time.sleep(0.01)
    opted_in.gate.set()
    for thread in threads:
        thread.join(GATE_SECONDS)
    assert results == [LLAMA_8B_INDEX_TOTAL_SIZE] * 50
    assert [path for path, _ in opted_in.requests] == [CONFIG_PATH, INDEX_PATH, QUANT_PATH]
    assert hub.stats["network_fetches"] >= 1 and memory_sizes()["in_flight"] == 0


def test_with_every_fetch_worker_busy_a_new_id_is_refused_at_once(
    client: TestClient, opted_in: StandIn
) -> None:
    opted_in.gate = threading.Event()
    held = [hub.spec_future(hub.HubRef(f"acme/held-{i}", "main")) for i in range(hub.FETCH_WORKERS)]
    response = _estimate(client, "acme/one-more")
    assert response.status_code == 422
    assert f"the hub is busy with {hub.FETCH_WORKERS} other models; try acme/one-more again" in response.text
    opted_in.gate.set()
    for future in held:
        with contextlib.suppress(hub.HubError):
            future.result(GATE_SECONDS)
    assert _estimate(client, "acme/one-more").status_code == 422  # busy was not remembered: asked again
    assert "was not found on the hub" in _estimate(client, "acme/one-more").text


def test_a_hub_that_drips_bytes_is_cut_off_at_the_total_deadline(opted_in: StandIn) -> None:
    """One byte every 0.05 s never trips the 5 s per-read timeout; only the socket deadline ends it."""
    opted_in.drip_seconds = 0.05
    with pytest.raises(hub.HubError, match=rf"{REPO}: the hub did not answer config.json within 1 s"):
        hub.fetch(hub.HubRef(REPO, "main"), base=opted_in.base, seconds=1.0)
    assert len(opted_in.requests) <= 1  # config.json only (on a loaded machine it may not be logged yet)


def test_a_hub_that_never_answers_is_a_4xx_naming_the_id(
    client: TestClient, opted_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    opted_in.gate = threading.Event()  # never set: the stand-in holds every request
    monkeypatch.setattr(hub, "TOTAL_SECONDS", 0.5)
    response = _estimate(client, REPO)
    assert response.status_code == 422
    assert f"{REPO}: the hub did not answer config.json within 0.5 s" in response.text
    assert opted_in.base not in response.text
    opted_in.gate.set()


def test_the_outbound_fetch_rate_is_limited_across_ids(
    client: TestClient, opted_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub, "_bucket", hub._Bucket(rate=0.0, burst=3))
    statuses = [_estimate(client, f"acme/id-{i}").status_code for i in range(5)]
    assert statuses == [422] * 5
    assert len(opted_in.requests) == 3  # config.json (a 404) for the first three ids only
    response = _estimate(client, "acme/id-4")
    assert "too many models fetched from the hub just now (at most 4 a second); try acme/id-4 again" in (
        response.text
    )


def test_memory_caches_are_bounded(opted_in: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub, "_bucket", hub._Bucket(rate=0.0, burst=100))  # the rate is not tested here
    monkeypatch.setattr(hub, "FAILURE_CACHE_ENTRIES", 10)
    monkeypatch.setattr(hub, "SPEC_CACHE_ENTRIES", 3)
    for i in range(30):
        with contextlib.suppress(hub.HubError):
            hub.hub_model(hub.HubRef(f"acme/missing-{i}", "main"))
    for i in range(5):
        opted_in.json(f"/acme/ok-{i}/resolve/main/config.json", LLAMA_CONFIG)
        hub.hub_model(hub.HubRef(f"acme/ok-{i}", "main"))
    sizes = memory_sizes()
    assert (sizes["failures"], sizes["specs"], sizes["in_flight"]) == (10, 3, 0)


def test_the_disk_cache_is_capped_and_the_oldest_go_first(tmp_path: Path) -> None:
    for i in range(20):
        entry = tmp_path / f"{i:02d}.json"
        entry.write_bytes(b"x" * 1000)
        os.utime(entry, (1_000_000 + i, 1_000_000 + i))
    assert hub.evict_disk_cache(tmp_path, max_bytes=1 << 20, max_files=10) == 11  # down to 90 %: 9 files
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{i:02d}.json" for i in range(11, 20)]
    assert hub.evict_disk_cache(tmp_path, max_bytes=5000, max_files=100) == 5  # 9,000 B -> 4,000 B ≤ 4,500
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{i:02d}.json" for i in range(16, 20)]


def test_the_disk_cache_stays_under_its_cap_over_many_ids(
    opted_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub, "_bucket", hub._Bucket(rate=0.0, burst=100))
    monkeypatch.setattr(hub, "DISK_CACHE_MAX_FILES", 10)
    for i in range(25):
        opted_in.json(f"/acme/ok-{i}/resolve/main/config.json", LLAMA_CONFIG)
        hub.hub_model(hub.HubRef(f"acme/ok-{i}", "main"))
    assert len(list(hub.cache_dir().glob("*.json"))) <= 10


@pytest.mark.parametrize("status", [404, 500, 401])
def test_no_failure_message_names_the_endpoint(client: TestClient, opted_in: StandIn, status: int) -> None:
    opted_in.routes[CONFIG_PATH] = (status, b"{}", {})
    response = _estimate(client, REPO)
    assert response.status_code == 422
    assert REPO in response.text and opted_in.base not in response.text and "127.0.0.1" not in response.text


def test_workers_of_one_server_fetch_an_id_once(tmp_path: Path) -> None:
    """Worker processes share the disk cache; an advisory lock on the id makes the second wait for the
    first's entry instead of fetching again. (Two open files in one process lock like two processes.)"""
    path = tmp_path / "entry.json"
    order: list[str] = []
    inside = threading.Event()
    release = threading.Event()

    def first() -> None:
        with hub._across_workers(path):
            order.append("first in")
            inside.set()
            release.wait(GATE_SECONDS)
            order.append("first out")

    def second() -> None:
        with hub._across_workers(path):
            order.append("second in")

    a = threading.Thread(target=first)
    a.start()
    inside.wait(GATE_SECONDS)
    b = threading.Thread(target=second)
    b.start()
    b.join(0.3)  # the second is still waiting for the lock
    assert order == ["first in"]
    release.set()
    a.join(GATE_SECONDS)
    b.join(GATE_SECONDS)
    assert order == ["first in", "first out", "second in"]


def test_every_fetch_shares_one_tls_context(opted_in: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """urllib's HTTPSHandler made a TLS context per file when given none: the CA bundle parsed each time
    (~38 ms of CPU holding the GIL), three times a model. Now one per process, made on first use."""
    import ssl

    made: list[ssl.SSLContext] = []
    real = ssl.create_default_context

    def counting(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(ssl, "create_default_context", counting)
    monkeypatch.setattr(hub.transport, "_tls", [])
    monkeypatch.setattr(hub, "_bucket", hub._Bucket(rate=0.0, burst=100))
    for i in range(3):
        opted_in.json(f"/acme/tls-{i}/resolve/main/config.json", LLAMA_CONFIG)
        hub.hub_model(hub.HubRef(f"acme/tls-{i}", "main"))
    # 3 models x 3 files (config.json, the index, hf_quant_config.json) asked for, one context made
    assert sum(1 for path, _ in opted_in.requests if path.startswith("/acme/tls-")) == 9
    assert len(made) == 1
    opener = hub.transport.opener(hub.transport.Deadline(1.0), ("https", "example.org"), timeout_s=1.0)
    contexts = {getattr(h, "_context", None) for h in opener.handlers if hasattr(h, "https_open")}
    assert contexts == {made[0]} and len(made) == 1


def test_the_disk_cache_is_scanned_once_a_tenth_of_its_cap_is_written(
    opted_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing and stat-ing every entry after each write cost ~10 ms of CPU at 2,048 files; it runs once
    a tenth of a cap has been written since the last scan, and the cache still stays within its cap."""
    monkeypatch.setattr(hub, "_bucket", hub._Bucket(rate=0.0, burst=100))
    monkeypatch.setattr(hub, "DISK_CACHE_MAX_FILES", 40)  # a scan every 4 files: 2 entries and their locks
    monkeypatch.setattr(hub, "_written_since_scan", [0, 0])
    scans: list[int] = []
    real = hub.evict_disk_cache
    monkeypatch.setattr(hub, "evict_disk_cache", lambda directory: scans.append(real(directory)) or 0)
    for i in range(50):
        opted_in.json(f"/acme/scan-{i}/resolve/main/config.json", LLAMA_CONFIG)
        hub.hub_model(hub.HubRef(f"acme/scan-{i}", "main"))
    assert len(scans) == 50 // 2  # 25 scans for 50 entries (was 50)
    # each model leaves its entry and its lock file: 100 files, cut to 36 (90 % of 40) by a scan over 40,
    # and at most 4 more written before the next
    assert len(list(hub.cache_dir().iterdir())) <= 40


def test_with_the_rate_reached_no_lock_file_is_made(
    opted_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused fetch (the rate reached) leaves nothing on disk: 3,000 distinct ids used to leave 2,630
    lock files (N5). A model already on disk is read without a rate token."""
    monkeypatch.setattr(hub, "_bucket", hub._Bucket(rate=0.0, burst=1))
    hub.hub_model(hub.HubRef(REPO, "main"))  # the one token
    files = sorted(p.name for p in hub.cache_dir().iterdir())
    for i in range(20):
        with pytest.raises(hub.HubError, match="too many models fetched"):
            hub.hub_model(hub.HubRef(f"acme/refused-{i}", "main"))
    assert sorted(p.name for p in hub.cache_dir().iterdir()) == files  # one entry and its lock file
    clear_memory()  # a new process: memory gone, the disk cache kept, and no token left
    hub._bucket = hub._Bucket(rate=0.0, burst=0)
    assert hub.hub_model(hub.HubRef(REPO, "main")).weights_bytes_exact == LLAMA_8B_INDEX_TOTAL_SIZE
