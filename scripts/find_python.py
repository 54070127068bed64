"""The interpreter the Makefile builds .venv with: the newest CPython with the cookie fix.

    python3 scripts/find_python.py               # prints its path (exit 1 and why, if there is none)
    python3 scripts/find_python.py --check-venv .venv   # exit 1: .venv's Python lacks the fix and a patched one exists

CPython's ``http.cookies`` unquotes a quoted cookie in quadratic time before 3.11.10, 3.12.6 and
3.13.0 (CVE-2024-7592, python/cpython#123067): Starlette parses every Cookie header with it, so a
62 KB cookie cost 5 s of CPU on any URL (issue 27, N1). The app also drops a Cookie header over
4 KiB before any parser sees it (app/web/security.py); the floor in pyproject.toml makes the fix the
default too. Looks at python3.13, python3.12, python3.11 and python3 on PATH and at pyenv's
versions ($PYENV_ROOT, default ~/.pyenv). ``PYTHON=/path/to/python3 make …`` overrides it.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

NAMES = ("python3.13", "python3.12", "python3.11", "python3")
FLOOR = "3.11.10, 3.12.6 or 3.13"


def patched(version: tuple[int, ...]) -> bool:
    """True for a release with the cookie fix: 3.11.10+, 3.12.6+, 3.13+ (3.10 and older: not supported)."""
    if version[:2] == (3, 11):
        return version >= (3, 11, 10)
    if version[:2] == (3, 12):
        return version >= (3, 12, 6)
    return version >= (3, 13)


def version_of(executable: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run(
            [executable, "-c", "import sys; print(*sys.version_info[:3])"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None  # e.g. a pyenv shim for a version that is not active
    parts = out.split()
    return tuple(int(p) for p in parts) if len(parts) == 3 and all(p.isdigit() for p in parts) else None


def candidates() -> list[str]:
    found = [path for name in NAMES if (path := shutil.which(name))]
    root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    found += sorted(glob.glob(os.path.join(root, "versions", "*", "bin", "python3")))
    return list(dict.fromkeys(found))


def best() -> tuple[str, tuple[int, ...]] | None:
    versions = [(path, v) for path in candidates() if (v := version_of(path)) is not None and patched(v)]
    return max(versions, key=lambda item: item[1]) if versions else None


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--check-venv":
        venv_python = Path(argv[1]) / "bin" / "python"
        if not venv_python.exists():
            return 0
        version = version_of(str(venv_python))
        if version is not None and not patched(version) and best() is not None:
            print(
                f"{argv[1]} runs Python {'.'.join(map(str, version))} (no cookie fix): rebuilding it",
                file=sys.stderr,
            )
            return 1
        return 0
    override = os.environ.get("PYTHON", "").strip()
    if override:
        print(override)
        return 0
    found = best()
    if found is None:
        print(
            f"no Python {FLOOR} found (CPython's cookie parser is quadratic before them: docs/security.md); "
            "install one (`pyenv install 3.13`) or run `make PYTHON=/path/to/python3 …`",
            file=sys.stderr,
        )
        return 1
    print(found[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
