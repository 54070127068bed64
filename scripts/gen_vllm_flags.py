"""Write app/core/vllm_flags.json: the flags `vllm serve` accepts, per release, read from vLLM's own parser.

Usage (outside the repo, then commit the JSON): for each release read (every minor series' .0 from 0.7.0 to
0.34.0, plus 0.6.6, 0.8.5, 0.10.1, 0.10.2 and 0.14.0, as read on 2026-12-03),

    pip download --no-deps vllm==0.19.0 -d /tmp/vllm-0.19.0
    mkdir /tmp/src-0.19.0 && cd /tmp/src-0.19.0 && \
        unzip -q /tmp/vllm-0.19.0/*.whl 'vllm/engine/*' 'vllm/entrypoints/*' 'vllm-*.dist-info/METADATA'
    .venv/bin/python scripts/gen_vllm_flags.py /tmp/src-0.6.6 /tmp/src-0.7.0 ... /tmp/src-0.34.0

What it reads, per unpacked wheel (the version comes from the wheel's dist-info or the directory name):
- every option string literal (`"--max-model-len"`, `"-tp"`) in vllm/engine/arg_utils.py,
  vllm/entrypoints/openai/cli_args.py and vllm/entrypoints/cli/serve.py (`add_argument(...)` calls);
- the fields of the dataclasses whose fields become flags by name (0.10+: `EngineArgs`,
  `BaseFrontendArgs`/`FrontendArgs`: `--{field.replace('_', '-')}`), with `--no-…` for `bool` fields,
  which vLLM's `get_kwargs` gives `argparse.BooleanOptionalAction`.
No vLLM code is copied: only the option names.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "app" / "core" / "vllm_flags.json"
SOURCES = (
    "vllm/engine/arg_utils.py",
    "vllm/entrypoints/openai/cli_args.py",
    "vllm/entrypoints/cli/serve.py",
    "vllm/entrypoints/launchers/cli_args.py",  # 0.29.0-0.32.0: the frontend's flags (--host, --port ...)
    "vllm/entrypoints/common/cli_args.py",  # 0.33.0+: the frontend's flags (--host, --port, --api-key …) moved here
)
FIELD_CLASSES = ("EngineArgs", "AsyncEngineArgs", "BaseFrontendArgs", "FrontendArgs")
OPTION = re.compile(r"""["'](--?[a-zA-Z][a-zA-Z0-9-]*)["']""")


def _is_bool(annotation: ast.expr) -> bool:
    text = ast.unparse(annotation)
    return bool(re.fullmatch(r"(Optional\[)?bool(\])?( \| None)?|None \| bool", text))


def flags_of(root: Path) -> set[str]:
    flags: set[str] = {"--model"}  # `vllm serve MODEL` or `--model MODEL`
    for rel in SOURCES:
        path = root / rel
        if not path.is_file():
            continue
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
                for arg in node.args:
                    if (
                        isinstance(arg, ast.Constant)
                        and isinstance(arg.value, str)
                        and OPTION.fullmatch(f'"{arg.value}"')
                    ):
                        flags.add(arg.value)
        dataclass_flags = "BooleanOptionalAction" in source or rel.endswith("cli_args.py")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in FIELD_CLASSES and dataclass_flags:
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        name = item.target.id
                        if name.startswith("_"):
                            continue
                        flag = "--" + name.replace("_", "-")
                        if (
                            node.name.endswith("EngineArgs")
                            and flag not in flags
                            and "get_kwargs" not in source
                        ):
                            continue
                        flags.add(flag)
                        if _is_bool(item.annotation) and "BooleanOptionalAction" in source:
                            flags.add("--no-" + name.replace("_", "-"))
    # options without a name of their own (argparse's --help) and positionals are not flags
    return {f for f in flags if f not in ("--", "-")}


def version_of(root: Path) -> str:
    for info in root.glob("vllm-*.dist-info"):
        return info.name.removeprefix("vllm-").removesuffix(".dist-info")
    match = re.search(r"(\d+\.\d+\.\d+)", root.name)
    if match is None:
        raise SystemExit(f"cannot tell the vLLM version of {root}")
    return match.group(1)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split(".")[:3])


def spans(releases: dict[str, set[str]]) -> dict[str, list[list[str | None]]]:
    """flag -> its runs among the releases read, oldest first: [first read release that has it, last read release
    that has it] (None: the newest read still has it). A flag dropped and brought back has two runs."""
    order = sorted(releases, key=_key)
    out: dict[str, list[list[str | None]]] = {}
    for flag in sorted(set().union(*releases.values())):
        runs: list[list[str | None]] = []
        previous = False
        for i, version in enumerate(order):
            present = flag in releases[version]
            if present and not previous:
                runs.append([version, None])
            if not present and previous:
                runs[-1][1] = order[i - 1]
            previous = present
        out[flag] = runs
    return out


def main(argv: list[str]) -> None:
    releases = {version_of(Path(arg)): flags_of(Path(arg)) for arg in argv}
    order = sorted(releases, key=_key)
    data = {
        "source": (
            "Option names read by scripts/gen_vllm_flags.py from each release's wheel on PyPI "
            "(vllm/engine/arg_utils.py, vllm/entrypoints/cli/serve.py and the frontend's cli_args.py: "
            "entrypoints/openai/ to 0.28, entrypoints/launchers/ 0.29-0.32, entrypoints/common/ from 0.33): add_argument option strings, and the EngineArgs / FrontendArgs "
            "dataclass fields that vLLM's get_kwargs turns into --flags (--no-… for bool fields). Each flag's "
            "runs: [first release read that has it, last release read that has it (null: the newest read)]."
        ),
        "releases_read": order,
        "flags": spans(releases),
    }
    OUT.write_text(
        "{\n"
        + f' "source": {json.dumps(data["source"], ensure_ascii=False)},\n'
        + f' "releases_read": {json.dumps(order)},\n'
        + ' "flags": {\n'
        + ",\n".join(f"  {json.dumps(flag)}: {json.dumps(runs)}" for flag, runs in data["flags"].items())
        + "\n }\n}\n",
        encoding="utf-8",
    )
    print(f"wrote {OUT}: " + ", ".join(f"{v} {len(releases[v])} flags" for v in order))


if __name__ == "__main__":
    main(sys.argv[1:])
