"""One call from (model, device, `vllm serve` flags, vLLM version) to everything vLLM would print.

The estimate runs in vLLM's order, one module a step:

- :mod:`.entry` — :func:`estimate`: the release the user named, the model as it reads it, the
  checkpoint's KV dtype, `--max-model-len auto`, the working and the notes;
- :mod:`.answer` — one estimate under one release's rules: the flags after its defaults
  (:func:`resolve`), then the steps below, then the typed answer (printed log, warnings, partitions);
- :mod:`.stages` — one budget and KV layout per pipeline stage, as each stage's worker profiles it;
- :mod:`.checks` — the capacity of the stage that binds, the first of vLLM's refusals in the order it
  checks them, and the verdict;
- :mod:`.curve` — the capacity chart and :func:`sizing_for`, the exact half reused at other lengths.

The sentences vLLM prints are in :mod:`app.core.vllm_text`, beside the patterns that read them back.
Every name the callers import stays importable from here.
"""

from app.core.defaults import ResolvedFlags as ResolvedFlags
from app.core.defaults import batch_tier as batch_tier
from app.core.defaults import default_max_model_len as default_max_model_len
from app.core.defaults import default_max_num_batched_tokens as default_max_num_batched_tokens
from app.core.defaults import default_max_num_seqs as default_max_num_seqs
from app.core.defaults import model_for_release as model_for_release
from app.core.defaults import resolve as resolve
from app.core.defaults import validate_devices as validate_devices
from app.core.defaults import validate_parallel as validate_parallel
from app.core.estimate.checks import MAX_MODEL_LEN_CEILING as MAX_MODEL_LEN_CEILING
from app.core.estimate.curve import ALWAYS_FAILS as ALWAYS_FAILS
from app.core.estimate.curve import CURVE_LONGEST_LEN_AT_LEAST as CURVE_LONGEST_LEN_AT_LEAST
from app.core.estimate.curve import CURVE_SHORTEST_LEN as CURVE_SHORTEST_LEN
from app.core.estimate.curve import Sizing as Sizing
from app.core.estimate.curve import capacity_curve as capacity_curve
from app.core.estimate.curve import sizing_for as sizing_for
from app.core.estimate.entry import SIZED_BACKENDS as SIZED_BACKENDS
from app.core.estimate.entry import UNSIZED_CACHE_MODEL_TYPES as UNSIZED_CACHE_MODEL_TYPES
from app.core.estimate.entry import estimate as estimate
from app.core.estimate.stages import Stage as Stage
from app.core.result import ErrorKind as ErrorKind
from app.core.versions import V0_CHUNKED_PREFILL_ABOVE as V0_CHUNKED_PREFILL_ABOVE  # recommend.py reads it
