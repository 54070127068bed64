"""The extras ledger: device and host memory outside "weights + activation + KV" of one plain model.

Each consumer says how many bytes it holds on one device and on the host, whether vLLM's profiling
run sees it (then it is part of what vLLM subtracts before sizing the KV pool, so it shrinks the pool)
or not (then it comes later and can run the device or the host out of memory), the flag that moves it
and the vLLM source file and release the rule was read from. The estimator applies the ledger exactly
where vLLM does: draft weights, LoRA slots and the expert split move the weights ("Model loading took
X GiB" measures them inside `GPUModelRunner.load_model`), the draft's KV layers join the KV pages (one
block table), and the host consumers add up to `host_memory_bytes`.

One module per consumer, as `app/core/recommend/` has one per lever: speculative, lora, parallel,
multimodal, host; ledger adds them up for one pipeline stage.
"""

from __future__ import annotations

from app.core.extras.common import SOURCE_RELEASE as SOURCE_RELEASE
from app.core.extras.host import kv_offload_host_bytes as kv_offload_host_bytes
from app.core.extras.host import pinned_bytes as pinned_bytes
from app.core.extras.ledger import NO_EXTRAS as NO_EXTRAS
from app.core.extras.ledger import StageExtras as StageExtras
from app.core.extras.ledger import stage_extras as stage_extras
from app.core.extras.ledger import with_draft_kv as with_draft_kv
from app.core.extras.lora import lora_slot_elements as lora_slot_elements
from app.core.extras.parallel import expert_parallel_weights_delta as expert_parallel_weights_delta
from app.core.extras.speculative import mtp_layer_params as mtp_layer_params
from app.core.result import ExtraItem as ExtraItem
