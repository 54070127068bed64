"""Release watcher: which vLLM functions and constants the planner's rules cite changed in which release.

The planner's rules cite vLLM's code where they come from (``versions.py``'s changelog and the rule
docstrings and comments in app/core): ``config/cache.py::CacheConfig.gpu_memory_utilization``,
``config/model.py _get_and_verify_max_len``, ``fused_moe.py `workspace_shapes```, ``Platform._align_hybrid_block_size``.
This script parses those citations out of the planner's own source, then for each vLLM (or vllm-ascend)
wheel fingerprints the source of every cited name — the AST of the function, class or assignment, without
its docstring, so a comment or a reformat is no change — and reports, release by release, which cited
names changed since the release before and which planner lines cite them (the rules to re-check).

A wheel is read as the zip it is (nothing is unpacked). Wheels already on disk are used
(``--wheel-dir``, default /work/vllm-src/<version>/*.whl); a missing one is fetched with
``pip download --no-deps`` into a temporary directory that is deleted afterwards. This runs in bench
only, never in tests (tests/unit/test_release_watch.py checks the parsing and fingerprinting on a small
fixture tree).

    .venv/bin/python bench/release_watch.py 0.19.0 0.20.0 … 0.33.0 [--package vllm] [--out docs/release-watch.md]
"""

from __future__ import annotations

import argparse
import ast
import copy
import functools
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

ROOT = Path(__file__).resolve().parents[1]
CITING_GLOBS = ("app/core/**/*.py",)  # where the rules and their citations live
DEFAULT_WHEEL_DIR = Path("/work/vllm-src")
MAX_SOURCE_CHARS = 2_000_000  # a vLLM module is far smaller; a bigger member is not read
MAX_SIBLINGS = 40  # a name missing from its file is looked for in its folder only when the folder is small

# `path/to/file.py::Name.attr`, `path/to/file.py Name`, `path/to/file.py `name`` (the forms the planner uses)
_PATH_CITATION = re.compile(r"(?<![\w/.])((?:[\w]+/)*[\w]+\.py)(?:::|\s+`?)([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
# a file alone ("arg_utils.py: >= 70 GiB -> 1024 seqs"): its whole module is watched when no name in it is
_FILE_CITATION = re.compile(r"(?<![\w/.])((?:[\w]+/)*[\w]+\.py)\b")
# a backticked `Class.attr` with no path (`Platform._align_hybrid_block_size`)
_DOTTED_CITATION = re.compile(r"`([A-Z]\w*)\.([A-Za-z_]\w*)(?:\(\))?`")
_NOT_VLLM = ("app/", "bench/", "tests/", "scripts/")  # the planner's own files, cited in its own comments


@dataclass(frozen=True)
class Citation:
    """A vLLM name the planner cites: the file as written (may be a suffix), the dotted name, who cites it."""

    path: str | None  # "config/cache.py", "fused_moe.py"; None for a bare `Class.attr`
    name: str  # "CacheConfig.gpu_memory_utilization"; "" for the whole module
    cited_at: tuple[str, ...] = ()  # "app/core/versions.py:214", …

    @property
    def key(self) -> str:
        if self.path and not self.name:
            return f"{self.path} (module)"
        return f"{self.path}::{self.name}" if self.path else self.name


def extract_citations(files: Iterable[Path], root: Path = ROOT) -> list[Citation]:
    """Every citation in these source files, merged by (path, name), with the lines citing each."""
    found: dict[tuple[str | None, str], list[str]] = {}
    for file in files:
        rel = file.relative_to(root).as_posix() if file.is_relative_to(root) else file.as_posix()
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            for m in _PATH_CITATION.finditer(line):
                path = m.group(1).removeprefix("vllm/")
                if path.startswith(_NOT_VLLM):
                    continue
                found.setdefault((path, m.group(2)), []).append(f"{rel}:{number}")
            for m in _FILE_CITATION.finditer(line):
                path = m.group(1).removeprefix("vllm/")
                if not path.startswith(_NOT_VLLM) and "/" in path:  # a bare "kv.py" is the planner's own
                    found.setdefault((path, ""), []).append(f"{rel}:{number}")
            for m in _DOTTED_CITATION.finditer(line):
                found.setdefault((None, f"{m.group(1)}.{m.group(2)}"), []).append(f"{rel}:{number}")
    return [
        Citation(path, name, tuple(dict.fromkeys(where)))
        for (path, name), where in sorted(found.items(), key=str)
    ]


# --------------------------------------------------------------------------------------------
# source trees: a wheel (zip) or a directory


class SourceTree(Protocol):
    def files(self) -> list[str]: ...

    def read(self, path: str) -> str | None: ...


@dataclass
class ZipTree:
    """A wheel: its .py members, read straight from the zip."""

    wheel: Path
    _zip: zipfile.ZipFile | None = None
    _read: dict[str, str | None] = field(default_factory=dict)  # members already read (siblings are re-read)

    def _open(self) -> zipfile.ZipFile:
        if self._zip is None:
            self._zip = zipfile.ZipFile(self.wheel)
        return self._zip

    def files(self) -> list[str]:
        return [n for n in self._open().namelist() if n.endswith(".py")]

    def read(self, path: str) -> str | None:
        if path not in self._read:
            self._read[path] = self._read_member(path)
        return self._read[path]

    def _read_member(self, path: str) -> str | None:
        try:
            info = self._open().getinfo(path)
        except KeyError:
            return None
        if info.file_size > MAX_SOURCE_CHARS:
            return None
        return self._open().read(info).decode("utf-8", errors="replace")


@dataclass
class DirTree:
    """An unpacked tree (tests' fixture): paths relative to ``root``."""

    root: Path

    def files(self) -> list[str]:
        return sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*.py"))

    def read(self, path: str) -> str | None:
        file = self.root / path
        return file.read_text(encoding="utf-8") if file.is_file() else None


# --------------------------------------------------------------------------------------------
# fingerprints


def _strip_docstrings(node: ast.AST) -> ast.AST:
    for child in ast.walk(node):
        body = getattr(child, "body", None)
        if (
            isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module)
            and isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            child.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return node


def _bound_names(stmt: ast.stmt) -> set[str]:
    """The names a def, class or (annotated) assignment binds."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    if isinstance(stmt, ast.Assign):
        return {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return {stmt.target.id}
    return set()


def _named(body: Sequence[ast.stmt], name: str) -> ast.stmt | None:
    """The def / class / assignment of ``name`` in a body (the last one wins, as Python's binding does)."""
    hit: ast.stmt | None = None
    for stmt in body:
        if name in _bound_names(stmt):
            hit = stmt
        elif isinstance(stmt, ast.If):  # a name defined under `if TYPE_CHECKING` / a version switch
            hit = _named(stmt.body, name) or _named(stmt.orelse, name) or hit
    return hit


@functools.lru_cache(maxsize=64)  # one module is asked for many cited names; parse it once
def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def find_node(source: str, dotted: str, *, methods: bool = True) -> ast.stmt | None:
    """The statement that defines ``dotted`` ("Worker.determine_available_memory") in a module's source;
    ``methods``: a bare name may also be a method of a class in it."""
    tree = _parsed(source)
    if tree is None:
        return None
    body: Sequence[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for part in dotted.split("."):
        node = _named(body, part)
        if node is None:
            break
        body = node.body if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) else []
    if node is not None:
        return node
    if (
        "." not in dotted and methods
    ):  # a method cited by its name alone ("modular_kernel.py `_allocate_buffers`")
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            found = _named(cls.body, dotted)
            if found is not None:
                return found
    return None


def fingerprint(source: str, dotted: str, *, methods: bool = True) -> str | None:
    """sha256 (12 hex) of the defining statement's AST (the whole module for ""), docstrings and positions
    left out; None if absent."""
    if not dotted:
        node: ast.AST | None = _parsed(source)
    else:
        node = find_node(source, dotted, methods=methods)
    if node is None:
        return None
    # a copy: the parsed module is cached (_parsed) and stripping edits the tree
    dumped = ast.dump(_strip_docstrings(copy.deepcopy(node)), annotate_fields=False, include_attributes=False)
    return hashlib.sha256(dumped.encode()).hexdigest()[:12]


def resolve(tree: SourceTree, citation: Citation, package: str) -> list[str]:
    """The tree's files a citation can mean: its path under the package (or a suffix of one), or, for a
    bare `Class.attr`, the files that define that class."""
    files = tree.files()
    if citation.path is not None:
        exact = f"{package}/{citation.path.removeprefix(package + '/')}"
        if exact in files:
            return [exact]
        suffix = "/" + citation.path
        return sorted((f for f in files if f.endswith(suffix)), key=len)[:1]
    cls = citation.name.split(".")[0]
    needle = f"class {cls}("
    out = []
    for f in files:
        text = tree.read(f) if f.startswith(package + "/") else None
        if text is not None and needle in text:
            out.append(f)
    return out


@dataclass
class Fingerprint:
    file: str | None
    digest: str | None  # None: the name is not in this release


def _siblings(tree: SourceTree, citation: Citation, package: str, cited_files: list[str]) -> list[str]:
    """The other modules of a cited file's folder: where a name that left its file has moved to
    (0.33.0 moved kv_cache_utils.py's check_enough_kv_cache_memory to kv_cache_planning.py)."""
    if citation.path is None or not citation.name:
        return []
    cited = cited_files[0] if cited_files else f"{package}/{citation.path.removeprefix(package + '/')}"
    folder = cited.rsplit("/", 1)[0] + "/"
    here = [f for f in tree.files() if f.startswith(folder) and "/" not in f[len(folder) :] and f != cited]
    if len(here) > MAX_SIBLINGS:  # model_executor/models/: a word after a path, not a moved name
        return []
    first = citation.name.split(".")[0]
    needles = (f"def {first}(", f"class {first}", f"{first} =", f"{first}: ")
    return [f for f in sorted(here) if any(n in (tree.read(f) or "") for n in needles)]


def fingerprints(tree: SourceTree, citations: Sequence[Citation], package: str) -> dict[str, Fingerprint]:
    out: dict[str, Fingerprint] = {}
    for c in citations:
        digest, where = None, None
        cited = resolve(tree, c, package)
        for file in [*cited, *_siblings(tree, c, package, cited)]:
            source = tree.read(file)
            # in a sibling only a module-level definition counts: any class there may have a `load_model`
            digest = fingerprint(source, c.name, methods=file in cited) if source is not None else None
            if digest is not None:
                where = file
                break
        out[c.key] = Fingerprint(where, digest)
    return out


# --------------------------------------------------------------------------------------------
# the report


@dataclass
class Change:
    version: str
    key: str
    kind: str  # "changed", "added", "removed", "moved"
    cited_at: tuple[str, ...]
    moved_to: str | None = None  # the file a moved name is defined in now


@dataclass
class Report:
    versions: list[str]
    citations: list[Citation]
    prints: dict[str, dict[str, Fingerprint]] = field(default_factory=dict)  # version -> key -> print

    def resolved(self) -> list[Citation]:
        """Citations some release defines (the rest are English words after a path, or other packages');
        a whole module only where no name in it is cited and found."""
        found = [c for c in self.citations if any(self.prints[v][c.key].digest for v in self.versions)]
        named_paths = {c.path for c in found if c.name}
        return [c for c in found if c.name or c.path not in named_paths]

    def changes(self) -> list[Change]:
        out: list[Change] = []
        for before, after in zip(self.versions, self.versions[1:], strict=False):
            for c in self.resolved():
                was, now = self.prints[before][c.key], self.prints[after][c.key]
                a, b = was.digest, now.digest
                if a and b and was.file != now.file:
                    out.append(Change(after, c.key, "moved", c.cited_at, moved_to=now.file))
                    continue
                if a == b:
                    continue
                kind = "added" if a is None else "removed" if b is None else "changed"
                out.append(Change(after, c.key, kind, c.cited_at))
        return out


def build_report(trees: Sequence[tuple[str, SourceTree]], citations: list[Citation], package: str) -> Report:
    report = Report(versions=[v for v, _ in trees], citations=citations)
    for version, tree in trees:
        report.prints[version] = fingerprints(tree, citations, package)
    return report


def markdown(report: Report, package: str) -> str:
    resolved = report.resolved()
    lines = [
        f"# Release watch: {package} {report.versions[0]} → {report.versions[-1]}",
        "",
        "Written by `bench/release_watch.py` (do not edit by hand). Each row is a vLLM function, class or",
        "constant that the planner's rules cite (parsed from app/core: versions.py's changelog and the rule",
        "docstrings); its fingerprint is the AST of its source without docstrings, so only a code change",
        "shows. A change names the planner lines that cite it: the rules to re-check for that release.",
        "",
        f"Releases read: {', '.join(report.versions)}. Citations found: {len(report.citations)}; "
        f"resolved in at least one release: {len(resolved)} (the rest are words after a file name, or files "
        "of another package).",
        "",
        "## Changes by release",
        "",
    ]
    changes = report.changes()
    for version in report.versions[1:]:
        here = [c for c in changes if c.version == version]
        lines.append(
            f"### {version}: {len(here)} cited name(s) changed" if here else f"### {version}: none changed"
        )
        lines.append("")
        for c in (c for c in here if not c.key.endswith(" (module)")):
            path = c.key.split("::")[0]
            note = (
                "now where the citation points"
                if (c.moved_to or "").endswith(path)
                else "update the citation"
            )
            where = f" to `{c.moved_to}` ({note})" if c.moved_to else ""
            lines.append(f"- **{c.kind}** `{c.key}`{where} — re-check {', '.join(c.cited_at[:4])}")
        modules = [c.key.removesuffix(" (module)") for c in here if c.key.endswith(" (module)")]
        if modules:
            lines.append(
                "- files cited without a name, changed somewhere inside: "
                + ", ".join(f"`{m}`" for m in modules)
            )
        lines.append("")
    lines += [
        "## Fingerprints",
        "",
        "| cited name | " + " | ".join(report.versions) + " |",
        "|---" * (len(report.versions) + 1) + "|",
    ]
    for c in resolved:
        row = []
        previous: str | None = None
        for version in report.versions:
            digest = report.prints[version][c.key].digest
            cell = "—" if digest is None else ("·" if digest == previous else digest[:6])
            row.append(cell)
            previous = digest
        lines.append(f"| `{c.key}` | " + " | ".join(row) + " |")
    lines += ["", "`·` = same as the release before; `—` = not defined in that release.", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# wheels


def wheel_for(version: str, package: str, wheel_dir: Path, scratch: Path) -> Path:
    """A wheel on disk for this release, else one pip downloads into ``scratch``."""
    folder = wheel_dir / (version if package == "vllm" else f"{package.removeprefix('vllm-')}-{version}")
    stem = package.replace("-", "_")
    # a wheel, or a zip of the package's source at the release tag (git archive; vllm-ascend's PyPI releases
    # after v0.18.0 are sdists that build on Ascend only, so their source is read from the tagged tree)
    for pattern in (f"{stem}-{version}*.whl", f"{stem}-{version}*.zip"):
        for candidate in sorted(folder.glob(pattern)):
            return candidate
    target = scratch / version
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            f"{package}=={version}",
            "-d",
            str(target),
        ],
        check=True,
        capture_output=True,
    )
    return next(target.glob("*.whl"))


def citing_files(root: Path = ROOT) -> list[Path]:
    return sorted({p for pattern in CITING_GLOBS for p in root.glob(pattern)})


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+")
    parser.add_argument("--package", default="vllm", help="vllm or vllm-ascend")
    parser.add_argument("--wheel-dir", type=Path, default=DEFAULT_WHEEL_DIR)
    parser.add_argument("--out", type=Path, default=None, help="write the markdown report here")
    args = parser.parse_args(argv)
    package_dir = args.package.replace("-", "_")
    citations = extract_citations(citing_files())
    with tempfile.TemporaryDirectory(prefix="release-watch-") as scratch:
        trees: list[tuple[str, SourceTree]] = []
        for version in args.versions:
            wheel = wheel_for(version, args.package, args.wheel_dir, Path(scratch))
            print(f"{version}: {wheel}", file=sys.stderr)
            trees.append((version, ZipTree(wheel)))
        report = build_report(trees, citations, package_dir)
    text = markdown(report, args.package)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
