"""The wheel lists its packages by hand (pyproject.toml maps templates/, static/ … into `app`), so a new
sub-package or data file under app/ must be named there too; this keeps the list honest."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
DATA_SUFFIXES = {".json", ".yaml", ".po", ".pot"}


def test_every_code_package_is_in_the_wheel() -> None:
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "app").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found - set(SETUPTOOLS["packages"]) == set()


def test_every_data_file_under_app_is_package_data() -> None:
    package_data: dict[str, list[str]] = SETUPTOOLS["package-data"]
    missing = []
    for path in (ROOT / "app").rglob("*"):
        if path.suffix not in DATA_SUFFIXES:
            continue
        # the nearest package that holds the file, and the file's path relative to it
        parent = path.parent
        while not (parent / "__init__.py").exists():
            parent = parent.parent
        package = ".".join(parent.relative_to(ROOT).parts)
        relative = path.relative_to(parent).as_posix()
        if not any(fnmatch.fnmatch(relative, pattern) for pattern in package_data.get(package, [])):
            missing.append(f"{package}: {relative}")
    assert missing == []
