"""Finds English text in templates that does not go through ``_()`` (used by tests/unit/test_i18n.py),
and :func:`using`, which runs a block in one language (requests get theirs from the middleware).

Each template is lexed with jinja2's own lexer; only ``data`` tokens (text outside ``{{ }}`` and
``{% %}``) are looked at. HTML tags are dropped, but the user-visible attributes (``title``,
``placeholder``, ``aria-label``, ``alt``) are kept. What remains must be made of code-like tokens:
flag names, units, numbers, punctuation and a short whitelist of names that are code or brands.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jinja2

from app.web import i18n

# Words that stay as they are in every language: product and technology names, units, symbols.
CODE_WORDS = frozenset(
    {
        "vLLM",
        "KV",
        "TP",
        "PP",
        "GiB",
        "MiB",
        "GB",
        "JSON",
        "API",
        "HTMX",
        "htmx",
        "SVG",
        "GPU",
        "CUDA",
        "MLA",
        "GQA",
        "MQA",
        "fp8",
        "auto",
        "config",
        "json",
        "vllm",
        "serve",
        "x",
        "B",
        "S",
        "N",
        "L",
        "D",
        "b",
        "H_kv",
        "kv",
        "Llama",
        "meta",
        "llama",
    }
)
_CODE_ELEMENT = re.compile(r"<(code|pre|kbd|samp)\b[^>]*>.*?</\1>", re.S)
_TAG = re.compile(r"<[^>]*>", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_VISIBLE_ATTR = re.compile(r"""\b(?:title|placeholder|aria-label|alt)\s*=\s*("[^"]*"|'[^']*')""")
_WORD = re.compile(r"[A-Za-z][A-Za-z_'-]*")
# code-like: --flags, snake_case names, dotted names, vllm:metrics, versions
_CODE = re.compile(
    r"^(?:--[a-z0-9-]+|[a-z0-9]+(?:_[a-z0-9]+)+|[A-Za-z0-9_]+(?::[a-z0-9_]+)+"
    r"|[\w.-]+(?:/[\w.-]+)+|[\w-]+\.(?:json|md|yaml|html|py))$"  # ids with a slash, file names
)


def visible_text(data: str) -> str:
    """Text content of an HTML fragment plus its user-visible attribute values.

    Code is left out: the content of ``<code>``/``<pre>``/``<kbd>``/``<samp>`` and the attributes of
    a tag marked ``translate="no"`` (HTML's own "do not translate", e.g. a log-line placeholder).
    """
    data = _COMMENT.sub(" ", data)
    data = _CODE_ELEMENT.sub(" ", data)
    tags = [t for t in _TAG.findall(data) if 'translate="no"' not in t]
    attrs = " ".join(m.group(1)[1:-1] for t in tags for m in _VISIBLE_ATTR.finditer(t))
    return _TAG.sub(" ", data) + " " + attrs


def english_words(text: str) -> list[str]:
    out = []
    for token in text.split():
        token = token.strip(".,;:()[]{}!?·—–|/\"'“”…×≤≥<>=+*%")
        if not token or _CODE.match(token) or token in CODE_WORDS:
            continue
        words = [w for w in _WORD.findall(token) if w not in CODE_WORDS and len(w) > 1]
        if words:
            out.append(token)
    return out


def data_text(env: jinja2.Environment, source: str, name: str) -> str:
    """The template's text outside ``{{ }}``/``{% %}``/``{# #}``; each of those becomes a marker."""
    parts: list[str] = []
    inside = False
    for _lineno, kind, value in env.lex(source, name):
        if kind == "data":
            parts.append(value)
            inside = False
        elif not inside:
            parts.append(MARK)
            inside = True
    return "".join(parts)


MARK = "\x00"


def hard_coded(env: jinja2.Environment, templates: Path) -> dict[str, list[str]]:
    """Template -> English words found outside the catalog."""
    found: dict[str, list[str]] = {}
    for path in sorted(templates.rglob("*.html")):
        name = path.relative_to(templates).as_posix()
        text = visible_text(data_text(env, path.read_text(encoding="utf-8"), name)).replace(MARK, " ")
        words = english_words(text)
        if words:
            found[name] = words
    return found


# ----------------------------------------------------------------------------------------------
# Rendered pages: English sentences left in a page served in Chinese (tests/web/test_i18n_pages.py)
# ----------------------------------------------------------------------------------------------

# vLLM's own words that the Chinese pages keep verbatim next to their translation (the seed does the
# same): a reader greps the log for them.
VERBATIM_TERMS = (
    "available KV cache memory",
    "GPU KV cache size",
    "Maximum concurrency",
    "non-torch",
    "torch peak memory increase",
)
_DROPPED_ELEMENTS = re.compile(r"<(script|style|code|pre|kbd|samp|textarea)\b[^>]*>.*?</\1>", re.S)
_NO_TRANSLATE = re.compile(r"<(\w+)\b[^>]*\btranslate=\"no\"[^>]*>.*?</\1>", re.S)
_QUOTED = re.compile(r"“[^”]*”|‘[^’]*’")  # quoted log lines and messages stay verbatim
_CJK_OR_BREAK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef\n.;:!?()\[\]{}|·—–…=<>“”\"]+")
_ENGLISH_WORD = re.compile(r"^[A-Za-z][a-z'-]*[a-z]$")  # a lower-case or capitalised word, 2+ letters
ENGLISH_RUN_WORDS = 3  # a phrase of three English words in a row is a sentence left untranslated


def english_sentences(html: str, names: tuple[str, ...] = ()) -> list[str]:
    """Phrases of ``ENGLISH_RUN_WORDS``+ consecutive English words in what a reader of ``html`` sees.

    Left out: code (``<code>``/``<pre>``/…, elements marked ``translate="no"``), quoted log lines,
    vLLM's verbatim terms, ``names`` (model ids, device names: proper names), code-like tokens and
    :data:`CODE_WORDS`. What remains in a Chinese page should be Chinese between code and numbers.
    """
    html = _COMMENT.sub(" ", html)
    html = _DROPPED_ELEMENTS.sub(" ", html)
    html = _NO_TRANSLATE.sub(" ", html)
    text = visible_text(html)
    text = text.replace("&#39;", "'").replace("&#34;", '"').replace("&quot;", '"').replace("&amp;", "&")
    text = _QUOTED.sub(" ", text)
    for name in sorted((*names, *VERBATIM_TERMS), key=len, reverse=True):
        text = text.replace(name, " ")
    found: list[str] = []
    for chunk in _CJK_OR_BREAK.split(text):
        run: list[str] = []
        for token in [*chunk.split(), ""]:
            word = token.strip(",'\"*`/")
            if word and word not in CODE_WORDS and not _CODE.match(word) and _ENGLISH_WORD.match(word):
                run.append(word)
                continue
            if len(run) >= ENGLISH_RUN_WORDS:
                found.append(" ".join(run))
            run = []
    return found


@contextmanager
def using(lang: str) -> Iterator[None]:
    """Run a block in ``lang`` (a test's stand-in for the language middleware)."""
    token = i18n._active.set(lang if lang in i18n.LANGUAGES else i18n.DEFAULT)
    try:
        yield
    finally:
        i18n._active.reset(token)
