"""What the extras modules share: the release their rules were read from, and small counts."""

from __future__ import annotations

from app.core.specs import ModelSpec

SOURCE_RELEASE = "0.19.0"  # the release every rule below was read from


def src(path: str) -> str:
    return f"vllm/{path} ({SOURCE_RELEASE})"


def embed_params(model: ModelSpec) -> int:
    return model.vocab_size * model.hidden_size
