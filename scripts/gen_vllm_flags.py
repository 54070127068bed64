"""Write app/core/vllm_flags.json: the flags `vllm serve` accepts, per release, read from vLLM's own parser.

Usage (outside the repo, then commit the JSON):

    pip download --no-deps vllm==0.19.0 -d /tmp/vllm-0.19.0
    mkdir /tmp/src-0.19.0 && cd /tmp/src-0.19.0 && unzip -q /tmp/vllm-0.19.0/*.whl 'vllm/engine/*' 'vllm/entrypoints/*'
    .venv/bin/python scripts/gen_vllm_flags.py /tmp/src-0.6.6 /tmp/src-0.8.5 /tmp/src-0.10.2 /tmp/src-0.14.0 /tmp/src-0.19.0 \
        /tmp/src-0.34.0

(0.34.0's entry was added alone on 2026-12-03 from `pip download --no-deps vllm==0.34.0`, its flags_of() merged
into the existing file; the earlier entries are as generated before.)

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
    "vllm/entrypoints/common/cli_args.py",  # 0.34.0: the frontend's flags (--host, --port, --api-key …) moved here
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


def main(argv: list[str]) -> None:
    releases: dict[str, list[str]] = {}
    for arg in argv:
        root = Path(arg)
        releases[version_of(root)] = sorted(flags_of(root))
    ordered = dict(sorted(releases.items(), key=lambda kv: tuple(int(x) for x in kv[0].split(".")[:3])))
    data = {
        "source": (
            "Option names read by scripts/gen_vllm_flags.py from each release's wheel on PyPI "
            "(vllm/engine/arg_utils.py, vllm/entrypoints/openai/cli_args.py, vllm/entrypoints/cli/serve.py): "
            "add_argument option strings, and the EngineArgs / FrontendArgs dataclass fields that vLLM's "
            "get_kwargs turns into --flags (--no-… for bool fields)."
        ),
        "releases": ordered,
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: " + ", ".join(f"{v} {len(f)} flags" for v, f in ordered.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
