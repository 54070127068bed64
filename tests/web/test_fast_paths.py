"""The slider's fast paths give the bytes the slow ones gave, on every preset (latency6).

Each cut made for speed is checked against the path it replaced, kept here as the reference:

- /api/estimate serialises pydantic's json-mode dump itself (app/web/encoding.py) instead of
  ``JSONResponse(jsonable_encoder(python-mode dump))``; YAML drops its json round trip;
- ``estimate(working=False)`` (the recommender's probes, the capacity chart's full estimates) is the
  estimate without its ``terms``; ``Equation.term`` builds its Term without re-validating;
- a pasted config.json's spec is read once per text (``resolve._pasted_spec``);
- ``kinds.kind_spec`` finds a kind's string without the enum call;
- ``situations.startup_free_check`` is ``free_check_runs`` and ``free_check``'s device name in one call.

bench/output_digest.py compares whole answers (page, fragment, slots, API) of two trees.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # no types-PyYAML in the lock file
from fastapi import FastAPI
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse

from app.core import situations
from app.core.catalog import find_device, find_model, list_models
from app.core.defaults import model_for_release
from app.core.equations import working_terms
from app.core.estimate import ALWAYS_FAILS, capacity_curve, estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.kinds import KIND_SPECS, kind_spec
from app.core.result import Term
from app.core.specs import LayerKind, ServeConfig
from app.core.versions import rules_for
from app.web.inputs import resolve
from app.web.inputs.links import to_query
from app.web.inputs.params import parse_strict
from app.web.inputs.resolve import estimate_for, resolve_strict
from tests.web.conftest import LLAMA_31_8B_CONFIG, TestClient

PRESETS = [m.id for m in list_models()]
PLANS: dict[str, dict[str, str]] = {
    "h100": {"device": "nvidia-h100-sxm-80gb"},
    "h100-tp8": {"device": "nvidia-h100-sxm-80gb", "tensor_parallel_size": "8", "max_model_len": "32768"},
}


def _reference_payload(items: list[tuple[str, str]]) -> dict[str, Any]:
    """/api/estimate's payload as it was built before latency6: python-mode dumps."""
    resolved = resolve_strict(parse_strict(items))
    est = estimate_for(resolved)
    inputs = resolved.params.model_dump(exclude={"config_json", "hf_quant_config_json", "lang"})
    inputs.update(
        vllm_version=resolved.vllm_version,
        model=resolved.model_label,
        model_source=resolved.model_source,
        query=to_query(resolved.params),
    )
    return {**est.model_dump(), "inputs": inputs}


@pytest.fixture(scope="module")
def client(web_app: FastAPI) -> TestClient:
    return TestClient(web_app)


@pytest.mark.parametrize("plan", PLANS)
def test_estimate_json_and_yaml_bytes_are_the_old_encoders_on_every_preset(
    client: TestClient, plan: str
) -> None:
    checked = 0
    for model in PRESETS:
        items = [("model", model), *PLANS[plan].items()]
        try:
            reference = _reference_payload(items)
        except Exception:  # a preset this plan refuses: the 422 is another test's business
            continue
        r = client.get("/api/estimate", params=items)
        assert r.status_code == 200, (model, r.text[:200])
        assert r.content == JSONResponse(jsonable_encoder(reference)).body, model
        assert r.headers["content-type"] == "application/json"
        y = client.get("/api/estimate", params=[*items, ("format", "yaml")])
        plain = json.loads(json.dumps(jsonable_encoder(reference)))
        old_yaml = yaml.safe_dump(plain, sort_keys=False, allow_unicode=True, width=4096)
        assert y.text == old_yaml, model
        checked += 1
    assert checked >= len(PRESETS) // 2  # most presets plan on an H100 (TP 8 for the large ones)


def test_llama_json_carries_the_worked_per_token_bytes(client: TestClient) -> None:
    r = client.get("/api/estimate", params={"model": "meta-llama/Llama-3.1-8B"})
    data = r.json()
    # 2 (K and V) x 32 layers x 8 KV heads x 128 head size x 2 bytes (bf16) = 131,072 B per token
    assert data["kv_bytes_per_token"] == 131_072
    assert data["terms"][0]["formula"].endswith("2 × 32 × 8 × 128 × 2")
    assert data["terms"][0]["value"] == "131,072 B"


@pytest.mark.parametrize("tp", [1, 8])
def test_estimate_without_working_is_the_estimate_without_terms(tp: int) -> None:
    device = find_device("nvidia-h100-sxm-80gb")
    serve = ServeConfig(tensor_parallel_size=tp)
    checked = 0
    for entry in list_models():
        try:
            full = estimate(model=find_model(entry.id), device=device, serve=serve, target_concurrency=4)
        except Exception:  # TP 8 does not divide some presets' heads: vLLM's refusal, raised
            continue
        checked += 1
        bare = estimate(
            model=find_model(entry.id), device=device, serve=serve, target_concurrency=4, working=False
        )
        assert bare.terms == []
        assert bare == full.model_copy(update={"terms": []}), entry.id
        if full.fits:
            assert full.terms, entry.id  # the page's working is still built where it is shown
    assert checked >= len(PRESETS) // 2


def test_terms_built_without_validation_equal_validated_terms() -> None:
    device = find_device("nvidia-h100-sxm-80gb")
    rules = rules_for(None)
    for entry in list_models()[:40]:
        serve = ServeConfig()
        try:
            est = estimate(model=find_model(entry.id), device=device, serve=serve)
        except Exception:
            continue
        model = model_for_release(model=find_model(entry.id), rules=rules)
        terms = working_terms(model=model, serve=serve, est=est, rules=rules, target=1, device=device)
        for term in terms:
            again = Term(**{name: getattr(term, name) for name in Term.model_fields})
            assert term == again
            assert type(term.name) is type(again.name)  # a Text stays a Text (the page translates it)


def test_a_pasted_config_is_read_once_per_text() -> None:
    text = json.dumps(LLAMA_31_8B_CONFIG)
    resolve._pasted_spec.cache_clear()
    first = resolve_strict(parse_strict([("config_json", text), ("max_model_len", "4096")]))
    second = resolve_strict(parse_strict([("config_json", text), ("max_model_len", "8192")]))
    assert resolve._pasted_spec.cache_info().hits == 1
    assert first.model is second.model
    assert first.model == model_spec_from_hf_config(LLAMA_31_8B_CONFIG, name=first.model_label)
    assert first.model.num_layers == 32 and first.model.num_kv_heads == 8
    named = resolve_strict(parse_strict([("config_json", text), ("model", "my/llama")]))
    assert named.model_label == "my/llama" and named.model.name == "my/llama"  # the label is in the key


def test_a_refused_config_is_refused_every_time() -> None:
    text = json.dumps({**LLAMA_31_8B_CONFIG, "num_hidden_layers": 0})
    for _ in range(2):
        with pytest.raises(Exception, match="num_hidden_layers"):
            resolve_strict(parse_strict([("config_json", text)]))


def test_kind_spec_by_string_is_by_member() -> None:
    for kind in LayerKind:
        if kind in KIND_SPECS:
            assert kind_spec(str(kind.value)) is kind_spec(kind) is KIND_SPECS[kind]
    with pytest.raises(ValueError, match="not a valid LayerKind"):
        kind_spec("no-such-kind")


@pytest.mark.parametrize("version", ["0.8.5", "0.11.0", "0.32.0", "0.33.0"])
@pytest.mark.parametrize("device_id", ["nvidia-h100-sxm-80gb", "huawei-ascend-910b-64gb"])
@pytest.mark.parametrize("kv_bytes", [None, 20 * 2**30])
def test_startup_free_check_is_the_two_calls_it_replaced(
    version: str, device_id: str, kv_bytes: int | None
) -> None:
    rules, device = rules_for(version), find_device(device_id)
    serve = ServeConfig(kv_cache_memory_bytes=kv_bytes)
    runs, where = situations.startup_free_check(rules=rules, device=device, serve=serve)
    assert runs == situations.free_check_runs(rules=rules, device=device, serve=serve)
    assert where == situations.free_check(rules=rules, device=device)[1]


def test_the_chart_of_a_plan_that_never_starts_is_zero_as_full_estimates_say() -> None:
    """Free memory and weights do not depend on S: where the base estimate fails on either, every point
    of the chart is 0, which is what a full estimate at each length gives (the path it replaced)."""
    device = find_device("nvidia-h100-sxm-80gb")
    checked = 0
    for model_id, serve in (
        ("deepseek-ai/DeepSeek-V3", ServeConfig()),  # ~671 GB of fp8 weights on one 80 GB card: LOAD_OOM
        ("meta-llama/Llama-3.1-70B-Instruct", ServeConfig()),  # ~141 GB of bf16 weights: LOAD_OOM
        ("meta-llama/Llama-3.1-8B", ServeConfig(device_memory_used_gib=60)),  # 20 GB free < 0.92 x 80
    ):
        model = find_model(model_id)
        base = estimate(model=model, device=device, serve=serve)
        assert base.error_kind in ALWAYS_FAILS, (model_id, base.error_kind)
        curve = capacity_curve(model=model, device=device, serve=serve, points=8, base=base)
        for length, concurrency in curve:
            at = estimate(
                model=model, device=device, serve=serve.model_copy(update={"max_model_len": length})
            )
            assert concurrency == 0.0 and not at.fits and at.error_kind in ALWAYS_FAILS, (model_id, length)
        checked += 1
    assert checked == 3


def test_an_answer_encoded_in_its_route_is_the_bytes_fastapi_gave() -> None:
    """/api/performance, /api/fleet and /api/recommend encode in their own thread (dumped_response)
    what FastAPI used to encode on the event loop for a route annotated ``-> dict[str, Any]``: the same
    bytes, for the shapes those answers hold (a translated sentence, a model, a tuple, inf, unicode)."""
    from fastapi.testclient import TestClient as Client

    from app.core.result import Range
    from app.core.text import Text
    from app.web.encoding import dumped_response

    answer: dict[str, Any] = {
        "notes": [Text("{n} runs found; using the last one", n=2)],
        "tpot_ms": Range(low=5.18, expected=6.53, high=18.4),
        "pair": (1, 2.5),
        "rate": math.inf,
        "name": "通义 Qwen3",
        "none": None,
    }
    app = FastAPI()

    @app.get("/returned")
    def returned() -> dict[str, Any]:
        return answer

    @app.get("/dumped", response_model=dict[str, Any])
    def dumped() -> Any:
        return dumped_response(answer)

    client = Client(app)
    before, after = client.get("/returned"), client.get("/dumped")
    assert after.content == before.content
    assert after.headers["content-type"] == before.headers["content-type"] == "application/json"
    assert json.loads(after.content)["rate"] is None  # pydantic writes inf as null, as FastAPI did


def test_the_fleet_probes_skip_the_working_and_plan_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet search reads each layout's verdict, pool and blocks, never its working: its probes run
    ``estimate(working=False)`` (Qwen3-Next-80B at 30 req/s: /api/fleet CPU ~0.8x) and plan the same."""
    from app.core import fleet

    model, device = find_model("meta-llama/Llama-3.1-70B-Instruct"), find_device("h100")
    kwargs: dict[str, Any] = {
        "model": model,
        "device": device,
        "serve": ServeConfig(max_model_len=8192),
        "vllm_version": "0.19.0",
        "target": fleet.Target(
            input_tokens=2048,
            output_tokens=256,
            requests_per_s=30.0,
            slo_ttft_ms=2000.0,
            slo_tpot_ms=40.0,
            devices_available=64,
            price_per_device_hour=2.0,
        ),
    }
    asked: list[bool] = []
    real = fleet.estimate

    def recorded(**call: Any) -> Any:
        asked.append(call.get("working", True))
        return real(**call)

    monkeypatch.setattr(fleet, "estimate", recorded)
    fast = fleet.plan_fleet(**kwargs)
    assert asked and not any(asked)  # every probe skipped the working
    monkeypatch.setattr(fleet, "estimate", lambda **call: real(**{**call, "working": True}))
    assert fleet.plan_fleet(**kwargs) == fast
    assert fast.candidates  # a plan with layouts in it, not two empty ones
