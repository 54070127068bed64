"""The message catalog: every id has a Chinese translation, placeholders survive, templates hold no
hard-coded English, and core sentences render in Chinese with flags verbatim."""

from __future__ import annotations

import ast
import importlib.util
import pickle
import re
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from app.core.catalog import find_device, find_model
from app.core.diagnose import diagnose
from app.core.errors import UnknownModelError
from app.core.recommend import recommend
from app.core.specs import ServeConfig
from app.core.text import Message, Text, TextList, translate
from app.web import i18n
from app.web.templating import TEMPLATES_DIR, make_environment
from tests.i18n_scan import english_words, hard_coded, using, visible_text

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "app" / "i18n" / "zh" / "LC_MESSAGES" / "messages.po"
LOGS = ROOT / "tests" / "data" / "logs"
CJK = re.compile(r"[\u4e00-\u9fff]")
BRACE_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)[^{}]*\}")
PERCENT_FIELD = re.compile(r"%\((\w+)\)s")


def _extractor():  # scripts/ is not a package: load the documented extraction script
    spec = importlib.util.spec_from_file_location(
        "extract_messages", ROOT / "scripts" / "extract_messages.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["extract_messages"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def extracted():  # type: ignore[no-untyped-def]
    return _extractor().extract()


@pytest.fixture(scope="module")
def zh_catalog():  # type: ignore[no-untyped-def]
    with PO.open("rb") as fp:
        return read_po(fp, locale="zh")


def test_every_message_id_has_a_chinese_translation(extracted, zh_catalog) -> None:  # type: ignore[no-untyped-def]
    ids = [m.id for m in extracted if m.id]
    assert len(ids) > 800  # templates + web view models + core sentences
    missing = [i for i in ids if not (zh_catalog.get(i) and str(zh_catalog.get(i).string).strip())]
    assert not missing, f"{len(missing)} message ids lack a zh translation: {missing[:20]}"


def test_translations_keep_their_placeholders(zh_catalog) -> None:  # type: ignore[no-untyped-def]
    bad = []
    for message in zh_catalog:
        if not message.id or not message.string:
            continue
        src, dst = str(message.id), str(message.string)
        # every {field} of the translation must exist in the id (it may drop one, e.g. an English plural "s")
        if not set(BRACE_FIELD.findall(dst)) <= set(BRACE_FIELD.findall(src)):
            bad.append(src)
        if set(PERCENT_FIELD.findall(dst)) != set(PERCENT_FIELD.findall(src)):
            bad.append(src)
    assert not bad, f"placeholders changed in: {bad}"


def _po_entries(text: str) -> list[tuple[int, str | None, str, list[str]]]:
    """(line, msgctxt, msgid, flags) of every entry, read from the raw text.

    babel's ``read_po`` merges a repeated msgid into the first one silently, so a duplicate can only
    be seen here (``msgfmt --check`` calls it a fatal error).
    """
    entries: list[tuple[int, str | None, str, list[str]]] = []
    fields: dict[str, str] = {}
    flags: list[str] = []
    start, field = 0, ""

    def close() -> None:
        if "msgid" in fields:
            entries.append((start, fields.get("msgctxt"), fields["msgid"], flags))

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        begins = line.startswith(("#", "msgctxt", "msgid ")) or not line
        if begins and any(name.startswith("msgstr") for name in fields):
            close()
            fields, flags, start = {}, [], number
        if not line:
            continue
        if line.startswith("#,"):
            flags = [flag.strip() for flag in line[2:].split(",")]
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            fields[field] += ast.literal_eval(line)
        else:
            field, _, value = line.partition(" ")
            fields[field] = ast.literal_eval(value)
            start = start or number
    close()
    return entries


def test_the_po_reader_sees_a_repeated_msgid() -> None:
    text = 'msgid "Planner"\nmsgstr "规划器"\n\n#: a.py:1\nmsgid ""\n"Plan" "ner"\nmsgstr "x"\n'
    assert [(ctx, mid) for _, ctx, mid, _ in _po_entries(text)] == [(None, "Planner"), (None, "Planner")]


def test_the_po_file_has_no_duplicate_message_ids() -> None:
    # msgfmt --check stops on a repeated msgid; babel keeps the first and drops the rest unseen
    seen: dict[tuple[str | None, str], int] = {}
    repeated = []
    for line, context, msgid, _ in _po_entries(PO.read_text(encoding="utf-8")):
        if (context, msgid) in seen:
            repeated.append(f"line {line} repeats line {seen[context, msgid]}: {msgid[:60]!r}")
        seen.setdefault((context, msgid), line)
    assert len(seen) > 1500  # every entry was read, not just the first few
    assert not repeated, "\n".join(repeated)


def test_no_entry_is_flagged_percent_format_without_a_percent_field() -> None:
    # "5 % requests" reads to msgfmt as the directive "% r"; the Chinese "5%，" then fails its check
    wrong = [
        msgid
        for _, _, msgid, flags in _po_entries(PO.read_text(encoding="utf-8"))
        if "python-format" in flags and not re.search(r"%(\(\w+\))?[sd%]", msgid)
    ]
    assert not wrong, wrong


def test_the_po_file_is_the_one_the_app_loads(zh_catalog) -> None:  # type: ignore[no-untyped-def]
    assert zh_catalog.locale.language == "zh"
    translations = i18n.translations("zh")
    assert translations.gettext("Planner") == "规划器"
    assert translations.gettext("KV cache pool") == "KV 池"
    assert i18n.translations("en").gettext("Planner") == "Planner"


def test_templates_have_no_hard_coded_english() -> None:
    found = hard_coded(make_environment(), TEMPLATES_DIR)
    assert not found, f"English outside _() in templates: {found}"


def test_the_template_scan_catches_english() -> None:
    html = '<p title="Hello there">Some text <code>--max-model-len x</code> vLLM KV 3 GiB</p>'
    assert english_words(visible_text(html)) == ["Some", "text", "Hello", "there"]
    assert english_words(visible_text('<textarea translate="no" placeholder="INFO log line">')) == []


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh"),
        ("zh-Hans", "zh"),
        ("zh_TW", "zh"),
        ("en-GB,en;q=0.9", "en"),
        ("fr-FR,zh;q=0.5", "zh"),
        ("en;q=0.4,zh;q=0.6", "zh"),
        ("fr, de", None),
        ("zh;q=0", None),
        ("", None),
    ],
)
def test_accept_language(header: str, expected: str | None) -> None:
    assert i18n.from_accept_language(header) == expected


def test_language_resolution_order() -> None:
    assert i18n.resolve(query="zh", cookie="en", accept="en") == "zh"
    assert i18n.resolve(query=None, cookie="zh", accept="en") == "zh"
    assert i18n.resolve(query="xx", cookie=None, accept="zh-CN") == "zh"
    assert i18n.resolve(query=None, cookie=None, accept=None) == "en"


def test_text_is_its_english_sentence_and_survives_copies() -> None:
    text = Text("{n:,} tokens for --max-model-len", n=32768)
    assert text == "32,768 tokens for --max-model-len"
    assert isinstance(text, Message)
    assert pickle.loads(pickle.dumps(text)) == text
    joined = "a " + text + Text("!")
    assert isinstance(joined, TextList) and joined == "a 32,768 tokens for --max-model-len!"
    table = {"{n:,} tokens for --max-model-len": "{n:,} 个 token（--max-model-len）"}
    assert translate(joined, lambda s: table.get(s, s)) == "a 32,768 个 token（--max-model-len）!"


def test_a_recommendation_renders_in_chinese_with_flags_verbatim() -> None:
    rec = recommend(
        model=find_model("meta-llama/Llama-3.1-8B"),
        device=find_device("nvidia-h100-sxm-80gb"),
        serve=ServeConfig(max_model_len=131072),
        vllm_version=None,
        target_max_model_len=131072,
        target_concurrency=64,
    )
    with using("zh"):
        labels = [i18n.tr(s.label) for s in rec.steps]
        reasons = [i18n.tr(s.reason) for s in rec.steps]
        explanation = i18n.tr(rec.bisection.explanation)
    assert all(CJK.search(x) for x in labels + reasons + [explanation])
    assert any("--kv-cache-dtype" in x for x in labels)
    assert any("--tensor-parallel-size" in x for x in labels)
    # the JSON keeps English: the model's fields are the English sentences
    assert not CJK.search(rec.model_dump_json())


def test_a_diagnosis_renders_in_chinese_with_log_lines_verbatim() -> None:
    log = (LOGS / "multi_run_fp8kv.log").read_text(encoding="utf-8")
    diagnosis = diagnose(log_text=log, metrics_text=None, target_concurrency=64)
    with using("zh"):
        headline = i18n.tr(diagnosis.headline)
        titles = [i18n.tr(s.title) for s in diagnosis.steps]
        explanations = [i18n.tr(s.explanation) for s in diagnosis.steps]
        remedies = i18n.tr_list(diagnosis.remedies)
    assert CJK.search(headline)
    assert all(CJK.search(t) for t in titles)
    assert all(CJK.search(e) for e in explanations)
    assert all("--" in r for r in remedies)  # flags stay as they are
    evidence = [ev.text for s in diagnosis.steps for ev in s.evidence]
    assert evidence and not any(CJK.search(line) for line in evidence)  # log lines verbatim
    assert not CJK.search(diagnosis.model_dump_json())


def test_planner_errors_translate() -> None:
    with using("zh"):
        assert i18n.tr(UnknownModelError("nope/x").message).startswith("未知模型 'nope/x'")
    assert UnknownModelError("nope/x").message.startswith("unknown model 'nope/x'")
