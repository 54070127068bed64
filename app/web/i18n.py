"""Languages: English (the message ids themselves) and Simplified Chinese (app/i18n/zh/…/messages.po).

Which language a request gets: ``lang`` in the query (``en``/``zh``; a page also stores it in a
cookie), then the ``lang`` cookie, then ``Accept-Language`` (``zh``, ``zh-CN``, ``zh-Hans``… -> zh),
else English. The API (``/api/…``) is language-neutral: only its human ``msg``/``message`` fields
follow ``Accept-Language`` (no cookie, no query).

The active language lives in a context variable set by :class:`LanguageMiddleware` for the whole
request, so view models call :func:`_` while they build strings and templates call ``_()`` — both
read the same catalog. Core sentences arrive as :class:`app.core.text.Text` and go through :func:`tr`.
The .po file is compiled in memory at import (no committed .mo to drift out of step).
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from contextvars import ContextVar
from functools import cache
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.text import translate
from app.resources import Data, directory

LOCALE_DIR = directory(Data.I18N)
DOMAIN = "messages"
DEFAULT = "en"
LANGUAGES = ("en", "zh")
# What each language is called in its own words (the header switch) and in <html lang>.
NATIVE_NAMES = {"en": "English", "zh": "中文"}
HTML_LANG = {"en": "en", "zh": "zh-CN"}
COOKIE = "lang"
COOKIE_MAX_AGE = 365 * 24 * 3600
QUERY_KEY = "lang"

_active: ContextVar[str] = ContextVar("kvplan_lang", default=DEFAULT)


def po_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(lang: str) -> NullTranslations:
    """The catalog of ``lang`` (English is the identity: the msgids are English)."""
    path = po_path(lang)
    if lang == DEFAULT or not path.is_file():
        return NullTranslations()
    with path.open("rb") as fp:
        catalog = read_po(fp, locale=lang)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return Translations(buffer, domain=DOMAIN)


def normalise(value: str | None) -> str | None:
    """``zh``, ``zh-CN``, ``zh_Hans``, ``ZH-tw`` -> ``zh``; ``en-GB`` -> ``en``; anything else -> None."""
    if not value:
        return None
    primary = value.strip().replace("_", "-").split("-")[0].lower()
    return primary if primary in LANGUAGES else None


def from_accept_language(header: str | None) -> str | None:
    """The best supported language of an ``Accept-Language`` header (q-values honoured)."""
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for index, item in enumerate(header.split(",")[:32]):
        tag, _, params = item.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, number = param.strip().partition("=")
            if key == "q":
                try:
                    quality = float(number)
                except ValueError:
                    quality = 0.0
        lang = normalise(tag)
        if lang is not None and quality > 0:
            ranked.append((-quality, index, lang))
    return min(ranked)[2] if ranked else None


def resolve(*, query: str | None, cookie: str | None, accept: str | None) -> str:
    return normalise(query) or normalise(cookie) or from_accept_language(accept) or DEFAULT


def current() -> str:
    return _active.get()


def gettext(message: str) -> str:
    lang = _active.get()
    if not message or lang == DEFAULT:
        return message  # English is the message ids; gettext("") would be the catalog header
    return str(translations(lang).gettext(message))


def ngettext(singular: str, plural: str, n: int) -> str:
    return str(translations(current()).ngettext(singular, plural, n))


_ = gettext


def tr(value: object) -> str:
    """Any shown value in the active language: a core Text/TextList via the catalog, else as it is."""
    if value is None:
        return ""
    return str(translate(value, gettext))


def tr_list(values: Iterable[object]) -> list[str]:
    return [tr(v) for v in values]


# The language switch repeats the page's query in each link; a page has ~40 parameters, so more are
# not echoed (7,500 unknown keys made a 200 KB page of links).
SWITCH_MAX_PAIRS = 64


def switch_links(url: str, query: Iterable[tuple[str, str]]) -> list[tuple[str, str, str, bool]]:
    """The header's language switch: (code, native name, same URL with ``lang`` set, is current)."""
    kept = [(k, v) for k, v in query if k != QUERY_KEY][:SWITCH_MAX_PAIRS]
    return [
        (code, NATIVE_NAMES[code], f"{url}?{urlencode([*kept, (QUERY_KEY, code)])}", code == current())
        for code in LANGUAGES
    ]


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _cookie(scope: Scope) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed cookie header never breaks a page
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None else None


class LanguageMiddleware:
    """Sets the request's language (see the module doc) and remembers an explicit choice in a cookie."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        root = scope.get("root_path", "")
        path: str = scope.get("path", "")
        accept = _header(scope, b"accept-language")
        is_api = path.removeprefix(root).startswith("/api")
        query_lang = None
        query_string: bytes = scope.get("query_string", b"")
        if not is_api and QUERY_KEY.encode() in query_string:  # most requests carry no lang: skip the parse
            pairs = parse_qsl(query_string.decode("latin-1"))
            query_lang = normalise(next((v for k, v in reversed(pairs) if k == QUERY_KEY), None))
        lang = (
            from_accept_language(accept) or DEFAULT
            if is_api
            else resolve(query=query_lang, cookie=_cookie(scope), accept=accept)
        )
        scope.setdefault("state", {})["lang"] = lang
        cookie_path = root or "/"

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if query_lang is not None:
                    value = (
                        f"{COOKIE}={query_lang}; Path={cookie_path}; Max-Age={COOKIE_MAX_AGE}; SameSite=Lax"
                    )
                    headers.append((b"set-cookie", value.encode("latin-1")))
                if not is_api and not path.removeprefix(root).startswith("/static"):
                    headers.append((b"content-language", HTML_LANG[lang].encode()))
                    headers.append((b"vary", b"Accept-Language, Cookie"))
                message = {**message, "headers": headers}
            await send(message)

        token = _active.set(lang)
        try:
            await self.app(scope, receive, send_with_cookie)
        finally:
            _active.reset(token)


def page_lang() -> str | None:
    """``lang`` for a permalink: the shown language, omitted for English (the default)."""
    lang = current()
    return None if lang == DEFAULT else lang


def t(msgid: str, /, **params: object) -> str:
    """``_(msgid).format(**params)``; a broken translation falls back to the English sentence."""
    try:
        return gettext(msgid).format(**params)
    except (KeyError, IndexError, ValueError):
        return msgid.format(**params)
