"""Fixtures for the web layer: an in-process client and a couple of config.json objects."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from fastapi import FastAPI
from starlette.exceptions import StarletteDeprecationWarning

from app.web.app import create_app

with warnings.catch_warnings():
    # starlette 1.10 asks for `httpx2`; the pinned httpx works and is what the lock file has.
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

# meta-llama/Llama-3.1-8B config.json (the architecture fields; public HF file)
LLAMA_31_8B_CONFIG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "rope_theta": 500000.0,
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}
# meta-llama/Llama-3.1-70B: 80 layers; ~141 GB of bf16 weights cannot fit one 80 GB device.
LLAMA_31_70B_CONFIG: dict[str, Any] = {
    **LLAMA_31_8B_CONFIG,
    "num_hidden_layers": 80,
    "hidden_size": 8192,
    "intermediate_size": 28672,
    "num_attention_heads": 64,
}


@pytest.fixture(scope="session")
def web_app() -> FastAPI:
    return create_app()


@pytest.fixture(scope="session")
def prefixed_app() -> FastAPI:
    return create_app(root_path="/tools/kvplan")


# One app per session (building it is the slow part), a client per test: a client keeps cookies, so a
# shared one let a test's lang=zh answer (it sets the language cookie) turn every later test Chinese.
@pytest.fixture
def client(web_app: FastAPI) -> TestClient:
    return TestClient(web_app)


@pytest.fixture
def prefixed_client(prefixed_app: FastAPI) -> TestClient:
    return TestClient(prefixed_app)
