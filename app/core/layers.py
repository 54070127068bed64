"""A model's decoder layers folded by kind: a stage's per-kind counts in O(distinct kinds), not O(layers).

An estimate used to walk every layer of every pipeline stage to bucket it by kind (kv.build_layout), and
the recommender and the fleet search make dozens of estimates: a pasted config of 10,000 identical MoE
layers cost 10,000 bucket evaluations per estimate, 840,000 per recommendation (issue 27, N3). Layers of
one kind are interchangeable for the KV layout — a group is a bucket key and a count (§3.4) — so the
model's ``layer_kinds`` are folded once into the positions of each kind, and a stage's counts are read
with two bisections per kind present in the model.

E.g. 10,000 layers alternating five sliding, one full: two kinds; the stage of layers [0, 5,000) holds
``{SLIDING: 4,167, FULL: 833}`` (5,000 = 833 x 6 + 2, the two left over are sliding), in the order the
kinds first appear in the stage — the order vLLM forms its groups in.

The fold is made once per ``layer_kinds`` tuple (held by identity: ``model_copy`` keeps the tuple, so the
recommender's variants of one model share it) and kept in a small LRU.

Layers whose attention differs one by one (Gemma-4's full layers with their own KV heads and head size,
MiMo-V2's SWA layers, Nemotron-NAS blocks: ``layer_attention``; GLM-5.2's indexer on every fourth layer:
``indexer_layers``) are folded the same way by their :data:`LayerSignature` — kind, attention shape,
indexer or not — so their KV layout computes one page per distinct signature, not one per layer.
"""

from __future__ import annotations

import threading
import typing
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Generic, TypeVar

from app.core.kinds import KIND_SPECS
from app.core.specs import AttentionShape, LayerKind, ModelSpec

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Stage = TypeVar("_Stage", bound="DataclassInstance")  # app.core.estimate.Stage (a dataclass with an index)
_Item = TypeVar("_Item", bound=Hashable)

# Distinct models folded at once per process: the recommender and the fleet search use one or two (the
# model and its draft), a page a few; a pasted config is one more per request.
FOLD_CACHE_ENTRIES = 64

# What one layer's KV page depends on besides the model-wide fields, for a model whose attention differs
# layer by layer: its kind, its attention shape (``ModelSpec.layer_attention``; None when the model has
# none) and whether it carries the sparse-attention indexer's cache (``ModelSpec.indexer_layers``).
LayerSignature = tuple[LayerKind, AttentionShape | None, bool]


class LayerFold(Generic[_Item]):
    """The positions of each distinct item (a layer's kind, or its :data:`LayerSignature`) in one model's
    layers, made in one pass."""

    __slots__ = ("items", "positions", "sources")

    def __init__(self, items: tuple[_Item, ...], sources: tuple[object, ...] = ()) -> None:
        self.items = items
        self.sources = sources  # the model's tuples this fold was made from (the cache's identity check)
        positions: dict[_Item, list[int]] = {}
        for index, item in enumerate(items):
            positions.setdefault(item, []).append(index)
        self.positions = positions

    def counts(self, *, start: int, stop: int) -> dict[_Item, int]:
        """The items of layers ``[start, stop)`` with their counts, in order of first appearance there:
        two bisections per distinct item, or a walk of the range when it is shorter than the number of
        distinct items (a config whose layers all differ), so never more than min(distinct, layers)."""
        if len(self.positions) > stop - start:
            walked: dict[_Item, int] = {}
            for item in self.items[start:stop]:
                walked[item] = walked.get(item, 0) + 1
            return walked
        found: list[tuple[int, int, _Item]] = []
        for item, where in self.positions.items():
            first = bisect_left(where, start)
            count = bisect_left(where, stop, lo=first) - first
            if count:
                found.append((where[first], count, item))
        found.sort(key=lambda entry: entry[0])  # first positions are distinct
        return {item: count for _, count, item in found}

    def has(self, item: _Item) -> bool:
        return item in self.positions

    def kinds(self) -> frozenset[_Item]:
        return frozenset(self.positions)


_lock = threading.Lock()
_folds: OrderedDict[tuple[str, tuple[int, ...]], LayerFold[typing.Any]] = OrderedDict()


def _cached(
    what: str, sources: tuple[object, ...], make: Callable[[], tuple[_Item, ...]]
) -> LayerFold[_Item]:
    """The fold of ``make()``, kept by the identity of the model's tuples it is made from (``sources``):
    ``model_copy`` keeps them, so the recommender's variants of one model share one fold."""
    key = (what, tuple(id(source) for source in sources))
    with _lock:
        cached = _folds.get(key)
        if cached is not None and all(a is b for a, b in zip(cached.sources, sources, strict=True)):
            _folds.move_to_end(key)  # the ids of live tuples: their own
            return cached
    made = LayerFold(make(), sources)
    with _lock:
        _folds[key] = made
        _folds.move_to_end(key)
        while len(_folds) > FOLD_CACHE_ENTRIES:
            _folds.popitem(last=False)
    return made


def fold(model: ModelSpec) -> LayerFold[LayerKind]:
    """The fold of ``model.layer_kinds``, made on first use and then kept (by the tuple's identity)."""
    return _cached("kinds", (model.layer_kinds,), lambda: model.layer_kinds)


# The per-layer fields a :data:`LayerSignature` folds; a model with any other per-layer field (DeepSeek-V4's
# compress_ratios, whose packed groups are cut from the layers in order) has each stage computed on its own.
FOLDED_PER_LAYER_FIELDS = ("layer_attention", "indexer_layers")


def _signatures(model: ModelSpec) -> tuple[LayerSignature, ...]:
    shapes = model.layer_attention
    indexed = frozenset(model.indexer_layers or ())
    return tuple(
        (kind, None if shapes is None else shapes[index], index in indexed)
        for index, kind in enumerate(model.layer_kinds)
    )


def signature_fold(model: ModelSpec) -> LayerFold[LayerSignature]:
    """The fold of each layer's :data:`LayerSignature` (one pass, then kept like :func:`fold`)."""
    sources = (model.layer_kinds, model.layer_attention, model.indexer_layers)
    return _cached("signatures", sources, lambda: _signatures(model))


def signature_counts(*, model: ModelSpec, layer_range: tuple[int, int]) -> dict[LayerSignature, int]:
    """``{signature: layers}`` of the stage ``layer_range``, in order of first appearance: what
    kv.build_layout reads for a model whose attention differs layer by layer, so its cost is the number
    of distinct signatures, not of layers. E.g. Gemma-4-26B-A4B's 30 layers, five sliding (8 KV heads of
    256) then one full (2 KV heads of 512, K = V), give two signatures: 25 and 5 layers."""
    return signature_fold(model).counts(start=layer_range[0], stop=layer_range[1])


def kind_counts(*, model: ModelSpec, layer_range: tuple[int, int]) -> dict[LayerKind, int]:
    """``{kind: layers}`` of the stage ``layer_range``, in order of first appearance (see the module doc)."""
    return fold(model).counts(start=layer_range[0], stop=layer_range[1])


def attention_layers(counts: dict[LayerKind, int]) -> int:
    """Layers that cache K and V per token (kinds.attention_layer_count, from folded counts)."""
    return sum(n for kind, n in counts.items() if KIND_SPECS[kind].attention and KIND_SPECS[kind].holds_kv)


def state_layers(counts: dict[LayerKind, int]) -> int:
    """Layers that hold a recurrent state rather than K and V (Mamba, linear attention)."""
    return sum(
        n for kind, n in counts.items() if KIND_SPECS[kind].holds_kv and not KIND_SPECS[kind].attention
    )


def model_counts(model: ModelSpec) -> dict[LayerKind, int]:
    """``{kind: layers}`` over the whole model."""
    return kind_counts(model=model, layer_range=(0, model.num_layers))


def stage_shape(
    *, model: ModelSpec, layer_range: tuple[int, int], is_first: bool, is_last: bool
) -> tuple[object, ...]:
    """What a pipeline stage's budget depends on: its layer count, its layers folded by kind and whether
    it holds the embeddings or the head (app.core.estimate's stages, app.core.budget's weights, the
    extras' ledger read no more of the layer range). Stages of one shape have one budget, so 1,024
    stages of a 10,000-layer model are computed as 3 or 4 (10,000 = 1,024 x 9 + 784: the first, the
    last, and the middle ones of 9 or 10 layers). A model whose attention differs layer by layer
    (``layer_attention``, ``indexer_layers``) is folded by :data:`LayerSignature` instead of by kind; when
    it says anything else layer by layer (:data:`PER_LAYER_FIELDS` not in :data:`FOLDED_PER_LAYER_FIELDS`)
    the shape is the layer range itself: each stage is its own."""
    said = {name for name in PER_LAYER_FIELDS if getattr(model, name) is not None}
    if said - set(FOLDED_PER_LAYER_FIELDS):
        return ("layers", layer_range, is_first, is_last)
    counts: dict[LayerKind, int] | dict[LayerSignature, int] = (
        signature_counts(model=model, layer_range=layer_range)
        if said
        else kind_counts(model=model, layer_range=layer_range)
    )
    return (layer_range[1] - layer_range[0], tuple(counts.items()), is_first, is_last)


class StageFold:
    """A model's pipeline stages folded by :func:`stage_shape`: ``new_stages`` yields the (index, layer
    range) of each stage whose shape is new, the caller computes those, and ``expand`` gives every stage,
    a repeated shape as its first stage's result under its own ``index``."""

    def __init__(self, *, model: ModelSpec, ranges: list[tuple[int, int]]) -> None:
        last = len(ranges) - 1
        shapes = [
            stage_shape(model=model, layer_range=r, is_first=i == 0, is_last=i == last)
            for i, r in enumerate(ranges)
        ]
        first_of: dict[tuple[object, ...], int] = {}
        self.first = [first_of.setdefault(shape, i) for i, shape in enumerate(shapes)]
        self.ranges = ranges

    def new_stages(self) -> Iterator[tuple[int, tuple[int, int]]]:
        for index, layer_range in enumerate(self.ranges):
            if self.first[index] == index:
                yield index, layer_range

    def expand(self, computed: list[_Stage]) -> list[_Stage]:
        """``computed``: one result per stage ``new_stages`` yielded, in order."""
        by_first = dict(zip((i for i, first in enumerate(self.first) if first == i), computed, strict=True))
        return [
            by_first[index] if first == index else replace(by_first[first], index=index)
            for index, first in enumerate(self.first)
        ]


# ModelSpec's fields that say something layer by layer besides ``layer_kinds`` (None when the model does not):
# per-layer attention shapes, the layers that carry the sparse-attention indexer, DeepSeek-V4's per-layer
# compression ratios. Named, not inferred from a field's type, so a tuple field that is not per-layer (the
# uncounted encoder towers, a list of aliases) leaves stage folding alone; a new per-layer field is added here
# (tests/unit/test_layer_fold.py checks each name is a ModelSpec field).
PER_LAYER_FIELDS = ("layer_attention", "indexer_layers", "compress_ratios")


def stage_counts(*, model: ModelSpec, layer_range: tuple[int, int]) -> tuple[dict[LayerKind, int], int, int]:
    """For kv.build_layout: the stage's ``kind_counts``, its attention layers and its state layers."""
    counts = kind_counts(model=model, layer_range=layer_range)
    return counts, attention_layers(counts), state_layers(counts)


def has_kind(model: ModelSpec, kind: LayerKind) -> bool:
    """``kind in model.layer_kinds``, from the fold (O(1), not a scan of every layer)."""
    return fold(model).has(kind)
