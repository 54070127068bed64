"""--max-num-seqs the log does not print, read off the batched tokens it does.

vLLM takes both defaults from one branch of its batch-default table (engine/arg_utils.py, `_set_default_args` to
0.13, `get_batch_defaults` from 0.14; 0.33.0 likewise): a device of at least 70 GiB that is not an A100 gets 8,192
batched tokens and 1,024 sequences under `vllm serve` (OPENAI_API_SERVER), any other GPU 2,048 and 256; the `LLM`
class gets 16,384 / 8,192 tokens with the same sequences. So when the scheduler prints the batched tokens it
resolved ("Chunked prefill is enabled with max_num_batched_tokens=2048.") and the non-default args set neither flag,
the printed figure names the branch, and the branch names max_num_seqs:

- 2,048 is only ever the small branch's serve default (the `LLM` class's are 8,192 and 16,384): 256 sequences,
  whatever the catalog device's size says (e.g. a GB10 under an NVIDIA 0.13 build printed 2,048, vllm-ascend's 300I);
- with the OpenAI server shown (the non-default args carry `model_tag`, `vllm serve`'s positional model, or the
  line is the "(APIServer pid=…)" process's), the figure is the serve column: the tier of this release whose tokens it is, or the small branch's 2,048.

Without that proof (no args listing, a flag set, no scheduler line, chunking off) nothing is inferred.
"""

from __future__ import annotations

from app.core.logs import LogFacts
from app.core.versions import SMALL_DEVICE_MAX_NUM_BATCHED_TOKENS, SMALL_DEVICE_MAX_NUM_SEQS, VersionRules

SCHEDULER_LINE = "Chunked prefill is enabled with max_num_batched_tokens="
ARGS_LINE = "non-default args: {"
SET_BY_USER = ("'max_num_batched_tokens':", "'max_num_seqs':")  # the keys as the args dict prints them
SERVE_CLI = "'model_tag':"  # `vllm serve MODEL`: the positional argument's name in the non-default args
API_SERVER_PREFIX = "(APIServer pid="  # the OpenAI server's process (0.10+ prefixes its lines with its name)


def _args_lines(log_text: str) -> list[str]:
    return [line for line in log_text.splitlines() if ARGS_LINE in line]


def inferred_max_num_seqs(facts: LogFacts, log_text: str, rules: VersionRules | None) -> int | None:
    """The max_num_seqs vLLM defaulted to, when the printed batched tokens prove its branch; else None."""
    tokens = facts.max_num_batched_tokens
    if facts.max_num_seqs is not None or tokens is None or facts.engine != "v1":
        return None
    evidence = facts.evidence.get("max_num_batched_tokens")
    if evidence is None or SCHEDULER_LINE not in evidence.text:
        return None
    args = _args_lines(log_text)
    if not args or any(key in line for line in args for key in SET_BY_USER):
        return None
    if tokens == SMALL_DEVICE_MAX_NUM_BATCHED_TOKENS:
        return SMALL_DEVICE_MAX_NUM_SEQS
    serving = any(SERVE_CLI in line or API_SERVER_PREFIX in line for line in args)
    if rules is None or not serving:
        return None
    tiers = [tier for tier in rules.batch_tiers if tier.max_num_batched_tokens == tokens]
    return tiers[0].max_num_seqs if len(tiers) == 1 else None
