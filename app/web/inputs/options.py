"""The choices every feature's form offers: one ``Option`` per <select> or <datalist> entry, the
catalog's models, devices and releases, and a release from a link that is not in the list."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from app.core.catalog import list_devices, list_models
from app.core.specs import KV_CACHE_DTYPES
from app.core.versions import KNOWN_VERSIONS, rules_for
from app.web.i18n import t
from app.web.inputs.params import TENSOR_PARALLEL_SIZES


class Option(NamedTuple):
    """One choice of a <select> or <datalist>: a pair, so templates may pass literal (value, label) pairs too."""

    value: str
    label: str


@cache
def catalog_options() -> tuple[tuple[Option, ...], tuple[Option, ...], tuple[Option, ...]]:
    """The form's model, device and version lists: the catalogs are fixed for the process's life."""
    models = tuple(
        Option(alias, entry.id if alias != entry.id else entry.description)
        for entry in list_models()
        for alias in (entry.id, *entry.aliases)
    )
    devices = tuple(Option(d.id, d.name) for d in list_devices())
    return models, devices, release_options()


def release_options() -> tuple[Option, ...]:
    """The known releases, newest first."""
    return tuple(Option(v, v) for v in reversed(KNOWN_VERSIONS))


TP_OPTIONS = tuple(Option(str(n), str(n)) for n in TENSOR_PARALLEL_SIZES)


def version_options(known: tuple[Option, ...], chosen: str | None) -> tuple[Option, ...]:
    """The known releases, plus the one in the link when it is another (it stays selected, with the
    release whose rules plan it): `0.23.0 → rules of 0.21.0`."""
    if chosen is None or any(o.value == chosen for o in known):
        return known
    label = t("{requested} (rules of {release})", requested=chosen, release=rules_for(chosen).version)
    return (Option(chosen, label), *known)


KV_DTYPE_OPTIONS = tuple(Option(d, d) for d in KV_CACHE_DTYPES)


@dataclass(frozen=True)
class Choices:
    """What the model, device, release and KV-dtype inputs of every feature's form offer."""

    models: tuple[Option, ...]  # catalog ids and aliases, for the model box's <datalist>
    devices: tuple[Option, ...]
    versions: tuple[Option, ...]  # the known releases, and the one the link names when it is another
    kv_dtypes: tuple[Option, ...] = KV_DTYPE_OPTIONS


def choices(chosen_version: str | None) -> Choices:
    """The form's choices with ``chosen_version`` (a link's release) kept selectable."""
    models, devices, versions = catalog_options()
    return Choices(models, devices, version_options(versions, chosen_version))
