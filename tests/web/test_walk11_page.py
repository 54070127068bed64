"""Things the round-11 re-walk of the new-user walkthrough (shared/reviews/new-user-walkthrough-2026-12.md)
still found on the page, each in the state it was seen (lane walk11)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.web.app import create_app

APP = create_app()


def _zh() -> TestClient:
    return TestClient(APP, cookies={"lang": "zh"})


def test_explore_block_table_marks_and_engine_line_in_chinese() -> None:
    # /explore?lang=zh showed the block-size row 16 with the badges "default" and "current" in English,
    # and the workload's engine sentence said "前缀缓存 on" (the walk's screenshot i10-zh-explore.png).
    page = _zh().get("/explore").text
    row = re.search(r'<tr data-block-size="16".*?</th>', page, re.S).group(0)
    assert '<span class="mark mark-default">默认</span>' in row
    assert '<span class="mark mark-current">当前</span>' in row
    assert ">default<" not in row and ">current<" not in row
    engine = re.search(r"引擎： (.*?)</p>", page, re.S).group(1)
    assert "前缀缓存 开" in engine and " on," not in engine
    # English keeps its words and the row's class (the CSS hooks on the msgid, not on the shown word)
    en = TestClient(APP).get("/explore?lang=en").text
    row_en = re.search(r'<tr data-block-size="16".*?</th>', en, re.S).group(0)
    assert 'class=" current"' in row_en
    assert (
        '<span class="mark mark-default">default</span><span class="mark mark-current">current</span>'
        in row_en
    )
    assert "prefix caching on," in en
