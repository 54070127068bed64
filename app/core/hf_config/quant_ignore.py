"""The decoder modules a quantized checkpoint keeps in 16 bits, as a share of the decoder body.

Every format vLLM loads names the modules it leaves unconverted, and vLLM builds those as plain
(unquantized) linears: compressed-tensors ``ignore`` (0.33.0 compressed_tensors.py
CompressedTensorsConfig.get_quant_method -> should_ignore_layer -> UnquantizedLinearMethod), ModelOpt
``exclude_modules`` (modelopt.py ModelOptQuantConfigBase.is_layer_excluded), and ``modules_to_not_convert``
where the format reads it (AWQ as substrings, FP8 / FBGEMM-FP8 / FP-Quant whole names; GPTQ does not read it),
and GPTQ's ``dynamic`` negative ("-:") keys (utils/gptq_utils.py get_dynamic_override). Without an index the planner sizes
the weights from the parameter count, so a share listed there is sized at the serving dtype, not the format's.

E.g. a compressed-tensors Gemma-4 26B-A4B whose ``ignore`` lists every layer's ``mlp.{gate,up,down}_proj`` and
``router.proj``: the dense MLPs (535,265,280) and routers (10,813,440) of its 24,508,833,536-parameter body
stay bf16, 2.23 %.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core import regex
from app.core.hf_config.params import ParamBreakdown

# names outside the decoder body: the embeddings, lm_head and the towers are sized apart (budget.py)
OUTSIDE_BODY = regex.compile(r"lm_head|embed|vision|visual|vit\b|audio|multi_modal|projector|mm_|patch")
LAYER_INDEX = regex.compile(r"layers\.(\d+)\.")
MLP_PROJECTIONS = ("gate_proj", "up_proj", "down_proj")
ATTENTION_PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj")
MIXER_MARKERS = ("linear_attn", "mamba", "mixer")  # Gated DeltaNet / Mamba blocks: the breakdown's mixer
# the formats whose config vLLM 0.33.0 reads ``modules_to_not_convert`` from, and whether it matches an entry as a
# substring of the layer prefix (else the whole prefix): auto_awq.py AWQConfig.get_quant_method calls
# is_layer_skipped(..., match_mode="substring"), so ["self_attn"] leaves every attention projection unquantized;
# fp8.py Fp8Config keeps "exact" (utils/quant_utils.py is_layer_skipped); fbgemm_fp8.py passes its ignore_list to
# the same exact match; fp_quant.py matches prefix.endswith(module). auto_gptq.py never reads the key (GPTQ skips
# modules through `dynamic`), so a GPTQ config's list leaves nothing unquantized.
NOT_CONVERT_SUBSTRING = {"awq": True, "fp8": False, "fbgemm_fp8": False, "fp_quant": False}
# fp8.py Fp8Config.from_config reads ``ignored_layers`` and falls back to ``modules_to_not_convert`` only when it is
# empty or absent (0.33.0)
FIRST_LIST_KEY = {"fp8": "ignored_layers"}
# the linears of one decoder layer as vLLM prefixes them (model.layers.N.self_attn.q_proj, ...): an AWQ entry that
# names no attention or MLP word ("model.layers.0.", "proj", "model") skips every linear whose prefix holds it
LAYER_LINEARS = tuple(("attention", f"self_attn.{p}") for p in ATTENTION_PROJECTIONS) + tuple(
    ("mlp", f"mlp.{p}") for p in MLP_PROJECTIONS
)
DIGIT_RUN = regex.compile(r"\d+")
# GPTQ ``dynamic``: vLLM 0.33.0 utils/gptq_utils.py get_dynamic_override walks the keys in order against each
# module's prefix (re.match); the first that matches decides: "-:<regex>" builds that module unquantized
# (get_linear_quant_method -> UnquantizedLinearMethod; auto_gptq.py get_moe_quant_method ->
# UnquantizedFusedMoEMethod), "+:<regex>" or a bare regex keeps it quantized with overrides. The prefixes are
# vLLM's fused modules: (breakdown part, the projections a fused linear holds, its prefix under model.layers.N.)
GPTQ_DYNAMIC_MODULES = (
    ("attention", ("q_proj", "k_proj", "v_proj"), "self_attn.qkv_proj"),
    ("attention", ("o_proj",), "self_attn.o_proj"),
    ("mlp", ("gate_proj", "up_proj"), "mlp.gate_up_proj"),
    ("mlp", ("down_proj",), "mlp.down_proj"),
    ("experts", ("",), "mlp.experts"),
)
GPTQ_DYNAMIC_KEYS_READ = 32  # a bound on the work a pasted config can ask for: the first 32 keys are read
# and at most this many pattern matches (about 2.5 us each on RE2): layers past it are not scanned. Real configs stay
# exact under it (200 layers x 5 modules x 32 keys = 32,000)
GPTQ_DYNAMIC_MATCHES = 50_000
GPTQ_DYNAMIC_KEY_CHARS = 1_000  # and none longer (real keys are tens of characters: "-:.*\\.layers\\.0\\..*")
LONGEST_LINEAR_PREFIX = len("model.layers.999.self_attn.q_proj")


def _covers_subtree(name: str, *, substring: bool) -> bool:
    """A pattern (ModelOpt's fnmatch ``*``, compressed-tensors' ``re:``) covers every linear under it; so does
    any ModelOpt or AWQ name (``substring``: modelopt.py is_layer_excluded also matches ``exclude_module in
    prefix``, auto_awq.py uses is_layer_skipped's substring mode); a bare compressed-tensors or FP8 name matches
    only that linear (check_equal_or_regex_match, is_layer_skipped's exact mode)."""
    return substring or name.startswith("re:") or name.endswith("*")


def _part(name: str, *, heads: int, kv_heads: int, substring: bool = False) -> tuple[str, float] | None:
    """(breakdown part, share of that part's per-layer parameters) one module name or pattern covers."""
    subtree = _covers_subtree(name, substring=substring)
    if any(marker in name for marker in MIXER_MARKERS):
        return ("mixer", 1.0) if subtree else None  # its small leaf projections are not sized apart
    if "experts" in name and "shared_expert" not in name:
        return "experts", 1.0
    if "router" in name or regex.search(r"mlp\.gate$|mlp\.gate\.|block_sparse_moe\.gate", name):
        return "router", 1.0
    if "mlp" in name or "shared_expert" in name or "feed_forward" in name:
        leaf = next((p for p in MLP_PROJECTIONS if p in name), None)
        if leaf is not None:
            return "mlp", 1 / len(MLP_PROJECTIONS)
        return ("mlp", 1.0) if subtree else None
    if "attn" in name or "attention" in name:
        leaf = next((p for p in ATTENTION_PROJECTIONS if p in name), None)
        if leaf is not None:  # q and o: heads x head; k and v: KV heads x head (of 2 x (heads + KV heads))
            width = kv_heads if leaf in ("k_proj", "v_proj") else heads
            return "attention", width / (2 * (heads + kv_heads))
        return ("attention", 1.0) if subtree else None
    return None


def _linears_holding(name: str, *, num_layers: int | None) -> list[tuple[str, str, int | None]]:
    """(part, projection, layer or None for every layer) of the layer linears whose vLLM prefix holds ``name``
    as a substring (auto_awq.py's is_layer_skipped substring mode). A name without a digit matches alike in every
    layer; one with a digit run can only match layers whose index holds that run, so only those are tried
    (``num_layers`` None: whether any layer can match, trying the run itself and "1" + run). E.g.
    "model.layers.1." covers layer 1 only (the trailing dot keeps 10-19 out); "proj" all seven linears of every layer.
    """
    if not name or len(name) > LONGEST_LINEAR_PREFIX:
        return []
    runs = DIGIT_RUN.findall(name)
    if not runs:
        return [
            (part, leaf.split(".")[1], None)
            for part, leaf in LAYER_LINEARS
            if name in f"model.layers.0.{leaf}"
        ]
    if len(runs) > 1:  # the prefix holds one number, the layer index
        return []
    if num_layers is None:
        candidates = [int(c) for c in (runs[0], "1" + runs[0]) if c == "0" or not c.startswith("0")]
    else:
        candidates = [n for n in range(num_layers) if runs[0] in str(n)]
    return [
        (part, leaf.split(".")[1], layer)
        for layer in candidates
        for part, leaf in LAYER_LINEARS
        if name in f"model.layers.{layer}.{leaf}"
    ]


def _linear_share(part: str, projection: str, *, heads: int, kv_heads: int) -> float:
    if part == "mlp":
        return 1 / len(MLP_PROJECTIONS)
    width = kv_heads if projection in ("k_proj", "v_proj") else heads
    return width / (2 * (heads + kv_heads))


def _gptq_unquantized(
    cfg: Mapping[str, Any], *, num_layers: int, heads: int, kv_heads: int
) -> list[tuple[tuple[str, str], float, int]]:
    """((part, projection), share, layer) of every layer module a GPTQ ``dynamic`` negative key leaves
    unquantized (:data:`GPTQ_DYNAMIC_MODULES`). E.g. {"-:.*layers\\.0\\..*": {}} leaves all of layer 0 in 16 bits;
    {"+:.*mlp.*": {"bits": 8}, "-:.*": {}} leaves only the attention (the MLP matched the positive key first)."""
    method = cfg.get("quant_method")
    dynamic = cfg.get("dynamic")
    if not isinstance(method, str) or method.lower() != "gptq" or not isinstance(dynamic, Mapping):
        return []
    rules = [
        (key.startswith("-:"), pattern)
        for key in list(dynamic)[:GPTQ_DYNAMIC_KEYS_READ]
        if isinstance(key, str)
        and len(key) <= GPTQ_DYNAMIC_KEY_CHARS
        and (pattern := regex.user_pattern(key.removeprefix("-:").removeprefix("+:")))
    ]
    negatives = [i for i, (negative, _) in enumerate(rules) if negative]
    if not negatives:
        return []
    rules = rules[: negatives[-1] + 1]  # a module no key up to the last negative one matches stays quantized
    scanned = min(num_layers, GPTQ_DYNAMIC_MATCHES // (len(rules) * len(GPTQ_DYNAMIC_MODULES)))
    found: list[tuple[tuple[str, str], float, int]] = []
    for layer in range(scanned):
        for part, projections, leaf in GPTQ_DYNAMIC_MODULES:
            prefix = f"model.layers.{layer}.{leaf}"
            first = next((negative for negative, pattern in rules if pattern.match(prefix)), False)
            if first:
                found.extend(
                    (
                        (part, p),
                        1.0 if part == "experts" else _linear_share(part, p, heads=heads, kv_heads=kv_heads),
                        layer,
                    )
                    for p in projections
                )
    return found


def is_counted(name: str, *, substring: bool = False) -> bool:
    """Whether :func:`unconverted_fraction` reads this ignore / exclude entry (reduce.py keeps only those)."""
    if OUTSIDE_BODY.search(name):
        return False
    if _part(name, heads=1, kv_heads=1, substring=substring) is not None:
        return True
    return substring and bool(_linears_holding(name, num_layers=None))


def _listed(cfg: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """(name, matched as a substring: ModelOpt's exclude_modules, AWQ's modules_to_not_convert) of every
    unconverted-module entry."""
    inner = cfg.get("quantization")
    method = cfg.get("quant_method")
    not_convert = NOT_CONVERT_SUBSTRING.get(method.lower()) if isinstance(method, str) else None
    names: list[tuple[str, bool]] = []
    first_key = FIRST_LIST_KEY.get(method.lower()) if isinstance(method, str) else None
    for source in (cfg, inner if isinstance(inner, Mapping) else {}):
        first = source.get(first_key) if first_key is not None else None
        for key in ("ignore", "exclude_modules", "modules_to_not_convert"):
            value = source.get(key)
            if key == "modules_to_not_convert" and not_convert is None:
                continue  # a format that does not read the key
            if key == "modules_to_not_convert" and isinstance(first, list) and first:
                value = first  # FP8's ignored_layers, read before modules_to_not_convert
            if isinstance(value, list):
                substring = key == "exclude_modules" or (
                    key == "modules_to_not_convert" and bool(not_convert)
                )
                names.extend((name, substring) for name in value if isinstance(name, str))
    return names


def unconverted_fraction(
    cfg: Mapping[str, Any], *, breakdown: ParamBreakdown, num_layers: int, heads: int, kv_heads: int
) -> float:
    """The share of the decoder body (every part but embeddings and lm_head) the checkpoint keeps unconverted:
    per part, the layers its names cover (a ``re:`` pattern or a name without a layer index: every layer)."""
    body = breakdown.total - breakdown.embedding - breakdown.lm_head
    if body <= 0 or num_layers <= 0:
        return 0.0
    covered: dict[tuple[str, str], set[int] | None] = {}  # (part, projection) -> layers, None: all
    shares: dict[tuple[str, str], float] = {}
    for name, substring in _listed(cfg):
        if OUTSIDE_BODY.search(name):
            continue
        part = _part(name, heads=max(1, heads), kv_heads=max(1, kv_heads), substring=substring)
        if part is None and substring:
            for linear_part, projection, layer in _linears_holding(name, num_layers=num_layers):
                key = (linear_part, projection)
                shares[key] = _linear_share(
                    linear_part, projection, heads=max(1, heads), kv_heads=max(1, kv_heads)
                )
                if layer is None:
                    covered[key] = None
                elif (held := covered.setdefault(key, set())) is not None:
                    held.add(layer)
            continue
        if part is None:
            continue
        projection = next((p for p in MLP_PROJECTIONS + ATTENTION_PROJECTIONS if p in name), "")
        key = (part[0], projection)
        shares[key] = part[1]
        index = LAYER_INDEX.search(name)
        if name.startswith("re:") or index is None:
            covered[key] = None  # a pattern, or a name with no layer index: every layer
            continue
        layers = covered.setdefault(key, set())
        if layers is not None:
            layers.add(int(index.group(1)))
    for key, share, layer in _gptq_unquantized(
        cfg, num_layers=num_layers, heads=max(1, heads), kv_heads=max(1, kv_heads)
    ):
        shares[key] = share
        if (held := covered.setdefault(key, set())) is not None:
            held.add(layer)
    unconverted = 0.0
    for key, layers in covered.items():
        layer_share = 1.0 if layers is None else min(1.0, len(layers) / num_layers)
        unconverted += getattr(breakdown, key[0]) * shares[key] * layer_share
    return min(1.0, unconverted / body)
