"""Round 10 review (review10): a lone surrogate in a pasted config.json was a 500.

The JSON escape ``\\ud800`` decodes to a lone surrogate, which UTF-8 cannot encode. The permalink packs the
config re-serialised with ``ensure_ascii=False`` and deflates its UTF-8 bytes (app.web.inputs.params.pack_text):
UnicodeEncodeError on /api/estimate and the planner page; a GPTQ ``dynamic`` key holding one also reached RE2's
encoder. Now the compact form escapes such a value, and RE2 takes no such pattern (it matches nothing, as a
module name never holds a surrogate).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest

from app.web.inputs.params import compact_config_json, pack_text, unpack_config_json

LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
}
GPTQ = {
    "quant_method": "gptq",
    "bits": 4,
    "group_size": 128,
    "desc_act": False,
    "sym": True,
    "dynamic": {"-:\\ud800": {}},
}


def _text(cfg: dict[str, object]) -> str:
    # json.dumps writes the backslash of "\\ud800" doubled; undoubling it leaves the JSON escape of a lone surrogate
    return json.dumps(cfg).replace("\\\\ud800", "\\ud800")


CASES = [_text({**LLAMA, "quantization_config": GPTQ}), _text({**LLAMA, "_name_or_path": "\\ud800"})]


@pytest.mark.parametrize("text", CASES)
def test_the_estimate_api_and_the_page_answer_it(client: Any, text: str) -> None:
    form = {"model": "custom", "device": "nvidia-h100-sxm-80gb", "config_json": text}
    answer = client.post("/api/estimate", json=form)
    assert answer.status_code == 200, answer.text[:300]
    # 8 KV heads x 128 x 2 (K, V) x 2 bytes x 32 layers = 131,072 B a token, as for any Llama-3.1-8B shape
    assert answer.json()["kv_bytes_per_token"] == 131_072
    page = client.get("/?" + urlencode(form))
    assert page.status_code == 200, page.text[:300]


def test_the_compact_form_escapes_it_and_round_trips() -> None:
    compact = compact_config_json(CASES[1])
    assert "\\ud800" in compact and compact.isascii()
    assert json.loads(str(unpack_config_json(pack_text(compact))))["_name_or_path"] == "\ud800"
    # non-ASCII that UTF-8 can encode stays as it is (shorter links)
    assert compact_config_json(json.dumps({**LLAMA, "_name_or_path": "模型"})).count("模型") == 1
