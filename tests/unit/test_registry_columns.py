"""The architecture registry read from every release wheel at hand (issue 22 item 1: the 0.11.1, 0.12.0, 0.13.0
and 0.18.0 columns, plus 0.19.1, 0.20.0, 0.22.0, 0.25.0 and 0.27.0): scripts/gen_arch_registry.py over
vllm/model_executor/models/registry.py of each (pip download --no-deps vllm==X). Facts checked by hand in the
wheels' registry.py:

- MiniMaxM2ForCausalLM: absent from 0.11.0's _TEXT_GENERATION_MODELS, present in 0.11.1's;
- MistralLarge3ForCausalLM: absent from 0.11.1, present in 0.12.0;
- AudioFlamingo3ForConditionalGeneration: absent from 0.12.0, present in 0.13.0;
- Phi4MultimodalForCausalLM: in 0.12.0's _MULTIMODAL_MODELS, gone from 0.13.0's, whose
  _PREVIOUSLY_SUPPORTED_MODELS says "Phi4MultimodalForCausalLM": "0.12.0" (so does 0.33.0's);
- DeepseekV4ForCausalLM: absent from 0.19.1, present in 0.20.0.
"""

from __future__ import annotations

import pytest

from app.core.errors import ConfigError
from app.core.hf_config.registry import architecture_table, check_architecture, releases_read


def test_the_new_columns_are_read() -> None:
    assert {"0.11.1", "0.12.0", "0.13.0", "0.18.0", "0.19.1", "0.20.0"} <= set(releases_read())
    table = architecture_table()
    assert (table["MiniMaxM2ForCausalLM"].first_listed, table["MiniMaxM2ForCausalLM"].absent_in) == (
        "0.11.1",
        "0.11.0",
    )
    assert (table["MistralLarge3ForCausalLM"].first_listed, table["MistralLarge3ForCausalLM"].absent_in) == (
        "0.12.0",
        "0.11.1",
    )
    assert table["AudioFlamingo3ForConditionalGeneration"].first_listed == "0.13.0"
    assert table["Phi4MultimodalForCausalLM"].last_listed == "0.12.0"
    assert (table["DeepseekV4ForCausalLM"].first_listed, table["DeepseekV4ForCausalLM"].absent_in) == (
        "0.20.0",
        "0.19.1",
    )


def test_the_columns_decide_refusals_at_the_release_itself() -> None:
    # 0.12.0 lists Mistral Large 3; 0.11.1 does not (round 5 only knew "(0.11.0, 0.14.0]" and gave a note)
    assert (
        check_architecture(architecture="MistralLarge3ForCausalLM", model_type="mistral", version=(0, 12, 0))
        == []
    )
    with pytest.raises(ConfigError, match=r"not in vLLM 0\.11\.1's model registry; vLLM 0\.12\.0 has it"):
        check_architecture(architecture="MistralLarge3ForCausalLM", model_type="mistral", version=(0, 11, 1))
    # Phi-4-multimodal: served by 0.12.0, refused by 0.13.0 in vLLM's own words ("supported until v0.12.0")
    assert (
        check_architecture(architecture="Phi4MultimodalForCausalLM", model_type="phi4mm", version=(0, 12, 0))
        == []
    )
    with pytest.raises(ConfigError, match=r"supported in vLLM until v0\.12\.0"):
        check_architecture(architecture="Phi4MultimodalForCausalLM", model_type="phi4mm", version=(0, 13, 0))


def test_the_transformers_fallback_is_read_per_release() -> None:
    # transformers_fallback.json, from scripts/gen_transformers_fallback.py: 0.32.0 with transformers 5.19.0 (its
    # wheel: transformers<5.20.0,>=5.16.1), 0.33.0 with 5.20.2 (<5.21.0); registry.py _try_resolve_transformers and
    # transformers_utils/config.py HFConfigParser.parse are the same code in both wheels (AST compared).
    # BailingHybridForCausalLM (model_type "bailing_hybrid") is in no vLLM registry; transformers 5.20.2 exports it
    # (models/bailing_hybrid), 5.19.0 has no such model and does not know the model type
    arch, model_type = "BailingHybridForCausalLM", "bailing_hybrid"
    assert arch not in architecture_table()
    notes = check_architecture(
        architecture=arch, model_type=model_type, version=(0, 33, 0), transformers_fallback_release="0.33.0"
    )
    assert any("Transformers modeling backend" in str(n) and "5.20.2" in str(n) for n in notes)
    with pytest.raises(ConfigError) as err:
        check_architecture(
            architecture=arch,
            model_type=model_type,
            version=(0, 32, 0),
            transformers_fallback_release="0.32.0",
        )
    assert err.value.field == "model_type" and "transformers 5.19.0" in str(err.value)
