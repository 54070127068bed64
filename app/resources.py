"""The one place that locates the app's data: templates, static files, model and device specs, the
docs rendered as pages, and the translation catalogs.

Each is a package under ``app`` and is read through :mod:`importlib.resources`, so the same code
finds it in an installed wheel (``site-packages/app/templates/…``), in an editable install (``make``
runs ``pip install -e .``; setuptools maps ``app.templates`` to the repository's top-level
``templates/``, see ``[tool.setuptools.package-dir]`` in pyproject.toml) and in a plain checkout.
Jinja2's loader and Starlette's StaticFiles want a directory on disk, so an install that is not
on a file system (a zip import) is refused with a clear message rather than half-working.
"""

from __future__ import annotations

from enum import Enum
from functools import cache
from importlib import resources
from pathlib import Path

# A checkout imported without any install (`python -c` in the repository, scripts that put the
# repository on sys.path): the folders are the top-level ones, next to app/.
_CHECKOUT_ROOT = Path(__file__).resolve().parents[1]


class Data(Enum):
    """A data folder: its package in the wheel and its folder in the repository."""

    TEMPLATES = ("app.templates", "templates")
    STATIC = ("app.static", "static")
    MODEL_SPECS = ("app.model_specs", "model_specs")
    DEVICE_SPECS = ("app.device_specs", "device_specs")
    DOCS = ("app.docs", "docs")
    I18N = ("app.i18n", "app/i18n")

    @property
    def package(self) -> str:
        return self.value[0]

    @property
    def checkout_folder(self) -> str:
        return self.value[1]


@cache
def directory(data: Data) -> Path:
    """The directory holding ``data``, wherever kv-planner is installed."""
    try:
        found = resources.files(data.package)
    except ModuleNotFoundError:
        fallback = _CHECKOUT_ROOT / data.checkout_folder
        if fallback.is_dir():
            return fallback
        raise RuntimeError(
            f"kv-planner's {data.checkout_folder} data is missing: install the package (pip install kv_planner-*.whl)"
        ) from None
    if not isinstance(found, Path) or not found.is_dir():
        raise RuntimeError(f"kv-planner's {data.package} must be installed on a file system, found {found!r}")
    return found
