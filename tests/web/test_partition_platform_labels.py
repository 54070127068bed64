"""The partition table words its non-torch and graph rows for the device's platform: an Ascend plan showed
"Non-torch (NCCL buffers, cuBLAS workspaces)" and "CUDA graphs" for memory that on an NPU is HCCL's buffers and
vllm-ascend's ACL graphs (../shared/reference/ascend-rocm-notes-2026-12.md: 2 x HCCL_BUFFSIZE per communicator,
ACL graphs captured after the KV pool is sized); ROCm's are RCCL and HIP graphs."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from app.web.app import create_app

CLIENT = TestClient(create_app())
QUERY = "v=1&model=Qwen/Qwen3-32B&tensor_parallel_size=2&max_model_len=32768&vllm_version=0.33.0"


def _row_labels(device: str, lang: str = "en") -> list[str]:
    page = CLIENT.get(f"/?{QUERY}&device={device}&lang={lang}").text
    table = page[page.index('id="partition-table"') :]
    table = table[: table.index("</table>")]
    cells = re.findall(r"<tr[^>]*>\s*<t[hd][^>]*>(.*?)</t[hd]>", table, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells]


@pytest.mark.parametrize(
    ("device", "non_torch", "graphs"),
    [
        ("nvidia-h100-sxm-80gb", "Non-torch (NCCL buffers, cuBLAS workspaces)", "CUDA graphs"),
        ("amd-mi300x-192gb", "Non-torch (RCCL buffers, hipBLAS workspaces)", "HIP graphs"),
        ("huawei-ascend-910b-64gb", "Non-torch (HCCL buffers, CANN workspaces)", "ACL graphs"),
    ],
)
def test_rows_are_worded_for_the_platform(device: str, non_torch: str, graphs: str) -> None:
    labels = _row_labels(device)
    assert non_torch in labels
    assert graphs in labels
    other_graphs = {"CUDA graphs", "HIP graphs", "ACL graphs"} - {graphs}
    assert not other_graphs & set(labels)


def test_ascend_rows_in_chinese() -> None:
    labels = _row_labels("huawei-ascend-910b-64gb", "zh")
    assert "非 torch（HCCL 缓冲区、CANN 工作区）" in labels
    assert "ACL graph" in labels
